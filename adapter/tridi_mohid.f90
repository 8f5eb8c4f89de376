! Module tridi_mohid: drop-in replacements for MOHID's Thomas routines (Software/MOHIDBase1/
! ModuleFunctions.F90: THOMAS_3D, THOMASZ, THOMASZ_NewType2, THOMAS_2D), solved by tridi. Every MOHID
! convention lives in the adapter and nowhere else; module tridi and the C library stay model-neutral.
!
! Kinds: each routine resolves MOHID built with 8-byte real (its own builds: every array real(8)), with
! 4-byte default real (E real(8), D/F/Ti/ANSWER real(4)) and all real(4) (decision 042). The routines
! are stated once (tridi_mohid_routines.inc) and compiled per kind set (tridi_mohid_r8/_mx/_r4.f90).
module tridi_mohid
!   call tridi_thomas_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, D, E, F, Ti, ANSWER
!                        [, VECG, VECW] [, variant=] [, stat=])
!   call tridi_thomasz(ILB, IUB, JLB, JUB, KLB, KUB, AW, BW, CW, TIW, RES [, VECG, VECW]
!                      [, WaterPoints=] [, variant=] [, stat=])
!   call tridi_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D, E, F, Ti, ANSWER [, VECG, VECW]
!                        [, variant=] [, stat=])
!
! variant: TRIDI_MOHID_ORIGINAL (MOHID's *_Original routines), TRIDI_MOHID_NEWTYPE (its *_NewType and
! THOMASZ_NewType2), or TRIDI_MOHID_CHECKED (default: Original's arithmetic, and a zero or NaN pivot is
! an error with ANSWER untouched). See tridi_mohid_core for what each does at a zero pivot.
! Errors: stat (optional) receives 0 or the tridi status, tridi_error_message() the message; with stat
! absent an error prints the message and stops, as MOHID's own routines stop on bad (di, dj).
! Timing: tridi_mohid_last_seconds() (the last call), tridi_mohid_stats([unit]) (a table per routine).
    use tridi, only: tridi_error_message, tridi_status_name, TRIDI_SUCCESS, TRIDI_ERROR_INVALID_VALUE, &
                     TRIDI_ERROR_BOUNDS, TRIDI_ERROR_NULL_POINTER, TRIDI_ERROR_UNSUPPORTED, TRIDI_ERROR_ALIASING, &
                     TRIDI_ERROR_ZERO_PIVOT, TRIDI_ERROR_NONFINITE, TRIDI_ERROR_OUT_OF_MEMORY, TRIDI_BACKEND_AUTO, &
                     TRIDI_BACKEND_CPU, TRIDI_BACKEND_CUDA, TRIDI_ROLE_LOWER, TRIDI_ROLE_DIAG, TRIDI_ROLE_UPPER, &
                     TRIDI_ROLE_RHS
    use tridi_mohid_core, only: tridi_mohid_init, tridi_mohid_finalize, tridi_mohid_context, &
                                tridi_mohid_stats, tridi_mohid_last_seconds, tridi_mohid_reset_stats, &
                                TRIDI_MOHID_CHECKED, TRIDI_MOHID_ORIGINAL, TRIDI_MOHID_NEWTYPE
    use tridi_mohid_uploads
    use tridi_mohid_r8, only: thomas_3d_r8 => thomas_3d, thomasz_r8 => thomasz, thomas_2d_r8 => thomas_2d, &
                              register_3d_r8 => register_3d, unregister_3d_r8 => unregister_3d, &
                              register_2d_r8 => register_2d, unregister_2d_r8 => unregister_2d
    use tridi_mohid_mx, only: thomas_3d_mx => thomas_3d, thomasz_mx => thomasz, thomas_2d_mx => thomas_2d, &
                              register_3d_mx => register_3d, unregister_3d_mx => unregister_3d, &
                              register_2d_mx => register_2d, unregister_2d_mx => unregister_2d
    use tridi_mohid_r4, only: thomas_3d_r4 => thomas_3d, thomasz_r4 => thomasz, thomas_2d_r4 => thomas_2d, &
                              register_3d_r4 => register_3d, unregister_3d_r4 => unregister_3d, &
                              register_2d_r4 => register_2d, unregister_2d_r4 => unregister_2d
    implicit none
    private

    public :: tridi_mohid_init, tridi_mohid_finalize, tridi_mohid_context
    public :: tridi_thomas_3d, tridi_thomasz, tridi_thomas_2d
    public :: TRIDI_MOHID_CHECKED, TRIDI_MOHID_ORIGINAL, TRIDI_MOHID_NEWTYPE
    public :: tridi_mohid_stats, tridi_mohid_last_seconds, tridi_mohid_reset_stats
    public :: tridi_mohid_upload_3d, tridi_mohid_upload_z, tridi_mohid_upload_2d
    public :: tridi_mohid_register, tridi_mohid_unregister
    ! Re-exported so a MOHID module needs only `use tridi_mohid`.
    public :: tridi_error_message, tridi_status_name, TRIDI_SUCCESS, TRIDI_ERROR_INVALID_VALUE, &
              TRIDI_ERROR_BOUNDS, TRIDI_ERROR_NULL_POINTER, TRIDI_ERROR_UNSUPPORTED, TRIDI_ERROR_ALIASING, &
              TRIDI_ERROR_ZERO_PIVOT, TRIDI_ERROR_NONFINITE, TRIDI_ERROR_OUT_OF_MEMORY, TRIDI_BACKEND_AUTO, &
              TRIDI_BACKEND_CPU, TRIDI_BACKEND_CUDA, TRIDI_ROLE_LOWER, TRIDI_ROLE_DIAG, TRIDI_ROLE_UPPER, TRIDI_ROLE_RHS

    ! The kind set is told by D's kind (MOHID's default real) and E's.
    interface tridi_thomas_3d
        module procedure thomas_3d_r8, thomas_3d_mx, thomas_3d_r4
    end interface
    interface tridi_thomasz
        module procedure thomasz_r8, thomasz_mx, thomasz_r4
    end interface
    interface tridi_thomas_2d
        module procedure thomas_2d_r8, thomas_2d_mx, thomas_2d_r4
    end interface
    ! Registration of a MOHID array set (D, E, F, Ti, ANSWER; THOMASZ's AW, BW, CW, TIW, RES) for direct DMA.
    interface tridi_mohid_register
        module procedure register_3d_r8, register_3d_mx, register_3d_r4, register_2d_r8, register_2d_mx, register_2d_r4
    end interface
    interface tridi_mohid_unregister
        module procedure unregister_3d_r8, unregister_3d_mx, unregister_3d_r4, unregister_2d_r8, unregister_2d_mx, &
                         unregister_2d_r4
    end interface
    ! Per-array uploads for the 3D and 2D sweeps: real(4) or real(8) arrays.
    interface tridi_mohid_upload_3d
        module procedure upload_3d_r4, upload_3d_r8
    end interface
    interface tridi_mohid_upload_z
        module procedure upload_z_r4, upload_z_r8
    end interface
    interface tridi_mohid_upload_2d
        module procedure upload_2d_r4, upload_2d_r8
    end interface

end module tridi_mohid
