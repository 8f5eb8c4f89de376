/* The CPU backend's recurrences (cpu_internal.h) other than cpu_blocks.c's: FAST's float blocks, the
 * AVX-512 16-line x tiles, and one line alone (the careful path). Each is compiled
 * with -ffp-contract=off and rounds as MOHID's gfortran build does (docs/decisions/040). */
#include "cpu_internal.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* The kernels' arithmetic (docs/decisions/040): MOHID's two divisions per unknown, the same with NewType's
 * float pivot, or FAST's one reciprocal per pivot; none fuses a multiply-add. The fast path only checks that
 * every value stayed finite; a block it flags goes to the careful path (solve_line, each line alone, dividing
 * in every form: FAST's 1/den overflows for a subnormal pivot), which settles whether and where it fails. */

/* One line alone in MOHID's arithmetic (pivot_f32: the NewType pivot in float), the careful path: w, g
 * stored at W[m], G[m] when W is not NULL. Returns 1 if the line fails in the forward sweep (non-finite
 * input, zero pivot, overflow) with *out naming the unknown and why, else 0. */
#define DEFINE_LINE_FORWARD(NAME, TL, TD, TU, TR)                                                              \
    static int NAME(const TL *D, const TD *E, const TU *F, const TR *R, int64_t n, int64_t s, int pivot_f32,   \
                    double *W, double *G, tridi_thomas_fail *out)                                              \
    {                                                                                                          \
        double w = 0.0, g = 0.0;                                                                               \
        for (int64_t m = 0; m < n; ++m) {                                                                      \
            const double d = m ? (double)D[m * s] : 0.0, e = (double)E[m * s];                                 \
            const double f = m < n - 1 ? (double)F[m * s] : 0.0, r = (double)R[m * s];                         \
            const int kind = tridi_thomas_forward_newtype(d, e, f, r, m == 0, m == n - 1, pivot_f32, &w, &g);  \
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
int tridi_cpu_solve_line(const tridi_problem *p, int64_t off, double *W, double *G, tridi_thomas_fail *out)
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

/* FAST's float lanes as a number type of the Thomas steps (src/thomas_core.h). */
#define TRIDI_F32_INLINE static inline __attribute__((always_inline))
TRIDI_F32_INLINE float tridi_f32_add(float a, float b) { return a + b; }
TRIDI_F32_INLINE float tridi_f32_sub(float a, float b) { return a - b; }
TRIDI_F32_INLINE float tridi_f32_mul(float a, float b) { return a * b; }
TRIDI_F32_INLINE float tridi_f32_div(float a, float b) { return a / b; }
TRIDI_F32_INLINE float tridi_f32_neg(float a) { return -a; }
TRIDI_F32_INLINE float tridi_f32_zero(void) { return 0.0f; }
TRIDI_F32_INLINE float tridi_f32_one(void) { return 1.0f; }
TRIDI_F32_INLINE float tridi_f32_round32(float a) { return a; }
TRIDI_F32_INLINE float tridi_f32_div32(float a, float b) { return a / b; }
TRIDI_F32_INLINE int tridi_f32_nf(float v) { return !(fabsf(v) <= FLT_MAX); }
TRIDI_F32_INLINE int tridi_f32_flag3(int acc, float a, float b, float c)
{
    return acc | (tridi_f32_nf(a) | tridi_f32_nf(b) | tridi_f32_nf(c));
}
TRIDI_F32_INLINE int tridi_f32_flag4(int acc, float a, float b, float c, float d)
{
    return acc | (tridi_f32_nf(a) | tridi_f32_nf(b) | tridi_f32_nf(c) | tridi_f32_nf(d));
}
TRIDI_THOMAS_STEPS(TRIDI_F32_INLINE, tridi_f32, float, int)

/* TRIDI_ARITH_FAST on all-float y/z blocks: the same recurrence in float, twice the lanes of the double
 * kernels and half the W/G bytes. Accuracy (tests/c/test_fast_arith.c): on row diagonally dominant lines
 * |x - x*| <= 32 u cond(A, x*) |x*| (max norm, u = 2^-24, cond(A, x) = || |A^-1| |A| |x| || / ||x||): the
 * recurrence's backward error there is a small multiple of u |A| (Higham, Accuracy and Stability of
 * Numerical Algorithms, 2nd ed., 9.5), the reciprocal and the rounding add a few u. Flagged blocks take the
 * careful path. */
TRIDI_VECTOR_CLONES static int forward_fast(const float *restrict D, const float *restrict E, const float *restrict F,
                                            const float *restrict R, int64_t n, int64_t Lb, int64_t s,
                                            float *restrict W, float *restrict G)
{
    int bad = 0;
    for (int64_t l = 0; l < Lb; ++l) {
        const float e = E[l];
        float w, g;
        tridi_f32_first(e, F[l], R[l], n == 1, &w, &g);
        W[l] = w;
        G[l] = g;
        bad = tridi_f32_flag_first(bad, e, w, g);
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
                float den, w, g;
                tridi_f32_step(TRIDI_FORM_RCP, Dm[l], Em[l], Fm[l], Rm[l], Wp[l], Gp[l], 0, &den, &w, &g);
                Wm[l] = w;
                Gm[l] = g;
                bad = tridi_f32_flag_step(bad, Dm[l], den, w, g, 0);
            }
        } else { /* the last unknown: no upper coupling (its upper value is not read) */
            for (int64_t l = 0; l < Lb; ++l) {
                float den, w, g;
                tridi_f32_step(TRIDI_FORM_RCP, Dm[l], Em[l], 0.0f, Rm[l], Wp[l], Gp[l], 1, &den, &w, &g);
                Gm[l] = g;
                bad = tridi_f32_flag_step(bad, Dm[l], den, w, g, 1);
            }
        }
    }
    return bad;
}

/* Its back substitution, in float, saving each x row before it is overwritten, as backward_f32 does. */
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
            const float v = xn ? tridi_f32_back(Wm[l], xn[l], Gm[l]) : Gm[l];
            xm[l] = v;
            bad |= tridi_f32_nf(v);
        }
    }
    return bad;
}

