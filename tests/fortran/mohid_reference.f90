! Oracle for the adapter: MOHID's original Thomas routines (ModuleFunctions.F90: THOMAS_3D with its
! i0_j1 and i1_j0 branches, THOMASZ, THOMASZ_NewType2's land mask, THOMAS_2D) re-implemented in plain
! loops from their conventions: real(8) VECG/VECW, real(4) ANSWER read back during the back
! substitution, unknowns up to the upper index + 1, and the first-row quirks (THOMASZ at K = 1,
! THOMAS_2D at (IJmin-1 + IJ*dj + di, JImin-1 + IJ*di + dj)).
module mohid_reference
    implicit none
    private
    public :: ref_thomas_3d, ref_thomasz, ref_thomas_2d

contains

    subroutine ref_thomas_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, D, E, F, Ti, ANSWER)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj
        real(4), pointer, intent(in) :: D(:, :, :), F(:, :, :), Ti(:, :, :), ANSWER(:, :, :)
        real(8), pointer, intent(in) :: E(:, :, :)
        real(8) :: W(JImin:JImax + 1), G(JImin:JImax + 1), p
        integer :: IJ, JI, K, i, j
        do K = Kmin, Kmax
            do IJ = IJmin, IJmax
                ! Cell of unknown JI on line IJ: (IJ, JI) for di = 0, dj = 1; (JI, IJ) for di = 1, dj = 0.
                i = IJ*dj + JImin*di
                j = IJ*di + JImin*dj
                W(JImin) = -F(i, j, K)/E(i, j, K)
                G(JImin) = Ti(i, j, K)/E(i, j, K)
                do JI = JImin + 1, JImax + 1
                    i = IJ*dj + JI*di
                    j = IJ*di + JI*dj
                    p = E(i, j, K) + D(i, j, K)*W(JI - 1)
                    W(JI) = -F(i, j, K)/p
                    G(JI) = (Ti(i, j, K) - D(i, j, K)*G(JI - 1))/p
                end do
                i = IJ*dj + (JImax + 1)*di
                j = IJ*di + (JImax + 1)*dj
                ANSWER(i, j, K) = real(G(JImax + 1), 4)
                do JI = JImax, JImin, -1
                    i = IJ*dj + JI*di
                    j = IJ*di + JI*dj
                    ANSWER(i, j, K) = real(W(JI)*ANSWER(i + di, j + dj, K) + G(JI), 4)
                end do
            end do
        end do
    end subroutine

    ! WaterPoints present: columns with WaterPoints(I, J, KUB) /= 1 are skipped (THOMASZ_NewType2).
    subroutine ref_thomasz(ILB, IUB, JLB, JUB, KLB, KUB, AW, BW, CW, TIW, RES, WaterPoints)
        integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB
        real(4), pointer, intent(in) :: AW(:, :, :), CW(:, :, :), TIW(:, :, :), RES(:, :, :)
        real(8), pointer, intent(in) :: BW(:, :, :)
        integer, pointer, intent(in), optional :: WaterPoints(:, :, :)
        real(8) :: W(KLB:KUB + 1), G(KLB:KUB + 1), p
        integer :: I, J, K
        do J = JLB, JUB
            do I = ILB, IUB
                if (present(WaterPoints)) then
                    if (WaterPoints(I, J, KUB) /= 1) cycle
                end if
                W(KLB) = -CW(I, J, 1)/BW(I, J, 1)
                G(KLB) = TIW(I, J, 1)/BW(I, J, 1)
                do K = KLB + 1, KUB + 1
                    p = BW(I, J, K) + AW(I, J, K)*W(K - 1)
                    W(K) = -CW(I, J, K)/p
                    G(K) = (TIW(I, J, K) - AW(I, J, K)*G(K - 1))/p
                end do
                RES(I, J, KUB + 1) = real(G(KUB + 1), 4)
                do K = KUB, KLB, -1
                    RES(I, J, K) = real(W(K)*RES(I, J, K + 1) + G(K), 4)
                end do
            end do
        end do
    end subroutine

    subroutine ref_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D, E, F, Ti, ANSWER)
        integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj
        real(4), pointer, intent(in) :: D(:, :), F(:, :), Ti(:, :), ANSWER(:, :)
        real(8), pointer, intent(in) :: E(:, :)
        real(8) :: W(JImin:JImax + 1), G(JImin:JImax + 1), p
        integer :: IJ, JI, i, j
        do IJ = IJmin, IJmax
            i = IJmin - 1 + IJ*dj + di
            j = JImin - 1 + IJ*di + dj
            W(JImin) = -F(i, j)/E(i, j)
            G(JImin) = Ti(i, j)/E(i, j)
            do JI = JImin + 1, JImax + 1
                i = IJ*dj + JI*di
                j = IJ*di + JI*dj
                p = E(i, j) + D(i, j)*W(JI - 1)
                W(JI) = -F(i, j)/p
                G(JI) = (Ti(i, j) - D(i, j)*G(JI - 1))/p
            end do
            i = IJ*dj + (JImax + 1)*di
            j = IJ*di + (JImax + 1)*dj
            ANSWER(i, j) = real(G(JImax + 1), 4)
            do JI = JImax, JImin, -1
                i = IJ*dj + JI*di
                j = IJ*di + JI*dj
                ANSWER(i, j) = real(W(JI)*ANSWER(i + di, j + dj) + G(JI), 4)
            end do
        end do
    end subroutine

end module mohid_reference
