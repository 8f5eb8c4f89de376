/* The Thomas core: the per-unknown steps of the recurrence (TRIDI_THOMAS_STEPS, over a number type), the
 * checks that decide whether an unknown fails and the one failure encoding with its messages, written once
 * for the CPU backend, the pivoting pass, the MPI cut solves and (compiled by nvcc) the CUDA kernels
 * (decisions 051, 056). tridi_exact_* is MOHID's arithmetic (decision 040): double pivots, W and G, two
 * divisions, no fused multiply-add (_rn intrinsics on the device; -ffp-contract=off on the host), every
 * answer rounded to its type before it feeds the next. An unknown fails, in this order, on a non-finite
 * input, a zero pivot, or a non-finite pivot, W or G; an answer when it is not finite in its type. */
#ifndef TRIDI_THOMAS_CORE_H
#define TRIDI_THOMAS_CORE_H

#include "tridi_internal.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define TRIDI_HD static __host__ __device__ __forceinline__
#elif defined(__GNUC__) || defined(__clang__)
#define TRIDI_HD static inline __attribute__((always_inline))
#else
#define TRIDI_HD static inline
#endif

/* One rounding each, never fused with a neighbour (docs/decisions/040). */
#if defined(__CUDA_ARCH__)
TRIDI_HD double tridi_exact_mul(double a, double b) { return __dmul_rn(a, b); }
TRIDI_HD double tridi_exact_add(double a, double b) { return __dadd_rn(a, b); }
TRIDI_HD double tridi_exact_sub(double a, double b) { return __dsub_rn(a, b); }
TRIDI_HD double tridi_exact_div(double a, double b) { return __ddiv_rn(a, b); }
TRIDI_HD float tridi_exact_fdiv(float a, float b) { return __fdiv_rn(a, b); }
/* 1/b refined as __ddiv_rn's own fast path refines it: its estimate's high word (low word 1), two Newton
 * steps (decision 079). */
TRIDI_HD double tridi_exact_div_y(double b)
{
    double r;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(b));
    r = __hiloint2double(__double2hiint(r), 1);
    double t = __fma_rn(-b, r, 1.0);
    t = __fma_rn(t, t, t);
    r = __fma_rn(r, t, r);
    return __fma_rn(r, __fma_rn(-b, r, 1.0), r);
}
/* a/b from y = tridi_exact_div_y(b) as __ddiv_rn's fast path forms it; *fast: __ddiv_rn's own range test
 * (a not tiny, the quotient not tiny, b finite) takes it, so that it is __ddiv_rn's result. q0_test: the
 * quotient's part asked of the first product q0 = a*y with a margin, q0 at least 2^-1021 and under 2^1016,
 * where q (within an ulp or two of q0) passes __ddiv_rn's own test; the test is then ready before q
 * (decision 103). */
TRIDI_HD double tridi_exact_div_by(double a, double b, double y, int q0_test, int *fast)
{
    const double q0 = __dmul_rn(a, y), q = __fma_rn(y, __fma_rn(-b, q0, a), q0);
    const double qt = q0_test ? q0 : q;
    const float t = fabsf(__fmaf_rn(0.0f, __int_as_float(__double2hiint(b)), __int_as_float(__double2hiint(qt))));
    *fast = fabsf(__int_as_float(__double2hiint(a))) >= 6.5827683646048100446e-37f &&
            (q0_test ? t >= 0x1p-128f && t < 0x1.ep+127f : t > 1.469367938527859385e-39f);
    return q;
}
/* Two quotients over one divisor, each __ddiv_rn's bits: the reciprocal made once, both quotients formed
 * before one test of both, so that the second does not wait on the first; __ddiv_rn where the fast path
 * does not hold (decision 079). q0_test: tridi_exact_div_by's. */
