/* Halo exchange of one grid-shaped array: host arrays through MPI subarray datatypes, device arrays
 * through CUDA IPC (each rank writes straight into its neighbours' halos), CUDA-aware MPI, NCCL, or
 * pinned host staging. One message per neighbour direction (up to 8 with corners), so corners need no
 * second round and begin/end can overlap everything. */
#include "mpi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TRIDI_HAVE_CUDA
#include <cuda_runtime_api.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#endif
#ifdef TRIDI_HAVE_NCCL
#include <nccl.h>
#endif

enum { TAG_DATA = 7100, TAG_READY = 7200, TAG_DONE = 7300 };

/* IPC faces whose rows are at least IPC_ROW_BYTES long are copied by the copy engines, shorter ones
 * by a kernel; so are faces of IPC_CE_MAX_BYTES or more, which the kernel's stores move faster over
 * NVLink than the 3D copies do, while below 4 MiB the copies win (see docs/decisions/014). */
#define IPC_ROW_BYTES 64
#ifndef IPC_CE_MAX_BYTES /* -DIPC_CE_MAX_BYTES=0: every face by the kernel (benchmarks compare both) */
#define IPC_CE_MAX_BYTES (4u << 20)
#endif

typedef struct halo_msg {
    int peer;          /* neighbour rank in the decomposition's communicator */
    int send_dir;      /* direction index of the neighbour, 0..8: (s0 + 1) + 3 (s1 + 1) */
    int recv_dir;      /* direction index of this rank seen from the neighbour */
    int64_t send_off, recv_off; /* element offsets of the first cell of the regions in this rank's array */
    int64_t count[3];  /* cells of the region per axis (same for the send and the receive region) */
    MPI_Datatype send_type, recv_type; /* host arrays */
    size_t buf_off;    /* byte offset of this message in the staging buffers */
    void *peer_dst;    /* IPC: first cell of the neighbour's halo region in this process's mapping */
    void *peer_base;   /* IPC: the neighbour's mapped allocation (NULL for this rank itself) */
    int64_t peer_s1, peer_s2;
} halo_msg;

struct tridi_halo_s {
    uint32_t magic;
    tridi_decomp d;
    void *array;
    tridi_dtype dtype;
    size_t esize;
    tridi_memory memory;
    int corners;
    tridi_transport transport;
    int nmsg;
    halo_msg msg[8];
    int64_t s1, s2;            /* element strides of axes 1 and 2 of this rank's array */
    MPI_Request req[16];
    int nreq;
    int active;                /* between begin and end */
    void *stream;
    int device;
    size_t buf_bytes;          /* total bytes of all messages in one direction */
    void *dev_send, *dev_recv; /* device pack buffers (STAGED, CUDA_AWARE, NCCL) */
    void *host_send, *host_recv; /* pinned buffers (STAGED) */
    void *ipc_opened[8];       /* distinct IPC mappings this plan opened */
    int nopened;
    void *ipc_all;             /* IPC: every rank's exported handle, during creation */
    int peer_status[8];        /* status word each neighbour sent in the last handshake (0: fine) */
    int nccl;                  /* NCCL: 1 once counted among the users of the decomposition's communicator */
    void *nccl_begun;          /* NCCL: the communicator the exchange under way was queued on */
    unsigned nccl_pairs;       /* NCCL: bit i set when message i was queued (both ranks fine at begin) */
    int nccl_queued;           /* NCCL: 1 when this rank's sends and receives were all queued */
};

/* Region of direction component s along an axis: what is sent toward s, and the halo filled from s. */
static void axis_region(int64_t own_lo, int64_t own_hi, int h, int s, int recv, int64_t *lo, int64_t *n)
{
    if (s == 0) {
        *lo = own_lo;
        *n = own_hi - own_lo + 1;
    } else if (s < 0) {
        *lo = recv ? own_lo - h : own_lo;
        *n = h;
    } else {
        *lo = recv ? own_hi + 1 : own_hi - h + 1;
        *n = h;
    }
}

/* Geometry of the block at coords (any rank's, so IPC writers can address a neighbour's halo). */
typedef struct block_geom {
    int64_t lo[3], hi[3], lb[3], ext[3];
} block_geom;

