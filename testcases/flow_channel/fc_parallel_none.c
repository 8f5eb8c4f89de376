/* fc_parallel.h for the single-process flow_channel: one rank, nothing to exchange or reduce. The model
 * never decomposes itself on one rank, so the calls that need a decomposition only report that this
 * executable has none (flow_channel_mpi has). */
#include "fc_parallel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int no_mpi(char *msg, int msglen)
{
    if (msg && msglen > 0)
        snprintf(msg, (size_t)msglen, "this flow_channel was built without MPI (run flow_channel_mpi)");
    return 1;
}

void fc_par_start(int *rank, int *nranks, int *node_rank)
{
    *rank = 0;
    *nranks = 1;
    *node_rank = 0;
}

void fc_par_exit(int code) { exit(code); }

int fc_par_create(fc_par **par, int im, int jm, int km, int transport, int jlo_jhi[2], char *msg, int msglen)
{
    (void)im; (void)jm; (void)km; (void)transport; (void)jlo_jhi;
    *par = NULL;
    return no_mpi(msg, msglen);
}

void fc_par_destroy(fc_par *par) { (void)par; }

int fc_par_halo_create(fc_par *par, int ndim, void *array, int dtype, int memory, void **halo, int *transport,
                       char *msg, int msglen)
{
    (void)par; (void)ndim; (void)array; (void)dtype; (void)memory; (void)transport;
    *halo = NULL;
    return no_mpi(msg, msglen);
}

void fc_par_halo_destroy(void *halo) { (void)halo; }

int fc_par_exchange(void **halos, int n, void *stream, char *msg, int msglen)
{
    (void)halos; (void)stream;
    return n > 0 ? no_mpi(msg, msglen) : 0;
}

void fc_par_allreduce(fc_par *par, double *x, int n, int op) { (void)par; (void)x; (void)n; (void)op; }

void fc_par_gather(fc_par *par, int ndim, const double *local, double *global)
{
    (void)par; (void)ndim; (void)local; (void)global;
}

int fc_par_solve(fc_par *par, void *ctx, int ndim, int axis, const int64_t lo[3], const int64_t hi[3],
                 const tridi_arrays *arrays, int memory, void *stream, char *msg, int msglen)
{
    (void)par; (void)ctx; (void)ndim; (void)axis; (void)lo; (void)hi; (void)arrays; (void)memory; (void)stream;
    return no_mpi(msg, msglen);
}
