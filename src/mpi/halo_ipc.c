/* IPC transport of the halo exchange: at creation every rank exports its array with CUDA IPC and maps
 * its neighbours' arrays; begin writes this rank's faces straight into the neighbours' halos (no
 * packing, no MPI payload), framed by "ready" and "done" status words so that no rank writes into a
 * halo its owner still reads, and a failure on one rank makes its neighbours fail instead of hang. */
#include "halo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* IPC faces whose rows are at least IPC_ROW_BYTES long are copied by the copy engines, shorter ones
 * by a kernel; so are faces of IPC_CE_MAX_BYTES or more, which the kernel's stores move faster over
 * NVLink than the 3D copies do, while below 4 MiB the copies win (see docs/decisions/014). */
#define IPC_ROW_BYTES 64
#ifndef IPC_CE_MAX_BYTES /* -DIPC_CE_MAX_BYTES=0: every face by the kernel (benchmarks compare both) */
#define IPC_CE_MAX_BYTES (4u << 20)
#endif

typedef struct ipc_info {
    unsigned char handle[64]; /* a cudaIpcMemHandle_t (halo_backend.h) */
    int64_t offset; /* bytes from the allocation's base to the array */
    int device;
    int ok;         /* 1: this rank exported a handle */
} ipc_info;

/* Whether this rank can use IPC with this plan's neighbours: every rank's exported handle is gathered
 * (collective) and kept in h->learnt for ipc_create. */
static tridi_status ipc_probe(const char *f, tridi_halo h, int *capable, char *why, size_t why_len)
{
    MPI_Comm comm = h->d->comm;
    int nranks = h->d->info.nranks;
    MPI_Comm node;
    int node_size = 0;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);

    ipc_info mine;
    memset(&mine, 0, sizeof mine);
    mine.device = h->device;
    mine.ok = tridi_halo_ipc_export(h->array, mine.handle, &mine.offset) == 0;
    ipc_info *all = malloc(sizeof(ipc_info) * (size_t)nranks);
    if (!all)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory", f);
    int e = MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, comm);
    if (e != MPI_SUCCESS) {
        free(all);
        return tridi_mpi_fail(f, "MPI_Allgather", e);
    }
    *capable = 1;
    if (node_size != nranks) {
        *capable = 0;
        snprintf(why, why_len, "transport ipc is not usable here: the ranks span more than one node");
    } else if (!mine.ok) {
        *capable = 0;
        snprintf(why, why_len,
                 "transport ipc is not usable here: the array is not a cudaMalloc allocation that CUDA IPC can export");
    }
    for (int i = 0; i < h->nmsg && *capable; ++i) {
        const ipc_info *p = &all[h->msg[i].peer];
        if (!tridi_halo_can_reach(h->device, p->device) || !p->ok) {
            *capable = 0;
            snprintf(why, why_len, "transport ipc is not usable here: GPU %d cannot reach the neighbour's GPU %d",
                     h->device, p->device);
        }
    }
    /* The array list is kept only through ipc_create. */
    h->learnt[TRIDI_TRANSPORT_IPC] = all;
    return TRIDI_SUCCESS;
}

/* Maps every neighbour's array (once per allocation) and turns the messages' peer_dst offsets into
 * addresses in the mappings. */
static tridi_status ipc_create(const char *f, tridi_halo h)
{
    (void)f;
    ipc_info *all = h->learnt[TRIDI_TRANSPORT_IPC];
    for (int i = 0; i < h->nmsg; ++i) {
        halo_msg *m = &h->msg[i];
        char *peer_array;
        if (m->peer == h->d->info.rank) {
            peer_array = h->array;
        } else {
            void *b = NULL;
            for (int k = 0; k < i && !b; ++k)
                if (h->msg[k].peer == m->peer && h->msg[k].peer != h->d->info.rank)
                    b = h->msg[k].peer_base;
            if (!b) {
                tridi_status s = tridi_mpi_ipc_open(all[m->peer].handle, &b);
                if (s)
                    return s;
                h->ipc_opened[h->nopened++] = b;
            }
            m->peer_base = b;
            peer_array = (char *)b + all[m->peer].offset;
        }
        m->peer_dst = peer_array + (intptr_t)m->peer_dst * (int64_t)h->esize;
    }
    return TRIDI_SUCCESS;
}

static tridi_status ipc_begin(const char *f, tridi_halo h)
{
    /* Ready: this rank's owned cells are final and it no longer reads its halos, so its neighbours
     * may write into them. */
    tridi_status s = tridi_halo_handshake(f, h, TRIDI_HALO_TAG_READY, tridi_halo_sync_stream(f, h));
    if (s)
        return s;
    /* Faces of long rows (j faces) below a few MiB go through the copy engines; faces of a few
     * cells per row (i faces, corners), on which copy engines crawl, and large faces through one
     * kernel. */
    tridi_mpi_region r[8];
    int nk = 0;
    for (int i = 0; i < h->nmsg; ++i) {
        const halo_msg *m = &h->msg[i];
        char *src = (char *)h->array + m->send_off * (int64_t)h->esize;
        size_t row = (size_t)m->count[0] * h->esize;
        size_t face = row * (size_t)(m->count[1] * m->count[2]);
        if (row >= IPC_ROW_BYTES && face < IPC_CE_MAX_BYTES) {
            s = tridi_halo_copy_3d(f, m->peer_dst, (size_t)m->peer_s1 * h->esize, (size_t)(m->peer_s2 / m->peer_s1),
                                   src, (size_t)h->s1 * h->esize, (size_t)(h->s2 / h->s1), row,
                                   (size_t)m->count[1], (size_t)m->count[2], h->stream);
            if (s)
                return s;
            continue;
        }
        r[nk].src = src;
        r[nk].dst = m->peer_dst;
        r[nk].src_s1 = h->s1;
        r[nk].src_s2 = h->s2;
        r[nk].dst_s1 = m->peer_s1;
        r[nk].dst_s2 = m->peer_s2;
        memcpy(r[nk].count, m->count, sizeof r[nk].count);
        nk++;
    }
    return tridi_mpi_cuda_copy_regions(r, nk, h->esize, h->stream);
}

static tridi_status ipc_end(const char *f, tridi_halo h)
{
    /* Done: this rank's writes into its neighbours' halos are complete; once every neighbour has said
     * the same, this rank's halos are final. */
    return tridi_halo_handshake(f, h, TRIDI_HALO_TAG_DONE, tridi_halo_sync_stream(f, h));
}

static void ipc_destroy(tridi_halo h)
{
    for (int i = 0; i < h->nopened; ++i)
        tridi_mpi_ipc_close(h->ipc_opened[i]);
    h->nopened = 0;
}

const tridi_halo_transport tridi_halo_ipc = {
    .probe = ipc_probe,
    .create = ipc_create,
    .begin = ipc_begin,
    .end = ipc_end,
    .destroy = ipc_destroy,
};