static void block_of(const tridi_decomp d, const int coords[2], block_geom *g)
{
    const tridi_decomp_config *c = &d->cfg;
    for (int a = 0; a < 3; ++a) {
        if (a < 2)
            tridi_block_range(c->lo[a], c->hi[a], d->info.dims[a], coords[a], &g->lo[a], &g->hi[a]);
        else {
            g->lo[2] = d->info.lo[2];
            g->hi[2] = d->info.hi[2];
        }
        int h = a < c->ndim ? c->halo[a] : 0;
        g->lb[a] = g->lo[a] - h;
        g->ext[a] = g->hi[a] - g->lo[a] + 1 + 2 * h;
    }
}

/* Start cell (offset) and counts of the region toward direction (s0, s1) in the block g. Axis 2 spans
 * the whole allocation, halos included. */
static int64_t region(const tridi_decomp d, const block_geom *g, int s0, int s1, int recv, int64_t count[3])
{
    int64_t lo[3];
    axis_region(g->lo[0], g->hi[0], d->cfg.halo[0], s0, recv, &lo[0], &count[0]);
    axis_region(g->lo[1], g->hi[1], d->cfg.halo[1], s1, recv, &lo[1], &count[1]);
    lo[2] = g->lb[2];
    count[2] = g->ext[2];
    return (lo[0] - g->lb[0]) + g->ext[0] * ((lo[1] - g->lb[1]) + g->ext[1] * (lo[2] - g->lb[2]));
}

static int dir_index(int s0, int s1) { return (s0 + 1) + 3 * (s1 + 1); }

/* The neighbour at (s0, s1), or -1 past a non-periodic edge. */
static int neighbour_at(const tridi_decomp d, int s0, int s1, int coords_out[2])
{
    int c[2] = {d->info.coords[0] + s0, d->info.coords[1] + s1};
    for (int a = 0; a < 2; ++a) {
        if (c[a] < 0 || c[a] >= d->info.dims[a]) {
            if (!d->cfg.periodic[a])
                return -1;
            c[a] = (c[a] + d->info.dims[a]) % d->info.dims[a];
        }
    }
    int r;
    MPI_Cart_rank(d->comm, c, &r);
    coords_out[0] = c[0];
    coords_out[1] = c[1];
    return r;
}

static void build_messages(tridi_halo h)
{
    tridi_decomp d = h->d;
    block_geom me;
    block_of(d, d->info.coords, &me);
    h->s1 = me.ext[0];
    h->s2 = me.ext[0] * me.ext[1];
    h->nmsg = 0;
    size_t off = 0;
    for (int s1 = -1; s1 <= 1; ++s1)
        for (int s0 = -1; s0 <= 1; ++s0) {
            if (!s0 && !s1)
                continue;
            if (s0 && s1 && !h->corners)
                continue;
            if ((s0 && !d->cfg.halo[0]) || (s1 && !d->cfg.halo[1]))
                continue;
            int pc[2];
            int peer = neighbour_at(d, s0, s1, pc);
            if (peer < 0)
                continue;
            halo_msg *m = &h->msg[h->nmsg++];
            memset(m, 0, sizeof *m);
            m->peer = peer;
            m->send_dir = dir_index(s0, s1);
            m->recv_dir = dir_index(-s0, -s1);
            m->send_off = region(d, &me, s0, s1, 0, m->count);
            m->recv_off = region(d, &me, s0, s1, 1, m->count);
            /* The neighbour's halo that this message fills lies toward (-s0, -s1) in its own block. */
            block_geom pg;
            block_of(d, pc, &pg);
            int64_t pcount[3];
            m->peer_dst = (void *)(intptr_t)region(d, &pg, -s0, -s1, 1, pcount); /* offset until IPC maps */
            m->peer_s1 = pg.ext[0];
            m->peer_s2 = pg.ext[0] * pg.ext[1];
            m->buf_off = off;
            off += (size_t)(m->count[0] * m->count[1] * m->count[2]) * h->esize;
            m->send_type = m->recv_type = MPI_DATATYPE_NULL;
        }
    h->buf_bytes = off;
}

static tridi_status make_host_types(tridi_halo h)
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
                return tridi_mpi_fail("tridi_halo_create", "MPI_Type_create_subarray", e);
        }
    }
    return TRIDI_SUCCESS;
}

#ifdef TRIDI_HAVE_CUDA
static tridi_status cuda_fail(const char *f, const char *call, cudaError_t e)
{
    return tridi_fail(TRIDI_ERROR_CUDA, "%s: %s failed: %s", f, call, cudaGetErrorString(e));
}

/* The allocation holding ptr: IPC handles name allocations, and the array may start inside one. The
 * driver's cuMemGetAddressRange is reached through the runtime so that tridi never links libcuda. */
