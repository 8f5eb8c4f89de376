/* Internal declarations of the MPI layer (src/mpi, cuda/mpi_*.cu). Not installed. */
#ifndef TRIDI_MPI_INTERNAL_H
#define TRIDI_MPI_INTERNAL_H

#include "tridi_internal.h"
#include "tridi_mpi.h"

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most ranks along one line whose reduced systems the GPU solves (beyond: through the host). */
#define TRIDI_MPI_MAX_LINE 16

/* GPU-to-GPU exchange of the reduced systems of one cut axis: each rank of a line owns a gather buffer
 * of line_size slots (6 coefficients per line + a flag word saying whether the rank holds unknowns) and
 * writes its own slot into every other rank's buffer through CUDA IPC. */
typedef struct tridi_reduced_ipc {
    int state;                              /* 0: not decided yet; 1: IPC; -1: through the host */
    double *buf;                            /* this rank's gather buffer (tridi_cuda_ipc_export) */
    size_t bytes;                           /* its size */
    size_t cap;                             /* lines per slot */
    double *peer_buf[TRIDI_MPI_MAX_LINE];   /* every line rank's gather buffer, mapped here */
    void *opened[TRIDI_MPI_MAX_LINE];       /* IPC mappings this rank opened */
} tridi_reduced_ipc;

/* A host buffer of the distributed solves, kept between calls and grown on demand. The device solves'
 * buffers are the context's (tridi_cuda_scratch: its device-memory budget, docs/decisions/049). */
typedef struct tridi_mpi_buffer {
    void *p;
    size_t bytes;
} tridi_mpi_buffer;

typedef struct tridi_mpi_scratch {
    tridi_mpi_buffer host_gather; /* the reduced coefficients gathered over a line */
} tridi_mpi_scratch;

/* The ranks a decomposition was made over, one per group of ranks in this process: a duplicate of the
 * first communicator decomposed over that group, and the number of the last decomposition made over it.
 * Every rank of the group numbers its decompositions alike (they are made collectively), so a solve
 * compares the numbers over this communicator, which all decompositions of the group share, in the
 * all-reduce it makes anyway: different decompositions passed to one solve are a mismatch, not a hang
 * in collectives over two communicators. */
struct tridi_mpi_group;
/* Collective over comm: attaches comm's group (found, or made with MPI_Comm_dup) and numbers a new
 * decomposition in *id. */
tridi_status tridi_mpi_group_attach(const char *f, MPI_Comm comm, struct tridi_mpi_group **group, int64_t *id);
MPI_Comm tridi_mpi_group_comm(const struct tridi_mpi_group *group);
/* Collective over the group when it is the last decomposition's (MPI_Comm_free); NULL: nothing. */
void tridi_mpi_group_detach(struct tridi_mpi_group *group);

/* Decompositions and halo plans live in the registry of live handles (tridi_internal.h): a destroyed one
 * gives TRIDI_ERROR_INVALID_HANDLE without its memory being read. */
struct tridi_decomp_s {
    int destroyed; /* destroyed by the caller while halo plans made on it live (they free it) */
    struct tridi_mpi_group *group; /* its ranks, and its number among the decompositions over them */
    int64_t id;
    MPI_Comm comm;          /* Cartesian communicator, owned */
    MPI_Comm line_comm[2];  /* ranks sharing this rank's lines along i (0) and j (1), ordered by coordinate */
    tridi_decomp_config cfg;
    tridi_decomp_info info;
    tridi_mpi_scratch scratch;
    tridi_reduced_ipc red[2];  /* per cut axis (i, j) */
    /* Live halo plans made on it: they use its communicator and geometry, so a decomposition destroyed
     * before them (retired from the registry: the handle is dead to the caller) is freed by the last one's
     * destroy. */
    int halos;
    /* NCCL communicator (ncclComm_t) of its NCCL halo plans (halo_nccl.c): made by the first, destroyed by
     * the last of the nccl_users; NULL while users remain once a failed exchange aborted it. */
    void *nccl;
    int nccl_users;
};

/* Frees the decomposition: its communicators, scratch and memory (tridi_decomp_destroy, or the
 * destroy of its last halo plan). Collective, as MPI_Comm_free is. */
void tridi_mpi_decomp_free(tridi_decomp d);

/* CUDA IPC mappings shared by halos (halo_ipc.c) and solves (dsolve_device.c), kept by common.c: one per
 * exported allocation and process, as CUDA refuses to open the same handle twice. handle: the 64 bytes
 * of a cudaIpcMemHandle_t. */
tridi_status tridi_mpi_ipc_open(const void *handle, void **base);
void tridi_mpi_ipc_close(void *base);

/* Buffer b grown to at least bytes; NULL when it cannot be allocated. */
void *tridi_mpi_buffer_get(tridi_mpi_buffer *b, size_t bytes);
/* Frees the decomposition's scratch and the reduced systems' IPC buffers. Collective (a barrier between
 * the unmapping and the frees). */
void tridi_mpi_scratch_free(tridi_decomp d);

/* Cells of block c of p blocks cutting lo..hi: blocks differ by at most one cell. */
static inline void tridi_block_range(int64_t lo, int64_t hi, int p, int c, int64_t *blo, int64_t *bhi)
{
    int64_t n = hi - lo + 1, q = n / p, r = n % p;
    *blo = lo + c * q + (c < r ? c : r);
    *bhi = *blo + q + (c < r ? 1 : 0) - 1;
}

tridi_status tridi_check_decomp(const char *func, tridi_decomp d);

/* Makes every rank of comm return the same outcome: the status, message and error cell of the lowest
 * failing rank, its message prefixed with "rank R: " (each rank's own failure is recorded by tridi_fail
 * before the call), or SUCCESS when no rank failed. When every rank failed with the same status and
 * message (a disagreement all ranks found together) that message is kept as it is: no rank is to blame
 * more than another. Collective. */
TRIDI_PRIVATE tridi_status tridi_mpi_agree(MPI_Comm comm, tridi_status local);
/* The same for a solve's failures, which every rank orders as one rank would (tridi_mpi.h): failures
 * without an order (order < 0: arguments, memory, MPI) come first, by rank as above; then the failure of
 * smallest order, with its message's line number replaced by line (the line in the global box's
 * numbering). Collective. */
tridi_status tridi_mpi_agree_ordered(MPI_Comm comm, tridi_status local, int64_t order, int64_t line);

/* Collective: every rank of comm, having found from an all-reduce that the ranks passed different values
 * of `what` (this rank: mine), fails with the same TRIDI_ERROR_MISMATCH naming a rank with the smallest
 * and one with the largest value. */
tridi_status tridi_mpi_mismatch(const char *func, MPI_Comm comm, const char *what, int64_t mine);

/* An MPI failure as a tridi status with MPI's own text. */
TRIDI_PRIVATE tridi_status tridi_mpi_fail(const char *func, const char *call, int mpi_err);

/* ---- device parts (cuda/mpi_*.cu), only with TRIDI_HAVE_CUDA ---- */
#ifdef TRIDI_HAVE_CUDA
/* A box of count[0..2] cells copied from src to dst; both are grid-shaped arrays given by their base
 * and element strides of axes 1 and 2 (axis 0 is contiguous). Queued on stream. */
typedef struct tridi_mpi_region {
    void *dst;
    const void *src;
    int64_t dst_s1, dst_s2, src_s1, src_s2;
    int64_t count[3];
} tridi_mpi_region;
tridi_status tridi_mpi_cuda_copy_regions(const tridi_mpi_region *r, int nregions, size_t esize, void *stream);

#endif

#ifdef __cplusplus
}
#endif

#endif
