// FAST kernels (TRIDI_ARITH_FAST on all-float or all-double arrays): every line partitioned over P threads
// (cuda/kernels/fast_core.cuh), arithmetic in the arrays' own precision. See docs/decisions/021-022.
//
// A block is a tile of `lines` neighbouring lines times P chunk threads. Each thread loads its chunk (at most
// L unknowns of the four inputs) into registers with every load issued at once, eliminates it there, writes
// its two reduced rows to shared memory; the block solves the reduced systems by cyclic reduction, and each
// thread writes its chunk's answers. Traffic is the floor (read four inputs, write x once): nothing spills to
// global memory, whatever the length of the line.
//  - y/z lines (neighbouring lines neighbouring in memory, STRIDED): thread = chunk-major, lane = line, so
//    each warp load reads runs of `lines` consecutive cells (at least a 32-byte sector).
//  - x lines (unknowns contiguous): the P threads of a line are neighbours, and their chunks are neighbouring
//    runs of one line (a warp load touches a line's 32 chunks, whose sectors the next loads reuse in L1).
// Failures (ON_ERROR_LINES and _CALL alike): a line flagged by the partitioned solve (a pivot that is not a
// normal number, a value that is not finite) is solved again, in the same kernel, with MOHID's recurrence
// (src/thomas_core.h, as the diagnosis tk_locate does); only a line that fails there too is a failing line
// (its answers not written, its index to a.err and a.nfail as tk_line reports it). So FAST changes the
// arithmetic of the lines it answers, never which lines fail nor the failure's line, cell and kind.
#ifndef TRIDI_FAST_LINES_CUH
#define TRIDI_FAST_LINES_CUH

#include "kernels/fast_core.cuh"