typedef int (*get_range_fn)(unsigned long long *base, size_t *bytes, unsigned long long ptr);
static int allocation_base(void *ptr, char **base)
{
    static get_range_fn fn;
    if (!fn) {
        enum cudaDriverEntryPointQueryResult q;
        void *p = NULL;
        if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &p, 12000, cudaEnableDefault, &q) !=
                cudaSuccess ||
            q != cudaDriverEntryPointSuccess || !p)
            return -1;
        fn = (get_range_fn)p;
    }
    unsigned long long b = 0;
    size_t bytes = 0;
    if (fn(&b, &bytes, (unsigned long long)(uintptr_t)ptr) != 0)
        return -1;
    *base = (char *)(uintptr_t)b;
    return 0;
}

typedef struct ipc_info {
    cudaIpcMemHandle_t handle;
    int64_t offset; /* bytes from the allocation's base to the array */
    int device;
    int ok;         /* 1: this rank exported a handle */
} ipc_info;

/* Whether every rank can use IPC with this plan's neighbours; opens the neighbours' arrays if so.
 * want: 1 to open (IPC chosen), 0 to only report capability. */
static tridi_status ipc_capable(tridi_halo h, int *capable, char *why, size_t why_len)
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
    char *base;
    if (allocation_base(h->array, &base) == 0 && cudaIpcGetMemHandle(&mine.handle, base) == cudaSuccess) {
        mine.ok = 1;
        mine.offset = (char *)h->array - base;
    } else {
        cudaGetLastError();
    }
    ipc_info *all = malloc(sizeof(ipc_info) * (size_t)nranks);
    if (!all)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi_halo_create: out of host memory");
    int e = MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, comm);
    if (e != MPI_SUCCESS) {
        free(all);
        return tridi_mpi_fail("tridi_halo_create", "MPI_Allgather", e);
    }
    *capable = 1;
    if (node_size != nranks) {
        *capable = 0;
        snprintf(why, why_len, "the ranks span more than one node");
    } else if (!mine.ok) {
        *capable = 0;
        snprintf(why, why_len, "the array is not a cudaMalloc allocation that CUDA IPC can export");
    }
    for (int i = 0; i < h->nmsg && *capable; ++i) {
        const ipc_info *p = &all[h->msg[i].peer];
        int access = 1;
        if (p->device != h->device)
            cudaDeviceCanAccessPeer(&access, h->device, p->device);
        if (!access || !p->ok) {
            *capable = 0;
            snprintf(why, why_len, "GPU %d cannot reach the neighbour's GPU %d", h->device, p->device);
        }
    }
    /* The array list is kept only through the open step below. */
    h->ipc_all = all;
    return TRIDI_SUCCESS;
}

static tridi_status ipc_open_peers(tridi_halo h)
{
    ipc_info *all = h->ipc_all;
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
                tridi_status s = tridi_mpi_ipc_open(&all[m->peer].handle, &b);
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

#ifdef TRIDI_HAVE_NCCL
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
    struct cudaDeviceProp p;
    char mine[16];
    memset(mine, 0, sizeof mine);
    cudaError_t e = cudaGetDeviceProperties(&p, h->device);
    if (e == cudaSuccess)
        memcpy(mine, p.uuid.bytes, sizeof mine);
    char *all = malloc(sizeof mine * (size_t)nranks);
    int err = all ? MPI_Allgather(mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, h->d->comm)
                  : MPI_SUCCESS;
    tridi_status s = TRIDI_SUCCESS;
    if (e != cudaSuccess)
        s = cuda_fail(f, "cudaGetDeviceProperties", e);
    else if (!all)
        s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory", f);
    else if (err != MPI_SUCCESS)
        s = tridi_mpi_fail(f, "MPI_Allgather", err);
    for (int i = 0; i < nranks && !s; ++i)
        for (int j = i + 1; j < nranks && !s; ++j)
            if (!memcmp(all + 16 * i, all + 16 * j, 16))
                s = tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                               "%s: transport nccl: ranks %d and %d share one GPU; NCCL needs a GPU of its own for "
                               "every rank (use ipc or staged)",
                               f, i, j);
    if (e != cudaSuccess)
        cudaGetLastError();
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

