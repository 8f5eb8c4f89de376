/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * tridi_mpi.h - the MPI layer of tridi: decomposition of a model grid over ranks, halo exchange of
 * grid-shaped arrays (host or device), and tridiagonal solves along axes cut by rank boundaries.
 * Communicators are passed as the Fortran handle (C: MPI_Comm_c2f(comm)), so mpi.h is not included.
 * Every call that takes a decomposition is collective: when one rank fails, every rank returns the same
 * status and message (prefixed with the failing rank). All indices are global Fortran indices; each rank
 * allocates its arrays over tridi_decomp_info.grid (its block plus halos).
 */
#ifndef TRIDI_MPI_H
#define TRIDI_MPI_H

#include "tridi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The Fortran handle of an MPI communicator (MPI_Fint is a C int in Open MPI and MPICH). */
typedef int tridi_mpi_comm;

/* How halos of device arrays move. Host arrays always go through MPI with subarray datatypes. */
typedef enum tridi_transport {
    TRIDI_TRANSPORT_AUTO = 0,       /* IPC when every rank shares one node and its GPUs can reach their
                                       neighbours' GPUs; else NCCL when tridi was built with it, every
                                       rank has a GPU of its own and NCCL sets up; else CUDA-aware MPI
                                       when the library says so; else STAGED. All ranks resolve to the
                                       same choice. */
    TRIDI_TRANSPORT_IPC = 1,        /* CUDA IPC: each rank writes its faces straight into its
                                       neighbours' halos (handles exchanged once per array) */
    TRIDI_TRANSPORT_CUDA_AWARE = 2, /* device faces packed on the GPU and handed to a CUDA-aware MPI */
    TRIDI_TRANSPORT_STAGED = 3,     /* faces packed on the GPU, moved through pinned host buffers */
    TRIDI_TRANSPORT_NCCL = 4        /* faces packed on the GPU, moved by ncclSend/ncclRecv on the stream
                                       (one NCCL communicator per decomposition, shared by its plans);
                                       needs tridi built with NCCL and a GPU of its own for every rank */
} tridi_transport;

/* Static name of a transport ("auto", "ipc", "cuda-aware", "staged", "nccl"). */
TRIDI_API const char *tridi_transport_name(tridi_transport transport);

/* ---------------------------------------------------------------------------------------------------
 * Decomposition: the global grid cut into blocks over a Cartesian grid of ranks in i and j.
 * ------------------------------------------------------------------------------------------------- */
typedef struct tridi_decomp_s *tridi_decomp;

typedef struct tridi_decomp_config {
    size_t size;           /* sizeof(tridi_decomp_config); set by tridi_decomp_config_init */
    int ndim;              /* 2 or 3 (default: 3) */
    int64_t lo[3], hi[3];  /* global cells owned by some rank, inclusive, Fortran indices; axis 2
                              (3D only) is never cut (default: 1..1 on every axis) */
    int halo[3];           /* halo width per axis, >= 0; axes 0 and 1 are exchanged, axis 2 only
                              allocated (default: 1, 1, 0) */
    int dims[2];           /* ranks along i and j; 0 = chosen by MPI_Dims_create; {N,1} or {1,N}
                              cut one axis only (default: 0, 0) */
    int periodic[2];       /* 1: the axis wraps around (halos of the edge blocks come from the far
                              side) (default: 0, 0) */
    tridi_transport solve_transport; /* how tridi_mpi_solve_device moves the reduced systems between
                              the GPUs of a line: IPC (GPU to GPU, solved on the GPU), STAGED (through
                              the host with MPI, solved on the host) or AUTO (IPC where every rank
                              can, else STAGED); CUDA_AWARE is not offered here (default: AUTO) */
} tridi_decomp_config;

TRIDI_API void tridi_decomp_config_init(tridi_decomp_config *config);

/* Collective. Checks that every rank passed the same configuration (TRIDI_ERROR_MISMATCH on every rank
 * otherwise) and that every block is at least as wide as the halo (TRIDI_ERROR_BOUNDS). Blocks differ
 * by at most one cell per axis. On failure *decomp is NULL. Each decomposition is numbered among those
 * made over its group of ranks: ranks passing different decompositions to a solve or a halo creation get
 * TRIDI_ERROR_MISMATCH. A rank passing a communicator of other ranks than the rest (MPI_COMM_SELF on one
 * rank only) cannot be told: the others wait (docs/mpi.md). */
TRIDI_API tridi_status tridi_decomp_create(tridi_decomp *decomp, tridi_mpi_comm comm, const tridi_decomp_config *config);
/* Collective; NULL is accepted and ignored. Halo plans made on the decomposition stay usable: it is
 * released with the last of them. */
TRIDI_API tridi_status tridi_decomp_destroy(tridi_decomp decomp);

