/* OpenMP CPU backend: a call run by the context's worker pool over the blocks of cpu_plan.c, each block
 * solved by cpu_kernels.c's vector path and, if flagged, line by line on the careful path, under the one
 * guard's CPU strategies (src/backend.h, docs/decisions/053): the thread's block save (LINES, one phase:
 * tridi_cpu_solve) or the undo log (CALL: tridi_cpu_solve_keep, then tridi_cpu_commit or _rollback). */
#include "cpu_internal.h"
#include "cpu_pool.h"

#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#else /* a build without OpenMP (e.g. the fuzzing harness) runs the same code on one thread */
static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_get_thread_num(void) { return 0; }
#endif
#include <stdlib.h>
#include <string.h>

/* Steps of one call that are no frames of their own: a model's call reaches the kernel through
 * tridi_cpu_solve_keep (or tridi_cpu_solve) and solve_shares only (docs/architecture.md lists the frames;
 * docs/decisions/051). */
#if defined(__GNUC__)
#define TRIDI_CPU_FRAME static inline __attribute__((always_inline))
#else
#define TRIDI_CPU_FRAME static inline
#endif

/* How a call fails: as p->on_error says (docs/decisions/007, 019):
 * - ON_ERROR_CALL, no partial answer, in the two phases of backend.h (docs/decisions/020): the solve
 *   (tridi_cpu_solve_keep): once a block's forward sweep has succeeded, the old x of its cells goes to an
 *   undo log (non-temporal stores), and only then does the back substitution write x, directly; the log is
 *   kept. Then the verdict (the call's own status, or every rank's in the MPI layer) picks the commit
 *   (tridi_cpu_commit: the log is dropped) or the rollback (tridi_cpu_rollback: every block already
 *   written is restored from the log). On success this costs one streamed write of the
 *   answer box (4 B/cell in float): reading the old x is no extra traffic (writing x fetches those lines
 *   anyway), whereas solving into a buffer and copying the box out once every line is known good costs a
 *   write and a read of the box more.
 * - ON_ERROR_LINES: no undo log. A block's answers are written once its forward sweep has succeeded; the
 *   rows it overwrites are kept in the thread's own block-sized save (in cache, reused by the next block),
 *   only so that a line whose answer then overflows its type can be put back. The careful path writes a
 *   line only once all its answers are known finite. Failing lines are left untouched, the others are
 *   answered, and the status names the lowest failing line and how many failed. */

/* Re-solves block b line by line on the careful path (solve_line), after the fast path flagged it. Under
 * ON_ERROR_CALL the block's old x is first logged (unless already); its first failing line ends the
 * block. Under ON_ERROR_LINES every line is tried: those that fail are left untouched. Returns the
 * number of failing lines, *fail naming the lowest. */
static int64_t careful_block(const tridi_problem *p, const cpu_plan *c, int64_t b, double *W, double *G,
                             block_save sv, unsigned char *written, block_failure *fail)
{
    if (!sv.lines && !written[b]) {
        tridi_cpu_block_log(p, c, b, sv.at, 1, 1);
        written[b] = 1;
    }
    const int64_t line0 = c->blocks[b].line0, Lb = c->blocks[b].Lb;
    int64_t nfailed = 0;
    for (int64_t l = 0; l < Lb; ++l) {
        block_failure f = {l, {0, TRIDI_FAIL_NONE}};
        if (tridi_cpu_solve_line(p, tridi_line_offset(p, line0 + l), W, G, &f.f)) {
            if (!nfailed++)
                *fail = f;
            if (!sv.lines)
                break;
        }
    }
    return nfailed;
}

/* A block's first rows of lower, diag, upper and rhs (element offset off into each array). */
static void block_inputs(const tridi_arrays *a, int64_t off, const void *in[4])
{
    in[0] = (const char *)a->lower + (size_t)off * tridi_dtype_size(a->lower_type);
    in[1] = (const char *)a->diag + (size_t)off * tridi_dtype_size(a->diag_type);
    in[2] = (const char *)a->upper + (size_t)off * tridi_dtype_size(a->upper_type);
    in[3] = (const char *)a->rhs + (size_t)off * tridi_dtype_size(a->rhs_type);
}

