! Module tridi_mpi from Fortran: a 3D decomposition of MOHID-like arrays (lower bound 1, one halo cell),
! a halo exchange checked cell by cell against codes of the global indices, then distributed solves
! along i, j (cut by the ranks) and k of random diagonally dominant systems whose exact answer is known
! (rhs = A x_exact), in real(8) and in MOHID's mix. Axes in the Fortran convention (TRIDI_AXIS_I/J/K =
! 1/2/3), the box as integer(int64) for one solve and default integers for the other. The seed is drawn
! on rank 0, printed, and broadcast.
program test_mpi_fortran
    use mpi
    use tridi
    use tridi_mpi
    use, intrinsic :: iso_fortran_env, only: int64, real64
    implicit none
    integer, parameter :: ni = 21, nj = 17, nk = 3
    type(tridi_decomp) :: d
    type(tridi_decomp_config_t) :: cfg
    type(tridi_decomp_info_t) :: info
    type(tridi_halo) :: h
    type(tridi_context) :: ctx
    real(8), allocatable :: a8(:, :, :), dd(:, :, :), ee(:, :, :), ff(:, :, :), tt(:, :, :), xx(:, :, :), ex(:, :, :)
    real(4), allocatable :: d4(:, :, :), f4(:, :, :), t4(:, :, :), x4(:, :, :)
    integer :: ierr, rank, st, i, j, k, il, iu, jl, ju, axis, bad, total, seedsize
    integer, allocatable :: seed(:)
    integer(int64) :: lo(3), hi(3)
    real(8) :: want, err, scale

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call random_seed(size=seedsize)
    allocate (seed(seedsize))
    if (rank == 0) then
        call random_seed()
        call random_seed(get=seed)
        print '(a, *(i0, 1x))', 'test_mpi_fortran: seed ', seed
    end if
    call MPI_Bcast(seed, seedsize, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
    call random_seed(put=seed)
    bad = 0

    call tridi_decomp_config_init(cfg)
    cfg%ndim = 3
    cfg%lo = 1
    cfg%hi = [ni, nj, nk]
    cfg%halo = [1, 1, 0]
    cfg%dims = 0
    call tridi_decomp_create(d, MPI_COMM_WORLD, cfg)
    call tridi_decomp_get_info(d, info)
    il = int(info%grid%lbound(1)); iu = int(info%grid%ubound(1))
    jl = int(info%grid%lbound(2)); ju = int(info%grid%ubound(2))
    allocate (a8(il:iu, jl:ju, 1:nk))

    ! ---- halo exchange ----
    a8 = -1
    do k = 1, nk
        do j = int(info%lo(2)), int(info%hi(2))
            do i = int(info%lo(1)), int(info%hi(1))
                a8(i, j, k) = code(i, j, k)
            end do
        end do
    end do
    call tridi_halo_create(h, d, a8, corners=.true.)
    call tridi_halo_exchange(h)
    do k = 1, nk
        do j = jl, ju
            do i = il, iu
                want = code(i, j, k)
                if (i < 1 .or. i > ni .or. j < 1 .or. j > nj) want = -1 ! global edge: never written
                if (a8(i, j, k) /= want) then
                    if (bad < 5) print '(a, i0, a, 3(i0, 1x), a, f12.1, a, f12.1)', 'rank ', rank, ' cell ', i, j, &
                        k, ' holds ', a8(i, j, k), ' expected ', want
                    bad = bad + 1
                end if
            end do
        end do
    end do
    call tridi_halo_destroy(h)

    ! ---- distributed solves with a known answer ----
    call tridi_create(ctx)
    allocate (dd, ee, ff, tt, xx, ex, mold=a8)
    allocate (d4(il:iu, jl:ju, 1:nk), f4(il:iu, jl:ju, 1:nk), t4(il:iu, jl:ju, 1:nk), x4(il:iu, jl:ju, 1:nk))
    ! Random coefficients must agree on every rank: draw the global arrays, keep the local part.
    call global_random(dd, -1d0, 1d0)
    call global_random(ff, -1d0, 1d0)
    call global_random(ee, 2.5d0, 4d0)
    call global_random(ex, -1d0, 1d0)
    do axis = TRIDI_AXIS_I, TRIDI_AXIS_K
        lo = 1
        hi = [int(ni, int64), int(nj, int64), int(nk, int64)]
        call make_rhs(axis)
        xx = 7
        call tridi_mpi_solve(ctx, d, axis, lo, hi, dd, ee, ff, tt, xx, stat=st)
        call compare(axis, 'real(8)', st, xx, 1d-12)
        d4 = real(dd, 4); f4 = real(ff, 4); t4 = real(tt, 4); x4 = 7
        ! The mix: the exact answer of the real(4) coefficients is no longer ex; compare loosely.
        call tridi_mpi_solve(ctx, d, axis, int(lo), int(hi), d4, ee, f4, t4, x4, stat=st)
        call compare(axis, 'mixed', st, real(x4, 8), 2d-5)
    end do
    ! Refusals: axis 0 (C's i) on every rank, named in the Fortran convention; an answer array that is
    ! not this rank's grid on rank 0 only: rank 0 names it, and every other rank fails too instead of
    ! waiting for rank 0 in the solve.
    call tridi_mpi_solve(ctx, d, 0, lo, hi, dd, ee, ff, tt, xx, stat=st)
    if (st /= TRIDI_ERROR_INVALID_VALUE .or. index(tridi_error_message(), '1 = i, 2 = j, 3 = k') == 0) then
        print '(a, i0, a, i0, 2a)', 'rank ', rank, ': axis 0 gave ', st, ': ', tridi_error_message()
        bad = bad + 1
    end if
    if (rank == 0) then
        call tridi_mpi_solve(ctx, d, TRIDI_AXIS_J, lo, hi, dd, ee, ff, tt, xx(:, :, 1:nk - 1), stat=st)
        if (st /= TRIDI_ERROR_BOUNDS .or. index(tridi_error_message(), 'argument X has rank 3 and') == 0) then
            print '(a, i0, 2a)', 'rank 0: a short X gave ', st, ': ', tridi_error_message()
            bad = bad + 1
        end if
    else
        call tridi_mpi_solve(ctx, d, TRIDI_AXIS_J, lo, hi, dd, ee, ff, tt, xx, stat=st)
        if (st == TRIDI_SUCCESS) then
            print '(a, i0, a)', 'rank ', rank, ': succeeded although rank 0 was refused'
            bad = bad + 1
        end if
    end if
    call tridi_destroy(ctx)
    call tridi_decomp_destroy(d)
    ! Explicitly: the main program's allocatables are not freed at its end, and valgrind (which runs the
    ! MPI tests) would report them as lost.
    deallocate (seed, a8, dd, ee, ff, tt, xx, ex, d4, f4, t4, x4)

    call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) print '(a, i0, a)', 'test_mpi_fortran: ', total, ' failures'
    call MPI_Finalize(ierr)
    if (total /= 0) stop 1

