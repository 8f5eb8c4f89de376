/* Tridiagonal solves over a decomposed grid. Along an axis cut by rank boundaries each rank eliminates
 * its block of every line with its neighbours' boundary unknowns x_L (last unknown of the block below)
 * and x_R (first unknown of the block above) kept symbolic:
 *     forward   x_m = G_m + W_m x_{m+1} + S_m x_L          (MOHID's recurrence plus the x_L column)
 *     backward  x_m = P_m + Q_m x_R + R_m x_L              (only at m = 0 and m = n-1)
 * The first and last unknowns of all blocks of a line form a reduced system of 2 unknowns per block
 * (banded, 2 sub- and 2 super-diagonals), gathered on every rank of the line and solved there; each
 * rank then substitutes its x_L, x_R back. Pivots are done in double as in tridi_solve.
 *
 * That partition is only as stable as its pieces: a block's elimination starts from its own first
 * diagonal, which may be a tiny or zero pivot that the one-rank sweep never meets (it arrives there with
 * diag + lower*W), and the reduced system is eliminated without pivoting. So each line is checked:
 * the local elimination must keep |W_m| + |S_m| <= 1 (+ rounding slack) at every unknown, as every
 * diagonally dominant block does (then each row of the block's |L||U| sums to at most 3 times that row
 * of |A|: no growth), and the reduced system
 * must stay row diagonally dominant at every pivot (then elimination without pivoting has growth <= 2).
 * A line failing either check (or meeting a zero pivot or a non-finite value in the partition) is
 * solved instead by the pipelined Thomas (pipeline_thomas): the one-rank recurrence itself, its forward
 * state (W, G) passed from rank to rank and the back substitution's x passed back, in chunks of lines so
 * that ranks overlap. That is the one-rank arithmetic, so it is as stable as tridi_solve and reports the
 * failures tridi_solve reports (docs/mpi.md, "Stability of the cut solve"). */
#include "backend.h"
#include "mpi_internal.h"
#include "thomas_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TRIDI_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

typedef struct dplan {
    tridi_problem p;   /* this rank's part of the box (valid when has_lines && n > 0) */
    int has_lines;     /* this rank holds lines of the box */
    int cut;           /* the axis is cut by rank boundaries: reduced system needed */
    int first, last;   /* the block holds the first / last unknown of the global lines */
    int64_t n, nlines;
    MPI_Comm line_comm;
    int line_size, line_rank;
    int64_t llo[3], lhi[3];
    int ns;            /* device cut solve: sub-blocks per line (tridi_mpi_cuda_subblocks) */
    int prev, next;    /* line ranks holding the unknowns just before / after this block's, -1: none */
    int ndim;
    int64_t glo[3], ghi[3]; /* the global box: the lines' numbering of a one-rank solve */
} dplan;

/* Where a failure of this rank stands in the order of a one-rank solve (tridi_mpi.h): by global line
 * (numbered as tridi_solve numbers the global box's lines), then within it the forward sweep's failures
 * by unknown, then the back substitution's from the last unknown down. -1 when the failure names no
 * cell (arguments, memory, MPI). *line: its global line. */
static int64_t failure_order(const dplan *dp, tridi_status s, int64_t *line)
{
    int64_t cell[3];
    *line = -1;
    if (!s || !dp->has_lines || !tridi_error_cell(cell))
        return -1;
    const int a = dp->p.axis, a1 = a == 0 ? 1 : 0, a2 = a == 2 ? 1 : 2;
    const int64_t n1 = dp->ghi[a1] - dp->glo[a1] + 1, ng = dp->ghi[a] - dp->glo[a] + 1, mg = cell[a] - dp->glo[a];
    *line = (cell[a1] - dp->glo[a1]) + (dp->ndim == 3 ? n1 * (cell[a2] - dp->glo[a2]) : 0);
    const int back = strstr(tridi_error_message(), tridi_fail_text(TRIDI_FAIL_ANSWER_OVERFLOW)) != NULL;
    return *line * 2 * ng + (back ? ng + (ng - 1 - mg) : mg);
}

/* The ranks' agreement on a solve's outcome: the failure a one-rank solve would report, its line number
 * that of the global box (tridi_mpi_agree_ordered). */
static tridi_status agree_solve(MPI_Comm comm, const dplan *dp, tridi_status s)
{
    int64_t line;
    const int64_t order = failure_order(dp, s, &line);
    return tridi_mpi_agree_ordered(comm, s, order, line);
}

/* Of two failures of this rank (a: recorded before, its message and cell saved in text/cell/nd; b: the
 * error record now), the one a one-rank solve meets first, left in the error record. */
static tridi_status first_of(const dplan *dp, tridi_status a, int64_t order_a, const char *text, int nd,
                             const int64_t cell[3], tridi_status b)
{
    if (!a)
        return b;
    int64_t line;
    const int64_t order_b = b ? failure_order(dp, b, &line) : -1;
    if (b && order_b >= 0 && order_a >= 0 && order_b < order_a)
        return b;
    tridi_fail(a, "%s", text);
    if (nd)
        tridi_set_error_cell(nd, cell);
    return a;
}

/* Range of global indices along axis a that this rank solves: its owned cells, and the halo at an edge
 * of the global grid (MOHID's boundary rows live there). */
static void solvable(const tridi_decomp d, int a, int64_t *lo, int64_t *hi)
{
    const tridi_decomp_info *in = &d->info;
    *lo = in->lo[a];
    *hi = in->hi[a];
    if (a == 2 || in->coords[a] == 0)
        *lo = in->grid.lbound[a];
    if (a == 2 || in->coords[a] == in->dims[a] - 1)
        *hi = in->grid.ubound[a];
}

/* Whether line rank r (coordinate r along the cut axis a) solves unknowns of the box lo..hi on a: the
 * same range as solvable() on that rank. */
static int line_rank_holds(const tridi_decomp d, int a, int r, int64_t lo, int64_t hi)
{
    const tridi_decomp_config *c = &d->cfg;
    int64_t blo, bhi;
    tridi_block_range(c->lo[a], c->hi[a], d->info.dims[a], r, &blo, &bhi);
    if (r == 0)
        blo = c->lo[a] - c->halo[a];
    if (r == d->info.dims[a] - 1)
        bhi = c->hi[a] + c->halo[a];
    return (lo > blo ? lo : blo) <= (hi < bhi ? hi : bhi);
}

/* Checks a solve's arguments on every rank. What each rank can check alone (context, NULL arguments,
 * axis) and whether all ranks passed the same decomposition, axis and box travel in one all-reduce (max
 * of the failure flag, of the values and of their negatives: the range of each value), so a solve that
 * is called right pays one collective here (and the agreement on the local validation); a failure
 * anywhere then takes the full agreement. Collective; the outcome is the same on every rank. */
