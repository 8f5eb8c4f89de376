// FAST kernels (TRIDI_ARITH_FAST on all-float or all-double arrays): every line partitioned over P threads
// (fast_core.cuh), each loading its chunk into registers at once and eliminating it there, the chunks joined
// by odd-even and cyclic reduction in shared memory (decision 110), over the block or by a warp a line
// (fast_warp_join.cuh, decision 088); traffic is the floor whatever the length (decision 021). y/z lines
// (FP_STRIDED): lane = line, runs of neighbouring lines; x lines (FP_CONTIG): a line's chunks on neighbouring
// threads, read through L1; long y/z lines split over a cluster of blocks (fast_cluster.cuh).
// The planner (cuda/planner_fast.cu, fp_make_plan) chooses the shape. A line the partition flags (a pivot not a
// normal number, a value not finite) is solved again in the same kernel with MOHID's recurrence
// (src/thomas_core.h); only a line that fails there too fails, reported as tk_line reports it (decision 022).
#ifndef TRIDI_FAST_LINES_CUH
#define TRIDI_FAST_LINES_CUH

#include "common.cuh"
#include "fast_core.cuh"
#include "fast_warp_join.cuh"

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
// slots per line: fp_join) and the fallback's (W, G) of one line.
__host__ __device__ inline size_t fp_flag_bytes(const fp_geom &g) { return ((size_t)g.lines * sizeof(int) + 15) / 16 * 16; }
// The join's area (fp_join): the block's reduced rows, laid out for a warp a line where geo.warp_join.
template <class T>
inline size_t fp_join_bytes(const fp_geom &g)
{
    return g.warp_join ? fp_wj_bytes<T>(g) : (size_t)3 * 2 * g.P * g.lines * sizeof(T);
}
template <class T>
inline size_t fp_smem_bytes(int64_t n, const fp_geom &g)
{
    const size_t red = fp_join_bytes<T>(g), wg = (size_t)n * 2 * sizeof(double);
    return fp_flag_bytes(g) + (red > wg ? red : wg);
}

// The chunk length, the tile and the mode for lines of n unknowns of a T-typed solve (decision 021):
//  - x lines (contiguous: FP_CONTIG): chunks of 8, about 128 threads a block (the more blocks an SM holds,
//    the better their load and reduction phases overlap);
//  - y/z lines (FP_STRIDED): chunks of float_L (16 for the solves) for float lines of 64 unknowns or more,
//    else 8; 256 threads a block, or up to 512 where that brings a warp's rows to 128 bytes of neighbouring
//    lines.
// Returns false where the shape does not fit a block (lines past FP_N_MAX).
template <class T>
__host__ inline bool fp_shape(int64_t n, bool contig, int float_L, int *L, fp_geom *g)
{
    if (n < 1 || n > FP_N_MAX)
        return false;
    *L = !contig && sizeof(T) == 4 && n >= 64 ? float_L : 8;
    const int P = fp_chunks(n, *L);
    int lines;
    if (contig) {
        lines = 128 / P > 1 ? 128 / P : 1;
    } else {
        const int run = 128 / (int)sizeof(T); // neighbouring lines in 128 bytes
        lines = 256 / P > 1 ? 256 / P : 1;
        if (lines < run) {
            const int most = FP_MAX_THREADS / P > 1 ? FP_MAX_THREADS / P : 1;
            lines = run < most ? run : most;
        }
    }
    lines = lines < FP_MAX_LINES ? lines : FP_MAX_LINES;
    *g = {P, lines, fp_wj_rule(P)};
    return lines * P <= FP_MAX_THREADS;
}

// A thread's line in its block's tile (t) and its chunk of that line (q).
template <int MODE>
__device__ __forceinline__ void fp_place(const fp_geom &g, int *t, int *q)
{
    const int tid = threadIdx.x;
    *t = MODE == FP_STRIDED ? tid % g.lines : tid / g.P;
    *q = MODE == FP_STRIDED ? tid / g.lines : tid % g.P;
}

