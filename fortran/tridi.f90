! Module tridi: the Fortran interface of the tridi library (include/tridi.h), for gfortran and any
! Fortran 2008 compiler with ISO_C_BINDING; no CUDA Fortran. Wrappers that take the model's own arrays
! with their own bounds: tridi_create, tridi_solve, ... The C interfaces they call, the C enum and struct
! mirrors and the shared helpers live in the private module tridi_c_bindings; this module re-exports the
! constants and structs that belong to the API.
!
! Convention (the same in tridi_adi and tridi_mpi): axis is the Fortran dimension the lines run along,
! 1 = i, 2 = j, 3 = k (TRIDI_AXIS_I/J/K); lo, hi and bounds are Fortran indices, default or 64-bit
! integers.
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
    use, intrinsic :: iso_fortran_env, only: int64
    use tridi_c_bindings
    implicit none
    private

    ! The Fortran axis convention of every module (tridi, tridi_adi, tridi_mpi): axis is the Fortran
    ! dimension the lines run along. TRIDI_AXIS_X/Y/Z are the same numbers under the names of C's enum
    ! (whose values are 0, 1, 2: the C-side numbering never reaches Fortran code).
    integer, parameter, public :: TRIDI_AXIS_I = 1, TRIDI_AXIS_J = 2, TRIDI_AXIS_K = 3
    integer, parameter, public :: TRIDI_AXIS_X = TRIDI_AXIS_I, TRIDI_AXIS_Y = TRIDI_AXIS_J, &
                                  TRIDI_AXIS_Z = TRIDI_AXIS_K

    ! Mirrors of the C enums and structs, defined in the private module tridi_c_bindings.
    public :: TRIDI_SUCCESS, TRIDI_ERROR_NULL_POINTER, TRIDI_ERROR_INVALID_VALUE, TRIDI_ERROR_BOUNDS, &
              TRIDI_ERROR_UNSUPPORTED, TRIDI_ERROR_ALIASING, TRIDI_ERROR_ZERO_PIVOT, TRIDI_ERROR_NONFINITE, &
              TRIDI_ERROR_NO_DEVICE, TRIDI_ERROR_OUT_OF_MEMORY, TRIDI_ERROR_CUDA, TRIDI_ERROR_MPI, &
              TRIDI_ERROR_MISMATCH, TRIDI_ERROR_INVALID_HANDLE, TRIDI_ERROR_INTERNAL, TRIDI_ERROR_UNSTABLE
    public :: TRIDI_PIVOT_NONE, TRIDI_PIVOT_CHECK, TRIDI_PIVOT_FALLBACK
    public :: TRIDI_BACKEND_AUTO, TRIDI_BACKEND_CPU, TRIDI_BACKEND_CUDA, TRIDI_FLOAT32, TRIDI_FLOAT64
    public :: TRIDI_ROLE_LOWER, TRIDI_ROLE_DIAG, TRIDI_ROLE_UPPER, TRIDI_ROLE_RHS, TRIDI_ROLE_X
    public :: TRIDI_ADI_DOUGLAS, TRIDI_ADI_PEACEMAN_RACHFORD, TRIDI_ADI_DIRICHLET, TRIDI_ADI_ZERO_FLUX, &
              TRIDI_ADI_HARMONIC, TRIDI_ADI_ARITHMETIC
    public :: TRIDI_ON_ERROR_LINES, TRIDI_ON_ERROR_CALL, TRIDI_ARITH_DEFAULT, TRIDI_ARITH_MOHID, &
              TRIDI_ARITH_FAST, TRIDI_ARITH_MOHID_NEWTYPE, TRIDI_VERDICT_SYNC, TRIDI_VERDICT_DEFERRED
    public :: tridi_config_t, tridi_grid_t, tridi_arrays_t, tridi_adi_operator_t

    ! A tridi context (C tridi_context). Null until tridi_create; null again after tridi_destroy.
    type, public :: tridi_context
        type(c_ptr) :: handle = c_null_ptr
    end type

    ! A solve plan (C tridi_plan): one grid, axis, box and kind combination, validated once and solved
    ! many times. Null until tridi_plan_create; null again after tridi_plan_destroy. The grid's rank and
    ! bounds are kept here too, because the C plan's solves receive pointers only: tridi_plan_solve checks
    ! the arrays' bounds against them.
    type, public :: tridi_plan
        type(c_ptr) :: handle = c_null_ptr
        integer :: rank = 0
        integer(int64) :: lb(3) = 1, ub(3) = 1
        logical :: empty = .false., device = .false.
        integer(c_int) :: types(5) = TRIDI_FLOAT32
    end type

    ! One argument array as the wrappers see it, before it is handed to C.
    type :: array_desc
        character(len=8) :: name = ''
        logical :: present = .false., contiguous = .true.
        integer :: rank = 0
        integer(c_int) :: dtype = TRIDI_FLOAT32
        integer(int64) :: lb(3) = 1, ub(3) = 1, cells = 0
        type(c_ptr) :: ptr = c_null_ptr
    end type

    ! The address C gets for a zero-size array in a call with an empty box (never read: the box is empty).
    real(8), target, save :: empty_stand_in = 0

    ! ---- wrappers ----
    ! The arrays are assumed-rank (one specific per kind combination, written once for every rank); the
    ! ranks the C library takes (2 or 3; 1 to 3 for copies) are checked at run time with a status.
    !
    ! tridi_solve(ctx, axis, lo, hi, D, E, F, Ti, X [, stat]): kinds all real(4), all real(8), or MOHID's
    ! mix (E real(8), the others real(4)); rank 2 or 3.
    interface tridi_solve
        module procedure solve_r4, solve_r8, solve_mixed
    end interface
    ! tridi_plan_create(plan, ctx, axis, lo, hi, D, E, F, Ti, X [, on_error, arith, verdict, stat]): a plan
    ! for arrays of the shape and kinds of D, E, F, Ti, X (the kind combinations and ranks of tridi_solve;
    ! only their bounds and kinds are read). tridi_plan_solve(plan, D, E, F, Ti, X [, stat]): solves the
    ! plan's box on arrays of the plan's bounds and kinds.
    interface tridi_plan_create
        module procedure plan_create_r4, plan_create_r8, plan_create_mixed
    end interface
    interface tridi_plan_solve
        module procedure plan_solve_r4, plan_solve_r8, plan_solve_mixed
    end interface
    ! tridi_upload_async(ctx, axis, lo, hi, array, role [, stat]): real(4) or real(8), rank 2 or 3.
    interface tridi_upload_async
        module procedure upload_4, upload_8
    end interface
    ! tridi_host_register(ctx, array [, stat]) / tridi_host_unregister(ctx, array [, stat]): a whole
    ! real(4) or real(8) array of rank 2 or 3 (pointer or target), page-locked for direct DMA; unregister
    ! it before deallocating it.
    interface tridi_host_register
        module procedure register_4, register_8
    end interface
    interface tridi_host_unregister
        module procedure unregister_4, unregister_8
    end interface
    ! tridi_copy_to_device(ctx, device_dst, host_src [, stat]) / tridi_copy_to_host(ctx, host_dst,
    ! device_src [, stat]): whole contiguous real(4)/real(8) arrays of rank 1 to 3.
    interface tridi_copy_to_device
        module procedure to_device_4, to_device_8
    end interface
    interface tridi_copy_to_host
        module procedure to_host_4, to_host_8
    end interface
    public :: tridi_create, tridi_destroy, tridi_get_backend, tridi_backend_name, tridi_error_message, &
              tridi_status_name, tridi_error_cell, tridi_version_string, tridi_solve, tridi_upload_async, &
              tridi_solve_device, tridi_device_alloc, tridi_device_free, tridi_copy_to_device, &
              tridi_copy_to_host, tridi_synchronize, tridi_set_error, tridi_finish, tridi_host_register, &
              tridi_host_unregister, tridi_plan_create, tridi_plan_solve, tridi_plan_create_device, &
              tridi_plan_solve_device, tridi_plan_status, tridi_plan_destroy, tridi_build_info_string

