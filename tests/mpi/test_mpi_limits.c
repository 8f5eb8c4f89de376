/* Decomposition configurations at the ends of the index and count ranges (regressions of
 * tests/fuzz/fuzz_mpi.c): bounds whose halos pass the int64 range, blocks whose extent passes MPI's int
 * counts, halo widths near INT_MAX, and process grids whose product overflows int each overflowed in
 * signed arithmetic before; every rank must now get TRIDI_ERROR_INVALID_VALUE with the same message, and
 * a decomposition right at the index limit (+-2^62) must work, halo exchange and solve included. */
#include "mpi_testutil.h"
#include "tridi_mpi.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

#define LIMIT ((int64_t)1 << 62)

static long create_fails(const char *what, const tridi_decomp_config *c, const char *needle)
{
    tridi_decomp d = (tridi_decomp)&rank;
    tridi_status s = tridi_decomp_create(&d, MPI_Comm_c2f(MPI_COMM_WORLD), c);
    long bad = mt_expect(what, s, TRIDI_ERROR_INVALID_VALUE, needle);
    if (d) {
        printf("rank %d: %s: a failing tridi_decomp_create left *decomp set\n", rank, what);
        bad++;
    }
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *name = "test_mpi_limits";
    long bad = 0;
    tridi_decomp_config c;

    mt_base_config(&c, nranks, 4);
    c.lo[0] = INT64_MIN;
    bad += create_fails("lo[0] = INT64_MIN with a halo", &c, "cannot be addressed");
    mt_base_config(&c, nranks, 4);
    c.hi[1] = INT64_MAX;
    bad += create_fails("hi[1] = INT64_MAX", &c, "cannot be addressed");
    mt_base_config(&c, nranks, 4);
    c.lo[2] = -LIMIT;
    c.halo[2] = 1;
    bad += create_fails("lo[2] - halo[2] below -2^62", &c, "config->lo[2]");
    mt_base_config(&c, nranks, 4);
    c.lo[0] = 1;
    c.hi[0] = (int64_t)INT_MAX + 5;
    bad += create_fails("more than INT_MAX cells along i", &c, "cannot be addressed");
    mt_base_config(&c, nranks, 4);
    c.halo[1] = INT_MAX;
    bad += create_fails("halo[1] = INT_MAX", &c, "halo[1] = 2147483647");
    mt_base_config(&c, nranks, 4);
    c.hi[0] = c.hi[1] = c.hi[2] = (int64_t)1 << 30; /* 2^90 cells */
    bad += create_fails("a grid of 2^90 cells", &c, "cannot be addressed");
    mt_base_config(&c, nranks, 4);
    c.dims[0] = 65536;
    c.dims[1] = 65536;
    bad += create_fails("dims 65536 x 65536", &c, "needs 4294967296 ranks");

    /* Right at the limit: the last global cell at 2^62 with a halo of 0 on that side's axis... */
    mt_base_config(&c, nranks, 4);
    c.halo[2] = 0;
    c.lo[2] = LIMIT - 3;
    c.hi[2] = LIMIT;
    c.lo[0] = -LIMIT + 1; /* ... and the first at -2^62 + 1, its halo cell at -2^62 */
    c.hi[0] = c.lo[0] + 4 * nranks - 1;
    c.periodic[0] = 1;
    tridi_decomp d = NULL;
    tridi_status s = tridi_decomp_create(&d, MPI_Comm_c2f(MPI_COMM_WORLD), &c);
    bad += mt_expect("decomposition at the index limit", s, TRIDI_SUCCESS, NULL);
    if (!s) {
        tridi_decomp_info in;
        tridi_decomp_get_info(d, &in);
        int64_t e0 = in.grid.ubound[0] - in.grid.lbound[0] + 1, e1 = in.grid.ubound[1] - in.grid.lbound[1] + 1,
                e2 = in.grid.ubound[2] - in.grid.lbound[2] + 1, cells = e0 * e1 * e2;
        double *arr = malloc(sizeof(double) * (size_t)cells);
        /* Owned cells hold their global i; halos -1. */
        for (int64_t k = 0; k < e2; ++k)
            for (int64_t j = 0; j < e1; ++j)
                for (int64_t i = 0; i < e0; ++i) {
                    int64_t gi = in.grid.lbound[0] + i, gj = in.grid.lbound[1] + j;
                    int owned = gi >= in.lo[0] && gi <= in.hi[0] && gj >= in.lo[1] && gj <= in.hi[1];
                    arr[i + e0 * (j + e1 * k)] = owned ? (double)(gi - c.lo[0]) : -1.0;
                }
        tridi_halo h = NULL;
        s = tridi_halo_create(&h, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 0, TRIDI_TRANSPORT_AUTO);
        if (!s)
            s = tridi_halo_exchange(h, NULL);
        bad += mt_expect("halo exchange at the index limit", s, TRIDI_SUCCESS, NULL);
        /* The i halos wrap around the periodic axis: below the block the neighbour's last cell. */
        int64_t n0 = c.hi[0] - c.lo[0] + 1, below = (in.lo[0] - 1 - c.lo[0] + n0) % n0;
        long wrong = 0;
        for (int64_t k = 0; k < e2; ++k)
            for (int64_t j = 1; j < e1 - 1; ++j)
                wrong += arr[0 + e0 * (j + e1 * k)] != (double)below;
        if (wrong) {
            printf("rank %d: %ld halo cells below the block do not hold %lld\n", rank, wrong, (long long)below);
            bad++;
        }
        bad = mt_total(bad);
        tridi_halo_destroy(h);

        tridi_context ctx;
        tridi_config cfg;
        tridi_config_init(&cfg);
        cfg.backend = TRIDI_BACKEND_CPU;
        tridi_create(&ctx, &cfg);
        double *diag = malloc(sizeof(double) * (size_t)cells), *x = calloc((size_t)cells, sizeof(double));
        double *off = calloc((size_t)cells, sizeof(double));
        for (int64_t q = 0; q < cells; ++q)
            diag[q] = 2.0;
        tridi_arrays a = {off, TRIDI_FLOAT64, diag, TRIDI_FLOAT64, off, TRIDI_FLOAT64, diag, TRIDI_FLOAT64, x,
                          TRIDI_FLOAT64};
        int64_t lo[3] = {c.lo[0], c.lo[1], c.lo[2]}, hi[3] = {c.hi[0], c.hi[1], c.hi[2]};
        s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, lo, hi, &a);
        bad += mt_expect("solve at the index limit (cut axis)", s, TRIDI_SUCCESS, NULL);
        s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_Z, lo, hi, &a);
        bad += mt_expect("solve at the index limit (uncut axis)", s, TRIDI_SUCCESS, NULL);
        /* diag 2, rhs 2, no coupling: x = 1 on the owned cells of the box. */
        long off_one = 0;
        for (int64_t k = 0; k < e2; ++k)
            for (int64_t j = 0; j < e1; ++j)
                for (int64_t i = 0; i < e0; ++i) {
                    int64_t gi = in.grid.lbound[0] + i, gj = in.grid.lbound[1] + j;
                    int owned = gi >= in.lo[0] && gi <= in.hi[0] && gj >= in.lo[1] && gj <= in.hi[1];
                    off_one += owned && x[i + e0 * (j + e1 * k)] != 1.0;
                }
        if (off_one) {
            printf("rank %d: %ld owned cells are not 1 after the solve\n", rank, off_one);
            bad++;
        }
        bad = mt_total(bad);
        tridi_destroy(ctx);
        free(diag);
        free(x);
        free(off);
        free(arr);
    }
    tridi_decomp_destroy(d);
    return mt_finish(name, bad, 0);
}