// A thread's part of its block's solve: its line t of the block (active when t < nl, the block's lines), its
// chunk q of that line, the chunk's first unknown s0 and length len.
struct fp_thread {
    int t, q, s0, len;
    bool active;
};
// shift >= 0 (x lines, fp_x_shift): chunks of L from unknown L - shift on, the first one L - shift long;
// else fp_chunk_range's balanced chunks.
template <int MODE>
__device__ __forceinline__ fp_thread fp_thread_of(const fp_geom &geo, int n, int nl, int L = 0, int shift = -1)
{
    fp_thread th;
    fp_place<MODE>(geo, &th.t, &th.q);
    if (shift >= 0) {
        th.s0 = th.q ? th.q * L - shift : 0;
        th.len = min(n, (th.q + 1) * L - shift) - th.s0;
    } else {
        long long s0;
        fp_chunk_range(n, geo.P, th.q, &s0, &th.len);
        th.s0 = (int)s0;
    }
    th.active = th.t < nl;
    return th;
}

// x lines (decision 109): the shift of a line's P chunks of L (fp_thread_of) that starts every chunk but the
// first on a 16-byte boundary of the row at `row`, each chunk 2 to L long; -1 where none does (lines of
// fewer than 3 chunks, or too little room in the last chunk: then balanced chunks, scalar loads).
template <class T, int L>
__device__ __forceinline__ int fp_x_shift(const T *row, int n, int P)
{
    constexpr int W = 16 / (int)sizeof(T);
    const int a = (int)(((uintptr_t)row / sizeof(T)) % W); // the row's first unknown past a 16-byte boundary
    const int lo = max(0, (P - 1) * L - n + 2), hi = min(P * L - n, L - 2);
    const int s = lo + (a - lo % W + W) % W; // the least shift >= lo whose chunks start where a - s is 0 mod W
    return P >= 3 && s <= hi ? s : -1;
}

// The start of a block's solve (fp_block, and the ADI's fo_block): the thread's line t and chunk q, the
// chunk's first unknown and length (an inactive thread's 1: a zero line's one row keeps the reduction's
// arithmetic finite), the line flags cleared, and the area after them.
struct fp_start {
    int t, q, s0, len;
    bool active;
    int *lflag;
    unsigned char *area;
};
template <int MODE>
__device__ __forceinline__ fp_start fp_block_start(const fp_geom &geo, int n, int nl, unsigned char *smem, int L = 0,
                                                   int shift = -1)
{
    const fp_thread th = fp_thread_of<MODE>(geo, n, nl, L, shift);
    const fp_start b{th.t, th.q, th.s0, th.active ? th.len : 1, th.active, (int *)smem, smem + fp_flag_bytes(geo)};
    if (b.q == 0)
        b.lflag[b.t] = 0;
    return b;
}

