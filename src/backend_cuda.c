/* The CUDA backend's table: the functions of cuda/ declared under TRIDI_HAVE_CUDA in tridi_internal.h, and
 * of cuda/adi_stage.cu and cuda/adi in adi_internal.h. */
#include "adi_internal.h"
#include "backend.h"

static tridi_status cuda_plan_create(tridi_context ctx, struct tridi_plan_s *plan)
{
    plan->backend_state = NULL;
    if (plan->memory != TRIDI_MEMORY_DEVICE || plan->empty)
        return TRIDI_SUCCESS; /* host plans run the host pipeline, whose buffers the context keeps */
    return tridi_cuda_plan_create(ctx->cuda, &plan->p, &plan->backend_state);
}

static void cuda_plan_destroy(tridi_context ctx, struct tridi_plan_s *plan)
{
    tridi_cuda_plan_destroy(ctx->cuda, plan->backend_state);
    plan->backend_state = NULL;
}

/* The guard's CUDA strategies (backend.h): with its own verdict a solve applies it on the GPU (device
 * arrays: grid barrier, lane agreement or answer box and commit kernel, as the device planner chose) or
 * as its answers leave the GPU (host arrays: the x paths of host_pipeline.cu); with a verdict from outside,
 * the answers wait in the context's box (device arrays) or x's old box is packed on the host. */
static int cuda_guard(tridi_context ctx, const tridi_problem *p, tridi_memory memory, int outside)
{
    (void)ctx, (void)p;
    if (memory == TRIDI_MEMORY_DEVICE)
        return outside ? TRIDI_GUARD_ANSWER_BOX : TRIDI_GUARD_DEVICE_VERDICT;
    return outside ? TRIDI_GUARD_HOST_BOX : TRIDI_GUARD_SLAB_VERDICT;
}

/* Arrays lying in memory given to tridi_host_register move by DMA straight from/to the caller's array. */
static tridi_status cuda_solve_host(tridi_context ctx, const tridi_problem *p)
{
    const tridi_arrays *a = &p->arrays;
    const void *ptr[5] = {a->lower, a->diag, a->upper, a->rhs, a->x};
    const tridi_dtype type[5] = {a->lower_type, a->diag_type, a->upper_type, a->rhs_type, a->x_type};
    int registered[5];
    for (int r = 0; r < 5; ++r)
        registered[r] = tridi_host_is_registered(ctx, ptr[r], (size_t)p->total_cells * tridi_dtype_size(type[r]));
    return tridi_cuda_solve_host(ctx->cuda, p, registered);
}

/* The two-phase strategies (backend.h), for a verdict from outside. Host arrays: the old box of x is packed on the host first
 * (one pass over the box, tridi_cuda_host_keep), then the host pipeline solves under its own CALL guard
 * (x unchanged if this call fails); the rollback unpacks the box. Device pointers: the answers wait in
 * the context's answer box until the commit kernel copies them into x. */
static tridi_status cuda_solve_keep(tridi_context ctx, const tridi_problem *p, tridi_memory memory, void *stream)
{
    if (memory == TRIDI_MEMORY_DEVICE)
        return tridi_cuda_solve_keep(ctx->cuda, p, stream);
    tridi_status s = tridi_cuda_host_keep(ctx->cuda, p);
    if (s)
        return s;
    tridi_problem call = *p;
    call.on_error = TRIDI_ON_ERROR_CALL;
    return cuda_solve_host(ctx, &call);
}

static tridi_status cuda_commit(tridi_context ctx, tridi_memory memory, void *stream)
{
    if (memory == TRIDI_MEMORY_DEVICE)
        return tridi_cuda_commit(ctx->cuda, stream);
    tridi_cuda_host_drop(ctx->cuda);
    return TRIDI_SUCCESS;
}

