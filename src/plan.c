/* Solve plans: validated once, run many times. Plan handles live in the registry of live handles
 * (context.c), so a destroyed plan gives TRIDI_ERROR_INVALID_HANDLE instead of a read of freed memory. */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

static tridi_status check_plan(const char *f, tridi_plan plan)
{
    if (!plan)
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "%s: argument 'plan' is NULL (create it with tridi_plan_create)",
                          f);
    if (!tridi_handle_is_live(TRIDI_HANDLE_PLAN, plan))
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "%s: argument 'plan' is not a live tridi plan (destroyed?)", f);
    return tridi_check_context(f, plan->ctx);
}

void tridi_solve_options_init(tridi_solve_options *o)
{
    if (!o)
        return;
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->on_error = TRIDI_ON_ERROR_LINES;
    o->arith = TRIDI_ARITH_DEFAULT;
    o->verdict = TRIDI_VERDICT_SYNC;
    o->memory = TRIDI_MEMORY_HOST;
    o->stream = NULL;
}

tridi_status tridi_plan_create(tridi_context ctx, const tridi_grid *grid, tridi_axis axis, const int64_t lo[3],
                               const int64_t hi[3], const tridi_dtype types[5], const tridi_solve_options *options,
                               tridi_plan *plan)
{
    static const char *f = "tridi_plan_create";
    if (!plan)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'plan' is NULL", f);
    *plan = NULL;
    tridi_status s = tridi_check_context(f, ctx);
    if (s)
        return s;
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    if (options) {
        if (options->size < offsetof(tridi_solve_options, stream) + sizeof(void *) || options->size > 4096)
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "%s: options->size = %zu is not sizeof(tridi_solve_options) = %zu: call "
                              "tridi_solve_options_init first",
                              f, options->size, sizeof(tridi_solve_options));
        memcpy(&o, options, sizeof o);
        o.size = sizeof o;
    }
    if ((int)o.memory != TRIDI_MEMORY_HOST && (int)o.memory != TRIDI_MEMORY_DEVICE)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: options->memory = %d is neither TRIDI_MEMORY_HOST (0) nor TRIDI_MEMORY_DEVICE (1)", f,
                          (int)o.memory);
    if (o.memory == TRIDI_MEMORY_DEVICE && ctx->config.pivoting != TRIDI_PIVOT_NONE)
        return tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                          "%s: config->pivoting = %d: the pivot check and fallback are done for host arrays only; "
                          "use a context with TRIDI_PIVOT_NONE for device plans", f, ctx->config.pivoting);
    if (o.memory == TRIDI_MEMORY_HOST && o.stream)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: options->stream is set but options->memory is TRIDI_MEMORY_HOST (streams are for "
                          "device plans)", f);
    struct tridi_plan_s *pl = calloc(1, sizeof *pl);
    if (!pl)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not allocate the plan", f);
    s = tridi_validate_geometry(f, grid, axis, lo, hi, types, &pl->p, &pl->empty);
    if (!s)
        s = tridi_resolve_contract(f, &pl->p, &o);
    if (s) {
        free(pl);
        return s;
    }
    pl->ctx = ctx;
    pl->memory = o.memory;
    pl->stream = o.stream;
    s = tridi_backend_of(ctx)->plan_create(ctx, pl);
    if (s) {
        free(pl);
        return s;
    }
    if (tridi_handle_add(TRIDI_HANDLE_PLAN, pl)) {
        tridi_backend_of(ctx)->plan_destroy(ctx, pl);
        free(pl);
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not record the plan", f);
    }
    ctx->plans++;
    *plan = pl;
    return TRIDI_SUCCESS;
}

static tridi_status plan_solve(const char *f, tridi_plan plan, const tridi_arrays *arrays);

tridi_status tridi_plan_solve(tridi_plan plan, const tridi_arrays *arrays)
{
    static const char *f = "tridi_plan_solve";
    tridi_status s = check_plan(f, plan);
    if (!s)
        s = tridi_context_enter(f, plan->ctx, plan);
    if (s)
        return s;
    s = plan_solve(f, plan, arrays);
    tridi_context_leave(plan->ctx);
    return s;
}

static tridi_status plan_solve(const char *f, tridi_plan plan, const tridi_arrays *arrays)
{
    tridi_status s;
    /* A copy: the plan's problem keeps no caller pointers between calls. */
    tridi_problem p = plan->p;
    s = tridi_validate_arrays(f, &p, arrays, 1, plan->empty);
    if (s || plan->empty)
        return s;
    tridi_context ctx = plan->ctx;
    if (plan->memory == TRIDI_MEMORY_DEVICE)
        return tridi_guard_solve(ctx, tridi_backend_of(ctx), &p, TRIDI_MEMORY_DEVICE, plan->backend_state,
                                 plan->stream, NULL);
    p.pivoting = (tridi_pivoting)ctx->config.pivoting;
    return tridi_guard_solve(ctx, tridi_host_ops(ctx, &p, plan->auto_host), &p, TRIDI_MEMORY_HOST, NULL, NULL, NULL);
}

tridi_status tridi_plan_status(tridi_plan plan)
{
    tridi_status s = check_plan("tridi_plan_status", plan);
    if (s || plan->memory == TRIDI_MEMORY_HOST)
        return s;
    return tridi_backend_of(plan->ctx)->synchronize(plan->ctx);
}

tridi_status tridi_plan_destroy(tridi_plan plan)
{
    if (!plan)
        return TRIDI_SUCCESS;
    tridi_status s = check_plan("tridi_plan_destroy", plan);
    if (s)
        return s;
    if (!tridi_handle_retire(TRIDI_HANDLE_PLAN, plan)) /* destroyed by another thread meanwhile */
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "tridi_plan_destroy: argument 'plan' is not a live tridi plan");
    tridi_context ctx = plan->ctx;
    tridi_backend_of(ctx)->plan_destroy(ctx, plan); /* waits for the plan's queued work */
    ctx->plans--;
    tridi_handle_bury(plan, sizeof *plan);
    return TRIDI_SUCCESS;
}
