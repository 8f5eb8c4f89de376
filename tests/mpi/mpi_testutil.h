/* Helpers shared by the MPI tests: a seed agreed by all ranks, a verdict agreed by all ranks, the context
 * of a test's "--device" mode and the distributed solve through device copies. */
#ifndef TRIDI_MPI_TESTUTIL_H
#define TRIDI_MPI_TESTUTIL_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "tridi_mpi.h"

#ifdef TRIDI_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

/* Rank 0 draws (and prints) the seed; every rank gets it. */
static inline uint64_t mt_seed(const char *name)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    uint64_t seed = 0;
    if (rank == 0)
        seed = tu_seed(name);
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    return seed;
}

/* Sum of the failures of all ranks. */
static inline long mt_total(long bad)
{
    long total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* A 3D decomposition of `width` i cells per rank (cut along i only), 5 x 3 cells in j, k, from 1. */
static inline void mt_base_config(tridi_decomp_config *c, int nranks, int width)
{
    tridi_decomp_config_init(c);
    c->ndim = 3;
    c->lo[0] = c->lo[1] = c->lo[2] = 1;
    c->hi[0] = (int64_t)width * nranks;
    c->hi[1] = 5;
    c->hi[2] = 3;
    c->dims[0] = nranks;
    c->dims[1] = 1;
}

/* The status must be `want` on every rank, the message must contain needle (when not NULL) and be the
 * same on every rank. Returns the failures of all ranks. */
static inline long mt_expect(const char *what, tridi_status got, tridi_status want, const char *needle)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char msg[1024] = {0}, first[1024] = {0};
    strncpy(msg, tridi_error_message(), sizeof msg - 1);
    if (rank == 0)
        memcpy(first, msg, sizeof msg);
    MPI_Bcast(first, (int)sizeof first, MPI_CHAR, 0, MPI_COMM_WORLD);
    long bad = 0;
    if (got != want || (want && needle && !strstr(msg, needle))) {
        printf("rank %d: %s: got %s, expected %s with \"%s\" (%s)\n", rank, what, tridi_status_name(got),
               tridi_status_name(want), needle ? needle : "", msg);
        bad++;
    } else if (want != TRIDI_SUCCESS && strcmp(msg, first)) {
        printf("rank %d: %s: message differs from rank 0's:\n  here:   %s\n  rank 0: %s\n", rank, what, msg, first);
        bad++;
    }
    if (rank == 0)
        printf("%s: %s%s%s\n", what, tridi_status_name(got), want ? " - " : "", want ? msg : "");
    return mt_total(bad);
}

/* Starts an MPI test: MPI_Init, then *device from the first argument: 1 for "--device" (device arrays on
 * GPUs), 2 for "--host-on-gpu" (host arrays on a CUDA context: tests that pass it solve with mt_solve only),
 * else 0. Returns the name the test prints: `test`, followed by the mode. */
static inline const char *mt_start(int *argc, char ***argv, const char *test, int *device)
{
    static char name[128];
    MPI_Init(argc, argv);
    const char *mode = *argc > 1 ? (*argv)[1] : "";
    *device = !strcmp(mode, "--device") ? 1 : !strcmp(mode, "--host-on-gpu") ? 2 : 0;
    snprintf(name, sizeof name, "%s%s", test, *device == 1 ? " (device)" : *device == 2 ? " (host arrays, GPU)" : "");
    return name;
}

/* Creates the context the test solves with: the CPU backend, or with device the CUDA backend on GPU
 * rank % (GPU count). Returns 0; 77 (skip) when device is asked and there is no GPU or no CUDA in this
 * build, after rank 0 says so; 1 when tridi_create fails, its message printed. */
static inline int mt_create_context(int device, const char *name, tridi_context *ctx)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    if (device) {
#ifdef TRIDI_TEST_CUDA
        int ndev = 0;
        if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
            if (rank == 0)
                printf("%s: no GPU\n", name);
            return 77;
        }
        cudaSetDevice(rank % ndev);
        cfg.backend = TRIDI_BACKEND_CUDA;
        cfg.device = rank % ndev;
#else
        (void)name;
        return 77;
#endif
    }
    if (tridi_create(ctx, &cfg)) {
        printf("rank %d: tridi_create: %s\n", rank, tridi_error_message());
        return 1;
    }
    return 0;
}

/* The distributed solve of the local arrays a (cells: the local grid's cells): with device 1, through
 * device copies of the five arrays (one for rhs and x when x is rhs), x copied back; else on a itself. */
static inline tridi_status mt_solve(tridi_context ctx, int device, tridi_decomp d, int64_t cells, tridi_axis axis,
                                    const int64_t lo[3], const int64_t hi[3], tridi_arrays *a)
{
    if (device != 1)
        return tridi_mpi_solve(ctx, d, axis, lo, hi, a);
#ifdef TRIDI_TEST_CUDA
    tridi_arrays dv = *a;
    const void *hp[5] = {a->lower, a->diag, a->upper, a->rhs, a->x};
    tridi_dtype ht[5] = {a->lower_type, a->diag_type, a->upper_type, a->rhs_type, a->x_type};
    void *dp[5] = {0};
    for (int r = 0; r < 5; ++r) {
        if (r == 4 && a->x == a->rhs) {
            dp[4] = dp[3];
            continue;
        }
        cudaMalloc(&dp[r], cells * tu_esize(ht[r]));
        cudaMemcpy(dp[r], hp[r], cells * tu_esize(ht[r]), cudaMemcpyHostToDevice);
    }
    cudaDeviceSynchronize(); /* a pageable upload may return before its DMA lands */
    dv.lower = dp[0];
    dv.diag = dp[1];
    dv.upper = dp[2];
    dv.rhs = dp[3];
    dv.x = dp[4];
    tridi_status s = tridi_mpi_solve_device(ctx, d, axis, lo, hi, &dv, NULL);
    cudaMemcpy(a->x, dp[4], cells * tu_esize(a->x_type), cudaMemcpyDeviceToHost);
    for (int r = 0; r < 5; ++r)
        if (!(r == 4 && a->x == a->rhs))
            cudaFree(dp[r]);
    return s;
#else
    (void)ctx; (void)d; (void)cells; (void)axis; (void)lo; (void)hi;
    return TRIDI_ERROR_UNSUPPORTED;
#endif
}

/* Ends the test: 0 when no rank failed, 1 otherwise, 77 (skip) when skip is set on every rank. */
static inline int mt_finish(const char *name, long bad, int skip)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    long total = mt_total(bad);
    if (rank == 0)
        printf("%s: %s (%ld failures)\n", name, skip ? "SKIPPED" : total ? "FAILED" : "passed", total);
    MPI_Finalize();
    return skip ? 77 : total ? 1 : 0;
}

#endif
