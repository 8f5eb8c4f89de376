/* The cut solve on host arrays (docs/mpi.md, "Distributed solves"): each rank eliminates its block of
 * every line with its neighbours' boundary unknowns x_L, x_R kept symbolic,
 *     forward   x_m = G_m + W_m x_{m+1} + S_m x_L     backward  x_m = P_m + Q_m x_R + R_m x_L
 * hands the block's first and last relations to the reduced system (dsolve_reduced.c), then substitutes
 * x_L, x_R back. Lines whose elimination could grow go to the pipelined Thomas (dsolve_pipeline.c). */
#include "backend.h"
#include "dsolve_internal.h"
#include "thomas_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Host forward elimination of every line; work holds G, W, S per line (3n doubles). A line whose
 * elimination is not safe here (a zero pivot, a non-finite value, |W| + |S| above 1: docs/mpi.md,
 * "Stability of the cut solve") gets NaN coefficients, which mark it for the pipelined Thomas on every rank of the line once
 * they are gathered; whether it really fails is for that sweep to say. */
static void cpu_forward(const tridi_dplan *dp, double *work, double *coef)
{
    const tridi_problem *p = &dp->p;
    const tridi_arrays *A = &p->arrays;
    const int64_t n = p->n, st = p->stride[p->axis];
#pragma omp parallel for schedule(static)
    for (int64_t l = 0; l < p->nlines; ++l) {
        const int64_t base = tridi_line_offset(p, l);
        double *G = work + 3 * n * l, *W = G + n, *S = W + n;
        /* Before the first row, x_L itself: x_{-1} = 0 + 0 x_0 + 1 x_L (G, W, S). */
        double Wp = 0, Gp = 0, Sp = 1;
        int unsafe = 0;
        for (int64_t m = 0; m < n && !unsafe; ++m) {
            int64_t o = base + m * st;
            double a = (m == 0 && dp->first) ? 0.0 : tridi_dsolve_load(A->lower, A->lower_type, o);
            double b = tridi_dsolve_load(A->diag, A->diag_type, o);
            double cc = (m == n - 1 && dp->last) ? 0.0 : tridi_dsolve_load(A->upper, A->upper_type, o);
            double r = tridi_dsolve_load(A->rhs, A->rhs_type, o);
            /* The core's step with the spike column (decision 056), one reciprocal; never the line's last
             * unknown (W at the block's end couples x_R). An Inf diag (or an overflowing pivot) would give
             * 1/den = 0 and finite W, G, S: the pivot check catches it. */
            double den;
            tridi_exact_step_spike(TRIDI_FORM_RCP, a, b, cc, r, Wp, Gp, a, Sp, 0, &den, &W[m], &G[m], &S[m]);
            unsafe = !tridi_thomas_pivot_ok(den) || !tridi_partition_step_ok(W[m], G[m], S[m]);
            Wp = W[m];
            Gp = G[m];
            Sp = S[m];
        }
        double *cf = coef + 6 * l;
        if (unsafe) {
            for (int k = 0; k < 6; ++k)
                cf[k] = NAN;
            continue;
        }
        /* Backward for m = n-1 .. 0: x_m = P + Q x_R + R x_L. */
        double P = G[n - 1], Q = W[n - 1], R = S[n - 1];
        cf[3] = P;
        cf[4] = Q;
        cf[5] = R;
        for (int64_t m = n - 2; m >= 0; --m) {
            P = G[m] + W[m] * P;
            Q = W[m] * Q;
            R = S[m] + W[m] * R;
        }
        cf[0] = P;
        cf[1] = Q;
        cf[2] = R;
    }
}

/* Back substitution from x_L, x_R of each line into x, the old x of each cell saved to undo first (n
 * values per line, x's type) so that a failure on any rank can put every rank's x back (cpu_restore).
 * Lines marked for the pipelined Thomas (NaN ends) only have their old x saved: tridi_pipeline_thomas writes
 * them. Fails if an answer is not finite in x's type (a float answer may overflow where the double one
 * does not), naming the lowest failing line at its highest failing unknown, as tridi_solve does. */
