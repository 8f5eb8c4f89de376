/* What every part of the MPI layer shares, so that decomp.c, dsolve.c, halo.c and the halo_* transports
 * call down into this file and never into each other in a circle: the agreement that gives every rank
 * the same outcome, MPI failures and disagreements as statuses, the process-wide cache of CUDA IPC
 * mappings, and the decomposition's host scratch of the solves. */
#include "mpi_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TRIDI_HAVE_CUDA
#include "mpi_device.h"
#endif

const char *tridi_transport_name(tridi_transport t)
{
    switch (t) {
    case TRIDI_TRANSPORT_AUTO: return "auto";
    case TRIDI_TRANSPORT_IPC: return "ipc";
    case TRIDI_TRANSPORT_CUDA_AWARE: return "cuda-aware";
    case TRIDI_TRANSPORT_STAGED: return "staged";
    case TRIDI_TRANSPORT_NCCL: return "nccl";
    }
    return "unknown";
}

tridi_status tridi_mpi_fail(const char *func, const char *call, int mpi_err)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(mpi_err, text, &len) != MPI_SUCCESS)
        strcpy(text, "unknown MPI error");
    return tridi_fail(TRIDI_ERROR_MPI, "%s: %s failed: %s", func, call, text);
}

/* FNV-1a of a failure's status and message, 0..2^62: equal on ranks that failed alike. */
static int64_t failure_hash(tridi_status s, const char *msg)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)s;
    for (const unsigned char *c = (const unsigned char *)msg; *c; ++c)
        h = (h ^ *c) * 1099511628211ull;
    return (int64_t)(h >> 2);
}

/* The message's "number L," (the line of tridi_fail_numeric) with L replaced by line. */
static void renumber_line(char *msg, size_t cap, int64_t line)
{
    char *at = strstr(msg, " number ");
    if (!at)
        return;
    char *digits = at + 8, *end = digits;
    while (*end >= '0' && *end <= '9')
        ++end;
    if (end == digits || *end != ',')
        return;
    char rest[1024];
    snprintf(rest, sizeof rest, "%s", end);
    snprintf(digits, cap - (size_t)(digits - msg), "%lld%s", (long long)line, rest);
}

tridi_status tridi_mpi_agree(MPI_Comm comm, tridi_status local) { return tridi_mpi_agree_ordered(comm, local, -1, -1); }

