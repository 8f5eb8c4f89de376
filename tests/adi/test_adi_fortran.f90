! Module tridi_adi from Fortran on the CPU backend: model-shaped arrays with their own lower bounds.
!  - 2D Peaceman-Rachford heat on u(0:n+1, 0:n+1): error vs the exact solution drops ~4x when h halves;
!  - 3D Douglas heat in real(4) on u(-1:n, -1:n, -1:n) (box 0..n-1): error vs the exact solution;
!  - caller diagonals (random, diagonally dominant) against a Thomas written here, with the arrays' own
!    bounds, cells outside the box untouched; in place through the c_ptr form;
!  - bad calls: wrong kind, wrong size, dt <= 0 give a status and a message.
program test_adi_fortran
    use, intrinsic :: iso_c_binding
    use, intrinsic :: iso_fortran_env, only: int64
    use tridi
    use tridi_adi
    implicit none
    real(8), parameter :: pi = 3.14159265358979323846d0
    type(tridi_context) :: ctx
    integer :: failures, seed_size, clock, i
    integer, allocatable :: seed(:)
    real(8) :: e1, e2, e3

    failures = 0
    call system_clock(clock)
    call random_seed(size=seed_size)
    allocate (seed(seed_size))
    seed = clock + 37 * [(4 * i - 1, i = 1, seed_size)]
    call random_seed(put=seed)
    deallocate (seed)
    print '(a,i0,a)', 'test_adi_fortran: seed ', clock, ' (random_seed put = clock + 37*(4i-1))'
    call tridi_create(ctx, backend=TRIDI_BACKEND_CPU)

    e1 = heat2d(31)
    e2 = heat2d(63)
    e3 = heat2d(127)
    print '(a,3es11.3,a,2f6.2)', '2D Peaceman-Rachford errors', e1, e2, e3, ', ratios', e1 / e2, e2 / e3
    call check(e1 / e2 > 3.3d0 .and. e1 / e2 < 4.7d0 .and. e2 / e3 > 3.3d0 .and. e2 / e3 < 4.7d0, &
               '2D convergence ratio ~4')
    e1 = heat3d_r4(24)
    print '(a,es11.3)', '3D Douglas real(4), lower bounds -1, error', e1
    call check(e1 < 3d-3, '3D real(4) error below 3e-3')
    call sweeps()
    call bad_calls()

    call tridi_destroy(ctx)
    print '(a,i0,a)', 'test_adi_fortran: ', failures, ' failures'
    if (failures /= 0) error stop 1

