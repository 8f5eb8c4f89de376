/* The CPU backend's block plan (cpu_internal.h): how a call is cut into blocks and dealt to threads, the
 * threads a call pays for, the undo log's places, and the one scratch allocation holding them. */
#include "cpu_internal.h"

#include <float.h>
#include <stdint.h>
#include <string.h>

/* How a call is shared out. Work unit: a block of neighbouring lines, the recurrence vectorised across
 * them.
 * - y and z sweeps: up to L lines at consecutive i, so each unknown's values of the block form one
 *   contiguous row of every array; L is as wide as TRIDI_CPU_WG_BUDGET lets W and G be. The rows a few
 *   unknowns ahead are prefetched: consecutive rows sit a grid row or plane apart, which the hardware
 *   prefetcher does not follow.
 * - x sweeps: each line is contiguous, neighbouring lines a grid row apart. With AVX-512, 16 consecutive
 *   lines (across planes) form a block; 8 unknowns of its 16 lines are transposed in registers into a
 *   4 KiB L1 tile, the recurrence runs on the tile, and the answers are rounded and transposed back on
 *   their way to x: every array is read (and x written) once, as rows, with software prefetch ahead.
 *   Without AVX-512 each input of a 16-line block is transposed into a double buffer first.
 * - Threads: as many as the call's size pays for (threads_that_pay), each starting on an equal share of
 *   the call's lines, cut into blocks (make_plan, thread_blocks), then taking the blocks left in the
 *   other shares: a thread that wakes late does not hold the call up by a share of its own. The threads
 *   are the context's worker pool (cpu_pool.c), which join a call only while it has blocks left, so the
 *   call never waits for a thread still waking (docs/decisions/028). */

/* The y/z blocks' W/G budget in bytes: TRIDI_CPU_WG_BUDGET as the context read it (a tuning knob: one
 * benchmark run per value on the target host, no rebuild), else the compiled value above. */
static int64_t wg_budget(const tridi_tuning *tuning)
{
    return tuning->cpu_wg_budget ? tuning->cpu_wg_budget : TRIDI_CPU_WG_BUDGET;
}

cpu_plan tridi_cpu_make_plan(const tridi_tuning *tuning, const tridi_problem *p, int nthreads)
{
    cpu_plan c;
    c.x512 = p->axis == TRIDI_AXIS_X && tridi_cpu_x_avx512_usable(tuning);
    c.row_cut = !c.x512;
    c.nthreads = nthreads;
    if (p->axis == TRIDI_AXIS_X) { /* 16 lines: two AVX-512 vectors per step; other widths measured slower */
        c.L = TRIDI_CPU_BLOCK_X;
    } else { /* long contiguous rows while W and G stay within their budget, cut into even pieces */
        int64_t L = wg_budget(tuning) / (16 * p->n);
        L = L < TRIDI_CPU_BLOCK ? TRIDI_CPU_BLOCK : L > 1024 ? 1024 : L;
        const int64_t pieces = (p->n1 + L - 1) / L;
        c.L = (p->n1 + pieces - 1) / pieces;
    }
    if (c.row_cut && p->n1 < c.L)
        c.L = p->n1;
    c.nblocks = 0;
    c.blocks = NULL;
    c.first = NULL;
    c.taken = NULL;
    const int64_t row_len = p->axis == TRIDI_AXIS_X ? p->n : c.L;
    c.log_rows = p->axis == TRIDI_AXIS_X ? c.L : p->n;
    c.log_pitch = (row_len + 15) / 16 * 16;
    c.npad = (p->n + 7) / 8 * 8;
    return c;
}

/* Thread t's blocks, written to out when it is not NULL; returns their number. Lines of a segment
 * (up to a row end, or the share's end) are cut into even pieces of at most L. */
