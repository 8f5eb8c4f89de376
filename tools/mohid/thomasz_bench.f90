! MohidJetDischarge's THOMASZ_NewType2 call (50 x 50 x 22 water columns, MOHID's arrays with their halo) in
! real(8), through tridi_mohid on the CPU backend and through MOHID's loop (restated here, as the tests
! restate it), same inputs: CPU microseconds per call (min, first quartile, median of 15 repetitions) and
! whether RES, VECG and VECW are identical bit for bit. Not a test: the timing tool of decision 054.
! build: gfortran -O2 -march=x86-64 $(pkg-config --cflags tridi_mohid) thomasz_bench.f90 \
!        $(pkg-config --libs tridi_mohid);  run: OMP_NUM_THREADS=1 ./a.out [CALLS] [SEED]
program thomasz_bench
    use tridi_mohid
    implicit none
    integer, parameter :: NI = 50, NJ = 50, NK = 22, REPS = 15
    real(8), pointer :: D(:, :, :), E(:, :, :), F(:, :, :), T(:, :, :), X(:, :, :), X2(:, :, :)
    real(8), pointer :: VG(:), VW(:), VG2(:), VW2(:)
    integer, pointer :: WP(:, :, :)
    integer :: it, nit, rep, st, seed
    integer, allocatable :: seeds(:)
    real(8) :: q0, q1, tr(REPS), tm(REPS)
    character(len=32) :: arg
    nit = 300
    seed = 0
    if (command_argument_count() > 0) then
        call get_command_argument(1, arg)
        read (arg, *) nit
    end if
    if (command_argument_count() > 1) then
        call get_command_argument(2, arg)
        read (arg, *) seed
    end if
    if (seed == 0) call system_clock(seed)
    call random_seed(size=it)
    allocate (seeds(it))
    seeds = seed
    call random_seed(put=seeds)
    allocate (D(0:NI + 1, 0:NJ + 1, 0:NK + 1), WP(0:NI + 1, 0:NJ + 1, 0:NK + 1), VG(0:NK + 1))
    allocate (E, F, T, X, X2, mold=D)
    allocate (VW, VG2, VW2, mold=VG)
    ! Diagonally dominant columns, as MOHID's implicit vertical diffusion makes them.
    call random_number(D)
    call random_number(E)
    call random_number(F)
    call random_number(T)
    D = -D
    F = -F
    E = E + 2.5d0
    X = 0
    X2 = 0
    VG = 0
    VW = 0
    VG2 = 0
    VW2 = 0
    WP = 0
    WP(1:NI, 1:NJ, :) = 1
    call tridi_mohid_init(backend=TRIDI_BACKEND_CPU, stat=st)
    if (st /= 0) error stop 'tridi_mohid_init failed'
    do rep = 1, REPS
        call cpu_time(q0)
        do it = 1, nit
            call tridi_thomasz(1, NI, 1, NJ, 1, NK, D, E, F, T, X, VG, VW, WaterPoints=WP, variant=TRIDI_MOHID_NEWTYPE)
        end do
        call cpu_time(q1)
        tr(rep) = 1d6*(q1 - q0)/nit
        call cpu_time(q0)
        do it = 1, max(1, nit/10)
            call mohid_z(X2, VG2, VW2)
        end do
        call cpu_time(q1)
        tm(rep) = 1d6*(q1 - q0)/max(1, nit/10)
    end do
    call sort(tr)
    call sort(tm)
    print '(a,i0)', 'seed ', seed
    print '(a,3f10.2)', 'tridi us/call min q1 median', tr(1), tr(4), tr(8)
    print '(a,3f10.2)', 'mohid us/call min q1 median', tm(1), tm(4), tm(8)
    print '(a,f6.2)', 'mohid/tridi (medians)', tm(8)/tr(8)
    if (all(X == X2) .and. all(VG == VG2) .and. all(VW == VW2)) then
        print '(a)', 'identical: RES, VECG, VECW bit for bit'
    else
        print '(a)', 'DIFFERENT from MOHID''s loop'
        error stop 1
    end if
contains
    ! MOHID's THOMASZ_NewType2 (ModuleFunctions), its operations in its order: W and G in real(8).
    subroutine mohid_z(RES, G, W)
        real(8), pointer :: RES(:, :, :), G(:), W(:)
        real(8) :: AUX
        integer :: i, j, k
        do j = 1, NJ
            do i = 1, NI
                if (WP(i, j, NK) == 1) then
                    W(1) = -F(i, j, 1)/E(i, j, 1)
                    G(1) = T(i, j, 1)/E(i, j, 1)
                    do k = 2, NK + 1
                        AUX = E(i, j, k) + D(i, j, k)*W(k - 1)
                        if (abs(AUX) > 0) then
                            W(k) = -F(i, j, k)/AUX
                            G(k) = (T(i, j, k) - D(i, j, k)*G(k - 1))/AUX
                        end if
                    end do
                    RES(i, j, NK + 1) = G(NK + 1)
                    do k = NK, 1, -1
                        RES(i, j, k) = W(k)*RES(i, j, k + 1) + G(k)
                    end do
                end if
            end do
        end do
    end subroutine

    subroutine sort(a)
        real(8), intent(inout) :: a(:)
        real(8) :: v
        integer :: i, j
        do i = 2, size(a)
            v = a(i)
            j = i - 1
            do while (j >= 1)
                if (a(j) <= v) exit
                a(j + 1) = a(j)
                j = j - 1
            end do
            a(j + 1) = v
        end do
    end subroutine
end program