int tridi_cpu_forward_fast(const float *D, const float *E, const float *F, const float *R, int64_t n, int64_t Lb,
                           int64_t s, float *W, float *G)
{
    return forward_fast(D, E, F, R, n, Lb, s, W, G);
}

int tridi_cpu_backward_fast(const float *W, const float *G, float *x, int64_t n, int64_t Lb, int64_t xs, char *log,
                            int64_t lp, int stream)
{
    return backward_fast(W, G, x, n, Lb, xs, log, lp, stream);
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

/* Eight lanes of double as a number type of the Thomas steps (src/thomas_core.h): the same operations,
 * each product rounded before its sum, as the scalar kernels and MOHID's baseline x86-64 build. */
TRIDI_AVX512_INLINE __m512d tridi_v8_add(__m512d a, __m512d b) { return _mm512_add_pd(a, b); }
TRIDI_AVX512_INLINE __m512d tridi_v8_sub(__m512d a, __m512d b) { return _mm512_sub_pd(a, b); }
TRIDI_AVX512_INLINE __m512d tridi_v8_mul(__m512d a, __m512d b) { return _mm512_mul_pd(a, b); }
TRIDI_AVX512_INLINE __m512d tridi_v8_div(__m512d a, __m512d b) { return _mm512_div_pd(a, b); }
TRIDI_AVX512_INLINE __m512d tridi_v8_neg(__m512d a) { return _mm512_xor_pd(a, _mm512_set1_pd(-0.0)); }
TRIDI_AVX512_INLINE __m512d tridi_v8_zero(void) { return _mm512_setzero_pd(); }
TRIDI_AVX512_INLINE __m512d tridi_v8_one(void) { return _mm512_set1_pd(1.0); }
TRIDI_AVX512_INLINE __m512d tridi_v8_round32(__m512d a) { return _mm512_cvtps_pd(_mm512_cvtpd_ps(a)); }
TRIDI_AVX512_INLINE __m512d tridi_v8_div32(__m512d a, __m512d b)
{
    return _mm512_cvtps_pd(_mm256_div_ps(_mm512_cvtpd_ps(a), _mm512_cvtpd_ps(b)));
}
/* NaN iff v is not finite, else +-0: summed, a single test says whether any checked value failed. */
TRIDI_AVX512_INLINE __m512d tridi_v8_flag(__m512d acc, __m512d v) { return _mm512_fmadd_pd(v, _mm512_setzero_pd(), acc); }
TRIDI_AVX512_INLINE __m512d tridi_v8_flag3(__m512d acc, __m512d a, __m512d b, __m512d c)
{
    return tridi_v8_flag(tridi_v8_flag(tridi_v8_flag(acc, a), b), c);
}
TRIDI_AVX512_INLINE __m512d tridi_v8_flag4(__m512d acc, __m512d a, __m512d b, __m512d c, __m512d d)
{
    return tridi_v8_flag(tridi_v8_flag3(acc, a, b, c), d);
}
TRIDI_THOMAS_STEPS(TRIDI_AVX512_INLINE, tridi_v8, __m512d, __m512d)


/* Forward sweep of 16 x lines; dbl[q] says whether input q is double, mode the arithmetic (kernel_arith;
 * both constant in each instance). W and G get [m][16] doubles. Returns nonzero if a value went
 * non-finite. */
TRIDI_AVX512_INLINE int xforward16_body(const xrows *xr, const int dbl[4], int mode, char *x, size_t xes, int64_t n,
                                         double *restrict W, double *restrict G, double *restrict tile)
{
    const __m512d zero = _mm512_setzero_pd();
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
                __m512d w, g, den;
                if (m == 0) {
                    tridi_v8_first(e, f, r, n == 1, &w, &g);
                    acc[h] = tridi_v8_flag_first(acc[h], e, w, g);
                } else if (m < n - 1) {
                    tridi_v8_step(mode, d, e, f, r, wp[h], gp[h], 0, &den, &w, &g);
                    acc[h] = tridi_v8_flag_step(acc[h], d, den, w, g, 0);
                } else {
                    tridi_v8_step(mode, d, e, f, r, wp[h], gp[h], 1, &den, &w, &g);
                    acc[h] = tridi_v8_flag_step(acc[h], d, den, w, g, 1);
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
                __m512d v = m == n - 1 ? g : tridi_v8_back(_mm512_load_pd(Wm), xn[h], g);
                if (!xdbl)
                    v = _mm512_cvtps_pd(_mm512_cvtpd_ps(v)); /* rounded before it feeds unknown m-1 */
                _mm512_store_pd(Wm, v);
                xn[h] = v;
                acc = tridi_v8_flag(acc, v);
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
TRIDI_AVX512 int tridi_cpu_xforward16(const xrows *xr, tridi_combo combo, int mode, char *x, int64_t n, double *W,
                                   double *G, double *tile)
{
    static const int f32[4] = {0, 0, 0, 0}, f64[4] = {1, 1, 1, 1}, mix[4] = {0, 1, 0, 0};
#define TRIDI_X16(TY, XES)                                                                                     \
    (mode == TRIDI_FORM_RCP       ? xforward16_body(xr, TY, TRIDI_FORM_RCP, x, XES, n, W, G, tile)             \
     : mode == TRIDI_FORM_NEWTYPE ? xforward16_body(xr, TY, TRIDI_FORM_NEWTYPE, x, XES, n, W, G, tile)         \
                             : xforward16_body(xr, TY, TRIDI_FORM_DIV, x, XES, n, W, G, tile))
    if (combo == TRIDI_COMBO_F32)
        return TRIDI_X16(f32, 4);
    if (combo == TRIDI_COMBO_F64) /* NewType is MOHID's arithmetic for double upper values */
        return mode == TRIDI_FORM_RCP ? xforward16_body(xr, f64, TRIDI_FORM_RCP, x, 8, n, W, G, tile)
                                 : xforward16_body(xr, f64, TRIDI_FORM_DIV, x, 8, n, W, G, tile);
    return TRIDI_X16(mix, 4);
#undef TRIDI_X16
}

TRIDI_AVX512 int tridi_cpu_xbackward16(const xrows *xr, char *x, int xdbl, int64_t Lb, int64_t n, double *W,
                                    const double *G)
{
    return xdbl ? xbackward16_body(xr, x, 1, Lb, n, W, G) : xbackward16_body(xr, x, 0, Lb, n, W, G);
}
#endif /* not AddressSanitizer */
#endif /* x86-64 with GCC/Clang */

void tridi_cpu_transpose_in(const void *src, tridi_dtype t, int64_t off, int64_t row, int64_t n, int64_t Lb,
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
int tridi_cpu_x_avx512_usable(const tridi_tuning *tuning)
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