static tridi_status cpu_backward(const tridi_dplan *dp, const double *work, const double *ends, void *undo, const char *f)
{
    const tridi_problem *p = &dp->p;
    const int64_t n = p->n, st = p->stride[p->axis];
    void *x = p->arrays.x;
    const tridi_dtype xt = p->arrays.x_type;
    const size_t es = tridi_dtype_size(xt);
    int64_t bad_line = INT64_MAX, bad_m = 0;
#pragma omp parallel for schedule(static)
    for (int64_t l = 0; l < p->nlines; ++l) {
        const int64_t base = tridi_line_offset(p, l);
        if (isnan(ends[2 * l])) {
            for (int64_t m = 0; m < n; ++m)
                memcpy((char *)undo + (size_t)(l * n + m) * es, (const char *)x + (size_t)(base + m * st) * es, es);
            continue;
        }
        const double *G = work + 3 * n * l, *W = G + n, *S = W + n;
        double xl = ends[2 * l], xr = ends[2 * l + 1];
        double next = xr;
        int64_t bad_here = -1;
        for (int64_t m = n - 1; m >= 0; --m) {
            double v = G[m] + W[m] * next + S[m] * xl;
            const int64_t o = base + m * st, u = l * n + m;
            if (xt == TRIDI_FLOAT64) {
                ((double *)undo)[u] = ((double *)x)[o];
                ((double *)x)[o] = v;
            } else {
                ((float *)undo)[u] = ((float *)x)[o];
                ((float *)x)[o] = (float)v;
            }
            if (!tridi_thomas_finite(tridi_thomas_round(v, xt == TRIDI_FLOAT64)) && bad_here < 0)
                bad_here = m;
            next = v;
        }
        if (bad_here >= 0) {
#pragma omp critical(tridi_mpi_backward)
            if (l < bad_line) {
                bad_line = l;
                bad_m = bad_here;
            }
        }
    }
    if (bad_line != INT64_MAX)
        return tridi_thomas_report(f, p, bad_line, (tridi_thomas_fail){bad_m, TRIDI_FAIL_ANSWER_OVERFLOW});
    return TRIDI_SUCCESS;
}

/* The fallback lines' inputs from host arrays. */
static void cpu_gather(const tridi_dplan *dp, tridi_fallback *fb)
{
    const tridi_problem *p = &dp->p;
    const tridi_arrays *A = &p->arrays;
    const int64_t n = p->n, st = p->stride[p->axis];
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < fb->nf; ++k) {
        const int64_t base = tridi_line_offset(p, fb->lines[k]);
        double *a = fb->abcr + 4 * n * k, *b = a + n, *c = b + n, *r = c + n;
        for (int64_t m = 0; m < n; ++m) {
            const int64_t o = base + m * st;
            a[m] = tridi_dsolve_load(A->lower, A->lower_type, o);
            b[m] = tridi_dsolve_load(A->diag, A->diag_type, o);
            c[m] = tridi_dsolve_load(A->upper, A->upper_type, o);
            r[m] = tridi_dsolve_load(A->rhs, A->rhs_type, o);
        }
    }
}

/* The fallback lines' answers into host x (their old values are in the undo copy: cpu_backward). */
static void cpu_scatter(const tridi_dplan *dp, const tridi_fallback *fb)
{
    const tridi_problem *p = &dp->p;
    const int64_t n = p->n, st = p->stride[p->axis];
    const size_t es = tridi_dtype_size(p->arrays.x_type);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < fb->nf; ++k) {
        const int64_t base = tridi_line_offset(p, fb->lines[k]);
        for (int64_t m = 0; m < n; ++m)
            memcpy((char *)p->arrays.x + (size_t)(base + m * st) * es, (const char *)fb->x + (size_t)(k * n + m) * es,
                   es);
    }
}

