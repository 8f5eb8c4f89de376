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
    /* A solve on host arrays. */
    tridi_status (*solve_host)(tridi_context ctx, const tridi_problem *p);
    /* A solve on device pointers; plan_state: a plan's state, or NULL (the convenience call). */
    tridi_status (*solve_device)(tridi_context ctx, const tridi_problem *p, void *plan_state, void *stream);
    tridi_status (*upload)(tridi_context ctx, const tridi_problem *p, tridi_array_role role, const void *host,
                           tridi_dtype type);
    tridi_status (*host_register)(tridi_context ctx, const void *ptr, size_t bytes, int *pinned);
    tridi_status (*host_unregister)(tridi_context ctx, const void *ptr, int pinned);
    tridi_status (*alloc)(tridi_context ctx, size_t bytes, void **ptr);
    tridi_status (*free)(tridi_context ctx, void *ptr);
    tridi_status (*copy)(tridi_context ctx, void *dst, const void *src, size_t bytes, int to_device);
    /* Waits for the context's queued work and reports the first deferred failure. */
    tridi_status (*synchronize)(tridi_context ctx);
} tridi_backend_ops;

extern const tridi_backend_ops tridi_backend_cpu_ops;
extern const tridi_backend_ops tridi_backend_cuda_ops;

/* A validated host-array solve of ctx through its backend, pivoting aside (solve.c). */
tridi_status tridi_solve_host_problem(tridi_context ctx, const tridi_problem *p);

/* The table of the backend ctx uses. */
const tridi_backend_ops *tridi_backend_of(tridi_context ctx);

#endif