static tridi_status prepare(const char *f, tridi_context ctx, int device, tridi_decomp d, tridi_axis axis,
                            const int64_t lo[3], const int64_t hi[3], const tridi_arrays *arrays, tridi_status busy,
                            dplan *dp)
{
    memset(dp, 0, sizeof *dp);
    const tridi_decomp_config *c = &d->cfg;
    MPI_Comm comm = d->comm;
    tridi_status s = tridi_check_context(f, ctx);
    if (!s)
        s = busy; /* the context was in use by another call (solve_entry) */
    if (!s && device && ctx->backend != TRIDI_BACKEND_CUDA)
        s = tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: device arrays need a context on the CUDA backend (this one: %s)",
                       f, tridi_backend_name(ctx->backend));
    if (!s && (!lo || !hi || !arrays))
        s = tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument '%s' is NULL", f, !lo ? "lo" : !hi ? "hi" : "arrays");
    else if (!s && ((int)axis < 0 || (int)axis >= c->ndim))
        s = tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: axis = %d, must be 0..%d for a %dD grid", f, (int)axis,
                       c->ndim - 1, c->ndim);
    /* The corners go through the all-reduce below negated (-lo, -hi): one of INT64_MIN would overflow
     * there, so the index range of every other entry point is checked first. */
    for (int a = 0; !s && a < c->ndim; ++a)
        if (lo[a] < -TRIDI_INDEX_LIMIT || lo[a] > TRIDI_INDEX_LIMIT || hi[a] < -TRIDI_INDEX_LIMIT ||
            hi[a] > TRIDI_INDEX_LIMIT)
            s = tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                           "%s: the box lo[%d] = %lld, hi[%d] = %lld is outside the index range -2^62..2^62", f, a,
                           (long long)lo[a], a, (long long)hi[a]);
    /* Over the communicator of the decomposition's group, which every decomposition of these ranks
     * shares: ranks that passed different decompositions meet here and find it from the numbers. */
    const MPI_Comm group = tridi_mpi_group_comm(d->group);
    int64_t v[17] = {s != TRIDI_SUCCESS}, mine[7] = {0};
    v[15] = d->id;
    v[16] = -d->id;
    if (!s) {
        const int64_t given[7] = {axis, lo[0], lo[1], c->ndim == 3 ? lo[2] : 0, hi[0], hi[1], c->ndim == 3 ? hi[2] : 0};
        memcpy(mine, given, sizeof mine);
        for (int i = 0; i < 7; ++i) {
            v[1 + i] = mine[i];
            v[8 + i] = -mine[i];
        }
    }
    int e = MPI_Allreduce(MPI_IN_PLACE, v, 17, MPI_INT64_T, MPI_MAX, group);
    if (e != MPI_SUCCESS)
        return tridi_fail(TRIDI_ERROR_MPI, "%s: MPI_Allreduce failed while the ranks checked their arguments", f);
    if (-v[16] != v[15])
        return tridi_mpi_mismatch(f, group, "the decomposition (the number of its creation among this group's)",
                                  d->id);
    if (v[0])
        return tridi_mpi_agree(comm, s);
    static const char *name[7] = {"axis", "lo[0]", "lo[1]", "lo[2]", "hi[0]", "hi[1]", "hi[2]"};
    for (int i = 0; i < 7; ++i)
        if (-v[8 + i] != v[1 + i])
            return tridi_mpi_mismatch(f, comm, name[i], mine[i]);
    int empty = 0;
    for (int a = 0; a < c->ndim; ++a) {
        if (hi[a] < lo[a]) {
            empty = 1;
            continue;
        }
        int64_t glo = c->lo[a] - c->halo[a], ghi = c->hi[a] + c->halo[a];
        if (lo[a] < glo || hi[a] > ghi)
            return tridi_fail(TRIDI_ERROR_BOUNDS,
                              "%s: box %lld..%lld along axis %d leaves the global grid %lld..%lld (halos included)", f,
                              (long long)lo[a], (long long)hi[a], a, (long long)glo, (long long)ghi);
    }
    if (empty)
        return TRIDI_SUCCESS;
    dp->has_lines = 1;
    for (int a = 0; a < 3; ++a) {
        if (a >= c->ndim) {
            dp->llo[a] = dp->lhi[a] = 1;
            continue;
        }
        int64_t slo, shi;
        solvable(d, a, &slo, &shi);
        dp->llo[a] = lo[a] > slo ? lo[a] : slo;
        dp->lhi[a] = hi[a] < shi ? hi[a] : shi;
        if (dp->lhi[a] < dp->llo[a] && a != (int)axis)
            dp->has_lines = 0;
    }
    dp->ndim = c->ndim;
    for (int a = 0; a < 3; ++a) {
        dp->glo[a] = a < c->ndim ? lo[a] : 1;
        dp->ghi[a] = a < c->ndim ? hi[a] : 1;
    }
    dp->cut = axis < 2 && d->info.dims[axis] > 1;
    dp->n = dp->lhi[axis] >= dp->llo[axis] ? dp->lhi[axis] - dp->llo[axis] + 1 : 0;
    dp->first = dp->llo[axis] == lo[axis];
    dp->last = dp->lhi[axis] == hi[axis];
    dp->prev = dp->next = -1;
    if (dp->cut) {
        dp->line_comm = d->line_comm[axis];
        MPI_Comm_size(dp->line_comm, &dp->line_size);
        MPI_Comm_rank(dp->line_comm, &dp->line_rank);
        /* The line ranks are ordered by coordinate (MPI_Cart_sub); the ones holding unknowns of the box
         * are contiguous. */
        for (int r = dp->line_rank - 1; r >= 0 && dp->prev < 0; --r)
            if (line_rank_holds(d, axis, r, lo[axis], hi[axis]))
                dp->prev = r;
        for (int r = dp->line_rank + 1; r < dp->line_size && dp->next < 0; ++r)
            if (line_rank_holds(d, axis, r, lo[axis], hi[axis]))
                dp->next = r;
    }
    s = TRIDI_SUCCESS;
    if (dp->has_lines && dp->n > 0) {
        int e;
        s = tridi_validate(f, &d->info.grid, axis, dp->llo, dp->lhi, arrays, 1, &dp->p, &e);
        dp->nlines = dp->p.nlines;
    } else if (dp->has_lines) {
        /* No unknowns here, but the line count must match the other blocks of the line. */
        int64_t cnt = 1;
        for (int a = 0; a < c->ndim; ++a)
            if (a != (int)axis)
                cnt *= dp->lhi[a] - dp->llo[a] + 1;
        dp->nlines = cnt;
    }
    return tridi_mpi_agree(comm, s);
}