TRIDI_HD void tridi_exact_div2_tested(double a1, double a2, double b, int q0_test, double *q1, double *q2)
{
    const double y = tridi_exact_div_y(b);
    int f1, f2;
    *q1 = tridi_exact_div_by(a1, b, y, q0_test, &f1);
    *q2 = tridi_exact_div_by(a2, b, y, q0_test, &f2);
    if (__builtin_expect(!(f1 & f2), 0)) {
        *q1 = __ddiv_rn(a1, b);
        *q2 = __ddiv_rn(a2, b);
    }
}
#else
TRIDI_HD double tridi_exact_mul(double a, double b) { return a * b; }
TRIDI_HD double tridi_exact_add(double a, double b) { return a + b; }
TRIDI_HD double tridi_exact_sub(double a, double b) { return a - b; }
TRIDI_HD double tridi_exact_div(double a, double b) { return a / b; }
TRIDI_HD float tridi_exact_fdiv(float a, float b) { return a / b; }
TRIDI_HD void tridi_exact_div2_tested(double a1, double a2, double b, int q0_test, double *q1, double *q2)
{
    (void)q0_test; /* the host's division has no test */
    *q1 = a1 / b;
    *q2 = a2 / b;
}
#endif
/* Two quotients over one divisor in MOHID's arithmetic, the device's test asked of the quotient. */
TRIDI_HD void tridi_exact_div2(double a1, double a2, double b, double *q1, double *q2)
{
    tridi_exact_div2_tested(a1, a2, b, 0, q1, q2);
}

/* Why an unknown (or a line) fails. The numbers are stable: device code writes them into failure records
 * read back by the host. */
typedef enum tridi_fail_kind {
    TRIDI_FAIL_NONE = 0,
    TRIDI_FAIL_NONFINITE_DIAG = 1,
    TRIDI_FAIL_NONFINITE_LOWER = 2,
    TRIDI_FAIL_NONFINITE_UPPER = 3,
    TRIDI_FAIL_NONFINITE_RHS = 4,
    TRIDI_FAIL_ZERO_PIVOT = 5,           /* diag + lower*w == 0 */
    TRIDI_FAIL_ELIMINATION_OVERFLOW = 6, /* pivot, W or G not finite: the pivot before was too small */
    TRIDI_FAIL_ANSWER_OVERFLOW = 7,      /* an answer not finite in its storage type */
    TRIDI_FAIL_SINGULAR = 8,             /* zero pivot even with partial pivoting (tridi_config.pivoting) */
    TRIDI_FAIL_UNSTABLE = 9,             /* growth past the pivot check's limit (tridi_config.pivoting) */
    TRIDI_FAIL_F32_TRANSFER = 10,        /* a double input past float's range (CUDA allow_f32_transfer) */
    TRIDI_FAIL_UNLOCATED = 11,           /* a kernel flagged a line whose diagnosis finds no failure */
    TRIDI_FAIL_KINDS = 12                /* number of kinds */
} tridi_fail_kind;

/* A line's failure: the unknown (0-based along the line) and the kind. Two 8-byte fields, no padding,
 * so that a device copy of it comes back whole. */
typedef struct tridi_thomas_fail {
    int64_t m;
    int64_t kind; /* tridi_fail_kind */
} tridi_thomas_fail;

/* The status a failure kind is reported with. */
TRIDI_HD tridi_status tridi_fail_status(int64_t kind)
{
    switch (kind) {
    case TRIDI_FAIL_NONE: return TRIDI_SUCCESS;
    case TRIDI_FAIL_ZERO_PIVOT:
    case TRIDI_FAIL_SINGULAR: return TRIDI_ERROR_ZERO_PIVOT;
    case TRIDI_FAIL_UNSTABLE: return TRIDI_ERROR_UNSTABLE;
    case TRIDI_FAIL_NONFINITE_DIAG:
    case TRIDI_FAIL_NONFINITE_LOWER:
    case TRIDI_FAIL_NONFINITE_UPPER:
    case TRIDI_FAIL_NONFINITE_RHS:
    case TRIDI_FAIL_ELIMINATION_OVERFLOW:
    case TRIDI_FAIL_ANSWER_OVERFLOW:
    case TRIDI_FAIL_F32_TRANSFER: return TRIDI_ERROR_NONFINITE;
    default: return TRIDI_ERROR_INTERNAL;
    }
}

