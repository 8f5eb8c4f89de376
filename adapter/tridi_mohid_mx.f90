! The MOHID adapter's routines for one kind set: MOHID built with 4-byte default real: E real(8), D/F/Ti/ANSWER real(4).
! The routines are stated once, in the include files (decision 042); module tridi_mohid is their public face.
module tridi_mohid_mx
    use, intrinsic :: iso_c_binding, only: c_ptr, c_loc, c_null_ptr
    use, intrinsic :: iso_fortran_env, only: int64, output_unit
    use tridi, only: tridi_solve, tridi_plan_create, tridi_plan_solve, tridi_host_register, tridi_host_unregister, &
                     tridi_error_cell, tridi_set_error, tridi_finish, TRIDI_ON_ERROR_CALL, TRIDI_ON_ERROR_LINES, &
                     TRIDI_SUCCESS, &
                     TRIDI_ERROR_BOUNDS, TRIDI_ERROR_NULL_POINTER, TRIDI_ERROR_ZERO_PIVOT, TRIDI_ERROR_NONFINITE
    use tridi_mohid_core
    implicit none
    private
    public :: thomas_3d, thomasz, thomas_2d, register_3d, unregister_3d, register_2d, unregister_2d

    integer, parameter :: WK = 4, EK = 8, KINDS = 2
    ! THOMASZ NewType's W and G between calls when the caller gives no VECG/VECW (tridi_mohid_routines.inc).
    real(8), allocatable, save :: zw(:), zg(:)

contains

    include 'tridi_mohid_routines.inc'
    include 'tridi_mohid_registrations.inc'

end module tridi_mohid_mx
