! Module tridi_mohid: drop-in replacements for MOHID's Thomas routines (Software/MOHIDBase1/
! ModuleFunctions.F90: THOMAS_3D, THOMASZ, THOMAS_2D), solved by tridi. Every MOHID convention lives
! here and nowhere else; module tridi and the C library stay model-neutral.
!
! MOHID conventions reproduced (docs/mohid-guide.md):
!  - unknowns run from JImin to JImax+1 (THOMAS_3D/2D) and from KLB to KUB+1 (THOMASZ): the cell past
!    the upper index is the boundary row the caller set up;
!  - (di, dj) = (0, 1): lines along J; (1, 0): lines along I; anything else is an error (MOHID stops);
!  - THOMASZ reads the first row of every column at K = 1, not at KLB; THOMAS_2D reads it at
!    (IJmin-1 + IJ*dj + di, JImin-1 + IJ*di + dj). Where that cell is not the line's first cell, the
!    box of the diagonals is copied with the first row replaced, so the library keeps its own
!    convention and the caller's arrays are never written;
!  - THOMASZ with WaterPoints (THOMASZ_NewType2): columns with WaterPoints(I,J,KUB) /= 1 are land and
!    their RES cells are left untouched; their rows are replaced by identity rows in a copy, so a land
!    column can never fail the solve;
!  - VECG and VECW are accepted and ignored: tridi needs no workspace from the caller.
! Whether the adapter solves on copies never changes the answer: contiguity and overlap are checked on
! the caller's arrays first (a strided section: TRIDI_ERROR_UNSUPPORTED; an answer overlapping D, E, F or
! partly Ti: TRIDI_ERROR_ALIASING), with or without the first-row quirk or land columns.
! Errors: stat (optional) receives 0 or the tridi status, tridi_error_message() the message; with stat
! absent an error prints the message and stops, as MOHID's own routines stop on bad (di, dj).
module tridi_mohid
    use, intrinsic :: iso_c_binding, only: c_ptr, c_loc, c_associated, c_null_ptr, c_intptr_t
    use, intrinsic :: iso_fortran_env, only: int64
    use tridi, only: tridi_context, tridi_create, tridi_destroy, tridi_solve, tridi_upload_async, &
                     tridi_host_register, tridi_host_unregister, &
                     tridi_plan, tridi_plan_create, tridi_plan_solve, tridi_plan_destroy, &
                     TRIDI_ON_ERROR_CALL, TRIDI_ARITH_MOHID, &
                     tridi_error_message, tridi_set_error, tridi_finish, tridi_status_name, &
                     TRIDI_SUCCESS, TRIDI_ERROR_INVALID_VALUE, TRIDI_ERROR_BOUNDS, TRIDI_ERROR_NULL_POINTER, &
                     TRIDI_ERROR_UNSUPPORTED, TRIDI_ERROR_ALIASING, TRIDI_ERROR_ZERO_PIVOT, TRIDI_ERROR_NONFINITE, &
                     TRIDI_BACKEND_AUTO, TRIDI_BACKEND_CPU, TRIDI_BACKEND_CUDA, &
                     TRIDI_ROLE_LOWER, TRIDI_ROLE_DIAG, TRIDI_ROLE_UPPER, TRIDI_ROLE_RHS
    implicit none
    private

    public :: tridi_mohid_init, tridi_mohid_finalize, tridi_mohid_context
    public :: tridi_thomas_3d, tridi_thomasz, tridi_thomas_2d
    public :: tridi_mohid_upload_3d, tridi_mohid_upload_z, tridi_mohid_upload_2d
    public :: tridi_mohid_register, tridi_mohid_unregister
    ! Re-exported so a MOHID module needs only `use tridi_mohid`.
    public :: tridi_error_message, tridi_status_name, TRIDI_SUCCESS, TRIDI_ERROR_INVALID_VALUE, &
              TRIDI_ERROR_BOUNDS, TRIDI_ERROR_NULL_POINTER, TRIDI_ERROR_UNSUPPORTED, TRIDI_ERROR_ALIASING, &
              TRIDI_ERROR_ZERO_PIVOT, TRIDI_ERROR_NONFINITE, TRIDI_BACKEND_AUTO, TRIDI_BACKEND_CPU, TRIDI_BACKEND_CUDA, &
              TRIDI_ROLE_LOWER, TRIDI_ROLE_DIAG, TRIDI_ROLE_UPPER, TRIDI_ROLE_RHS

    ! Per-array uploads for the 3D and 2D sweeps: real(4) D/F/Ti or real(8) E.
    interface tridi_mohid_upload_3d
        module procedure upload_3d_r4, upload_3d_r8
    end interface
    interface tridi_mohid_upload_z
        module procedure upload_z_r4, upload_z_r8
    end interface
    interface tridi_mohid_upload_2d
        module procedure upload_2d_r4, upload_2d_r8
    end interface

    ! Registration of a MOHID array set (D, E, F, Ti, ANSWER; THOMASZ's AW, BW, CW, TIW, RES) for direct DMA.
    interface tridi_mohid_register
        module procedure register_3d, register_2d
    end interface
    interface tridi_mohid_unregister
        module procedure unregister_3d, unregister_2d
    end interface
    interface address
        module procedure address_4_3d, address_8_3d, address_4_2d, address_8_2d
    end interface

    ! The adapter's one context, created on first use (backend from TRIDI_BACKEND) or by tridi_mohid_init.
    type(tridi_context), save :: ctx
    logical, save :: ready = .false.
    ! First elements of the arrays registered through the adapter: an array shared by several sets
    ! (MOHID's COEF3 diagonals serve every sweep) is registered once.
    type(c_ptr), allocatable, save :: registered(:)
    integer, save :: nregistered = 0

    ! The adapter's plans (issue 26, decision 1): a model calls the same few sweeps every time step, so
    ! each (grid bounds, box, axis) it solves gets a plan, validated once and reused; when all max_plans
    ! are taken the least recently used one makes room. Every plan is ON_ERROR_CALL with MOHID's
    ! arithmetic: MOHID's answers bit for bit, and the answer array unchanged when a call fails, whatever
    ! tridi_solve's default (ON_ERROR_LINES, docs/decisions/019): half a MOHID sweep is worth nothing to
    ! the model, and a caller that recovers from the error (a smaller time step) needs ANSWER as it was.
    ! The kind combination is always MOHID's (E real(8), the others real(4)). They belong to the adapter's
    ! context and go before it (tridi_mohid_init, tridi_mohid_finalize).
    integer, parameter :: max_plans = 16
    type :: kept_plan
        type(tridi_plan) :: plan
        integer :: rank = 0, axis = 0, lb(3) = 0, ub(3) = 0, lo(3) = 0, hi(3) = 0
        integer(int64) :: last_use = 0
    end type
    type(kept_plan), save :: kept(max_plans)
    integer(int64), save :: uses = 0

contains

    ! Creates (or re-creates) the adapter's context. backend: TRIDI_BACKEND_AUTO/CPU/CUDA (default: the
    ! environment variable TRIDI_BACKEND, else AUTO).
    subroutine tridi_mohid_init(backend, device, num_threads, verbose, stat)
        integer, intent(in), optional :: backend, device, num_threads
        logical, intent(in), optional :: verbose
        integer, intent(out), optional :: stat
        integer :: s
        call drop_plans()
        if (ready) call tridi_destroy(ctx, s)
        ready = .false.
        nregistered = 0 ! tridi_destroy unregistered them
        call tridi_create(ctx, backend=backend, device=device, num_threads=num_threads, verbose=verbose, stat=s)
        ready = s == TRIDI_SUCCESS
        call pass_on('tridi_mohid_init', s, stat)
    end subroutine

    subroutine tridi_mohid_finalize(stat)
        integer, intent(out), optional :: stat
        integer :: s
        s = TRIDI_SUCCESS
        call drop_plans()
        if (ready) call tridi_destroy(ctx, s)
        ready = .false.
        nregistered = 0
        call pass_on('tridi_mohid_finalize', s, stat)
    end subroutine

    ! The adapter's context (created if needed), for calls of module tridi on the same device.
    subroutine tridi_mohid_context(context, stat)
        type(tridi_context), intent(out) :: context
        integer, intent(out), optional :: stat
        logical :: ok
        call ensure_ready('tridi_mohid_context', ok, stat)
        if (ok) context = ctx
    end subroutine

    subroutine ensure_ready(func, ok, stat)
        character(*), intent(in) :: func
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        integer :: s
        if (present(stat)) stat = TRIDI_SUCCESS
        ok = ready
        if (ready) return
        call tridi_create(ctx, stat=s)
        ready = s == TRIDI_SUCCESS
        ok = ready
        if (.not. ok) call pass_on(func, s, stat)
    end subroutine

    ! Hands a status from module tridi to the caller, the message prefixed with the MOHID routine's name.
    subroutine pass_on(func, s, stat)
        character(*), intent(in) :: func
        integer, intent(in) :: s
        integer, intent(out), optional :: stat
        if (s == TRIDI_SUCCESS) then
            call tridi_finish(s, stat)
        else
            call tridi_set_error(s, func//': '//tridi_error_message(), stat)
        end if
    end subroutine

    function itoa(i) result(s)
        integer, intent(in) :: i
        character(len=:), allocatable :: s
        character(len=16) :: buf
        write (buf, '(i0)') i
        s = trim(buf)
    end function

    function range_text(lo, hi) result(s)
        integer, intent(in) :: lo(:), hi(:)
        character(len=:), allocatable :: s
        integer :: a
        s = '('
        do a = 1, size(lo)
            s = s//itoa(lo(a))//':'//itoa(hi(a))
            if (a < size(lo)) s = s//', '
        end do
        s = s//')'
    end function

    ! (di, dj) -> dimension of the lines (1 = I, 2 = J) and the box of unknowns, MOHID's +1 included.
    subroutine sweep_box(func, IJmin, IJmax, JImin, JImax, di, dj, axis, lo, hi, ok, stat)
        character(*), intent(in) :: func
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj
        integer, intent(out) :: axis, lo(2), hi(2)
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        ok = .true.
        if (di == 0 .and. dj == 1) then
            axis = 2
            lo = [IJmin, JImin]
            hi = [IJmax, JImax + 1]
        else if (di == 1 .and. dj == 0) then
            axis = 1
            lo = [JImin, IJmin]
            hi = [JImax + 1, IJmax]
        else
            ok = .false.
            axis = 0
            lo = 0
            hi = 0
            call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': (di, dj) = ('//itoa(di)//', '//itoa(dj)// &
                                 '); MOHID sweeps take (di, dj) = (0, 1) for lines along J or (1, 0) for lines '// &
                                 'along I', stat)
        end if
    end subroutine

    ! The solved cells must lie inside every array (the adapter reads them itself when it copies) and
    ! all arrays must share RES's/ANSWER's bounds.
    subroutine check_arrays(func, lo, hi, names, lbs, ubs, ok, stat)
        character(*), intent(in) :: func
        integer, intent(in) :: lo(:), hi(:)
        character(*), intent(in) :: names(:)
        integer, intent(in) :: lbs(:, :), ubs(:, :)   ! (dimension, array)
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        integer :: n, last
        ok = .false.
        last = size(names)
        do n = 1, size(names)
            if (any(lbs(:, n) /= lbs(:, last)) .or. any(ubs(:, n) /= ubs(:, last))) then
                call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': '//trim(names(n))//' has bounds '// &
                                     range_text(lbs(:, n), ubs(:, n))//' but '//trim(names(last))//' has '// &
                                     range_text(lbs(:, last), ubs(:, last))//'; all arrays share one shape', stat)
                return
            end if
        end do
        if (any(hi < lo)) then
            ok = .true.
            return
        end if
        if (any(lo < lbs(:, last)) .or. any(hi > ubs(:, last))) then
            call tridi_set_error(TRIDI_ERROR_BOUNDS, func//': the solved cells '//range_text(lo, hi)// &
                                 ' (unknowns up to the boundary row at the upper index + 1) are not inside '// &
                                 'the allocated bounds '//range_text(lbs(:, last), ubs(:, last)), stat)
            return
        end if
        ok = .true.
    end subroutine

    ! Contiguity and overlap of the caller's five arrays (inputs 1-3, rhs 4, answer 5), decided before the
    ! adapter chooses to solve on copies (MOHID's first-row quirk, land columns), so that the same arrays
    ! get the same status whether or not it copies: tridi_solve's own rules on the caller's arrays.
    subroutine check_layout(func, names, contiguous, first, bytes, ok, stat)
        character(*), intent(in) :: func, names(5)
        logical, intent(in) :: contiguous(5)
        type(c_ptr), intent(in) :: first(5)
        integer(int64), intent(in) :: bytes(5)
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        integer(c_intptr_t) :: a(5)
        integer :: n
        ok = .false.
        do n = 1, 5
            if (.not. contiguous(n)) then
                call tridi_set_error(TRIDI_ERROR_UNSUPPORTED, func//': argument '//trim(names(n))// &
                                     ' is not contiguous (a strided array section); tridi solves whole model '// &
                                     'arrays in place and never solves into a copy', stat)
                return
            end if
            a(n) = transfer(first(n), a(n))
        end do
        do n = 1, 4
            if (a(n) == 0 .or. a(5) == 0) cycle
            if (a(5) >= a(n) + bytes(n) .or. a(n) >= a(5) + bytes(5)) cycle
            if (n == 4 .and. a(5) == a(4) .and. bytes(5) == bytes(4)) cycle ! in place: the answer is the rhs
            call tridi_set_error(TRIDI_ERROR_ALIASING, func//': '//trim(names(5))//' overlaps '//trim(names(n))// &
                                 '; the answer may only be the right-hand side array itself or separate memory', &
                                 stat)
            return
        end do
        ok = .true.
    end subroutine

    ! ---- the adapter's plans ----

    ! Destroys every kept plan (before the context goes: tridi_destroy refuses while plans live).
    subroutine drop_plans()
        integer :: n, s
        do n = 1, max_plans
            if (c_associated(kept(n)%plan%handle)) call tridi_plan_destroy(kept(n)%plan, s)
            kept(n) = kept_plan()
        end do
    end subroutine

    ! The slot of the kept plan for this grid, axis and box (found = .true.), or the slot to make it in:
    ! a free one, else the least recently used, whose plan is destroyed and whose key is cleared.
    subroutine find_plan(rank, axis, lb, ub, lo, hi, slot, found)
        integer, intent(in) :: rank, axis, lb(:), ub(:), lo(:), hi(:)
        integer, intent(out) :: slot
        logical, intent(out) :: found
        integer :: n, s
        uses = uses + 1
        found = .false.
        do n = 1, max_plans
            if (.not. c_associated(kept(n)%plan%handle)) cycle
            if (kept(n)%rank /= rank .or. kept(n)%axis /= axis) cycle
            if (any(kept(n)%lb(1:rank) /= lb) .or. any(kept(n)%ub(1:rank) /= ub) .or. &
                any(kept(n)%lo(1:rank) /= lo) .or. any(kept(n)%hi(1:rank) /= hi)) cycle
            slot = n
            found = .true.
            kept(n)%last_use = uses
            return
        end do
        slot = 1
        do n = 1, max_plans
            if (.not. c_associated(kept(n)%plan%handle)) then
                slot = n
                exit
            end if
            if (kept(n)%last_use < kept(slot)%last_use) slot = n
        end do
        if (c_associated(kept(slot)%plan%handle)) call tridi_plan_destroy(kept(slot)%plan, s)
        kept(slot) = kept_plan()
    end subroutine

    ! Records the key of a plan just made in slot.
    subroutine keep(slot, rank, axis, lb, ub, lo, hi)
        integer, intent(in) :: slot, rank, axis, lb(:), ub(:), lo(:), hi(:)
        kept(slot)%rank = rank
        kept(slot)%axis = axis
        kept(slot)%lb(1:rank) = lb
        kept(slot)%ub(1:rank) = ub
        kept(slot)%lo(1:rank) = lo
        kept(slot)%hi(1:rank) = hi
        kept(slot)%last_use = uses
    end subroutine

    ! The adapter's solves of checked arrays (2D or 3D): through the kept plan of their grid, axis and box.
    ! An empty box is left to tridi_solve (a no-op success without a plan).
    subroutine solve_kept(axis, lo, hi, D, E, F, Ti, X, s)
        integer, intent(in) :: axis, lo(:), hi(:)
        real(4), pointer, intent(in) :: D(..), F(..), Ti(..), X(..)
        real(8), pointer, intent(in) :: E(..)
        integer, intent(out) :: s
        integer :: slot
        logical :: found
        if (any(hi < lo)) then
            call tridi_solve(ctx, axis, lo, hi, D, E, F, Ti, X, stat=s)
            return
        end if
        call find_plan(rank(X), axis, lbound(X), ubound(X), lo, hi, slot, found)
        if (.not. found) then
            call tridi_plan_create(kept(slot)%plan, ctx, axis, lo, hi, D, E, F, Ti, X, &
                                   on_error=TRIDI_ON_ERROR_CALL, arith=TRIDI_ARITH_MOHID, stat=s)
            if (s /= TRIDI_SUCCESS) return
            call keep(slot, rank(X), axis, lbound(X), ubound(X), lo, hi)
        end if
        call tridi_plan_solve(kept(slot)%plan, D, E, F, Ti, X, stat=s)
    end subroutine

    ! ---------------------------------------------------------------------------------------------
    ! THOMAS_3D(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, D, E, F, Ti, ANSWER, VECG, VECW)
    ! ---------------------------------------------------------------------------------------------
    subroutine tridi_thomas_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, D, E, F, Ti, ANSWER, &
                               VECG, VECW, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj
        real(4), dimension(:, :, :), pointer, intent(in) :: D, F, Ti, ANSWER
        real(8), dimension(:, :, :), pointer, intent(in) :: E
        real(8), dimension(:), pointer, intent(in), optional :: VECG, VECW
        integer, intent(out), optional :: stat
        character(*), parameter :: func = 'tridi_thomas_3d'
        integer :: axis, lo2(2), hi2(2), lo(3), hi(3), s
        logical :: ok
        call sweep_box(func, IJmin, IJmax, JImin, JImax, di, dj, axis, lo2, hi2, ok, stat)
        if (.not. ok) return
        lo = [lo2, Kmin]
        hi = [hi2, Kmax]
        if (.not. all_associated_3d(func, D, E, F, Ti, ANSWER, 'D', 'E', 'F', 'Ti', 'ANSWER', stat)) return
        call check_arrays(func, lo, hi, ['D     ', 'E     ', 'F     ', 'Ti    ', 'ANSWER'], &
                          reshape([lbound(D), lbound(E), lbound(F), lbound(Ti), lbound(ANSWER)], [3, 5]), &
                          reshape([ubound(D), ubound(E), ubound(F), ubound(Ti), ubound(ANSWER)], [3, 5]), ok, stat)
        if (.not. ok) return
        call check_layout(func, ['D     ', 'E     ', 'F     ', 'Ti    ', 'ANSWER'], &
                          [is_contiguous(D), is_contiguous(E), is_contiguous(F), is_contiguous(Ti), is_contiguous(ANSWER)], &
                          [address(D), address(E), address(F), address(Ti), address(ANSWER)], &
                          [nbytes_4_3d(D), nbytes_8_3d(E), nbytes_4_3d(F), nbytes_4_3d(Ti), nbytes_4_3d(ANSWER)], ok, stat)
        if (.not. ok) return
        call ensure_ready(func, ok, stat)
        if (.not. ok) return
        call solve_kept(axis, lo, hi, D, E, F, Ti, ANSWER, s)
        call pass_on(func, s, stat)
    end subroutine

    logical function all_associated_3d(func, A, B, C, T, X, na, nb, nc, nt, nx, stat) result(ok)
        character(*), intent(in) :: func, na, nb, nc, nt, nx
        real(4), dimension(:, :, :), pointer, intent(in) :: A, C, T, X
        real(8), dimension(:, :, :), pointer, intent(in) :: B
        integer, intent(out), optional :: stat
        character(len=:), allocatable :: missing
        missing = ''
        if (.not. associated(X)) missing = nx
        if (.not. associated(T)) missing = nt
        if (.not. associated(C)) missing = nc
        if (.not. associated(B)) missing = nb
        if (.not. associated(A)) missing = na
        ok = len(missing) == 0
        if (.not. ok) call tridi_set_error(TRIDI_ERROR_NULL_POINTER, func//': argument '//missing// &
                                           ' is not associated', stat)
    end function

    logical function all_associated_2d(func, A, B, C, T, X, stat) result(ok)
        character(*), intent(in) :: func
        real(4), dimension(:, :), pointer, intent(in) :: A, C, T, X
        real(8), dimension(:, :), pointer, intent(in) :: B
        integer, intent(out), optional :: stat
        character(len=:), allocatable :: missing
        missing = ''
        if (.not. associated(X)) missing = 'ANSWER'
        if (.not. associated(T)) missing = 'Ti'
        if (.not. associated(C)) missing = 'F'
        if (.not. associated(B)) missing = 'E'
        if (.not. associated(A)) missing = 'D'
        ok = len(missing) == 0
        if (.not. ok) call tridi_set_error(TRIDI_ERROR_NULL_POINTER, func//': argument '//missing// &
                                           ' is not associated', stat)
    end function

    ! ---------------------------------------------------------------------------------------------
    ! THOMASZ(ILB, IUB, JLB, JUB, KLB, KUB, AW, BW, CW, TIW, RES, VECG, VECW) and, with WaterPoints,
    ! THOMASZ_NewType2.
    ! ---------------------------------------------------------------------------------------------
    subroutine tridi_thomasz(ILB, IUB, JLB, JUB, KLB, KUB, AW, BW, CW, TIW, RES, VECG, VECW, WaterPoints, stat)
        integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB
        real(4), dimension(:, :, :), pointer, intent(in) :: AW, CW, TIW, RES
        real(8), dimension(:, :, :), pointer, intent(in) :: BW
        real(8), dimension(:), pointer, intent(in), optional :: VECG, VECW
        integer, dimension(:, :, :), pointer, intent(in), optional :: WaterPoints
        integer, intent(out), optional :: stat
        character(*), parameter :: func = 'tridi_thomasz'
        real(4), allocatable, target :: tA(:, :, :), tC(:, :, :), tT(:, :, :), tX(:, :, :)
        real(8), allocatable, target :: tB(:, :, :)
        real(4), pointer :: pA(:, :, :), pC(:, :, :), pT(:, :, :), pX(:, :, :)
        real(8), pointer :: pB(:, :, :)
        integer :: lo(3), hi(3), s, i, j, k
        logical :: ok, quirk, land
        lo = [ILB, JLB, KLB]
        hi = [IUB, JUB, KUB + 1]
        if (.not. all_associated_3d(func, AW, BW, CW, TIW, RES, 'AW', 'BW', 'CW', 'TIW', 'RES', stat)) return
        call check_arrays(func, lo, hi, ['AW ', 'BW ', 'CW ', 'TIW', 'RES'], &
                          reshape([lbound(AW), lbound(BW), lbound(CW), lbound(TIW), lbound(RES)], [3, 5]), &
                          reshape([ubound(AW), ubound(BW), ubound(CW), ubound(TIW), ubound(RES)], [3, 5]), ok, stat)
        if (.not. ok) return
        if (any(hi < lo)) then
            call tridi_finish(TRIDI_SUCCESS, stat)
            return
        end if
        quirk = KLB /= 1
        if (quirk .and. (1 < lbound(BW, 3) .or. 1 > ubound(BW, 3))) then
            call tridi_set_error(TRIDI_ERROR_BOUNDS, func//': KLB = '//itoa(KLB)//' /= 1 and THOMASZ reads '// &
                                 'the first row of every column at K = 1, which is outside the allocated K '// &
                                 'bounds '//itoa(lbound(BW, 3))//':'//itoa(ubound(BW, 3)), stat)
            return
        end if
        call check_layout(func, ['AW ', 'BW ', 'CW ', 'TIW', 'RES'], &
                          [is_contiguous(AW), is_contiguous(BW), is_contiguous(CW), is_contiguous(TIW), is_contiguous(RES)], &
                          [address(AW), address(BW), address(CW), address(TIW), address(RES)], &
                          [nbytes_4_3d(AW), nbytes_8_3d(BW), nbytes_4_3d(CW), nbytes_4_3d(TIW), nbytes_4_3d(RES)], ok, stat)
        if (.not. ok) return
        land = .false.
        if (present(WaterPoints)) then
            if (.not. associated(WaterPoints)) then
                call tridi_set_error(TRIDI_ERROR_NULL_POINTER, func//': argument WaterPoints is present but '// &
                                     'not associated', stat)
                return
            end if
            if (ILB < lbound(WaterPoints, 1) .or. IUB > ubound(WaterPoints, 1) .or. &
                JLB < lbound(WaterPoints, 2) .or. JUB > ubound(WaterPoints, 2) .or. &
                KUB < lbound(WaterPoints, 3) .or. KUB > ubound(WaterPoints, 3)) then
                call tridi_set_error(TRIDI_ERROR_BOUNDS, func//': WaterPoints(ILB:IUB, JLB:JUB, KUB) = '// &
                                     'WaterPoints'//range_text([ILB, JLB, KUB], [IUB, JUB, KUB])// &
                                     ' is outside its allocated bounds '// &
                                     range_text(lbound(WaterPoints), ubound(WaterPoints)), stat)
                return
            end if
            land = any(WaterPoints(ILB:IUB, JLB:JUB, KUB) /= 1)
        end if
        call ensure_ready(func, ok, stat)
        if (.not. ok) return

        pA => AW
        pB => BW
        pC => CW
        pT => TIW
        pX => RES
        if (quirk .or. land) then
            ! Copies of the box with MOHID's first row and identity rows in land columns; same bounds as RES
            ! so that messages name the model's own cells.
            allocate (tB(lbound(RES, 1):ubound(RES, 1), lbound(RES, 2):ubound(RES, 2), lbound(RES, 3):ubound(RES, 3)))
            allocate (tC, tT, mold=RES)
            do k = KLB, KUB + 1
                tB(ILB:IUB, JLB:JUB, k) = BW(ILB:IUB, JLB:JUB, k)
                tC(ILB:IUB, JLB:JUB, k) = CW(ILB:IUB, JLB:JUB, k)
                tT(ILB:IUB, JLB:JUB, k) = TIW(ILB:IUB, JLB:JUB, k)
            end do
            if (quirk) then
                tB(ILB:IUB, JLB:JUB, KLB) = BW(ILB:IUB, JLB:JUB, 1)
                tC(ILB:IUB, JLB:JUB, KLB) = CW(ILB:IUB, JLB:JUB, 1)
                tT(ILB:IUB, JLB:JUB, KLB) = TIW(ILB:IUB, JLB:JUB, 1)
            end if
            pB => tB
            pC => tC
            pT => tT
            if (land) then
                allocate (tA, tX, mold=RES)
                do k = KLB, KUB + 1
                    tA(ILB:IUB, JLB:JUB, k) = AW(ILB:IUB, JLB:JUB, k)
                    do j = JLB, JUB
                        do i = ILB, IUB
                            if (WaterPoints(i, j, KUB) /= 1) then
                                tA(i, j, k) = 0
                                tB(i, j, k) = 1
                                tC(i, j, k) = 0
                                tT(i, j, k) = 0
                            end if
                        end do
                    end do
                end do
                pA => tA
                pX => tX
            end if
        end if
        call solve_kept(3, lo, hi, pA, pB, pC, pT, pX, s)
        if (s == TRIDI_SUCCESS .and. land) then
            do k = KLB, KUB + 1
                do j = JLB, JUB
                    do i = ILB, IUB
                        if (WaterPoints(i, j, KUB) == 1) RES(i, j, k) = tX(i, j, k)
                    end do
                end do
            end do
        end if
        call pass_on(func, s, stat)
    end subroutine

    ! ---------------------------------------------------------------------------------------------
    ! THOMAS_2D(IJmin, IJmax, JImin, JImax, di, dj, D, E, F, Ti, ANSWER, VECG, VECW)
    ! ---------------------------------------------------------------------------------------------
    subroutine tridi_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D, E, F, Ti, ANSWER, VECG, VECW, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj
        real(4), dimension(:, :), pointer, intent(in) :: D, F, Ti, ANSWER
        real(8), dimension(:, :), pointer, intent(in) :: E
        real(8), dimension(:), pointer, intent(in), optional :: VECG, VECW
        integer, intent(out), optional :: stat
        character(*), parameter :: func = 'tridi_thomas_2d'
        real(8), allocatable, target :: tE(:, :)
        real(4), allocatable, target :: tF(:, :), tT(:, :)
        real(8), pointer :: pE(:, :)
        real(4), pointer :: pF(:, :), pT(:, :)
        integer :: axis, lo(2), hi(2), s, ij, q(2), c(2)
        logical :: ok, quirk
        call sweep_box(func, IJmin, IJmax, JImin, JImax, di, dj, axis, lo, hi, ok, stat)
        if (.not. ok) return
        if (.not. all_associated_2d(func, D, E, F, Ti, ANSWER, stat)) return
        call check_arrays(func, lo, hi, ['D     ', 'E     ', 'F     ', 'Ti    ', 'ANSWER'], &
                          reshape([lbound(D), lbound(E), lbound(F), lbound(Ti), lbound(ANSWER)], [2, 5]), &
                          reshape([ubound(D), ubound(E), ubound(F), ubound(Ti), ubound(ANSWER)], [2, 5]), ok, stat)
        if (.not. ok) return
        if (any(hi < lo)) then
            call tridi_finish(TRIDI_SUCCESS, stat)
            return
        end if
        quirk = .false.
        do ij = IJmin, IJmax
            call first_row_cells(ij, q, c)
            if (any(q < lbound(E)) .or. any(q > ubound(E))) then
                call tridi_set_error(TRIDI_ERROR_BOUNDS, func//': THOMAS_2D reads the first row of line IJ = '// &
                                     itoa(ij)//' at cell ('//itoa(q(1))//', '//itoa(q(2))//'), outside the '// &
                                     'allocated bounds '//range_text(lbound(E), ubound(E)), stat)
                return
            end if
            quirk = quirk .or. any(q /= c)
        end do
        call check_layout(func, ['D     ', 'E     ', 'F     ', 'Ti    ', 'ANSWER'], &
                          [is_contiguous(D), is_contiguous(E), is_contiguous(F), is_contiguous(Ti), is_contiguous(ANSWER)], &
                          [address(D), address(E), address(F), address(Ti), address(ANSWER)], &
                          [nbytes_4_2d(D), nbytes_8_2d(E), nbytes_4_2d(F), nbytes_4_2d(Ti), nbytes_4_2d(ANSWER)], ok, stat)
        if (.not. ok) return
        call ensure_ready(func, ok, stat)
        if (.not. ok) return
        pE => E
        pF => F
        pT => Ti
        if (quirk) then
            allocate (tE(lbound(E, 1):ubound(E, 1), lbound(E, 2):ubound(E, 2)))
            allocate (tF, tT, mold=F)
            tE(lo(1):hi(1), lo(2):hi(2)) = E(lo(1):hi(1), lo(2):hi(2))
            tF(lo(1):hi(1), lo(2):hi(2)) = F(lo(1):hi(1), lo(2):hi(2))
            tT(lo(1):hi(1), lo(2):hi(2)) = Ti(lo(1):hi(1), lo(2):hi(2))
            do ij = IJmin, IJmax
                call first_row_cells(ij, q, c)
                tE(c(1), c(2)) = E(q(1), q(2))
                tF(c(1), c(2)) = F(q(1), q(2))
                tT(c(1), c(2)) = Ti(q(1), q(2))
            end do
            pE => tE
            pF => tF
            pT => tT
        end if
        call solve_kept(axis, lo, hi, D, pE, pF, pT, ANSWER, s)
        call pass_on(func, s, stat)
    contains
        ! q: the cell MOHID reads the first row of line ij from; c: the line's first cell.
        subroutine first_row_cells(ij, q, c)
            integer, intent(in) :: ij
            integer, intent(out) :: q(2), c(2)
            q = [IJmin - 1 + ij*dj + di, JImin - 1 + ij*di + dj]
            c = [ij*dj + JImin*di, ij*di + JImin*dj]
        end subroutine
    end subroutine

    ! ---------------------------------------------------------------------------------------------
    ! Registration (GPU): tridi_mohid_register(D, E, F, Ti, ANSWER [, stat]) page-locks the arrays of a
    ! sweep once, so that every later solve and upload moves them by DMA straight from/to the model's
    ! memory. The same array may appear several times and in several sets: it is registered once.
    ! tridi_mohid_unregister(D, E, F, Ti, ANSWER [, stat]) releases the arrays of a set that the adapter
    ! registered (others are skipped); call it BEFORE deallocating them. tridi_mohid_finalize releases all.
    ! On the CPU backend both only validate and record.
    ! ---------------------------------------------------------------------------------------------
    ! Address of an array's first element (null when it has none): how the adapter recognises an array.
    function address_4_3d(A) result(p)
        real(4), dimension(:, :, :), pointer, intent(in) :: A
        type(c_ptr) :: p
        p = c_null_ptr
        if (size(A) > 0) p = c_loc(A(lbound(A, 1), lbound(A, 2), lbound(A, 3)))
    end function

    function address_8_3d(A) result(p)
        real(8), dimension(:, :, :), pointer, intent(in) :: A
        type(c_ptr) :: p
        p = c_null_ptr
        if (size(A) > 0) p = c_loc(A(lbound(A, 1), lbound(A, 2), lbound(A, 3)))
    end function

    function address_4_2d(A) result(p)
        real(4), dimension(:, :), pointer, intent(in) :: A
        type(c_ptr) :: p
        p = c_null_ptr
        if (size(A) > 0) p = c_loc(A(lbound(A, 1), lbound(A, 2)))
    end function

    function address_8_2d(A) result(p)
        real(8), dimension(:, :), pointer, intent(in) :: A
        type(c_ptr) :: p
        p = c_null_ptr
        if (size(A) > 0) p = c_loc(A(lbound(A, 1), lbound(A, 2)))
    end function

    ! Bytes an array spans (contiguous arrays: the only ones whose overlap is checked).
    integer(int64) function nbytes_4_3d(A)
        real(4), dimension(:, :, :), pointer, intent(in) :: A
        nbytes_4_3d = size(A, kind=int64) * 4
    end function

    integer(int64) function nbytes_8_3d(A)
        real(8), dimension(:, :, :), pointer, intent(in) :: A
        nbytes_8_3d = size(A, kind=int64) * 8
    end function

    integer(int64) function nbytes_4_2d(A)
        real(4), dimension(:, :), pointer, intent(in) :: A
        nbytes_4_2d = size(A, kind=int64) * 4
    end function

    integer(int64) function nbytes_8_2d(A)
        real(8), dimension(:, :), pointer, intent(in) :: A
        nbytes_8_2d = size(A, kind=int64) * 8
    end function

    integer function registered_index(p) result(idx)
        type(c_ptr), intent(in) :: p
        integer :: i
        idx = 0
        do i = 1, nregistered
            if (c_associated(registered(i), p)) then
                idx = i
                return
            end if
        end do
    end function

    subroutine remember(p)
        type(c_ptr), intent(in) :: p
        type(c_ptr), allocatable :: grown(:)
        if (.not. allocated(registered)) allocate (registered(16))
        if (nregistered == size(registered)) then
            allocate (grown(2 * size(registered)))
            grown(1:nregistered) = registered(1:nregistered)
            call move_alloc(grown, registered)
        end if
        nregistered = nregistered + 1
        registered(nregistered) = p
    end subroutine

    subroutine forget(idx)
        integer, intent(in) :: idx
        registered(idx:nregistered - 1) = registered(idx + 1:nregistered)
        nregistered = nregistered - 1
    end subroutine

    subroutine register_3d(D, E, F, Ti, ANSWER, stat)
        real(4), dimension(:, :, :), pointer, intent(in) :: D, F, Ti, ANSWER
        real(8), dimension(:, :, :), pointer, intent(in) :: E
        integer, intent(out), optional :: stat
        character(*), parameter :: func = 'tridi_mohid_register'
        integer :: s
        logical :: ok
        if (.not. all_associated_3d(func, D, E, F, Ti, ANSWER, 'D', 'E', 'F', 'Ti', 'ANSWER', stat)) return
        call ensure_ready(func, ok, stat)
        if (.not. ok) return
        s = TRIDI_SUCCESS
        if (registered_index(address(E)) == 0) then
            call tridi_host_register(ctx, E, stat=s)
            if (s == TRIDI_SUCCESS) call remember(address(E))
        end if
        if (s == TRIDI_SUCCESS) call reg4(D)
        if (s == TRIDI_SUCCESS) call reg4(F)
        if (s == TRIDI_SUCCESS) call reg4(Ti)
        if (s == TRIDI_SUCCESS) call reg4(ANSWER)
        call pass_on(func, s, stat)
    contains
        subroutine reg4(A)
            real(4), dimension(:, :, :), pointer, intent(in) :: A
            if (registered_index(address(A)) /= 0) return
            call tridi_host_register(ctx, A, stat=s)
            if (s == TRIDI_SUCCESS) call remember(address(A))
        end subroutine
    end subroutine

    subroutine unregister_3d(D, E, F, Ti, ANSWER, stat)
        real(4), dimension(:, :, :), pointer, intent(in) :: D, F, Ti, ANSWER
        real(8), dimension(:, :, :), pointer, intent(in) :: E
        integer, intent(out), optional :: stat
        character(*), parameter :: func = 'tridi_mohid_unregister'
        integer :: s, idx
        logical :: ok
        if (.not. all_associated_3d(func, D, E, F, Ti, ANSWER, 'D', 'E', 'F', 'Ti', 'ANSWER', stat)) return
        call ensure_ready(func, ok, stat)
        if (.not. ok) return
        s = TRIDI_SUCCESS
        idx = registered_index(address(E))
        if (idx /= 0) then
            call tridi_host_unregister(ctx, E, stat=s)
            if (s == TRIDI_SUCCESS) call forget(idx)
        end if
        if (s == TRIDI_SUCCESS) call unreg4(D)
        if (s == TRIDI_SUCCESS) call unreg4(F)
        if (s == TRIDI_SUCCESS) call unreg4(Ti)
        if (s == TRIDI_SUCCESS) call unreg4(ANSWER)
        call pass_on(func, s, stat)
    contains
        subroutine unreg4(A)
            real(4), dimension(:, :, :), pointer, intent(in) :: A
            integer :: i
            i = registered_index(address(A))
            if (i == 0) return
            call tridi_host_unregister(ctx, A, stat=s)
            if (s == TRIDI_SUCCESS) call forget(i)
        end subroutine
    end subroutine

    subroutine register_2d(D, E, F, Ti, ANSWER, stat)
        real(4), dimension(:, :), pointer, intent(in) :: D, F, Ti, ANSWER
        real(8), dimension(:, :), pointer, intent(in) :: E
        integer, intent(out), optional :: stat
        character(*), parameter :: func = 'tridi_mohid_register'
        integer :: s
        logical :: ok
        if (.not. all_associated_2d(func, D, E, F, Ti, ANSWER, stat)) return
        call ensure_ready(func, ok, stat)
        if (.not. ok) return
        s = TRIDI_SUCCESS
        if (registered_index(address(E)) == 0) then
            call tridi_host_register(ctx, E, stat=s)
            if (s == TRIDI_SUCCESS) call remember(address(E))
        end if
        if (s == TRIDI_SUCCESS) call reg4(D)
        if (s == TRIDI_SUCCESS) call reg4(F)
        if (s == TRIDI_SUCCESS) call reg4(Ti)
        if (s == TRIDI_SUCCESS) call reg4(ANSWER)
        call pass_on(func, s, stat)
    contains
        subroutine reg4(A)
            real(4), dimension(:, :), pointer, intent(in) :: A
            if (registered_index(address(A)) /= 0) return
            call tridi_host_register(ctx, A, stat=s)
            if (s == TRIDI_SUCCESS) call remember(address(A))
        end subroutine
    end subroutine

    subroutine unregister_2d(D, E, F, Ti, ANSWER, stat)
        real(4), dimension(:, :), pointer, intent(in) :: D, F, Ti, ANSWER
        real(8), dimension(:, :), pointer, intent(in) :: E
        integer, intent(out), optional :: stat
        character(*), parameter :: func = 'tridi_mohid_unregister'
        integer :: s, idx
        logical :: ok
        if (.not. all_associated_2d(func, D, E, F, Ti, ANSWER, stat)) return
        call ensure_ready(func, ok, stat)
        if (.not. ok) return
        s = TRIDI_SUCCESS
        idx = registered_index(address(E))
        if (idx /= 0) then
            call tridi_host_unregister(ctx, E, stat=s)
            if (s == TRIDI_SUCCESS) call forget(idx)
        end if
        if (s == TRIDI_SUCCESS) call unreg4(D)
        if (s == TRIDI_SUCCESS) call unreg4(F)
        if (s == TRIDI_SUCCESS) call unreg4(Ti)
        if (s == TRIDI_SUCCESS) call unreg4(ANSWER)
        call pass_on(func, s, stat)
    contains
        subroutine unreg4(A)
            real(4), dimension(:, :), pointer, intent(in) :: A
            integer :: i
            i = registered_index(address(A))
            if (i == 0) return
            call tridi_host_unregister(ctx, A, stat=s)
            if (s == TRIDI_SUCCESS) call forget(i)
        end subroutine
    end subroutine

    ! ---------------------------------------------------------------------------------------------
    ! Per-array uploads (GPU overlap): call right after an array's assembly with the arguments of the
    ! coming solve; the solve then uses the uploaded copy. On the CPU backend they only validate.
    ! Arrays the solve replaces by copies (MOHID's first-row quirk) are not uploaded.
    ! ---------------------------------------------------------------------------------------------
    ! Shared part of each upload family: MOHID's box for the array, whether it is uploaded at all
    ! (arrays the solve replaces by copies are not), and a ready context. go = .false.: stat is set.
    subroutine plan_upload_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, axis, lo, hi, go, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj
        integer, intent(out) :: axis, lo(3), hi(3)
        logical, intent(out) :: go
        integer, intent(out), optional :: stat
        call sweep_box('tridi_mohid_upload_3d', IJmin, IJmax, JImin, JImax, di, dj, axis, lo(1:2), hi(1:2), go, stat)
        if (.not. go) return
        lo(3) = Kmin
        hi(3) = Kmax
        call ensure_ready('tridi_mohid_upload_3d', go, stat)
    end subroutine

    subroutine plan_upload_z(ILB, IUB, JLB, JUB, KLB, KUB, role, lo, hi, go, stat)
        integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB, role
        integer, intent(out) :: lo(3), hi(3)
        logical, intent(out) :: go
        integer, intent(out), optional :: stat
        lo = [ILB, JLB, KLB]
        hi = [IUB, JUB, KUB + 1]
        go = .not. (KLB /= 1 .and. role /= TRIDI_ROLE_LOWER) ! THOMASZ's K=1 first row: solved on copies
        if (.not. go) then
            call tridi_finish(TRIDI_SUCCESS, stat)
            return
        end if
        call ensure_ready('tridi_mohid_upload_z', go, stat)
    end subroutine

    ! THOMAS_2D reads its first rows elsewhere unless IJmin = JImin = 1 (how MOHID calls it).
    logical function quirk_2d(IJmin, JImin, di, role) result(copied)
        integer, intent(in) :: IJmin, JImin, di, role
        copied = role /= TRIDI_ROLE_LOWER .and. (IJmin /= 1 .or. (di == 1 .and. JImin /= 1))
    end function

    subroutine plan_upload_2d(IJmin, IJmax, JImin, JImax, di, dj, role, axis, lo, hi, go, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj, role
        integer, intent(out) :: axis, lo(2), hi(2)
        logical, intent(out) :: go
        integer, intent(out), optional :: stat
        call sweep_box('tridi_mohid_upload_2d', IJmin, IJmax, JImin, JImax, di, dj, axis, lo, hi, go, stat)
        if (.not. go) return
        if (quirk_2d(IJmin, JImin, di, role)) then
            go = .false.
            call tridi_finish(TRIDI_SUCCESS, stat)
            return
        end if
        call ensure_ready('tridi_mohid_upload_2d', go, stat)
    end subroutine

    subroutine upload_3d_r4(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, array, role, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, role
        real(4), dimension(:, :, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: axis, lo(3), hi(3), s
        logical :: go
        call plan_upload_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, axis, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, axis, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_3d', s, stat)
    end subroutine

    subroutine upload_3d_r8(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, array, role, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, role
        real(8), dimension(:, :, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: axis, lo(3), hi(3), s
        logical :: go
        call plan_upload_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, axis, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, axis, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_3d', s, stat)
    end subroutine

    subroutine upload_z_r4(ILB, IUB, JLB, JUB, KLB, KUB, array, role, stat)
        integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB, role
        real(4), dimension(:, :, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: lo(3), hi(3), s
        logical :: go
        call plan_upload_z(ILB, IUB, JLB, JUB, KLB, KUB, role, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, 3, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_z', s, stat)
    end subroutine

    subroutine upload_z_r8(ILB, IUB, JLB, JUB, KLB, KUB, array, role, stat)
        integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB, role
        real(8), dimension(:, :, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: lo(3), hi(3), s
        logical :: go
        call plan_upload_z(ILB, IUB, JLB, JUB, KLB, KUB, role, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, 3, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_z', s, stat)
    end subroutine

    subroutine upload_2d_r4(IJmin, IJmax, JImin, JImax, di, dj, array, role, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj, role
        real(4), dimension(:, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: axis, lo(2), hi(2), s
        logical :: go
        call plan_upload_2d(IJmin, IJmax, JImin, JImax, di, dj, role, axis, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, axis, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_2d', s, stat)
    end subroutine

    subroutine upload_2d_r8(IJmin, IJmax, JImin, JImax, di, dj, array, role, stat)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj, role
        real(8), dimension(:, :), pointer, intent(in) :: array
        integer, intent(out), optional :: stat
        integer :: axis, lo(2), hi(2), s
        logical :: go
        call plan_upload_2d(IJmin, IJmax, JImin, JImax, di, dj, role, axis, lo, hi, go, stat)
        if (.not. go) return
        call tridi_upload_async(ctx, axis, lo, hi, array, role, stat=s)
        call pass_on('tridi_mohid_upload_2d', s, stat)
    end subroutine

end module tridi_mohid