/* The last user destroys the communicator. Collective (called from release, which every rank runs
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
#endif
#endif

tridi_status tridi_halo_get_transport(tridi_halo h, tridi_transport *t)
{
    if (!h || h->magic != TRIDI_HALO_MAGIC)
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "tridi_halo_get_transport: 'halo' is NULL or destroyed");
    if (!t)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "tridi_halo_get_transport: argument 'transport' is NULL");
    *t = h->transport;
    return TRIDI_SUCCESS;
}

static tridi_status check_halo(const char *f, tridi_halo h)
{
    if (!h || h->magic != TRIDI_HALO_MAGIC)
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "%s: 'halo' is NULL or destroyed", f);
    return TRIDI_SUCCESS;
}

static void release(tridi_halo h)
{
    for (int i = 0; i < h->nmsg; ++i) {
        if (h->msg[i].send_type != MPI_DATATYPE_NULL)
            MPI_Type_free(&h->msg[i].send_type);
        if (h->msg[i].recv_type != MPI_DATATYPE_NULL)
            MPI_Type_free(&h->msg[i].recv_type);
    }
#ifdef TRIDI_HAVE_NCCL
    nccl_detach(h);
#endif
#ifdef TRIDI_HAVE_CUDA
    for (int i = 0; i < h->nopened; ++i)
        tridi_mpi_ipc_close(h->ipc_opened[i]);
    if (h->dev_send)
        cudaFree(h->dev_send);
    if (h->dev_recv)
        cudaFree(h->dev_recv);
    if (h->host_send)
        cudaFreeHost(h->host_send);
    if (h->host_recv)
        cudaFreeHost(h->host_recv);
    free(h->ipc_all);
#endif
    h->magic = 0;
    free(h);
}

/* Per-rank checks of the arguments, before any rank commits to the exchange. */
static tridi_status check_args(const char *f, tridi_halo *out, tridi_decomp d, void *array, tridi_dtype dtype,
                               tridi_memory memory, tridi_transport transport, int *device)
{
    if (!out)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'halo' is NULL", f);
    if (!array)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'array' is NULL", f);
    if (dtype != TRIDI_FLOAT32 && dtype != TRIDI_FLOAT64)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: dtype = %d is not TRIDI_FLOAT32 or TRIDI_FLOAT64", f,
                          (int)dtype);
    if (memory != TRIDI_MEMORY_HOST && memory != TRIDI_MEMORY_DEVICE)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: memory = %d is not TRIDI_MEMORY_HOST or _DEVICE", f,
                          (int)memory);
    *device = -1;
    if (memory == TRIDI_MEMORY_HOST) /* the transport is ignored for host arrays (tridi_mpi.h) */
        return TRIDI_SUCCESS;
    if ((int)transport < TRIDI_TRANSPORT_AUTO || (int)transport > TRIDI_TRANSPORT_NCCL)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: transport = %d is not a tridi_transport", f,
                          (int)transport);
#ifdef TRIDI_HAVE_CUDA
    /* Without a GPU (or a driver) the runtime's first call fails with its own reason, such as "CUDA driver
     * version is insufficient": say what it means. */
    int ngpu = 0;
    cudaError_t e = cudaGetDeviceCount(&ngpu);
    if (e != cudaSuccess || ngpu == 0) {
        cudaGetLastError();
        return tridi_fail(TRIDI_ERROR_NO_DEVICE,
                          "%s: memory = TRIDI_MEMORY_DEVICE, but this rank sees no GPU (the CUDA runtime says: %s)", f,
                          e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    }
    struct cudaPointerAttributes at;
    e = cudaPointerGetAttributes(&at, array);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return cuda_fail(f, "cudaPointerGetAttributes on 'array'", e);
    }
    if (at.type != cudaMemoryTypeDevice)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: 'array' is not device memory (memory = TRIDI_MEMORY_DEVICE)",
                          f);
    *device = at.device;
    (void)d;
    return TRIDI_SUCCESS;
#else
    (void)d;
    return tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: device arrays need tridi built with CUDA", f);
#endif
}

#ifdef TRIDI_HAVE_CUDA
static int cuda_aware_mpi(void)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    return MPIX_Query_cuda_support() == 1;
#else
    return 0;
#endif
}

/* Chooses the device transport (the same on every rank) and sets up its buffers or mappings. */
static tridi_status setup_device(const char *f, tridi_halo h, tridi_transport want)
{
    MPI_Comm comm = h->d->comm;
    cudaSetDevice(h->device);
#ifndef TRIDI_HAVE_NCCL
    if (want == TRIDI_TRANSPORT_NCCL) /* the same build on every rank: each fails alike */
        return tridi_mpi_agree(comm, tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                                                "%s: transport nccl: tridi was built without NCCL (nccl.h and "
                                                "libnccl were not found, or TRIDI_ENABLE_NCCL=OFF)",
                                                f));
