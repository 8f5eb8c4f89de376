/* ADI steps and sweeps: the stages of the Douglas and Peaceman-Rachford schemes in order, each sweep a
 * stage then a solve through the plan's solve plan of its axis, or one fused sweep (plan->fused, decisions
 * 032, 048); the deferred verdict. What a backend does for each is its ADI operation (adi_internal.h).
 *
 * Work arrays are grid-shaped like the field so each solve sees one grid for its five arrays; the
 * field itself is written only by the last sweep of a step. The staged path's solves never write
 * partially, so a failed step leaves the field as it was; the fused path's rule is docs/decisions/026. */
#include "adi_internal.h"
#include "backend.h"
#include "thomas_core.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const char axis_letter[3] = {'x', 'y', 'z'};

tridi_status tridi_adi_as_called(const char *f, tridi_status s)
{
    if (!s)
        return s;
    /* A plan's deferred failure names its call: "tridi_plan_solve (device solve call 7 ...): ". */
    static const char *inner[] = {"tridi_solve_device", "tridi_solve", "tridi_synchronize", "tridi_device_alloc",
                                  "tridi_plan_solve", "tridi_plan_create"};
    const char *msg = tridi_error_message();
    for (size_t i = 0; i < sizeof inner / sizeof inner[0]; ++i) {
        const size_t len = strlen(inner[i]);
        if (strncmp(msg, inner[i], len))
            continue;
        const char *rest = msg + len;
        if (rest[0] == ' ' && rest[1] == '(') {
            rest = strstr(rest, "): ");
            if (!rest)
                continue;
            rest += 1;
        }
        if (rest[0] != ':' || rest[1] != ' ')
            continue;
        char text[1024];
        snprintf(text, sizeof text, "%s: %s", f, rest + 2);
        int64_t cell[3];
        const int ndim = tridi_error_cell(cell);
        tridi_fail(s, "%s", text);
        if (ndim)
            tridi_set_error_cell(ndim, cell);
        break;
    }
    return s;
}

/* The deferred verdict of the fused sweeps: the first failure they recorded, with its sweep, line, cell. */
static tridi_status fused_verdict(const tridi_adi plan, unsigned long long key)
{
    const int axis = (int)(key >> 62);
    const int64_t line = (int64_t)((key >> 24) & (((unsigned long long)1 << 38) - 1));
    const int64_t m = (int64_t)((key >> 4) & 0xFFFFF);
    const int kind = (int)(key & 15);
    tridi_problem p;
    memset(&p, 0, sizeof p);
    p.grid = plan->grid;
    p.axis = (tridi_axis)axis;
    p.a1 = axis == 0 ? 1 : 0;
    p.a2 = axis == 2 ? 1 : 2;
    p.n1 = plan->base.n[p.a1];
    for (int a = 0; a < 3; ++a)
        p.lo[a] = plan->lo[a];
    char func[96];
    snprintf(func, sizeof func, "tridi_adi_step (sweep %c, deferred)", axis_letter[axis]);
    return tridi_fail_numeric(func, &p, tridi_fail_status(kind), line, m, tridi_fail_text(kind));
}

/* A solve along axis over the plan's box on arr (x may be rhs), through its solve plan: the grid was
 * validated when the plan was made (decision 055), the caller's arrays are checked (check_arrays) here.
 * All or nothing whatever the context's on_error (docs/decisions/019): a step's last sweep writes the
 * field, and a failed tridi_adi_sweep leaves x as it was. FAST arithmetic, so that a sweep runs at the
 * resident FAST solve's speed (docs/decisions/031). Messages name the convenience calls, as before the
 * plans, and tridi_adi_as_called renames them after f. */
