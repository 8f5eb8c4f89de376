/* OpenMP CPU backend.
 *
 * Work unit: a block of up to TRIDI_CPU_BLOCK neighbouring lines (consecutive along the first line
 * axis, same coordinate on the second). Lines along y or z have neighbouring lines at consecutive i,
 * i.e. contiguous in memory, so the recurrence runs across the block with unit-stride vector loads.
 * Lines along x are each contiguous but neighbouring lines are a row apart, so the block is first
 * transposed into small double buffers ([m][line]) and the same vector recurrence runs on those.
 *
 * No partial answer: a block's answers are computed into a small per-thread buffer; only when all its
 * lines succeeded are they written to the caller's x, after the old x values of those cells have been
 * saved to an undo log with non-temporal stores (the old values are in cache anyway: writing x fetches
 * their lines). If any line of the call fails, the blocks already written are restored from the log.
 * The success path pays one streamed store of the answer box (4 B/cell in float) and nothing else. */
#include "tridi_internal.h"

#include <float.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#else /* a build without OpenMP (e.g. the fuzzing harness) runs the same code on one thread */
static inline int omp_get_max_threads(void) { return 1; }
#endif
#include <stdlib.h>
#include <string.h>

#define TRIDI_CPU_BLOCK 64
#define TRIDI_CPU_BLOCK_X 16
/* Bytes of L2 a y/z block's W and G may take (compile-time tuning knob). */
#ifndef TRIDI_CPU_L2_BUDGET
#define TRIDI_CPU_L2_BUDGET (1024 * 1024)
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

typedef struct block_failure {
    int64_t line_in_block; /* -1: none */
    int64_t m;
    tridi_status status;
    const char *what;
} block_failure;

/* Scalar re-run of one line: finds its first failing unknown, if any, and says why. Returns 1 if the
 * line fails in the forward sweep (non-finite input, zero pivot, overflow), else 0. */
#define DEFINE_LOCATE(NAME, TL, TD, TU, TR)                                                                    \
    static int NAME(const TL *D, const TD *E, const TU *F, const TR *R, int64_t n, int64_t s,                \
                    block_failure *out)                                                                        \
    {                                                                                                          \
        double w = 0.0, g = 0.0;                                                                               \
        for (int64_t m = 0; m < n; ++m) {                                                                      \
            double d = m ? (double)D[m * s] : 0.0, e = (double)E[m * s];                                       \
            double f = m < n - 1 ? (double)F[m * s] : 0.0, r = (double)R[m * s];                               \
            double den = e + d * w;                                                                            \
            double nw = m < n - 1 ? -f / den : 0.0, ng = (r - d * g) / den;                                   \
            out->m = m;                                                                                        \
            out->status = TRIDI_ERROR_NONFINITE;                                                               \
            if (!isfinite(e)) { out->what = "non-finite diag value"; return 1; }                               \
            if (!isfinite(d)) { out->what = "non-finite lower value"; return 1; }                              \
            if (!isfinite(f)) { out->what = "non-finite upper value"; return 1; }                              \
            if (!isfinite(r)) { out->what = "non-finite rhs value"; return 1; }                                \
            if (den == 0.0) {                                                                                  \
                out->status = TRIDI_ERROR_ZERO_PIVOT;                                                          \
                out->what = "zero pivot (diag + lower*w = 0)";                                                 \
                return 1;                                                                                      \
            }                                                                                                  \
            if (!isfinite(nw) || !isfinite(ng)) {                                                              \
                out->what = "overflow in the elimination (pivot too small)";                                   \
                return 1;                                                                                      \
            }                                                                                                  \
            w = nw;                                                                                            \
            g = ng;                                                                                            \
        }                                                                                                      \
        return 0;                                                                                              \
    }

/* Solves Lb lines: element (m, l) of an input sits at [m*s + l*ls]; the answer goes to out[m*Lb + l]
 * (rounded to TX before use, as a Fortran real(4) ANSWER would be). W and G hold n*Lb doubles.
 * Returns 0, or 1 with *fail describing the lowest failing line of the block. */
