! flow_channel's transport of temperature and salinity over a step with the step's own fluxes
! (fc_model.f90 describes the model and its grid).
submodule (fc_model) fc_transport
  implicit none

contains


  ! ------------------------------------------------------------------------------------------------
  ! Transport of a tracer c over the whole step with the step's fluxes fx, fy: finite volumes, first-
  ! order upwind, implicit along I (with the river source), then J, then K. Cell volumes (divided by
  ! the cell area, so in m) go from the start's through the intermediate ones to the end's; the
  ! vertical fluxes are what makes each layer's volume match its sigma thickness at the end. After
  ! each solve the face fluxes are recomputed from the answer and c updated from them (conservative).
  ! East side: upwind, c_out on inflow, no diffusion through it. cin/cout accumulate the content
  ! brought by the river and taken out through the east side.
  ! ------------------------------------------------------------------------------------------------
  ! On ranks cout is this rank's share; the fluxes through the faces between ranks are computed on
  ! both sides from the same values, so what leaves one rank enters the other exactly.
  module subroutine transport(st, c, c_river, c_out, q, cin, cout)
    type(fc_state), intent(inout) :: st
    real(r8), allocatable, intent(inout) :: c(:, :, :)
    real(r8), intent(in) :: c_river, c_out, q
    real(r8), intent(inout) :: cin, cout
    integer :: i, j, k, im, jm, km, j0, j1
    real(r8) :: dt, a, kx, ky, src, fl, fr, ql, qr, kl, kr, cw, ce, vol1
    real(r8), allocatable :: v0(:,:,:), v1(:,:,:), ww(:,:,:)

    im = st%im; jm = st%jm; km = st%km; dt = st%dt; a = st%area
    j0 = st%j0; j1 = st%j1
    allocate(v0(0:im+1, st%jlb:st%jub, 0:km+1), v1(0:im+1, st%jlb:st%jub, 0:km+1), &
             ww(0:im+1, st%jlb:st%jub, 0:km+1))
    ! Start volumes and volumes after the x fluxes and the river.
    do k = 1, km
      do j = j0, j1
        do i = 1, im
          v0(i, j, k) = (depth + st%eta_start(i, j)) / km
          src = merge(dt * q / (jm * km * a), 0.0_r8, i == 1)
          v1(i, j, k) = v0(i, j, k) - (st%fx(i + 1, j, k) - st%fx(i, j, k)) / a + src
        end do
      end do
    end do

    ! ---- along I: lines j, k; unknowns 1..im+1, row im+1 the outside value c_out ----
    do k = 1, km
      do j = j0, j1
        do i = 1, im
          kx = xcond(i, j); ql = st%fx(i, j, k) / a; qr = st%fx(i + 1, j, k) / a
          st%d3(i, j, k) = real(-(max(ql, 0.0_r8) + kx), r4)
          st%f3(i, j, k) = real(min(qr, 0.0_r8) - xcond(i + 1, j), r4)
        end do
        st%d3(im + 1, j, k) = 0; st%f3(im + 1, j, k) = 0
      end do
    end do
    call solver_upload_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, d=st%d3, f=st%f3)
    do k = 1, km
      do j = j0, j1
        do i = 1, im
          ql = st%fx(i, j, k) / a; qr = st%fx(i + 1, j, k) / a
          st%e3(i, j, k) = v1(i, j, k) + max(qr, 0.0_r8) + xcond(i + 1, j) - min(ql, 0.0_r8) + xcond(i, j)
        end do
        st%e3(im + 1, j, k) = 1
      end do
    end do
    call solver_upload_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, e=st%e3)
    do k = 1, km
      do j = j0, j1
        do i = 1, im
          src = merge(dt * q / (jm * km * a), 0.0_r8, i == 1)
          st%ti3(i, j, k) = real(v0(i, j, k) * c(i, j, k) + src * c_river, r4)
        end do
        st%ti3(im + 1, j, k) = real(c_out, r4)
      end do
    end do
    call solver_thomas_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, st%d3, st%e3, st%f3, st%ti3, st%x3)
    do k = 1, km
      do j = j0, j1
        fl = 0
        do i = 1, im
          cw = real(st%x3(i, j, k), r8)
          if (i < im) then
            ce = real(st%x3(i + 1, j, k), r8)
          else
            ce = c_out
          end if
          qr = st%fx(i + 1, j, k) / a
          fr = max(qr, 0.0_r8) * cw + min(qr, 0.0_r8) * ce - xcond(i + 1, j) * (ce - cw)
          src = merge(dt * q / (jm * km * a), 0.0_r8, i == 1)
          st%g(i, j, k) = (v0(i, j, k) * c(i, j, k) + src * c_river - (fr - fl)) / v1(i, j, k)
          fl = fr
        end do
        cout = cout + fl * a
      end do
    end do
    cin = cin + dt * q * c_river
    c(1:im, j0:j1, 1:km) = st%g(1:im, j0:j1, 1:km)

    ! ---- along J: lines i, k; unknowns 1..jm+1, row jm+1 behind the north wall is decoupled ----
    do k = 1, km
      do j = j0, j1
        do i = 1, im
          v0(i, j, k) = v1(i, j, k)
          v1(i, j, k) = v0(i, j, k) - (st%fy(i, j + 1, k) - st%fy(i, j, k)) / a
        end do
      end do
    end do
    do k = 1, km
      do j = j0, j1
        do i = 1, im
          ky = ycond(i, j); ql = st%fy(i, j, k) / a; qr = st%fy(i, j + 1, k) / a
          st%d3(i, j, k) = real(-(max(ql, 0.0_r8) + ky), r4)
          st%f3(i, j, k) = real(min(qr, 0.0_r8) - ycond(i, j + 1), r4)
        end do
      end do
      if (j1 == jm) then
        st%d3(1:im, jm + 1, k) = 0; st%f3(1:im, jm + 1, k) = 0
      end if
    end do
    call solver_upload_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, d=st%d3, f=st%f3)
    do k = 1, km
      do j = j0, j1
        do i = 1, im
          ql = st%fy(i, j, k) / a; qr = st%fy(i, j + 1, k) / a
          st%e3(i, j, k) = v1(i, j, k) + max(qr, 0.0_r8) + ycond(i, j + 1) - min(ql, 0.0_r8) + ycond(i, j)
        end do
      end do
      if (j1 == jm) st%e3(1:im, jm + 1, k) = 1
    end do
    call solver_upload_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, e=st%e3)
    do k = 1, km
      do j = j0, j1
        st%ti3(1:im, j, k) = real(v0(1:im, j, k) * c(1:im, j, k), r4)
      end do
      if (j1 == jm) st%ti3(1:im, jm + 1, k) = 0
    end do
    call solver_thomas_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, st%d3, st%e3, st%f3, st%ti3, st%x3)
    ! halo: the fluxes through the faces between ranks read the answers on both sides.
    call exchange(st, [st%h_x3])
    do k = 1, km
      do i = 1, im
        ! Flux through the south face of the first row: the north face of the row below (0 at the wall).
        fl = 0
        if (j0 > 1) then
          cw = real(st%x3(i, j0 - 1, k), r8); ce = real(st%x3(i, j0, k), r8)
          qr = st%fy(i, j0, k) / a
          fl = max(qr, 0.0_r8) * cw + min(qr, 0.0_r8) * ce - ycond(i, j0) * (ce - cw)
        end if
        do j = j0, j1
          cw = real(st%x3(i, j, k), r8)
          ce = cw
          if (j < jm) ce = real(st%x3(i, j + 1, k), r8)
          qr = st%fy(i, j + 1, k) / a
          fr = max(qr, 0.0_r8) * cw + min(qr, 0.0_r8) * ce - ycond(i, j + 1) * (ce - cw)
          st%g(i, j, k) = (v0(i, j, k) * c(i, j, k) - (fr - fl)) / v1(i, j, k)
          fl = fr
        end do
      end do
    end do
    c(1:im, j0:j1, 1:km) = st%g(1:im, j0:j1, 1:km)

    ! ---- along K: vertical fluxes ww (m, upwards, through the top of layer k) that bring each layer
    !      to its final sigma thickness; rows km+1 above the surface are decoupled ----
    do j = j0, j1
      do i = 1, im
        ww(i, j, 0) = 0
        do k = 1, km
          vol1 = (depth + st%eta(i, j)) / km
          ww(i, j, k) = ww(i, j, k - 1) + v1(i, j, k) - vol1
        end do
        ww(i, j, km) = 0
      end do
    end do
    do k = 1, km + 1
      do j = j0, j1
        do i = 1, im
          if (k > km) then
            st%d3(i, j, k) = 0; st%f3(i, j, k) = 0
            cycle
          end if
          kl = zcond(st, i, j, k - 1); kr = zcond(st, i, j, k)
          st%d3(i, j, k) = real(-(max(ww(i, j, k - 1), 0.0_r8) + kl), r4)
          st%f3(i, j, k) = real(min(ww(i, j, k), 0.0_r8) - kr, r4)
        end do
      end do
    end do
    call solver_upload_z(st%solver, 1, im, 1, jm, 1, km, d=st%d3, f=st%f3)
    do k = 1, km + 1
      do j = j0, j1
        do i = 1, im
          if (k > km) then
            st%e3(i, j, k) = 1
            cycle
          end if
          kl = zcond(st, i, j, k - 1); kr = zcond(st, i, j, k)
          vol1 = (depth + st%eta(i, j)) / km
          st%e3(i, j, k) = vol1 + max(ww(i, j, k), 0.0_r8) + kr - min(ww(i, j, k - 1), 0.0_r8) + kl
        end do
      end do
    end do
    call solver_upload_z(st%solver, 1, im, 1, jm, 1, km, e=st%e3)
    do k = 1, km + 1
      do j = j0, j1
        do i = 1, im
          st%ti3(i, j, k) = real(merge(0.0_r8, v1(i, j, k) * c(i, j, k), k > km), r4)
        end do
      end do
    end do
    call solver_thomasz(st%solver, 1, im, j0, j1, 1, km, st%d3, st%e3, st%f3, st%ti3, st%x3, st%water)
    do j = j0, j1
      do i = 1, im
        fl = 0
        vol1 = (depth + st%eta(i, j)) / km
        do k = 1, km
          cw = real(st%x3(i, j, k), r8)
          ce = cw
          if (k < km) ce = real(st%x3(i, j, k + 1), r8)
          kr = zcond(st, i, j, k)
          fr = max(ww(i, j, k), 0.0_r8) * cw + min(ww(i, j, k), 0.0_r8) * ce - kr * (ce - cw)
          st%g(i, j, k) = (v1(i, j, k) * c(i, j, k) - (fr - fl)) / vol1
          fl = fr
        end do
      end do
    end do
    c(1:im, j0:j1, 1:km) = st%g(1:im, j0:j1, 1:km)
    deallocate(v0, v1, ww)

  contains

    ! Diffusive conductances (m, per unit cell area, over the step) of the faces: x face i, y face j
    ! (0 at walls and at the open side), z interface on top of layer k (0 at the bottom and surface).
    real(r8) function xcond(ii, jj)
      integer, intent(in) :: ii, jj
      xcond = 0
      if (ii > 1 .and. ii <= im) xcond = dt * diff_h * st%hu(ii, jj) / km * st%dy / st%dx / a
    end function xcond

    real(r8) function ycond(ii, jj)
      integer, intent(in) :: ii, jj
      ycond = 0
      if (jj > 1 .and. jj <= jm) ycond = dt * diff_h * st%hv(ii, jj) / km * st%dx / st%dy / a
    end function ycond
  end subroutine transport

  pure real(r8) function zcond(st, i, j, k)
    type(fc_state), intent(in) :: st
    integer, intent(in) :: i, j, k
    zcond = 0
    if (k >= 1 .and. k < st%km) zcond = st%dt * diff_v * st%km / (depth + st%eta(i, j))
  end function zcond

end submodule fc_transport
