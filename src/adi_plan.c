/* ADI plans: the operator's checks, tridi_adi_create (the stage geometry, one solve plan per axis, the
 * backend's path, work arrays and stream) and tridi_adi_destroy; the steps and sweeps are adi_step.c's.
 * Every backend difference goes through the context's ADI operations (backend.h, adi_internal.h). */
#include "adi_internal.h"
#include "backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char axis_letter[3] = {'x', 'y', 'z'};

void tridi_adi_operator_init(tridi_adi_operator *op)
{
    if (!op)
        return;
    memset(op, 0, sizeof *op);
    op->size = sizeof *op;
    op->scheme = TRIDI_ADI_DOUGLAS;
    op->naxes = 0; /* resolved to the grid's ndim at creation */
    op->theta = 0.5;
    op->kappa = 1.0;
    op->mean = TRIDI_ADI_HARMONIC;
    for (int a = 0; a < 3; ++a) {
        op->spacing[a] = 1.0;
        op->bc_lo[a] = op->bc_hi[a] = TRIDI_ADI_DIRICHLET;
    }
}

tridi_status tridi_adi_check_plan(const char *f, tridi_adi plan)
{
    if (!plan)
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "%s: argument 'plan' is NULL (create it with tridi_adi_create)", f);
    if (!tridi_handle_is_live(TRIDI_HANDLE_ADI, plan))
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE,
                          "%s: argument 'plan' is not a live ADI plan (destroyed, or never created)", f);
    return tridi_check_context(f, plan->ctx);
}

static tridi_status check_operator(const char *f, const tridi_grid *grid, const int64_t lo[3], const int64_t hi[3],
                                   tridi_adi_operator *op)
{
    if (op->naxes == 0)
        op->naxes = grid->ndim;
    if (op->naxes < 2 || op->naxes > grid->ndim)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: op->naxes = %d; a %dD grid takes 2%s implicit axes", f,
                          op->naxes, grid->ndim, grid->ndim == 3 ? " or 3" : "");
    if (op->scheme != TRIDI_ADI_DOUGLAS && op->scheme != TRIDI_ADI_PEACEMAN_RACHFORD)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: op->scheme = %d is neither TRIDI_ADI_DOUGLAS (0) nor TRIDI_ADI_PEACEMAN_RACHFORD (1)", f,
                          (int)op->scheme);
    if (op->scheme == TRIDI_ADI_PEACEMAN_RACHFORD && op->naxes != 2)
        return tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                          "%s: Peaceman-Rachford is a two-axis scheme (it is not unconditionally stable in 3D); "
                          "use TRIDI_ADI_DOUGLAS for op->naxes = 3", f);
    if (op->scheme == TRIDI_ADI_DOUGLAS && !(op->theta >= 0.5 && op->theta <= 1.0))
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: op->theta = %g is outside 0.5..1 (below 0.5 the Douglas scheme is not "
                          "unconditionally stable)", f, op->theta);
    if (op->mean != TRIDI_ADI_HARMONIC && op->mean != TRIDI_ADI_ARITHMETIC)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: op->mean = %d is neither TRIDI_ADI_HARMONIC (0) nor TRIDI_ADI_ARITHMETIC (1)", f,
                          (int)op->mean);
    if (!op->kappa_field && !(isfinite(op->kappa) && op->kappa >= 0.0))
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: op->kappa = %g must be finite and >= 0", f, op->kappa);
    for (int a = 0; a < op->naxes; ++a) {
        if (!(isfinite(op->spacing[a]) && op->spacing[a] > 0.0))
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: op->spacing[%d] = %g must be finite and > 0", f, a,
                              op->spacing[a]);
        const tridi_adi_bc bc[2] = {op->bc_lo[a], op->bc_hi[a]};
        for (int side = 0; side < 2; ++side) {
            const char *name = side ? "bc_hi" : "bc_lo";
            if (bc[side] != TRIDI_ADI_DIRICHLET && bc[side] != TRIDI_ADI_ZERO_FLUX)
                return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                                  "%s: op->%s[%d] = %d is neither TRIDI_ADI_DIRICHLET (0) nor TRIDI_ADI_ZERO_FLUX (1)",
                                  f, name, a, (int)bc[side]);
            /* A Dirichlet side reads the halo cell next to the box: it must be allocated. */
            if (bc[side] == TRIDI_ADI_DIRICHLET && hi[a] >= lo[a]) {
                if (!side && lo[a] - 1 < grid->lbound[a])
                    return tridi_fail(TRIDI_ERROR_BOUNDS,
                                      "%s: op->bc_lo[%d] is Dirichlet but the box starts at the allocated lower bound "
                                      "%lld of axis %c: no halo cell holds the boundary value (shrink the box or use "
                                      "TRIDI_ADI_ZERO_FLUX)", f, a, (long long)grid->lbound[a], axis_letter[a]);
                if (side && hi[a] + 1 > grid->ubound[a])
                    return tridi_fail(TRIDI_ERROR_BOUNDS,
                                      "%s: op->bc_hi[%d] is Dirichlet but the box ends at the allocated upper bound "
                                      "%lld of axis %c: no halo cell holds the boundary value (shrink the box or use "
                                      "TRIDI_ADI_ZERO_FLUX)", f, a, (long long)grid->ubound[a], axis_letter[a]);
            }
        }
    }
    return TRIDI_SUCCESS;
}

