/* Tridiagonal solves over a decomposed grid (docs/mpi.md, "Distributed solves"): the entry points, the
 * arguments checked on every rank and this rank's plan of the solve (tridi_dplan), the failures put in
 * the order of a one-rank solve, and the uncut axes, solved by each rank's backend in its two phases
 * with the ranks' agreement between them (docs/decisions/013, 020). A cut axis goes to dsolve_cpu.c
 * (host arrays) or dsolve_device.c (device arrays): a reduced system per line (dsolve_reduced.c), and
 * the pipelined Thomas for the lines whose partition could grow (dsolve_pipeline.c). */
#include "backend.h"
#include "dsolve_internal.h"
#include "thomas_core.h"

#ifdef TRIDI_HAVE_CUDA
#include "mpi_device.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Failures are numbered as a one-rank solve meets them (tridi_mpi.h): the global box's lines as
 * tridi_solve numbers them, then within a line the forward sweep's failures by unknown, then the back
 * substitution's from the last unknown down. */
int64_t tridi_dsolve_failure_order(const tridi_dplan *dp, tridi_status s, int64_t *line)
{
    int64_t cell[3];
    *line = -1;
    if (!s || !dp->has_lines || !tridi_error_cell(cell))
        return -1;
    const int a = dp->p.axis, a1 = a == 0 ? 1 : 0, a2 = a == 2 ? 1 : 2;
    const int64_t n1 = dp->ghi[a1] - dp->glo[a1] + 1, ng = dp->ghi[a] - dp->glo[a] + 1, mg = cell[a] - dp->glo[a];
    *line = (cell[a1] - dp->glo[a1]) + (dp->ndim == 3 ? n1 * (cell[a2] - dp->glo[a2]) : 0);
    const int back = strstr(tridi_error_message(), tridi_fail_text(TRIDI_FAIL_ANSWER_OVERFLOW)) != NULL;
    return *line * 2 * ng + (back ? ng + (ng - 1 - mg) : mg);
}

/* Its line number that of the global box (tridi_mpi_agree_ordered). */
tridi_status tridi_dsolve_agree(MPI_Comm comm, const tridi_dplan *dp, tridi_status s)
{
    int64_t line;
    const int64_t order = tridi_dsolve_failure_order(dp, s, &line);
    return tridi_mpi_agree_ordered(comm, s, order, line);
}

void tridi_dsolve_failure_save(const tridi_dplan *dp, tridi_status s, tridi_dsolve_failure *out)
{
    int64_t line;
    out->s = s;
    out->order = tridi_dsolve_failure_order(dp, s, &line);
    out->cell[0] = out->cell[1] = out->cell[2] = 0;
    out->nd = s ? tridi_error_cell(out->cell) : 0;
    snprintf(out->text, sizeof out->text, "%s", s ? tridi_error_message() : "");
}

tridi_status tridi_dsolve_first_of(const tridi_dplan *dp, const tridi_dsolve_failure *a, tridi_status b)
{
    if (!a->s)
        return b;
    int64_t line;
    const int64_t order_b = b ? tridi_dsolve_failure_order(dp, b, &line) : -1;
    if (b && order_b >= 0 && a->order >= 0 && order_b < a->order)
        return b;
    tridi_fail(a->s, "%s", a->text);
    if (a->nd)
        tridi_set_error_cell(a->nd, a->cell);
    return a->s;
}

/* Range of global indices along axis a that this rank solves: its owned cells, and the halo at an edge
 * of the global grid (MOHID's boundary rows live there). */
static void solvable(const tridi_decomp d, int a, int64_t *lo, int64_t *hi)
{
    const tridi_decomp_info *in = &d->info;
    *lo = in->lo[a];
    *hi = in->hi[a];
    if (a == 2 || in->coords[a] == 0)
        *lo = in->grid.lbound[a];
    if (a == 2 || in->coords[a] == in->dims[a] - 1)
        *hi = in->grid.ubound[a];
}

