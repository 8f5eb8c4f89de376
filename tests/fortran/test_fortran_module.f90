! Module tridi on its own: the generic tridi_solve for all three kind combinations, rank 2 and 3, every
! axis, arrays with lower bounds other than 1 and halos, boxes strictly inside, in-place solves, uploads,
! registered arrays (tridi_host_register),
! device memory when the backend is CUDA, the C struct mirrors, and the errors only the Fortran layer can
! see (non-contiguous arrays, unequal bounds, bad axis, unassociated arrays). Oracle: a real(8) Thomas per
! line; X is poisoned before each call and every cell outside the box must keep its poison. Also the
! Fortran convention (axis constants 1/2/3, lo/hi as default or 64-bit integers) and the one error store
! (a failure found in Fortran is in C's per-thread record).
program test_fortran_module
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: int64
    use tridi
    ! The private module, only to check the struct sizes and that C's error record is the one store.
    use tridi_c_bindings, only: tridi_config_init_c, tridi_adi_operator_init_c, tridi_error_message_c, &
                                c_to_f_string
    use test_support
    implicit none
    type(tridi_context) :: ctx
    integer :: trial, axis, backend, s

    call init_seed('test_fortran_module')
    call open_context(ctx)
    call tridi_get_backend(ctx, backend)
    call check_structs()
    do trial = 1, 4
        do axis = 1, 3
            call test_3d(axis, 4)
            call test_3d(axis, 8)
            call test_3d(axis, 0)
        end do
        do axis = 1, 2
            call test_2d(axis, 4)
            call test_2d(axis, 8)
            call test_2d(axis, 0)
        end do
    end do
    call test_errors()
    call test_convention()
    call test_register()
    call test_pivoting()
    if (backend == TRIDI_BACKEND_CUDA) call test_device()
    call tridi_destroy(ctx, s)
    call check(s == TRIDI_SUCCESS, 'tridi_destroy')
    call finish_test('test_fortran_module')

contains

    ! tridi_create(pivoting=): the nonsingular [[0, 1], [1, 1]] x = [1, 2] has a zero first pivot; plain Thomas
    ! refuses it, the partial-pivoting fallback answers x = (1, 1), and CHECK refuses [[1e-17, 1], [1, 1]].
    subroutine test_pivoting()
        type(tridi_context) :: pctx
        real(8), target :: d(2, 1), e(2, 1), f(2, 1), t(2, 1), x(2, 1)
        integer :: st
        d = 0; f = 0
        d(2, 1) = 1d0
        e(:, 1) = [0d0, 1d0]
        f(1, 1) = 1d0
        t(:, 1) = [1d0, 2d0]
        x = -7d0
        call tridi_solve(ctx, 1, [1, 1], [2, 1], d, e, f, t, x, stat=st)
        call check(st == TRIDI_ERROR_ZERO_PIVOT .and. all(x == -7d0), 'no pivoting: zero pivot, x untouched')
        call tridi_create(pctx, backend=TRIDI_BACKEND_CPU, pivoting=TRIDI_PIVOT_FALLBACK, stat=st)
        call check(st == TRIDI_SUCCESS, 'tridi_create(pivoting=FALLBACK): '//tridi_error_message())
        call tridi_solve(pctx, 1, [1, 1], [2, 1], d, e, f, t, x, stat=st)
        call check(st == TRIDI_SUCCESS .and. all(abs(x(:, 1) - 1d0) < 1d-14), 'pivoting fallback answers (1, 1)')
        call tridi_destroy(pctx)
        e(1, 1) = 1d-17
        x = -7d0
        call tridi_create(pctx, backend=TRIDI_BACKEND_CPU, pivoting=TRIDI_PIVOT_CHECK, stat=st)
        call tridi_solve(pctx, 1, [1, 1], [2, 1], d, e, f, t, x, stat=st)
        call check(st == TRIDI_ERROR_UNSTABLE .and. all(x == -7d0), 'pivoting check: UNSTABLE, x untouched')
        call tridi_destroy(pctx)
    end subroutine

    ! The bind(c) mirrors must have the C sizes (the C init functions write sizeof into .size).
    subroutine check_structs()
        type(tridi_config_t) :: cfg
        type(tridi_adi_operator_t) :: op
        call tridi_config_init_c(cfg)
        call check(cfg%size == c_sizeof(cfg), 'tridi_config_t size differs from C')
        call tridi_adi_operator_init_c(op)
        call check(op%size == c_sizeof(op), 'tridi_adi_operator_t size differs from C')
        call check(len(tridi_version_string()) >= 5, 'tridi_version_string')
        call check(tridi_status_name(TRIDI_ERROR_BOUNDS) == 'TRIDI_ERROR_BOUNDS', 'tridi_status_name')
    end subroutine

    ! kind_code: 4 = all real(4), 8 = all real(8), 0 = MOHID's mix (E real(8), the rest real(4)).
    subroutine test_3d(axis, kind_code)
        integer, intent(in) :: axis, kind_code
        integer :: lb(3), ub(3), lo(3), hi(3), i, j, k, inplace
        real(8), allocatable :: d8(:, :, :), e8(:, :, :), f8(:, :, :), t8(:, :, :), ref(:, :, :), got(:, :, :)
        real(4), pointer :: D4(:, :, :), E4(:, :, :), F4(:, :, :), T4(:, :, :), X4(:, :, :)
        real(8), pointer :: D8p(:, :, :), E8p(:, :, :), F8p(:, :, :), T8p(:, :, :), X8p(:, :, :)
        logical, allocatable :: inbox(:, :, :), written(:, :, :)
        character(len=:), allocatable :: label
        real(8) :: tol
        call random_box(3, 1, lb, ub, lo, hi)
        call random_system_3d(lb, ub, d8, e8, f8, t8)
        allocate (ref, mold=d8)
        ref = 0
        select case (axis)
        case (1)
            do k = lo(3), hi(3)
                do j = lo(2), hi(2)
                    ref(lo(1):hi(1), j, k) = thomas_line(d8(lo(1):hi(1), j, k), e8(lo(1):hi(1), j, k), &
                                                         f8(lo(1):hi(1), j, k), t8(lo(1):hi(1), j, k))
                end do
            end do
        case (2)
            do k = lo(3), hi(3)
                do i = lo(1), hi(1)
                    ref(i, lo(2):hi(2), k) = thomas_line(d8(i, lo(2):hi(2), k), e8(i, lo(2):hi(2), k), &
                                                         f8(i, lo(2):hi(2), k), t8(i, lo(2):hi(2), k))
                end do
            end do
        case (3)
            do j = lo(2), hi(2)
                do i = lo(1), hi(1)
                    ref(i, j, lo(3):hi(3)) = thomas_line(d8(i, j, lo(3):hi(3)), e8(i, j, lo(3):hi(3)), &
                                                         f8(i, j, lo(3):hi(3)), t8(i, j, lo(3):hi(3)))
                end do
            end do
        end select
        allocate (inbox(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3)))
        inbox = .false.
        inbox(lo(1):hi(1), lo(2):hi(2), lo(3):hi(3)) = .true.
        tol = merge(1d-12, 1d-5, kind_code == 8)
        do inplace = 0, 1
            label = 'tridi_solve 3D axis '//itoa(axis)//' kind '//itoa(kind_code)//merge(' in place', '         ', &
                                                                                       inplace == 1)
            if (kind_code == 8) then
                allocate (D8p(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3)))
                allocate (E8p, F8p, T8p, X8p, mold=D8p)
                D8p = d8
                E8p = e8
                F8p = f8
                T8p = t8
                X8p = poison8()
                if (inplace == 1) then
                    T8p = merge(t8, poison8(), inbox)
                    call tridi_solve(ctx, axis, lo, hi, D8p, E8p, F8p, T8p, T8p, stat=s)
                    got = T8p
                else
                    call tridi_solve(ctx, axis, lo, hi, D8p, E8p, F8p, T8p, X8p, stat=s)
                    got = X8p
                end if
                written = .not. same_bits8(got, poison8())
                deallocate (D8p, E8p, F8p, T8p, X8p)
            else
                allocate (D4(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3)))
                allocate (F4, T4, X4, mold=D4)
                D4 = real(d8, 4)
                F4 = real(f8, 4)
                T4 = real(t8, 4)
                X4 = poison4()
                if (inplace == 1) T4 = merge(real(t8, 4), poison4(), inbox)
                if (kind_code == 4) then
                    allocate (E4, mold=D4)
                    E4 = real(e8, 4)
                    if (inplace == 1) then
                        call tridi_solve(ctx, axis, lo, hi, D4, E4, F4, T4, T4, stat=s)
                    else
                        call tridi_solve(ctx, axis, lo, hi, D4, E4, F4, T4, X4, stat=s)
                    end if
                    deallocate (E4)
                else
                    allocate (E8p(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3)))
                    E8p = e8
                    if (inplace == 1) then
                        call tridi_solve(ctx, axis, lo, hi, D4, E8p, F4, T4, T4, stat=s)
                    else
                        call tridi_solve(ctx, axis, lo, hi, D4, E8p, F4, T4, X4, stat=s)
                    end if
                    deallocate (E8p)
                end if
                if (inplace == 1) then
                    written = .not. same_bits4(T4, poison4())
                    got = real(T4, 8)
                else
                    written = .not. same_bits4(X4, poison4())
                    got = real(X4, 8)
                end if
                deallocate (D4, F4, T4, X4)
            end if
            call check(s == TRIDI_SUCCESS, label//': '//tridi_error_message())
            call check(all(written .eqv. inbox), label//': cells outside the box written or box cells unwritten')
            call check(rel_err(pack(got, inbox), pack(ref, inbox)) <= tol, label//': relative error too large')
        end do
    end subroutine

    ! tridi_host_register / tridi_host_unregister: what the Fortran layer refuses (unassociated, not
    ! contiguous, no elements) and what C refuses (twice, not registered), then a solve on registered arrays,
    ! with an upload, bitwise equal to the same solve on unregistered ones (only the transfer differs).
    subroutine test_register()
        integer :: lb(3), ub(3), lo(3), hi(3), axis
        real(4), pointer :: D4(:, :, :), F4(:, :, :), T4(:, :, :), X4(:, :, :), Xr(:, :, :), sec(:, :, :), &
                            none(:, :, :) => null(), empty(:, :, :)
        real(8), pointer :: Ep(:, :, :)
        real(4), pointer :: P2(:, :)
        call random_box(3, 1, lb, ub, lo, hi)
        call random_mixed_3d(lb, ub, D4, Ep, F4, T4)
        allocate (X4, Xr, mold=D4)
        axis = rand_int(1, 3)
        X4 = poison4()
        call tridi_solve(ctx, axis, lo, hi, D4, Ep, F4, T4, X4, stat=s)
        call check(s == TRIDI_SUCCESS, 'unregistered solve: '//tridi_error_message())

        call tridi_host_register(ctx, none, stat=s)
        call check(s == TRIDI_ERROR_NULL_POINTER .and. index(tridi_error_message(), 'not associated') > 0, &
                   'register an unassociated array: '//tridi_error_message())
        sec => D4(lb(1):ub(1):2, :, :)
        call tridi_host_register(ctx, sec, stat=s)
        call check(s == TRIDI_ERROR_UNSUPPORTED .and. index(tridi_error_message(), 'not contiguous') > 0, &
                   'register a section: '//tridi_error_message())
        allocate (empty(1:0, 1:3, 1:3))
        call tridi_host_register(ctx, empty, stat=s)
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'no elements') > 0, &
                   'register an empty array: '//tridi_error_message())
        deallocate (empty)
        call tridi_host_register(ctx, D4, stat=s)
        call check(s == TRIDI_SUCCESS, 'register D: '//tridi_error_message())
        call tridi_host_register(ctx, D4, stat=s)
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'already registered') > 0, &
                   'register D twice: '//tridi_error_message())
        call tridi_host_register(ctx, Ep, stat=s)
        call tridi_host_register(ctx, F4, stat=s)
        call tridi_host_register(ctx, T4, stat=s)
        call tridi_host_register(ctx, Xr, stat=s)
        call check(s == TRIDI_SUCCESS, 'register X: '//tridi_error_message())
        Xr = poison4()
        call tridi_upload_async(ctx, axis, lo, hi, Ep, TRIDI_ROLE_DIAG, stat=s)
        call tridi_solve(ctx, axis, lo, hi, D4, Ep, F4, T4, Xr, stat=s)
        call check(s == TRIDI_SUCCESS, 'registered solve: '//tridi_error_message())
        call check(all(same_bits4(Xr, X4)), 'registered solve differs from the unregistered one')
        call tridi_host_unregister(ctx, D4, stat=s)
        call tridi_host_unregister(ctx, Ep, stat=s)
        call tridi_host_unregister(ctx, F4, stat=s)
        call tridi_host_unregister(ctx, T4, stat=s)
        call tridi_host_unregister(ctx, Xr, stat=s)
        call check(s == TRIDI_SUCCESS, 'unregister X: '//tridi_error_message())
        call tridi_host_unregister(ctx, D4, stat=s)
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'not registered') > 0, &
                   'unregister D twice: '//tridi_error_message())
        allocate (P2(0:5, -1:3))
        call tridi_host_register(ctx, P2, stat=s)
        call check(s == TRIDI_SUCCESS, 'register a 2D array: '//tridi_error_message())
        call tridi_host_unregister(ctx, P2, stat=s)
        call check(s == TRIDI_SUCCESS, 'unregister a 2D array: '//tridi_error_message())
        deallocate (P2, D4, Ep, F4, T4, X4, Xr)
    end subroutine

    subroutine test_2d(axis, kind_code)
        integer, intent(in) :: axis, kind_code
        integer :: lb(2), ub(2), lo(2), hi(2), i, j
        real(8), allocatable :: d8(:, :), e8(:, :), f8(:, :), t8(:, :), ref(:, :), got(:, :)
        real(4), pointer :: D4(:, :), E4(:, :), F4(:, :), T4(:, :), X4(:, :)
        real(8), pointer :: D8p(:, :), E8p(:, :), F8p(:, :), T8p(:, :), X8p(:, :)
        logical, allocatable :: inbox(:, :), written(:, :)
        character(len=:), allocatable :: label
        real(8) :: tol
        call random_box(2, 1, lb, ub, lo, hi)
        call random_system_2d(lb, ub, d8, e8, f8, t8)
        allocate (ref, mold=d8)
        ref = 0
        if (axis == 1) then
            do j = lo(2), hi(2)
                ref(lo(1):hi(1), j) = thomas_line(d8(lo(1):hi(1), j), e8(lo(1):hi(1), j), f8(lo(1):hi(1), j), &
                                                  t8(lo(1):hi(1), j))
            end do
        else
            do i = lo(1), hi(1)
                ref(i, lo(2):hi(2)) = thomas_line(d8(i, lo(2):hi(2)), e8(i, lo(2):hi(2)), f8(i, lo(2):hi(2)), &
                                                  t8(i, lo(2):hi(2)))
            end do
        end if
        allocate (inbox(lb(1):ub(1), lb(2):ub(2)))
        inbox = .false.
        inbox(lo(1):hi(1), lo(2):hi(2)) = .true.
        tol = merge(1d-12, 1d-5, kind_code == 8)
        label = 'tridi_solve 2D axis '//itoa(axis)//' kind '//itoa(kind_code)
        if (kind_code == 8) then
            allocate (D8p(lb(1):ub(1), lb(2):ub(2)))
            allocate (E8p, F8p, T8p, X8p, mold=D8p)
            D8p = d8
            E8p = e8
            F8p = f8
            T8p = t8
            X8p = poison8()
            ! uploads are validated (CPU) or start transfers (CUDA); the solve must give the same answer
            call tridi_upload_async(ctx, axis, lo, hi, E8p, TRIDI_ROLE_DIAG, stat=s)
            call check(s == TRIDI_SUCCESS, label//' upload: '//tridi_error_message())
            call tridi_solve(ctx, axis, lo, hi, D8p, E8p, F8p, T8p, X8p, stat=s)
            written = .not. same_bits8(X8p, poison8())
            got = X8p
            deallocate (D8p, E8p, F8p, T8p, X8p)
        else
            allocate (D4(lb(1):ub(1), lb(2):ub(2)))
            allocate (F4, T4, X4, mold=D4)
            D4 = real(d8, 4)
            F4 = real(f8, 4)
            T4 = real(t8, 4)
            X4 = poison4()
            call tridi_upload_async(ctx, axis, lo, hi, T4, TRIDI_ROLE_RHS, stat=s)
            call check(s == TRIDI_SUCCESS, label//' upload: '//tridi_error_message())
            if (kind_code == 4) then
                allocate (E4, mold=D4)
                E4 = real(e8, 4)
                call tridi_solve(ctx, axis, lo, hi, D4, E4, F4, T4, X4, stat=s)
                deallocate (E4)
            else
                allocate (E8p(lb(1):ub(1), lb(2):ub(2)))
                E8p = e8
                call tridi_solve(ctx, axis, lo, hi, D4, E8p, F4, T4, X4, stat=s)
                deallocate (E8p)
            end if
            written = .not. same_bits4(X4, poison4())
            got = real(X4, 8)
            deallocate (D4, F4, T4, X4)
        end if
        call check(s == TRIDI_SUCCESS, label//': '//tridi_error_message())
        call check(all(written .eqv. inbox), label//': cells outside the box written or box cells unwritten')
        call check(rel_err(pack(got, inbox), pack(ref, inbox)) <= tol, label//': relative error too large')
    end subroutine

    subroutine test_errors()
        real(4), pointer :: D(:, :, :), F(:, :, :), T(:, :, :), X(:, :, :), strided(:, :, :), other(:, :, :)
        real(4), pointer :: Y(:, :, :), Z(:, :, :)
        real(8), pointer :: E(:, :, :)
        real(4), allocatable, target :: big(:, :, :)
        type(tridi_context) :: dead, cctx
        character(len=:), allocatable :: msg
        integer :: i0
        allocate (D(0:6, -1:5, 2:5))
        allocate (F, T, X, mold=D)
        allocate (E(0:6, -1:5, 2:5))
        D = 0.25
        F = 0.25
        T = 1
        E = 2
        X = poison4()
        ! not contiguous: a strided view of a larger array, with the same bounds as the others
        allocate (big(0:13, -1:5, 2:5))
        strided(0:, -1:, 2:) => big(::2, :, :)
        call tridi_solve(ctx, 1, [1, 0, 3], [5, 4, 4], D, E, F, T, strided, stat=s)
        call check(s == TRIDI_ERROR_UNSUPPORTED .and. index(tridi_error_message(), 'X is not contiguous') > 0, &
                   'non-contiguous X: '//tridi_error_message())
        ! bounds differ between arrays
        allocate (other(1:7, -1:5, 2:5))
        call tridi_solve(ctx, 2, [1, 0, 3], [5, 4, 4], D, E, F, other, X, stat=s)
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'Ti has bounds (1:7') > 0, &
                   'unequal bounds: '//tridi_error_message())
        deallocate (other)
        ! axis outside 1..3, lo of the wrong size
        call tridi_solve(ctx, 4, [1, 0, 3], [5, 4, 4], D, E, F, T, X, stat=s)
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'axis = 4') > 0, &
                   'axis 4: '//tridi_error_message())
        call tridi_solve(ctx, 1, [1, 0], [5, 4, 4], D, E, F, T, X, stat=s)
        call check(s == TRIDI_ERROR_INVALID_VALUE, 'lo of size 2: '//tridi_error_message())
        ! box outside the allocation: the C library's check, its message passed through
        call tridi_solve(ctx, 3, [1, 0, 3], [5, 4, 6], D, E, F, T, X, stat=s)
        call check(s == TRIDI_ERROR_BOUNDS .and. index(tridi_error_message(), 'tridi_solve') > 0, &
                   'box outside: '//tridi_error_message())
        ! a zero pivot names the cell. Under ON_ERROR_LINES (the default) its line is left untouched and every
        ! other line answered (as when the line is fixed); under ON_ERROR_CALL, asked for at tridi_create, X
        ! is unchanged.
        i0 = rand_int(1, 5)
        allocate (Y, Z, mold=D)
        Y = poison4()
        Z = poison4()
        call tridi_solve(ctx, 2, [1, 2, 3], [5, 4, 4], D, E, F, T, Z, stat=s)
        call check(s == TRIDI_SUCCESS, 'the system before its zero pivot: '//tridi_error_message())
        E(i0, 2, 3) = 0
        D(i0, 2, 3) = 0
        call tridi_solve(ctx, 2, [1, 2, 3], [5, 4, 4], D, E, F, T, Y, stat=s)
        msg = tridi_error_message()
        call check(s == TRIDI_ERROR_ZERO_PIVOT .and. index(msg, '('//itoa(i0)//', 2, 3)') > 0 .and. &
                   index(msg, '1 line failed') > 0, 'zero pivot, ON_ERROR_LINES: '//msg)
        call check(all(same_bits4(Y(i0, :, 3), poison4())), 'ON_ERROR_LINES: the failing line was written')
        Z(i0, :, 3) = poison4()
        call check(all(abs(Y - Z) <= 1e-5 * abs(Z) .or. same_bits4(Y, Z)), &
                   'ON_ERROR_LINES: the other lines differ from their answers without the zero pivot')
        deallocate (Y, Z)
        call tridi_create(cctx, backend=TRIDI_BACKEND_CPU, on_error=TRIDI_ON_ERROR_CALL, stat=s)
        call check(s == TRIDI_SUCCESS, 'tridi_create(on_error=CALL): '//tridi_error_message())
        call tridi_solve(cctx, 2, [1, 2, 3], [5, 4, 4], D, E, F, T, X, stat=s)
        msg = tridi_error_message()
        call check(s == TRIDI_ERROR_ZERO_PIVOT .and. index(msg, '('//itoa(i0)//', 2, 3)') > 0, &
                   'zero pivot, ON_ERROR_CALL: '//msg)
        call tridi_destroy(cctx)
        call tridi_create(cctx, on_error=7, stat=s)
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'on_error = 7') > 0, &
                   'tridi_create(on_error=7): '//tridi_error_message())
        ! an unassociated array
        nullify (other)
        call tridi_solve(ctx, 1, [1, 0, 3], [5, 4, 4], D, E, other, T, X, stat=s)
        call check(s == TRIDI_ERROR_NULL_POINTER .and. index(tridi_error_message(), 'F is not associated') > 0, &
                   'unassociated F: '//tridi_error_message())
        ! zero-size arrays: an empty box is a no-op, any other box is out of bounds
        block
            real(4), pointer :: z4(:, :)
            real(8), pointer :: z8(:, :)
            allocate (z4(1:0, 1:3), z8(1:0, 1:3))
            call tridi_solve(ctx, 1, [1, 1], [0, 3], z4, z8, z4, z4, z4, stat=s)
            call check(s == TRIDI_SUCCESS, 'empty box on zero-size arrays: '//tridi_error_message())
            call tridi_solve(ctx, 1, [1, 1], [1, 3], z4, z8, z4, z4, z4, stat=s)
            call check(s == TRIDI_ERROR_BOUNDS .and. index(tridi_error_message(), 'no elements') > 0, &
                       'non-empty box on zero-size arrays: '//tridi_error_message())
            deallocate (z4, z8)
        end block
        ! a context never created / destroyed
        call tridi_solve(ctx=dead, axis=1, lo=[1, 0, 3], hi=[5, 4, 4], D=D, E=E, F=F, Ti=T, X=X, stat=s)
        call check(s == TRIDI_ERROR_INVALID_HANDLE, 'null context: '//tridi_error_message())
        call check(all(same_bits4(X, poison4())), 'X written by a failed call')
        ! An empty box goes to C too, which checks the context and the corners as for any box (the module
        ! returned SUCCESS here without a check, where C refuses both).
        block
            type(tridi_context) :: made, gone
            real(4), pointer :: z4(:, :)
            real(8), pointer :: z8(:, :)
            call tridi_create(made, stat=s)
            gone = made ! a copy of the handle outlives the destroy, which nullifies made
            call tridi_destroy(made)
            call tridi_solve(gone, 1, [3, 0, 3], [2, 4, 4], D, E, F, T, X, stat=s)
            call check(s == TRIDI_ERROR_INVALID_HANDLE .and. index(tridi_error_message(), 'not a live') > 0, &
                       'empty box, destroyed context: '//tridi_error_message())
            call tridi_solve(ctx, 1, [huge(0_int64), 0_int64, 3_int64], [2_int64, 4_int64, 4_int64], D, E, F, T, &
                             X, stat=s)
            call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'index range') > 0, &
                       'empty box, corner 2^63-1: '//tridi_error_message())
            call check(all(same_bits4(X, poison4())), 'X written by an empty-box call')
            allocate (z4(1:0, 1:3), z8(1:0, 1:3))
            call tridi_solve(gone, 1, [1, 1], [0, 3], z4, z8, z4, z4, z4, stat=s)
            call check(s == TRIDI_ERROR_INVALID_HANDLE, 'empty box on zero-size arrays, destroyed context: '// &
                       tridi_error_message())
            deallocate (z4, z8)
        end block
        ! device memory needs the CUDA backend
        if (backend /= TRIDI_BACKEND_CUDA) then
            block
                type(c_ptr) :: dp
                call tridi_device_alloc(ctx, 64_int64, dp, stat=s)
                call check(s == TRIDI_ERROR_UNSUPPORTED, 'device alloc on the CPU backend: '//tridi_error_message())
            end block
        end if
        deallocate (D, E, F, T, X, big)
    end subroutine

    ! The Fortran convention: named axes 1/2/3, lo/hi of either integer kind (same answer bitwise), other
    ! kinds and axis numbers refused with a message naming the argument or the convention; every message,
    ! whichever layer found the failure, is C's per-thread record.
    subroutine test_convention()
        integer :: lb(3), ub(3), lo(3), hi(3), axis
        real(8), allocatable :: d8(:, :, :), e8(:, :, :), f8(:, :, :), t8(:, :, :)
        real(8), pointer :: D(:, :, :), E(:, :, :), F(:, :, :), T(:, :, :), X(:, :, :), X64(:, :, :)
        character(len=:), allocatable :: msg
        call check(TRIDI_AXIS_I == 1 .and. TRIDI_AXIS_J == 2 .and. TRIDI_AXIS_K == 3, 'TRIDI_AXIS_I/J/K = 1/2/3')
        call check(TRIDI_AXIS_X == TRIDI_AXIS_I .and. TRIDI_AXIS_Y == TRIDI_AXIS_J .and. &
                   TRIDI_AXIS_Z == TRIDI_AXIS_K, 'TRIDI_AXIS_X/Y/Z = TRIDI_AXIS_I/J/K')
        call random_box(3, 1, lb, ub, lo, hi)
        call random_system_3d(lb, ub, d8, e8, f8, t8)
        allocate (D(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3)))
        allocate (E, F, T, X, X64, mold=D)
        D = d8
        E = e8
        F = f8
        T = t8
        do axis = TRIDI_AXIS_I, TRIDI_AXIS_K
            X = poison8()
            X64 = poison8()
            call tridi_solve(ctx, axis, lo, hi, D, E, F, T, X, stat=s)
            call check(s == TRIDI_SUCCESS, 'default-integer lo/hi: '//tridi_error_message())
            call tridi_upload_async(ctx, axis, int(lo, int64), int(hi, int64), E, TRIDI_ROLE_DIAG, stat=s)
            call check(s == TRIDI_SUCCESS, 'int64 lo/hi upload: '//tridi_error_message())
            call tridi_solve(ctx, axis, int(lo, int64), int(hi, int64), D, E, F, T, X64, stat=s)
            call check(s == TRIDI_SUCCESS, 'int64 lo/hi: '//tridi_error_message())
            call check(all(same_bits8(X, X64)), 'int64 lo/hi: answer differs from default-integer lo/hi')
        end do
        X = poison8()
        call tridi_solve(ctx, TRIDI_AXIS_J, real(lo), real(hi), D, E, F, T, X, stat=s)
        msg = tridi_error_message()
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(msg, 'tridi_solve: lo is not an integer') == 1, &
                   'real lo: '//msg)
        call tridi_solve(ctx, 0, lo, hi, D, E, F, T, X, stat=s)
        msg = tridi_error_message()
        call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(msg, 'axis = 0') > 0 .and. &
                   index(msg, '1 = i, 2 = j, 3 = k') > 0, 'axis 0 names the Fortran convention: '//msg)
        call check(all(same_bits8(X, poison8())), 'X written by a refused call')
        ! The arrays are assumed-rank dummies: ranks other than 2 and 3, and unequal ranks, are refused.
        block
            real(8), pointer :: E2(:, :), line(:)
            allocate (E2(lb(1):ub(1), lb(2):ub(2)), line(lb(1):ub(1)))
            E2 = 1
            line = 1
            call tridi_solve(ctx, TRIDI_AXIS_I, lo, hi, D, E2, F, T, X, stat=s)
            call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'E has rank 2 but D has rank 3') &
                       > 0, 'unequal ranks: '//tridi_error_message())
            call tridi_solve(ctx, TRIDI_AXIS_I, lo(1:1), hi(1:1), line, line, line, line, line, stat=s)
            call check(s == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'D has rank 1') > 0, &
                       'rank 1: '//tridi_error_message())
            call check(all(same_bits8(X, poison8())), 'X written by a refused call')
            deallocate (E2, line)
        end block
        msg = tridi_error_message()
        ! One store: the Fortran layer's message is what C's tridi_error_message returns, and the next
        ! failure, found by C, replaces it.
        call check(c_to_f_string(tridi_error_message_c()) == msg, 'a Fortran-layer failure is not in C''s record: '// &
                   c_to_f_string(tridi_error_message_c()))
        call tridi_set_error(TRIDI_ERROR_BOUNDS, 'layer above: cell (1, 2, 3)', s)
        call check(s == TRIDI_ERROR_BOUNDS .and. c_to_f_string(tridi_error_message_c()) == 'layer above: cell (1, 2, 3)', &
                   'tridi_set_error does not write C''s record')
        call tridi_solve(ctx, TRIDI_AXIS_K, lo, [hi(1), hi(2), ub(3) + 1], D, E, F, T, X, stat=s)
        call check(s == TRIDI_ERROR_BOUNDS .and. index(tridi_error_message(), 'layer above') == 0, &
                   'a C failure after a Fortran one: '//tridi_error_message())
        deallocate (D, E, F, T, X, X64)
    end subroutine

    ! Device-resident solve (CUDA only): copy in, solve, copy back, compare with the host solve.
    subroutine test_device()
        integer, parameter :: lb(3) = [0, -1, 1], ub(3) = [9, 7, 6], lo(3) = [1, 0, 2], hi(3) = [8, 6, 5]
        real(4), pointer :: D(:, :, :), F(:, :, :), T(:, :, :), X(:, :, :), Xd(:, :, :)
        real(8), pointer :: E(:, :, :)
        type(c_ptr) :: dD, dE, dF, dT, dX
        integer(int64) :: n
        logical :: inbox(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3))
        call random_mixed_3d(lb, ub, D, E, F, T)
        allocate (X, Xd, mold=D)
        X = poison4()
        Xd = poison4()
        n = size(D, kind=int64)
        call tridi_device_alloc(ctx, 4*n, dD, s)
        call tridi_device_alloc(ctx, 8*n, dE, s)
        call tridi_device_alloc(ctx, 4*n, dF, s)
        call tridi_device_alloc(ctx, 4*n, dT, s)
        call tridi_device_alloc(ctx, 4*n, dX, s)
        call check(s == TRIDI_SUCCESS, 'tridi_device_alloc: '//tridi_error_message())
        call tridi_copy_to_device(ctx, dD, D)
        call tridi_copy_to_device(ctx, dE, E)
        call tridi_copy_to_device(ctx, dF, F)
        call tridi_copy_to_device(ctx, dT, T)
        call tridi_copy_to_device(ctx, dX, Xd)
        call tridi_solve_device(ctx, lb, ub, 3, lo, hi, dD, dE, dF, dT, dX, TRIDI_FLOAT32, &
                                diag_dtype=TRIDI_FLOAT64, stat=s)
        call check(s == TRIDI_SUCCESS, 'tridi_solve_device: '//tridi_error_message())
        call tridi_synchronize(ctx, s)
        call check(s == TRIDI_SUCCESS, 'tridi_synchronize: '//tridi_error_message())
        call tridi_copy_to_host(ctx, Xd, dX)
        call tridi_solve(ctx, 3, lo, hi, D, E, F, T, X, stat=s)
        call check(s == TRIDI_SUCCESS, 'host solve: '//tridi_error_message())
        inbox = .false.
        inbox(lo(1):hi(1), lo(2):hi(2), lo(3):hi(3)) = .true.
        call check(all(same_bits4(Xd, poison4()) .eqv. .not. inbox), &
                   'device solve: cells outside the box written or box cells unwritten')
        call check(rel_err(real(pack(Xd, inbox), 8), real(pack(X, inbox), 8)) <= 1d-5, &
                   'device solve differs from the host solve')
        call tridi_device_free(ctx, dD)
        call tridi_device_free(ctx, dE)
        call tridi_device_free(ctx, dF)
        call tridi_device_free(ctx, dT)
        call tridi_device_free(ctx, dX, s)
        call check(s == TRIDI_SUCCESS, 'tridi_device_free')
        deallocate (D, E, F, T, X, Xd)
    end subroutine

end program test_fortran_module
