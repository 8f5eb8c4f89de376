/* The reduced systems of a cut axis on the host (docs/mpi.md, "Distributed solves"): the first and last
 * unknowns of every block of a line form a banded system (2 sub- and 2 super-diagonals), gathered on
 * every rank of the line and eliminated there without pivoting, only while it stays row diagonally
 * dominant ("Stability of the cut solve"); cuda/mpi_solve.cu solves the same system on the GPU. */
#include "dsolve_internal.h"
#include "thomas_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* Solves each line's reduced system from the gathered coefficients all[rank][6 * nlines] and returns
 * this rank's x_L, x_R in ends[2 * line]. blocks[r] = 1 where rank r of the line holds unknowns. A line
 * that must go to the pipelined Thomas (a block marked it with NaN coefficients, or its reduced system
 * loses diagonal dominance or meets a zero pivot or a non-finite value) gets NaN in both ends. Every
 * rank of the line computes the same marks from the same gathered coefficients. Returns -1 when out of
 * memory, else 0. */
static int reduced_solve(const tridi_dplan *dp, const double *all, const int *blocks, double *ends)
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

/* Gathers the reduced coefficients of the line and solves the reduced systems; ends gets x_L, x_R. */
tridi_status tridi_dsolve_reduce(const char *f, tridi_decomp d, const tridi_dplan *dp, const double *coef,
                                 double *ends)
{
    size_t per = 6 * (size_t)dp->nlines;
    double *all = tridi_mpi_buffer_get(&d->scratch.host_gather, sizeof(double) * per * (size_t)dp->line_size);
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