// Step 4 of fast_core.cuh for a block: the reduced rows ru, rv of thread (t, q) joined with those of the
// other chunks of line t, by a warp a line where geo.warp_join (fast_warp_join.cuh), else over the block in
// `area` (fp_join_bytes): the v rows from the u rows beside them; while more than FP_JOIN_PCR of them are
// left, every other one eliminated (odd-even reduction, on the line's first threads); those left by cyclic
// reduction; the eliminated rows back from their neighbours; u from the v's (fast_core.cuh, decision 110).
// On return ru.d and rv.d are the chunk's first and last unknowns. False on a pivot that is not a normal
// number. Every thread of the block calls it; it ends with a barrier. WJ 1 or 0: the kernel was built for one
// of the two joins (geo.warp_join says the same; a kernel holding both code paths takes the registers of
// both), -1: geo.warp_join chooses.
template <class T, int MODE, int WJ = -1>
__device__ __forceinline__ bool fp_join(const fp_geom &geo, int t, int q, unsigned char *area, fp_row<T> &ru,
                                        fp_row<T> &rv)
{
    if (WJ == 1 || (WJ < 0 && geo.warp_join))
        return fp_join_warp<T>(geo, t, q, area, ru, rv);
    // A line's 2P slots of rows (a, c, d: three planes), in the order of the block's threads (slot-major for
    // y/z lines, line-major for x lines: a warp's threads on neighbouring words): the v rows at [0, P), the u
    // rows at [P, 2P) until the odd-even levels' rows replace them one after the other, then the cyclic
    // reduction's two copies (used in turn: one barrier a step). Each level's d becomes its rows' unknowns.
    const int P = geo.P, W = 2 * P, NP = W * geo.lines;
    T *const A = (T *)area, *const C = A + NP, *const D = C + NP;
    const int o0 = MODE == FP_STRIDED ? t : t * W, st = MODE == FP_STRIDED ? geo.lines : 1;
    auto slot = [&](int s) { return o0 + s * st; };
    auto put = [&](int s, const fp_row<T> &r) {
        const int o = slot(s);
        A[o] = r.a, C[o] = r.c, D[o] = r.d;
    };
    auto get = [&](int s) {
        const int o = slot(s);
        return fp_row<T>{A[o], C[o], D[o]};
    };
    const fp_row<T> zero = {T(0), T(0), T(0)};
    put(P + q, ru);
    __syncthreads();
    bool ok = fp_reduce(rv, ru, q + 1 < P ? get(P + q + 1) : zero);
    fp_row<T> r = rv; // thread q's row of the level, q < R
    int R = P, base = 0, levels = 0; // the level's rows and first slot; odd-even levels done
    auto next_base = [&](int b, int n) { return b == 0 ? P : b + n; };
    while (R > FP_JOIN_PCR) {
        if (q < R)
            put(base + q, r);
        __syncthreads();
        if (q < R / 2) {
            r = get(base + 2 * q + 1);
            ok &= fp_reduce(r, get(base + 2 * q), 2 * q + 2 < R ? get(base + 2 * q + 2) : zero);
        }
        base = next_base(base, R), R /= 2, ++levels;
    }
    // The last R rows by cyclic reduction, in two copies at [base, base + R) and [base + R, base + 2R) (no
    // odd-even level done: the v rows' and the u rows' slots).
    int copy = 0;
    for (int s = 1; s < R; s <<= 1, copy ^= 1) {
        if (q < R)
            put(base + copy * R + q, r);
        __syncthreads();
        if (q < R)
            ok &= fp_reduce(r, q >= s ? get(base + copy * R + q - s) : zero,
                            q + s < R ? get(base + copy * R + q + s) : zero);
    }
    // Unknowns back up the levels, into the d of the rows (xs: the level's first slot): the cyclic reduction's
    // in its free copy; a level's kept row 2j + 1 is the next one's row j, its row 2j follows from them.
    int xs = base + copy * R;
    if (q < R)
        D[slot(xs + q)] = r.d;
    __syncthreads();
    for (int k = levels - 1; k >= 0; --k) {
        int bk = 0, rk = P;
        for (int i = 0; i < k; ++i)
            bk = next_base(bk, rk), rk /= 2;
        if (q < (rk + 1) / 2) {
            const fp_row<T> e = get(bk + 2 * q);
            const T lo = q > 0 ? D[slot(xs + q - 1)] : T(0), hi = q < rk / 2 ? D[slot(xs + q)] : T(0);
            D[slot(bk + 2 * q)] = e.d - e.a * lo - e.c * hi;
            if (2 * q + 1 < rk)
                D[slot(bk + 2 * q + 1)] = hi;
        }
        xs = bk;
        __syncthreads();
    }
    rv.d = D[slot(xs + q)];
    ru.d = fp_u_of(ru, q > 0 ? D[slot(xs + q - 1)] : T(0), rv.d);
    __syncthreads(); // the area is free again
    return ok;
}

// The lines flagged in lflag, by src.careful: MOHID's recurrence, one line at a time (they share the W/G
// area). Rare: no cost when no line of the block is flagged. Every thread of the block calls it; it starts
// with a barrier, so the area may still be read before it. Returns whether any line was flagged (the same
// for every thread): only then may the block have recorded a failure (tk_finish).
template <class Src>
__device__ __forceinline__ bool fp_fallback(int t, int q, int nl, const int *lflag, unsigned char *area, Src &src)
{
    if (!__syncthreads_or(t < nl && lflag[t] != 0))
        return false;
    double2 *wg = (double2 *)area;
    for (int u = 0; u < nl; ++u) {
        __syncthreads();
        if (t == u && q == 0 && lflag[u])
            src.careful(wg);
    }
    return true;
}

