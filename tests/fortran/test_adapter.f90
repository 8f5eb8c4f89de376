! The MOHID adapter against the re-implemented MOHID routines (mohid_reference.f90): THOMAS_3D in both
! orientations, THOMASZ with KLB = 1 and KLB /= 1 and with a WaterPoints mask, THOMAS_2D with and
! without its first-row quirk, per-array uploads, registered arrays (tridi_mohid_register), and bad inputs. Arrays carry halos and lower bounds
! other than 1; boxes lie strictly inside. ANSWER/RES is poisoned before every call: solved cells must
! match the reference within real(4) accuracy (bitwise matches are counted and printed), every other
! cell must keep its poison, and D/E/F/Ti must be left as they were.
program test_adapter
    use tridi_mohid
    use tridi, only: tridi_error_cell, tridi_context, tridi_get_backend, TRIDI_ERROR_NO_DEVICE, tridi_host_register, &
                     tridi_host_unregister
    use test_support
    use mohid_reference
    use, intrinsic :: iso_fortran_env, only: int64
    implicit none
    real(4), pointer :: D(:, :, :) => null(), F(:, :, :) => null(), Ti(:, :, :) => null(), X(:, :, :) => null(), &
                        Xr(:, :, :) => null()
    real(8), pointer :: E(:, :, :) => null()
    real(4), pointer :: D2(:, :) => null(), F2(:, :) => null(), T2(:, :) => null(), X2(:, :) => null(), &
                        Xr2(:, :) => null()
    real(8), pointer :: E2(:, :) => null()
    real(4), allocatable :: D0(:, :, :), F0(:, :, :), T0(:, :, :)
    real(8), allocatable :: E0(:, :, :)
    integer, pointer :: WP(:, :, :) => null()
    integer :: s, lb(3), ub(3), nI, nJ, nK, case, di, dj, IJmin, IJmax, JImin, JImax, KLB, KUB
    integer(int64) :: total_cells = 0, bitwise_cells = 0
    type(tridi_context) :: shared
    integer :: backend

    call init_seed('test_adapter')
    call tridi_mohid_init(stat=s)
    if (s == TRIDI_ERROR_NO_DEVICE) then
        write (*, '(a)') 'skip: '//tridi_error_message()
        stop 77
    end if
    call check(s == TRIDI_SUCCESS, 'tridi_mohid_init: '//tridi_error_message())
    call test_thread_counts()

    do case = 1, 6
        call new_grid_3d()
        ! THOMAS_3D, lines along J (di = 0, dj = 1) then along I (di = 1, dj = 0)
        do di = 0, 1
            dj = 1 - di
            call pick_3d(di, IJmin, IJmax, JImin, JImax)
            call reset_x()
            call ref_thomas_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, D, E, F, Ti, Xr)
            call tridi_thomas_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, D, E, F, Ti, X, stat=s)
            call check(s == TRIDI_SUCCESS, 'tridi_thomas_3d: '//tridi_error_message())
            call compare_3d('tridi_thomas_3d di='//itoa(di))
            ! Uploads of each array after its "assembly", then the same solve.
            call reset_x()
            call tridi_mohid_upload_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, E, TRIDI_ROLE_DIAG, s)
            call check(s == TRIDI_SUCCESS, 'upload E: '//tridi_error_message())
            call tridi_mohid_upload_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, D, TRIDI_ROLE_LOWER, s)
            call tridi_mohid_upload_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, F, TRIDI_ROLE_UPPER, s)
            call tridi_mohid_upload_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, Ti, TRIDI_ROLE_RHS, s)
            call check(s == TRIDI_SUCCESS, 'upload Ti: '//tridi_error_message())
            call ref_thomas_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, D, E, F, Ti, Xr)
            ! stat absent: a success must not stop the program
            call tridi_thomas_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, D, E, F, Ti, X)
            call compare_3d('tridi_thomas_3d after uploads di='//itoa(di))
            ! The same with the set registered (direct DMA on the GPU); a set registered twice is fine.
            call tridi_mohid_register(D, E, F, Ti, X, s)
            call check(s == TRIDI_SUCCESS, 'tridi_mohid_register: '//tridi_error_message())
            call tridi_mohid_register(D, E, F, Ti, X, s)
            call check(s == TRIDI_SUCCESS, 'tridi_mohid_register twice: '//tridi_error_message())
            call reset_x()
            call tridi_mohid_upload_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, E, TRIDI_ROLE_DIAG, s)
            call tridi_mohid_upload_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, Ti, TRIDI_ROLE_RHS, s)
            call check(s == TRIDI_SUCCESS, 'upload of a registered Ti: '//tridi_error_message())
            call ref_thomas_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, D, E, F, Ti, Xr)
            call tridi_thomas_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, di, dj, D, E, F, Ti, X, stat=s)
            call check(s == TRIDI_SUCCESS, 'tridi_thomas_3d registered: '//tridi_error_message())
            call compare_3d('tridi_thomas_3d registered di='//itoa(di))
            call tridi_mohid_unregister(D, E, F, Ti, X, s)
            call check(s == TRIDI_SUCCESS, 'tridi_mohid_unregister: '//tridi_error_message())
        end do

        ! THOMASZ with KLB = 1, then KLB /= 1 (first row read at K = 1), with and without land
        do KLB = 1, 2
            KUB = ub(3) - 1 - rand_int(0, 1)
            call reset_x()
            call tridi_mohid_upload_z(lb(1) + 1, ub(1) - 1, lb(2) + 1, ub(2) - 1, KLB, KUB, E, TRIDI_ROLE_DIAG, s)
            call check(s == TRIDI_SUCCESS, 'upload_z: '//tridi_error_message())
            call ref_thomasz(lb(1) + 1, ub(1) - 1, lb(2) + 1, ub(2) - 1, KLB, KUB, D, E, F, Ti, Xr)
            call tridi_thomasz(lb(1) + 1, ub(1) - 1, lb(2) + 1, ub(2) - 1, KLB, KUB, D, E, F, Ti, X, stat=s)
            call check(s == TRIDI_SUCCESS, 'tridi_thomasz: '//tridi_error_message())
            call compare_3d('tridi_thomasz KLB='//itoa(KLB))

            call make_land(KUB)
            call reset_x()
            call ref_thomasz(lb(1) + 1, ub(1) - 1, lb(2) + 1, ub(2) - 1, KLB, KUB, D, E, F, Ti, Xr, WP)
            call tridi_thomasz(lb(1) + 1, ub(1) - 1, lb(2) + 1, ub(2) - 1, KLB, KUB, D, E, F, Ti, X, &
                               WaterPoints=WP, stat=s)
            call check(s == TRIDI_SUCCESS, 'tridi_thomasz with WaterPoints: '//tridi_error_message())
            call compare_3d('tridi_thomasz WaterPoints KLB='//itoa(KLB))
            ! Land columns must still fail without the mask (their first pivot is 0): proves the mask is used.
            call reset_x()
            call tridi_thomasz(lb(1) + 1, ub(1) - 1, lb(2) + 1, ub(2) - 1, KLB, KUB, D, E, F, Ti, X, stat=s)
            call check(s == TRIDI_ERROR_ZERO_PIVOT .or. s == TRIDI_ERROR_NONFINITE, &
                       'land columns without WaterPoints should fail, stat = '//itoa(s))
            call check(all(same_bits4(X, poison4())), 'RES written by a failed tridi_thomasz')
            call test_strided_z(KLB, KUB)
            deallocate (WP)
            call new_grid_3d()
        end do

        call test_2d()
        call test_errors()
        call free_3d()
    end do

    call test_page_sharing()

    ! The context handed out is the adapter's; after finalize the next call creates one again (lazily).
    call tridi_mohid_context(shared, s)
    call tridi_get_backend(shared, backend, s)
    call check(s == TRIDI_SUCCESS, 'tridi_mohid_context: '//tridi_error_message())
    call tridi_mohid_finalize(s)
    call check(s == TRIDI_SUCCESS, 'tridi_mohid_finalize')
    call new_grid_3d()
    call pick_3d(1, IJmin, IJmax, JImin, JImax)
    call reset_x()
    call tridi_mohid_register(D, E, F, Ti, X, s) ! on a lazily created context; finalize releases it
    call check(s == TRIDI_SUCCESS, 'tridi_mohid_register after finalize: '//tridi_error_message())
    call ref_thomas_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, 1, 0, D, E, F, Ti, Xr)
    call tridi_thomas_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, 1, 0, D, E, F, Ti, X, stat=s)
    call check(s == TRIDI_SUCCESS, 'tridi_thomas_3d after finalize: '//tridi_error_message())
    call compare_3d('tridi_thomas_3d on a lazily created context')
    call tridi_mohid_finalize(s)
    call check(s == TRIDI_SUCCESS, 'tridi_mohid_finalize with registered arrays')
    call free_3d()
    write (*, '(a, i0, a, i0, a)') 'test_adapter: ', bitwise_cells, ' of ', total_cells, &
        ' solved cells equal MOHID''s reference bitwise'
    call finish_test('test_adapter')

contains

    ! Five arrays within one 4 KiB page: the adapter registers the first (E) and leaves the others, which
    ! share its page, unregistered (CUDA refuses copies of ranges only partly page-locked); the library's
    ! own registry, the same on every backend, shows which: registering D directly succeeds, E is refused.
    subroutine test_page_sharing()
        use, intrinsic :: iso_c_binding, only: c_loc, c_intptr_t
        real(8), allocatable, target :: buf(:)
        real(8), pointer :: pD(:, :, :), pE(:, :, :), pF(:, :, :), pT(:, :, :), pX(:, :, :)
        type(tridi_context) :: c
        integer(c_intptr_t) :: a
        integer :: k0, st
        allocate (buf(1024))
        a = transfer(c_loc(buf(1)), a)
        k0 = 1 + int(modulo(-a, int(4096, c_intptr_t)) / 8) ! buf(k0) starts a page
        pD(1:4, 1:4, 1:2) => buf(k0:k0 + 31)
        pE(1:4, 1:4, 1:2) => buf(k0 + 32:k0 + 63)
        pF(1:4, 1:4, 1:2) => buf(k0 + 64:k0 + 95)
        pT(1:4, 1:4, 1:2) => buf(k0 + 96:k0 + 127)
        pX(1:4, 1:4, 1:2) => buf(k0 + 128:k0 + 159)
        call tridi_mohid_register(pD, pE, pF, pT, pX, st)
        call check(st == TRIDI_SUCCESS, 'tridi_mohid_register of one page: '//tridi_error_message())
        call tridi_mohid_context(c, st)
        call tridi_host_register(c, pD, stat=st)
        call check(st == TRIDI_SUCCESS, 'D, sharing E''s page, was left unregistered by the adapter')
        call tridi_host_unregister(c, pD, stat=st)
        call check(st == TRIDI_SUCCESS, 'tridi_host_unregister of D: '//tridi_error_message())
        call tridi_host_register(c, pE, stat=st)
        call check(st /= TRIDI_SUCCESS, 'E was registered by the adapter (a second registration is refused)')
        call tridi_mohid_unregister(pD, pE, pF, pT, pX, st)
        call check(st == TRIDI_SUCCESS, 'tridi_mohid_unregister of one page: '//tridi_error_message())
        call tridi_host_register(c, pE, stat=st)
        call check(st == TRIDI_SUCCESS, 'E released by tridi_mohid_unregister: '//tridi_error_message())
        call tridi_host_unregister(c, pE, stat=st)
        deallocate (buf)
    end subroutine

    subroutine new_grid_3d()
        if (associated(D)) call free_3d()
        nI = rand_int(4, 12)
        nJ = rand_int(4, 12)
        nK = rand_int(4, 9)
        lb = [-1, 0, 0]
        ub = [nI + 2, nJ + 1, nK + 1]
        call random_mixed_3d(lb, ub, D, E, F, Ti)
        allocate (X, Xr, mold=D)
        D0 = D
        E0 = E
        F0 = F
        T0 = Ti
    end subroutine

    subroutine free_3d()
        deallocate (D, E, F, Ti, X, Xr)
        nullify (D, E, F, Ti, X, Xr)
        deallocate (D0, E0, F0, T0)
    end subroutine

    subroutine reset_x()
        X = poison4()
        Xr = poison4()
    end subroutine

    ! Ranges strictly inside the allocation, the boundary row JImax+1 included.
    subroutine pick_3d(di, IJmin, IJmax, JImin, JImax)
        integer, intent(in) :: di
        integer, intent(out) :: IJmin, IJmax, JImin, JImax
        integer :: ij_dim, ji_dim
        ij_dim = 1 + di
        ji_dim = 2 - di
        IJmin = lb(ij_dim) + rand_int(1, 2)
        IJmax = ub(ij_dim) - rand_int(1, 2)
        JImin = lb(ji_dim) + rand_int(1, 2)
        JImax = ub(ji_dim) - 1 - rand_int(1, 2)
    end subroutine

    ! About a third of the columns are land: zero diagonal and a NaN right-hand side there.
    subroutine make_land(KUB)
        integer, intent(in) :: KUB
        integer :: i, j
        real(8) :: r
        allocate (WP(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3)))
        WP = 1
        do j = lb(2), ub(2)
            do i = lb(1), ub(1)
                call random_number(r)
                if (r < 0.3d0) then
                    WP(i, j, :) = 0
                    E(i, j, :) = 0
                    Ti(i, j, :) = transfer(int(z'7FC00001'), 1.0_4)
                end if
            end do
        end do
        WP(lb(1) + 1, lb(2) + 1, KUB) = 0   ! at least one land column in every box
        E(lb(1) + 1, lb(2) + 1, :) = 0
        E0 = E
        T0 = Ti
    end subroutine

    subroutine compare_3d(label)
        character(*), intent(in) :: label
        logical, allocatable :: solved(:, :, :)
        real(8) :: err
        solved = .not. same_bits4(Xr, poison4())
        call check(count(solved) > 0, label//': nothing solved by the reference')
        call check(all(same_bits4(X, poison4()) .eqv. .not. solved), &
                   label//': cells outside the solved lines were written, or solved cells left unwritten')
        err = rel_err(real(pack(X, solved), 8), real(pack(Xr, solved), 8))
        call check(err <= 1d-5, label//': relative error vs MOHID reference too large')
        total_cells = total_cells + count(solved)
        bitwise_cells = bitwise_cells + count(solved .and. same_bits4(X, Xr))
        call check(all(same_bits4(D, D0)) .and. all(same_bits8(E, E0)) .and. all(same_bits4(F, F0)) .and. &
                   all(same_bits4(Ti, T0)), label//': an input array was modified')
    end subroutine

    subroutine compare_2d(label)
        character(*), intent(in) :: label
        logical, allocatable :: solved(:, :)
        real(8) :: err
        solved = .not. same_bits4(Xr2, poison4())
        call check(count(solved) > 0, label//': nothing solved by the reference')
        call check(all(same_bits4(X2, poison4()) .eqv. .not. solved), &
                   label//': cells outside the solved lines were written, or solved cells left unwritten')
        err = rel_err(real(pack(X2, solved), 8), real(pack(Xr2, solved), 8))
        call check(err <= 1d-5, label//': relative error vs MOHID reference too large')
        total_cells = total_cells + count(solved)
        bitwise_cells = bitwise_cells + count(solved .and. same_bits4(X2, Xr2))
    end subroutine

    ! tridi_mohid_init(num_threads=...): a negative count is refused naming it, a huge one is capped at the
    ! processors (libgomp used to stop the program at 40000 threads and crash at 100000) and solves right.
    subroutine test_thread_counts()
        integer :: IJmin, IJmax, JImin, JImax
        call tridi_mohid_init(num_threads=-3, stat=s)
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'num_threads = -3') > 0, &
                   'tridi_mohid_init(num_threads=-3): stat '//itoa(s)//' '//tridi_error_message())
        call tridi_mohid_init(num_threads=100000, stat=s)
        call check(s == TRIDI_SUCCESS, 'tridi_mohid_init(num_threads=100000): '//tridi_error_message())
        call new_grid_3d()
        call pick_3d(0, IJmin, IJmax, JImin, JImax)
        call reset_x()
        call ref_thomas_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, 0, 1, D, E, F, Ti, Xr)
        call tridi_thomas_3d(IJmin, IJmax, JImin, JImax, lb(3) + 1, ub(3) - 1, 0, 1, D, E, F, Ti, X, stat=s)
        call check(s == TRIDI_SUCCESS, 'tridi_thomas_3d with 100000 threads asked: '//tridi_error_message())
        call compare_3d('tridi_thomas_3d with 100000 threads asked')
        call free_3d()
        call tridi_mohid_init(stat=s)
        call check(s == TRIDI_SUCCESS, 'tridi_mohid_init again: '//tridi_error_message())
    end subroutine

    ! THOMASZ on a strided RES or BW (every other I of a larger array): not contiguous, so refused, with a
    ! land column (the adapter then solves on copies) as without one; nothing written.
    subroutine test_strided_z(KLB, KUB)
        integer, intent(in) :: KLB, KUB
        real(4), pointer :: bigX(:, :, :), sX(:, :, :)
        real(8), pointer :: bigE(:, :, :), sE(:, :, :)
        integer :: which, withland
        character(len=:), allocatable :: label
        allocate (bigX(lb(1):lb(1) + 2*(ub(1) - lb(1) + 1) - 1, lb(2):ub(2), lb(3):ub(3)))
        allocate (bigE(lb(1):lb(1) + 2*(ub(1) - lb(1) + 1) - 1, lb(2):ub(2), lb(3):ub(3)))
        bigX = poison4()
        bigE = 0
        sX(lb(1):, lb(2):, lb(3):) => bigX(lb(1)::2, :, :)
        sE(lb(1):, lb(2):, lb(3):) => bigE(lb(1)::2, :, :)
        sE = E
        call reset_x()
        do which = 1, 2
            do withland = 0, 1
                label = 'thomasz strided '//trim(merge('RES', 'BW ', which == 1))//' KLB='//itoa(KLB)// &
                        ' land='//itoa(withland)
                if (which == 1 .and. withland == 1) then
                    call tridi_thomasz(lb(1) + 1, ub(1) - 1, lb(2) + 1, ub(2) - 1, KLB, KUB, D, E, F, Ti, sX, &
                                       WaterPoints=WP, stat=s)
                else if (which == 1) then
                    call tridi_thomasz(lb(1) + 1, ub(1) - 1, lb(2) + 1, ub(2) - 1, KLB, KUB, D, E, F, Ti, sX, stat=s)
                else if (withland == 1) then
                    call tridi_thomasz(lb(1) + 1, ub(1) - 1, lb(2) + 1, ub(2) - 1, KLB, KUB, D, sE, F, Ti, X, &
                                       WaterPoints=WP, stat=s)
                else
                    call tridi_thomasz(lb(1) + 1, ub(1) - 1, lb(2) + 1, ub(2) - 1, KLB, KUB, D, sE, F, Ti, X, stat=s)
                end if
                call check(s == TRIDI_ERROR_UNSUPPORTED .and. index(tridi_error_message(), 'not contiguous') > 0, &
                           label//': stat '//itoa(s)//' '//tridi_error_message())
                call check(all(same_bits4(bigX, poison4())) .and. all(same_bits4(X, poison4())), &
                           label//': an answer was written')
            end do
        end do
        deallocate (bigX, bigE)
    end subroutine

    ! THOMAS_2D on a strided E: refused whether or not E's first rows are copied (quirk).
    subroutine test_strided_2d(IJmin, IJmax, JImin, JImax, di, dj, quirk, lb2, ub2)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj, quirk, lb2(2), ub2(2)
        real(8), pointer :: bigE(:, :), sE(:, :)
        allocate (bigE(lb2(1):lb2(1) + 2*(ub2(1) - lb2(1) + 1) - 1, lb2(2):ub2(2)))
        bigE = 0
        sE(lb2(1):, lb2(2):) => bigE(lb2(1)::2, :)
        sE = E2
        X2 = poison4()
        call tridi_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D2, sE, F2, T2, X2, stat=s)
        call check(s == TRIDI_ERROR_UNSUPPORTED .and. index(tridi_error_message(), 'E is not contiguous') > 0, &
                   'thomas_2d strided E quirk='//itoa(quirk)//': stat '//itoa(s)//' '//tridi_error_message())
        call check(all(same_bits4(X2, poison4())), 'thomas_2d strided E wrote ANSWER')
        deallocate (bigE)
    end subroutine

    subroutine test_2d()
        integer :: lb2(2), ub2(2), di, dj, quirk, IJmin, IJmax, JImin, JImax, ij_dim, ji_dim
        real(8), allocatable :: d8(:, :), e8(:, :), f8(:, :), t8(:, :)
        real(4), allocatable :: T20(:, :), F20(:, :)
        real(8), allocatable :: E20(:, :)
        lb2 = [-1, 0]
        ub2 = [rand_int(6, 14), rand_int(6, 14)]
        call random_system_2d(lb2, ub2, d8, e8, f8, t8)
        allocate (D2(lb2(1):ub2(1), lb2(2):ub2(2)))
        allocate (F2, T2, X2, Xr2, mold=D2)
        allocate (E2(lb2(1):ub2(1), lb2(2):ub2(2)))
        D2 = real(d8, 4)
        F2 = real(f8, 4)
        T2 = real(t8, 4)
        E2 = e8
        T20 = T2
        E20 = E2
        do di = 0, 1
            dj = 1 - di
            ij_dim = 1 + di
            ji_dim = 2 - di
            do quirk = 0, 1
                ! quirk 0: IJmin = JImin = 1 as MOHID calls it; quirk 1: the first row is read elsewhere.
                IJmin = 1 + quirk
                JImin = 1 + 2*quirk
                ! MOHID reads the first row of line IJ at (IJmin-1+IJ, JImin) (di = 0) or (IJmin, JImin-1+IJ)
                ! (di = 1): IJmax keeps those cells inside the allocation.
                if (di == 0) then
                    IJmax = min(ub2(1) - 1, ub2(1) - IJmin + 1)
                else
                    IJmax = min(ub2(2) - 1, ub2(2) - JImin + 1)
                end if
                JImax = ub2(ji_dim) - 2
                X2 = poison4()
                Xr2 = poison4()
                call ref_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D2, E2, F2, T2, Xr2)
                call tridi_mohid_upload_2d(IJmin, IJmax, JImin, JImax, di, dj, T2, TRIDI_ROLE_RHS, s)
                call check(s == TRIDI_SUCCESS, 'upload_2d: '//tridi_error_message())
                call tridi_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D2, E2, F2, T2, X2, stat=s)
                call check(s == TRIDI_SUCCESS, 'tridi_thomas_2d: '//tridi_error_message())
                call compare_2d('tridi_thomas_2d di='//itoa(di)//' quirk='//itoa(quirk))
                call check(all(same_bits4(T2, T20)) .and. all(same_bits8(E2, E20)), 'thomas_2d modified Ti or E')
                ! ANSWER => F: refused whether or not the first rows are solved on copies (with copies the
                ! adapter used to answer into F and return success).
                F20 = F2
                call tridi_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D2, E2, F2, T2, F2, stat=s)
                call check(s == TRIDI_ERROR_ALIASING .and. index(tridi_error_message(), 'ANSWER overlaps F') > 0, &
                           'thomas_2d ANSWER => F quirk='//itoa(quirk)//': stat '//itoa(s)//' '//tridi_error_message())
                call check(all(same_bits4(F2, F20)), 'thomas_2d ANSWER => F wrote F, quirk='//itoa(quirk))
                ! A strided E: not contiguous, whether or not the adapter copies E's first rows.
                call test_strided_2d(IJmin, IJmax, JImin, JImax, di, dj, quirk, lb2, ub2)
                ! ANSWER => Ti stays an in-place solve either way.
                X2 = T2
                call tridi_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D2, E2, F2, X2, X2, stat=s)
                call check(s == TRIDI_SUCCESS, 'thomas_2d in place quirk='//itoa(quirk)//': '//tridi_error_message())
            end do
        end do
        ! Errors: (di, dj) = (1, 1); first-row cell outside the allocation.
        X2 = poison4()
        call tridi_thomas_2d(1, 3, 1, 3, 1, 1, D2, E2, F2, T2, X2, stat=s)
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), '(1, 1)') > 0, &
                   'thomas_2d (1,1): '//tridi_error_message())
        call tridi_thomas_2d(3, ub2(1) - 1, 1, 2, 0, 1, D2, E2, F2, T2, X2, stat=s)
        call check(s == TRIDI_ERROR_BOUNDS .and. index(tridi_error_message(), 'first row') > 0, &
                   'thomas_2d quirk cell outside: stat '//itoa(s)//' '//tridi_error_message())
        call check(all(same_bits4(X2, poison4())), 'thomas_2d error wrote ANSWER')
        deallocate (D2, E2, F2, T2, X2, Xr2)
    end subroutine

    subroutine test_errors()
        integer :: i0, j0, k0, rank
        integer(int64) :: cell(3)
        character(len=:), allocatable :: msg, want
        real(4), pointer :: none(:, :, :)
        real(8), pointer :: Ebad(:, :, :)
        real(4), pointer :: A4(:, :, :)
        call pick_3d(0, IJmin, IJmax, JImin, JImax)
        call reset_x()
        ! (di, dj) outside MOHID's two sweeps
        call tridi_thomas_3d(IJmin, IJmax, JImin, JImax, 1, 2, 2, 0, D, E, F, Ti, X, stat=s)
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), '(2, 0)') > 0, &
                   'bad di/dj: '//tridi_error_message())
        ! the boundary row JImax+1 beyond the allocation
        call tridi_thomas_3d(IJmin, IJmax, JImin, ub(2), 1, 2, 0, 1, D, E, F, Ti, X, stat=s)
        call check(s == TRIDI_ERROR_BOUNDS .and. index(tridi_error_message(), 'not inside') > 0, &
                   'bounds: '//tridi_error_message())
        ! a zero pivot: first unknown of one line
        i0 = rand_int(IJmin, IJmax)
        k0 = rand_int(1, 2)
        E(i0, JImin, k0) = 0
        call tridi_thomas_3d(IJmin, IJmax, JImin, JImax, 1, 2, 0, 1, D, E, F, Ti, X, stat=s)
        msg = tridi_error_message()
        want = '('//itoa(i0)//', '//itoa(JImin)//', '//itoa(k0)//')'
        call check(s == TRIDI_ERROR_ZERO_PIVOT .and. index(msg, want) > 0 .and. index(msg, 'tridi_thomas_3d') > 0, &
                   'zero pivot should name '//want//': '//msg)
        rank = tridi_error_cell(cell)
        call check(rank == 3 .and. all(cell == [i0, JImin, k0]), 'tridi_error_cell after zero pivot')
        E(i0, JImin, k0) = E0(i0, JImin, k0)
        ! a NaN in Ti inside the box
        j0 = rand_int(JImin, JImax + 1)
        Ti(i0, j0, k0) = transfer(int(z'7FC00002'), 1.0_4)
        call tridi_thomas_3d(IJmin, IJmax, JImin, JImax, 1, 2, 0, 1, D, E, F, Ti, X, stat=s)
        msg = tridi_error_message()
        want = '('//itoa(i0)//', '//itoa(j0)//', '//itoa(k0)//')'
        call check(s == TRIDI_ERROR_NONFINITE .and. index(msg, want) > 0, 'NaN in Ti should name '//want//': '//msg)
        ! the same NaN seen through THOMASZ with KLB = 2: MOHID reads the first row at K = 1, so a NaN at
        ! K = 1 is met at the column's first unknown and named at the cell read, (I, J, 1), by the message
        ! and tridi_error_cell; a NaN at K = 2 is never read.
        call reset_x()
        call tridi_thomasz(i0, i0, j0, j0, 2, ub(3) - 1, D, E, F, Ti, X, stat=s)
        msg = tridi_error_message()
        if (k0 == 1) then
            want = '('//itoa(i0)//', '//itoa(j0)//', 1)'
            call check(s == TRIDI_ERROR_NONFINITE .and. index(msg, want) > 0, 'thomasz NaN at K=1 should name '// &
                       want//': '//msg)
            rank = tridi_error_cell(cell)
            call check(rank == 3 .and. all(cell == [i0, j0, 1]), 'tridi_error_cell after thomasz NaN at K=1')
            call check(all(same_bits4(X, poison4())), 'RES written by a failed tridi_thomasz')
        else
            call check(s == TRIDI_SUCCESS, 'thomasz never reads K = 2 of the first row: '//msg)
        end if
        Ti(i0, j0, k0) = T0(i0, j0, k0)
        call reset_x()
        ! THOMASZ with KLB /= 1 on arrays whose K axis does not contain K = 1
        allocate (Ebad(lb(1):ub(1), lb(2):ub(2), 2:ub(3)))
        Ebad = 1
        call tridi_thomasz(IJmin, IJmax, JImin, JImax, 3, ub(3) - 1, D, Ebad, F, Ti, X, stat=s)
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'BW has bounds') > 0, &
                   'thomasz mismatched bounds: '//tridi_error_message())
        allocate (A4(lb(1):ub(1), lb(2):ub(2), 2:ub(3)))
        A4 = 0
        call tridi_thomasz(IJmin, IJmax, JImin, JImax, 3, ub(3) - 1, A4, Ebad, A4, A4, A4, stat=s)
        call check(s == TRIDI_ERROR_BOUNDS .and. index(tridi_error_message(), 'K = 1') > 0, &
                   'thomasz K = 1 outside: '//tridi_error_message())
        call check(all(A4 == 0), 'A4 written by a failed tridi_thomasz')
        deallocate (Ebad, A4)
        ! an unassociated array
        nullify (none)
        call tridi_thomas_3d(IJmin, IJmax, JImin, JImax, 1, 2, 0, 1, D, E, none, Ti, X, stat=s)
        call check(s == TRIDI_ERROR_NULL_POINTER .and. index(tridi_error_message(), 'F') > 0, &
                   'unassociated F: '//tridi_error_message())
        call check(all(same_bits4(X, poison4())), 'ANSWER written by a failed call')
        call check(all(same_bits4(D, D0)) .and. all(same_bits8(E, E0)) .and. all(same_bits4(F, F0)) .and. &
                   all(same_bits4(Ti, T0)), 'inputs modified by failed calls')
    end subroutine

end program test_adapter
