! flow_channel's ADI momentum and elevation step (fc_model.f90 describes the model and its grid): the x
! and y half steps, each a velocity advanced across, then the velocity along and the elevation implicit
! along the sweep (vertical viscosity solved per column, Casulli), the baroclinic pressure, the open
! side's radiation condition and the halo cells' rules.
submodule (fc_model) fc_sweeps
  implicit none

contains

  ! Halo rows of the listed arrays from the neighbouring ranks (nothing on one rank).
  module subroutine exchange(st, halos)
    type(fc_state), intent(in) :: st
    type(c_ptr), intent(in) :: halos(:)
    if (c_associated(st%par)) call par_exchange(halos)
  end subroutine exchange


  ! Halo cells: free slip along the walls (tangential velocity mirrored), no flow through them; zero
  ! gradient of v, T and S across the open east side, whose elevation (i = im+1) is the x half step's
  ! radiation condition (flather_row) and is left alone here. On ranks the
  ! rules of the south and north walls apply where those rows are this rank's; the i rules apply to the
  ! halo rows too, as the neighbour applies them to its own.
  module subroutine fill_ghosts(st)
    type(fc_state), intent(inout) :: st
    integer :: im, jm
    logical :: south, north
    im = st%im; jm = st%jm
    south = st%jlb == 0; north = st%jub == jm + 1
    st%u(0:1, :, :) = 0
    if (south) st%u(:, 0, :) = st%u(:, 1, :)
    if (north) st%u(:, jm + 1, :) = st%u(:, jm, :)
    if (south) st%v(:, 1, :) = 0
    if (north) st%v(:, jm + 1, :) = 0
    st%v(0, :, :) = st%v(1, :, :)
    st%v(im + 1, :, :) = st%v(im, :, :)
    st%eta(0, :) = st%eta(1, :)
    if (south) st%eta(:, 0) = st%eta(:, 1)
    if (north) st%eta(:, jm + 1) = st%eta(:, jm)
    st%t(im + 1, :, :) = st%t(im, :, :)
    st%s(im + 1, :, :) = st%s(im, :, :)
  end subroutine fill_ghosts

  ! Depths at the u and v faces from the current elevation (past the open side: flather_row's). On
  ! ranks the v faces include the first one of the block above (transports and conductances there).
  subroutine face_depths(st)
    type(fc_state), intent(inout) :: st
    integer :: i, j
    do j = st%j0, st%j1
      do i = 1, st%im + 1
        st%hu(i, j) = depth + 0.5_r8 * (st%eta(i - 1, j) + st%eta(i, j))
      end do
      st%hu(1, j) = depth + st%eta(1, j)
    end do
    do j = st%j0, st%j1 + 1
      do i = 1, st%im
        st%hv(i, j) = depth + 0.5_r8 * (st%eta(i, j - 1) + st%eta(i, j))
      end do
    end do
  end subroutine face_depths

  ! Baroclinic pressure potential at each layer centre, (p - p_surface)/rho0 from the density anomaly of
  ! the layers above (hydrostatic, linear equation of state), sigma layers of the current thickness.
  ! The column past the open side copies the last one (zero baroclinic gradient across the open face).
  ! On ranks also the halo row below, which the v faces of the first row read.
  subroutine baroclinic(st)
    type(fc_state), intent(inout) :: st
    integer :: i, j, k
    real(r8) :: dz, above, rho
    do j = max(1, st%j0 - 1), st%j1
      do i = 1, st%im
        dz = (depth + st%eta(i, j)) / st%km
        above = 0
        do k = st%km, 1, -1
          rho = rho0 * (-alpha_t * (st%t(i, j, k) - t_ambient) + beta_s * (st%s(i, j, k) - s_ambient))
          st%pb(i, j, k) = grav / rho0 * (above + 0.5_r8 * rho * dz)
          above = above + rho * dz
        end do
      end do
      st%pb(st%im + 1, j, :) = st%pb(st%im, j, :)
    end do
    if (st%jlb == 0) st%pb(:, 0, :) = st%pb(:, 1, :)
  end subroutine baroclinic

  ! Implicit upwind advection + diffusion row along one axis for a time step sig: advecting velocity c,
  ! spacing h, viscosity kap. Interior row; callers adjust the rows at walls and open sides.
  pure subroutine ad_row(sig, c, h, kap, dd, ee, ff)
    real(r8), intent(in) :: sig, c, h, kap
    real(r8), intent(out) :: dd, ee, ff
    real(r8) :: cp, cm
    cp = max(c, 0.0_r8); cm = min(c, 0.0_r8)
    dd = -sig * (cp / h + kap / h**2)
    ee = 1 + sig * (cp / h - cm / h + 2 * kap / h**2)
    ff = sig * (cm / h - kap / h**2)
  end subroutine ad_row

  ! Grid arrays are passed as allocatable dummies throughout: they keep the caller's bounds, the
  ! global j indices of a rank's rows.

  ! v at a u face and u at a v face (mean of the four neighbours).
  pure real(r8) function v_at_u(v, i, j, k)
    real(r8), allocatable, intent(in) :: v(:, :, :)
    integer, intent(in) :: i, j, k
    v_at_u = 0.25_r8 * (v(i - 1, j, k) + v(i, j, k) + v(i - 1, j + 1, k) + v(i, j + 1, k))
  end function v_at_u

  pure real(r8) function u_at_v(u, i, j, k)
    real(r8), allocatable, intent(in) :: u(:, :, :)
    integer, intent(in) :: i, j, k
    u_at_v = 0.25_r8 * (u(i, j - 1, k) + u(i + 1, j - 1, k) + u(i, j, k) + u(i + 1, j, k))
  end function u_at_v

  ! Explicit upwind advection + diffusion tendency of a face field f along x at face i; beyond the face
  ! ilast the field has zero gradient.
  pure real(r8) function explicit_x(f, c, i, j, k, ilast, h, kap) result(r)
    real(r8), allocatable, intent(in) :: f(:, :, :)
    real(r8), intent(in) :: c, h, kap
    integer, intent(in) :: i, j, k, ilast
    real(r8) :: fe
    fe = f(i, j, k)
    if (i < ilast) fe = f(i + 1, j, k)
    r = -(max(c, 0.0_r8) * (f(i, j, k) - f(i - 1, j, k)) + min(c, 0.0_r8) * (fe - f(i, j, k))) / h &
        + kap * (fe - 2 * f(i, j, k) + f(i - 1, j, k)) / h**2
  end function explicit_x

  pure real(r8) function explicit_y(f, c, i, j, k, h, kap) result(r)
    real(r8), allocatable, intent(in) :: f(:, :, :)
    real(r8), intent(in) :: c, h, kap
    integer, intent(in) :: i, j, k
    r = -(max(c, 0.0_r8) * (f(i, j, k) - f(i, j - 1, k)) + min(c, 0.0_r8) * (f(i, j + 1, k) - f(i, j, k))) / h &
        + kap * (f(i, j + 1, k) - 2 * f(i, j, k) + f(i, j - 1, k)) / h**2
  end function explicit_y

  ! THOMASZ matrix of vertical viscosity + linearised quadratic bottom drag for the face columns
  ! (ilo:ihi, jlo:jhi), rows multiplied by the layer thickness hf/km; no stress at the surface; row km+1
  ! is the boundary row past the top (x = 0). D and F first, then E, so that on the gpu backend their
  ! uploads overlap the assembly of what follows.
  subroutine vertical_matrix(st, ilo, ihi, jlo, jhi, hf)
    type(fc_state), intent(inout) :: st
    integer, intent(in) :: ilo, ihi, jlo, jhi
    real(r8), allocatable, intent(in) :: hf(:, :)
    integer :: i, j, k, km
    real(r8) :: sig, a
    km = st%km; sig = 0.5_r8 * st%dt
    do k = 1, km + 1
      do j = jlo, jhi
        do i = ilo, ihi
          a = sig * visc_v * km / hf(i, j)
          st%d3(i, j, k) = real(merge(0.0_r8, -a, k == 1 .or. k > km), r4)
          st%f3(i, j, k) = real(merge(0.0_r8, -a, k >= km), r4)
        end do
      end do
    end do
    call solver_upload_z(st%solver, ilo, ihi, jlo, jhi, 1, km, d=st%d3, f=st%f3)
    do k = 1, km + 1
      do j = jlo, jhi
        do i = ilo, ihi
          a = sig * visc_v * km / hf(i, j)
          if (k > km) then
            st%e3(i, j, k) = 1
          else
            st%e3(i, j, k) = hf(i, j) / km + merge(0.0_r8, a, k == 1) + merge(0.0_r8, a, k == km)
          end if
        end do
      end do
    end do
    do j = jlo, jhi
      do i = ilo, ihi
        st%e3(i, j, 1) = st%e3(i, j, 1) + sig * drag_cd * st%ubot(i, j)
      end do
    end do
    call solver_upload_z(st%solver, ilo, ihi, jlo, jhi, 1, km, e=st%e3)
  end subroutine vertical_matrix

  ! After the horizontal solve of a velocity component (answer in x3): the vertical solve alone, the
  ! new velocity written to f over (ilo:ihi, jlo:jhi).
  subroutine vertical_only(st, ilo, ihi, jlo, jhi, hf, f)
    type(fc_state), intent(inout) :: st
    integer, intent(in) :: ilo, ihi, jlo, jhi
    real(r8), allocatable, intent(in) :: hf(:, :)
    real(r8), allocatable, intent(inout) :: f(:, :, :)
    integer :: i, j, k, km
    km = st%km
    call vertical_matrix(st, ilo, ihi, jlo, jhi, hf)
    do k = 1, km + 1
      do j = jlo, jhi
        do i = ilo, ihi
          st%ti3(i, j, k) = real(merge(0.0_r8, hf(i, j) / km * real(st%x3(i, j, k), r8), k > km), r4)
        end do
      end do
    end do
    call solver_thomasz(st%solver, ilo, ihi, jlo, jhi, 1, km, st%d3, st%e3, st%f3, st%ti3, st%x3, st%water)
    do k = 1, km
      do j = jlo, jhi
        do i = ilo, ihi
          f(i, j, k) = real(st%x3(i, j, k), r8)
        end do
      end do
    end do
  end subroutine vertical_only

  ! Casulli's vertical step of the component coupled to the elevation: with M the vertical matrix,
  ! a = M^-1 (dz u') and c = M^-1 dz, so that u = a - g sig grad(eta) c; ua = sum dz a and cc = sum dz c
  ! are the column sums that enter the elevation line.
  subroutine vertical_coupled(st, ilo, ihi, jlo, jhi, hf)
    type(fc_state), intent(inout) :: st
    integer, intent(in) :: ilo, ihi, jlo, jhi
    real(r8), allocatable, intent(in) :: hf(:, :)
    integer :: i, j, k, km
    real(r8) :: dz
    km = st%km
    call vertical_matrix(st, ilo, ihi, jlo, jhi, hf)
    do k = 1, km + 1
      do j = jlo, jhi
        do i = ilo, ihi
          dz = merge(0.0_r8, hf(i, j) / km, k > km)
          st%ti3(i, j, k) = real(dz * real(st%x3(i, j, k), r8), r4)
          st%ti3b(i, j, k) = real(dz, r4)
        end do
      end do
    end do
    call solver_thomasz(st%solver, ilo, ihi, jlo, jhi, 1, km, st%d3, st%e3, st%f3, st%ti3, st%x3, st%water)
    call solver_thomasz(st%solver, ilo, ihi, jlo, jhi, 1, km, st%d3, st%e3, st%f3, st%ti3b, st%x3b, st%water)
    st%ua = 0; st%cc = 0
    do j = jlo, jhi
      do i = ilo, ihi
        dz = hf(i, j) / km
        st%ua(i, j) = dz * sum(real(st%x3(i, j, 1:km), r8))
        st%cc(i, j) = dz * sum(real(st%x3b(i, j, 1:km), r8))
      end do
    end do
  end subroutine vertical_coupled

  ! Source of the river in elevation units (m/s): the discharge spread evenly over the cells i = 1.
  pure real(r8) function source(st, i, q)
    type(fc_state), intent(in) :: st
    integer, intent(in) :: i
    real(r8), intent(in) :: q
    source = merge(q / (st%jm * st%area), 0.0_r8, i == 1)
  end function source

  ! Row im+1 of the elevation line of row j (E = 1, F = 0): Flather's (1976) radiation condition at the
  ! open face. The barotropic transport through the face, as the x half step computes it from the
  ! solved elevations, U = ua - g sig cc (eta(im+1) - eta(im)) / dx, must equal the external one plus a
  ! long wave leaving the channel, U = U_ext + sqrt(g h) (eta_b - eta_ext), eta_b = (eta(im) +
  ! eta(im+1)) / 2. External state: U_ext = q / width, the river's transport (the steady state the
  ! channel tends to), and eta_ext the steric height of the last column against ambient water, so that
  ! the river plume's own rise of the surface (a few cm, in balance with its lighter water: no bottom
  ! pressure, no long wave) is let through instead of being driven out as if it were a wave.
  ! Solved for eta(im+1): D eta(im) + eta(im+1) = Ti.
  subroutine flather_row(st, j, q, d, ti)
    type(fc_state), intent(in) :: st
    integer, intent(in) :: j
    real(r8), intent(in) :: q
    real(r4), intent(out) :: d, ti
    real(r8) :: gc, c0, uext, eta_ext
    integer :: im, k
    im = st%im
    gc = grav * 0.5_r8 * st%dt * st%cc(im + 1, j) / st%dx
    c0 = sqrt(grav * st%hu(im + 1, j))
    uext = q / length
    eta_ext = 0
    do k = 1, st%km
      eta_ext = eta_ext + st%pb(im + 1, j, k)
    end do
    eta_ext = -eta_ext / (st%km * grav)
    d = real(-(gc - 0.5_r8 * c0) / (gc + 0.5_r8 * c0), r4)
    ti = real((st%ua(im + 1, j) - uext + c0 * eta_ext) / (gc + 0.5_r8 * c0), r4)
  end subroutine flather_row

  ! Continuity over a half step in double from the barotropic transports tx (u faces) and ty (v faces).
  subroutine continuity(st, q, tx, ty)
    type(fc_state), intent(inout) :: st
    real(r8), intent(in) :: q
    real(r8), allocatable, intent(in) :: tx(:, :), ty(:, :)
    integer :: i, j
    real(r8) :: sig
    sig = 0.5_r8 * st%dt
    do j = st%j0, st%j1
      do i = 1, st%im
        st%eta(i, j) = st%eta(i, j) - sig * (tx(i + 1, j) - tx(i, j)) / st%dx &
                       - sig * (ty(i, j + 1) - ty(i, j)) / st%dy + sig * source(st, i, q)
      end do
    end do
  end subroutine continuity

  ! The speed at the bottom layer (bottom friction's) on the u faces i = 2..im+1 of rows j0..j1, and on
  ! the v faces of rows v0..j1.
  subroutine bottom_speed_u(st, j0, j1)
    type(fc_state), intent(inout) :: st
    integer, intent(in) :: j0, j1
    integer :: i, j
    do j = j0, j1
      do i = 2, st%im + 1
        st%ubot(i, j) = sqrt(st%u(i, j, 1)**2 + v_at_u(st%v, i, j, 1)**2)
      end do
    end do
  end subroutine bottom_speed_u

  subroutine bottom_speed_v(st, v0, j1)
    type(fc_state), intent(inout) :: st
    integer, intent(in) :: v0, j1
    integer :: i, j
    do j = v0, j1
      do i = 1, st%im
        st%ubot(i, j) = sqrt(st%v(i, j, 1)**2 + u_at_v(st%u, i, j, 1)**2)
      end do
    end do
  end subroutine bottom_speed_v

  ! ------------------------------------------------------------------------------------------------
  ! x half step.
  ! ------------------------------------------------------------------------------------------------
  module subroutine half_step_x(st, q)
    type(fc_state), intent(inout) :: st
    real(r8), intent(in) :: q
    integer :: i, j, k, im, jm, km, j0, j1, v0
    real(r8) :: sig, alpha, dd, ee, ff, grad

    im = st%im; jm = st%jm; km = st%km; sig = 0.5_r8 * st%dt
    ! Rows j0..j1 of this rank; v faces from v0 (face 1 is the south wall).
    j0 = st%j0; j1 = st%j1; v0 = max(2, j0)
    call fill_ghosts(st)
    call face_depths(st)
    call baroclinic(st)

    ! Transport of v at the step's start: continuity of this half step and the tracers' y fluxes. On
    ! ranks also at the first face of the block above, which continuity and the tracers read.
    st%tr = 0
    do k = 1, km
      do j = v0, min(jm, j1 + 1)
        do i = 1, im
          st%fy(i, j, k) = st%fy(i, j, k) + sig * st%v(i, j, k) * st%hv(i, j) / km * st%dx
          st%tr(i, j) = st%tr(i, j) + st%v(i, j, k) * st%hv(i, j) / km
        end do
      end do
    end do

    ! ---- v: explicit along J (old elevation), implicit along I, then vertical ----
    do k = 1, km
      do j = v0, j1
        do i = 1, im
          st%g(i, j, k) = st%v(i, j, k) + sig * (explicit_y(st%v, st%v(i, j, k), i, j, k, st%dy, visc_h) &
                          - (st%pb(i, j, k) - st%pb(i, j - 1, k)) / st%dy &
                          - grav * (st%eta(i, j) - st%eta(i, j - 1)) / st%dy)
        end do
      end do
    end do
    ! Lines along I at the v faces j = 2..jm; unknowns i = 1..im+1. Row 1: free slip at the west wall
    ! (the ghost v(0) = v(1) cancels the west terms); row im+1: zero gradient across the open side.
    do k = 1, km
      do j = v0, j1
        do i = 1, im
          call ad_row(sig, u_at_v(st%u, i, j, k), st%dx, visc_h, dd, ee, ff)
          if (i == 1) dd = 0
          st%d3(i, j, k) = real(dd, r4); st%f3(i, j, k) = real(ff, r4)
        end do
        st%d3(im + 1, j, k) = -1; st%f3(im + 1, j, k) = 0
      end do
    end do
    call solver_upload_3d(st%solver, 2, jm, 1, im, 1, km, 1, 0, d=st%d3, f=st%f3)
    do k = 1, km
      do j = v0, j1
        do i = 1, im
          call ad_row(sig, u_at_v(st%u, i, j, k), st%dx, visc_h, dd, ee, ff)
          if (i == 1) ee = ee + dd
          st%e3(i, j, k) = ee
        end do
        st%e3(im + 1, j, k) = 1
      end do
    end do
    call solver_upload_3d(st%solver, 2, jm, 1, im, 1, km, 1, 0, e=st%e3)
    do k = 1, km
      do j = v0, j1
        st%ti3(1:im, j, k) = real(st%g(1:im, j, k), r4)
        st%ti3(im + 1, j, k) = 0
      end do
    end do
    call solver_thomas_3d(st%solver, 2, jm, 1, im, 1, km, 1, 0, st%d3, st%e3, st%f3, st%ti3, st%x3)
    call bottom_speed_v(st, v0, j1)
    call vertical_only(st, 1, im, v0, j1, st%hv, st%v)
    ! halo: u's stencils below read v of the row above.
    call exchange(st, [st%h_v])

    ! ---- u: explicit along J, implicit along I, then coupled to the elevation ----
    call fill_ghosts(st)
    do k = 1, km
      do j = j0, j1
        do i = 2, im + 1
          st%g(i, j, k) = st%u(i, j, k) + sig * (explicit_y(st%u, v_at_u(st%v, i, j, k), i, j, k, st%dy, visc_h) &
                          - (st%pb(i, j, k) - st%pb(i - 1, j, k)) / st%dx)
        end do
      end do
    end do
    ! Lines along I at j = 1..jm; unknowns the faces 1..im+1. Row 1 is the west wall (u = 0); row im+1
    ! is the open face, its own equation with zero gradient beyond it (F = 0).
    do k = 1, km
      do j = j0, j1
        st%d3(1, j, k) = 0; st%f3(1, j, k) = 0
        do i = 2, im + 1
          call ad_row(sig, st%u(i, j, k), st%dx, visc_h, dd, ee, ff)
          if (i == im + 1) ff = 0
          st%d3(i, j, k) = real(dd, r4); st%f3(i, j, k) = real(ff, r4)
        end do
      end do
    end do
    call solver_upload_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, d=st%d3, f=st%f3)
    do k = 1, km
      do j = j0, j1
        st%e3(1, j, k) = 1
        do i = 2, im + 1
          call ad_row(sig, st%u(i, j, k), st%dx, visc_h, dd, ee, ff)
          ! Zero gradient beyond the open face: the east neighbour is the face itself.
          if (i == im + 1) ee = ee + ff
          st%e3(i, j, k) = ee
        end do
      end do
    end do
    call solver_upload_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, e=st%e3)
    do k = 1, km
      do j = j0, j1
        st%ti3(1, j, k) = 0
        st%ti3(2:im + 1, j, k) = real(st%g(2:im + 1, j, k), r4)
      end do
    end do
    call solver_thomas_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, st%d3, st%e3, st%f3, st%ti3, st%x3)
    call bottom_speed_u(st, j0, j1)
    call vertical_coupled(st, 2, im + 1, j0, j1, st%hu)

    ! ---- elevation: lines along I at j = 1..jm, unknowns 1..im+1; row im+1, the elevation past the
    !      open side, is Flather's radiation condition (README.md, "Open east side") ----
    alpha = grav * sig**2 / st%dx**2
    do j = j0, j1
      do i = 1, im
        st%d2(i, j) = real(-alpha * st%cc(i, j), r4)
        st%f2(i, j) = real(-alpha * st%cc(i + 1, j), r4)
      end do
      call flather_row(st, j, q, st%d2(im + 1, j), st%ti2(im + 1, j))
      st%f2(im + 1, j) = 0
    end do
    call solver_upload_2d(st%solver, 1, jm, 1, im, 1, 0, d=st%d2, f=st%f2)
    do j = j0, j1
      do i = 1, im
        st%e2(i, j) = 1 + alpha * (st%cc(i, j) + st%cc(i + 1, j))
        st%ti2(i, j) = real(st%eta(i, j) - sig * (st%ua(i + 1, j) - st%ua(i, j)) / st%dx &
                            - sig * (st%tr(i, j + 1) - st%tr(i, j)) / st%dy + sig * source(st, i, q), r4)
      end do
      st%e2(im + 1, j) = 1
    end do
    call solver_thomas_2d(st%solver, 1, jm, 1, im, 1, 0, st%d2, st%e2, st%f2, st%ti2, st%x2)
    ! The elevation past the open side stays until the next x half step: the y half step's face depth
    ! and pressure gradient at the open face read it.
    do j = j0, j1
      st%eta(im + 1, j) = real(st%x2(im + 1, j), r8)
    end do

    ! ---- u from the solved elevation; continuity in double from its transport ----
    st%tn = 0
    do k = 1, km
      do j = j0, j1
        do i = 2, im + 1
          grad = (real(st%x2(i, j), r8) - real(st%x2(i - 1, j), r8)) / st%dx
          st%u(i, j, k) = real(st%x3(i, j, k), r8) - grav * sig * grad * real(st%x3b(i, j, k), r8)
          st%fx(i, j, k) = st%fx(i, j, k) + sig * st%u(i, j, k) * st%hu(i, j) / km * st%dy
          st%tn(i, j) = st%tn(i, j) + st%u(i, j, k) * st%hu(i, j) / km
        end do
      end do
    end do
    call continuity(st, q, st%tn, st%tr)
    ! halo: the y half step's depths and pressure read the elevation of the row below.
    call exchange(st, [st%h_eta])
  end subroutine half_step_x

  ! ------------------------------------------------------------------------------------------------
  ! y half step (mirror of the x one; both ends of J are walls).
  ! ------------------------------------------------------------------------------------------------
  module subroutine half_step_y(st, q)
    type(fc_state), intent(inout) :: st
    real(r8), intent(in) :: q
    integer :: i, j, k, im, jm, km, j0, j1, v0
    real(r8) :: sig, alpha, dd, ee, ff, grad
    logical :: south, north

    im = st%im; jm = st%jm; km = st%km; sig = 0.5_r8 * st%dt
    ! Rows j0..j1 of this rank; v faces from v0; south/north: the rank holds the wall rows 1 / jm+1.
    j0 = st%j0; j1 = st%j1; v0 = max(2, j0)
    south = j0 == 1; north = j1 == jm
    call fill_ghosts(st)
    call face_depths(st)
    call baroclinic(st)

    ! Transport of the u of the x half step, at this half step's depths.
    st%tr = 0
    do k = 1, km
      do j = j0, j1
        do i = 2, im + 1
          st%fx(i, j, k) = st%fx(i, j, k) + sig * st%u(i, j, k) * st%hu(i, j) / km * st%dy
          st%tr(i, j) = st%tr(i, j) + st%u(i, j, k) * st%hu(i, j) / km
        end do
      end do
    end do

    ! ---- u: explicit along I (elevation of the x half step), implicit along J, then vertical ----
    do k = 1, km
      do j = j0, j1
        do i = 2, im + 1
          st%g(i, j, k) = st%u(i, j, k) + sig * (explicit_x(st%u, st%u(i, j, k), i, j, k, im + 1, st%dx, visc_h) &
                          - (st%pb(i, j, k) - st%pb(i - 1, j, k)) / st%dx &
                          - grav * (st%eta(i, j) - st%eta(i - 1, j)) / st%dx)
        end do
      end do
    end do
    ! Lines along J at the u faces i = 2..im+1; unknowns j = 1..jm+1. Row 1: free slip at the south
    ! wall; row jm+1 is the ghost behind the north wall, equal to row jm (free slip).
    do k = 1, km
      do j = j0, j1
        do i = 2, im + 1
          call ad_row(sig, v_at_u(st%v, i, j, k), st%dy, visc_h, dd, ee, ff)
          if (j == 1) dd = 0
          st%d3(i, j, k) = real(dd, r4); st%f3(i, j, k) = real(ff, r4)
        end do
      end do
      if (north) then
        st%d3(2:im + 1, jm + 1, k) = -1; st%f3(2:im + 1, jm + 1, k) = 0
      end if
    end do
    call solver_upload_3d(st%solver, 2, im + 1, 1, jm, 1, km, 0, 1, d=st%d3, f=st%f3)
    do k = 1, km
      do j = j0, j1
        do i = 2, im + 1
          call ad_row(sig, v_at_u(st%v, i, j, k), st%dy, visc_h, dd, ee, ff)
          if (j == 1) ee = ee + dd
          st%e3(i, j, k) = ee
        end do
      end do
      if (north) st%e3(2:im + 1, jm + 1, k) = 1
    end do
    call solver_upload_3d(st%solver, 2, im + 1, 1, jm, 1, km, 0, 1, e=st%e3)
    do k = 1, km
      do j = j0, j1
        st%ti3(2:im + 1, j, k) = real(st%g(2:im + 1, j, k), r4)
      end do
      if (north) st%ti3(2:im + 1, jm + 1, k) = 0
    end do
    call solver_thomas_3d(st%solver, 2, im + 1, 1, jm, 1, km, 0, 1, st%d3, st%e3, st%f3, st%ti3, st%x3)
    call bottom_speed_u(st, j0, j1)
    call vertical_only(st, 2, im + 1, j0, j1, st%hu, st%u)
    ! halo: v's stencils below read u of the row below.
    call exchange(st, [st%h_u])

    ! ---- v: explicit along I, implicit along J, then coupled to the elevation ----
    call fill_ghosts(st)
    do k = 1, km
      do j = v0, j1
        do i = 1, im
          st%g(i, j, k) = st%v(i, j, k) + sig * (explicit_x(st%v, u_at_v(st%u, i, j, k), i, j, k, im + 1, &
                          st%dx, visc_h) - (st%pb(i, j, k) - st%pb(i, j - 1, k)) / st%dy)
        end do
      end do
    end do
    ! Lines along J at i = 1..im; unknowns the faces 1..jm+1, rows 1 and jm+1 the walls (v = 0).
    do k = 1, km
      do i = 1, im
        if (south) then
          st%d3(i, 1, k) = 0; st%f3(i, 1, k) = 0
        end if
        if (north) then
          st%d3(i, jm + 1, k) = 0; st%f3(i, jm + 1, k) = 0
        end if
      end do
      do j = v0, j1
        do i = 1, im
          call ad_row(sig, st%v(i, j, k), st%dy, visc_h, dd, ee, ff)
          st%d3(i, j, k) = real(dd, r4); st%f3(i, j, k) = real(ff, r4)
        end do
      end do
    end do
    call solver_upload_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, d=st%d3, f=st%f3)
    do k = 1, km
      if (south) st%e3(1:im, 1, k) = 1
      if (north) st%e3(1:im, jm + 1, k) = 1
      do j = v0, j1
        do i = 1, im
          call ad_row(sig, st%v(i, j, k), st%dy, visc_h, dd, ee, ff)
          st%e3(i, j, k) = ee
        end do
      end do
    end do
    call solver_upload_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, e=st%e3)
    do k = 1, km
      if (south) st%ti3(1:im, 1, k) = 0
      if (north) st%ti3(1:im, jm + 1, k) = 0
      do j = v0, j1
        st%ti3(1:im, j, k) = real(st%g(1:im, j, k), r4)
      end do
    end do
    call solver_thomas_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, st%d3, st%e3, st%f3, st%ti3, st%x3)
    call bottom_speed_v(st, v0, j1)
    call vertical_coupled(st, 1, im, v0, j1, st%hv)
    ! halo: the elevation rows read the column sums of the face above.
    call exchange(st, [st%h_ua, st%h_cc])

    ! ---- elevation: lines along J at i = 1..im, unknowns 1..jm+1; row jm+1 (behind the north wall,
    !      where cc = 0) is a decoupled dummy ----
    alpha = grav * sig**2 / st%dy**2
    do j = j0, j1
      do i = 1, im
        st%d2(i, j) = real(-alpha * st%cc(i, j), r4)
        st%f2(i, j) = real(-alpha * st%cc(i, j + 1), r4)
      end do
    end do
    if (north) then
      st%d2(1:im, jm + 1) = 0; st%f2(1:im, jm + 1) = 0
    end if
    call solver_upload_2d(st%solver, 1, im, 1, jm, 0, 1, d=st%d2, f=st%f2)
    do j = j0, j1
      do i = 1, im
        st%e2(i, j) = 1 + alpha * (st%cc(i, j) + st%cc(i, j + 1))
        st%ti2(i, j) = real(st%eta(i, j) - sig * (st%tr(i + 1, j) - st%tr(i, j)) / st%dx &
                            - sig * (st%ua(i, j + 1) - st%ua(i, j)) / st%dy + sig * source(st, i, q), r4)
      end do
    end do
    if (north) then
      st%e2(1:im, jm + 1) = 1; st%ti2(1:im, jm + 1) = 0
    end if
    call solver_thomas_2d(st%solver, 1, im, 1, jm, 0, 1, st%d2, st%e2, st%f2, st%ti2, st%x2)
    ! halo: the v faces of the first row take the elevation gradient from the row below.
    call exchange(st, [st%h_x2])

    st%tn = 0
    do k = 1, km
      do j = v0, j1
        do i = 1, im
          grad = (real(st%x2(i, j), r8) - real(st%x2(i, j - 1), r8)) / st%dy
          st%v(i, j, k) = real(st%x3(i, j, k), r8) - grav * sig * grad * real(st%x3b(i, j, k), r8)
          st%fy(i, j, k) = st%fy(i, j, k) + sig * st%v(i, j, k) * st%hv(i, j) / km * st%dx
          st%tn(i, j) = st%tn(i, j) + st%v(i, j, k) * st%hv(i, j) / km
        end do
      end do
    end do
    ! halo: v of the face above, then its flux and transport as its owner computed them (continuity
    ! of the last row and the tracers read them).
    call exchange(st, [st%h_v])
    if (j1 < jm) then
      do k = 1, km
        do i = 1, im
          st%fy(i, j1 + 1, k) = st%fy(i, j1 + 1, k) + sig * st%v(i, j1 + 1, k) * st%hv(i, j1 + 1) / km * st%dx
          st%tn(i, j1 + 1) = st%tn(i, j1 + 1) + st%v(i, j1 + 1, k) * st%hv(i, j1 + 1) / km
        end do
      end do
    end if
    call continuity(st, q, st%tr, st%tn)
  end subroutine half_step_y

end submodule fc_sweeps