static inline double ld(const void *p, tridi_dtype t, int64_t i)
{
    return t == TRIDI_FLOAT64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* Host forward elimination of every line; work holds G, W, S per line (3n doubles). A line whose
 * elimination is not safe here (a zero pivot, a non-finite value, |W| + |S| above 1: see the top of the
 * file) gets NaN coefficients, which mark it for the pipelined Thomas on every rank of the line once
 * they are gathered; whether it really fails is for that sweep to say. */
static void cpu_forward(const dplan *dp, double *work, double *coef)
{
    const tridi_problem *p = &dp->p;
    const tridi_arrays *A = &p->arrays;
    const int64_t n = p->n, st = p->stride[p->axis];
#pragma omp parallel for schedule(static)
    for (int64_t l = 0; l < p->nlines; ++l) {
        const int64_t base = tridi_line_offset(p, l);
        double *G = work + 3 * n * l, *W = G + n, *S = W + n;
        double Wp = 0, Gp = 0, Sp = 0;
        int unsafe = 0;
        for (int64_t m = 0; m < n && !unsafe; ++m) {
            int64_t o = base + m * st;
            double a = (m == 0 && dp->first) ? 0.0 : ld(A->lower, A->lower_type, o);
            double b = ld(A->diag, A->diag_type, o);
            double cc = (m == n - 1 && dp->last) ? 0.0 : ld(A->upper, A->upper_type, o);
            double r = ld(A->rhs, A->rhs_type, o);
            double den = m == 0 ? b : b + a * Wp;
            double sl = m == 0 ? -a : -a * Sp;
            /* An Inf diag (or an overflowing pivot) gives 1/den = 0 and finite W, G, S: caught here. */
            if (!tridi_thomas_pivot_ok(den)) {
                unsafe = 1;
                break;
            }
            double inv = 1.0 / den;
            W[m] = -cc * inv;
            G[m] = (m == 0 ? r : r - a * Gp) * inv;
            S[m] = sl * inv;
            unsafe = !tridi_partition_step_ok(W[m], G[m], S[m]);
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

/* Solves each line's reduced system from the gathered coefficients all[rank][6 * nlines] and returns
 * this rank's x_L, x_R in ends[2 * line]. blocks[r] = 1 where rank r of the line holds unknowns. A line
 * that must go to the pipelined Thomas (a block marked it with NaN coefficients, or its reduced system
 * loses diagonal dominance or meets a zero pivot or a non-finite value) gets NaN in both ends. Every
 * rank of the line computes the same marks from the same gathered coefficients. Returns -1 when out of
 * memory, else 0. */
static int reduced_solve(const dplan *dp, const double *all, const int *blocks, double *ends)
{
    int P = dp->line_size, me = -1, Q = 0;
    int *idx = malloc(sizeof(int) * (size_t)P);
    if (!idx)
        return -1;
    for (int r = 0; r < P; ++r)
        if (blocks[r]) {
            if (r == dp->line_rank)
                me = Q;
            idx[Q++] = r;
        }
    const int N = 2 * Q;
    int oom = 0;
#pragma omp parallel
    {
        double *band = malloc(sizeof(double) * 6 * (size_t)N); /* 5 diagonals + right-hand side per row */
        if (!band) {
#pragma omp atomic write
            oom = 1;
        }
#pragma omp for schedule(static)
        for (int64_t l = 0; l < dp->nlines; ++l) {
            if (!band)
                continue;
            memset(band, 0, sizeof(double) * 6 * (size_t)N);
#define B(row, col) band[6 * (row) + (col) - (row) + 2]
#define RHS(row) band[6 * (row) + 5]
            int unsafe = 0;
            for (int q = 0; q < Q; ++q) {
                const double *cf = all + (size_t)idx[q] * 6 * (size_t)dp->nlines + 6 * l;
                for (int k = 0; k < 6; ++k)
                    unsafe |= isnan(cf[k]);
                int rf = 2 * q, rl = 2 * q + 1;
                B(rf, rf) = 1.0;
                B(rl, rl) = 1.0;
                RHS(rf) = cf[0];
                RHS(rl) = cf[3];
                if (q > 0) {
                    B(rf, rf - 1) = -cf[2];
                    B(rl, rf - 1) = -cf[5];
                }
                if (q < Q - 1) {
                    B(rf, rf + 2) = -cf[1];
                    B(rl, rf + 2) = -cf[4];
                }
            }
            for (int r = 0; r < N && !unsafe; ++r) {
                double piv = B(r, r), off = 0.0;
                for (int cc = r + 1; cc <= r + 2 && cc < N; ++cc)
                    off += fabs(B(r, cc));
                /* Row diagonal dominance kept at every pivot: elimination without pivoting is then stable. */
                if (!tridi_reduced_pivot_ok(piv, off)) {
                    unsafe = 1;
                    break;
                }
                for (int rr = r + 1; rr <= r + 2 && rr < N; ++rr) {
                    double fac = B(rr, r) / piv;
                    if (fac == 0.0)
                        continue;
                    for (int cc = r; cc <= r + 2 && cc < N; ++cc)
                        B(rr, cc) -= fac * B(r, cc);
                    RHS(rr) -= fac * RHS(r);
                }
            }
            for (int r = N - 1; r >= 0 && !unsafe; --r) {
                double v = RHS(r);
                for (int cc = r + 1; cc <= r + 2 && cc < N; ++cc)
                    v -= B(r, cc) * RHS(cc);
                RHS(r) = v / B(r, r);
                unsafe = !tridi_thomas_finite(RHS(r));
            }
            if (unsafe) {
                ends[2 * l] = ends[2 * l + 1] = NAN;
            } else {
                ends[2 * l] = me > 0 ? RHS(2 * me - 1) : 0.0;
                ends[2 * l + 1] = me >= 0 && me < Q - 1 ? RHS(2 * me + 2) : 0.0;
            }
#undef B
#undef RHS
        }
        free(band);
    }
    free(idx);
    return oom ? -1 : 0;
}

/* Back substitution from x_L, x_R of each line into x, the old x of each cell saved to undo first (n
 * values per line, x's type) so that a failure on any rank can put every rank's x back (cpu_restore).
 * Lines marked for the pipelined Thomas (NaN ends) only have their old x saved: pipeline_thomas writes
 * them. Fails if an answer is not finite in x's type (a float answer may overflow where the double one
 * does not), naming the lowest failing line at its highest failing unknown, as tridi_solve does. */
static tridi_status cpu_backward(const dplan *dp, const double *work, const double *ends, void *undo, const char *f)
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

/* The lines of this rank's block that the pipelined Thomas solves, their inputs widened to double (as
 * tridi_solve reads them) and their answers. */
typedef struct fallback {
    int64_t nf;        /* lines */
    int64_t *lines;    /* their local indices, ascending */
    double *abcr;      /* lower, diag, upper, rhs: 4 n per line */
    double *wg;        /* W, G of the forward sweep: 2 n per line */
    void *x;           /* answers: n per line, x's type */
    double *msg;       /* one chunk's messages: 2 per line */
    int64_t chunk;     /* lines per message */
} fallback;

static void fallback_free(fallback *fb)
{
    free(fb->lines);
    free(fb->abcr);
    free(fb->wg);
    free(fb->x);
    free(fb->msg);
    memset(fb, 0, sizeof *fb);
}

/* Finds the lines marked by NaN ends and allocates the fallback's host buffers. The marks, hence nf and
 * the chunks, are the same on every rank of a line. */
static tridi_status fallback_prepare(const char *f, const dplan *dp, const double *ends, fallback *fb)
{
    memset(fb, 0, sizeof *fb);
    if (!(dp->has_lines && dp->n > 0))
        return TRIDI_SUCCESS;
    int64_t nf = 0;
    for (int64_t l = 0; l < dp->nlines; ++l)
        nf += isnan(ends[2 * l]) != 0;
    if (!nf)
        return TRIDI_SUCCESS;
    const size_t n = (size_t)dp->n, es = tridi_dtype_size(dp->p.arrays.x_type);
    /* Chunks: about 4 per line rank, so that while rank r sweeps chunk c, rank r+1 sweeps chunk c-1. */
    int64_t chunk = (nf + 4 * (int64_t)dp->line_size - 1) / (4 * (int64_t)dp->line_size);
    fb->chunk = chunk < 64 ? 64 : chunk;
    fb->nf = nf;
    fb->lines = malloc(sizeof(int64_t) * (size_t)nf);
    fb->abcr = malloc(sizeof(double) * 4 * n * (size_t)nf);
    fb->wg = malloc(sizeof(double) * 2 * n * (size_t)nf);
    fb->x = malloc(es * n * (size_t)nf);
    fb->msg = malloc(sizeof(double) * 2 * (size_t)fb->chunk);
    if (!fb->lines || !fb->abcr || !fb->wg || !fb->x || !fb->msg) {
        fallback_free(fb);
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY,
                          "%s: out of host memory for the pipelined Thomas of %lld lines", f, (long long)nf);
    }
    nf = 0;
    for (int64_t l = 0; l < dp->nlines; ++l)
        if (isnan(ends[2 * l]))
            fb->lines[nf++] = l;
    return TRIDI_SUCCESS;
}

/* The fallback lines' inputs from host arrays. */
static void cpu_gather(const dplan *dp, fallback *fb)
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
            a[m] = ld(A->lower, A->lower_type, o);
            b[m] = ld(A->diag, A->diag_type, o);
            c[m] = ld(A->upper, A->upper_type, o);
            r[m] = ld(A->rhs, A->rhs_type, o);
        }
    }
}

/* The fallback lines' answers into host x (their old values are in the undo copy: cpu_backward). */
static void cpu_scatter(const dplan *dp, const fallback *fb)
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

/* A failure of the pipelined sweep on this rank: the first one of the lowest line (k: its index among
 * the fallback lines). */
