! flow_channel: a small hydrostatic, Boussinesq, 3D ocean model of seed 004's test case (section 4.2),
! written for tridi. Every tridiagonal solve goes through fc_solver (MOHID's THOMAS_3D, THOMASZ and
! THOMAS_2D conventions); the gpu-resident backend runs this same step as CUDA kernels (fc_gpu.cu).
! README.md in this folder documents the physics ("The model") and every choice made. MOHID storage:
! cells (1:im, 1:jm, 1:km), one halo cell per side, k = 1 the bottom layer, sigma layers; Arakawa C. One
! step: Leendertse / Peaceman-Rachford ADI (x half step, y half step), then T and S implicit along I, J
! and K; velocities coupled to the elevation through the vertical (Casulli). Fluxes are recomputed in
! double from each real(4) answer, so water and salt are conserved to double rounding. On MPI ranks the
! grid is cut along j (README.md, "Running on N MPI ranks"): see fc_init and the "halo:" comments.
module fc_model
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_int, c_double, c_char, c_null_char, c_associated
  use fc_solver
  use fc_parallel
  implicit none
  private
  public :: fc_state, fc_init, fc_step, fc_free, fc_volume, fc_content, fc_grid_from_name, fc_river
  public :: fc_sync_host, fc_global_budgets, fc_gather

  ! The gpu-resident step (fc_gpu.cu): the same model as this module and its submodules, as CUDA kernels
  ! on device copies of every array, solved by tridi_solve_device.
  interface
    integer(c_int) function fc_gpu_create(gpu, im, jm, km, dt, par, jlo, jhi, node_rank, msg, msglen) &
        bind(c, name='fc_gpu_create')
      import :: c_ptr, c_int, c_double, c_char
      type(c_ptr), intent(out) :: gpu
      integer(c_int), value :: im, jm, km, jlo, jhi, node_rank, msglen
      real(c_double), value :: dt
      type(c_ptr), value :: par
      character(kind=c_char), intent(out) :: msg(*)
    end function
    integer(c_int) function fc_gpu_put(gpu, eta, u, v, t, s) bind(c, name='fc_gpu_put')
      import :: c_ptr, c_int, c_double
      type(c_ptr), value :: gpu
      real(c_double), intent(in) :: eta(*), u(*), v(*), t(*), s(*)
    end function
    integer(c_int) function fc_gpu_get(gpu, eta, u, v, t, s) bind(c, name='fc_gpu_get')
      import :: c_ptr, c_int, c_double
      type(c_ptr), value :: gpu
      real(c_double), intent(out) :: eta(*), u(*), v(*), t(*), s(*)
    end function
    integer(c_int) function fc_gpu_step(gpu, q, outflow_volume, heat_out, salt_out, solver_ms, msg, msglen) &
        bind(c, name='fc_gpu_step')
      import :: c_ptr, c_int, c_double, c_char
      type(c_ptr), value :: gpu
      real(c_double), value :: q
      real(c_double), intent(out) :: outflow_volume, heat_out, salt_out, solver_ms
      character(kind=c_char), intent(out) :: msg(*)
      integer(c_int), value :: msglen
    end function
    subroutine fc_gpu_destroy(gpu) bind(c, name='fc_gpu_destroy')
      import :: c_ptr
      type(c_ptr), value :: gpu
    end subroutine
  end interface

  integer, parameter :: r4 = kind(1.0), r8 = kind(1.0d0)

  ! Physics (README.md gives the reasons for each value).
  real(r8), parameter, public :: length = 7000.0_r8      ! channel length and width (m)
  real(r8), parameter, public :: depth = 20.0_r8         ! depth at rest (m)
  real(r8), parameter, public :: discharge = 7000.0_r8   ! river discharge (m3/s)
  real(r8), parameter, public :: default_ramp = 3600.0_r8   ! the discharge is ramped up over this time (s)
  real(r8), parameter, public :: t_ambient = 15.0_r8, s_ambient = 35.0_r8
  real(r8), parameter, public :: t_river = 20.0_r8, s_river = 0.0_r8
  real(r8), parameter :: grav = 9.81_r8
  real(r8), parameter :: rho0 = 1025.0_r8
  real(r8), parameter :: alpha_t = 2.0e-4_r8, beta_s = 7.6e-4_r8   ! linear equation of state
  real(r8), parameter :: visc_h = 5.0_r8      ! horizontal eddy viscosity (m2/s)
  real(r8), parameter :: diff_h = 1.0_r8      ! horizontal eddy diffusivity of T and S (m2/s)
  real(r8), parameter :: visc_v = 1.0e-3_r8   ! vertical eddy viscosity (m2/s)
  real(r8), parameter :: diff_v = 1.0e-4_r8   ! vertical eddy diffusivity of T and S (m2/s)
  real(r8), parameter :: drag_cd = 2.5e-3_r8  ! quadratic bottom drag coefficient

  ! Arrays (0:im+1, 0:jm+1, 0:km+1), on ranks (0:im+1, jlb:jub, 0:km+1) with global indices. Arakawa C:
  ! u(i,j,k) on the west face of cell (i,j) (face 1 the west wall, im+1 the open east side), v(i,j,k) on
  ! the south face (faces 1..jm+1, both walls). On ranks every loop runs over the rank's rows j0..j1.
  type fc_state
    integer :: im = 0, jm = 0, km = 0
    ! Rows of this rank: owned j0..j1, allocated jlb:jub (1..jm and 0:jm+1 on one rank).
    integer :: j0 = 1, j1 = 0, jlb = 0, jub = 0
    type(c_ptr) :: par = c_null_ptr   ! decomposition over MPI ranks (fc_parallel); null: one rank
    ! Halo plans of the host arrays that are exchanged (decomposed host backends).
    type(c_ptr) :: h_eta = c_null_ptr, h_u = c_null_ptr, h_v = c_null_ptr, h_t = c_null_ptr, h_s = c_null_ptr
    type(c_ptr) :: h_ua = c_null_ptr, h_cc = c_null_ptr, h_x2 = c_null_ptr, h_x3 = c_null_ptr
    real(r8) :: dx = 0, dy = 0, dt = 0, area = 0, time = 0, ramp = default_ramp
    integer(8) :: nstep = 0
    ! Prognostic fields (double).
    real(r8), allocatable :: eta(:,:), u(:,:,:), v(:,:,:), t(:,:,:), s(:,:,:)
    ! Per step: volume (m3) through the west (fx) and south (fy) face of each layer cell, summed over
    ! the two half steps; the transport of T and S uses exactly these.
    real(r8), allocatable :: fx(:,:,:), fy(:,:,:)
    real(r8), allocatable :: eta_start(:,:)
    ! Work: explicit forcing, baroclinic potential, face depths, barotropic transports (m2/s).
    real(r8), allocatable :: g(:,:,:), pb(:,:,:), hu(:,:), hv(:,:), ubot(:,:)
    real(r8), allocatable :: ua(:,:), cc(:,:), tr(:,:), tn(:,:)
    ! The solver's arrays with MOHID's types: D, F, Ti, ANSWER real(4); E real(8).
    real(r4), pointer :: d3(:,:,:) => null(), f3(:,:,:) => null(), ti3(:,:,:) => null(), x3(:,:,:) => null()
    real(r4), pointer :: ti3b(:,:,:) => null(), x3b(:,:,:) => null()
    real(r8), pointer :: e3(:,:,:) => null()
    real(r4), pointer :: d2(:,:) => null(), f2(:,:) => null(), ti2(:,:) => null(), x2(:,:) => null()
    real(r8), pointer :: e2(:,:) => null()
    integer, pointer :: water(:,:,:) => null()
    type(fc_solver_t) :: solver
    ! Budgets since the start: volume in (river) and out (east side, positive outwards); salt and heat
    ! (tracer x m3) in with the river and out through the east side.
    real(r8) :: vol_in = 0, vol_out = 0, salt_in = 0, salt_out = 0, heat_in = 0, heat_out = 0
    real(r8) :: outflow = 0   ! discharge through the east side during the last step (m3/s)
    ! gpu-resident: the device model, and whether the host fields lag behind it.
    type(c_ptr) :: gpu = c_null_ptr
    logical :: resident = .false., host_stale = .false.
  end type fc_state


  ! The step's parts, in submodules: the two half steps of the ADI momentum and elevation (fc_sweeps.f90,
  ! with the halo cells' rules) and the transport of T and S (fc_transport.f90).
  interface
    ! Halo rows of the listed arrays from the neighbouring ranks (in fc_sweeps.f90: a private procedure
    ! of this module would not be linked for its submodules).
    module subroutine exchange(st, halos)
      type(fc_state), intent(in) :: st
      type(c_ptr), intent(in) :: halos(:)
    end subroutine exchange
    module subroutine fill_ghosts(st)
      type(fc_state), intent(inout) :: st
    end subroutine fill_ghosts
    module subroutine half_step_x(st, q)
      type(fc_state), intent(inout) :: st
      real(r8), intent(in) :: q
    end subroutine half_step_x
    module subroutine half_step_y(st, q)
      type(fc_state), intent(inout) :: st
      real(r8), intent(in) :: q
    end subroutine half_step_y
    module subroutine transport(st, c, c_river, c_out, q, cin, cout)
      type(fc_state), intent(inout) :: st
      real(r8), allocatable, intent(inout) :: c(:, :, :)
      real(r8), intent(in) :: c_river, c_out, q
      real(r8), intent(inout) :: cin, cout
    end subroutine transport
  end interface