/* The words of the message (tridi_fail_numeric's `what`), the same on every backend. */
TRIDI_HD const char *tridi_fail_text(int64_t kind)
{
    switch (kind) {
    case TRIDI_FAIL_NONE: return "no failure";
    case TRIDI_FAIL_NONFINITE_DIAG: return "non-finite diag value";
    case TRIDI_FAIL_NONFINITE_LOWER: return "non-finite lower value";
    case TRIDI_FAIL_NONFINITE_UPPER: return "non-finite upper value";
    case TRIDI_FAIL_NONFINITE_RHS: return "non-finite rhs value";
    case TRIDI_FAIL_ZERO_PIVOT: return "zero pivot (diag + lower*w = 0)";
    case TRIDI_FAIL_ELIMINATION_OVERFLOW: return "overflow in the elimination (pivot too small)";
    case TRIDI_FAIL_ANSWER_OVERFLOW: return "the answer overflows its storage type";
    case TRIDI_FAIL_SINGULAR: return "zero pivot even with partial pivoting (the line's matrix is singular)";
    case TRIDI_FAIL_UNSTABLE: return "untrustworthy answer";
    case TRIDI_FAIL_F32_TRANSFER: return "a double input overflows float in the float transfer (allow_f32_transfer)";
    case TRIDI_FAIL_UNLOCATED: return "a failure flag without a failing value (please report)";
    default: return "unknown failure kind (please report)";
    }
}

/* Finite: NaN compares false. */
TRIDI_HD int tridi_thomas_finite(double v) { return fabs(v) <= DBL_MAX; }

/* The first non-finite coefficient of an unknown (diag, lower, upper, rhs), or TRIDI_FAIL_NONE. d and f
 * are 0 where they are not read (the line's first and last unknown). */
TRIDI_HD int tridi_thomas_check_inputs(double d, double e, double f, double r)
{
    return !tridi_thomas_finite(e)   ? TRIDI_FAIL_NONFINITE_DIAG
           : !tridi_thomas_finite(d) ? TRIDI_FAIL_NONFINITE_LOWER
           : !tridi_thomas_finite(f) ? TRIDI_FAIL_NONFINITE_UPPER
           : !tridi_thomas_finite(r) ? TRIDI_FAIL_NONFINITE_RHS
                                     : TRIDI_FAIL_NONE;
}

/* The verdict on one unknown of the forward sweep from its inputs, its pivot and its new W and G. A
 * non-finite pivot fails even where W and G come out finite (an infinite pivot gives W = G = 0, and the
 * answers would silently lose the unknowns before). */
TRIDI_HD int tridi_thomas_check_step(double d, double e, double f, double r, double den, double w, double g)
{
    const int k = tridi_thomas_check_inputs(d, e, f, r);
    if (k)
        return k;
    if (den == 0.0)
        return TRIDI_FAIL_ZERO_PIVOT;
    if (!tridi_thomas_finite(den) || !tridi_thomas_finite(w) || !tridi_thomas_finite(g))
        return TRIDI_FAIL_ELIMINATION_OVERFLOW;
    return TRIDI_FAIL_NONE;
}

/* ---- The steps, written once over a number type (docs/decisions/040, 051, 056) ----
 * TRIDI_THOMAS_STEPS(Q, N, T, A) defines them for a number type T whose operations, one rounding each,
 * are N##_add, _sub, _mul, _div, _neg, _zero(), _one(), _round32 (to float and back) and _div32 (both
 * operands rounded to float, divided in float, widened), with N##_flag3(A acc, T a, T b, T c) and
 * N##_flag4(acc, a, b, c, d): acc, marked when a value is not finite. Q: the functions' qualifiers.
 * TRIDI_THOMAS_STEPS_FUSED(Q, N, T, A) takes four more: N##_madd(a, b, c) = a*b + c, N##_nmadd(a, b, c)
 * = c - a*b and N##_rcp(a) = 1/a, which a fused type rounds once (the GPU's FAST arithmetic, decision 056),
 * and N##_div2(a1, a2, b, &q1, &q2), two quotients over one divisor rounded as _div rounds each;
 * TRIDI_THOMAS_STEPS defines them from the others (TRIDI_THOMAS_ROUNDED: a rounding per operation,
 * TRIDI_THOMAS_DIV2: two divisions; tridi_exact shares the reciprocal on the device). Instances: tridi_exact
 * (double, host and device, below), the CPU kernels' float lanes and AVX-512 vectors (src/cpu_kernels.c),
 * the GPU's fused FAST type (cuda/kernels/common.cuh). The forms of an unknown after the first: MOHID's
 * two divisions, MOHID's NewType pivot rounded to float with W divided in float, and FAST's one
 * reciprocal (divisions at both ends of the line). */
