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
    /* A solve on host arrays, under p->on_error: ON_ERROR_LINES in one phase, ON_ERROR_CALL as below with
     * the call's own status as the verdict. */
    tridi_status (*solve_host)(tridi_context ctx, const tridi_problem *p);
    /* A solve on device pointers; plan_state: a plan's state, or NULL (the convenience call). */
    tridi_status (*solve_device)(tridi_context ctx, const tridi_problem *p, void *plan_state, void *stream);
    /* ON_ERROR_CALL in two phases (docs/decisions/020). solve_keep answers p (host arrays, or device
     * pointers queued on stream when memory is TRIDI_MEMORY_DEVICE) and keeps, whatever its status, what
     * lets x be put back. Then a verdict is reached outside the backend (the status itself on one rank,
     * every rank's agreed in the MPI layer), and exactly one of commit (the answers stand; what was kept is
     * dropped) or rollback (x as it was before solve_keep) follows, with the same memory and stream,
     * before any other solve on the context. A solve_keep that failed before it wrote x keeps nothing:
     * commit and rollback then do nothing. Device keeps: the verdict is read with synchronize first. */
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