typedef struct pfail {
    int64_t k;
    tridi_thomas_fail f;
} pfail;

static void pfail_note(pfail *pf, int64_t k, int64_t m, int kind)
{
    if (k < pf->k) {
        pf->k = k;
        pf->f = (tridi_thomas_fail){m, kind};
    }
}

/* Forward sweep of fallback line k over this rank's unknowns, from the previous rank's W, G: the
 * one-rank recurrence and checks, in the one-rank arithmetic: MOHID's divisions (NewType's float pivot
 * where p's arithmetic says so), or FAST's reciprocal (tridi_thomas_forward_rcp) as the CPU kernels do it.
 * No fused multiply-add on any ISA (-ffp-contract=off, docs/decisions/040), so it rounds as the one-rank
 * solve does. Returns 0, or 1 with the failure noted. */
static int pipe_forward(const dplan *dp, fallback *fb, int64_t k, double *w, double *g, pfail *pf)
{
    const int64_t n = dp->n;
    const int rcp = dp->p.arith == TRIDI_ARITH_FAST, f32 = tridi_newtype_pivot_f32(&dp->p);
    const double *A = fb->abcr + 4 * n * k, *B = A + n, *C = B + n, *R = C + n;
    double *W = fb->wg + 2 * n * k, *G = W + n;
    for (int64_t m = 0; m < n; ++m) {
        const int gfirst = dp->first && m == 0, glast = dp->last && m == n - 1;
        const double d = gfirst ? 0.0 : A[m], e = B[m], f = glast ? 0.0 : C[m], r = R[m];
        const int kind = rcp ? tridi_thomas_forward_rcp(d, e, f, r, gfirst, glast, w, g)
                             : tridi_thomas_forward_newtype(d, e, f, r, gfirst, glast, f32, w, g);
        if (kind) {
            pfail_note(pf, k, m, kind);
            return 1;
        }
        W[m] = *w;
        G[m] = *g;
    }
    return 0;
}

/* Back substitution of fallback line k from the next rank's first answer (as rounded to x's type),
 * each answer rounded before it feeds the next, as tridi_solve. Returns the answer at this rank's first
 * unknown, NaN after an overflow (noted at the highest failing unknown). */
static double pipe_backward(const dplan *dp, fallback *fb, int64_t k, double xnext, pfail *pf)
{
    const int64_t n = dp->n;
    const double *W = fb->wg + 2 * n * k, *G = W + n;
    const int f64 = dp->p.arrays.x_type == TRIDI_FLOAT64;
    int failed = 0;
    for (int64_t m = n - 1; m >= 0; --m) {
        xnext = tridi_thomas_back(W[m], G[m], xnext, dp->last && m == n - 1, f64);
        if (f64)
            ((double *)fb->x)[k * n + m] = xnext;
        else
            ((float *)fb->x)[k * n + m] = (float)xnext;
        if (!failed && !tridi_thomas_finite(xnext)) {
            failed = 1;
            pfail_note(pf, k, m, TRIDI_FAIL_ANSWER_OVERFLOW);
        }
    }
    return failed ? NAN : xnext;
}

/* The pipelined Thomas of the fallback lines over the ranks of the line holding unknowns: rank r takes
 * each chunk's W, G (last unknown of rank r-1) from rank r-1, sweeps its unknowns and sends its own on;
 * the back substitution then flows from the last rank down, each rank sending the answer at its first
 * unknown. A line that fails on some rank travels on as NaN, so the ranks after it skip it and only the
 * rank that met the failure reports it. Every rank runs every message even after a failure, so no
 * rank waits for ever. Writes the answers to fb->x only. */
static tridi_status pipeline_thomas(const char *f, const dplan *dp, fallback *fb)
{
    enum { TAG_FORWARD = 0x7d01, TAG_BACKWARD = 0x7d02 };
    const int64_t nf = fb->nf, C = fb->chunk;
    MPI_Comm line = dp->line_comm;
    pfail pf = {INT64_MAX, {0, TRIDI_FAIL_NONE}};
    int mpi_err = MPI_SUCCESS;
    const char *mpi_call = NULL;
    for (int64_t c0 = 0; c0 < nf; c0 += C) {
        const int64_t cn = nf - c0 < C ? nf - c0 : C;
        double *msg = fb->msg;
        if (dp->prev >= 0) {
            int e = MPI_Recv(msg, (int)(2 * cn), MPI_DOUBLE, dp->prev, TAG_FORWARD, line, MPI_STATUS_IGNORE);
            if (e != MPI_SUCCESS && !mpi_call) {
                mpi_err = e;
                mpi_call = "MPI_Recv";
            }
        }
        for (int64_t i = 0; i < cn; ++i) {
            double w = dp->prev >= 0 ? msg[2 * i] : 0.0, g = dp->prev >= 0 ? msg[2 * i + 1] : 0.0;
            int failed = isnan(w) || isnan(g) || mpi_call;
            if (!failed)
                failed = pipe_forward(dp, fb, c0 + i, &w, &g, &pf);
            msg[2 * i] = failed ? NAN : w;
            msg[2 * i + 1] = failed ? NAN : g;
            if (failed) /* no back substitution here: the rank after gets NaN, this one marks its answer */
                fb->wg[2 * dp->n * (c0 + i)] = NAN;
        }
        if (dp->next >= 0) {
            int e = MPI_Send(msg, (int)(2 * cn), MPI_DOUBLE, dp->next, TAG_FORWARD, line);
            if (e != MPI_SUCCESS && !mpi_call) {
                mpi_err = e;
                mpi_call = "MPI_Send";
            }
        }
    }
    for (int64_t c0 = 0; c0 < nf; c0 += C) {
        const int64_t cn = nf - c0 < C ? nf - c0 : C;
        double *msg = fb->msg;
        if (dp->next >= 0) {
            int e = MPI_Recv(msg, (int)cn, MPI_DOUBLE, dp->next, TAG_BACKWARD, line, MPI_STATUS_IGNORE);
            if (e != MPI_SUCCESS && !mpi_call) {
                mpi_err = e;
                mpi_call = "MPI_Recv";
            }
        }
        for (int64_t i = 0; i < cn; ++i) {
            const int64_t k = c0 + i;
            const double xn = dp->next >= 0 ? msg[i] : 0.0;
            const int failed = isnan(xn) || isnan(fb->wg[2 * dp->n * k]) || mpi_call;
            msg[i] = failed ? NAN : pipe_backward(dp, fb, k, xn, &pf);
        }
        if (dp->prev >= 0) {
            int e = MPI_Send(msg, (int)cn, MPI_DOUBLE, dp->prev, TAG_BACKWARD, line);
            if (e != MPI_SUCCESS && !mpi_call) {
                mpi_err = e;
                mpi_call = "MPI_Send";
            }
        }
    }
    if (mpi_call)
        return tridi_mpi_fail(f, mpi_call, mpi_err);
    if (pf.f.kind)
        return tridi_thomas_report(f, &dp->p, fb->lines[pf.k], pf.f);
    return TRIDI_SUCCESS;
}

/* Puts back the x that cpu_backward saved to undo. */
static void cpu_restore(const dplan *dp, const void *undo)
{
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
}