enum { TRIDI_FORM_DIV = 0, TRIDI_FORM_NEWTYPE = 1, TRIDI_FORM_RCP = 2 };

#define TRIDI_THOMAS_STEPS(Q, N, T, A)                                                                         \
    TRIDI_THOMAS_ROUNDED(Q, N, T)                                                                              \
    TRIDI_THOMAS_DIV2(Q, N, T)                                                                                 \
    TRIDI_THOMAS_STEPS_FUSED(Q, N, T, A)
#define TRIDI_THOMAS_ROUNDED(Q, N, T)                                                                          \
    Q T N##_madd(T a, T b, T c) { return N##_add(c, N##_mul(a, b)); }                                          \
    Q T N##_nmadd(T a, T b, T c) { return N##_sub(c, N##_mul(a, b)); }                                         \
    Q T N##_rcp(T a) { return N##_div(N##_one(), a); }
#define TRIDI_THOMAS_DIV2(Q, N, T)                                                                             \
    Q void N##_div2(T a1, T a2, T b, T *q1, T *q2)                                                             \
    {                                                                                                          \
        *q1 = N##_div(a1, b);                                                                                  \
        *q2 = N##_div(a2, b);                                                                                  \
    }

#define TRIDI_THOMAS_STEPS_FUSED(Q, N, T, A)                                                                   \
    /* The pivot of an unknown after the first: e + d*W(m-1). */                                               \
    Q T N##_pivot(T d, T e, T wp) { return N##_madd(d, wp, e); }                                               \
    /* MOHID's W: -f/den. */                                                                                   \
    Q T N##_wdiv(T f, T den) { return N##_div(N##_neg(f), den); }                                              \
    /* The line's first unknown, divided in every form: W = -f/e (0 on a line of one unknown), G = r/e. */     \
    Q void N##_first(T e, T f, T r, int last, T *w, T *g)                                                      \
    {                                                                                                          \
        *w = last ? N##_zero() : N##_wdiv(f, e);                                                               \
        *g = N##_div(r, e);                                                                                    \
    }                                                                                                          \
    /* An unknown after the first in `form` (a constant) with a spike column (the cut solve's left neighbour   \
     * kept symbolic, docs/mpi.md): *den the pivot divided by, *w and *g its W (0 at the line's last unknown)  \
     * and G = (r - d*G(m-1)) / den, *s = -(sd*S(m-1)) / den, each divided as `form` divides (one reciprocal   \
     * for all in RCP). sd is lower as the spike sees it: a block's first unknown is a step from d, wp, gp = 0 \
     * (its pivot is e alone) with sd = lower and S(m-1) = 1. */                                               \
    Q void N##_step_spike(int form, T d, T e, T f, T r, T wp, T gp, T sd, T sp, int last, T *den, T *w, T *g,  \
                          T *s)                                                                                \
    {                                                                                                          \
        T p = N##_pivot(d, e, wp);                                                                             \
        const T q = N##_nmadd(d, gp, r), t = N##_neg(N##_mul(sd, sp));                                         \
        if (form == TRIDI_FORM_NEWTYPE)                                                                        \
            p = N##_round32(p); /* NewType's AUX, a default real */                                            \
        *den = p;                                                                                              \
        if (last) {                                                                                            \
            *w = N##_zero();                                                                                   \
            *g = N##_div(q, p);                                                                                \
            *s = N##_div(t, p);                                                                                \
        } else if (form == TRIDI_FORM_RCP) {                                                                   \
            const T inv = N##_rcp(p);                                                                          \
            *w = N##_mul(N##_neg(f), inv);                                                                     \
            *g = N##_mul(q, inv);                                                                              \
            *s = N##_mul(t, inv);                                                                              \
        } else if (form == TRIDI_FORM_DIV) {                                                                   \
            N##_div2(N##_neg(f), q, p, w, g);                                                                  \
            *s = N##_div(t, p);                                                                                \
        } else {                                                                                               \
            *w = N##_neg(N##_div32(f, p)); /* NEWTYPE */                                                       \
            *g = N##_div(q, p);                                                                                \
            *s = N##_div(t, p);                                                                                \
        }                                                                                                      \
    }                                                                                                          \
    /* The same without the spike (its arithmetic is dead code, which the compilers drop). */                  \
    Q void N##_step(int form, T d, T e, T f, T r, T wp, T gp, int last, T *den, T *w, T *g)                    \
    {                                                                                                          \
        T s;                                                                                                   \
        N##_step_spike(form, d, e, f, r, wp, gp, N##_zero(), N##_zero(), last, den, w, g, &s);                 \
    }                                                                                                          \
    /* One answer of the back substitution before its rounding to x's type: W*x(m+1) + G. */                   \
    Q T N##_back(T w, T xn, T g) { return N##_madd(w, xn, g); }                                                \
    /* The vector paths' check: acc marked when a value of the first unknown is not finite. */                 \
    Q A N##_flag_first(A acc, T e, T w, T g) { return N##_flag3(acc, w, g, e); }                               \
    /* ... or of an unknown after the first (its inputs too: an infinite lower value can leave W and G         \
     * finite). */                                                                                             \
    Q A N##_flag_step(A acc, T d, T den, T w, T g, int last)                                                   \
    {                                                                                                          \
        return last ? N##_flag3(acc, g, d, den) : N##_flag4(acc, w, g, d, den);                                \
    }                                                                                                          \
    /* ... or of an unknown after the first from its pivot, W and G alone (W is 0 at the last unknown): a      \
     * non-finite lower value shows in the pivot, as d*W is then NaN or infinite (the GPU kernels). */         \
    Q A N##_flag_pivot(A acc, T den, T w, T g) { return N##_flag3(acc, w, g, den); }                           \
    /* One unknown of a line, the first or a later one (first, last: constants where the loop knows them):     \
     * *w, *g from the unknown before's to its own, acc marked as flag_first / flag_pivot say. */              \
    Q A N##_unknown(int form, int first, int last, T d, T e, T f, T r, T *w, T *g, A acc)                      \
    {                                                                                                          \
        if (first) {                                                                                           \
            N##_first(e, f, r, last, w, g);                                                                    \
            return N##_flag_first(acc, e, *w, *g);                                                             \
        }                                                                                                      \
        T den;                                                                                                 \
        N##_step(form, d, e, f, r, *w, *g, last, &den, w, g);                                                  \
        return N##_flag_pivot(acc, den, *w, *g);                                                               \
    }