/* The solve plan of axis: the geometry validated once, for every sweep along it (docs/decisions/055); made
 * with the backend's plan_create, not tridi_plan_create: the ADI plan owns it, and a device plan's
 * pivoting refusal stays the solve's (adi_step.c). */
static tridi_status make_solve_plan(const char *f, tridi_adi plan, int axis, struct tridi_plan_s *sp)
{
    const tridi_dtype t = plan->dtype;
    const tridi_dtype types[5] = {t, t, t, t, t};
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.on_error = TRIDI_ON_ERROR_CALL;
    o.arith = TRIDI_ARITH_FAST;
    o.memory = plan->ops->memory;
    o.verdict = TRIDI_VERDICT_DEFERRED; /* device solves: reported by tridi_adi_synchronize */
    memset(sp, 0, sizeof *sp);
    tridi_status s = tridi_validate_geometry(f, &plan->grid, (tridi_axis)axis, plan->lo, plan->hi, types, &sp->p,
                                             &sp->empty);
    if (!s)
        s = tridi_resolve_contract(f, &sp->p, &o);
    if (s)
        return s;
    sp->ctx = plan->ctx;
    sp->memory = o.memory;
    return tridi_backend_of(plan->ctx)->plan_create(plan->ctx, sp);
}

/* Frees what the plan holds, not the plan itself. */
static void release_contents(tridi_adi plan)
{
    if (!plan->empty)
        plan->ops->destroy(plan); /* waits for the plan's queued work first */
    for (int a = 0; a < plan->nsolves; ++a)
        tridi_backend_of(plan->ctx)->plan_destroy(plan->ctx, &plan->solves[a]);
}

/* The stage geometry and operator of a non-empty box (ext: the grid's allocated extents). */
static void set_base(tridi_adi plan, const int64_t ext[3])
{
    const tridi_adi_operator *op = &plan->op;
    const int64_t stride[3] = {1, ext[0], ext[0] * ext[1]};
    adi_stage *b = &plan->base;
    b->origin = 0;
    for (int a = 0; a < 3; ++a) {
        b->n[a] = plan->hi[a] - plan->lo[a] + 1;
        b->stride[a] = stride[a];
        if (a < plan->grid.ndim)
            b->origin += (plan->lo[a] - plan->grid.lbound[a]) * stride[a];
    }
    b->naxes = op->naxes;
    b->kappa = op->kappa_field;
    b->kappa_const = op->kappa;
    b->harmonic = op->mean == TRIDI_ADI_HARMONIC;
    for (int a = 0; a < op->naxes; ++a) {
        b->vel[a] = op->velocity[a];
        b->inv_h[a] = 1.0 / op->spacing[a];
        /* Without diffusion 1 / spacing^2 multiplies only zeros: 0 here, not the Inf of a spacing below
         * 1e-154 (0 * Inf is NaN on every path, the fused sweeps' constant-kappa rows included). */
        b->inv_h2[a] = op->kappa_field || op->kappa != 0.0 ? 1.0 / (op->spacing[a] * op->spacing[a]) : 0.0;
        b->dirichlet_lo[a] = op->bc_lo[a] == TRIDI_ADI_DIRICHLET;
        b->dirichlet_hi[a] = op->bc_hi[a] == TRIDI_ADI_DIRICHLET;
    }
}

