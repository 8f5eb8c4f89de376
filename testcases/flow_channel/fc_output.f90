! NetCDF output of flow_channel with CF-1.8 metadata: cell-centre coordinates x, y (m), the depth of
! the layer centres at rest (m, positive down; sigma layers follow the free surface), time (s since the
! start); elevation, velocities at cell centres, temperature and salinity per record. Values are
! stored as float; fc_output_verify reads the last record back and compares it with the model state.
module fc_output
  use netcdf
  use fc_model
  implicit none
  private
  public :: fc_output_t, fc_output_open, fc_output_write, fc_output_close, fc_output_verify

  integer, parameter :: r4 = kind(1.0), r8 = kind(1.0d0)

  type fc_output_t
    integer :: ncid = -1, nrec = 0
    integer :: vid_time, vid_eta, vid_u, vid_v, vid_t, vid_s
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

  subroutine fc_output_open(out, path, st, grid_name, backend)
    type(fc_output_t), intent(inout) :: out
    character(*), intent(in) :: path, grid_name, backend
    type(fc_state), intent(in) :: st
    integer :: dx, dy, dz, dt, vx, vy, vz, i
    real(r8), allocatable :: coord(:)

    out%path = path
    out%nrec = 0
    call nc(nf90_create(path, ior(nf90_clobber, nf90_netcdf4), out%ncid), 'create '//path)
    call nc(nf90_put_att(out%ncid, nf90_global, 'Conventions', 'CF-1.8'), 'attribute')
    call nc(nf90_put_att(out%ncid, nf90_global, 'title', 'tridi flow_channel test case ('//grid_name//')'), 'att')
    call nc(nf90_put_att(out%ncid, nf90_global, 'institution', 'tridi project'), 'att')
    call nc(nf90_put_att(out%ncid, nf90_global, 'source', 'flow_channel (testcases/flow_channel), backend '// &
            backend), 'att')
    call nc(nf90_put_att(out%ncid, nf90_global, 'comment', '7000 m x 7000 m x 20 m channel, 7000 m3/s river '// &
            'at the west side, open east side with water level 0 (seed 004, section 4.2)'), 'att')
    call nc(nf90_def_dim(out%ncid, 'x', st%im, dx), 'dim x')
    call nc(nf90_def_dim(out%ncid, 'y', st%jm, dy), 'dim y')
    call nc(nf90_def_dim(out%ncid, 'z', st%km, dz), 'dim z')
    call nc(nf90_def_dim(out%ncid, 'time', nf90_unlimited, dt), 'dim time')
    call nc(nf90_def_var(out%ncid, 'x', nf90_double, [dx], vx), 'var x')
    call nc(nf90_put_att(out%ncid, vx, 'standard_name', 'projection_x_coordinate'), 'att')
    call nc(nf90_put_att(out%ncid, vx, 'long_name', 'distance from the west wall (cell centre)'), 'att')
    call nc(nf90_put_att(out%ncid, vx, 'units', 'm'), 'att')
    call nc(nf90_put_att(out%ncid, vx, 'axis', 'X'), 'att')
    call nc(nf90_def_var(out%ncid, 'y', nf90_double, [dy], vy), 'var y')
    call nc(nf90_put_att(out%ncid, vy, 'standard_name', 'projection_y_coordinate'), 'att')
    call nc(nf90_put_att(out%ncid, vy, 'long_name', 'distance from the south wall (cell centre)'), 'att')
    call nc(nf90_put_att(out%ncid, vy, 'units', 'm'), 'att')
    call nc(nf90_put_att(out%ncid, vy, 'axis', 'Y'), 'att')
    call nc(nf90_def_var(out%ncid, 'z', nf90_double, [dz], vz), 'var z')
    call nc(nf90_put_att(out%ncid, vz, 'standard_name', 'depth'), 'att')
    call nc(nf90_put_att(out%ncid, vz, 'long_name', 'depth of the layer centre at rest (sigma layers, '// &
            'layer 1 at the bottom)'), 'att')
    call nc(nf90_put_att(out%ncid, vz, 'units', 'm'), 'att')
    call nc(nf90_put_att(out%ncid, vz, 'positive', 'down'), 'att')
    call nc(nf90_put_att(out%ncid, vz, 'axis', 'Z'), 'att')
    call nc(nf90_def_var(out%ncid, 'time', nf90_double, [dt], out%vid_time), 'var time')
    call nc(nf90_put_att(out%ncid, out%vid_time, 'standard_name', 'time'), 'att')
    call nc(nf90_put_att(out%ncid, out%vid_time, 'units', 'seconds since 2000-01-01 00:00:00'), 'att')
    call nc(nf90_put_att(out%ncid, out%vid_time, 'calendar', 'standard'), 'att')
    call nc(nf90_put_att(out%ncid, out%vid_time, 'axis', 'T'), 'att')
    call def_field(out, 'elevation', [dx, dy, dt], 'sea_surface_height_above_geoid', &
                   'water level above the rest level', 'm', out%vid_eta)
    call def_field(out, 'u', [dx, dy, dz, dt], 'sea_water_x_velocity', 'velocity along x (cell centre)', &
                   'm s-1', out%vid_u)
    call def_field(out, 'v', [dx, dy, dz, dt], 'sea_water_y_velocity', 'velocity along y (cell centre)', &
                   'm s-1', out%vid_v)
    call def_field(out, 'temperature', [dx, dy, dz, dt], 'sea_water_temperature', 'temperature', 'degree_C', &
                   out%vid_t)
    call def_field(out, 'salinity', [dx, dy, dz, dt], 'sea_water_salinity', 'salinity', '1e-3', out%vid_s)
    call nc(nf90_enddef(out%ncid), 'enddef')
    coord = [((i - 0.5_r8) * st%dx, i = 1, st%im)]
    call nc(nf90_put_var(out%ncid, vx, coord), 'put x')
    coord = [((i - 0.5_r8) * st%dy, i = 1, st%jm)]
    call nc(nf90_put_var(out%ncid, vy, coord), 'put y')
    ! Layer 1 is the bottom one: its centre is the deepest.
    coord = [(depth - (i - 0.5_r8) * depth / st%km, i = 1, st%km)]
    call nc(nf90_put_var(out%ncid, vz, coord), 'put z')
  end subroutine fc_output_open

  subroutine def_field(out, name, dims, standard_name, long_name, units, vid)
    type(fc_output_t), intent(inout) :: out
    character(*), intent(in) :: name, standard_name, long_name, units
    integer, intent(in) :: dims(:)
    integer, intent(out) :: vid
    call nc(nf90_def_var(out%ncid, name, nf90_float, dims, vid, deflate_level=1), 'var '//name)
    call nc(nf90_put_att(out%ncid, vid, 'standard_name', standard_name), 'att')
    call nc(nf90_put_att(out%ncid, vid, 'long_name', long_name), 'att')
    call nc(nf90_put_att(out%ncid, vid, 'units', units), 'att')
  end subroutine def_field

  ! Cell-centre fields of the state, as stored (float).
  subroutine centred(st, eta, u, v, t, s)
    type(fc_state), intent(in) :: st
    real(r4), intent(out) :: eta(:,:), u(:,:,:), v(:,:,:), t(:,:,:), s(:,:,:)
    integer :: i, j, k
    eta = real(st%eta(1:st%im, 1:st%jm), r4)
    do k = 1, st%km
      do j = 1, st%jm
        do i = 1, st%im
          u(i, j, k) = real(0.5_r8 * (st%u(i, j, k) + st%u(i + 1, j, k)), r4)
          v(i, j, k) = real(0.5_r8 * (st%v(i, j, k) + st%v(i, j + 1, k)), r4)
        end do
      end do
    end do
    t = real(st%t(1:st%im, 1:st%jm, 1:st%km), r4)
    s = real(st%s(1:st%im, 1:st%jm, 1:st%km), r4)
  end subroutine centred

  subroutine fc_output_write(out, st)
    type(fc_output_t), intent(inout) :: out
    type(fc_state), intent(in) :: st
    real(r4), allocatable :: eta(:,:), u(:,:,:), v(:,:,:), t(:,:,:), s(:,:,:)
    integer :: n
    allocate(eta(st%im, st%jm), u(st%im, st%jm, st%km), v(st%im, st%jm, st%km), t(st%im, st%jm, st%km), &
             s(st%im, st%jm, st%km))
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

    allocate(eta(st%im, st%jm), u(st%im, st%jm, st%km), v(st%im, st%jm, st%km), t(st%im, st%jm, st%km), &
             s(st%im, st%jm, st%km), r2(st%im, st%jm), r3(st%im, st%jm, st%km))
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
    if (nx /= st%im .or. ny /= st%jm .or. nz /= st%km .or. n < 1) then
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
