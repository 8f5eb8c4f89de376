/* Public entry points for solves, uploads and device memory: validate, then dispatch through the
 * context's backend table (backend.h), every solve under the one guard (tridi_guard_solve). */
#include "backend.h"

/* tridi_solve and tridi_solve_device with on_error and the arithmetic given (the convenience calls pass the
 * context's on_error and MOHID's arithmetic). Messages name tridi_solve / tridi_solve_device. */
static tridi_status solve_as(tridi_context ctx, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                             const int64_t hi[3], const tridi_arrays *arrays, tridi_on_error on_error,
                             tridi_arith arith);
static tridi_status solve_device_as(tridi_context ctx, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                                    const int64_t hi[3], const tridi_arrays *device_arrays, void *stream,
                                    tridi_on_error on_error, tridi_arith arith);

tridi_status tridi_solve(tridi_context ctx, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                         const int64_t hi[3], const tridi_arrays *arrays)
{
    tridi_status s = tridi_check_context("tridi_solve", ctx);
    if (!s)
        s = tridi_context_enter("tridi_solve", ctx, NULL);
    if (s)
        return s;
    /* LINES unless the context asks for CALL (docs/decisions/019); MOHID's arithmetic (tridi.h) */
    s = solve_as(ctx, grid, axis, lo, hi, arrays, (tridi_on_error)ctx->config.on_error,
                       TRIDI_ARITH_MOHID);
    tridi_context_leave(ctx);
    return s;
}

static tridi_status solve_as(tridi_context ctx, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                             const int64_t hi[3], const tridi_arrays *arrays, tridi_on_error on_error,
                             tridi_arith arith)
{
    static const char *f = "tridi_solve";
    tridi_status s = tridi_check_context(f, ctx);
    if (s)
        return s;
    tridi_problem p;
    int empty;
    s = tridi_validate(f, grid, axis, lo, hi, arrays, 1, &p, &empty);
    if (s || empty)
        return s;
    p.on_error = on_error;
    p.arith = arith;
    p.pivoting = (tridi_pivoting)ctx->config.pivoting;
    return tridi_guard_solve(ctx, tridi_host_ops(ctx, &p, NULL), &p, TRIDI_MEMORY_HOST, NULL, NULL, NULL);
}

tridi_status tridi_upload_async(tridi_context ctx, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                                const int64_t hi[3], tridi_array_role role, const void *host, tridi_dtype type)
{
    static const char *f = "tridi_upload_async";
    tridi_status s = tridi_check_context(f, ctx);
    if (s)
        return s;
    if ((int)role < TRIDI_ROLE_LOWER || (int)role > TRIDI_ROLE_RHS)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: role = %d is not an input (TRIDI_ROLE_LOWER, _DIAG, _UPPER or _RHS)", f, (int)role);
    if (!host)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'host' is NULL", f);
    /* Validate geometry and type with the one array standing in for all five. */
    tridi_arrays one = {host, type, host, type, host, type, host, type, NULL, type};
    tridi_problem p;
    int empty;
    s = tridi_validate(f, grid, axis, lo, hi, &one, 0, &p, &empty);
    if (s || empty)
        return s;
    s = tridi_backend_of(ctx)->upload(ctx, &p, role, host, type);
    if (!s && ctx->backend == TRIDI_BACKEND_CUDA)
        ctx->auto_uploads_queued = 1; /* the next host solve runs on the GPU, which holds them (backend.h) */
    return s;
}

static tridi_status need_cuda(const char *f, tridi_context ctx)
{
    tridi_status s = tridi_check_context(f, ctx);
    if (s)
        return s;
    if (ctx->backend != TRIDI_BACKEND_CUDA)
        return tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                          "%s: device-resident data needs the CUDA backend; this context uses the %s backend", f,
                          tridi_backend_name(ctx->backend));
    return TRIDI_SUCCESS;
}

tridi_status tridi_solve_device(tridi_context ctx, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                                const int64_t hi[3], const tridi_arrays *device_arrays, void *stream)
{
    tridi_status s = tridi_check_context("tridi_solve_device", ctx);
    if (!s)
        s = tridi_context_enter("tridi_solve_device", ctx, NULL);
    if (s)
        return s;
    /* LINES unless the context asks for CALL (docs/decisions/019); MOHID's arithmetic (tridi.h) */
    s = solve_device_as(ctx, grid, axis, lo, hi, device_arrays, stream, (tridi_on_error)ctx->config.on_error,
                        TRIDI_ARITH_MOHID);
    tridi_context_leave(ctx);
    return s;
}

static tridi_status solve_device_as(tridi_context ctx, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                                    const int64_t hi[3], const tridi_arrays *device_arrays, void *stream,
                                    tridi_on_error on_error, tridi_arith arith)
{
    static const char *f = "tridi_solve_device";
    tridi_status s = need_cuda(f, ctx);
    if (s)
        return s;
    if (ctx->config.pivoting != TRIDI_PIVOT_NONE)
        return tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                          "%s: config->pivoting = %d: the pivot check and fallback are done for host arrays only; "
                          "use a context with TRIDI_PIVOT_NONE for device-resident solves", f, ctx->config.pivoting);
    tridi_problem p;
    int empty;
    s = tridi_validate(f, grid, axis, lo, hi, device_arrays, 1, &p, &empty);
    if (s || empty)
        return s;
    p.on_error = on_error;
    p.arith = arith;
    p.verdict = TRIDI_VERDICT_DEFERRED; /* failures reported by tridi_synchronize */
    return tridi_guard_solve(ctx, tridi_backend_of(ctx), &p, TRIDI_MEMORY_DEVICE, NULL, stream, NULL);
}

tridi_status tridi_device_alloc(tridi_context ctx, size_t bytes, void **device_ptr)
{
    tridi_status s = need_cuda("tridi_device_alloc", ctx);
    if (s)
        return s;
    if (!device_ptr)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "tridi_device_alloc: argument 'device_ptr' is NULL");
    *device_ptr = NULL;
    return tridi_backend_of(ctx)->alloc(ctx, bytes, device_ptr);
}

tridi_status tridi_device_free(tridi_context ctx, void *device_ptr)
{
    tridi_status s = need_cuda("tridi_device_free", ctx);
    if (s || !device_ptr)
        return s;
    return tridi_backend_of(ctx)->free(ctx, device_ptr);
}

static tridi_status copy(const char *f, tridi_context ctx, void *dst, const void *src, size_t bytes, int to_device)
{
    tridi_status s = need_cuda(f, ctx);
    if (s)
        return s;
    if (bytes == 0)
        return TRIDI_SUCCESS;
    if (!dst)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: the destination pointer is NULL", f);
    if (!src)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: the source pointer is NULL", f);
    return tridi_backend_of(ctx)->copy(ctx, dst, src, bytes, to_device);
}

tridi_status tridi_copy_to_device(tridi_context ctx, void *device_dst, const void *host_src, size_t bytes)
{
    return copy("tridi_copy_to_device", ctx, device_dst, host_src, bytes, 1);
}

tridi_status tridi_copy_to_host(tridi_context ctx, void *host_dst, const void *device_src, size_t bytes)
{
    return copy("tridi_copy_to_host", ctx, host_dst, device_src, bytes, 0);
}

tridi_status tridi_synchronize(tridi_context ctx)
{
    tridi_status s = tridi_check_context("tridi_synchronize", ctx);
    if (s)
        return s;
    return tridi_backend_of(ctx)->synchronize(ctx);
}
