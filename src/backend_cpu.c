/* The CPU backend's table and state: solves on host arrays by cpu_solve.c; no device memory, nothing
 * queued. */
#include "adi_internal.h"
#include "backend.h"
#include "cpu_pool.h"

#include <stdlib.h>

tridi_cpu_state *tridi_cpu_state_create(void) { return calloc(1, sizeof(tridi_cpu_state)); }

void tridi_cpu_state_destroy(tridi_cpu_state *cs)
{
    if (!cs)
        return;
    tridi_cpu_pool_destroy(cs->pool);
    free(cs->scratch);
    free(cs);
}

static tridi_status cpu_plan_create(tridi_context ctx, struct tridi_plan_s *plan)
{
    (void)ctx;
    if (plan->memory == TRIDI_MEMORY_DEVICE)
        return tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                          "tridi_plan_create: options->memory = TRIDI_MEMORY_DEVICE needs the CUDA backend; this "
                          "context uses the cpu backend");
    plan->backend_state = NULL; /* the CPU keeps its scratch in its state, sized by the largest call */
    return TRIDI_SUCCESS;
}

static void cpu_plan_destroy(tridi_context ctx, struct tridi_plan_s *plan) { (void)ctx, (void)plan; }

/* The guard's CPU strategies (backend.h): LINES with its own verdict in one phase (each block's rows in its
 * thread's save), else the undo log's two phases. */
static int cpu_guard(tridi_context ctx, const tridi_problem *p, tridi_memory memory, int outside)
{
    (void)ctx, (void)memory;
    return p->on_error == TRIDI_ON_ERROR_LINES && !outside ? TRIDI_GUARD_LINE_SAVE : TRIDI_GUARD_UNDO_LOG;
}

static tridi_status cpu_solve_host(tridi_context ctx, const tridi_problem *p) { return tridi_cpu_solve(ctx, p); }

static tridi_status no_device(const char *what);

/* The undo log's two phases (cpu_solve.c). Host arrays only: device
 * pointers never reach a CPU context (the entry points refuse them first). */
static tridi_status cpu_solve_keep(tridi_context ctx, const tridi_problem *p, tridi_memory memory, void *stream)
{
    (void)stream;
    if (memory != TRIDI_MEMORY_HOST)
        return no_device(p->func);
    return tridi_cpu_solve_keep(ctx, p);
}

static tridi_status cpu_commit(tridi_context ctx, tridi_memory memory, void *stream)
{
    (void)memory, (void)stream;
    tridi_cpu_commit(ctx);
    return TRIDI_SUCCESS;
}

static tridi_status cpu_rollback(tridi_context ctx, tridi_memory memory, void *stream)
{
    (void)memory, (void)stream;
    tridi_cpu_rollback(ctx);
    return TRIDI_SUCCESS;
}

static tridi_status no_device(const char *what)
{
    return tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: device-resident data needs the CUDA backend; this context uses "
                      "the cpu backend", what);
}

static tridi_status cpu_solve_device(tridi_context ctx, const tridi_problem *p, void *state, void *stream)
{
    (void)ctx, (void)p, (void)state, (void)stream;
    return no_device("tridi_solve_device");
}

static tridi_status cpu_upload(tridi_context ctx, const tridi_problem *p, tridi_array_role role, const void *host,
                               tridi_dtype type)
{
    (void)ctx, (void)p, (void)role, (void)host, (void)type;
    return TRIDI_SUCCESS; /* the CPU backend reads the caller's arrays in place */
}

static tridi_status cpu_host_register(tridi_context ctx, const void *ptr, size_t bytes, int *pinned)
{
    (void)ctx, (void)ptr, (void)bytes;
    *pinned = 0; /* recorded by register.c, pins nothing */
    return TRIDI_SUCCESS;
}

static tridi_status cpu_host_unregister(tridi_context ctx, const void *ptr, int pinned)
{
    (void)ctx, (void)ptr, (void)pinned;
    return TRIDI_SUCCESS;
}

static tridi_status cpu_alloc(tridi_context ctx, size_t bytes, void **ptr)
{
    (void)ctx, (void)bytes, (void)ptr;
    return no_device("tridi_device_alloc");
}

static tridi_status cpu_free(tridi_context ctx, void *ptr)
{
    (void)ctx, (void)ptr;
    return no_device("tridi_device_free");
}

static tridi_status cpu_copy(tridi_context ctx, void *dst, const void *src, size_t bytes, int to_device)
{
    (void)ctx, (void)dst, (void)src, (void)bytes;
    return no_device(to_device ? "tridi_copy_to_device" : "tridi_copy_to_host");
}

static tridi_status cpu_synchronize(tridi_context ctx)
{
    (void)ctx;
    return TRIDI_SUCCESS; /* every CPU solve returned its status */
}

const tridi_backend_ops tridi_backend_cpu_ops = {
    .name = "cpu",
    .plan_create = cpu_plan_create,
    .plan_destroy = cpu_plan_destroy,
    .guard = cpu_guard,
    .solve_host = cpu_solve_host,
    .solve_device = cpu_solve_device,
    .solve_keep = cpu_solve_keep,
    .commit = cpu_commit,
    .rollback = cpu_rollback,
    .upload = cpu_upload,
    .host_register = cpu_host_register,
    .host_unregister = cpu_host_unregister,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy = cpu_copy,
    .synchronize = cpu_synchronize,
    .adi = &tridi_adi_cpu_ops,
};
