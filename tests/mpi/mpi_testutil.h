/* Helpers shared by the MPI tests: a seed agreed by all ranks, a verdict agreed by all ranks. */
#ifndef TRIDI_MPI_TESTUTIL_H
#define TRIDI_MPI_TESTUTIL_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"
#include "tridi_mpi.h"

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