/* Solves block b: the fast path (vector forward sweep; if no value went non-finite, the old x saved and
 * the back substitution into x); a block it flags goes to the careful path, after the fast path's
 * answers, if any, are put back. Returns the number of failing lines (0: all answered), *fail naming the
 * lowest (line within the block). y/z blocks under ON_ERROR_LINES (but FAST's) take pipelined_step. */
TRIDI_CPU_FRAME int64_t solve_block(const tridi_problem *p, const cpu_plan *c, int64_t b, char *ws,
                                    block_save sv, unsigned char *written, block_failure *fail)
{
    const tridi_arrays *a = &p->arrays;
    const int64_t n = p->n;
    const size_t xes = tridi_dtype_size(a->x_type);
    char *x = a->x;
    double *W = (double *)ws, *G = W + c->npad * c->L;
    const int64_t line0 = c->blocks[b].line0, Lb = c->blocks[b].Lb;
    const int stream = !sv.lines;
    /* FAST arithmetic: y/z blocks of all-float arrays (x sweeps keep MOHID's, which meets its bound too) */
    const int fast = p->arith == TRIDI_ARITH_FAST && p->combo == TRIDI_COMBO_F32 && p->axis != TRIDI_AXIS_X;
    const int mode = tridi_cpu_kernel_arith(p);
    int bad, bounded = 0;
#ifdef TRIDI_HAVE_AVX512_X
    if (c->x512) {
        xrows xr = {{a->lower, a->diag, a->upper, a->rhs}, {0}, NULL};
        int64_t next[16];
        for (int l = 0; l < 16; ++l)
            xr.row[l] = tridi_line_offset(p, line0 + (l < Lb ? l : Lb - 1));
        if (b + 1 < c->nblocks) {
            const int64_t nl0 = c->blocks[b + 1].line0, nLb = c->blocks[b + 1].Lb;
            for (int l = 0; l < 16; ++l)
                next[l] = tridi_line_offset(p, nl0 + (l < nLb ? l : nLb - 1));
            xr.next = next;
        }
        bad = tridi_cpu_xforward16(&xr, p->combo, mode, x, n, W, G, G + c->npad * c->L);
        if (!bad) {
            tridi_cpu_block_log(p, c, b, sv.at, 1, stream);
            written[b] = 1;
            if (!tridi_cpu_xbackward16(&xr, x, xes == 8, Lb, n, W, G))
                return 0;
            tridi_cpu_block_log(p, c, b, sv.at, 0, 0); /* the fast path's answers, put back */
        }
    } else
#endif
    {
        const int64_t off = tridi_line_offset(p, line0);
        const int64_t s = p->stride[p->axis], ls = p->stride[p->a1];
        void *out;
        int64_t xs;
        if (p->axis == TRIDI_AXIS_X) {
            /* The next block's rows, into L2 while this one is solved: sixteen row streams per array are
             * more than the hardware prefetchers follow. */
            /* Blocks follow each other in line order: the next one starts at line0 + Lb, in this row
             * unless this block ends it. */
            if (b + 1 < c->nblocks && (line0 + Lb) % p->n1) {
                const int64_t noff = off + Lb * ls;
                const void *arr[4] = {a->lower, a->diag, a->upper, a->rhs};
                const tridi_dtype typ[4] = {a->lower_type, a->diag_type, a->upper_type, a->rhs_type};
                for (int q = 0; q < 4; ++q) {
                    const size_t es = tridi_dtype_size(typ[q]);
                    prefetch_run((const char *)arr[q] + (size_t)noff * es, (size_t)((Lb - 1) * ls + n) * es);
                }
            }
            double *tD = G + c->npad * c->L, *tE = tD + n * c->L, *tF = tE + n * c->L, *tR = tF + n * c->L;
            tridi_cpu_transpose_in(a->lower, a->lower_type, off, ls, n, Lb, tD);
            tridi_cpu_transpose_in(a->diag, a->diag_type, off, ls, n, Lb, tE);
            tridi_cpu_transpose_in(a->upper, a->upper_type, off, ls, n, Lb, tF);
            tridi_cpu_transpose_in(a->rhs, a->rhs_type, off, ls, n, Lb, tR);
            bad = tridi_cpu_forward_block(p, mode, 1, tD, tE, tF, tR, n, Lb, Lb, 1, 0, 0.0, W, G, &bounded);
            out = tR + n * c->L; /* answers [m][l], scattered into x rows below */
            xs = Lb;
        } else {
            if (fast)
                bad = tridi_cpu_forward_fast((const float *)a->lower + off, (const float *)a->diag + off,
                                   (const float *)a->upper + off, (const float *)a->rhs + off, n, Lb, s,
                                   (float *)W, (float *)G);
            else {
                const void *in[4];
                block_inputs(a, off, in);
                bad = tridi_cpu_forward_block(p, mode, 0, in[0], in[1], in[2], in[3], n, Lb, s, ls, 1, 0.0, W, G,
                                              &bounded);
            }
            out = x + (size_t)off * xes; /* answers straight into x rows */
            xs = s;
        }
        if (!bad) {
            /* x sweeps answer into a buffer, scattered into x only if every answer is finite: under CALL
             * their log goes first, under LINES x is untouched until then. y/z blocks answer straight into
             * x and save each row as they overwrite it (the block counts as written from here: a failure in
             * the back substitution still leaves every row saved, since the sweep runs to the end). */
            const int x_axis = p->axis == TRIDI_AXIS_X;
            if (x_axis && !sv.lines)
                tridi_cpu_block_log(p, c, b, sv.at, 1, 1);
            written[b] = !sv.lines || !x_axis;
            const int64_t lp = c->log_pitch * (int64_t)xes;
            char *lg = x_axis ? NULL : sv.at;
            if (fast)
                bad = tridi_cpu_backward_fast((const float *)W, (const float *)G, out, n, Lb, xs, lg, lp, stream);
            else
                bad = xes == 8 ? tridi_cpu_backward_f64(W, G, out, n, Lb, xs, lg, lp, stream, !x_axis)
                               : tridi_cpu_backward_f32(W, G, out, n, Lb, xs, lg, lp, stream, !x_axis);
            if (!bad) {
                if (x_axis)
                    for (int64_t l = 0; l < Lb; ++l) {
                        char *row = x + (size_t)(off + l * ls) * xes;
                        for (int64_t m = 0; m < n; ++m)
                            memcpy(row + (size_t)m * xes, (const char *)out + (size_t)(m * Lb + l) * xes, xes);
                    }
                return 0;
            }
            if (!x_axis)
                tridi_cpu_block_log(p, c, b, sv.at, 0, 0); /* the fast path's answers, put back */
        }
    }
    return careful_block(p, c, b, W, G, sv, written, fail);
}

