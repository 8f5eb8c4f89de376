// FAST kernels (TRIDI_ARITH_FAST on all-float or all-double arrays): every line partitioned over P threads
// (cuda/kernels/fast_core.cuh), arithmetic in the arrays' own precision. See docs/decisions/021-022.
//
// A block is a tile of `lines` neighbouring lines times P chunk threads. Each thread loads its chunk (at most
// L unknowns of the four inputs) into registers with every load issued at once, eliminates it there, writes
// its two reduced rows to shared memory; the block solves the reduced systems by cyclic reduction, and each
// thread writes its chunk's answers. Traffic is the floor (read four inputs, write x once): nothing spills to
// global memory, whatever the length of the line.
//  - y/z lines (neighbouring lines neighbouring in memory, FP_STRIDED): thread = chunk-major, lane = line, so
//    each warp load reads runs of `lines` consecutive cells (at least a 32-byte sector).
//  - x lines (unknowns contiguous, FP_CONTIG): the P threads of a line are neighbours, and their chunks are
//    neighbouring runs of one line (a warp load touches a line's 32 chunks, whose sectors the next loads
//    reuse in L1: faster than staging the lines through shared memory, decision 021).
// The planner (cuda/planner.cu, fp_make_plan) chooses the chunk length, the tile and the mode.
// Failures (ON_ERROR_LINES and _CALL alike): a line flagged by the partitioned solve (a pivot that is not a
// normal number, a value that is not finite) is solved again, in the same kernel, with MOHID's recurrence
// (src/thomas_core.h, as the diagnosis tk_locate does); only a line that fails there too is a failing line
// (its answers not written, its index to a.err and a.nfail as tk_line reports it). So a line fails under
// FAST only where MOHID's recurrence fails, with MOHID's report (docs/decisions/022).
#ifndef TRIDI_FAST_LINES_CUH
#define TRIDI_FAST_LINES_CUH

#include "common.cuh"
#include "fast_core.cuh"
#include "thomas_core.h" // MOHID's recurrence and its checks, for the fallback


