/* Decomposition of the global grid over a Cartesian grid of ranks: its configuration checked and agreed,
 * its communicators, geometry and release. */
#include "mpi_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tridi_decomp_config_init(tridi_decomp_config *c)
{
    if (!c)
        return;
    memset(c, 0, sizeof *c);
    c->size = sizeof *c;
    c->ndim = 3;
    for (int a = 0; a < 3; ++a)
        c->lo[a] = c->hi[a] = 1;
    c->halo[0] = c->halo[1] = 1;
}

tridi_status tridi_check_decomp(const char *func, tridi_decomp d)
{
    if (!d)
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "%s: argument 'decomp' is NULL", func);
    if (!tridi_handle_is_live(TRIDI_HANDLE_DECOMP, d))
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "%s: 'decomp' is not a live decomposition (destroyed?)", func);
    return TRIDI_SUCCESS;
}

static tridi_status check_config(const char *f, const tridi_decomp_config *c, int nranks)
{
    if (c->size != sizeof *c)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: config->size = %zu, expected %zu (call tridi_decomp_config_init first)", f, c->size,
                          sizeof *c);
    if (c->ndim != 2 && c->ndim != 3)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: config->ndim = %d, must be 2 or 3", f, c->ndim);
    for (int a = 0; a < c->ndim; ++a) {
        if (c->hi[a] < c->lo[a])
            return tridi_fail(TRIDI_ERROR_BOUNDS, "%s: config->hi[%d] = %lld < config->lo[%d] = %lld", f, a,
                              (long long)c->hi[a], a, (long long)c->lo[a]);
        if (c->halo[a] < 0)
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: config->halo[%d] = %d, must be >= 0", f, a,
                              c->halo[a]);
    }
    /* The global grid with its halos must be addressable: per axis within MPI's int counts (halo
     * datatypes), in all within the byte offsets tridi_solve accepts. */
    int64_t cells = 1;
    for (int a = 0; a < c->ndim; ++a) {
        int64_t glo, ghi, ext;
        if (__builtin_sub_overflow(c->lo[a], (int64_t)c->halo[a], &glo) ||
            __builtin_add_overflow(c->hi[a], (int64_t)c->halo[a], &ghi) || __builtin_sub_overflow(ghi, glo, &ext) ||
            glo < -TRIDI_INDEX_LIMIT || ghi > TRIDI_INDEX_LIMIT || ext >= INT_MAX ||
            __builtin_mul_overflow(cells, ext + 1, &cells) || cells > INT64_MAX / 16)
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "%s: config->lo[%d] = %lld, hi[%d] = %lld and halo[%d] = %d give a global grid that "
                              "cannot be addressed (at most %d cells per axis, halos included, within the index "
                              "range -2^62..2^62)",
                              f, a, (long long)c->lo[a], a, (long long)c->hi[a], a, c->halo[a], INT_MAX);
    }
    for (int a = 0; a < 2; ++a)
        if (c->dims[a] < 0)
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: config->dims[%d] = %d, must be >= 0", f, a, c->dims[a]);
    if (c->dims[0] && c->dims[1] && (int64_t)c->dims[0] * c->dims[1] != nranks)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: config->dims = {%d, %d} needs %lld ranks, the communicator has %d", f, c->dims[0],
                          c->dims[1], (long long)c->dims[0] * c->dims[1], nranks);
    if (c->solve_transport != TRIDI_TRANSPORT_AUTO && c->solve_transport != TRIDI_TRANSPORT_IPC &&
        c->solve_transport != TRIDI_TRANSPORT_STAGED)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: config->solve_transport = %d: only TRIDI_TRANSPORT_AUTO, _IPC or _STAGED", f,
                          (int)c->solve_transport);
    if ((c->dims[0] && nranks % c->dims[0]) || (c->dims[1] && nranks % c->dims[1]))
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: config->dims = {%d, %d} does not divide %d ranks", f,
                          c->dims[0], c->dims[1], nranks);
    return TRIDI_SUCCESS;
}

