/* The reduced systems of a cut axis on the host (docs/mpi.md, "Distributed solves"): the first and last
 * unknowns of every block of a line form a banded system (2 sub- and 2 super-diagonals), gathered on
 * every rank of the line and eliminated there without pivoting, only while it stays row diagonally
 * dominant ("Stability of the cut solve"); the band solve is src/thomas_core.h's, which cuda/mpi_solve.cu
 * runs on the GPU. */
#include "dsolve_internal.h"
#include "thomas_core.h"

#include <stdlib.h>

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
    int oom = 0;
#pragma omp parallel
    {
        double *band = malloc(sizeof(double) * 12 * (size_t)Q); /* 5 diagonals and the right-hand side per row */
        if (!band) {
#pragma omp atomic write
            oom = 1;
        }
#pragma omp for schedule(static)
        for (int64_t l = 0; l < dp->nlines; ++l)
            if (band)
                tridi_reduced_line(all + 6 * l, 6 * (size_t)dp->nlines, idx, Q, me, band, band + 10 * Q, ends + 2 * l);
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