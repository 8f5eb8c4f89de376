! The solver side of flow_channel: every tridiagonal solve of the model goes through here, to MOHID's
! routines as the model would call them. `reference` runs the test case's own sequential Thomas
! (fc_reference); `cpu` and `gpu` call the MOHID adapter (module tridi_mohid) on the model's host
! arrays, `gpu` also starting each diagonal's upload as soon as it is assembled. Wall time spent in
! here is the "solver time" of the timing table. (`gpu-resident` keeps the whole step on the GPU, see
! fc_gpu.cu; its solver time is the GPU time of its solves.)
! A model decomposed over MPI ranks (`par` set) solves the same boxes through fc_parallel instead: lines
! along J by tridi's distributed solve across the ranks, lines along I and K on this rank's rows.
module fc_solver
  use, intrinsic :: iso_c_binding, only: c_ptr, c_null_ptr, c_associated, c_loc
  use fc_reference
  use fc_parallel, only: par_solve, par_fail
  use tridi_mohid
  use tridi, only: tridi_context, TRIDI_ERROR_NO_DEVICE
  implicit none
  private
  public :: fc_solver_t, solver_init, solver_free, solver_thomas_3d, solver_thomasz, solver_thomas_2d
  public :: solver_register
  public :: solver_upload_3d, solver_upload_z, solver_upload_2d, backend_from_name, backend_name
  public :: BACKEND_REFERENCE, BACKEND_CPU, BACKEND_GPU, BACKEND_GPU_RESIDENT, ROLE_D, ROLE_E, ROLE_F

  integer, parameter :: r4 = kind(1.0), r8 = kind(1.0d0)
  ! gpu-resident runs the whole step on the GPU (fc_gpu.cu); it only uses this module's timer.
  integer, parameter :: BACKEND_REFERENCE = 0, BACKEND_CPU = 1, BACKEND_GPU = 2, BACKEND_GPU_RESIDENT = 3
  integer, parameter :: ROLE_D = 0, ROLE_E = 1, ROLE_F = 2

  type fc_solver_t
    integer :: backend = BACKEND_REFERENCE
    real(r8) :: seconds = 0        ! wall time inside the solver calls
    integer(8) :: calls = 0        ! number of solves
    ! The same time by kind: THOMAS_3D, THOMASZ, THOMAS_2D solves and the gpu backend's uploads.
    real(r8) :: part(4) = 0
    real(r8), pointer :: vecg(:) => null(), vecw(:) => null()
    type(c_ptr) :: par = c_null_ptr   ! the model's decomposition over ranks (fc_parallel); null: one rank
  end type fc_solver_t

  interface solver_upload_3d
    module procedure upload_3d_r4, upload_3d_r8
  end interface
  interface solver_upload_z
    module procedure upload_z_r4, upload_z_r8
  end interface
  interface solver_upload_2d
    module procedure upload_2d_r4, upload_2d_r8
  end interface