namespace {

constexpr int FP_MAX_THREADS = 512; // per block: 128 registers per thread
constexpr int64_t FP_N_MAX = 2048;  // longer lines keep today's kernels (their W/G for the fallback: 32 KiB)
constexpr int FP_MAX_LINES = 128;   // per block (short lines: up to 128 one-chunk lines)

// How a block's threads meet their lines.
enum fp_mode {
    FP_STRIDED = 0, // y/z lines: lane = line (coalesced across neighbouring lines)
    FP_CONTIG = 1   // x lines: a line's chunks on neighbouring threads
};

// Shared memory of a block: a flag per line, then one area used in turn by the reduced rows (a, c, d of 2P
// rows per line) and the fallback's (W, G) of one line.
__host__ __device__ inline size_t fp_flag_bytes(const fp_geom &g) { return ((size_t)g.lines * sizeof(int) + 15) / 16 * 16; }
template <class T>
inline size_t fp_smem_bytes(int64_t n, const fp_geom &g)
{
    const size_t red = (size_t)3 * 2 * g.P * g.lines * sizeof(T), wg = (size_t)n * 2 * sizeof(double);
    return fp_flag_bytes(g) + (red > wg ? red : wg);
}

// MOHID's recurrence on one line (one thread), W/G in `wg`: the same steps and checks as tk_locate, the
// answers rounded to T as MOHID's are; writes them only if every step succeeded. Returns the failure kind.
template <class T>
__device__ int fp_careful_line(const T *D, const T *E, const T *F, const T *R, T *X, int si, int so, int64_t n,
                               double2 *wg)
{
    double w = 0.0, g = 0.0;
    for (int64_t m = 0; m < n; ++m) {
        const int o = (int)m * si;
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
        X[(int)m * so] = (T)wg[m].x;
    return TRIDI_FAIL_NONE;
}

// Offsets are int: the plan takes a call only when every offset it touches fits.
template <class T, int L, int MODE>
__global__ void __launch_bounds__(FP_MAX_THREADS) fp_line(const tk_args a, const fp_geom geo)
{
    extern __shared__ __align__(16) unsigned char fp_dyn[];
    const int P = geo.P, TL = geo.lines, R2 = 2 * P, NT = P * TL;
    const int tid = threadIdx.x;
    const int t = MODE == FP_STRIDED ? tid % TL : tid / P, q = MODE == FP_STRIDED ? tid / TL : tid % P;
    const int n = (int)a.n;
    const int64_t li0 = (int64_t)blockIdx.x * TL;
    const int nl = (int)min((int64_t)TL, a.l_count - li0);
    const bool active = t < nl;
    const int64_t l = a.l_begin + li0 + (active ? t : 0), l1 = l % a.n1, l2 = l / a.n1;
    const int io = (int)(a.in.off + l1 * a.in.s1 + l2 * a.in.s2), oo = (int)(a.out.off + l1 * a.out.s1 + l2 * a.out.s2);
    const int si = (int)a.in.sm, so = (int)a.out.sm;
    long long s0l;
    int len;
    fp_chunk_range(n, P, q, &s0l, &len);
    const int s0 = (int)s0l;
    if (!active)
        len = 1; // a zero line's one row: keeps the reduction's arithmetic finite

    int *lflag = (int *)fp_dyn;
    unsigned char *area = fp_dyn + fp_flag_bytes(geo);
    if (q == 0)
        lflag[t] = 0;

    const T *E = (const T *)a.E, *D = (const T *)a.D, *F = (const T *)a.F, *Rh = (const T *)a.R;
    T av[L], bv[L], cv[L], dv[L];
    // Every load of the chunk at once (lower not read at the line's first unknown, upper not at its last).
    FP_UNROLL
    for (int k = 0; k < L; ++k) {
        const int m = s0 + k, o = io + m * si;
        const bool in = active && k < len;
        bv[k] = in ? __ldg(E + o) : T(1);
        dv[k] = in ? __ldg(Rh + o) : T(0);
        av[k] = in && m > 0 ? __ldg(D + o) : T(0);
        cv[k] = in && m < n - 1 ? __ldg(F + o) : T(0);
    }
    fp_row<T> ru, rv;
    bool ok = fp_chunk<T, L>(len, av, bv, cv, dv, ru, rv);

    // The reduced rows: even rows (the chunks' first) and odd rows (their last) apart, each in the order of
    // the block's threads (chunk-major for y/z lines, line-major for x lines), so that the threads of a warp
    // read and write neighbouring words at every step (a stride of 2 for the even rows alone, as with rows
    // in their natural order, would put two threads on each bank).
    T *ra = (T *)area, *rc = ra + R2 * TL, *rd = rc + R2 * TL;
    const int i0 = 2 * q, i1 = 2 * q + 1;
    auto rpos = [&](int i) {
        return (i & 1) * NT + (MODE == FP_STRIDED ? (i >> 1) * TL + t : t * P + (i >> 1));
    };
    auto put = [&](int i, const fp_row<T> &r) {
        const int o = rpos(i);
        ra[o] = r.a;
        rc[o] = r.c;
        rd[o] = r.d;
    };
    auto get = [&](int i) {
        if (i < 0 || i >= R2)
            return fp_row<T>{T(0), T(0), T(0)};
        const int o = rpos(i);
        return fp_row<T>{ra[o], rc[o], rd[o]};
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
    if (active && !lflag[t]) {
        T *X = (T *)a.X + oo;
        FP_UNROLL
        for (int k = 0; k < L; ++k)
            if (k < len)
                X[(s0 + k) * so] = dv[k];
    }
    // Lines the partitioned solve could not answer: MOHID's recurrence, one line at a time (they share the
    // W/G area). Rare: no cost when no line of the block is flagged.
    if (__syncthreads_or(active && lflag[t] != 0)) {
        double2 *wg = (double2 *)area;
        for (int u = 0; u < nl; ++u) {
            __syncthreads();
            if (t == u && q == 0 && lflag[u]) {
                const int kind = fp_careful_line<T>(D + io, E + io, F + io, Rh + io, (T *)a.X + oo, si, so, n, wg);
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

} // namespace

#endif
