/* Host-staged transport of the halo exchange: device faces packed on the GPU, copied to pinned host
 * buffers, moved by MPI between host buffers, copied back and unpacked. Works with any MPI library.
 * Each face is cut into chunks that travel as a pipeline: a chunk goes to MPI as soon as its copy to the
 * host is done, and a received chunk goes up while later ones still arrive (docs/decisions/050). */
#include "halo_internal.h"

#include <stdlib.h>

typedef struct pipe_chunk {
    int msg;      /* the message (face) it is part of */
    size_t off;   /* byte offset in the pack buffers (the same on the send and the receive side) */
    size_t bytes;
} pipe_chunk;

/* Made once per plan (staged_create). */
struct halo_pipe {
    int n;                     /* chunks over all messages */
    pipe_chunk *c;
    void **down;               /* per chunk: event after its device-to-host copy */
    void *up;                  /* stream of the host-to-device copies, beside the plan's stream */
    void *up_done;             /* event after the last of them */
    MPI_Request *sreq, *rreq;  /* per chunk */
    int *idx;                  /* MPI_Waitsome's indices */
    int nsent, nlanded;        /* chunks handed to MPI / received and queued up, in this exchange */
};

/* Bytes of a chunk of a face of `bytes`: faces under 4 MiB whole, larger ones in sixteenths of at most
 * 4 MiB, so that filling and draining the pipeline costs little and each chunk outweighs its MPI
 * message (docs/decisions/050); knob >= 0 (TRIDI_HALO_CHUNK_BYTES) fixes it, 0 meaning one chunk per
 * face. A function of the face alone, so both ends of a message cut it alike. */
static size_t chunk_bytes(size_t bytes, long long knob)
{
    if (knob == 0 || (knob < 0 && bytes < (4u << 20)))
        return bytes ? bytes : 1;
    if (knob > 0)
        return (size_t)knob;
    size_t c = (bytes / 16 + 4095) & ~(size_t)4095;
    return c < (256u << 10) ? (256u << 10) : c > (4u << 20) ? (4u << 20) : c;
}

static void pipe_free(tridi_halo h)
{
    struct halo_pipe *p = h->pipe;
    if (!p)
        return;
    for (int i = 0; p->down && i < p->n; ++i)
        tridi_halo_event_destroy(p->down[i]);
    tridi_halo_event_destroy(p->up_done);
    tridi_halo_stream_destroy(p->up);
    free(p->down);
    free(p->c);
    free(p->sreq);
    free(p->rreq);
    free(p->idx);
    free(p);
    h->pipe = NULL;
}

static void staged_destroy(tridi_halo h)
{
    pipe_free(h);
    tridi_halo_device_buffers_free(h);
}

static tridi_status staged_create(const char *f, tridi_halo h)
{
    /* The knob must be the same on every rank, else the two ends of a message would cut it differently:
     * compared first, by every rank, before anything here can fail on one rank only. */
    long long knob = -1;
    tridi_status s = tridi_mpi_agree(h->d->comm, tridi_tuning_halo_chunk(f, &knob));
    if (s)
        return s;
    long long v[2] = {knob, -knob};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_LONG_LONG, MPI_MAX, h->d->comm);
    if (v[0] != -v[1])
        return tridi_mpi_mismatch(f, h->d->comm, "the environment variable TRIDI_HALO_CHUNK_BYTES (-1: unset)", knob);
    tridi_halo_use_device(h->device);
    s = tridi_halo_device_buffers(f, h, 1);
    if (s)
        return s;
    int n = 0;
    for (int i = 0; i < h->nmsg; ++i) {
        const halo_msg *m = &h->msg[i];
        size_t bytes = (size_t)(m->count[0] * m->count[1] * m->count[2]) * h->esize;
        size_t c = chunk_bytes(bytes, knob);
        n += bytes ? (int)((bytes + c - 1) / c) : 1;
    }
    struct halo_pipe *p = calloc(1, sizeof *p);
    if (p) {
        h->pipe = p;
        p->c = calloc((size_t)n + 1, sizeof *p->c);
        p->down = calloc((size_t)n + 1, sizeof *p->down);
        p->sreq = calloc((size_t)n + 1, sizeof *p->sreq);
        p->rreq = calloc((size_t)n + 1, sizeof *p->rreq);
        p->idx = calloc((size_t)n + 1, sizeof *p->idx);
    }
    if (!p || !p->c || !p->down || !p->sreq || !p->rreq || !p->idx)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory", f);
    for (int i = 0; i < h->nmsg; ++i) {
        const halo_msg *m = &h->msg[i];
        size_t bytes = (size_t)(m->count[0] * m->count[1] * m->count[2]) * h->esize;
        size_t c = chunk_bytes(bytes, knob), done = 0;
        do {
            pipe_chunk *k = &p->c[p->n++];
            k->msg = i;
            k->off = m->buf_off + done;
            k->bytes = bytes - done < c ? bytes - done : c;
            done += k->bytes;
        } while (done < bytes);
    }
    s = tridi_halo_stream_create(f, &p->up);
    if (!s)
        s = tridi_halo_event_create(f, &p->up_done);
    for (int i = 0; i < p->n && !s; ++i)
        s = tridi_halo_event_create(f, &p->down[i]);
    for (int i = 0; i < p->n; ++i)
        p->sreq[i] = p->rreq[i] = MPI_REQUEST_NULL;
    return s;
}