TRIDI_HD double tridi_exact_neg(double a) { return -a; }
TRIDI_HD double tridi_exact_zero(void) { return 0.0; }
TRIDI_HD double tridi_exact_one(void) { return 1.0; }
TRIDI_HD double tridi_exact_round32(double a) { return (double)(float)a; }
TRIDI_HD double tridi_exact_div32(double a, double b) { return (double)tridi_exact_fdiv((float)a, (float)b); }
TRIDI_HD int tridi_exact_flag3(int acc, double a, double b, double c)
{
    return acc | (!tridi_thomas_finite(a) | !tridi_thomas_finite(b) | !tridi_thomas_finite(c));
}
TRIDI_HD int tridi_exact_flag4(int acc, double a, double b, double c, double d)
{
    return acc | (!tridi_thomas_finite(a) | !tridi_thomas_finite(b) | !tridi_thomas_finite(c) | !tridi_thomas_finite(d));
}
TRIDI_THOMAS_ROUNDED(TRIDI_HD, tridi_exact, double)
TRIDI_THOMAS_STEPS_FUSED(TRIDI_HD, tridi_exact, double, int)

/* A number type N whose operations of one rounding each are tridi_exact's: the device's other instances
 * (cuda/kernels/fused.cuh, exact_q0.cuh) define only the operations in which they differ. */
