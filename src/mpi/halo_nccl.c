/* NCCL transport of the halo exchange: device faces packed on the GPU, moved by ncclSend/ncclRecv on the
 * plan's stream over the decomposition's NCCL communicator (shared by its NCCL plans), and unpacked; all
 * queued by begin, waited for by end. Built only with TRIDI_ENABLE_NCCL. */
#include "halo_internal.h"

#include <stdlib.h>
#include <string.h>

#include <nccl.h>

/* An NCCL failure with NCCL's text and, where it has one, the reason NCCL gave last (e.g. "Duplicate GPU
 * detected ..."). code: what the caller reports it as. */
static tridi_status nccl_fail(tridi_status code, const char *f, const char *call, ncclResult_t r)
{
    const char *last = ncclGetLastError(NULL);
    if (r == ncclUnhandledCudaError)
        code = TRIDI_ERROR_CUDA;
    return tridi_fail(code, "%s: transport nccl: %s failed: %s%s%s", f, call, ncclGetErrorString(r),
                      last && *last ? ": " : "", last && *last ? last : "");
}

/* NCCL refuses two ranks on one GPU ("Duplicate GPU detected") and only the ranks sharing one find out:
 * the others would wait in ncclCommInitRank for ever. So tridi checks first, comparing the GPUs' UUIDs
 * over all ranks; every rank reports the same lowest pair. */
static tridi_status nccl_distinct_gpus(const char *f, tridi_halo h)
{
    int nranks = h->d->info.nranks;
    unsigned char mine[16];
    memset(mine, 0, sizeof mine);
    tridi_status e = tridi_halo_gpu_uuid(f, h->device, mine);
    char *all = malloc(sizeof mine * (size_t)nranks);
    int err = all ? MPI_Allgather(mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, h->d->comm)
                  : MPI_SUCCESS;
    tridi_status s = e;
    if (!s && !all)
        s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory", f);
    else if (!s && err != MPI_SUCCESS)
        s = tridi_mpi_fail(f, "MPI_Allgather", err);
    for (int i = 0; i < nranks && !s; ++i)
        for (int j = i + 1; j < nranks && !s; ++j)
            if (!memcmp(all + 16 * i, all + 16 * j, 16))
                s = tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                               "%s: transport nccl: ranks %d and %d share one GPU; NCCL needs a GPU of its own for "
                               "every rank (use ipc or staged)",
                               f, i, j);
    free(all);
    return s;
}

/* Makes this plan a user of its decomposition's NCCL communicator, created by the first such plan (unique
 * id from rank 0 by MPI_Bcast, ncclCommInitRank with the rank in the decomposition's communicator) and
 * kept until the last one is destroyed (nccl_detach): creating one costs far more than an exchange.
 * Collective; every rank returns the same status, and on failure nothing is left allocated. */
static tridi_status nccl_attach(const char *f, tridi_halo h)
{
    tridi_decomp d = h->d;
    MPI_Comm comm = d->comm;
    tridi_status mine = TRIDI_SUCCESS;
    if (d->nccl_users) { /* the same on every rank: plans are made and destroyed collectively */
        int dev = -1;
        if (!d->nccl)
            mine = tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                              "%s: transport nccl: the decomposition's NCCL communicator was aborted after a failed "
                              "exchange; destroy its NCCL halo plans before making new ones",
                              f);
        else if (ncclCommCuDevice((ncclComm_t)d->nccl, &dev) != ncclSuccess || dev != h->device)
            mine = tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                              "%s: transport nccl: the array is on GPU %d but the decomposition's NCCL communicator "
                              "is on GPU %d (one GPU per rank and decomposition)",
                              f, h->device, dev);
        mine = tridi_mpi_agree(comm, mine);
        if (!mine) {
            d->nccl_users++;
            h->nccl = 1;
        }
        return mine;
    }
    mine = tridi_mpi_agree(comm, nccl_distinct_gpus(f, h));
    if (mine)
        return mine;
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    if (d->info.rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess)
            mine = nccl_fail(TRIDI_ERROR_UNSUPPORTED, f, "ncclGetUniqueId", r);
    }
    mine = tridi_mpi_agree(comm, mine);
    if (mine)
        return mine;
    int e = MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, comm);
    mine = tridi_mpi_agree(comm, e == MPI_SUCCESS ? TRIDI_SUCCESS : tridi_mpi_fail(f, "MPI_Bcast", e));
    if (mine)
        return mine;
    ncclComm_t nc = NULL;
    ncclResult_t r = ncclCommInitRank(&nc, d->info.nranks, id, d->info.rank);
    if (r != ncclSuccess)
        mine = nccl_fail(TRIDI_ERROR_UNSUPPORTED, f, "ncclCommInitRank", r);
    mine = tridi_mpi_agree(comm, mine);
    if (mine) {
        if (nc) /* made here while another rank failed (or left by NCCL after a failure) */
            ncclCommAbort(nc);
        return mine;
    }
    d->nccl = nc;
    d->nccl_users = 1;
    h->nccl = 1;
    return TRIDI_SUCCESS;
}