contains

  integer function backend_from_name(name) result(b)
    character(*), intent(in) :: name
    select case (trim(name))
    case ('reference'); b = BACKEND_REFERENCE
    case ('cpu'); b = BACKEND_CPU
    case ('gpu'); b = BACKEND_GPU
    case ('gpu-resident'); b = BACKEND_GPU_RESIDENT
    case default; b = -1
    end select
  end function backend_from_name

  function backend_name(b) result(name)
    integer, intent(in) :: b
    character(len=:), allocatable :: name
    select case (b)
    case (BACKEND_REFERENCE); name = 'reference'
    case (BACKEND_CPU); name = 'cpu'
    case (BACKEND_GPU); name = 'gpu'
    case (BACKEND_GPU_RESIDENT); name = 'gpu-resident'
    case default; name = 'unknown'
    end select
  end function backend_name

  ! The adapter keeps one tridi context for the process: the cpu and gpu backends (re)create it here.
  ! threads: OpenMP threads of the cpu backend (0: OpenMP's default).
  subroutine solver_init(s, backend, nvec, threads)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: backend, nvec, threads
    integer :: stat
    s%backend = backend
    s%seconds = 0; s%calls = 0; s%part = 0
    if (backend == BACKEND_CPU) then
      call tridi_mohid_init(backend=TRIDI_BACKEND_CPU, num_threads=threads, stat=stat)
      call check(stat, 'tridi_mohid_init (cpu)')
    else if (backend == BACKEND_GPU) then
      call tridi_mohid_init(backend=TRIDI_BACKEND_CUDA, stat=stat)
      ! 77: the ctest skip code, so that GPU tests skip on machines without a GPU.
      if (stat == TRIDI_ERROR_NO_DEVICE) then
        write (*, '(a, a)') 'flow_channel: no usable GPU for the gpu backend: ', tridi_error_message()
        stop 77
      end if
      call check(stat, 'tridi_mohid_init (cuda)')
    end if
    ! MOHID's workspaces: one entry per unknown of the longest line, indexed like the grid (from 0).
    allocate(s%vecg(0:nvec), s%vecw(0:nvec))
    s%vecg = 0; s%vecw = 0
  end subroutine solver_init

  subroutine solver_free(s)
    type(fc_solver_t), intent(inout) :: s
    if (associated(s%vecg)) deallocate(s%vecg, s%vecw)
  end subroutine solver_free

  ! The gpu backend page-locks the model's diagonal and answer arrays once, as a MOHID model would at start-up
  ! (tridi_mohid_register): every upload and solve then moves them by DMA, with no host copy through
  ! tridi's pinned staging, whose packing cost more than the solves themselves (see docs/decisions/009 and
  ! 012). release: unregister them instead (before they are freed).
  ! FLOW_CHANNEL_REGISTER=0 in the environment skips both: a model that only swapped its THOMAS calls.
  subroutine solver_register(s, release, D3, E3, F3, Ti3, X3, Ti3b, X3b, D2, E2, F2, Ti2, X2)
    type(fc_solver_t), intent(inout) :: s
    logical, intent(in) :: release
    real(r4), dimension(:,:,:), pointer :: D3, F3, Ti3, X3, Ti3b, X3b
    real(r8), dimension(:,:,:), pointer :: E3
    real(r4), dimension(:,:), pointer :: D2, F2, Ti2, X2
    real(r8), dimension(:,:), pointer :: E2
    integer :: stat, n
    character(len=8) :: env
    if (s%backend /= BACKEND_GPU .or. c_associated(s%par)) return
    call get_environment_variable('FLOW_CHANNEL_REGISTER', env, n, stat)
    if (stat == 0 .and. trim(env) == '0') return
    if (release) then
      call tridi_mohid_unregister(D3, E3, F3, Ti3, X3, stat)
      if (stat == 0) call tridi_mohid_unregister(D3, E3, F3, Ti3b, X3b, stat)
      if (stat == 0) call tridi_mohid_unregister(D2, E2, F2, Ti2, X2, stat)
      call check(stat, 'tridi_mohid_unregister')
    else
      call tridi_mohid_register(D3, E3, F3, Ti3, X3, stat)
      if (stat == 0) call tridi_mohid_register(D3, E3, F3, Ti3b, X3b, stat)
      if (stat == 0) call tridi_mohid_register(D2, E2, F2, Ti2, X2, stat)
      call check(stat, 'tridi_mohid_register')
    end if
  end subroutine solver_register

  ! Time since t0 into the solver time and its share of kind k (1 THOMAS_3D, 2 THOMASZ, 3 THOMAS_2D, 4 uploads).
  subroutine account(s, k, t0)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: k
    real(r8), intent(in) :: t0
    real(r8) :: dt
    dt = now() - t0
    s%part(k) = s%part(k) + dt
    s%seconds = s%seconds + dt
  end subroutine account

  real(r8) function now()
    integer(8) :: count, rate
    call system_clock(count, rate)
    now = real(count, r8) / real(rate, r8)
  end function now

  subroutine check(stat, what)
    integer, intent(in) :: stat
    character(*), intent(in) :: what
    if (stat /= 0) then
      call par_fail('flow_channel: '//what//' failed: '//tridi_status_name(stat)//': '//tridi_error_message())
    end if
  end subroutine check

  subroutine solver_thomas_3d(s, IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, D, E, F, Ti, ANSWER)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj
    real(r4), dimension(:,:,:), pointer :: D, F, Ti, ANSWER
    real(r8), dimension(:,:,:), pointer :: E
    integer :: stat
    real(r8) :: t0
    t0 = now()
    if (c_associated(s%par)) then
      ! MOHID's box: unknowns JImin..JImax+1 along the lines, lines IJmin..IJmax.
      if (dj == 1) then
        call split_solve(s, 3, 1, [IJmin, JImin, Kmin], [IJmax, JImax + 1, Kmax], c_loc(D), c_loc(E), c_loc(F), &
                         c_loc(Ti), c_loc(ANSWER))
      else
        call split_solve(s, 3, 0, [JImin, IJmin, Kmin], [JImax + 1, IJmax, Kmax], c_loc(D), c_loc(E), c_loc(F), &
                         c_loc(Ti), c_loc(ANSWER))
      end if
    else if (s%backend == BACKEND_REFERENCE) then
      call ref_thomas_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, D, E, F, Ti, ANSWER, s%vecg, s%vecw)
    else
      call tridi_thomas_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, D, E, F, Ti, ANSWER, stat=stat)
      call check(stat, 'tridi_thomas_3d')
    end if
    call account(s, 1, t0)
    s%calls = s%calls + 1
  end subroutine solver_thomas_3d

  subroutine solver_thomasz(s, ILB, IUB, JLB, JUB, KLB, KUB, AW, BW, CW, TIW, RES, WaterPoints)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB
    real(r4), dimension(:,:,:), pointer :: AW, CW, TIW, RES
    real(r8), dimension(:,:,:), pointer :: BW
    integer, dimension(:,:,:), pointer :: WaterPoints
    integer :: stat
    real(r8) :: t0
    t0 = now()
    if (c_associated(s%par)) then
      ! The model calls THOMASZ with KLB = 1 on all-water columns: the plain box of unknowns 1..KUB+1.
      if (KLB /= 1 .or. any(WaterPoints(ILB:IUB, JLB:JUB, KUB) /= 1)) &
        call par_fail('flow_channel: THOMASZ on ranks takes KLB = 1 and water columns only')
      call split_solve(s, 3, 2, [ILB, JLB, KLB], [IUB, JUB, KUB + 1], c_loc(AW), c_loc(BW), c_loc(CW), &
                       c_loc(TIW), c_loc(RES))
    else if (s%backend == BACKEND_REFERENCE) then
      call ref_thomasz(ILB, IUB, JLB, JUB, KLB, KUB, AW, BW, CW, TIW, RES, s%vecg, s%vecw, WaterPoints)
    else
      call tridi_thomasz(ILB, IUB, JLB, JUB, KLB, KUB, AW, BW, CW, TIW, RES, WaterPoints=WaterPoints, stat=stat)
      call check(stat, 'tridi_thomasz')
    end if
    call account(s, 2, t0)
    s%calls = s%calls + 1
  end subroutine solver_thomasz

  subroutine solver_thomas_2d(s, IJmin, IJmax, JImin, JImax, di, dj, D, E, F, Ti, ANSWER)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj
    real(r4), dimension(:,:), pointer :: D, F, Ti, ANSWER
    real(r8), dimension(:,:), pointer :: E
    integer :: stat
    real(r8) :: t0
    t0 = now()
    if (c_associated(s%par)) then
      ! The model calls THOMAS_2D with IJmin = JImin = 1, where MOHID reads each line's first row at
      ! its first cell: the plain box (the adapter's first-row rule would misplace it for the rows of
      ! a rank that start past 1).
      if (dj == 1) then
        call split_solve(s, 2, 1, [IJmin, JImin, 1], [IJmax, JImax + 1, 1], c_loc(D), c_loc(E), c_loc(F), &
                         c_loc(Ti), c_loc(ANSWER))
      else
        call split_solve(s, 2, 0, [JImin, IJmin, 1], [JImax + 1, IJmax, 1], c_loc(D), c_loc(E), c_loc(F), &
                         c_loc(Ti), c_loc(ANSWER))
      end if
    else if (s%backend == BACKEND_REFERENCE) then
      call ref_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D, E, F, Ti, ANSWER, s%vecg, s%vecw)
    else
      call tridi_thomas_2d(IJmin, IJmax, JImin, JImax, di, dj, D, E, F, Ti, ANSWER, stat=stat)
      call check(stat, 'tridi_thomas_2d')
    end if
    call account(s, 3, t0)
    s%calls = s%calls + 1
  end subroutine solver_thomas_2d

  ! A sweep of the decomposed model on the adapter's context (the cpu backend: flow_channel refuses the
  ! others on ranks). c_loc of a pointer array is its first allocated element.
  subroutine split_solve(s, ndim, axis, lo, hi, d, e, f, ti, x)
    type(fc_solver_t), intent(in) :: s
    integer, intent(in) :: ndim, axis, lo(3), hi(3)
    type(c_ptr), intent(in) :: d, e, f, ti, x
    type(tridi_context) :: ctx
    integer :: stat
    call tridi_mohid_context(ctx, stat)
    call check(stat, 'tridi_mohid_context')
    call par_solve(s%par, ctx, ndim, axis, lo, hi, d, e, f, ti, x)
  end subroutine split_solve

  ! Uploads are the gpu backend's overlap of transfers with the assembly of the next diagonal; the other
  ! backends have nothing to move.
  subroutine upload_3d_r4(s, IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, role, a)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, role
    real(r4), dimension(:,:,:), pointer :: a
    integer :: stat
    real(r8) :: t0
    if (s%backend /= BACKEND_GPU) return
    t0 = now()
    call tridi_mohid_upload_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, a, mohid_role(role), stat)
    call check(stat, 'tridi_mohid_upload_3d')
    call account(s, 4, t0)
  end subroutine upload_3d_r4

  subroutine upload_3d_r8(s, IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, role, a)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, role
    real(r8), dimension(:,:,:), pointer :: a
    integer :: stat
    real(r8) :: t0
    if (s%backend /= BACKEND_GPU) return
    t0 = now()
    call tridi_mohid_upload_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, a, mohid_role(role), stat)
    call check(stat, 'tridi_mohid_upload_3d')
    call account(s, 4, t0)
  end subroutine upload_3d_r8

  subroutine upload_z_r4(s, ILB, IUB, JLB, JUB, KLB, KUB, role, a)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB, role
    real(r4), dimension(:,:,:), pointer :: a
    integer :: stat
    real(r8) :: t0
    if (s%backend /= BACKEND_GPU) return
    t0 = now()
    call tridi_mohid_upload_z(ILB, IUB, JLB, JUB, KLB, KUB, a, mohid_role(role), stat)
    call check(stat, 'tridi_mohid_upload_z')
    call account(s, 4, t0)
  end subroutine upload_z_r4

  subroutine upload_z_r8(s, ILB, IUB, JLB, JUB, KLB, KUB, role, a)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB, role
    real(r8), dimension(:,:,:), pointer :: a
    integer :: stat
    real(r8) :: t0
    if (s%backend /= BACKEND_GPU) return
    t0 = now()
    call tridi_mohid_upload_z(ILB, IUB, JLB, JUB, KLB, KUB, a, mohid_role(role), stat)
    call check(stat, 'tridi_mohid_upload_z')
    call account(s, 4, t0)
  end subroutine upload_z_r8

  subroutine upload_2d_r4(s, IJmin, IJmax, JImin, JImax, di, dj, role, a)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj, role
    real(r4), dimension(:,:), pointer :: a
    integer :: stat
    real(r8) :: t0
    if (s%backend /= BACKEND_GPU) return
    t0 = now()
    call tridi_mohid_upload_2d(IJmin, IJmax, JImin, JImax, di, dj, a, mohid_role(role), stat)
    call check(stat, 'tridi_mohid_upload_2d')
    call account(s, 4, t0)
  end subroutine upload_2d_r4

  subroutine upload_2d_r8(s, IJmin, IJmax, JImin, JImax, di, dj, role, a)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj, role
    real(r8), dimension(:,:), pointer :: a
    integer :: stat
    real(r8) :: t0
    if (s%backend /= BACKEND_GPU) return
    t0 = now()
    call tridi_mohid_upload_2d(IJmin, IJmax, JImin, JImax, di, dj, a, mohid_role(role), stat)
    call check(stat, 'tridi_mohid_upload_2d')
    call account(s, 4, t0)
  end subroutine upload_2d_r8

  integer function mohid_role(role)
    integer, intent(in) :: role
    select case (role)
    case (ROLE_D); mohid_role = TRIDI_ROLE_LOWER
    case (ROLE_E); mohid_role = TRIDI_ROLE_DIAG
    case default; mohid_role = TRIDI_ROLE_UPPER
    end select
  end function mohid_role

end module fc_solver
