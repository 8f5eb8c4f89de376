// tx_line: MOHID's arithmetic on long x lines (unknowns adjacent in memory), one thread per line, a warp of 32
// neighbouring lines, W/G checkpointed as tc_line (ckpt.cuh) does, but the inputs arrive in tiles of 64
// (all-float lines: 32) bytes of each line per array (32 lines x tx_s unknowns), copied by the warp into a
// shared-memory ring, so each SM holds its bytes in flight itself and not in L2. The back substitution re-reads
// the tiles from the line's end and recomputes each tile's W/G in registers from its checkpoint with the core's
// steps (the same bits). Tiles start on 16-byte boundaries of the arrays (a line's first tile starts up to 3
// cells before it) and move as 16-byte copies, read back as 16-byte vectors, where the four inputs' addresses
// allow it (tx_granules_fit); otherwise cell by cell into the same layout. Nothing outside a line is read.
// Decisions 063, 096, 098, 105; cuda/planner.cu.
#ifndef TRIDI_CUDA_KERNELS_XTILE_CUH
#define TRIDI_CUDA_KERNELS_XTILE_CUH

#include <cuda_pipeline.h>

#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "common.cuh"

namespace {

// Unknowns per tile: 64 bytes of lower/upper/rhs of a line (float 16, double 8) where the diagonal is double:
// two ring slots of 32 lines then leave 8 blocks an SM (128 bytes left 4-5, too few for the chain of
// divisions: decision 063); all-float lines 32 bytes (8), padded to the same 8 blocks (decision 098). A tile
// is also the chunk a checkpoint starts.
template <class TL, class TD>
__host__ __device__ constexpr int tx_s() { return (sizeof(TD) == 4 ? 32 : 64) / (int)sizeof(TL); }

// A line's row of one array (element type T) in a ring slot: the tile's 16-byte granules and one more, so a
// quarter warp's 16-byte reads of eight rows' same granule hit eight different bank groups.
template <class T, class TL, class TD>
__host__ __device__ constexpr int tx_row_bytes() { return tx_s<TL, TD>() * (int)sizeof(T) + 16; }

// One ring slot: diag, lower, upper, rhs, each [32 lines][row]; a tile of answers after the ring, [32][S + 1].
template <class TL, class TD>
__host__ __device__ constexpr size_t tx_slot_bytes()
{
    return (size_t)TK_T * (tx_row_bytes<TD, TL, TD>() + 3 * tx_row_bytes<TL, TL, TD>());
}

template <class TL, class TD, class TX>
__host__ __device__ inline size_t tx_smem_bytes(int ns)
{
    return (size_t)ns * tx_slot_bytes<TL, TD>() + (size_t)TK_T * (tx_s<TL, TD>() + 1) * sizeof(TX);
}

// Whether every line's tiles can start on a 16-byte boundary of all four inputs at once: the same cell of
// each array then sits at the same offset within its 16 bytes (E's granule of 16 / sizeof(TD) cells inside
// the others' of 16 / sizeof(TL)), as it does for arrays of their own allocations.
template <class TL, class TD>
inline bool tx_granules_fit(const tk_args &a)
{
    const uintptr_t d = (uintptr_t)a.D, e = (uintptr_t)a.E, f = (uintptr_t)a.F, r = (uintptr_t)a.R;
    if (!d || !e || !f || !r || d % sizeof(TL) || f % sizeof(TL) || r % sizeof(TL) || e % sizeof(TD))
        return false;
    const uintptr_t vl = 16 / sizeof(TL), ph = d / sizeof(TL) % vl;
    const uintptr_t e0 = (vl - ph) % vl; // the cells from the array's start to its first 16-byte boundary
    return f / sizeof(TL) % vl == ph && r / sizeof(TL) % vl == ph && (e + e0 * sizeof(TD)) % 16 == 0;
}

// A 16-byte granule of a tile row.
template <class T>
struct alignas(16) tx_gran {
    T v[16 / sizeof(T)];
};

__device__ __forceinline__ void tx_cp16(unsigned saddr, const void *gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(saddr), "l"(gmem) : "memory");
}

