/* The CPU's y/z block kernels in MOHID's forms and FAST's one reciprocal (and x blocks on transposed
 * copies): the forward sweep, the back substitution, and the two interleaved row by row, one block's
 * answers while the next block's forward sweep waits on the divider (decision 066). Each is a loop
 * around one row of a sweep; compiled with -ffp-contract=off, rounding as MOHID's build (decision 040). */
#include "cpu_internal.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define TRIDI_CPU_INLINE static inline __attribute__((always_inline))
/* GCC would split a save out of the answers' loop into a memcpy call per row (decision 054); every
 * function here carries the option, so that the rows inline into each kernel. */
#if defined(__GNUC__) && !defined(__clang__)
#define TRIDI_NO_MEMCPY_SPLIT __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define TRIDI_NO_MEMCPY_SPLIT
#endif
#define TRIDI_ROW TRIDI_CPU_INLINE TRIDI_NO_MEMCPY_SPLIT

/* The block kernels' number type (src/thomas_core.h): tridi_exact's operations. Their check (decisions
 * 054, 066): a value's bits with the sign cleared, as a signed integer, order finite magnitudes as the
 * values and put Inf and NaN above them all, so a running maximum says whether a value went non-finite
 * (>= TRIDI_CPU_NONFINITE) and, for W and G, whether BOUNDED_WRITE holds (decision 059). A row is finite
 * iff its pivot, W and G are (flag_pivot in src/thomas_core.h). */
#define TRIDI_CPU_NONFINITE INT64_C(0x7ff0000000000000)
TRIDI_CPU_INLINE int64_t tridi_cpu_bits(double v)
{
    int64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}
TRIDI_CPU_INLINE int64_t tridi_cpu_mag(int64_t acc, double v)
{
    const int64_t m = tridi_cpu_bits(v) & INT64_MAX;
    return m > acc ? m : acc;
}
TRIDI_CPU_INLINE double tridi_cpu_add(double a, double b) { return tridi_exact_add(a, b); }
TRIDI_CPU_INLINE double tridi_cpu_sub(double a, double b) { return tridi_exact_sub(a, b); }
TRIDI_CPU_INLINE double tridi_cpu_mul(double a, double b) { return tridi_exact_mul(a, b); }
TRIDI_CPU_INLINE double tridi_cpu_div(double a, double b) { return tridi_exact_div(a, b); }
TRIDI_CPU_INLINE double tridi_cpu_neg(double a) { return tridi_exact_neg(a); }
TRIDI_CPU_INLINE double tridi_cpu_zero(void) { return 0.0; }
TRIDI_CPU_INLINE double tridi_cpu_one(void) { return 1.0; }
TRIDI_CPU_INLINE double tridi_cpu_round32(double a) { return tridi_exact_round32(a); }
TRIDI_CPU_INLINE double tridi_cpu_div32(double a, double b) { return tridi_exact_div32(a, b); }
#define TRIDI_CPU_MAG3(acc, a, b, c) tridi_cpu_mag(tridi_cpu_mag(tridi_cpu_mag(acc, a), b), c)
TRIDI_CPU_INLINE int64_t tridi_cpu_flag3(int64_t acc, double a, double b, double c) { return TRIDI_CPU_MAG3(acc, a, b, c); }
TRIDI_CPU_INLINE int64_t tridi_cpu_flag4(int64_t acc, double a, double b, double c, double d)
{
    return tridi_cpu_mag(TRIDI_CPU_MAG3(acc, a, b, c), d);
}
TRIDI_THOMAS_STEPS(TRIDI_CPU_INLINE, tridi_cpu, double, int64_t)

/* Row m of a forward sweep of Lb lines: element (m, l) of an input sits at [m*s + l*ls]; W and G get
 * [m][Lb] in double (MOHID's VECW, VECG). With `prefetch` (ls == 1) the rows TRIDI_CPU_PREFETCH_YZ
 * unknowns ahead are prefetched. FORM (src/thomas_core.h): DIV, NEWTYPE (float upper values only) or
 * RCP, a constant of each instance. mx: the running maxima of the pivots', W's and G's magnitudes. */
