! A downstream Fortran program built against the installed tridi::fortran: solves 2x + y = 3, x + 2y = 3
! (x = y = 1) as one line along i of a 2x1 grid with lower bounds 0, through module tridi, and the same
! system through the MOHID adapter module (which must be installed alongside).
program consumer_f
    use tridi
    use tridi_mohid, only: tridi_mohid_finalize
    implicit none
    type(tridi_context) :: ctx
    real(8), pointer :: lower(:, :), diag(:, :), upper(:, :), rhs(:, :), x(:, :)
    integer :: s
    allocate (lower(0:1, 0:0), diag(0:1, 0:0), upper(0:1, 0:0), rhs(0:1, 0:0), x(0:1, 0:0))
    lower = reshape([0d0, 1d0], [2, 1])
    diag = 2
    upper = reshape([1d0, 0d0], [2, 1])
    rhs = 3
    x = 0
    call tridi_create(ctx, backend=TRIDI_BACKEND_CPU)
    call tridi_solve(ctx, 1, [0, 0], [1, 0], lower, diag, upper, rhs, x, stat=s)
    call tridi_destroy(ctx)
    call tridi_mohid_finalize()
    print '(a, a, a, 2f6.2)', 'consumer_f: tridi ', tridi_version_string(), ', x =', x(:, 0)
    if (s /= TRIDI_SUCCESS .or. any(x /= 1d0)) error stop 1
end program consumer_f
