// Checkpointed Thomas kernel of MOHID's arithmetic (tc_line): one thread per line as tk_line (line.cuh),
// but W/G are not kept. The forward sweep stores (W, G) only at each stage's start, in the global
// scratch; the back substitution walks the stages from the line's end, recomputes each stage's W/G in
// registers from its checkpoint with the very same steps (so the same bits), and writes the answers.
// Decision 046. Instantiated and launched by cuda/planner.cu.
#ifndef TRIDI_CUDA_KERNELS_CKPT_CUH
#define TRIDI_CUDA_KERNELS_CKPT_CUH

#include <cuda_pipeline.h>

#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "common.cuh"

namespace {

// Blocks an SM the registers must allow: eight leave the y/z lines' stage ahead and the widened stage in use
// in registers; twelve spilled them, and a spill store of a value still in flight waited for its load, so each
// stage's loads were waited on as soon as they were issued (decision 106).
constexpr int TC_MIN_BLOCKS = 8;

// Shared memory of a tc_line block: x lines' ring of ns stages and a tile of one stage's answers; y/z lines
// load into registers and store straight from them (none).
template <class TL, class TD, class TX>
__host__ __device__ inline size_t tc_smem_bytes(bool contig, int ns)
{
    return contig ? (size_t)ns * tk_stage_bytes<TL, TD>() + (size_t)TK_TILE * sizeof(TX) : 0;
}

// One warp of 32 neighbouring lines (tk_line's layout, loads and ring). The scratch holds checkpoint c
// (the state before stage c, c >= 1) of launch line li at c * l_count + li: 16 B per TK_K unknowns.
// The answers leave during the back walk, so a failing line must be known before it: the forward sweep
// fails on a zero pivot or non-finite value as tk_line's does, and the answers cannot overflow where every
// |W| <= 1 and 2 sum |G| <= the largest TX (each answer is then at most c^n sum |G| with c = 1 + 2^-23 per
// step of rounding, n <= 2^20); a warp holding a line outside that bound first walks back without writing
// to find its overflow, as tk_line's back substitution does.
template <class TL, class TD, class TX, class I, bool CONTIG, int AR>
__global__ void __launch_bounds__(TK_T, TC_MIN_BLOCKS) tc_line(const tk_args a, const int ns_hint)
{
    // ring stages (x lines), and in bit 4 the 256-byte L2 hint in place of the 128-byte one (decision 047)
    const int NS = ns_hint & 15;
    const bool wide = (ns_hint >> 4) & 1;
    constexpr bool PF32 = sizeof(TL) == 4;
    constexpr int T = TK_T, K = TK_K, SE = TK_TILE;
    extern __shared__ __align__(16) unsigned char tk_dyn[];
    // Lanes past the last line compute the block's first line (valid addresses, cooperative copies) and
    // write nothing: no checkpoint, no answer.
    const tk_lane<I> ln(a, sizeof(TL));
    const int t = ln.t;
    const bool active = ln.active;
    const int64_t n = a.n, nch = ln.nch;
    const I so = ln.so;
    double2 *ck = (double2 *)a.scratch + ln.li0 + (active ? t : 0);
    const int64_t cks = a.l_count;

    const TD *E = (const TD *)a.E;
    const TL *D = (const TL *)a.D, *F = (const TL *)a.F, *R = (const TL *)a.R;
    TX *X = (TX *)a.X;

    // x lines: tk_line's cooperative ring (line.cuh), and a tile through which a stage's answers leave
    // cooperatively too.
    TD *sE = (TD *)tk_dyn;
    TL *sD = (TL *)(tk_dyn + (size_t)NS * SE * sizeof(TD));
    TL *sF = sD + (size_t)NS * SE, *sR = sF + (size_t)NS * SE;
    TX *sX = (TX *)(tk_dyn + (size_t)NS * tk_stage_bytes<TL, TD>());
    tk_xcopy<TL, TD, I> xc;
    if (CONTIG)
        xc.init(t, ln.io, ln.oo, sE, sD, NS);
    int slot_in = 0;
    // The copies of stage c (c < 0: none) into the next ring slot; tk_line's issue().
    auto issue = [&](int64_t c) {
        if (c >= 0 && wide)
            xc.template copy<256>((I)(c * K), n, t, slot_in, E, D, F, R);
        else if (c >= 0)
            xc.template copy<128>((I)(c * K), n, t, slot_in, E, D, F, R);
        slot_in = slot_in + 1 == NS ? 0 : slot_in + 1;
        __pipeline_commit(); // an empty group past the end keeps the wait counts uniform
    };

    // y/z lines: a stage in registers (and, walking back, its checkpoint), one stage ahead.
    struct stage : tk_regstage<TL, TD> {
        double2 ck;
    };
    auto load = [&](stage &b, int64_t c, bool wck) {
        tk_load_stage<TL, TD, I>(b, c * K, n, ln.io, ln.si, E, D, F, R);
        if (wck)
            b.ck = c > 0 ? ck[c * cks] : make_double2(0.0, 0.0);
    };

    bool bad = false;
    // Runs body(c, d, e, f, r, ck) over stages seq(0), ..., seq(nch - 1), each stage's inputs widened to
    // double (lower never read at the first unknown, upper never at the last: 0 there) and, with wck, its
    // checkpoint; the next stage's loads are in flight meanwhile.
    auto walk = [&](bool wck, auto &&seq, auto &&body) {
        if constexpr (!CONTIG) {
            // tk_line's order: the stage widened first (double lower checked, so its loads are waited on),
            // then the next stage's loads issued, then the recurrence.
            auto use = [&](const stage &b, int64_t c, auto &&after) {
                double dv[K], ev[K], fv[K], rv[K];
                tk_widen(b, dv, ev, fv, rv, bad);
                const double2 ckv = wck ? b.ck : make_double2(0.0, 0.0);
                after();
                body(c, dv, ev, fv, rv, ckv);
            };
            stage A, B;
            load(A, seq(0), wck);
            for (int64_t i = 0; i < nch; i += 2) {
                use(A, seq(i), [&] {
                    if (i + 1 < nch)
                        load(B, seq(i + 1), wck);
                });
                if (i + 1 >= nch)
                    break;
                use(B, seq(i + 1), [&] {
                    if (i + 2 < nch)
                        load(A, seq(i + 2), wck);
                });
            }
        } else {
            slot_in = 0;
            int slot = 0;
            for (int s = 0; s < NS - 1; ++s)
                issue(s < nch ? seq(s) : -1);
            double2 ckn = make_double2(0.0, 0.0);
            if (wck && seq(0) > 0)
                ckn = ck[seq(0) * cks];
            for (int64_t i = 0; i < nch; ++i) {
                __syncwarp(); // every lane is done with the slot (and the answer tile) about to be reused
                issue(i + NS - 1 < nch ? seq(i + NS - 1) : -1);
                const double2 ckv = ckn;
                if (wck && i + 1 < nch && seq(i + 1) > 0)
                    ckn = ck[seq(i + 1) * cks];
                __pipeline_wait_prior(NS - 1);
                __syncwarp(); // the other lanes' copies into this stage are visible
                const int o = slot * SE;
                slot = slot + 1 == NS ? 0 : slot + 1;
                const int64_t c = seq(i), c0 = c * K;
                const bool interior = c0 > 0 && c0 + K < n;
                double dv[K], ev[K], fv[K], rv[K];
#pragma unroll
                for (int k = 0; k < K; ++k) {
                    const int s = o + tk_tidx(t, k);
                    const int64_t m = c0 + k;
                    dv[k] = interior || (m > 0 && m < n) ? (double)sD[s] : 0.0;
                    ev[k] = interior || m < n ? (double)sE[s] : 0.0;
                    fv[k] = interior || m < n - 1 ? (double)sF[s] : 0.0;
                    rv[k] = interior || m < n ? (double)sR[s] : 0.0;
                }
                body(c, dv, ev, fv, rv, ckv);
            }
            __pipeline_wait_prior(0);
            __syncwarp();
        }
    };

    // Forward sweep: MOHID's recurrence, a checkpoint at every stage's start, and the overflow bound.
    double w = 0.0, g = 0.0, gsum = 0.0;
    bool wbig = false;
    walk(false, [](int64_t i) { return i; },
         [&](int64_t c, const double(&dv)[K], const double(&ev)[K], const double(&fv)[K], const double(&rv)[K],
             double2) {
             const int64_t c0 = c * K;
             if (c > 0 && active)
                 ck[c * cks] = make_double2(w, g);
             if (c0 > 0 && c0 + K < n) {
#pragma unroll
                 for (int k = 0; k < K; ++k) {
                     tk_unknown<AR, PF32>(false, false, dv[k], ev[k], fv[k], rv[k], w, g, bad);
                     gsum += fabs(g);
                     wbig |= !(fabs(w) <= 1.0);
                 }
                 return;
             }
#pragma unroll
             for (int k = 0; k < K; ++k)
                 if (c0 + k < n) {
                     tk_unknown<AR, PF32>(c0 + k == 0, c0 + k == n - 1, dv[k], ev[k], fv[k], rv[k], w, g, bad);
                     gsum += fabs(g);
                     wbig |= !(fabs(w) <= 1.0);
                 }
         });

    // Back substitution, stage by stage from the end: the stage's W/G recomputed from its checkpoint, then
    // its answers, each rounded to TX before the next uses it; written (WR) only by lines that succeeded.
    TX mx = TX(0);
    auto back = [&](auto wr, unsigned okmask) {
        constexpr bool WR = decltype(wr)::value;
        const bool ok = (okmask >> t) & 1u;
        TX x = TX(0);
        walk(true, [&](int64_t i) { return nch - 1 - i; },
             [&](int64_t c, const double(&dv)[K], const double(&ev)[K], const double(&fv)[K],
                 const double(&rv)[K], double2 ckv) {
                 const int64_t c0 = c * K;
                 const bool interior = c0 > 0 && c0 + K < n;
                 double w = ckv.x, gg = ckv.y, wv[K], gv[K];
                 bool unused = false; // this stage's verdict is the forward sweep's
                 if (interior) {
#pragma unroll
                     for (int k = 0; k < K; ++k) {
                         tk_unknown<AR, PF32>(false, false, dv[k], ev[k], fv[k], rv[k], w, gg, unused);
                         wv[k] = w, gv[k] = gg;
                     }
                 } else {
#pragma unroll
                     for (int k = 0; k < K; ++k) {
                         if (c0 + k < n)
                             tk_unknown<AR, PF32>(c0 + k == 0, c0 + k == n - 1, dv[k], ev[k], fv[k], rv[k], w, gg,
                                                  unused);
                         wv[k] = w, gv[k] = gg;
                     }
                 }
                 TX xs[K];
#pragma unroll
                 for (int k = K - 1; k >= 0; --k) {
                     if (interior || c0 + k < n - 1) {
                         x = (TX)tk_back<AR>(wv[k], (double)x, gv[k]);
                     } else if (c0 + k == n - 1) {
                         x = (TX)gv[k];
                     } else {
                         xs[k] = TX(0);
                         continue;
                     }
                     if (!WR)
                         mx = tk_max(mx, tk_abs(x));
                     xs[k] = x;
                 }
                 if constexpr (WR) {
                     if (!CONTIG) {
                         if (ok) {
                             TX *px = X + ln.oo + (I)c0 * so;
#pragma unroll
                             for (int k = 0; k < K; ++k)
                                 if (interior || c0 + k < n)
                                     px[k * so] = xs[k];
                         }
                     } else {
                         // the tile is free: every lane passed the walk's __syncwarp since its last read
#pragma unroll
                         for (int k = 0; k < K; ++k)
                             sX[tk_tidx(t, k)] = xs[k];
                         __syncwarp();
                         const int k = t % K;
                         const int64_t m = c0 + k;
                         if (m < n) {
#pragma unroll
                             for (int j = 0; j < K; ++j) {
                                 const int lt = t / K + j * (T / K);
                                 if ((okmask >> lt) & 1u)
                                     X[xc.lout[j] + (I)m * so] = sX[tk_tidx(lt, k)];
                             }
                         }
                     }
                 }
             });
    };
    tk_ckpt_verdict(a, active, bad, wbig, n, gsum, mx, (unsigned long long)ln.l, back);
}

} // namespace

#endif
