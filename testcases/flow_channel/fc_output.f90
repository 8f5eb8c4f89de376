! NetCDF output of flow_channel with CF-1.8 metadata (README.md, "Output"), laid out as a modeller expects
! a MOHID-style grid: the channel's cells plus its closed walls as land cells (x covers i = 0..im, y covers
! j = 0..jm+1). Per file: cell-centre coordinates x, y with bounds, the sigma coordinate z with bounds and
! formula_terms, the bathymetry `depth` and the land-sea mask `mask`, a crs grid_mapping; per record the
! time, elevation, cell-centre velocities, temperature and salinity (float, _FillValue on land); on their
! own dimension series_time the series the case is judged by (fc_output_series). fc_output_verify reads
! the last record back and compares it with the model state.
module fc_output
  use netcdf
  use fc_model
  implicit none
  private
  public :: fc_output_t, fc_output_open, fc_output_write, fc_output_close, fc_output_verify, fc_output_series
  ! Whether --output can be honoured (flow_channel refuses it at once otherwise).
  logical, parameter, public :: fc_output_enabled = .true.

  integer, parameter :: r4 = kind(1.0), r8 = kind(1.0d0), i1 = selected_int_kind(2)
  real(r4), parameter :: fill = 1.0e20_r4   ! _FillValue of every float field (land cells)

  type fc_output_t
    integer :: ncid = -1, nrec = 0
    integer :: vid_time, vid_eta, vid_u, vid_v, vid_t, vid_s
    integer :: nser = 0, vid_stime, vid_ser(5)
    character(len=:), allocatable :: path
  end type fc_output_t

