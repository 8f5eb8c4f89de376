/* OpenMP CPU backend.
 *
 * Work unit: a block of neighbouring lines, solved together with the recurrence vectorised across them.
 * - y and z sweeps: up to L lines at consecutive i, so each unknown's values of the block form one
 *   contiguous row of every array; L is as wide as TRIDI_CPU_WG_BUDGET lets W and G be. The rows a few
 *   unknowns ahead are prefetched: consecutive rows sit a grid row or plane apart, and without it a y
 *   sweep of 560x560x56 ran 1.5x slower on the GPU host.
 * - x sweeps: each line is contiguous, neighbouring lines a grid row apart. With AVX-512, 16 consecutive
 *   lines (across planes) form a block; 8 unknowns of its 16 lines are transposed in registers into a
 *   4 KiB L1 tile, the recurrence runs on the tile, and the answers are rounded and transposed back on
 *   their way to x: every array is read (and x written) once, as rows, with software prefetch ahead.
 *   Without AVX-512 each input of a 16-line block is transposed into a double buffer first.
 * - Threads: as many as the call's size pays for (threads_that_pay), each starting on an equal share of
 *   the call's lines, cut into blocks (make_plan, thread_blocks), then taking the blocks left in the
 *   other shares: a thread that wakes late does not hold the call up by a share of its own. The threads
 *   are the context's worker pool (cpu_pool.c), which join a call only while it has blocks left, so the
 *   call never waits for a thread still waking (docs/decisions/028).
 *
 * Arithmetic (docs/decisions/040): the block kernels come in three forms, picked per call (kernel_arith):
 * MOHID's two divisions per unknown (TRIDI_ARITH_MOHID), the same with MOHID's NewType pivot rounded to
 * float (TRIDI_ARITH_MOHID_NEWTYPE on float upper values), and one reciprocal per pivot (TRIDI_ARITH_FAST).
 * No form fuses a multiply-add: the library is compiled with -ffp-contract=off, so every ISA of the
 * target clones, the AVX-512 x kernel and the careful path round alike, as MOHID's gfortran build does.
 * The fast path checks only that every value stayed finite. A block it flags goes to the careful path:
 * each of its lines re-solved alone (solve_line, in MOHID's arithmetic for every form but FAST's, where it
 * divides too), which settles whether the line really fails and where. A subnormal pivot (1e-310) makes
 * FAST's 1/den overflow where -f/den and g/den are finite; such blocks are solved there, slower but right.
 *
 * Failures follow p->on_error (docs/decisions/007, 019):
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
#include "cpu_pool.h"
#include "thomas_core.h"
#include "tridi_internal.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#else /* a build without OpenMP (e.g. the fuzzing harness) runs the same code on one thread */
static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_get_thread_num(void) { return 0; }
#endif
#include <stdlib.h>
#include <string.h>

#define TRIDI_CPU_BLOCK 64
#define TRIDI_CPU_BLOCK_X 16
/* The per-share block counters sit a cache line apart (threads take blocks from them concurrently). */
#define TRIDI_CPU_TAKEN_PAD 8
/* Compile-time tuning knobs, set from a same-run sweep on a 16-core host (see docs/decisions/008).
 * Bytes a y/z block's W and G may take: 8 MiB lets a y block span a whole row of lines on grids up to
 * ~900 unknowns per line (one long contiguous row per unknown, W and G in L3), which beat blocks sized
 * for L2 (0.5, 1 and 2 MiB) at 560x560x56. */
#ifndef TRIDI_CPU_WG_BUDGET
#define TRIDI_CPU_WG_BUDGET (8 * 1024 * 1024)
#endif
/* Software prefetch distances: unknowns ahead along an x row (16, 32, 64, 128, 256 tried), rows ahead
 * in a y/z block (none, 2, 4, 8, 16, 32 tried; none is 1.5x slower on y at 560x560x56, 16 and 32 slower
 * than 8). */
#ifndef TRIDI_CPU_PREFETCH_X
#define TRIDI_CPU_PREFETCH_X 16
#endif
#ifndef TRIDI_CPU_PREFETCH_YZ
#define TRIDI_CPU_PREFETCH_YZ 8
#endif

/* The recurrence is division-bound: compile the block kernels for AVX-512 and AVX2 too and let the
 * loader pick the widest the machine has (GCC/Clang function multiversioning), instead of building the
 * whole library for the build machine's CPU. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(TRIDI_NO_CLONES) && \
    !defined(__SANITIZE_ADDRESS__)
#define TRIDI_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TRIDI_VECTOR_CLONES
#endif

/* A failing line of a block: its place in the block and the core's record (src/thomas_core.h). */
typedef struct block_failure {
    int64_t line_in_block; /* -1: none */
    tridi_thomas_fail f;
} block_failure;

/* One line by itself, in MOHID's arithmetic: two divisions per unknown (no reciprocal), W and G in
 * double (tridi_thomas_forward_newtype; pivot_f32: the NewType pivot in float). This is the careful path that every block the vector kernels flag goes
 * through: a reciprocal 1/den overflows for a subnormal pivot (den = 1e-310) where -f/den and g/den are
 * finite, so a flag from the vector kernels is only a suspicion, settled here line by line. Stores w and
 * g at W[m], G[m] when W is not NULL. Returns 1 if the line fails in the forward sweep (non-finite input,
 * zero pivot, overflow) with *out naming the unknown and why, else 0. */
#define DEFINE_LINE_FORWARD(NAME, TL, TD, TU, TR)                                                              \
    static int NAME(const TL *D, const TD *E, const TU *F, const TR *R, int64_t n, int64_t s, int pivot_f32,  \
                    double *W, double *G, tridi_thomas_fail *out)                                              \
    {                                                                                                          \
        double w = 0.0, g = 0.0;                                                                               \
        for (int64_t m = 0; m < n; ++m) {                                                                      \
            const double d = m ? (double)D[m * s] : 0.0, e = (double)E[m * s];                                 \
            const double f = m < n - 1 ? (double)F[m * s] : 0.0, r = (double)R[m * s];                         \
            const int kind = tridi_thomas_forward_newtype(d, e, f, r, m == 0, m == n - 1, pivot_f32, &w, &g);   \
            if (kind) {                                                                                        \
                out->m = m;                                                                                    \
                out->kind = kind;                                                                              \
                return 1;                                                                                      \
            }                                                                                                  \
            if (W) {                                                                                           \
                W[m] = w;                                                                                      \
                G[m] = g;                                                                                      \
            }                                                                                                  \
        }                                                                                                      \
        return 0;                                                                                              \
    }

DEFINE_LINE_FORWARD(line_forward_f32, float, float, float, float)
DEFINE_LINE_FORWARD(line_forward_f64, double, double, double, double)
DEFINE_LINE_FORWARD(line_forward_mix, float, double, float, float)

/* The forward sweep of the line whose first unknown sits at element `off` of the caller's arrays. */
static int line_forward(const tridi_problem *p, int64_t off, double *W, double *G, tridi_thomas_fail *out)
{
    const tridi_arrays *a = &p->arrays;
    const int64_t n = p->n, s = p->stride[p->axis];
    const int f32 = tridi_newtype_pivot_f32(p);
    if (p->combo == TRIDI_COMBO_F32)
        return line_forward_f32((const float *)a->lower + off, (const float *)a->diag + off,
                                (const float *)a->upper + off, (const float *)a->rhs + off, n, s, f32, W, G, out);
    if (p->combo == TRIDI_COMBO_F64)
        return line_forward_f64((const double *)a->lower + off, (const double *)a->diag + off,
                                (const double *)a->upper + off, (const double *)a->rhs + off, n, s, f32, W, G, out);
    return line_forward_mix((const float *)a->lower + off, (const double *)a->diag + off,
                            (const float *)a->upper + off, (const float *)a->rhs + off, n, s, f32, W, G, out);
}