// The end of a block's solve: each line whose every chunk succeeded (ok) has its chunks' answers xv
// stored by src.store; the others go to fp_fallback (whose flag it returns). Every thread of the block
// calls it.
template <class T, int L, class Src>
__device__ __forceinline__ bool fp_commit(const fp_geom &geo, int t, int q, int nl, bool ok, int *lflag,
                                          unsigned char *area, Src &src, int s0, int len, const T (&xv)[L])
{
    const bool active = t < nl;
    if (!ok && active)
        lflag[t] = 1;
    __syncthreads();
    if (active && !lflag[t])
        src.store(s0, len, xv);
    return fp_fallback(t, q, nl, lflag, area, src);
}

// A chunk's rows from src, or identity rows for a thread without a line (its chunk then solves to 0).
template <class T, int L, class Src>
__device__ __forceinline__ void fp_load_rows(bool active, Src &src, int s0, int len, T (&av)[L], T (&bv)[L],
                                             T (&cv)[L], T (&dv)[L])
{
    if (active) {
        src.rows(s0, len, av, bv, cv, dv);
    } else {
FP_UNROLL
        for (int k = 0; k < L; ++k) {
            av[k] = cv[k] = dv[k] = T(0);
            bv[k] = T(1);
        }
    }
}

// The partitioned solve of a block's nl lines of n unknowns, every thread of the block calling it. The
// rows come from and the answers go to `src`, one per thread for the thread's own line t (fp_place):
//   src.rows(s0, len, a, b, c, d)  the rows s0 .. s0+len-1 into the arrays (a not read at the line's first
//                                  unknown, c not at its last), all loads at once;
//   src.store(s0, len, x)          the chunk's answers;
//   src.careful(wg)                the line again by MOHID's recurrence (one thread, W/G in wg, n double2),
//                                  its answers written only if every step succeeds, its failure reported.
// smem: fp_smem_bytes of shared memory. A line flagged by the partitioned solve goes to src.careful (decision
// 022), one line of the block at a time. Returns whether any line of the block was flagged (fp_fallback).
template <class T, int L, int MODE, int WJ = -1, class Src>
__device__ __forceinline__ bool fp_block(const fp_geom &geo, int n, int nl, unsigned char *smem, Src &src,
                                         int shift = -1)
{
    const auto [t, q, s0, len, active, lflag, area] = fp_block_start<MODE>(geo, n, nl, smem, L, shift);

    T av[L], bv[L], cv[L], dv[L];
    fp_load_rows<T, L>(active, src, s0, len, av, bv, cv, dv);
    fp_row<T> ru, rv;
    bool ok = fp_chunk<T, L>(len, av, bv, cv, dv, ru, rv);
    ok &= fp_join<T, MODE, WJ>(geo, t, q, area, ru, rv);
    ok &= fp_finish<T, L>(len, av, cv, dv, ru.d, rv.d);
    return fp_commit<T, L>(geo, t, q, nl, ok, lflag, area, src, s0, len, dv);
}