#define TRIDI_THOMAS_EXACT_OPS(Q, N)                                                                           \
    Q double N##_add(double a, double b) { return tridi_exact_add(a, b); }                                     \
    Q double N##_sub(double a, double b) { return tridi_exact_sub(a, b); }                                     \
    Q double N##_mul(double a, double b) { return tridi_exact_mul(a, b); }                                     \
    Q double N##_div(double a, double b) { return tridi_exact_div(a, b); }                                     \
    Q double N##_neg(double a) { return tridi_exact_neg(a); }                                                  \
    Q double N##_zero(void) { return 0.0; }                                                                    \
    Q double N##_one(void) { return 1.0; }                                                                     \
    Q double N##_round32(double a) { return tridi_exact_round32(a); }                                          \
    Q double N##_div32(double a, double b) { return tridi_exact_div32(a, b); }                                 \
    Q int N##_flag3(int acc, double a, double b, double c) { return tridi_exact_flag3(acc, a, b, c); }         \
    Q int N##_flag4(int acc, double a, double b, double c, double d) { return tridi_exact_flag4(acc, a, b, c, d); }

/* One unknown of MOHID's forward sweep, its two divisions: den = e + d*w, W = -f/den, G = (r - d*g)/den,
 * from *w, *g (0 before the first unknown; d = 0 there, f = 0 at the last, where W is 0). On success *w
 * and *g become the unknown's W and G; on failure they are left as they were. Returns the kind. */
TRIDI_HD int tridi_thomas_forward(double d, double e, double f, double r, int last, double *w, double *g)
{
    double den, nw, ng;
    tridi_exact_step(TRIDI_FORM_DIV, d, e, f, r, *w, *g, last, &den, &nw, &ng);
    const int k = tridi_thomas_check_step(d, e, f, r, den, nw, ng);
    if (!k) {
        *w = nw;
        *g = ng;
    }
    return k;
}

/* One unknown of MOHID's NewType routines (THOMAS_2D_NewType, THOMAS_3D_*_NewType, THOMASZ_NewType*),
 * whose pivot AUX is a default real. pivot_f32 = 1 (a build of real(4) upper values): AUX = e + d*w
 * rounded to float, W = -(f/AUX) divided in float (f is a float value), G = (r - d*g)/AUX divided in
 * double, the zero and finiteness tests on the float AUX. pivot_f32 = 0: tridi_thomas_forward. first:
 * the line's first unknown, divided by the double e in both cases (d, *w and *g not read). */
TRIDI_HD int tridi_thomas_forward_newtype(double d, double e, double f, double r, int first, int last,
                                          int pivot_f32, double *w, double *g)
{
    if (first) {
        double w0 = 0.0, g0 = 0.0;
        const int k = tridi_thomas_forward(0.0, e, f, r, last, &w0, &g0);
        if (!k) {
            *w = w0;
            *g = g0;
        }
        return k;
    }
    if (!pivot_f32)
        return tridi_thomas_forward(d, e, f, r, last, w, g);
    double den, nw, ng;
    tridi_exact_step(TRIDI_FORM_NEWTYPE, d, e, f, r, *w, *g, last, &den, &nw, &ng);
    const int k = tridi_thomas_check_step(d, e, f, r, den, nw, ng);
    if (!k) {
        *w = nw;
        *g = ng;
    }
    return k;
}

/* The same unknown in FAST's form as the CPU vector kernels do it (one reciprocal between the first and
 * the last unknown, divisions at both ends, no fused multiply-add), for a sweep that must round as they
 * do (the MPI pipelined Thomas). first: the line's first unknown (den = e, *w and *g not read). */