contains

    real(8) function code(i, j, k)
        integer, intent(in) :: i, j, k
        code = i + 100 * j + 10000 * k
    end function

    subroutine global_random(a, lo_v, hi_v)
        real(8), intent(inout) :: a(il:, jl:, :)
        real(8), intent(in) :: lo_v, hi_v
        real(8) :: g(0:ni + 1, 0:nj + 1, nk)
        call random_number(g)
        g = lo_v + (hi_v - lo_v) * g
        a = g(il:iu, jl:ju, :)
    end subroutine

    ! rhs = A ex over the owned cells, with the first row's lower and last row's upper left out.
    subroutine make_rhs(ax)
        integer, intent(in) :: ax
        integer :: di, dj, dk, n, m
        real(8) :: v
        di = merge(1, 0, ax == TRIDI_AXIS_I)
        dj = merge(1, 0, ax == TRIDI_AXIS_J)
        dk = merge(1, 0, ax == TRIDI_AXIS_K)
        tt = 0
        do k = 1, nk
            do j = int(info%lo(2)), int(info%hi(2))
                do i = int(info%lo(1)), int(info%hi(1))
                    m = di * i + dj * j + dk * k
                    n = di * ni + dj * nj + dk * nk
                    v = ee(i, j, k) * ex(i, j, k)
                    if (m > 1) v = v + dd(i, j, k) * ex(i - di, j - dj, k - dk)
                    if (m < n) v = v + ff(i, j, k) * ex(i + di, j + dj, k + dk)
                    tt(i, j, k) = v
                end do
            end do
        end do
    end subroutine

    subroutine compare(ax, what, status, x, tol)
        integer, intent(in) :: ax, status
        character(*), intent(in) :: what
        real(8), intent(in) :: x(il:, jl:, :)
        real(8), intent(in) :: tol
        if (status /= TRIDI_SUCCESS) then
            print '(a, i0, 3a)', 'rank ', rank, ' ', what, ': '//tridi_error_message()
            bad = bad + 1
            return
        end if
        scale = maxval(abs(ex))
        do k = 1, nk
            do j = int(info%lo(2)), int(info%hi(2))
                do i = int(info%lo(1)), int(info%hi(1))
                    err = abs(x(i, j, k) - ex(i, j, k)) / scale
                    if (.not. (err <= tol)) then
                        if (bad < 5) print '(a, i0, 1x, a, a, i0, a, 3(i0, 1x), a, es10.3)', 'rank ', rank, what, &
                            ' axis ', ax, ' cell ', i, j, k, ' error ', err
                        bad = bad + 1
                    end if
                end do
            end do
        end do
        ! Halo cells are outside the box: still the 7 they held.
        if (any(x(il, jl:ju, :) /= 7 .and. info%coords(1) > 0)) bad = bad + 1
    end subroutine
end program