// MOHID's recurrence on one line (one thread), W/G in `wg`: the same steps and checks as tk_locate, the
// answers rounded to T as MOHID's are, written (put(m, x)) only if every step succeeded. row(m, &d, &e, &f)
// gives row m (d not read at the first unknown, f not at the last) and returns its right-hand side. Returns
// the failure kind, its unknown in *at.
template <class T, class Row, class Put>
__device__ int fp_careful_line(int64_t n, double2 *wg, Row row, Put put, int64_t *at)
{
    double w = 0.0, g = 0.0;
    for (int64_t m = 0; m < n; ++m) {
        double d, e, f;
        const double r = row(m, &d, &e, &f);
        const int k = tridi_thomas_forward(m ? d : 0.0, e, m < n - 1 ? f : 0.0, r, m == n - 1, &w, &g);
        if (k) {
            *at = m;
            return k;
        }
        wg[m] = make_double2(w, g);
    }
    double x = 0.0;
    for (int64_t m = n - 1; m >= 0; --m) {
        x = tridi_thomas_back(wg[m].x, wg[m].y, x, m == n - 1, sizeof(T) == 8);
        if (!tridi_thomas_finite(x)) {
            *at = m;
            return TRIDI_FAIL_ANSWER_OVERFLOW;
        }
        wg[m].x = x; // kept until the line is known to succeed
    }
    for (int64_t m = 0; m < n; ++m)
        put(m, (T)wg[m].x);
    return TRIDI_FAIL_NONE;
}