tridi_status tridi_mpi_agree_ordered(MPI_Comm comm, tridi_status local, int64_t order, int64_t line)
{
    int rank, nranks;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    /* Failures without an order (arguments, memory, MPI) first, by rank; then numerical ones by order. */
    int64_t key = !local ? INT64_MAX : order < 0 ? rank : nranks + order, kmin = INT64_MAX;
    if (MPI_Allreduce(&key, &kmin, 1, MPI_INT64_T, MPI_MIN, comm) != MPI_SUCCESS)
        return tridi_fail(TRIDI_ERROR_MPI, "tridi MPI layer: MPI_Allreduce failed while ranks agreed on a status");
    if (kmin == INT64_MAX)
        return TRIDI_SUCCESS;
    int mine = local && key == kmin ? rank : INT_MAX, first = INT_MAX;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return tridi_fail(TRIDI_ERROR_MPI, "tridi MPI layer: MPI_Allreduce failed while ranks agreed on a status");
    /* Every rank failed with the same status and message (a disagreement between ranks, found by all of
     * them from one all-reduce): no rank failed more than another, so the message names none. */
    int64_t same[2];
    same[0] = local ? failure_hash(local, tridi_error_message()) : -1;
    same[1] = -same[0];
    if (MPI_Allreduce(MPI_IN_PLACE, same, 2, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS)
        return tridi_fail(TRIDI_ERROR_MPI, "tridi MPI layer: MPI_Allreduce failed while ranks agreed on a status");
    if (local && same[0] == -same[1])
        return local;
    /* status, cell rank, cell[3], then the message: one broadcast carries the whole outcome. */
    struct {
        int64_t status, ndim, cell[3];
        char msg[960];
    } out;
    memset(&out, 0, sizeof out);
    if (rank == first) {
        out.status = local;
        out.ndim = tridi_error_cell(out.cell);
        strncpy(out.msg, tridi_error_message(), sizeof out.msg - 1);
        if (order >= 0 && line >= 0) /* the line as one rank numbers it, not this rank's part */
            renumber_line(out.msg, sizeof out.msg, line);
    }
    if (MPI_Bcast(&out, (int)sizeof out, MPI_BYTE, first, comm) != MPI_SUCCESS)
        return tridi_fail(TRIDI_ERROR_MPI, "tridi MPI layer: MPI_Bcast failed while ranks agreed on a status");
    int64_t cell[3] = {out.cell[0], out.cell[1], out.cell[2]};
    /* A message relayed once already carries its rank. */
    tridi_status s = strncmp(out.msg, "rank ", 5) ? tridi_fail((tridi_status)out.status, "rank %d: %s", first, out.msg)
                                                  : tridi_fail((tridi_status)out.status, "%s", out.msg);
    if (out.ndim)
        tridi_set_error_cell((int)out.ndim, cell);
    return s;
}

/* The groups of the decompositions made in this process (mpi_internal.h, tridi_mpi_group_attach): few. */
struct tridi_mpi_group {
    MPI_Comm comm; /* a duplicate of the first communicator of this group decomposed */
    int refs;      /* decompositions attached */
    int64_t last;  /* number of the last decomposition made over it */
};
static struct tridi_mpi_group **groups;
static int ngroups;

tridi_status tridi_mpi_group_attach(const char *f, MPI_Comm comm, struct tridi_mpi_group **out, int64_t *id)
{
    *out = NULL;
    struct tridi_mpi_group *g = NULL;
    for (int i = 0; i < ngroups && !g; ++i) {
        int same = MPI_UNEQUAL;
        MPI_Comm_compare(groups[i]->comm, comm, &same);
        if (same == MPI_IDENT || same == MPI_CONGRUENT)
            g = groups[i];
    }
    /* Every rank of comm made the same decompositions over this group, so each finds it or none does;
     * the all-reduce makes sure of it, and of the number. */
    int64_t v[2] = {g ? 0 : 1, g ? g->last + 1 : 1};
    int e = MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT64_T, MPI_MAX, comm);
    if (e != MPI_SUCCESS)
        return tridi_mpi_fail(f, "MPI_Allreduce", e);
    if (v[0]) {
        struct tridi_mpi_group **grown = realloc(groups, sizeof *groups * (size_t)(ngroups + 1));
        g = calloc(1, sizeof *g);
        int ok = grown && g, all = 0;
        if (grown)
            groups = grown;
        e = MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
        if (e == MPI_SUCCESS && all)
            e = MPI_Comm_dup(comm, &g->comm);
        if (e != MPI_SUCCESS || !all) {
            free(g);
            return e != MPI_SUCCESS ? tridi_mpi_fail(f, "MPI_Comm_dup", e)
                                    : tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory", f);
        }
        MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN);
        groups[ngroups++] = g;
    }
    g->last = v[1];
    g->refs++;
    *out = g;
    *id = v[1];
    return TRIDI_SUCCESS;
}

MPI_Comm tridi_mpi_group_comm(const struct tridi_mpi_group *g) { return g->comm; }

void tridi_mpi_group_detach(struct tridi_mpi_group *g)
{
    if (!g || --g->refs > 0)
        return;
    for (int i = 0; i < ngroups; ++i)
        if (groups[i] == g) {
            groups[i] = groups[--ngroups];
            break;
        }
    MPI_Comm_free(&g->comm);
    free(g);
    if (!ngroups) {
        free(groups);
        groups = NULL;
    }
}

