! MOHID's own compiled Thomas routines (its ModuleFunctions, from the MOHID build given to run.sh) against
! tridi's adapter on the same inputs, call by call, bit for bit: every variant and call form MOHID Water
! uses (THOMAS_2D Original and NewType, THOMAS_3D Original and NewType both ways, THOMASZ Original and
! NewType with KLB = 1 and 2, THOMASZ_NewType2 with land), on random diagonally dominant systems, near
! ties (pivots close to the float rounding of MOHID's NewType AUX) and zero pivots (MOHID's Inf/NaN, its
! W = G = 0, its stale W/G). `real` is MOHID's default real: compiled with MOHID's flags (r8 or r4).
! Prints one line per routine and variant; exits 1 when any answer (or NewType's W/G) differs.
program unit_check
    use ModuleFunctions, only: THOMAS_2D, THOMAS_3D, THOMASZ, THOMASZ_NewType2, T_THOMAS, T_THOMAS2D, T_VECGW
    use tridi_mohid, only: tridi_thomas_2d, tridi_thomas_3d, tridi_thomasz, TRIDI_MOHID_ORIGINAL, &
                           TRIDI_MOHID_NEWTYPE, tridi_mohid_stats, tridi_error_message
    implicit none
    integer, parameter :: nI = 23, nJ = 19, nK = 12, ntrials = 12
    type(T_THOMAS), pointer :: TH, TH2          ! TH2: the same diagonals, its own VEC (the adapter's)
    type(T_THOMAS2D), pointer :: T2D
    real, pointer :: R1(:, :, :), R2(:, :, :), X1(:, :), X2(:, :)
    real(8), pointer :: VG(:), VW(:)
    integer, pointer :: WP(:, :, :)
    integer :: trial, s, di, KLB, mode, bad
    integer(8) :: seed
    character(len=24) :: tag

    call make_seed()
    allocate (TH, TH2, T2D)
    allocate (TH%COEF3, TH%VEC(1), TH2%VEC(1), T2D%COEF2, T2D%VEC(1))
    allocate (TH%COEF3%D(0:nI + 1, 0:nJ + 1, 0:nK + 1), TH%COEF3%E(0:nI + 1, 0:nJ + 1, 0:nK + 1), &
              TH%COEF3%F(0:nI + 1, 0:nJ + 1, 0:nK + 1), TH%TI(0:nI + 1, 0:nJ + 1, 0:nK + 1), &
              R1(0:nI + 1, 0:nJ + 1, 0:nK + 1), R2(0:nI + 1, 0:nJ + 1, 0:nK + 1), WP(0:nI + 1, 0:nJ + 1, 0:nK + 1))
    TH2%COEF3 => TH%COEF3
    TH2%TI => TH%TI
    allocate (TH%VEC(1)%G(0:max(nI, nJ, nK) + 2), TH%VEC(1)%W(0:max(nI, nJ, nK) + 2))
    allocate (TH2%VEC(1)%G(0:max(nI, nJ, nK) + 2), TH2%VEC(1)%W(0:max(nI, nJ, nK) + 2))
    allocate (T2D%COEF2%D(0:nI + 1, 0:nJ + 1), T2D%COEF2%E(0:nI + 1, 0:nJ + 1), T2D%COEF2%F(0:nI + 1, 0:nJ + 1), &
              T2D%TI(0:nI + 1, 0:nJ + 1), X1(0:nI + 1, 0:nJ + 1), X2(0:nI + 1, 0:nJ + 1))
    allocate (T2D%VEC(1)%G(0:max(nI, nJ) + 2), T2D%VEC(1)%W(0:max(nI, nJ) + 2))
    allocate (VG(0:max(nI, nJ, nK) + 2), VW(0:max(nI, nJ, nK) + 2))
    bad = 0
    do trial = 1, ntrials
        mode = mod(trial - 1, 3) ! 0 random, 1 near ties, 2 zero pivots
        tag = trim(merge('random   ', 'near ties', mode == 0))
        if (mode == 2) tag = 'zero pivots'
        call fill(mode)
        ! THOMAS_2D Original (MOHID's arrays and VECG/VECW) and NewType (its T_THOMAS2D)
        do di = 0, 1
            call pair2d(di, .false.)
            call pair2d(di, .true.)
        end do
        ! THOMAS_3D Original both ways; NewType where MOHID does not stop (no zero pivots)
        do di = 0, 1
            R1 = -7
            R2 = -7
            call THOMAS_3D(1, nI*(1 - di) + nJ*di, 1, nJ*(1 - di) + nI*di - 1, 1, nK, di, 1 - di, TH%COEF3%D, &
                           TH%COEF3%E, TH%COEF3%F, TH%TI, R1, VG, VW)
            call tridi_thomas_3d(1, nI*(1 - di) + nJ*di, 1, nJ*(1 - di) + nI*di - 1, 1, nK, di, 1 - di, TH%COEF3%D, &
                                 TH%COEF3%E, TH%COEF3%F, TH%TI, R2, VG, VW, variant=TRIDI_MOHID_ORIGINAL, stat=s)
            call report3('THOMAS_3D Original di='//achar(48 + di))
            if (mode == 2) cycle
            R1 = -7
            R2 = -7
            call reset_vec()
            call THOMAS_3D(1, nI*(1 - di) + nJ*di, 1, nJ*(1 - di) + nI*di - 1, 1, nK, di, 1 - di, TH, R1)
            call tridi_thomas_3d(1, nI*(1 - di) + nJ*di, 1, nJ*(1 - di) + nI*di - 1, 1, nK, di, 1 - di, TH%COEF3%D, &
                                 TH%COEF3%E, TH%COEF3%F, TH%TI, R2, TH2%VEC(1)%G, TH2%VEC(1)%W, &
                                 variant=TRIDI_MOHID_NEWTYPE, stat=s)
            call report3('THOMAS_3D NewType di='//achar(48 + di), vec=.true.)
        end do
        ! THOMASZ Original and NewType (KLB = 1 and 2), THOMASZ_NewType2 with land columns
        do KLB = 1, 2
            R1 = -7
            R2 = -7
            call THOMASZ(1, nI, 1, nJ, KLB, nK, TH%COEF3%D, TH%COEF3%E, TH%COEF3%F, TH%TI, R1, VG, VW)
            call tridi_thomasz(1, nI, 1, nJ, KLB, nK, TH%COEF3%D, TH%COEF3%E, TH%COEF3%F, TH%TI, R2, VG, VW, &
                               variant=TRIDI_MOHID_ORIGINAL, stat=s)
            call report3('THOMASZ Original KLB='//achar(48 + KLB))
            R1 = -7
            R2 = -7
            call reset_vec()
            call THOMASZ(1, nI, 1, nJ, KLB, nK, TH, R1)
            call tridi_thomasz(1, nI, 1, nJ, KLB, nK, TH%COEF3%D, TH%COEF3%E, TH%COEF3%F, TH%TI, R2, &
                               TH2%VEC(1)%G, TH2%VEC(1)%W, variant=TRIDI_MOHID_NEWTYPE, stat=s)
            call report3('THOMASZ NewType KLB='//achar(48 + KLB), vec=.true.)
            R1 = -7
            R2 = -7
            call THOMASZ_NewType2(1, nI, 1, nJ, KLB, nK, TH, R1, WP)
            call tridi_thomasz(1, nI, 1, nJ, KLB, nK, TH%COEF3%D, TH%COEF3%E, TH%COEF3%F, TH%TI, R2, &
                               TH2%VEC(1)%G, TH2%VEC(1)%W, WaterPoints=WP, variant=TRIDI_MOHID_NEWTYPE, stat=s)
            call report3('THOMASZ_NewType2 KLB='//achar(48 + KLB), vec=.true.)
        end do
    end do
    call tridi_mohid_stats()
    write (*, '(a, i0)') 'unit_check: seed ', seed
    if (bad > 0) then
        write (*, '(a, i0, a)') 'unit_check: ', bad, ' comparisons DIFFER'
        stop 1
    end if
    write (*, '(a)') 'unit_check: every answer identical, bit for bit'

contains

    subroutine make_seed()
        integer :: n, i, clock, len_env, st
        integer, allocatable :: put(:)
        character(len=32) :: env
        call get_environment_variable('TRIDI_SEED', env, len_env, st)
        if (st == 0 .and. len_env > 0) then
            read (env, *) seed
        else
            call system_clock(clock)
            seed = clock
        end if
        call random_seed(size=n)
        allocate (put(n))
        put = [(int(mod(seed*(2*i + 1) + 7919_8*i, 2147483647_8)), i = 1, n)]
        call random_seed(put=put)
    end subroutine

    subroutine fill(mode)
        integer, intent(in) :: mode
        real(8) :: r(4)
        integer :: i, j, k
        do k = 0, nK + 1
            do j = 0, nJ + 1
                do i = 0, nI + 1
                    call random_number(r)
                    TH%COEF3%D(i, j, k) = -r(1)*10d0**(-3 + mod(trial, 4))
                    TH%COEF3%F(i, j, k) = -r(2)*10d0**(-3 + mod(trial, 4))
                    TH%COEF3%E(i, j, k) = 1d0 + r(3)*1d-2 - TH%COEF3%D(i, j, k) - TH%COEF3%F(i, j, k)
                    if (mode == 1) TH%COEF3%E(i, j, k) = abs(TH%COEF3%D(i, j, k))*(1d0 + r(3)*1d-6) + 1d-7
                    TH%TI(i, j, k) = (r(4) - 0.5d0)*3d0
                end do
            end do
        end do
        TH%COEF3%D(:, :, nK + 1) = 0
        TH%COEF3%F(:, :, nK + 1) = 0
        TH%COEF3%E(:, :, nK + 1) = 1
        WP = 1
        WP(1, :, :) = 0
        WP(7, 9, :) = 0
        if (mode == 2) then ! D = E = 0 at some cells past the first rows: MOHID's AUX is exactly 0 there
            do k = 1, 6
                i = 2 + mod(k*5, nI - 2)
                j = 2 + mod(k*3, nJ - 2)
                TH%COEF3%D(i, j, 1 + mod(k, nK)) = 0
                TH%COEF3%E(i, j, 1 + mod(k, nK)) = 0
            end do
        end if
        T2D%COEF2%D = TH%COEF3%D(:, :, 1)
        T2D%COEF2%E = TH%COEF3%E(:, :, 1)
        T2D%COEF2%F = TH%COEF3%F(:, :, 1)
        T2D%TI = TH%TI(:, :, 1)
        if (mode == 2) then ! and in two lines of each 2D sweep
            T2D%COEF2%D(3, 4) = 0
            T2D%COEF2%E(3, 4) = 0
            T2D%COEF2%D(6, 2) = 0
            T2D%COEF2%E(6, 2) = 0
        end if
    end subroutine

    ! MOHID's VEC and the adapter's start alike (NewType's stale W/G come from them).
    subroutine reset_vec()
        TH2%VEC(1)%G = TH%VEC(1)%G
        TH2%VEC(1)%W = TH%VEC(1)%W
    end subroutine

    subroutine pair2d(di, newtype)
        integer, intent(in) :: di
        logical, intent(in) :: newtype
        integer :: IJmax, JImax
        IJmax = nI*(1 - di) + nJ*di
        JImax = nJ*(1 - di) + nI*di - 1
        X1 = -7
        X2 = -7
        if (newtype) then
            call THOMAS_2D(1, IJmax, 1, JImax, di, 1 - di, T2D, X1, 'unit_check')
            call tridi_thomas_2d(1, IJmax, 1, JImax, di, 1 - di, T2D%COEF2%D, T2D%COEF2%E, T2D%COEF2%F, T2D%TI, X2, &
                                 variant=TRIDI_MOHID_NEWTYPE, stat=s)
        else
            call THOMAS_2D(1, IJmax, 1, JImax, di, 1 - di, T2D%COEF2%D, T2D%COEF2%E, T2D%COEF2%F, T2D%TI, X1, VG, VW)
            call tridi_thomas_2d(1, IJmax, 1, JImax, di, 1 - di, T2D%COEF2%D, T2D%COEF2%E, T2D%COEF2%F, T2D%TI, X2, &
                                 VG, VW, variant=TRIDI_MOHID_ORIGINAL, stat=s)
        end if
        call tally(trim(merge('THOMAS_2D NewType ', 'THOMAS_2D Original', newtype))//' di='//achar(48 + di), &
                   count(.not. same2(X1, X2)), size(X1), .true.)
    end subroutine

    subroutine report3(what, vec)
        character(*), intent(in) :: what
        logical, intent(in), optional :: vec
        logical :: vec_same
        vec_same = .true.
        if (present(vec)) vec_same = all(transfer(TH%VEC(1)%W, 1_8, size(TH%VEC(1)%W)) == &
                                         transfer(TH2%VEC(1)%W, 1_8, size(TH2%VEC(1)%W))) .and. &
                                     all(transfer(TH%VEC(1)%G, 1_8, size(TH%VEC(1)%G)) == &
                                         transfer(TH2%VEC(1)%G, 1_8, size(TH2%VEC(1)%G)))
        call tally(what, count(.not. same3(R1, R2)), size(R1), vec_same)
    end subroutine

    subroutine tally(what, ndiff, ncells, vec_same)
        character(*), intent(in) :: what
        integer, intent(in) :: ndiff, ncells
        logical, intent(in) :: vec_same
        character(len=12) :: verdict
        verdict = 'identical'
        if (s /= 0 .or. ndiff /= 0 .or. .not. vec_same) then
            verdict = 'DIFFERENT'
            bad = bad + 1
        end if
        write (*, '(a, i3, 1x, a12, a24, 1x, a10, i8, a, i8, a, l2, a, i0)') 'trial', trial, tag, what, verdict, ndiff, &
            ' of', ncells, ' cells differ; VEC same', vec_same, '; stat ', s
        if (s /= 0) write (*, '(a)') '  '//tridi_error_message()
    end subroutine

    elemental logical function same3(a, b)
        real, intent(in) :: a, b
#ifdef R8
        same3 = transfer(a, 0_8) == transfer(b, 0_8)
#else
        same3 = transfer(a, 0) == transfer(b, 0)
#endif
    end function

    elemental logical function same2(a, b)
        real, intent(in) :: a, b
        same2 = same3(a, b)
    end function

end program unit_check
