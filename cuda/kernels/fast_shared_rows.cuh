// The FAST partitioned solve (fast_core.cuh, fast_lines.cuh) of lines that all have the same rows, only
// their right-hand sides differing: a sweep of the heat operator, whose rows depend on the position along
// the line alone (docs/decisions/032). Everything of fp_chunk and the reduction that depends on the rows
// alone (the pivots, the chunks' a'' and c'', their reduced rows' coefficients) is made once per sweep
// into a table in global memory (fs_build_table, one thread a chunk); each line's thread then carries only
// its chunk's right-hand sides in registers and reads the table through L1. The arithmetic is fp_chunk's
// and fp_finish's, operation for operation, so a line gets the answers fp_block would give it.
#ifndef TRIDI_FAST_SHARED_ROWS_CUH
#define TRIDI_FAST_SHARED_ROWS_CUH

#include "fast_lines.cuh"

// A pivot of the shared rows that is not a normal number sends every line to src.careful (MOHID's
// recurrence, which names the line and cell); a line whose values stop being finite goes there alone, as
// in fp_block.

namespace {

constexpr int FS_MAX_THREADS = 256; // per block: several blocks an SM, whose load and reduction phases overlap
// y/z lines of 64 chunks or more, and double lines of 32: blocks of 512 threads, runs of twice the bytes a warp
// (decisions 083, 084)
constexpr int FS_LONG_THREADS = 512;
constexpr int FS_X_THREADS = 128;   // per block of x lines (FP_CONTIG), which stage their lines

// Unknowns a chunk: 16 for double, 32 for float, whose y/z warps then read 64-byte runs of 16 neighbouring
// lines in a block of 256 threads, and whose join has half the rows a cell on every axis (decisions 034, 072).
template <class T>
__host__ __device__ constexpr int fs_chunk()
{
    return sizeof(T) == 4 ? 32 : 16;
}

// A staged line's index of unknown m in chunks of L: one word of padding every L, so that the neighbouring
// chunks of a warp (x lines, L unknowns apart) fall on different banks.
template <int L>
__device__ __forceinline__ int fs_pos(int m) { return m + m / L; }

// The table's per-unknown arrays hold unknown k of every chunk together (chunk q's at k * FS_TSTRIDE + q): a
// warp's lanes, on neighbouring chunks of x lines or on one chunk of y/z lines, read neighbouring or equal
// words (decision 070). FS_TSTRIDE: the most chunks a line has (FP_N_MAX in chunks of at least 16); each
// array FS_TCELLS long (a chunk has at most 32 unknowns), so that all lie at fixed offsets from one pointer.
constexpr int FS_TSTRIDE = (int)(FP_N_MAX / 16), FS_TCELLS = 32 * FS_TSTRIDE;

// The table of a sweep's shared rows (fs_table): a word saying whether every pivot was a normal number,
// then the arrays.
constexpr size_t FS_TABLE_HEAD = 16;
// The join's levels for P chunks (fp_join's, decision 110): the v rows from the u rows, then its steps 1, 2,
// 4, ... below P v rows.
__host__ __device__ inline int fs_levels(int P)
{
    int lv = 1;
    for (int s = 1; s < P; s <<= 1)
        ++lv;
    return lv;
}
template <class T>
__host__ __device__ inline size_t fs_table_bytes(int P)
{
    const size_t join = (size_t)3 * fs_levels(P) * P;
    return FS_TABLE_HEAD + ((5 * (size_t)FS_TCELLS + 4 * (size_t)P + join) * sizeof(T) + 15) / 16 * 16;
}

// A block's right-hand sides staged in shared memory (fs_block with Src::STAGED): a line after another,
// fs_pos-indexed.
template <class T>
__host__ __device__ inline int fs_pitch(int64_t n) { return (int)(n + n / fs_chunk<T>() + 1); }

// Shared memory of a block: the line flags, the table, then the area of the staged right-hand sides
// (staged: Src::STAGED), then of the reduction, then of the fallback.
template <class T>
inline size_t fs_smem_bytes(int64_t n, const fp_geom &g, bool staged)
{
    const size_t red = (size_t)2 * g.P * g.lines * sizeof(T), wg = (size_t)n * 2 * sizeof(double);
    const size_t rhs = staged ? (size_t)g.lines * fs_pitch<T>(n) * sizeof(T) : 0;
    size_t area = red > wg ? red : wg;
    area = area > rhs ? area : rhs;
    return fp_flag_bytes(g) + area;
}

// The shape: chunks of fs_chunk; y/z lines (FP_STRIDED) with up to 128 bytes of neighbouring lines in a warp's
// rows within FS_MAX_THREADS (FS_LONG_THREADS for 64 chunks or more, or double lines of 32), x lines (FP_CONTIG)
// within FS_X_THREADS.
// False past FP_N_MAX.
template <class T>
__host__ inline bool fs_shape(int64_t n, bool contig, fp_geom *g)
{
    if (n < 1 || n > FP_N_MAX)
        return false;
    const int P = fp_chunks(n, fs_chunk<T>());
    int lines;
    if (contig) {
        lines = FS_X_THREADS / P > 1 ? FS_X_THREADS / P : 1;
    } else {
        const int cap = P >= 64 || (sizeof(T) == 8 && P >= 32) ? FS_LONG_THREADS : FS_MAX_THREADS;
        const int run = 128 / (int)sizeof(T), most = cap / P > 1 ? cap / P : 1;
        lines = run < most ? run : most;
    }
    *g = {P, lines};
    return P <= FS_TSTRIDE && lines * P <= (contig ? FS_X_THREADS : FS_LONG_THREADS);
}

// The sweep's table, in global memory: per unknown (at(q, k): chunk q's unknown k) the lower coefficient
// the forward step subtracts with (alpha), the reciprocal of its pivot (inv; the chunk's first unknown: that
// of its row 0 after substitution), the upper coefficient of the backward step (gamma; the first unknown: the one row
// 0 substitutes with, 0 for chunks of two), a'' and c''; per chunk its reduced rows' a and c; per level of
// the join and chunk (jpos) its v row's a and c before the level and the reciprocal of its pivot there (ja,
// jc, jinv): the rows are the same on every line, so a line's join carries its right-hand sides alone
// (fs_join).
template <class T>
struct fs_table {
    T *cell, *ua, *uc, *va, *vc, *ja, *jc, *jinv;
    int P;
    __device__ fs_table(unsigned char *table, int P_) : P(P_)
    {
        cell = (T *)(table + FS_TABLE_HEAD);
        ua = cell + 5 * FS_TCELLS;
        uc = ua + P;
        va = uc + P;
        vc = va + P;
        ja = vc + P;
        jc = ja + fs_levels(P) * P;
        jinv = jc + fs_levels(P) * P;
    }
    __device__ T *alpha() const { return cell; }
    __device__ T *inv() const { return cell + FS_TCELLS; }
    __device__ T *gamma() const { return cell + 2 * FS_TCELLS; }
    __device__ T *a2() const { return cell + 3 * FS_TCELLS; }
    __device__ T *c2() const { return cell + 4 * FS_TCELLS; }
    // Chunk q's unknown k in the per-unknown arrays.
    __device__ int at(int q, int k) const { return k * FS_TSTRIDE + q; }
    // Chunk q's v row at level lv.
    __device__ int jpos(int lv, int q) const { return lv * P + q; }
};

// fp_chunk's row-only part for chunk q (rows s0 .. s0+len-1 from src.shared_row) into the table. False if a
// pivot is not a normal number or a coefficient is not finite.
template <class T, class Src>
__device__ bool fs_build(const fs_table<T> &tb, int q, int s0, int len, const Src &src)
{
    T a, b, c;
    if (len == 1) {
        src.shared_row(s0, &a, &b, &c);
        const T inv = fp_rcp(b);
        tb.inv()[tb.at(q, 0)] = inv;
        tb.ua[q] = a * inv;
        tb.uc[q] = c * inv;
        tb.va[q] = tb.vc[q] = T(0);
        return fp_pivot_ok(b) && fp_finite(tb.ua[q]) && fp_finite(tb.uc[q]);
    }
    bool ok = true;
    src.shared_row(s0 + 1, &a, &b, &c);
    ok &= fp_pivot_ok(b);
    T inv = fp_rcp(b), A = a * inv, C = c * inv;
    tb.inv()[tb.at(q, 1)] = inv;
    tb.a2()[tb.at(q, 1)] = A;
    tb.c2()[tb.at(q, 1)] = C;
    for (int k = 2; k < len; ++k) {
        const int p = tb.at(q, k);
        src.shared_row(s0 + k, &a, &b, &c);
        const T den = b - a * C;
        ok &= fp_pivot_ok(den);
        inv = fp_rcp(den);
        A = -a * A * inv;
        C = c * inv;
        tb.alpha()[p] = a;
        tb.inv()[p] = inv;
        tb.a2()[p] = A;
        tb.c2()[p] = C;
    }
    tb.va[q] = A;
    tb.vc[q] = C;
    for (int k = len - 3; k >= 1; --k) {
        const int p = tb.at(q, k), p1 = tb.at(q, k + 1);
        const T ck = tb.c2()[p];
        tb.gamma()[p] = ck;
        tb.a2()[p] -= ck * tb.a2()[p1];
        tb.c2()[p] = -ck * tb.c2()[p1];
    }
    src.shared_row(s0, &a, &b, &c);
    T B = b, C0 = c, g0 = T(0);
    if (len > 2) {
        B = b - c * tb.a2()[tb.at(q, 1)];
        C0 = -c * tb.c2()[tb.at(q, 1)];
        g0 = c;
    }
    ok &= fp_pivot_ok(B);
    inv = fp_rcp(B);
    tb.inv()[tb.at(q, 0)] = inv;
    tb.gamma()[tb.at(q, 0)] = g0;
    tb.ua[q] = a * inv;
    tb.uc[q] = C0 * inv;
    return ok && fp_finite(tb.ua[q]) && fp_finite(tb.uc[q]) && fp_finite(tb.va[q]) && fp_finite(tb.vc[q]);
}

// The table of a sweep's shared rows, made by one block of at least P threads (thread q: chunk q), into
// table (fs_table_bytes, global memory), read by every block of the sweep (fs_block).
template <class T, class Src>
__device__ void fs_build_table(unsigned char *table, int n, int P, const Src &src)
{
    const fs_table<T> tb(table, P);
    const int q = threadIdx.x;
    bool ok = true;
    if (q < P) {
        long long s0;
        int len;
        fp_chunk_range(n, P, q, &s0, &len);
        ok = fs_build<T>(tb, q, (int)s0, len, src);
    }
    ok = __syncthreads_and(ok);
    // The join's v rows level by level, as fp_join reduces them (fp_reduce's a, c and pivot; level 0 against
    // the u rows of the chunk and the next, then the v rows q -+ s; a row past either end is a zero row); the
    // table's global memory is the exchange, made visible by the barriers.
    const int levels = fs_levels(P);
    if (q < P) {
        tb.ja[tb.jpos(0, q)] = tb.va[q];
        tb.jc[tb.jpos(0, q)] = tb.vc[q];
    }
    for (int lv = 0, s = 0; lv < levels; ++lv, s = s ? 2 * s : 1) {
        __syncthreads();
        T na = T(0), nc = T(0);
        if (q < P) {
            const T a = tb.ja[tb.jpos(lv, q)], c = tb.jc[tb.jpos(lv, q)];
            T la, lc, ha, hc;
            if (lv == 0) {
                la = tb.ua[q], lc = tb.uc[q];
                ha = q + 1 < P ? tb.ua[q + 1] : T(0), hc = q + 1 < P ? tb.uc[q + 1] : T(0);
            } else {
                la = q >= s ? tb.ja[tb.jpos(lv, q - s)] : T(0), lc = q >= s ? tb.jc[tb.jpos(lv, q - s)] : T(0);
                ha = q + s < P ? tb.ja[tb.jpos(lv, q + s)] : T(0), hc = q + s < P ? tb.jc[tb.jpos(lv, q + s)] : T(0);
            }
            const T den = T(1) - a * lc - c * ha; // fp_reduce's
            ok &= fp_pivot_ok(den);
            const T inv = fp_rcp(den);
            tb.jinv[tb.jpos(lv, q)] = inv;
            na = -a * la * inv;
            nc = -c * hc * inv;
        }
        __syncthreads();
        if (q < P && lv + 1 < levels) {
            tb.ja[tb.jpos(lv + 1, q)] = na;
            tb.jc[tb.jpos(lv + 1, q)] = nc;
        }
    }
    ok = __syncthreads_and(ok);
    if (q == 0)
        *(int *)table = ok;
}

// The barrier of fs_block's phases: the block's, or where each line has the area of its own (G, a line's
// threads, a power of two, 0 for none; one, two or more lines a warp, or a line of two warps, whose named
// barrier is 1 + t) its line's alone, so that a block's lines do not wait on each other (decision 082).
template <int G>
__device__ __forceinline__ void fs_sync(bool per_line, int t)
{
    if constexpr (G > 32) {
        if (per_line) {
            asm volatile("bar.sync %0, %1;" ::"r"(1 + t), "n"(G) : "memory");
            return;
        }
    } else if constexpr (G > 0) {
        if (per_line) {
            __syncwarp();
            return;
        }
    }
    __syncthreads();
}

// fp_join for lines of shared rows: the rows' part of every level from the table (fs_build_table), each
// line's right-hand sides alone through `area` (two buffers in turn: one barrier a level). On return u and v
// are the chunk's first and last unknowns; the pivots were checked with the table. Ends with a barrier: the
// area is free again. per_line: area is line t's own, as it is the only line (fs_sync).
template <class T, int MODE, int G = 0>
__device__ __forceinline__ void fs_join(const fp_geom &geo, const fs_table<T> &tb, int t_, int q, unsigned char *area,
                                        T &u, T &v, bool per_line = false)
{
    const int P = geo.P, TL = per_line ? 1 : geo.lines, NT = P * TL, levels = fs_levels(P);
    const int t = per_line ? 0 : t_;
    const int o = MODE == FP_STRIDED ? q * TL + t : t * P + q, up = MODE == FP_STRIDED ? TL : 1;
    T *d = (T *)area;
    d[o] = u;
    fs_sync<G>(per_line, t_);
    {
        const int p = tb.jpos(0, q);
        const T hi = q + 1 < P ? d[o + up] : T(0);
        v = (v - __ldg(tb.ja + p) * u - __ldg(tb.jc + p) * hi) * __ldg(tb.jinv + p); // fp_reduce's d
    }
    for (int lv = 1, s = 1; lv < levels; ++lv, s <<= 1) {
        d = (T *)area + (lv & 1) * NT;
        d[o] = v;
        fs_sync<G>(per_line, t_);
        const T lo = q >= s ? d[o - s * up] : T(0), hi = q + s < P ? d[o + s * up] : T(0);
        const int p = tb.jpos(lv, q);
        v = (v - __ldg(tb.ja + p) * lo - __ldg(tb.jc + p) * hi) * __ldg(tb.jinv + p);
    }
    d = (T *)area + (levels & 1) * NT;
    d[o] = v;
    fs_sync<G>(per_line, t_);
    u = fp_u_of(fp_row<T>{__ldg(tb.ua + q), __ldg(tb.uc + q), u}, q > 0 ? d[o - up] : T(0), v);
    fs_sync<G>(per_line, t_);
}

// fs_block's solve of one thread's chunk, from its right-hand sides dv to its answers, given the block's
// area for the reduction; returns false if the chunk's values stop being finite. FULL: every chunk of the
// line has L unknowns (n a multiple of L), so the chunk's staged entries lie at fixed offsets from its
// first (fs_pos(s0 + k) = fs_pos(s0) + k) and no step tests the chunk's length:
// half the instructions of the general form, which the sweeps of 256, 512 or 1024 cells take (decision 034).
template <class T, int L, int MODE, bool FULL, int G = 0>
__device__ __forceinline__ bool fs_chunk_solve(const fp_geom &geo, const fs_table<T> &tb, bool rows_ok, int t, int q,
                                               int s0, int len_, T (&dv)[L], unsigned char *area, bool per_line)
{
    const int len = FULL ? L : len_;
    auto at = [&](int k) { return tb.at(q, k); };
    // fp_chunk on the right-hand sides, the rows' part from the table
    fp_row<T> ru, rv;
    if (len == 1) {
        ru = {tb.ua[q], tb.uc[q], dv[0] * tb.inv()[at(0)]};
        rv = {T(0), T(0), T(0)};
    } else {
        dv[1] *= tb.inv()[at(1)];
        rv = {tb.va[q], tb.vc[q], dv[1]};
FP_UNROLL
        for (int k = 2; k < L; ++k)
            if (k < len) {
                const int p = at(k);
                dv[k] = (dv[k] - tb.alpha()[p] * dv[k - 1]) * tb.inv()[p];
                rv.d = dv[k];
            }
FP_UNROLL
        for (int k = L - 3; k >= 1; --k)
            if (k <= len - 3)
                dv[k] -= tb.gamma()[at(k)] * dv[k + 1];
        ru = {tb.ua[q], tb.uc[q], (dv[0] - tb.gamma()[at(0)] * dv[1]) * tb.inv()[at(0)]};
    }
    const bool ok = rows_ok && fp_finite(ru.d) && fp_finite(rv.d);
    fs_join<T, MODE, G>(geo, tb, t, q, area, ru.d, rv.d, per_line);
    // fp_finish, a'' and c'' from the table
    const T u = ru.d, v = rv.d;
    bool fin = fp_finite(u); // every answer checked, as fp_finish does
FP_UNROLL
    for (int k = 1; k < L; ++k) {
        if (k < len - 1) {
            const int p = at(k);
            dv[k] = dv[k] - tb.a2()[p] * u - tb.c2()[p] * v;
        } else {
            dv[k] = v;
        }
        if (k < len)
            fin &= fp_finite(dv[k]);
    }
    dv[0] = u;
    return ok && fin;
}

// fp_block for lines of shared rows: src gives shared_row(m, &a, &b, &c) (the rows every line has, a zero
// at the first unknown and c at the last), the right-hand sides, and store and careful as for fp_block.
// The right-hand sides: with Src::STAGED false, rhs(s0, len, d) gives the thread's chunk's; with it true
// every thread calls stage(buf, t, q, P, active), which writes its line's right-hand sides into buf (line t
// at t * fs_pitch<T>(n), unknown m at fs_pos(m)) with neighbouring threads on neighbouring unknowns, so
// that right-hand sides read from a stencil of the field are read in whole runs (x lines, decision 032),
// and the answers go back the same way: unstage(buf, lflag, t, q, P, active), the lines without a flag.
// smem: fs_smem_bytes; table: the sweep's table (fs_build_table, run before on the same stream).
// Src::LINE_THREADS (staged lines, 0 for none): lines of that many threads, a power of two, each of whose
// join runs in its own line's staged area behind its own barriers (fs_sync).
template <class T, int L, int MODE, class Src>
__device__ __forceinline__ void fs_block(const fp_geom &geo, int n, int nl, unsigned char *smem, Src &src,
                                         unsigned char *table)
{
    static_assert(L == fs_chunk<T>(), "fs_pitch and fs_shape count chunks of fs_chunk");
    const fp_thread th = fp_thread_of<MODE>(geo, n, nl);
    const int t = th.t, q = th.q, s0 = th.s0, len = th.len;
    const bool active = th.active;
    int *lflag = (int *)smem;
    const fs_table<T> tb(table, geo.P);
    unsigned char *area = smem + fp_flag_bytes(geo);
    if (q == 0)
        lflag[t] = 0;
    const bool rows_ok = *(const int *)table != 0; // written by fs_build_table, the kernel before
    const bool full = L % 16 == 0 && n % L == 0;    // the same for every thread of the block
    constexpr int G = Src::LINE_THREADS;
    const bool per_line = G > 0 && geo.P == G; // a 2P-long join area fits a line's pitch
    unsigned char *join = per_line ? (unsigned char *)((T *)area + t * fs_pitch<T>(n)) : area;

    T dv[L];
    if constexpr (Src::STAGED) {
        src.stage((T *)area, t, q, geo.P, active);
        fs_sync<G>(per_line, t);
        const T *mine = (T *)area + t * fs_pitch<T>(n);
        if (full && active) {
FP_UNROLL
            for (int k = 0; k < L; ++k)
                dv[k] = mine[fs_pos<L>(s0) + k];
        } else {
FP_UNROLL
            for (int k = 0; k < L; ++k)
                dv[k] = active && k < len ? mine[fs_pos<L>(s0 + k)] : T(0);
        }
        fs_sync<G>(per_line, t); // the area is the reduction's next
    } else {
        if (active || Src::RHS_ALL_LANES) // the latter: src's lanes exchange values
            src.rhs(s0, len, dv);
        if (!active)
FP_UNROLL
            for (int k = 0; k < L; ++k)
                dv[k] = T(0);
    }
    bool ok;
    if constexpr (L % 16 == 0)
        ok = full ? fs_chunk_solve<T, L, MODE, true, G>(geo, tb, rows_ok, t, q, s0, len, dv, join, per_line)
                  : fs_chunk_solve<T, L, MODE, false, G>(geo, tb, rows_ok, t, q, s0, len, dv, join, per_line);
    else
        ok = fs_chunk_solve<T, L, MODE, false, G>(geo, tb, rows_ok, t, q, s0, len, dv, join, per_line);
    if constexpr (Src::STAGED) {
        // The answers leave as the right-hand sides came: through the area, src.unstage storing whole
        // runs of each line that succeeded.
        if (!ok && active)
            lflag[t] = 1;
        T *mine = (T *)area + t * fs_pitch<T>(n);
        if (full && active) {
FP_UNROLL
            for (int k = 0; k < L; ++k)
                mine[fs_pos<L>(s0) + k] = dv[k];
        } else {
FP_UNROLL
            for (int k = 0; k < L; ++k)
                if (active && k < len)
                    mine[fs_pos<L>(s0 + k)] = dv[k];
        }
        fs_sync<G>(per_line, t);
        src.unstage((const T *)area, lflag, t, q, geo.P, active);
        fp_fallback(t, q, nl, lflag, area, src);
    } else {
        fp_commit<T, L>(geo, t, q, nl, ok, lflag, area, src, s0, len, dv);
    }
}

} // namespace

#endif
