! flow_channel: a small hydrostatic, Boussinesq, 3D ocean model of seed 004's test case (section 4.2),
! written for tridi. Every tridiagonal solve goes through fc_solver (MOHID's THOMAS_3D, THOMASZ and
! THOMAS_2D conventions; the gpu-resident backend runs this same step as CUDA kernels, fc_gpu.cu);
! README.md in this folder documents the physics and every choice made.
!
! Grid (MOHID storage): cells (1:im, 1:jm, 1:km) with one halo cell per side, arrays (0:im+1, 0:jm+1,
! 0:km+1); k = 1 is the bottom layer, k = km the surface one; sigma layers of equal thickness (H+eta)/km.
! Arakawa C: u(i,j,k) on the west face of cell (i,j) (faces 1..im+1: face 1 is the west wall, face im+1
! the open east side), v(i,j,k) on the south face (faces 1..jm+1, both ends walls).
!
! One step = Leendertse / Peaceman-Rachford ADI, then tracers:
!  x half step: v advanced (implicit along I, explicit along J with the old elevation), then u and the
!               elevation implicit along I; the continuity equation uses the v transport of the step's
!               start.
!  y half step: u advanced (implicit along J, explicit along I with the elevation of the x half step),
!               then v and the elevation implicit along J; continuity uses the u of the x half step.
!  T and S: finite volumes with the step's own fluxes, implicit along I, then J, then K.
! Velocities are coupled to the elevation through the vertical (Casulli): each column's vertical
! viscosity matrix is solved for the explicit forcing and for the layer thicknesses (two THOMASZ), which
! turns continuity into one tridiagonal line of elevations (THOMAS_2D).
!
! Conservation: the solves are single precision (MOHID's real(4) D, F, Ti, ANSWER); after each solve the
! fluxes are recomputed in double from its answer and volumes and contents updated from those fluxes,
! so water and salt are conserved to double rounding whatever the solver's rounding.
!
! On MPI ranks (fc_init with split): the grid is cut along j (fc_parallel). Each rank keeps MOHID's
! storage with global indices over its rows plus one halo row on each side, (0:im+1, jlb:jub, 0:km+1),
! and runs every loop over its own rows j0..j1 (the global loop bounds clipped to them); the sweeps along
! J are solved across the ranks, those along I and K on its rows. Halo rows are refreshed where a stencil
! reads the neighbour's newest values (the exchanges below, marked "halo:"); what a stencil needs from
! the first face of the block above (v faces, their fluxes and the transports there) is computed here
! too, from the same halo values with the same arithmetic as the neighbour, so both agree bit for bit and
! the fluxes between ranks conserve water and salt exactly. Budgets through the east side (vol_out,
! salt_out, heat_out, outflow) are this rank's share; fc_global_budgets sums them. On one rank (par
! null) j0:j1 = 1:jm, nothing is exchanged and the model runs the same arithmetic as before ranks.
module fc_model
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_int, c_double, c_char, c_null_char, c_associated
  use fc_solver
  use fc_parallel
  implicit none
  private
  public :: fc_state, fc_init, fc_step, fc_free, fc_volume, fc_content, fc_grid_from_name, fc_river
  public :: fc_sync_host, fc_global_budgets, fc_gather

  ! The gpu-resident step (fc_gpu.cu): the same model as below as CUDA kernels on device copies of
  ! every array, solved by tridi_solve_device.
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

  ! Halo rows of the listed arrays from the neighbouring ranks (nothing on one rank).
  subroutine exchange(st, halos)
    type(fc_state), intent(in) :: st
    type(c_ptr), intent(in) :: halos(:)
    if (c_associated(st%par)) call par_exchange(halos)
  end subroutine exchange

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

  ! Halo cells: free slip along the walls (tangential velocity mirrored), no flow through them; zero
  ! gradient of v, T and S across the open east side, whose elevation (i = im+1) is the x half step's
  ! radiation condition (flather_row) and is left alone here. On ranks the
  ! rules of the south and north walls apply where those rows are this rank's; the i rules apply to the
  ! halo rows too, as the neighbour applies them to its own.
  subroutine fill_ghosts(st)
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
    call solver_upload_z(st%solver, ilo, ihi, jlo, jhi, 1, km, ROLE_D, st%d3)
    call solver_upload_z(st%solver, ilo, ihi, jlo, jhi, 1, km, ROLE_F, st%f3)
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
    call solver_upload_z(st%solver, ilo, ihi, jlo, jhi, 1, km, ROLE_E, st%e3)
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

  ! ------------------------------------------------------------------------------------------------
  ! x half step.
  ! ------------------------------------------------------------------------------------------------
  subroutine half_step_x(st, q)
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
    call solver_upload_3d(st%solver, 2, jm, 1, im, 1, km, 1, 0, ROLE_D, st%d3)
    call solver_upload_3d(st%solver, 2, jm, 1, im, 1, km, 1, 0, ROLE_F, st%f3)
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
    call solver_upload_3d(st%solver, 2, jm, 1, im, 1, km, 1, 0, ROLE_E, st%e3)
    do k = 1, km
      do j = v0, j1
        st%ti3(1:im, j, k) = real(st%g(1:im, j, k), r4)
        st%ti3(im + 1, j, k) = 0
      end do
    end do
    call solver_thomas_3d(st%solver, 2, jm, 1, im, 1, km, 1, 0, st%d3, st%e3, st%f3, st%ti3, st%x3)
    do j = v0, j1
      do i = 1, im
        st%ubot(i, j) = sqrt(st%v(i, j, 1)**2 + u_at_v(st%u, i, j, 1)**2)
      end do
    end do
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
    call solver_upload_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, ROLE_D, st%d3)
    call solver_upload_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, ROLE_F, st%f3)
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
    call solver_upload_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, ROLE_E, st%e3)
    do k = 1, km
      do j = j0, j1
        st%ti3(1, j, k) = 0
        st%ti3(2:im + 1, j, k) = real(st%g(2:im + 1, j, k), r4)
      end do
    end do
    call solver_thomas_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, st%d3, st%e3, st%f3, st%ti3, st%x3)
    do j = j0, j1
      do i = 2, im + 1
        st%ubot(i, j) = sqrt(st%u(i, j, 1)**2 + v_at_u(st%v, i, j, 1)**2)
      end do
    end do
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
    call solver_upload_2d(st%solver, 1, jm, 1, im, 1, 0, ROLE_D, st%d2)
    call solver_upload_2d(st%solver, 1, jm, 1, im, 1, 0, ROLE_F, st%f2)
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
  subroutine half_step_y(st, q)
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
    call solver_upload_3d(st%solver, 2, im + 1, 1, jm, 1, km, 0, 1, ROLE_D, st%d3)
    call solver_upload_3d(st%solver, 2, im + 1, 1, jm, 1, km, 0, 1, ROLE_F, st%f3)
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
    call solver_upload_3d(st%solver, 2, im + 1, 1, jm, 1, km, 0, 1, ROLE_E, st%e3)
    do k = 1, km
      do j = j0, j1
        st%ti3(2:im + 1, j, k) = real(st%g(2:im + 1, j, k), r4)
      end do
      if (north) st%ti3(2:im + 1, jm + 1, k) = 0
    end do
    call solver_thomas_3d(st%solver, 2, im + 1, 1, jm, 1, km, 0, 1, st%d3, st%e3, st%f3, st%ti3, st%x3)
    do j = j0, j1
      do i = 2, im + 1
        st%ubot(i, j) = sqrt(st%u(i, j, 1)**2 + v_at_u(st%v, i, j, 1)**2)
      end do
    end do
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
    call solver_upload_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, ROLE_D, st%d3)
    call solver_upload_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, ROLE_F, st%f3)
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
    call solver_upload_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, ROLE_E, st%e3)
    do k = 1, km
      if (south) st%ti3(1:im, 1, k) = 0
      if (north) st%ti3(1:im, jm + 1, k) = 0
      do j = v0, j1
        st%ti3(1:im, j, k) = real(st%g(1:im, j, k), r4)
      end do
    end do
    call solver_thomas_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, st%d3, st%e3, st%f3, st%ti3, st%x3)
    do j = v0, j1
      do i = 1, im
        st%ubot(i, j) = sqrt(st%v(i, j, 1)**2 + u_at_v(st%u, i, j, 1)**2)
      end do
    end do
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
    call solver_upload_2d(st%solver, 1, im, 1, jm, 0, 1, ROLE_D, st%d2)
    call solver_upload_2d(st%solver, 1, im, 1, jm, 0, 1, ROLE_F, st%f2)
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
  subroutine transport(st, c, c_river, c_out, q, cin, cout)
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
    call solver_upload_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, ROLE_D, st%d3)
    call solver_upload_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, ROLE_F, st%f3)
    do k = 1, km
      do j = j0, j1
        do i = 1, im
          ql = st%fx(i, j, k) / a; qr = st%fx(i + 1, j, k) / a
          st%e3(i, j, k) = v1(i, j, k) + max(qr, 0.0_r8) + xcond(i + 1, j) - min(ql, 0.0_r8) + xcond(i, j)
        end do
        st%e3(im + 1, j, k) = 1
      end do
    end do
    call solver_upload_3d(st%solver, 1, jm, 1, im, 1, km, 1, 0, ROLE_E, st%e3)
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
    call solver_upload_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, ROLE_D, st%d3)
    call solver_upload_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, ROLE_F, st%f3)
    do k = 1, km
      do j = j0, j1
        do i = 1, im
          ql = st%fy(i, j, k) / a; qr = st%fy(i, j + 1, k) / a
          st%e3(i, j, k) = v1(i, j, k) + max(qr, 0.0_r8) + ycond(i, j + 1) - min(ql, 0.0_r8) + ycond(i, j)
        end do
      end do
      if (j1 == jm) st%e3(1:im, jm + 1, k) = 1
    end do
    call solver_upload_3d(st%solver, 1, im, 1, jm, 1, km, 0, 1, ROLE_E, st%e3)
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
    call solver_upload_z(st%solver, 1, im, 1, jm, 1, km, ROLE_D, st%d3)
    call solver_upload_z(st%solver, 1, im, 1, jm, 1, km, ROLE_F, st%f3)
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
    call solver_upload_z(st%solver, 1, im, 1, jm, 1, km, ROLE_E, st%e3)
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

end module fc_model
