/* Internal declarations of the halo exchange: the plan (halo.c), the table of transports it calls them
 * through (halo_table.c), the transports themselves (halo_host.c, halo_ipc.c, halo_cuda_aware.c,
 * halo_staged.c, halo_nccl.c) and what the device transports share (halo_device.c). Calls go down that
 * list only: no transport calls back into halo.c. Not installed. */
#ifndef TRIDI_HALO_INTERNAL_H
#define TRIDI_HALO_INTERNAL_H

#include "halo_backend.h"
#include "mpi_internal.h"

#include <stddef.h>

/* Message tags: data, then the "ready" and "done" status words of the device transports (plus the
 * direction index, so each direction is its own message stream). */
enum { TRIDI_HALO_TAG_DATA = 7100, TRIDI_HALO_TAG_READY = 7200, TRIDI_HALO_TAG_DONE = 7300 };

typedef struct halo_msg {
    int peer;          /* neighbour rank in the decomposition's communicator */
    int send_dir;      /* direction index of the neighbour, 0..8: (s0 + 1) + 3 (s1 + 1) */
    int recv_dir;      /* direction index of this rank seen from the neighbour */
    int64_t send_off, recv_off; /* element offsets of the first cell of the regions in this rank's array */
    int64_t count[3];  /* cells of the region per axis (same for the send and the receive region) */
    MPI_Datatype send_type, recv_type; /* host transport */
    size_t buf_off;    /* byte offset of this message in the staging buffers */
    void *peer_dst;    /* IPC: first cell of the neighbour's halo region in this process's mapping (an
                        * element offset into the neighbour's array until the IPC transport maps it) */
    void *peer_base;   /* IPC: the neighbour's mapped allocation (NULL for this rank itself) */
    int64_t peer_s1, peer_s2;
} halo_msg;

typedef struct tridi_halo_transport tridi_halo_transport;

struct tridi_halo_s { /* in the registry of live handles (tridi_internal.h) while live */
    tridi_decomp d;
    void *array;
    tridi_dtype dtype;
    size_t esize;
    tridi_memory memory;
    int corners;
    tridi_transport transport;       /* what AUTO resolved to; AUTO for host arrays */
    const tridi_halo_transport *ops; /* the transport that moves the faces; NULL until one is chosen */
    int nmsg;
    halo_msg msg[8];
    int64_t s1, s2;            /* element strides of axes 1 and 2 of this rank's array */
    int active;                /* between begin and end */
    void *stream;
    int device;
    size_t buf_bytes;          /* total bytes of all messages in one direction */
    /* What each transport's probe learnt (malloc'd, by tridi_transport), kept for the chosen transport's
     * create and freed by the plan once it is made (IPC: every rank's exported handle). */
    void *learnt[TRIDI_TRANSPORT_NCCL + 1];
    /* Host, CUDA-aware, staged: the messages under way. */
    MPI_Request req[16];
    int nreq;
    /* CUDA-aware, staged, NCCL: device pack buffers; staged: pinned host buffers too. */
    void *dev_send, *dev_recv;
    void *host_send, *host_recv;
    /* Staged: the chunked pipeline (halo_staged.c), made once per plan. */
    struct halo_pipe *pipe;
    /* IPC: the distinct mappings this plan opened. */
    void *ipc_opened[8];
    int nopened;
    /* IPC, NCCL: status word each neighbour sent in the last handshake (0: fine). */
    int peer_status[8];
    /* NCCL */
    int nccl;                  /* 1 once counted among the users of the decomposition's communicator */
    void *nccl_begun;          /* the communicator the exchange under way was queued on */
    unsigned nccl_pairs;       /* bit i set when message i was queued (both ranks fine at begin) */
    int nccl_queued;           /* 1 when this rank's sends and receives were all queued */
};

/* One transport: its entries, each naming the entry point f the caller called. NULL entries do nothing
 * (probe: always usable). */
