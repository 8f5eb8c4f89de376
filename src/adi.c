/* ADI steps: plans, validation, the stages of the Douglas and Peaceman-Rachford schemes, and their
 * dispatch to the CPU (OpenMP over rows, adi_row.inc, then tridi_solve) or to the GPU: by default one
 * fused kernel per sweep (cuda/adi/adi_fused.cu, docs/decisions/032, 048), else (TRIDI_ADI_PATH=staged,
 * or a box the fused sweeps cannot take) adi_cell.inc in cuda/adi_stage.cu
 * then tridi_solve_device, all on one stream.
 *
 * Work arrays are grid-shaped like the field so each solve sees one grid for its five arrays; the
 * field itself is written only by the last sweep of a step. The staged path's solves never write
 * partially, so a failed step leaves the field as it was; the fused path's rule is docs/decisions/026. */
#include "adi_internal.h"
#include "thomas_core.h"

#include <float.h>
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { W_LOWER, W_DIAG, W_UPPER, W_1, W_2, W_COUNT };

struct tridi_adi_s {
    tridi_context ctx;
    tridi_grid grid;
    int64_t lo[3], hi[3];
    tridi_dtype dtype;
    tridi_adi_operator op;
    adi_stage base;      /* geometry and operator; each stage fills in the rest */
    int empty;           /* the box has no cells: steps and sweeps do nothing */
    int cuda;
    int nwork;
    void *work[W_COUNT];
    void *stream;        /* the plan's own stream (CUDA), used when the caller passes NULL */
    int fused;           /* CUDA steps through the fused sweeps (else stage + tridi_solve_device) */
    unsigned long long *status; /* the fused sweeps' deferred verdict (device memory, adi_internal.h) */
    void *rows_table;           /* the fused sweeps' table of shared rows (adi_fused.table) */
    void *done;          /* event of the latest step's end (fused), waited for by tridi_adi_synchronize */
    void *timer;         /* CUDA events at the sweep boundaries (profile) */
    double ms[3];
    int64_t steps;
};

static const char axis_letter[3] = {'x', 'y', 'z'};

#define ADI_QUAL static
#define ADI_UNROLL
#include "adi_cell_types.inc"
#undef ADI_QUAL
#undef ADI_UNROLL
#define ADI_ROW adi_row_f32
#define ADI_T float
#include "adi_row.inc"
#undef ADI_ROW
#undef ADI_T
#define ADI_ROW adi_row_f64
#define ADI_T double
#include "adi_row.inc"
#undef ADI_ROW
#undef ADI_T

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

static tridi_status check_plan(const char *f, tridi_adi plan)
{
    if (!plan)
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "%s: argument 'plan' is NULL (create it with tridi_adi_create)", f);
    if (!tridi_handle_is_live(TRIDI_HANDLE_ADI, plan))
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE,
                          "%s: argument 'plan' is not a live ADI plan (destroyed, or never created)", f);
    return tridi_check_context(f, plan->ctx);
}

/* A failure of the library call an ADI entry point made names that call ("tridi_solve: ..."); the caller
 * called f, so the message is renamed (the cell of a numerical failure is kept). */