typedef struct tridi_decomp_info {
    int rank, nranks;         /* in the decomposition's (Cartesian) communicator */
    int dims[2], coords[2];   /* process grid and this rank's place in it */
    int64_t lo[3], hi[3];     /* cells this rank owns (global indices) */
    tridi_grid grid;          /* allocated bounds of this rank's arrays: owned cells plus halos */
    int neighbour[2][2];      /* rank below / above along i and j in the decomposition's communicator;
                                 -1 at a non-periodic edge */
    tridi_mpi_comm comm;      /* the Cartesian communicator (Fortran handle), owned by the decomposition */
} tridi_decomp_info;

TRIDI_API tridi_status tridi_decomp_get_info(tridi_decomp decomp, tridi_decomp_info *info);

/* ---------------------------------------------------------------------------------------------------
 * Halo exchange of one grid-shaped array (allocated over tridi_decomp_info.grid) as a begin/end pair,
 * so interior work can run while halos move. A halo plan is bound to one array: for IPC its memory
 * handle is exchanged once, at creation. Faces carry the cells of the neighbour's owned block next to
 * this rank's block over the whole allocated k range; with corners = 1 the diagonal neighbours' corner
 * cells are filled too. Halo cells at a non-periodic edge of the global grid are never written.
 * ------------------------------------------------------------------------------------------------- */
typedef struct tridi_halo_s *tridi_halo;

/* tridi_memory (tridi.h): TRIDI_MEMORY_DEVICE is a device pointer on the current CUDA device (each rank its
 * own GPU). */

/* Collective. dtype, memory, corners and transport must agree on every rank (TRIDI_ERROR_MISMATCH);
 * a transport some rank cannot use gives TRIDI_ERROR_UNSUPPORTED on every rank. transport is ignored
 * for host arrays. */
TRIDI_API tridi_status tridi_halo_create(tridi_halo *halo, tridi_decomp decomp, void *array, tridi_dtype dtype,
                               tridi_memory memory, int corners, tridi_transport transport);
/* Collective; NULL is accepted and ignored. */
TRIDI_API tridi_status tridi_halo_destroy(tridi_halo halo);
/* The transport in use (resolved from AUTO). */
TRIDI_API tridi_status tridi_halo_get_transport(tridi_halo halo, tridi_transport *transport);

/* Starts the exchange. Device arrays: the owned cells must be final in stream (cudaStream_t as void*,
 * NULL = the default stream) - begin waits for it - and nothing may touch the halo cells until end
 * returns. Host arrays: the owned cells must stay unchanged until end. stream is ignored for host. */
TRIDI_API tridi_status tridi_halo_begin(tridi_halo halo, void *stream);
/* Completes the exchange: on return every rank's halos hold their neighbours' values. */
TRIDI_API tridi_status tridi_halo_end(tridi_halo halo);
/* begin + end. */
TRIDI_API tridi_status tridi_halo_exchange(tridi_halo halo, void *stream);

/* ---------------------------------------------------------------------------------------------------
 * Distributed solves. Same data contract as tridi_solve (tridi.h): the arrays are this rank's local
 * arrays over tridi_decomp_info.grid; lo/hi is the global box of unknowns. Each rank solves the part
 * of the box it owns; the halo cells at the edge of the global grid belong to the edge rank, so a box
 * may reach into them (MOHID's boundary row). Along an axis cut by rank boundaries the lines are solved
 * with a reduced system (each block eliminated locally, two unknowns per block and line gathered over
 * the ranks of the line, then substituted back) where that is as stable as the single-rank Thomas
 * (every diagonally dominant line), and by a Thomas sweep pipelined across the ranks, the single-rank
 * arithmetic itself, on every other line (docs/mpi.md, "Stability of the cut solve"); along an uncut
 * axis tridi_solve does the work. Answers equal the single-rank solve within rounding (float answers
 * of the reduced system are rounded only at the end). Numerical failures are those of the single-rank
 * solve of the global arrays: every rank reports the status, global cell and line number (in the global
 * box's line order) that tridi_solve would, whichever rank met it; x is then unchanged on every rank
 * (all or nothing, TRIDI_ON_ERROR_CALL, whatever the context's config.on_error). A rank passing
 * decomp = NULL has no communicator to warn the others with: it fails at once, the others wait
 * (docs/mpi.md).
 * ------------------------------------------------------------------------------------------------- */
TRIDI_API tridi_status tridi_mpi_solve(tridi_context ctx, tridi_decomp decomp, tridi_axis axis, const int64_t lo[3],
                             const int64_t hi[3], const tridi_arrays *arrays);

/* The same on device arrays (CUDA backend); returns when the answer is in x (waits for stream). */
TRIDI_API tridi_status tridi_mpi_solve_device(tridi_context ctx, tridi_decomp decomp, tridi_axis axis,
                                    const int64_t lo[3], const int64_t hi[3],
                                    const tridi_arrays *device_arrays, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* TRIDI_MPI_H */
