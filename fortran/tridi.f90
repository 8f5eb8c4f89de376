! Module tridi: the Fortran interface of the tridi library (include/tridi.h), for gfortran and any
! Fortran 2008 compiler with ISO_C_BINDING; no CUDA Fortran.
!
! Two layers:
!  - raw interfaces (name_c) bound to every C function of tridi.h, with value scalars and c_ptr arrays;
!  - wrappers that take the model's own arrays with their own bounds: tridi_create, tridi_solve, ...
!
! Why pointer dummies: an assumed-shape dummy forgets the actual's lower bounds, and the library must
! know the allocated bounds of the model's arrays (halos, lower bounds other than 1). A pointer dummy
! keeps them, is never copied in or out by the compiler, and with intent(in) (Fortran 2008) it also
! accepts any array with the TARGET attribute. Arrays that are not contiguous are refused with a status,
! because solving a compiler-made copy would leave the caller's answer unwritten.
!
! Errors: every wrapper has an optional `stat`. Present: it receives the status (0 = TRIDI_SUCCESS) and
! tridi_error_message() says what went wrong. Absent: on an error the message goes to error_unit and the
! program stops with `error stop`, as intrinsic I/O does without iostat. See docs/fortran-api.md.
module tridi
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: error_unit, int64
    implicit none
    private

    ! ---- mirrors of the C enums ----
    enum, bind(c)
        enumerator :: TRIDI_SUCCESS = 0, TRIDI_ERROR_NULL_POINTER = 1, TRIDI_ERROR_INVALID_VALUE = 2, &
                      TRIDI_ERROR_BOUNDS = 3, TRIDI_ERROR_UNSUPPORTED = 4, TRIDI_ERROR_ALIASING = 5, &
                      TRIDI_ERROR_ZERO_PIVOT = 6, TRIDI_ERROR_NONFINITE = 7, TRIDI_ERROR_NO_DEVICE = 8, &
                      TRIDI_ERROR_OUT_OF_MEMORY = 9, TRIDI_ERROR_CUDA = 10, TRIDI_ERROR_MPI = 11, &
                      TRIDI_ERROR_MISMATCH = 12, TRIDI_ERROR_INVALID_HANDLE = 13, TRIDI_ERROR_INTERNAL = 14
    end enum
    enum, bind(c)
        enumerator :: TRIDI_BACKEND_AUTO = 0, TRIDI_BACKEND_CPU = 1, TRIDI_BACKEND_CUDA = 2
    end enum
    enum, bind(c)
        enumerator :: TRIDI_AXIS_X = 0, TRIDI_AXIS_Y = 1, TRIDI_AXIS_Z = 2
    end enum
    enum, bind(c)
        enumerator :: TRIDI_FLOAT32 = 0, TRIDI_FLOAT64 = 1
    end enum
    enum, bind(c)
        enumerator :: TRIDI_ROLE_LOWER = 0, TRIDI_ROLE_DIAG = 1, TRIDI_ROLE_UPPER = 2, TRIDI_ROLE_RHS = 3, &
                      TRIDI_ROLE_X = 4
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
    public :: TRIDI_SUCCESS, TRIDI_ERROR_NULL_POINTER, TRIDI_ERROR_INVALID_VALUE, TRIDI_ERROR_BOUNDS, &
              TRIDI_ERROR_UNSUPPORTED, TRIDI_ERROR_ALIASING, TRIDI_ERROR_ZERO_PIVOT, TRIDI_ERROR_NONFINITE, &
              TRIDI_ERROR_NO_DEVICE, TRIDI_ERROR_OUT_OF_MEMORY, TRIDI_ERROR_CUDA, TRIDI_ERROR_MPI, &
              TRIDI_ERROR_MISMATCH, TRIDI_ERROR_INVALID_HANDLE, TRIDI_ERROR_INTERNAL
    public :: TRIDI_BACKEND_AUTO, TRIDI_BACKEND_CPU, TRIDI_BACKEND_CUDA
    public :: TRIDI_AXIS_X, TRIDI_AXIS_Y, TRIDI_AXIS_Z, TRIDI_FLOAT32, TRIDI_FLOAT64
    public :: TRIDI_ROLE_LOWER, TRIDI_ROLE_DIAG, TRIDI_ROLE_UPPER, TRIDI_ROLE_RHS, TRIDI_ROLE_X
    public :: TRIDI_ADI_DOUGLAS, TRIDI_ADI_PEACEMAN_RACHFORD, TRIDI_ADI_DIRICHLET, TRIDI_ADI_ZERO_FLUX, &
              TRIDI_ADI_HARMONIC, TRIDI_ADI_ARITHMETIC

    ! ---- mirrors of the C structs (same layout as tridi.h; sizes checked by the tests) ----
    type, bind(c), public :: tridi_config_t
        integer(c_size_t) :: size
        integer(c_int) :: backend, device, num_threads, verbose, allow_f32_transfer
    end type
    type, bind(c), public :: tridi_grid_t
        integer(c_int) :: ndim
        integer(c_int64_t) :: lbound(3), ubound(3)
    end type
    type, bind(c), public :: tridi_arrays_t
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
    type, bind(c), public :: tridi_adi_operator_t
        integer(c_size_t) :: size
        integer(c_int) :: scheme, naxes
        real(c_double) :: theta, spacing(3), kappa
        type(c_ptr) :: kappa_field
        integer(c_int) :: mean
        type(c_ptr) :: velocity(3)
        integer(c_int) :: bc_lo(3), bc_hi(3), profile
    end type

    ! A tridi context (C tridi_context). Null until tridi_create; null again after tridi_destroy.
    type, public :: tridi_context
        type(c_ptr) :: handle = c_null_ptr
    end type

    ! One argument array as the wrappers see it, before it is handed to C.
    type :: array_desc
        character(len=8) :: name = ''
        logical :: present = .false., contiguous = .true.
        integer(c_int) :: dtype = TRIDI_FLOAT32
        integer(int64) :: lb(3) = 1, ub(3) = 1
        type(c_ptr) :: ptr = c_null_ptr
    end type

    ! Message of the last failure raised by the Fortran layer itself (the C library keeps its own, per
    ! thread). Only one of the two is current: see set_fortran_error / finish.
    character(len=:), allocatable :: fortran_message
    logical :: fortran_message_current = .false.

    ! ---- raw C interfaces ----
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
        pure function c_strlen(s) bind(c, name='strlen') result(n)
            import :: c_ptr, c_size_t
            type(c_ptr), value, intent(in) :: s
            integer(c_size_t) :: n
        end function
    end interface
    public :: tridi_status_name_c, tridi_error_message_c, tridi_error_cell_c, tridi_version_string_c, &
              tridi_version_c, tridi_config_init_c, tridi_create_c, tridi_destroy_c, tridi_get_backend_c, &
              tridi_backend_name_c, tridi_solve_c, tridi_upload_async_c, tridi_host_register_c, &
              tridi_host_unregister_c, tridi_solve_device_c, &
              tridi_device_alloc_c, tridi_device_free_c, tridi_copy_to_device_c, tridi_copy_to_host_c, &
              tridi_synchronize_c, tridi_adi_operator_init_c, tridi_adi_create_c, tridi_adi_destroy_c, &
              tridi_adi_step_c, tridi_adi_sweep_c, tridi_adi_synchronize_c, tridi_adi_timings_c

    ! ---- wrappers ----
    ! tridi_solve(ctx, axis, lo, hi, D, E, F, Ti, X [, stat]): kinds all real(4), all real(8), or MOHID's
    ! mix (E real(8), the others real(4)); rank 2 or 3.
    interface tridi_solve
        module procedure solve_r4_2d, solve_r4_3d, solve_r8_2d, solve_r8_3d, solve_mixed_2d, solve_mixed_3d
    end interface
    ! tridi_upload_async(ctx, axis, lo, hi, array, role [, stat]): real(4) or real(8), rank 2 or 3.
    interface tridi_upload_async
        module procedure upload_4_2d, upload_4_3d, upload_8_2d, upload_8_3d
    end interface
    ! tridi_host_register(ctx, array [, stat]) / tridi_host_unregister(ctx, array [, stat]): a whole
    ! real(4) or real(8) array of rank 2 or 3 (pointer or target), page-locked for direct DMA; unregister
    ! it before deallocating it.
    interface tridi_host_register
        module procedure register_4_2d, register_4_3d, register_8_2d, register_8_3d
    end interface
    interface tridi_host_unregister
        module procedure unregister_4_2d, unregister_4_3d, unregister_8_2d, unregister_8_3d
    end interface
    ! tridi_copy_to_device(ctx, device_dst, host_src [, stat]) / tridi_copy_to_host(ctx, host_dst,
    ! device_src [, stat]): whole real(4)/real(8) arrays of rank 1 to 3.
    interface tridi_copy_to_device
        module procedure to_device_4_1d, to_device_4_2d, to_device_4_3d, to_device_8_1d, to_device_8_2d, &
                         to_device_8_3d
    end interface
    interface tridi_copy_to_host
        module procedure to_host_4_1d, to_host_4_2d, to_host_4_3d, to_host_8_1d, to_host_8_2d, to_host_8_3d
    end interface
    public :: tridi_create, tridi_destroy, tridi_get_backend, tridi_backend_name, tridi_error_message, &
              tridi_status_name, tridi_error_cell, tridi_version_string, tridi_solve, tridi_upload_async, &
              tridi_solve_device, tridi_device_alloc, tridi_device_free, tridi_copy_to_device, &
              tridi_copy_to_host, tridi_synchronize, tridi_set_error, tridi_finish, tridi_host_register, &
              tridi_host_unregister