/* Puts back the old x of every block that the call of layout y wrote. */
static void restore_written(const tridi_problem *p, cpu_layout *y)
{
    const cpu_plan *c = &y->c;
    const size_t es = tridi_dtype_size(p->arrays.x_type);
#pragma omp parallel for schedule(static) num_threads(c->nthreads)
    for (int64_t b = 0; b < c->nblocks; ++b)
        if (y->written[b])
            tridi_cpu_block_log(p, c, b, tridi_cpu_block_log_at(c, b, y->log, es), 0, 0);
}

/* What the threads of one call share. */
typedef struct solve_job {
    const tridi_problem *p;
    const cpu_plan *c;
    char *workspaces, *log;
    unsigned char *written;
    size_t ws_bytes, own_save, xes;
    int lines, nthreads;
    int64_t best_line; /* lowest failing line so far */
    int64_t nfailed;   /* failing lines (LINES: all of them; CALL: those found before stopping) */
    block_failure best;
    int lock;          /* guards best_line's update with best */
} solve_job;

/* Records block failures (nf failing lines from line0 on, fail naming the lowest) in the call's tally. */
static void note_failure(solve_job *j, int64_t line0, int64_t nf, const block_failure *fail)
{
    if (!nf)
        return;
    __atomic_fetch_add(&j->nfailed, nf, __ATOMIC_RELAXED);
    while (__atomic_exchange_n(&j->lock, 1, __ATOMIC_ACQUIRE))
        ;
    if (line0 + fail->line_in_block < j->best_line) {
        __atomic_store_n(&j->best_line, line0 + fail->line_in_block, __ATOMIC_RELAXED);
        j->best = *fail;
    }
    __atomic_store_n(&j->lock, 0, __ATOMIC_RELEASE);
}

