/* Halo exchange of one grid-shaped array: the plan. It works out the messages (one per neighbour
 * direction, up to 8 with corners, so corners need no second round and begin/end can overlap
 * everything), agrees with the other ranks on the transport, and calls the transport only through the
 * table of halo_table.c: host arrays through MPI subarray datatypes (halo_host.c), device arrays through
 * CUDA IPC (halo_ipc.c), CUDA-aware MPI (halo_cuda_aware.c), pinned host staging (halo_staged.c) or NCCL
 * (halo_nccl.c). */
#include "halo_internal.h"

#include <stdlib.h>
#include <string.h>

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

/* Asks the registry of live handles, by value: a destroyed plan's memory is never read. */
static tridi_status check_halo(const char *f, tridi_halo h)
{
    return tridi_check_handle(TRIDI_HANDLE_HALO, h, f, "argument 'halo' is NULL",
                              "'halo' is not a live halo plan (destroyed?)");
}

tridi_status tridi_halo_get_transport(tridi_halo h, tridi_transport *t)
{
    tridi_status s = check_halo("tridi_halo_get_transport", h);
    if (s)
        return s;
    if (!t)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "tridi_halo_get_transport: argument 'transport' is NULL");
    *t = h->transport;
    return TRIDI_SUCCESS;
}


static void forget_probes(tridi_halo h)
{
    for (int t = 0; t <= TRIDI_TRANSPORT_NCCL; ++t) {
        free(h->learnt[t]);
        h->learnt[t] = NULL;
    }
}

static void release(tridi_halo h)
{
    if (h->ops && h->ops->destroy)
        h->ops->destroy(h);
    forget_probes(h);
    tridi_handle_bury(h, sizeof *h);
}

/* Per-rank checks of the arguments, before any rank commits to the exchange. */
static tridi_status check_args(const char *f, tridi_halo *out, void *array, tridi_dtype dtype, tridi_memory memory,
                               tridi_transport transport, int *device)
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
    if (!tridi_halo_transports.device_of)
        return tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: device arrays need tridi built with CUDA", f);
    return tridi_halo_transports.device_of(f, array, device);
}

/* Chooses the device transport (the same on every rank) and sets up its buffers or mappings. */
static tridi_status setup_device(const char *f, tridi_halo h, tridi_transport want)
{
    enum { N = TRIDI_TRANSPORT_NCCL + 1 };
    const tridi_halo_table *tab = &tridi_halo_transports;
    MPI_Comm comm = h->d->comm;
    if (!tab->use_device)
        return tridi_fail(TRIDI_ERROR_INTERNAL, "%s: device memory accepted without CUDA", f);
    tab->use_device(h->device);
    const tridi_halo_transport *asked = tab->device[want];
    if (want != TRIDI_TRANSPORT_AUTO && (!asked || asked->unbuilt)) /* the same build on every rank: each fails alike */
        return tridi_mpi_agree(comm, tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: transport %s: %s", f,
                                                tridi_transport_name(want),
                                                asked ? asked->unbuilt : "not in this build"));
    /* What each transport can do on this rank (every probe runs on every rank: some are collective),
     * then on every rank. */
    int usable[N] = {0}, all[N];
    char why[N][200];
    for (int t = TRIDI_TRANSPORT_AUTO + 1; t < N; ++t) {
        const tridi_halo_transport *tr = tab->device[t];
        usable[t] = tr && !tr->unbuilt;
        why[t][0] = '\0';
        if (usable[t] && tr->probe) {
            tridi_status s = tridi_mpi_agree(comm, tr->probe(f, h, &usable[t], why[t], sizeof why[t]));
            if (s)
                return s;
        }
    }
    MPI_Allreduce(usable, all, N, MPI_INT, MPI_MIN, comm);
    tridi_status mine = TRIDI_SUCCESS;
    if (want != TRIDI_TRANSPORT_AUTO && !all[want])
        mine = usable[want] ? tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: transport %s: another rank cannot use it", f,
                                         tridi_transport_name(want))
                            : tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: %s", f, why[want]);
    /* Report the lowest rank that actually lacks the capability, not one that only heard about it. */
    int lacks = mine && !usable[want];
    int any_lacks = 0;
    MPI_Allreduce(&lacks, &any_lacks, 1, MPI_INT, MPI_MAX, comm);
    tridi_status s = tridi_mpi_agree(comm, (any_lacks && !lacks) ? TRIDI_SUCCESS : mine);
    if (s)
        return s;
    /* The transport asked for by name, or AUTO's first that every rank can use and that sets up
     * (asking by name reports why a set-up failed instead). */
    const tridi_transport *order = want == TRIDI_TRANSPORT_AUTO ? tab->auto_order : &want;
    const int norder = want == TRIDI_TRANSPORT_AUTO ? N - 1 : 1;
    tridi_transport chosen = TRIDI_TRANSPORT_AUTO;
    for (int i = 0; i < norder && chosen == TRIDI_TRANSPORT_AUTO; ++i) {
        const tridi_halo_transport *tr = tab->device[order[i]];
        if (!all[order[i]])
            continue;
        if (tr->attach) {
            s = tr->attach(f, h);
            if (s && want != TRIDI_TRANSPORT_AUTO)
                return s;
            if (s)
                continue;
        }
        chosen = order[i];
    }
    if (chosen == TRIDI_TRANSPORT_AUTO) /* the same build on every rank: each fails alike */
        return tridi_mpi_agree(comm, tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: no device transport in this build", f));
    h->transport = chosen;
    h->ops = tab->device[chosen];
    mine = h->ops->create ? h->ops->create(f, h) : TRIDI_SUCCESS;
    forget_probes(h);
    return tridi_mpi_agree(comm, mine);
}