/* Every rank must have passed the same configuration: compare min and max of its fields. */
static tridi_status check_agreement(const char *f, MPI_Comm comm, const tridi_decomp_config *c)
{
    int64_t v[16] = {c->ndim, c->lo[0], c->lo[1], c->lo[2], c->hi[0], c->hi[1], c->hi[2], c->halo[0],
                     c->halo[1], c->halo[2], c->dims[0], c->dims[1], c->periodic[0] != 0, c->periodic[1] != 0,
                     c->solve_transport, 0};
    if (c->ndim == 2)
        v[3] = v[6] = v[9] = 0; /* axis 2 is ignored in 2D */
    int64_t mn[16], mx[16];
    int e = MPI_Allreduce(v, mn, 16, MPI_INT64_T, MPI_MIN, comm);
    if (e == MPI_SUCCESS)
        e = MPI_Allreduce(v, mx, 16, MPI_INT64_T, MPI_MAX, comm);
    if (e != MPI_SUCCESS)
        return tridi_mpi_fail(f, "MPI_Allreduce", e);
    static const char *name[15] = {"ndim",    "lo[0]",   "lo[1]",   "lo[2]",   "hi[0]",       "hi[1]",
                                   "hi[2]",   "halo[0]", "halo[1]", "halo[2]", "dims[0]",     "dims[1]",
                                   "periodic[0]", "periodic[1]", "solve_transport"};
    for (int i = 0; i < 15; ++i)
        if (mn[i] != mx[i]) {
            char what[40];
            snprintf(what, sizeof what, "config->%s", name[i]);
            return tridi_mpi_mismatch(f, comm, what, v[i]);
        }
    return TRIDI_SUCCESS;
}

tridi_status tridi_decomp_create(tridi_decomp *out, tridi_mpi_comm fcomm, const tridi_decomp_config *c)
{
    static const char *f = "tridi_decomp_create";
    if (out)
        *out = NULL;
    /* Without MPI or a communicator this rank cannot reach the others: it returns at once. A rank given
     * MPI_COMM_NULL is not in the communicator's group (e.g. MPI_Comm_split with MPI_UNDEFINED), so no
     * rank waits for it; one that belongs to the group but passes MPI_COMM_NULL leaves the group waiting
     * in the agreement below (docs/mpi.md, "Errors no rank can agree on"). */
    int init = 0;
    MPI_Initialized(&init);
    if (!init)
        return tridi_fail(TRIDI_ERROR_MPI, "%s: MPI is not initialised (call MPI_Init first)", f);
    MPI_Comm comm = MPI_Comm_f2c(fcomm);
    if (comm == MPI_COMM_NULL)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: argument 'comm' is MPI_COMM_NULL (this rank belongs to no communicator to decompose)",
                          f);
    int nranks, rank;
    MPI_Comm_size(comm, &nranks);
    MPI_Comm_rank(comm, &rank);

    /* A NULL argument on one rank must not leave the others in the allreduce below. */
    tridi_status s = !out ? tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'decomp' is NULL", f)
                     : c  ? check_config(f, c, nranks)
                          : tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'config' is NULL", f);
    s = tridi_mpi_agree(comm, s);
    if (s)
        return s;
    s = tridi_mpi_agree(comm, check_agreement(f, comm, c));
    if (s)
        return s;

    int dims[2] = {c->dims[0], c->dims[1]}, periods[2] = {c->periodic[0] != 0, c->periodic[1] != 0};
    int e = MPI_Dims_create(nranks, 2, dims);
    if (e != MPI_SUCCESS)
        return tridi_mpi_agree(comm, tridi_mpi_fail(f, "MPI_Dims_create", e));
    for (int a = 0; a < 2; ++a) {
        int64_t n = c->hi[a] - c->lo[a] + 1;
        if (n < dims[a])
            return tridi_fail(TRIDI_ERROR_BOUNDS, "%s: axis %d has %lld cells for %d ranks: every rank needs one",
                              f, a, (long long)n, dims[a]);
        int exchanged = dims[a] > 1 || periods[a];
        if (exchanged && n / dims[a] < c->halo[a])
            return tridi_fail(TRIDI_ERROR_BOUNDS,
                              "%s: halo width %d along axis %d does not fit: the narrowest block has %lld cells "
                              "(%lld cells over %d ranks)",
                              f, c->halo[a], a, (long long)(n / dims[a]), (long long)n, dims[a]);
    }

    tridi_decomp d = calloc(1, sizeof *d);
    if (!d)
        return tridi_mpi_agree(comm, tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory", f));
    d->comm = d->line_comm[0] = d->line_comm[1] = MPI_COMM_NULL;
    e = MPI_Cart_create(comm, 2, dims, periods, 0, &d->comm);
    if (e == MPI_SUCCESS)
        MPI_Comm_set_errhandler(d->comm, MPI_ERRORS_RETURN);
    int remain_i[2] = {1, 0}, remain_j[2] = {0, 1};
    if (e == MPI_SUCCESS)
        e = MPI_Cart_sub(d->comm, remain_i, &d->line_comm[0]);
    if (e == MPI_SUCCESS)
        e = MPI_Cart_sub(d->comm, remain_j, &d->line_comm[1]);
    s = tridi_mpi_agree(comm, e == MPI_SUCCESS ? TRIDI_SUCCESS : tridi_mpi_fail(f, "MPI_Cart_create/MPI_Cart_sub", e));
    if (!s) /* agreed: every rank fails alike */
        s = tridi_mpi_group_attach(f, comm, &d->group, &d->id);
    if (s) {
        tridi_mpi_decomp_free(d);
        return s;
    }
    d->cfg = *c;
    tridi_decomp_info *in = &d->info;
    MPI_Comm_rank(d->comm, &in->rank);
    in->nranks = nranks;
    MPI_Cart_coords(d->comm, in->rank, 2, in->coords);
    in->comm = MPI_Comm_c2f(d->comm);
    in->grid.ndim = c->ndim;
    for (int a = 0; a < 3; ++a) {
        if (a < 2) {
            in->dims[a] = dims[a];
            tridi_block_range(c->lo[a], c->hi[a], dims[a], in->coords[a], &in->lo[a], &in->hi[a]);
            int below, above;
            MPI_Cart_shift(d->comm, a, 1, &below, &above);
            in->neighbour[a][0] = below == MPI_PROC_NULL ? -1 : below;
            in->neighbour[a][1] = above == MPI_PROC_NULL ? -1 : above;
        } else if (c->ndim == 3) {
            in->lo[2] = c->lo[2];
            in->hi[2] = c->hi[2];
        } else {
            in->lo[2] = in->hi[2] = 1;
        }
        int h = (a < c->ndim) ? c->halo[a] : 0;
        in->grid.lbound[a] = in->lo[a] - h;
        in->grid.ubound[a] = in->hi[a] + h;
    }
    const int recorded = !tridi_handle_add(TRIDI_HANDLE_DECOMP, d);
    s = tridi_mpi_agree(comm, recorded ? TRIDI_SUCCESS
                                       : tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not record the decomposition",
                                                    f));
    if (s) {
        if (recorded)
            tridi_handle_retire(TRIDI_HANDLE_DECOMP, d);
        tridi_mpi_decomp_free(d);
        return s;
    }
    *out = d;
    return TRIDI_SUCCESS;
}