contains

  subroutine nc(status, what)
    integer, intent(in) :: status
    character(*), intent(in) :: what
    if (status /= nf90_noerr) then
      write (*, '(a, a, a, a)') 'flow_channel: NetCDF ', what, ': ', trim(nf90_strerror(status))
      error stop 1
    end if
  end subroutine nc

  ! Land cells of the output grid (i = 0..im, j = 0..jm+1): the walls' cells.
  pure logical function land(st, i, j)
    type(fc_state), intent(in) :: st
    integer, intent(in) :: i, j
    land = i == 0 .or. j == 0 .or. j == st%jm + 1
  end function land

  ! "2026-11-25T15:30:00+00:00 flow_channel GRID --backend ...": when and by which command.
  function history_line() result(line)
    character(len=:), allocatable :: line
    character(len=4096) :: cmd
    character(len=40) :: stamp
    integer :: v(8), n
    call date_and_time(values=v)
    write (stamp, '(i4.4, "-", i2.2, "-", i2.2, "T", i2.2, ":", i2.2, ":", i2.2, sp, i3.2, ss, ":", i2.2)') &
      v(1), v(2), v(3), v(5), v(6), v(7), v(4) / 60, abs(mod(v(4), 60))
    call get_command(cmd, n)
    line = trim(stamp)//' '//trim(cmd)//': written by flow_channel (tridi, testcases/flow_channel)'
  end function history_line

  subroutine fc_output_open(out, path, st, grid_name, backend)
    type(fc_output_t), intent(inout) :: out
    character(*), intent(in) :: path, grid_name, backend
    type(fc_state), intent(in) :: st
    integer :: dx, dy, dz, dt, dnv, dser, vx, vy, vz, vxb, vyb, vzb, vdep, vmask, vcrs, i, j, km
    character(len=24), parameter :: ser_names(5) = [character(len=24) :: 'river_discharge', 'outflow', &
      'volume_balance_error', 'salt_balance_error', 'heat_balance_error']
    character(len=120), parameter :: ser_long(5) = [character(len=120) :: &
      'river discharge into the west side during the step (taken at its middle)', &
      'discharge out through the open east side during the step', &
      '(volume change - (river in - east out)) / volume at the start', &
      '(salt content change - (in - out)) / salt content at the start', &
      '(heat content change - (in - out)) / heat content at the start (temperature x volume)']
    character(len=8), parameter :: ser_units(5) = [character(len=8) :: 'm3 s-1', 'm3 s-1', '1', '1', '1']
    real(r8), allocatable :: coord(:), bnds(:,:)
    real(r4), allocatable :: dep(:,:)
    integer(i1), allocatable :: mask(:,:)

    km = st%km
    out%path = path
    out%nrec = 0
    out%nser = 0
    call nc(nf90_create(path, ior(nf90_clobber, nf90_netcdf4), out%ncid), 'create '//path)
    call nc(nf90_put_att(out%ncid, nf90_global, 'Conventions', 'CF-1.8'), 'attribute')
    call nc(nf90_put_att(out%ncid, nf90_global, 'title', 'tridi flow_channel test case ('//grid_name//')'), 'att')
    call nc(nf90_put_att(out%ncid, nf90_global, 'institution', 'tridi project'), 'att')
    call nc(nf90_put_att(out%ncid, nf90_global, 'source', 'flow_channel (testcases/flow_channel), backend '// &
            backend), 'att')
    call nc(nf90_put_att(out%ncid, nf90_global, 'history', history_line()), 'att')
    call nc(nf90_put_att(out%ncid, nf90_global, 'comment', '7000 m x 7000 m x 20 m channel, 7000 m3/s river '// &
            'at the west side, open east side with a radiation condition (Flather) (seed 004, section 4.2); '// &
            'land: the closed west, south and north walls'), 'att')
    call nc(nf90_def_dim(out%ncid, 'x', st%im + 1, dx), 'dim x')
    call nc(nf90_def_dim(out%ncid, 'y', st%jm + 2, dy), 'dim y')
    call nc(nf90_def_dim(out%ncid, 'z', km, dz), 'dim z')
    call nc(nf90_def_dim(out%ncid, 'time', nf90_unlimited, dt), 'dim time')
    call nc(nf90_def_dim(out%ncid, 'nv', 2, dnv), 'dim nv')
    call nc(nf90_def_dim(out%ncid, 'series_time', nf90_unlimited, dser), 'dim series_time')
    ! The channel is idealised: a transverse Mercator projection with its origin at 0 N 0 E, chosen only
    ! so that x and y are projection coordinates CF tools can place (x east, y north).
    call nc(nf90_def_var(out%ncid, 'crs', nf90_int, vcrs), 'var crs')
    call nc(nf90_put_att(out%ncid, vcrs, 'grid_mapping_name', 'transverse_mercator'), 'att')
    call nc(nf90_put_att(out%ncid, vcrs, 'longitude_of_central_meridian', 0.0_r8), 'att')
    call nc(nf90_put_att(out%ncid, vcrs, 'latitude_of_projection_origin', 0.0_r8), 'att')
    call nc(nf90_put_att(out%ncid, vcrs, 'scale_factor_at_central_meridian', 1.0_r8), 'att')
    call nc(nf90_put_att(out%ncid, vcrs, 'false_easting', 0.0_r8), 'att')
    call nc(nf90_put_att(out%ncid, vcrs, 'false_northing', 0.0_r8), 'att')
    call nc(nf90_put_att(out%ncid, vcrs, 'comment', 'an idealised channel: the origin is arbitrary'), 'att')
    call def_projection_axis(out, 'x', dx, dnv, 'distance from the west wall (cell centre)', vx, vxb)
    call def_projection_axis(out, 'y', dy, dnv, 'distance from the south wall (cell centre)', vy, vyb)
    call nc(nf90_def_var(out%ncid, 'z', nf90_double, [dz], vz), 'var z')
    call nc(nf90_put_att(out%ncid, vz, 'standard_name', 'ocean_sigma_coordinate'), 'att')
    call nc(nf90_put_att(out%ncid, vz, 'long_name', 'sigma of the layer centre (layer 1 at the bottom)'), 'att')
    call nc(nf90_put_att(out%ncid, vz, 'units', '1'), 'att')
    call nc(nf90_put_att(out%ncid, vz, 'positive', 'up'), 'att')
    call nc(nf90_put_att(out%ncid, vz, 'axis', 'Z'), 'att')
    call nc(nf90_put_att(out%ncid, vz, 'formula_terms', 'sigma: z eta: elevation depth: depth'), 'att')
    call nc(nf90_put_att(out%ncid, vz, 'bounds', 'z_bnds'), 'att')
    call nc(nf90_def_var(out%ncid, 'z_bnds', nf90_double, [dnv, dz], vzb), 'var z_bnds')
    call nc(nf90_put_att(out%ncid, vzb, 'formula_terms', 'sigma: z_bnds eta: elevation depth: depth'), 'att')
    call nc(nf90_def_var(out%ncid, 'time', nf90_double, [dt], out%vid_time), 'var time')
    call nc(nf90_put_att(out%ncid, out%vid_time, 'standard_name', 'time'), 'att')
    call nc(nf90_put_att(out%ncid, out%vid_time, 'units', 'seconds since 2000-01-01 00:00:00'), 'att')
    call nc(nf90_put_att(out%ncid, out%vid_time, 'calendar', 'standard'), 'att')
    call nc(nf90_put_att(out%ncid, out%vid_time, 'axis', 'T'), 'att')
    call def_field(out, 'depth', [dx, dy], 'sea_floor_depth_below_geoid', 'bathymetry: depth of the sea '// &
                   'floor below the rest level', 'm', vdep)
    call nc(nf90_def_var(out%ncid, 'mask', nf90_byte, [dx, dy], vmask), 'var mask')
    call nc(nf90_put_att(out%ncid, vmask, 'standard_name', 'sea_binary_mask'), 'att')
    call nc(nf90_put_att(out%ncid, vmask, 'long_name', 'land-sea mask (MOHID WaterPoints): 1 water, 0 land'), 'att')
    call nc(nf90_put_att(out%ncid, vmask, 'units', '1'), 'att')
    call nc(nf90_put_att(out%ncid, vmask, 'flag_values', [0_i1, 1_i1]), 'att')
    call nc(nf90_put_att(out%ncid, vmask, 'flag_meanings', 'land water'), 'att')
    call def_field(out, 'elevation', [dx, dy, dt], 'sea_surface_height_above_geoid', &
                   'water level above the rest level', 'm', out%vid_eta)
    call def_field(out, 'u', [dx, dy, dz, dt], 'sea_water_x_velocity', 'velocity along x (cell centre)', &
                   'm s-1', out%vid_u)
    call def_field(out, 'v', [dx, dy, dz, dt], 'sea_water_y_velocity', 'velocity along y (cell centre)', &
                   'm s-1', out%vid_v)
    call def_field(out, 'temperature', [dx, dy, dz, dt], 'sea_water_temperature', 'temperature', 'degree_C', &
                   out%vid_t)
    call def_field(out, 'salinity', [dx, dy, dz, dt], 'sea_water_salinity', 'salinity', '1e-3', out%vid_s)
    call nc(nf90_put_att(out%ncid, vmask, 'grid_mapping', 'crs'), 'att')
    call nc(nf90_def_var(out%ncid, 'series_time', nf90_double, [dser], out%vid_stime), 'var series_time')
    call nc(nf90_put_att(out%ncid, out%vid_stime, 'standard_name', 'time'), 'att')
    call nc(nf90_put_att(out%ncid, out%vid_stime, 'long_name', 'time of the series (end of the step)'), 'att')
    call nc(nf90_put_att(out%ncid, out%vid_stime, 'units', 'seconds since 2000-01-01 00:00:00'), 'att')
    call nc(nf90_put_att(out%ncid, out%vid_stime, 'calendar', 'standard'), 'att')
    do i = 1, 5
      call nc(nf90_def_var(out%ncid, trim(ser_names(i)), nf90_double, [dser], out%vid_ser(i)), &
              'var '//trim(ser_names(i)))
      call nc(nf90_put_att(out%ncid, out%vid_ser(i), 'long_name', trim(ser_long(i))), 'att')
      call nc(nf90_put_att(out%ncid, out%vid_ser(i), 'units', trim(ser_units(i))), 'att')
    end do
    call nc(nf90_enddef(out%ncid), 'enddef')
    call put_projection_axis(out, 'x', vx, vxb, st%dx, st%im)
    call put_projection_axis(out, 'y', vy, vyb, st%dy, st%jm + 1)
    ! Sigma from -1 (sea floor) to 0 (surface); layer 1 is the bottom one.
    coord = [(-1 + (i - 0.5_r8) / km, i = 1, km)]
    call nc(nf90_put_var(out%ncid, vz, coord), 'put z')
    bnds = reshape([(-1 + real(i - 1, r8) / km, -1 + real(i, r8) / km, i = 1, km)], [2, km])
    call nc(nf90_put_var(out%ncid, vzb, bnds), 'put z_bnds')
    allocate(dep(0:st%im, 0:st%jm + 1), mask(0:st%im, 0:st%jm + 1))
    do j = 0, st%jm + 1
      do i = 0, st%im
        mask(i, j) = merge(0_i1, 1_i1, land(st, i, j))
        dep(i, j) = merge(fill, real(depth, r4), land(st, i, j))
      end do
    end do
    call nc(nf90_put_var(out%ncid, vdep, dep), 'put depth')
    call nc(nf90_put_var(out%ncid, vmask, mask), 'put mask')
    call nc(nf90_put_var(out%ncid, vcrs, 0), 'put crs')
  end subroutine fc_output_open

  ! A horizontal coordinate (x or y, in m, of the crs projection) on dimension dim and its cell bounds.
  subroutine def_projection_axis(out, name, dim, dnv, long_name, vid, vbnds)
    type(fc_output_t), intent(inout) :: out
    character(*), intent(in) :: name, long_name
    integer, intent(in) :: dim, dnv
    integer, intent(out) :: vid, vbnds
    character(len=1) :: upper
    upper = achar(iachar(name(1:1)) - 32)
    call nc(nf90_def_var(out%ncid, name, nf90_double, [dim], vid), 'var '//name)
    call nc(nf90_put_att(out%ncid, vid, 'standard_name', 'projection_'//name//'_coordinate'), 'att')
    call nc(nf90_put_att(out%ncid, vid, 'long_name', long_name), 'att')
    call nc(nf90_put_att(out%ncid, vid, 'units', 'm'), 'att')
    call nc(nf90_put_att(out%ncid, vid, 'axis', upper), 'att')
    call nc(nf90_put_att(out%ncid, vid, 'bounds', name//'_bnds'), 'att')
    call nc(nf90_def_var(out%ncid, name//'_bnds', nf90_double, [dnv, dim], vbnds), 'var '//name//'_bnds')
  end subroutine def_projection_axis

  ! Its values: cells 0..last of size h, centres and bounds.
  subroutine put_projection_axis(out, name, vid, vbnds, h, last)
    type(fc_output_t), intent(in) :: out
    character(*), intent(in) :: name
    integer, intent(in) :: vid, vbnds, last
    real(r8), intent(in) :: h
    integer :: i
    call nc(nf90_put_var(out%ncid, vid, [((i - 0.5_r8) * h, i = 0, last)]), 'put '//name)
    call nc(nf90_put_var(out%ncid, vbnds, reshape([((i - 1) * h, i * h, i = 0, last)], [2, last + 1])), &
            'put '//name//'_bnds')
  end subroutine put_projection_axis

  subroutine def_field(out, name, dims, standard_name, long_name, units, vid)
    type(fc_output_t), intent(inout) :: out
    character(*), intent(in) :: name, standard_name, long_name, units
    integer, intent(in) :: dims(:)
    integer, intent(out) :: vid
    call nc(nf90_def_var(out%ncid, name, nf90_float, dims, vid, deflate_level=1), 'var '//name)
    call nc(nf90_put_att(out%ncid, vid, 'standard_name', standard_name), 'att')
    call nc(nf90_put_att(out%ncid, vid, 'long_name', long_name), 'att')
    call nc(nf90_put_att(out%ncid, vid, 'units', units), 'att')
    call nc(nf90_put_att(out%ncid, vid, '_FillValue', fill), 'att')
    call nc(nf90_put_att(out%ncid, vid, 'grid_mapping', 'crs'), 'att')
  end subroutine def_field

  ! Cell-centre fields of the state over the output grid, as stored (float; _FillValue on land).
  subroutine centred(st, eta, u, v, t, s)
    type(fc_state), intent(in) :: st
    real(r4), intent(out) :: eta(0:,0:), u(0:,0:,:), v(0:,0:,:), t(0:,0:,:), s(0:,0:,:)
    integer :: i, j, k
    eta = fill; u = fill; v = fill; t = fill; s = fill
    eta(1:st%im, 1:st%jm) = real(st%eta(1:st%im, 1:st%jm), r4)
    do k = 1, st%km
      do j = 1, st%jm
        do i = 1, st%im
          u(i, j, k) = real(0.5_r8 * (st%u(i, j, k) + st%u(i + 1, j, k)), r4)
          v(i, j, k) = real(0.5_r8 * (st%v(i, j, k) + st%v(i, j + 1, k)), r4)
        end do
      end do
    end do
    t(1:st%im, 1:st%jm, :) = real(st%t(1:st%im, 1:st%jm, 1:st%km), r4)
    s(1:st%im, 1:st%jm, :) = real(st%s(1:st%im, 1:st%jm, 1:st%km), r4)
  end subroutine centred

  subroutine fc_output_write(out, st)
    type(fc_output_t), intent(inout) :: out
    type(fc_state), intent(in) :: st
    real(r4), allocatable :: eta(:,:), u(:,:,:), v(:,:,:), t(:,:,:), s(:,:,:)
    integer :: n
    allocate(eta(0:st%im, 0:st%jm + 1), u(0:st%im, 0:st%jm + 1, st%km), v(0:st%im, 0:st%jm + 1, st%km), &
             t(0:st%im, 0:st%jm + 1, st%km), s(0:st%im, 0:st%jm + 1, st%km))
    call centred(st, eta, u, v, t, s)
    out%nrec = out%nrec + 1
    n = out%nrec
    call nc(nf90_put_var(out%ncid, out%vid_time, [st%time], start=[n]), 'put time')
    call nc(nf90_put_var(out%ncid, out%vid_eta, eta, start=[1, 1, n]), 'put elevation')
    call nc(nf90_put_var(out%ncid, out%vid_u, u, start=[1, 1, 1, n]), 'put u')
    call nc(nf90_put_var(out%ncid, out%vid_v, v, start=[1, 1, 1, n]), 'put v')
    call nc(nf90_put_var(out%ncid, out%vid_t, t, start=[1, 1, 1, n]), 'put temperature')
    call nc(nf90_put_var(out%ncid, out%vid_s, s, start=[1, 1, 1, n]), 'put salinity')
    call nc(nf90_sync(out%ncid), 'sync')
  end subroutine fc_output_write

  ! One sample of the series: time (s), river discharge and outflow (m3/s), the balance errors.
  subroutine fc_output_series(out, time, river, outflow, vol_err, salt_err, heat_err)
    type(fc_output_t), intent(inout) :: out
    real(r8), intent(in) :: time, river, outflow, vol_err, salt_err, heat_err
    real(r8) :: v(5)
    integer :: f
    out%nser = out%nser + 1
    v = [river, outflow, vol_err, salt_err, heat_err]
    call nc(nf90_put_var(out%ncid, out%vid_stime, [time], start=[out%nser]), 'put series_time')
    do f = 1, 5
      call nc(nf90_put_var(out%ncid, out%vid_ser(f), [v(f)], start=[out%nser]), 'put series')
    end do
  end subroutine fc_output_series

  subroutine fc_output_close(out)
    type(fc_output_t), intent(inout) :: out
    if (out%ncid >= 0) call nc(nf90_close(out%ncid), 'close')
    out%ncid = -1
  end subroutine fc_output_close

  ! Reads the file back (after close) and compares its last record, every variable, with the state:
  ! returns the number of values that differ (0: the file holds exactly what the model computed).
  integer function fc_output_verify(path, st) result(nbad)
    character(*), intent(in) :: path
    type(fc_state), intent(in) :: st
    real(r4), allocatable :: eta(:,:), u(:,:,:), v(:,:,:), t(:,:,:), s(:,:,:), r2(:,:), r3(:,:,:)
    real(r8) :: time(1)
    integer :: ncid, vid, dimid, n, nx, ny, nz

    allocate(eta(0:st%im, 0:st%jm + 1), u(0:st%im, 0:st%jm + 1, st%km), v(0:st%im, 0:st%jm + 1, st%km), &
             t(0:st%im, 0:st%jm + 1, st%km), s(0:st%im, 0:st%jm + 1, st%km), r2(0:st%im, 0:st%jm + 1), &
             r3(0:st%im, 0:st%jm + 1, st%km))
    call centred(st, eta, u, v, t, s)
    call nc(nf90_open(path, nf90_nowrite, ncid), 'open '//path)
    call nc(nf90_inq_dimid(ncid, 'time', dimid), 'dim time')
    call nc(nf90_inquire_dimension(ncid, dimid, len=n), 'dim time')
    call nc(nf90_inq_dimid(ncid, 'x', dimid), 'dim x')
    call nc(nf90_inquire_dimension(ncid, dimid, len=nx), 'dim x')
    call nc(nf90_inq_dimid(ncid, 'y', dimid), 'dim y')
    call nc(nf90_inquire_dimension(ncid, dimid, len=ny), 'dim y')
    call nc(nf90_inq_dimid(ncid, 'z', dimid), 'dim z')
    call nc(nf90_inquire_dimension(ncid, dimid, len=nz), 'dim z')
    nbad = 0
    if (nx /= st%im + 1 .or. ny /= st%jm + 2 .or. nz /= st%km .or. n < 1) then
      write (*, '(a, 4(1x, i0))') 'flow_channel: verify: unexpected dimensions x y z time', nx, ny, nz, n
      nbad = 1
      call nc(nf90_close(ncid), 'close')
      return
    end if
    call nc(nf90_inq_varid(ncid, 'time', vid), 'var time')
    call nc(nf90_get_var(ncid, vid, time, start=[n]), 'get time')
    if (time(1) /= st%time) nbad = nbad + 1
    call nc(nf90_inq_varid(ncid, 'elevation', vid), 'var elevation')
    call nc(nf90_get_var(ncid, vid, r2, start=[1, 1, n]), 'get elevation')
    nbad = nbad + count(r2 /= eta)
    call check3('u', u)
    call check3('v', v)
    call check3('temperature', t)
    call check3('salinity', s)
    call nc(nf90_close(ncid), 'close')

  contains

    subroutine check3(name, ref)
      character(*), intent(in) :: name
      real(r4), intent(in) :: ref(:,:,:)
      integer :: bad
      call nc(nf90_inq_varid(ncid, name, vid), 'var '//name)
      call nc(nf90_get_var(ncid, vid, r3, start=[1, 1, 1, n]), 'get '//name)
      bad = count(r3 /= ref)
      if (bad > 0) write (*, '(a, a, a, i0, a)') 'flow_channel: verify: ', name, ': ', bad, ' values differ'
      nbad = nbad + bad
    end subroutine check3
  end function fc_output_verify

end module fc_output