// The warp's copies of one array (cell type T, GR granules a tile row) in 16-byte granules: instruction g
// moves granule t % GR of line g * (32 / GR) + t / GR (lines past the block's last take its first line's
// cells, which no lane reads). eo[g]: that granule's first cell at tile 0 as an offset of the array; its
// line's first tile starts sh cells before the line (0 <= sh < 16 / sizeof(TL)).
template <class T, class TL, class TD, class I>
struct tx_granule_copy {
    static constexpr int S = tx_s<TL, TD>(), V = 16 / (int)sizeof(T), GR = S / V, LPG = TK_T / GR,
                         ROW = tx_row_bytes<T, TL, TD>();
    I eo[GR];
    unsigned dst; // this lane's granule in instruction 0, from its array's start in a slot
    __device__ __forceinline__ void init(int t, int nl, I io, int sh)
    {
        const int g = t % GR;
#pragma unroll
        for (int q = 0; q < GR; ++q) {
            const int j = q * LPG + t / GR;
            const int src = j < nl ? j : 0;
            eo[q] = __shfl_sync(0xffffffffu, io, src) - (I)__shfl_sync(0xffffffffu, sh, src) + (I)(g * V);
        }
        dst = (unsigned)((t / GR) * ROW + g * 16);
    }
    // Tile c of every line into the array's rows at shared address base. WHOLE: every line's tile lies
    // inside the line (the warp's tiles after its first and before its last ones); otherwise a granule that
    // reaches past either end of its line moves cell by cell, its cells in the line alone.
    template <bool WHOLE>
    __device__ __forceinline__ void issue(const T *A, unsigned base, int64_t c, int t, int nl, int sh, int64_t n) const
    {
#pragma unroll
        for (int q = 0; q < GR; ++q) {
            const I o = eo[q] + (I)(c * S);
            const unsigned sa = base + dst + (unsigned)(q * LPG * ROW);
            if constexpr (WHOLE) {
                tx_cp16(sa, A + o);
            } else {
                const int j = q * LPG + t / GR;
                const int64_t m = c * S - __shfl_sync(0xffffffffu, sh, j < nl ? j : 0) + (t % GR) * V;
                if (m >= 0 && m + V <= n) {
                    tx_cp16(sa, A + o);
                } else {
#pragma unroll
                    for (int e = 0; e < V; ++e)
                        if (m + e >= 0 && m + e < n)
                            tk_cp_at(sa + (unsigned)(e * sizeof(T)), A + o + e);
                }
            }
        }
    }
};