static int chunk_count(const pipe_chunk *k) { return (int)k->bytes; }

/* Received chunks (waiting for one when block) go up to the device on the up stream. */
static tridi_status land(const char *f, tridi_halo h, int block)
{
    struct halo_pipe *p = h->pipe;
    int out = 0;
    int e = block ? MPI_Waitsome(p->n, p->rreq, &out, p->idx, MPI_STATUSES_IGNORE)
                  : MPI_Testsome(p->n, p->rreq, &out, p->idx, MPI_STATUSES_IGNORE);
    if (e != MPI_SUCCESS)
        return tridi_mpi_fail(f, block ? "MPI_Waitsome" : "MPI_Testsome", e);
    tridi_status s = TRIDI_SUCCESS;
    for (int i = 0; out != MPI_UNDEFINED && i < out; ++i) {
        const pipe_chunk *k = &p->c[p->idx[i]];
        if (!s)
            s = tridi_halo_copy_async(f, (char *)h->dev_recv + k->off, (char *)h->host_recv + k->off, k->bytes, p->up);
        p->nlanded++;
    }
    return s;
}

static tridi_status staged_begin(const char *f, tridi_halo h)
{
    struct halo_pipe *p = h->pipe;
    p->nsent = p->nlanded = 0;
    /* Receives first, so that a neighbour's first chunks find them. Chunks of one direction share a tag:
     * MPI keeps their order. */
    for (int i = 0; i < p->n; ++i) {
        const halo_msg *m = &h->msg[p->c[i].msg];
        MPI_Irecv((char *)h->host_recv + p->c[i].off, chunk_count(&p->c[i]), MPI_BYTE, m->peer,
                  TRIDI_HALO_TAG_DATA + m->recv_dir, h->d->comm, &p->rreq[i]);
    }
    tridi_status s = tridi_halo_pack(h, h->dev_send, 1);
    for (int i = 0; i < p->n && !s; ++i) {
        s = tridi_halo_copy_async(f, (char *)h->host_send + p->c[i].off, (char *)h->dev_send + p->c[i].off,
                                  p->c[i].bytes, h->stream);
        if (!s)
            s = tridi_halo_event_record(f, p->down[i], h->stream);
    }
    /* Each chunk goes to MPI once on the host, while the next ones still copy down and received ones go up.
     * After a failure the rest go at once (their bytes unset), so the neighbours' receives complete. */
    while (p->nsent < p->n) {
        int ready = 1;
        if (!s)
            s = tridi_halo_event_poll(f, p->down[p->nsent], &ready);
        if (s || ready) {
            const pipe_chunk *k = &p->c[p->nsent];
            const halo_msg *m = &h->msg[k->msg];
            MPI_Isend((char *)h->host_send + k->off, chunk_count(k), MPI_BYTE, m->peer,
                      TRIDI_HALO_TAG_DATA + m->send_dir, h->d->comm, &p->sreq[p->nsent]);
            p->nsent++;
        } else if (!s) {
            s = land(f, h, 0);
        }
    }
    return s;
}

static tridi_status staged_end(const char *f, tridi_halo h)
{
    struct halo_pipe *p = h->pipe;
    tridi_status s = TRIDI_SUCCESS;
    while (p->nlanded < p->n && !s)
        s = land(f, h, 1);
    int e = MPI_Waitall(p->n, p->rreq, MPI_STATUSES_IGNORE); /* only after a failure are some left */
    int e2 = MPI_Waitall(p->n, p->sreq, MPI_STATUSES_IGNORE);
    if (!s && (e != MPI_SUCCESS || e2 != MPI_SUCCESS))
        s = tridi_mpi_fail(f, "MPI_Waitall", e != MPI_SUCCESS ? e : e2);
    /* The unpack waits for the last copy up on the GPU, not on the host. */
    if (!s)
        s = tridi_halo_event_record(f, p->up_done, p->up);
    if (!s)
        s = tridi_halo_stream_wait(f, h->stream, p->up_done);
    if (!s)
        s = tridi_halo_pack(h, h->dev_recv, 0);
    tridi_status w = tridi_halo_sync_stream(f, h);
    return s ? s : w;
}

const tridi_halo_transport tridi_halo_staged = {
    .create = staged_create,
    .begin = staged_begin,
    .end = staged_end,
    .destroy = staged_destroy,
};