#endif
    char why[200] = "";
    int ipc = 0;
    tridi_status s = tridi_mpi_agree(comm, ipc_capable(h, &ipc, why, sizeof why));
    if (s)
        return s;
    int aware = cuda_aware_mpi();
    int local[2] = {ipc, aware}, all[2];
    MPI_Allreduce(local, all, 2, MPI_INT, MPI_MIN, comm);
    tridi_status mine = TRIDI_SUCCESS;
    if (want == TRIDI_TRANSPORT_IPC && !all[0])
        mine = ipc ? tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: transport ipc: another rank cannot use it", f)
                   : tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: transport ipc is not usable here: %s", f, why);
    if (want == TRIDI_TRANSPORT_CUDA_AWARE && !all[1])
        mine = aware ? tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: transport cuda-aware: another rank cannot use it", f)
                     : tridi_fail(TRIDI_ERROR_UNSUPPORTED,
                                  "%s: transport cuda-aware: this MPI library is not CUDA-aware "
                                  "(MPIX_Query_cuda_support)", f);
    /* Report the lowest rank that actually lacks the capability, not one that only heard about it. */
    int lacks = mine && ((want == TRIDI_TRANSPORT_IPC && !ipc) || (want == TRIDI_TRANSPORT_CUDA_AWARE && !aware));
    int any_lacks = 0;
    MPI_Allreduce(&lacks, &any_lacks, 1, MPI_INT, MPI_MAX, comm);
    s = tridi_mpi_agree(comm, (any_lacks && !lacks) ? TRIDI_SUCCESS : mine);
    if (s)
        return s;
    if (want == TRIDI_TRANSPORT_AUTO && all[0])
        want = TRIDI_TRANSPORT_IPC;
#ifdef TRIDI_HAVE_NCCL
    /* AUTO tries NCCL only where IPC cannot serve (ranks on several nodes, GPUs without peer access, arrays
     * CUDA IPC cannot export), and falls back to MPI when NCCL cannot be set up on some rank (ranks sharing
     * a GPU, ...): asking for NCCL by name reports why instead. */
    if (want == TRIDI_TRANSPORT_NCCL || want == TRIDI_TRANSPORT_AUTO) {
        s = nccl_attach(f, h);
        if (!s)
            want = TRIDI_TRANSPORT_NCCL;
        else if (want == TRIDI_TRANSPORT_NCCL)
            return s;
    }
#endif
    if (want == TRIDI_TRANSPORT_AUTO)
        want = all[1] ? TRIDI_TRANSPORT_CUDA_AWARE : TRIDI_TRANSPORT_STAGED;
    h->transport = want;

    mine = TRIDI_SUCCESS;
    cudaError_t e = cudaSuccess;
    size_t bytes = h->buf_bytes ? h->buf_bytes : 1;
    if (want == TRIDI_TRANSPORT_IPC) {
        mine = ipc_open_peers(h);
    } else {
        e = cudaMalloc(&h->dev_send, bytes);
        if (e == cudaSuccess)
            e = cudaMalloc(&h->dev_recv, bytes);
        if (e == cudaSuccess && want == TRIDI_TRANSPORT_STAGED)
            e = cudaMallocHost(&h->host_send, bytes);
        if (e == cudaSuccess && want == TRIDI_TRANSPORT_STAGED)
            e = cudaMallocHost(&h->host_recv, bytes);
        if (e != cudaSuccess)
            mine = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: staging buffers of %zu bytes: %s", f, bytes,
                              cudaGetErrorString(e));
    }
    free(h->ipc_all);
    h->ipc_all = NULL;
    return tridi_mpi_agree(comm, mine);
}
#endif