namespace {

constexpr int FP_MAX_THREADS = 512; // per block: 128 registers per thread
constexpr int64_t FP_N_MAX = 2048;  // longer lines keep today's kernels (their W/G for the fallback: 32 KiB)

struct fp_geom {
    int P;     // chunks (threads) per line
    int lines; // lines per block
};

// Shared memory of a block: a flag per line, then the reduced rows (a, c, d of 2P rows per line), whose
// space the fallback reuses for the (W, G) of one line once the reduction is done.
__host__ __device__ inline size_t fp_flag_bytes(const fp_geom &g) { return ((size_t)g.lines * sizeof(int) + 15) / 16 * 16; }
template <class T>
__host__ __device__ inline size_t fp_smem_bytes(int64_t n, const fp_geom &g)
{
    const size_t red = (size_t)3 * 2 * g.P * g.lines * sizeof(T), wg = (size_t)n * 2 * sizeof(double);
    return fp_flag_bytes(g) + (red > wg ? red : wg);
}

// MOHID's recurrence on one line (one thread), W/G in `wg`: the same steps and checks as tk_locate, the
// answers rounded to T as MOHID's are; writes them only if every step succeeded. Returns the failure kind.
template <class T, class I>
__device__ int fp_careful_line(const T *D, const T *E, const T *F, const T *R, T *X, I si, I so, int64_t n,
                               double2 *wg)
{
    double w = 0.0, g = 0.0;
    for (int64_t m = 0; m < n; ++m) {
        const I o = (I)m * si;
        const double d = m ? (double)D[o] : 0.0, e = (double)E[o];
        const double f = m < n - 1 ? (double)F[o] : 0.0, r = (double)R[o];
        const int k = tridi_thomas_forward(d, e, f, r, m == n - 1, &w, &g);
        if (k)
            return k;
        wg[m] = make_double2(w, g);
    }
    double x = 0.0;
    for (int64_t m = n - 1; m >= 0; --m) {
        x = tridi_thomas_back(wg[m].x, wg[m].y, x, m == n - 1, sizeof(T) == 8);
        if (!tridi_thomas_finite(x))
            return TRIDI_FAIL_ANSWER_OVERFLOW;
        wg[m].x = x; // kept until the line is known to succeed
    }
    for (int64_t m = 0; m < n; ++m)
        X[(I)m * so] = (T)wg[m].x;
    return TRIDI_FAIL_NONE;
}

template <class T, int L, bool STRIDED, class I>
__global__ void __launch_bounds__(FP_MAX_THREADS) fp_line(const tk_args a, const fp_geom geo)
{
    extern __shared__ __align__(16) unsigned char fp_dyn[];
    const int P = geo.P, TL = geo.lines, R2 = 2 * P;
    const int tid = threadIdx.x;
    const int t = STRIDED ? tid % TL : tid / P, q = STRIDED ? tid / TL : tid % P;
    const int64_t n = a.n, li0 = (int64_t)blockIdx.x * TL;
    const int nl = (int)min((int64_t)TL, a.l_count - li0);
    const bool active = t < nl;
    const int64_t l = a.l_begin + li0 + (active ? t : 0), l1 = l % a.n1, l2 = l / a.n1;
    const I io = (I)(a.in.off + l1 * a.in.s1 + l2 * a.in.s2), oo = (I)(a.out.off + l1 * a.out.s1 + l2 * a.out.s2);
    const I si = (I)a.in.sm, so = (I)a.out.sm;
    long long s0;
    int len;
    fp_chunk_range(n, P, q, &s0, &len);
    if (!active)
        len = 1; // a zero line's one row: keeps the reduction's arithmetic finite

    const T *E = (const T *)a.E + io, *D = (const T *)a.D + io, *F = (const T *)a.F + io, *Rh = (const T *)a.R + io;
    T av[L], bv[L], cv[L], dv[L];
    // Every load of the chunk at once (lower not read at the line's first unknown, upper not at its last).
#pragma unroll
    for (int k = 0; k < L; ++k) {
        const int64_t m = s0 + k;
        const I o = (I)m * si;
        const bool in = active && k < len;
        bv[k] = in ? __ldg(E + o) : T(1);
        dv[k] = in ? __ldg(Rh + o) : T(0);
        av[k] = in && m > 0 ? __ldg(D + o) : T(0);
        cv[k] = in && m < n - 1 ? __ldg(F + o) : T(0);
    }
    fp_row<T> ru, rv;
    bool ok = fp_chunk<T, L>(len, av, bv, cv, dv, ru, rv);

    // The reduced rows: row i of line t at i * TL + t.
    int *lflag = (int *)fp_dyn;
    T *ra = (T *)(fp_dyn + fp_flag_bytes(geo)), *rc = ra + R2 * TL, *rd = rc + R2 * TL;
    if (q == 0)
        lflag[t] = 0;
    const int i0 = 2 * q, i1 = 2 * q + 1;
    auto put = [&](int i, const fp_row<T> &r) {
        ra[i * TL + t] = r.a;
        rc[i * TL + t] = r.c;
        rd[i * TL + t] = r.d;
    };
    auto get = [&](int i) {
        return i >= 0 && i < R2 ? fp_row<T>{ra[i * TL + t], rc[i * TL + t], rd[i * TL + t]} : fp_row<T>{T(0), T(0), T(0)};
    };
    for (int s = 1; s < R2; s <<= 1) {
        put(i0, ru);
        put(i1, rv);
        __syncthreads();
        const fp_row<T> lo0 = get(i0 - s), hi0 = get(i0 + s), lo1 = get(i1 - s), hi1 = get(i1 + s);
        ok &= fp_reduce(ru, lo0, hi0);
        ok &= fp_reduce(rv, lo1, hi1);
        __syncthreads();
    }
    ok &= fp_finish<T, L>(len, av, cv, dv, ru.d, rv.d);
    if (!ok && active)
        lflag[t] = 1;
    __syncthreads();
    const bool flagged = lflag[t] != 0;
    if (active && !flagged) {
        T *X = (T *)a.X + oo;
#pragma unroll
        for (int k = 0; k < L; ++k)
            if (k < len)
                X[(I)(s0 + k) * so] = dv[k];
    }
    // Lines the partitioned solve could not answer: MOHID's recurrence, one line at a time (they share the
    // W/G area). Rare: no cost when no line of the block is flagged.
    if (__syncthreads_or(active && flagged)) {
        double2 *wg = (double2 *)(fp_dyn + fp_flag_bytes(geo)); // the reduced rows are no longer read
        for (int u = 0; u < nl; ++u) {
            __syncthreads();
            if (t == u && q == 0 && lflag[u]) {
                const int kind = fp_careful_line<T, I>((const T *)a.D + io, (const T *)a.E + io, (const T *)a.F + io,
                                                       (const T *)a.R + io, (T *)a.X + oo, si, so, n, wg);
                if (kind != TRIDI_FAIL_NONE) {
                    atomicMin(a.err, (unsigned long long)l);
                    if (a.nfail)
                        atomicAdd(a.nfail, 1ull);
                }
            }
        }
    }
    tk_finish(a);
}

// How a FAST call is launched.
struct fp_plan {
    bool use;    // false: the line is too long (or an offset too large): today's kernels take it
    bool strided;
    bool i32;
    int L;       // unknowns per chunk, at most
    fp_geom geom;
    size_t smem;
    unsigned blocks, threads;
};

// Least lines per block on y/z lines: a warp load then reads at least a 32-byte sector per row.
template <class T>
constexpr int fp_min_lines() { return 32 / (int)sizeof(T); }

template <class T, int L>
void *fp_kernel_of(bool strided, bool i32)
{
    if (strided)
        return i32 ? (void *)fp_line<T, L, true, int32_t> : (void *)fp_line<T, L, true, int64_t>;
    return i32 ? (void *)fp_line<T, L, false, int32_t> : (void *)fp_line<T, L, false, int64_t>;
}

template <class T>
void *fp_kernel(const fp_plan &p)
{
    if constexpr (sizeof(T) == 4) // chunks of 16 doubles spill
        if (p.L == 16)
            return fp_kernel_of<T, 16>(p.strided, p.i32);
    return p.L == 4 ? fp_kernel_of<T, 4>(p.strided, p.i32) : fp_kernel_of<T, 8>(p.strided, p.i32);
}

// The chunk length for lines of n unknowns: 8; 16 for float lines long enough that 8 would give more than
// 64 chunks (fewer reduction steps, fewer threads per line). `force_L` (0: this rule) is for measurements.
template <class T>
int fp_chunk_len(int64_t n, int force_L)
{
    if (force_L == 4 || force_L == 8 || (force_L == 16 && sizeof(T) == 4))
        return force_L;
    return sizeof(T) == 4 && n > 512 ? 16 : 8;
}

// The FAST plan for a.l_count lines of a.n unknowns; p->use false when the FAST kernel does not take them.
template <class T>
cudaError_t fp_make_plan(const tk_args &a, bool contiguous, fp_plan *out, int force_L = 0, int threads_goal = 256)
{
    fp_plan p{};
    p.strided = !(contiguous && a.in.sm == 1 && a.out.sm == 1);
    p.i32 = tk_max_offset(a.in, a) < INT32_MAX && tk_max_offset(a.out, a) < INT32_MAX;
    p.L = fp_chunk_len<T>(a.n, force_L);
    if (a.n < 1 || a.n > FP_N_MAX || a.l_count < 1) {
        *out = p;
        return cudaSuccess;
    }
    const int P = fp_chunks(a.n, p.L);
    int lines = std::max(1, threads_goal / P);
    if (p.strided)
        lines = std::max(lines, fp_min_lines<T>());
    lines = std::min(lines, 32);
    while (lines > 1 && lines * P > FP_MAX_THREADS)
        lines /= 2;
    if (lines * P > FP_MAX_THREADS) {
        *out = p;
        return cudaSuccess;
    }
    p.geom = {P, lines};
    p.threads = (unsigned)(P * lines);
    p.blocks = (unsigned)((a.l_count + lines - 1) / lines);
    p.smem = fp_smem_bytes<T>(a.n, p.geom);
    int dev = 0, optin = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e == cudaSuccess)
        e = cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (e == cudaSuccess && p.smem > 48 * 1024)
        e = cudaFuncSetAttribute(fp_kernel<T>(p), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)optin);
    // x lines read their chunks' neighbouring runs through L1: half of the SM's memory left to it (the
    // driver takes more shared memory where a block needs it).
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(fp_kernel<T>(p), cudaFuncAttributePreferredSharedMemoryCarveout,
                                 p.strided ? (int)cudaSharedmemCarveoutMaxShared : 50);
    if (e != cudaSuccess)
        return e;
    p.use = p.smem <= (size_t)optin;
    *out = p;
    return cudaSuccess;
}

template <class T>
cudaError_t fp_run(const tk_args &a, const fp_plan &p, cudaStream_t stream)
{
    if (p.blocks == 0)
        return cudaSuccess;
    fp_geom g = p.geom;
    void *params[] = {(void *)&a, (void *)&g};
    return cudaLaunchKernel(fp_kernel<T>(p), dim3(p.blocks), dim3(p.threads), params, p.smem, stream);
}

} // namespace

#endif
