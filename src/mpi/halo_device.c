/* What the device transports of the halo exchange share: finding and selecting an array's GPU, the
 * pack buffers, packing faces (cuda/mpi_halo.cu's kernel), the status handshake between neighbours,
 * stream waits, and faces moved through MPI as bytes. Built with CUDA only; the CUDA runtime is reached
 * through halo_backend.h. */
#include "halo_internal.h"

#include <string.h>

tridi_status tridi_halo_device_buffers(const char *f, tridi_halo h, int pinned)
{
    tridi_status s = tridi_halo_mem_alloc(f, &h->dev_send, h->buf_bytes, 0);
    if (!s)
        s = tridi_halo_mem_alloc(f, &h->dev_recv, h->buf_bytes, 0);
    if (!s && pinned)
        s = tridi_halo_mem_alloc(f, &h->host_send, h->buf_bytes, 1);
    if (!s && pinned)
        s = tridi_halo_mem_alloc(f, &h->host_recv, h->buf_bytes, 1);
    return s;
}

void tridi_halo_device_buffers_free(tridi_halo h)
{
    tridi_halo_mem_free(h->dev_send, 0);
    tridi_halo_mem_free(h->dev_recv, 0);
    tridi_halo_mem_free(h->host_send, 1);
    tridi_halo_mem_free(h->host_recv, 1);
    h->dev_send = h->dev_recv = h->host_send = h->host_recv = NULL;
}

tridi_status tridi_halo_pack(tridi_halo h, char *buf, int to_buffer)
{
    tridi_mpi_region r[8];
    char *arr = h->array;
    for (int i = 0; i < h->nmsg; ++i) {
        const halo_msg *m = &h->msg[i];
        char *packed = buf + m->buf_off;
        char *cells = arr + (to_buffer ? m->send_off : m->recv_off) * (int64_t)h->esize;
        r[i].src = to_buffer ? (const void *)cells : (const void *)packed;
        r[i].dst = to_buffer ? (void *)packed : (void *)cells;
        int64_t ps1 = m->count[0], ps2 = m->count[0] * m->count[1];
        r[i].src_s1 = to_buffer ? h->s1 : ps1;
        r[i].src_s2 = to_buffer ? h->s2 : ps2;
        r[i].dst_s1 = to_buffer ? ps1 : h->s1;
        r[i].dst_s2 = to_buffer ? ps2 : h->s2;
        memcpy(r[i].count, m->count, sizeof r[i].count);
    }
    return tridi_mpi_cuda_copy_regions(r, h->nmsg, h->esize, h->stream);
}

tridi_status tridi_halo_handshake(const char *f, tridi_halo h, int tag, tridi_status mine)
{
    int sendv = (int)mine, *recvv = h->peer_status;
    MPI_Request rq[16];
    int n = 0;
    for (int i = 0; i < h->nmsg; ++i) {
        MPI_Irecv(&recvv[i], 1, MPI_INT, h->msg[i].peer, tag + h->msg[i].recv_dir, h->d->comm, &rq[n++]);
        MPI_Isend(&sendv, 1, MPI_INT, h->msg[i].peer, tag + h->msg[i].send_dir, h->d->comm, &rq[n++]);
    }
    int e = MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
    if (mine)
        return mine;
    if (e != MPI_SUCCESS)
        return tridi_mpi_fail(f, "MPI_Waitall", e);
    for (int i = 0; i < h->nmsg; ++i)
        if (recvv[i])
            return tridi_fail((tridi_status)recvv[i], "%s: neighbour rank %d failed during the exchange (%s)", f,
                              h->msg[i].peer, tridi_status_name((tridi_status)recvv[i]));
    return TRIDI_SUCCESS;
}

tridi_status tridi_halo_sync_stream(const char *f, tridi_halo h) { return tridi_halo_stream_sync(f, h->stream); }

void tridi_halo_post_bytes(tridi_halo h, char *sendbuf, char *recvbuf)
{
    h->nreq = 0;
    for (int i = 0; i < h->nmsg; ++i) {
        const halo_msg *m = &h->msg[i];
        int cnt = (int)(m->count[0] * m->count[1] * m->count[2] * (int64_t)h->esize);
        MPI_Irecv(recvbuf + m->buf_off, cnt, MPI_BYTE, m->peer, TRIDI_HALO_TAG_DATA + m->recv_dir, h->d->comm,
                  &h->req[h->nreq++]);
    }
    for (int i = 0; i < h->nmsg; ++i) {
        const halo_msg *m = &h->msg[i];
        int cnt = (int)(m->count[0] * m->count[1] * m->count[2] * (int64_t)h->esize);
        MPI_Isend(sendbuf + m->buf_off, cnt, MPI_BYTE, m->peer, TRIDI_HALO_TAG_DATA + m->send_dir, h->d->comm,
                  &h->req[h->nreq++]);
    }
}

tridi_status tridi_halo_wait(const char *f, tridi_halo h)
{
    int e = MPI_Waitall(h->nreq, h->req, MPI_STATUSES_IGNORE);
    h->nreq = 0;
    return e == MPI_SUCCESS ? TRIDI_SUCCESS : tridi_mpi_fail(f, "MPI_Waitall", e);
}
