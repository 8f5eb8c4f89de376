! Module tridi's plans (tridi_plan_create / _solve / _status / _destroy): one plan reused over many calls
! gives tridi_solve's answers bit for bit (ON_ERROR_CALL, ARITH_MOHID: the adapter's contract) on every
! axis of rank 2 and 3 and every kind combination, with fresh values in the same arrays at each call;
! ON_ERROR_LINES leaves a failing line untouched and answers the others, ON_ERROR_CALL leaves X unchanged;
! a destroyed plan, arrays of another kind or bounds, and a host plan given to the device call are refused
! with a status and a message. Also the size of the tridi_solve_options mirror, and the MOHID adapter's
! cache of plans (more shapes than it holds, each met twice) against tridi_solve bit for bit.
program test_fortran_plan
    use, intrinsic :: iso_c_binding
    use tridi
    ! The private module, only to check the options struct against C.
    use tridi_c_bindings, only: tridi_solve_options_t, tridi_solve_options_init_c, TRIDI_MEMORY_HOST
    use tridi_mohid, only: tridi_thomas_3d, tridi_mohid_context, tridi_mohid_finalize
    use test_support
    implicit none
    type(tridi_context) :: ctx
    integer :: rank, axis, kc, s
    ! test_reuse's problem (here so that its call table, run, sees them): kc = 4 all real(4), 8 all
    ! real(8), 0 MOHID's mix; rank-2 problems use the rank-3 storage (third extent 1) through the views.
    integer :: lo(3), hi(3)
    type(tridi_plan) :: plan
    real(4), pointer, contiguous :: D4(:, :, :), E4(:, :, :), F4(:, :, :), T4(:, :, :), X4(:, :, :), Y4(:, :, :)
    real(8), pointer, contiguous :: D8(:, :, :), E8(:, :, :), F8(:, :, :), T8(:, :, :), X8(:, :, :), Y8(:, :, :)
    real(4), pointer :: D4v(:, :), E4v(:, :), F4v(:, :), T4v(:, :), X4v(:, :), Y4v(:, :)
    real(8), pointer :: D8v(:, :), E8v(:, :), F8v(:, :), T8v(:, :), X8v(:, :), Y8v(:, :)

    call init_seed('test_fortran_plan')
    call open_context(ctx)
    call check_options()
    do rank = 2, 3
        do axis = 1, rank
            do kc = 0, 8, 4
                call test_reuse()
            end do
        end do
    end do
    call test_on_error()
    call test_refused()
    call test_adapter_cache()
    call tridi_destroy(ctx, s)
    call check(s == TRIDI_SUCCESS, 'tridi_destroy after the plans were destroyed: '//tridi_error_message())
    call finish_test('test_fortran_plan')

contains

    ! tridi_solve_options: size_t size; int on_error, arith, verdict, memory; void *stream.
    subroutine check_options()
        type(tridi_solve_options_t) :: o
        call tridi_solve_options_init_c(o)
        call check(o%size == c_sizeof(o), 'tridi_solve_options_t size differs from C')
        call check(o%on_error == TRIDI_ON_ERROR_LINES .and. o%arith == TRIDI_ARITH_DEFAULT .and. &
                   o%verdict == TRIDI_VERDICT_SYNC .and. o%memory == TRIDI_MEMORY_HOST .and. &
                   .not. c_associated(o%stream), 'tridi_solve_options_init defaults seen through the mirror')
    end subroutine

    ! One plan, ncalls solves with fresh values each time; after each, tridi_solve on the same values
    ! into another poisoned array: the two answers (box and poison around it) agree bit for bit.
    subroutine test_reuse()
        integer, parameter :: ncalls = 6
        integer :: lb(3), ub(3), call_no, st
        real(8), allocatable :: md(:, :, :), me(:, :, :), mf(:, :, :), mt(:, :, :)
        logical :: same, written
        character(len=:), allocatable :: label
        label = 'plan reuse rank '//itoa(rank)//' axis '//itoa(axis)//' kind '//itoa(kc)
        call random_box(rank, 0, lb, ub, lo, hi)
        allocate (D4(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3)))
        allocate (E4, F4, T4, X4, Y4, mold=D4)
        allocate (D8(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3)))
        allocate (E8, F8, T8, X8, Y8, mold=D8)
        ! Rank-2 views of the rank-3 storage (third extent 1).
        D4v(lb(1):ub(1), lb(2):ub(2)) => D4; E4v(lb(1):ub(1), lb(2):ub(2)) => E4
        F4v(lb(1):ub(1), lb(2):ub(2)) => F4; T4v(lb(1):ub(1), lb(2):ub(2)) => T4
        X4v(lb(1):ub(1), lb(2):ub(2)) => X4; Y4v(lb(1):ub(1), lb(2):ub(2)) => Y4
        D8v(lb(1):ub(1), lb(2):ub(2)) => D8; E8v(lb(1):ub(1), lb(2):ub(2)) => E8
        F8v(lb(1):ub(1), lb(2):ub(2)) => F8; T8v(lb(1):ub(1), lb(2):ub(2)) => T8
        X8v(lb(1):ub(1), lb(2):ub(2)) => X8; Y8v(lb(1):ub(1), lb(2):ub(2)) => Y8
        call run(0, st)
        call check(st == TRIDI_SUCCESS, label//': tridi_plan_create: '//tridi_error_message())
        do call_no = 1, ncalls
            call random_system_3d(lb, ub, md, me, mf, mt)
            D4 = real(md, 4); E4 = real(me, 4); F4 = real(mf, 4); T4 = real(mt, 4)
            D8 = md; E8 = me; F8 = mf; T8 = mt
            X4 = poison4(); Y4 = poison4(); X8 = poison8(); Y8 = poison8()
            call run(1, st)
            call check(st == TRIDI_SUCCESS, label//': tridi_plan_solve call '//itoa(call_no)//': '//tridi_error_message())
            call run(2, st)
            call check(st == TRIDI_SUCCESS, label//': tridi_solve call '//itoa(call_no)//': '//tridi_error_message())
            if (kc == 8) then
                same = all(same_bits8(X8, Y8))
                written = .not. any(same_bits8(X8(lo(1):hi(1), lo(2):hi(2), lo(3):hi(3)), poison8()))
            else
                same = all(same_bits4(X4, Y4))
                written = .not. any(same_bits4(X4(lo(1):hi(1), lo(2):hi(2), lo(3):hi(3)), poison4()))
            end if
            call check(same, label//': call '//itoa(call_no)//': plan and tridi_solve differ')
            call check(written, label//': call '//itoa(call_no)//': box not written')
        end do
        call tridi_plan_destroy(plan, st)
        call check(st == TRIDI_SUCCESS, label//': tridi_plan_destroy: '//tridi_error_message())
        deallocate (D4, E4, F4, T4, X4, Y4, D8, E8, F8, T8, X8, Y8)
    end subroutine

    ! test_reuse's calls; mode 0: tridi_plan_create (CALL, MOHID arithmetic); 1: tridi_plan_solve into X; 2: tridi_solve into Y.
    subroutine run(mode, st)
        integer, intent(in) :: mode
        integer, intent(out) :: st
        if (rank == 3) then
            select case (kc * 10 + mode)
            case (40); call tridi_plan_create(plan, ctx, axis, lo, hi, D4, E4, F4, T4, X4, &
                                              on_error=TRIDI_ON_ERROR_CALL, arith=TRIDI_ARITH_MOHID, stat=st)
            case (41); call tridi_plan_solve(plan, D4, E4, F4, T4, X4, stat=st)
            case (42); call tridi_solve(ctx, axis, lo, hi, D4, E4, F4, T4, Y4, stat=st)
            case (80); call tridi_plan_create(plan, ctx, axis, lo, hi, D8, E8, F8, T8, X8, &
                                              on_error=TRIDI_ON_ERROR_CALL, arith=TRIDI_ARITH_MOHID, stat=st)
            case (81); call tridi_plan_solve(plan, D8, E8, F8, T8, X8, stat=st)
            case (82); call tridi_solve(ctx, axis, lo, hi, D8, E8, F8, T8, Y8, stat=st)
            case (0); call tridi_plan_create(plan, ctx, axis, lo, hi, D4, E8, F4, T4, X4, &
                                             on_error=TRIDI_ON_ERROR_CALL, arith=TRIDI_ARITH_MOHID, stat=st)
            case (1); call tridi_plan_solve(plan, D4, E8, F4, T4, X4, stat=st)
            case (2); call tridi_solve(ctx, axis, lo, hi, D4, E8, F4, T4, Y4, stat=st)
            end select
        else
            select case (kc * 10 + mode)
            case (40); call tridi_plan_create(plan, ctx, axis, lo(1:2), hi(1:2), D4v, E4v, F4v, T4v, X4v, &
                                              on_error=TRIDI_ON_ERROR_CALL, arith=TRIDI_ARITH_MOHID, stat=st)
            case (41); call tridi_plan_solve(plan, D4v, E4v, F4v, T4v, X4v, stat=st)
            case (42); call tridi_solve(ctx, axis, lo(1:2), hi(1:2), D4v, E4v, F4v, T4v, Y4v, stat=st)
            case (80); call tridi_plan_create(plan, ctx, axis, lo(1:2), hi(1:2), D8v, E8v, F8v, T8v, X8v, &
                                              on_error=TRIDI_ON_ERROR_CALL, arith=TRIDI_ARITH_MOHID, stat=st)
            case (81); call tridi_plan_solve(plan, D8v, E8v, F8v, T8v, X8v, stat=st)
            case (82); call tridi_solve(ctx, axis, lo(1:2), hi(1:2), D8v, E8v, F8v, T8v, Y8v, stat=st)
            case (0); call tridi_plan_create(plan, ctx, axis, lo(1:2), hi(1:2), D4v, E8v, F4v, T4v, X4v, &
                                             on_error=TRIDI_ON_ERROR_CALL, arith=TRIDI_ARITH_MOHID, stat=st)
            case (1); call tridi_plan_solve(plan, D4v, E8v, F4v, T4v, X4v, stat=st)
            case (2); call tridi_solve(ctx, axis, lo(1:2), hi(1:2), D4v, E8v, F4v, T4v, Y4v, stat=st)
            end select
        end if
    end subroutine

    ! One line along i of a MOHID-mix system has a zero first pivot. LINES (the default): that line keeps
    ! its poison, every other line equals tridi_solve's answer on the system with the line repaired, and the
    ! status is ZERO_PIVOT. CALL: ZERO_PIVOT and X unchanged.
    subroutine test_on_error()
        integer, parameter :: n1 = 7, n2 = 5, n3 = 4, bj = 3, bk = 2
        real(8), allocatable :: md(:, :, :), me(:, :, :), mf(:, :, :), mt(:, :, :)
        real(4), pointer :: D(:, :, :), F(:, :, :), T(:, :, :), X(:, :, :), Y(:, :, :)
        real(8), pointer :: E(:, :, :)
        type(tridi_plan) :: lines, whole
        integer :: st
        logical :: bad(n1, n2, n3)
        call random_system_3d([1, 1, 1], [n1, n2, n3], md, me, mf, mt)
        allocate (D(n1, n2, n3), E(n1, n2, n3), F(n1, n2, n3), T(n1, n2, n3), X(n1, n2, n3), Y(n1, n2, n3))
        D = real(md, 4); E = me; F = real(mf, 4); T = real(mt, 4)
        call tridi_plan_create(lines, ctx, TRIDI_AXIS_I, [1, 1, 1], [n1, n2, n3], D, E, F, T, X, stat=st)
        call check(st == TRIDI_SUCCESS, 'LINES plan: '//tridi_error_message())
        call tridi_plan_create(whole, ctx, TRIDI_AXIS_I, [1, 1, 1], [n1, n2, n3], D, E, F, T, X, &
                               on_error=TRIDI_ON_ERROR_CALL, stat=st)
        call check(st == TRIDI_SUCCESS, 'CALL plan: '//tridi_error_message())
        Y = poison4()
        call tridi_solve(ctx, TRIDI_AXIS_I, [1, 1, 1], [n1, n2, n3], D, E, F, T, Y, stat=st)
        call check(st == TRIDI_SUCCESS, 'tridi_solve of the repaired system: '//tridi_error_message())
        E(1, bj, bk) = 0
        bad = .false.
        bad(:, bj, bk) = .true.
        X = poison4()
        call tridi_plan_solve(lines, D, E, F, T, X, stat=st)
        call check(st == TRIDI_ERROR_ZERO_PIVOT, 'LINES: status '//tridi_status_name(st)//' is not ZERO_PIVOT')
        call check(index(tridi_error_message(), 'at cell (1, '//itoa(bj)//', '//itoa(bk)//')') > 0 .and. &
                   index(tridi_error_message(), '1 line failed') > 0, 'LINES: message names the cell and the count: '// &
                   tridi_error_message())
        call check(all(same_bits4(X(:, bj, bk), poison4())), 'LINES: the failing line was written')
        call check(all(same_bits4(X, Y) .or. bad), 'LINES: the other lines differ from tridi_solve')
        X = poison4()
        call tridi_plan_solve(whole, D, E, F, T, X, stat=st)
        call check(st == TRIDI_ERROR_ZERO_PIVOT, 'CALL: status '//tridi_status_name(st)//' is not ZERO_PIVOT')
        call check(all(same_bits4(X, poison4())), 'CALL: X changed on a failed call')
        call tridi_plan_destroy(lines)
        call tridi_plan_destroy(whole)
        deallocate (D, E, F, T, X, Y)
    end subroutine

    ! What a plan refuses, each with a status, a message naming the argument, and X unchanged.
    subroutine test_refused()
        real(4), pointer :: D(:, :, :), F(:, :, :), T(:, :, :), X(:, :, :), W(:, :, :), X2(:, :)
        real(8), pointer :: E(:, :, :)
        real(4), pointer :: E4(:, :, :)
        type(tridi_plan) :: plan, copy, empty
        integer :: st
        allocate (D(0:5, 4, 3), E(0:5, 4, 3), F(0:5, 4, 3), T(0:5, 4, 3), X(0:5, 4, 3), E4(0:5, 4, 3), &
                  W(0:6, 4, 3), X2(0:5, 4))
        D = 0.1; E = 2; E4 = 2; F = 0.2; T = 1; W = 0
        call tridi_plan_create(plan, ctx, TRIDI_AXIS_J, [0, 1, 1], [5, 4, 3], D, E, F, T, X, stat=st)
        call check(st == TRIDI_SUCCESS, 'refusals: tridi_plan_create: '//tridi_error_message())
        X = poison4()
        ! All real(4) arrays for a plan made for MOHID's mix (E real(8)).
        call tridi_plan_solve(plan, D, E4, F, T, X, stat=st)
        call check(st == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'diag') > 0, &
                   'wrong kind: '//tridi_status_name(st)//': '//tridi_error_message())
        ! An answer array of other bounds.
        call tridi_plan_solve(plan, D, E, F, T, W, stat=st)
        call check(st == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'argument X has bounds (0:6') > 0, &
                   'wrong bounds: '//tridi_status_name(st)//': '//tridi_error_message())
        call tridi_plan_solve(plan, D, E, F, T, X2, stat=st)
        call check(st == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'argument X has rank 2') > 0, &
                   'wrong rank: '//tridi_status_name(st)//': '//tridi_error_message())
        call tridi_plan_solve_device(plan, c_loc(D), c_loc(E), c_loc(F), c_loc(T), c_loc(X), stat=st)
        call check(st == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'tridi_plan_solve') > 0, &
                   'host plan on the device call: '//tridi_status_name(st)//': '//tridi_error_message())
        call check(all(same_bits4(X, poison4())), 'refusals: X changed')
        ! Bad options are refused by C, naming the option.
        call tridi_plan_create(copy, ctx, TRIDI_AXIS_J, [0, 1, 1], [5, 4, 3], D, E, F, T, X, on_error=7, stat=st)
        call check(st == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'on_error') > 0 .and. &
                   .not. c_associated(copy%handle), 'on_error = 7: '//tridi_status_name(st)//': '//tridi_error_message())
        ! Destroyed: through the variable (null) and through a copy of it (C's registry of live handles).
        copy = plan
        call tridi_plan_destroy(plan, stat=st)
        call check(st == TRIDI_SUCCESS .and. .not. c_associated(plan%handle), 'tridi_plan_destroy')
        call tridi_plan_solve(plan, D, E, F, T, X, stat=st)
        call check(st == TRIDI_ERROR_INVALID_HANDLE, 'destroyed plan: '//tridi_status_name(st))
        call tridi_plan_solve(copy, D, E, F, T, X, stat=st)
        call check(st == TRIDI_ERROR_INVALID_HANDLE, 'copy of a destroyed plan: '//tridi_status_name(st)// &
                   ': '//tridi_error_message())
        call tridi_plan_status(copy, stat=st)
        call check(st == TRIDI_ERROR_INVALID_HANDLE, 'status of a destroyed plan: '//tridi_status_name(st))
        call tridi_plan_destroy(copy, stat=st)
        call check(st == TRIDI_ERROR_INVALID_HANDLE, 'destroying a plan twice: '//tridi_status_name(st))
        call tridi_plan_destroy(plan, stat=st)
        call check(st == TRIDI_SUCCESS, 'destroying a null plan is accepted')
        call check(all(same_bits4(X, poison4())), 'destroyed plans: X changed')
        ! An empty box: solves are no-op successes.
        call tridi_plan_create(empty, ctx, TRIDI_AXIS_I, [3, 1, 1], [2, 4, 3], D, E, F, T, X, stat=st)
        call check(st == TRIDI_SUCCESS, 'empty plan: '//tridi_error_message())
        call tridi_plan_solve(empty, D, E, F, T, X, stat=st)
        call check(st == TRIDI_SUCCESS .and. all(same_bits4(X, poison4())), 'empty plan solve')
        call tridi_plan_destroy(empty)
        deallocate (D, E, F, T, X, E4, W, X2)
    end subroutine

    ! The adapter keeps a few plans: 20 sweeps on 4 grids with 5 boxes each (19 distinct, more than it keeps),
    ! all met twice in turn, with fresh values; every answer equals tridi_solve's bit for bit (the adapter's
    ! own tests compare it with MOHID), so a plan is never reused for another grid or box.
    subroutine test_adapter_cache()
        integer, parameter :: nshapes = 20
        type(tridi_context) :: actx
        real(8), allocatable :: md(:, :, :), me(:, :, :), mf(:, :, :), mt(:, :, :)
        real(4), pointer :: D(:, :, :), F(:, :, :), T(:, :, :), X(:, :, :), Y(:, :, :)
        real(8), pointer :: E(:, :, :)
        integer :: round, n, ni, nj, ijmax, st
        call tridi_mohid_context(actx, stat=st)
        call check(st == TRIDI_SUCCESS, 'tridi_mohid_context: '//tridi_error_message())
        do round = 1, 2
            do n = 1, nshapes
                ni = 6 + mod(n, 4)
                nj = 4 + mod(n, 4)
                ijmax = ni - mod(n / 4, 5)
                call random_system_3d([0, 0, 1], [ni + 1, nj + 1, 3], md, me, mf, mt)
                allocate (D(0:ni + 1, 0:nj + 1, 3), E(0:ni + 1, 0:nj + 1, 3), F(0:ni + 1, 0:nj + 1, 3), &
                          T(0:ni + 1, 0:nj + 1, 3), X(0:ni + 1, 0:nj + 1, 3), Y(0:ni + 1, 0:nj + 1, 3))
                D = real(md, 4); E = me; F = real(mf, 4); T = real(mt, 4)
                X = poison4(); Y = poison4()
                ! Lines along J over I = 1..ijmax, unknowns J = 1..nj (MOHID's JImax + 1 = nj).
                call tridi_thomas_3d(1, ijmax, 1, nj - 1, 1, 3, 0, 1, D, E, F, T, X, stat=st)
                call check(st == TRIDI_SUCCESS, 'adapter sweep '//itoa(n)//': '//tridi_error_message())
                call tridi_solve(actx, TRIDI_AXIS_J, [1, 1, 1], [ijmax, nj, 3], D, E, F, T, Y, stat=st)
                call check(st == TRIDI_SUCCESS, 'tridi_solve sweep '//itoa(n)//': '//tridi_error_message())
                call check(all(same_bits4(X, Y)), 'adapter sweep '//itoa(n)//' round '//itoa(round)// &
                           ': differs from tridi_solve')
                deallocate (D, E, F, T, X, Y)
            end do
        end do
        ! The adapter's plans go with its context.
        call tridi_mohid_finalize(stat=st)
        call check(st == TRIDI_SUCCESS, 'tridi_mohid_finalize with plans held: '//tridi_error_message())
    end subroutine

end program test_fortran_plan