/* Whether line rank r (coordinate r along the cut axis a) solves unknowns of the box lo..hi on a: the
 * same range as solvable() on that rank. */
static int line_rank_holds(const tridi_decomp d, int a, int r, int64_t lo, int64_t hi)
{
    const tridi_decomp_config *c = &d->cfg;
    int64_t blo, bhi;
    tridi_block_range(c->lo[a], c->hi[a], d->info.dims[a], r, &blo, &bhi);
    if (r == 0)
        blo = c->lo[a] - c->halo[a];
    if (r == d->info.dims[a] - 1)
        bhi = c->hi[a] + c->halo[a];
    return (lo > blo ? lo : blo) <= (hi < bhi ? hi : bhi);
}

/* Checks a solve's arguments on every rank. What each rank can check alone (context, NULL arguments,
 * axis) and whether all ranks passed the same decomposition, axis and box travel in one all-reduce (max
 * of the failure flag, of the values and of their negatives: the range of each value), so a solve that
 * is called right pays one collective here (and the agreement on the local validation); a failure
 * anywhere then takes the full agreement. Collective; the outcome is the same on every rank. */
static tridi_status prepare(const char *f, tridi_context ctx, int device, tridi_decomp d, tridi_axis axis,
                            const int64_t lo[3], const int64_t hi[3], const tridi_arrays *arrays, tridi_status busy,
                            tridi_dplan *dp)
{
    memset(dp, 0, sizeof *dp);
    dp->axis = axis;
    const tridi_decomp_config *c = &d->cfg;
    MPI_Comm comm = d->comm;
    tridi_status s = tridi_check_context(f, ctx);
    if (!s)
        s = busy; /* the context was in use by another call (solve_entry) */
    if (!s && device && ctx->backend != TRIDI_BACKEND_CUDA)
        s = tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: device arrays need a context on the CUDA backend (this one: %s)",
                       f, tridi_backend_name(ctx->backend));
    if (!s && (!lo || !hi || !arrays))
        s = tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument '%s' is NULL", f, !lo ? "lo" : !hi ? "hi" : "arrays");
    else if (!s && ((int)axis < 0 || (int)axis >= c->ndim))
        s = tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: axis = %d, must be 0..%d for a %dD grid", f, (int)axis,
                       c->ndim - 1, c->ndim);
    /* The corners go through the all-reduce below negated (-lo, -hi): one of INT64_MIN would overflow
     * there, so the index range of every other entry point is checked first. */
    for (int a = 0; !s && a < c->ndim; ++a)
        if (lo[a] < -TRIDI_INDEX_LIMIT || lo[a] > TRIDI_INDEX_LIMIT || hi[a] < -TRIDI_INDEX_LIMIT ||
            hi[a] > TRIDI_INDEX_LIMIT)
            s = tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                           "%s: the box lo[%d] = %lld, hi[%d] = %lld is outside the index range -2^62..2^62", f, a,
                           (long long)lo[a], a, (long long)hi[a]);
    /* Over the communicator of the decomposition's group, which every decomposition of these ranks
     * shares: ranks that passed different decompositions meet here and find it from the numbers. */
    const MPI_Comm group = tridi_mpi_group_comm(d->group);
    int64_t v[17] = {s != TRIDI_SUCCESS}, mine[7] = {0};
    v[15] = d->id;
    v[16] = -d->id;
    if (!s) {
        const int64_t given[7] = {axis, lo[0], lo[1], c->ndim == 3 ? lo[2] : 0, hi[0], hi[1], c->ndim == 3 ? hi[2] : 0};
        memcpy(mine, given, sizeof mine);
        for (int i = 0; i < 7; ++i) {
            v[1 + i] = mine[i];
            v[8 + i] = -mine[i];
        }
    }
    int e = MPI_Allreduce(MPI_IN_PLACE, v, 17, MPI_INT64_T, MPI_MAX, group);
    if (e != MPI_SUCCESS)
        return tridi_fail(TRIDI_ERROR_MPI, "%s: MPI_Allreduce failed while the ranks checked their arguments", f);
    if (-v[16] != v[15])
        return tridi_mpi_mismatch(f, group, "the decomposition (the number of its creation among this group's)",
                                  d->id);
    if (v[0])
        return tridi_mpi_agree(comm, s);
    static const char *name[7] = {"axis", "lo[0]", "lo[1]", "lo[2]", "hi[0]", "hi[1]", "hi[2]"};
    for (int i = 0; i < 7; ++i)
        if (-v[8 + i] != v[1 + i])
            return tridi_mpi_mismatch(f, comm, name[i], mine[i]);
    int empty = 0;
    for (int a = 0; a < c->ndim; ++a) {
        if (hi[a] < lo[a]) {
            empty = 1;
            continue;
        }
        int64_t glo = c->lo[a] - c->halo[a], ghi = c->hi[a] + c->halo[a];
        if (lo[a] < glo || hi[a] > ghi)
            return tridi_fail(TRIDI_ERROR_BOUNDS,
                              "%s: box %lld..%lld along axis %d leaves the global grid %lld..%lld (halos included)", f,
                              (long long)lo[a], (long long)hi[a], a, (long long)glo, (long long)ghi);
    }
    if (empty)
        return TRIDI_SUCCESS;
    dp->has_lines = 1;
    for (int a = 0; a < 3; ++a) {
        if (a >= c->ndim) {
            dp->llo[a] = dp->lhi[a] = 1;
            continue;
        }
        int64_t slo, shi;
        solvable(d, a, &slo, &shi);
        dp->llo[a] = lo[a] > slo ? lo[a] : slo;
        dp->lhi[a] = hi[a] < shi ? hi[a] : shi;
        if (dp->lhi[a] < dp->llo[a] && a != (int)axis)
            dp->has_lines = 0;
    }
    dp->ndim = c->ndim;
    for (int a = 0; a < 3; ++a) {
        dp->glo[a] = a < c->ndim ? lo[a] : 1;
        dp->ghi[a] = a < c->ndim ? hi[a] : 1;
    }
    dp->cut = axis < 2 && d->info.dims[axis] > 1;
    dp->n = dp->lhi[axis] >= dp->llo[axis] ? dp->lhi[axis] - dp->llo[axis] + 1 : 0;
    dp->first = dp->llo[axis] == lo[axis];
    dp->last = dp->lhi[axis] == hi[axis];
    dp->prev = dp->next = -1;
    if (dp->cut) {
        dp->line_comm = d->line_comm[axis];
        MPI_Comm_size(dp->line_comm, &dp->line_size);
        MPI_Comm_rank(dp->line_comm, &dp->line_rank);
        /* The line ranks are ordered by coordinate (MPI_Cart_sub); the ones holding unknowns of the box
         * are contiguous. */
        for (int r = dp->line_rank - 1; r >= 0 && dp->prev < 0; --r)
            if (line_rank_holds(d, axis, r, lo[axis], hi[axis]))
                dp->prev = r;
        for (int r = dp->line_rank + 1; r < dp->line_size && dp->next < 0; ++r)
            if (line_rank_holds(d, axis, r, lo[axis], hi[axis]))
                dp->next = r;
    }
    s = TRIDI_SUCCESS;
    if (dp->has_lines && dp->n > 0) {
        int e;
        s = tridi_validate(f, &d->info.grid, axis, dp->llo, dp->lhi, arrays, 1, &dp->p, &e);
        dp->nlines = dp->p.nlines;
    } else if (dp->has_lines) {
        /* No unknowns here, but the line count must match the other blocks of the line. */
        int64_t cnt = 1;
        for (int a = 0; a < c->ndim; ++a)
            if (a != (int)axis)
                cnt *= dp->lhi[a] - dp->llo[a] + 1;
        dp->nlines = cnt;
    }
    return tridi_mpi_agree(comm, s);
}