tridi_status tridi_halo_create(tridi_halo *out, tridi_decomp d, void *array, tridi_dtype dtype, tridi_memory memory,
                               int corners, tridi_transport transport)
{
    static const char *f = "tridi_halo_create";
    tridi_status s = tridi_check_decomp(f, d);
    if (s)
        return s; /* no communicator to agree over */
    MPI_Comm comm = d->comm;
    int device = -1;
    s = tridi_mpi_agree(comm, check_args(f, out, d, array, dtype, memory, transport, &device));
    if (s) {
        if (out)
            *out = NULL;
        return s;
    }
    *out = NULL;
    int v[4] = {(int)dtype, (int)memory, corners != 0, memory == TRIDI_MEMORY_HOST ? 0 : (int)transport};
    int mn[4], mx[4];
    MPI_Allreduce(v, mn, 4, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(v, mx, 4, MPI_INT, MPI_MAX, comm);
    static const char *name[4] = {"dtype", "memory", "corners", "transport"};
    for (int i = 0; i < 4; ++i)
        if (mn[i] != mx[i])
            return tridi_mpi_mismatch(f, comm, name[i], v[i]);

    tridi_halo h = calloc(1, sizeof *h);
    s = h ? TRIDI_SUCCESS : tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory", f);
    s = tridi_mpi_agree(comm, s);
    if (s) {
        free(h);
        return s;
    }
    h->magic = TRIDI_HALO_MAGIC;
    h->d = d;
    h->array = array;
    h->dtype = dtype;
    h->esize = tridi_dtype_size(dtype);
    h->memory = memory;
    h->corners = corners != 0;
    h->device = device;
    h->transport = TRIDI_TRANSPORT_AUTO;
    build_messages(h);
    if (memory == TRIDI_MEMORY_HOST) {
        s = tridi_mpi_agree(comm, make_host_types(h));
    } else {
#ifdef TRIDI_HAVE_CUDA
        s = setup_device(f, h, transport);
#else
        s = tridi_fail(TRIDI_ERROR_INTERNAL, "%s: device memory accepted without CUDA", f);
#endif
    }
    if (s) {
        release(h);
        return s;
    }
    d->halos++;
    *out = h;
    return TRIDI_SUCCESS;
}

tridi_status tridi_halo_destroy(tridi_halo h)
{
    if (!h)
        return TRIDI_SUCCESS;
    tridi_status s = check_halo("tridi_halo_destroy", h);
    if (s)
        return s;
    if (h->active)
        tridi_halo_end(h);
    /* Neighbours may still be writing into this array through IPC until every rank is here. */
    MPI_Barrier(h->d->comm);
    tridi_decomp d = h->d;
    release(h);
    if (--d->halos == 0 && d->magic == 0) /* its decomposition was destroyed first */
        tridi_mpi_decomp_free(d);
    return TRIDI_SUCCESS;
}

#ifdef TRIDI_HAVE_CUDA
/* Packs (to_buffer = 1) the send regions into buf, or unpacks buf into the receive regions. */
static tridi_status pack(tridi_halo h, char *buf, int to_buffer)
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

/* One small message per neighbour carrying this rank's status, so a CUDA failure on one rank makes its
 * neighbours fail instead of hang. Each neighbour's word is left in h->peer_status. */
static tridi_status handshake(const char *f, tridi_halo h, int tag, tridi_status mine)
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

static tridi_status sync_stream(const char *f, tridi_halo h)
{
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)h->stream);
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail(f, "cudaStreamSynchronize", e);
}

#ifdef TRIDI_HAVE_NCCL
/* NCCL begin: pack, the faces through ncclSend/ncclRecv, unpack, all queued on the stream; end waits.
 * An NCCL receive waits on the GPU for its send, so every pair of ranks must queue both or neither: the
 * ranks first swap their status (handshake), and a pair moves its faces only when both are fine. */
