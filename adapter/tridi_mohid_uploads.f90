! Module tridi_mohid_uploads: per-array uploads of the MOHID adapter (GPU overlap), real(4) or real(8)
! arrays of any MOHID precision (an upload moves one array, whatever the kinds of the others).
module tridi_mohid_uploads
    use tridi, only: tridi_upload_async, tridi_finish, TRIDI_SUCCESS, TRIDI_ROLE_LOWER
    use tridi_mohid_core, only: ctx, ensure_ready, pass_on, sweep_box
    implicit none
    private
    public :: upload_3d_r4, upload_3d_r8, upload_z_r4, upload_z_r8, upload_2d_r4, upload_2d_r8

contains

    ! ---------------------------------------------------------------------------------------------
    ! Per-array uploads (GPU overlap): call right after an array's assembly with the arguments of the
    ! coming solve; the solve then uses the uploaded copy. On the CPU backend they only validate.
    ! Arrays the solve replaces by copies (MOHID's first-row quirk) are not uploaded.
    ! ---------------------------------------------------------------------------------------------
    ! Shared part of each upload family: MOHID's box for the array, whether it is uploaded at all
    ! (arrays the solve replaces by copies are not), and a ready context. go = .false.: stat is set.
    subroutine plan_upload_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, axis, lo, hi, go, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj
        integer, intent(out) :: axis, lo(3), hi(3)
        logical, intent(out) :: go
        integer, intent(out), optional :: stat
        call sweep_box('tridi_mohid_upload_3d', IJmin, IJmax, JImin, JImax, di, dj, axis, lo(1:2), hi(1:2), go, stat)
        if (.not. go) return
        lo(3) = Kmin
        hi(3) = Kmax
        call ensure_ready('tridi_mohid_upload_3d', go, stat)
    end subroutine

    subroutine plan_upload_z(ILB, IUB, JLB, JUB, KLB, KUB, role, lo, hi, go, stat)
        integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB, role
        integer, intent(out) :: lo(3), hi(3)
        logical, intent(out) :: go
        integer, intent(out), optional :: stat
        lo = [ILB, JLB, KLB]
        hi = [IUB, JUB, KUB + 1]
        go = .not. (KLB /= 1 .and. role /= TRIDI_ROLE_LOWER) ! THOMASZ's K=1 first row: solved on copies
        if (.not. go) then
            call tridi_finish(TRIDI_SUCCESS, stat)
            return
        end if
        call ensure_ready('tridi_mohid_upload_z', go, stat)
    end subroutine

    ! THOMAS_2D reads its first rows elsewhere unless IJmin = JImin = 1 (how MOHID calls it).
    logical function quirk_2d(IJmin, JImin, di, role) result(copied)
        integer, intent(in) :: IJmin, JImin, di, role
        copied = role /= TRIDI_ROLE_LOWER .and. (IJmin /= 1 .or. (di == 1 .and. JImin /= 1))
    end function

    subroutine plan_upload_2d(IJmin, IJmax, JImin, JImax, di, dj, role, axis, lo, hi, go, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj, role
        integer, intent(out) :: axis, lo(2), hi(2)
        logical, intent(out) :: go
        integer, intent(out), optional :: stat
        call sweep_box('tridi_mohid_upload_2d', IJmin, IJmax, JImin, JImax, di, dj, axis, lo, hi, go, stat)
        if (.not. go) return
        if (quirk_2d(IJmin, JImin, di, role)) then
            go = .false.
            call tridi_finish(TRIDI_SUCCESS, stat)
            return
        end if
        call ensure_ready('tridi_mohid_upload_2d', go, stat)
    end subroutine

    subroutine upload_3d_r4(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, array, role, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, role
        real(4), dimension(:, :, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: axis, lo(3), hi(3), s
        logical :: go
        call plan_upload_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, axis, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, axis, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_3d', s, stat)
    end subroutine

    subroutine upload_3d_r8(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, array, role, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, role
        real(8), dimension(:, :, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: axis, lo(3), hi(3), s
        logical :: go
        call plan_upload_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, axis, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, axis, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_3d', s, stat)
    end subroutine

    subroutine upload_z_r4(ILB, IUB, JLB, JUB, KLB, KUB, array, role, stat)
        integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB, role
        real(4), dimension(:, :, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: lo(3), hi(3), s
        logical :: go
        call plan_upload_z(ILB, IUB, JLB, JUB, KLB, KUB, role, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, 3, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_z', s, stat)
    end subroutine

    subroutine upload_z_r8(ILB, IUB, JLB, JUB, KLB, KUB, array, role, stat)
        integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB, role
        real(8), dimension(:, :, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: lo(3), hi(3), s
        logical :: go
        call plan_upload_z(ILB, IUB, JLB, JUB, KLB, KUB, role, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, 3, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_z', s, stat)
    end subroutine

    subroutine upload_2d_r4(IJmin, IJmax, JImin, JImax, di, dj, array, role, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj, role
        real(4), dimension(:, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: axis, lo(2), hi(2), s
        logical :: go
        call plan_upload_2d(IJmin, IJmax, JImin, JImax, di, dj, role, axis, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, axis, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_2d', s, stat)
    end subroutine

    subroutine upload_2d_r8(IJmin, IJmax, JImin, JImax, di, dj, array, role, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj, role
        real(8), dimension(:, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: axis, lo(2), hi(2), s
        logical :: go
        call plan_upload_2d(IJmin, IJmax, JImin, JImax, di, dj, role, axis, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, axis, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_2d', s, stat)
    end subroutine

end module tridi_mohid_uploads
