/* Promises of tridi_mpi.h kept at the edges: destroyed decompositions and halo plans give
 * TRIDI_ERROR_INVALID_HANDLE without their memory being read (the sanitizer build reports a read of freed
 * memory otherwise); a decomposition's halo plans outlive it. */
#include "mpi_testutil.h"
#include "tridi_mpi.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

static int64_t grid_cells(const tridi_grid *g)
{
    int64_t cells = 1;
    for (int a = 0; a < 3; ++a)
        cells *= g->ubound[a] - g->lbound[a] + 1;
    return cells;
}

/* Destroyed handles: every entry point that takes one refuses it by value. */
static long destroyed_handles(tridi_mpi_comm world)
{
    long bad = 0;
    tridi_decomp_config c;
    mt_base_config(&c, nranks, 6);
    tridi_decomp d = NULL;
    tridi_status s = tridi_decomp_create(&d, world, &c);
    bad += mt_expect("decomposition", s, TRIDI_SUCCESS, NULL);
    if (s)
        return bad;
    tridi_decomp_info in;
    tridi_decomp_get_info(d, &in);
    double *arr = calloc((size_t)grid_cells(&in.grid), sizeof(double));
    tridi_halo h = NULL, h2 = NULL;
    s = tridi_halo_create(&h, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 0, TRIDI_TRANSPORT_AUTO);
    bad += mt_expect("halo plan", s, TRIDI_SUCCESS, NULL);
    s = tridi_halo_create(&h2, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 1, TRIDI_TRANSPORT_AUTO);
    bad += mt_expect("second halo plan", s, TRIDI_SUCCESS, NULL);
    s = tridi_halo_destroy(h);
    bad += mt_expect("destroy of the halo plan", s, TRIDI_SUCCESS, NULL);
    s = tridi_halo_exchange(h, NULL);
    bad += mt_expect("exchange of a destroyed halo plan", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_halo_exchange:");
    tridi_transport t;
    s = tridi_halo_get_transport(h, &t);
    bad += mt_expect("transport of a destroyed halo plan", s, TRIDI_ERROR_INVALID_HANDLE, "not a live halo plan");
    s = tridi_halo_destroy(h);
    bad += mt_expect("second destroy of a halo plan", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_halo_destroy:");

    /* The decomposition destroyed before its last halo plan: dead to the caller, kept for the plan. */
    s = tridi_decomp_destroy(d);
    bad += mt_expect("destroy of the decomposition", s, TRIDI_SUCCESS, NULL);
    s = tridi_decomp_get_info(d, &in);
    bad += mt_expect("info of a destroyed decomposition", s, TRIDI_ERROR_INVALID_HANDLE, "not a live decomposition");
    s = tridi_decomp_destroy(d);
    bad += mt_expect("second destroy of a decomposition", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_decomp_destroy:");
    tridi_halo h3 = NULL;
    s = tridi_halo_create(&h3, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 0, TRIDI_TRANSPORT_AUTO);
    bad += mt_expect("halo plan on a destroyed decomposition", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_halo_create:");
    tridi_context ctx = NULL;
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    tridi_create(&ctx, &cfg);
    int64_t lo[3] = {1, 1, 1}, hi[3] = {6 * (int64_t)nranks, 5, 3};
    tridi_arrays a = {arr, TRIDI_FLOAT64, arr, TRIDI_FLOAT64, arr, TRIDI_FLOAT64, arr, TRIDI_FLOAT64, arr,
                      TRIDI_FLOAT64};
    s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, lo, hi, &a);
    bad += mt_expect("solve on a destroyed decomposition", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_mpi_solve:");
    tridi_destroy(ctx);
    /* Its surviving halo plan still exchanges; its destroy releases the decomposition. */
    for (int64_t i = 0; i < grid_cells(&in.grid); ++i)
        arr[i] = rank;
    s = tridi_halo_exchange(h2, NULL);
    bad += mt_expect("exchange of a plan whose decomposition was destroyed", s, TRIDI_SUCCESS, NULL);
    s = tridi_halo_destroy(h2);
    bad += mt_expect("destroy of that plan", s, TRIDI_SUCCESS, NULL);
    s = tridi_halo_exchange(h2, NULL);
    bad += mt_expect("exchange of it after", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_halo_exchange:");
    free(arr);
    return bad;
}

int main(int argc, char **argv)
{
    int device = 0;
    const char *name = mt_start(&argc, &argv, "test_mpi_promises", &device);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    tridi_mpi_comm world = MPI_Comm_c2f(MPI_COMM_WORLD);
    long bad = 0;
    bad += destroyed_handles(world);
    return mt_finish(name, bad, 0);
}
