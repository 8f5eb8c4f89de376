/* Internal declarations shared by src/ (validation, dispatch, CPU backend) and cuda/ (CUDA backend).
 * Not installed. */
#ifndef TRIDI_INTERNAL_H
#define TRIDI_INTERNAL_H

#include "tridi.h"

/* Internal functions called from another of tridi's libraries (libtridi_mpi, libtridi_nccl call into
 * libtridi; decision 043): a shared build exports them, no public header declares them. */
#if defined(__GNUC__) || defined(__clang__)
#define TRIDI_PRIVATE __attribute__((visibility("default")))
#else
#define TRIDI_PRIVATE
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The three supported storage-type combinations of the five arrays. */
typedef enum tridi_combo {
    TRIDI_COMBO_F32 = 0,   /* all float */
    TRIDI_COMBO_F64 = 1,   /* all double */
    TRIDI_COMBO_MIXED = 2  /* MOHID: diag double, lower/upper/rhs/x float */
} tridi_combo;

/* A solve after validation: everything a backend needs, in element offsets from the array bases.
 * Backends never re-validate. Lines are numbered 0..nlines-1 in Fortran order of their coordinates on
 * the two other axes (the lower of the two varies fastest). */
typedef struct tridi_problem {
    tridi_grid grid;        /* ndim==2 grids are normalised to 3 axes with axis 2 of extent 1 */
    tridi_axis axis;
    int64_t lo[3], hi[3];   /* box, Fortran indices (axis 2 = 1..1 for 2D) */
    int64_t extent[3];      /* allocated extent per axis */
    int64_t stride[3];      /* element stride per axis: 1, extent[0], extent[0]*extent[1] */
    int64_t n;              /* unknowns per line: hi[axis]-lo[axis]+1 (>= 1) */
    int a1, a2;             /* the two line axes, a1 < a2 */
    int64_t n1, n2;         /* number of lines along a1 and a2 */
    int64_t nlines;         /* n1*n2 */
    int64_t origin;         /* element offset of cell lo (first unknown of line 0) */
    int64_t total_cells;    /* allocated cells of each array */
    tridi_combo combo;
    tridi_arrays arrays;
    /* The contract of this solve, resolved (never TRIDI_ARITH_DEFAULT here; tridi_newtype_pivot_f32 says
     * what TRIDI_ARITH_MOHID_NEWTYPE means for its types). Every backend honours
     * on_error: under LINES a failing line is left untouched and the others are answered; under CALL x
     * is unchanged on any failure. */
    tridi_on_error on_error;
    tridi_arith arith;
    tridi_verdict verdict;
    const char *func;       /* the entry point the caller called: backends' messages name it */
    /* Set by the caller of tridi_validate from the context (validation leaves TRIDI_PIVOT_NONE): host
     * solves with another value go through tridi_pivot_solve. */
    tridi_pivoting pivoting;
} tridi_problem;

/* Offset (elements) of the first unknown of line l. */
static inline int64_t tridi_line_offset(const tridi_problem *p, int64_t l)
{
    int64_t l1 = l % p->n1, l2 = l / p->n1;
    return p->origin + l1 * p->stride[p->a1] + l2 * p->stride[p->a2];
}

/* Fortran indices of unknown m of line l (for messages). */
void tridi_line_cell(const tridi_problem *p, int64_t l, int64_t m, int64_t cell[3]);