#define DEFINE_BLOCK(NAME, LOCATE, TL, TD, TU, TR, TX)                                                        \
    TRIDI_VECTOR_CLONES static int NAME(const TL *restrict D, const TD *restrict E, const TU *restrict F, const TR *restrict R,   \
                    TX *restrict out, int64_t n, int64_t Lb, int64_t s, int64_t ls, double *restrict W,        \
                    double *restrict G, block_failure *fail)                                                   \
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
            const double *Wp = W + (m - 1) * Lb, *Gp = G + (m - 1) * Lb;                                       \
            double *Wm = W + m * Lb, *Gm = G + m * Lb;                                                         \
            if (m < n - 1) {                                                                                   \
                for (int64_t l = 0; l < Lb; ++l) {                                                             \
                    double d = (double)Dm[l * ls];                                                             \
                    double den = (double)Em[l * ls] + d * Wp[l];                                               \
                    double inv = 1.0 / den; /* one division per unknown: the loop's throughput limit */        \
                    double w = -(double)Fm[l * ls] * inv;                                                      \
                    double g = ((double)Rm[l * ls] - d * Gp[l]) * inv;                                         \
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
                    double g = ((double)Rm[l * ls] - d * Gp[l]) / den;                                         \
                    Gm[l] = g;                                                                                 \
                    bad |= !(fabs(g) <= DBL_MAX) | !(fabs(d) <= DBL_MAX) | !(fabs(den) <= DBL_MAX);            \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
        if (!bad) {                                                                                            \
            TX *xl = out + (n - 1) * Lb;                                                                       \
            const double *Gl = G + (n - 1) * Lb;                                                               \
            for (int64_t l = 0; l < Lb; ++l) {                                                                 \
                xl[l] = (TX)Gl[l];                                                                             \
                bad |= !(fabs((double)xl[l]) <= DBL_MAX);                                                      \
            }                                                                                                  \
            for (int64_t m = n - 2; m >= 0; --m) {                                                             \
                TX *xm = out + m * Lb;                                                                         \
                const TX *xn = xm + Lb;                                                                        \
                const double *Wm = W + m * Lb, *Gm = G + m * Lb;                                               \
                for (int64_t l = 0; l < Lb; ++l) {                                                             \
                    xm[l] = (TX)(Wm[l] * (double)xn[l] + Gm[l]);                                               \
                    bad |= !(fabs((double)xm[l]) <= DBL_MAX);                                                  \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
        if (!bad)                                                                                              \
            return 0;                                                                                          \
        /* Rare path: re-run lines one by one to find the lowest one that fails in the forward sweep;  \
         * if none does, the back substitution overflowed the answer's type. */                               \
        for (int64_t l = 0; l < Lb; ++l)                                                                       \
            if (LOCATE(D + l * ls, E + l * ls, F + l * ls, R + l * ls, n, s, fail)) {                         \
                fail->line_in_block = l;                                                                       \
                return 1;                                                                                      \
            }                                                                                                  \
        for (int64_t l = 0; l < Lb; ++l)                                                                       \
            for (int64_t m = n - 1; m >= 0; --m)                                                               \
                if (!(fabs((double)out[m * Lb + l]) <= DBL_MAX)) {                                             \
                    fail->line_in_block = l;                                                                   \
                    fail->m = m;                                                                               \
                    fail->status = TRIDI_ERROR_NONFINITE;                                                      \
                    fail->what = "the answer overflows its storage type";                                      \
                    return 1;                                                                                  \
                }                                                                                              \
        fail->line_in_block = 0;                                                                               \
        fail->m = 0;                                                                                           \
        fail->status = TRIDI_ERROR_INTERNAL;                                                                   \
        fail->what = "a failure flag without a failing value (please report)";                                 \
        return 1;                                                                                              \
    }

DEFINE_LOCATE(locate_f32, float, float, float, float)
DEFINE_LOCATE(locate_f64, double, double, double, double)
DEFINE_LOCATE(locate_mix, float, double, float, float)
DEFINE_BLOCK(block_f32, locate_f32, float, float, float, float, float)
DEFINE_BLOCK(block_f64, locate_f64, double, double, double, double, double)
DEFINE_BLOCK(block_mix, locate_mix, float, double, float, float, float)
/* x-axis blocks run on transposed double copies; only the answer keeps its storage type. */
DEFINE_BLOCK(block_t_f32, locate_f64, double, double, double, double, float)
DEFINE_BLOCK(block_t_f64, locate_f64, double, double, double, double, double)

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
#endif

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

/* Copies n elements of `size` bytes bypassing the caches where the ISA allows: the undo log is written
 * once and read back only after a failure, so it should not evict the solve's working set. */
static void stream_copy(void *dst, const void *src, int64_t n, size_t size)
{
#if defined(__SSE2__)
    if (size == 4) {
        int *d = dst;
        const int *sv = src;
        for (int64_t i = 0; i < n; ++i)
            _mm_stream_si32(d + i, sv[i]);
        return;
    }
#if defined(__x86_64__)
    long long *d = dst;
    const long long *sv = src;
    for (int64_t i = 0; i < n; ++i)
        _mm_stream_si64(d + i, sv[i]);
    return;
#endif
#endif
    memcpy(dst, src, (size_t)n * size);
}

static void stream_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}

/* Moves a block between the grid layout (line l, unknown m at l*ls + m*s elements from `grid`) and the
 * packed layout [m][l] of Lb lines: to_grid = 1 writes the grid, 0 reads it. `stream` uses non-temporal
 * stores when writing the packed side. */
static void block_copy(char *grid, char *packed, int64_t n, int64_t Lb, int64_t s, int64_t ls, size_t es, int to_grid,
                       int stream)
{
    if (ls == 1) { /* lines at consecutive i: each unknown's row of Lb values is contiguous */
        for (int64_t m = 0; m < n; ++m) {
            char *g = grid + (size_t)(m * s) * es, *p = packed + (size_t)(m * Lb) * es;
            if (to_grid)
                memcpy(g, p, (size_t)Lb * es);
            else if (stream)
                stream_copy(p, g, Lb, es);
            else
                memcpy(p, g, (size_t)Lb * es);
        }
        return;
    }
    /* Lines along x: transpose, one contiguous grid line at a time. */
#define TRIDI_BLOCK_TRANSPOSE(T, STORE)                                                                        \
    do {                                                                                                       \
        T *gp = (T *)grid, *pp = (T *)packed;                                                                  \
        if (to_grid) { /* grid writes contiguous along each line */                                            \
            for (int64_t l = 0; l < Lb; ++l)                                                                   \
                for (int64_t m = 0; m < n; ++m)                                                                \
                    gp[l * ls + m * s] = pp[m * Lb + l];                                                       \
        } else { /* packed writes sequential: streamed stores must fill whole lines to combine */              \
            for (int64_t m = 0; m < n; ++m)                                                                    \
                for (int64_t l = 0; l < Lb; ++l) {                                                             \
                    if (stream)                                                                                \
                        STORE;                                                                                 \
                    else                                                                                       \
                        pp[m * Lb + l] = gp[l * ls + m * s];                                                   \
                }                                                                                              \
        }                                                                                                      \
    } while (0)
#if defined(__SSE2__) && defined(__x86_64__)
    if (es == 4)
        TRIDI_BLOCK_TRANSPOSE(int, _mm_stream_si32(pp + m * Lb + l, gp[l * ls + m * s]));
    else
        TRIDI_BLOCK_TRANSPOSE(long long, _mm_stream_si64(pp + m * Lb + l, gp[l * ls + m * s]));
#else
    if (es == 4)
        TRIDI_BLOCK_TRANSPOSE(int, pp[m * Lb + l] = gp[l * ls + m * s]);
    else
        TRIDI_BLOCK_TRANSPOSE(long long, pp[m * Lb + l] = gp[l * ls + m * s]);
#endif
#undef TRIDI_BLOCK_TRANSPOSE
}

/* Lines per block: enough for long contiguous rows (hardware prefetch) on y/z sweeps while W and G
 * (16 bytes per unknown and line) stay within TRIDI_CPU_L2_BUDGET of L2. */
static int64_t block_lines(const tridi_problem *p)
{
    if (p->axis == TRIDI_AXIS_X) /* 16 lines: two AVX-512 vectors per step; narrower and wider measured slower */
        return p->n1 < TRIDI_CPU_BLOCK_X ? p->n1 : TRIDI_CPU_BLOCK_X;
    int64_t L = TRIDI_CPU_L2_BUDGET / (16 * p->n);
    L = L < TRIDI_CPU_BLOCK ? TRIDI_CPU_BLOCK : L > 1024 ? 1024 : L;
    L = (L + 15) / 16 * 16;
    return p->n1 < L ? p->n1 : L;
}

tridi_status tridi_cpu_solve(tridi_context ctx, const tridi_problem *p)
{
    const int64_t n = p->n;
    const int64_t L = block_lines(p);
    const int64_t nb1 = (p->n1 + L - 1) / L;
    const int64_t nblocks = nb1 * p->n2;
    const size_t xsize = tridi_dtype_size(p->arrays.x_type);
    const int xaxis = p->axis == TRIDI_AXIS_X;
    const int64_t s = p->stride[p->axis], ls = p->stride[p->a1];

    /* Undo log: the old x of every block, at a fixed place per block, plus one written flag per block. */
    size_t log_bytes = (size_t)nblocks * (size_t)L * (size_t)n * xsize;
    size_t need = log_bytes + (size_t)nblocks;
    if (need > ctx->cpu_scratch_bytes) {
        void *mem = malloc(need);
        if (!mem)
            return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY,
                              "tridi_solve: could not allocate %zu bytes for the CPU undo log", need);
        free(ctx->cpu_scratch);
        ctx->cpu_scratch = mem;
        ctx->cpu_scratch_bytes = need;
    }
    char *undo = ctx->cpu_scratch;
    unsigned char *written = (unsigned char *)ctx->cpu_scratch + log_bytes;
    memset(written, 0, (size_t)nblocks);

    int64_t best_line = INT64_MAX; /* lowest failing line so far */
    block_failure best = {-1, 0, TRIDI_SUCCESS, NULL};
    int alloc_failed = 0;
    const int nthreads = ctx->config.num_threads > 0 ? ctx->config.num_threads : omp_get_max_threads();

#pragma omp parallel num_threads(nthreads)
    {
        /* W, G (and for x blocks four transposed inputs) in double, then the block's answers. */
        size_t wbytes = sizeof(double) * (size_t)(n * L) * (xaxis ? 6 : 2);
        double *W = malloc(wbytes + (size_t)(n * L) * xsize);
        double *G = W ? W + n * L : NULL;
        void *out = W ? (char *)W + wbytes : NULL;
        if (!W) {
#pragma omp atomic write
            alloc_failed = 1;
        }
#pragma omp for schedule(static)
        for (int64_t b = 0; b < nblocks; ++b) {
            if (!W)
                continue;
            const int64_t l2 = b / nb1, l1 = (b % nb1) * L;
            const int64_t Lb = p->n1 - l1 < L ? p->n1 - l1 : L;
            const int64_t line0 = l2 * p->n1 + l1;
            if (__atomic_load_n(&best_line, __ATOMIC_RELAXED) < line0)
                continue; /* the call fails anyway; only lower lines could change the report */
            const int64_t off = tridi_line_offset(p, line0);
            block_failure fail = {-1, 0, TRIDI_SUCCESS, NULL};
            int failed;
            if (xaxis) {
                /* The next block's rows, into L2 while this one is solved: sixteen row streams per array
                 * are more than the hardware prefetchers follow. */
                if (b + 1 < nblocks && (b + 1) % nb1) {
                    const int64_t noff = off + Lb * ls, span = (Lb - 1) * ls + n;
                    const void *arr[4] = {p->arrays.lower, p->arrays.diag, p->arrays.upper, p->arrays.rhs};
                    const tridi_dtype typ[4] = {p->arrays.lower_type, p->arrays.diag_type, p->arrays.upper_type,
                                                p->arrays.rhs_type};
                    for (int q = 0; q < 4; ++q) {
                        const size_t es = tridi_dtype_size(typ[q]);
                        const char *base = (const char *)arr[q] + (size_t)noff * es;
                        for (size_t byte = 0; byte < (size_t)span * es; byte += 64)
                            __builtin_prefetch(base + byte, 0, 2);
                    }
                }
                double *tD = G + n * L, *tE = tD + n * L, *tF = tE + n * L, *tR = tF + n * L;
                transpose_in(p->arrays.lower, p->arrays.lower_type, off, ls, n, Lb, tD);
                transpose_in(p->arrays.diag, p->arrays.diag_type, off, ls, n, Lb, tE);
                transpose_in(p->arrays.upper, p->arrays.upper_type, off, ls, n, Lb, tF);
                transpose_in(p->arrays.rhs, p->arrays.rhs_type, off, ls, n, Lb, tR);
                if (p->arrays.x_type == TRIDI_FLOAT32)
                    failed = block_t_f32(tD, tE, tF, tR, out, n, Lb, Lb, 1, W, G, &fail);
                else
                    failed = block_t_f64(tD, tE, tF, tR, out, n, Lb, Lb, 1, W, G, &fail);
            } else if (p->combo == TRIDI_COMBO_F32) {
                failed = block_f32((const float *)p->arrays.lower + off, (const float *)p->arrays.diag + off,
                                   (const float *)p->arrays.upper + off, (const float *)p->arrays.rhs + off, out, n,
                                   Lb, s, ls, W, G, &fail);
            } else if (p->combo == TRIDI_COMBO_F64) {
                failed = block_f64((const double *)p->arrays.lower + off, (const double *)p->arrays.diag + off,
                                   (const double *)p->arrays.upper + off, (const double *)p->arrays.rhs + off, out,
                                   n, Lb, s, ls, W, G, &fail);
            } else {
                failed = block_mix((const float *)p->arrays.lower + off, (const double *)p->arrays.diag + off,
                                   (const float *)p->arrays.upper + off, (const float *)p->arrays.rhs + off, out, n,
                                   Lb, s, ls, W, G, &fail);
            }
            if (failed) {
#pragma omp critical(tridi_cpu_failure)
                {
                    if (line0 + fail.line_in_block < best_line) {
                        __atomic_store_n(&best_line, line0 + fail.line_in_block, __ATOMIC_RELAXED);
                        best = fail;
                    }
                }
                continue;
            }
            char *x = (char *)p->arrays.x + (size_t)off * xsize;
            block_copy(x, undo + (size_t)b * (size_t)(L * n) * xsize, n, Lb, s, ls, xsize, 0, 1);
            block_copy(x, out, n, Lb, s, ls, xsize, 1, 0);
            written[b] = 1;
        }
        stream_fence();
        free(W);
    }
    if (alloc_failed) /* blocks may have been written before a thread found no memory: undo them */
        best_line = best_line == INT64_MAX ? -1 : best_line;
    if (best_line == INT64_MAX)
        return TRIDI_SUCCESS;

    /* Some line failed: put back the old x of every block already written. */
#pragma omp parallel for schedule(static) num_threads(nthreads)
    for (int64_t b = 0; b < nblocks; ++b) {
        if (!written[b])
            continue;
        const int64_t l2 = b / nb1, l1 = (b % nb1) * L;
        const int64_t Lb = p->n1 - l1 < L ? p->n1 - l1 : L;
        char *x = (char *)p->arrays.x + (size_t)tridi_line_offset(p, l2 * p->n1 + l1) * xsize;
        block_copy(x, undo + (size_t)b * (size_t)(L * n) * xsize, n, Lb, s, ls, xsize, 1, 0);
    }
    if (alloc_failed)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi_solve: could not allocate per-thread CPU workspace");
    return tridi_fail_numeric("tridi_solve", p, best.status, best_line, best.m, best.what);
}