static tridi_status cuda_rollback(tridi_context ctx, tridi_memory memory, void *stream)
{
    (void)stream;
    if (memory == TRIDI_MEMORY_DEVICE) {
        tridi_cuda_rollback(ctx->cuda); /* the answers never left the context's box */
        return TRIDI_SUCCESS;
    }
    tridi_cuda_host_restore(ctx->cuda);
    return TRIDI_SUCCESS;
}

static tridi_status cuda_solve_device(tridi_context ctx, const tridi_problem *p, void *state, void *stream)
{
    return state ? tridi_cuda_solve_device_plan(ctx->cuda, p, state, stream)
                 : tridi_cuda_solve_device(ctx->cuda, p, stream);
}

static tridi_status cuda_upload(tridi_context ctx, const tridi_problem *p, tridi_array_role role, const void *host,
                                tridi_dtype type)
{
    return tridi_cuda_upload_async(ctx->cuda, p, role, host, type,
                                   tridi_host_is_registered(ctx, host, (size_t)p->total_cells * tridi_dtype_size(type)));
}

static tridi_status cuda_host_register(tridi_context ctx, const void *ptr, size_t bytes, int *pinned)
{
    return tridi_cuda_host_register(ctx->cuda, ptr, bytes, pinned);
}

static tridi_status cuda_host_unregister(tridi_context ctx, const void *ptr, int pinned)
{
    return tridi_cuda_host_unregister(ctx->cuda, ptr, pinned);
}

static tridi_status cuda_alloc(tridi_context ctx, size_t bytes, void **ptr)
{
    return tridi_cuda_alloc(ctx->cuda, bytes, ptr);
}

static tridi_status cuda_free(tridi_context ctx, void *ptr) { return tridi_cuda_free(ctx->cuda, ptr); }

static tridi_status cuda_copy(tridi_context ctx, void *dst, const void *src, size_t bytes, int to_device)
{
    return tridi_cuda_copy(ctx->cuda, dst, src, bytes, to_device);
}

static tridi_status cuda_synchronize(tridi_context ctx) { return tridi_cuda_synchronize(ctx->cuda); }

/* Device arrays are not read by the host before a step (that would need a read-back): a non-finite input
 * shows as the failure of a sweep's line that reads it, and its message stays the solve's. */
static tridi_status cuda_adi_check_inputs(const char *f, const struct tridi_adi_s *plan, const void *field,
                                          double *kappa_max)
{
    (void)f, (void)plan, (void)field;
    *kappa_max = 0.0;
    return TRIDI_SUCCESS;
}

static tridi_status cuda_adi_explain(const char *f, const struct tridi_adi_s *plan, int axis, double dt,
                                     tridi_status s)
{
    (void)f, (void)plan, (void)axis, (void)dt;
    return s;
}

static const tridi_adi_ops cuda_adi = {
    .memory = TRIDI_MEMORY_DEVICE,
    .create = tridi_adi_cuda_create,
    .destroy = tridi_adi_cuda_destroy,
    .check_inputs = cuda_adi_check_inputs,
    .explain = cuda_adi_explain,
    .stage = tridi_adi_cuda_plan_stage,
    .fused_sweep = tridi_adi_cuda_plan_sweep,
    .mark = tridi_adi_cuda_mark,
    .finish = tridi_adi_cuda_finish,
    .wait = tridi_adi_cuda_wait,
};

const tridi_backend_ops tridi_backend_cuda_ops = {
    .name = "cuda",
    .plan_create = cuda_plan_create,
    .plan_destroy = cuda_plan_destroy,
    .guard = cuda_guard,
    .solve_host = cuda_solve_host,
    .solve_device = cuda_solve_device,
    .solve_keep = cuda_solve_keep,
    .commit = cuda_commit,
    .rollback = cuda_rollback,
    .upload = cuda_upload,
    .host_register = cuda_host_register,
    .host_unregister = cuda_host_unregister,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy = cuda_copy,
    .synchronize = cuda_synchronize,
    .adi = &cuda_adi,
};