tridi_status tridi_dsolve_verdict(void *ranks, tridi_status own)
{
    const tridi_dsolve_ranks *r = ranks;
    return tridi_dsolve_agree(r->comm, r->dp, own);
}

/* An uncut axis: this rank's part solved under the one guard (backend.h, docs/decisions/053) with the
 * ranks' agreement as its verdict: every rank commits, or every rank rolls back if any rank failed, so x
 * stays unchanged everywhere. On one rank the solve's own status is the verdict (and config.pivoting
 * applies, as in tridi_solve). */
static tridi_status local_solve(const char *f, tridi_context ctx, tridi_decomp d, const tridi_dplan *dp,
                                const tridi_arrays *arrays)
{
    const int work_here = dp->has_lines && dp->n > 0;
    tridi_problem p;
    int empty = 1;
    tridi_status s = TRIDI_SUCCESS;
    if (work_here)
        s = tridi_validate(f, &d->info.grid, dp->p.axis, dp->llo, dp->lhi, arrays, 1, &p, &empty);
    const int solving = work_here && !s && !empty;
    const tridi_backend_ops *ops = solving ? tridi_host_ops(ctx, &p, NULL) : NULL;
    if (d->info.nranks == 1) {
        if (!solving)
            return s;
        p.pivoting = (tridi_pivoting)ctx->config.pivoting;
        return tridi_guard_solve(ctx, ops, &p, TRIDI_MEMORY_HOST, NULL, NULL, NULL);
    }
    tridi_dsolve_ranks ranks = {d->comm, dp};
    tridi_guard_verdict v = {tridi_dsolve_verdict, &ranks, s, TRIDI_SUCCESS};
    s = tridi_guard_solve(ctx, ops, solving ? &p : NULL, TRIDI_MEMORY_HOST, NULL, NULL, &v);
    return v.call ? s : tridi_mpi_agree(d->comm, s); /* a commit's failure, agreed */
}

