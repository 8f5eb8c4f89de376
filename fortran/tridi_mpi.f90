! Module tridi_mpi: the Fortran interface of tridi's MPI layer (include/tridi_mpi.h, docs/mpi.md).
! Communicators are the integer handles of the mpi module (MPI_COMM_WORLD, ...), so this module needs no
! MPI module itself. As in module tridi, every wrapper takes an optional stat: present, it receives the
! status; absent, a failure prints the message and stops. All indices are global Fortran indices, default
! or 64-bit integers; axis follows module tridi's convention: 1 = i, 2 = j, 3 = k (TRIDI_AXIS_I/J/K).
! The C interfaces are in the private module tridi_c_bindings.
module tridi_mpi
    use, intrinsic :: iso_c_binding
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

    ! tridi_halo_create(halo, decomp, array [, corners, stat]): a host array, real(4) or real(8), rank 2
    ! or 3, allocated over the decomposition's local grid; or (halo, decomp, c_ptr, dtype, memory,
    ! corners, transport [, stat]) for device arrays.
    interface tridi_halo_create
        module procedure halo_create_r4_2d, halo_create_r4_3d, halo_create_r8_2d, halo_create_r8_3d, &
                         halo_create_ptr
    end interface
    ! tridi_mpi_solve(ctx, decomp, axis, lo, hi, D, E, F, Ti, X [, stat]): all real(8), or MOHID's mix
    ! (E real(8), the others real(4)); rank 3 arrays over the local grid; lo/hi the global box.
    interface tridi_mpi_solve
        module procedure mpi_solve_r8_3d, mpi_solve_mixed_3d, mpi_solve_raw
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

    subroutine halo_create_r4_2d(halo, decomp, array, corners, stat)
        type(tridi_halo), intent(out) :: halo
        type(tridi_decomp), intent(in) :: decomp
        real(c_float), intent(inout), target, contiguous :: array(:, :)
        logical, intent(in), optional :: corners
        integer, intent(out), optional :: stat
        call halo_create_ptr(halo, decomp, c_loc(array), TRIDI_FLOAT32, TRIDI_MEMORY_HOST, flag(corners), &
                             TRIDI_TRANSPORT_AUTO, stat)
    end subroutine
    subroutine halo_create_r4_3d(halo, decomp, array, corners, stat)
        type(tridi_halo), intent(out) :: halo
        type(tridi_decomp), intent(in) :: decomp
        real(c_float), intent(inout), target, contiguous :: array(:, :, :)
        logical, intent(in), optional :: corners
        integer, intent(out), optional :: stat
        call halo_create_ptr(halo, decomp, c_loc(array), TRIDI_FLOAT32, TRIDI_MEMORY_HOST, flag(corners), &
                             TRIDI_TRANSPORT_AUTO, stat)
    end subroutine
    subroutine halo_create_r8_2d(halo, decomp, array, corners, stat)
        type(tridi_halo), intent(out) :: halo
        type(tridi_decomp), intent(in) :: decomp
        real(c_double), intent(inout), target, contiguous :: array(:, :)
        logical, intent(in), optional :: corners
        integer, intent(out), optional :: stat
        call halo_create_ptr(halo, decomp, c_loc(array), TRIDI_FLOAT64, TRIDI_MEMORY_HOST, flag(corners), &
                             TRIDI_TRANSPORT_AUTO, stat)
    end subroutine
    subroutine halo_create_r8_3d(halo, decomp, array, corners, stat)
        type(tridi_halo), intent(out) :: halo
        type(tridi_decomp), intent(in) :: decomp
        real(c_double), intent(inout), target, contiguous :: array(:, :, :)
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

    ! Fortran axis and lo/hi -> C axis and box, checked against the decomposition's rank (when the
    ! decomposition can tell it; a bad handle is left to C to report).
    subroutine mpi_problem(func, decomp, axis, lo, hi, caxis, clo, chi, ok, stat)
        character(*), intent(in) :: func
        type(tridi_decomp), intent(in) :: decomp
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        integer(c_int), intent(out) :: caxis
        integer(c_int64_t), intent(out) :: clo(3), chi(3)
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        type(tridi_decomp_info_t) :: info
        integer :: ndim
        ndim = 3
        if (c_associated(decomp%handle)) then
            if (tridi_decomp_get_info_c(decomp%handle, info) == TRIDI_SUCCESS) ndim = int(info%grid%ndim)
        end if
        call c_axis(func, axis, ndim, 'the decomposition''s '//itoa(ndim)//'D grid', caxis, ok, stat)
        if (ok) call index_vector(func, 'lo', lo, ndim, clo, ok, stat)
        if (ok) call index_vector(func, 'hi', hi, ndim, chi, ok, stat)
    end subroutine

    subroutine mpi_solve_raw(ctx, decomp, axis, lo, hi, arrays, stat)
        type(tridi_context), intent(in) :: ctx
        type(tridi_decomp), intent(in) :: decomp
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        type(tridi_arrays_t), intent(in) :: arrays
        integer, intent(out), optional :: stat
        integer(c_int) :: caxis
        integer(c_int64_t) :: clo(3), chi(3)
        logical :: ok
        call mpi_problem('tridi_mpi_solve', decomp, axis, lo, hi, caxis, clo, chi, ok, stat)
        if (ok) call finish(tridi_mpi_solve_c(ctx%handle, decomp%handle, caxis, clo, chi, arrays), stat)
    end subroutine

    subroutine mpi_solve_r8_3d(ctx, decomp, axis, lo, hi, d, e, f, ti, x, stat)
        type(tridi_context), intent(in) :: ctx
        type(tridi_decomp), intent(in) :: decomp
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        real(c_double), intent(in), target, contiguous :: d(:, :, :), e(:, :, :), f(:, :, :), ti(:, :, :)
        real(c_double), intent(inout), target, contiguous :: x(:, :, :)
        integer, intent(out), optional :: stat
        type(tridi_arrays_t) :: a
        a = tridi_arrays_t(c_loc(d), TRIDI_FLOAT64, c_loc(e), TRIDI_FLOAT64, c_loc(f), TRIDI_FLOAT64, &
                           c_loc(ti), TRIDI_FLOAT64, c_loc(x), TRIDI_FLOAT64)
        call mpi_solve_raw(ctx, decomp, axis, lo, hi, a, stat)
    end subroutine

    subroutine mpi_solve_mixed_3d(ctx, decomp, axis, lo, hi, d, e, f, ti, x, stat)
        type(tridi_context), intent(in) :: ctx
        type(tridi_decomp), intent(in) :: decomp
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        real(c_float), intent(in), target, contiguous :: d(:, :, :), f(:, :, :), ti(:, :, :)
        real(c_double), intent(in), target, contiguous :: e(:, :, :)
        real(c_float), intent(inout), target, contiguous :: x(:, :, :)
        integer, intent(out), optional :: stat
        type(tridi_arrays_t) :: a
        a = tridi_arrays_t(c_loc(d), TRIDI_FLOAT32, c_loc(e), TRIDI_FLOAT64, c_loc(f), TRIDI_FLOAT32, &
                           c_loc(ti), TRIDI_FLOAT32, c_loc(x), TRIDI_FLOAT32)
        call mpi_solve_raw(ctx, decomp, axis, lo, hi, a, stat)
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
        integer(c_int) :: caxis
        integer(c_int64_t) :: clo(3), chi(3)
        logical :: ok
        st = c_null_ptr
        if (present(stream)) st = stream
        call mpi_problem('tridi_mpi_solve_device', decomp, axis, lo, hi, caxis, clo, chi, ok, stat)
        if (ok) call finish(tridi_mpi_solve_device_c(ctx%handle, decomp%handle, caxis, clo, chi, arrays, st), stat)
    end subroutine
end module tridi_mpi
