/* The backends behind one table of functions: the dispatch (solve.c, plan.c) calls through it and never
 * asks which backend it holds. A build without CUDA supplies a CUDA table of stubs (backend_nocuda.c);
 * a context only ever holds the CUDA backend when it was built in. */
#ifndef TRIDI_BACKEND_H
#define TRIDI_BACKEND_H

#include "tridi_internal.h"

typedef struct tridi_backend_ops {
    const char *name;
    /* The backend's per-plan state (NULL when it keeps none), made once per plan. */
    tridi_status (*plan_create)(tridi_context ctx, struct tridi_plan_s *plan);
    void (*plan_destroy)(tridi_context ctx, struct tridi_plan_s *plan);
    /* The guard's strategy for a solve of p in memory (the planner's choice; below, tridi_guard_solve);
     * outside: the verdict is reached outside the solve (the MPI layer's agreement). */
    int (*guard)(tridi_context ctx, const tridi_problem *p, tridi_memory memory, int outside);
    /* The one-phase strategies: the solve applies the verdict itself, per line (LINES) or for the call,
     * on host arrays or (plan_state: a plan's state, or NULL) on device pointers queued on stream. */
    tridi_status (*solve_host)(tridi_context ctx, const tridi_problem *p);
    tridi_status (*solve_device)(tridi_context ctx, const tridi_problem *p, void *plan_state, void *stream);
    /* The two-phase strategies (docs/decisions/020): solve_keep answers p (host arrays, or device pointers
     * queued on stream) and keeps, whatever its status, what lets x be put back; after the verdict exactly
     * one of commit (what was kept is dropped) or rollback (x as it was) follows, with the same memory and
     * stream, before any other solve on the context. A solve_keep that failed before it wrote x keeps
     * nothing: commit and rollback then do nothing. Device keeps: the verdict is read with synchronize. */
    tridi_status (*solve_keep)(tridi_context ctx, const tridi_problem *p, tridi_memory memory, void *stream);
    tridi_status (*commit)(tridi_context ctx, tridi_memory memory, void *stream);
    tridi_status (*rollback)(tridi_context ctx, tridi_memory memory, void *stream);
    tridi_status (*upload)(tridi_context ctx, const tridi_problem *p, tridi_array_role role, const void *host,
                           tridi_dtype type);
    tridi_status (*host_register)(tridi_context ctx, const void *ptr, size_t bytes, int *pinned);
    tridi_status (*host_unregister)(tridi_context ctx, const void *ptr, int pinned);
    tridi_status (*alloc)(tridi_context ctx, size_t bytes, void **ptr);
    tridi_status (*free)(tridi_context ctx, void *ptr);
    tridi_status (*copy)(tridi_context ctx, void *dst, const void *src, size_t bytes, int to_device);
    /* Waits for the context's queued work and reports the first deferred failure. */
    tridi_status (*synchronize)(tridi_context ctx);
    /* ADI plans (adi_internal.h): what an ADI plan's path, work memory, stages, fused sweeps, timer and
     * deferred verdict are on this backend; its solves go through the plan operations above. */
    const struct tridi_adi_ops *adi;
} tridi_backend_ops;

extern const tridi_backend_ops tridi_backend_cpu_ops;
extern const tridi_backend_ops tridi_backend_cuda_ops;

/* The table of the backend ctx uses. */
TRIDI_PRIVATE const tridi_backend_ops *tridi_backend_of(tridi_context ctx);

/* ---- The one guard (docs/decisions/053) ----
 * A failing answer never reaches x except as the verdict policy allows: LINES, a line's own verdict (its
 * failure leaves it untouched, the others are answered), or CALL, one verdict for the call (the solve's own
 * status, or every rank's agreed by the MPI layer). Every solve goes through tridi_guard_solve: the
 * strategy the backend picks either applies the verdict inside the solve (one phase) or keeps what puts x
 * back (solve_keep), then tridi_guard_settle reaches the verdict and commits or rolls back.
 * docs/architecture.md lists the strategy of every path. */
