! flow_channel on MPI ranks, the Fortran side: bindings of fc_parallel.h (implemented over MPI and tridi's
! MPI layer by fc_parallel_mpi.c in flow_channel_mpi, by fc_parallel_none.c for one process in
! flow_channel) and the few wrappers the model uses. A decomposition handle `par` that is null means a
! model on one rank that owns the whole grid: then every reduction returns its argument and nothing is
! exchanged, so the one-rank model runs exactly the code it ran before ranks existed.
module fc_parallel
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: output_unit, error_unit
  use tridi, only: tridi_arrays_t, tridi_context, TRIDI_FLOAT32, TRIDI_FLOAT64
  implicit none
  private
  public :: par_start, par_exit, par_create, par_free, par_halo_create, par_halo_free, par_exchange
  public :: par_sum, par_max, par_min, par_any, par_gather, par_solve, par_fail
  public :: par_rank, par_nranks, par_node_rank, par_set_transport
  public :: c_text

  ! This process's place among the ranks (set by par_start).
  integer, protected :: par_rank = 0, par_nranks = 1, par_node_rank = 0
  ! The device halos' transport (tridi_transport; 0 = AUTO), from --transport (par_set_transport).
  integer, protected :: par_transport = 0

  interface
    subroutine fc_par_start(rank, nranks, node_rank) bind(c, name='fc_par_start')
      import :: c_int
      integer(c_int), intent(out) :: rank, nranks, node_rank
    end subroutine
    subroutine fc_par_exit(code) bind(c, name='fc_par_exit')
      import :: c_int
      integer(c_int), value :: code
    end subroutine
    integer(c_int) function fc_par_create(par, im, jm, km, transport, jlo_jhi, msg, msglen) &
        bind(c, name='fc_par_create')
      import :: c_ptr, c_int, c_char
      type(c_ptr), intent(out) :: par
      integer(c_int), value :: im, jm, km, transport, msglen
      integer(c_int), intent(out) :: jlo_jhi(2)
      character(kind=c_char), intent(out) :: msg(*)
    end function
    subroutine fc_par_destroy(par) bind(c, name='fc_par_destroy')
      import :: c_ptr
      type(c_ptr), value :: par
    end subroutine
    integer(c_int) function fc_par_halo_create(par, ndim, array, dtype, memory, halo, transport, msg, msglen) &
        bind(c, name='fc_par_halo_create')
      import :: c_ptr, c_int, c_char
      type(c_ptr), value :: par, array
      integer(c_int), value :: ndim, dtype, memory, msglen
      type(c_ptr), intent(out) :: halo
      integer(c_int), intent(out) :: transport
      character(kind=c_char), intent(out) :: msg(*)
    end function
    subroutine fc_par_halo_destroy(halo) bind(c, name='fc_par_halo_destroy')
      import :: c_ptr
      type(c_ptr), value :: halo
    end subroutine
    integer(c_int) function fc_par_exchange(halos, n, stream, msg, msglen) bind(c, name='fc_par_exchange')
      import :: c_ptr, c_int, c_char
      type(c_ptr), intent(in) :: halos(*)
      integer(c_int), value :: n, msglen
      type(c_ptr), value :: stream
      character(kind=c_char), intent(out) :: msg(*)
    end function
    subroutine fc_par_allreduce(par, x, n, op) bind(c, name='fc_par_allreduce')
      import :: c_ptr, c_int, c_double
      type(c_ptr), value :: par
      real(c_double), intent(inout) :: x(*)
      integer(c_int), value :: n, op
    end subroutine
    subroutine fc_par_gather(par, ndim, local, global) bind(c, name='fc_par_gather')
      import :: c_ptr, c_int, c_double
      type(c_ptr), value :: par
      integer(c_int), value :: ndim
      real(c_double), intent(in) :: local(*)
      real(c_double), intent(out) :: global(*)
    end subroutine
    integer(c_int) function fc_par_solve(par, ctx, ndim, axis, lo, hi, arrays, memory, stream, msg, msglen) &
        bind(c, name='fc_par_solve')
      import :: c_ptr, c_int, c_int64_t, c_char, tridi_arrays_t
      type(c_ptr), value :: par, ctx, stream
      integer(c_int), value :: ndim, axis, memory, msglen
      integer(c_int64_t), intent(in) :: lo(3), hi(3)
      type(tridi_arrays_t), intent(in) :: arrays
      character(kind=c_char), intent(out) :: msg(*)
    end function
  end interface

  interface par_halo_create
    module procedure halo_r8, halo_r4
  end interface
  interface par_gather
    module procedure gather_2d, gather_3d
  end interface