contains

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(*), intent(in) :: what
        if (.not. ok) then
            print '(a,a)', 'FAIL: ', what
            failures = failures + 1
        end if
    end subroutine

    real(8) function heat2d(n) result(err)
        integer, intent(in) :: n
        real(8), allocatable, target :: u(:, :)
        type(tridi_adi_operator_t) :: op
        type(tridi_adi_plan) :: plan
        real(8) :: h, dt, t, exact
        integer :: i, j, k, steps
        h = 1d0 / (n + 1)
        allocate (u(0:n + 1, 0:n + 1))
        u = 0
        do j = 1, n
            do i = 1, n
                u(i, j) = sin(pi * i * h) * sin(pi * j * h)
            end do
        end do
        call tridi_adi_operator_init(op)
        op%scheme = TRIDI_ADI_PEACEMAN_RACHFORD
        op%spacing = h
        op%kappa = 0.1d0
        call tridi_adi_create(plan, ctx, lbound(u), ubound(u), [1, 1], [n, n], TRIDI_FLOAT64, op)
        steps = nint(0.5d0 / h)
        dt = 0.5d0 / steps
        do k = 1, steps
            call tridi_adi_step(plan, u, dt)
        end do
        call tridi_adi_destroy(plan)
        t = steps * dt
        err = 0
        do j = 1, n
            do i = 1, n
                exact = sin(pi * i * h) * sin(pi * j * h) * exp(-2 * pi**2 * 0.1d0 * t)
                err = max(err, abs(u(i, j) - exact))
            end do
        end do
        err = err / exp(-2 * pi**2 * 0.1d0 * t)
        call check(all(u(0, :) == 0) .and. all(u(n + 1, :) == 0) .and. all(u(:, 0) == 0) .and. all(u(:, n + 1) == 0), &
                   '2D halo untouched')
    end function

    real(8) function heat3d_r4(n) result(err)
        integer, intent(in) :: n
        real(4), allocatable, target :: u(:, :, :)
        type(tridi_adi_operator_t) :: op
        type(tridi_adi_plan) :: plan
        real(8) :: h, dt, decay
        integer :: i, j, k, steps
        h = 1d0 / (n + 1)
        allocate (u(-1:n, -1:n, -1:n))
        u = 0
        do k = 0, n - 1
            do j = 0, n - 1
                do i = 0, n - 1
                    u(i, j, k) = real(sin(pi * (i + 1) * h) * sin(pi * (j + 1) * h) * sin(pi * (k + 1) * h), 4)
                end do
            end do
        end do
        call tridi_adi_operator_init(op)
        op%spacing = h
        op%kappa = 0.1d0
        ! Bounds and box as integer(int64): the module takes either integer kind.
        call tridi_adi_create(plan, ctx, lbound(u, kind=int64), ubound(u, kind=int64), [0_int64, 0_int64, 0_int64], &
                              int([n - 1, n - 1, n - 1], int64), TRIDI_FLOAT32, op)
        steps = nint(0.5d0 / h)
        dt = 0.5d0 / steps
        do i = 1, steps
            call tridi_adi_step(plan, u, dt)
        end do
        call tridi_adi_destroy(plan)
        decay = exp(-3 * pi**2 * 0.1d0 * steps * dt)
        err = 0
        do k = 0, n - 1
            do j = 0, n - 1
                do i = 0, n - 1
                    err = max(err, abs(u(i, j, k) - sin(pi * (i + 1) * h) * sin(pi * (j + 1) * h) * &
                                       sin(pi * (k + 1) * h) * decay))
                end do
            end do
        end do
        err = err / decay
    end function

    subroutine sweeps()
        real(8), allocatable, target :: a(:, :, :), b(:, :, :), c(:, :, :), r(:, :, :), x(:, :, :), x0(:, :, :)
        real(8), allocatable :: want(:, :, :)
        type(tridi_adi_operator_t) :: op
        type(tridi_adi_plan) :: plan
        integer :: lo(3), hi(3), axis, stat
        real(8) :: err
        allocate (a(-2:5, 0:7, 1:4), b(-2:5, 0:7, 1:4), c(-2:5, 0:7, 1:4), r(-2:5, 0:7, 1:4), x(-2:5, 0:7, 1:4))
        lo = [-1, 1, 2]
        hi = [4, 6, 3]
        call random_number(a)
        call random_number(c)
        call random_number(r)
        call random_number(b)
        a = a - 0.5d0
        c = c - 0.5d0
        b = abs(a) + abs(c) + 0.5d0 + b
        call random_number(x)
        x = x * 1d3 - 7d0
        x0 = x
        call tridi_adi_operator_init(op)
        call tridi_adi_create(plan, ctx, lbound(x), ubound(x), lo, hi, TRIDI_FLOAT64, op)
        do axis = TRIDI_AXIS_I, TRIDI_AXIS_K
            x = x0
            call tridi_adi_sweep(plan, axis, a, b, c, r, x, stat=stat)
            call check(stat == TRIDI_SUCCESS, 'sweep status')
            want = x0
            call thomas(axis, lo, hi, a, b, c, r, want)
            err = maxval(abs(x - want)) / maxval(abs(want(lo(1):hi(1), lo(2):hi(2), lo(3):hi(3))))
            print '(a,i0,a,es10.2)', 'caller-diagonal sweep along axis ', axis, ': max relative difference ', err
            call check(err < 1d-12, 'sweep matches the Fortran Thomas (cells outside the box untouched)')
        end do
        ! In place: x is the rhs array itself, through the c_ptr form.
        x = r
        call tridi_adi_sweep(plan, TRIDI_AXIS_J, c_loc(a), c_loc(b), c_loc(c), c_loc(x), c_loc(x), stat=stat)
        want = r
        call thomas(TRIDI_AXIS_J, lo, hi, a, b, c, r, want)
        err = maxval(abs(x - want)) / maxval(abs(want))
        print '(a,es10.2)', 'in-place sweep along j: max relative difference ', err
        call check(stat == TRIDI_SUCCESS .and. err < 1d-12, 'in-place sweep')
        call tridi_adi_destroy(plan)
    end subroutine

    ! The reference: Thomas along Fortran dimension axis (1 = i, 2 = j, 3 = k) over the box, with the
    ! arrays' own bounds; writes the box of x.
    subroutine thomas(axis, lo, hi, a, b, c, r, x)
        integer, intent(in) :: axis, lo(3), hi(3)
        real(8), intent(in) :: a(-2:, 0:, 1:), b(-2:, 0:, 1:), c(-2:, 0:, 1:), r(-2:, 0:, 1:)
        real(8), intent(inout) :: x(-2:, 0:, 1:)
        real(8) :: w(0:7), g(0:7), den
        integer :: p(3), q1, q2, m, n, ax1, ax2
        ax1 = merge(2, 1, axis == 1)
        ax2 = merge(2, 3, axis == 3)
        n = hi(axis) - lo(axis)
        do q2 = lo(ax2), hi(ax2)
            do q1 = lo(ax1), hi(ax1)
                p(ax1) = q1
                p(ax2) = q2
                do m = 0, n
                    p(axis) = lo(axis) + m
                    if (m == 0) then
                        den = b(p(1), p(2), p(3))
                        g(m) = r(p(1), p(2), p(3)) / den
                    else
                        den = b(p(1), p(2), p(3)) - a(p(1), p(2), p(3)) * w(m - 1)
                        g(m) = (r(p(1), p(2), p(3)) - a(p(1), p(2), p(3)) * g(m - 1)) / den
                    end if
                    w(m) = c(p(1), p(2), p(3)) / den
                end do
                do m = n, 0, -1
                    p(axis) = lo(axis) + m
                    if (m < n) g(m) = g(m) - w(m) * g(m + 1)
                    x(p(1), p(2), p(3)) = g(m)
                end do
            end do
        end do
    end subroutine

    subroutine bad_calls()
        real(8), allocatable, target :: u8(:, :, :), small(:, :, :)
        real(4), allocatable, target :: u4(:, :, :)
        type(tridi_adi_operator_t) :: op
        type(tridi_adi_plan) :: plan
        integer :: stat
        allocate (u8(0:9, 0:9, 0:9), u4(0:9, 0:9, 0:9), small(0:9, 0:9, 0:8))
        u8 = 1
        u4 = 1
        small = 1
        call tridi_adi_operator_init(op)
        call tridi_adi_create(plan, ctx, lbound(u8), ubound(u8), [1, 1, 1], [8, 8, 8], TRIDI_FLOAT64, op)
        call tridi_adi_step(plan, u4, 0.1d0, stat=stat)
        print '(a,a)', 'real(4) field to a real(8) plan: ', tridi_error_message()
        call check(stat == TRIDI_ERROR_UNSUPPORTED .and. index(tridi_error_message(), 'real(4)') > 0, 'kind refused')
        call tridi_adi_step(plan, small, 0.1d0, stat=stat)
        print '(a,a)', 'field of the wrong size: ', tridi_error_message()
        call check(stat == TRIDI_ERROR_BOUNDS .and. index(tridi_error_message(), '900') > 0, 'size refused')
        call tridi_adi_step(plan, u8, -1d0, stat=stat)
        print '(a,a)', 'dt = -1: ', tridi_error_message()
        call check(stat == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'dt') > 0, 'dt refused')
        ! Axes are Fortran dimensions 1..3; 0 (C's i) and 4 are refused, naming the convention.
        call tridi_adi_sweep(plan, 0, u8, u8, u8, u8, small, stat=stat)
        print '(a,a)', 'sweep along axis 0: ', tridi_error_message()
        call check(stat == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), '1 = i, 2 = j, 3 = k') > 0, &
                   'axis 0 refused')
        call tridi_adi_sweep(plan, 4, c_loc(u8), c_loc(u8), c_loc(u8), c_loc(u8), c_loc(u8), stat=stat)
        call check(stat == TRIDI_ERROR_INVALID_VALUE .and. index(tridi_error_message(), 'axis = 4') > 0, &
                   'axis 4 refused (c_ptr form)')
        call check(all(u8 == 1), 'field unchanged by the refused calls')
        call tridi_adi_destroy(plan)
        call tridi_adi_step(plan, u8, 0.1d0, stat=stat)
        call check(stat == TRIDI_ERROR_INVALID_HANDLE, 'destroyed plan refused')
        op%scheme = TRIDI_ADI_PEACEMAN_RACHFORD
        call tridi_adi_create(plan, ctx, lbound(u8), ubound(u8), [1, 1, 1], [8, 8, 8], TRIDI_FLOAT64, op, stat=stat)
        print '(a,a)', 'Peaceman-Rachford on 3 axes: ', tridi_error_message()
        call check(stat == TRIDI_ERROR_UNSUPPORTED, 'Peaceman-Rachford in 3D refused')
    end subroutine

end program
