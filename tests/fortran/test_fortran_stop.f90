! With stat absent, an error must print the message (naming the routine and the bad arguments) and
! stop the program; ctest checks the printed message (PASS_REGULAR_EXPRESSION).
program test_fortran_stop
    use tridi_mohid
    implicit none
    real(4), pointer :: D(:, :, :), F(:, :, :), Ti(:, :, :), X(:, :, :)
    real(8), pointer :: E(:, :, :)
    allocate (D(0:5, 0:5, 0:5), F(0:5, 0:5, 0:5), Ti(0:5, 0:5, 0:5), X(0:5, 0:5, 0:5), E(0:5, 0:5, 0:5))
    D = 0
    F = 0
    Ti = 1
    E = 1
    call tridi_thomas_3d(1, 4, 1, 3, 1, 4, 3, 1, D, E, F, Ti, X)
    print '(a)', 'test_fortran_stop: the call returned instead of stopping'
end program test_fortran_stop
