/* The one guard across ranks (src/backend.h, docs/decisions/053) with the test-only verdict injection
 * (TRIDI_FAULT_INJECTION): one rank's successful solve, its verdict turned into a failure, must leave x
 * bitwise as it was on every rank, with the injected failure reported on every rank, for the cut axis (the
 * cut solve's undo copy) and the uncut ones (the backend's two phases, the ranks' agreement between), each
 * rank in turn the one failing; the next solve answers bitwise as the first. On one rank a one-phase
 * strategy (device arrays, host arrays on the GPU) applies its verdict inside the solve: the injection is
 * not reached there. Modes: CPU, --device, --host-on-gpu. */
#include "mpi_testutil.h"

#include <math.h>
#include <stdlib.h>

void tridi_test_fail_verdict(int nth); /* the hook (src/backend.c), in TRIDI_FAULT_INJECTION builds only */

static int rank, nranks;

static int64_t grid_cells(const tridi_grid *g)
{
    int64_t c = 1;
    for (int a = 0; a < g->ndim; ++a)
        c *= g->ubound[a] - g->lbound[a] + 1;
    return c;
}

int main(int argc, char **argv)
{
    int device;
    const char *name = mt_start(&argc, &argv, "test_mpi_guard", &device);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    tridi_context ctx = NULL;
    const int made = mt_create_context(device, name, &ctx);
    if (made)
        return mt_finish(name, made == 77 ? 0 : 1, made == 77);
    uint64_t rng = mt_seed("test_mpi_guard") + 7919u * (uint64_t)rank;
    tridi_decomp_config c;
    mt_base_config(&c, nranks, 6);
    c.halo[0] = c.halo[1] = 0; /* x is the box: every cell of it re-poisoned, every cell answered */
    tridi_decomp d = NULL;
    long bad = mt_expect("decomposition", tridi_decomp_create(&d, MPI_Comm_c2f(MPI_COMM_WORLD), &c), TRIDI_SUCCESS, NULL);
    tridi_decomp_info in;
    tridi_decomp_get_info(d, &in);
    const int64_t cells = grid_cells(&in.grid);
    double *A[5], *first = malloc((size_t)cells * sizeof(double)), *poison = malloc((size_t)cells * sizeof(double));
    for (int r = 0; r < 5; ++r)
        A[r] = malloc((size_t)cells * sizeof(double));
    for (int64_t i = 0; i < cells; ++i) {
        A[0][i] = 2 * tu_uniform(&rng) - 1;
        A[2][i] = 2 * tu_uniform(&rng) - 1;
        A[1][i] = (fabs(A[0][i]) + fabs(A[2][i]) + 0.5) * (tu_uniform(&rng) < 0.5 ? -1 : 1);
        A[3][i] = 2 * tu_uniform(&rng) - 1;
    }
    tridi_arrays a = {A[0], TRIDI_FLOAT64, A[1], TRIDI_FLOAT64, A[2], TRIDI_FLOAT64, A[3], TRIDI_FLOAT64, A[4],
                      TRIDI_FLOAT64};
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {6 * (int64_t)nranks, 5, 3};
    /* one-phase where the verdict is the solve's own on a GPU */
    const int two_phase = !(device && nranks == 1);
    for (int axis = 0; axis < 3; ++axis) {
        for (int64_t i = 0; i < cells; ++i)
            A[4][i] = 1e30 * (2 * tu_uniform(&rng) - 1);
        char what[160];
        snprintf(what, sizeof what, "axis %c (%s), first solve", "xyz"[axis], axis == 0 && nranks > 1 ? "cut" : "uncut");
        bad += mt_expect(what, mt_solve(ctx, device, d, cells, (tridi_axis)axis, lo, hi, &a), TRIDI_SUCCESS, NULL);
        memcpy(first, A[4], (size_t)cells * sizeof(double));
        for (int victim = 0; victim < nranks; ++victim) {
            for (int64_t i = 0; i < cells; ++i)
                poison[i] = A[4][i] = 1e30 * (2 * tu_uniform(&rng) - 1);
            if (rank == victim)
                tridi_test_fail_verdict(1);
            snprintf(what, sizeof what, "axis %c, rank %d's verdict injected", "xyz"[axis], victim);
            const tridi_status s = mt_solve(ctx, device, d, cells, (tridi_axis)axis, lo, hi, &a);
            tridi_test_fail_verdict(0);
            bad += mt_expect(what, s, two_phase ? TRIDI_ERROR_INTERNAL : TRIDI_SUCCESS,
                             "injected failure of the verdict");
            long changed = 0;
            for (int64_t i = 0; i < cells; ++i)
                changed += two_phase ? memcmp(&A[4][i], &poison[i], sizeof(double)) != 0
                                     : memcmp(&A[4][i], &first[i], sizeof(double)) != 0;
            if (changed)
                printf("rank %d: %s: %ld cells of x %s\n", rank, what, changed,
                       two_phase ? "changed (no rollback)" : "differ from the first solve's");
            bad += mt_total(changed != 0);
            snprintf(what, sizeof what, "axis %c, the solve after rank %d's injection", "xyz"[axis], victim);
            bad += mt_expect(what, mt_solve(ctx, device, d, cells, (tridi_axis)axis, lo, hi, &a), TRIDI_SUCCESS, NULL);
            changed = 0;
            for (int64_t i = 0; i < cells; ++i)
                changed += memcmp(&A[4][i], &first[i], sizeof(double)) != 0;
            if (changed)
                printf("rank %d: %s: %ld cells differ from the first solve's\n", rank, what, changed);
            bad += mt_total(changed != 0);
        }
    }
    tridi_decomp_destroy(d);
    tridi_destroy(ctx);
    for (int r = 0; r < 5; ++r)
        free(A[r]);
    free(first);
    free(poison);
    return mt_finish(name, bad, 0);
}
