! An outside MPI Fortran program on an installed tridi (modules tridi and tridi_mpi, Fortran-only project):
! a 12 x 3 x 2 grid cut over the ranks, lines along i with lower = upper = 1, diag = 4 and the exact answer
! x(i, j, k) = i + 100 j + 10000 k; every owned cell checked on every rank.
program consumer_mpi_f
    use mpi
    use tridi
    use tridi_mpi
    use, intrinsic :: iso_fortran_env, only: int64
    implicit none
    integer, parameter :: ni = 12, nj = 3, nk = 2
    type(tridi_decomp) :: d
    type(tridi_decomp_config_t) :: cfg
    type(tridi_decomp_info_t) :: info
    type(tridi_context) :: ctx
    real(8), allocatable :: dd(:, :, :), ee(:, :, :), ff(:, :, :), tt(:, :, :), xx(:, :, :)
    integer :: ierr, rank, st, i, j, k, il, iu, jl, ju, bad, total
    integer(int64) :: lo(3), hi(3)

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call tridi_decomp_config_init(cfg)
    cfg%ndim = 3
    cfg%lo = 1
    cfg%hi = [ni, nj, nk]
    cfg%halo = [1, 1, 0]
    call tridi_decomp_create(d, MPI_COMM_WORLD, cfg)
    call tridi_decomp_get_info(d, info)
    il = int(info%grid%lbound(1)); iu = int(info%grid%ubound(1))
    jl = int(info%grid%lbound(2)); ju = int(info%grid%ubound(2))
    allocate (dd(il:iu, jl:ju, nk), ee(il:iu, jl:ju, nk), ff(il:iu, jl:ju, nk), tt(il:iu, jl:ju, nk), &
              xx(il:iu, jl:ju, nk))
    dd = 1; ee = 4; ff = 1; tt = 0; xx = 0
    do k = 1, nk
        do j = int(info%lo(2)), int(info%hi(2))
            do i = int(info%lo(1)), int(info%hi(1))
                tt(i, j, k) = 4 * want(i, j, k)
                if (i > 1) tt(i, j, k) = tt(i, j, k) + want(i - 1, j, k)
                if (i < ni) tt(i, j, k) = tt(i, j, k) + want(i + 1, j, k)
            end do
        end do
    end do
    lo = 1
    hi = [int(ni, int64), int(nj, int64), int(nk, int64)]
    call tridi_create(ctx, backend=TRIDI_BACKEND_CPU)
    call tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, lo, hi, dd, ee, ff, tt, xx, stat=st)
    bad = merge(0, 1, st == TRIDI_SUCCESS)
    do k = 1, nk
        do j = int(info%lo(2)), int(info%hi(2))
            do i = int(info%lo(1)), int(info%hi(1))
                if (abs(xx(i, j, k) - want(i, j, k)) > 1d-12 * want(i, j, k)) bad = bad + 1
            end do
        end do
    end do
    call tridi_destroy(ctx)
    call tridi_decomp_destroy(d)
    deallocate (dd, ee, ff, tt, xx)
    call MPI_Allreduce(bad, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) print '(a, i0, a, i0, a)', 'consumer_mpi_f: ', info%nranks, ' ranks, ', total, ' wrong cells'
    call MPI_Finalize(ierr)
    if (total /= 0) error stop 1

contains

    real(8) function want(i, j, k)
        integer, intent(in) :: i, j, k
        want = i + 100 * j + 10000 * k
    end function

end program consumer_mpi_f