/* A y/z block under ON_ERROR_LINES whose forward sweep succeeded, its back substitution pending: it runs
 * interleaved with the next block's forward sweep (decision 066), into the other W and G. */
typedef struct pending_block {
    int64_t b; /* -1: none */
    double *W, *G;
    int bounded;
} pending_block;

/* The pending block's back substitution done (back_bad its verdict): as solve_block goes on after its own. */
static void finish_pending(solve_job *j, pending_block *pb, int back_bad, block_save sv)
{
    const int64_t b = pb->b, line0 = j->c->blocks[b].line0;
    pb->b = -1;
    if (!back_bad)
        return;
    block_failure fail = {-1, {0, TRIDI_FAIL_NONE}};
    if (pb->bounded) { /* cannot happen (decision 059): nothing was saved, the call reports a bug */
        fail = (block_failure){0, {0, TRIDI_FAIL_UNLOCATED}};
        note_failure(j, line0, j->c->blocks[b].Lb, &fail);
        return;
    }
    tridi_cpu_block_log(j->p, j->c, b, sv.at, 0, 0); /* the fast path's answers, put back */
    note_failure(j, line0, careful_block(j->p, j->c, b, pb->W, pb->G, sv, j->written, &fail), &fail);
}

/* Where the pending block's back substitution writes: its first x row, and its save (none if bounded). */
static char *pending_x(const solve_job *j, const pending_block *pb, block_save sv, char **log)
{
    *log = pb->bounded ? NULL : sv.at;
    return (char *)j->p->arrays.x + (size_t)tridi_line_offset(j->p, j->c->blocks[pb->b].line0) * j->xes;
}

/* Block b of a y/z call under ON_ERROR_LINES (not FAST's float kernels): its forward sweep, with the
 * pending block's back substitution interleaved if there is one; then b is pending, or (flagged) solved on
 * the careful path. BOUNDED_WRITE (decision 059): no save where W and G prove every answer finite. */
TRIDI_CPU_FRAME void pipelined_step(solve_job *j, int64_t b, char *ws, block_save sv, double glim, pending_block *pb)
{
    const tridi_problem *p = j->p;
    const cpu_plan *c = j->c;
    const int64_t n = p->n, s = p->stride[p->axis], ls = p->stride[p->a1];
    const int mode = tridi_cpu_kernel_arith(p);
    double *W = (double *)(void *)ws;
    if (pb->b >= 0 && pb->W == W)
        W += 2 * c->npad * c->L;
    double *G = W + c->npad * c->L;
    const int64_t line0 = c->blocks[b].line0, Lb = c->blocks[b].Lb;
    const void *in[4];
    block_inputs(&p->arrays, tridi_line_offset(p, line0), in);
    int bounded = 0, bad;
    if (pb->b >= 0) {
        char *log, *px = pending_x(j, pb, sv, &log);
        int back_bad;
        bad = tridi_cpu_pipelined_block(p, mode, in[0], in[1], in[2], in[3], n, Lb, s, ls, glim, W, G, &bounded,
                                        pb->W, pb->G, px, c->blocks[pb->b].Lb, s, log,
                                        c->log_pitch * (int64_t)j->xes, &back_bad);
        finish_pending(j, pb, back_bad, sv);
    } else
        bad = tridi_cpu_forward_block(p, mode, 0, in[0], in[1], in[2], in[3], n, Lb, s, ls, 1, glim, W, G, &bounded);
    if (bad) {
        block_failure fail = {-1, {0, TRIDI_FAIL_NONE}};
        note_failure(j, line0, careful_block(p, c, b, W, G, sv, j->written, &fail), &fail);
        return;
    }
    *pb = (pending_block){b, W, G, bounded};
    j->written[b] = !bounded;
}

