/* fc_parallel.h over MPI and tridi's MPI layer (flow_channel_mpi). */
#include "fc_parallel.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tridi_mpi.h"

struct fc_par {
    MPI_Comm comm;
    int rank, nranks, jm, km;
    int transport; /* tridi_transport of the device halo plans */
    tridi_decomp dec[2]; /* [0]: the 2D grid (i, j), [1]: the 3D grid (i, j, k) */
    tridi_decomp_info info[2];
};

static int failed(char *msg, int msglen, const char *what, tridi_status s)
{
    if (msg && msglen > 0)
        snprintf(msg, (size_t)msglen, "%s: %s: %s", what, tridi_status_name(s), tridi_error_message());
    return 1;
}

void fc_par_start(int *rank, int *nranks, int *node_rank)
{
    int up = 0;
    MPI_Initialized(&up);
    if (!up)
        MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, nranks);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, node_rank);
    MPI_Comm_free(&node);
}

void fc_par_exit(int code)
{
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    if (up && !down)
        MPI_Finalize();
    exit(code);
}

int fc_par_create(fc_par **out, int im, int jm, int km, int transport, int jlo_jhi[2], char *msg, int msglen)
{
    fc_par *p = calloc(1, sizeof *p);
    *out = p;
    if (!p) {
        snprintf(msg, (size_t)msglen, "fc_par_create: out of memory");
        return 1;
    }
    p->comm = MPI_COMM_WORLD;
    MPI_Comm_rank(p->comm, &p->rank);
    MPI_Comm_size(p->comm, &p->nranks);
    p->jm = jm;
    p->km = km;
    p->transport = transport;
    for (int d = 0; d < 2; d++) {
        tridi_decomp_config c;
        tridi_decomp_config_init(&c);
        c.ndim = d ? 3 : 2;
        /* i: the whole allocated range 0..im+1 is every rank's (halo 0), so j faces carry it all. */
        c.lo[0] = 0;
        c.hi[0] = im + 1;
        c.halo[0] = 0;
        c.lo[1] = 1;
        c.hi[1] = jm;
        c.halo[1] = 1;
        c.lo[2] = 1;
        c.hi[2] = km;
        c.halo[2] = 1;
        c.dims[0] = 1;
        c.dims[1] = p->nranks;
        if (transport == TRIDI_TRANSPORT_IPC || transport == TRIDI_TRANSPORT_STAGED)
            c.solve_transport = (tridi_transport)transport;
        tridi_status s = tridi_decomp_create(&p->dec[d], MPI_Comm_c2f(p->comm), &c);
        if (s)
            return failed(msg, msglen, "tridi_decomp_create", s);
        tridi_decomp_get_info(p->dec[d], &p->info[d]);
    }
    jlo_jhi[0] = (int)p->info[1].lo[1];
    jlo_jhi[1] = (int)p->info[1].hi[1];
    return 0;
}

void fc_par_destroy(fc_par *p)
{
    if (!p)
        return;
    tridi_decomp_destroy(p->dec[0]);
    tridi_decomp_destroy(p->dec[1]);
    free(p);
}

int fc_par_halo_create(fc_par *p, int ndim, void *array, int dtype, int memory, void **halo, int *transport,
                       char *msg, int msglen)
{
    tridi_halo h = NULL;
    tridi_status s = tridi_halo_create(&h, p->dec[ndim == 3], array, (tridi_dtype)dtype,
                                       memory ? TRIDI_MEMORY_DEVICE : TRIDI_MEMORY_HOST, 0,
                                       (tridi_transport)p->transport);
    *halo = h;
    if (s)
        return failed(msg, msglen, "tridi_halo_create", s);
    tridi_transport t = TRIDI_TRANSPORT_AUTO;
    tridi_halo_get_transport(h, &t);
    *transport = (int)t;
    return 0;
}

void fc_par_halo_destroy(void *halo) { tridi_halo_destroy((tridi_halo)halo); }

