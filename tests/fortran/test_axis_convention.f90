! One Fortran axis convention in every module: the same random real(8) problem, on arrays with one halo
! cell on each side, solved along each axis through module tridi (tridi_solve), module tridi_mpi
! (tridi_mpi_solve on one rank) and module tridi_adi (tridi_adi_sweep). axis = 1, 2, 3 must mean i, j, k
! in all three: each answer is compared with a real(8) Thomas along that Fortran dimension (so a module
! that read axis = 2 as k fails here); tridi_solve's and tridi_mpi_solve's answers must be bitwise
! identical, the sweep's (FAST arithmetic) those of a FAST plan of module tridi, and cells outside the box
! keep their poison. lo/hi go in as default integers to one module and as integer(int64) to the others.
! Axes 0 and 4 are refused by every module with a message that names the convention. Run under mpiexec
! with one rank.
program test_axis_convention
    use mpi
    use, intrinsic :: iso_fortran_env, only: int64
    use tridi
    use tridi_adi
    use tridi_mpi
    use test_support
    implicit none
    integer, parameter :: ni = 7, nj = 5, nk = 4
    integer, parameter :: lo(3) = [1, 1, 1], hi(3) = [ni, nj, nk]
    integer(int64), parameter :: lo64(3) = lo, hi64(3) = hi
    character(len=*), parameter :: convention = '1 = i, 2 = j, 3 = k'
    real(8), allocatable, target :: D(:, :, :), E(:, :, :), F(:, :, :), T(:, :, :), ref(:, :, :), &
                                    x_tridi(:, :, :), x_mpi(:, :, :), x_adi(:, :, :), x_fast(:, :, :)
    logical :: inbox(0:ni + 1, 0:nj + 1, 0:nk + 1)
    type(tridi_context) :: ctx
    type(tridi_decomp) :: decomp
    type(tridi_decomp_config_t) :: cfg
    type(tridi_decomp_info_t) :: info
    type(tridi_adi_operator_t) :: op
    type(tridi_adi_plan) :: plan
    type(tridi_plan) :: fast_plan
    integer :: ierr, axis, s, bad_axis
    character(len=:), allocatable :: label

    call MPI_Init(ierr)
    call init_seed('test_axis_convention')
    call open_context(ctx)
    call check(TRIDI_AXIS_I == 1 .and. TRIDI_AXIS_J == 2 .and. TRIDI_AXIS_K == 3, 'TRIDI_AXIS_I/J/K are 1/2/3')
    call check(TRIDI_AXIS_X == 1 .and. TRIDI_AXIS_Y == 2 .and. TRIDI_AXIS_Z == 3, 'TRIDI_AXIS_X/Y/Z are 1/2/3')

    ! One rank owning 1..n on every axis with one halo cell each side: arrays (0:ni+1, 0:nj+1, 0:nk+1).
    call tridi_decomp_config_init(cfg)
    cfg%ndim = 3
    cfg%lo = 1
    cfg%hi = [ni, nj, nk]
    cfg%halo = 1
    call tridi_decomp_create(decomp, MPI_COMM_WORLD, cfg)
    call tridi_decomp_get_info(decomp, info)
    call check(all(info%grid%lbound == 0) .and. all(info%grid%ubound == [ni + 1, nj + 1, nk + 1]), &
               'the decomposition''s local grid is (0:ni+1, 0:nj+1, 0:nk+1)')

    call random_system_3d([0, 0, 0], [ni + 1, nj + 1, nk + 1], D, E, F, T)
    allocate (ref, x_tridi, x_mpi, x_adi, x_fast, mold=D)
    inbox = .false.
    inbox(1:ni, 1:nj, 1:nk) = .true.
    call tridi_adi_operator_init(op)
    call tridi_adi_create(plan, ctx, lbound(D, kind=int64), ubound(D, kind=int64), lo64, hi64, TRIDI_FLOAT64, op)

    do axis = TRIDI_AXIS_I, TRIDI_AXIS_K
        label = 'axis '//achar(iachar('0') + axis)
        call reference(axis)
        x_tridi = poison8()
        x_mpi = poison8()
        x_adi = poison8()
        call tridi_solve(ctx, axis, lo, hi, D, E, F, T, x_tridi, stat=s)
        call check(s == TRIDI_SUCCESS, label//' tridi_solve: '//tridi_error_message())
        call tridi_mpi_solve(ctx, decomp, axis, lo64, hi64, D, E, F, T, x_mpi, stat=s)
        call check(s == TRIDI_SUCCESS, label//' tridi_mpi_solve: '//tridi_error_message())
        call tridi_adi_sweep(plan, axis, D, E, F, T, x_adi, stat=s)
        call check(s == TRIDI_SUCCESS, label//' tridi_adi_sweep: '//tridi_error_message())
        call against_reference(label//' tridi_solve', x_tridi)
        call against_reference(label//' tridi_mpi_solve', x_mpi)
        call against_reference(label//' tridi_adi_sweep', x_adi)
        call check(all(same_bits8(x_mpi, x_tridi)), label//': tridi_mpi_solve differs from tridi_solve')
        ! A sweep solves in FAST arithmetic (all or nothing), tridi_solve in MOHID's: the sweep's bits are
        ! those of a FAST plan of module tridi on the same axis.
        x_fast = poison8()
        call tridi_plan_create(fast_plan, ctx, axis, lo, hi, D, E, F, T, x_fast, on_error=TRIDI_ON_ERROR_CALL, &
                               arith=TRIDI_ARITH_FAST, stat=s)
        call check(s == TRIDI_SUCCESS, label//' tridi_plan_create (FAST): '//tridi_error_message())
        call tridi_plan_solve(fast_plan, D, E, F, T, x_fast, stat=s)
        call check(s == TRIDI_SUCCESS, label//' tridi_plan_solve (FAST): '//tridi_error_message())
        call tridi_plan_destroy(fast_plan)
        call check(all(same_bits8(x_adi, x_fast)), label//': tridi_adi_sweep differs from a FAST plan of module tridi')
    end do

    ! Numbers outside 1..3 (0 is C's i) are refused by every module, naming the Fortran convention.
    do bad_axis = 0, 4, 4
        label = 'axis '//achar(iachar('0') + bad_axis)
        x_tridi = poison8()
        call tridi_solve(ctx, bad_axis, lo64, hi64, D, E, F, T, x_tridi, stat=s)
        call refused(label//' tridi_solve', s, 'tridi_solve')
        call tridi_mpi_solve(ctx, decomp, bad_axis, lo, hi, D, E, F, T, x_tridi, stat=s)
        call refused(label//' tridi_mpi_solve', s, 'tridi_mpi_solve')
        call tridi_adi_sweep(plan, bad_axis, D, E, F, T, x_tridi, stat=s)
        call refused(label//' tridi_adi_sweep', s, 'tridi_adi_sweep')
        call check(all(same_bits8(x_tridi, poison8())), label//': a refused call wrote its answer array')
    end do

    call tridi_adi_destroy(plan)
    call tridi_decomp_destroy(decomp)
    call tridi_destroy(ctx)
    deallocate (D, E, F, T, ref, x_tridi, x_mpi, x_adi)
    call MPI_Finalize(ierr)
    call finish_test('test_axis_convention')

contains

    ! ref: a real(8) Thomas along Fortran dimension ax over the box; poison elsewhere.
    subroutine reference(ax)
        integer, intent(in) :: ax
        integer :: i, j, k
        ref = poison8()
        select case (ax)
        case (1)
            do k = 1, nk
                do j = 1, nj
                    ref(1:ni, j, k) = thomas_line(D(1:ni, j, k), E(1:ni, j, k), F(1:ni, j, k), T(1:ni, j, k))
                end do
            end do
        case (2)
            do k = 1, nk
                do i = 1, ni
                    ref(i, 1:nj, k) = thomas_line(D(i, 1:nj, k), E(i, 1:nj, k), F(i, 1:nj, k), T(i, 1:nj, k))
                end do
            end do
        case (3)
            do j = 1, nj
                do i = 1, ni
                    ref(i, j, 1:nk) = thomas_line(D(i, j, 1:nk), E(i, j, 1:nk), F(i, j, 1:nk), T(i, j, 1:nk))
                end do
            end do
        end select
    end subroutine

    subroutine against_reference(what, x)
        character(*), intent(in) :: what
        real(8), intent(in) :: x(0:, 0:, 0:)
        call check(all(same_bits8(x, poison8()) .eqv. .not. inbox), &
                   what//': cells outside the box written or box cells unwritten')
        call check(rel_err(pack(x, inbox), pack(ref, inbox)) <= 1d-12, &
                   what//': answer is not the solve along that Fortran dimension')
    end subroutine

    subroutine refused(what, status, func)
        character(*), intent(in) :: what, func
        integer, intent(in) :: status
        character(len=:), allocatable :: msg
        msg = tridi_error_message()
        call check(status == TRIDI_ERROR_INVALID_VALUE .and. index(msg, func//': axis = ') == 1 .and. &
                   index(msg, convention) > 0, what//' not refused with the convention: '//msg)
    end subroutine

end program test_axis_convention