tridi_status tridi_adi_create(tridi_adi *out, tridi_context ctx, const tridi_grid *grid, const int64_t lo[3],
                              const int64_t hi[3], tridi_dtype dtype, const tridi_adi_operator *op)
{
    static const char *f = "tridi_adi_create";
    if (!out)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'plan' is NULL", f);
    *out = NULL;
    tridi_status s = tridi_check_context(f, ctx);
    if (s)
        return s;
    if (!op)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'op' is NULL (fill it with tridi_adi_operator_init)", f);
    if (op->size != sizeof *op)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: op->size = %zu is not sizeof(tridi_adi_operator) = %zu: call tridi_adi_operator_init "
                          "first", f, op->size, sizeof *op);
    if (dtype != TRIDI_FLOAT32 && dtype != TRIDI_FLOAT64)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: dtype = %d is neither TRIDI_FLOAT32 (0) nor TRIDI_FLOAT64 (1)",
                          f, (int)dtype);
    /* Grid and box checks are those of a solve; one non-NULL pointer stands in for the arrays. */
    static const char stand_in;
    tridi_arrays any = {&stand_in, dtype, &stand_in, dtype, &stand_in, dtype, &stand_in, dtype, NULL, dtype};
    tridi_problem p;
    int empty;
    s = tridi_validate(f, grid, TRIDI_AXIS_X, lo, hi, &any, 0, &p, &empty);
    if (s)
        return s;
    tridi_adi_operator opc = *op;
    s = check_operator(f, grid, lo, hi, &opc);
    /* Read on every backend: a misspelt value refuses the create on the CPU too (docs/tuning.md). */
    int path = 0;
    if (!s)
        s = tridi_tuning_adi_path(f, &path);
    if (s)
        return s;

    struct tridi_adi_s *plan = calloc(1, sizeof *plan);
    if (!plan)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not allocate the plan", f);
    plan->ctx = ctx;
    plan->ops = tridi_backend_of(ctx)->adi;
    plan->grid = *grid;
    plan->dtype = dtype;
    plan->op = opc;
    plan->empty = empty;
    for (int a = 0; a < 3; ++a) {
        plan->lo[a] = p.lo[a];
        plan->hi[a] = p.hi[a];
    }
    if (grid->ndim == 2) { /* entries [2] of a 2D grid are ignored: keep them out of the plan */
        plan->grid.lbound[2] = plan->grid.ubound[2] = 1;
    }

    if (!empty) {
        /* Extents come from the box here (not tridi_validate's p, which stops early for empty boxes). */
        int64_t ext[3];
        for (int a = 0; a < 3; ++a)
            ext[a] = a < grid->ndim ? grid->ubound[a] - grid->lbound[a] + 1 : 1;
        set_base(plan, ext);
        plan->work_bytes = (size_t)(ext[0] * ext[1] * ext[2]) * tridi_dtype_size(dtype);
        plan->nwork = opc.scheme == TRIDI_ADI_PEACEMAN_RACHFORD ? ADI_W_COUNT : ADI_W_COUNT - 1;
        s = plan->ops->create(f, plan, path);
        for (int a = 0; a < grid->ndim && !s; ++a) {
            s = make_solve_plan(f, plan, a, &plan->solves[a]);
            if (!s)
                plan->nsolves = a + 1;
        }
        if (s) {
            release_contents(plan);
            free(plan);
            return tridi_adi_as_called(f, s);
        }
    }
    if (tridi_handle_add(TRIDI_HANDLE_ADI, plan)) {
        release_contents(plan);
        free(plan);
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not record the new plan", f);
    }
    ctx->adi_plans++;
    *out = plan;
    return TRIDI_SUCCESS;
}

tridi_status tridi_adi_destroy(tridi_adi plan)
{
    if (!plan)
        return TRIDI_SUCCESS;
    tridi_status s = tridi_adi_check_plan("tridi_adi_destroy", plan);
    if (s)
        return s;
    /* From here the handle is dead to every caller; of two destroys racing, one frees. */
    if (!tridi_handle_retire(TRIDI_HANDLE_ADI, plan))
        return tridi_adi_check_plan("tridi_adi_destroy", plan);
    plan->ctx->adi_plans--;
    release_contents(plan);
    tridi_handle_bury(plan, sizeof *plan);
    return TRIDI_SUCCESS;
}

tridi_status tridi_adi_timings(tridi_adi plan, double sweep_ms[3], int64_t *steps)
{
    static const char *f = "tridi_adi_timings";
    tridi_status s = tridi_adi_check_plan(f, plan);
    if (s)
        return s;
    if (!sweep_ms)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'sweep_ms' is NULL", f);
    if (!plan->op.profile)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: the plan was created with op->profile = 0", f);
    for (int a = 0; a < 3; ++a)
        sweep_ms[a] = plan->ms[a];
    if (steps)
        *steps = plan->steps;
    return TRIDI_SUCCESS;
}