int fc_par_exchange(void **halos, int n, void *stream, char *msg, int msglen)
{
    for (int i = 0; i < n; i++) {
        tridi_status s = tridi_halo_begin((tridi_halo)halos[i], stream);
        if (s)
            return failed(msg, msglen, "tridi_halo_begin", s);
    }
    for (int i = 0; i < n; i++) {
        tridi_status s = tridi_halo_end((tridi_halo)halos[i]);
        if (s)
            return failed(msg, msglen, "tridi_halo_end", s);
    }
    return 0;
}

void fc_par_allreduce(fc_par *p, double *x, int n, int op)
{
    MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, op == 0 ? MPI_SUM : op == 1 ? MPI_MAX : MPI_MIN, p->comm);
}

void fc_par_gather(fc_par *p, int ndim, const double *local, double *global)
{
    const tridi_decomp_info *in = &p->info[ndim == 3];
    int64_t ni = in->grid.ubound[0] - in->grid.lbound[0] + 1;
    int64_t nj = in->grid.ubound[1] - in->grid.lbound[1] + 1, gj = p->jm + 2;
    int64_t nk = ndim == 3 ? p->km + 2 : 1, n = ni * gj * nk;
    /* Each global cell comes from exactly one rank and is 0 on the others: a sum puts it together. */
    double *mine = calloc((size_t)n, sizeof(double));
    int64_t j0 = in->lo[1] == 1 ? 0 : in->lo[1], j1 = in->hi[1] == p->jm ? p->jm + 1 : in->hi[1];
    for (int64_t k = 0; k < nk; k++)
        for (int64_t j = j0; j <= j1; j++)
            memcpy(mine + ni * (j + gj * k), local + ni * ((j - in->grid.lbound[1]) + nj * k), sizeof(double) * ni);
    for (int64_t done = 0; done < n;) { /* MPI counts are ints */
        int c = (int)(n - done < (1 << 30) ? n - done : (1 << 30));
        MPI_Reduce(mine + done, p->rank == 0 ? global + done : NULL, c, MPI_DOUBLE, MPI_SUM, 0, p->comm);
        done += c;
    }
    free(mine);
}

int fc_par_solve(fc_par *p, void *ctx, int ndim, int axis, const int64_t lo[3], const int64_t hi[3],
                 const tridi_arrays *a, int memory, void *stream, char *msg, int msglen)
{
    tridi_decomp dec = p->dec[ndim == 3];
    const tridi_decomp_info *in = &p->info[ndim == 3];
    tridi_context c = (tridi_context)ctx;
    tridi_status s;
    if (axis == TRIDI_AXIS_Y) {
        s = memory ? tridi_mpi_solve_device(c, dec, TRIDI_AXIS_Y, lo, hi, a, stream)
                   : tridi_mpi_solve(c, dec, TRIDI_AXIS_Y, lo, hi, a);
        return s ? failed(msg, msglen, memory ? "tridi_mpi_solve_device" : "tridi_mpi_solve", s) : 0;
    }
    /* Lines along i or k: this rank's rows of the box, the global edge rows (j = 0, JM+1) included. */
    int64_t l[3] = {lo[0], lo[1], lo[2]}, h[3] = {hi[0], hi[1], hi[2]};
    int64_t rlo = in->lo[1] == 1 ? 0 : in->lo[1], rhi = in->hi[1] == p->jm ? p->jm + 1 : in->hi[1];
    if (l[1] < rlo)
        l[1] = rlo;
    if (h[1] > rhi)
        h[1] = rhi;
    if (h[1] < l[1])
        return 0;
    s = memory ? tridi_solve_device(c, &in->grid, (tridi_axis)axis, l, h, a, stream)
               : tridi_solve(c, &in->grid, (tridi_axis)axis, l, h, a);
    return s ? failed(msg, msglen, memory ? "tridi_solve_device" : "tridi_solve", s) : 0;
}
