! Shared by the Fortran tests: seeded random numbers (fresh each run, TRIDI_SEED replays), random
! diagonally dominant systems on grid-shaped arrays, a real(8) line oracle, poison values, and a
! failure counter that names what failed.
module test_support
    use, intrinsic :: iso_fortran_env, only: int32, int64, error_unit
    use tridi
    use tridi_c_bindings, only: itoa
    implicit none
    private
    public :: init_seed, rand_int, random_box, random_system_3d, random_system_2d, random_mixed_3d, thomas_line, &
              poison4, poison8, check, failures, finish_test, same_bits4, same_bits8, open_context, rel_err, itoa

    integer, save :: failures = 0
    ! Poison: a NaN with a payload no arithmetic produces, so an unwritten cell is recognised bitwise.
    integer(int32), parameter :: poison_bits4 = int(z'7FC0BEEF', int32)
    integer(int64), parameter :: poison_bits8 = int(z'7FF8DEADBEEF0001', int64)

contains

    subroutine init_seed(name)
        character(*), intent(in) :: name
        character(len=32) :: env
        integer :: n, status, len_env, i
        integer(int64) :: seed, clock
        integer, allocatable :: put(:)
        call get_environment_variable('TRIDI_SEED', env, len_env, status)
        if (status == 0 .and. len_env > 0) then
            read (env, *) seed
        else
            call system_clock(clock)
            seed = mod(clock, 2147483647_int64)
        end if
        write (*, '(a, a, i0, a)') name, ': seed ', seed, ' (replay with TRIDI_SEED)'
        call random_seed(size=n)
        allocate (put(n))
        do i = 1, n
            put(i) = int(mod(seed*(2*i + 1) + 104729_int64*i, 2147483647_int64))
        end do
        call random_seed(put=put)
    end subroutine

    integer function rand_int(a, b)
        integer, intent(in) :: a, b
        real(8) :: r
        call random_number(r)
        rand_int = a + min(int(r*(b - a + 1)), b - a)
    end function

    ! D, F, Ti in [-1, 1), E = |D| + |F| + [0.5, 1.5): diagonally dominant on every line.
    subroutine random_system_3d(lb, ub, D, E, F, T)
        integer, intent(in) :: lb(3), ub(3)
        real(8), allocatable, intent(out) :: D(:, :, :), E(:, :, :), F(:, :, :), T(:, :, :)
        allocate (D(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3)))
        allocate (E, F, T, mold=D)
        call random_number(D)
        call random_number(F)
        call random_number(T)
        call random_number(E)
        D = real(real(2*D - 1, 4), 8)
        F = real(real(2*F - 1, 4), 8)
        T = real(real(2*T - 1, 4), 8)
        E = abs(D) + abs(F) + 0.5d0 + E
    end subroutine

    ! Random bounds lb:ub of a grid of the given rank and a box lo:hi inside them, at least margin cells
    ! from each side; entries past rank are 1.
    subroutine random_box(rank, margin, lb, ub, lo, hi)
        integer, intent(in) :: rank, margin
        integer, intent(out) :: lb(:), ub(:), lo(:), hi(:)
        integer :: a
        lb = 1; ub = 1; lo = 1; hi = 1
        do a = 1, rank
            lb(a) = rand_int(-3, 2)
            ub(a) = lb(a) + rand_int(4, 11)
            lo(a) = lb(a) + rand_int(margin, 2)
            hi(a) = ub(a) - rand_int(margin, 2)
        end do
    end subroutine

    ! random_system_3d in MOHID's kinds: E real(8), the others real(4), allocated over lb:ub.
    subroutine random_mixed_3d(lb, ub, D, E, F, T)
        integer, intent(in) :: lb(3), ub(3)
        real(4), pointer, intent(out) :: D(:, :, :), F(:, :, :), T(:, :, :)
        real(8), pointer, intent(out) :: E(:, :, :)
        real(8), allocatable :: d8(:, :, :), e8(:, :, :), f8(:, :, :), t8(:, :, :)
        call random_system_3d(lb, ub, d8, e8, f8, t8)
        allocate (D(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3)))
        allocate (F, T, mold=D)
        allocate (E(lb(1):ub(1), lb(2):ub(2), lb(3):ub(3)))
        D = real(d8, 4)
        F = real(f8, 4)
        T = real(t8, 4)
        E = e8
    end subroutine

    ! The same draws as random_system_3d with one layer.
    subroutine random_system_2d(lb, ub, D, E, F, T)
        integer, intent(in) :: lb(2), ub(2)
        real(8), allocatable, intent(out) :: D(:, :), E(:, :), F(:, :), T(:, :)
        real(8), allocatable :: D3(:, :, :), E3(:, :, :), F3(:, :, :), T3(:, :, :)
        call random_system_3d([lb, 1], [ub, 1], D3, E3, F3, T3)
        allocate (D(lb(1):ub(1), lb(2):ub(2)))
        allocate (E, F, T, mold=D)
        D = D3(:, :, 1)
        E = E3(:, :, 1)
        F = F3(:, :, 1)
        T = T3(:, :, 1)
    end subroutine

    ! The library's convention in real(8): lower not read at the first unknown, upper not at the last.
    function thomas_line(a, b, c, r) result(x)
        real(8), intent(in) :: a(:), b(:), c(:), r(:)
        real(8) :: x(size(r)), w(size(r)), g(size(r)), p
        integer :: m, n
        n = size(r)
        w(1) = -c(1)/b(1)
        g(1) = r(1)/b(1)
        do m = 2, n
            p = b(m) + a(m)*w(m - 1)
            w(m) = -c(m)/p
            g(m) = (r(m) - a(m)*g(m - 1))/p
        end do
        x(n) = g(n)
        do m = n - 1, 1, -1
            x(m) = w(m)*x(m + 1) + g(m)
        end do
    end function

    elemental real(4) function poison4()
        poison4 = transfer(poison_bits4, 1.0_4)
    end function

    elemental real(8) function poison8()
        poison8 = transfer(poison_bits8, 1.0_8)
    end function

    elemental logical function same_bits4(a, b)
        real(4), intent(in) :: a, b
        same_bits4 = transfer(a, 1_int32) == transfer(b, 1_int32)
    end function

    elemental logical function same_bits8(a, b)
        real(8), intent(in) :: a, b
        same_bits8 = transfer(a, 1_int64) == transfer(b, 1_int64)
    end function

    ! max |x - ref| / max |ref| over the cells given.
    real(8) function rel_err(x, ref)
        real(8), intent(in) :: x(:), ref(:)
        rel_err = maxval(abs(x - ref))/max(maxval(abs(ref)), tiny(1d0))
    end function

    subroutine check(ok, what)
        logical, intent(in) :: ok
        character(*), intent(in) :: what
        if (.not. ok) then
            failures = failures + 1
            write (error_unit, '(a, a)') 'FAILED: ', what
        end if
    end subroutine

    ! A context on the backend TRIDI_BACKEND names; exit 77 (ctest skip) when it asks for a GPU that
    ! is not there.
    subroutine open_context(ctx)
        type(tridi_context), intent(out) :: ctx
        integer :: s, b
        call tridi_create(ctx, stat=s)
        if (s == TRIDI_ERROR_NO_DEVICE) then
            write (*, '(a)') 'skip: '//tridi_error_message()
            stop 77
        end if
        if (s /= TRIDI_SUCCESS) then
            write (error_unit, '(a)') 'tridi_create failed: '//tridi_error_message()
            error stop 1
        end if
        call tridi_get_backend(ctx, b)
        write (*, '(a)') 'backend: '//tridi_backend_name(b)
    end subroutine

    subroutine finish_test(name)
        character(*), intent(in) :: name
        if (failures > 0) then
            write (error_unit, '(a, a, i0, a)') name, ': ', failures, ' check(s) failed'
            error stop 1
        end if
        write (*, '(a, a)') name, ': all checks passed'
    end subroutine

end module test_support
