// tx_line: MOHID's arithmetic on long x lines (unknowns adjacent in memory), one thread per line, a warp of
// 32 neighbouring lines, W/G checkpointed as tc_line (ckpt.cuh) does, but the inputs arrive in tiles of 64
// bytes of each line per array (32 lines x tx_s unknowns, whole sectors), copied by the warp with one run
// per line and copy instruction into a shared-memory ring, so each SM holds its bytes in flight itself and
// not in L2. The back substitution re-reads the tiles from the line's end and recomputes each chunk's W/G in
// registers from its checkpoint with the core's steps (the same bits). Decision 063; cuda/planner.cu.
#ifndef TRIDI_CUDA_KERNELS_XTILE_CUH
#define TRIDI_CUDA_KERNELS_XTILE_CUH

#include <cuda_pipeline.h>

#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "common.cuh"

namespace {

// Unknowns per tile: 64 bytes of lower/upper/rhs of a line (float 16, double 8): two ring slots of 32 lines
// then leave 9-11 warps an SM (128 bytes left 4-5, too few for the chain of divisions: decision 063).
template <class TL>
__host__ __device__ constexpr int tx_s() { return 64 / (int)sizeof(TL); }
// Unknowns per chunk: a checkpoint each, their W/G in registers walking back.
template <class TL>
__host__ __device__ constexpr int tx_c() { return tx_s<TL>() < 16 ? tx_s<TL>() : 16; }

// One ring slot: diag, lower, upper, rhs, each [32 lines][S + 1] (the pad spreads a lane's column over the
// banks); a tile of answers after the ring.
template <class TL, class TD>
__host__ __device__ constexpr size_t tx_slot_bytes()
{
    return (size_t)TK_T * (tx_s<TL>() + 1) * (sizeof(TD) + 3 * sizeof(TL));
}

template <class TL, class TD, class TX>
__host__ __device__ inline size_t tx_smem_bytes(int ns)
{
    return (size_t)ns * tx_slot_bytes<TL, TD>() + (size_t)TK_T * (tx_s<TL>() + 1) * sizeof(TX);
}

// ns_hint: ring slots (2..TK_STAGES_MAX). Checkpoint q (the state before unknown q * C, q >= 1) of launch
// line li sits in the scratch at q * l_count + li. Failing lines and the overflow bound: tc_line's rules.
template <class TL, class TD, class TX, class I, int AR>
__global__ void __launch_bounds__(TK_T) tx_line(const tk_args a, const int ns_hint)
{
    constexpr bool PF32 = sizeof(TL) == 4;
    constexpr int T = TK_T, S = tx_s<TL>(), C = tx_c<TL>(), NCH = S / C, P = S + 1, LPI = T / S;
    static_assert(S % C == 0 && T % S == 0, "tile shape");
    const int NS = ns_hint & 15;
    extern __shared__ __align__(16) unsigned char tk_dyn[];
    const tk_lane<I> ln(a, sizeof(TL));
    const int t = ln.t, nl = ln.nl;
    const bool active = ln.active;
    const int row = active ? t : 0; // lanes past the last line read line 0's tiles and write nothing
    const int64_t n = a.n, nt = (n + S - 1) / S;
    double2 *ck = (double2 *)a.scratch + ln.li0 + row;
    const int64_t cks = a.l_count;

    const TD *E = (const TD *)a.E;
    const TL *D = (const TL *)a.D, *F = (const TL *)a.F, *R = (const TL *)a.R;
    TX *X = (TX *)a.X;
    constexpr size_t SLOT = tx_slot_bytes<TL, TD>(), AE = (size_t)T * P * sizeof(TD), AL = (size_t)T * P * sizeof(TL);
    TX *sX = (TX *)(tk_dyn + (size_t)NS * SLOT);

    // The copies of tile c (c < 0: none) into ring slot slot_in: instruction j0 moves unknowns c*S + q % S of
    // line j0 + q / S (lane q), a run of 64 bytes (128 for double diag) of each of LPI lines. Lower is never
    // read at a line's first unknown, upper never at its last.
    const int kq = t % S, jq = t / S, ek = jq * P + kq;
    const unsigned s0 = (unsigned)__cvta_generic_to_shared(tk_dyn);
    int slot_in = 0;
    auto copy_line = [&](int j0, unsigned base, int64_t m, bool okE, bool okD, bool okF) {
        const I lo = __shfl_sync(0xffffffffu, ln.io, (j0 + jq) & (T - 1));
        if (j0 + jq < nl) {
            const I o = lo + (I)m;
            const unsigned idx = (unsigned)(j0 * P + ek);
            if (okE)
                tk_cp_at(base + idx * (unsigned)sizeof(TD), E + o);
            if (okD)
                tk_cp_at(base + (unsigned)AE + idx * (unsigned)sizeof(TL), D + o);
            if (okF)
                tk_cp_at(base + (unsigned)(AE + AL) + idx * (unsigned)sizeof(TL), F + o);
            if (okE)
                tk_cp_at(base + (unsigned)(AE + 2 * AL) + idx * (unsigned)sizeof(TL), R + o);
        }
    };
    auto issue = [&](int64_t c) {
        if (c >= 0) {
            const int64_t m = c * S + kq;
            const bool okE = m < n, okD = m > 0 && m < n, okF = m < n - 1;
            const unsigned base = s0 + (unsigned)(slot_in * SLOT);
            if (nl == T) { // a whole warp of lines: unrolled, the shuffles' source lanes constants
#pragma unroll
                for (int j0 = 0; j0 < T; j0 += LPI)
                    copy_line(j0, base, m, okE, okD, okF);
            } else {
                for (int j0 = 0; j0 < nl; j0 += LPI)
                    copy_line(j0, base, m, okE, okD, okF);
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
    // One chunk of C unknowns from unknown c0 (h: the chunk within its tile in ring slot `slot`): MOHID's
    // recurrence on (ww, gg), each(k) after unknown c0 + k. IN (interior): no first or last unknown inside,
    // no tests; otherwise lower and upper are 0 where they are not read, unknowns past the end skipped.
    auto chunk = [&](auto in, int slot, int h, int64_t c0, double &ww, double &gg, bool &bb, auto &&each) {
        constexpr bool IN = decltype(in)::value;
        const unsigned char *b = tk_dyn + (size_t)slot * SLOT;
        const int idx = row * P + h * C;
        const TD *tE = (const TD *)b + idx;
        const TL *tD = (const TL *)(b + AE) + idx, *tF = (const TL *)(b + AE + AL) + idx,
                 *tR = (const TL *)(b + AE + 2 * AL) + idx;
#pragma unroll
        for (int k = 0; k < C; ++k) {
            const int64_t m = c0 + k;
            if (!IN && m >= n)
                break;
            const double d = IN || m > 0 ? (double)tD[k] : 0.0, f = IN || m < n - 1 ? (double)tF[k] : 0.0;
            // each quotient on its own: one reciprocal for both was slower here (decision 079)
            tk_unknown<AR, PF32, true>(!IN && m == 0, !IN && m == n - 1, d, (double)tE[k], f, (double)tR[k], ww, gg,
                                       bb);
            each(k);
        }
    };
    auto run_chunk = [&](int slot, int h, int64_t c0, double &ww, double &gg, bool &bb, auto &&each) {
        if (c0 > 0 && c0 + C < n)
            chunk(std::true_type{}, slot, h, c0, ww, gg, bb, each);
        else
            chunk(std::false_type{}, slot, h, c0, ww, gg, bb, each);
    };

    // Forward sweep: MOHID's recurrence, a checkpoint before every chunk but the first, the overflow bound.
    bool bad = false, wbig = false;
    double w = 0.0, g = 0.0, gsum = 0.0;
    walk([](int64_t i) { return i; }, [](int64_t) {},
         [&](int64_t c, int slot) {
#pragma unroll
             for (int h = 0; h < NCH; ++h) {
                 const int64_t c0 = c * S + h * C;
                 if (c0 >= n)
                     break;
                 if (c0 > 0 && active)
                     ck[(c0 / C) * cks] = make_double2(w, g);
                 run_chunk(slot, h, c0, w, g, bad, [&](int) {
                     gsum += fabs(g);
                     wbig |= !(fabs(w) <= 1.0);
                 });
             }
         });

    // Back substitution, tile by tile from the line's end, chunk by chunk within: the chunk's W/G recomputed
    // from its checkpoint, then its answers, each rounded to TX before the next uses it. WR: the answers
    // leave through the answer tile for the lines of okmask; otherwise only their largest |x| is kept.
    TX mx = TX(0);
    auto back = [&](auto wr, unsigned okmask) {
        constexpr bool WR = decltype(wr)::value;
        TX x = TX(0);
        double2 ckc[NCH], ckn[NCH];
        auto ckload = [&](double2(&v)[NCH], int64_t c) {
#pragma unroll
            for (int h = 0; h < NCH; ++h) {
                const int64_t q = c * NCH + h;
                v[h] = q > 0 && q * C < n ? ck[q * cks] : make_double2(0.0, 0.0);
            }
        };
        auto seq = [&](int64_t i) { return nt - 1 - i; };
        ckload(ckn, seq(0));
        walk(seq,
             [&](int64_t i) { // this tile's checkpoints, and the next tile's asked for
#pragma unroll
                 for (int h = 0; h < NCH; ++h)
                     ckc[h] = ckn[h];
                 if (i + 1 < nt)
                     ckload(ckn, seq(i + 1));
             },
             [&](int64_t c, int slot) {
#pragma unroll
                 for (int h = NCH - 1; h >= 0; --h) {
                     const int64_t c0 = c * S + h * C;
                     if (c0 >= n)
                         continue;
                     double wv[C], gv[C];
                     double ww = ckc[h].x, gg = ckc[h].y;
                     bool unused = false; // the verdict is the forward sweep's
                     run_chunk(slot, h, c0, ww, gg, unused, [&](int k) { wv[k] = ww, gv[k] = gg; });
#pragma unroll
                     for (int k = C - 1; k >= 0; --k) {
                         const int64_t m = c0 + k;
                         if (m < n - 1)
                             x = (TX)tk_back<AR>(wv[k], (double)x, gv[k]);
                         else if (m == n - 1)
                             x = (TX)gv[k];
                         else
                             continue;
                         if constexpr (WR) {
                             if (active)
                                 sX[row * P + h * C + k] = x;
                         } else {
                             mx = tk_max(mx, tk_abs(x));
                         }
                     }
                 }
                 if constexpr (WR) {
                     __syncwarp(); // the answer tile is whole
                     const int64_t m = c * S + kq;
                     for (int j0 = 0; j0 < nl; j0 += LPI) {
                         const int j = j0 + jq;
                         const I oo = __shfl_sync(0xffffffffu, ln.oo, j & (T - 1));
                         if (m < n && j < nl && ((okmask >> j) & 1u))
                             X[oo + (I)m * ln.so] = sX[j * P + kq];
                     }
                 }
             });
    };
    tk_ckpt_verdict(a, active, bad, wbig, n, gsum, mx, (unsigned long long)ln.l, back);
}

} // namespace

#endif
