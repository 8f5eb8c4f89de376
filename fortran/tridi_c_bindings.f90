! Module tridi_c_bindings: PRIVATE to the tridi library, not part of its API. It holds what the public
! modules tridi, tridi_adi and tridi_mpi share: the mirrors of the C enums and structs, the bind(c)
! interfaces of the C functions (Fortran name = C name + _c), and the helpers every wrapper uses (the
! axis convention, index vectors of any integer kind, the one error store, the stat convention). Its .mod
! file is installed only because a Fortran compiler needs it to compile code that uses the public modules;
! programs must not use it: names and interfaces here change without notice. docs/fortran-api.md.
!
! The Fortran convention (every public module): axis is the Fortran dimension the lines run along,
! 1 = i, 2 = j, 3 = k; C numbers them 0, 1, 2, and only c_axis below converts. Bounds and boxes are
! Fortran indices in both languages.
module tridi_c_bindings
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: error_unit, int8, int16, int32, int64
    implicit none
    public

    ! ---- mirrors of the C enums ----
    enum, bind(c)
        enumerator :: TRIDI_SUCCESS = 0, TRIDI_ERROR_NULL_POINTER = 1, TRIDI_ERROR_INVALID_VALUE = 2, &
                      TRIDI_ERROR_BOUNDS = 3, TRIDI_ERROR_UNSUPPORTED = 4, TRIDI_ERROR_ALIASING = 5, &
                      TRIDI_ERROR_ZERO_PIVOT = 6, TRIDI_ERROR_NONFINITE = 7, TRIDI_ERROR_NO_DEVICE = 8, &
                      TRIDI_ERROR_OUT_OF_MEMORY = 9, TRIDI_ERROR_CUDA = 10, TRIDI_ERROR_MPI = 11, &
                      TRIDI_ERROR_MISMATCH = 12, TRIDI_ERROR_INVALID_HANDLE = 13, TRIDI_ERROR_INTERNAL = 14, &
                      TRIDI_ERROR_UNSTABLE = 15
    end enum
    enum, bind(c)
        enumerator :: TRIDI_PIVOT_NONE = 0, TRIDI_PIVOT_CHECK = 1, TRIDI_PIVOT_FALLBACK = 2
    end enum
    enum, bind(c)
        enumerator :: TRIDI_BACKEND_AUTO = 0, TRIDI_BACKEND_CPU = 1, TRIDI_BACKEND_CUDA = 2
    end enum
    enum, bind(c)
        enumerator :: TRIDI_FLOAT32 = 0, TRIDI_FLOAT64 = 1
    end enum
    enum, bind(c)
        enumerator :: TRIDI_ROLE_LOWER = 0, TRIDI_ROLE_DIAG = 1, TRIDI_ROLE_UPPER = 2, TRIDI_ROLE_RHS = 3, &
                      TRIDI_ROLE_X = 4
    end enum
    enum, bind(c)
        enumerator :: TRIDI_ON_ERROR_LINES = 0, TRIDI_ON_ERROR_CALL = 1
    end enum
    enum, bind(c)
        enumerator :: TRIDI_ARITH_DEFAULT = 0, TRIDI_ARITH_MOHID = 1, TRIDI_ARITH_FAST = 2, &
                      TRIDI_ARITH_MOHID_NEWTYPE = 3
    end enum
    enum, bind(c)
        enumerator :: TRIDI_VERDICT_SYNC = 0, TRIDI_VERDICT_DEFERRED = 1
    end enum
    enum, bind(c)
        enumerator :: TRIDI_ADI_DOUGLAS = 0, TRIDI_ADI_PEACEMAN_RACHFORD = 1
    end enum
    enum, bind(c)
        enumerator :: TRIDI_ADI_DIRICHLET = 0, TRIDI_ADI_ZERO_FLUX = 1
    end enum
    enum, bind(c)
        enumerator :: TRIDI_ADI_HARMONIC = 0, TRIDI_ADI_ARITHMETIC = 1
    end enum
    ! ---- mirrors of the C structs (same layout as tridi.h; sizes checked by the tests) ----
    type, bind(c) :: tridi_config_t
        integer(c_size_t) :: size
        integer(c_int) :: backend, device, num_threads, verbose, allow_f32_transfer, pivoting, on_error
    end type
    type, bind(c) :: tridi_grid_t
        integer(c_int) :: ndim
        integer(c_int64_t) :: lbound(3), ubound(3)
    end type
    type, bind(c) :: tridi_arrays_t
        type(c_ptr) :: lower
        integer(c_int) :: lower_type
        type(c_ptr) :: diag
        integer(c_int) :: diag_type
        type(c_ptr) :: upper
        integer(c_int) :: upper_type
        type(c_ptr) :: rhs
        integer(c_int) :: rhs_type
        type(c_ptr) :: x
        integer(c_int) :: x_type
    end type
    ! memory: TRIDI_MEMORY_HOST / _DEVICE (enum below, with tridi_mpi.h's); stream: cudaStream_t as c_ptr.
    type, bind(c) :: tridi_solve_options_t
        integer(c_size_t) :: size
        integer(c_int) :: on_error, arith, verdict, memory
        type(c_ptr) :: stream
    end type
    type, bind(c) :: tridi_adi_operator_t
        integer(c_size_t) :: size
        integer(c_int) :: scheme, naxes
        real(c_double) :: theta, spacing(3), kappa
        type(c_ptr) :: kappa_field
        integer(c_int) :: mean
        type(c_ptr) :: velocity(3)
        integer(c_int) :: bc_lo(3), bc_hi(3), profile
    end type

    ! tridi_mpi.h: same layout as tridi_decomp_config / tridi_decomp_info.
    enum, bind(c)
        enumerator :: TRIDI_TRANSPORT_AUTO = 0, TRIDI_TRANSPORT_IPC = 1, TRIDI_TRANSPORT_CUDA_AWARE = 2, &
                      TRIDI_TRANSPORT_STAGED = 3, TRIDI_TRANSPORT_NCCL = 4
    end enum
    enum, bind(c)
        enumerator :: TRIDI_MEMORY_HOST = 0, TRIDI_MEMORY_DEVICE = 1
    end enum
    type, bind(c) :: tridi_decomp_config_t
        integer(c_size_t) :: size
        integer(c_int) :: ndim
        integer(c_int64_t) :: lo(3), hi(3)
        integer(c_int) :: halo(3), dims(2), periodic(2), solve_transport
    end type
    type, bind(c) :: tridi_decomp_info_t
        integer(c_int) :: rank, nranks, dims(2), coords(2)
        integer(c_int64_t) :: lo(3), hi(3)
        type(tridi_grid_t) :: grid
        integer(c_int) :: neighbour(2, 2)  ! neighbour(side, axis): side 1 below, 2 above; -1 at an edge
        integer(c_int) :: comm
    end type

    ! ---- tridi.h ----
    interface
        function tridi_status_name_c(status) bind(c, name='tridi_status_name') result(p)
            import :: c_int, c_ptr
            integer(c_int), value :: status
            type(c_ptr) :: p
        end function
        function tridi_error_message_c() bind(c, name='tridi_error_message') result(p)
            import :: c_ptr
            type(c_ptr) :: p
        end function
        function tridi_error_cell_c(cell) bind(c, name='tridi_error_cell') result(r)
            import :: c_int, c_int64_t
            integer(c_int64_t), intent(out) :: cell(3)
            integer(c_int) :: r
        end function
        function tridi_version_string_c() bind(c, name='tridi_version_string') result(p)
            import :: c_ptr
            type(c_ptr) :: p
        end function
        function tridi_build_info_string_c() bind(c, name='tridi_build_info_string') result(p)
            import :: c_ptr
            type(c_ptr) :: p
        end function
        subroutine tridi_version_c(major, minor, patch) bind(c, name='tridi_version')
            import :: c_int
            integer(c_int), intent(out) :: major, minor, patch
        end subroutine
        subroutine tridi_config_init_c(config) bind(c, name='tridi_config_init')
            import :: tridi_config_t
            type(tridi_config_t), intent(out) :: config
        end subroutine
        function tridi_create_c(ctx, config) bind(c, name='tridi_create') result(s)
            import :: c_int, c_ptr, tridi_config_t
            type(c_ptr), intent(out) :: ctx
            type(tridi_config_t), intent(in) :: config
            integer(c_int) :: s
        end function
        function tridi_destroy_c(ctx) bind(c, name='tridi_destroy') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: ctx
            integer(c_int) :: s
        end function
        function tridi_get_backend_c(ctx, backend) bind(c, name='tridi_get_backend') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: ctx
            integer(c_int), intent(out) :: backend
            integer(c_int) :: s
        end function
        function tridi_backend_name_c(backend) bind(c, name='tridi_backend_name') result(p)
            import :: c_int, c_ptr
            integer(c_int), value :: backend
            type(c_ptr) :: p
        end function
        function tridi_solve_c(ctx, grid, axis, lo, hi, arrays) bind(c, name='tridi_solve') result(s)
            import :: c_int, c_ptr, c_int64_t, tridi_grid_t, tridi_arrays_t
            type(c_ptr), value :: ctx
            type(tridi_grid_t), intent(in) :: grid
            integer(c_int), value :: axis
            integer(c_int64_t), intent(in) :: lo(3), hi(3)
            type(tridi_arrays_t), intent(in) :: arrays
            integer(c_int) :: s
        end function
        function tridi_upload_async_c(ctx, grid, axis, lo, hi, role, host, dtype) &
                bind(c, name='tridi_upload_async') result(s)
            import :: c_int, c_ptr, c_int64_t, tridi_grid_t
            type(c_ptr), value :: ctx
            type(tridi_grid_t), intent(in) :: grid
            integer(c_int), value :: axis
            integer(c_int64_t), intent(in) :: lo(3), hi(3)
            integer(c_int), value :: role
            type(c_ptr), value :: host
            integer(c_int), value :: dtype
            integer(c_int) :: s
        end function
        function tridi_host_register_c(ctx, ptr, bytes) bind(c, name='tridi_host_register') result(s)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: ctx, ptr
            integer(c_size_t), value :: bytes
            integer(c_int) :: s
        end function
        function tridi_host_unregister_c(ctx, ptr) bind(c, name='tridi_host_unregister') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: ctx, ptr
            integer(c_int) :: s
        end function
        function tridi_solve_device_c(ctx, grid, axis, lo, hi, device_arrays, stream) &
                bind(c, name='tridi_solve_device') result(s)
            import :: c_int, c_ptr, c_int64_t, tridi_grid_t, tridi_arrays_t
            type(c_ptr), value :: ctx
            type(tridi_grid_t), intent(in) :: grid
            integer(c_int), value :: axis
            integer(c_int64_t), intent(in) :: lo(3), hi(3)
            type(tridi_arrays_t), intent(in) :: device_arrays
            type(c_ptr), value :: stream
            integer(c_int) :: s
        end function
        function tridi_device_alloc_c(ctx, bytes, device_ptr) bind(c, name='tridi_device_alloc') result(s)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: ctx
            integer(c_size_t), value :: bytes
            type(c_ptr), intent(out) :: device_ptr
            integer(c_int) :: s
        end function
        function tridi_device_free_c(ctx, device_ptr) bind(c, name='tridi_device_free') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: ctx, device_ptr
            integer(c_int) :: s
        end function
        function tridi_copy_to_device_c(ctx, device_dst, host_src, bytes) &
                bind(c, name='tridi_copy_to_device') result(s)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: ctx, device_dst, host_src
            integer(c_size_t), value :: bytes
            integer(c_int) :: s
        end function
        function tridi_copy_to_host_c(ctx, host_dst, device_src, bytes) &
                bind(c, name='tridi_copy_to_host') result(s)
            import :: c_int, c_ptr, c_size_t
            type(c_ptr), value :: ctx, host_dst, device_src
            integer(c_size_t), value :: bytes
            integer(c_int) :: s
        end function
        function tridi_synchronize_c(ctx) bind(c, name='tridi_synchronize') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: ctx
            integer(c_int) :: s
        end function
        subroutine tridi_solve_options_init_c(options) bind(c, name='tridi_solve_options_init')
            import :: tridi_solve_options_t
            type(tridi_solve_options_t), intent(out) :: options
        end subroutine
        function tridi_plan_create_c(ctx, grid, axis, lo, hi, types, options, plan) &
                bind(c, name='tridi_plan_create') result(s)
            import :: c_int, c_ptr, c_int64_t, tridi_grid_t, tridi_solve_options_t
            type(c_ptr), value :: ctx
            type(tridi_grid_t), intent(in) :: grid
            integer(c_int), value :: axis
            integer(c_int64_t), intent(in) :: lo(3), hi(3)
            integer(c_int), intent(in) :: types(5)
            type(tridi_solve_options_t), intent(in) :: options
            type(c_ptr), intent(out) :: plan
            integer(c_int) :: s
        end function
        function tridi_plan_solve_c(plan, arrays) bind(c, name='tridi_plan_solve') result(s)
            import :: c_int, c_ptr, tridi_arrays_t
            type(c_ptr), value :: plan
            type(tridi_arrays_t), intent(in) :: arrays
            integer(c_int) :: s
        end function
        function tridi_plan_status_c(plan) bind(c, name='tridi_plan_status') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: plan
            integer(c_int) :: s
        end function
        function tridi_plan_destroy_c(plan) bind(c, name='tridi_plan_destroy') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: plan
            integer(c_int) :: s
        end function
        subroutine tridi_adi_operator_init_c(op) bind(c, name='tridi_adi_operator_init')
            import :: tridi_adi_operator_t
            type(tridi_adi_operator_t), intent(out) :: op
        end subroutine
        function tridi_adi_create_c(plan, ctx, grid, lo, hi, dtype, op) bind(c, name='tridi_adi_create') result(s)
            import :: c_int, c_ptr, c_int64_t, tridi_grid_t, tridi_adi_operator_t
            type(c_ptr), intent(out) :: plan
            type(c_ptr), value :: ctx
            type(tridi_grid_t), intent(in) :: grid
            integer(c_int64_t), intent(in) :: lo(3), hi(3)
            integer(c_int), value :: dtype
            type(tridi_adi_operator_t), intent(in) :: op
            integer(c_int) :: s
        end function
        function tridi_adi_destroy_c(plan) bind(c, name='tridi_adi_destroy') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: plan
            integer(c_int) :: s
        end function
        function tridi_adi_step_c(plan, field, dt, stream) bind(c, name='tridi_adi_step') result(s)
            import :: c_int, c_ptr, c_double
            type(c_ptr), value :: plan, field
            real(c_double), value :: dt
            type(c_ptr), value :: stream
            integer(c_int) :: s
        end function
        function tridi_adi_sweep_c(plan, axis, lower, diag, upper, rhs, x, stream) &
                bind(c, name='tridi_adi_sweep') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: plan
            integer(c_int), value :: axis
            type(c_ptr), value :: lower, diag, upper, rhs, x, stream
            integer(c_int) :: s
        end function
        function tridi_adi_synchronize_c(plan) bind(c, name='tridi_adi_synchronize') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: plan
            integer(c_int) :: s
        end function
        function tridi_adi_timings_c(plan, sweep_ms, steps) bind(c, name='tridi_adi_timings') result(s)
            import :: c_int, c_ptr, c_double, c_int64_t
            type(c_ptr), value :: plan
            real(c_double), intent(out) :: sweep_ms(3)
            integer(c_int64_t), intent(out) :: steps
            integer(c_int) :: s
        end function
        function tridi_record_error_c(status, message) bind(c, name='tridi_record_error') result(s)
            import :: c_int, c_char
            integer(c_int), value :: status
            character(kind=c_char), intent(in) :: message(*)
            integer(c_int) :: s
        end function
        pure function c_strlen(s) bind(c, name='strlen') result(n)
            import :: c_ptr, c_size_t
            type(c_ptr), value, intent(in) :: s
            integer(c_size_t) :: n
        end function

        ! ---- tridi_mpi.h (declared here in every build; only module tridi_mpi, built with MPI, calls them) ----
        subroutine tridi_decomp_config_init_c(config) bind(c, name='tridi_decomp_config_init')
            import :: tridi_decomp_config_t
            type(tridi_decomp_config_t), intent(out) :: config
        end subroutine
        function tridi_decomp_create_c(decomp, comm, config) bind(c, name='tridi_decomp_create') result(s)
            import :: c_int, c_ptr, tridi_decomp_config_t
            type(c_ptr), intent(out) :: decomp
            integer(c_int), value :: comm
            type(tridi_decomp_config_t), intent(in) :: config
            integer(c_int) :: s
        end function
        function tridi_decomp_destroy_c(decomp) bind(c, name='tridi_decomp_destroy') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: decomp
            integer(c_int) :: s
        end function
        function tridi_decomp_get_info_c(decomp, info) bind(c, name='tridi_decomp_get_info') result(s)
            import :: c_int, c_ptr, tridi_decomp_info_t
            type(c_ptr), value :: decomp
            type(tridi_decomp_info_t), intent(out) :: info
            integer(c_int) :: s
        end function
        function tridi_halo_create_c(halo, decomp, array, dtype, memory, corners, transport) &
                bind(c, name='tridi_halo_create') result(s)
            import :: c_int, c_ptr
            type(c_ptr), intent(out) :: halo
            type(c_ptr), value :: decomp, array
            integer(c_int), value :: dtype, memory, corners, transport
            integer(c_int) :: s
        end function
        function tridi_halo_destroy_c(halo) bind(c, name='tridi_halo_destroy') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: halo
            integer(c_int) :: s
        end function
        function tridi_halo_get_transport_c(halo, transport) bind(c, name='tridi_halo_get_transport') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: halo
            integer(c_int), intent(out) :: transport
            integer(c_int) :: s
        end function
        function tridi_halo_begin_c(halo, stream) bind(c, name='tridi_halo_begin') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: halo, stream
            integer(c_int) :: s
        end function
        function tridi_halo_end_c(halo) bind(c, name='tridi_halo_end') result(s)
            import :: c_int, c_ptr
            type(c_ptr), value :: halo
            integer(c_int) :: s
        end function
        function tridi_mpi_solve_c(ctx, decomp, axis, lo, hi, arrays) bind(c, name='tridi_mpi_solve') result(s)
            import :: c_int, c_ptr, c_int64_t, tridi_arrays_t
            type(c_ptr), value :: ctx, decomp
            integer(c_int), value :: axis
            integer(c_int64_t), intent(in) :: lo(3), hi(3)
            type(tridi_arrays_t), intent(in) :: arrays
            integer(c_int) :: s
        end function
        function tridi_mpi_solve_device_c(ctx, decomp, axis, lo, hi, arrays, stream) &
                bind(c, name='tridi_mpi_solve_device') result(s)
            import :: c_int, c_ptr, c_int64_t, tridi_arrays_t
            type(c_ptr), value :: ctx, decomp, stream
            integer(c_int), value :: axis
            integer(c_int64_t), intent(in) :: lo(3), hi(3)
            type(tridi_arrays_t), intent(in) :: arrays
            integer(c_int) :: s
        end function
    end interface

    ! itoa(i): default or 64-bit integer as text.
    interface itoa
        module procedure itoa_default, itoa_int64
    end interface
    private :: itoa_default, itoa_int64

contains

    function c_to_f_string(p) result(s)
        type(c_ptr), intent(in) :: p
        character(len=:), allocatable :: s
        character(kind=c_char), pointer :: chars(:)
        integer :: n, i
        if (.not. c_associated(p)) then
            s = ''
            return
        end if
        n = int(c_strlen(p))
        call c_f_pointer(p, chars, [n])
        allocate (character(len=n) :: s)
        do i = 1, n
            s(i:i) = chars(i)
        end do
    end function

    function itoa_default(i) result(s)
        integer, intent(in) :: i
        character(len=:), allocatable :: s
        s = itoa_int64(int(i, int64))
    end function

    function itoa_int64(i) result(s)
        integer(int64), intent(in) :: i
        character(len=:), allocatable :: s
        character(len=24) :: buf
        write (buf, '(i0)') i
        s = trim(buf)
    end function

    ! ---- the one error store: C's per-thread record (tridi_error_message / tridi_record_error) ----

    ! Message of the last failed call of this thread, whichever layer (C, these modules, tridi_mohid)
    ! found it: names the function and the argument, index, line or cell at fault; '' if nothing failed.
    function tridi_error_message() result(msg)
        character(len=:), allocatable :: msg
        msg = c_to_f_string(tridi_error_message_c())
    end function

    function tridi_status_name(status) result(name)
        integer, intent(in) :: status
        character(len=:), allocatable :: name
        name = c_to_f_string(tridi_status_name_c(int(status, c_int)))
    end function

    ! Records a failure found in Fortran (these modules or a layer over them, such as tridi_mohid) in
    ! C's per-thread record, so that tridi_error_message() returns it; then behaves like tridi_finish.
    subroutine tridi_set_error(status, message, stat)
        integer, intent(in) :: status
        character(*), intent(in) :: message
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = tridi_record_error_c(int(status, c_int), message//c_null_char)
        call tridi_finish(status, stat)
    end subroutine

    ! Hands a status to the caller: into stat when present; otherwise, on failure, prints the message to
    ! error_unit and stops the program, as intrinsic I/O without iostat does.
    subroutine tridi_finish(status, stat)
        integer, intent(in) :: status
        integer, intent(out), optional :: stat
        if (present(stat)) then
            stat = status
        else if (status /= 0) then
            write (error_unit, '(a)') 'tridi: '//tridi_status_name(status)//': '//tridi_error_message()
            error stop status
        end if
    end subroutine

    ! Status of a C call (its message is already in the store).
    subroutine finish(status, stat)
        integer(c_int), intent(in) :: status
        integer, intent(out), optional :: stat
        call tridi_finish(int(status), stat)
    end subroutine

    ! ---- the Fortran axis convention ----

    ! Fortran axis (1 = i, 2 = j, 3 = k) of a problem of rank ndim -> C axis (0, 1, 2). A number outside
    ! 1..ndim is refused with a message that names the convention; `what` names the grid in it, its '#'
    ! standing for ndim. The text is made only on failure: a call that succeeds does no formatted write,
    ! whose code is cold after a model's own work (several us a call, docs/decisions/039).
    subroutine c_axis(func, axis, ndim, what, caxis, ok, stat)
        character(*), intent(in) :: func, what
        integer, intent(in) :: axis, ndim
        integer(c_int), intent(out) :: caxis
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        integer :: h
        caxis = int(axis - 1, c_int)
        ok = axis >= 1 .and. axis <= ndim
        if (ok) return
        h = index(what, '#')
        if (h == 0) h = len(what) + 1
        call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': axis = '//itoa(axis)//' is not a dimension of '// &
                             what(1:h - 1)//itoa(ndim)//what(min(h + 1, len(what) + 1):)//' (1..'//itoa(ndim)// &
                             '); the Fortran modules number axes as Fortran dimensions: 1 = i, 2 = j, 3 = k '// &
                             '(TRIDI_AXIS_I, TRIDI_AXIS_J, TRIDI_AXIS_K)', stat)
    end subroutine

    ! ---- index vectors (lo, hi, bounds) of any integer kind ----

    ! v: an integer array of any kind (default, int64, ...) with n entries, copied into out(1:n); out(n+1:)
    ! = 1. Anything else is refused, naming the argument.
    subroutine index_vector(func, name, v, n, out, ok, stat)
        character(*), intent(in) :: func, name
        class(*), intent(in) :: v(:)
        integer, intent(in) :: n
        integer(c_int64_t), intent(out) :: out(3)
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        out = 1
        ok = .false.
        if (size(v) /= n) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': '//name//' has '//itoa(size(v))// &
                                 ' entries; it needs one per dimension of the grid ('//itoa(n)//')', stat)
            return
        end if
        select type (v)
        type is (integer(int8))
            out(1:n) = v
        type is (integer(int16))
            out(1:n) = v
        type is (integer(int32))
            out(1:n) = v
        type is (integer(int64))
            out(1:n) = v
        class default
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': '//name//' is not an integer array '// &
                                 '(default integer or integer(int64))', stat)
            return
        end select
        ok = .true.
    end subroutine

end module tridi_c_bindings
