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
    double *buf;                            /* this rank's gather buffer */
    size_t cap;                             /* lines per slot */
    double *peer_buf[TRIDI_MPI_MAX_LINE];   /* every line rank's gather buffer, mapped here */
    void *opened[TRIDI_MPI_MAX_LINE];       /* IPC mappings this rank opened */
} tridi_reduced_ipc;

/* A scratch buffer of the device solves, kept between calls (cudaMalloc/cudaFree per solve would cost
 * more than a solve on small grids) and grown on demand. */
typedef enum tridi_mpi_memory {
    TRIDI_MPI_MEM_DEVICE, /* cudaMalloc */
    TRIDI_MPI_MEM_PINNED, /* cudaMallocHost */
    TRIDI_MPI_MEM_HOST    /* malloc */
} tridi_mpi_memory;

typedef struct tridi_mpi_buffer {
    void *p;
    size_t bytes;
} tridi_mpi_buffer;

/* The scratch of the distributed solves (dsolve.c), each buffer of one kind of memory. */
typedef struct tridi_mpi_scratch {
    tridi_mpi_buffer dev_work;    /* device: G, W, S, the undo copy of x, the sub-blocks' coefficients */
    tridi_mpi_buffer dev_small;   /* device: reduced coefficients, then x_L, x_R, and the failure word */
    tridi_mpi_buffer pinned_coef; /* pinned host: reduced coefficients and failure words from the device */
    tridi_mpi_buffer pinned_ends; /* pinned host: x_L, x_R to the device */
    tridi_mpi_buffer host_gather; /* host: the reduced coefficients gathered over a line */
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

/* CUDA IPC mappings shared by halos (halo_ipc.c) and solves (dsolve.c), kept by common.c: one per
 * exported allocation and process, as CUDA refuses to open the same handle twice. handle: the 64 bytes
 * of a cudaIpcMemHandle_t. */
tridi_status tridi_mpi_ipc_open(const void *handle, void **base);
void tridi_mpi_ipc_close(void *base);

/* Buffer b, of memory kind, grown to at least bytes; NULL when it cannot be allocated. */
void *tridi_mpi_buffer_get(tridi_mpi_buffer *b, tridi_mpi_memory kind, size_t bytes);
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

/* Device half of the distributed solve (cuda/mpi_solve.cu), one thread per line and sub-block.
 * subblocks: how many sub-blocks each line of the rank's block is cut into (a function of the problem
 * and the GPU, or `fixed` when > 0: the context's TRIDI_MPI_SUBBLOCKS); the same ns goes to every call
 * below for one solve.
 * work_bytes: the device work array forward/backward need: G, W, S (3 n nlines of x's type), the undo
 * copy of x (n nlines), then the sub-blocks' coefficients.
 * forward: eliminates every line of the block locally, keeps G, W, S in work and writes the six reduced
 * coefficients of each line to coef[6 * line], NaN for a line whose elimination is not safe there (it
 * goes to the pipelined Thomas: src/mpi/dsolve.c). first/last: 1 when the block holds the first / last
 * unknown of the global line (lower / upper are then not read there). */
int tridi_mpi_cuda_subblocks(const tridi_problem *p, int fixed);
size_t tridi_mpi_cuda_work_bytes(const tridi_problem *p, int ns);
tridi_status tridi_mpi_cuda_forward(const tridi_problem *p, int first, int last, int ns, void *work, double *coef,
                                    void *stream);
/* Reduced systems of every line from the gather buffer (see tridi_reduced_ipc; slot = 6 cap + 1
 * doubles per rank, the flag word at 6 cap), this rank being line rank me of P: x_L, x_R to ends; NaN
 * ends for a line marked for the pipelined Thomas, counted in *marked. */
tridi_status tridi_mpi_cuda_reduced(const double *gather, size_t cap, int P, int me, int64_t nlines, double *ends,
                                    unsigned long long *marked, void *stream);
/* The lines of the pipelined Thomas (local indices lines[0..nf-1], device memory): their inputs widened
 * to double into abcr (lower, diag, upper, rhs: 4 n per line), then their answers (x's type, n per
 * line) from x into the arrays' x. */
tridi_status tridi_mpi_cuda_gather_lines(const tridi_problem *p, const int64_t *lines, int64_t nf, double *abcr,
                                         void *stream);
tridi_status tridi_mpi_cuda_scatter_lines(const tridi_problem *p, const int64_t *lines, int64_t nf, const void *x,
                                          void *stream);
/* Back substitution: given x_left, x_right of each line (ends[2 * line]), writes x over the box, the
 * old x of each cell saved first to undo[m * nlines + line] (x's type) so that a failure on any rank can
 * put it back (tridi_mpi_cuda_restore); a line with NaN ends only has its old x saved. An answer that is
 * not finite in x's type (a float answer may overflow where the double one does not) leaves the lowest
 * failing line at its highest failing unknown in *fail as (line << 24) | (2^24 - 1 - m) (all ones if
 * none). */
tridi_status tridi_mpi_cuda_backward(const tridi_problem *p, int ns, const void *work, const double *ends,
                                     void *undo, unsigned long long *fail, void *stream);
/* Puts back the x that tridi_mpi_cuda_backward saved to undo. */
tridi_status tridi_mpi_cuda_restore(const tridi_problem *p, const void *undo, void *stream);
#endif

#ifdef __cplusplus
}
#endif

#endif