static tridi_status solve(const char *f, const tridi_adi plan, int axis, const tridi_arrays *arr, int check_arrays,
                          void *stream)
{
    const struct tridi_plan_s *sp = &plan->solves[axis];
    tridi_context ctx = plan->ctx;
    tridi_problem p = sp->p;
    tridi_status s;
    if (sp->memory == TRIDI_MEMORY_DEVICE) {
        static const char *g = "tridi_solve_device";
        if (ctx->config.pivoting != TRIDI_PIVOT_NONE)
            return tridi_adi_as_called(
                f, tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                              "%s: config->pivoting = %d: the pivot check and fallback are done for host arrays "
                              "only; use a context with TRIDI_PIVOT_NONE for device-resident solves",
                              g, ctx->config.pivoting));
        s = check_arrays ? tridi_validate_arrays(g, &p, arr, 1, 0) : TRIDI_SUCCESS;
        p.arrays = *arr;
        p.func = g;
        if (!s)
            s = tridi_guard_solve(ctx, tridi_backend_of(ctx), &p, TRIDI_MEMORY_DEVICE, sp->backend_state, stream,
                                  NULL);
        return tridi_adi_as_called(f, s);
    }
    static const char *g = "tridi_solve";
    s = check_arrays ? tridi_validate_arrays(g, &p, arr, 1, 0) : TRIDI_SUCCESS;
    p.arrays = *arr;
    p.func = g;
    p.pivoting = (tridi_pivoting)ctx->config.pivoting;
    if (!s)
        s = tridi_guard_solve(ctx, tridi_host_ops(ctx, &p, NULL), &p, TRIDI_MEMORY_HOST, NULL, NULL, NULL);
    return tridi_adi_as_called(f, s);
}

static int overlaps(const void *a, const void *b, size_t bytes)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return a && b && pa < pb + bytes && pb < pa + bytes;
}

static tridi_status adi_step(const char *f, tridi_adi plan, void *field, double dt, void *stream);

/* Step and sweep use the plan's work arrays and the context's solver: one thread at a time (decision 045). */
tridi_status tridi_adi_step(tridi_adi plan, void *field, double dt, void *stream)
{
    static const char *f = "tridi_adi_step";
    tridi_status s = tridi_adi_check_plan(f, plan);
    if (!s)
        s = tridi_context_enter(f, plan->ctx, plan);
    if (s)
        return s;
    s = adi_step(f, plan, field, dt, stream);
    tridi_context_leave(plan->ctx);
    return s;
}

static tridi_status adi_step(const char *f, tridi_adi plan, void *field, double dt, void *stream)
{
    tridi_status s;
    if (!field)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'field' is NULL", f);
    if (!(isfinite(dt) && dt > 0.0))
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: dt = %g must be finite and > 0", f, dt);
    if (plan->empty)
        return TRIDI_SUCCESS;
    const size_t bytes = plan->work_bytes; /* the field's, halo included */
    const adi_stage *b = &plan->base;
    const void *inputs[4] = {b->kappa, b->vel[0], b->vel[1], b->vel[2]};
    static const char *name[4] = {"op->kappa_field", "op->velocity[0]", "op->velocity[1]", "op->velocity[2]"};
    for (int q = 0; q < 4; ++q)
        if (overlaps(field, inputs[q], bytes))
            return tridi_fail(TRIDI_ERROR_ALIASING, "%s: argument 'field' overlaps the plan's %s", f, name[q]);
    const tridi_adi_ops *ops = plan->ops;
    double kappa_max = 0.0;
    s = ops->check_inputs(f, plan, field, &kappa_max);
    if (s)
        return s;
    if (!stream)
        stream = plan->stream;

    void *L = plan->work[ADI_W_LOWER], *D = plan->work[ADI_W_DIAG], *U = plan->work[ADI_W_UPPER];
    void *W1 = plan->work[ADI_W_1], *W2 = plan->work[ADI_W_2];
    const tridi_dtype t = plan->dtype;
    tridi_arrays arr = {L, t, D, t, U, t, NULL, t, NULL, t};
    const int n = plan->op.naxes;
    const double theta = plan->op.theta;
    adi_stage st = *b;
    /* The CPU rows' plain face means overflow only past these (adi_face_mean, adi_row.inc). */
    st.careful = kappa_max > 1e150;
    for (int a = 0; a < b->naxes; ++a)
        st.careful |= !(b->inv_h2[a] <= DBL_MAX);
    st.field = field;
    st.lower = L;
    st.diag = D;
    st.upper = U;

    s = ops->mark(plan, 0, stream);
    for (int a = 0; a < n && !s; ++a) {
        st.axis = a;
        for (int q = 0; q < 3; ++q)
            st.alpha[q] = 0.0;
        void *x;
        const void *rhs;
        if (plan->op.scheme == TRIDI_ADI_PEACEMAN_RACHFORD) {
            /* Half step implicit in x and explicit in y, then implicit in y and explicit in x. */
            st.tdt = 0.5 * dt;
            st.alpha[1 - a] = 0.5 * dt;
            st.x0 = st.y = a == 0 ? field : W1;
            st.out = a == 0 ? W1 : W2;
            rhs = st.out;
            x = a == 0 ? W1 : field;
        } else {
            /* Douglas: Y0 = u + dt L u; (I - th dt L_a) Y_a = Y_{a-1} - th dt L_a u, the explicit part of
             * the first stage folded into Y0's computation. */
            st.tdt = theta * dt;
            st.y = field;
            if (a == 0) {
                for (int q = 0; q < n; ++q)
                    st.alpha[q] = dt;
                st.alpha[0] = (1.0 - theta) * dt;
                st.x0 = field;
            } else {
                st.alpha[a] = -theta * dt;
                st.x0 = W1;
            }
            st.out = W1;
            rhs = W1;
            x = a == n - 1 ? field : W1;
        }
        if (plan->fused) {
            /* The sweep writes its answer straight into x: a sweep reads the field and its input along its
             * own line only, before writing it (docs/decisions/032). */
            st.out = x;
            int accumulate = 0;
            if (plan->op.scheme == TRIDI_ADI_DOUGLAS) {
                /* Douglas in increments D_a = Y_a - u (the same step: decision 032): (I - th dt L_x) D_1 =
                 * dt L u, (I - th dt L_a) D_a = D_{a-1}, u += D_n; the sweeps after the first read one
                 * array and form no explicit term, and the increments' halo values are 0. */
                st.increment = 1;
                for (int q = 0; q < n; ++q)
                    st.alpha[q] = a == 0 ? dt : 0.0;
                st.x0 = a == 0 ? NULL : W1;
                accumulate = a == n - 1;
            }
            s = ops->fused_sweep(plan, &st, accumulate, stream);
        } else {
            s = ops->stage(plan, &st, stream);
            arr.rhs = rhs;
            arr.x = x;
            if (!s)
                s = ops->explain(f, plan, a, dt, solve(f, plan, a, &arr, 0, stream));
        }
        if (!s)
            s = ops->mark(plan, a + 1, stream);
    }
    if (!s)
        s = ops->finish(plan, stream);
    if (s)
        return s;
    plan->steps++;
    return TRIDI_SUCCESS;
}