// ns_hint: ring slots (2..TK_STAGES_MAX). Checkpoint c (the state before tile c, c >= 1) of launch line li
// sits in the scratch at c * l_count + li. Failing lines and the overflow bound: tc_line's rules. G16: the
// tiles move in 16-byte granules (tx_granules_fit holds), otherwise cell by cell, each line's tiles from
// its first cell.
template <class TL, class TD, class TX, class I, int AR, bool G16>
__global__ void __launch_bounds__(TK_T) tx_line(const tk_args a, const int ns_hint)
{
    constexpr bool PF32 = sizeof(TL) == 4;
    constexpr int T = TK_T, S = tx_s<TL, TD>(), P = S + 1, LPI = T / S, VL = 16 / (int)sizeof(TL),
                  VE = 16 / (int)sizeof(TD), RE = tx_row_bytes<TD, TL, TD>(), RL = tx_row_bytes<TL, TL, TD>();
    static_assert(T % S == 0 && S % VL == 0 && S % VE == 0, "tile shape");
    const int NS = ns_hint & 15;
    extern __shared__ __align__(16) unsigned char tk_dyn[];
    const tk_lane<I> ln(a, sizeof(TL));
    const int t = ln.t, nl = ln.nl;
    const bool active = ln.active;
    const int row = active ? t : 0; // lanes past the last line read line 0's tiles and write nothing
    const int64_t n = a.n;
    double2 *ck = (double2 *)a.scratch + ln.li0 + row;
    const int64_t cks = a.l_count;

    const TD *E = (const TD *)a.E;
    const TL *D = (const TL *)a.D, *F = (const TL *)a.F, *R = (const TL *)a.R;
    TX *X = (TX *)a.X;
    constexpr size_t SLOT = tx_slot_bytes<TL, TD>(), AE = (size_t)T * RE, AL = (size_t)T * RL;
    TX *sX = (TX *)(tk_dyn + (size_t)NS * SLOT);

    // sh: the cells of this lane's line before its first tile (its tile c starts at unknown c * S - sh).
    int sh = 0;
    if constexpr (G16)
        sh = (int)(((uintptr_t)(D + ln.io) / sizeof(TL)) & (uintptr_t)(VL - 1));
    const int shmax = G16 ? (int)__reduce_max_sync(0xffffffffu, (unsigned)sh) : 0;
    const int64_t nt = (n + shmax + S - 1) / S;

    const unsigned s0 = (unsigned)__cvta_generic_to_shared(tk_dyn);
    tx_granule_copy<TD, TL, TD, I> cE;
    tx_granule_copy<TL, TL, TD, I> cL;
    if constexpr (G16) {
        cE.init(t, nl, ln.io, sh);
        cL.init(t, nl, ln.io, sh);
    }
    const int shmin = G16 ? (int)__reduce_min_sync(0xffffffffu, (unsigned)sh) : 0;
    // The copies of tile c (c < 0: none) into ring slot slot_in. Cell by cell: instruction j0 moves unknown
    // c * S + t % S of line j0 + t / S (LPI lines an instruction).
    int slot_in = 0;
    auto issue = [&](int64_t c) {
        if (c >= 0) {
            const unsigned base = s0 + (unsigned)(slot_in * SLOT);
            if constexpr (G16) {
                if ((c > 0 || shmax == 0) && (c + 1) * S - shmin <= n) {
                    cE.template issue<true>(E, base, c, t, nl, sh, n);
                    cL.template issue<true>(D, base + (unsigned)AE, c, t, nl, sh, n);
                    cL.template issue<true>(F, base + (unsigned)(AE + AL), c, t, nl, sh, n);
                    cL.template issue<true>(R, base + (unsigned)(AE + 2 * AL), c, t, nl, sh, n);
                } else {
                    cE.template issue<false>(E, base, c, t, nl, sh, n);
                    cL.template issue<false>(D, base + (unsigned)AE, c, t, nl, sh, n);
                    cL.template issue<false>(F, base + (unsigned)(AE + AL), c, t, nl, sh, n);
                    cL.template issue<false>(R, base + (unsigned)(AE + 2 * AL), c, t, nl, sh, n);
                }
            } else {
                const int kq = t % S, jq = t / S;
                const int64_t m = c * S + kq;
                for (int j0 = 0; j0 < nl; j0 += LPI) {
                    const I lo = __shfl_sync(0xffffffffu, ln.io, (j0 + jq) & (T - 1));
                    if (j0 + jq < nl && m < n) {
                        const I o = lo + (I)m;
                        const unsigned j = (unsigned)(j0 + jq);
                        __pipeline_memcpy_async(tk_dyn + slot_in * SLOT + j * RE + kq * sizeof(TD), E + o, sizeof(TD));
                        __pipeline_memcpy_async(tk_dyn + slot_in * SLOT + AE + j * RL + kq * sizeof(TL), D + o,
                                                sizeof(TL));
                        __pipeline_memcpy_async(tk_dyn + slot_in * SLOT + AE + AL + j * RL + kq * sizeof(TL), F + o,
                                                sizeof(TL));
                        __pipeline_memcpy_async(tk_dyn + slot_in * SLOT + AE + 2 * AL + j * RL + kq * sizeof(TL),
                                                R + o, sizeof(TL));
                    }
                }
            }
        }
        slot_in = slot_in + 1 == NS ? 0 : slot_in + 1;
        __pipeline_commit(); // an empty group past the end keeps the wait counts uniform
    };

    // Runs body(c, slot) over tiles seq(0), ..., seq(nt - 1), slot the tile's ring slot, NS - 1 tiles in
    // flight meanwhile; pre(i) before the wait on tile i.
    auto walk = [&](auto &&seq, auto &&pre, auto &&body) {
        slot_in = 0;
        int slot = 0;
        for (int s = 0; s < NS - 1; ++s)
            issue(s < nt ? seq(s) : -1);
        for (int64_t i = 0; i < nt; ++i) {
            __syncwarp(); // every lane is done with the slot (and the answer tile) about to be reused
            issue(i + NS - 1 < nt ? seq(i + NS - 1) : -1);
            pre(i);
            __pipeline_wait_prior(NS - 1);
            __syncwarp(); // the other lanes' copies into this tile are visible
            body(seq(i), slot);
            slot = slot + 1 == NS ? 0 : slot + 1;
        }
        __pipeline_wait_prior(0);
        __syncwarp();
    };
    // One tile from unknown c0 (up to sh cells before the line) in ring slot `slot`: MOHID's recurrence on
    // (ww, gg), each(k) after unknown c0 + k; its rows read as 16-byte vectors. IN (interior): no first or
    // last unknown inside, no tests; otherwise lower and upper are 0 where they are not read, cells outside
    // the line skipped.
    auto chunk = [&](auto in, int slot, int64_t c0, double &ww, double &gg, bool &bb, auto &&each) {
        constexpr bool IN = decltype(in)::value;
        const unsigned char *b = tk_dyn + (size_t)slot * SLOT;
        const tx_gran<TD> *tE = (const tx_gran<TD> *)(b + row * RE);
        const tx_gran<TL> *tD = (const tx_gran<TL> *)(b + AE + row * RL), *tF = (const tx_gran<TL> *)(b + AE + AL + row * RL),
                          *tR = (const tx_gran<TL> *)(b + AE + 2 * AL + row * RL);
        tx_gran<TD> ge;
        tx_gran<TL> gd, gf, gr;
#pragma unroll
        for (int k = 0; k < S; ++k) {
            if (k % VE == 0)
                ge = tE[k / VE];
            if (k % VL == 0)
                gd = tD[k / VL], gf = tF[k / VL], gr = tR[k / VL];
            const int64_t m = c0 + k;
            if (!IN && m < 0)
                continue;
            if (!IN && m >= n)
                break;
            const double d = IN || m > 0 ? (double)gd.v[k % VL] : 0.0, f = IN || m < n - 1 ? (double)gf.v[k % VL] : 0.0;
            // both quotients over one reciprocal, as in every MOHID kernel (decision 102)
            tk_unknown<AR, PF32>(!IN && m == 0, !IN && m == n - 1, d, (double)ge.v[k % VE], f, (double)gr.v[k % VL],
                                 ww, gg, bb);
            each(k);
        }
    };
    auto run_chunk = [&](int slot, int64_t c0, double &ww, double &gg, bool &bb, auto &&each) {
        if (c0 > 0 && c0 + S < n)
            chunk(std::true_type{}, slot, c0, ww, gg, bb, each);
        else
            chunk(std::false_type{}, slot, c0, ww, gg, bb, each);
    };

    // Forward sweep: MOHID's recurrence, a checkpoint before every tile but the first, the overflow bound.
    bool bad = false, wbig = false;
    double w = 0.0, g = 0.0, gsum = 0.0;
    walk([](int64_t i) { return i; }, [](int64_t) {},
         [&](int64_t c, int slot) {
             const int64_t c0 = c * S - sh;
             if (c0 >= n)
                 return;
             if (c > 0 && active)
                 ck[c * cks] = make_double2(w, g);
             run_chunk(slot, c0, w, g, bad, [&](int) {
                 gsum += fabs(g);
                 wbig |= !(fabs(w) <= 1.0);
             });
         });

    // Back substitution, tile by tile from the line's end: the tile's W/G recomputed from its checkpoint,
    // then its answers, each rounded to TX before the next uses it. WR: the answers leave through the answer
    // tile for the lines of okmask; otherwise only their largest |x| is kept.
    TX mx = TX(0);
    auto back = [&](auto wr, unsigned okmask) {
        constexpr bool WR = decltype(wr)::value;
        TX x = TX(0);
        double2 ckc, ckn;
        auto ckload = [&](int64_t c) {
            return c > 0 && c * S - sh < n ? ck[c * cks] : make_double2(0.0, 0.0);
        };
        auto seq = [&](int64_t i) { return nt - 1 - i; };
        ckn = ckload(seq(0));
        walk(seq,
             [&](int64_t i) { // this tile's checkpoint, and the next tile's asked for
                 ckc = ckn;
                 if (i + 1 < nt)
                     ckn = ckload(seq(i + 1));
             },
             [&](int64_t c, int slot) {
                 const int64_t c0 = c * S - sh;
                 if (c0 < n) {
                     double wv[S], gv[S];
                     double ww = ckc.x, gg = ckc.y;
                     bool unused = false; // the verdict is the forward sweep's
                     run_chunk(slot, c0, ww, gg, unused, [&](int k) { wv[k] = ww, gv[k] = gg; });
#pragma unroll
                     for (int k = S - 1; k >= 0; --k) {
                         const int64_t m = c0 + k;
                         if (m < 0)
                             break;
                         if (m < n - 1)
                             x = (TX)tk_back<AR>(wv[k], (double)x, gv[k]);
                         else if (m == n - 1)
                             x = (TX)gv[k];
                         else
                             continue;
                         if constexpr (WR) {
                             if (active)
                                 sX[row * P + k] = x;
                         } else {
                             mx = tk_max(mx, tk_abs(x));
                         }
                     }
                 }
                 if constexpr (WR) {
                     __syncwarp(); // the answer tile is whole
                     const int kq = t % S, jq = t / S;
                     for (int j0 = 0; j0 < nl; j0 += LPI) {
                         const int j = j0 + jq;
                         const I oo = __shfl_sync(0xffffffffu, ln.oo, j & (T - 1));
                         const int64_t m = c * S + kq - (G16 ? __shfl_sync(0xffffffffu, sh, j & (T - 1)) : 0);
                         if (m >= 0 && m < n && j < nl && ((okmask >> j) & 1u))
                             X[oo + (I)m * ln.so] = sX[j * P + kq];
                     }
                 }
             });
    };
    tk_ckpt_verdict(a, active, bad, wbig, n, gsum, mx, (unsigned long long)ln.l, back);
}

} // namespace

#endif