static tridi_status as_called(const char *f, tridi_status s)
{
    if (!s)
        return s;
    static const char *inner[] = {"tridi_solve_device: ", "tridi_solve: ", "tridi_synchronize: ",
                                  "tridi_device_alloc: "};
    const char *msg = tridi_error_message();
    for (size_t i = 0; i < sizeof inner / sizeof inner[0]; ++i) {
        const size_t len = strlen(inner[i]);
        if (strncmp(msg, inner[i], len))
            continue;
        char text[1024];
        snprintf(text, sizeof text, "%s: %s", f, msg + len);
        int64_t cell[3];
        const int ndim = tridi_error_cell(cell);
        tridi_fail(s, "%s", text);
        if (ndim)
            tridi_set_error_cell(ndim, cell);
        break;
    }
    return s;
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

/* Frees what the plan holds, not the plan itself. */
static void release_contents(tridi_adi plan)
{
    for (int w = 0; w < W_COUNT; ++w) {
        if (!plan->work[w])
            continue;
        if (plan->cuda)
            tridi_device_free(plan->ctx, plan->work[w]);
        else
            free(plan->work[w]);
    }
    if (plan->status)
        tridi_device_free(plan->ctx, plan->status);
    if (plan->rows_table)
        tridi_device_free(plan->ctx, plan->rows_table);
#ifdef TRIDI_HAVE_CUDA
    if (plan->done)
        tridi_adi_cuda_event_destroy(plan->ctx->config.device, plan->done);
    if (plan->timer)
        tridi_adi_cuda_timer_destroy(plan->ctx->config.device, plan->timer);
    if (plan->stream)
        tridi_adi_cuda_stream_destroy(plan->ctx->config.device, plan->stream);
#endif
}

/* The GPU path of a plan (docs/decisions/032, 048): path 1 (TRIDI_ADI_PATH=fused) or 2 (staged) when
 * set; otherwise fused. Staged wherever the fused sweeps cannot take
 * the box: a line too long for a block of the partitioned solve, or past what the failure record holds
 * (adi_internal.h, ADI_KEY). */
static void choose_gpu_path(tridi_adi plan, int path)
{
    const adi_stage *b = &plan->base;
    const int64_t cells = b->n[0] * b->n[1] * b->n[2];
    int fits = 1;
    for (int a = 0; a < plan->op.naxes; ++a)
        fits &= b->n[a] < ADI_KEY_N_LIMIT && cells / b->n[a] < ADI_KEY_LINE_LIMIT;
#ifdef TRIDI_HAVE_CUDA
    fits = fits && tridi_adi_cuda_fused_fits(b, plan->op.naxes, plan->dtype == TRIDI_FLOAT64);
#endif
    plan->fused = fits && (!path || path == 1);
}

#ifdef TRIDI_HAVE_CUDA
/* The fused sweeps' status word, their table of shared rows and the event a step ends with. */
static tridi_status fused_alloc(const char *f, tridi_adi plan)
{
    tridi_status s = as_called(f, tridi_device_alloc(plan->ctx, sizeof *plan->status, (void **)&plan->status));
    const size_t table = tridi_adi_cuda_table_bytes(&plan->base, plan->op.naxes, plan->dtype == TRIDI_FLOAT64);
    if (!s && table)
        s = as_called(f, tridi_device_alloc(plan->ctx, table, &plan->rows_table));
    if (!s)
        s = tridi_adi_cuda_status_reset(plan->ctx->config.device, plan->status);
    if (!s)
        s = tridi_adi_cuda_event_create(plan->ctx->config.device, &plan->done);
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
#endif

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
    plan->grid = *grid;
    plan->dtype = dtype;
    plan->op = opc;
    plan->empty = empty;
    plan->cuda = ctx->backend == TRIDI_BACKEND_CUDA;
    for (int a = 0; a < 3; ++a) {
        plan->lo[a] = p.lo[a];
        plan->hi[a] = p.hi[a];
    }
    if (grid->ndim == 2) { /* entries [2] of a 2D grid are ignored: keep them out of the plan */
        plan->grid.lbound[2] = plan->grid.ubound[2] = 1;
    }

    if (!empty) {
        /* Extents come from the box here (not tridi_validate's p, which stops early for empty boxes). */
        int64_t ext[3], stride[3] = {1, 0, 0};
        for (int a = 0; a < 3; ++a)
            ext[a] = a < grid->ndim ? grid->ubound[a] - grid->lbound[a] + 1 : 1;
        stride[1] = ext[0];
        stride[2] = ext[0] * ext[1];
        adi_stage *b = &plan->base;
        b->origin = 0;
        for (int a = 0; a < 3; ++a) {
            b->n[a] = plan->hi[a] - plan->lo[a] + 1;
            b->stride[a] = stride[a];
            if (a < grid->ndim)
                b->origin += (plan->lo[a] - grid->lbound[a]) * stride[a];
        }
        b->naxes = opc.naxes;
        b->kappa = opc.kappa_field;
        b->kappa_const = opc.kappa;
        b->harmonic = opc.mean == TRIDI_ADI_HARMONIC;
        for (int a = 0; a < opc.naxes; ++a) {
            b->vel[a] = opc.velocity[a];
            b->inv_h[a] = 1.0 / opc.spacing[a];
            /* Without diffusion 1 / spacing^2 multiplies only zeros: 0 here, not the Inf of a spacing below
             * 1e-154 (0 * Inf is NaN on every path, the fused sweeps' constant-kappa rows included). */
            b->inv_h2[a] = opc.kappa_field || opc.kappa != 0.0 ? 1.0 / (opc.spacing[a] * opc.spacing[a]) : 0.0;
            b->dirichlet_lo[a] = opc.bc_lo[a] == TRIDI_ADI_DIRICHLET;
            b->dirichlet_hi[a] = opc.bc_hi[a] == TRIDI_ADI_DIRICHLET;
        }

        size_t bytes = (size_t)(ext[0] * ext[1] * ext[2]) * tridi_dtype_size(dtype);
        if (plan->cuda)
            choose_gpu_path(plan, path);
        plan->nwork = opc.scheme == TRIDI_ADI_PEACEMAN_RACHFORD ? W_COUNT : W_COUNT - 1;
        for (int w = 0; w < plan->nwork && !s; ++w) {
            if (plan->fused && w != W_1)
                continue; /* the fused sweeps keep their diagonals in registers and need one work array */
            if (plan->cuda) {
                s = as_called(f, tridi_device_alloc(ctx, bytes, &plan->work[w]));
            } else {
                /* calloc: the halo cells of the work arrays are never written and must not be garbage
                 * that a debugger or a sanitizer would flag when a solve's array is inspected. */
                plan->work[w] = calloc(1, bytes);
                if (!plan->work[w])
                    s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not allocate %zu bytes of work array", f,
                                   bytes);
            }
        }
#ifdef TRIDI_HAVE_CUDA
        if (!s && plan->fused)
            s = fused_alloc(f, plan);
        if (!s && plan->cuda)
            s = tridi_adi_cuda_stream_create(ctx->config.device, &plan->stream);
        if (!s && plan->cuda && opc.profile)
            s = tridi_adi_cuda_timer_create(ctx->config.device, opc.naxes + 1, &plan->timer);
#endif
        if (s) {
            release_contents(plan);
            free(plan);
            return s;
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
    tridi_status s = check_plan("tridi_adi_destroy", plan);
    if (s)
        return s;
    /* From here the handle is dead to every caller; of two destroys racing, one frees. */
    if (!tridi_handle_retire(TRIDI_HANDLE_ADI, plan))
        return check_plan("tridi_adi_destroy", plan);
#ifdef TRIDI_HAVE_CUDA
    /* Queued work may still use the work arrays. */
    if (plan->cuda && plan->stream)
        tridi_adi_cuda_stream_sync(plan->ctx->config.device, plan->stream);
    if (plan->done)
        tridi_adi_cuda_event_sync(plan->done);
#endif
    plan->ctx->adi_plans--;
    release_contents(plan);
    tridi_handle_bury(plan, sizeof *plan);
    return TRIDI_SUCCESS;
}

static int overlaps(const void *a, const void *b, size_t bytes)
{
    uintptr_t pa = (uintptr_t)a, pb = (uintptr_t)b;
    return a && b && pa < pb + bytes && pb < pa + bytes;
}

static size_t field_bytes(const tridi_adi plan)
{
    size_t cells = 1;
    for (int a = 0; a < plan->grid.ndim; ++a)
        cells *= (size_t)(plan->grid.ubound[a] - plan->grid.lbound[a] + 1);
    return cells * tridi_dtype_size(plan->dtype);
}

/* Fortran indices of the cell at box-relative (i, j, k). */
static void cell_of(const tridi_adi plan, int64_t i, int64_t j, int64_t k, int64_t cell[3])
{
    cell[0] = plan->lo[0] + i;
    cell[1] = plan->lo[1] + j;
    cell[2] = plan->lo[2] + k;
}

/* The CPU reads the field, kappa and the velocities where the stages will: the box plus one cell across
 * each Dirichlet side. A negative or non-finite coefficient would give a wrong but solvable system, and
 * a non-finite field value would be reported by a sweep at a neighbouring cell, so both are caught here
 * with the cell at fault. */
/* *kappa_max: the largest kappa_field value read (0 without one). */
static tridi_status check_inputs(const char *f, const tridi_adi plan, const void *field, double *kappa_max)
{
    *kappa_max = 0.0;
    const adi_stage *b = &plan->base;
    const int f64 = plan->dtype == TRIDI_FLOAT64;
    const void *arr[5] = {field, b->kappa, b->vel[0], b->vel[1], b->vel[2]};
    static const char *name[5] = {"field", "op->kappa_field", "op->velocity[0]", "op->velocity[1]",
                                  "op->velocity[2]"};
    int64_t from[3], to[3];
    for (int a = 0; a < 3; ++a) {
        from[a] = a < b->naxes && b->dirichlet_lo[a] ? -1 : 0;
        to[a] = b->n[a] - 1 + (a < b->naxes && b->dirichlet_hi[a] ? 1 : 0);
    }
    for (int q = 0; q < 5; ++q) {
        if (!arr[q])
            continue;
        for (int64_t k = from[2]; k <= to[2]; ++k)
            for (int64_t j = from[1]; j <= to[1]; ++j)
                for (int64_t i = from[0]; i <= to[0]; ++i) {
                    const int out[3] = {i < 0 || i >= b->n[0], j < 0 || j >= b->n[1], k < 0 || k >= b->n[2]};
                    const int nout = out[0] + out[1] + out[2];
                    /* Halo cells are read only straight across a face, and a velocity only across the
                     * faces of its own axis. */
                    if (nout > 1 || (q > 1 && nout == 1 && !out[q - 2]))
                        continue;
                    int64_t c = b->origin + i * b->stride[0] + j * b->stride[1] + k * b->stride[2];
                    double v = f64 ? ((const double *)arr[q])[c] : (double)((const float *)arr[q])[c];
                    if (q == 1 && v > *kappa_max)
                        *kappa_max = v;
                    if (isfinite(v) && (q != 1 || v >= 0.0))
                        continue;
                    if (q == 0 && !nout) { /* in the box: a numerical failure with its cell, as a solve gives */
                        tridi_problem p;
                        memset(&p, 0, sizeof p);
                        p.grid = plan->grid;
                        p.axis = TRIDI_AXIS_X;
                        p.a1 = 1;
                        p.a2 = 2;
                        p.n1 = b->n[1];
                        for (int a = 0; a < 3; ++a)
                            p.lo[a] = plan->lo[a];
                        return tridi_fail_numeric(f, &p, TRIDI_ERROR_NONFINITE, j + k * b->n[1], i,
                                                  "non-finite field value");
                    }
                    int64_t cell[3];
                    cell_of(plan, i, j, k, cell);
                    const char *why = q == 1 ? "is negative or not finite" : "is not finite";
                    tridi_status st = q ? TRIDI_ERROR_INVALID_VALUE : TRIDI_ERROR_NONFINITE;
                    if (plan->grid.ndim == 2)
                        return tridi_fail(st, "%s: %s = %g at cell (%lld, %lld) %s", f, name[q], v,
                                          (long long)cell[0], (long long)cell[1], why);
                    return tridi_fail(st, "%s: %s = %g at cell (%lld, %lld, %lld) %s", f, name[q], v,
                                      (long long)cell[0], (long long)cell[1], (long long)cell[2], why);
                }
    }
    return TRIDI_SUCCESS;
}

static void cpu_stage(const tridi_adi plan, const adi_stage *s)
{
    const int64_t n0 = s->n[0], n1 = s->n[1], n2 = s->n[2];
    const int f64 = plan->dtype == TRIDI_FLOAT64;
    const int threads = tridi_cpu_threads(plan->ctx);
    (void)threads;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
        /* Rows vectorise with a little scratch; without it each cell is done on its own (same answers). */
        double *scratch = malloc(sizeof(double) * 8 * (size_t)(n0 + 1));
#ifdef _OPENMP
#pragma omp for collapse(2) schedule(static)
#endif
        for (int64_t k = 0; k < n2; ++k)
            for (int64_t j = 0; j < n1; ++j) {
                if (scratch && f64)
                    adi_row_f64(s, j, k, scratch);
                else if (scratch)
                    adi_row_f32(s, j, k, scratch);
                else if (f64)
                    for (int64_t i = 0; i < n0; ++i)
                        adi_cell_f64(s, i, j, k);
                else
                    for (int64_t i = 0; i < n0; ++i)
                        adi_cell_f32(s, i, j, k);
            }
        free(scratch);
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Solve along axis over the plan's box: x may be rhs. f: the entry point the caller called. All or
 * nothing whatever the context's on_error (docs/decisions/019): a step's last sweep writes the field, and
 * a failed tridi_adi_sweep leaves x as it was. FAST arithmetic, the default for all-float and all-double
 * arrays, so that a sweep runs at the resident FAST solve's speed (docs/decisions/031). */
static tridi_status solve(const char *f, const tridi_adi plan, int axis, const void *lower, const void *diag,
                          const void *upper, const void *rhs, void *x, void *stream)
{
    const tridi_dtype t = plan->dtype;
    tridi_arrays arr = {lower, t, diag, t, upper, t, rhs, t, x, t};
    if (plan->cuda)
        return as_called(f, tridi_solve_device_as(plan->ctx, &plan->grid, (tridi_axis)axis, plan->lo, plan->hi,
                                                  &arr, stream, TRIDI_ON_ERROR_CALL, TRIDI_ARITH_FAST));
    return as_called(f, tridi_solve_as(plan->ctx, &plan->grid, (tridi_axis)axis, plan->lo, plan->hi, &arr,
                                       TRIDI_ON_ERROR_CALL, TRIDI_ARITH_FAST));
}

/* A step's solve that fails with a non-finite coefficient: the rows are tridi's own, formed from the
 * operator and the field (checked finite before the step), so the message says which coefficient of which
 * sweep overflowed at which cell, and why, instead of blaming a diagonal the caller never supplied. CPU
 * plans only: on the GPU the field and the coefficient fields are not checked before the step, so a
 * non-finite row may be the caller's value and the message stays the solve's. */
static tridi_status operator_failure(const char *f, const tridi_adi plan, int axis, double dt, tridi_status s)
{
    if (s != TRIDI_ERROR_NONFINITE || plan->cuda)
        return s;
    static const char *what[4] = {"diag", "lower", "upper", "rhs"};
    const char *msg = tridi_error_message();
    int q = 0;
    for (; q < 4; ++q) {
        char needle[32];
        snprintf(needle, sizeof needle, "non-finite %s value", what[q]);
        if (strstr(msg, needle))
            break;
    }
    int64_t cell[3] = {0, 0, 0};
    const int nd = tridi_error_cell(cell);
    if (q == 4 || !nd)
        return s;
    char at[96], kappa[80] = "";
    if (nd == 3)
        snprintf(at, sizeof at, "(%lld, %lld, %lld)", (long long)cell[0], (long long)cell[1], (long long)cell[2]);
    else
        snprintf(at, sizeof at, "(%lld, %lld)", (long long)cell[0], (long long)cell[1]);
    const tridi_adi_operator *op = &plan->op;
    if (op->kappa_field) { /* the host field's value at the cell */
        int64_t off = 0, ext = 1;
        for (int a = 0; a < plan->grid.ndim; ++a) {
            off += (cell[a] - plan->grid.lbound[a]) * ext;
            ext *= plan->grid.ubound[a] - plan->grid.lbound[a] + 1;
        }
        const double k = plan->dtype == TRIDI_FLOAT64 ? ((const double *)op->kappa_field)[off]
                                                      : (double)((const float *)op->kappa_field)[off];
        snprintf(kappa, sizeof kappa, "op->kappa_field = %g there", k);
    } else {
        snprintf(kappa, sizeof kappa, "op->kappa = %g", op->kappa);
    }
    char text[1024];
    if (q < 3)
        snprintf(text, sizeof text,
                 "%s: the %c sweep's operator is not finite at cell %s: its %s coefficient, which tridi forms from "
                 "the operator (%s, op->spacing[%d] = %g%s) and dt = %g, overflows double (kappa / spacing^2 or "
                 "velocity / spacing too large)",
                 f, axis_letter[axis], at, what[q], kappa, axis, op->spacing[axis],
                 op->velocity[axis] ? ", op->velocity" : "", dt);
    else
        snprintf(text, sizeof text,
                 "%s: the %c sweep's right-hand side is not finite at cell %s: tridi forms it from the field and the "
                 "explicit operator (%s, op->spacing, dt = %g), and it overflows double there",
                 f, axis_letter[axis], at, kappa, dt);
    tridi_fail(s, "%s", text);
    tridi_set_error_cell(nd, cell);
    return s;
}

static tridi_status run_stage(const tridi_adi plan, const adi_stage *s, void *stream)
{
#ifdef TRIDI_HAVE_CUDA
    if (plan->cuda)
        return tridi_adi_cuda_stage(plan->ctx->config.device, s, plan->dtype == TRIDI_FLOAT64, stream);
#endif
    (void)stream;
    cpu_stage(plan, s);
    return TRIDI_SUCCESS;
}

static tridi_status mark(const tridi_adi plan, int m, void *stream, double *t)
{
#ifdef TRIDI_HAVE_CUDA
    if (plan->timer)
        return tridi_adi_cuda_timer_mark(plan->timer, m, stream);
#endif
    (void)m;
    (void)stream;
    if (plan->op.profile && !plan->cuda)
        *t = now_ms();
    return TRIDI_SUCCESS;
}

static tridi_status adi_step(const char *f, tridi_adi plan, void *field, double dt, void *stream);

/* Step and sweep use the plan's work arrays and the context's solver: one thread at a time (decision 045). */
tridi_status tridi_adi_step(tridi_adi plan, void *field, double dt, void *stream)
{
    static const char *f = "tridi_adi_step";
    tridi_status s = check_plan(f, plan);
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
    const size_t bytes = field_bytes(plan);
    const adi_stage *b = &plan->base;
    const void *inputs[4] = {b->kappa, b->vel[0], b->vel[1], b->vel[2]};
    static const char *name[4] = {"op->kappa_field", "op->velocity[0]", "op->velocity[1]", "op->velocity[2]"};
    for (int q = 0; q < 4; ++q)
        if (overlaps(field, inputs[q], bytes))
            return tridi_fail(TRIDI_ERROR_ALIASING, "%s: argument 'field' overlaps the plan's %s", f, name[q]);
    double kappa_max = 0.0;
    if (!plan->cuda) {
        s = check_inputs(f, plan, field, &kappa_max);
        if (s)
            return s;
    }
    if (!stream)
        stream = plan->stream;

    void *L = plan->work[W_LOWER], *D = plan->work[W_DIAG], *U = plan->work[W_UPPER];
    void *W1 = plan->work[W_1], *W2 = plan->work[W_2];
    const int n = plan->op.naxes;
    const double theta = plan->op.theta;
    double t[4] = {0};
    adi_stage st = *b;
    /* The CPU rows' plain face means overflow only past these (adi_face_mean, adi_row.inc). */
    st.careful = kappa_max > 1e150;
    for (int a = 0; a < b->naxes; ++a)
        st.careful |= !(b->inv_h2[a] <= DBL_MAX);
    st.field = field;
    st.lower = L;
    st.diag = D;
    st.upper = U;

    s = mark(plan, 0, stream, &t[0]);
#ifdef TRIDI_HAVE_CUDA
    adi_fused fz = {plan->status, 0, plan->rows_table};
#endif
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
#ifdef TRIDI_HAVE_CUDA
        if (plan->fused) {
            /* The sweep writes its answer straight into x: a sweep reads the field and its input along its
             * own line only, before writing it (docs/decisions/032). */
            st.out = x;
            fz.accumulate = 0;
            if (plan->op.scheme == TRIDI_ADI_DOUGLAS) {
                /* Douglas in increments D_a = Y_a - u (the same step: decision 032): (I - th dt L_x) D_1 =
                 * dt L u, (I - th dt L_a) D_a = D_{a-1}, u += D_n; the sweeps after the first read one
                 * array and form no explicit term, and the increments' halo values are 0. */
                st.increment = 1;
                for (int q = 0; q < n; ++q)
                    st.alpha[q] = a == 0 ? dt : 0.0;
                st.x0 = a == 0 ? NULL : W1;
                fz.accumulate = a == n - 1;
            }
            s = tridi_adi_cuda_fused_sweep(plan->ctx->config.device, &st, plan->dtype == TRIDI_FLOAT64, &fz, stream);
            if (!s)
                s = mark(plan, a + 1, stream, &t[a + 1]);
            continue;
        }
#endif
        s = run_stage(plan, &st, stream);
        if (!s)
            s = operator_failure(f, plan, a, dt, solve(f, plan, a, L, D, U, rhs, x, stream));
        if (!s)
            s = mark(plan, a + 1, stream, &t[a + 1]);
    }
#ifdef TRIDI_HAVE_CUDA
    if (!s && plan->fused)
        s = tridi_adi_cuda_event_record(plan->done, stream);
#endif
    if (s)
        return s;
    if (plan->op.profile) {
#ifdef TRIDI_HAVE_CUDA
        if (plan->timer) {
            s = tridi_adi_cuda_timer_read(plan->timer, plan->ms);
            if (s)
                return s;
        }
#endif
        if (!plan->cuda)
            for (int a = 0; a < n; ++a)
                plan->ms[a] += t[a + 1] - t[a];
    }
    plan->steps++;
    return TRIDI_SUCCESS;
}

static tridi_status adi_sweep(const char *f, tridi_adi plan, tridi_axis axis, const void *lower, const void *diag,
                              const void *upper, const void *rhs, void *x, void *stream);

tridi_status tridi_adi_sweep(tridi_adi plan, tridi_axis axis, const void *lower, const void *diag, const void *upper,
                             const void *rhs, void *x, void *stream)
{
    static const char *f = "tridi_adi_sweep";
    tridi_status s = check_plan(f, plan);
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
    return solve(f, plan, axis, lower, diag, upper, rhs, x, stream ? stream : plan->stream);
}

tridi_status tridi_adi_synchronize(tridi_adi plan)
{
    static const char *f = "tridi_adi_synchronize";
    tridi_status s = check_plan(f, plan);
    if (s || !plan->cuda)
        return s;
#ifdef TRIDI_HAVE_CUDA
    if (plan->stream) {
        s = tridi_adi_cuda_stream_sync(plan->ctx->config.device, plan->stream);
        if (s)
            return s;
    }
    if (plan->fused) {
        /* Steps on the caller's stream end with the plan's event; then the status word is final. */
        unsigned long long key = ADI_STATUS_CLEAR;
        s = tridi_adi_cuda_event_sync(plan->done);
        if (!s)
            s = tridi_adi_cuda_status_take(plan->ctx->config.device, plan->status, &key);
        if (!s && key != ADI_STATUS_CLEAR)
            s = fused_verdict(plan, key);
        if (s)
            return s;
    }
#endif
    return as_called(f, tridi_synchronize(plan->ctx));
}

tridi_status tridi_adi_timings(tridi_adi plan, double sweep_ms[3], int64_t *steps)
{
    static const char *f = "tridi_adi_timings";
    tridi_status s = check_plan(f, plan);
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
