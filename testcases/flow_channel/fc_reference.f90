! The `reference` backend of flow_channel: MOHID's sequential Thomas routines (ModuleFunctions,
! "Original" variants), rewritten for this test case from the conventions in
! shared/docs/mohid-thomas.md. They are the oracle the tridi backends are compared against and the
! baseline of the speed-ups, so they keep MOHID's loop order and arithmetic: real(8) intermediates,
! each answer rounded to real(4) before the next back-substitution uses it.
module fc_reference
  implicit none
  private
  public :: ref_thomas_3d, ref_thomasz, ref_thomas_2d

  integer, parameter :: r4 = kind(1.0), r8 = kind(1.0d0)

contains

  ! Lines along J (di=0, dj=1) or along I (di=1, dj=0); unknowns JImin..JImax+1 of each line.
  subroutine ref_thomas_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, D, E, F, Ti, ANSWER, VECG, VECW)
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj
    real(r4), dimension(:,:,:), pointer :: D, F, Ti, ANSWER
    real(r8), dimension(:,:,:), pointer :: E
    real(r8), dimension(:), pointer :: VECG, VECW
    integer :: i, j, k
    real(r8) :: aux

    if (di == 0 .and. dj == 1) then
      do k = Kmin, Kmax
        do i = IJmin, IJmax
          VECW(JImin) = -F(i, JImin, k) / E(i, JImin, k)
          VECG(JImin) = Ti(i, JImin, k) / E(i, JImin, k)
          do j = JImin + 1, JImax + 1
            aux = E(i, j, k) + D(i, j, k) * VECW(j - 1)
            VECW(j) = -F(i, j, k) / aux
            VECG(j) = (Ti(i, j, k) - D(i, j, k) * VECG(j - 1)) / aux
          end do
          ANSWER(i, JImax + 1, k) = real(VECG(JImax + 1), r4)
          do j = JImax, JImin, -1
            ANSWER(i, j, k) = real(VECW(j) * ANSWER(i, j + 1, k) + VECG(j), r4)
          end do
        end do
      end do
    else if (di == 1 .and. dj == 0) then
      do k = Kmin, Kmax
        do j = IJmin, IJmax
          VECW(JImin) = -F(JImin, j, k) / E(JImin, j, k)
          VECG(JImin) = Ti(JImin, j, k) / E(JImin, j, k)
          do i = JImin + 1, JImax + 1
            aux = E(i, j, k) + D(i, j, k) * VECW(i - 1)
            VECW(i) = -F(i, j, k) / aux
            VECG(i) = (Ti(i, j, k) - D(i, j, k) * VECG(i - 1)) / aux
          end do
          ANSWER(JImax + 1, j, k) = real(VECG(JImax + 1), r4)
          do i = JImax, JImin, -1
            ANSWER(i, j, k) = real(VECW(i) * ANSWER(i + 1, j, k) + VECG(i), r4)
          end do
        end do
      end do
    else
      error stop 'THOMAS_3D - flow_channel reference - ERR01: (di, dj) must be (0, 1) or (1, 0)'
    end if
  end subroutine ref_thomas_3d

  ! Lines along K for every (I, J); unknowns KLB..KUB+1. Columns with WaterPoints(I,J,KUB) /= 1 are
  ! land and are skipped, as in MOHID's THOMASZ_NewType2.
  subroutine ref_thomasz(ILB, IUB, JLB, JUB, KLB, KUB, AW, BW, CW, TIW, RES, VECG, VECW, WaterPoints)
    integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB
    real(r4), dimension(:,:,:), pointer :: AW, CW, TIW, RES
    real(r8), dimension(:,:,:), pointer :: BW
    real(r8), dimension(:), pointer :: VECG, VECW
    integer, dimension(:,:,:), pointer :: WaterPoints
    integer :: i, j, k
    real(r8) :: aux

    do j = JLB, JUB
      do i = ILB, IUB
        if (WaterPoints(i, j, KUB) /= 1) cycle
        ! MOHID reads the first row at K = 1 whatever KLB is; the model always has KLB = 1.
        VECW(KLB) = -CW(i, j, 1) / BW(i, j, 1)
        VECG(KLB) = TIW(i, j, 1) / BW(i, j, 1)
        do k = KLB + 1, KUB + 1
          aux = BW(i, j, k) + AW(i, j, k) * VECW(k - 1)
          VECW(k) = -CW(i, j, k) / aux
          VECG(k) = (TIW(i, j, k) - AW(i, j, k) * VECG(k - 1)) / aux
        end do
        RES(i, j, KUB + 1) = real(VECG(KUB + 1), r4)
        do k = KUB, KLB, -1
          RES(i, j, k) = real(VECW(k) * RES(i, j, k + 1) + VECG(k), r4)
        end do
      end do
    end do
  end subroutine ref_thomasz

  ! 2D lines: unknowns JI = JImin..JImax+1 at cell (IJ*dj + JI*di, IJ*di + JI*dj).
  subroutine ref_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D, E, F, Ti, ANSWER, VECG, VECW)
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj
    real(r4), dimension(:,:), pointer :: D, F, Ti, ANSWER
    real(r8), dimension(:,:), pointer :: E
    real(r8), dimension(:), pointer :: VECG, VECW
    integer :: ij, ji, i, j, i0, j0
    real(r8) :: aux

    if (.not. ((di == 0 .and. dj == 1) .or. (di == 1 .and. dj == 0))) &
      error stop 'THOMAS_2D - flow_channel reference - ERR01: (di, dj) must be (0, 1) or (1, 0)'
    do ij = IJmin, IJmax
      ! MOHID's first-row quirk; the model calls with IJmin = JImin = 1, where it is the line's first cell.
      i0 = IJmin - 1 + ij * dj + di
      j0 = JImin - 1 + ij * di + dj
      VECW(JImin) = -F(i0, j0) / E(i0, j0)
      VECG(JImin) = Ti(i0, j0) / E(i0, j0)
      do ji = JImin + 1, JImax + 1
        i = ij * dj + ji * di
        j = ij * di + ji * dj
        aux = E(i, j) + D(i, j) * VECW(ji - 1)
        VECW(ji) = -F(i, j) / aux
        VECG(ji) = (Ti(i, j) - D(i, j) * VECG(ji - 1)) / aux
      end do
      i = ij * dj + (JImax + 1) * di
      j = ij * di + (JImax + 1) * dj
      ANSWER(i, j) = real(VECG(JImax + 1), r4)
      do ji = JImax, JImin, -1
        i = ij * dj + ji * di
        j = ij * di + ji * dj
        ANSWER(i, j) = real(VECW(ji) * ANSWER(i + di, j + dj) + VECG(ji), r4)
      end do
    end do
  end subroutine ref_thomas_2d

end module fc_reference