TRIDI_HD int tridi_thomas_forward_rcp(double d, double e, double f, double r, int first, int last, double *w,
                                      double *g)
{
    double den = e, nw, ng;
    if (first)
        tridi_exact_first(e, f, r, last, &nw, &ng);
    else
        tridi_exact_step(TRIDI_FORM_RCP, d, e, f, r, *w, *g, last, &den, &nw, &ng);
    const int k = tridi_thomas_check_step(d, e, f, r, den, nw, ng);
    if (!k) {
        *w = nw;
        *g = ng;
    }
    return k;
}

/* A value as it reads back once stored in x's type (xdbl: double, else float). */
TRIDI_HD double tridi_thomas_round(double v, int xdbl) { return xdbl ? v : (double)(float)v; }

/* One unknown of the back substitution: x = w * xnext + g (g alone at the line's last unknown), rounded
 * to x's type, as MOHID's real ANSWER is, before it feeds the unknown above. Not finite
 * (tridi_thomas_finite): TRIDI_FAIL_ANSWER_OVERFLOW at this unknown. */
TRIDI_HD double tridi_thomas_back(double w, double g, double xnext, int last, int xdbl)
{
    return tridi_thomas_round(last ? g : tridi_exact_back(w, xnext, g), xdbl);
}

/* A pivot that an elimination may divide by: not zero, finite. */
TRIDI_HD int tridi_thomas_pivot_ok(double den) { return den != 0.0 && tridi_thomas_finite(den); }

/* The cut solve's checks (src/mpi/dsolve.c, cuda/mpi_solve.cu; docs/mpi.md, "Stability of the cut
 * solve"): slack over 1 allowed for rounding in a block's |W| + |S| and in a reduced row's dominance (a
 * weakly dominant row gives exactly 1 in exact arithmetic). */
#define TRIDI_PARTITION_SLACK 1e-8

/* One unknown of a block's elimination with the x_L column S: W, G, S finite and |W| + |S| <= 1 (+ slack),
 * as every diagonally dominant block keeps them (then the block's |L||U| has no growth). */
TRIDI_HD int tridi_partition_step_ok(double w, double g, double s)
{
    return tridi_thomas_finite(w) && tridi_thomas_finite(g) && tridi_thomas_finite(s) &&
           fabs(w) + fabs(s) <= 1.0 + TRIDI_PARTITION_SLACK;
}

/* A row of a reduced system at its pivot: a usable pivot that still dominates the row's off-diagonal sum
 * (elimination without pivoting then has growth <= 2). */
TRIDI_HD int tridi_reduced_pivot_ok(double piv, double off)
{
    return tridi_thomas_pivot_ok(piv) && fabs(piv) * (1.0 + TRIDI_PARTITION_SLACK) >= off;
}

/* The reduced band solve, written once for the host (src/mpi/dsolve_reduced.c) and the GPU (cuda/mpi_solve.cu:
 * the reduced system between ranks and the join of a rank's sub-blocks). N rows with two sub- and two
 * super-diagonals, row r at band[5 r .. 5 r + 4] (TRIDI_BAND), nr right-hand sides per row at rhs[nr r ..].
 * Block q of Q gives rows 2q (its first unknown) and 2q + 1 (its last) from its six coefficients cf: first =
 * cf[0] + cf[1] right + cf[2] left, last = cf[3] + cf[4] right + cf[5] left (right: the next block's first
 * unknown, left: the previous block's last); the outside neighbours of the end blocks are the caller's. */
#define TRIDI_BAND(band, r, c) (band)[5 * (r) + (c) - (r) + 2]

TRIDI_HD void tridi_band_rows(double *band, double *rhs, int nr, int q, int Q, const double *cf)
{
    const int rf = 2 * q, rl = rf + 1;
    for (int c = 0; c < 5; ++c)
        band[5 * rf + c] = band[5 * rl + c] = 0.0;
    for (int k = 0; k < nr; ++k)
        rhs[nr * rf + k] = rhs[nr * rl + k] = 0.0;
    TRIDI_BAND(band, rf, rf) = 1.0;
    TRIDI_BAND(band, rl, rl) = 1.0;
    rhs[nr * rf] = cf[0];
    rhs[nr * rl] = cf[3];
    if (q > 0) {
        TRIDI_BAND(band, rf, rf - 1) = -cf[2];
        TRIDI_BAND(band, rl, rf - 1) = -cf[5];
    }
    if (q < Q - 1) {
        TRIDI_BAND(band, rf, rf + 2) = -cf[1];
        TRIDI_BAND(band, rl, rf + 2) = -cf[4];
    }
}