/* Aborts the decomposition's communicator: NCCL kernels still waiting for a peer stop. Its plans then
 * fail until they are all destroyed. */
static void nccl_abort(tridi_decomp d)
{
    if (d->nccl)
        ncclCommAbort((ncclComm_t)d->nccl);
    d->nccl = NULL;
}

/* The last user destroys the communicator. Collective (called from the plan's destroy, which every rank runs
 * together): if an exchange aborted it on some rank, every rank aborts its own instead, as
 * ncclCommDestroy could wait for that rank. */
static void nccl_detach(tridi_halo h)
{
    tridi_decomp d = h->d;
    if (!h->nccl)
        return;
    h->nccl = 0;
    if (--d->nccl_users)
        return;
    int gone = d->nccl == NULL, any = gone;
    MPI_Allreduce(&gone, &any, 1, MPI_INT, MPI_MAX, d->comm);
    if (any)
        nccl_abort(d);
    else
        ncclCommDestroy((ncclComm_t)d->nccl);
    d->nccl = NULL;
}

/* NCCL begin: pack, the faces through ncclSend/ncclRecv, unpack, all queued on the stream; end waits.
 * An NCCL receive waits on the GPU for its send, so every pair of ranks must queue both or neither: the
 * ranks first swap their status (handshake), and a pair moves its faces only when both are fine. */
static tridi_status nccl_begin(const char *f, tridi_halo h)
{
    ncclComm_t nc = (ncclComm_t)h->d->nccl;
    h->nccl_begun = nc;
    h->nccl_pairs = 0;
    h->nccl_queued = 0;
    tridi_status mine = nc ? tridi_halo_pack(h, h->dev_send, 1)
                           : tridi_fail(TRIDI_ERROR_CUDA,
                                        "%s: transport nccl: the decomposition's NCCL communicator was aborted after a "
                                        "failed exchange; destroy its NCCL halo plans and make new ones",
                                        f);
    tridi_status s = tridi_halo_handshake(f, h, TRIDI_HALO_TAG_READY, mine);
    if (mine)
        return mine;
    /* NCCL pairs the sends and receives between two ranks in the order they are queued, and one neighbour
     * may sit in several directions (periodic axes of one or two ranks): sends go in the order of their
     * direction, receives in the order of the direction the neighbour sent them toward. */
    for (int i = 0; i < h->nmsg; ++i)
        if (!h->peer_status[i]) /* else that neighbour queues nothing for this rank either */
            h->nccl_pairs |= 1u << i;
    void *st = h->stream;
    ncclResult_t r = ncclGroupStart();
    for (int dir = 0; dir < 9 && r == ncclSuccess; ++dir)
        for (int i = 0; i < h->nmsg && r == ncclSuccess; ++i) {
            const halo_msg *m = &h->msg[i];
            size_t bytes = (size_t)(m->count[0] * m->count[1] * m->count[2]) * h->esize;
            if (!(h->nccl_pairs >> i & 1u))
                continue;
            if (m->send_dir == dir)
                r = ncclSend((char *)h->dev_send + m->buf_off, bytes, ncclUint8, m->peer, nc, st);
            if (m->recv_dir == dir && r == ncclSuccess)
                r = ncclRecv((char *)h->dev_recv + m->buf_off, bytes, ncclUint8, m->peer, nc, st);
        }
    ncclResult_t r_end = ncclGroupEnd(); /* closes the group even after a failed call in it */
    if (r == ncclSuccess)
        r = r_end;
    if (r != ncclSuccess)
        return nccl_fail(TRIDI_ERROR_CUDA, f, "ncclSend/ncclRecv", r);
    h->nccl_queued = 1;
    if (s) /* a neighbour failed: its halo cells are not written */
        return s;
    return tridi_halo_pack(h, h->dev_recv, 0);
}

