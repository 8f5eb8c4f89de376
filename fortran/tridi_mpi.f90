! Module tridi_mpi: the Fortran interface of tridi's MPI layer (include/tridi_mpi.h, docs/mpi.md).
! Communicators are the integer handles of the mpi module (MPI_COMM_WORLD, ...), so this module needs no
! MPI module itself. As in module tridi, every wrapper takes an optional stat: present, it receives the
! status; absent, a failure prints the message and stops. All indices are global Fortran indices.
module tridi_mpi
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: int64
    use tridi, only: tridi_context, tridi_arrays_t, tridi_grid_t, tridi_set_error, tridi_finish, &
                     tridi_error_message_c, TRIDI_SUCCESS, TRIDI_FLOAT32, TRIDI_FLOAT64
    implicit none
    private

    enum, bind(c)
        enumerator :: TRIDI_TRANSPORT_AUTO = 0, TRIDI_TRANSPORT_IPC = 1, TRIDI_TRANSPORT_CUDA_AWARE = 2, &
                      TRIDI_TRANSPORT_STAGED = 3, TRIDI_TRANSPORT_NCCL = 4
    end enum
    enum, bind(c)
        enumerator :: TRIDI_MEMORY_HOST = 0, TRIDI_MEMORY_DEVICE = 1
    end enum
    public :: TRIDI_TRANSPORT_AUTO, TRIDI_TRANSPORT_IPC, TRIDI_TRANSPORT_CUDA_AWARE, TRIDI_TRANSPORT_STAGED, &
              TRIDI_TRANSPORT_NCCL, TRIDI_MEMORY_HOST, TRIDI_MEMORY_DEVICE

    ! Same layout as tridi_decomp_config / tridi_decomp_info of tridi_mpi.h.
    type, bind(c), public :: tridi_decomp_config_t
        integer(c_size_t) :: size
        integer(c_int) :: ndim
        integer(c_int64_t) :: lo(3), hi(3)
        integer(c_int) :: halo(3), dims(2), periodic(2), solve_transport
    end type
    type, bind(c), public :: tridi_decomp_info_t
        integer(c_int) :: rank, nranks, dims(2), coords(2)
        integer(c_int64_t) :: lo(3), hi(3)
        type(tridi_grid_t) :: grid
        integer(c_int) :: neighbour(2, 2)  ! neighbour(side, axis): side 1 below, 2 above; -1 at an edge
        integer(c_int) :: comm
    end type

    type, public :: tridi_decomp
        type(c_ptr) :: handle = c_null_ptr
    end type
    type, public :: tridi_halo
        type(c_ptr) :: handle = c_null_ptr
    end type

    interface
        subroutine decomp_config_init_c(config) bind(c, name='tridi_decomp_config_init')
            import :: tridi_decomp_config_t
            type(tridi_decomp_config_t), intent(out) :: config
        end subroutine
        function decomp_create_c(decomp, comm, config) bind(c, name='tridi_decomp_create') result(s)
            import :: c_int, c_ptr, tridi_decomp_config_t
            type(c_ptr), intent(out) :: decomp
            integer(c_int), value :: comm
            type(tridi_decomp_config_t), intent(in) :: config
            integer(c_int) :: s
        end function
        function decomp_destroy_c(decomp) bind(c, name='tridi_decomp_destroy') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: decomp
            integer(c_int) :: s
        end function
        function decomp_get_info_c(decomp, info) bind(c, name='tridi_decomp_get_info') result(s)
            import :: c_int, c_ptr, tridi_decomp_info_t
            type(c_ptr), value :: decomp
            type(tridi_decomp_info_t), intent(out) :: info
            integer(c_int) :: s
        end function
        function halo_create_c(halo, decomp, array, dtype, memory, corners, transport) &
                bind(c, name='tridi_halo_create') result(s)
            import :: c_int, c_ptr
            type(c_ptr), intent(out) :: halo
            type(c_ptr), value :: decomp, array
            integer(c_int), value :: dtype, memory, corners, transport
            integer(c_int) :: s
        end function
        function halo_destroy_c(halo) bind(c, name='tridi_halo_destroy') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: halo
            integer(c_int) :: s
        end function
        function halo_get_transport_c(halo, transport) bind(c, name='tridi_halo_get_transport') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: halo
            integer(c_int), intent(out) :: transport
            integer(c_int) :: s
        end function
        function halo_begin_c(halo, stream) bind(c, name='tridi_halo_begin') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: halo, stream
            integer(c_int) :: s
        end function
        function halo_end_c(halo) bind(c, name='tridi_halo_end') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: halo
            integer(c_int) :: s
        end function
        function mpi_solve_c(ctx, decomp, axis, lo, hi, arrays) bind(c, name='tridi_mpi_solve') result(s)
            import :: c_int, c_ptr, c_int64_t, tridi_arrays_t
            type(c_ptr), value :: ctx, decomp
            integer(c_int), value :: axis
            integer(c_int64_t), intent(in) :: lo(3), hi(3)
            type(tridi_arrays_t), intent(in) :: arrays
            integer(c_int) :: s
        end function
        function mpi_solve_device_c(ctx, decomp, axis, lo, hi, arrays, stream) &
                bind(c, name='tridi_mpi_solve_device') result(s)
            import :: c_int, c_ptr, c_int64_t, tridi_arrays_t
            type(c_ptr), value :: ctx, decomp, stream
            integer(c_int), value :: axis
            integer(c_int64_t), intent(in) :: lo(3), hi(3)
            type(tridi_arrays_t), intent(in) :: arrays
            integer(c_int) :: s
        end function
        function c_strlen(p) bind(c, name='strlen') result(n)
            import :: c_ptr, c_size_t
            type(c_ptr), value :: p
            integer(c_size_t) :: n
        end function
    end interface

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

    ! A failed C call: its message becomes the module tridi's current one, then stat or stop.
    subroutine done(status, stat)
        integer(c_int), intent(in) :: status
        integer, intent(out), optional :: stat
        type(c_ptr) :: p
        character(kind=c_char), pointer :: chars(:)
        character(len=:), allocatable :: msg
        integer :: n, i
        if (status == TRIDI_SUCCESS) then
            call tridi_finish(int(status), stat)
            return
        end if
        p = tridi_error_message_c()
        n = int(c_strlen(p))
        call c_f_pointer(p, chars, [n])
        allocate (character(len=n) :: msg)
        do i = 1, n
            msg(i:i) = chars(i)
        end do
        call tridi_set_error(int(status), msg, stat)
    end subroutine

    subroutine tridi_decomp_config_init(config)
        type(tridi_decomp_config_t), intent(out) :: config
        call decomp_config_init_c(config)
    end subroutine

    ! comm: an MPI communicator of the mpi module (its integer handle). Collective.
    subroutine tridi_decomp_create(decomp, comm, config, stat)
        type(tridi_decomp), intent(out) :: decomp
        integer, intent(in) :: comm
        type(tridi_decomp_config_t), intent(in) :: config
        integer, intent(out), optional :: stat
        call done(decomp_create_c(decomp%handle, int(comm, c_int), config), stat)
    end subroutine

    subroutine tridi_decomp_destroy(decomp, stat)
        type(tridi_decomp), intent(inout) :: decomp
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = decomp_destroy_c(decomp%handle)
        if (s == TRIDI_SUCCESS) decomp%handle = c_null_ptr
        call done(s, stat)
    end subroutine

    subroutine tridi_decomp_get_info(decomp, info, stat)
        type(tridi_decomp), intent(in) :: decomp
        type(tridi_decomp_info_t), intent(out) :: info
        integer, intent(out), optional :: stat
        call done(decomp_get_info_c(decomp%handle, info), stat)
    end subroutine

    subroutine halo_create_ptr(halo, decomp, array, dtype, memory, corners, transport, stat)
        type(tridi_halo), intent(out) :: halo
        type(tridi_decomp), intent(in) :: decomp
        type(c_ptr), intent(in) :: array
        integer, intent(in) :: dtype, memory, corners, transport
        integer, intent(out), optional :: stat
        call done(halo_create_c(halo%handle, decomp%handle, array, int(dtype, c_int), int(memory, c_int), &
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
        s = halo_destroy_c(halo%handle)
        if (s == TRIDI_SUCCESS) halo%handle = c_null_ptr
        call done(s, stat)
    end subroutine

    subroutine tridi_halo_get_transport(halo, transport, stat)
        type(tridi_halo), intent(in) :: halo
        integer, intent(out) :: transport
        integer, intent(out), optional :: stat
        integer(c_int) :: t
        t = TRIDI_TRANSPORT_AUTO
        call done(halo_get_transport_c(halo%handle, t), stat)
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
        call done(halo_begin_c(halo%handle, st), stat)
    end subroutine

    subroutine tridi_halo_end(halo, stat)
        type(tridi_halo), intent(in) :: halo
        integer, intent(out), optional :: stat
        call done(halo_end_c(halo%handle), stat)
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

    subroutine mpi_solve_raw(ctx, decomp, axis, lo, hi, arrays, stat)
        type(tridi_context), intent(in) :: ctx
        type(tridi_decomp), intent(in) :: decomp
        integer, intent(in) :: axis
        integer(int64), intent(in) :: lo(3), hi(3)
        type(tridi_arrays_t), intent(in) :: arrays
        integer, intent(out), optional :: stat
        call done(mpi_solve_c(ctx%handle, decomp%handle, int(axis, c_int), int(lo, c_int64_t), &
                              int(hi, c_int64_t), arrays), stat)
    end subroutine

    subroutine mpi_solve_r8_3d(ctx, decomp, axis, lo, hi, d, e, f, ti, x, stat)
        type(tridi_context), intent(in) :: ctx
        type(tridi_decomp), intent(in) :: decomp
        integer, intent(in) :: axis
        integer(int64), intent(in) :: lo(3), hi(3)
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
        integer(int64), intent(in) :: lo(3), hi(3)
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
        integer(int64), intent(in) :: lo(3), hi(3)
        type(tridi_arrays_t), intent(in) :: arrays
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        type(c_ptr) :: st
        st = c_null_ptr
        if (present(stream)) st = stream
        call done(mpi_solve_device_c(ctx%handle, decomp%handle, int(axis, c_int), int(lo, c_int64_t), &
                                     int(hi, c_int64_t), arrays, st), stat)
    end subroutine
end module