contains

    ! ---- strings ----

    function tridi_backend_name(backend) result(name)
        integer, intent(in) :: backend
        character(len=:), allocatable :: name
        name = c_to_f_string(tridi_backend_name_c(int(backend, c_int)))
    end function

    function tridi_version_string() result(v)
        character(len=:), allocatable :: v
        v = c_to_f_string(tridi_version_string_c())
    end function

    ! What this build contains (C's tridi_build_info_string): backends, CUDA architectures, MPI, NCCL,
    ! Fortran, e.g. "tridi 0.1.0: cpu (OpenMP 201511), no cuda, mpi (halos: host), fortran".
    function tridi_build_info_string() result(v)
        character(len=:), allocatable :: v
        v = c_to_f_string(tridi_build_info_string_c())
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
    ! backend (default 0 = OpenMP's); verbose: print the backend chosen; allow_f32_transfer: see tridi.h;
    ! pivoting: TRIDI_PIVOT_NONE (default) / _CHECK / _FALLBACK (docs/errors.md, "When Thomas is stable");
    ! on_error: what a numerical failure does to X in tridi_solve: TRIDI_ON_ERROR_LINES (default: a failing
    ! line untouched, every other line answered) / TRIDI_ON_ERROR_CALL (X unchanged; docs/errors.md).
    subroutine tridi_create(ctx, backend, device, num_threads, verbose, allow_f32_transfer, stat, pivoting, on_error)
        type(tridi_context), intent(out) :: ctx
        integer, intent(in), optional :: backend, device, num_threads, pivoting, on_error
        logical, intent(in), optional :: verbose, allow_f32_transfer
        integer, intent(out), optional :: stat
        type(tridi_config_t) :: cfg
        call tridi_config_init_c(cfg)
        if (present(backend)) cfg%backend = int(backend, c_int)
        if (present(device)) cfg%device = int(device, c_int)
        if (present(num_threads)) cfg%num_threads = int(num_threads, c_int)
        if (present(verbose)) cfg%verbose = merge(1_c_int, 0_c_int, verbose)
        if (present(allow_f32_transfer)) cfg%allow_f32_transfer = merge(1_c_int, 0_c_int, allow_f32_transfer)
        if (present(pivoting)) cfg%pivoting = int(pivoting, c_int)
        if (present(on_error)) cfg%on_error = int(on_error, c_int)
        call finish(tridi_create_c(ctx%handle, cfg), stat)
    end subroutine

    ! Releases the context and all its buffers; a null context is accepted.
    subroutine tridi_destroy(ctx, stat)
        type(tridi_context), intent(inout) :: ctx
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = tridi_destroy_c(ctx%handle)
        ctx%handle = c_null_ptr
        call finish(s, stat)
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
        call finish(s, stat)
    end subroutine

    subroutine tridi_synchronize(ctx, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(out), optional :: stat
        call finish(tridi_synchronize_c(ctx%handle), stat)
    end subroutine

    ! ---- solves ----

    ! Checks what only Fortran knows (association, ranks, axis number, lo/hi entries, contiguity, equal
    ! bounds) and builds the C grid, axis and box; rank is the rank of the first array. ok = .false.: the
    ! failure has been recorded and stat set.
    subroutine build_problem(func, axis, lo, hi, a, n, rank, grid, caxis, clo, chi, ok, stat)
        character(*), intent(in) :: func
        integer, intent(in) :: axis, n
        class(*), intent(in) :: lo(:), hi(:)
        type(array_desc), intent(in) :: a(n)
        integer, intent(out) :: rank
        type(tridi_grid_t), intent(out) :: grid
        integer(c_int), intent(out) :: caxis
        integer(c_int64_t), intent(out) :: clo(3), chi(3)
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        integer :: i
        ok = .false.
        rank = a(1)%rank
        do i = 1, n
            if (.not. a(i)%present) then
                call tridi_set_error(TRIDI_ERROR_NULL_POINTER, func//': argument '//trim(a(i)%name)// &
                                     ' is not associated', stat)
                return
            end if
            if (a(i)%rank /= 2 .and. a(i)%rank /= 3) then
                call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': argument '//trim(a(i)%name)// &
                                     ' has rank '//itoa(a(i)%rank)//'; tridi solves arrays of rank 2 or 3', stat)
                return
            end if
            if (a(i)%rank /= rank) then
                call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': argument '//trim(a(i)%name)// &
                                     ' has rank '//itoa(a(i)%rank)//' but '//trim(a(1)%name)//' has rank '// &
                                     itoa(rank), stat)
                return
            end if
        end do
        call c_axis(func, axis, rank, 'the rank-# arrays', caxis, ok, stat)
        if (ok) call index_vector(func, 'lo', lo, rank, clo, ok, stat)
        if (ok) call index_vector(func, 'hi', hi, rank, chi, ok, stat)
        if (.not. ok) return
        ok = .false.
        do i = 1, n
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
        grid%lbound(1:rank) = a(1)%lb(1:rank)
        grid%ubound(1:rank) = a(1)%ub(1:rank)
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

    subroutine solve_common(ctx, axis, lo, hi, a, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        type(array_desc), intent(in) :: a(5)
        integer, intent(out), optional :: stat
        type(tridi_grid_t) :: grid
        type(tridi_arrays_t) :: arr
        integer(c_int) :: caxis
        integer(c_int64_t) :: clo(3), chi(3)
        integer :: rank
        logical :: ok
        integer :: i
        type(c_ptr) :: p(5)
        call build_problem('tridi_solve', axis, lo, hi, a, 5, rank, grid, caxis, clo, chi, ok, stat)
        if (.not. ok) return
        do i = 1, 5
            p(i) = a(i)%ptr
        end do
        if (any(chi(1:rank) < clo(1:rank))) then
            ! An empty box is a no-op, but the call is still C's: it checks the context and the corners as it
            ! does for any box. Zero-size arrays have no address and no cells: C gets a stand-in that it never
            ! reads (the box is empty) and a grid of one cell along their empty axes.
            do i = 1, 5
                if (.not. c_associated(p(i))) p(i) = c_loc(empty_stand_in)
            end do
            grid%ubound(1:rank) = max(grid%ubound(1:rank), grid%lbound(1:rank))
        else if (.not. has_cells('tridi_solve', a(1), stat)) then
            return
        end if
        arr = tridi_arrays_t(p(1), a(1)%dtype, p(2), a(2)%dtype, p(3), a(3)%dtype, p(4), a(4)%dtype, p(5), a(5)%dtype)
        call finish(tridi_solve_c(ctx%handle, grid, caxis, clo, chi, arr), stat)
    end subroutine

    subroutine upload_common(ctx, axis, lo, hi, a, role, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, role
        class(*), intent(in) :: lo(:), hi(:)
        type(array_desc), intent(in) :: a
        integer, intent(out), optional :: stat
        character(*), parameter :: func = 'tridi_upload_async'
        type(tridi_grid_t) :: grid
        type(array_desc) :: one(1)
        integer(c_int) :: caxis
        integer(c_int64_t) :: clo(3), chi(3)
        integer :: rank
        logical :: ok
        one(1) = a
        one(1)%name = 'array'
        call build_problem(func, axis, lo, hi, one, 1, rank, grid, caxis, clo, chi, ok, stat)
        if (.not. ok) return
        if (any(chi(1:rank) < clo(1:rank))) then
            call finish(TRIDI_SUCCESS, stat)
            return
        end if
        if (.not. has_cells(func, one(1), stat)) return
        call finish(tridi_upload_async_c(ctx%handle, grid, caxis, clo, chi, int(role, c_int), a%ptr, a%dtype), stat)
    end subroutine

    ! Registration of a whole array. Pointer dummies as for the solves: never a compiler-made copy, which
    ! would be registered and then freed under the registration; a non-contiguous array is refused.
    subroutine register_common(ctx, func, a, unregister, stat)
        type(tridi_context), intent(in) :: ctx
        character(*), intent(in) :: func
        type(array_desc), intent(in) :: a
        logical, intent(in) :: unregister
        integer, intent(out), optional :: stat
        integer(int64) :: bytes
        if (.not. a%present) then
            call tridi_set_error(TRIDI_ERROR_NULL_POINTER, func//': argument array is not associated', stat)
        else if (a%rank /= 2 .and. a%rank /= 3) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': argument array has rank '//itoa(a%rank)// &
                                 '; tridi registers arrays of rank 2 or 3', stat)
        else if (.not. a%contiguous) then
            call tridi_set_error(TRIDI_ERROR_UNSUPPORTED, func//': argument array is not contiguous; register '// &
                                 'whole model arrays', stat)
        else if (.not. c_associated(a%ptr)) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': argument array has no elements', stat)
        else if (unregister) then
            call finish(tridi_host_unregister_c(ctx%handle, a%ptr), stat)
        else
            bytes = a%cells * merge(8_int64, 4_int64, a%dtype == TRIDI_FLOAT64)
            call finish(tridi_host_register_c(ctx%handle, a%ptr, int(bytes, c_size_t)), stat)
        end if
    end subroutine

    subroutine register_4(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(4), pointer, intent(in) :: array(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_4(array, 'array')
        call register_common(ctx, 'tridi_host_register', d, .false., stat)
    end subroutine

    subroutine register_8(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(8), pointer, intent(in) :: array(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_8(array, 'array')
        call register_common(ctx, 'tridi_host_register', d, .false., stat)
    end subroutine

    subroutine unregister_4(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(4), pointer, intent(in) :: array(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_4(array, 'array')
        call register_common(ctx, 'tridi_host_unregister', d, .true., stat)
    end subroutine

    subroutine unregister_8(ctx, array, stat)
        type(tridi_context), intent(in) :: ctx
        real(8), pointer, intent(in) :: array(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: d
        if (associated(array)) d = describe_8(array, 'array')
        call register_common(ctx, 'tridi_host_unregister', d, .true., stat)
    end subroutine

    ! The grid of device arrays from its bounds, the axis and the box, checked as build_problem does.
    subroutine device_problem(func, lbounds, ubounds, axis, lo, hi, rank, grid, caxis, clo, chi, ok, stat)
        character(*), intent(in) :: func
        class(*), intent(in) :: lbounds(:), ubounds(:), lo(:), hi(:)
        integer, intent(in) :: axis
        integer, intent(out) :: rank
        type(tridi_grid_t), intent(out) :: grid
        integer(c_int), intent(out) :: caxis
        integer(c_int64_t), intent(out) :: clo(3), chi(3)
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        type(array_desc) :: a(1)
        integer(c_int64_t) :: lb(3), ub(3)
        ok = .false.
        rank = size(lbounds)
        if ((rank /= 2 .and. rank /= 3) .or. size(ubounds) /= rank) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': lbounds and ubounds must both '// &
                                 'have 2 or 3 entries; got '//itoa(size(lbounds))//' and '//itoa(size(ubounds)), stat)
            return
        end if
        call index_vector(func, 'lbounds', lbounds, rank, lb, ok, stat)
        if (ok) call index_vector(func, 'ubounds', ubounds, rank, ub, ok, stat)
        if (.not. ok) return
        a(1)%name = 'grid'
        a(1)%present = .true.
        a(1)%rank = rank
        a(1)%lb = lb
        a(1)%ub = ub
        call build_problem(func, axis, lo, hi, a, 1, rank, grid, caxis, clo, chi, ok, stat)
    end subroutine

    ! Solve on device arrays (CUDA backend). lbounds/ubounds: the allocated bounds of the grid (rank 2 or
    ! 3), lo/hi the box (all four default or 64-bit integers), axis 1..rank. dtype: type of lower, upper,
    ! rhs and x; diag_dtype: type of diag (default dtype; TRIDI_FLOAT64 with dtype TRIDI_FLOAT32 is MOHID's
    ! mix). stream: a cudaStream_t as c_ptr (default: the context's stream). Returns once the work is queued.
    subroutine tridi_solve_device(ctx, lbounds, ubounds, axis, lo, hi, lower, diag, upper, rhs, x, dtype, &
                                  diag_dtype, stream, stat)
        type(tridi_context), intent(in) :: ctx
        class(*), intent(in) :: lbounds(:), ubounds(:), lo(:), hi(:)
        integer, intent(in) :: axis
        type(c_ptr), intent(in) :: lower, diag, upper, rhs, x
        integer, intent(in) :: dtype
        integer, intent(in), optional :: diag_dtype
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        character(*), parameter :: func = 'tridi_solve_device'
        type(tridi_grid_t) :: grid
        type(tridi_arrays_t) :: arr
        integer(c_int) :: caxis, dt, ddt
        integer(c_int64_t) :: clo(3), chi(3)
        type(c_ptr) :: st
        logical :: ok
        integer :: rank
        call device_problem(func, lbounds, ubounds, axis, lo, hi, rank, grid, caxis, clo, chi, ok, stat)
        if (.not. ok) return
        dt = int(dtype, c_int)
        ddt = dt
        if (present(diag_dtype)) ddt = int(diag_dtype, c_int)
        st = c_null_ptr
        if (present(stream)) st = stream
        arr = tridi_arrays_t(lower, dt, diag, ddt, upper, dt, rhs, dt, x, dt)
        call finish(tridi_solve_device_c(ctx%handle, grid, caxis, clo, chi, arr, st), stat)
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
        call finish(tridi_device_alloc_c(ctx%handle, int(bytes, c_size_t), device_ptr), stat)
    end subroutine

    subroutine tridi_device_free(ctx, device_ptr, stat)
        type(tridi_context), intent(in) :: ctx
        type(c_ptr), intent(inout) :: device_ptr
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = tridi_device_free_c(ctx%handle, device_ptr)
        if (s == TRIDI_SUCCESS) device_ptr = c_null_ptr
        call finish(s, stat)
    end subroutine

    subroutine solve_r4(ctx, axis, lo, hi, D, E, F, Ti, X, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        real(4), pointer, intent(in) :: D(..), E(..), F(..), Ti(..), X(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_4(D, 'D')
        if (associated(E)) a(2) = describe_4(E, 'E')
        if (associated(F)) a(3) = describe_4(F, 'F')
        if (associated(Ti)) a(4) = describe_4(Ti, 'Ti')
        if (associated(X)) a(5) = describe_4(X, 'X')
        call solve_common(ctx, axis, lo, hi, named(a), stat)
    end subroutine

    subroutine solve_r8(ctx, axis, lo, hi, D, E, F, Ti, X, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        real(8), pointer, intent(in) :: D(..), E(..), F(..), Ti(..), X(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_8(D, 'D')
        if (associated(E)) a(2) = describe_8(E, 'E')
        if (associated(F)) a(3) = describe_8(F, 'F')
        if (associated(Ti)) a(4) = describe_8(Ti, 'Ti')
        if (associated(X)) a(5) = describe_8(X, 'X')
        call solve_common(ctx, axis, lo, hi, named(a), stat)
    end subroutine

    ! MOHID's mix: E real(8), the others real(4).
    subroutine solve_mixed(ctx, axis, lo, hi, D, E, F, Ti, X, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        real(4), pointer, intent(in) :: D(..), F(..), Ti(..), X(..)
        real(8), pointer, intent(in) :: E(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_4(D, 'D')
        if (associated(E)) a(2) = describe_8(E, 'E')
        if (associated(F)) a(3) = describe_4(F, 'F')
        if (associated(Ti)) a(4) = describe_4(Ti, 'Ti')
        if (associated(X)) a(5) = describe_4(X, 'X')
        call solve_common(ctx, axis, lo, hi, named(a), stat)
    end subroutine

    ! The solve's five descriptors with their argument names (also those of unassociated arrays).
    function named(a) result(b)
        type(array_desc), intent(in) :: a(5)
        type(array_desc) :: b(5)
        b = a
        b%name = [character(len=8) :: 'D', 'E', 'F', 'Ti', 'X']
    end function

    function describe_4(A, name) result(d)
        real(4), pointer, intent(in) :: A(..)
        character(*), intent(in) :: name
        type(array_desc) :: d
        call describe(d, name, rank(A), TRIDI_FLOAT32, lbound(A, kind=int64), ubound(A, kind=int64), &
                      size(A, kind=int64), is_contiguous(A))
        if (d%contiguous .and. d%cells > 0) d%ptr = c_loc(A)
    end function

    function describe_8(A, name) result(d)
        real(8), pointer, intent(in) :: A(..)
        character(*), intent(in) :: name
        type(array_desc) :: d
        call describe(d, name, rank(A), TRIDI_FLOAT64, lbound(A, kind=int64), ubound(A, kind=int64), &
                      size(A, kind=int64), is_contiguous(A))
        if (d%contiguous .and. d%cells > 0) d%ptr = c_loc(A)
    end function

    subroutine describe(d, name, rank, dtype, lb, ub, cells, contiguous)
        type(array_desc), intent(out) :: d
        character(*), intent(in) :: name
        integer, intent(in) :: rank
        integer(c_int), intent(in) :: dtype
        integer(int64), intent(in) :: lb(:), ub(:), cells
        logical, intent(in) :: contiguous
        d%name = name
        d%present = .true.
        d%rank = rank
        d%dtype = dtype
        d%cells = cells
        d%contiguous = contiguous
        if (rank <= 3) then
            d%lb(1:rank) = lb
            d%ub(1:rank) = ub
        end if
    end subroutine

    subroutine upload_4(ctx, axis, lo, hi, A, role, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, role
        class(*), intent(in) :: lo(:), hi(:)
        real(4), pointer, intent(in) :: A(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: a_desc
        if (associated(A)) a_desc = describe_4(A, 'array')
        call upload_common(ctx, axis, lo, hi, a_desc, role, stat)
    end subroutine

    subroutine upload_8(ctx, axis, lo, hi, A, role, stat)
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis, role
        class(*), intent(in) :: lo(:), hi(:)
        real(8), pointer, intent(in) :: A(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: a_desc
        if (associated(A)) a_desc = describe_8(A, 'array')
        call upload_common(ctx, axis, lo, hi, a_desc, role, stat)
    end subroutine

    ! ---- plans ----

    ! The C options from the wrappers' optional arguments (absent: tridi_solve_options_init's defaults).
    function plan_options(memory, on_error, arith, verdict, stream) result(o)
        integer(c_int), intent(in) :: memory
        integer, intent(in), optional :: on_error, arith, verdict
        type(c_ptr), intent(in), optional :: stream
        type(tridi_solve_options_t) :: o
        call tridi_solve_options_init_c(o)
        o%memory = memory
        if (present(on_error)) o%on_error = int(on_error, c_int)
        if (present(arith)) o%arith = int(arith, c_int)
        if (present(verdict)) o%verdict = int(verdict, c_int)
        if (present(stream)) o%stream = stream
    end function

    ! Makes the C plan of a checked grid and box; the Fortran plan keeps what its solves check.
    subroutine plan_make(plan, ctx, grid, rank, caxis, clo, chi, types, options, stat)
        type(tridi_plan), intent(inout) :: plan
        type(tridi_context), intent(in) :: ctx
        type(tridi_grid_t), intent(in) :: grid
        integer, intent(in) :: rank
        integer(c_int), intent(in) :: caxis, types(5)
        integer(c_int64_t), intent(in) :: clo(3), chi(3)
        type(tridi_solve_options_t), intent(in) :: options
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = tridi_plan_create_c(ctx%handle, grid, caxis, clo, chi, types, options, plan%handle)
        if (s == TRIDI_SUCCESS) then
            plan%rank = rank
            plan%lb = grid%lbound
            plan%ub = grid%ubound
            plan%empty = any(chi(1:rank) < clo(1:rank))
            plan%device = options%memory == TRIDI_MEMORY_DEVICE
            plan%types = types
        end if
        call finish(s, stat)
    end subroutine

    subroutine plan_create_common(plan, ctx, axis, lo, hi, a, on_error, arith, verdict, stat)
        type(tridi_plan), intent(inout) :: plan
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        type(array_desc), intent(in) :: a(5)
        integer, intent(in), optional :: on_error, arith, verdict
        integer, intent(out), optional :: stat
        type(tridi_grid_t) :: grid
        integer(c_int) :: caxis
        integer(c_int64_t) :: clo(3), chi(3)
        integer :: rank
        logical :: ok
        call build_problem('tridi_plan_create', axis, lo, hi, a, 5, rank, grid, caxis, clo, chi, ok, stat)
        if (.not. ok) return
        call plan_make(plan, ctx, grid, rank, caxis, clo, chi, a%dtype, &
                       plan_options(TRIDI_MEMORY_HOST, on_error, arith, verdict), stat)
    end subroutine

    ! A null handle (never created, or destroyed through this variable) is refused here with a message;
    ! a handle destroyed through a copy of the variable is refused by C (TRIDI_ERROR_INVALID_HANDLE too).
    logical function plan_usable(func, plan, device, stat) result(ok)
        character(*), intent(in) :: func
        type(tridi_plan), intent(in) :: plan
        logical, intent(in) :: device
        integer, intent(out), optional :: stat
        ok = .false.
        if (.not. c_associated(plan%handle)) then
            call tridi_set_error(TRIDI_ERROR_INVALID_HANDLE, func//': argument plan is null (not made by '// &
                                 'tridi_plan_create, or destroyed by tridi_plan_destroy)', stat)
        else if (plan%device .and. .not. device) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': argument plan was made for device arrays '// &
                                 '(tridi_plan_create_device); solve it with tridi_plan_solve_device', stat)
        else if (device .and. .not. plan%device) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': argument plan was made for host arrays '// &
                                 '(tridi_plan_create); solve it with tridi_plan_solve', stat)
        else
            ok = .true.
        end if
    end function

    subroutine plan_solve_common(plan, a, stat)
        type(tridi_plan), intent(in) :: plan
        type(array_desc), intent(in) :: a(5)
        integer, intent(out), optional :: stat
        character(*), parameter :: func = 'tridi_plan_solve'
        type(array_desc) :: grid
        type(tridi_arrays_t) :: arr
        integer :: i, r
        if (.not. plan_usable(func, plan, .false., stat)) return
        r = plan%rank
        grid%rank = r
        grid%lb = plan%lb
        grid%ub = plan%ub
        do i = 1, 5
            if (.not. a(i)%present) then
                call tridi_set_error(TRIDI_ERROR_NULL_POINTER, func//': argument '//trim(a(i)%name)// &
                                     ' is not associated', stat)
                return
            end if
            if (a(i)%rank /= r) then
                call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': argument '//trim(a(i)%name)// &
                                     ' has rank '//itoa(a(i)%rank)//' but the plan was made for rank '//itoa(r), stat)
                return
            end if
            if (.not. a(i)%contiguous) then
                call tridi_set_error(TRIDI_ERROR_UNSUPPORTED, func//': argument '//trim(a(i)%name)// &
                                     ' is not contiguous; tridi works in place on whole model arrays and '// &
                                     'never solves into a copy', stat)
                return
            end if
            if (any(a(i)%lb(1:r) /= plan%lb(1:r)) .or. any(a(i)%ub(1:r) /= plan%ub(1:r))) then
                call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': argument '//trim(a(i)%name)// &
                                     ' has bounds '//bounds_text(a(i), r)//' but the plan was made for '// &
                                     bounds_text(grid, r), stat)
                return
            end if
        end do
        if (plan%empty) then
            ! Nothing to solve; C still says whether the plan is alive.
            call finish(tridi_plan_status_c(plan%handle), stat)
            return
        end if
        if (.not. has_cells(func, a(1), stat)) return
        arr = tridi_arrays_t(a(1)%ptr, a(1)%dtype, a(2)%ptr, a(2)%dtype, a(3)%ptr, a(3)%dtype, &
                             a(4)%ptr, a(4)%dtype, a(5)%ptr, a(5)%dtype)
        call finish(tridi_plan_solve_c(plan%handle, arr), stat)
    end subroutine

    subroutine plan_create_r4(plan, ctx, axis, lo, hi, D, E, F, Ti, X, on_error, arith, verdict, stat)
        type(tridi_plan), intent(out) :: plan
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        real(4), pointer, intent(in) :: D(..), E(..), F(..), Ti(..), X(..)
        integer, intent(in), optional :: on_error, arith, verdict
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_4(D, 'D')
        if (associated(E)) a(2) = describe_4(E, 'E')
        if (associated(F)) a(3) = describe_4(F, 'F')
        if (associated(Ti)) a(4) = describe_4(Ti, 'Ti')
        if (associated(X)) a(5) = describe_4(X, 'X')
        call plan_create_common(plan, ctx, axis, lo, hi, named(a), on_error, arith, verdict, stat)
    end subroutine

    subroutine plan_create_r8(plan, ctx, axis, lo, hi, D, E, F, Ti, X, on_error, arith, verdict, stat)
        type(tridi_plan), intent(out) :: plan
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        real(8), pointer, intent(in) :: D(..), E(..), F(..), Ti(..), X(..)
        integer, intent(in), optional :: on_error, arith, verdict
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_8(D, 'D')
        if (associated(E)) a(2) = describe_8(E, 'E')
        if (associated(F)) a(3) = describe_8(F, 'F')
        if (associated(Ti)) a(4) = describe_8(Ti, 'Ti')
        if (associated(X)) a(5) = describe_8(X, 'X')
        call plan_create_common(plan, ctx, axis, lo, hi, named(a), on_error, arith, verdict, stat)
    end subroutine

    ! MOHID's mix: E real(8), the others real(4).
    subroutine plan_create_mixed(plan, ctx, axis, lo, hi, D, E, F, Ti, X, on_error, arith, verdict, stat)
        type(tridi_plan), intent(out) :: plan
        type(tridi_context), intent(in) :: ctx
        integer, intent(in) :: axis
        class(*), intent(in) :: lo(:), hi(:)
        real(4), pointer, intent(in) :: D(..), F(..), Ti(..), X(..)
        real(8), pointer, intent(in) :: E(..)
        integer, intent(in), optional :: on_error, arith, verdict
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_4(D, 'D')
        if (associated(E)) a(2) = describe_8(E, 'E')
        if (associated(F)) a(3) = describe_4(F, 'F')
        if (associated(Ti)) a(4) = describe_4(Ti, 'Ti')
        if (associated(X)) a(5) = describe_4(X, 'X')
        call plan_create_common(plan, ctx, axis, lo, hi, named(a), on_error, arith, verdict, stat)
    end subroutine

    subroutine plan_solve_r4(plan, D, E, F, Ti, X, stat)
        type(tridi_plan), intent(in) :: plan
        real(4), pointer, intent(in) :: D(..), E(..), F(..), Ti(..), X(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_4(D, 'D')
        if (associated(E)) a(2) = describe_4(E, 'E')
        if (associated(F)) a(3) = describe_4(F, 'F')
        if (associated(Ti)) a(4) = describe_4(Ti, 'Ti')
        if (associated(X)) a(5) = describe_4(X, 'X')
        call plan_solve_common(plan, named(a), stat)
    end subroutine

    subroutine plan_solve_r8(plan, D, E, F, Ti, X, stat)
        type(tridi_plan), intent(in) :: plan
        real(8), pointer, intent(in) :: D(..), E(..), F(..), Ti(..), X(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_8(D, 'D')
        if (associated(E)) a(2) = describe_8(E, 'E')
        if (associated(F)) a(3) = describe_8(F, 'F')
        if (associated(Ti)) a(4) = describe_8(Ti, 'Ti')
        if (associated(X)) a(5) = describe_8(X, 'X')
        call plan_solve_common(plan, named(a), stat)
    end subroutine

    subroutine plan_solve_mixed(plan, D, E, F, Ti, X, stat)
        type(tridi_plan), intent(in) :: plan
        real(4), pointer, intent(in) :: D(..), F(..), Ti(..), X(..)
        real(8), pointer, intent(in) :: E(..)
        integer, intent(out), optional :: stat
        type(array_desc) :: a(5)
        if (associated(D)) a(1) = describe_4(D, 'D')
        if (associated(E)) a(2) = describe_8(E, 'E')
        if (associated(F)) a(3) = describe_4(F, 'F')
        if (associated(Ti)) a(4) = describe_4(Ti, 'Ti')
        if (associated(X)) a(5) = describe_4(X, 'X')
        call plan_solve_common(plan, named(a), stat)
    end subroutine

    ! A plan for device arrays (CUDA backend); the arguments of tridi_solve_device, plus the contract.
    ! verdict: TRIDI_VERDICT_SYNC (default) or _DEFERRED (failures reported by tridi_plan_status).
    subroutine tridi_plan_create_device(plan, ctx, lbounds, ubounds, axis, lo, hi, dtype, diag_dtype, &
                                        on_error, arith, verdict, stream, stat)
        type(tridi_plan), intent(out) :: plan
        type(tridi_context), intent(in) :: ctx
        class(*), intent(in) :: lbounds(:), ubounds(:), lo(:), hi(:)
        integer, intent(in) :: axis, dtype
        integer, intent(in), optional :: diag_dtype, on_error, arith, verdict
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        type(tridi_grid_t) :: grid
        integer(c_int) :: caxis, types(5)
        integer(c_int64_t) :: clo(3), chi(3)
        integer :: rank
        logical :: ok
        call device_problem('tridi_plan_create_device', lbounds, ubounds, axis, lo, hi, rank, grid, caxis, &
                            clo, chi, ok, stat)
        if (.not. ok) return
        types = int(dtype, c_int)
        if (present(diag_dtype)) types(2) = int(diag_dtype, c_int)
        call plan_make(plan, ctx, grid, rank, caxis, clo, chi, types, &
                       plan_options(TRIDI_MEMORY_DEVICE, on_error, arith, verdict, stream), stat)
    end subroutine

    ! Solves a device plan's box on device arrays of its grid and types (c_ptr from tridi_device_alloc).
    subroutine tridi_plan_solve_device(plan, lower, diag, upper, rhs, x, stat)
        type(tridi_plan), intent(in) :: plan
        type(c_ptr), intent(in) :: lower, diag, upper, rhs, x
        integer, intent(out), optional :: stat
        if (.not. plan_usable('tridi_plan_solve_device', plan, .true., stat)) return
        call finish(tridi_plan_solve_c(plan%handle, tridi_arrays_t(lower, plan%types(1), diag, plan%types(2), &
                    upper, plan%types(3), rhs, plan%types(4), x, plan%types(5))), stat)
    end subroutine

    ! Waits for a device plan's queued solves and reports their first numerical failure (SUCCESS for
    ! host plans, whose solves report their own).
    subroutine tridi_plan_status(plan, stat)
        type(tridi_plan), intent(in) :: plan
        integer, intent(out), optional :: stat
        call finish(tridi_plan_status_c(plan%handle), stat)
    end subroutine

    ! Frees the plan (after its queued work); a null plan is accepted. The variable is null afterwards.
    subroutine tridi_plan_destroy(plan, stat)
        type(tridi_plan), intent(inout) :: plan
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = tridi_plan_destroy_c(plan%handle)
        plan = tridi_plan()
        call finish(s, stat)
    end subroutine

    ! ---- whole-array copies between host and device ----

    subroutine copy_common(ctx, func, to_device, device, host, rank, bytes, stat)
        type(tridi_context), intent(in) :: ctx
        character(*), intent(in) :: func
        logical, intent(in) :: to_device
        type(c_ptr), intent(in) :: device, host
        integer, intent(in) :: rank
        integer(int64), intent(in) :: bytes
        integer, intent(out), optional :: stat
        if (rank < 1 .or. rank > 3) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': the host array has rank '//itoa(rank)// &
                                 '; tridi copies arrays of rank 1 to 3', stat)
        else if (bytes == 0) then
            call finish(TRIDI_SUCCESS, stat)
        else if (to_device) then
            call finish(tridi_copy_to_device_c(ctx%handle, device, host, int(bytes, c_size_t)), stat)
        else
            call finish(tridi_copy_to_host_c(ctx%handle, host, device, int(bytes, c_size_t)), stat)
        end if
    end subroutine

    subroutine to_device_4(ctx, device_dst, host_src, stat)
        type(tridi_context), intent(in) :: ctx
        type(c_ptr), intent(in) :: device_dst
        real(4), contiguous, target, intent(in) :: host_src(..)
        integer, intent(out), optional :: stat
        type(c_ptr) :: p
        p = c_null_ptr
        if (size(host_src, kind=int64) > 0) p = c_loc(host_src)
        call copy_common(ctx, 'tridi_copy_to_device', .true., device_dst, p, rank(host_src), &
                         size(host_src, kind=int64) * 4, stat)
    end subroutine

    subroutine to_device_8(ctx, device_dst, host_src, stat)
        type(tridi_context), intent(in) :: ctx
        type(c_ptr), intent(in) :: device_dst
        real(8), contiguous, target, intent(in) :: host_src(..)
        integer, intent(out), optional :: stat
        type(c_ptr) :: p
        p = c_null_ptr
        if (size(host_src, kind=int64) > 0) p = c_loc(host_src)
        call copy_common(ctx, 'tridi_copy_to_device', .true., device_dst, p, rank(host_src), &
                         size(host_src, kind=int64) * 8, stat)
    end subroutine

    subroutine to_host_4(ctx, host_dst, device_src, stat)
        type(tridi_context), intent(in) :: ctx
        real(4), contiguous, target, intent(inout) :: host_dst(..)
        type(c_ptr), intent(in) :: device_src
        integer, intent(out), optional :: stat
        type(c_ptr) :: p
        p = c_null_ptr
        if (size(host_dst, kind=int64) > 0) p = c_loc(host_dst)
        call copy_common(ctx, 'tridi_copy_to_host', .false., device_src, p, rank(host_dst), &
                         size(host_dst, kind=int64) * 4, stat)
    end subroutine

    subroutine to_host_8(ctx, host_dst, device_src, stat)
        type(tridi_context), intent(in) :: ctx
        real(8), contiguous, target, intent(inout) :: host_dst(..)
        type(c_ptr), intent(in) :: device_src
        integer, intent(out), optional :: stat
        type(c_ptr) :: p
        p = c_null_ptr
        if (size(host_dst, kind=int64) > 0) p = c_loc(host_dst)
        call copy_common(ctx, 'tridi_copy_to_host', .false., device_src, p, rank(host_dst), &
                         size(host_dst, kind=int64) * 8, stat)
    end subroutine

end module tridi
