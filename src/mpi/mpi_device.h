/* What the MPI layer's solves ask of the CUDA backend, with no CUDA type (streams are void *): copies,
 * fills and waits on a stream, device queries and IPC mappings (cuda/mpi_device.cu), and the kernels of
 * the cut solve (cuda/mpi_solve.cu). Device memory comes from the context's budget (tridi_internal.h:
 * tridi_cuda_scratch and the functions beside it, cuda/memory.cu; docs/decisions/049). Only with
 * TRIDI_HAVE_CUDA. Not installed. */
#ifndef TRIDI_MPI_DEVICE_H
#define TRIDI_MPI_DEVICE_H

#include "tridi_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- streams and devices (cuda/mpi_device.cu); a CUDA error becomes a status through tridi_cuda_fail,
 * its message "f: what: CUDA's text" ---- */
typedef enum tridi_mpi_copy_dir {
    TRIDI_MPI_TO_HOST,
    TRIDI_MPI_TO_DEVICE,
    TRIDI_MPI_DEVICE_TO_DEVICE
} tridi_mpi_copy_dir;
/* Queues a copy of bytes on stream (NULL: the legacy default stream). */
tridi_status tridi_mpi_cuda_copy(void *dst, const void *src, size_t bytes, tridi_mpi_copy_dir dir, void *stream,
                                 const char *f, const char *what);
/* Queues bytes of dst set to byte on stream. */
tridi_status tridi_mpi_cuda_fill(void *dst, int byte, size_t bytes, void *stream, const char *f, const char *what);
/* Waits for everything queued on stream. */
tridi_status tridi_mpi_cuda_wait(void *stream, const char *f, const char *what);
/* The calling thread's current device, and whether device can reach peer's memory (1) or not (0). */
int tridi_mpi_cuda_device(void);
int tridi_mpi_cuda_peer_access(int device, int peer);
/* Maps another process's exported allocation (handle: the TRIDI_CUDA_IPC_HANDLE_BYTES of its
 * cudaIpcMemHandle_t); closes such a mapping. */
tridi_status tridi_mpi_cuda_ipc_open(const void *handle, void **base);
void tridi_mpi_cuda_ipc_close(void *base);

/* ---- the kernels of the cut solve (cuda/mpi_solve.cu) ---- */
/* Device half of the distributed solve (cuda/mpi_solve.cu), one thread per line and sub-block.
 * subblocks: how many sub-blocks each line of the rank's block is cut into (a function of the problem
 * and the GPU, or `fixed` when > 0: the context's TRIDI_MPI_SUBBLOCKS); the same ns goes to every call
 * below for one solve.
 * work_bytes: the device work array forward/backward need: G, W, S (3 n nlines of x's type), the undo
 * copy of x (n nlines), then the sub-blocks' coefficients.
 * forward: eliminates every line of the block locally, keeps G, W, S in work and writes the six reduced
 * coefficients of each line to coef[6 * line], NaN for a line whose elimination is not safe there (it
 * goes to the pipelined Thomas: src/mpi/dsolve_pipeline.c). first/last: 1 when the block holds the first / last
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

#ifdef __cplusplus
}
#endif

#endif
