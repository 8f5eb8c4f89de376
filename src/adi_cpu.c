/* The CPU backend's ADI operations (tridi_adi_ops, adi_internal.h): host work arrays, the inputs checked
 * before a step, each stage an OpenMP loop over the box's rows (adi_row.inc, adi_cell.inc), the messages
 * of a step's overflowing coefficients, the wall clock at the sweep boundaries. Nothing is queued: the
 * sweeps' solves return their status. */
#include "adi_internal.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static tridi_status cpu_create(const char *f, tridi_adi plan, int path)
{
    (void)path; /* one path: stage, then solve */
    plan->fused = 0;
    for (int w = 0; w < plan->nwork; ++w) {
        /* calloc: the halo cells of the work arrays are never written and must not be garbage
         * that a debugger or a sanitizer would flag when a solve's array is inspected. */
        plan->work[w] = calloc(1, plan->work_bytes);
        if (!plan->work[w])
            return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not allocate %zu bytes of work array", f,
                              plan->work_bytes);
    }
    return TRIDI_SUCCESS;
}

static void cpu_destroy(tridi_adi plan)
{
    for (int w = 0; w < ADI_W_COUNT; ++w) {
        free(plan->work[w]);
        plan->work[w] = NULL;
    }
}

/* Fortran indices of the cell at box-relative (i, j, k). */
static void cell_of(const struct tridi_adi_s *plan, int64_t i, int64_t j, int64_t k, int64_t cell[3])
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
static tridi_status check_inputs(const char *f, const struct tridi_adi_s *plan, const void *field, double *kappa_max)
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

static tridi_status cpu_stage(const struct tridi_adi_s *plan, const adi_stage *s, void *stream)
{
    const int64_t n0 = s->n[0], n1 = s->n[1], n2 = s->n[2];
    const int f64 = plan->dtype == TRIDI_FLOAT64;
    const int threads = tridi_cpu_threads(plan->ctx);
    (void)threads, (void)stream;
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
    return TRIDI_SUCCESS;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* A step's solve that fails with a non-finite coefficient: the rows are tridi's own, formed from the
 * operator and the field (checked finite before the step), so the message says which coefficient of which
 * sweep overflowed at which cell, and why, instead of blaming a diagonal the caller never supplied. (On
 * the GPU the inputs are not checked before the step, so a non-finite row may be the caller's value and
 * the message stays the solve's.) */
static tridi_status operator_failure(const char *f, const struct tridi_adi_s *plan, int axis, double dt, tridi_status s)
{
    if (s != TRIDI_ERROR_NONFINITE)
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


static tridi_status cpu_fused_sweep(const struct tridi_adi_s *plan, const adi_stage *s, int accumulate, void *stream)
{
    (void)plan, (void)s, (void)accumulate, (void)stream;
    return tridi_fail(TRIDI_ERROR_INTERNAL, "tridi_adi_step: a fused sweep on the CPU (please report)");
}

static tridi_status cpu_mark(tridi_adi plan, int m, void *stream)
{
    (void)stream;
    if (plan->op.profile)
        plan->mark_ms[m] = now_ms();
    return TRIDI_SUCCESS;
}

static tridi_status cpu_finish(tridi_adi plan, void *stream)
{
    (void)stream;
    if (plan->op.profile)
        for (int a = 0; a < plan->op.naxes; ++a)
            plan->ms[a] += plan->mark_ms[a + 1] - plan->mark_ms[a];
    return TRIDI_SUCCESS;
}

static tridi_status cpu_wait(tridi_adi plan, unsigned long long *key)
{
    (void)plan;
    *key = ADI_STATUS_CLEAR; /* every solve returned its status */
    return TRIDI_SUCCESS;
}

const tridi_adi_ops tridi_adi_cpu_ops = {
    .memory = TRIDI_MEMORY_HOST,
    .create = cpu_create,
    .destroy = cpu_destroy,
    .check_inputs = check_inputs,
    .explain = operator_failure,
    .stage = cpu_stage,
    .fused_sweep = cpu_fused_sweep,
    .mark = cpu_mark,
    .finish = cpu_finish,
    .wait = cpu_wait,
};