/* Status words of end: the status, and this bit when the sends and receives this rank owed that neighbour
 * may never complete (not queued, aborted, or the stream failed). */
#define NCCL_UNFINISHED 0x10000

/* NCCL end: waits for the stream, listening meanwhile for the neighbours' end words: a neighbour whose
 * NCCL work with this rank will never complete would leave this rank's kernels waiting for ever, so the
 * communicator is aborted instead (its plans then fail until destroyed). */
static tridi_status nccl_end(const char *f, tridi_halo h)
{
    tridi_decomp d = h->d;
    int n = h->nmsg, recvw[8], sendw[8], got[8] = {0};
    MPI_Request rq[16];
    for (int i = 0; i < n; ++i)
        MPI_Irecv(&recvw[i], 1, MPI_INT, h->msg[i].peer, TRIDI_HALO_TAG_DONE + h->msg[i].recv_dir, d->comm, &rq[i]);
    tridi_status s = TRIDI_SUCCESS, q = TRIDI_SUCCESS;
    int done = 0;
    for (;;) {
        q = tridi_halo_stream_poll(f, h->stream, &done);
        ncclResult_t ar = ncclSuccess;
        if (d->nccl && ncclCommGetAsyncError((ncclComm_t)d->nccl, &ar) == ncclSuccess && ar != ncclSuccess) {
            s = nccl_fail(TRIDI_ERROR_CUDA, f, "the exchange (ncclCommGetAsyncError)", ar);
            nccl_abort(d); /* what NCCL asks for after an asynchronous error */
            break;
        }
        if (done || !d->nccl)
            break;
        for (int i = 0; i < n && !s; ++i) {
            int flag = 0;
            if (!got[i])
                MPI_Test(&rq[i], &flag, MPI_STATUS_IGNORE);
            got[i] |= flag;
            if (flag && (recvw[i] & NCCL_UNFINISHED) && (h->nccl_pairs >> i & 1u))
                s = tridi_fail(TRIDI_ERROR_CUDA,
                               "%s: transport nccl: neighbour rank %d stopped before its faces moved; the NCCL "
                               "communicator was aborted",
                               f, h->msg[i].peer);
        }
        if (s) {
            nccl_abort(d);
            break;
        }
    }
    if (!done) /* aborted: the NCCL kernels stop, the stream drains */
        q = tridi_halo_stream_sync(f, h->stream);
    if (!s && q)
        s = q;
    if (!s && d->nccl != h->nccl_begun && h->nccl_pairs)
        s = tridi_fail(TRIDI_ERROR_CUDA, "%s: transport nccl: the NCCL communicator was aborted during the exchange",
                       f);
    int finished = h->nccl_queued && !s;
    for (int i = 0; i < n; ++i) {
        sendw[i] = (int)s | ((h->nccl_pairs >> i & 1u) && !finished ? NCCL_UNFINISHED : 0);
        MPI_Isend(&sendw[i], 1, MPI_INT, h->msg[i].peer, TRIDI_HALO_TAG_DONE + h->msg[i].send_dir, d->comm, &rq[n + i]);
    }
    int e = MPI_Waitall(2 * n, rq, MPI_STATUSES_IGNORE);
    if (s)
        return s;
    if (e != MPI_SUCCESS)
        return tridi_mpi_fail(f, "MPI_Waitall", e);
    for (int i = 0; i < n; ++i)
        if (recvw[i] & ~NCCL_UNFINISHED) {
            tridi_status ns = (tridi_status)(recvw[i] & ~NCCL_UNFINISHED);
            return tridi_fail(ns, "%s: neighbour rank %d failed during the exchange (%s)", f, h->msg[i].peer,
                              tridi_status_name(ns));
        }
    return TRIDI_SUCCESS;
}

static tridi_status nccl_create(const char *f, tridi_halo h) { return tridi_halo_device_buffers(f, h, 0); }

static void nccl_destroy(tridi_halo h)
{
    nccl_detach(h);
    tridi_halo_device_buffers_free(h);
}

const tridi_halo_transport tridi_halo_nccl = {
    .attach = nccl_attach,
    .create = nccl_create,
    .begin = nccl_begin,
    .end = nccl_end,
    .destroy = nccl_destroy,
};
