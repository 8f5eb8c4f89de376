! Module tridi_mohid_core: what every part of the MOHID adapter shares (module tridi_mohid is the public
! face): the adapter's one context, the variants, the checks of MOHID's argument lists, the kept plans
! and the statistics. Private to the adapter; nothing here knows MOHID's precision (the routines are
! stated once in tridi_mohid_routines.inc and compiled per kind set, decision 042).
module tridi_mohid_core
    use, intrinsic :: iso_c_binding, only: c_ptr, c_associated, c_intptr_t
    use, intrinsic :: iso_fortran_env, only: int64, output_unit
    use tridi, only: tridi_context, tridi_create, tridi_destroy, tridi_solve, tridi_get_backend, &
                     tridi_backend_name, tridi_plan, tridi_plan_destroy, tridi_error_message, tridi_error_cell, &
                     tridi_set_error, tridi_finish, TRIDI_SUCCESS, TRIDI_ERROR_INVALID_VALUE, TRIDI_ERROR_BOUNDS, &
                     TRIDI_ERROR_UNSUPPORTED, TRIDI_ERROR_ALIASING, TRIDI_ERROR_ZERO_PIVOT, TRIDI_ERROR_NONFINITE, &
                     TRIDI_ERROR_OUT_OF_MEMORY, TRIDI_ARITH_MOHID, TRIDI_ARITH_MOHID_NEWTYPE
    implicit none
    private

    public :: ctx, ready, ensure_ready, tridi_mohid_init, tridi_mohid_finalize, tridi_mohid_context
    public :: pass_on, prefixed, itoa, range_text, sweep_box, check_arrays, check_layout, no_memory, record_at
    public :: all_water
    public :: registered, nregistered, remember, forget, registered_index, shares_page
    public :: TRIDI_MOHID_CHECKED, TRIDI_MOHID_ORIGINAL, TRIDI_MOHID_NEWTYPE, pick_variant, arith_of
    public :: RULE_ORIGINAL, RULE_ZERO, RULE_STALE, RULE_STOP
    public :: ROUTINE_3D, ROUTINE_Z, ROUTINE_2D, stats_begin, stats_end
    public :: tridi_mohid_stats, tridi_mohid_last_seconds, tridi_mohid_reset_stats
    public :: find_plan, keep, drop_plans, kept

    ! What a call does where MOHID's own routine would meet a zero (or NaN) pivot, decision 042:
    ! CHECKED (the default): the call fails with the status, the answer untouched (all or nothing);
    ! ORIGINAL: MOHID's *_Original routines (pivots in real(8), no test: the Inf/NaN answers MOHID gives);
    ! NEWTYPE: MOHID's *_NewType routines (pivot in MOHID's default real; THOMAS_2D: W = G = 0 there,
    ! THOMASZ: W and G of the previous column kept, THOMAS_3D: a ZERO_PIVOT status where MOHID stops).
    integer, parameter :: TRIDI_MOHID_CHECKED = 0, TRIDI_MOHID_ORIGINAL = 1, TRIDI_MOHID_NEWTYPE = 2
    ! The zero-pivot rule of the adapter's own serial MOHID loop (the re-solve after a library failure).
    integer, parameter :: RULE_ORIGINAL = 1, RULE_ZERO = 2, RULE_STALE = 3, RULE_STOP = 4
    integer, parameter :: ROUTINE_3D = 1, ROUTINE_Z = 2, ROUTINE_2D = 3
    character(len=15), parameter :: routine_name(3) = ['tridi_thomas_3d', 'tridi_thomasz  ', 'tridi_thomas_2d']

    ! The adapter's one context, created on first use (backend from TRIDI_BACKEND) or by tridi_mohid_init.
    type(tridi_context), save :: ctx
    logical, save :: ready = .false.
    ! First elements of the arrays registered through the adapter: an array shared by several sets
    ! (MOHID's COEF3 diagonals serve every sweep) is registered once.
    type(c_ptr), allocatable, save :: registered(:)
    integer(int64), allocatable, save :: registered_bytes(:)
    integer, save :: nregistered = 0
    ! CUDA page-locks whole pages and cannot move a range that is only partly page-locked: an array that
    ! shares a page with one already registered is left unregistered (its solves stage it). 4 KiB: the
    ! base page of x86-64 Linux, where the CUDA backend runs.
    integer(int64), parameter :: lock_page = 4096

    ! The adapter's plans: a model calls the same few sweeps every time step, so each (grid bounds, box,
    ! axis, kind set, arithmetic) it solves gets a plan, validated once and reused; when all max_plans are
    ! taken the least recently used one makes room. Every plan is ON_ERROR_CALL: half a MOHID sweep is
    ! worth nothing to the model, and a caller that recovers (a smaller time step) needs ANSWER as it was.
    integer, parameter :: max_plans = 16
    type :: kept_plan
        type(tridi_plan) :: plan
        integer :: rank = 0, axis = 0, kinds = 0, arith = 0, on_error = 0, lb(3) = 0, ub(3) = 0, lo(3) = 0, hi(3) = 0
        integer(int64) :: last_use = 0
    end type
    type(kept_plan), save :: kept(max_plans)
    integer(int64), save :: uses = 0

    ! Statistics per routine (calls, seconds, re-solves by the MOHID loop, failed calls) and the time of
    ! the last call, so that a model's own stopwatch can still see its solves.
    integer(int64), save :: n_calls(3) = 0, n_resolved(3) = 0, n_failed(3) = 0
    real(8), save :: seconds(3) = 0, last_seconds = 0

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

    ! pass_on for a status held in s: a failure's message gets func in front; s keeps the status.
    subroutine prefixed(func, s)
        character(*), intent(in) :: func
        integer, intent(inout) :: s
        integer :: t
        if (s == TRIDI_SUCCESS) return
        call tridi_set_error(s, func//': '//tridi_error_message(), t)
        s = t
    end subroutine

    ! A copy or workspace the adapter could not allocate: a status, never a stopped program.
    subroutine no_memory(func, what, cells, bytes_per_cell, stat)
        character(*), intent(in) :: func, what
        integer(int64), intent(in) :: cells
        integer, intent(in) :: bytes_per_cell
        integer, intent(out), optional :: stat
        call tridi_set_error(TRIDI_ERROR_OUT_OF_MEMORY, func//': cannot allocate '//what//' ('// &
                             itoa64(cells * bytes_per_cell)//' bytes)', stat)
    end subroutine

    ! Records a numerical failure at a cell of the caller's arrays (rank 2 or 3) in tridi's error record,
    ! by a one-cell solve that fails there (a zero pivot, or a NaN right-hand side for NONFINITE): the
    ! adapter's copies (MOHID's first-row quirk) or its own MOHID loop found the cell, and
    ! tridi_error_cell must name the caller's cell. Returns the recorded status.
    integer function record_at(kind, rank, cell) result(s)
        integer, intent(in) :: kind, rank
        integer(int64), intent(in) :: cell(3)
        real(8), allocatable, target :: a2(:, :), b2(:, :), c2(:, :), t2(:, :), x2(:, :)
        real(8), allocatable, target :: a3(:, :, :), b3(:, :, :), c3(:, :, :), t3(:, :, :), x3(:, :, :)
        real(8), pointer :: pa2(:, :), pb2(:, :), pc2(:, :), pt2(:, :), px2(:, :)
        real(8), pointer :: pa3(:, :, :), pb3(:, :, :), pc3(:, :, :), pt3(:, :, :), px3(:, :, :)
        real(8) :: b, t
        integer(int64) :: got(3)
        logical :: matched
        b = 1
        t = 0
        if (kind == TRIDI_ERROR_ZERO_PIVOT) then
            b = 0
        else
            t = transfer(int(z'7FF8000000000000', int64), 1.0d0)
        end if
        if (rank == 2) then
            allocate (a2(cell(1):cell(1), cell(2):cell(2)), b2(cell(1):cell(1), cell(2):cell(2)), &
                      c2(cell(1):cell(1), cell(2):cell(2)), t2(cell(1):cell(1), cell(2):cell(2)), &
                      x2(cell(1):cell(1), cell(2):cell(2)))
            a2 = 0
            c2 = 0
            b2 = b
            t2 = t
            pa2 => a2
            pb2 => b2
            pc2 => c2
            pt2 => t2
            px2 => x2
            call tridi_solve(ctx, 1, cell(1:2), cell(1:2), pa2, pb2, pc2, pt2, px2, stat=s)
        else
            allocate (a3(cell(1):cell(1), cell(2):cell(2), cell(3):cell(3)), &
                      b3(cell(1):cell(1), cell(2):cell(2), cell(3):cell(3)), &
                      c3(cell(1):cell(1), cell(2):cell(2), cell(3):cell(3)), &
                      t3(cell(1):cell(1), cell(2):cell(2), cell(3):cell(3)), &
                      x3(cell(1):cell(1), cell(2):cell(2), cell(3):cell(3)))
            a3 = 0
            c3 = 0
            b3 = b
            t3 = t
            pa3 => a3
            pb3 => b3
            pc3 => c3
            pt3 => t3
            px3 => x3
            call tridi_solve(ctx, 1, cell, cell, pa3, pb3, pc3, pt3, px3, stat=s)
        end if
        got = 0
        matched = .false.
        if (s /= TRIDI_SUCCESS) then
            if (tridi_error_cell(got) == rank) matched = all(got(1:rank) == cell(1:rank))
        end if
        if (.not. matched) then
            s = kind ! the library took the cell otherwise: the message alone names it
            call tridi_set_error(kind, 'numerical failure at cell '//cell_text(cell(1:rank)), s)
        end if
    end function

    function cell_text(c) result(t)
        integer(int64), intent(in) :: c(:)
        character(len=:), allocatable :: t
        integer :: a
        t = '('
        do a = 1, size(c)
            t = t//itoa64(c(a))
            if (a < size(c)) t = t//', '
        end do
        t = t//')'
    end function

    function itoa(i) result(s)
        integer, intent(in) :: i
        character(len=:), allocatable :: s
        character(len=16) :: buf
        write (buf, '(i0)') i
        s = trim(buf)
    end function

    function itoa64(i) result(s)
        integer(int64), intent(in) :: i
        character(len=:), allocatable :: s
        character(len=24) :: buf
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

    ! variant (optional) -> the variant, checked.
    logical function pick_variant(func, variant, v, stat) result(ok)
        character(*), intent(in) :: func
        integer, intent(in), optional :: variant
        integer, intent(out) :: v
        integer, intent(out), optional :: stat
        if (present(stat)) stat = TRIDI_SUCCESS
        v = TRIDI_MOHID_CHECKED
        if (present(variant)) v = variant
        ok = v == TRIDI_MOHID_CHECKED .or. v == TRIDI_MOHID_ORIGINAL .or. v == TRIDI_MOHID_NEWTYPE
        if (.not. ok) call tridi_set_error(TRIDI_ERROR_INVALID_VALUE, func//': variant = '//itoa(v)// &
                                           '; it is TRIDI_MOHID_CHECKED, TRIDI_MOHID_ORIGINAL or TRIDI_MOHID_NEWTYPE', stat)
    end function

    ! The library's arithmetic for a variant: MOHID's NewType pivot (rounded to MOHID's default real,
    ! the kind of `upper`) or its Original one (real(8)).
    integer function arith_of(v)
        integer, intent(in) :: v
        arith_of = TRIDI_ARITH_MOHID
        if (v == TRIDI_MOHID_NEWTYPE) arith_of = TRIDI_ARITH_MOHID_NEWTYPE
    end function

    ! (di, dj) -> dimension of the lines (1 = I, 2 = J) and the box of unknowns, MOHID's +1 included.
    subroutine sweep_box(func, IJmin, IJmax, JImin, JImax, di, dj, axis, lo, hi, ok, stat)
        character(*), intent(in) :: func
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj
        integer, intent(out) :: axis, lo(2), hi(2)
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        if (present(stat)) stat = TRIDI_SUCCESS
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
        if (present(stat)) stat = TRIDI_SUCCESS
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

    ! Whether WP(ILB:IUB, JLB:JUB, K) is 1 in every cell: a count over the contiguous runs of an explicit-shape
    ! array, which gfortran vectorises (any() of the pointer's section is a scalar loop; decision 066).
    logical function all_water(wp, ilb, iub, jlb, jub, k)
        integer, dimension(:, :, :), pointer, intent(in) :: wp
        integer, intent(in) :: ilb, iub, jlb, jub, k
        all_water = land_cells(wp, lbound(wp, 1), ubound(wp, 1), lbound(wp, 2), ubound(wp, 2), lbound(wp, 3), &
                               ubound(wp, 3), ilb, iub, jlb, jub, k) == 0
    end function

    integer function land_cells(w, l1, u1, l2, u2, l3, u3, ilb, iub, jlb, jub, k)
        integer, intent(in) :: l1, u1, l2, u2, l3, u3, ilb, iub, jlb, jub, k
        integer, intent(in) :: w(l1:u1, l2:u2, l3:u3)
        integer :: i, j
        land_cells = 0
        do j = jlb, jub
            do i = ilb, iub
                land_cells = land_cells + merge(1, 0, w(i, j, k) /= 1)
            end do
        end do
    end function

    ! Contiguity and overlap of the caller's five arrays (inputs 1-3, rhs 4, answer 5), decided before the
    ! adapter chooses to solve on copies (MOHID's first-row quirk, land columns), so that the same arrays
    ! get the same status whether or not it copies: tridi_solve's own rules on the caller's arrays. bytes
    ! are 64-bit: arrays past 2^31 elements are checked too.
    subroutine check_layout(func, names, contiguous, first, bytes, ok, stat)
        character(*), intent(in) :: func, names(5)
        logical, intent(in) :: contiguous(5)
        type(c_ptr), intent(in) :: first(5)
        integer(int64), intent(in) :: bytes(5)
        logical, intent(out) :: ok
        integer, intent(out), optional :: stat
        integer(c_intptr_t) :: a(5)
        integer :: n
        if (present(stat)) stat = TRIDI_SUCCESS
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

    ! ---- registered arrays ----

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

    subroutine remember(p, bytes)
        type(c_ptr), intent(in) :: p
        integer(int64), intent(in) :: bytes
        type(c_ptr), allocatable :: grown(:)
        integer(int64), allocatable :: grown_bytes(:)
        if (.not. allocated(registered)) allocate (registered(16), registered_bytes(16))
        if (nregistered == size(registered)) then
            allocate (grown(2 * size(registered)), grown_bytes(2 * size(registered)))
            grown(1:nregistered) = registered(1:nregistered)
            grown_bytes(1:nregistered) = registered_bytes(1:nregistered)
            call move_alloc(grown, registered)
            call move_alloc(grown_bytes, registered_bytes)
        end if
        nregistered = nregistered + 1
        registered(nregistered) = p
        registered_bytes(nregistered) = bytes
    end subroutine

    subroutine forget(idx)
        integer, intent(in) :: idx
        registered(idx:nregistered - 1) = registered(idx + 1:nregistered)
        registered_bytes(idx:nregistered - 1) = registered_bytes(idx + 1:nregistered)
        nregistered = nregistered - 1
    end subroutine

    ! Whether the bytes at p share a page (lock_page) with an array the adapter registered: heap arrays
    ! allocated one after the other usually do, and CUDA refuses a copy of a range only partly locked.
    logical function shares_page(p, bytes)
        type(c_ptr), intent(in) :: p
        integer(int64), intent(in) :: bytes
        integer(int64) :: first, last, rfirst, rlast
        integer(c_intptr_t) :: a
        integer :: i
        shares_page = .false.
        if (bytes <= 0) return
        a = transfer(p, a)
        first = int(a, int64) / lock_page
        last = (int(a, int64) + bytes - 1) / lock_page
        do i = 1, nregistered
            a = transfer(registered(i), a)
            rfirst = int(a, int64) / lock_page
            rlast = (int(a, int64) + registered_bytes(i) - 1) / lock_page
            if (first <= rlast .and. rfirst <= last) then
                shares_page = .true.
                return
            end if
        end do
    end function

    ! ---- the adapter's plans ----

    ! Destroys every kept plan (before the context goes: tridi_destroy refuses while plans live).
    subroutine drop_plans()
        integer :: n, s
        do n = 1, max_plans
            if (c_associated(kept(n)%plan%handle)) call tridi_plan_destroy(kept(n)%plan, s)
            kept(n) = kept_plan()
        end do
    end subroutine

    ! The slot of the kept plan for this grid, axis, box, kind set, arithmetic and error policy (found =
    ! .true.), or the slot to make it in: a free one, else the least recently used, whose plan is destroyed.
    subroutine find_plan(rank, axis, kinds, arith, on_error, lb, ub, lo, hi, slot, found)
        integer, intent(in) :: rank, axis, kinds, arith, on_error, lb(:), ub(:), lo(:), hi(:)
        integer, intent(out) :: slot
        logical, intent(out) :: found
        integer :: n, s
        uses = uses + 1
        found = .false.
        do n = 1, max_plans
            if (.not. c_associated(kept(n)%plan%handle)) cycle
            if (kept(n)%rank /= rank .or. kept(n)%axis /= axis .or. kept(n)%kinds /= kinds .or. &
                kept(n)%arith /= arith .or. kept(n)%on_error /= on_error) cycle
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
    subroutine keep(slot, rank, axis, kinds, arith, on_error, lb, ub, lo, hi)
        integer, intent(in) :: slot, rank, axis, kinds, arith, on_error, lb(:), ub(:), lo(:), hi(:)
        kept(slot)%rank = rank
        kept(slot)%axis = axis
        kept(slot)%kinds = kinds
        kept(slot)%arith = arith
        kept(slot)%on_error = on_error
        kept(slot)%lb(1:rank) = lb
        kept(slot)%ub(1:rank) = ub
        kept(slot)%lo(1:rank) = lo
        kept(slot)%hi(1:rank) = hi
        kept(slot)%last_use = uses
    end subroutine

    ! ---- statistics ----

    subroutine stats_begin(t0)
        integer(int64), intent(out) :: t0
        call system_clock(t0)
    end subroutine

    subroutine stats_end(routine, t0, s, resolved)
        integer, intent(in) :: routine, s
        integer(int64), intent(in) :: t0
        logical, intent(in) :: resolved
        integer(int64) :: t1, rate
        call system_clock(t1, rate)
        last_seconds = real(t1 - t0, 8) / real(rate, 8)
        seconds(routine) = seconds(routine) + last_seconds
        n_calls(routine) = n_calls(routine) + 1
        if (resolved) n_resolved(routine) = n_resolved(routine) + 1
        if (s /= TRIDI_SUCCESS) n_failed(routine) = n_failed(routine) + 1
    end subroutine

    ! Seconds the last tridi_thomas_3d / tridi_thomasz / tridi_thomas_2d call took, checks and copies
    ! included (what MOHID's StartWatch/StopWatch around the call measure).
    real(8) function tridi_mohid_last_seconds()
        tridi_mohid_last_seconds = last_seconds
    end function

    subroutine tridi_mohid_reset_stats()
        n_calls = 0
        n_resolved = 0
        n_failed = 0
        seconds = 0
        last_seconds = 0
    end subroutine

    ! A table of the adapter's calls per routine (calls, seconds, mean, re-solves by the MOHID loop, failed
    ! calls) and its backend, on unit (default: standard output), e.g. at the end of a model run.
    subroutine tridi_mohid_stats(unit)
        integer, intent(in), optional :: unit
        integer :: u, r, backend, s
        character(len=:), allocatable :: bname
        u = output_unit
        if (present(unit)) u = unit
        bname = 'none (no context)'
        if (ready) then
            call tridi_get_backend(ctx, backend, s)
            if (s == TRIDI_SUCCESS) bname = tridi_backend_name(backend)
        end if
        write (u, '(a)') 'tridi_mohid statistics, backend '//bname
        write (u, '(a15, a12, a14, a14, a11, a9)') 'routine', 'calls', 'seconds', 'ms/call', 're-solved', 'failed'
        do r = 1, 3
            write (u, '(a15, i12, f14.4, f14.4, i11, i9)') routine_name(r), n_calls(r), seconds(r), &
                1d3 * seconds(r) / real(max(n_calls(r), 1_int64), 8), n_resolved(r), n_failed(r)
        end do
    end subroutine

end module tridi_mohid_core