struct tridi_halo_transport {
    /* Set, with every entry NULL, for a transport this build lacks: why (a clause after "transport
     * <name>: "); tridi_halo_create gives TRIDI_ERROR_UNSUPPORTED with it when asked for by name. */
    const char *unbuilt;
    /* Whether this rank can use the transport with plan h (*usable), and if not why (the message after
     * "f: "). Called on every rank, in the order of tridi_transport, whichever transport is asked for:
     * it may be collective. May leave what it learnt in h->learnt[its transport] for create. */
    tridi_status (*probe)(const char *f, tridi_halo h, int *usable, char *why, size_t why_len);
    /* Collective set-up once every rank can use it; every rank returns the same status. AUTO falls
     * back to the next transport when it fails. */
    tridi_status (*attach)(const char *f, tridi_halo h);
    /* This rank's buffers or mappings (the plan agrees on the outcome). */
    tridi_status (*create)(const char *f, tridi_halo h);
    /* Starts an exchange on h->stream / completes it (tridi_halo_begin / _end). */
    tridi_status (*begin)(const char *f, tridi_halo h);
    tridi_status (*end)(const char *f, tridi_halo h);
    /* Frees what probe's successors made, also after a failed creation. Collective (as destroy is). */
    void (*destroy)(tridi_halo h);
};

/* The transports of this build (halo_table.c). */
typedef struct tridi_halo_table {
    const tridi_halo_transport *host; /* host arrays, whatever the transport asked for (tridi_mpi.h) */
    /* Device arrays: the GPU an array lives on, checking that it is device memory; making a GPU the
     * current one. NULL in a build without CUDA. */
    tridi_status (*device_of)(const char *f, const void *array, int *device);
    void (*use_device)(int device);
    const tridi_halo_transport *device[TRIDI_TRANSPORT_NCCL + 1]; /* by tridi_transport; [AUTO]: NULL */
    tridi_transport auto_order[TRIDI_TRANSPORT_NCCL];             /* AUTO takes the first that serves */
} tridi_halo_table;

extern const tridi_halo_table tridi_halo_transports;

/* TRIDI_HALO_CHUNK_BYTES (src/tuning.c, docs/tuning.md): -1 unset, 0 one chunk per face, else the bytes of
 * a chunk of the staged pipeline; a malformed value refuses, naming the variable. */
TRIDI_PRIVATE tridi_status tridi_tuning_halo_chunk(const char *func, long long *bytes);

extern const tridi_halo_transport tridi_halo_host;
extern const tridi_halo_transport tridi_halo_ipc;
extern const tridi_halo_transport tridi_halo_cuda_aware;
extern const tridi_halo_transport tridi_halo_staged;
/* In libtridi_nccl (decision 043): halo_table.c refers to it weakly, so only programs that link tridi::nccl have it. */
TRIDI_PRIVATE extern const tridi_halo_transport tridi_halo_nccl;

/* ---- shared by the device transports (halo_device.c), only with TRIDI_HAVE_CUDA; their CUDA runtime
 * calls are the operations of halo_backend.h (cuda/mpi_halo_ops.cu) ---- */
/* Device pack buffers of h->buf_bytes each; pinned: pinned host buffers as well (staged). */
TRIDI_PRIVATE tridi_status tridi_halo_device_buffers(const char *f, tridi_halo h, int pinned);
/* Frees what tridi_halo_device_buffers made. */
TRIDI_PRIVATE void tridi_halo_device_buffers_free(tridi_halo h);
/* Packs (to_buffer = 1) the send regions into buf, or unpacks buf into the receive regions. */
TRIDI_PRIVATE tridi_status tridi_halo_pack(tridi_halo h, char *buf, int to_buffer);
/* One small message per neighbour carrying this rank's status, so a CUDA failure on one rank makes its
 * neighbours fail instead of hang. Each neighbour's word is left in h->peer_status. */
TRIDI_PRIVATE tridi_status tridi_halo_handshake(const char *f, tridi_halo h, int tag, tridi_status mine);
tridi_status tridi_halo_sync_stream(const char *f, tridi_halo h);
/* Posts every message as bytes between packed buffers (CUDA-aware: device, staged: pinned host). */
void tridi_halo_post_bytes(tridi_halo h, char *sendbuf, char *recvbuf);
/* Waits for the posted messages. */
tridi_status tridi_halo_wait(const char *f, tridi_halo h);

#endif