/* Gathers the reduced coefficients of the line and solves the reduced systems; ends gets x_L, x_R. */
static tridi_status reduce(const char *f, tridi_decomp d, const dplan *dp, const double *coef, double *ends)
{
    size_t per = 6 * (size_t)dp->nlines;
    double *all =
        tridi_mpi_buffer_get(&d->scratch.host_gather, TRIDI_MPI_MEM_HOST, sizeof(double) * per * (size_t)dp->line_size);
    int *blocks = malloc(sizeof(int) * (size_t)dp->line_size);
    tridi_status s = TRIDI_SUCCESS;
    if (!all || !blocks)
        s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the reduced system", f);
    int mine = dp->n > 0, e = MPI_SUCCESS;
    if (!s)
        e = MPI_Allgather(&mine, 1, MPI_INT, blocks, 1, MPI_INT, dp->line_comm);
    if (!s && e == MPI_SUCCESS)
        e = MPI_Allgather(coef, (int)per, MPI_DOUBLE, all, (int)per, MPI_DOUBLE, dp->line_comm);
    if (!s && e != MPI_SUCCESS)
        s = tridi_mpi_fail(f, "MPI_Allgather", e);
    if (!s && dp->n > 0 && reduced_solve(dp, all, blocks, ends) < 0)
        s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the reduced system", f);
    free(blocks);
    return s;
}

/* An uncut axis: this rank's part solved under ON_ERROR_CALL in the two phases of its backend (backend.h,
 * docs/decisions/020), the ranks' agreement between them: every rank commits, or every rank rolls back if
 * any rank failed, so x stays unchanged everywhere. On one rank the solve's own status is the verdict (and
 * config.pivoting applies, as in tridi_solve). */
static tridi_status local_solve(const char *f, tridi_context ctx, tridi_decomp d, const dplan *dp,
                                const tridi_arrays *arrays)
{
    const int work_here = dp->has_lines && dp->n > 0;
    tridi_problem p;
    int empty = 1;
    tridi_status s = TRIDI_SUCCESS;
    if (work_here)
        s = tridi_validate(f, &d->info.grid, dp->p.axis, dp->llo, dp->lhi, arrays, 1, &p, &empty);
    const int solving = work_here && !s && !empty;
    const tridi_backend_ops *ops = solving ? tridi_host_ops(ctx, &p, NULL) : NULL;
    if (d->info.nranks == 1) {
        if (!solving)
            return s;
        p.pivoting = (tridi_pivoting)ctx->config.pivoting;
        return p.pivoting != TRIDI_PIVOT_NONE ? tridi_pivot_solve(f, ctx, &p, ops->solve_host)
                                              : ops->solve_host(ctx, &p);
    }
    if (solving)
        s = ops->solve_keep(ctx, &p, TRIDI_MEMORY_HOST, NULL);
    const tridi_status all = agree_solve(d->comm, dp, s);
    tridi_status r = TRIDI_SUCCESS;
    if (solving) /* after a failure on another rank, this rank's answers are put back too */
        r = all ? ops->rollback(ctx, TRIDI_MEMORY_HOST, NULL) : ops->commit(ctx, TRIDI_MEMORY_HOST, NULL);
    return all ? all : tridi_mpi_agree(d->comm, r);
}

/* The solves take the context as tridi_solve does (decision 045): a context in use by another call is
 * this rank's failure, agreed with the others in prepare (no rank is left in a collective). */
static tridi_status mpi_solve(const char *f, tridi_context ctx, tridi_decomp d, tridi_axis axis, const int64_t lo[3],
                              const int64_t hi[3], const tridi_arrays *arrays, tridi_status busy);
static tridi_status mpi_solve_device(const char *f, tridi_context ctx, tridi_decomp d, tridi_axis axis,
                                     const int64_t lo[3], const int64_t hi[3], const tridi_arrays *device_arrays,
                                     void *stream, tridi_status busy);

tridi_status tridi_mpi_solve(tridi_context ctx, tridi_decomp d, tridi_axis axis, const int64_t lo[3],
                             const int64_t hi[3], const tridi_arrays *arrays)
{
    static const char *f = "tridi_mpi_solve";
    tridi_status s = tridi_check_decomp(f, d);
    if (s)
        return s;
    tridi_status busy = TRIDI_SUCCESS;
    const int entered = tridi_handle_is_live(TRIDI_HANDLE_CONTEXT, ctx) && !(busy = tridi_context_enter(f, ctx, NULL));
    s = mpi_solve(f, ctx, d, axis, lo, hi, arrays, busy);
    if (entered)
        tridi_context_leave(ctx);
    return s;
}

tridi_status tridi_mpi_solve_device(tridi_context ctx, tridi_decomp d, tridi_axis axis, const int64_t lo[3],
                                    const int64_t hi[3], const tridi_arrays *device_arrays, void *stream)
{
    static const char *f = "tridi_mpi_solve_device";
    tridi_status s = tridi_check_decomp(f, d);
    if (s)
        return s;
    tridi_status busy = TRIDI_SUCCESS;
    const int entered = tridi_handle_is_live(TRIDI_HANDLE_CONTEXT, ctx) && !(busy = tridi_context_enter(f, ctx, NULL));
    s = mpi_solve_device(f, ctx, d, axis, lo, hi, device_arrays, stream, busy);
    if (entered)
        tridi_context_leave(ctx);
    return s;
}

static tridi_status mpi_solve(const char *f, tridi_context ctx, tridi_decomp d, tridi_axis axis, const int64_t lo[3],
                              const int64_t hi[3], const tridi_arrays *arrays, tridi_status busy)
{
    tridi_status s;
    MPI_Comm comm = d->comm;
    dplan dp;
    s = prepare(f, ctx, 0, d, axis, lo, hi, arrays, busy, &dp);
    if (s)
        return s;
    /* Ranks without lines of the box still take part in every agreement over the communicator. */
    const int work_here = dp.has_lines && dp.n > 0;
    if (!dp.cut)
        return local_solve(f, ctx, d, &dp, arrays);

    size_t nl = (size_t)dp.nlines;
    double *coef = calloc(6 * nl + 1, sizeof(double));
    double *ends = calloc(2 * nl + 1, sizeof(double));
    double *work = work_here ? malloc(sizeof(double) * 3 * (size_t)dp.n * nl) : NULL;
    void *undo = work_here ? malloc(tridi_dtype_size(dp.p.arrays.x_type) * (size_t)dp.n * nl) : NULL;
    s = (!coef || !ends || (work_here && (!work || !undo)))
            ? tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory for %zu lines", f, nl)
            : TRIDI_SUCCESS;
    if (!s && work_here)
        cpu_forward(&dp, work, coef);
    s = tridi_mpi_agree(comm, s);
    /* The reduced systems, then the buffers of the lines marked for the pipelined Thomas: allocated
     * before the agreement, so that no rank enters the pipeline's messages while another cannot. */
    fallback fb = {0};
    if (!s) {
        s = dp.has_lines ? reduce(f, d, &dp, coef, ends) : TRIDI_SUCCESS;
        if (!s && work_here)
            s = fallback_prepare(f, &dp, ends, &fb);
        s = tridi_mpi_agree(comm, s);
    }
    /* An answer that overflows x's type on any rank fails the call on every rank, each putting its x
     * back: no partial answer, as tridi_solve. */
    if (!s) {
        s = work_here ? cpu_backward(&dp, work, ends, undo, f) : TRIDI_SUCCESS;
        if (fb.nf) {
            int64_t line, cell[3] = {0, 0, 0};
            const int64_t order = failure_order(&dp, s, &line);
            const int nd = s ? tridi_error_cell(cell) : 0;
            char text[1024];
            snprintf(text, sizeof text, "%s", s ? tridi_error_message() : "");
            cpu_gather(&dp, &fb);
            tridi_status sp = pipeline_thomas(f, &dp, &fb);
            if (!sp)
                cpu_scatter(&dp, &fb);
            s = first_of(&dp, s, order, text, nd, cell, sp);
        }
        s = agree_solve(comm, &dp, s);
        if (s && work_here)
            cpu_restore(&dp, undo);
    }
    fallback_free(&fb);
    free(coef);
    free(ends);
    free(work);
    free(undo);
    return s;
}