/* The last pending block's back substitution, alone. */
static void pipeline_flush(solve_job *j, block_save sv, pending_block *pb)
{
    if (pb->b < 0)
        return;
    char *log, *px = pending_x(j, pb, sv, &log);
    const int64_t n = j->p->n, s = j->p->stride[j->p->axis], Lb = j->c->blocks[pb->b].Lb;
    const int64_t lp = j->c->log_pitch * (int64_t)j->xes;
    const int bad = j->xes == 8 ? tridi_cpu_backward_f64(pb->W, pb->G, (double *)(void *)px, n, Lb, s, log, lp, 0, 1)
                                : tridi_cpu_backward_f32(pb->W, pb->G, (float *)(void *)px, n, Lb, s, log, lp, 0, 1);
    finish_pending(j, pb, bad, sv);
}

/* Thread id's part of a call: the blocks of share id, then those left in the other shares (it also covers
 * the shares of threads that never join). A thread that wakes late finds its share taken by those already
 * running, instead of the whole call waiting for its share to start. */
static void solve_shares(void *arg, int id)
{
    solve_job *j = arg;
    const cpu_plan *c = j->c;
    char *ws = j->workspaces + (size_t)id * j->ws_bytes;
    const tridi_problem *p = j->p;
    const int pipelined = j->lines && p->axis != TRIDI_AXIS_X &&
                          !(p->arith == TRIDI_ARITH_FAST && p->combo == TRIDI_COMBO_F32);
    /* BOUNDED_WRITE's limit (pipelined blocks only), once per thread and call: a division, not one a block */
    const double glim = pipelined ? tridi_cpu_bound_glim(p->n, j->xes == 4) : 0.0;
    pending_block pb = {-1, NULL, NULL, 0};
    for (int k = 0; k < j->nthreads; ++k) {
        const int t = (id + k) % j->nthreads;
        for (;;) {
            const int64_t b =
                c->first[t] + __atomic_fetch_add(&c->taken[(size_t)t * TRIDI_CPU_TAKEN_PAD], 1, __ATOMIC_RELAXED);
            if (b >= c->first[t + 1])
                break;
            const int64_t line0 = c->blocks[b].line0;
            if (!j->lines && __atomic_load_n(&j->best_line, __ATOMIC_RELAXED) < line0)
                continue; /* the call fails anyway; only lower lines could change the report */
            block_save sv = {j->lines ? ws + j->own_save : tridi_cpu_block_log_at(c, b, j->log, j->xes), j->lines};
            if (pipelined) {
                pipelined_step(j, b, ws, sv, glim, &pb);
                continue;
            }
            block_failure fail = {-1, {0, TRIDI_FAIL_NONE}};
            note_failure(j, line0, solve_block(j->p, c, b, ws, sv, j->written, &fail), &fail);
        }
    }
    if (pipelined)
        pipeline_flush(j, (block_save){ws + j->own_save, 1}, &pb);
    stream_fence(); /* the log's streamed stores, visible before any thread restores from it */
}

/* Runs a call's shares on nthreads threads: the context's pool (docs/decisions/028), made the first time a
 * call wants more threads than it has; an OpenMP team per call with TRIDI_CPU_POOL=0 or where no pool can
 * be started. Inside an active OpenMP region that allows no more levels the caller solves alone, as a
 * nested parallel region would. */
TRIDI_CPU_FRAME void run_job(tridi_context ctx, solve_job *job, int nthreads)
{
#ifdef _OPENMP
    if (nthreads > 1 && omp_get_active_level() >= omp_get_max_active_levels())
        nthreads = 1;
#endif
    if (nthreads <= 1) {
        solve_shares(job, 0);
        return;
    }
    if (!ctx->tuning.cpu_openmp_team && tridi_cpu_pool_workers(ctx->cpu->pool) < nthreads - 1) {
        tridi_cpu_pool_destroy(ctx->cpu->pool);
        const int64_t spin_us = ctx->tuning.cpu_spin_set ? ctx->tuning.cpu_spin_us : TRIDI_CPU_SPIN_US_DEFAULT;
        ctx->cpu->pool = tridi_cpu_pool_create(nthreads - 1, spin_us * 1000);
    }
    if (!ctx->tuning.cpu_openmp_team && ctx->cpu->pool) {
        tridi_cpu_pool_open(ctx->cpu->pool, solve_shares, job, nthreads);
        solve_shares(job, 0);
        tridi_cpu_pool_close(ctx->cpu->pool);
        return;
    }
#pragma omp parallel num_threads(nthreads)
    solve_shares(job, omp_get_thread_num());
}

