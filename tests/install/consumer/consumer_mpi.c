/* An outside MPI C program on an installed tridi (#include <tridi_mpi.h>): a 16 x 3 grid cut along i over
 * the ranks, lines along i (cut by the rank boundaries) with lower = upper = 1, diag = 4 and the exact
 * answer x(i, j) = i + 100 j; every owned cell checked on every rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <tridi_mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, bad = 0, total = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const int64_t ni = 16, nj = 3;
    tridi_decomp_config dc;
    tridi_decomp_config_init(&dc);
    dc.ndim = 2;
    dc.lo[0] = 1; dc.lo[1] = 1; dc.lo[2] = 1;
    dc.hi[0] = ni; dc.hi[1] = nj; dc.hi[2] = 1;
    dc.dims[0] = 0; dc.dims[1] = 1;
    tridi_decomp d;
    tridi_decomp_info inf;
    if (tridi_decomp_create(&d, MPI_Comm_c2f(MPI_COMM_WORLD), &dc) || tridi_decomp_get_info(d, &inf)) {
        fprintf(stderr, "consumer_mpi_c: %s\n", tridi_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const tridi_grid *g = &inf.grid;
    const int64_t e0 = g->ubound[0] - g->lbound[0] + 1, e1 = g->ubound[1] - g->lbound[1] + 1;
    double *a = calloc((size_t)(5 * e0 * e1), sizeof(double));
    double *lower = a, *diag = a + e0 * e1, *upper = a + 2 * e0 * e1, *rhs = a + 3 * e0 * e1, *x = a + 4 * e0 * e1;
#define AT(i, j) (((i) - g->lbound[0]) + ((j) - g->lbound[1]) * e0)
    for (int64_t j = inf.lo[1]; j <= inf.hi[1]; j++)
        for (int64_t i = inf.lo[0]; i <= inf.hi[0]; i++) {
            lower[AT(i, j)] = 1; diag[AT(i, j)] = 4; upper[AT(i, j)] = 1;
            double v = 4.0 * (double)(i + 100 * j);
            if (i > 1) v += (double)(i - 1 + 100 * j);
            if (i < ni) v += (double)(i + 1 + 100 * j);
            rhs[AT(i, j)] = v;
        }
    tridi_context ctx;
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    tridi_arrays arr = {lower, TRIDI_FLOAT64, diag, TRIDI_FLOAT64, upper, TRIDI_FLOAT64, rhs, TRIDI_FLOAT64, x,
                        TRIDI_FLOAT64};
    tridi_status s = tridi_create(&ctx, &cfg);
    if (!s) s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, dc.lo, dc.hi, &arr);
    if (s) {
        fprintf(stderr, "consumer_mpi_c: rank %d: %s\n", rank, tridi_error_message());
        bad++;
    }
    for (int64_t j = inf.lo[1]; j <= inf.hi[1]; j++)
        for (int64_t i = inf.lo[0]; i <= inf.hi[0]; i++) {
            double want = (double)(i + 100 * j), err = x[AT(i, j)] - want;
            if (err > 1e-12 * want || err < -1e-12 * want) bad++;
        }
    tridi_destroy(ctx);
    tridi_decomp_destroy(d);
    free(a);
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("consumer_mpi_c: %d ranks (%d x %d), %d wrong cells\n", inf.nranks, inf.dims[0], inf.dims[1], total);
    MPI_Finalize();
    return total != 0;
}