int64_t tridi_cpu_thread_blocks(const tridi_problem *p, const cpu_plan *c, int t, cpu_block *out)
{
    const int64_t N = p->nlines, T = c->nthreads;
    /* t*N/T without forming t*N, which could overflow for huge N */
    int64_t a = N / T * t + N % T * t / T;
    const int64_t b = N / T * (t + 1) + N % T * (t + 1) / T;
    int64_t k = 0, row_end = c->row_cut ? (a / p->n1 + 1) * p->n1 : b, last_len = 0, pieces = 0, q = 0, r = 0;
    while (a < b) {
        const int64_t e = row_end < b ? row_end : b, len = e - a;
        if (len != last_len) { /* rows of one length cut alike: no divisions per row (decision 066) */
            last_len = len;
            pieces = (len + c->L - 1) / c->L, q = len / pieces, r = len % pieces;
        }
        row_end += c->row_cut ? p->n1 : 0;
        for (int64_t j = 0; j < pieces; ++j) {
            const int64_t w = q + (j < r);
            if (out)
                out[k] = (cpu_block){a, w};
            ++k;
            a += w;
        }
    }
    return k;
}

/* Block b's place in the undo log (x elements of es bytes). */
char *tridi_cpu_block_log_at(const cpu_plan *c, int64_t b, char *log, size_t es)
{
    return log + (size_t)b * (size_t)(c->log_rows * c->log_pitch) * es;
}

/* Saves the block's cells of x to lg (save = 1), with non-temporal stores when `stream`, or puts them back
 * (save = 0). lg holds one row per line (x sweeps) or per unknown (y/z), c->log_pitch elements apart. */
void tridi_cpu_block_log(const tridi_problem *p, const cpu_plan *c, int64_t b, char *lg, int save, int stream)
{
    const int64_t line0 = c->blocks[b].line0, Lb = c->blocks[b].Lb;
    const size_t es = tridi_dtype_size(p->arrays.x_type);
    char *x = p->arrays.x;
    if (p->axis == TRIDI_AXIS_X) { /* one row per line, n contiguous unknowns */
        for (int64_t l = 0; l < Lb; ++l) {
            char *row = x + (size_t)tridi_line_offset(p, line0 + l) * es, *lr = lg + (size_t)(l * c->log_pitch) * es;
            if (!save)
                memcpy(row, lr, (size_t)p->n * es);
            else if (stream)
                stream_copy(lr, row, (size_t)p->n * es);
            else
                memcpy(lr, row, (size_t)p->n * es);
        }
        return;
    }
    /* y/z blocks: one row per unknown, Lb contiguous lines (the back substitution saves these rows itself
     * on the fast path; this saves them ahead of the careful path). */
    const int64_t off = tridi_line_offset(p, line0), s = p->stride[p->axis];
    for (int64_t m = 0; m < p->n; ++m) {
        char *row = x + (size_t)(off + m * s) * es, *lr = lg + (size_t)(m * c->log_pitch) * es;
        if (!save)
            memcpy(row, lr, (size_t)Lb * es);
        else if (stream)
            stream_copy(lr, row, (size_t)Lb * es);
        else
            memcpy(lr, row, (size_t)Lb * es);
    }
}

/* Bytes of one block's saved x (a place in the undo log, or a thread's own save). */
size_t tridi_cpu_block_save_bytes(const tridi_problem *p, const cpu_plan *c)
{
    return (size_t)(c->log_rows * c->log_pitch) * tridi_dtype_size(p->arrays.x_type);
}

/* Per-thread workspace: W and G (y/z under ON_ERROR_LINES: two of each, decision 066), then the x sweep's
 * tile or transposed inputs and answers, then (under ON_ERROR_LINES) the block's own save of x. */
static size_t workspace_bytes(const tridi_problem *p, const cpu_plan *c, int lines)
{
    size_t doubles = 2 * (size_t)(c->npad * c->L);
    size_t extra = 0;
    if (lines && p->axis != TRIDI_AXIS_X) /* a second W and G: one block's pending while the next's fill */
        doubles *= 2;
    if (c->x512)
        doubles += 4 * 8 * 16;
    else if (p->axis == TRIDI_AXIS_X)
        doubles += 4 * (size_t)(p->n * c->L), extra = (size_t)(p->n * c->L) * tridi_dtype_size(p->arrays.x_type);
    extra = (extra + 63) / 64 * 64;
    if (lines)
        extra += tridi_cpu_block_save_bytes(p, c);
    return (doubles * sizeof(double) + extra + 63) / 64 * 64;
}