contains

    ! ---- strings and errors ----

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

    ! Message of the last failed call of this thread: names the function and the argument, index, line
    ! or cell at fault; '' if nothing failed yet.
    function tridi_error_message() result(msg)
        character(len=:), allocatable :: msg
        if (fortran_message_current) then
            msg = fortran_message
        else
            msg = c_to_f_string(tridi_error_message_c())
        end if
    end function

    function tridi_status_name(status) result(name)
        integer, intent(in) :: status
        character(len=:), allocatable :: name
        name = c_to_f_string(tridi_status_name_c(int(status, c_int)))
    end function

    function tridi_backend_name(backend) result(name)
        integer, intent(in) :: backend
        character(len=:), allocatable :: name
        name = c_to_f_string(tridi_backend_name_c(int(backend, c_int)))
    end function

    function tridi_version_string() result(v)
        character(len=:), allocatable :: v
        v = c_to_f_string(tridi_version_string_c())
    end function

    ! Cell (model indices) of the last ZERO_PIVOT / NONFINITE failure; returns its rank, 0 if the last
    ! failure was not numerical.
    function tridi_error_cell(cell) result(rank)
        integer(int64), intent(out) :: cell(3)
        integer :: rank
        integer(c_int64_t) :: c(3)
        rank = int(tridi_error_cell_c(c))
        cell = c
    end function

    ! Records a failure found by Fortran code (this module or a layer over it, such as tridi_mohid) so
    ! that tridi_error_message() returns it; then behaves like tridi_finish.
    subroutine tridi_set_error(status, message, stat)
        integer, intent(in) :: status
        character(*), intent(in) :: message
        integer, intent(out), optional :: stat
        fortran_message = message
        fortran_message_current = .true.
        call tridi_finish(status, stat)
    end subroutine

    ! Hands a status to the caller: into stat when present; otherwise, on failure, prints the message to
    ! error_unit and stops the program, as intrinsic I/O without iostat does.
    subroutine tridi_finish(status, stat)
        integer, intent(in) :: status
        integer, intent(out), optional :: stat
        if (present(stat)) then
            stat = status
        else if (status /= TRIDI_SUCCESS) then
            write (error_unit, '(a)') 'tridi: '//tridi_status_name(status)//': '//tridi_error_message()
            error stop status
        end if
    end subroutine

    ! Status of a C call: its message is the current one (a C failure replaces a Fortran one).
    subroutine finish(status, fortran_raised, stat)
        integer(c_int), intent(in) :: status
        logical, intent(in) :: fortran_raised
        integer, intent(out), optional :: stat
        if (status /= TRIDI_SUCCESS .and. .not. fortran_raised) fortran_message_current = .false.
        call tridi_finish(int(status), stat)
    end subroutine

    function itoa(i) result(s)
        integer(int64), intent(in) :: i
        character(len=:), allocatable :: s
        character(len=24) :: buf
        write (buf, '(i0)') i
        s = trim(buf)
    end function

    function bounds_text(d, rank) result(s)
        type(array_desc), intent(in) :: d
        integer, intent(in) :: rank
        character(len=:), allocatable :: s
        integer :: a
        s = '('
        do a = 1, rank
            s = s//itoa(d%lb(a))//':'//itoa(d%ub(a))
            if (a < rank) s = s//', '
        end do
        s = s//')'
    end function

    ! ---- context ----

    ! Creates a context. backend: TRIDI_BACKEND_AUTO/CPU/CUDA (default: AUTO, or the environment variable
    ! TRIDI_BACKEND = cpu / cuda); device: CUDA ordinal (default 0); num_threads: OpenMP threads of the CPU
    ! backend (default 0 = OpenMP's); verbose: print the backend chosen; allow_f32_transfer: see tridi.h.
    subroutine tridi_create(ctx, backend, device, num_threads, verbose, allow_f32_transfer, stat)
        type(tridi_context), intent(out) :: ctx
        integer, intent(in), optional :: backend, device, num_threads
        logical, intent(in), optional :: verbose, allow_f32_transfer
        integer, intent(out), optional :: stat
        type(tridi_config_t) :: cfg
        call tridi_config_init_c(cfg)
        if (present(backend)) cfg%backend = int(backend, c_int)
        if (present(device)) cfg%device = int(device, c_int)
        if (present(num_threads)) cfg%num_threads = int(num_threads, c_int)
        if (present(verbose)) cfg%verbose = merge(1_c_int, 0_c_int, verbose)
        if (present(allow_f32_transfer)) cfg%allow_f32_transfer = merge(1_c_int, 0_c_int, allow_f32_transfer)
        call finish(tridi_create_c(ctx%handle, cfg), .false., stat)
    end subroutine

    ! Releases the context and all its buffers; a null context is accepted.
    subroutine tridi_destroy(ctx, stat)
        type(tridi_context), intent(inout) :: ctx
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = tridi_destroy_c(ctx%handle)
        ctx%handle = c_null_ptr
        call finish(s, .false., stat)
    end subroutine

    ! The backend in use (AUTO resolved): TRIDI_BACKEND_CPU or TRIDI_BACKEND_CUDA.
    subroutine tridi_get_backend(ctx, backend, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(out) :: backend
        integer, intent(out), optional :: stat
        integer(c_int) :: b, s
        b = TRIDI_BACKEND_AUTO
        s = tridi_get_backend_c(ctx%handle, b)
        backend = int(b)
        call finish(s, .false., stat)
    end subroutine

    subroutine tridi_synchronize(ctx, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(out), optional :: stat
        call finish(tridi_synchronize_c(ctx%handle), .false., stat)
    end subroutine

    ! ---- solves ----

    ! Checks what only Fortran knows (rank of lo/hi, axis number, association, contiguity, equal bounds)
    ! and builds the C grid, axis and box. ok = .false.: the failure has been recorded and stat set.
    subroutine build_problem(func, rank, axis, lo, hi, a, n, grid, caxis, clo, chi, ok, stat)
        character(*), intent(in) :: func
        integer, intent(in) :: rank, axis, lo(:), hi(:), n
        type(array_desc), intent(in) :: a(n)
        type(tridi_grid_t), intent(out) :: grid
        integer(c_int), intent(out) :: caxis
        integer(c_int64_t), intent(out) :: clo(3), chi(3)
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        integer :: i
        ok = .false.
        if (axis < 1 .or. axis > rank) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': axis = '//itoa(int(axis, int64))// &
                                 ' is not a dimension of the rank-'//itoa(int(rank, int64))//' arrays (1..'// &
                                 itoa(int(rank, int64))//')', stat)
            return
        end if
        if (size(lo) /= rank .or. size(hi) /= rank) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': lo and hi must have one entry per '// &
                                 'dimension of the arrays ('//itoa(int(rank, int64))//'); got '// &
                                 itoa(size(lo, kind=int64))//' and '//itoa(size(hi, kind=int64)), stat)
            return
        end if
        do i = 1, n
            if (.not. a(i)%present) then
                call tridi_set_error(TRIDI_ERROR_NULL_POINTER, func//': argument '//trim(a(i)%name)// &
                                     ' is not associated', stat)
                return
            end if
            if (.not. a(i)%contiguous) then
                call tridi_set_error(TRIDI_ERROR_UNSUPPORTED, func//': argument '//trim(a(i)%name)// &
                                     ' is not contiguous; tridi works in place on whole model arrays and '// &
                                     'never solves into a copy', stat)
                return
            end if
            if (any(a(i)%lb(1:rank) /= a(1)%lb(1:rank)) .or. any(a(i)%ub(1:rank) /= a(1)%ub(1:rank))) then
                call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': argument '//trim(a(i)%name)// &
                                     ' has bounds '//bounds_text(a(i), rank)//' but '//trim(a(1)%name)// &
                                     ' has '//bounds_text(a(1), rank)//'; all arrays of a solve share one shape', &
                                     stat)
                return
            end if
        end do
        grid%ndim = int(rank, c_int)
        grid%lbound = 1
        grid%ubound = 1
        clo = 1
        chi = 1
        grid%lbound(1:rank) = a(1)%lb(1:rank)
        grid%ubound(1:rank) = a(1)%ub(1:rank)
        clo(1:rank) = int(lo, c_int64_t)
        chi(1:rank) = int(hi, c_int64_t)
        caxis = int(axis - 1, c_int)
        ok = .true.
    end subroutine

    ! Zero-size host arrays have no address: a non-empty box cannot lie inside them.
    logical function has_cells(func, a, stat)
        character(*), intent(in) :: func
        type(array_desc), intent(in) :: a
        integer, intent(out), optional :: stat
        has_cells = c_associated(a%ptr)
        if (.not. has_cells) call tridi_set_error(TRIDI_ERROR_BOUNDS, func//': the box is not empty but '// &
                                                  'argument '//trim(a%name)//' has no elements', stat)
    end function

    subroutine solve_common(ctx, rank, axis, lo, hi, a, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: rank, axis, lo(:), hi(:)
        type(array_desc), intent(in) :: a(5)
        integer, intent(out), optional :: stat
        type(tridi_grid_t) :: grid
        type(tridi_arrays_t) :: arr
        integer(c_int) :: caxis
        integer(c_int64_t) :: clo(3), chi(3)
        logical :: ok
        call build_problem('tridi_solve', rank, axis, lo, hi, a, 5, grid, caxis, clo, chi, ok, stat)
        if (.not. ok) return
        if (any(chi(1:rank) < clo(1:rank))) then
            call finish(TRIDI_SUCCESS, .false., stat)
            return
        end if
        if (.not. has_cells('tridi_solve', a(1), stat)) return
        arr = tridi_arrays_t(a(1)%ptr, a(1)%dtype, a(2)%ptr, a(2)%dtype, a(3)%ptr, a(3)%dtype, &
                             a(4)%ptr, a(4)%dtype, a(5)%ptr, a(5)%dtype)
        call finish(tridi_solve_c(ctx%handle, grid, caxis, clo, chi, arr), .false., stat)
    end subroutine

    subroutine upload_common(ctx, rank, axis, lo, hi, a, role, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: rank, axis, lo(:), hi(:), role
        type(array_desc), intent(in) :: a
        integer, intent(out), optional :: stat
        type(tridi_grid_t) :: grid
        type(array_desc) :: one(1)
        integer(c_int) :: caxis
        integer(c_int64_t) :: clo(3), chi(3)
        logical :: ok
        one(1) = a
        one(1)%name = 'array'
        call build_problem('tridi_upload_async', rank, axis, lo, hi, one, 1, grid, caxis, clo, chi, ok, stat)
        if (.not. ok) return
        if (any(chi(1:rank) < clo(1:rank))) then
            call finish(TRIDI_SUCCESS, .false., stat)
            return
        end if
        if (.not. has_cells('tridi_upload_async', one(1), stat)) return
        call finish(tridi_upload_async_c(ctx%handle, grid, caxis, clo, chi, int(role, c_int), a%ptr, a%dtype), &
                    .false., stat)
    end subroutine

    ! Registration of a whole array. Pointer dummies as for the solves: never a compiler-made copy, which
    ! would be registered and then freed under the registration; a non-contiguous array is refused.
    subroutine register_common(ctx, func, a, rank, unregister, stat)
        type(tridi_context), intent(in) :: ctx
        character(*), intent(in) :: func
        type(array_desc), intent(in) :: a
        integer, intent(in) :: rank
        logical, intent(in) :: unregister
        integer, intent(out), optional :: stat
        integer(int64) :: bytes
        if (.not. a%present) then
            call tridi_set_error(TRIDI_ERROR_NULL_POINTER, func//': argument array is not associated', stat)
            return
        end if
        if (.not. a%contiguous) then
            call tridi_set_error(TRIDI_ERROR_UNSUPPORTED, func//': argument array is not contiguous; register '// &
                                 'whole model arrays', stat)
            return
        end if
        if (.not. c_associated(a%ptr)) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': argument array has no elements', stat)
            return
        end if
        if (unregister) then
            call finish(tridi_host_unregister_c(ctx%handle, a%ptr), .false., stat)
        else
            bytes = product(a%ub(1:rank) - a%lb(1:rank) + 1) * merge(8_int64, 4_int64, a%dtype == TRIDI_FLOAT64)
            call finish(tridi_host_register_c(ctx%handle, a%ptr, int(bytes, c_size_t)), .false., stat)
        end if
    end subroutine

    subroutine register_4_2d(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(4), pointer, intent(in) :: array(:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_4_2d(array, 'array')
        call register_common(ctx, 'tridi_host_register', d, 2, .false., stat)
    end subroutine

    subroutine register_4_3d(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(4), pointer, intent(in) :: array(:,:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_4_3d(array, 'array')
        call register_common(ctx, 'tridi_host_register', d, 3, .false., stat)
    end subroutine

    subroutine register_8_2d(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(8), pointer, intent(in) :: array(:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_8_2d(array, 'array')
        call register_common(ctx, 'tridi_host_register', d, 2, .false., stat)
    end subroutine

    subroutine register_8_3d(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(8), pointer, intent(in) :: array(:,:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_8_3d(array, 'array')
        call register_common(ctx, 'tridi_host_register', d, 3, .false., stat)
    end subroutine

    subroutine unregister_4_2d(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(4), pointer, intent(in) :: array(:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_4_2d(array, 'array')
        call register_common(ctx, 'tridi_host_unregister', d, 2, .true., stat)
    end subroutine

    subroutine unregister_4_3d(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(4), pointer, intent(in) :: array(:,:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_4_3d(array, 'array')
        call register_common(ctx, 'tridi_host_unregister', d, 3, .true., stat)
    end subroutine

    subroutine unregister_8_2d(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(8), pointer, intent(in) :: array(:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_8_2d(array, 'array')
        call register_common(ctx, 'tridi_host_unregister', d, 2, .true., stat)
    end subroutine

    subroutine unregister_8_3d(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(8), pointer, intent(in) :: array(:,:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_8_3d(array, 'array')
        call register_common(ctx, 'tridi_host_unregister', d, 3, .true., stat)
    end subroutine

    ! Solve on device arrays (CUDA backend). lbounds/ubounds: the allocated bounds of the grid (rank 2 or
    ! 3), lo/hi the box, axis 1..rank. dtype: type of lower, upper, rhs and x; diag_dtype: type of diag
    ! (default dtype; TRIDI_FLOAT64 with dtype TRIDI_FLOAT32 is MOHID's mix). stream: a cudaStream_t as
    ! c_ptr (default: the context's stream). Returns once the work is queued.
    subroutine tridi_solve_device(ctx, lbounds, ubounds, axis, lo, hi, lower, diag, upper, rhs, x, dtype, &
                                  diag_dtype, stream, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: lbounds(:), ubounds(:), axis, lo(:), hi(:)
        type(c_ptr), intent(in) :: lower, diag, upper, rhs, x
        integer, intent(in) :: dtype
        integer, intent(in), optional :: diag_dtype
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        type(array_desc) :: a(1)
        type(tridi_grid_t) :: grid
        type(tridi_arrays_t) :: arr
        integer(c_int) :: caxis, dt, ddt
        integer(c_int64_t) :: clo(3), chi(3)
        type(c_ptr) :: st
        logical :: ok
        integer :: rank
        rank = size(lbounds)
        if ((rank /= 2 .and. rank /= 3) .or. size(ubounds) /= rank) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, 'tridi_solve_device: lbounds and ubounds must both '// &
                                 'have 2 or 3 entries; got '//itoa(size(lbounds, kind=int64))//' and '// &
                                 itoa(size(ubounds, kind=int64)), stat)
            return
        end if
        a(1)%name = 'grid'
        a(1)%present = .true.
        a(1)%lb(1:rank) = lbounds
        a(1)%ub(1:rank) = ubounds
        call build_problem('tridi_solve_device', rank, axis, lo, hi, a, 1, grid, caxis, clo, chi, ok, stat)
        if (.not. ok) return
        dt = int(dtype, c_int)
        ddt = dt
        if (present(diag_dtype)) ddt = int(diag_dtype, c_int)
        st = c_null_ptr
        if (present(stream)) st = stream
        arr = tridi_arrays_t(lower, dt, diag, ddt, upper, dt, rhs, dt, x, dt)
        call finish(tridi_solve_device_c(ctx%handle, grid, caxis, clo, chi, arr, st), .false., stat)
    end subroutine

    subroutine tridi_device_alloc(ctx, bytes, device_ptr, stat)
        type(tridi_context), intent(in) :: ctx
        integer(int64), intent(in) :: bytes
        type(c_ptr), intent(out) :: device_ptr
        integer, intent(out), optional :: stat
        device_ptr = c_null_ptr
        if (bytes < 0) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, 'tridi_device_alloc: bytes = '//itoa(bytes)// &
                                 ' is negative', stat)
            return
        end if
        call finish(tridi_device_alloc_c(ctx%handle, int(bytes, c_size_t), device_ptr), .false., stat)
    end subroutine

    subroutine tridi_device_free(ctx, device_ptr, stat)
        type(tridi_context), intent(in) :: ctx
        type(c_ptr), intent(inout) :: device_ptr
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = tridi_device_free_c(ctx%handle, device_ptr)
        if (s == TRIDI_SUCCESS) device_ptr = c_null_ptr
        call finish(s, .false., stat)
    end subroutine

    subroutine solve_r4_2d(ctx, axis, lo, hi, D, E, F, Ti, X, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, lo(:), hi(:)
        real(4), pointer, intent(in) :: D(:,:), F(:,:), Ti(:,:), X(:,:)
        real(4), pointer, intent(in) :: E(:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_4_2d(D, 'D')
        if (associated(E)) a(2) = describe_4_2d(E, 'E')
        if (associated(F)) a(3) = describe_4_2d(F, 'F')
        if (associated(Ti)) a(4) = describe_4_2d(Ti, 'Ti')
        if (associated(X)) a(5) = describe_4_2d(X, 'X')
        a%name = [character(len=8) :: 'D', 'E', 'F', 'Ti', 'X']
        call solve_common(ctx, 2, axis, lo, hi, a, stat)
    end subroutine solve_r4_2d

    subroutine solve_r4_3d(ctx, axis, lo, hi, D, E, F, Ti, X, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, lo(:), hi(:)
        real(4), pointer, intent(in) :: D(:,:,:), F(:,:,:), Ti(:,:,:), X(:,:,:)
        real(4), pointer, intent(in) :: E(:,:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_4_3d(D, 'D')
        if (associated(E)) a(2) = describe_4_3d(E, 'E')
        if (associated(F)) a(3) = describe_4_3d(F, 'F')
        if (associated(Ti)) a(4) = describe_4_3d(Ti, 'Ti')
        if (associated(X)) a(5) = describe_4_3d(X, 'X')
        a%name = [character(len=8) :: 'D', 'E', 'F', 'Ti', 'X']
        call solve_common(ctx, 3, axis, lo, hi, a, stat)
    end subroutine solve_r4_3d

    subroutine solve_r8_2d(ctx, axis, lo, hi, D, E, F, Ti, X, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, lo(:), hi(:)
        real(8), pointer, intent(in) :: D(:,:), F(:,:), Ti(:,:), X(:,:)
        real(8), pointer, intent(in) :: E(:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_8_2d(D, 'D')
        if (associated(E)) a(2) = describe_8_2d(E, 'E')
        if (associated(F)) a(3) = describe_8_2d(F, 'F')
        if (associated(Ti)) a(4) = describe_8_2d(Ti, 'Ti')
        if (associated(X)) a(5) = describe_8_2d(X, 'X')
        a%name = [character(len=8) :: 'D', 'E', 'F', 'Ti', 'X']
        call solve_common(ctx, 2, axis, lo, hi, a, stat)
    end subroutine solve_r8_2d

    subroutine solve_r8_3d(ctx, axis, lo, hi, D, E, F, Ti, X, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, lo(:), hi(:)
        real(8), pointer, intent(in) :: D(:,:,:), F(:,:,:), Ti(:,:,:), X(:,:,:)
        real(8), pointer, intent(in) :: E(:,:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_8_3d(D, 'D')
        if (associated(E)) a(2) = describe_8_3d(E, 'E')
        if (associated(F)) a(3) = describe_8_3d(F, 'F')
        if (associated(Ti)) a(4) = describe_8_3d(Ti, 'Ti')
        if (associated(X)) a(5) = describe_8_3d(X, 'X')
        a%name = [character(len=8) :: 'D', 'E', 'F', 'Ti', 'X']
        call solve_common(ctx, 3, axis, lo, hi, a, stat)
    end subroutine solve_r8_3d

    subroutine solve_mixed_2d(ctx, axis, lo, hi, D, E, F, Ti, X, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, lo(:), hi(:)
        real(4), pointer, intent(in) :: D(:,:), F(:,:), Ti(:,:), X(:,:)
        real(8), pointer, intent(in) :: E(:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_4_2d(D, 'D')
        if (associated(E)) a(2) = describe_8_2d(E, 'E')
        if (associated(F)) a(3) = describe_4_2d(F, 'F')
        if (associated(Ti)) a(4) = describe_4_2d(Ti, 'Ti')
        if (associated(X)) a(5) = describe_4_2d(X, 'X')
        a%name = [character(len=8) :: 'D', 'E', 'F', 'Ti', 'X']
        call solve_common(ctx, 2, axis, lo, hi, a, stat)
    end subroutine solve_mixed_2d

    subroutine solve_mixed_3d(ctx, axis, lo, hi, D, E, F, Ti, X, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, lo(:), hi(:)
        real(4), pointer, intent(in) :: D(:,:,:), F(:,:,:), Ti(:,:,:), X(:,:,:)
        real(8), pointer, intent(in) :: E(:,:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_4_3d(D, 'D')
        if (associated(E)) a(2) = describe_8_3d(E, 'E')
        if (associated(F)) a(3) = describe_4_3d(F, 'F')
        if (associated(Ti)) a(4) = describe_4_3d(Ti, 'Ti')
        if (associated(X)) a(5) = describe_4_3d(X, 'X')
        a%name = [character(len=8) :: 'D', 'E', 'F', 'Ti', 'X']
        call solve_common(ctx, 3, axis, lo, hi, a, stat)
    end subroutine solve_mixed_3d

    function describe_4_2d(A, name) result(d)
        real(4), pointer, intent(in) :: A(:,:)
        character(*), intent(in) :: name
        type(array_desc) :: d
        d%name = name
        d%present = .true.
        d%dtype = TRIDI_FLOAT32
        d%lb(1:2) = lbound(A, kind=int64)
        d%ub(1:2) = ubound(A, kind=int64)
        d%contiguous = is_contiguous(A)
        if (d%contiguous .and. size(A, kind=int64) > 0) d%ptr = c_loc(A(lbound(A,1), lbound(A,2)))
    end function describe_4_2d

    subroutine upload_4_2d(ctx, axis, lo, hi, A, role, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, lo(:), hi(:), role
        real(4), pointer, intent(in) :: A(:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: a_desc
        if (associated(A)) a_desc = describe_4_2d(A, 'array')
        call upload_common(ctx, 2, axis, lo, hi, a_desc, role, stat)
    end subroutine upload_4_2d

    function describe_4_3d(A, name) result(d)
        real(4), pointer, intent(in) :: A(:,:,:)
        character(*), intent(in) :: name
        type(array_desc) :: d
        d%name = name
        d%present = .true.
        d%dtype = TRIDI_FLOAT32
        d%lb(1:3) = lbound(A, kind=int64)
        d%ub(1:3) = ubound(A, kind=int64)
        d%contiguous = is_contiguous(A)
        if (d%contiguous .and. size(A, kind=int64) > 0) d%ptr = c_loc(A(lbound(A,1), lbound(A,2), lbound(A,3)))
    end function describe_4_3d

    subroutine upload_4_3d(ctx, axis, lo, hi, A, role, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, lo(:), hi(:), role
        real(4), pointer, intent(in) :: A(:,:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: a_desc
        if (associated(A)) a_desc = describe_4_3d(A, 'array')
        call upload_common(ctx, 3, axis, lo, hi, a_desc, role, stat)
    end subroutine upload_4_3d

    function describe_8_2d(A, name) result(d)
        real(8), pointer, intent(in) :: A(:,:)
        character(*), intent(in) :: name
        type(array_desc) :: d
        d%name = name
        d%present = .true.
        d%dtype = TRIDI_FLOAT64
        d%lb(1:2) = lbound(A, kind=int64)
        d%ub(1:2) = ubound(A, kind=int64)
        d%contiguous = is_contiguous(A)
        if (d%contiguous .and. size(A, kind=int64) > 0) d%ptr = c_loc(A(lbound(A,1), lbound(A,2)))
    end function describe_8_2d

    subroutine upload_8_2d(ctx, axis, lo, hi, A, role, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, lo(:), hi(:), role
        real(8), pointer, intent(in) :: A(:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: a_desc
        if (associated(A)) a_desc = describe_8_2d(A, 'array')
        call upload_common(ctx, 2, axis, lo, hi, a_desc, role, stat)
    end subroutine upload_8_2d

    function describe_8_3d(A, name) result(d)
        real(8), pointer, intent(in) :: A(:,:,:)
        character(*), intent(in) :: name
        type(array_desc) :: d
        d%name = name
        d%present = .true.
        d%dtype = TRIDI_FLOAT64
        d%lb(1:3) = lbound(A, kind=int64)
        d%ub(1:3) = ubound(A, kind=int64)
        d%contiguous = is_contiguous(A)
        if (d%contiguous .and. size(A, kind=int64) > 0) d%ptr = c_loc(A(lbound(A,1), lbound(A,2), lbound(A,3)))
    end function describe_8_3d

    subroutine upload_8_3d(ctx, axis, lo, hi, A, role, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, lo(:), hi(:), role
        real(8), pointer, intent(in) :: A(:,:,:)
        integer, intent(out), optional :: stat
        type(array_desc) :: a_desc
        if (associated(A)) a_desc = describe_8_3d(A, 'array')
        call upload_common(ctx, 3, axis, lo, hi, a_desc, role, stat)
    end subroutine upload_8_3d

    subroutine to_device_4_1d(ctx, device_dst, host_src, stat)
        type(tridi_context), intent(in) :: ctx
        type(c_ptr), intent(in) :: device_dst
        real(4), contiguous, target, intent(in) :: host_src(:)
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_src) > 0) s = tridi_copy_to_device_c(ctx%handle, device_dst, c_loc(host_src), &
                                                           int(size(host_src, kind=int64) * 4, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_device_4_1d

    subroutine to_host_4_1d(ctx, host_dst, device_src, stat)
        type(tridi_context), intent(in) :: ctx
        real(4), contiguous, target, intent(inout) :: host_dst(:)
        type(c_ptr), intent(in) :: device_src
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_dst) > 0) s = tridi_copy_to_host_c(ctx%handle, c_loc(host_dst), device_src, &
                                                         int(size(host_dst, kind=int64) * 4, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_host_4_1d

    subroutine to_device_4_2d(ctx, device_dst, host_src, stat)
        type(tridi_context), intent(in) :: ctx
        type(c_ptr), intent(in) :: device_dst
        real(4), contiguous, target, intent(in) :: host_src(:,:)
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_src) > 0) s = tridi_copy_to_device_c(ctx%handle, device_dst, c_loc(host_src), &
                                                           int(size(host_src, kind=int64) * 4, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_device_4_2d

    subroutine to_host_4_2d(ctx, host_dst, device_src, stat)
        type(tridi_context), intent(in) :: ctx
        real(4), contiguous, target, intent(inout) :: host_dst(:,:)
        type(c_ptr), intent(in) :: device_src
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_dst) > 0) s = tridi_copy_to_host_c(ctx%handle, c_loc(host_dst), device_src, &
                                                         int(size(host_dst, kind=int64) * 4, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_host_4_2d

    subroutine to_device_4_3d(ctx, device_dst, host_src, stat)
        type(tridi_context), intent(in) :: ctx
        type(c_ptr), intent(in) :: device_dst
        real(4), contiguous, target, intent(in) :: host_src(:,:,:)
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_src) > 0) s = tridi_copy_to_device_c(ctx%handle, device_dst, c_loc(host_src), &
                                                           int(size(host_src, kind=int64) * 4, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_device_4_3d

    subroutine to_host_4_3d(ctx, host_dst, device_src, stat)
        type(tridi_context), intent(in) :: ctx
        real(4), contiguous, target, intent(inout) :: host_dst(:,:,:)
        type(c_ptr), intent(in) :: device_src
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_dst) > 0) s = tridi_copy_to_host_c(ctx%handle, c_loc(host_dst), device_src, &
                                                         int(size(host_dst, kind=int64) * 4, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_host_4_3d

    subroutine to_device_8_1d(ctx, device_dst, host_src, stat)
        type(tridi_context), intent(in) :: ctx
        type(c_ptr), intent(in) :: device_dst
        real(8), contiguous, target, intent(in) :: host_src(:)
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_src) > 0) s = tridi_copy_to_device_c(ctx%handle, device_dst, c_loc(host_src), &
                                                           int(size(host_src, kind=int64) * 8, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_device_8_1d

    subroutine to_host_8_1d(ctx, host_dst, device_src, stat)
        type(tridi_context), intent(in) :: ctx
        real(8), contiguous, target, intent(inout) :: host_dst(:)
        type(c_ptr), intent(in) :: device_src
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_dst) > 0) s = tridi_copy_to_host_c(ctx%handle, c_loc(host_dst), device_src, &
                                                         int(size(host_dst, kind=int64) * 8, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_host_8_1d

    subroutine to_device_8_2d(ctx, device_dst, host_src, stat)
        type(tridi_context), intent(in) :: ctx
        type(c_ptr), intent(in) :: device_dst
        real(8), contiguous, target, intent(in) :: host_src(:,:)
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_src) > 0) s = tridi_copy_to_device_c(ctx%handle, device_dst, c_loc(host_src), &
                                                           int(size(host_src, kind=int64) * 8, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_device_8_2d

    subroutine to_host_8_2d(ctx, host_dst, device_src, stat)
        type(tridi_context), intent(in) :: ctx
        real(8), contiguous, target, intent(inout) :: host_dst(:,:)
        type(c_ptr), intent(in) :: device_src
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_dst) > 0) s = tridi_copy_to_host_c(ctx%handle, c_loc(host_dst), device_src, &
                                                         int(size(host_dst, kind=int64) * 8, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_host_8_2d

    subroutine to_device_8_3d(ctx, device_dst, host_src, stat)
        type(tridi_context), intent(in) :: ctx
        type(c_ptr), intent(in) :: device_dst
        real(8), contiguous, target, intent(in) :: host_src(:,:,:)
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_src) > 0) s = tridi_copy_to_device_c(ctx%handle, device_dst, c_loc(host_src), &
                                                           int(size(host_src, kind=int64) * 8, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_device_8_3d

    subroutine to_host_8_3d(ctx, host_dst, device_src, stat)
        type(tridi_context), intent(in) :: ctx
        real(8), contiguous, target, intent(inout) :: host_dst(:,:,:)
        type(c_ptr), intent(in) :: device_src
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = 0
        if (size(host_dst) > 0) s = tridi_copy_to_host_c(ctx%handle, c_loc(host_dst), device_src, &
                                                         int(size(host_dst, kind=int64) * 8, c_size_t))
        call finish(s, .false., stat)
    end subroutine to_host_8_3d


end module tridi
