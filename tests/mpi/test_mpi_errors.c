/* Errors of the MPI layer: ranks that disagree (grid, halo, dtype, solve box), halos that do not fit,
 * a bad argument on one rank only, device arrays where they cannot be used. Every rank must return
 * the same status with the same message, and nobody may hang (ctest's TIMEOUT catches that). */
#include "mpi_testutil.h"
#include "tridi_mpi.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef TRIDI_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

static int rank, nranks;

/* A disagreement is found by every rank together: its message names the ranks and their values, and
 * does not start with "rank R:" as if rank R alone had failed. */
static long names_ranks(const char *what, tridi_status s, const char *needle)
{
    long bad = 0;
    const char *msg = tridi_error_message();
    if (nranks > 1 && (s != TRIDI_ERROR_MISMATCH || !strncmp(msg, "rank ", 5) || !strstr(msg, needle))) {
        printf("rank %d: %s: the message should name \"%s\" without a leading rank: %s\n", rank, what, needle, msg);
        bad++;
    }
    return mt_total(bad);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *name = "test_mpi_errors";
    tridi_mpi_comm world = MPI_Comm_c2f(MPI_COMM_WORLD);
    long bad = 0;
    tridi_decomp d = NULL;
    tridi_decomp_config c;

    mt_base_config(&c, nranks, 6);
    if (rank == nranks - 1)
        c.hi[1] += 1;
    tridi_status s = tridi_decomp_create(&d, world, &c);
    bad += mt_expect("grid differs on the last rank", s, nranks > 1 ? TRIDI_ERROR_MISMATCH : TRIDI_SUCCESS, NULL);
    char needle[160];
    snprintf(needle, sizeof needle, "config->hi[1]: rank 0 passed 5, rank %d passed 6", nranks - 1);
    bad += names_ranks("grid differs on the last rank", s, needle);
    tridi_decomp_destroy(d);

    mt_base_config(&c, nranks, 6);
    if (rank == nranks - 1)
        c.halo[0] = 2;
    s = tridi_decomp_create(&d, world, &c);
    bad += mt_expect("halo width differs on the last rank", s, nranks > 1 ? TRIDI_ERROR_MISMATCH : TRIDI_SUCCESS, NULL);
    tridi_decomp_destroy(d);

    mt_base_config(&c, nranks, 6);
    if (rank == 0)
        c.solve_transport = TRIDI_TRANSPORT_STAGED;
    s = tridi_decomp_create(&d, world, &c);
    bad += mt_expect("solve transport differs on rank 0", s, nranks > 1 ? TRIDI_ERROR_MISMATCH : TRIDI_SUCCESS, NULL);
    tridi_decomp_destroy(d);

    mt_base_config(&c, nranks, 6);
    c.solve_transport = TRIDI_TRANSPORT_CUDA_AWARE;
    s = tridi_decomp_create(&d, world, &c);
    bad += mt_expect("solve transport cuda-aware", s, TRIDI_ERROR_INVALID_VALUE, NULL);

    mt_base_config(&c, nranks, 6);
    c.halo[0] = 7; /* blocks of 6 cells */
    c.periodic[0] = 1;
    s = tridi_decomp_create(&d, world, &c);
    bad += mt_expect("halo wider than a block", s, TRIDI_ERROR_BOUNDS, NULL);
    tridi_decomp_destroy(d);

    mt_base_config(&c, nranks, 6);
    s = tridi_decomp_create(&d, world, rank == nranks - 1 ? NULL : &c);
    bad += mt_expect("NULL config on the last rank", s, TRIDI_ERROR_NULL_POINTER, NULL);
    tridi_decomp_destroy(d);

    /* Issue 24 item 3: a NULL output argument on one rank returned at once there and left the others
     * waiting in the agreement (ctest's TIMEOUT turns such a hang into a failure). */
    mt_base_config(&c, nranks, 6);
    d = NULL;
    s = tridi_decomp_create(rank == nranks - 1 ? NULL : &d, world, &c);
    bad += mt_expect("NULL 'decomp' on the last rank", s, TRIDI_ERROR_NULL_POINTER, "'decomp' is NULL");
    if (d) {
        printf("rank %d: a failed tridi_decomp_create left a decomposition\n", rank);
        bad++;
    }
    /* A rank given MPI_COMM_NULL is outside the communicator the others pass (MPI_Comm_split with
     * MPI_UNDEFINED): it fails alone and at once, and the others decompose among themselves. */
    {
        MPI_Comm sub;
        MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, rank, &sub);
        tridi_decomp_config cs;
        mt_base_config(&cs, nranks > 1 ? nranks - 1 : 1, 6);
        tridi_decomp ds = NULL;
        s = tridi_decomp_create(&ds, MPI_Comm_c2f(sub), &cs);
        tridi_status want = rank == 0 ? TRIDI_ERROR_INVALID_VALUE : TRIDI_SUCCESS;
        long b = s != want || (rank == 0 && !strstr(tridi_error_message(), "MPI_COMM_NULL"));
        if (b)
            printf("rank %d: decomposition of a communicator without rank 0: %s (%s)\n", rank, tridi_status_name(s),
                   tridi_error_message());
        tridi_decomp_destroy(ds);
        if (sub != MPI_COMM_NULL)
            MPI_Comm_free(&sub);
        if (rank == 0)
            printf("MPI_COMM_NULL on rank 0 only, the others on a communicator without it: %s\n", b ? "wrong" : "ok");
        bad += mt_total(b);
    }

    mt_base_config(&c, nranks, 6);
    c.dims[0] = nranks + 1;
    s = tridi_decomp_create(&d, world, &c);
    bad += mt_expect("process grid larger than the communicator", s, TRIDI_ERROR_INVALID_VALUE, NULL);

    mt_base_config(&c, nranks, 6);
    s = tridi_decomp_create(&d, world, &c);
    bad += mt_expect("valid decomposition", s, TRIDI_SUCCESS, NULL);
    tridi_decomp_info in;
    tridi_decomp_get_info(d, &in);
    int64_t cells = 1;
    for (int a = 0; a < 3; ++a)
        cells *= in.grid.ubound[a] - in.grid.lbound[a] + 1;
    double *arr = calloc((size_t)cells, sizeof(double));

    tridi_halo h = NULL;
    s = tridi_halo_create(&h, d, arr, rank == 0 ? TRIDI_FLOAT32 : TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 0,
                          TRIDI_TRANSPORT_AUTO);
    bad += mt_expect("halo dtype differs on rank 0", s, nranks > 1 ? TRIDI_ERROR_MISMATCH : TRIDI_SUCCESS, NULL);
    tridi_halo_destroy(h);
    h = NULL;
    s = tridi_halo_create(&h, d, rank == nranks - 1 ? NULL : arr, TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 0,
                          TRIDI_TRANSPORT_AUTO);
    bad += mt_expect("NULL halo array on the last rank", s, TRIDI_ERROR_NULL_POINTER, NULL);
    h = NULL;
    s = tridi_halo_create(rank == nranks - 1 ? NULL : &h, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 0,
                          TRIDI_TRANSPORT_AUTO);
    bad += mt_expect("NULL 'halo' on the last rank", s, TRIDI_ERROR_NULL_POINTER, "'halo' is NULL");
    h = NULL;
    /* Issue 24 item 8: the transport is ignored for host arrays (tridi_mpi.h), so 99 is no error. */
    s = tridi_halo_create(&h, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 0, (tridi_transport)99);
    bad += mt_expect("host halo with transport 99", s, TRIDI_SUCCESS, NULL);
    if (!s) {
        s = tridi_halo_exchange(h, NULL);
        bad += mt_expect("exchange of that host halo", s, TRIDI_SUCCESS, NULL);
        /* Errors of tridi_halo_exchange name it, and it does not end an exchange the caller began. */
        tridi_halo_begin(h, NULL);
        s = tridi_halo_exchange(h, NULL);
        bad += mt_expect("tridi_halo_exchange during a begun exchange", s, TRIDI_ERROR_INVALID_VALUE,
                         "tridi_halo_exchange: an exchange of this halo is already under way");
        s = tridi_halo_end(h);
        bad += mt_expect("tridi_halo_end of the exchange begun before", s, TRIDI_SUCCESS, NULL);
        tridi_halo_destroy(h);
    }
    h = NULL;
    s = tridi_halo_exchange(NULL, NULL);
    bad += mt_expect("tridi_halo_exchange of NULL", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_halo_exchange:");
    /* A device halo where this rank sees no GPU says so (it said "CUDA driver version is insufficient"). */
    {
        int gpus = 0;
        tridi_status want = TRIDI_ERROR_UNSUPPORTED; /* a build without CUDA */
        const char *say = "built with CUDA";
#ifdef TRIDI_TEST_CUDA
        if (cudaGetDeviceCount(&gpus) != cudaSuccess)
            gpus = 0;
        want = TRIDI_ERROR_NO_DEVICE;
        say = "sees no GPU";
#endif
        int all_gpus = 0;
        MPI_Allreduce(&gpus, &all_gpus, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (!all_gpus) {
            void *dev_array = arr; /* never dereferenced: refused before any use */
            s = tridi_halo_create(&h, d, dev_array, TRIDI_FLOAT64, TRIDI_MEMORY_DEVICE, 0, TRIDI_TRANSPORT_AUTO);
            bad += mt_expect("device halo without a GPU", s, want, say);
            h = NULL;
        }
    }
    /* A host array passed as device memory: no build and no machine can accept it. */
    s = tridi_halo_create(&h, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_DEVICE, 0, TRIDI_TRANSPORT_STAGED);
    int code = (int)s, lo_code, hi_code;
    MPI_Allreduce(&code, &lo_code, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&code, &hi_code, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("host array as device memory: %s - %s\n", tridi_status_name(s), tridi_error_message());
    if (s == TRIDI_SUCCESS || lo_code != hi_code) {
        printf("rank %d: host array as device memory: %s (statuses %d..%d across ranks)\n", rank,
               tridi_status_name(s), lo_code, hi_code);
        bad++;
    }
    bad = mt_total(bad) ? bad : 0;

    tridi_context ctx;
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    tridi_create(&ctx, &cfg);
    double *diag = malloc(sizeof(double) * (size_t)cells), *x = calloc((size_t)cells, sizeof(double));
    for (int64_t i = 0; i < cells; ++i)
        diag[i] = 4.0;
    tridi_arrays a = {arr, TRIDI_FLOAT64, diag, TRIDI_FLOAT64, arr, TRIDI_FLOAT64, arr, TRIDI_FLOAT64, x,
                      TRIDI_FLOAT64};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {6 * nranks, 5, 3};
    if (rank == nranks - 1)
        hi[2] = 2;
    s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, lo, hi, &a);
    bad += mt_expect("solve box differs on the last rank", s, nranks > 1 ? TRIDI_ERROR_MISMATCH : TRIDI_SUCCESS, NULL);
    snprintf(needle, sizeof needle, "hi[2]: rank %d passed 2, rank 0 passed 3", nranks - 1);
    bad += names_ranks("solve box differs on the last rank", s, needle);
    /* Every rank passing no decomposition: each fails at once, alone (there is no communicator). */
    s = tridi_mpi_solve(ctx, NULL, TRIDI_AXIS_X, lo, hi, &a);
    bad += mt_expect("NULL decomposition on every rank", s, TRIDI_ERROR_INVALID_HANDLE, "'decomp' is NULL");
    hi[2] = 3;
    hi[1] = 7; /* 5 cells + 1 halo */
    s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, lo, hi, &a);
    bad += mt_expect("box outside the global grid", s, TRIDI_ERROR_BOUNDS, NULL);
    hi[1] = 5;
    tridi_arrays a2 = a;
    if (rank == nranks - 1)
        a2.upper = NULL;
    s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, lo, hi, &a2);
    bad += mt_expect("NULL upper on the last rank", s, TRIDI_ERROR_NULL_POINTER, NULL);
    a2 = a;
    a2.x = diag + 1;
    s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_Z, lo, hi, rank == 0 ? &a2 : &a);
    bad += mt_expect("x overlapping diag on rank 0 (uncut axis)", s, TRIDI_ERROR_ALIASING, NULL);
    s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, lo, hi, rank == 0 ? &a2 : &a);
    bad += mt_expect("x overlapping diag on rank 0 (cut axis)", s, TRIDI_ERROR_ALIASING, NULL);
    s = tridi_mpi_solve(ctx, d, (tridi_axis)3, lo, hi, &a);
    bad += mt_expect("axis 3", s, TRIDI_ERROR_INVALID_VALUE, NULL);
    s = tridi_mpi_solve_device(ctx, d, TRIDI_AXIS_X, lo, hi, &a, NULL);
    bad += mt_expect("device solve on a CPU context", s, TRIDI_ERROR_UNSUPPORTED, NULL);
    /* A corner past -2^62..2^62 is refused as by tridi_solve; INT64_MIN used to be negated in the
     * all-reduce that compares the boxes (signed overflow) and then reported as BOUNDS. */
    const int64_t far_lo[3] = {INT64_MIN, 1, 1};
    s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, far_lo, hi, &a);
    bad += mt_expect("box corner lo[0] = INT64_MIN", s, TRIDI_ERROR_INVALID_VALUE, "index range");

    /* Numerical failures on the cut axis are those of tridi_solve, on every rank, with x unchanged.
     * An Inf diag used to give 1/pivot = 0 and a silent answer; a float answer past FLT_MAX used to be
     * written as Inf with TRIDI_SUCCESS. (x = rhs / diag: the lines are uncoupled.) */
    {
        const int64_t inf_cell[3] = {6 * nranks - 1, 3, 2}; /* on the last rank's block */
        double *rhs = malloc(sizeof(double) * (size_t)cells);
        float *f_lu = calloc((size_t)cells, sizeof(float)), *f_diag = malloc(sizeof(float) * (size_t)cells);
        float *f_rhs = malloc(sizeof(float) * (size_t)cells), *f_x = malloc(sizeof(float) * (size_t)cells);
        for (int64_t i = 0; i < cells; ++i) {
            rhs[i] = 1.0;
            x[i] = -5.0;
            f_diag[i] = rank == nranks - 1 ? 1e-30f : 1.0f; /* x = 1e40 on the last rank only */
            f_rhs[i] = 1e10f;
            f_x[i] = -5.0f;
        }
        if (inf_cell[0] >= in.lo[0] && inf_cell[0] <= in.hi[0])
            diag[tu_index(&in.grid, inf_cell[0], inf_cell[1], inf_cell[2])] = INFINITY;
        tridi_arrays ai = {arr, TRIDI_FLOAT64, diag, TRIDI_FLOAT64, arr, TRIDI_FLOAT64, rhs, TRIDI_FLOAT64, x,
                           TRIDI_FLOAT64};
        s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, lo, hi, &ai);
        bad += mt_expect("Inf diag (cut axis)", s, TRIDI_ERROR_NONFINITE, NULL);
        int64_t cell[3];
        int nd = tridi_error_cell(cell);
        long wrong = nd != 3 || cell[0] != inf_cell[0] || cell[1] != inf_cell[1] || cell[2] != inf_cell[2];
        for (int64_t i = 0; i < cells; ++i)
            wrong += x[i] != -5.0;
        tridi_arrays af = {f_lu, TRIDI_FLOAT32, f_diag, TRIDI_FLOAT32, f_lu, TRIDI_FLOAT32, f_rhs, TRIDI_FLOAT32, f_x,
                           TRIDI_FLOAT32};
        s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, lo, hi, &af);
        bad += mt_expect("float answers past FLT_MAX on the last rank (cut axis)", s, TRIDI_ERROR_NONFINITE,
                         "overflows");
        /* The lowest failing line at its highest unknown; the other ranks' answers were good, and are
         * not written either. */
        nd = tridi_error_cell(cell);
        wrong += nd != 3 || cell[0] != 6 * nranks || cell[1] != 1 || cell[2] != 1;
        for (int64_t i = 0; i < cells; ++i)
            wrong += f_x[i] != -5.0f;
        if (wrong) {
            printf("rank %d: numerical failures: wrong cell (%lld, %lld, %lld) or %ld cells of x written\n", rank,
                   (long long)cell[0], (long long)cell[1], (long long)cell[2], wrong);
            bad++;
        }
        free(rhs);
        free(f_lu);
        free(f_diag);
        free(f_rhs);
        free(f_x);
    }

    tridi_destroy(ctx);
    tridi_decomp_destroy(d);
    free(arr);
    free(diag);
    free(x);
    return mt_finish(name, bad, 0);
}