// The rows of a solve's arrays (tk_args) for one thread's line.
// A load of one value of a strided line; WIDE: L2 fetches the whole 128-byte line on a miss, so that the
// neighbouring lines' blocks find their cells in L2 (decision 057).
template <bool WIDE>
__device__ __forceinline__ float fp_ld(const float *p)
{
    if constexpr (!WIDE)
        return __ldg(p);
    float v;
    asm("ld.global.nc.L2::128B.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}
template <bool WIDE>
__device__ __forceinline__ double fp_ld(const double *p)
{
    if constexpr (!WIDE)
        return __ldg(p);
    double v;
    asm("ld.global.nc.L2::128B.f64 %0, [%1];" : "=d"(v) : "l"(p));
    return v;
}

// x lines: a chunk's L values from a 16-byte boundary, L * sizeof(T) / 16 vector loads or stores (fewer
// instructions and L1 wavefronts than L scalar ones; decision 089).
template <class T>
using fp_vec16 = std::conditional_t<sizeof(T) == 4, float4, double2>;
template <class T, int L>
__device__ __forceinline__ void fp_ld16(const T *p, T (&v)[L])
{
    constexpr int W = 16 / sizeof(T);
    static_assert(L % W == 0, "chunks of whole 16-byte words");
FP_UNROLL
    for (int j = 0; j < L / W; ++j) {
        const fp_vec16<T> x = __ldg((const fp_vec16<T> *)p + j);
        if constexpr (W == 4) {
            v[4 * j] = x.x, v[4 * j + 1] = x.y, v[4 * j + 2] = x.z, v[4 * j + 3] = x.w;
        } else {
            v[2 * j] = x.x, v[2 * j + 1] = x.y;
        }
    }
}
template <class T, int L>
__device__ __forceinline__ void fp_st16(T *p, const T (&v)[L])
{
FP_UNROLL
    for (int j = 0; j < L * (int)sizeof(T) / 16; ++j) {
        if constexpr (sizeof(T) == 4)
            ((float4 *)p)[j] = make_float4(v[4 * j], v[4 * j + 1], v[4 * j + 2], v[4 * j + 3]);
        else
            ((double2 *)p)[j] = make_double2(v[2 * j], v[2 * j + 1]);
    }
}
__device__ __forceinline__ bool fp_at16(const void *p) { return ((uintptr_t)p & 15) == 0; }

// VEC (x lines): a whole chunk whose rows all start on 16-byte boundaries (fp_x_shift puts them there, decision
// 109) loads by fp_ld16, lower at the line's first unknown and upper at its last then set to 0 (the cells
// exist: loaded, never used), and its answers leave by fp_st16.
template <class T, int L, bool WIDE = false, bool VEC = false>
struct fp_array_rows {
    const T *D, *E, *F, *R;
    T *X;
    int si, so, n;
    unsigned long long *err, *nfail;
    int64_t l;

    __device__ void rows(int s0, int len, T (&av)[L], T (&bv)[L], T (&cv)[L], T (&dv)[L]) const
    {
        // Every load of the chunk at once (lower not read at the line's first unknown, upper not at its last).
        if constexpr (VEC) {
            const int o = s0; // x lines: unit strides (the planner's FP_CONTIG)
            if (len == L && fp_at16(D + o) && fp_at16(E + o) && fp_at16(F + o) && fp_at16(R + o)) {
                fp_ld16(E + o, bv), fp_ld16(R + o, dv), fp_ld16(D + o, av), fp_ld16(F + o, cv);
                av[0] = s0 > 0 ? av[0] : T(0);
                cv[L - 1] = s0 + L < n ? cv[L - 1] : T(0);
                return;
            }
        }
FP_UNROLL
        for (int k = 0; k < L; ++k) {
            const int m = s0 + k, o = m * si;
            const bool in = k < len;
            bv[k] = in ? fp_ld<WIDE>(E + o) : T(1);
            dv[k] = in ? fp_ld<WIDE>(R + o) : T(0);
            av[k] = in && m > 0 ? fp_ld<WIDE>(D + o) : T(0);
            cv[k] = in && m < n - 1 ? fp_ld<WIDE>(F + o) : T(0);
        }
    }
    __device__ void store(int s0, int len, const T (&xv)[L]) const
    {
        if constexpr (VEC) {
            if (len == L && fp_at16(X + s0)) {
                fp_st16(X + s0, xv);
                return;
            }
        }
FP_UNROLL
        for (int k = 0; k < L; ++k)
            if (k < len)
                X[(s0 + k) * so] = xv[k];
    }
    __device__ void careful(double2 *wg) const
    {
        int64_t at;
        auto row = [&](int64_t m, double *d, double *e, double *f) {
            const int o = (int)m * si;
            *d = m ? (double)D[o] : 0.0;
            *e = (double)E[o];
            *f = m < n - 1 ? (double)F[o] : 0.0;
            return (double)R[o];
        };
        auto put = [&](int64_t m, T x) { X[(int)m * so] = x; };
        if (fp_careful_line<T>(n, wg, row, put, &at) != TRIDI_FAIL_NONE) {
            atomicMin(err, (unsigned long long)l);
            if (nfail)
                atomicAdd(nfail, 1ull);
        }
    }
};

// The rows of launch line li (its slot in the call, g: tk_line_of's run) for fp_line and fp_line_cl. Offsets
// are int: the plan takes a call only when every offset it touches fits.
template <class T, int L, bool WIDE, bool VEC>
__device__ __forceinline__ fp_array_rows<T, L, WIDE, VEC> fp_rows_of(const tk_args &a, int64_t li, int g)
{
    int64_t l1, l2;
    const int64_t l = tk_line_of(a, sizeof(T), a.l_begin + li, g, &l1, &l2);
    const int io = (int)(a.in.off + l1 * a.in.s1 + l2 * a.in.s2), oo = (int)(a.out.off + l1 * a.out.s1 + l2 * a.out.s2);
    return {(const T *)a.D + io, (const T *)a.E + io, (const T *)a.F + io, (const T *)a.R + io,
            (T *)a.X + oo, (int)a.in.sm, (int)a.out.sm, (int)a.n, a.err, a.nfail, l};
}

// WJ: geo.warp_join. A block
// a tile of `lines` lines; its end fences only where it recorded a failure (tk_finish, decision 100).
template <class T, int L, int MODE, int WJ>
__global__ void __launch_bounds__(FP_MAX_THREADS) fp_line(const tk_args a, const fp_geom geo)
{
    extern __shared__ __align__(16) unsigned char fp_dyn[];
    int t, q;
    fp_place<MODE>(geo, &t, &q);
    const int64_t li0 = (int64_t)blockIdx.x * geo.lines;
    const int nl = (int)min((int64_t)geo.lines, a.l_count - li0);
    const int g = MODE == FP_STRIDED ? warp_run(geo.lines, sizeof(T)) : 1;
    auto src = fp_rows_of<T, L, false, MODE == FP_CONTIG>(a, li0 + (t < nl ? t : 0), g);
    const int shift = MODE == FP_CONTIG ? fp_x_shift<T, L>(src.E, (int)a.n, geo.P) : -1;
    tk_finish(a, fp_block<T, L, MODE, WJ>(geo, (int)a.n, nl, fp_dyn, src, shift));
}

} // namespace

#endif