/* The solves take the context as tridi_solve does (decision 045): a context in use by another call is
 * this rank's failure, agreed with the others in prepare (no rank is left in a collective). */
static tridi_status mpi_solve(const char *f, tridi_context ctx, tridi_decomp d, tridi_axis axis, const int64_t lo[3],
                              const int64_t hi[3], const tridi_arrays *arrays, tridi_status busy);
static tridi_status mpi_solve_device(const char *f, tridi_context ctx, tridi_decomp d, tridi_axis axis,
                                     const int64_t lo[3], const int64_t hi[3], const tridi_arrays *device_arrays,
                                     void *stream, tridi_status busy);

tridi_status tridi_mpi_solve(tridi_context ctx, tridi_decomp d, tridi_axis axis, const int64_t lo[3],
                             const int64_t hi[3], const tridi_arrays *arrays)
{
    static const char *f = "tridi_mpi_solve";
    tridi_status s = tridi_check_decomp(f, d);
    if (s)
        return s;
    tridi_status busy = TRIDI_SUCCESS;
    const int entered = tridi_handle_is_live(TRIDI_HANDLE_CONTEXT, ctx) && !(busy = tridi_context_enter(f, ctx, NULL));
    s = mpi_solve(f, ctx, d, axis, lo, hi, arrays, busy);
    if (entered)
        tridi_context_leave(ctx);
    return s;
}

tridi_status tridi_mpi_solve_device(tridi_context ctx, tridi_decomp d, tridi_axis axis, const int64_t lo[3],
                                    const int64_t hi[3], const tridi_arrays *device_arrays, void *stream)
{
    static const char *f = "tridi_mpi_solve_device";
    tridi_status s = tridi_check_decomp(f, d);
    if (s)
        return s;
    tridi_status busy = TRIDI_SUCCESS;
    const int entered = tridi_handle_is_live(TRIDI_HANDLE_CONTEXT, ctx) && !(busy = tridi_context_enter(f, ctx, NULL));
    s = mpi_solve_device(f, ctx, d, axis, lo, hi, device_arrays, stream, busy);
    if (entered)
        tridi_context_leave(ctx);
    return s;
}

