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
  public :: solver_register, solver_reset_times, solver_report_per_call, now
  public :: solver_upload_3d, solver_upload_z, solver_upload_2d, backend_from_name, backend_name
  public :: BACKEND_REFERENCE, BACKEND_CPU, BACKEND_GPU, BACKEND_GPU_RESIDENT

  integer, parameter :: r4 = kind(1.0), r8 = kind(1.0d0)
  ! gpu-resident runs the whole step on the GPU (fc_gpu.cu); it only uses this module's timer.
  integer, parameter :: BACKEND_REFERENCE = 0, BACKEND_CPU = 1, BACKEND_GPU = 2, BACKEND_GPU_RESIDENT = 3

  ! The arguments of the latest solve of one kind, so that solver_report_per_call can call it again.
  type fc_last_call_t
    integer :: b(8) = 0   ! the bounds and di, dj as the model passed them (THOMASZ: ILB..KUB in 1:6)
    real(r4), dimension(:,:,:), pointer :: d => null(), f => null(), ti => null(), x => null()
    real(r8), dimension(:,:,:), pointer :: e => null()
    integer, dimension(:,:,:), pointer :: wp => null()
    real(r4), dimension(:,:), pointer :: d2 => null(), f2 => null(), ti2 => null(), x2 => null()
    real(r8), dimension(:,:), pointer :: e2 => null()
  end type fc_last_call_t

  ! Kinds of solve of the per-call report: THOMAS_3D along x and along y, THOMASZ, THOMAS_2D.
  integer, parameter :: NKIND = 4
  character(len=11), parameter :: KIND_NAME(NKIND) = [character(len=11) :: 'THOMAS_3D x', 'THOMAS_3D y', &
                                                      'THOMASZ', 'THOMAS_2D']

  ! Every call's time of one kind, in call order (the first kind_calls entries), for its median.
  type fc_call_times_t
    real(r8), allocatable :: t(:)
  end type fc_call_times_t

  type fc_solver_t
    integer :: backend = BACKEND_REFERENCE
    real(r8) :: seconds = 0        ! wall time inside the solver calls
    integer(8) :: calls = 0        ! number of solves
    ! The same time by kind: THOMAS_3D, THOMASZ, THOMAS_2D solves and the gpu backend's uploads.
    real(r8) :: part(4) = 0
    ! Time and number of the solves of each kind (KIND_NAME), and each kind's latest call.
    real(r8) :: kind_seconds(NKIND) = 0
    integer(8) :: kind_calls(NKIND) = 0
    type(fc_call_times_t) :: kind_times(NKIND)
    type(fc_last_call_t) :: last(NKIND)
    real(r8), pointer :: vecg(:) => null(), vecw(:) => null()
    type(c_ptr) :: par = c_null_ptr   ! the model's decomposition over ranks (fc_parallel); null: one rank
  end type fc_solver_t

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

  ! Time since t0 into the solver time and its share of kind k (1 THOMAS_3D, 2 THOMASZ, 3 THOMAS_2D, 4 uploads),
  ! and into the per-call kind (KIND_NAME; 0 for uploads).
  subroutine account(s, k, t0, kind)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: k, kind
    real(r8), intent(in) :: t0
    real(r8) :: dt
    dt = now() - t0
    s%part(k) = s%part(k) + dt
    s%seconds = s%seconds + dt
    if (kind > 0) then
      s%kind_seconds(kind) = s%kind_seconds(kind) + dt
      s%kind_calls(kind) = s%kind_calls(kind) + 1
      call record(s%kind_times(kind), s%kind_calls(kind), dt)
    end if
  end subroutine account

  ! Call n's time dt into c, doubling its storage when full.
  subroutine record(c, n, dt)
    type(fc_call_times_t), intent(inout) :: c
    integer(8), intent(in) :: n
    real(r8), intent(in) :: dt
    real(r8), allocatable :: grown(:)
    if (.not. allocated(c%t)) allocate(c%t(256))
    if (n > size(c%t, kind=8)) then
      allocate(grown(2 * size(c%t, kind=8)))
      grown(1:size(c%t)) = c%t
      call move_alloc(grown, c%t)
    end if
    c%t(n) = dt
  end subroutine record

  ! The median of t(1:n) (the lower middle one for even n), by selection on a copy: quick for the
  ! tens of thousands of calls of a long run.
  real(r8) function median_of(t, n) result(m)
    real(r8), intent(in) :: t(:)
    integer(8), intent(in) :: n
    real(r8), allocatable :: w(:)
    real(r8) :: pivot, tmp
    integer(8) :: lo, hi, i, j, k
    w = t(1:n)
    k = (n + 1) / 2
    lo = 1; hi = n
    do while (lo < hi)
      pivot = w((lo + hi) / 2)
      i = lo; j = hi
      do while (i <= j)
        do while (w(i) < pivot)
          i = i + 1
        end do
        do while (w(j) > pivot)
          j = j - 1
        end do
        if (i <= j) then
          tmp = w(i); w(i) = w(j); w(j) = tmp
          i = i + 1; j = j - 1
        end if
      end do
      if (k <= j) then
        hi = j
      else if (k >= i) then
        lo = i
      else
        exit
      end if
    end do
    m = w(k)
  end function median_of

  ! The warm-up step is not timed: its solves leave the per-kind times too.
  subroutine solver_reset_times(s)
    type(fc_solver_t), intent(inout) :: s
    s%seconds = 0; s%part = 0
    s%kind_seconds = 0; s%kind_calls = 0
  end subroutine solver_reset_times

  ! Per kind of solve: its time per call inside the model (the mean, and the median that benchmarks report:
  ! a few late calls move the mean of short calls) and, right after the run, the same call (the kind's
  ! latest, on the same arrays) repeated back to back as a benchmark would time it: runs of n calls (n from
  ! the in-model time, about 10 ms a run), up to REPS runs within about 50 ms per kind, the median run. The replay writes the answer arrays again, so
  ! it comes after everything that reads the model's state. A model cut over ranks is not replayed (its solves
  ! are collective); nor is gpu-resident (its solves are not made here).
  subroutine solver_report_per_call(s)
    type(fc_solver_t), intent(inout) :: s
    integer, parameter :: REPS = 5
    real(r8) :: inside, mid, runs(REPS), t0, tmp
    integer :: k, r, i, j, n, nrep
    if (c_associated(s%par)) return
    do k = 1, NKIND
      if (s%kind_calls(k) == 0) cycle
      inside = s%kind_seconds(k) / real(s%kind_calls(k), r8)
      mid = median_of(s%kind_times(k)%t, s%kind_calls(k))
      n = max(1, min(50, nint(0.01_r8 / max(inside, 1.0e-7_r8))))
      nrep = max(1, min(REPS, int(0.05_r8 / max(inside * n, 1.0e-7_r8))))
      do r = 1, nrep
        t0 = now()
        do i = 1, n
          call replay(s, k)
        end do
        runs(r) = (now() - t0) / n
      end do
      do i = 2, nrep
        tmp = runs(i)
        j = i - 1
        do while (j >= 1)
          if (runs(j) <= tmp) exit
          runs(j + 1) = runs(j)
          j = j - 1
        end do
        runs(j + 1) = tmp
      end do
      write (*, '(a, a, a, a, a, f0.4, a, i0, a, f0.4, a, f0.4, a, i0, a, i0, a, f0.2)') 'per call (ms), ', &
        backend_name(s%backend), ', ', trim(KIND_NAME(k)), ': in the model ', 1000 * inside, ' (mean of ', &
        s%kind_calls(k), ' calls; median ', 1000 * mid, '), back to back ', 1000 * runs((nrep + 1) / 2), &
        ' (median of ', nrep, ' runs of ', n, '), ratio ', inside / runs((nrep + 1) / 2)
    end do
  end subroutine solver_report_per_call

  subroutine replay(s, k)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: k
    integer :: b(8)
    b = s%last(k)%b
    select case (k)
    case (1, 2)
      call solver_thomas_3d(s, b(1), b(2), b(3), b(4), b(5), b(6), b(7), b(8), s%last(k)%d, s%last(k)%e, &
                            s%last(k)%f, s%last(k)%ti, s%last(k)%x, replay=.true.)
    case (3)
      call solver_thomasz(s, b(1), b(2), b(3), b(4), b(5), b(6), s%last(k)%d, s%last(k)%e, s%last(k)%f, &
                          s%last(k)%ti, s%last(k)%x, s%last(k)%wp, replay=.true.)
    case (4)
      call solver_thomas_2d(s, b(1), b(2), b(3), b(4), b(7), b(8), s%last(k)%d2, s%last(k)%e2, s%last(k)%f2, &
                            s%last(k)%ti2, s%last(k)%x2, replay=.true.)
    end select
  end subroutine replay

  ! Wall-clock seconds (system_clock's count over its rate).
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

  ! A model's solve is recorded (for the per-call report) and timed; its replay (replay = .true.) is not.
  logical function timed(replay)
    logical, intent(in), optional :: replay
    timed = .true.
    if (present(replay)) timed = .not. replay
  end function timed

  subroutine solver_thomas_3d(s, IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, D, E, F, Ti, ANSWER, replay)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj
    real(r4), dimension(:,:,:), pointer :: D, F, Ti, ANSWER
    real(r8), dimension(:,:,:), pointer :: E
    logical, intent(in), optional :: replay
    real(r8) :: t0
    integer :: k, stat
    k = merge(2, 1, dj == 1)
    if (timed(replay)) then
      s%last(k)%b = [IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj]
      s%last(k)%d => D; s%last(k)%e => E; s%last(k)%f => F; s%last(k)%ti => Ti; s%last(k)%x => ANSWER
      t0 = now()
    end if
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
    if (.not. timed(replay)) return
    call account(s, 1, t0, k)
    s%calls = s%calls + 1
  end subroutine solver_thomas_3d

  subroutine solver_thomasz(s, ILB, IUB, JLB, JUB, KLB, KUB, AW, BW, CW, TIW, RES, WaterPoints, replay)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB
    real(r4), dimension(:,:,:), pointer :: AW, CW, TIW, RES
    real(r8), dimension(:,:,:), pointer :: BW
    integer, dimension(:,:,:), pointer :: WaterPoints
    logical, intent(in), optional :: replay
    real(r8) :: t0
    integer :: stat
    if (timed(replay)) then
      s%last(3)%b = [ILB, IUB, JLB, JUB, KLB, KUB, 0, 0]
      s%last(3)%d => AW; s%last(3)%e => BW; s%last(3)%f => CW; s%last(3)%ti => TIW; s%last(3)%x => RES
      s%last(3)%wp => WaterPoints
      t0 = now()
    end if
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
    if (.not. timed(replay)) return
    call account(s, 2, t0, 3)
    s%calls = s%calls + 1
  end subroutine solver_thomasz

  subroutine solver_thomas_2d(s, IJmin, IJmax, JImin, JImax, di, dj, D, E, F, Ti, ANSWER, replay)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj
    real(r4), dimension(:,:), pointer :: D, F, Ti, ANSWER
    real(r8), dimension(:,:), pointer :: E
    logical, intent(in), optional :: replay
    real(r8) :: t0
    integer :: stat
    if (timed(replay)) then
      s%last(4)%b = [IJmin, IJmax, JImin, JImax, 0, 0, di, dj]
      s%last(4)%d2 => D; s%last(4)%e2 => E; s%last(4)%f2 => F; s%last(4)%ti2 => Ti; s%last(4)%x2 => ANSWER
      t0 = now()
    end if
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
    if (.not. timed(replay)) return
    call account(s, 3, t0, 4)
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
  ! backends have nothing to move. D and F go together once both are assembled, E alone after them.
  subroutine solver_upload_3d(s, IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, d, f, e)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj
    real(r4), dimension(:,:,:), pointer, optional :: d, f
    real(r8), dimension(:,:,:), pointer, optional :: e
    character(*), parameter :: what = 'tridi_mohid_upload_3d'
    integer :: stat
    real(r8) :: t0
    if (s%backend /= BACKEND_GPU) return
    t0 = now()
    if (present(d)) call tridi_mohid_upload_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, d, TRIDI_ROLE_LOWER, stat)
    if (present(d)) call check(stat, what)
    if (present(f)) call tridi_mohid_upload_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, f, TRIDI_ROLE_UPPER, stat)
    if (present(f)) call check(stat, what)
    if (present(e)) call tridi_mohid_upload_3d(IJmin, IJmax, JImin, JImax, Kmin, Kmax, di, dj, e, TRIDI_ROLE_DIAG, stat)
    if (present(e)) call check(stat, what)
    call account(s, 4, t0, 0)
  end subroutine solver_upload_3d

  subroutine solver_upload_z(s, ILB, IUB, JLB, JUB, KLB, KUB, d, f, e)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: ILB, IUB, JLB, JUB, KLB, KUB
    real(r4), dimension(:,:,:), pointer, optional :: d, f
    real(r8), dimension(:,:,:), pointer, optional :: e
    character(*), parameter :: what = 'tridi_mohid_upload_z'
    integer :: stat
    real(r8) :: t0
    if (s%backend /= BACKEND_GPU) return
    t0 = now()
    if (present(d)) call tridi_mohid_upload_z(ILB, IUB, JLB, JUB, KLB, KUB, d, TRIDI_ROLE_LOWER, stat)
    if (present(d)) call check(stat, what)
    if (present(f)) call tridi_mohid_upload_z(ILB, IUB, JLB, JUB, KLB, KUB, f, TRIDI_ROLE_UPPER, stat)
    if (present(f)) call check(stat, what)
    if (present(e)) call tridi_mohid_upload_z(ILB, IUB, JLB, JUB, KLB, KUB, e, TRIDI_ROLE_DIAG, stat)
    if (present(e)) call check(stat, what)
    call account(s, 4, t0, 0)
  end subroutine solver_upload_z

  ! THOMAS_2D's D and F (the model's E of the elevation lines is assembled with them).
  subroutine solver_upload_2d(s, IJmin, IJmax, JImin, JImax, di, dj, d, f)
    type(fc_solver_t), intent(inout) :: s
    integer, intent(in) :: IJmin, IJmax, JImin, JImax, di, dj
    real(r4), dimension(:,:), pointer :: d, f
    character(*), parameter :: what = 'tridi_mohid_upload_2d'
    integer :: stat
    real(r8) :: t0
    if (s%backend /= BACKEND_GPU) return
    t0 = now()
    call tridi_mohid_upload_2d(IJmin, IJmax, JImin, JImax, di, dj, d, TRIDI_ROLE_LOWER, stat)
    call check(stat, what)
    call tridi_mohid_upload_2d(IJmin, IJmax, JImin, JImax, di, dj, f, TRIDI_ROLE_UPPER, stat)
    call check(stat, what)
    call account(s, 4, t0, 0)
  end subroutine solver_upload_2d

end module fc_solver
