/* flow_channel on MPI ranks: the model's calls of MPI and of tridi's MPI layer (tridi_mpi.h), kept in C
 * so that the Fortran model needs no MPI module and one Fortran source serves the serial and the MPI
 * executables. fc_parallel_mpi.c implements them (flow_channel_mpi), fc_parallel_none.c answers for a
 * single process (flow_channel). fc_parallel.f90 is the Fortran side, fc_gpu.cu uses the device calls.
 *
 * The grid is cut along j only ({1, N}, as MOHID cuts its domains): rank r owns the cells j = jlo..jhi
 * and every i and k; its arrays keep MOHID's storage with global indices, (0:IM+1, jlo-1:jhi+1,
 * 0:KM+1), one halo row on each side. The i halo columns belong to every rank (i is not cut), so a halo
 * exchange moves whole rows, open-face velocities u(IM+1) included. Functions returning int give 0 on
 * success, else write the reason to msg. */
#ifndef FC_PARALLEL_H
#define FC_PARALLEL_H

#include <stdint.h>

#include "tridi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fc_par fc_par;

/* Starts MPI (once per process); rank, number of ranks, and this rank's index among the ranks of its
 * node (for the choice of GPU). */
void fc_par_start(int *rank, int *nranks, int *node_rank);
/* Ends MPI; then the process exits with code. */
void fc_par_exit(int code);

/* The decomposition of the (0:im+1, 1:jm, 1:km) grid over all ranks along j; jlo_jhi: this rank's
 * rows. transport (a tridi_transport, 0 = AUTO): how the device halo plans move their faces, and, when it
 * is IPC or STAGED, how the distributed device solves move their reduced systems (--transport). */
int fc_par_create(fc_par **par, int im, int jm, int km, int transport, int jlo_jhi[2], char *msg, int msglen);
void fc_par_destroy(fc_par *par);

/* A halo plan for one array of this rank (ndim 2 or 3, dtype TRIDI_FLOAT32/64), host (memory 0) or device
 * (memory 1, exchanged GPU to GPU where possible); *transport: the one in use (tridi_transport). */
int fc_par_halo_create(fc_par *par, int ndim, void *array, int dtype, int memory, void **halo, int *transport,
                       char *msg, int msglen);
void fc_par_halo_destroy(void *halo);
/* Exchanges the halos of n plans together (all begun, then all ended); stream: device plans. */
int fc_par_exchange(void **halos, int n, void *stream, char *msg, int msglen);

/* In place over all ranks: op 0 sum, 1 max, 2 min. */
void fc_par_allreduce(fc_par *par, double *x, int n, int op);
/* Rank 0 receives the global array (0:im+1, 0:jm+1, 0:km+1) (3D; 2D without k) from every rank's rows;
 * global may be NULL elsewhere. */
void fc_par_gather(fc_par *par, int ndim, const double *local, double *global);

/* One MOHID sweep over the global box lo..hi (global indices, axis 0 = i, 1 = j, 2 = k) on this rank's
 * arrays: lines along j cross the ranks and are solved by tridi_mpi_solve(_device); lines along i and k
 * lie in one rank and are solved locally, the box cut to this rank's rows. memory 1: device arrays,
 * queued on stream (CUDA context). */
int fc_par_solve(fc_par *par, void *ctx, int ndim, int axis, const int64_t lo[3], const int64_t hi[3],
                 const tridi_arrays *arrays, int memory, void *stream, char *msg, int msglen);

#ifdef __cplusplus
}
#endif

#endif