#ifdef TRIDI_HAVE_CUDA
/* Decides once per cut axis, with every rank of the decomposition, whether the reduced systems move
 * GPU to GPU through IPC: all ranks on one node, at most TRIDI_MPI_MAX_LINE ranks per line, and each
 * GPU able to reach the GPUs of its line. */
static tridi_status reduced_decide(const char *f, tridi_decomp d, int axis)
{
    tridi_reduced_ipc *red = &d->red[axis];
    if (red->state)
        return TRIDI_SUCCESS;
    MPI_Comm comm = d->comm, line = d->line_comm[axis];
    tridi_transport want = d->cfg.solve_transport;
    int P, me, dev = 0, node_size;
    MPI_Comm_size(line, &P);
    MPI_Comm_rank(line, &me);
    cudaGetDevice(&dev);
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    int *devs = malloc(sizeof(int) * (size_t)P);
    if (!devs)
        return tridi_mpi_agree(comm, tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory", f));
    MPI_Allgather(&dev, 1, MPI_INT, devs, 1, MPI_INT, line);
    char why[160] = "";
    int able = 1;
    if (node_size != d->info.nranks) {
        able = 0;
        snprintf(why, sizeof why, "the ranks span more than one node");
    } else if (P > TRIDI_MPI_MAX_LINE) {
        able = 0;
        snprintf(why, sizeof why, "%d ranks along the line, at most %d", P, TRIDI_MPI_MAX_LINE);
    }
    for (int r = 0; r < P && able; ++r) {
        int access = 1;
        if (devs[r] != dev)
            cudaDeviceCanAccessPeer(&access, dev, devs[r]);
        if (!access) {
            able = 0;
            snprintf(why, sizeof why, "GPU %d cannot reach GPU %d of line rank %d", dev, devs[r], r);
        }
    }
    free(devs);
    int all = 0;
    MPI_Allreduce(&able, &all, 1, MPI_INT, MPI_MIN, comm);
    tridi_status mine = TRIDI_SUCCESS;
    if (want == TRIDI_TRANSPORT_IPC && !able)
        mine = tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: solve_transport ipc is not usable here: %s", f, why);
    tridi_status s = tridi_mpi_agree(comm, mine);
    if (s)
        return s;
    red->state = (all && want != TRIDI_TRANSPORT_STAGED) ? 1 : -1;
    return TRIDI_SUCCESS;
}

static void reduced_release(tridi_reduced_ipc *red)
{
    for (int r = 0; r < TRIDI_MPI_MAX_LINE; ++r) {
        if (red->opened[r])
            tridi_mpi_ipc_close(red->opened[r]);
        red->opened[r] = NULL;
        red->peer_buf[r] = NULL;
    }
    if (red->buf)
        cudaFree(red->buf);
    red->buf = NULL;
    red->cap = 0;
}

/* Makes the gather buffers of the line hold nl lines; collective over the line (equal nl there). */
static tridi_status reduced_grow(const char *f, tridi_decomp d, int axis, size_t nl)
{
    tridi_reduced_ipc *red = &d->red[axis];
    if (red->cap >= nl && red->buf)
        return TRIDI_SUCCESS;
    MPI_Comm line = d->line_comm[axis];
    int P, me;
    MPI_Comm_size(line, &P);
    MPI_Comm_rank(line, &me);
    /* Nobody may still write into the buffers about to be freed. */
    MPI_Barrier(line);
    reduced_release(red);
    tridi_status s = TRIDI_SUCCESS;
    size_t bytes = sizeof(double) * (6 * nl + 1) * (size_t)P;
    cudaIpcMemHandle_t mine, *all = malloc(sizeof(cudaIpcMemHandle_t) * (size_t)P);
    memset(&mine, 0, sizeof mine);
    cudaError_t e = cudaMalloc((void **)&red->buf, bytes);
    if (e == cudaSuccess)
        e = cudaIpcGetMemHandle(&mine, red->buf);
    if (e != cudaSuccess || !all) {
        cudaGetLastError();
        s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: reduced-system buffer of %zu bytes: %s", f, bytes,
                       e != cudaSuccess ? cudaGetErrorString(e) : "out of host memory");
    }
    int ok = !s, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, line);
    if (all_ok) {
        MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, line);
        for (int r = 0; r < P && !s; ++r) {
            if (r == me) {
                red->peer_buf[r] = red->buf;
                continue;
            }
            void *b = NULL;
            s = tridi_mpi_ipc_open(&all[r], &b);
            red->opened[r] = b;
            red->peer_buf[r] = b;
        }
    } else if (!s) {
        s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: another rank of the line could not allocate its reduced-system buffer", f);
    }
    free(all);
    if (s)
        reduced_release(red);
    else
        red->cap = nl;
    return s;
}

/* The status of the back substitution kernel's failure word, all ones if none: (line << 24) |
 * (2^24 - 1 - m), the answer overflowing x's type (tridi_mpi_cuda_backward). */
static tridi_status device_failure(const char *f, const tridi_problem *p, unsigned long long w)
{
    if (w == ~0ull)
        return TRIDI_SUCCESS;
    const int64_t line = (int64_t)(w >> 24), low = (int64_t)(w & ((1u << 24) - 1));
    return tridi_thomas_report(f, p, line, (tridi_thomas_fail){((1 << 24) - 1) - low, TRIDI_FAIL_ANSWER_OVERFLOW});
}

/* Device buffers of the pipelined Thomas's lines: their list, their inputs and their answers. */
typedef struct dfallback {
    int64_t *lines;
    double *abcr;
    void *x;
} dfallback;

static void dfallback_free(dfallback *df)
{
    cudaFree(df->lines);
    cudaFree(df->abcr);
    cudaFree(df->x);
    memset(df, 0, sizeof *df);
}

/* The host and device buffers of the lines marked by NaN in ends (host copy of x_L, x_R). Before the
 * agreement that precedes the back substitution: the pipeline's messages start only if every rank
 * could allocate. Its rare lines pay their own allocations. */
static tridi_status dfallback_prepare(const char *f, const dplan *dp, const double *ends, fallback *fb, dfallback *df)
{
    memset(df, 0, sizeof *df);
    tridi_status s = fallback_prepare(f, dp, ends, fb);
    if (s || !fb->nf)
        return s;
    const size_t n = (size_t)dp->n, nf = (size_t)fb->nf, es = tridi_dtype_size(dp->p.arrays.x_type);
    cudaError_t e = cudaMalloc((void **)&df->lines, sizeof(int64_t) * nf);
    if (e == cudaSuccess)
        e = cudaMalloc((void **)&df->abcr, sizeof(double) * 4 * n * nf);
    if (e == cudaSuccess)
        e = cudaMalloc(&df->x, es * n * nf);
    if (e == cudaSuccess)
        e = cudaMemcpy(df->lines, fb->lines, sizeof(int64_t) * nf, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
        cudaGetLastError();
        dfallback_free(df);
        fallback_free(fb);
        return tridi_fail(e == cudaErrorMemoryAllocation ? TRIDI_ERROR_OUT_OF_MEMORY : TRIDI_ERROR_CUDA,
                          "%s: device buffers of the pipelined Thomas of %zu lines: %s", f, nf, cudaGetErrorString(e));
    }
    return TRIDI_SUCCESS;
}

/* The pipelined Thomas of the marked lines of a device solve: their inputs to the host, the pipeline,
 * their answers back into x when write is set (the back substitution kernel ran, so their old x is in
 * the undo copy). Runs every message of the pipeline whatever failed before, as the other ranks of the
 * line wait for them. */
