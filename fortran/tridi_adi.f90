! Module tridi_adi: the Fortran face of tridi's ADI steps (include/tridi.h, "ADI" section; docs/adi.md).
! Built on module tridi (context, tridi_adi_operator_t, constants) and the private module tridi_c_bindings
! (C interfaces, error store). Axis convention as in module tridi: 1 = i, 2 = j, 3 = k; bounds and boxes
! default or 64-bit integers.
!
!   use tridi
!   use tridi_adi
!   type(tridi_adi_operator_t) :: op
!   type(tridi_adi_plan) :: plan
!   call tridi_adi_operator_init(op)
!   op%spacing = h;  op%kappa = 0.1d0
!   call tridi_adi_create(plan, ctx, lbound(u), ubound(u), [1, 1, 1], [n, n, n], TRIDI_FLOAT64, op)
!   do step = 1, nsteps
!       call tridi_adi_step(plan, u, dt)
!   end do
!   call tridi_adi_destroy(plan)
!
! Fields are the model's own arrays (real(4) or real(8), contiguous; assumed-rank dummies) or, for
! device-resident data on the CUDA backend, c_ptr device addresses. The plan knows the grid's bounds, so
! the wrappers only check that an array has the plan's kind, rank and number of cells. op%kappa_field and
! op%velocity(:) are addresses (c_loc of a target array, or device pointers) that the plan keeps: the
! arrays must stay allocated while the plan lives. Errors: optional stat as in module tridi (absent: message + error stop).
module tridi_adi
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: int64
    use tridi_c_bindings
    use tridi, only: tridi_context
    implicit none
    private

    ! An ADI plan (C tridi_adi) with what the wrappers need to check arrays against it.
    type, public :: tridi_adi_plan
        type(c_ptr) :: handle = c_null_ptr
        integer :: ndim = 0
        integer :: dtype = -1
        integer(int64) :: cells = 0
    end type

    ! tridi_adi_step(plan, field, dt [, stream] [, stat])
    interface tridi_adi_step
        module procedure step_ptr, step_4, step_8
    end interface
    ! tridi_adi_sweep(plan, axis, lower, diag, upper, rhs, x [, stream] [, stat]); solving in place (x the
    ! rhs array itself) is allowed through the c_ptr form only, since Fortran forbids passing one array to
    ! an intent(in) and an intent(inout) dummy.
    interface tridi_adi_sweep
        module procedure sweep_ptr, sweep_4, sweep_8
    end interface

    public :: tridi_adi_operator_init, tridi_adi_create, tridi_adi_destroy, tridi_adi_step, tridi_adi_sweep, &
              tridi_adi_synchronize, tridi_adi_timings