typedef enum tridi_guard_strategy {
    TRIDI_GUARD_LINE_SAVE = 0,    /* CPU, LINES: each block's old rows in its thread's save, failing lines put back */
    TRIDI_GUARD_UNDO_LOG = 1,     /* CPU, CALL: the old x of every written block in the call's undo log */
    TRIDI_GUARD_SLAB_VERDICT = 2, /* CUDA host arrays, own verdict: answers leave the GPU past their verdict */
    TRIDI_GUARD_HOST_BOX = 3,     /* CUDA host arrays, outside verdict: x's old box packed on the host */
    TRIDI_GUARD_DEVICE_VERDICT = 4, /* CUDA device arrays, own verdict: x written on the GPU past its verdict */
    TRIDI_GUARD_ANSWER_BOX = 5,   /* CUDA device arrays, outside verdict: answers in the context's box */
    TRIDI_GUARD_CHECK_THEN_WRITE = 6, /* pivot fallback (pivot.c): every line checked before any is written */
    TRIDI_GUARD_CUT_UNDO = 7      /* MPI cut solves: each rank's old x in an undo copy (host or device) */
} tridi_guard_strategy;

/* Strategies whose solve applies the verdict itself. */
static inline int tridi_guard_one_phase(int g)
{
    return g == TRIDI_GUARD_LINE_SAVE || g == TRIDI_GUARD_SLAB_VERDICT || g == TRIDI_GUARD_DEVICE_VERDICT ||
           g == TRIDI_GUARD_CHECK_THEN_WRITE;
}

/* The verdict on a solve: decide(arg, own) makes the call's verdict from the solve's own status (NULL: own
 * is the verdict). own is an input where this rank has no part to solve; call is the guard's output. */
typedef struct tridi_guard_verdict {
    tridi_status (*decide)(void *arg, tridi_status own);
    void *arg;
    tridi_status own, call;
} tridi_guard_verdict;

/* The second phase of a strategy: commit drops what was kept, rollback puts x back (NULL: nothing to do). */
typedef struct tridi_guard_phases {
    tridi_status (*commit)(void *self);
    tridi_status (*rollback)(void *self);
    void *self;
} tridi_guard_phases;

/* The verdict on own (the first phase's status), then exactly one of commit and rollback (ph NULL: this rank
 * kept nothing). Returns the verdict when it fails (a rollback's own failure before it: x may be wrong
 * then), else the commit's status. */
TRIDI_PRIVATE tridi_status tridi_guard_settle(tridi_status own, tridi_guard_verdict *v, const tridi_guard_phases *ph);

/* tridi_guard_settle with the backend's commit and rollback. */
TRIDI_PRIVATE tridi_status tridi_guard_settle_backend(tridi_context ctx, const tridi_backend_ops *ops,
                                                      tridi_memory memory, void *stream, tridi_status own,
                                                      tridi_guard_verdict *v);

/* Every solve's way to its backend: p in memory (plan_state, stream: device solves), its verdict v (NULL:
 * its own status). p NULL: this rank has no part to solve but takes part in the verdict (v->own). Host
 * arrays under config.pivoting go through the pivot pass first, which calls back with TRIDI_PIVOT_NONE.
 * Inlined into its callers: a model's call reaches the kernel through no frame of the guard
 * (docs/architecture.md counts them). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline tridi_status tridi_guard_solve(tridi_context ctx, const tridi_backend_ops *ops, const tridi_problem *p,
                                             tridi_memory memory, void *plan_state, void *stream, tridi_guard_verdict *v)
{
    if (!p)
        return tridi_guard_settle(v->own, v, NULL);
    const int outside = v && v->decide;
    if (memory == TRIDI_MEMORY_HOST && p->pivoting != TRIDI_PIVOT_NONE && !outside)
        return tridi_pivot_solve(p->func, ctx, p, ops);
    const int g = ops->guard(ctx, p, memory, outside);
    if (tridi_guard_one_phase(g)) {
        const tridi_status s = memory == TRIDI_MEMORY_DEVICE ? ops->solve_device(ctx, p, plan_state, stream)
                                                             : ops->solve_host(ctx, p);
        if (v)
            v->own = v->call = s;
        return s;
    }
    const tridi_status s = ops->solve_keep(ctx, p, memory, stream);
    return tridi_guard_settle_backend(ctx, ops, memory, stream, s, v);
}

/* ---- AUTO for host arrays (backend.c, docs/decisions/018) ----
 * A context made with TRIDI_BACKEND_AUTO that resolved to CUDA solves host arrays on whichever of the GPU
 * path and the CPU backend a model of PCIe and host bandwidth says is faster. */
