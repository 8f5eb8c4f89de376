! flow_channel: runs seed 004's channel on one of its grids with a chosen solver backend, prints a
! progress line, a timing table and the machine-readable FLOW_CHANNEL line; writes NetCDF. Usage and every
! option: README.md, "Running it" (flow_channel GRID [--backend B] [--steps N | --hours H] ...).
! --compare B2 steps a second model on backend B2 in the same process and fails when a field differs by
! more than the tolerance. A bad argument stops the run before the model is set up: one line on standard
! error naming it, exit status 2. On MPI ranks (flow_channel_mpi, README.md "Running on N MPI ranks") the
! model is cut along j; rank 0 prints what a one-rank run prints, and --compare steps the second model
! whole on rank 0 (the check that N ranks give the one-rank answers).
program flow_channel
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
  use, intrinsic :: iso_fortran_env, only: error_unit
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_null_char
  use fc_solver
  use fc_model
  use fc_output
  use fc_parallel
  implicit none

  integer, parameter :: r8 = kind(1.0d0)
  type(fc_state), target :: main, other, whole
  type(fc_state), pointer :: shown   ! the state output and comparisons read: main, or whole on ranks
  type(fc_output_t) :: out
  character(len=256) :: arg, grid_name = '', output = '', bname = 'reference', cname = ''
  integer :: n, km, backend, cbackend, steps, records, i, nargs, every, nbad, threads = 0, timed
  real(r8) :: dt, hours, ramp = default_ramp, tol, t0, wall_main, wall_other, vol0, salt0, heat0, ovol0 = 0, osalt0 = 1
  real(r8) :: vol_err, salt_err, heat_err, ovol_err, osalt_err, late_volume = 0, late_time = 0, eta_west
  real(r8) :: late_min = huge(1.0_r8), late_max = -huge(1.0_r8), outflow_now
  integer :: sample_every
  logical :: sample
  logical :: compare, verify, quiet, failed, record, progress, look, split, root, nan
  character(*), parameter :: grids = 'flow_channel_70-28, flow_channel_140-28, flow_channel_140-56, '// &
    'flow_channel_560-56, flow_channel_1120-56, or flow_channel_N-K: N cells a side, 8..8192, K layers, 2..512'
  character(*), parameter :: transports = 'auto, ipc, cuda-aware, staged, nccl'

  interface
    ! POSIX access(2): 0 when path exists (mode 0) or may be written (mode 2).
    integer(c_int) function c_access(path, mode) bind(c, name='access')
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int), value :: mode
    end function
  end interface

  call par_start()
  split = par_nranks > 1
  root = par_rank == 0
  steps = -1; hours = -1; dt = -1; records = 7; tol = 1.0e-3_r8
  verify = .false.; quiet = .false.
  ! Every bad argument ends the run before anything is allocated: one line on standard error naming
  ! the argument and what it accepts, exit status 2 (bad()).
  nargs = command_argument_count()
  i = 1
  do while (i <= nargs)
    call get_command_argument(i, arg)
    select case (trim(arg))
    case ('--backend'); bname = next_arg('reference, cpu, gpu, gpu-resident')
    case ('--steps'); steps = int_arg(1)
    case ('--hours'); hours = real_arg(.false.)
    case ('--dt'); dt = real_arg(.false.)
    case ('--output'); output = next_arg('a NetCDF file name')
    case ('--records'); records = int_arg(1)
    case ('--compare'); cname = next_arg('reference, cpu, gpu, gpu-resident')
    case ('--tolerance'); tol = real_arg(.true.)
    case ('--ramp'); ramp = real_arg(.true.)
    case ('--threads'); threads = int_arg(0)
    case ('--transport')
      arg = next_arg(transports)
      if (.not. par_set_transport(arg)) call bad('--transport '//trim(arg)//': unknown transport ('// &
                                                 transports//')')
    case ('--verify-output'); verify = .true.
    case ('--quiet'); quiet = .true.
    case ('-h', '--help'); call usage()
    case default
      if (arg(1:1) == '-') call bad('unknown option '//trim(arg)//' (flow_channel --help lists them)')
      if (grid_name /= '') call bad('a second GRID '//trim(arg)//' (one grid a run; flow_channel --help)')
      grid_name = arg
    end select
    i = i + 1
  end do
  if (grid_name == '') call bad('missing GRID ('//grids//')')
  if (.not. fc_grid_from_name(grid_name, n, km)) call bad('unknown GRID '//trim(grid_name)//' ('//grids//')')
  backend = backend_from_name(bname)
  if (backend < 0) call bad('--backend '//trim(bname)//': unknown backend (reference, cpu, gpu, gpu-resident)')
  ! On ranks: tridi's distributed solves for the adapter's host arrays (cpu) or for the resident
  ! model's device arrays (gpu-resident: each rank's GPU holds its rows). The reference Thomas is
  ! sequential, and the gpu backend's cut sweeps would run on the host.
  if (split .and. backend /= BACKEND_CPU .and. backend /= BACKEND_GPU_RESIDENT) then
    write (arg, '(i0)') par_nranks
    call bad('--backend '//trim(bname)//' does not run on '//trim(arg)//' ranks (cpu, gpu-resident do)')
  end if
  compare = cname /= ''
  cbackend = BACKEND_REFERENCE
  if (compare) then
    cbackend = backend_from_name(cname)
    if (cbackend < 0) call bad('--compare '//trim(cname)//': unknown backend (reference, cpu, gpu, gpu-resident)')
    ! The MOHID adapter holds one tridi context per process.
    if (uses_adapter(cbackend) .and. uses_adapter(backend) .and. cbackend /= backend) &
      call bad('--compare '//trim(cname)//': cpu and gpu cannot run in one process (one adapter context;'// &
               ' reference or gpu-resident can)')
  end if
  if (steps > 0 .and. hours > 0) call bad('--steps and --hours: give one of them')
  if (verify .and. output == '') call bad('--verify-output needs --output FILE')
  if (output /= '') call check_output()
  ! 30 s on the 100 m grid, 15 s on the 50 m grids, 3.75 s and 1.875 s on the 12.5 m and 6.25 m ones: the
  ! same Courant numbers on every grid (README.md: time step).
  if (dt <= 0) dt = 0.3_r8 * (length / n)
  if (steps < 0) then
    if (hours < 0) hours = 1
    steps = max(1, nint(hours * 3600 / dt))
  end if

  call fc_init(main, n, n, km, dt, backend, threads, split)
  ! On ranks the model to compare with runs whole on rank 0 only.
  if (.not. root) compare = .false.
  if (compare) call fc_init(other, n, n, km, dt, cbackend, threads, .false.)
  main%ramp = ramp
  if (compare) other%ramp = ramp
  vol0 = fc_volume(main); salt0 = fc_content(main, main%s); heat0 = fc_content(main, main%t)
  if (compare) then
    ovol0 = fc_volume(other); osalt0 = fc_content(other, other%s)
  end if
  shown => main
  if (split) shown => whole
  write (*, '(a, a, a, i0, a, i0, a, i0, a, f0.1, a, i0, a, f0.2, a)') 'flow_channel: ', trim(grid_name), &
    ' (', n, ' x ', n, ' x ', km, '), dt = ', dt, ' s, ', steps, ' steps (', steps * dt / 3600, ' h)'
  write (*, '(a, a, a, a)') 'flow_channel: backend ', trim(bname), merge(', compared with ', '                ', &
    compare), trim(cname)
  if (split) write (*, '(a, i0, a, i0, a, i0, a)') 'flow_channel: cut along j over ', par_nranks, &
    ' MPI ranks (rank 0: rows ', main%j0, '..', main%j1, ')'
  if (output /= '') then
    if (split) call fc_gather(main, whole)
    if (root) call fc_output_open(out, trim(output), shown, trim(grid_name), trim(bname))
    if (root) call fc_output_write(out, shown)
  end if

  every = max(1, steps / records)
  ! The series (discharges and balances) at about 500 points a run, with the output.
  sample_every = max(1, steps / 500)
  wall_main = 0; wall_other = 0
  failed = .false.
  do i = 1, steps
    t0 = now()
    call fc_step(main)
    wall_main = wall_main + (now() - t0)
    if (compare) then
      t0 = now()
      call fc_step(other)
      wall_other = wall_other + (now() - t0)
    end if
    ! The first step is the warm-up (device buffers allocated, host memory pinned): not timed.
    if (i == 1 .and. steps > 1) then
      wall_main = 0; wall_other = 0
      call solver_reset_times(main%solver)
      call solver_reset_times(other%solver)
    end if
    ! Mean discharge through the open side over the run's last model hour (after the ramp, the check
    ! that the outflow approaches the river's 7000 m3/s).
    ! Its swing (largest minus smallest discharge of a step in that hour) shows whether the outflow has
    ! settled or still rings.
    if ((steps - i) * dt < 3600) then
      late_volume = late_volume + main%outflow * dt
      late_time = late_time + dt
      outflow_now = par_sum(main%par, main%outflow)
      late_min = min(late_min, outflow_now); late_max = max(late_max, outflow_now)
    end if
    record = output /= '' .and. (mod(i, every) == 0 .or. i == steps)
    progress = .not. quiet .and. (mod(i, max(1, steps / 20)) == 0 .or. i == steps)
    sample = output /= '' .and. (mod(i, sample_every) == 0 .or. i == steps)
    ! gpu-resident fields come to the host only when they are looked at.
    look = record .or. progress .or. sample .or. i == steps .or. .not. main%resident
    if (look) call fc_sync_host(main)
    if (sample) call write_series()
    if (record .and. split) call fc_gather(main, whole)
    if (record .and. root) call fc_output_write(out, shown)
    if (progress) then
      ! On ranks: the sum of the shares, the extremes over all ranks, the west cell from its owner.
      eta_west = 0
      if (n / 2 >= main%j0 .and. n / 2 <= main%j1) eta_west = main%eta(1, n / 2)
      write (*, '(a, i7, a, i0, a, f7.3, a, f9.1, a, f8.4, a, f8.4, a, f7.3, a)') 'step ', i, '/', steps, &
        '  t = ', main%time / 3600, ' h  outflow = ', par_sum(main%par, main%outflow), ' m3/s  max|u| = ', &
        par_max(main%par, maxval(abs(main%u))), ' m/s  eta(west) = ', par_sum(main%par, eta_west), &
        ' m  min S = ', par_min(main%par, minval(main%s(1:n, main%j0:main%j1, 1:km))), ''
    end if
    if (look) then
      nan = par_any(main%par, any(ieee_is_nan(main%eta)) .or. any(ieee_is_nan(main%u)) .or. &
                    any(ieee_is_nan(main%s)))
      if (nan) then
        write (*, '(a, i0)') 'flow_channel: FAILED: NaN in the solution at step ', i
        failed = .true.
        exit
      end if
    end if
  end do
  if (output /= '' .and. root) call fc_output_close(out)
  call fc_sync_host(main)
  if (compare) call fc_sync_host(other)
  ! Budgets, the last hour's outflow and the times over all ranks (the slowest rank's times).
  call fc_global_budgets(main)
  late_volume = par_sum(main%par, late_volume)
  wall_main = par_max(main%par, wall_main)
  main%solver%seconds = par_max(main%par, main%solver%seconds)

  vol_err = (fc_volume(main) - vol0 - (main%vol_in - main%vol_out)) / main%vol_in
  salt_err = (fc_content(main, main%s) - salt0 - (main%salt_in - main%salt_out)) / salt0
  heat_err = (fc_content(main, main%t) - heat0 - (main%heat_in - main%heat_out)) / heat0
  write (*, '(a)') ''
  write (*, '(a, es10.3, a, es10.3, a, es11.3)') 'volume: change - (river in - east out) = ', &
    fc_volume(main) - vol0 - (main%vol_in - main%vol_out), ' m3, relative to the river volume ', &
    main%vol_in, ' m3: ', vol_err
  write (*, '(a, es11.3, a, es11.3, a, es11.3)') 'salt: content change ', fc_content(main, main%s) - salt0, &
    ', in - out ', main%salt_in - main%salt_out, ', error relative to the content ', salt_err
  write (*, '(a, es11.3)') 'heat (temperature x volume): balance error relative to the content ', heat_err
  write (*, '(a, f0.1, a, f0.1, a, f0.4)') 'outflow: mean over the last ', late_time / 3600, ' h: ', &
    late_volume / late_time, ' m3/s; ratio to the river discharge ', late_volume / late_time / discharge
  write (*, '(a, f0.1, a, f0.1, a, f0.1, a, f0.1, a, f0.4)') 'outflow: range over the last ', late_time / 3600, &
    ' h: ', late_min, ' to ', late_max, ' m3/s; swing ', late_max - late_min, &
    ' m3/s; ratio to the river discharge ', (late_max - late_min) / discharge

  if (compare) then
    ovol_err = (fc_volume(other) - ovol0 - (other%vol_in - other%vol_out)) / other%vol_in
    osalt_err = (fc_content(other, other%s) - osalt0 - (other%salt_in - other%salt_out)) / osalt0
    write (*, '(a, a, a, es10.3, a, es10.3)') 'compare: ', trim(cname), ': volume error ', ovol_err, &
      ', salt error ', osalt_err
  end if
  if (split .and. cname /= '') call fc_gather(main, whole)
  if (compare) then
    if (.not. agree()) failed = .true.
  end if

  timed = max(1, int(main%nstep) - merge(1, 0, main%nstep > 1))
  call table()
  if (any(main%solver%part > 0)) write (*, '(a, 4(a, f0.3))') 'solver time by kind (ms per step):', &
    ' THOMAS_3D ', 1000 * main%solver%part(1) / timed, ', THOMASZ ', 1000 * main%solver%part(2) / timed, &
    ', THOMAS_2D ', 1000 * main%solver%part(3) / timed, ', uploads ', 1000 * main%solver%part(4) / timed
  write (*, '(a, a, a, a, a, i0, a, f0.4, a, f0.4, a, f0.2, a, es10.3, a, es10.3)') 'FLOW_CHANNEL grid=', &
    trim(grid_name), ' backend=', trim(bname), ' steps=', main%nstep, ' solver_ms=', &
    1000 * main%solver%seconds / timed, ' total_ms=', 1000 * wall_main / timed, ' outflow_m3s=', &
    main%outflow, ' volume_error=', vol_err, ' salt_error=', salt_err

  if (verify) then
    if (split) call fc_gather(main, whole)
    nbad = 0
    if (root) nbad = fc_output_verify(trim(output), shown)
    if (nbad /= 0) then
      write (*, '(a, i0, a)') 'flow_channel: FAILED: the NetCDF file differs from the state in ', nbad, ' values'
      failed = .true.
    else
      write (*, '(a, a, a)') 'flow_channel: ', trim(output), ' read back: last record equals the model state'
    end if
  end if
  ! Before the surge has crossed the channel (about 500 s at sqrt(g h) = 14 m/s) the outflow may still
  ! be 0; it must be finite always and positive once the discharge is established.
  if (.not. (abs(main%outflow) < 1.0e6_r8) .or. (main%time >= max(ramp, 1800.0_r8) .and. &
      .not. (main%outflow > 0))) then
    write (*, '(a, es10.3)') 'flow_channel: FAILED: the outflow is not finite and positive: ', main%outflow
    failed = .true.
  end if

  ! Each kind of solve, per call: inside the model against back to back (the replay rewrites the answers).
  if (.not. failed) then
    call solver_report_per_call(main%solver)
    if (compare) call solver_report_per_call(other%solver)
  end if
  failed = par_any(main%par, failed)
  call fc_free(main)
  if (compare) call fc_free(other)
  ! Through MPI_Finalize where MPI runs (flow_channel_mpi); exit status 1 on a failure.
  call par_exit(merge(1, 0, failed))

contains

  logical function uses_adapter(b)
    integer, intent(in) :: b
    uses_adapter = b == BACKEND_CPU .or. b == BACKEND_GPU
  end function uses_adapter

  ! One line on standard error (rank 0's; every rank parses the same arguments), exit status 2.
  subroutine bad(text)
    character(*), intent(in) :: text
    if (par_rank == 0) write (error_unit, '(a, a)') 'flow_channel: ', text
    call par_exit(2)
  end subroutine bad

  ! The value of option arg (the current argument); accepted: what the option takes, for the message.
  function next_arg(accepted) result(val)
    character(*), intent(in) :: accepted
    character(len=256) :: val
    character(len=256) :: opt
    call get_command_argument(i, opt)
    i = i + 1
    if (i > nargs) call bad(trim(opt)//' needs a value ('//accepted//')')
    call get_command_argument(i, val)
  end function next_arg

  ! An integer option's value, at least lo; digits and a sign only (list-directed reads take '3,x').
  integer function int_arg(lo) result(v)
    integer, intent(in) :: lo
    character(len=256) :: opt, val
    character(len=32) :: want
    integer :: io
    intrinsic :: verify   ! the program's verify is the --verify-output flag
    call get_command_argument(i, opt)
    write (want, '(a, i0)') 'an integer >= ', lo
    val = next_arg(trim(want))
    io = 1
    if (verify(trim(val), '+-0123456789') == 0) read (val, *, iostat=io) v
    if (io /= 0) call bad(trim(opt)//' '//trim(val)//': not '//trim(want))
    if (v < lo) call bad(trim(opt)//' '//trim(val)//': not '//trim(want))
  end function int_arg

  ! A real option's value, above 0 (or at least 0 when zero_ok); no NaN or infinity.
  real(r8) function real_arg(zero_ok) result(v)
    logical, intent(in) :: zero_ok
    character(len=256) :: opt, val
    character(len=32) :: want
    integer :: io
    intrinsic :: verify
    call get_command_argument(i, opt)
    want = 'a number > 0'
    if (zero_ok) want = 'a number >= 0'
    val = next_arg(trim(want))
    io = 1
    if (verify(trim(val), '+-.0123456789eEdD') == 0) read (val, *, iostat=io) v
    if (io /= 0) call bad(trim(opt)//' '//trim(val)//': not '//trim(want))
    if (.not. (v > 0 .or. (zero_ok .and. v >= 0))) call bad(trim(opt)//' '//trim(val)//': not '//trim(want))
  end function real_arg

  ! --output: a build with NetCDF, and a file this process may create (its folder exists and is
  ! writable; an existing file is writable), checked before the model is set up.
  subroutine check_output()
    integer :: slash
    character(len=256) :: dir
    if (.not. fc_output_enabled) call bad('--output '//trim(output)//': this build has no NetCDF output'// &
      ' (configured with -DFLOW_CHANNEL_NETCDF=OFF)')
    slash = index(output, '/', back=.true.)
    dir = '.'
    if (slash == 1) dir = '/'
    if (slash > 1) dir = output(1:slash - 1)
    if (slash == len_trim(output)) call bad('--output '//trim(output)//': a file name, not a folder')
    if (c_access(trim(dir)//c_null_char, 2_c_int) /= 0) &
      call bad('--output '//trim(output)//': the folder '//trim(dir)//' does not exist or is not writable')
    if (c_access(trim(output)//c_null_char, 0_c_int) == 0 .and. &
        c_access(trim(output)//c_null_char, 2_c_int) /= 0) &
      call bad('--output '//trim(output)//': the file exists and is not writable')
  end subroutine check_output

  subroutine usage()
    write (*, '(a)') 'usage: flow_channel GRID [--backend reference|cpu|gpu|gpu-resident] [--steps N | --hours H]'
    write (*, '(a)') '                    [--dt S] [--output FILE.nc] [--records N] [--compare BACKEND] [--tolerance X]'
    write (*, '(a)') '                    [--ramp S] [--threads N] [--transport T] [--verify-output] [--quiet]'
    write (*, '(a)') '  GRID: '//grids
    write (*, '(a)') '  N: an integer >= 1 (--threads: >= 0, 0 = the library default); H, S: a number > 0'// &
                     ' (--ramp, --tolerance: >= 0)'
    write (*, '(a)') '  T (gpu-resident on ranks): '//transports
    call par_exit(0)
  end subroutine usage

  ! One sample of the series into the output file: the step's river discharge and outflow, and the
  ! balances of the summary lines (sums over the ranks; collective).
  subroutine write_series()
    real(r8) :: vol_out, salt_out, heat_out, outflow, vol, salt, heat
    vol_out = par_sum(main%par, main%vol_out)
    salt_out = par_sum(main%par, main%salt_out)
    heat_out = par_sum(main%par, main%heat_out)
    outflow = par_sum(main%par, main%outflow)
    vol = fc_volume(main); salt = fc_content(main, main%s); heat = fc_content(main, main%t)
    ! Water relative to the volume at the start, as salt and heat to their content (the summary line
    ! divides by the river's volume, which is near 0 in the first steps).
    if (root) call fc_output_series(out, main%time, fc_river(main%time - 0.5_r8 * dt, ramp), outflow, &
                                    (vol - vol0 - (main%vol_in - vol_out)) / vol0, &
                                    (salt - salt0 - (main%salt_in - salt_out)) / salt0, &
                                    (heat - heat0 - (main%heat_in - heat_out)) / heat0)
  end subroutine write_series

  ! Largest difference of each field between the two models, relative to the field's scale (largest
  ! magnitude of elevation and velocity; the river-ambient contrast for T and S).
  logical function agree()
    real(r8) :: d(5), scale(5)
    character(len=11), parameter :: names(5) = [character(len=11) :: 'elevation', 'u', 'v', &
                                                 'temperature', 'salinity']
    integer :: f
    d(1) = maxval(abs(shown%eta(1:n, 1:n) - other%eta(1:n, 1:n)))
    d(2) = maxval(abs(shown%u - other%u))
    d(3) = maxval(abs(shown%v - other%v))
    d(4) = maxval(abs(shown%t - other%t))
    d(5) = maxval(abs(shown%s - other%s))
    scale(1) = max(maxval(abs(other%eta(1:n, 1:n))), 1.0e-12_r8)
    scale(2:3) = max(maxval(abs(other%u)), maxval(abs(other%v)), 1.0e-12_r8)
    scale(4) = abs(t_river - t_ambient)
    scale(5) = abs(s_river - s_ambient)
    agree = .true.
    do f = 1, 5
      write (*, '(a, a11, a, es10.3, a, es10.3)') 'compare: ', names(f), ' max difference ', d(f), &
        ', relative to its scale ', d(f) / scale(f)
      if (.not. (d(f) / scale(f) <= tol)) agree = .false.
    end do
    if (agree) then
      write (*, '(a, a, a, a, a, es8.1)') 'compare: ', trim(bname), ' and ', trim(cname), ' agree within ', tol
    else
      write (*, '(a, a, a, a, a, es8.1)') 'compare: FAILED: ', trim(bname), ' and ', trim(cname), &
        ' differ by more than ', tol
    end if
  end function agree

  ! Seed 004's tables: time per step in the solver and in the whole step, speed-ups against the
  ! reference backend when it ran in this process.
  subroutine table()
    real(r8) :: ref_solver, ref_total
    write (*, '(a)') ''
    write (*, '(a, i0, a)') 'Time per step (ms, mean of ', timed, ' steps after the first)'
    write (*, '(a)') 'grid              backend      solver      total   solver speed-up   total speed-up'
    ref_solver = -1; ref_total = -1
    if (backend == BACKEND_REFERENCE) then
      ref_solver = main%solver%seconds / timed; ref_total = wall_main / timed
    else if (compare .and. cbackend == BACKEND_REFERENCE) then
      ref_solver = other%solver%seconds / timed; ref_total = wall_other / timed
    end if
    call table_row(bname, main%solver%seconds / timed, wall_main / timed, ref_solver, ref_total)
    if (compare) call table_row(cname, other%solver%seconds / timed, wall_other / timed, &
                                ref_solver, ref_total)
    if (ref_solver < 0) write (*, '(a)') '(speed-ups need the reference backend in the same run: --compare reference)'
  end subroutine table

  subroutine table_row(name, s, t, ref_solver, ref_total)
    character(*), intent(in) :: name
    real(r8), intent(in) :: s, t, ref_solver, ref_total
    if (ref_solver > 0) then
      write (*, '(a8, a17, f11.3, f11.3, f17.2, a, f16.2, a)') trim(grid_name(14:)), trim(name), 1000 * s, &
        1000 * t, ref_solver / s, 'x', ref_total / t, 'x'
    else
      write (*, '(a8, a17, f11.3, f11.3, a)') trim(grid_name(14:)), trim(name), 1000 * s, 1000 * t, &
        '                 -                -'
    end if
  end subroutine table_row

end program flow_channel