/* Threads a solve pays for: one per TRIDI_CPU_BYTES_PER_THREAD of the five arrays' bytes over the box
 * (at least one, at most the caller's count). Inside a model, whose serial code lets OpenMP's threads fall
 * asleep between calls, waking a thread costs more than a small solve gains; the worker pool
 * (docs/decisions/028) spares a call the wait, not the wake-up calls, so the rule stays (docs/decisions/017,
 * whose measurement sets the default). */
#ifndef TRIDI_CPU_BYTES_PER_THREAD
#define TRIDI_CPU_BYTES_PER_THREAD (512 * 1024)
#endif

/* TRIDI_CPU_BYTES_PER_THREAD as the context read it (tests use 1 to exercise every thread on small
 * grids), else the compiled value. */
static int64_t bytes_per_thread(const tridi_tuning *tuning)
{
    return tuning->cpu_bytes_per_thread ? tuning->cpu_bytes_per_thread : TRIDI_CPU_BYTES_PER_THREAD;
}

int tridi_cpu_threads_that_pay(const tridi_tuning *tuning, const tridi_problem *p, int requested)
{
    const tridi_arrays *a = &p->arrays;
    const int64_t cell_bytes = (int64_t)(tridi_dtype_size(a->lower_type) + tridi_dtype_size(a->diag_type) +
                                         tridi_dtype_size(a->upper_type) + tridi_dtype_size(a->rhs_type) +
                                         tridi_dtype_size(a->x_type));
    const int64_t per = bytes_per_thread(tuning);
    const int64_t cells = p->nlines * p->n; /* validated: the box fits the arrays, so no overflow */
    /* cells / (per / cell_bytes) rounded up, without forming cells * cell_bytes */
    const int64_t cells_per_thread = per / cell_bytes > 0 ? per / cell_bytes : 1;
    const int64_t pay = cells / cells_per_thread + (cells % cells_per_thread != 0);
    return pay < 1 ? 1 : pay < requested ? (int)pay : requested;
}

cpu_layout tridi_cpu_layout_of(const tridi_tuning *tuning, const tridi_problem *p, int nthreads, int lines)
{
    cpu_layout y;
    y.c = tridi_cpu_make_plan(tuning, p, nthreads);
    for (int t = 0; t < nthreads; ++t)
        y.c.nblocks += tridi_cpu_thread_blocks(p, &y.c, t, NULL);
    y.lines = lines;
    y.ws_bytes = workspace_bytes(p, &y.c, lines);
    y.log_bytes = lines ? 0 : (size_t)y.c.nblocks * tridi_cpu_block_save_bytes(p, &y.c);
    const size_t list_bytes = (size_t)y.c.nblocks * sizeof(cpu_block) + (size_t)(nthreads + 1) * sizeof(int64_t) +
                              (size_t)nthreads * TRIDI_CPU_TAKEN_PAD * sizeof(int64_t);
    y.need = ((size_t)nthreads * y.ws_bytes + y.log_bytes + list_bytes + (size_t)y.c.nblocks + 63) / 64 * 64;
    y.log = NULL;
    y.written = NULL;
    return y;
}

/* Points y's log, block list and written flags into scratch (at least y->need bytes). */
void tridi_cpu_place(cpu_layout *y, char *scratch)
{
    y->log = scratch + (size_t)y->c.nthreads * y->ws_bytes; /* log rows are 64-byte multiples: what follows is aligned */
    y->c.blocks = (cpu_block *)(y->log + y->log_bytes);
    y->c.first = (int64_t *)(y->c.blocks + y->c.nblocks);
    y->c.taken = y->c.first + y->c.nthreads + 1;
    y->written = (unsigned char *)(y->c.taken + (size_t)y->c.nthreads * TRIDI_CPU_TAKEN_PAD);
}

/* The largest |G| that BOUNDED_WRITE allows for lines of n unknowns and x in float (x_float) or double:
 * with every |W| <= 1 each answer is at most the one below plus max|G|, a few roundings each, so n *
 * max|G| well inside x's range bounds every answer (docs/decisions/059). 0 (never bounded) past 2^20
 * unknowns, where the roundings' growth is no longer covered by the margin. */
double tridi_cpu_bound_glim(int64_t n, int x_float)
{
    if (n > (INT64_C(1) << 20))
        return 0.0;
    return (x_float ? (double)FLT_MAX : DBL_MAX) / (4.0 * (double)(n + 1));
}