contains

  ! "flow_channel_70-28" -> 70 x 70 cells, 28 layers: the named grids of the README, and any other
  ! "flow_channel_N-K" (N cells a side, 8 <= N <= 8192; K layers, 2 <= K <= 512) for scaling runs, such as
  ! the grid grown with the GPUs of a weak-scaling run. Returns .false. for any other name.
  logical function fc_grid_from_name(name, n, km) result(ok)
    character(*), intent(in) :: name
    integer, intent(out) :: n, km
    character(len=*), parameter :: prefix = 'flow_channel_'
    integer :: dash, io
    ok = .false.; n = 0; km = 0
    if (len_trim(name) <= len(prefix)) return
    if (name(1:len(prefix)) /= prefix) return
    dash = index(name(len(prefix) + 1:), '-') + len(prefix)
    if (dash == len(prefix)) return
    if (verify(name(len(prefix) + 1:dash - 1), '0123456789') /= 0 .or. dash == len(prefix) + 1) return
    if (verify(trim(name(dash + 1:)), '0123456789') /= 0 .or. len_trim(name) == dash) return
    read (name(len(prefix) + 1:dash - 1), *, iostat=io) n
    if (io /= 0) return
    read (name(dash + 1:len_trim(name)), *, iostat=io) km
    if (io /= 0) return
    ok = n >= 8 .and. n <= 8192 .and. km >= 2 .and. km <= 512
    if (.not. ok) then
      n = 0; km = 0
    end if
  end function fc_grid_from_name

  ! split: cut the model over all MPI ranks (fc_parallel); otherwise this process holds the whole grid.
  subroutine fc_init(st, im, jm, km, dt, backend, threads, split)
    type(fc_state), intent(inout) :: st
    integer, intent(in) :: im, jm, km, backend, threads
    real(r8), intent(in) :: dt
    logical, intent(in) :: split
    integer :: jl, ju

    st%im = im; st%jm = jm; st%km = km
    st%dx = length / im; st%dy = length / jm; st%area = st%dx * st%dy; st%dt = dt
    st%j0 = 1; st%j1 = jm
    if (split) call par_create(st%par, im, jm, km, st%j0, st%j1)
    st%jlb = st%j0 - 1; st%jub = st%j1 + 1
    jl = st%jlb; ju = st%jub
    allocate(st%eta(0:im+1, jl:ju), st%eta_start(0:im+1, jl:ju), st%hu(0:im+1, jl:ju), &
             st%hv(0:im+1, jl:ju), st%ubot(0:im+1, jl:ju), st%ua(0:im+1, jl:ju), st%cc(0:im+1, jl:ju), &
             st%tr(0:im+1, jl:ju), st%tn(0:im+1, jl:ju))
    allocate(st%u(0:im+1, jl:ju, 0:km+1), st%v(0:im+1, jl:ju, 0:km+1), st%t(0:im+1, jl:ju, 0:km+1), &
             st%s(0:im+1, jl:ju, 0:km+1), st%fx(0:im+1, jl:ju, 0:km+1), st%fy(0:im+1, jl:ju, 0:km+1), &
             st%g(0:im+1, jl:ju, 0:km+1), st%pb(0:im+1, jl:ju, 0:km+1))
    allocate(st%d3(0:im+1, jl:ju, 0:km+1), st%e3(0:im+1, jl:ju, 0:km+1), st%f3(0:im+1, jl:ju, 0:km+1), &
             st%ti3(0:im+1, jl:ju, 0:km+1), st%x3(0:im+1, jl:ju, 0:km+1), &
             st%ti3b(0:im+1, jl:ju, 0:km+1), st%x3b(0:im+1, jl:ju, 0:km+1))
    allocate(st%d2(0:im+1, jl:ju), st%e2(0:im+1, jl:ju), st%f2(0:im+1, jl:ju), st%ti2(0:im+1, jl:ju), &
             st%x2(0:im+1, jl:ju))
    ! The whole channel is water; the faces of the open side (i = im+1, a halo index) are solved too,
    ! so the mask covers the halo as well.
    allocate(st%water(0:im+1, jl:ju, 0:km+1))
    st%water = 1
    st%eta = 0; st%eta_start = 0; st%u = 0; st%v = 0; st%t = t_ambient; st%s = s_ambient
    st%fx = 0; st%fy = 0; st%g = 0; st%pb = 0
    st%hu = depth; st%hv = depth; st%ubot = 0; st%ua = 0; st%cc = 0; st%tr = 0; st%tn = 0
    st%d3 = 0; st%e3 = 1; st%f3 = 0; st%ti3 = 0; st%x3 = 0; st%ti3b = 0; st%x3b = 0
    st%d2 = 0; st%e2 = 1; st%f2 = 0; st%ti2 = 0; st%x2 = 0
    call solver_init(st%solver, backend, max(im, jm, km) + 2, threads)
    st%solver%par = st%par
    call solver_register(st%solver, .false., st%d3, st%e3, st%f3, st%ti3, st%x3, st%ti3b, st%x3b, st%d2, st%e2, &
                         st%f2, st%ti2, st%x2)
    st%resident = backend == BACKEND_GPU_RESIDENT
    if (st%resident) then
      call gpu_init(st)
    else if (split) then
      call par_halo_create(st%par, st%eta, st%h_eta)
      call par_halo_create(st%par, st%u, st%h_u)
      call par_halo_create(st%par, st%v, st%h_v)
      call par_halo_create(st%par, st%t, st%h_t)
      call par_halo_create(st%par, st%s, st%h_s)
      call par_halo_create(st%par, st%ua, st%h_ua)
      call par_halo_create(st%par, st%cc, st%h_cc)
      call par_halo_create(st%par, st%x2, st%h_x2)
      call par_halo_create(st%par, st%x3, st%h_x3)
    end if
  end subroutine fc_init

  subroutine gpu_init(st)
    type(fc_state), intent(inout) :: st
    character(kind=c_char) :: msg(512)
    integer :: rc
    msg = c_null_char
    rc = fc_gpu_create(st%gpu, st%im, st%jm, st%km, st%dt, st%par, st%j0, st%j1, par_node_rank, msg, size(msg))
    if (rc == 77) then
      write (*, '(a, a)') 'flow_channel: no usable GPU for the gpu-resident backend: ', c_text(msg)
      call par_exit(77)
    end if
    if (rc /= 0) then
      write (*, '(a, a)') 'flow_channel: gpu-resident: ', c_text(msg)
      error stop 1
    end if
    if (fc_gpu_put(st%gpu, st%eta, st%u, st%v, st%t, st%s) /= 0) error stop 'flow_channel: gpu-resident: upload failed'
  end subroutine gpu_init

  ! Brings the gpu-resident model's fields to the host arrays (for output, checks, diagnostics).
  subroutine fc_sync_host(st)
    type(fc_state), intent(inout) :: st
    if (.not. (st%resident .and. st%host_stale)) return
    if (fc_gpu_get(st%gpu, st%eta, st%u, st%v, st%t, st%s) /= 0) error stop 'flow_channel: gpu-resident: download failed'
    st%host_stale = .false.
  end subroutine fc_sync_host

  subroutine resident_step(st, q)
    type(fc_state), intent(inout) :: st
    real(r8), intent(in) :: q
    character(kind=c_char) :: msg(512)
    real(r8) :: out_volume, heat_out, salt_out, solver_ms
    msg = c_null_char
    if (fc_gpu_step(st%gpu, q, out_volume, heat_out, salt_out, solver_ms, msg, size(msg)) /= 0) then
      write (*, '(a, a)') 'flow_channel: gpu-resident: ', c_text(msg)
      error stop 1
    end if
    st%host_stale = .true.
    st%solver%seconds = st%solver%seconds + solver_ms / 1000
    st%solver%calls = st%solver%calls + 18
    st%outflow = out_volume / st%dt
    st%heat_in = st%heat_in + st%dt * q * t_river
    st%heat_out = st%heat_out + heat_out
    st%salt_in = st%salt_in + st%dt * q * s_river
    st%salt_out = st%salt_out + salt_out
  end subroutine resident_step

  subroutine fc_free(st)
    type(fc_state), intent(inout) :: st
    call solver_register(st%solver, .true., st%d3, st%e3, st%f3, st%ti3, st%x3, st%ti3b, st%x3b, st%d2, st%e2, &
                         st%f2, st%ti2, st%x2)
    call solver_free(st%solver)
    if (st%resident) call fc_gpu_destroy(st%gpu)
    call par_halo_free(st%h_eta); call par_halo_free(st%h_u); call par_halo_free(st%h_v)
    call par_halo_free(st%h_t); call par_halo_free(st%h_s); call par_halo_free(st%h_ua)
    call par_halo_free(st%h_cc); call par_halo_free(st%h_x2); call par_halo_free(st%h_x3)
    call par_free(st%par)
    deallocate(st%d3, st%e3, st%f3, st%ti3, st%x3, st%ti3b, st%x3b, st%d2, st%e2, st%f2, st%ti2, st%x2, st%water)
    deallocate(st%eta, st%eta_start, st%hu, st%hv, st%ubot, st%ua, st%cc, st%tr, st%tn, st%u, st%v, st%t, &
               st%s, st%fx, st%fy, st%g, st%pb)
  end subroutine fc_free

  ! River discharge (m3/s) at model time t: a half-cosine ramp over `ramp` seconds, because a sudden
  ! start sends a surge through the channel (the open side's radiation condition lets it out).
  pure real(r8) function fc_river(t, ramp)
    real(r8), intent(in) :: t, ramp
    if (t >= ramp) then
      fc_river = discharge
    else
      fc_river = discharge * 0.5_r8 * (1 - cos(acos(-1.0_r8) * max(t, 0.0_r8) / ramp))
    end if
  end function fc_river

  ! Water volume (m3) and content (tracer x m3) of the channel (all ranks: collective).
  real(r8) function fc_volume(st)
    type(fc_state), intent(in) :: st
    fc_volume = par_sum(st%par, st%area * sum(depth + st%eta(1:st%im, st%j0:st%j1)))
  end function fc_volume

  real(r8) function fc_content(st, c)
    type(fc_state), intent(in) :: st
    real(r8), intent(in) :: c(0:, st%jlb:, 0:)
    integer :: i, j
    fc_content = 0
    do j = st%j0, st%j1
      do i = 1, st%im
        fc_content = fc_content + st%area * (depth + st%eta(i, j)) / st%km * sum(c(i, j, 1:st%km))
      end do
    end do
    fc_content = par_sum(st%par, fc_content)
  end function fc_content

  ! The budgets through the east side summed over the ranks (each rank kept its own share while
  ! stepping); the inflows are the same on every rank. Collective; a no-op on one rank.
  subroutine fc_global_budgets(st)
    type(fc_state), intent(inout) :: st
    st%vol_out = par_sum(st%par, st%vol_out)
    st%salt_out = par_sum(st%par, st%salt_out)
    st%heat_out = par_sum(st%par, st%heat_out)
    st%outflow = par_sum(st%par, st%outflow)
  end subroutine fc_global_budgets

  ! A decomposed model's state put together on rank 0 in whole: the grid, the time and the fields eta,
  ! u, v, t, s over the whole grid (nothing else is set; what output and comparisons read). Collective.
  subroutine fc_gather(st, whole)
    type(fc_state), intent(in) :: st
    type(fc_state), intent(inout) :: whole
    integer :: im, jm, km, n
    im = st%im; jm = st%jm; km = st%km
    if (.not. allocated(whole%eta)) then
      whole%im = im; whole%jm = jm; whole%km = km; whole%j0 = 1; whole%j1 = jm; whole%jlb = 0; whole%jub = jm + 1
      whole%dx = st%dx; whole%dy = st%dy; whole%area = st%area; whole%dt = st%dt
      n = merge(1, 0, par_rank == 0)   ! only rank 0 receives
      allocate(whole%eta(0:n*(im+1), 0:n*(jm+1)), whole%u(0:n*(im+1), 0:n*(jm+1), 0:n*(km+1)), &
               whole%v(0:n*(im+1), 0:n*(jm+1), 0:n*(km+1)), whole%t(0:n*(im+1), 0:n*(jm+1), 0:n*(km+1)), &
               whole%s(0:n*(im+1), 0:n*(jm+1), 0:n*(km+1)))
    end if
    whole%time = st%time; whole%nstep = st%nstep
    call par_gather(st%par, st%eta, whole%eta)
    call par_gather(st%par, st%u, whole%u)
    call par_gather(st%par, st%v, whole%v)
    call par_gather(st%par, st%t, whole%t)
    call par_gather(st%par, st%s, whole%s)
  end subroutine fc_gather

  subroutine fc_step(st)
    type(fc_state), intent(inout) :: st
    real(r8) :: q
    q = fc_river(st%time + 0.5_r8 * st%dt, st%ramp)   ! the step's discharge, taken at its middle
    if (st%resident) then
      call resident_step(st, q)
    else
      st%eta_start = st%eta
      st%fx = 0; st%fy = 0
      call half_step_x(st, q)
      call half_step_y(st, q)
      call fill_ghosts(st)
      call transport(st, st%t, t_river, t_ambient, q, st%heat_in, st%heat_out)
      call transport(st, st%s, s_river, s_ambient, q, st%salt_in, st%salt_out)
      st%outflow = sum(st%fx(st%im + 1, st%j0:st%j1, 1:st%km)) / st%dt
      ! halo: what the next step reads from the neighbours' last rows.
      call exchange(st, [st%h_t, st%h_s, st%h_eta])
    end if
    st%vol_in = st%vol_in + q * st%dt
    st%vol_out = st%vol_out + st%outflow * st%dt
    st%time = st%time + st%dt
    st%nstep = st%nstep + 1
  end subroutine fc_step

end module fc_model