tridi_status tridi_halo_create(tridi_halo *out, tridi_decomp d, void *array, tridi_dtype dtype, tridi_memory memory,
                               int corners, tridi_transport transport)
{
    static const char *f = "tridi_halo_create";
    tridi_status s = tridi_check_decomp(f, d);
    if (s)
        return s; /* no communicator to agree over */
    MPI_Comm comm = d->comm;
    /* Ranks that passed different decompositions would wait in collectives over two communicators: their
     * numbers are compared first over the one their group shares (mpi_internal.h). */
    const MPI_Comm group = tridi_mpi_group_comm(d->group);
    int64_t id[2] = {d->id, -d->id};
    if (MPI_Allreduce(MPI_IN_PLACE, id, 2, MPI_INT64_T, MPI_MAX, group) != MPI_SUCCESS)
        return tridi_fail(TRIDI_ERROR_MPI, "%s: MPI_Allreduce failed while the ranks compared decompositions", f);
    if (-id[1] != id[0]) {
        if (out)
            *out = NULL;
        return tridi_mpi_mismatch(f, group, "the decomposition (the number of its creation among this group's)",
                                  d->id);
    }
    int device = -1;
    s = tridi_mpi_agree(comm, check_args(f, out, array, dtype, memory, transport, &device));
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
        h->ops = tridi_halo_transports.host;
        s = tridi_mpi_agree(comm, h->ops->create(f, h));
    } else {
        s = setup_device(f, h, transport);
    }
    if (!s) {
        const int recorded = !tridi_handle_add(TRIDI_HANDLE_HALO, h);
        s = tridi_mpi_agree(comm, recorded ? TRIDI_SUCCESS
                                           : tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not record the plan", f));
        if (s && recorded)
            tridi_handle_retire(TRIDI_HANDLE_HALO, h);
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
    /* From here the handle is dead to every caller; of two destroys racing, one frees. */
    if (!tridi_handle_retire(TRIDI_HANDLE_HALO, h))
        return check_halo("tridi_halo_destroy", h);
    if (h->active) {
        h->active = 0;
        if (h->memory == TRIDI_MEMORY_DEVICE)
            tridi_halo_transports.use_device(h->device);
        h->ops->end("tridi_halo_destroy", h);
    }
    /* Neighbours may still be writing into this array through IPC until every rank is here. */
    MPI_Barrier(h->d->comm);
    tridi_decomp d = h->d;
    release(h);
    if (--d->halos == 0 && d->destroyed) /* its decomposition was destroyed first */
        tridi_mpi_decomp_free(d);
    return TRIDI_SUCCESS;
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
    if (h->memory == TRIDI_MEMORY_DEVICE)
        tridi_halo_transports.use_device(h->device);
    return h->ops->begin(f, h);
}

static tridi_status halo_end(const char *f, tridi_halo h)
{
    tridi_status s = check_halo(f, h);
    if (s)
        return s;
    if (!h->active)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: no exchange of this halo was begun", f);
    h->active = 0;
    if (h->memory == TRIDI_MEMORY_DEVICE)
        tridi_halo_transports.use_device(h->device);
    return h->ops->end(f, h);
}

tridi_status tridi_halo_begin(tridi_halo h, void *stream) { return halo_begin("tridi_halo_begin", h, stream); }

tridi_status tridi_halo_end(tridi_halo h) { return halo_end("tridi_halo_end", h); }

tridi_status tridi_halo_exchange(tridi_halo h, void *stream)
{
    static const char *f = "tridi_halo_exchange";
    const int live = h && tridi_handle_is_live(TRIDI_HANDLE_HALO, h), was_active = live && h->active;
    tridi_status s = halo_begin(f, h, stream);
    /* Ends what this call began (a begin that failed after posting its messages included), never an
     * exchange the caller had begun. */
    tridi_status e = (live && !was_active && h->active) ? halo_end(f, h) : TRIDI_SUCCESS;
    return s ? s : e;
}
