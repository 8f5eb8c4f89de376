! The adapter's own copies (THOMASZ's first row at K = 1, its land columns; THOMAS_2D's first rows read
! elsewhere) when memory runs out: under an address-space limit (setrlimit RLIMIT_AS, as `ulimit -v`)
! just above what the program holds, a call that must copy returns TRIDI_ERROR_OUT_OF_MEMORY with a
! message, leaves the answer untouched and does not stop the program; with the limit lifted the same
! call solves. The model's arrays are large (never touched outside the small box) so that a copy of one
! of them cannot fit. Also: the overlap check on an array of more than 2^31 elements.
program test_mohid_oom
    use, intrinsic :: iso_c_binding, only: c_int, c_long
    use, intrinsic :: iso_fortran_env, only: int64
    use tridi_mohid
    use test_support, only: check, finish_test, poison4, same_bits4, itoa
    implicit none
    type, bind(C) :: rlimit_t
        integer(c_long) :: cur, max
    end type
    interface
        integer(c_int) function getrlimit(resource, rlim) bind(C, name='getrlimit')
            import :: c_int, rlimit_t
            integer(c_int), value :: resource
            type(rlimit_t), intent(out) :: rlim
        end function
        integer(c_int) function setrlimit(resource, rlim) bind(C, name='setrlimit')
            import :: c_int, rlimit_t
            integer(c_int), value :: resource
            type(rlimit_t), intent(in) :: rlim
        end function
    end interface
    integer(c_int), parameter :: RLIMIT_AS = 9 ! Linux
    real(4), pointer :: A(:, :, :), C(:, :, :), T(:, :, :), X(:, :, :), D2(:, :), F2(:, :), T2(:, :), X2(:, :)
    real(8), pointer :: B(:, :, :), E2(:, :)
    integer, pointer :: WP(:, :, :)
    type(rlimit_t) :: saved, tight
    integer :: s, i, j

    call tridi_mohid_init(backend=TRIDI_BACKEND_CPU, stat=s)
    call check(s == TRIDI_SUCCESS, 'tridi_mohid_init: '//tridi_error_message())
    ! 512 x 512 x 64 cells: 64 MiB a real(4) array, 128 MiB the real(8) one; only the box is touched.
    allocate (A(0:511, 0:511, 0:63), C(0:511, 0:511, 0:63), T(0:511, 0:511, 0:63), X(0:511, 0:511, 0:63), &
              B(0:511, 0:511, 0:63), WP(0:5, 0:5, 0:63))
    allocate (D2(0:8191, 0:2047), F2(0:8191, 0:2047), T2(0:8191, 0:2047), X2(0:8191, 0:2047), E2(0:8191, 0:2047))
    do j = 0, 5
        do i = 0, 5
            A(i, j, 0:12) = -0.1
            B(i, j, 0:12) = 1.5d0
            C(i, j, 0:12) = -0.2
            T(i, j, 0:12) = real(i + j, 4)
            X(i, j, 0:12) = poison4()
        end do
    end do
    WP = 1
    WP(2, 2, :) = 0
    D2(0:6, 0:6) = -0.1
    E2(0:6, 0:6) = 1.5d0
    F2(0:6, 0:6) = -0.2
    T2(0:6, 0:6) = 1
    X2(0:6, 0:6) = poison4()

    if (vm_bytes() == 0) then
        write (*, '(a)') 'skip: no /proc/self/status to size the address-space limit from'
        stop 77
    end if
    ! A sanitizer's runtime maps and reserves memory of its own under the limit (and the 8 GiB array
    ! below would cost it shadow memory): this test is for plain builds.
    if (mapped('libasan') .or. mapped('libtsan')) then
        write (*, '(a)') 'skip: a sanitizer runtime is loaded; address-space limits are tested in plain builds'
        stop 77
    end if
    call check(getrlimit(RLIMIT_AS, saved) == 0, 'getrlimit')
    tight = rlimit_t(vm_bytes() + 48_int64 * 1024 * 1024, saved%max)
    if (saved%max >= 0 .and. tight%cur > saved%max) tight%cur = saved%max
    call check(setrlimit(RLIMIT_AS, tight) == 0, 'setrlimit')
    ! THOMASZ with KLB = 2 (first row at K = 1): copies of BW, CW, TIW
    call tridi_thomasz(1, 4, 1, 4, 2, 10, A, B, C, T, X, stat=s)
    call expect_oom('tridi_thomasz KLB = 2')
    ! THOMASZ_NewType2 with a land column: copies of all five
    call tridi_thomasz(1, 4, 1, 4, 1, 10, A, B, C, T, X, WaterPoints=WP, variant=TRIDI_MOHID_NEWTYPE, stat=s)
    call expect_oom('tridi_thomasz with land')
    ! THOMAS_2D with IJmin = 2 (first rows read elsewhere): copies of E, F, Ti
    call tridi_thomas_2d(2, 4, 1, 4, 0, 1, D2, E2, F2, T2, X2, stat=s)
    call expect_oom('tridi_thomas_2d IJmin = 2')
    call check(all(same_bits4(X(0:5, 0:5, 0:12), poison4())) .and. all(same_bits4(X2(0:6, 0:6), poison4())), &
               'an answer was written by a call that ran out of memory')

    call check(setrlimit(RLIMIT_AS, saved) == 0, 'setrlimit back')
    call tridi_thomasz(1, 4, 1, 4, 2, 10, A, B, C, T, X, stat=s)
    call check(s == TRIDI_SUCCESS, 'tridi_thomasz KLB = 2 without the limit: '//tridi_error_message())
    call tridi_thomas_2d(2, 4, 1, 4, 0, 1, D2, E2, F2, T2, X2, stat=s)
    call check(s == TRIDI_SUCCESS, 'tridi_thomas_2d without the limit: '//tridi_error_message())
    call check(.not. same_bits4(X(1, 1, 2), poison4()) .and. .not. same_bits4(X2(2, 1), poison4()), 'not solved')
    deallocate (A, B, C, T, X, WP, D2, E2, F2, T2, X2)
    call past_2_31()
    call finish_test('test_mohid_oom')

contains

    ! An array of more than 2^31 elements (8 GiB of address space, never touched) given as every argument:
    ! ANSWER overlaps D, which the overlap check must see although a default-integer size() overflows.
    subroutine past_2_31()
        real(4), pointer :: H(:, :, :)
        integer :: ierr
        allocate (H(65536, 32769, 1), stat=ierr)
        if (ierr /= 0) then
            write (*, '(a)') 'test_mohid_oom: no 8 GiB of address space here; the 2^31-element overlap check skipped'
            return
        end if
        call tridi_thomas_3d(1, 2, 1, 1, 1, 1, 0, 1, H, H, H, H, H, stat=s)
        call check(s == TRIDI_ERROR_ALIASING .and. index(tridi_error_message(), 'ANSWER overlaps D') > 0, &
                   'ANSWER => D past 2^31 elements: stat '//itoa(s)//' '//tridi_error_message())
        deallocate (H)
    end subroutine

    subroutine expect_oom(label)
        character(*), intent(in) :: label
        call check(s == TRIDI_ERROR_OUT_OF_MEMORY .and. index(tridi_error_message(), 'cannot allocate') > 0, &
                   label//' under the limit: stat '//itoa(s)//' '//tridi_error_message())
    end subroutine

    ! Whether a library whose path contains name is mapped into the process (/proc/self/maps).
    logical function mapped(name)
        character(*), intent(in) :: name
        character(len=512) :: line
        integer :: u, ios
        mapped = .false.
        open (newunit=u, file='/proc/self/maps', action='read', iostat=ios)
        if (ios /= 0) return
        do
            read (u, '(a)', iostat=ios) line
            if (ios /= 0) exit
            if (index(line, name) > 0) mapped = .true.
        end do
        close (u)
    end function

    ! The process's address space now (VmSize of /proc/self/status), in bytes.
    integer(int64) function vm_bytes()
        character(len=256) :: line
        integer :: u, ios
        integer(int64) :: kb
        vm_bytes = 0
        open (newunit=u, file='/proc/self/status', action='read', iostat=ios)
        if (ios /= 0) return
        do
            read (u, '(a)', iostat=ios) line
            if (ios /= 0) exit
            if (line(1:7) == 'VmSize:') then
                read (line(8:), *) kb
                vm_bytes = kb * 1024
            end if
        end do
        close (u)
    end function

end program test_mohid_oom