/* ---- errors (error.c) ---- */
/* Records the message (printf format) for this thread and returns status. */
TRIDI_PRIVATE tridi_status tridi_fail(tridi_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Records a numerical failure of line l at unknown m: ZERO_PIVOT or NONFINITE with the cell. */
TRIDI_PRIVATE tridi_status tridi_fail_numeric(const char *func, const tridi_problem *p, tridi_status status,
                                int64_t line, int64_t m, const char *what);

/* The same for a solve under TRIDI_ON_ERROR_LINES: `line`/`m` is the first failing line and its cell,
 * `nfailed` the number of lines that failed (all left untouched; every other line was answered). */
TRIDI_PRIVATE tridi_status tridi_fail_numeric_lines(const char *func, const tridi_problem *p, tridi_status status,
                                      int64_t line, int64_t m, const char *what, int64_t nfailed);
/* Number of lines that failed in this thread's last numerical failure (1 under ON_ERROR_CALL). */
int64_t tridi_error_failed_lines_internal(void);

/* Sets the cell reported by tridi_error_cell after tridi_fail (the MPI layer relays another rank's
 * numerical failure this way). */
TRIDI_PRIVATE void tridi_set_error_cell(int ndim, const int64_t cell[3]);

/* ---- validation (validate.c) ---- */
/* Every Fortran index a caller gives (grid bounds, box, MPI global bounds with halos) lies within
 * +-TRIDI_INDEX_LIMIT, so index arithmetic (a halo width, the cell past the box) never overflows. */
#define TRIDI_INDEX_LIMIT ((int64_t)1 << 62)

TRIDI_PRIVATE tridi_status tridi_validate(const char *func, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                            const int64_t hi[3], const tridi_arrays *arrays, int need_x, tridi_problem *out,
                            int *empty);

/* The geometry and types of a plan (no arrays yet: p->arrays holds only the five types). */
tridi_status tridi_validate_geometry(const char *func, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                                     const int64_t hi[3], const tridi_dtype types[5], tridi_problem *out, int *empty);
/* The arrays of one solve of a validated problem: pointers, types equal to p's (the message names the
 * array that differs), aliasing; sets p->arrays. */
tridi_status tridi_validate_arrays(const char *func, tridi_problem *p, const tridi_arrays *arrays, int need_x,
                                   int empty);
/* p's contract from a caller's options: checks the enums, resolves TRIDI_ARITH_DEFAULT (MOHID for the mixed
 * type, FAST otherwise; MOHID and MOHID_NEWTYPE are kept as given, docs/decisions/040); host solves always
 * return their verdict (SYNC). */
tridi_status tridi_resolve_contract(const char *func, tridi_problem *p, const tridi_solve_options *options);

/* Bytes of one element of a dtype. */
static inline size_t tridi_dtype_size(tridi_dtype t) { return t == TRIDI_FLOAT64 ? 8 : 4; }

/* TRIDI_ARITH_MOHID_NEWTYPE's pivot in float: MOHID's NewType pivot is a default real, float where upper is
 * (docs/decisions/040); with double upper values the arithmetic is TRIDI_ARITH_MOHID's. */
static inline int tridi_newtype_pivot_f32(const tridi_problem *p)
{
    return p->arith == TRIDI_ARITH_MOHID_NEWTYPE && p->arrays.upper_type == TRIDI_FLOAT32;
}

/* ---- tuning (tuning.c; every knob in docs/tuning.md) ----
 * The environment knobs, read once by tridi_create into its context, which hands them to its backend: a
 * variable changed afterwards does not change a live context. A field of 0 means the variable was not set
 * (or empty): the backend then takes its compiled value or its rule. */
typedef enum tridi_host_x_choice {
    TRIDI_HOST_X_RULE = 0,    /* the rule of cuda/host_pipeline.cu */
    TRIDI_HOST_X_EAGER = 1,   /* TRIDI_HOST_X_PATH=eager */
    TRIDI_HOST_X_VERDICT = 2  /* TRIDI_HOST_X_PATH=verdict */
} tridi_host_x_choice;

typedef struct tridi_tuning {
    tridi_backend backend;         /* TRIDI_BACKEND: the backend when the caller gave no config (AUTO) */
    int cpu_generic;               /* TRIDI_CPU_GENERIC=1: CPU x sweeps through the portable kernels */
    int64_t cpu_wg_budget;         /* TRIDI_CPU_WG_BUDGET: bytes of W/G per y/z block */
    int64_t cpu_bytes_per_thread;  /* TRIDI_CPU_BYTES_PER_THREAD: bytes a call moves per thread it pays for */
    int cpu_openmp_team;           /* an OpenMP team per CPU call instead of the pool: TRIDI_CPU_POOL=0, or
                                      unset with OMP_WAIT_POLICY=active */
    int cpu_pool_off;              /* TRIDI_CPU_POOL=0: every host copy of the CUDA backend on the caller's
                                      OpenMP team too, uploads' packing included (docs/decisions/029) */
    int omp_wait_active;           /* OMP_WAIT_POLICY=active: the model's OpenMP threads spin between its
                                      loops, so a team per call finds them awake (docs/decisions/018) */
    int cpu_spin_set;              /* TRIDI_CPU_SPIN_US was set: */
    int64_t cpu_spin_us;           /*   microseconds a pool worker watches for the next call */
    int cuda_kernel;               /* TRIDI_CUDA_KERNEL: 0 the planner's rule, 1 line, 2 split, 3 ckpt */
    int cuda_split_lanes;          /* TRIDI_CUDA_KERNEL=split:P: lanes per x line (0: the planner's) */
    int64_t host_slab_cells;       /* TRIDI_HOST_SLAB_CELLS: box cells per slab of the host-array pipeline */
    tridi_host_x_choice host_x;    /* TRIDI_HOST_X_PATH */
    uint64_t device_memory_limit;  /* TRIDI_DEVICE_MEMORY_LIMIT: bytes of device memory allocations may take */
    int mpi_subblocks;             /* TRIDI_MPI_SUBBLOCKS: sub-blocks per line of the device cut solve */
} tridi_tuning;

#define TRIDI_TUNING_WG_BUDGET_MIN 65536   /* the smallest TRIDI_CPU_WG_BUDGET: W/G of one block of short lines */
#define TRIDI_TUNING_MPI_SUBBLOCKS_MAX 16  /* the most sub-blocks per line (cuda/mpi_solve.cu's MAX_SUB) */

/* Reads every knob into *out. A value that is not one the knob takes gives TRIDI_ERROR_INVALID_VALUE
 * with a message naming the variable, its value and what it takes (func is the caller's name). */
tridi_status tridi_tuning_read(const char *func, tridi_tuning *out);
/* TRIDI_BACKEND alone, for tridi_config_init's default: AUTO when unset or not a backend's name
 * (tridi_create then refuses it). Records no error. */
tridi_backend tridi_tuning_backend(void);
/* TRIDI_ADI_PATH, read at tridi_adi_create on every backend (docs/tuning.md): 0 unset, 1 fused, 2 staged,
 * 3 fused with 64-bit offsets throughout (fused64), 4 fused with the x sweeps' blocks in k tiles on every
 * grid (fusedk);
 * any other value refuses the create, naming the variable. */
tridi_status tridi_tuning_adi_path(const char *func, int *path);

/* ---- context ---- */
struct tridi_cuda_state;

/* A range of host memory registered with tridi_host_register (register.c). */
typedef struct tridi_host_range {
    uintptr_t begin;
    size_t bytes;
    int pinned; /* 1: page-locked by tridi (unlocked on unregister); 0: CPU backend, or locked by the caller */
} tridi_host_range;

struct tridi_context_s {
    tridi_config config;
    tridi_tuning tuning;      /* the environment knobs, read once by tridi_create */
    tridi_backend backend;    /* resolved: CPU or CUDA */
    /* The backends' own states: the CPU backend's (every context: AUTO sends host arrays to it too) and the
     * CUDA backend's (a CUDA context). */
    struct tridi_cpu_state *cpu;
    struct tridi_cuda_state *cuda;
    tridi_host_range *ranges; /* registered host memory, in registration order */
    int nranges, ranges_cap;
    int plans;                /* live solve plans made with it (tridi_plan_create) */
    /* AUTO for host arrays (backend.c): inputs queued by tridi_upload_async since the last host solve on the
     * GPU (the next host solve goes to the GPU, which holds them), and the choices of tridi_solve already
     * stated with verbose (1: cpu, 2: gpu). */
    int auto_uploads_queued;
    int auto_said;
    int adi_plans;            /* live ADI plans made with it: they use its backend and device memory, so
                                 tridi_destroy refuses while any is alive */
    int thread_cap;           /* the most threads a CPU call takes (tridi_cpu_threads) */
    int in_use;               /* 1 while a solve runs on it (tridi_context_enter; decision 045) */
};

/* The OpenMP threads a CPU call of ctx may use: config.num_threads, or OpenMP's count at the call when it
 * is 0 (OMP_NUM_THREADS, omp_set_num_threads), capped either way at the processors OpenMP reports. */
int tridi_cpu_threads(tridi_context ctx);

/* A context is used by one thread at a time (decision 045): a solve entry point enters it (an atomic flag)
 * and leaves it on return; a call that finds it entered fails with TRIDI_ERROR_INVALID_VALUE naming f,
 * instead of sharing its worker pool and scratch with the other call. plan: the plan solved (named in the
 * message), or NULL. Internal calls made under an entered context do not enter it again. */
TRIDI_PRIVATE tridi_status tridi_context_enter(const char *f, tridi_context ctx, const void *plan);
TRIDI_PRIVATE void tridi_context_leave(tridi_context ctx);

/* TRIDI_ERROR_INVALID_HANDLE unless ctx is a live context (in the registry of live handles below). */
TRIDI_PRIVATE tridi_status tridi_check_context(const char *func, tridi_context ctx);

/* ---- the registry of live handles (context.c) ----
 * A handle is live from its creation until its destroy begins; every entry point asks the registry, by
 * the handle's value alone (a destroyed handle is never dereferenced), so a destroyed handle gives
 * TRIDI_ERROR_INVALID_HANDLE and a second destroy is refused. A destroyed handle's memory is kept until
 * TRIDI_HANDLE_BURIED_MAX more handles have been destroyed, so no new handle can take its address (and
 * be reached through the stale one) before then. */
#define TRIDI_HANDLE_BURIED_MAX 4096
typedef enum tridi_handle_kind {
    TRIDI_HANDLE_CONTEXT = 1,
    TRIDI_HANDLE_ADI = 2,
    TRIDI_HANDLE_PLAN = 3,
    TRIDI_HANDLE_DECOMP = 4, /* the MPI layer's decompositions and halo plans (src/mpi) */
    TRIDI_HANDLE_HALO = 5
} tridi_handle_kind;
/* Makes h live. 0, or -1 when out of memory (h is then not live). */
TRIDI_PRIVATE int tridi_handle_add(tridi_handle_kind kind, const void *h);
/* 1 when h is a live handle of that kind. */
TRIDI_PRIVATE int tridi_handle_is_live(tridi_handle_kind kind, const void *h);
/* The check every entry point makes of its handle argument: TRIDI_ERROR_INVALID_HANDLE with
 * "func: if_null" for NULL, "func: if_dead" for a handle that is not live; else TRIDI_SUCCESS. */
TRIDI_PRIVATE tridi_status tridi_check_handle(tridi_handle_kind kind, const void *h, const char *func,
                                              const char *if_null, const char *if_dead);
/* Ends h's life: 1 when it was live, 0 when it was not (a stale or foreign handle, or a destroy that
 * another thread won). The winner releases what h holds, then buries it. */
TRIDI_PRIVATE int tridi_handle_retire(tridi_handle_kind kind, const void *h);
/* Takes a retired handle's memory (malloc'd, `bytes` long) instead of free(): it is freed later, oldest
 * first (in the ASan build it is poisoned meanwhile, so a read of it is reported). */
TRIDI_PRIVATE void tridi_handle_bury(void *h, size_t bytes);

/* A solve plan (plan.c): the validated problem (p.arrays set per call), the caller's memory and stream, and
 * the backend's own state for it. */
struct tridi_plan_s {
    tridi_context ctx;
    tridi_problem p;
    int empty;            /* the box is empty along a used axis: every solve is a no-op success */
    tridi_memory memory;
    void *stream;
    void *backend_state;  /* owned by the backend (plan_create / plan_destroy of its table) */
    /* Host plans of an AUTO context on the GPU: 0 undecided, 1 the GPU, 2 the CPU backend, per set of
     * registered arrays (bit r: array r of lower, diag, upper, rhs, x); see tridi_host_ops (backend.h). */
    signed char auto_host[32];
};

/* 1 when [ptr, ptr + bytes) lies wholly inside one registered range of ctx (register.c). */
int tridi_host_is_registered(tridi_context ctx, const void *ptr, size_t bytes);
/* Unregisters every range (tridi_destroy). */
void tridi_host_unregister_all(tridi_context ctx);

/* ---- pivot growth check and partial-pivoting fallback (pivot.c) ---- */
/* A host-array solve under p->pivoting CHECK or FALLBACK: classifies every line, then either fails
 * (TRIDI_ERROR_UNSTABLE), has the guard (backend.h) solve p on ops, or answers the box itself. Its own
 * failures leave x unchanged (TRIDI_ON_ERROR_CALL) whatever p->on_error says: under LINES it is
 * stricter than asked. */
struct tridi_backend_ops;
TRIDI_PRIVATE tridi_status tridi_pivot_solve(const char *func, tridi_context ctx, const tridi_problem *p,
                                             const struct tridi_backend_ops *ops);

/* ---- CPU backend (cpu_solve.c) ---- */
/* Its state, one per context, made by tridi_create (tridi_cpu_state_create, backend_cpu.c). */
typedef struct tridi_cpu_state {
    /* Scratch kept between calls: per-thread workspaces (W, G, x-sweep tiles) and the undo log that
     * restores x when a line fails, so no partial answer reaches the caller. */
    void *scratch;
    size_t scratch_bytes;
    struct tridi_cpu_pool *pool; /* the worker threads, made by the first call that wants them */
    /* A kept solve (tridi_cpu_solve_keep): x written, its undo log still in scratch. */
    int kept, kept_threads;
    tridi_problem kept_p;
} tridi_cpu_state;
/* NULL when out of memory. */
tridi_cpu_state *tridi_cpu_state_create(void);
void tridi_cpu_state_destroy(tridi_cpu_state *cs);
/* A solve under ON_ERROR_LINES, in one phase (the guard's block-save strategy); CALL goes through the
 * two phases below (the undo log), which the guard (src/backend.h) runs. */
tridi_status tridi_cpu_solve(tridi_context ctx, const tridi_problem *p);
/* The two phases of ON_ERROR_CALL (backend.h; docs/decisions/020): the solve writes x and keeps its undo
 * log, whatever its status; then the commit drops the log or the rollback puts x back from it. Any other
 * CPU solve on the context in between drops the log (the rollback then does nothing: call them in order). */
tridi_status tridi_cpu_solve_keep(tridi_context ctx, const tridi_problem *p);
void tridi_cpu_commit(tridi_context ctx);
void tridi_cpu_rollback(tridi_context ctx);

/* ---- CUDA backend (cuda/, only when built with TRIDI_HAVE_CUDA) ----
 * Every function returns a status and sets the message through tridi_fail; none exits or resets
 * the device. */
#ifdef TRIDI_HAVE_CUDA
/* Number of usable CUDA devices (0 when the driver or device is missing; never an error). */
int tridi_cuda_device_count(void);
tridi_status tridi_cuda_create(int device, const tridi_config *config, const tridi_tuning *tuning,
                               struct tridi_cuda_state **out);
void tridi_cuda_destroy(struct tridi_cuda_state *st);
/* registered[r]: array r (lower, diag, upper, rhs, x) lies in registered host memory: moved by DMA
 * straight from/to the caller's array instead of through pinned staging. */
tridi_status tridi_cuda_solve_host(struct tridi_cuda_state *st, const tridi_problem *p, const int registered[5]);
tridi_status tridi_cuda_upload_async(struct tridi_cuda_state *st, const tridi_problem *p,
                                     tridi_array_role role, const void *host, tridi_dtype type, int registered);
/* Page-locks [ptr, ptr + bytes); *pinned = 0 when the caller had already locked it (then left to it). */
tridi_status tridi_cuda_host_register(struct tridi_cuda_state *st, const void *ptr, size_t bytes, int *pinned);
/* Waits for the context's transfers, then unlocks the range if pinned. */
tridi_status tridi_cuda_host_unregister(struct tridi_cuda_state *st, const void *ptr, int pinned);
tridi_status tridi_cuda_solve_device(struct tridi_cuda_state *st, const tridi_problem *p, void *stream);
/* A device plan's state (the kernel chosen for its shape and contract), and its solves. The solve honours
 * p->on_error and p->verdict (DEFERRED: failures reported by tridi_cuda_synchronize, naming the call). */
tridi_status tridi_cuda_plan_create(struct tridi_cuda_state *st, const tridi_problem *p, void **state);
void tridi_cuda_plan_destroy(struct tridi_cuda_state *st, void *state);
tridi_status tridi_cuda_solve_device_plan(struct tridi_cuda_state *st, const tridi_problem *p, void *state,
                                          void *stream);
/* The two phases of ON_ERROR_CALL on device pointers (src/backend.h; docs/decisions/020): a device solve
 * whose answers wait in the context's box (its verdict collected by tridi_cuda_synchronize as usual), then
 * either the commit (the commit kernel copies the box into x if the verdict word is clear) or the rollback
 * (the box is dropped, x was never written). Any other device solve on the context in between drops the
 * kept answers (the commit then does nothing: call them in order). */
tridi_status tridi_cuda_solve_keep(struct tridi_cuda_state *st, const tridi_problem *p, void *stream);
tridi_status tridi_cuda_commit(struct tridi_cuda_state *st, void *stream);
void tridi_cuda_rollback(struct tridi_cuda_state *st);
/* The same two phases on host arrays (backend_cuda.c; cuda/host_box.cu): keep packs the old box of p's x
 * on the host, drop forgets it (the commit), restore unpacks it into x (the rollback; nothing when no box
 * is kept). */
tridi_status tridi_cuda_host_keep(struct tridi_cuda_state *st, const tridi_problem *p);
void tridi_cuda_host_drop(struct tridi_cuda_state *st);
void tridi_cuda_host_restore(struct tridi_cuda_state *st);
tridi_status tridi_cuda_alloc(struct tridi_cuda_state *st, size_t bytes, void **ptr);
tridi_status tridi_cuda_free(struct tridi_cuda_state *st, void *ptr);
tridi_status tridi_cuda_copy(struct tridi_cuda_state *st, void *dst, const void *src, size_t bytes,
                             int to_device);
tridi_status tridi_cuda_synchronize(struct tridi_cuda_state *st);
/* A failed CUDA call as a status, the one conversion of the backend and the MPI layer (cuda_status.cu):
 * OUT_OF_MEMORY for an allocation failure (cleared: not sticky), else TRIDI_ERROR_CUDA; the message is
 * "who: what: CUDA's text (its name)". error: a cudaError_t. */
TRIDI_PRIVATE tridi_status tridi_cuda_fail(const char *who, const char *what, int error);
/* Device memory of the MPI layer's solves, counted against the context's TRIDI_DEVICE_MEMORY_LIMIT
 * (cuda/memory.cu, docs/decisions/049). The scratch buffers are the context's, kept between solves and
 * freed with it; *p is the buffer grown to at least bytes (its contents are not kept). */
typedef enum tridi_cuda_scratch_id {
    TRIDI_CUDA_SCRATCH_WORK,  /* device: G, W, S, the undo copy of x, the sub-blocks' coefficients */
    TRIDI_CUDA_SCRATCH_SMALL, /* device: reduced coefficients, then x_L, x_R, and the failure word */
    TRIDI_CUDA_SCRATCH_COEF,  /* pinned host: reduced coefficients and failure words from the device */
    TRIDI_CUDA_SCRATCH_ENDS,  /* pinned host: x_L, x_R to the device */
    TRIDI_CUDA_SCRATCH_COUNT
} tridi_cuda_scratch_id;
TRIDI_PRIVATE tridi_status tridi_cuda_scratch(struct tridi_cuda_state *st, tridi_cuda_scratch_id id, size_t bytes,
                                              void **p);
/* A device buffer of one call (purpose: named in the out-of-memory message), and its release. */
TRIDI_PRIVATE tridi_status tridi_cuda_budget_alloc(struct tridi_cuda_state *st, size_t bytes, const char *purpose,
                                                   void **p);
TRIDI_PRIVATE void tridi_cuda_budget_free(struct tridi_cuda_state *st, void *p, size_t bytes);
/* A device buffer that a decomposition holds and exports to its peers through CUDA IPC (handle: the
 * TRIDI_CUDA_IPC_HANDLE_BYTES of its cudaIpcMemHandle_t). It may outlive st, so st's budget only
 * refuses it (it would pass the limit) and does not keep it counted; tridi_cuda_ipc_unexport frees it. */
#define TRIDI_CUDA_IPC_HANDLE_BYTES 64
TRIDI_PRIVATE tridi_status tridi_cuda_ipc_export(struct tridi_cuda_state *st, size_t bytes, void **buf,
                                                 void *handle);
TRIDI_PRIVATE void tridi_cuda_ipc_unexport(void *buf, size_t bytes);
#endif

#ifdef TRIDI_FAULT_INJECTION
/* Test-only hooks of a fault-injection build (never installed): the n-th kernel launch from now fails
 * (cuda/cuda_status.cu), the n-th successful first phase gets a failed verdict (backend.c). */
TRIDI_PRIVATE void tridi_test_fail_launch(int nth);
TRIDI_PRIVATE void tridi_test_fail_verdict(int nth);
#endif

#ifdef __cplusplus
}
#endif

#endif
