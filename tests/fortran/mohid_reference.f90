! Oracle for the adapter: MOHID's original Thomas routines (ModuleFunctions.F90: THOMAS_3D with its i0_j1
! and i1_j0 branches, THOMASZ, THOMASZ_NewType2's land mask, THOMAS_2D), each line solved by the tests' one
! C reference (tests/common/mohid_reference.h, mohid_line_mixed). What stays here is MOHID's indexing:
! unknowns up to the upper index + 1, and the first-row quirks (THOMASZ's coefficients at K = 1, THOMAS_2D's
! at (IJmin-1 + IJ*dj + di, JImin-1 + IJ*di + dj)). Arrays are whole contiguous allocations.
module mohid_reference
    use iso_c_binding, only: c_int64_t, c_loc, c_ptr
    implicit none
    private
    public :: ref_thomas_3d, ref_thomasz, ref_thomas_2d

    interface
        integer(c_int64_t) function mohid_line_mixed(n, stride, first_in, D, E, F, Ti, X) bind(C)
            import :: c_int64_t, c_ptr
            integer(c_int64_t), value :: n, stride, first_in
            type(c_ptr), value :: D, E, F, Ti, X
        end function
    end interface

contains

    ! One line: n unknowns stride elements apart from the cell whose pointers are given; first_in elements
    ! from it, the first unknown's coefficients.
    subroutine line(n, stride, first_in, D, E, F, Ti, X)
        integer, intent(in) :: n
        integer(c_int64_t), intent(in) :: stride, first_in
        type(c_ptr), intent(in) :: D, E, F, Ti, X
        integer(c_int64_t) :: zero
        zero = mohid_line_mixed(int(n, c_int64_t), stride, first_in, D, E, F, Ti, X)
    end subroutine

    subroutine ref_thomas_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, D, E, F, Ti, ANSWER)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj
        real(4), pointer, intent(in) :: D(:, :, :), F(:, :, :), Ti(:, :, :), ANSWER(:, :, :)
        real(8), pointer, intent(in) :: E(:, :, :)
        integer :: IJ, K, i, j
        integer(c_int64_t) :: stride
        if (.not. is_contiguous(ANSWER)) error stop 'ref_thomas_3d: arrays must be contiguous'
        ! Cell of unknown JI on line IJ: (IJ, JI) for di = 0, dj = 1; (JI, IJ) for di = 1, dj = 0.
        stride = di + dj*size(ANSWER, 1, kind=c_int64_t)
        do K = Kmin, Kmax
            do IJ = IJmin, IJmax
                i = IJ*dj + JImin*di
                j = IJ*di + JImin*dj
                call line(JImax + 2 - JImin, stride, 0_c_int64_t, c_loc(D(i, j, K)), c_loc(E(i, j, K)), &
                          c_loc(F(i, j, K)), c_loc(Ti(i, j, K)), c_loc(ANSWER(i, j, K)))
            end do
        end do
    end subroutine

    ! WaterPoints present: columns with WaterPoints(I, J, KUB) /= 1 are skipped (THOMASZ_NewType2).
    subroutine ref_thomasz(ILB, IUB, JLB, JUB, KLB, KUB, AW, BW, CW, TIW, RES, WaterPoints)
        integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB
        real(4), pointer, intent(in) :: AW(:, :, :), CW(:, :, :), TIW(:, :, :), RES(:, :, :)
        real(8), pointer, intent(in) :: BW(:, :, :)
        integer, pointer, intent(in), optional :: WaterPoints(:, :, :)
        integer :: I, J
        integer(c_int64_t) :: stride
        if (.not. is_contiguous(RES)) error stop 'ref_thomasz: arrays must be contiguous'
        stride = size(RES, 1, kind=c_int64_t)*size(RES, 2, kind=c_int64_t)
        do J = JLB, JUB
            do I = ILB, IUB
                if (present(WaterPoints)) then
                    if (WaterPoints(I, J, KUB) /= 1) cycle
                end if
                ! The first unknown (K = KLB) reads its coefficients at K = 1, as THOMASZ does.
                call line(KUB + 2 - KLB, stride, (1 - KLB)*stride, c_loc(AW(I, J, KLB)), c_loc(BW(I, J, KLB)), &
                          c_loc(CW(I, J, KLB)), c_loc(TIW(I, J, KLB)), c_loc(RES(I, J, KLB)))
            end do
        end do
    end subroutine

    subroutine ref_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D, E, F, Ti, ANSWER)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj
        real(4), pointer, intent(in) :: D(:, :), F(:, :), Ti(:, :), ANSWER(:, :)
        real(8), pointer, intent(in) :: E(:, :)
        integer :: IJ, i, j, i0, j0
        integer(c_int64_t) :: stride, n1
        if (.not. is_contiguous(ANSWER)) error stop 'ref_thomas_2d: arrays must be contiguous'
        n1 = size(ANSWER, 1, kind=c_int64_t)
        stride = di + dj*n1
        do IJ = IJmin, IJmax
            ! The answers start at JI = JImin; the first unknown's coefficients sit at THOMAS_2D's own cell.
            i = IJ*dj + JImin*di
            j = IJ*di + JImin*dj
            i0 = IJmin - 1 + IJ*dj + di
            j0 = JImin - 1 + IJ*di + dj
            call line(JImax + 2 - JImin, stride, int(i0 - i, c_int64_t) + int(j0 - j, c_int64_t)*n1, &
                      c_loc(D(i, j)), c_loc(E(i, j)), c_loc(F(i, j)), c_loc(Ti(i, j)), c_loc(ANSWER(i, j)))
        end do
    end subroutine

end module mohid_reference