tridi_status tridi_decomp_destroy(tridi_decomp d)
{
    if (!d)
        return TRIDI_SUCCESS;
    tridi_status s = tridi_check_decomp("tridi_decomp_destroy", d);
    if (s)
        return s;
    /* From here the handle is dead to every caller; of two destroys racing, one frees. */
    if (!tridi_handle_retire(TRIDI_HANDLE_DECOMP, d))
        return tridi_check_decomp("tridi_decomp_destroy", d);
    d->destroyed = 1;
    if (d->halos == 0) /* else the last halo plan's destroy frees it */
        tridi_mpi_decomp_free(d);
    return TRIDI_SUCCESS;
}

void tridi_mpi_decomp_free(tridi_decomp d)
{
    tridi_mpi_scratch_free(d);
    for (int a = 0; a < 2; ++a)
        if (d->line_comm[a] != MPI_COMM_NULL)
            MPI_Comm_free(&d->line_comm[a]);
    if (d->comm != MPI_COMM_NULL)
        MPI_Comm_free(&d->comm);
    tridi_mpi_group_detach(d->group);
    tridi_handle_bury(d, sizeof *d); /* never live, or retired: no new handle takes its address */
}

tridi_status tridi_decomp_get_info(tridi_decomp d, tridi_decomp_info *info)
{
    tridi_status s = tridi_check_decomp("tridi_decomp_get_info", d);
    if (s)
        return s;
    if (!info)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "tridi_decomp_get_info: argument 'info' is NULL");
    *info = d->info;
    return TRIDI_SUCCESS;
}