static tridi_status device_pipeline(const char *f, const dplan *dp, fallback *fb, dfallback *df, int write,
                                    cudaStream_t st)
{
    const size_t n = (size_t)dp->n, nf = (size_t)fb->nf, es = tridi_dtype_size(dp->p.arrays.x_type);
    tridi_status s = tridi_mpi_cuda_gather_lines(&dp->p, df->lines, fb->nf, df->abcr, st);
    cudaError_t e = cudaSuccess;
    if (!s) {
        e = cudaMemcpyAsync(fb->abcr, df->abcr, sizeof(double) * 4 * n * nf, cudaMemcpyDeviceToHost, st);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(st);
        if (e != cudaSuccess)
            s = tridi_fail(TRIDI_ERROR_CUDA, "%s: reading the lines of the pipelined Thomas: %s", f,
                           cudaGetErrorString(e));
    }
    tridi_status sp = pipeline_thomas(f, dp, fb);
    if (!s && !sp && write) {
        e = cudaMemcpyAsync(df->x, fb->x, es * n * nf, cudaMemcpyHostToDevice, st);
        if (e == cudaSuccess) {
            s = tridi_mpi_cuda_scatter_lines(&dp->p, df->lines, fb->nf, df->x, st);
            e = cudaStreamSynchronize(st);
        }
        if (!s && e != cudaSuccess)
            s = tridi_fail(TRIDI_ERROR_CUDA, "%s: writing the answers of the pipelined Thomas: %s", f,
                           cudaGetErrorString(e));
    }
    return s ? s : sp;
}

/* After a kernel queued on st whose launch gave s: brings its failure word from dfail to *hfail and waits
 * for the stream; a CUDA error becomes a status naming the step. */
