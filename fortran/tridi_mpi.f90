! Module tridi_mpi: the Fortran interface of tridi's MPI layer (include/tridi_mpi.h, docs/mpi.md).
! Communicators are the integer handles of the mpi module (MPI_COMM_WORLD, ...), so this module needs no
! MPI module itself. As in module tridi, every wrapper takes an optional stat: present, it receives the
! status; absent, a failure prints the message and stops. All indices are global Fortran indices, default
! or 64-bit integers; axis follows module tridi's convention: 1 = i, 2 = j, 3 = k (TRIDI_AXIS_I/J/K).
! The C interfaces are in the private module tridi_c_bindings.
module tridi_mpi
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: int64
    use tridi_c_bindings
    use tridi, only: tridi_context
    implicit none
    private

    public :: TRIDI_TRANSPORT_AUTO, TRIDI_TRANSPORT_IPC, TRIDI_TRANSPORT_CUDA_AWARE, TRIDI_TRANSPORT_STAGED, &
              TRIDI_TRANSPORT_NCCL, TRIDI_MEMORY_HOST, TRIDI_MEMORY_DEVICE
    ! Same layout as tridi_decomp_config / tridi_decomp_info of tridi_mpi.h (defined in tridi_c_bindings).
    public :: tridi_decomp_config_t, tridi_decomp_info_t

    type, public :: tridi_decomp
        type(c_ptr) :: handle = c_null_ptr
    end type
    type, public :: tridi_halo
        type(c_ptr) :: handle = c_null_ptr
    end type

    ! tridi_halo_create(halo, decomp, array [, corners, stat]): a contiguous host array, real(4) or
    ! real(8), allocated over the decomposition's local grid (C checks nothing of its shape: the rank and
    ! bounds must be the decomposition's); or (halo, decomp, c_ptr, dtype, memory,
    ! corners, transport [, stat]) for device arrays.
    interface tridi_halo_create
        module procedure halo_create_r4, halo_create_r8, halo_create_ptr
    end interface
    ! tridi_mpi_solve(ctx, decomp, axis, lo, hi, D, E, F, Ti, X [, stat]): all real(8), or MOHID's mix
    ! (E real(8), the others real(4)); contiguous arrays over the local grid, of the decomposition's rank;
    ! lo/hi the global box. Or (ctx, decomp, axis, lo, hi, arrays [, stat]) with a tridi_arrays_t.
    interface tridi_mpi_solve
        module procedure mpi_solve_r8, mpi_solve_mixed, mpi_solve_raw
    end interface
    public :: tridi_decomp_config_init, tridi_decomp_create, tridi_decomp_destroy, tridi_decomp_get_info, &
              tridi_halo_create, tridi_halo_destroy, tridi_halo_get_transport, tridi_halo_begin, tridi_halo_end, &
              tridi_halo_exchange, tridi_mpi_solve, tridi_mpi_solve_device

