! MOHID's precisions through the adapter, bit for bit, with no MOHID source: the generic tridi_thomas_3d,
! tridi_thomasz and tridi_thomas_2d on all-real(8) arrays (MOHID's own builds), the mixed kinds (E real(8))
! and all real(4), every variant (checked default, ORIGINAL, NEWTYPE), with and without WaterPoints, the
! first-row quirks, near-tie pivots and zero pivots, against MOHID's loops restated in mohid_kinds.inc.
! Answers are poisoned before every call; inputs drawn fresh each run (seed printed). Each kind set is
! its constants (set_*) and the one body of mohid_kinds.inc.
module set_r8
    use, intrinsic :: iso_fortran_env, only: int64
    integer, parameter :: WK = 8, EK = 8, IK = int64
    character(len=*), parameter :: kset = 'real(8)'
end module
module kinds_r8
    use set_r8
    include 'mohid_kinds.inc'
end module

module set_mx
    use, intrinsic :: iso_fortran_env, only: int32
    integer, parameter :: WK = 4, EK = 8, IK = int32
    character(len=*), parameter :: kset = 'mixed'
end module
module kinds_mx
    use set_mx
    include 'mohid_kinds.inc'
end module

module set_r4
    use, intrinsic :: iso_fortran_env, only: int32
    integer, parameter :: WK = 4, EK = 4, IK = int32
    character(len=*), parameter :: kset = 'real(4)'
end module
module kinds_r4
    use set_r4
    include 'mohid_kinds.inc'
end module

program test_mohid_kinds
    use test_support, only: init_seed, finish_test, check
    use tridi_mohid, only: tridi_mohid_init, tridi_error_message, TRIDI_SUCCESS
    use kinds_r8, only: run_r8 => run_kind_set, cells_r8 => cells
    use kinds_mx, only: run_mx => run_kind_set, cells_mx => cells
    use kinds_r4, only: run_r4 => run_kind_set, cells_r4 => cells
    implicit none
    integer :: s
    call init_seed('test_mohid_kinds')
    call tridi_mohid_init(stat=s)
    if (s /= TRIDI_SUCCESS) then
        write (*, '(a)') 'skip: '//tridi_error_message()
        stop 77
    end if
    call run_r8()
    call run_mx()
    call run_r4()
    write (*, '(a, 3(i0, a))') 'test_mohid_kinds: ', cells_r8, ' real(8), ', cells_mx, ' mixed, ', cells_r4, &
        ' real(4) solved cells compared bit for bit'
    call finish_test('test_mohid_kinds')
end program