/* The cut solve's kept state: this rank's part and the old x that cpu_backward saved to undo. */
typedef struct cut_kept {
    const tridi_dplan *dp;
    const void *undo;
} cut_kept;

/* The rollback of the guard's cut-undo strategy: puts back the x that cpu_backward saved to undo. */
static tridi_status cpu_restore(void *self)
{
    const tridi_dplan *dp = ((const cut_kept *)self)->dp;
    const void *undo = ((const cut_kept *)self)->undo;
    const tridi_problem *p = &dp->p;
    const int64_t n = p->n, st = p->stride[p->axis];
    const size_t es = tridi_dtype_size(p->arrays.x_type);
#pragma omp parallel for schedule(static)
    for (int64_t l = 0; l < p->nlines; ++l) {
        const int64_t base = tridi_line_offset(p, l);
        for (int64_t m = 0; m < n; ++m)
            memcpy((char *)p->arrays.x + (size_t)(base + m * st) * es, (const char *)undo + (size_t)(l * n + m) * es,
                   es);
    }
    return TRIDI_SUCCESS;
}

tridi_status tridi_dsolve_cut_cpu(const char *f, tridi_decomp d, const tridi_dplan *dp)
{
    MPI_Comm comm = d->comm;
    const int work_here = dp->has_lines && dp->n > 0;
    size_t nl = (size_t)dp->nlines;
    double *coef = calloc(6 * nl + 1, sizeof(double));
    double *ends = calloc(2 * nl + 1, sizeof(double));
    double *work = work_here ? malloc(sizeof(double) * 3 * (size_t)dp->n * nl) : NULL;
    void *undo = work_here ? malloc(tridi_dtype_size(dp->p.arrays.x_type) * (size_t)dp->n * nl) : NULL;
    tridi_status s = (!coef || !ends || (work_here && (!work || !undo)))
                         ? tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory for %zu lines", f, nl)
                         : TRIDI_SUCCESS;
    if (!s && work_here)
        cpu_forward(dp, work, coef);
    s = tridi_mpi_agree(comm, s);
    /* The reduced systems, then the buffers of the lines marked for the pipelined Thomas: allocated
     * before the agreement, so that no rank enters the pipeline's messages while another cannot. */
    tridi_fallback fb = {0};
    if (!s) {
        s = dp->has_lines ? tridi_dsolve_reduce(f, d, dp, coef, ends) : TRIDI_SUCCESS;
        if (!s && work_here)
            s = tridi_fallback_prepare(f, dp, ends, &fb);
        s = tridi_mpi_agree(comm, s);
    }
    /* An answer that overflows x's type on any rank fails the call on every rank, each putting its x
     * back: no partial answer, as tridi_solve. */
    if (!s) {
        s = work_here ? cpu_backward(dp, work, ends, undo, f) : TRIDI_SUCCESS;
        if (fb.nf) {
            tridi_dsolve_failure before;
            tridi_dsolve_failure_save(dp, s, &before);
            cpu_gather(dp, &fb);
            tridi_status sp = tridi_pipeline_thomas(f, dp, &fb);
            if (!sp)
                cpu_scatter(dp, &fb);
            s = tridi_dsolve_first_of(dp, &before, sp);
        }
        /* The one guard (src/backend.h, docs/decisions/053): the ranks' verdict, then the undo copy put
         * back on every rank whose back substitution wrote x. */
        tridi_dsolve_ranks ranks = {comm, dp};
        tridi_guard_verdict v = {tridi_dsolve_verdict, &ranks, s, TRIDI_SUCCESS};
        cut_kept kept = {dp, undo};
        const tridi_guard_phases undo_copy = {NULL, cpu_restore, &kept};
        s = tridi_guard_settle(s, &v, work_here ? &undo_copy : NULL);
    }
    tridi_fallback_free(&fb);
    free(coef);
    free(ends);
    free(work);
    free(undo);
    return s;
}
