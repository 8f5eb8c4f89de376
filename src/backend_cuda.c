/* The CUDA backend's table: the functions of cuda/ declared under TRIDI_HAVE_CUDA in tridi_internal.h. */
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

const tridi_backend_ops tridi_backend_cuda_ops = {
    "cuda",       cuda_plan_create, cuda_plan_destroy, cuda_solve_host, cuda_solve_device, cuda_upload,
    cuda_host_register, cuda_host_unregister, cuda_alloc, cuda_free, cuda_copy, cuda_synchronize,
};