contains

    subroutine tridi_decomp_config_init(config)
        type(tridi_decomp_config_t), intent(out) :: config
        call tridi_decomp_config_init_c(config)
    end subroutine

    ! comm: an MPI communicator of the mpi module (its integer handle). Collective.
    subroutine tridi_decomp_create(decomp, comm, config, stat)
        type(tridi_decomp), intent(out) :: decomp
        integer, intent(in) :: comm
        type(tridi_decomp_config_t), intent(in) :: config
        integer, intent(out), optional :: stat
        call finish(tridi_decomp_create_c(decomp%handle, int(comm, c_int), config), stat)
    end subroutine

    subroutine tridi_decomp_destroy(decomp, stat)
        type(tridi_decomp), intent(inout) :: decomp
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = tridi_decomp_destroy_c(decomp%handle)
        if (s == TRIDI_SUCCESS) decomp%handle = c_null_ptr
        call finish(s, stat)
    end subroutine

    subroutine tridi_decomp_get_info(decomp, info, stat)
        type(tridi_decomp), intent(in) :: decomp
        type(tridi_decomp_info_t), intent(out) :: info
        integer, intent(out), optional :: stat
        call finish(tridi_decomp_get_info_c(decomp%handle, info), stat)
    end subroutine

    subroutine halo_create_ptr(halo, decomp, array, dtype, memory, corners, transport, stat)
        type(tridi_halo), intent(out) :: halo
        type(tridi_decomp), intent(in) :: decomp
        type(c_ptr), intent(in) :: array
        integer, intent(in) :: dtype, memory, corners, transport
        integer, intent(out), optional :: stat
        call finish(tridi_halo_create_c(halo%handle, decomp%handle, array, int(dtype, c_int), int(memory, c_int), &
                                int(corners, c_int), int(transport, c_int)), stat)
    end subroutine

    subroutine halo_create_r4(halo, decomp, array, corners, stat)
        type(tridi_halo), intent(out) :: halo
        type(tridi_decomp), intent(in) :: decomp
        real(c_float), intent(inout), target, contiguous :: array(..)
        logical, intent(in), optional :: corners
        integer, intent(out), optional :: stat
        call halo_create_ptr(halo, decomp, c_loc(array), TRIDI_FLOAT32, TRIDI_MEMORY_HOST, flag(corners), &
                             TRIDI_TRANSPORT_AUTO, stat)
    end subroutine

    subroutine halo_create_r8(halo, decomp, array, corners, stat)
        type(tridi_halo), intent(out) :: halo
        type(tridi_decomp), intent(in) :: decomp
        real(c_double), intent(inout), target, contiguous :: array(..)
        logical, intent(in), optional :: corners
        integer, intent(out), optional :: stat
        call halo_create_ptr(halo, decomp, c_loc(array), TRIDI_FLOAT64, TRIDI_MEMORY_HOST, flag(corners), &
                             TRIDI_TRANSPORT_AUTO, stat)
    end subroutine

    integer function flag(l)
        logical, intent(in), optional :: l
        flag = 0
        if (present(l)) then
            if (l) flag = 1
        end if
    end function

    subroutine tridi_halo_destroy(halo, stat)
        type(tridi_halo), intent(inout) :: halo
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = tridi_halo_destroy_c(halo%handle)
        if (s == TRIDI_SUCCESS) halo%handle = c_null_ptr
        call finish(s, stat)
    end subroutine

    subroutine tridi_halo_get_transport(halo, transport, stat)
        type(tridi_halo), intent(in) :: halo
        integer, intent(out) :: transport
        integer, intent(out), optional :: stat
        integer(c_int) :: t
        t = TRIDI_TRANSPORT_AUTO
        call finish(tridi_halo_get_transport_c(halo%handle, t), stat)
        transport = int(t)
    end subroutine

    ! stream: a cudaStream_t as c_ptr (device arrays); omitted: the default stream.
    subroutine tridi_halo_begin(halo, stream, stat)
        type(tridi_halo), intent(in) :: halo
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        type(c_ptr) :: st
        st = c_null_ptr
        if (present(stream)) st = stream
        call finish(tridi_halo_begin_c(halo%handle, st), stat)
    end subroutine

    subroutine tridi_halo_end(halo, stat)
        type(tridi_halo), intent(in) :: halo
        integer, intent(out), optional :: stat
        call finish(tridi_halo_end_c(halo%handle), stat)
    end subroutine

    subroutine tridi_halo_exchange(halo, stream, stat)
        type(tridi_halo), intent(in) :: halo
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        integer :: s
        call tridi_halo_begin(halo, stream, s)
        if (s == TRIDI_SUCCESS) then
            call tridi_halo_end(halo, stat)
        else
            call tridi_finish(s, stat)
        end if
    end subroutine

    ! The distributed solves are collective: a refusal by the Fortran layer on one rank must not leave the
    ! others waiting. The checks below are made locally (axis, lo/hi, the arrays against the local grid),
    ! and a rank that fails them still calls C with axis -1, which C refuses in its agreement on every
    ! rank; that rank then reports its own finding. The decomposition's rank comes from
    ! tridi_decomp_get_info (local); a bad handle is left to C to report.
    subroutine mpi_solve_common(func, ctx, decomp, axis, lo, hi, arrays, ranks, cells, device, stream, stat)
        character(*), intent(in) :: func
        type(tridi_context), intent(in) :: ctx
        type(tridi_decomp), intent(in) :: decomp
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        type(tridi_arrays_t), intent(in) :: arrays
        integer, intent(in) :: ranks(:)
        integer(int64), intent(in) :: cells(:)
        logical, intent(in) :: device
        type(c_ptr), intent(in) :: stream
        integer, intent(out), optional :: stat
        character(len=5), parameter :: names(5) = ['D    ', 'E    ', 'F    ', 'Ti   ', 'X    ']
        type(tridi_decomp_info_t) :: info
        integer(c_int) :: caxis, s
        integer(c_int64_t) :: clo(3), chi(3)
        integer(int64) :: grid_cells
        integer :: ndim, local, i
        logical :: ok, known
        character(len=:), allocatable :: local_message
        ndim = 3
        known = .false.
        if (c_associated(decomp%handle)) then
            known = tridi_decomp_get_info_c(decomp%handle, info) == TRIDI_SUCCESS
            if (known) ndim = int(info%grid%ndim)
        end if
        call c_axis(func, axis, ndim, 'the decomposition''s #D grid', caxis, ok, local)
        if (ok) call index_vector(func, 'lo', lo, ndim, clo, ok, local)
        if (ok) call index_vector(func, 'hi', hi, ndim, chi, ok, local)
        if (ok .and. known) then
            grid_cells = product(info%grid%ubound(1:ndim) - info%grid%lbound(1:ndim) + 1)
            do i = 1, size(ranks)
                if (ranks(i) /= ndim .or. cells(i) /= grid_cells) then
                    call tridi_set_error(TRIDI_ERROR_BOUNDS, func//': argument '//trim(names(i))//' has rank '// &
                                         itoa(ranks(i))//' and '//itoa(cells(i))//' elements; the arrays must be '// &
                                         'allocated over this rank''s grid, rank '//itoa(ndim)//' with '// &
                                         itoa(grid_cells)//' cells (tridi_decomp_get_info)', local)
                    ok = .false.
                    exit
                end if
            end do
        end if
        ! local: the status of a local refusal (set only when ok is .false.)
        if (.not. ok) then
            local_message = tridi_error_message()
            caxis = -1
        end if
        if (device) then
            s = tridi_mpi_solve_device_c(ctx%handle, decomp%handle, caxis, clo, chi, arrays, stream)
        else
            s = tridi_mpi_solve_c(ctx%handle, decomp%handle, caxis, clo, chi, arrays)
        end if
        if (.not. ok) then
            call tridi_set_error(local, local_message, stat)
        else
            call finish(s, stat)
        end if
    end subroutine

    subroutine mpi_solve_raw(ctx, decomp, axis, lo, hi, arrays, stat)
        type(tridi_context), intent(in) :: ctx
        type(tridi_decomp), intent(in) :: decomp
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        type(tridi_arrays_t), intent(in) :: arrays
        integer, intent(out), optional :: stat
        call mpi_solve_common('tridi_mpi_solve', ctx, decomp, axis, lo, hi, arrays, [integer ::], [integer(int64) ::], &
                              .false., c_null_ptr, stat)
    end subroutine

    subroutine mpi_solve_r8(ctx, decomp, axis, lo, hi, d, e, f, ti, x, stat)
        type(tridi_context), intent(in) :: ctx
        type(tridi_decomp), intent(in) :: decomp
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        real(c_double), intent(in), target, contiguous :: d(..), e(..), f(..), ti(..)
        real(c_double), intent(inout), target, contiguous :: x(..)
        integer, intent(out), optional :: stat
        type(tridi_arrays_t) :: a
        a = tridi_arrays_t(c_loc(d), TRIDI_FLOAT64, c_loc(e), TRIDI_FLOAT64, c_loc(f), TRIDI_FLOAT64, &
                           c_loc(ti), TRIDI_FLOAT64, c_loc(x), TRIDI_FLOAT64)
        call mpi_solve_common('tridi_mpi_solve', ctx, decomp, axis, lo, hi, a, &
                              [rank(d), rank(e), rank(f), rank(ti), rank(x)], &
                              [size(d, kind=int64), size(e, kind=int64), size(f, kind=int64), size(ti, kind=int64), &
                               size(x, kind=int64)], .false., c_null_ptr, stat)
    end subroutine

    subroutine mpi_solve_mixed(ctx, decomp, axis, lo, hi, d, e, f, ti, x, stat)
        type(tridi_context), intent(in) :: ctx
        type(tridi_decomp), intent(in) :: decomp
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        real(c_float), intent(in), target, contiguous :: d(..), f(..), ti(..)
        real(c_double), intent(in), target, contiguous :: e(..)
        real(c_float), intent(inout), target, contiguous :: x(..)
        integer, intent(out), optional :: stat
        type(tridi_arrays_t) :: a
        a = tridi_arrays_t(c_loc(d), TRIDI_FLOAT32, c_loc(e), TRIDI_FLOAT64, c_loc(f), TRIDI_FLOAT32, &
                           c_loc(ti), TRIDI_FLOAT32, c_loc(x), TRIDI_FLOAT32)
        call mpi_solve_common('tridi_mpi_solve', ctx, decomp, axis, lo, hi, a, &
                              [rank(d), rank(e), rank(f), rank(ti), rank(x)], &
                              [size(d, kind=int64), size(e, kind=int64), size(f, kind=int64), size(ti, kind=int64), &
                               size(x, kind=int64)], .false., c_null_ptr, stat)
    end subroutine

    ! Device arrays (c_ptr in arrays), stream a cudaStream_t as c_ptr or omitted.
    subroutine tridi_mpi_solve_device(ctx, decomp, axis, lo, hi, arrays, stream, stat)
        type(tridi_context), intent(in) :: ctx
        type(tridi_decomp), intent(in) :: decomp
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        type(tridi_arrays_t), intent(in) :: arrays
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        type(c_ptr) :: st
        st = c_null_ptr
        if (present(stream)) st = stream
        call mpi_solve_common('tridi_mpi_solve_device', ctx, decomp, axis, lo, hi, arrays, [integer ::], &
                              [integer(int64) ::], .true., st, stat)
    end subroutine
end module tridi_mpi