/* keep: the first phase of ON_ERROR_CALL (whatever p says): the undo log is kept, whatever the status,
 * for tridi_cpu_commit or tridi_cpu_rollback. Otherwise ON_ERROR_LINES, in one phase. */
TRIDI_CPU_FRAME tridi_status cpu_solve(tridi_context ctx, const tridi_problem *p, int keep)
{
    const int requested = tridi_cpu_threads(ctx);
    const int nthreads = tridi_cpu_threads_that_pay(&ctx->tuning, p, requested);
    const int lines = !keep;
    ctx->cpu->kept = 0; /* this call reuses the scratch that a kept solve's log lives in */
    cpu_layout y = tridi_cpu_layout_of(&ctx->tuning, p, nthreads, lines);
    if (y.need > ctx->cpu->scratch_bytes) {
        void *mem = aligned_alloc(64, y.need);
        if (!mem)
            return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY,
                              "%s: could not allocate %zu bytes for the CPU workspace%s", p->func, y.need,
                              lines ? "" : " and undo log");
        free(ctx->cpu->scratch);
        ctx->cpu->scratch = mem;
        ctx->cpu->scratch_bytes = y.need;
    }
    tridi_cpu_place(&y, ctx->cpu->scratch);
    cpu_plan c = y.c;
    const size_t ws_bytes = y.ws_bytes, xes = tridi_dtype_size(p->arrays.x_type);
    const size_t own_save = ws_bytes - tridi_cpu_block_save_bytes(p, &c); /* offset of a thread's save (LINES) */
    char *workspaces = ctx->cpu->scratch, *log = y.log;
    unsigned char *written = y.written;
    int64_t k = 0;
    for (int t = 0; t < nthreads; ++t) {
        c.first[t] = k;
        k += tridi_cpu_thread_blocks(p, &c, t, c.blocks + k);
    }
    c.first[nthreads] = k;
    memset(written, 0, (size_t)c.nblocks);
    memset(c.taken, 0, (size_t)nthreads * TRIDI_CPU_TAKEN_PAD * sizeof(int64_t));

    solve_job job = {p, &c, workspaces, log, written, ws_bytes, own_save, xes, lines, nthreads,
                     INT64_MAX, 0, {-1, {0, TRIDI_FAIL_NONE}}, 0};
    run_job(ctx, &job, nthreads);
    const int64_t best_line = job.best_line, nfailed = job.nfailed;
    const block_failure best = job.best;
    if (keep) { /* every block written is logged (and flagged): the log can undo the whole call */
        ctx->cpu->kept = 1;
        ctx->cpu->kept_threads = nthreads;
        ctx->cpu->kept_p = *p;
    }
    if (best_line == INT64_MAX)
        return TRIDI_SUCCESS;
    if (lines)
        return tridi_thomas_report_lines(p->func, p, best_line, best.f, nfailed);
    return tridi_thomas_report(p->func, p, best_line, best.f);
}

tridi_status tridi_cpu_solve(tridi_context ctx, const tridi_problem *p)
{
    if (p->on_error != TRIDI_ON_ERROR_LINES) /* CALL is the guard's undo log: tridi_cpu_solve_keep first */
        return tridi_fail(TRIDI_ERROR_INTERNAL, "%s: an ON_ERROR_CALL solve reached the CPU's one-phase solve "
                          "(the guard takes it: src/backend.h)", p->func);
    return cpu_solve(ctx, p, 0);
}

tridi_status tridi_cpu_solve_keep(tridi_context ctx, const tridi_problem *p) { return cpu_solve(ctx, p, 1); }

void tridi_cpu_commit(tridi_context ctx) { ctx->cpu->kept = 0; }

void tridi_cpu_rollback(tridi_context ctx)
{
    if (!ctx->cpu->kept) /* the solve failed before it wrote x */
        return;
    ctx->cpu->kept = 0;
    cpu_layout y = tridi_cpu_layout_of(&ctx->tuning, &ctx->cpu->kept_p, ctx->cpu->kept_threads, 0);
    tridi_cpu_place(&y, ctx->cpu->scratch);
    restore_written(&ctx->cpu->kept_p, &y);
}

