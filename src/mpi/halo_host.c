/* Host transport of the halo exchange: host arrays, whatever transport was asked for (tridi_mpi.h). Each
 * message is an MPI subarray datatype over the array itself, so faces move without packing. */
#include "halo_internal.h"

static tridi_status host_create(const char *f, tridi_halo h)
{
    const tridi_decomp_info *in = &h->d->info;
    int sizes[3], sub[3], start[3];
    for (int a = 0; a < 3; ++a)
        sizes[a] = (int)(in->grid.ubound[a] - in->grid.lbound[a] + 1);
    if (in->grid.ndim == 2)
        sizes[2] = 1;
    MPI_Datatype base = h->dtype == TRIDI_FLOAT64 ? MPI_DOUBLE : MPI_FLOAT;
    for (int i = 0; i < h->nmsg; ++i) {
        halo_msg *m = &h->msg[i];
        for (int pass = 0; pass < 2; ++pass) {
            int64_t off = pass ? m->recv_off : m->send_off;
            start[0] = (int)(off % sizes[0]);
            start[1] = (int)((off / sizes[0]) % sizes[1]);
            start[2] = (int)(off / ((int64_t)sizes[0] * sizes[1]));
            for (int a = 0; a < 3; ++a)
                sub[a] = (int)m->count[a];
            MPI_Datatype *t = pass ? &m->recv_type : &m->send_type;
            int e = MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_FORTRAN, base, t);
            if (e == MPI_SUCCESS)
                e = MPI_Type_commit(t);
            if (e != MPI_SUCCESS)
                return tridi_mpi_fail(f, "MPI_Type_create_subarray", e);
        }
    }
    return TRIDI_SUCCESS;
}

static tridi_status host_begin(const char *f, tridi_halo h)
{
    (void)f;
    h->nreq = 0;
    for (int i = 0; i < h->nmsg; ++i) {
        const halo_msg *m = &h->msg[i];
        MPI_Irecv(h->array, 1, m->recv_type, m->peer, TRIDI_HALO_TAG_DATA + m->recv_dir, h->d->comm,
                  &h->req[h->nreq++]);
    }
    for (int i = 0; i < h->nmsg; ++i) {
        const halo_msg *m = &h->msg[i];
        MPI_Isend(h->array, 1, m->send_type, m->peer, TRIDI_HALO_TAG_DATA + m->send_dir, h->d->comm,
                  &h->req[h->nreq++]);
    }
    return TRIDI_SUCCESS;
}

static tridi_status host_end(const char *f, tridi_halo h)
{
    int e = MPI_Waitall(h->nreq, h->req, MPI_STATUSES_IGNORE);
    h->nreq = 0;
    return e == MPI_SUCCESS ? TRIDI_SUCCESS : tridi_mpi_fail(f, "MPI_Waitall", e);
}

static void host_destroy(tridi_halo h)
{
    for (int i = 0; i < h->nmsg; ++i) {
        if (h->msg[i].send_type != MPI_DATATYPE_NULL)
            MPI_Type_free(&h->msg[i].send_type);
        if (h->msg[i].recv_type != MPI_DATATYPE_NULL)
            MPI_Type_free(&h->msg[i].recv_type);
    }
}

const tridi_halo_transport tridi_halo_host = {
    .create = host_create,
    .begin = host_begin,
    .end = host_end,
    .destroy = host_destroy,
};