typedef struct tridi_auto_machine {
    double h2d_bytes_per_s, d2h_bytes_per_s; /* pinned PCIe copies */
    double gpu_call_s;                       /* a host-array GPU call beyond its transfers */
    double thread_bytes_per_s;               /* host bandwidth (read + write) one thread draws */
    double host_bytes_per_s;                 /* host bandwidth (read + write) of all threads together */
    double pool_late_s;                      /* a call on the CPU backend's pool (docs/decisions/028) after a
                                                model's serial work, beyond its bandwidth time: pool_late_s *
                                                (t - 1) seconds for t threads */
    double team_wake_s;                      /* the same on an OpenMP team per call whose threads slept through
                                                that work: team_wake_s * (t - 1)^2 seconds */
} tridi_auto_machine;

/* How a CPU call reaches its threads, which sets what it costs after the caller's serial work. */
typedef enum tridi_auto_cpu_threads {
    TRIDI_AUTO_CPU_POOL = 0,      /* tridi's worker pool: joins late, never waits for a waking thread */
    TRIDI_AUTO_CPU_TEAM = 1,      /* an OpenMP team per call, its threads asleep (TRIDI_CPU_POOL=0) */
    TRIDI_AUTO_CPU_TEAM_AWAKE = 2 /* an OpenMP team whose threads spin (OMP_WAIT_POLICY=active) */
} tridi_auto_cpu_threads;

/* The H100 machine's host and link, from docs/performance.md (backend.c says which figure is which). */
extern const tridi_auto_machine tridi_auto_h100_host;

/* One host-array solve as the model sees it; bytes are per box cell. */
typedef struct tridi_auto_call {
    int64_t cells;    /* cells of the box */
    int host_bytes;   /* the five arrays in the caller's types (what the CPU reads and writes) */
    int x_bytes;      /* x */
    int pcie_in_bytes; /* the four inputs as they cross PCIe (narrowed by allow_f32_transfer); x comes back */
    int staged_bytes; /* the arrays the GPU path copies through pinned staging (not registered, or narrowed) */
    int threads;      /* the threads the context offers a CPU call */
    tridi_auto_cpu_threads how; /* how the CPU call would run them */
} tridi_auto_call;

typedef struct tridi_auto_estimate {
    double gpu_s, cpu_s; /* modelled time of the call on each path */
    int cpu_threads;     /* the threads the CPU call would take (docs/decisions/017) */
    int use_cpu;         /* 1: the CPU backend (also on a tie: it moves nothing over PCIe) */
} tridi_auto_estimate;

/* The model itself: a pure function of its arguments. */
tridi_auto_estimate tridi_auto_estimate_host(const tridi_auto_machine *m, const tridi_auto_call *c);

/* The table a host-array solve of p goes through: the context's, except on an AUTO context that resolved to
 * CUDA, where the CPU backend takes the calls the model gives it. memo: a plan's choices, one per set of
 * registered arrays (decided and, with verbose, stated once each); NULL for tridi_solve (decided per call,
 * each backend stated once per context). */
TRIDI_PRIVATE const tridi_backend_ops *tridi_host_ops(tridi_context ctx, const tridi_problem *p, signed char memo[32]);

#endif