static tridi_status nccl_begin(const char *f, tridi_halo h)
{
    ncclComm_t nc = (ncclComm_t)h->d->nccl;
    h->nccl_begun = nc;
    h->nccl_pairs = 0;
    h->nccl_queued = 0;
    tridi_status mine = nc ? pack(h, h->dev_send, 1)
                           : tridi_fail(TRIDI_ERROR_CUDA,
                                        "%s: transport nccl: the decomposition's NCCL communicator was aborted after a "
                                        "failed exchange; destroy its NCCL halo plans and make new ones",
                                        f);
    tridi_status s = handshake(f, h, TAG_READY, mine);
    if (mine)
        return mine;
    /* NCCL pairs the sends and receives between two ranks in the order they are queued, and one neighbour
     * may sit in several directions (periodic axes of one or two ranks): sends go in the order of their
     * direction, receives in the order of the direction the neighbour sent them toward. */
    for (int i = 0; i < h->nmsg; ++i)
        if (!h->peer_status[i]) /* else that neighbour queues nothing for this rank either */
            h->nccl_pairs |= 1u << i;
    cudaStream_t st = (cudaStream_t)h->stream;
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
    return pack(h, h->dev_recv, 0);
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
        MPI_Irecv(&recvw[i], 1, MPI_INT, h->msg[i].peer, TAG_DONE + h->msg[i].recv_dir, d->comm, &rq[i]);
    tridi_status s = TRIDI_SUCCESS;
    cudaError_t q;
    for (;;) {
        q = cudaStreamQuery((cudaStream_t)h->stream);
        ncclResult_t ar = ncclSuccess;
        if (d->nccl && ncclCommGetAsyncError((ncclComm_t)d->nccl, &ar) == ncclSuccess && ar != ncclSuccess) {
            s = nccl_fail(TRIDI_ERROR_CUDA, f, "the exchange (ncclCommGetAsyncError)", ar);
            nccl_abort(d); /* what NCCL asks for after an asynchronous error */
            break;
        }
        if (q != cudaErrorNotReady || !d->nccl)
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
    if (q == cudaErrorNotReady) /* aborted: the NCCL kernels stop, the stream drains */
        q = cudaStreamSynchronize((cudaStream_t)h->stream);
    if (!s && q != cudaSuccess)
        s = cuda_fail(f, "waiting for the stream", q);
    if (!s && d->nccl != h->nccl_begun && h->nccl_pairs)
        s = tridi_fail(TRIDI_ERROR_CUDA, "%s: transport nccl: the NCCL communicator was aborted during the exchange",
                       f);
    int finished = h->nccl_queued && !s;
    for (int i = 0; i < n; ++i) {
        sendw[i] = (int)s | ((h->nccl_pairs >> i & 1u) && !finished ? NCCL_UNFINISHED : 0);
        MPI_Isend(&sendw[i], 1, MPI_INT, h->msg[i].peer, TAG_DONE + h->msg[i].send_dir, d->comm, &rq[n + i]);
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
#endif
#endif

static void post(tridi_halo h, char *sendbuf, char *recvbuf)
{
    h->nreq = 0;
    for (int i = 0; i < h->nmsg; ++i) {
        const halo_msg *m = &h->msg[i];
        int cnt = (int)(m->count[0] * m->count[1] * m->count[2] * (int64_t)h->esize);
        if (sendbuf)
            MPI_Irecv(recvbuf + m->buf_off, cnt, MPI_BYTE, m->peer, TAG_DATA + m->recv_dir, h->d->comm,
                      &h->req[h->nreq++]);
        else
            MPI_Irecv(h->array, 1, m->recv_type, m->peer, TAG_DATA + m->recv_dir, h->d->comm, &h->req[h->nreq++]);
    }
    for (int i = 0; i < h->nmsg; ++i) {
        const halo_msg *m = &h->msg[i];
        int cnt = (int)(m->count[0] * m->count[1] * m->count[2] * (int64_t)h->esize);
        if (sendbuf)
            MPI_Isend(sendbuf + m->buf_off, cnt, MPI_BYTE, m->peer, TAG_DATA + m->send_dir, h->d->comm,
                      &h->req[h->nreq++]);
        else
            MPI_Isend(h->array, 1, m->send_type, m->peer, TAG_DATA + m->send_dir, h->d->comm, &h->req[h->nreq++]);
    }
}

/* tridi_halo_begin, its messages naming the entry point f the caller called. */
static tridi_status halo_begin(const char *f, tridi_halo h, void *stream)
{
    tridi_status s = check_halo(f, h);
    if (s)
        return s;
    if (h->active)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: an exchange of this halo is already under way", f);
    h->active = 1;
    h->stream = stream;
    if (h->memory == TRIDI_MEMORY_HOST) {
        post(h, NULL, NULL);
        return TRIDI_SUCCESS;
    }
#ifdef TRIDI_HAVE_CUDA
    cudaSetDevice(h->device);
    if (h->transport == TRIDI_TRANSPORT_IPC) {
        /* Ready: this rank's owned cells are final and it no longer reads its halos, so its neighbours
         * may write into them. */
        s = handshake(f, h, TAG_READY, sync_stream(f, h));
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
                struct cudaMemcpy3DParms cp;
                memset(&cp, 0, sizeof cp);
                cp.srcPtr.ptr = src;
                cp.srcPtr.pitch = (size_t)h->s1 * h->esize;
                cp.srcPtr.xsize = row;
                cp.srcPtr.ysize = (size_t)(h->s2 / h->s1);
                cp.dstPtr.ptr = m->peer_dst;
                cp.dstPtr.pitch = (size_t)m->peer_s1 * h->esize;
                cp.dstPtr.xsize = row;
                cp.dstPtr.ysize = (size_t)(m->peer_s2 / m->peer_s1);
                cp.extent.width = row;
                cp.extent.height = (size_t)m->count[1];
                cp.extent.depth = (size_t)m->count[2];
                cp.kind = cudaMemcpyDefault;
                cudaError_t e = cudaMemcpy3DAsync(&cp, (cudaStream_t)h->stream);
                if (e != cudaSuccess)
                    return cuda_fail(f, "cudaMemcpy3DAsync to a neighbour's halo", e);
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
#ifdef TRIDI_HAVE_NCCL
    if (h->transport == TRIDI_TRANSPORT_NCCL)
        return nccl_begin(f, h);
#endif
    s = pack(h, h->dev_send, 1);
    if (!s && h->transport == TRIDI_TRANSPORT_STAGED && h->buf_bytes) {
        cudaError_t e = cudaMemcpyAsync(h->host_send, h->dev_send, h->buf_bytes, cudaMemcpyDeviceToHost,
                                        (cudaStream_t)h->stream);
        if (e != cudaSuccess)
            s = cuda_fail(f, "cudaMemcpyAsync", e);
    }
    if (!s)
        s = sync_stream(f, h);
    /* Posted even after a failure so the neighbours' receives complete. */
    if (h->transport == TRIDI_TRANSPORT_STAGED)
        post(h, h->host_send, h->host_recv);
    else
        post(h, h->dev_send, h->dev_recv);
    return s;
#else
    return tridi_fail(TRIDI_ERROR_INTERNAL, "%s: device halo without CUDA", f);
#endif
}

static tridi_status halo_end(const char *f, tridi_halo h)
{
    tridi_status s = check_halo(f, h);
    if (s)
        return s;
    if (!h->active)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: no exchange of this halo was begun", f);
    h->active = 0;
#ifdef TRIDI_HAVE_NCCL
    if (h->memory == TRIDI_MEMORY_DEVICE && h->transport == TRIDI_TRANSPORT_NCCL) {
        cudaSetDevice(h->device);
        return nccl_end(f, h);
    }
#endif
    if (h->memory == TRIDI_MEMORY_HOST || h->transport != TRIDI_TRANSPORT_IPC) {
        int e = MPI_Waitall(h->nreq, h->req, MPI_STATUSES_IGNORE);
        h->nreq = 0;
        if (e != MPI_SUCCESS)
            return tridi_mpi_fail(f, "MPI_Waitall", e);
        if (h->memory == TRIDI_MEMORY_HOST)
            return TRIDI_SUCCESS;
    }
#ifdef TRIDI_HAVE_CUDA
    cudaSetDevice(h->device);
    if (h->transport == TRIDI_TRANSPORT_IPC)
        /* Done: this rank's writes into its neighbours' halos are complete; once every neighbour has
         * said the same, this rank's halos are final. */
        return handshake(f, h, TAG_DONE, sync_stream(f, h));
    if (h->transport == TRIDI_TRANSPORT_STAGED && h->buf_bytes) {
        cudaError_t e = cudaMemcpyAsync(h->dev_recv, h->host_recv, h->buf_bytes, cudaMemcpyHostToDevice,
                                        (cudaStream_t)h->stream);
        if (e != cudaSuccess)
            return cuda_fail(f, "cudaMemcpyAsync", e);
    }
    s = pack(h, h->dev_recv, 0);
    if (s)
        return s;
    return sync_stream(f, h);
#else
    return tridi_fail(TRIDI_ERROR_INTERNAL, "%s: device halo without CUDA", f);
#endif
}

tridi_status tridi_halo_begin(tridi_halo h, void *stream) { return halo_begin("tridi_halo_begin", h, stream); }

tridi_status tridi_halo_end(tridi_halo h) { return halo_end("tridi_halo_end", h); }

tridi_status tridi_halo_exchange(tridi_halo h, void *stream)
{
    static const char *f = "tridi_halo_exchange";
    const int live = h && h->magic == TRIDI_HALO_MAGIC, was_active = live && h->active;
    tridi_status s = halo_begin(f, h, stream);
    /* Ends what this call began (a begin that failed after posting its messages included), never an
     * exchange the caller had begun. */
    tridi_status e = (live && !was_active && h->active) ? halo_end(f, h) : TRIDI_SUCCESS;
    return s ? s : e;
}