contains

    ! Checks an array against the plan: kind (dtype), rank and number of cells. Returns .true. if it fits.
    logical function fits(plan, func, name, dtype, rank, cells, stat)
        type(tridi_adi_plan), intent(in) :: plan
        character(*), intent(in) :: func, name
        integer, intent(in) :: dtype, rank
        integer(int64), intent(in) :: cells
        integer, intent(out), optional :: stat
        character(len=160) :: msg
        fits = .false.
        if (.not. c_associated(plan%handle)) then
            call tridi_set_error(TRIDI_ERROR_INVALID_HANDLE, func//': the plan is not created (tridi_adi_create)', stat)
        else if (dtype /= plan%dtype) then
            write (msg, '(a,a,a,a,a)') func, ': ', name, ' is ', &
                merge('real(8) but the plan is real(4)', 'real(4) but the plan is real(8)', dtype == TRIDI_FLOAT64)
            call tridi_set_error(TRIDI_ERROR_UNSUPPORTED, trim(msg), stat)
        else if (rank /= plan%ndim) then
            write (msg, '(a,a,a,a,i0,a,i0,a)') func, ': ', name, ' has rank ', rank, ' but the plan''s grid is ', &
                plan%ndim, 'D'
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, trim(msg), stat)
        else if (cells /= plan%cells) then
            write (msg, '(a,a,a,a,i0,a,i0,a)') func, ': ', name, ' has ', cells, ' elements but the plan''s grid has ', &
                plan%cells, ' cells'
            call tridi_set_error(TRIDI_ERROR_BOUNDS, trim(msg), stat)
        else
            fits = .true.
        end if
    end function

    function stream_of(stream) result(s)
        type(c_ptr), intent(in), optional :: stream
        type(c_ptr) :: s
        s = c_null_ptr
        if (present(stream)) s = stream
    end function

    subroutine tridi_adi_operator_init(op)
        type(tridi_adi_operator_t), intent(out) :: op
        call tridi_adi_operator_init_c(op)
    end subroutine

    ! lbounds / ubounds: the allocated bounds of the model's arrays (size 2 or 3 = the grid's rank);
    ! lo / hi: the box of unknowns (all four default or 64-bit integers); dtype: TRIDI_FLOAT32 or
    ! TRIDI_FLOAT64.
    subroutine tridi_adi_create(plan, ctx, lbounds, ubounds, lo, hi, dtype, op, stat)
        type(tridi_adi_plan), intent(inout) :: plan
        type(tridi_context), intent(in) :: ctx
        class(*), intent(in) :: lbounds(:), ubounds(:), lo(:), hi(:)
        integer, intent(in) :: dtype
        type(tridi_adi_operator_t), intent(in) :: op
        integer, intent(out), optional :: stat
        character(*), parameter :: func = 'tridi_adi_create'
        type(tridi_grid_t) :: grid
        integer(c_int64_t) :: clo(3), chi(3)
        integer :: n
        integer(c_int) :: s
        logical :: ok
        n = size(lbounds)
        if (n /= 2 .and. n /= 3) then
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': lbounds has '//itoa(n)//' entries; the '// &
                                 'grid has rank 2 or 3', stat)
            return
        end if
        grid%ndim = int(n, c_int)
        call index_vector(func, 'lbounds', lbounds, n, grid%lbound, ok, stat)
        if (ok) call index_vector(func, 'ubounds', ubounds, n, grid%ubound, ok, stat)
        if (ok) call index_vector(func, 'lo', lo, n, clo, ok, stat)
        if (ok) call index_vector(func, 'hi', hi, n, chi, ok, stat)
        if (.not. ok) return
        s = tridi_adi_create_c(plan%handle, ctx%handle, grid, clo, chi, int(dtype, c_int), op)
        if (s == TRIDI_SUCCESS) then
            plan%ndim = n
            plan%dtype = dtype
            plan%cells = product(grid%ubound(1:n) - grid%lbound(1:n) + 1)
        else
            plan%handle = c_null_ptr
        end if
        call finish(s, stat)
    end subroutine

    subroutine tridi_adi_destroy(plan, stat)
        type(tridi_adi_plan), intent(inout) :: plan
        integer, intent(out), optional :: stat
        integer(c_int) :: s
        s = tridi_adi_destroy_c(plan%handle)
        plan%handle = c_null_ptr
        plan%cells = 0
        call finish(s, stat)
    end subroutine

    subroutine tridi_adi_synchronize(plan, stat)
        type(tridi_adi_plan), intent(in) :: plan
        integer, intent(out), optional :: stat
        call finish(tridi_adi_synchronize_c(plan%handle), stat)
    end subroutine

    ! With op%profile = 1: milliseconds per sweep (x, y, z) summed over the steps so far, and the steps.
    subroutine tridi_adi_timings(plan, sweep_ms, steps, stat)
        type(tridi_adi_plan), intent(in) :: plan
        real(c_double), intent(out) :: sweep_ms(3)
        integer(int64), intent(out), optional :: steps
        integer, intent(out), optional :: stat
        integer(c_int64_t) :: n
        call finish(tridi_adi_timings_c(plan%handle, sweep_ms, n), stat)
        if (present(steps)) steps = n
    end subroutine

    ! ---- steps ----

    subroutine step_ptr(plan, field, dt, stream, stat)
        type(tridi_adi_plan), intent(in) :: plan
        type(c_ptr), intent(in) :: field
        real(c_double), intent(in) :: dt
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        call finish(tridi_adi_step_c(plan%handle, field, dt, stream_of(stream)), stat)
    end subroutine

    subroutine step_4(plan, field, dt, stream, stat)
        type(tridi_adi_plan), intent(in) :: plan
        real(c_float), intent(inout), target, contiguous :: field(..)
        real(c_double), intent(in) :: dt
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        if (fits(plan, 'tridi_adi_step', 'field', TRIDI_FLOAT32, rank(field), size(field, kind=int64), stat)) &
            call finish(tridi_adi_step_c(plan%handle, c_loc(field), dt, stream_of(stream)), stat)
    end subroutine

    subroutine step_8(plan, field, dt, stream, stat)
        type(tridi_adi_plan), intent(in) :: plan
        real(c_double), intent(inout), target, contiguous :: field(..)
        real(c_double), intent(in) :: dt
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        if (fits(plan, 'tridi_adi_step', 'field', TRIDI_FLOAT64, rank(field), size(field, kind=int64), stat)) &
            call finish(tridi_adi_step_c(plan%handle, c_loc(field), dt, stream_of(stream)), stat)
    end subroutine

    ! ---- caller-diagonal sweeps ----

    ! Fortran axis (1 = i, 2 = j, 3 = k) -> C axis, checked against the plan's grid.
    logical function sweep_axis(plan, axis, caxis, stat)
        type(tridi_adi_plan), intent(in) :: plan
        integer, intent(in) :: axis
        integer(c_int), intent(out) :: caxis
        integer, intent(out), optional :: stat
        caxis = -1
        sweep_axis = .false.
        if (.not. c_associated(plan%handle)) then
            call tridi_set_error(TRIDI_ERROR_INVALID_HANDLE, 'tridi_adi_sweep: the plan is not created '// &
                                 '(tridi_adi_create)', stat)
            return
        end if
        call c_axis('tridi_adi_sweep', axis, plan%ndim, 'the plan''s #D grid', caxis, &
                    sweep_axis, stat)
    end function

    subroutine sweep_ptr(plan, axis, lower, diag, upper, rhs, x, stream, stat)
        type(tridi_adi_plan), intent(in) :: plan
        integer, intent(in) :: axis
        type(c_ptr), intent(in) :: lower, diag, upper, rhs, x
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        integer(c_int) :: caxis
        if (sweep_axis(plan, axis, caxis, stat)) &
            call finish(tridi_adi_sweep_c(plan%handle, caxis, lower, diag, upper, rhs, x, stream_of(stream)), stat)
    end subroutine

    subroutine sweep_4(plan, axis, lower, diag, upper, rhs, x, stream, stat)
        type(tridi_adi_plan), intent(in) :: plan
        integer, intent(in) :: axis
        real(c_float), intent(in), target, contiguous :: lower(..), diag(..), upper(..), rhs(..)
        real(c_float), intent(inout), target, contiguous :: x(..)
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        integer(c_int) :: caxis
        if (.not. sweep_axis(plan, axis, caxis, stat)) return
        if (all_fit(plan, TRIDI_FLOAT32, [rank(lower), rank(diag), rank(upper), rank(rhs), rank(x)], &
                    [size(lower, kind=int64), size(diag, kind=int64), size(upper, kind=int64), &
                     size(rhs, kind=int64), size(x, kind=int64)], stat)) &
            call finish(tridi_adi_sweep_c(plan%handle, caxis, c_loc(lower), c_loc(diag), c_loc(upper), c_loc(rhs), &
                                          c_loc(x), stream_of(stream)), stat)
    end subroutine

    subroutine sweep_8(plan, axis, lower, diag, upper, rhs, x, stream, stat)
        type(tridi_adi_plan), intent(in) :: plan
        integer, intent(in) :: axis
        real(c_double), intent(in), target, contiguous :: lower(..), diag(..), upper(..), rhs(..)
        real(c_double), intent(inout), target, contiguous :: x(..)
        type(c_ptr), intent(in), optional :: stream
        integer, intent(out), optional :: stat
        integer(c_int) :: caxis
        if (.not. sweep_axis(plan, axis, caxis, stat)) return
        if (all_fit(plan, TRIDI_FLOAT64, [rank(lower), rank(diag), rank(upper), rank(rhs), rank(x)], &
                    [size(lower, kind=int64), size(diag, kind=int64), size(upper, kind=int64), &
                     size(rhs, kind=int64), size(x, kind=int64)], stat)) &
            call finish(tridi_adi_sweep_c(plan%handle, caxis, c_loc(lower), c_loc(diag), c_loc(upper), c_loc(rhs), &
                                          c_loc(x), stream_of(stream)), stat)
    end subroutine

    logical function all_fit(plan, dtype, rank, cells, stat)
        type(tridi_adi_plan), intent(in) :: plan
        integer, intent(in) :: dtype, rank(5)
        integer(int64), intent(in) :: cells(5)
        integer, intent(out), optional :: stat
        character(len=5), parameter :: names(5) = ['lower', 'diag ', 'upper', 'rhs  ', 'x    ']
        integer :: i
        all_fit = .true.
        do i = 1, 5
            all_fit = fits(plan, 'tridi_adi_sweep', trim(names(i)), dtype, rank(i), cells(i), stat)
            if (.not. all_fit) return
        end do
    end function

end module tridi_adi
