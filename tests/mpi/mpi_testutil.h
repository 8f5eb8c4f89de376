/* Helpers shared by the MPI tests: a seed agreed by all ranks, a verdict agreed by all ranks. */
#ifndef TRIDI_MPI_TESTUTIL_H
#define TRIDI_MPI_TESTUTIL_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

#include "testutil.h"

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