static tridi_status mpi_solve(const char *f, tridi_context ctx, tridi_decomp d, tridi_axis axis, const int64_t lo[3],
                              const int64_t hi[3], const tridi_arrays *arrays, tridi_status busy)
{
    tridi_dplan dp;
    tridi_status s = prepare(f, ctx, 0, d, axis, lo, hi, arrays, busy, &dp);
    if (s)
        return s;
    /* Ranks without lines of the box still take part in every agreement over the communicator. */
    return dp.cut ? tridi_dsolve_cut_cpu(f, d, &dp) : local_solve(f, ctx, d, &dp, arrays);
}

#ifdef TRIDI_HAVE_CUDA
/* The verdict of a device solve: its failure word, read once the stream is done, then the ranks'. */
typedef struct device_verdict {
    tridi_dsolve_ranks ranks;
    tridi_context ctx;
    void *stream;
    const char *f;
    int solving;
} device_verdict;

static tridi_status read_device_verdict(const device_verdict *dv)
{
    tridi_status s = tridi_mpi_cuda_wait(dv->stream, dv->f, "waiting for the stream");
    return s ? s : tridi_synchronize(dv->ctx);
}

static tridi_status device_decide(void *arg, tridi_status own)
{
    const device_verdict *dv = arg;
    if (dv->solving && !own)
        own = read_device_verdict(dv);
    return tridi_dsolve_verdict((void *)&dv->ranks, own);
}
#endif

static tridi_status mpi_solve_device(const char *f, tridi_context ctx, tridi_decomp d, tridi_axis axis,
                                     const int64_t lo[3], const int64_t hi[3], const tridi_arrays *device_arrays,
                                     void *stream, tridi_status busy)
{
    tridi_dplan dp;
    tridi_status s = prepare(f, ctx, 1, d, axis, lo, hi, device_arrays, busy, &dp);
    if (s)
        return s;
#ifdef TRIDI_HAVE_CUDA
    MPI_Comm comm = d->comm;
    const int work_here = dp.has_lines && dp.n > 0;
    if (!dp.cut) {
        /* The one guard (backend.h, docs/decisions/053) with the ranks' agreement as its verdict: the
         * answers wait in the context's box until every rank has succeeded, then the commit copies them
         * into x (one pass over the box). On one rank the solve's own verdict, as tridi_solve_device's. */
        const int solo = d->info.nranks == 1;
        tridi_problem p;
        int empty = 1;
        if (work_here)
            s = tridi_validate(f, &d->info.grid, axis, dp.llo, dp.lhi, device_arrays, 1, &p, &empty);
        const int solving = work_here && !s && !empty;
        device_verdict dv = {{comm, &dp}, ctx, stream, f, solving};
        tridi_guard_verdict v = {solo ? NULL : device_decide, &dv, s, TRIDI_SUCCESS};
        if (solving || !solo)
            s = tridi_guard_solve(ctx, tridi_backend_of(ctx), solving ? &p : NULL, TRIDI_MEMORY_DEVICE, NULL, stream,
                                  solo ? NULL : &v);
        if (solo)
            return solving && !s ? read_device_verdict(&dv) : s;
        if (solving && !v.call) { /* the commit's copy, done */
            const tridi_status w = tridi_mpi_cuda_wait(stream, f, "copying the answer");
            if (!s)
                s = w;
            if (!s) /* with no stream given, the commit ran on the context's own */
                s = tridi_synchronize(ctx);
        }
        return v.call ? s : tridi_mpi_agree(comm, s);
    }
    return tridi_dsolve_cut_device(f, ctx, d, &dp, stream);
#else
    (void)stream;
    return tridi_fail(TRIDI_ERROR_INTERNAL, "%s: CUDA context without CUDA support", f);
#endif
}