/* Eliminates the N rows without pivoting, the answers replacing rhs; returns 0 where that is not safe (docs/mpi.md,
 * "Stability of the cut solve"): a row not diagonally dominant at its pivot, a zero or non-finite pivot, a
 * non-finite answer. */
TRIDI_HD int tridi_band_solve(double *band, double *rhs, int nr, int N)
{
    for (int r = 0; r < N; ++r) {
        const double piv = TRIDI_BAND(band, r, r);
        double off = 0.0;
        for (int c = r + 1; c <= r + 2 && c < N; ++c)
            off += fabs(TRIDI_BAND(band, r, c));
        if (!tridi_reduced_pivot_ok(piv, off))
            return 0;
        for (int rr = r + 1; rr <= r + 2 && rr < N; ++rr) {
            const double fac = TRIDI_BAND(band, rr, r) / piv;
            for (int c = r; c <= r + 2 && c < N; ++c)
                TRIDI_BAND(band, rr, c) -= fac * TRIDI_BAND(band, r, c);
            for (int k = 0; k < nr; ++k)
                rhs[nr * rr + k] -= fac * rhs[nr * r + k];
        }
    }
    for (int r = N - 1; r >= 0; --r)
        for (int k = 0; k < nr; ++k) {
            double v = rhs[nr * r + k];
            for (int c = r + 1; c <= r + 2 && c < N; ++c)
                v -= TRIDI_BAND(band, r, c) * rhs[nr * c + k];
            rhs[nr * r + k] = v / TRIDI_BAND(band, r, r);
            if (!tridi_thomas_finite(rhs[nr * r + k]))
                return 0;
        }
    return 1;
}

/* One line's reduced system between ranks: block q's coefficients at gathered + idx[q] * pitch, Q blocks, this
 * rank the me-th (-1: none). ends gets this rank's x_L, x_R, or NaN in both for a line that goes to the pipelined
 * Thomas (a block marked it with NaN coefficients, or the band solve is not safe); returns 0 then. band: 10 Q
 * doubles, rhs: 2 Q. */
TRIDI_HD int tridi_reduced_line(const double *gathered, size_t pitch, const int *idx, int Q, int me, double *band,
                                double *rhs, double ends[2])
{
    int safe = 1;
    for (int q = 0; q < Q; ++q) {
        const double *cf = gathered + (size_t)idx[q] * pitch;
        for (int k = 0; k < 6; ++k)
            safe &= !isnan(cf[k]);
        tridi_band_rows(band, rhs, 1, q, Q, cf);
    }
    if (safe)
        safe = tridi_band_solve(band, rhs, 1, 2 * Q);
    if (!safe) {
        ends[0] = ends[1] = NAN;
        return 0;
    }
    ends[0] = me > 0 ? rhs[2 * me - 1] : 0.0;
    ends[1] = me >= 0 && me < Q - 1 ? rhs[2 * me + 2] : 0.0;
    return 1;
}

/* Host only: a line's failure reported through the error record, naming the line and its cell. */
static inline tridi_status tridi_thomas_report(const char *func, const tridi_problem *p, int64_t line,
                                               tridi_thomas_fail f)
{
    return tridi_fail_numeric(func, p, tridi_fail_status(f.kind), line, f.m, tridi_fail_text(f.kind));
}

/* The same under TRIDI_ON_ERROR_LINES: nfailed lines failed, the others were answered. */
static inline tridi_status tridi_thomas_report_lines(const char *func, const tridi_problem *p, int64_t line,
                                                     tridi_thomas_fail f, int64_t nfailed)
{
    return tridi_fail_numeric_lines(func, p, tridi_fail_status(f.kind), line, f.m, tridi_fail_text(f.kind),
                                    nfailed);
}

#endif