tridi_status tridi_mpi_mismatch(const char *func, MPI_Comm comm, const char *what, int64_t mine)
{
    struct {
        long value;
        int rank;
    } in, lo, hi;
    in.value = (long)mine;
    MPI_Comm_rank(comm, &in.rank);
    int e = MPI_Allreduce(&in, &lo, 1, MPI_LONG_INT, MPI_MINLOC, comm);
    if (e == MPI_SUCCESS)
        e = MPI_Allreduce(&in, &hi, 1, MPI_LONG_INT, MPI_MAXLOC, comm);
    if (e != MPI_SUCCESS)
        return tridi_mpi_fail(func, "MPI_Allreduce", e);
    return tridi_fail(TRIDI_ERROR_MISMATCH, "%s: ranks disagree on %s: rank %d passed %lld, rank %d passed %lld", func,
                      what, lo.rank, (long long)lo.value, hi.rank, (long long)hi.value);
}

#ifdef TRIDI_HAVE_CUDA
/* One mapping per (exporting allocation) per process: CUDA refuses to open the same handle twice. */
typedef struct ipc_entry {
    unsigned char handle[TRIDI_CUDA_IPC_HANDLE_BYTES];
    void *base;
    int refs;
} ipc_entry;
static ipc_entry ipc_cache[64];

tridi_status tridi_mpi_ipc_open(const void *handle, void **base)
{
    int free_slot = -1;
    for (int i = 0; i < 64; ++i) {
        if (ipc_cache[i].refs && !memcmp(ipc_cache[i].handle, handle, TRIDI_CUDA_IPC_HANDLE_BYTES)) {
            ipc_cache[i].refs++;
            *base = ipc_cache[i].base;
            return TRIDI_SUCCESS;
        }
        if (!ipc_cache[i].refs && free_slot < 0)
            free_slot = i;
    }
    if (free_slot < 0)
        return tridi_fail(TRIDI_ERROR_UNSUPPORTED, "tridi MPI layer: more than 64 CUDA IPC mappings open at once");
    tridi_status s = tridi_mpi_cuda_ipc_open(handle, base);
    if (s)
        return s;
    memcpy(ipc_cache[free_slot].handle, handle, TRIDI_CUDA_IPC_HANDLE_BYTES);
    ipc_cache[free_slot].base = *base;
    ipc_cache[free_slot].refs = 1;
    return TRIDI_SUCCESS;
}

void tridi_mpi_ipc_close(void *base)
{
    for (int i = 0; i < 64; ++i)
        if (ipc_cache[i].refs && ipc_cache[i].base == base) {
            if (--ipc_cache[i].refs == 0)
                tridi_mpi_cuda_ipc_close(base);
            return;
        }
}

#endif

void *tridi_mpi_buffer_get(tridi_mpi_buffer *b, size_t bytes)
{
    if (b->p && b->bytes >= bytes)
        return b->p;
    free(b->p);
    b->p = malloc(bytes);
    b->bytes = b->p ? bytes : 0;
    return b->p;
}

void tridi_mpi_scratch_free(tridi_decomp d)
{
#ifdef TRIDI_HAVE_CUDA
    /* Every rank unmaps the others' reduced-system buffers before any rank frees its own. */
    for (int a = 0; a < 2; ++a)
        for (int r = 0; r < TRIDI_MPI_MAX_LINE; ++r)
            if (d->red[a].opened[r]) {
                tridi_mpi_ipc_close(d->red[a].opened[r]);
                d->red[a].opened[r] = NULL;
            }
    if (d->comm != MPI_COMM_NULL)
        MPI_Barrier(d->comm);
    for (int a = 0; a < 2; ++a) {
        tridi_cuda_ipc_unexport(d->red[a].buf, d->red[a].bytes);
        memset(&d->red[a], 0, sizeof d->red[a]);
    }
#endif
    free(d->scratch.host_gather.p);
    memset(&d->scratch, 0, sizeof d->scratch);
}