/* The careful path's whole line: forward sweep, then the back substitution into W (tridi_thomas_back:
 * each answer rounded to x's type before it feeds the unknown above), and x written only once every
 * answer is finite in its type, so a failing line is left untouched. Returns 1 with *out set if the line
 * fails. */
static int solve_line(const tridi_problem *p, int64_t off, double *W, double *G, tridi_thomas_fail *out)
{
    if (line_forward(p, off, W, G, out))
        return 1;
    const int64_t n = p->n, s = p->stride[p->axis];
    const int xdbl = p->arrays.x_type == TRIDI_FLOAT64;
    double xn = 0.0;
    for (int64_t m = n - 1; m >= 0; --m) {
        const double v = tridi_thomas_back(W[m], G[m], xn, m == n - 1, xdbl);
        if (!tridi_thomas_finite(v)) {
            out->m = m;
            out->kind = TRIDI_FAIL_ANSWER_OVERFLOW;
            return 1;
        }
        W[m] = v;
        xn = v;
    }
    if (xdbl)
        for (int64_t m = 0; m < n; ++m)
            ((double *)p->arrays.x)[off + m * s] = W[m];
    else
        for (int64_t m = 0; m < n; ++m)
            ((float *)p->arrays.x)[off + m * s] = (float)W[m];
    return 0;
}

/* Prefetches `bytes` from p into L2. */
static inline void prefetch_run(const void *p, size_t bytes)
{
    const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)63), *end = (const char *)p + bytes;
    for (; c < end; c += 64)
        __builtin_prefetch(c, 0, 2);
}

/* Copies `bytes` (a multiple of 4; dst 16-byte aligned) bypassing the caches where the ISA allows: the
 * undo log is written once and read back only after a failure, so it should not evict the working set. */
static void stream_copy(void *dst, const void *src, size_t bytes)
{
#if defined(__SSE2__)
    char *d = dst;
    const char *s = src;
    size_t i = 0;
    for (; i + 16 <= bytes; i += 16)
        _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    for (; i < bytes; i += 4) {
        int v;
        memcpy(&v, s + i, 4);
        _mm_stream_si32((int *)(d + i), v);
    }
#else
    memcpy(dst, src, bytes);
#endif
}

static void stream_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* The block kernels' arithmetic (kernel_arith): MOHID's divisions, MOHID's NewType float pivot, FAST's
 * reciprocal. */
enum { ARITH_DIV = 0, ARITH_NEWTYPE = 1, ARITH_RCP = 2 };

/* Forward sweep of Lb lines: element (m, l) of an input sits at [m*s + l*ls]; W and G get [m][Lb] in
 * double (MOHID's VECW, VECG). With `prefetch` (ls == 1) the rows TRIDI_CPU_PREFETCH_YZ unknowns ahead
 * are prefetched. MODE: ARITH_DIV, ARITH_NEWTYPE (float upper values only) or ARITH_RCP, a constant of
 * each instance. Returns nonzero if any value went non-finite (then the caller locates the failure). */