contains

  ! Starts MPI where the executable has it; ranks other than 0 stay silent on standard output (errors
  ! still reach standard error), so an N-rank run prints what a one-rank run prints.
  subroutine par_start()
    integer(c_int) :: r, n, nr
    call fc_par_start(r, n, nr)
    par_rank = r; par_nranks = n; par_node_rank = nr
    if (par_rank /= 0) open (unit=output_unit, file='/dev/null', action='write')
  end subroutine par_start

  ! Every exit of a run on ranks goes through MPI_Finalize, so mpirun passes the code on.
  subroutine par_exit(code)
    integer, intent(in) :: code
    flush (output_unit)
    call fc_par_exit(int(code, c_int))
  end subroutine par_exit

  ! A failure of this rank: rank 0 reports on standard output like the one-rank program, the others on
  ! standard error; then the run stops (mpirun ends the other ranks).
  subroutine par_fail(text)
    character(*), intent(in) :: text
    if (par_rank == 0) then
      write (output_unit, '(a)') text
    else
      write (error_unit, '(a, i0, a, a)') 'rank ', par_rank, ': ', text
    end if
    error stop 1
  end subroutine par_fail

  function c_text(msg) result(text)
    character(kind=c_char), intent(in) :: msg(:)
    character(len=:), allocatable :: text
    integer :: n
    n = 0
    do while (n < size(msg))
      if (msg(n + 1) == c_null_char) exit
      n = n + 1
    end do
    allocate (character(len=n) :: text)
    text = transfer(msg(1:n), text)
  end function c_text

  ! The decomposition of the model grid over all ranks (rows jlo..jhi here).
  subroutine par_create(par, im, jm, km, jlo, jhi)
    type(c_ptr), intent(out) :: par
    integer, intent(in) :: im, jm, km
    integer, intent(out) :: jlo, jhi
    character(kind=c_char) :: msg(512)
    integer(c_int) :: rows(2)
    msg = c_null_char
    if (fc_par_create(par, im, jm, km, int(par_transport, c_int), rows, msg, size(msg)) /= 0) &
      call par_fail('flow_channel: decomposition: '//c_text(msg))
    jlo = rows(1); jhi = rows(2)
  end subroutine par_create

  ! --transport NAME: auto, ipc, cuda-aware, staged, nccl (the names of tridi_transport_name). False for
  ! any other name.
  logical function par_set_transport(name) result(ok)
    character(*), intent(in) :: name
    character(len=10), parameter :: names(0:4) = [character(len=10) :: 'auto', 'ipc', 'cuda-aware', &
                                                    'staged', 'nccl']
    integer :: t
    ok = .false.
    do t = 0, 4
      if (trim(name) == trim(names(t))) then
        par_transport = t
        ok = .true.
      end if
    end do
  end function par_set_transport

  subroutine par_free(par)
    type(c_ptr), intent(inout) :: par
    if (c_associated(par)) call fc_par_destroy(par)
    par = c_null_ptr
  end subroutine par_free

  subroutine make_halo(par, ndim, p, dtype, halo)
    type(c_ptr), intent(in) :: par, p
    integer, intent(in) :: ndim, dtype
    type(c_ptr), intent(out) :: halo
    character(kind=c_char) :: msg(512)
    integer(c_int) :: transport
    msg = c_null_char
    if (fc_par_halo_create(par, int(ndim, c_int), p, int(dtype, c_int), 0_c_int, halo, transport, msg, &
                           size(msg)) /= 0) call par_fail('flow_channel: '//c_text(msg))
  end subroutine make_halo

  ! Halo plans of host arrays (rank 2 or 3) allocated over this rank's rows (the arrays must not move
  ! afterwards).
  subroutine halo_r8(par, a, halo)
    type(c_ptr), intent(in) :: par
    real(8), intent(inout), target :: a(..)
    type(c_ptr), intent(out) :: halo
    call make_halo(par, rank(a), c_loc(a), TRIDI_FLOAT64, halo)
  end subroutine halo_r8
  subroutine halo_r4(par, a, halo)
    type(c_ptr), intent(in) :: par
    real(4), intent(inout), target :: a(..)
    type(c_ptr), intent(out) :: halo
    call make_halo(par, rank(a), c_loc(a), TRIDI_FLOAT32, halo)
  end subroutine halo_r4

  subroutine par_halo_free(halo)
    type(c_ptr), intent(inout) :: halo
    if (c_associated(halo)) call fc_par_halo_destroy(halo)
    halo = c_null_ptr
  end subroutine par_halo_free

  ! The halos of several arrays, moved together.
  subroutine par_exchange(halos)
    type(c_ptr), intent(in) :: halos(:)
    character(kind=c_char) :: msg(512)
    msg = c_null_char
    if (fc_par_exchange(halos, int(size(halos), c_int), c_null_ptr, msg, size(msg)) /= 0) &
      call par_fail('flow_channel: halo exchange: '//c_text(msg))
  end subroutine par_exchange

  real(8) function reduce(par, x, op)
    type(c_ptr), intent(in) :: par
    real(8), intent(in) :: x
    integer, intent(in) :: op
    real(c_double) :: v(1)
    v(1) = x
    if (c_associated(par)) call fc_par_allreduce(par, v, 1_c_int, int(op, c_int))
    reduce = v(1)
  end function reduce

  ! Over all ranks of a decomposed model; the value itself for a model on one rank.
  real(8) function par_sum(par, x)
    type(c_ptr), intent(in) :: par
    real(8), intent(in) :: x
    par_sum = reduce(par, x, 0)
  end function par_sum
  real(8) function par_max(par, x)
    type(c_ptr), intent(in) :: par
    real(8), intent(in) :: x
    par_max = reduce(par, x, 1)
  end function par_max
  real(8) function par_min(par, x)
    type(c_ptr), intent(in) :: par
    real(8), intent(in) :: x
    par_min = reduce(par, x, 2)
  end function par_min
  logical function par_any(par, l)
    type(c_ptr), intent(in) :: par
    logical, intent(in) :: l
    par_any = reduce(par, merge(1.0_8, 0.0_8, l), 1) > 0
  end function par_any

  ! Rank 0 receives the whole field (0:IM+1, 0:JM+1[, 0:KM+1]) from every rank's rows.
  subroutine gather_2d(par, local, global)
    type(c_ptr), intent(in) :: par
    real(8), intent(in) :: local(:,:)
    real(8), intent(out) :: global(:,:)
    call fc_par_gather(par, 2_c_int, local, global)
  end subroutine gather_2d
  subroutine gather_3d(par, local, global)
    type(c_ptr), intent(in) :: par
    real(8), intent(in) :: local(:,:,:)
    real(8), intent(out) :: global(:,:,:)
    call fc_par_gather(par, 3_c_int, local, global)
  end subroutine gather_3d

  ! A sweep of host arrays (MOHID's types: E real(8), the rest real(4)) over the global box lo..hi:
  ! axis 0 = i, 1 = j (across the ranks), 2 = k.
  subroutine par_solve(par, ctx, ndim, axis, lo, hi, d, e, f, ti, x)
    type(c_ptr), intent(in) :: par
    type(tridi_context), intent(in) :: ctx
    integer, intent(in) :: ndim, axis, lo(3), hi(3)
    type(c_ptr), intent(in) :: d, e, f, ti, x
    character(kind=c_char) :: msg(1024)
    type(tridi_arrays_t) :: a
    a = tridi_arrays_t(d, TRIDI_FLOAT32, e, TRIDI_FLOAT64, f, TRIDI_FLOAT32, ti, TRIDI_FLOAT32, x, TRIDI_FLOAT32)
    msg = c_null_char
    if (fc_par_solve(par, ctx%handle, int(ndim, c_int), int(axis, c_int), int(lo, c_int64_t), &
                     int(hi, c_int64_t), a, 0_c_int, c_null_ptr, msg, size(msg)) /= 0) &
      call par_fail('flow_channel: '//c_text(msg))
  end subroutine par_solve

end module fc_parallel