static tridi_status adi_sweep(const char *f, tridi_adi plan, tridi_axis axis, const void *lower, const void *diag,
                              const void *upper, const void *rhs, void *x, void *stream);

tridi_status tridi_adi_sweep(tridi_adi plan, tridi_axis axis, const void *lower, const void *diag, const void *upper,
                             const void *rhs, void *x, void *stream)
{
    static const char *f = "tridi_adi_sweep";
    tridi_status s = tridi_adi_check_plan(f, plan);
    if (!s)
        s = tridi_context_enter(f, plan->ctx, plan);
    if (s)
        return s;
    s = adi_sweep(f, plan, axis, lower, diag, upper, rhs, x, stream);
    tridi_context_leave(plan->ctx);
    return s;
}

static tridi_status adi_sweep(const char *f, tridi_adi plan, tridi_axis axis, const void *lower, const void *diag,
                              const void *upper, const void *rhs, void *x, void *stream)
{
    if ((int)axis < 0 || (int)axis >= plan->grid.ndim)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: axis = %d is not an axis of the plan's %dD grid", f,
                          (int)axis, plan->grid.ndim);
    const void *p[5] = {lower, diag, upper, rhs, x};
    static const char *name[5] = {"lower", "diag", "upper", "rhs", "x"};
    for (int i = 0; i < 5; ++i)
        if (!p[i])
            return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument '%s' is NULL", f, name[i]);
    if (plan->empty)
        return TRIDI_SUCCESS;
    const tridi_dtype t = plan->dtype;
    const tridi_arrays arr = {lower, t, diag, t, upper, t, rhs, t, x, t};
    return solve(f, plan, (int)axis, &arr, 1, stream ? stream : plan->stream);
}

tridi_status tridi_adi_synchronize(tridi_adi plan)
{
    static const char *f = "tridi_adi_synchronize";
    tridi_status s = tridi_adi_check_plan(f, plan);
    if (s)
        return s;
    unsigned long long key = ADI_STATUS_CLEAR;
    s = plan->ops->wait(plan, &key);
    if (!s && key != ADI_STATUS_CLEAR)
        s = fused_verdict(plan, key);
    if (s)
        return s;
    return tridi_adi_as_called(f, tridi_synchronize(plan->ctx));
}