#define DEFINE_FORWARD(NAME, TL, TD, TU, TR, MODE)                                                            \
    TRIDI_VECTOR_CLONES static int NAME(const TL *restrict D, const TD *restrict E, const TU *restrict F,    \
                                        const TR *restrict R, int64_t n, int64_t Lb, int64_t s, int64_t ls,    \
                                        int prefetch, double *restrict W, double *restrict G)                  \
    {                                                                                                          \
        int bad = 0;                                                                                           \
        for (int64_t l = 0; l < Lb; ++l) {                                                                     \
            double e = (double)E[l * ls];                                                                      \
            double w = n > 1 ? -(double)F[l * ls] / e : 0.0, g = (double)R[l * ls] / e;                      \
            W[l] = w;                                                                                          \
            G[l] = g;                                                                                          \
            bad |= !(fabs(w) <= DBL_MAX) | !(fabs(g) <= DBL_MAX) | !(fabs(e) <= DBL_MAX);                      \
        }                                                                                                      \
        for (int64_t m = 1; m < n; ++m) {                                                                      \
            const TL *Dm = D + m * s;                                                                          \
            const TD *Em = E + m * s;                                                                          \
            const TU *Fm = F + m * s;                                                                          \
            const TR *Rm = R + m * s;                                                                          \
            if (prefetch && m + TRIDI_CPU_PREFETCH_YZ < n) {                                                   \
                const int64_t ahead = TRIDI_CPU_PREFETCH_YZ * s;                                               \
                prefetch_run(Dm + ahead, (size_t)Lb * sizeof(TL));                                             \
                prefetch_run(Em + ahead, (size_t)Lb * sizeof(TD));                                             \
                prefetch_run(Fm + ahead, (size_t)Lb * sizeof(TU));                                             \
                prefetch_run(Rm + ahead, (size_t)Lb * sizeof(TR));                                             \
            }                                                                                                  \
            const double *Wp = W + (m - 1) * Lb, *Gp = G + (m - 1) * Lb;                                       \
            double *Wm = W + m * Lb, *Gm = G + m * Lb;                                                         \
            if (m < n - 1) {                                                                                   \
                for (int64_t l = 0; l < Lb; ++l) {                                                             \
                    double d = (double)Dm[l * ls];                                                             \
                    double den = (double)Em[l * ls] + d * Wp[l];                                               \
                    double w, g;                                                                               \
                    if (MODE == ARITH_RCP) { /* one division per unknown: the loop's throughput limit */       \
                        const double inv = 1.0 / den;                                                          \
                        w = -(double)Fm[l * ls] * inv;                                                         \
                        g = ((double)Rm[l * ls] - d * Gp[l]) * inv;                                            \
                    } else if (MODE == ARITH_NEWTYPE) { /* AUX a float; W = -(F/AUX) divided in float */        \
                        const float aux = (float)den;                                                          \
                        den = (double)aux;                                                                     \
                        w = (double)(-((float)Fm[l * ls] / aux));                                              \
                        g = ((double)Rm[l * ls] - d * Gp[l]) / den;                                            \
                    } else {                                                                                   \
                        w = -(double)Fm[l * ls] / den;                                                         \
                        g = ((double)Rm[l * ls] - d * Gp[l]) / den;                                            \
                    }                                                                                          \
                    Wm[l] = w;                                                                                 \
                    Gm[l] = g;                                                                                 \
                    /* Inputs too: an Inf diag can still give a finite w and g. */                             \
                    bad |= !(fabs(w) <= DBL_MAX) | !(fabs(g) <= DBL_MAX) | !(fabs(d) <= DBL_MAX) |              \
                           !(fabs(den) <= DBL_MAX);                                                            \
                }                                                                                              \
            } else {                                                                                           \
                for (int64_t l = 0; l < Lb; ++l) {                                                             \
                    double d = (double)Dm[l * ls];                                                             \
                    double den = (double)Em[l * ls] + d * Wp[l];                                               \
                    if (MODE == ARITH_NEWTYPE)                                                                 \
                        den = (double)(float)den;                                                              \
                    double g = ((double)Rm[l * ls] - d * Gp[l]) / den;                                         \
                    Gm[l] = g;                                                                                 \
                    bad |= !(fabs(g) <= DBL_MAX) | !(fabs(d) <= DBL_MAX) | !(fabs(den) <= DBL_MAX);            \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
        return bad;                                                                                            \
    }

/* Back substitution of Lb lines from the forward sweep's W and G: answer (m, l) goes to x[m*xs + l],
 * rounded to TX before it feeds unknown m-1 (as a Fortran real(4) ANSWER would be), which reads it back
 * from the x row just written (in L1). Storing it into W instead cost 8 B/cell more to the W/G buffer,
 * which lives in L3 for long y lines (4.8 MiB per block on 560x560x56). With a log (y/z blocks), each x row
 * goes to the undo log (row m at log + m * lp bytes) just before it is overwritten: the row is then in L1
 * for the answers that follow, where a separate pass over the block's x ahead of the sweep left it to be
 * fetched again from L3 behind W and G. The call's undo log is written with non-temporal stores (stream:
 * read back only after a failure); a thread's own block save (ON_ERROR_LINES) with plain ones, as it is
 * reused by the next block and should stay in cache. Returns nonzero if an answer is not finite in its
 * type. */
#define DEFINE_BACKWARD(NAME, TX)                                                                             \
    TRIDI_VECTOR_CLONES static int NAME(const double *restrict W, const double *restrict G, TX *restrict x,  \
                                        int64_t n, int64_t Lb, int64_t xs, char *log, int64_t lp, int stream)  \
    {                                                                                                          \
        int bad = 0;                                                                                           \
        for (int64_t m = n - 1; m >= 0; --m) {                                                                 \
            TX *xm = x + m * xs;                                                                               \
            const double *Wm = W + m * Lb, *Gm = G + m * Lb;                                                   \
            if (log) {                                                                                         \
                if (m >= TRIDI_CPU_PREFETCH_YZ)                                                                \
                    prefetch_run(xm - TRIDI_CPU_PREFETCH_YZ * xs, (size_t)Lb * sizeof(TX));                    \
                if (stream)                                                                                    \
                    stream_copy(log + m * lp, xm, (size_t)Lb * sizeof(TX));                                    \
                else                                                                                           \
                    memcpy(log + m * lp, xm, (size_t)Lb * sizeof(TX));                                         \
            }                                                                                                  \
            if (m == n - 1) {                                                                                  \
                for (int64_t l = 0; l < Lb; ++l) {                                                             \
                    TX v = (TX)Gm[l];                                                                          \
                    xm[l] = v;                                                                                 \
                    bad |= !(fabs((double)v) <= DBL_MAX);                                                      \
                }                                                                                              \
                continue;                                                                                      \
            }                                                                                                  \
            const TX *xn = xm + xs;                                                                            \
            for (int64_t l = 0; l < Lb; ++l) {                                                                 \
                TX v = (TX)(Wm[l] * (double)xn[l] + Gm[l]);                                                    \
                xm[l] = v;                                                                                     \
                bad |= !(fabs((double)v) <= DBL_MAX);                                                          \
            }                                                                                                  \
        }                                                                                                      \
        return bad;                                                                                            \
    }

DEFINE_FORWARD(forward_f32_div, float, float, float, float, ARITH_DIV)
DEFINE_FORWARD(forward_f32_new, float, float, float, float, ARITH_NEWTYPE)
DEFINE_FORWARD(forward_f32_rcp, float, float, float, float, ARITH_RCP)
DEFINE_FORWARD(forward_f64_div, double, double, double, double, ARITH_DIV)
DEFINE_FORWARD(forward_f64_rcp, double, double, double, double, ARITH_RCP)
DEFINE_FORWARD(forward_mix_div, float, double, float, float, ARITH_DIV)
DEFINE_FORWARD(forward_mix_new, float, double, float, float, ARITH_NEWTYPE)
DEFINE_FORWARD(forward_mix_rcp, float, double, float, float, ARITH_RCP)
/* x-axis blocks without AVX-512 run on transposed double copies (float values widened exactly: the NewType
 * form's float division of upper is still MOHID's). */
DEFINE_FORWARD(forward_t_div, double, double, double, double, ARITH_DIV)
DEFINE_FORWARD(forward_t_new, double, double, double, double, ARITH_NEWTYPE)
DEFINE_FORWARD(forward_t_rcp, double, double, double, double, ARITH_RCP)

/* The block kernels' arithmetic for p. */
static int kernel_arith(const tridi_problem *p)
{
    return p->arith == TRIDI_ARITH_FAST ? ARITH_RCP : tridi_newtype_pivot_f32(p) ? ARITH_NEWTYPE : ARITH_DIV;
}

/* One forward sweep of the y/z (or transposed x) kernels in p's types and arithmetic. */
static int forward_block(const tridi_problem *p, int mode, int t, const void *D, const void *E, const void *F,
                         const void *R, int64_t n, int64_t Lb, int64_t s, int64_t ls, int prefetch, double *W,
                         double *G)
{
#define TRIDI_FWD(K, TL, TD) K((const TL *)D, (const TD *)E, (const TL *)F, (const TL *)R, n, Lb, s, ls, prefetch, W, G)
    if (t) /* transposed copies, all double */
        return mode == ARITH_RCP       ? TRIDI_FWD(forward_t_rcp, double, double)
               : mode == ARITH_NEWTYPE ? TRIDI_FWD(forward_t_new, double, double)
                                       : TRIDI_FWD(forward_t_div, double, double);
    if (p->combo == TRIDI_COMBO_F32)
        return mode == ARITH_RCP       ? TRIDI_FWD(forward_f32_rcp, float, float)
               : mode == ARITH_NEWTYPE ? TRIDI_FWD(forward_f32_new, float, float)
                                       : TRIDI_FWD(forward_f32_div, float, float);
    if (p->combo == TRIDI_COMBO_F64)
        return mode == ARITH_RCP ? TRIDI_FWD(forward_f64_rcp, double, double)
                                 : TRIDI_FWD(forward_f64_div, double, double);
    return mode == ARITH_RCP       ? TRIDI_FWD(forward_mix_rcp, float, double)
           : mode == ARITH_NEWTYPE ? TRIDI_FWD(forward_mix_new, float, double)
                                   : TRIDI_FWD(forward_mix_div, float, double);
#undef TRIDI_FWD
}
DEFINE_BACKWARD(backward_f32, float)
DEFINE_BACKWARD(backward_f64, double)

/* TRIDI_ARITH_FAST on all-float y/z blocks: the same recurrence with W, G and every operation in float,
 * twice the lanes per vector of the double kernels (16 per AVX-512 register) and half the W/G bytes.
 * Accuracy (tests/c/test_fast_arith.c): on row diagonally dominant lines the answers satisfy
 * |x - x*| <= 32 u cond(A, x*) |x*| in the max norm, u = 2^-24, cond(A, x) = || |A^-1| |A| |x| || / ||x||
 * (the Thomas recurrence's backward error on such lines is a small multiple of u |A|, Higham, Accuracy and
 * Stability of Numerical Algorithms, 2nd ed., section 9.5; the reciprocal and the final rounding add a few
 * u more). A flagged block takes the careful path, in MOHID's arithmetic, as every other block does. */
TRIDI_VECTOR_CLONES static int forward_fast(const float *restrict D, const float *restrict E, const float *restrict F,
                                            const float *restrict R, int64_t n, int64_t Lb, int64_t s,
                                            float *restrict W, float *restrict G)
{
    int bad = 0;
    for (int64_t l = 0; l < Lb; ++l) {
        const float e = E[l], w = n > 1 ? -F[l] / e : 0.0f, g = R[l] / e;
        W[l] = w;
        G[l] = g;
        bad |= !(fabsf(w) <= FLT_MAX) | !(fabsf(g) <= FLT_MAX) | !(fabsf(e) <= FLT_MAX);
    }
    for (int64_t m = 1; m < n; ++m) {
        const float *Dm = D + m * s, *Em = E + m * s, *Fm = F + m * s, *Rm = R + m * s;
        if (m + TRIDI_CPU_PREFETCH_YZ < n) {
            const int64_t ahead = TRIDI_CPU_PREFETCH_YZ * s;
            prefetch_run(Dm + ahead, (size_t)Lb * sizeof(float));
            prefetch_run(Em + ahead, (size_t)Lb * sizeof(float));
            prefetch_run(Fm + ahead, (size_t)Lb * sizeof(float));
            prefetch_run(Rm + ahead, (size_t)Lb * sizeof(float));
        }
        const float *Wp = W + (m - 1) * Lb, *Gp = G + (m - 1) * Lb;
        float *Wm = W + m * Lb, *Gm = G + m * Lb;
        if (m < n - 1) {
            for (int64_t l = 0; l < Lb; ++l) {
                const float d = Dm[l], den = Em[l] + d * Wp[l], inv = 1.0f / den;
                const float w = -Fm[l] * inv, g = (Rm[l] - d * Gp[l]) * inv;
                Wm[l] = w;
                Gm[l] = g;
                bad |= !(fabsf(w) <= FLT_MAX) | !(fabsf(g) <= FLT_MAX) | !(fabsf(d) <= FLT_MAX) |
                       !(fabsf(den) <= FLT_MAX);
            }
        } else { /* the last unknown: no upper coupling (its upper value is not read) */
            for (int64_t l = 0; l < Lb; ++l) {
                const float d = Dm[l], den = Em[l] + d * Wp[l], g = (Rm[l] - d * Gp[l]) / den;
                Gm[l] = g;
                bad |= !(fabsf(g) <= FLT_MAX) | !(fabsf(d) <= FLT_MAX) | !(fabsf(den) <= FLT_MAX);
            }
        }
    }
    return bad;
}

/* Its back substitution, in float, saving each x row first as backward_f32 does. */
TRIDI_VECTOR_CLONES static int backward_fast(const float *restrict W, const float *restrict G, float *restrict x,
                                             int64_t n, int64_t Lb, int64_t xs, char *log, int64_t lp, int stream)
{
    int bad = 0;
    for (int64_t m = n - 1; m >= 0; --m) {
        float *xm = x + m * xs;
        const float *Wm = W + m * Lb, *Gm = G + m * Lb;
        if (log) {
            if (m >= TRIDI_CPU_PREFETCH_YZ)
                prefetch_run(xm - TRIDI_CPU_PREFETCH_YZ * xs, (size_t)Lb * sizeof(float));
            if (stream)
                stream_copy(log + m * lp, xm, (size_t)Lb * sizeof(float));
            else
                memcpy(log + m * lp, xm, (size_t)Lb * sizeof(float));
        }
        const float *xn = m == n - 1 ? NULL : xm + xs;
        for (int64_t l = 0; l < Lb; ++l) {
            const float v = xn ? Wm[l] * xn[l] + Gm[l] : Gm[l];
            xm[l] = v;
            bad |= !(fabsf(v) <= FLT_MAX);
        }
    }
    return bad;
}

static void transpose_in_scalar(const void *src, tridi_dtype t, int64_t off, int64_t row, int64_t m0, int64_t n,
                                int64_t Lb, double *dst)
{
    if (t == TRIDI_FLOAT64) {
        const double *a = (const double *)src + off;
        for (int64_t m = m0; m < n; ++m) /* m outer: contiguous writes; the Lb source lines stay in L1 */
            for (int64_t l = 0; l < Lb; ++l)
                dst[m * Lb + l] = a[l * row + m];
    } else {
        const float *a = (const float *)src + off;
        for (int64_t m = m0; m < n; ++m)
            for (int64_t l = 0; l < Lb; ++l)
                dst[m * Lb + l] = (double)a[l * row + m];
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(TRIDI_NO_CLONES)
#include <immintrin.h>
#define TRIDI_HAVE_AVX2_TRANSPOSE 1
/* The x sweep's transposition done in registers: 8x8 float tiles (widened to double on the way) and
 * 4x4 double tiles, instead of one scalar load and store per element. Returns the first unknown left
 * for the scalar tail. Lb must be a multiple of 8. */
__attribute__((target("avx2"))) static int64_t transpose_in_avx2(const void *src, tridi_dtype t, int64_t off,
                                                                  int64_t row, int64_t n, int64_t Lb, double *dst)
{
    if (t == TRIDI_FLOAT64) {
        const double *a = (const double *)src + off;
        int64_t m0 = 0;
        for (; m0 + 4 <= n; m0 += 4)
            for (int64_t l0 = 0; l0 < Lb; l0 += 4) {
                __m256d r0 = _mm256_loadu_pd(a + (l0 + 0) * row + m0), r1 = _mm256_loadu_pd(a + (l0 + 1) * row + m0);
                __m256d r2 = _mm256_loadu_pd(a + (l0 + 2) * row + m0), r3 = _mm256_loadu_pd(a + (l0 + 3) * row + m0);
                __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
                __m256d t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
                _mm256_storeu_pd(dst + (m0 + 0) * Lb + l0, _mm256_permute2f128_pd(t0, t2, 0x20));
                _mm256_storeu_pd(dst + (m0 + 1) * Lb + l0, _mm256_permute2f128_pd(t1, t3, 0x20));
                _mm256_storeu_pd(dst + (m0 + 2) * Lb + l0, _mm256_permute2f128_pd(t0, t2, 0x31));
                _mm256_storeu_pd(dst + (m0 + 3) * Lb + l0, _mm256_permute2f128_pd(t1, t3, 0x31));
            }
        return m0;
    }
    const float *a = (const float *)src + off;
    int64_t m0 = 0;
    for (; m0 + 8 <= n; m0 += 8)
        for (int64_t l0 = 0; l0 < Lb; l0 += 8) {
            __m256 r[8];
            for (int i = 0; i < 8; ++i)
                r[i] = _mm256_loadu_ps(a + (l0 + i) * row + m0);
            __m256 u0 = _mm256_unpacklo_ps(r[0], r[1]), u1 = _mm256_unpackhi_ps(r[0], r[1]);
            __m256 u2 = _mm256_unpacklo_ps(r[2], r[3]), u3 = _mm256_unpackhi_ps(r[2], r[3]);
            __m256 u4 = _mm256_unpacklo_ps(r[4], r[5]), u5 = _mm256_unpackhi_ps(r[4], r[5]);
            __m256 u6 = _mm256_unpacklo_ps(r[6], r[7]), u7 = _mm256_unpackhi_ps(r[6], r[7]);
            __m256 v0 = _mm256_shuffle_ps(u0, u2, 0x44), v1 = _mm256_shuffle_ps(u0, u2, 0xEE);
            __m256 v2 = _mm256_shuffle_ps(u1, u3, 0x44), v3 = _mm256_shuffle_ps(u1, u3, 0xEE);
            __m256 v4 = _mm256_shuffle_ps(u4, u6, 0x44), v5 = _mm256_shuffle_ps(u4, u6, 0xEE);
            __m256 v6 = _mm256_shuffle_ps(u5, u7, 0x44), v7 = _mm256_shuffle_ps(u5, u7, 0xEE);
            /* row mm of the transposed tile holds unknown m0+mm of lines l0..l0+7 */
            __m256 c[8] = {_mm256_permute2f128_ps(v0, v4, 0x20), _mm256_permute2f128_ps(v1, v5, 0x20),
                           _mm256_permute2f128_ps(v2, v6, 0x20), _mm256_permute2f128_ps(v3, v7, 0x20),
                           _mm256_permute2f128_ps(v0, v4, 0x31), _mm256_permute2f128_ps(v1, v5, 0x31),
                           _mm256_permute2f128_ps(v2, v6, 0x31), _mm256_permute2f128_ps(v3, v7, 0x31)};
            for (int mm = 0; mm < 8; ++mm) {
                double *d = dst + (m0 + mm) * Lb + l0;
                _mm256_storeu_pd(d, _mm256_cvtps_pd(_mm256_castps256_ps128(c[mm])));
                _mm256_storeu_pd(d + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(c[mm], 1)));
            }
        }
    return m0;
}

/* ---- x sweeps with AVX-512: 16 lines, transposed 8 unknowns at a time through an L1 tile ----
 * The arithmetic is the generic kernels' operation for operation in each form (kernel_arith: the same
 * divisions, each product rounded before its sum, no fused multiply-add), so the answers are
 * bit-identical to theirs and, in MOHID's forms, to MOHID's (docs/decisions/040). Not in AddressSanitizer
 * builds, which make no clones either (TRIDI_VECTOR_CLONES). */
#if !defined(__SANITIZE_ADDRESS__)
#define TRIDI_HAVE_AVX512_X 1
#define TRIDI_AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,fma,prfchw")))
#define TRIDI_AVX512_INLINE static inline __attribute__((always_inline)) TRIDI_AVX512

/* r[i][j] <-> r[j][i] for an 8x8 tile of doubles. */
TRIDI_AVX512_INLINE void transpose8_pd(__m512d r[8])
{
    __m512d t0 = _mm512_unpacklo_pd(r[0], r[1]), t1 = _mm512_unpackhi_pd(r[0], r[1]);
    __m512d t2 = _mm512_unpacklo_pd(r[2], r[3]), t3 = _mm512_unpackhi_pd(r[2], r[3]);
    __m512d t4 = _mm512_unpacklo_pd(r[4], r[5]), t5 = _mm512_unpackhi_pd(r[4], r[5]);
    __m512d t6 = _mm512_unpacklo_pd(r[6], r[7]), t7 = _mm512_unpackhi_pd(r[6], r[7]);
    __m512d u0 = _mm512_shuffle_f64x2(t0, t2, 0x88), u1 = _mm512_shuffle_f64x2(t0, t2, 0xDD);
    __m512d u2 = _mm512_shuffle_f64x2(t1, t3, 0x88), u3 = _mm512_shuffle_f64x2(t1, t3, 0xDD);
    __m512d u4 = _mm512_shuffle_f64x2(t4, t6, 0x88), u5 = _mm512_shuffle_f64x2(t4, t6, 0xDD);
    __m512d u6 = _mm512_shuffle_f64x2(t5, t7, 0x88), u7 = _mm512_shuffle_f64x2(t5, t7, 0xDD);
    r[0] = _mm512_shuffle_f64x2(u0, u4, 0x88);
    r[4] = _mm512_shuffle_f64x2(u0, u4, 0xDD);
    r[2] = _mm512_shuffle_f64x2(u1, u5, 0x88);
    r[6] = _mm512_shuffle_f64x2(u1, u5, 0xDD);
    r[1] = _mm512_shuffle_f64x2(u2, u6, 0x88);
    r[5] = _mm512_shuffle_f64x2(u2, u6, 0xDD);
    r[3] = _mm512_shuffle_f64x2(u3, u7, 0x88);
    r[7] = _mm512_shuffle_f64x2(u3, u7, 0xDD);
}

/* The unknowns of mask k (of 8 from p) as doubles; masked-off elements are not read. */
TRIDI_AVX512_INLINE __m512d load8(const char *p, int dbl, __mmask8 k)
{
    return dbl ? _mm512_maskz_loadu_pd(k, p) : _mm512_cvtps_pd(_mm256_maskz_loadu_ps(k, p));
}

/* NaN iff v is not finite, else +-0: summed, a single test says whether any checked value failed. */
TRIDI_AVX512_INLINE __m512d finite_probe(__m512d acc, __m512d v) { return _mm512_fmadd_pd(v, _mm512_setzero_pd(), acc); }


typedef struct xrows {
    const char *in[4];   /* lower, diag, upper, rhs */
    int64_t row[16];     /* element offset of each line's first unknown; lines past the block repeat its last */
    const int64_t *next; /* the same for the next block (prefetched while this one ends), or NULL */
} xrows;

/* Forward sweep of 16 x lines; dbl[q] says whether input q is double, mode the arithmetic (kernel_arith;
 * both constant in each instance). W and G get [m][16] doubles. Returns nonzero if a value went
 * non-finite. */
TRIDI_AVX512_INLINE int xforward16_body(const xrows *xr, const int dbl[4], int mode, char *x, size_t xes, int64_t n,
                                         double *restrict W, double *restrict G, double *restrict tile)
{
    const __m512d zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1.0), sign = _mm512_set1_pd(-0.0);
    __m512d acc[2] = {zero, zero}, wp[2] = {zero, zero}, gp[2] = {zero, zero};
    for (int64_t m0 = 0; m0 < n; m0 += 8) {
        const int64_t cnt = n - m0 < 8 ? n - m0 : 8;
        const __mmask8 k = (__mmask8)((1u << cnt) - 1u);
        /* Some eighty row streams are more than the hardware prefetchers follow: fetch each row a little
         * ahead (into L2), x with write intent; past the row's end, the next block's rows. */
        const int64_t ahead = m0 + TRIDI_CPU_PREFETCH_X;
        const int64_t *rows = ahead < n ? xr->row : xr->next;
        const int64_t at = ahead < n ? ahead : ahead - n;
        if (rows && at < n) {
            for (int q = 0; q < 4; ++q)
                if (dbl[q] || !(m0 & 8)) /* one cache line per row: every 8 doubles or 16 floats */
                    for (int l = 0; l < 16; ++l)
                        __builtin_prefetch(xr->in[q] + (size_t)(rows[l] + at) * (dbl[q] ? 8 : 4), 0, 2);
            if (xes == 8 || !(m0 & 8))
                for (int l = 0; l < 16; ++l)
                    __builtin_prefetch(x + (size_t)(rows[l] + at) * xes, 1, 2);
        }
        /* tile[q][mm][l]: input q, unknown m0+mm, line l */
        for (int q = 0; q < 4; ++q)
            for (int h = 0; h < 2; ++h) {
                __m512d r[8];
                for (int i = 0; i < 8; ++i)
                    r[i] = load8(xr->in[q] + (size_t)(xr->row[8 * h + i] + m0) * (dbl[q] ? 8 : 4), dbl[q], k);
                transpose8_pd(r);
                for (int mm = 0; mm < 8; ++mm)
                    _mm512_store_pd(tile + (q * 8 + mm) * 16 + 8 * h, r[mm]);
            }
        for (int64_t mm = 0; mm < cnt; ++mm) {
            const int64_t m = m0 + mm;
            for (int h = 0; h < 2; ++h) {
                const double *t = tile + mm * 16 + 8 * h;
                const __m512d d = _mm512_load_pd(t), e = _mm512_load_pd(t + 128);
                const __m512d f = _mm512_load_pd(t + 256), r = _mm512_load_pd(t + 384);
                __m512d w = zero, g;
                if (m == 0) {
                    if (n > 1)
                        w = _mm512_div_pd(_mm512_xor_pd(f, sign), e);
                    g = _mm512_div_pd(r, e);
                    acc[h] = finite_probe(finite_probe(finite_probe(acc[h], w), g), e);
                } else {
                    /* each product rounded before its sum, as MOHID's baseline x86-64 build does */
                    __m512d den = _mm512_add_pd(e, _mm512_mul_pd(d, wp[h]));
                    const __m512d num = _mm512_sub_pd(r, _mm512_mul_pd(d, gp[h])); /* r - d*g(m-1) */
                    if (mode == ARITH_NEWTYPE) /* MOHID's NewType pivot AUX, a float */
                        den = _mm512_cvtps_pd(_mm512_cvtpd_ps(den));
                    if (m < n - 1) {
                        if (mode == ARITH_RCP) {
                            const __m512d inv = _mm512_div_pd(one, den);
                            w = _mm512_mul_pd(_mm512_xor_pd(f, sign), inv);
                            g = _mm512_mul_pd(num, inv);
                        } else if (mode == ARITH_NEWTYPE) { /* W = -(F/AUX) in float (F a float value) */
                            const __m256 q = _mm256_div_ps(_mm512_cvtpd_ps(f), _mm512_cvtpd_ps(den));
                            w = _mm512_xor_pd(_mm512_cvtps_pd(q), sign);
                            g = _mm512_div_pd(num, den);
                        } else {
                            w = _mm512_div_pd(_mm512_xor_pd(f, sign), den);
                            g = _mm512_div_pd(num, den);
                        }
                        acc[h] = finite_probe(acc[h], w);
                    } else {
                        g = _mm512_div_pd(num, den);
                    }
                    acc[h] = finite_probe(finite_probe(finite_probe(acc[h], g), d), den);
                }
                _mm512_store_pd(W + m * 16 + 8 * h, w);
                _mm512_store_pd(G + m * 16 + 8 * h, g);
                wp[h] = w;
                gp[h] = g;
            }
        }
    }
    const __m512d all = _mm512_add_pd(acc[0], acc[1]);
    return _mm512_cmp_pd_mask(all, all, _CMP_UNORD_Q) != 0;
}

/* Back substitution of 16 x lines, written straight into the x rows of lines < Lb, 8 unknowns at a time
 * from the top. W[m] is overwritten by the rounded answer. Returns nonzero if an answer is not finite. */
TRIDI_AVX512_INLINE int xbackward16_body(const xrows *xr, char *x, int xdbl, int64_t Lb, int64_t n,
                                          double *restrict W, const double *restrict G)
{
    const __m512d zero = _mm512_setzero_pd();
    __m512d acc = zero, xn[2] = {zero, zero};
    for (int64_t m0 = (n - 1) / 8 * 8; m0 >= 0; m0 -= 8) {
        const int64_t cnt = n - m0 < 8 ? n - m0 : 8;
        const __mmask8 k = (__mmask8)((1u << cnt) - 1u);
        for (int64_t mm = cnt - 1; mm >= 0; --mm) {
            const int64_t m = m0 + mm;
            for (int h = 0; h < 2; ++h) {
                double *Wm = W + m * 16 + 8 * h;
                const __m512d g = _mm512_load_pd(G + m * 16 + 8 * h);
                __m512d v = m == n - 1 ? g : _mm512_add_pd(_mm512_mul_pd(_mm512_load_pd(Wm), xn[h]), g);
                if (!xdbl)
                    v = _mm512_cvtps_pd(_mm512_cvtpd_ps(v)); /* rounded before it feeds unknown m-1 */
                _mm512_store_pd(Wm, v);
                xn[h] = v;
                acc = finite_probe(acc, v);
            }
        }
        for (int h = 0; h < 2 && 8 * h < Lb; ++h) {
            __m512d r[8];
            for (int i = 0; i < 8; ++i)
                r[i] = i < cnt ? _mm512_load_pd(W + (m0 + i) * 16 + 8 * h) : zero;
            transpose8_pd(r);
            for (int i = 0; i < 8 && 8 * h + i < Lb; ++i) {
                char *dst = x + (size_t)(xr->row[8 * h + i] + m0) * (xdbl ? 8 : 4);
                if (xdbl)
                    _mm512_mask_storeu_pd(dst, k, r[i]);
                else
                    _mm256_mask_storeu_ps(dst, k, _mm512_cvtpd_ps(r[i]));
            }
        }
    }
    return _mm512_cmp_pd_mask(acc, acc, _CMP_UNORD_Q) != 0;
}

/* One instance per type combination, so that element types are constants inside the loops. */
TRIDI_AVX512 static int xforward16(const xrows *xr, tridi_combo combo, int mode, char *x, int64_t n, double *W,
                                   double *G, double *tile)
{
    static const int f32[4] = {0, 0, 0, 0}, f64[4] = {1, 1, 1, 1}, mix[4] = {0, 1, 0, 0};
#define TRIDI_X16(TY, XES)                                                                                     \
    (mode == ARITH_RCP       ? xforward16_body(xr, TY, ARITH_RCP, x, XES, n, W, G, tile)                       \
     : mode == ARITH_NEWTYPE ? xforward16_body(xr, TY, ARITH_NEWTYPE, x, XES, n, W, G, tile)                   \
                             : xforward16_body(xr, TY, ARITH_DIV, x, XES, n, W, G, tile))
    if (combo == TRIDI_COMBO_F32)
        return TRIDI_X16(f32, 4);
    if (combo == TRIDI_COMBO_F64) /* NewType is MOHID's arithmetic for double upper values */
        return mode == ARITH_RCP ? xforward16_body(xr, f64, ARITH_RCP, x, 8, n, W, G, tile)
                                 : xforward16_body(xr, f64, ARITH_DIV, x, 8, n, W, G, tile);
    return TRIDI_X16(mix, 4);
#undef TRIDI_X16
}

TRIDI_AVX512 static int xbackward16(const xrows *xr, char *x, int xdbl, int64_t Lb, int64_t n, double *W,
                                    const double *G)
{
    return xdbl ? xbackward16_body(xr, x, 1, Lb, n, W, G) : xbackward16_body(xr, x, 0, Lb, n, W, G);
}
#endif /* not AddressSanitizer */
#endif /* x86-64 with GCC/Clang */

static void transpose_in(const void *src, tridi_dtype t, int64_t off, int64_t row, int64_t n, int64_t Lb,
                         double *dst)
{
    int64_t m0 = 0;
#ifdef TRIDI_HAVE_AVX2_TRANSPOSE
    if (Lb % 8 == 0 && __builtin_cpu_supports("avx2"))
        m0 = transpose_in_avx2(src, t, off, row, n, Lb, dst);
#endif
    transpose_in_scalar(src, t, off, row, m0, n, Lb, dst);
}

/* TRIDI_CPU_GENERIC=1 (tuning->cpu_generic) runs x sweeps through the portable kernels even where AVX-512
 * is available (the tests run both). */
static int x_avx512_usable(const tridi_tuning *tuning)
{
#ifdef TRIDI_HAVE_AVX512_X
    if (tuning->cpu_generic)
        return 0;
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq");
#else
    (void)tuning;
    return 0;
#endif
}

/* The y/z blocks' W/G budget in bytes: TRIDI_CPU_WG_BUDGET as the context read it (a tuning knob: one
 * benchmark run per value on the target host, no rebuild), else the compiled value above. */
static int64_t wg_budget(const tridi_tuning *tuning)
{
    return tuning->cpu_wg_budget ? tuning->cpu_wg_budget : TRIDI_CPU_WG_BUDGET;
}

/* How a call is cut into blocks, and the undo log's shape. Each thread takes an equal share of the
 * lines, [t*N/T, (t+1)*N/T), cut into blocks of at most L lines (at row ends too, except for the AVX-512
 * x sweep, whose blocks run over consecutive line numbers). Whole blocks dealt out by OpenMP's static
 * schedule left threads idle: y sweeps of 140x140x56 or 560x560x56 on 16 threads (one block per k plane,
 * 56 blocks) ran 4 blocks on half the threads and 3 on the rest, 14% over an even share. */
typedef struct cpu_block {
    int64_t line0, Lb;
} cpu_block;

typedef struct cpu_plan {
    int x512;            /* x sweep through the AVX-512 kernels */
    int64_t L;           /* lines per block, at most */
    int row_cut;         /* blocks end at row ends (every n1 lines): their lines are one contiguous run */
    int nthreads;
    int64_t nblocks;
    cpu_block *blocks;   /* share t's blocks are blocks[first[t] .. first[t+1]-1] */
    int64_t *first;
    int64_t *taken;      /* taken[t * TRIDI_CPU_TAKEN_PAD]: blocks of share t handed out so far */
    int64_t log_rows;    /* per block: x lines (x sweeps) or unknowns (y/z) */
    int64_t log_pitch;   /* elements per log row: the row's length padded to 64 bytes */
    int64_t npad;        /* unknowns per line rounded up to 8 (rows of W and G) */
} cpu_plan;

static cpu_plan make_plan(const tridi_tuning *tuning, const tridi_problem *p, int nthreads)
{
    cpu_plan c;
    c.x512 = p->axis == TRIDI_AXIS_X && x_avx512_usable(tuning);
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
static int64_t thread_blocks(const tridi_problem *p, const cpu_plan *c, int t, cpu_block *out)
{
    const int64_t N = p->nlines, T = c->nthreads;
    /* t*N/T without forming t*N, which could overflow for huge N */
    int64_t a = N / T * t + N % T * t / T;
    const int64_t b = N / T * (t + 1) + N % T * (t + 1) / T;
    int64_t k = 0;
    while (a < b) {
        const int64_t row_end = c->row_cut ? (a / p->n1 + 1) * p->n1 : b, e = row_end < b ? row_end : b;
        const int64_t len = e - a, pieces = (len + c->L - 1) / c->L, q = len / pieces, r = len % pieces;
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
static char *block_log_at(const cpu_plan *c, int64_t b, char *log, size_t es)
{
    return log + (size_t)b * (size_t)(c->log_rows * c->log_pitch) * es;
}

/* Saves the block's cells of x to lg (save = 1), with non-temporal stores when `stream`, or puts them back
 * (save = 0). lg holds one row per line (x sweeps) or per unknown (y/z), c->log_pitch elements apart. */
static void block_log(const tridi_problem *p, const cpu_plan *c, int64_t b, char *lg, int save, int stream)
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
static size_t block_save_bytes(const tridi_problem *p, const cpu_plan *c)
{
    return (size_t)(c->log_rows * c->log_pitch) * tridi_dtype_size(p->arrays.x_type);
}

/* Per-thread workspace: W and G, then the x sweep's tile or transposed inputs and answers, then (under
 * ON_ERROR_LINES) the block's own save of x. */
static size_t workspace_bytes(const tridi_problem *p, const cpu_plan *c, int lines)
{
    size_t doubles = 2 * (size_t)(c->npad * c->L);
    size_t extra = 0;
    if (c->x512)
        doubles += 4 * 8 * 16;
    else if (p->axis == TRIDI_AXIS_X)
        doubles += 4 * (size_t)(p->n * c->L), extra = (size_t)(p->n * c->L) * tridi_dtype_size(p->arrays.x_type);
    extra = (extra + 63) / 64 * 64;
    if (lines)
        extra += block_save_bytes(p, c);
    return (doubles * sizeof(double) + extra + 63) / 64 * 64;
}

/* Where a block's old x goes before the fast path overwrites it. Under ON_ERROR_CALL: its place in the
 * call's undo log, streamed (kept until every line of the call is known good); `written` marks the
 * blocks to restore. Under ON_ERROR_LINES: the thread's own save, reused block after block and so kept
 * in cache, only to put back the lines of this block that the careful path then finds failing (no
 * call-wide log: docs/decisions/007). */
typedef struct block_save {
    char *at;
    int lines;
} block_save;

/* Re-solves block b line by line on the careful path (solve_line), after the fast path flagged it. Under
 * ON_ERROR_CALL the block's old x is first logged (unless already); its first failing line ends the
 * block. Under ON_ERROR_LINES every line is tried: those that fail are left untouched. Returns the
 * number of failing lines, *fail naming the lowest. */
static int64_t careful_block(const tridi_problem *p, const cpu_plan *c, int64_t b, double *W, double *G,
                             block_save sv, unsigned char *written, block_failure *fail)
{
    if (!sv.lines && !written[b]) {
        block_log(p, c, b, sv.at, 1, 1);
        written[b] = 1;
    }
    const int64_t line0 = c->blocks[b].line0, Lb = c->blocks[b].Lb;
    int64_t nfailed = 0;
    for (int64_t l = 0; l < Lb; ++l) {
        block_failure f = {l, {0, TRIDI_FAIL_NONE}};
        if (solve_line(p, tridi_line_offset(p, line0 + l), W, G, &f.f)) {
            if (!nfailed++)
                *fail = f;
            if (!sv.lines)
                break;
        }
    }
    return nfailed;
}

/* Solves block b: the fast path (vector forward sweep; if no value went non-finite, the old x saved and
 * the back substitution into x); a block it flags goes to the careful path, after the fast path's
 * answers, if any, are put back. Returns the number of failing lines (0: all answered), *fail naming the
 * lowest (line within the block). */
static int64_t solve_block(const tridi_problem *p, const cpu_plan *c, int64_t b, char *ws, block_save sv,
                           unsigned char *written, block_failure *fail)
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
    const int mode = kernel_arith(p);
    int bad;
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
        bad = xforward16(&xr, p->combo, mode, x, n, W, G, G + c->npad * c->L);
        if (!bad) {
            block_log(p, c, b, sv.at, 1, stream);
            written[b] = 1;
            if (!xbackward16(&xr, x, xes == 8, Lb, n, W, G))
                return 0;
            block_log(p, c, b, sv.at, 0, 0); /* the fast path's answers, put back */
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
            transpose_in(a->lower, a->lower_type, off, ls, n, Lb, tD);
            transpose_in(a->diag, a->diag_type, off, ls, n, Lb, tE);
            transpose_in(a->upper, a->upper_type, off, ls, n, Lb, tF);
            transpose_in(a->rhs, a->rhs_type, off, ls, n, Lb, tR);
            bad = forward_block(p, mode, 1, tD, tE, tF, tR, n, Lb, Lb, 1, 0, W, G);
            out = tR + n * c->L; /* answers [m][l], scattered into x rows below */
            xs = Lb;
        } else {
            if (fast)
                bad = forward_fast((const float *)a->lower + off, (const float *)a->diag + off,
                                   (const float *)a->upper + off, (const float *)a->rhs + off, n, Lb, s,
                                   (float *)W, (float *)G);
            else {
                const size_t le = tridi_dtype_size(a->lower_type), de = tridi_dtype_size(a->diag_type);
                bad = forward_block(p, mode, 0, (const char *)a->lower + (size_t)off * le,
                                    (const char *)a->diag + (size_t)off * de, (const char *)a->upper + (size_t)off * le,
                                    (const char *)a->rhs + (size_t)off * le, n, Lb, s, ls, 1, W, G);
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
                block_log(p, c, b, sv.at, 1, 1);
            written[b] = !sv.lines || !x_axis;
            const int64_t lp = c->log_pitch * (int64_t)xes;
            char *lg = x_axis ? NULL : sv.at;
            if (fast)
                bad = backward_fast((const float *)W, (const float *)G, out, n, Lb, xs, lg, lp, stream);
            else
                bad = xes == 8 ? backward_f64(W, G, out, n, Lb, xs, lg, lp, stream)
                               : backward_f32(W, G, out, n, Lb, xs, lg, lp, stream);
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
                block_log(p, c, b, sv.at, 0, 0); /* the fast path's answers, put back */
        }
    }
    return careful_block(p, c, b, W, G, sv, written, fail);
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

static int threads_that_pay(const tridi_tuning *tuning, const tridi_problem *p, int requested)
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

/* A call's scratch, one allocation kept by the context: per-thread workspaces, the undo log (the old x
 * of every block, at a fixed place per block; ON_ERROR_CALL only), the block list, and one written flag
 * per block. The plan and these places follow from the problem, the thread count and the mode alone, so
 * that the rollback of a kept solve finds them again. */
typedef struct cpu_layout {
    cpu_plan c;
    int lines;
    size_t ws_bytes, log_bytes, need;
    char *log;              /* set by place() */
    unsigned char *written; /* set by place() */
} cpu_layout;

static cpu_layout layout_of(const tridi_tuning *tuning, const tridi_problem *p, int nthreads, int lines)
{
    cpu_layout y;
    y.c = make_plan(tuning, p, nthreads);
    for (int t = 0; t < nthreads; ++t)
        y.c.nblocks += thread_blocks(p, &y.c, t, NULL);
    y.lines = lines;
    y.ws_bytes = workspace_bytes(p, &y.c, lines);
    y.log_bytes = lines ? 0 : (size_t)y.c.nblocks * block_save_bytes(p, &y.c);
    const size_t list_bytes = (size_t)y.c.nblocks * sizeof(cpu_block) + (size_t)(nthreads + 1) * sizeof(int64_t) +
                              (size_t)nthreads * TRIDI_CPU_TAKEN_PAD * sizeof(int64_t);
    y.need = ((size_t)nthreads * y.ws_bytes + y.log_bytes + list_bytes + (size_t)y.c.nblocks + 63) / 64 * 64;
    y.log = NULL;
    y.written = NULL;
    return y;
}

/* Points y's log, block list and written flags into scratch (at least y->need bytes). */
static void place(cpu_layout *y, char *scratch)
{
    y->log = scratch + (size_t)y->c.nthreads * y->ws_bytes; /* log rows are 64-byte multiples: what follows is aligned */
    y->c.blocks = (cpu_block *)(y->log + y->log_bytes);
    y->c.first = (int64_t *)(y->c.blocks + y->c.nblocks);
    y->c.taken = y->c.first + y->c.nthreads + 1;
    y->written = (unsigned char *)(y->c.taken + (size_t)y->c.nthreads * TRIDI_CPU_TAKEN_PAD);
}

/* Puts back the old x of every block that the call of layout y wrote. */
static void restore_written(const tridi_problem *p, cpu_layout *y)
{
    const cpu_plan *c = &y->c;
    const size_t es = tridi_dtype_size(p->arrays.x_type);
#pragma omp parallel for schedule(static) num_threads(c->nthreads)
    for (int64_t b = 0; b < c->nblocks; ++b)
        if (y->written[b])
            block_log(p, c, b, block_log_at(c, b, y->log, es), 0, 0);
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

/* Thread id's part of a call: the blocks of share id, then those left in the other shares (it also covers
 * the shares of threads that never join). A thread that wakes late finds its share taken by those already
 * running, instead of the whole call waiting for its share to start. */
static void solve_shares(void *arg, int id)
{
    solve_job *j = arg;
    const cpu_plan *c = j->c;
    char *ws = j->workspaces + (size_t)id * j->ws_bytes;
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
            block_failure fail = {-1, {0, TRIDI_FAIL_NONE}};
            block_save sv = {j->lines ? ws + j->own_save : block_log_at(c, b, j->log, j->xes), j->lines};
            const int64_t nf = solve_block(j->p, c, b, ws, sv, j->written, &fail);
            if (nf) {
                __atomic_fetch_add(&j->nfailed, nf, __ATOMIC_RELAXED);
                while (__atomic_exchange_n(&j->lock, 1, __ATOMIC_ACQUIRE))
                    ;
                if (line0 + fail.line_in_block < j->best_line) {
                    __atomic_store_n(&j->best_line, line0 + fail.line_in_block, __ATOMIC_RELAXED);
                    j->best = fail;
                }
                __atomic_store_n(&j->lock, 0, __ATOMIC_RELEASE);
            }
        }
    }
    stream_fence(); /* the log's streamed stores, visible before any thread restores from it */
}

/* Runs a call's shares on nthreads threads: the context's pool (docs/decisions/028), made the first time a
 * call wants more threads than it has; an OpenMP team per call with TRIDI_CPU_POOL=0 or where no pool can
 * be started. Inside an active OpenMP region that allows no more levels the caller solves alone, as a
 * nested parallel region would. */
static void run_job(tridi_context ctx, solve_job *job, int nthreads)
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
        tridi_cpu_pool_run(ctx->cpu->pool, solve_shares, job, nthreads);
        return;
    }
#pragma omp parallel num_threads(nthreads)
    solve_shares(job, omp_get_thread_num());
}

/* keep: the first phase of ON_ERROR_CALL (whatever p says): the undo log is kept, whatever the status,
 * for tridi_cpu_commit or tridi_cpu_rollback. Otherwise ON_ERROR_LINES, in one phase. */
static tridi_status cpu_solve(tridi_context ctx, const tridi_problem *p, int keep)
{
    const int requested = tridi_cpu_threads(ctx);
    const int nthreads = threads_that_pay(&ctx->tuning, p, requested);
    const int lines = !keep;
    ctx->cpu->kept = 0; /* this call reuses the scratch that a kept solve's log lives in */
    cpu_layout y = layout_of(&ctx->tuning, p, nthreads, lines);
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
    place(&y, ctx->cpu->scratch);
    cpu_plan c = y.c;
    const size_t ws_bytes = y.ws_bytes, xes = tridi_dtype_size(p->arrays.x_type);
    const size_t own_save = ws_bytes - block_save_bytes(p, &c); /* offset of a thread's save (LINES) */
    char *workspaces = ctx->cpu->scratch, *log = y.log;
    unsigned char *written = y.written;
    int64_t k = 0;
    for (int t = 0; t < nthreads; ++t) {
        c.first[t] = k;
        k += thread_blocks(p, &c, t, c.blocks + k);
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
    if (p->on_error == TRIDI_ON_ERROR_LINES)
        return cpu_solve(ctx, p, 0);
    const tridi_status s = cpu_solve(ctx, p, 1);
    if (s)
        tridi_cpu_rollback(ctx);
    else
        tridi_cpu_commit(ctx);
    return s;
}

tridi_status tridi_cpu_solve_keep(tridi_context ctx, const tridi_problem *p) { return cpu_solve(ctx, p, 1); }

void tridi_cpu_commit(tridi_context ctx) { ctx->cpu->kept = 0; }

void tridi_cpu_rollback(tridi_context ctx)
{
    if (!ctx->cpu->kept) /* the solve failed before it wrote x */
        return;
    ctx->cpu->kept = 0;
    cpu_layout y = layout_of(&ctx->tuning, &ctx->cpu->kept_p, ctx->cpu->kept_threads, 0);
    place(&y, ctx->cpu->scratch);
    restore_written(&ctx->cpu->kept_p, &y);
}
