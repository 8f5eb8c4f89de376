! The output module of a flow_channel built without NetCDF (-DFLOW_CHANNEL_NETCDF=OFF), for machines
! without netcdf-fortran such as the GPU machine of the timing runs: the model runs and times as usual,
! and asking for a file is refused with a message instead of being silently ignored.
module fc_output
  use fc_model
  implicit none
  private
  public :: fc_output_t, fc_output_open, fc_output_write, fc_output_close, fc_output_verify, fc_output_series
  ! Whether --output can be honoured (flow_channel refuses it at once otherwise).
  logical, parameter, public :: fc_output_enabled = .false.

  type fc_output_t
    integer :: nrec = 0
  end type fc_output_t

contains

  subroutine refuse()
    write (*, '(a)') 'flow_channel: this build has no NetCDF output (configured with -DFLOW_CHANNEL_NETCDF=OFF);'// &
      ' run without --output or rebuild with netcdf-fortran'
    error stop 2
  end subroutine refuse

  subroutine fc_output_open(out, path, st, grid_name, backend)
    type(fc_output_t), intent(inout) :: out
    character(*), intent(in) :: path, grid_name, backend
    type(fc_state), intent(in) :: st
    if (.false.) out%nrec = len(path) + len(grid_name) + len(backend) + st%im
    call refuse()
  end subroutine fc_output_open

  subroutine fc_output_write(out, st)
    type(fc_output_t), intent(inout) :: out
    type(fc_state), intent(in) :: st
    if (.false.) out%nrec = st%im
    call refuse()
  end subroutine fc_output_write

  subroutine fc_output_series(out, time, river, outflow, vol_err, salt_err, heat_err)
    type(fc_output_t), intent(inout) :: out
    real(kind(1.0d0)), intent(in) :: time, river, outflow, vol_err, salt_err, heat_err
    if (.false.) out%nrec = int(time + river + outflow + vol_err + salt_err + heat_err)
    call refuse()
  end subroutine fc_output_series

  subroutine fc_output_close(out)
    type(fc_output_t), intent(inout) :: out
    out%nrec = 0
  end subroutine fc_output_close

  integer function fc_output_verify(path, st) result(nbad)
    character(*), intent(in) :: path
    type(fc_state), intent(in) :: st
    nbad = len(path) + st%im
    call refuse()
  end function fc_output_verify

end module fc_output