static tridi_status fetch_failure(const char *f, const char *step, tridi_status s, const unsigned long long *dfail,
                                  unsigned long long *hfail, cudaStream_t st)
{
    if (s)
        return s;
    cudaError_t e = cudaMemcpyAsync(hfail, dfail, sizeof *hfail, cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(st);
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_fail(TRIDI_ERROR_CUDA, "%s: %s: %s", f, step, cudaGetErrorString(e));
}

/* Device work arrays of a cut axis: G, W, S (3 n values of x's type per line), then the undo copy of the
 * old x (n per line) that device_backward keeps, then the sub-blocks' (cuda/mpi_solve.cu). */
static size_t device_work_bytes(const dplan *dp)
{
    return tridi_mpi_cuda_work_bytes(&dp->p, dp->ns);
}

/* Back substitution on the device, agreed over the decomposition: an answer that overflows x's type on
 * any rank fails the call on every rank, and each rank whose back substitution ran puts its old x back
 * from the undo copy (no partial answer, as tridi_solve and the host path). dfail/hfail: one word on the
 * device and in pinned host memory. */
static tridi_status device_backward(const char *f, MPI_Comm comm, const dplan *dp, double *work, const double *dends,
                                    unsigned long long *dfail, unsigned long long *hfail, fallback *fb,
                                    dfallback *df, cudaStream_t st)
{
    const int work_here = dp->has_lines && dp->n > 0;
    void *undo = work_here ? (char *)work + tridi_dtype_size(dp->p.arrays.x_type) * 3 * (size_t)dp->n * (size_t)dp->nlines
                           : NULL;
    tridi_status s = TRIDI_SUCCESS;
    int ran = 0; /* the kernel completed: undo holds every old value it replaced */
    if (work_here) {
        s = fetch_failure(f, "back substitution", tridi_mpi_cuda_backward(&dp->p, dp->ns, work, dends, undo, dfail, st), dfail,
                          hfail, st);
        ran = !s;
        if (!s)
            s = device_failure(f, &dp->p, *hfail);
    }
    if (fb->nf) {
        int64_t line, cell[3] = {0, 0, 0};
        const int64_t order = failure_order(dp, s, &line);
        const int nd = s ? tridi_error_cell(cell) : 0;
        char text[1024];
        snprintf(text, sizeof text, "%s", s ? tridi_error_message() : "");
        tridi_status sp = device_pipeline(f, dp, fb, df, ran, st);
        s = first_of(dp, s, order, text, nd, cell, sp);
    }
    fallback_free(fb);
    dfallback_free(df);
    s = agree_solve(comm, dp, s);
    if (s && ran) {
        tridi_status r = tridi_mpi_cuda_restore(&dp->p, undo, st);
        cudaError_t e = cudaStreamSynchronize(st);
        if (r == TRIDI_SUCCESS && e != cudaSuccess)
            r = tridi_fail(TRIDI_ERROR_CUDA, "%s: putting x back after a failure: %s", f, cudaGetErrorString(e));
        /* The call fails either way; a failed restore is what the caller must hear about. */
        if (r != TRIDI_SUCCESS)
            s = r;
    }
    return s;
}

/* A cut axis with the reduced systems moved GPU to GPU: forward kernel into this rank's slot of its
 * gather buffer, copies of that slot into the other line ranks' buffers, reduced systems and back
 * substitution on the GPU. Every agreement below is also the barrier the copies need: each rank
 * synchronises its stream before entering it. */
static tridi_status solve_cut_ipc(const char *f, tridi_decomp d, const dplan *dp, void *stream)
{
    MPI_Comm comm = d->comm;
    cudaStream_t st = (cudaStream_t)stream;
    const int work_here = dp->has_lines && dp->n > 0;
    tridi_reduced_ipc *red = NULL;
    size_t nl = (size_t)dp->nlines;
    tridi_status s = TRIDI_SUCCESS;
    int P = dp->line_size, me = dp->line_rank;
    if (dp->has_lines) {
        int ax = 0;
        for (int a = 0; a < 2; ++a)
            if (d->line_comm[a] == dp->line_comm)
                ax = a;
        red = &d->red[ax];
        s = reduced_grow(f, d, ax, nl);
    }
    unsigned long long *hfail =
        tridi_mpi_buffer_get(&d->scratch.pinned_coef, TRIDI_MPI_MEM_PINNED, 2 * sizeof(unsigned long long));
    double *dends = NULL;
    unsigned long long *dfail = NULL;
    if (!s && !hfail)
        s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of pinned host memory", f);
    double *work = NULL;
    if (!s && work_here) {
        work = tridi_mpi_buffer_get(&d->scratch.dev_work, TRIDI_MPI_MEM_DEVICE, device_work_bytes(dp));
        dends = tridi_mpi_buffer_get(&d->scratch.dev_small, TRIDI_MPI_MEM_DEVICE, sizeof(double) * (2 * nl + 2));
        if (!work || !dends)
            s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: no device memory for the work arrays of %zu lines", f, nl);
        else
            dfail = (unsigned long long *)(dends + 2 * nl);
    }
    size_t slot = red ? 6 * red->cap + 1 : 0;
    double *mine = red && red->buf ? red->buf + (size_t)me * slot : NULL;
    cudaError_t e = cudaSuccess;
    if (!s && dp->has_lines) {
        /* The flag word: whether this rank holds unknowns of the line. */
        e = cudaMemsetAsync(mine + 6 * red->cap, work_here ? 0xff : 0, sizeof(double), st);
        if (e == cudaSuccess && work_here)
            s = tridi_mpi_cuda_forward(&dp->p, dp->first, dp->last, dp->ns, work, mine, stream);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(st);
        if (!s && e != cudaSuccess)
            s = tridi_fail(TRIDI_ERROR_CUDA, "%s: forward elimination: %s", f, cudaGetErrorString(e));
    }
    s = tridi_mpi_agree(comm, s);
    if (!s && dp->has_lines) {
        for (int r = 0; r < P && e == cudaSuccess; ++r) {
            if (r == me)
                continue;
            double *dst = red->peer_buf[r] + (size_t)me * slot;
            e = cudaMemcpyAsync(dst, mine, sizeof(double) * 6 * nl, cudaMemcpyDeviceToDevice, st);
            if (e == cudaSuccess)
                e = cudaMemcpyAsync(dst + 6 * red->cap, mine + 6 * red->cap, sizeof(double), cudaMemcpyDeviceToDevice,
                                    st);
        }
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(st);
        if (e != cudaSuccess)
            s = tridi_fail(TRIDI_ERROR_CUDA, "%s: copying the reduced system to the line's GPUs: %s", f,
                           cudaGetErrorString(e));
    }
    s = tridi_mpi_agree(comm, s);
    /* The reduced systems; lines they mark (hfail[0] of them) go to the pipelined Thomas, whose buffers
     * are allocated before the agreement. */
    fallback fb = {0};
    dfallback df = {0};
    if (!s && work_here) {
        s = fetch_failure(f, "reduced systems",
                          tridi_mpi_cuda_reduced(red->buf, red->cap, P, me, (int64_t)nl, dends, dfail, stream), dfail,
                          hfail, st);
        if (!s && hfail[0]) {
            double *ends = malloc(sizeof(double) * 2 * nl);
            e = ends ? cudaMemcpy(ends, dends, sizeof(double) * 2 * nl, cudaMemcpyDeviceToHost) : cudaSuccess;
            s = !ends ? tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory", f)
                : e != cudaSuccess ? tridi_fail(TRIDI_ERROR_CUDA, "%s: reading x_L, x_R: %s", f, cudaGetErrorString(e))
                                   : dfallback_prepare(f, dp, ends, &fb, &df);
            free(ends);
        }
    }
    s = tridi_mpi_agree(comm, s);
    if (s) {
        fallback_free(&fb);
        dfallback_free(&df);
        return s;
    }
    return device_backward(f, comm, dp, work, dends, dfail, hfail, &fb, &df, st);
}
#endif

static tridi_status mpi_solve_device(const char *f, tridi_context ctx, tridi_decomp d, tridi_axis axis,
                                     const int64_t lo[3], const int64_t hi[3], const tridi_arrays *device_arrays,
                                     void *stream, tridi_status busy)
{
    dplan dp;
    tridi_status s = prepare(f, ctx, 1, d, axis, lo, hi, device_arrays, busy, &dp);
    if (s)
        return s;
#ifdef TRIDI_HAVE_CUDA
    MPI_Comm comm = d->comm;
    const int work_here = dp.has_lines && dp.n > 0;
    cudaStream_t st = (cudaStream_t)stream;
    if (!dp.cut) {
        /* ON_ERROR_CALL in the backend's two phases (backend.h, docs/decisions/020), the ranks' agreement
         * between them: the answers wait in the context's box until every rank has succeeded, then the
         * commit copies them into x (one pass over the box). On one rank tridi_solve_device's own guard. */
        const int solo = d->info.nranks == 1;
        const tridi_backend_ops *ops = tridi_backend_of(ctx);
        tridi_problem p;
        int empty = 1;
        if (work_here)
            s = tridi_validate(f, &d->info.grid, axis, dp.llo, dp.lhi, device_arrays, 1, &p, &empty);
        const int solving = work_here && !s && !empty;
        if (solving)
            s = solo ? ops->solve_device(ctx, &p, NULL, stream) : ops->solve_keep(ctx, &p, TRIDI_MEMORY_DEVICE, stream);
        if (solving && !s) { /* the verdict: the solve's failure word, read once the stream is done */
            cudaError_t e = cudaStreamSynchronize(st);
            s = e == cudaSuccess ? tridi_synchronize(ctx)
                                 : tridi_fail(TRIDI_ERROR_CUDA, "%s: cudaStreamSynchronize: %s", f,
                                              cudaGetErrorString(e));
        }
        if (solo)
            return s;
        s = agree_solve(comm, &dp, s);
        if (solving && s)
            ops->rollback(ctx, TRIDI_MEMORY_DEVICE, stream);
        if (solving && !s) {
            s = ops->commit(ctx, TRIDI_MEMORY_DEVICE, stream);
            cudaError_t e = cudaStreamSynchronize(st);
            if (!s && e != cudaSuccess)
                s = tridi_fail(TRIDI_ERROR_CUDA, "%s: copying the answer: %s", f, cudaGetErrorString(e));
            if (!s) /* with no stream given, the commit ran on the context's own */
                s = tridi_synchronize(ctx);
        }
        return tridi_mpi_agree(comm, s);
    }
    s = reduced_decide(f, d, axis);
    if (s)
        return s;
    dp.ns = work_here ? tridi_mpi_cuda_subblocks(&dp.p, ctx->tuning.mpi_subblocks) : 1;
    if (d->red[axis].state > 0)
        return solve_cut_ipc(f, d, &dp, stream);
    size_t nl = (size_t)dp.nlines;
    /* Pinned host buffers: coefficients (+ the failure word) down, x_L/x_R up. */
    tridi_mpi_scratch *sc = &d->scratch;
    double *coef = tridi_mpi_buffer_get(&sc->pinned_coef, TRIDI_MPI_MEM_PINNED, sizeof(double) * (6 * nl + 2));
    double *ends = tridi_mpi_buffer_get(&sc->pinned_ends, TRIDI_MPI_MEM_PINNED, sizeof(double) * (2 * nl + 1));
    double *dwork = NULL, *dcoef = NULL;
    unsigned long long *dfail = NULL;
    s = (!coef || !ends) ? tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of pinned host memory", f) : TRIDI_SUCCESS;
    if (!s && work_here) {
        dwork = tridi_mpi_buffer_get(&sc->dev_work, TRIDI_MPI_MEM_DEVICE, device_work_bytes(&dp));
        dcoef = tridi_mpi_buffer_get(&sc->dev_small, TRIDI_MPI_MEM_DEVICE, sizeof(double) * (6 * nl + 2));
        if (!dwork || !dcoef)
            s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: no device memory for the work arrays of %zu lines", f, nl);
        else
            dfail = (unsigned long long *)(dcoef + 6 * nl);
    }
    unsigned long long *failp = (unsigned long long *)(coef + 6 * nl);
    if (!s && work_here)
        s = tridi_mpi_cuda_forward(&dp.p, dp.first, dp.last, dp.ns, dwork, dcoef, stream);
    if (!s && work_here) {
        cudaError_t e = cudaMemcpyAsync(coef, dcoef, sizeof(double) * 6 * nl, cudaMemcpyDeviceToHost, st);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(st);
        if (e != cudaSuccess)
            s = tridi_fail(TRIDI_ERROR_CUDA, "%s: reading the reduced coefficients: %s", f, cudaGetErrorString(e));
    }
    s = tridi_mpi_agree(comm, s);
    /* The reduced systems on the host, then the buffers of the lines they marked for the pipelined
     * Thomas, allocated before the agreement. */
    fallback fb = {0};
    dfallback df = {0};
    if (!s) {
        s = dp.has_lines ? reduce(f, d, &dp, coef, ends) : TRIDI_SUCCESS;
        if (!s && work_here)
            s = dfallback_prepare(f, &dp, ends, &fb, &df);
        s = tridi_mpi_agree(comm, s);
    }
    double *dends = dcoef; /* the coefficients are no longer needed on the device */
    if (!s && work_here) {
        cudaError_t e = cudaMemcpyAsync(dends, ends, sizeof(double) * 2 * nl, cudaMemcpyHostToDevice, st);
        if (e != cudaSuccess)
            s = tridi_fail(TRIDI_ERROR_CUDA, "%s: sending x_L, x_R to the device: %s", f, cudaGetErrorString(e));
    }
    s = tridi_mpi_agree(comm, s);
    if (s) {
        fallback_free(&fb);
        dfallback_free(&df);
        return s;
    }
    return device_backward(f, comm, &dp, dwork, dends, dfail, failp, &fb, &df, st);
#else
    (void)stream;
    return tridi_fail(TRIDI_ERROR_INTERNAL, "%s: CUDA context without CUDA support", f);
#endif
}