#define DEFINE_FORWARD_ROW(NAME, TL, TD, TU, TR, FORM)                                                         \
    TRIDI_ROW void NAME(const TL *restrict D, const TD *restrict E, const TU *restrict F, const TR *restrict R, \
                        int64_t m, int64_t n, int64_t Lb, int64_t s, int64_t ls, int prefetch,                 \
                        double *restrict W, double *restrict G, int64_t *restrict mx)                          \
    {                                                                                                          \
        int64_t pm = mx[0], wm = mx[1], gm = mx[2];                                                            \
        const TL *Dm = D + m * s;                                                                              \
        const TD *Em = E + m * s;                                                                              \
        const TU *Fm = F + m * s;                                                                              \
        const TR *Rm = R + m * s;                                                                              \
        double *Wm = W + m * Lb, *Gm = G + m * Lb;                                                             \
        if (m == 0) {                                                                                          \
            for (int64_t l = 0; l < Lb; ++l) {                                                                 \
                const double e = (double)Em[l * ls];                                                           \
                double w, g;                                                                                   \
                tridi_cpu_first(e, (double)Fm[l * ls], (double)Rm[l * ls], n == 1, &w, &g);                    \
                Wm[l] = w;                                                                                     \
                Gm[l] = g;                                                                                     \
                pm = tridi_cpu_mag(pm, e);                                                                     \
                wm = tridi_cpu_mag(wm, w);                                                                     \
                gm = tridi_cpu_mag(gm, g);                                                                     \
            }                                                                                                  \
        } else {                                                                                               \
            if (prefetch && m + TRIDI_CPU_PREFETCH_YZ < n) {                                                   \
                const int64_t ahead = TRIDI_CPU_PREFETCH_YZ * s;                                               \
                prefetch_run(Dm + ahead, (size_t)Lb * sizeof(TL));                                             \
                prefetch_run(Em + ahead, (size_t)Lb * sizeof(TD));                                             \
                prefetch_run(Fm + ahead, (size_t)Lb * sizeof(TU));                                             \
                prefetch_run(Rm + ahead, (size_t)Lb * sizeof(TR));                                             \
            }                                                                                                  \
            const double *Wp = Wm - Lb, *Gp = Gm - Lb;                                                         \
            if (m < n - 1) {                                                                                   \
                for (int64_t l = 0; l < Lb; ++l) {                                                             \
                    const double d = (double)Dm[l * ls];                                                       \
                    double den, w, g;                                                                          \
                    tridi_cpu_step(FORM, d, (double)Em[l * ls], (double)Fm[l * ls], (double)Rm[l * ls], Wp[l], \
                                   Gp[l], 0, &den, &w, &g);                                                    \
                    Wm[l] = w;                                                                                 \
                    Gm[l] = g;                                                                                 \
                    pm = tridi_cpu_mag(pm, den);                                                               \
                    wm = tridi_cpu_mag(wm, w);                                                                 \
                    gm = tridi_cpu_mag(gm, g);                                                                 \
                }                                                                                              \
            } else { /* the last unknown: its upper value is not read */                                       \
                for (int64_t l = 0; l < Lb; ++l) {                                                             \
                    const double d = (double)Dm[l * ls];                                                       \
                    double den, w, g;                                                                          \
                    tridi_cpu_step(FORM, d, (double)Em[l * ls], 0.0, (double)Rm[l * ls], Wp[l], Gp[l], 1, &den, \
                                   &w, &g);                                                                    \
                    Gm[l] = g;                                                                                 \
                    pm = tridi_cpu_mag(pm, den);                                                               \
                    gm = tridi_cpu_mag(gm, g);                                                                 \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
        mx[0] = pm;                                                                                            \
        mx[1] = wm;                                                                                            \
        mx[2] = gm;                                                                                            \
    }

/* A forward sweep's verdict: nonzero if any value went non-finite (the caller then locates the failure);
 * *bounded: every |W| < 1 and |G| < glim (BOUNDED_WRITE). */
TRIDI_ROW int forward_verdict(const int64_t mx[3], double glim, int *bounded)
{
    *bounded = mx[1] < tridi_cpu_bits(1.0) && mx[2] < tridi_cpu_bits(glim);
    return mx[0] >= TRIDI_CPU_NONFINITE || mx[1] >= TRIDI_CPU_NONFINITE || mx[2] >= TRIDI_CPU_NONFINITE;
}

/* Row m of a back substitution of Lb lines from W and G: answer (m, l) to x[m*xs + l], rounded to TX
 * before it feeds unknown m-1 (a Fortran real(4) ANSWER), read back from the x row just written (in L1).
 * With a log (y/z), the x row is saved there just before it is overwritten (row m at log + m * lp): the
 * call's undo log, or a thread's block save (LINES) inside the answers' loop (decision 054). prefetch: x
 * rows a few ahead. Returns each answer * 0's bits OR-ed (decision 061): NF's field set if one is not
 * finite. */
#define TRIDI_BACK_NF(TX, v) back_bits_##TX((v) * (TX)0)
TRIDI_CPU_INLINE uint32_t back_bits_float(float v) { uint32_t u; memcpy(&u, &v, sizeof u); return u; }
TRIDI_CPU_INLINE uint64_t back_bits_double(double v) { return (uint64_t)tridi_cpu_bits(v); }
#define DEFINE_BACKWARD_ROW(NAME, TX, TB)                                                                      \
    TRIDI_ROW TB NAME(const double *restrict W, const double *restrict G, TX *restrict x, int64_t m, int64_t n, \
                      int64_t Lb, int64_t xs, char *log, int64_t lp, int stream, int prefetch)                 \
    {                                                                                                          \
        TB bad = 0;                                                                                            \
        TX *xm = x + m * xs;                                                                                   \
        TX *restrict sv = NULL; /* the row's own save, filled in the loops below */                            \
        const double *Wm = W + m * Lb, *Gm = G + m * Lb;                                                       \
        if (prefetch && m >= TRIDI_CPU_PREFETCH_YZ)                                                            \
            prefetch_run(xm - TRIDI_CPU_PREFETCH_YZ * xs, (size_t)Lb * sizeof(TX));                            \
        if (log) {                                                                                             \
            if (stream)                                                                                        \
                stream_copy(log + m * lp, xm, (size_t)Lb * sizeof(TX));                                        \
            else                                                                                               \
                sv = (TX *)(void *)(log + m * lp);                                                             \
        }                                                                                                      \
        if (m == n - 1) {                                                                                      \
            for (int64_t l = 0; l < Lb; ++l) {                                                                 \
                TX v = (TX)Gm[l];                                                                              \
                if (sv)                                                                                        \
                    sv[l] = xm[l];                                                                             \
                xm[l] = v;                                                                                     \
                bad |= TRIDI_BACK_NF(TX, v);                                                                   \
            }                                                                                                  \
            return bad;                                                                                        \
        }                                                                                                      \
        const TX *xn = xm + xs;                                                                                \
        if (sv)                                                                                                \
            for (int64_t l = 0; l < Lb; ++l) {                                                                 \
                TX v = (TX)tridi_exact_back(Wm[l], (double)xn[l], Gm[l]);                                      \
                sv[l] = xm[l];                                                                                 \
                xm[l] = v;                                                                                     \
                bad |= TRIDI_BACK_NF(TX, v);                                                                   \
            }                                                                                                  \
        else                                                                                                   \
            for (int64_t l = 0; l < Lb; ++l) {                                                                 \
                TX v = (TX)tridi_exact_back(Wm[l], (double)xn[l], Gm[l]);                                      \
                xm[l] = v;                                                                                     \
                bad |= TRIDI_BACK_NF(TX, v);                                                                   \
            }                                                                                                  \
        return bad;                                                                                            \
    }

DEFINE_BACKWARD_ROW(back_row_float, float, uint32_t)
DEFINE_BACKWARD_ROW(back_row_double, double, uint64_t)
#define TRIDI_NF_float UINT32_C(0x7f800000)
#define TRIDI_NF_double ((uint64_t)TRIDI_CPU_NONFINITE)

/* The kernels of one instance: the forward sweep and (PIPELINED) the forward sweep interleaved with the
 * back substitution of the block before into x of type TX: row m of this block's sweep, then row n-1-m
 * of the other's (bW, bG, its bLb lines; its save in log under LINES). The two touch disjoint lines, so
 * their rows are independent and the second's loads and stores proceed under the first's divisions.
 * Returns the forward sweep's verdict, *back_bad the back substitution's. */
#define DEFINE_FORWARD(SUFFIX, TL, TD, TU, TR, FORM)                                                           \
    DEFINE_FORWARD_ROW(forward_row_##SUFFIX, TL, TD, TU, TR, FORM)                                             \
    TRIDI_VECTOR_CLONES TRIDI_NO_MEMCPY_SPLIT static int forward_##SUFFIX(                                     \
        const TL *restrict D, const TD *restrict E, const TU *restrict F, const TR *restrict R, int64_t n,     \
        int64_t Lb, int64_t s, int64_t ls, int prefetch, double glim, double *restrict W, double *restrict G,  \
        int *bounded)                                                                                          \
    {                                                                                                          \
        int64_t mx[3] = {0, 0, 0};                                                                             \
        for (int64_t m = 0; m < n; ++m)                                                                        \
            forward_row_##SUFFIX(D, E, F, R, m, n, Lb, s, ls, prefetch, W, G, mx);                             \
        return forward_verdict(mx, glim, bounded);                                                             \
    }
#define DEFINE_PIPELINED(SUFFIX, TL, TD, TU, TR, FORM, TX, TB)                                                 \
    DEFINE_FORWARD(SUFFIX, TL, TD, TU, TR, FORM)                                                               \
    TRIDI_VECTOR_CLONES TRIDI_NO_MEMCPY_SPLIT static int pipelined_##SUFFIX(                                   \
        const TL *restrict D, const TD *restrict E, const TU *restrict F, const TR *restrict R, int64_t n,     \
        int64_t Lb, int64_t s, int64_t ls, double glim, double *restrict W, double *restrict G, int *bounded,  \
        const double *restrict bW, const double *restrict bG, TX *restrict x, int64_t bLb, int64_t xs,         \
        char *log, int64_t lp, int *back_bad)                                                                  \
    {                                                                                                          \
        int64_t mx[3] = {0, 0, 0};                                                                             \
        TB bad = 0;                                                                                            \
        for (int64_t m = 0; m < n; ++m) {                                                                      \
            forward_row_##SUFFIX(D, E, F, R, m, n, Lb, s, ls, 1, W, G, mx);                                    \
            bad |= back_row_##TX(bW, bG, x, n - 1 - m, n, bLb, xs, log, lp, 0, 1);                             \
        }                                                                                                      \
        *back_bad = (bad & TRIDI_NF_##TX) != 0;                                                                \
        return forward_verdict(mx, glim, bounded);                                                             \
    }

DEFINE_PIPELINED(f32_div, float, float, float, float, TRIDI_FORM_DIV, float, uint32_t)
DEFINE_PIPELINED(f32_new, float, float, float, float, TRIDI_FORM_NEWTYPE, float, uint32_t)
DEFINE_PIPELINED(f32_rcp, float, float, float, float, TRIDI_FORM_RCP, float, uint32_t)
DEFINE_PIPELINED(f64_div, double, double, double, double, TRIDI_FORM_DIV, double, uint64_t)
DEFINE_PIPELINED(f64_rcp, double, double, double, double, TRIDI_FORM_RCP, double, uint64_t)
DEFINE_PIPELINED(mix_div, float, double, float, float, TRIDI_FORM_DIV, float, uint32_t)
DEFINE_PIPELINED(mix_new, float, double, float, float, TRIDI_FORM_NEWTYPE, float, uint32_t)
DEFINE_PIPELINED(mix_rcp, float, double, float, float, TRIDI_FORM_RCP, float, uint32_t)
/* x-axis blocks without AVX-512 run on transposed double copies (float values widened exactly: the NewType
 * form's float division of upper is still MOHID's). */
DEFINE_FORWARD(t_div, double, double, double, double, TRIDI_FORM_DIV)
DEFINE_FORWARD(t_new, double, double, double, double, TRIDI_FORM_NEWTYPE)
DEFINE_FORWARD(t_rcp, double, double, double, double, TRIDI_FORM_RCP)

/* The instance of p's types and arithmetic `mode` (t: the transposed copies), as K's arguments say. */
#define TRIDI_BY_TYPES(K, ARGS)                                                                                \
    do {                                                                                                       \
        if (p->combo == TRIDI_COMBO_F32)                                                                       \
            return mode == TRIDI_FORM_RCP       ? K(f32_rcp) ARGS                                              \
                   : mode == TRIDI_FORM_NEWTYPE ? K(f32_new) ARGS                                              \
                                                : K(f32_div) ARGS;                                             \
        if (p->combo == TRIDI_COMBO_F64)                                                                       \
            return mode == TRIDI_FORM_RCP ? K(f64_rcp) ARGS : K(f64_div) ARGS;                                  \
        return mode == TRIDI_FORM_RCP       ? K(mix_rcp) ARGS                                                  \
               : mode == TRIDI_FORM_NEWTYPE ? K(mix_new) ARGS                                                  \
                                            : K(mix_div) ARGS;                                                 \
    } while (0)

int tridi_cpu_forward_block(const tridi_problem *p, int mode, int t, const void *D, const void *E, const void *F,
                            const void *R, int64_t n, int64_t Lb, int64_t s, int64_t ls, int prefetch, double glim,
                            double *W, double *G, int *bounded)
{
#define TRIDI_FWD(SUFFIX) forward_##SUFFIX
#define TRIDI_FWD_ARGS                                                                                         \
    (D, E, F, R, n, Lb, s, ls, prefetch, glim, W, G, bounded)
    if (t) /* transposed copies, all double */
        return mode == TRIDI_FORM_RCP       ? forward_t_rcp TRIDI_FWD_ARGS
               : mode == TRIDI_FORM_NEWTYPE ? forward_t_new TRIDI_FWD_ARGS
                                            : forward_t_div TRIDI_FWD_ARGS;
    TRIDI_BY_TYPES(TRIDI_FWD, TRIDI_FWD_ARGS);
#undef TRIDI_FWD
#undef TRIDI_FWD_ARGS
}

int tridi_cpu_pipelined_block(const tridi_problem *p, int mode, const void *D, const void *E, const void *F,
                              const void *R, int64_t n, int64_t Lb, int64_t s, int64_t ls, double glim, double *W,
                              double *G, int *bounded, const double *bW, const double *bG, void *x, int64_t bLb,
                              int64_t xs, char *log, int64_t lp, int *back_bad)
{
#define TRIDI_PIPE(SUFFIX) pipelined_##SUFFIX
#define TRIDI_PIPE_ARGS (D, E, F, R, n, Lb, s, ls, glim, W, G, bounded, bW, bG, x, bLb, xs, log, lp, back_bad)
    TRIDI_BY_TYPES(TRIDI_PIPE, TRIDI_PIPE_ARGS);
#undef TRIDI_PIPE
#undef TRIDI_PIPE_ARGS
}

/* The clones stay static (their ifunc resolvers would be exported otherwise); other files call these. */
#define DEFINE_BACKWARD(TX, TB)                                                                                \
    TRIDI_VECTOR_CLONES TRIDI_NO_MEMCPY_SPLIT static int backward_##TX(                                        \
        const double *restrict W, const double *restrict G, TX *restrict x, int64_t n, int64_t Lb, int64_t xs, \
        char *log, int64_t lp, int stream, int prefetch)                                                       \
    {                                                                                                          \
        TB bad = 0;                                                                                            \
        for (int64_t m = n - 1; m >= 0; --m)                                                                   \
            bad |= back_row_##TX(W, G, x, m, n, Lb, xs, log, lp, stream, prefetch);                            \
        return (bad & TRIDI_NF_##TX) != 0;                                                                     \
    }
DEFINE_BACKWARD(float, uint32_t)
DEFINE_BACKWARD(double, uint64_t)

int tridi_cpu_backward_f32(const double *W, const double *G, float *x, int64_t n, int64_t Lb, int64_t xs, char *log,
                           int64_t lp, int stream, int prefetch)
{
    return backward_float(W, G, x, n, Lb, xs, log, lp, stream, prefetch);
}

int tridi_cpu_backward_f64(const double *W, const double *G, double *x, int64_t n, int64_t Lb, int64_t xs,
                           char *log, int64_t lp, int stream, int prefetch)
{
    return backward_double(W, G, x, n, Lb, xs, log, lp, stream, prefetch);
}
