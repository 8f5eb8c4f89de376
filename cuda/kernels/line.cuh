// tk_line: one tridiagonal system per thread, a block one warp of 32 lines, MOHID's recurrence (or FAST's
// where FAST falls back here) built from the Thomas core's steps (common.cuh, decision 056); instantiated by
// cuda/planner.cu. Inputs arrive in stages of TK_K unknowns ahead of the chain of divisions: y/z lines load
// their own line into registers, x lines (CONTIG) copy stages cooperatively into a shared-memory ring.
// W/G stay in shared memory up to TK_WG_SHARED_MAX / 512 unknowns, else in a global scratch (tc_line,
// ckpt.cuh, checkpoints them instead: decision 046). COOP: when every line fits on the GPU at once, a
// cooperative launch meets at a grid barrier and writes x only if no line failed; otherwise answers go to
// the compact box that tk_commit copies (the guard's DEVICE_VERDICT / ANSWER_BOX, decision 053). Bound by
// latency (few warps an SM, dependent FP64 divisions), not DRAM (decisions 001, 002).
#ifndef TRIDI_CUDA_KERNELS_LINE_CUH
#define TRIDI_CUDA_KERNELS_LINE_CUH

#include <cooperative_groups.h>
#include <cuda_pipeline.h>

#include <cstdint>
#include <type_traits>

#include "common.cuh"

namespace {

// The steps are the one Thomas core's (tk_unknown, tk_back: common.cuh, decision 056); the kernel is the
// loop around them, its loads, stores and verdict.
//
// y/z lines: every lane loads, solves and stores its own line; neighbouring lanes hold neighbouring cells,
// so each warp access is one contiguous run. x lines (CONTIG): the loads and the answer's stores are
// cooperative, 8 consecutive unknowns of 4 lines per warp instruction (measured twice as fast as each
// lane walking its own line, whose accesses touch 32 sectors per instruction).
// I: type of element offsets into the arrays (int32_t when every offset of the call fits: cheaper
// addressing, measured as a large share of the instructions).
// AR: the recurrence's arithmetic (tk_arith; NewType's float pivot where upper, TL, is float).
template <class TL, class TD, class TX, class I, bool CONTIG, bool WGS, bool COOP, int AR>
__global__ void __launch_bounds__(TK_T) tk_line(const tk_args a, const int NS)
{
    constexpr bool PF32 = sizeof(TL) == 4;
    constexpr int T = TK_T, K = TK_K, SE = TK_TILE;
    extern __shared__ __align__(16) unsigned char tk_dyn[];
    // This lane's line; lanes past the last line stay (inactive) to the end: tk_finish meets the whole block.
    const tk_lane<I> ln(a, sizeof(TL));
    const int t = ln.t, nl = ln.nl;
    const bool active = ln.active;
    const int64_t n = a.n, li0 = ln.li0, nch = ln.nch;

    // (W, G) of unknown m of this lane: shared memory at m*T + t, or the global scratch at m*l_count + li.
    // x lines swizzle the shared rows, column t ^ (m % K) (wgc below): their answers leave cooperatively,
    // K unknowns of one line per quarter warp, which an unswizzled row puts in one bank (8-way conflicts).
    constexpr bool SWZ = CONTIG && WGS;
    auto wgc = [&](int k) { return SWZ ? t ^ k : 0; }; // k = m % K
    double2 *WG;
    int64_t ws;
    if (WGS) {
        WG = (double2 *)tk_dyn + (SWZ ? 0 : t);
        ws = T;
    } else {
        WG = (double2 *)a.scratch + li0 + t;
        ws = a.l_count;
    }
    unsigned char *ring = tk_dyn + (WGS ? tk_wg_bytes(n) : 0);
    TD *sE = (TD *)ring;
    TL *sD = (TL *)(ring + (size_t)NS * SE * sizeof(TD));
    TL *sF = sD + (size_t)NS * SE, *sR = sF + (size_t)NS * SE;

    const TD *E = (const TD *)a.E;
    const TL *D = (const TL *)a.D, *F = (const TL *)a.F, *R = (const TL *)a.R;
    TX *X = (TX *)a.X;

    // CONTIG: the cooperative copies' offsets and ring addresses (common.cuh), once.
    tk_xcopy<TL, TD, I> xc;
    if (CONTIG)
        xc.init(t, ln.io, ln.oo, sE, sD, NS);

    int64_t next = 0; // next stage to issue
    int slot_in = 0;  // its ring slot
    // x lines: the cooperative copies of the next stage into the ring.
    auto issue = [&]() {
        if (next < nch)
            xc.template copy<0>((I)(next * K), n, t, slot_in, E, D, F, R);
        ++next;
        slot_in = slot_in + 1 == NS ? 0 : slot_in + 1;
        __pipeline_commit(); // an empty group past the end keeps the wait counts uniform
    };

    double w = 0.0, g = 0.0;
    bool bad = false;
    if (!CONTIG) {
        // y/z lines: each lane loads its own line straight into registers, one stage ahead of the
        // recurrence (a stage is some thousand cycles of it, which covers the loads' latency). No ring in
        // shared memory: its copies, addresses and read-back were a third of the forward sweep's
        // instructions, and the shared memory it took is left to W/G (more warps per SM on short lines).
        if (active)
            tk_strided_forward<AR, PF32>(n, n, ln.io, ln.si, E, D, F, R, WG, ws, w, g, bad);
    } else {
        // x lines: the warp's cooperative ring.
        for (int s = 0; s < NS - 1; ++s)
            issue();
        int slot = 0;
        for (int64_t c = 0; c < nch; ++c) {
            __syncwarp(); // every lane is done with the stage the next issue overwrites
            issue();
            __pipeline_wait_prior(NS - 1);
            __syncwarp(); // the other lanes' copies into this stage are visible
            const int o = slot * SE;
            slot = slot + 1 == NS ? 0 : slot + 1;
            if (!active)
                continue;
            const TD *tE = sE + o;
            const TL *tD = sD + o, *tF = sF + o, *tR = sR + o;
            const int64_t c0 = c * K;
            double2 *wg = WG + c0 * ws;
            if (c0 > 0 && c0 + K < n) { // interior stage: no first or last unknown, unrolled
                // The whole stage into registers first: the compiler may not move a load of the ring above a
                // store of W/G (same shared array), which put a shared-memory load and a conversion on the
                // recurrence's chain at every unknown.
                TL dv[K], fv[K], rv[K];
                TD ev[K];
#pragma unroll
                for (int k = 0; k < K; ++k) {
                    const int s = tk_tidx(t, k);
                    dv[k] = tD[s];
                    ev[k] = tE[s];
                    fv[k] = tF[s];
                    rv[k] = tR[s];
                }
#pragma unroll
                for (int k = 0; k < K; ++k) {
                    tk_unknown<AR, PF32>(false, false, (double)dv[k], (double)ev[k], (double)fv[k], (double)rv[k],
                                         w, g, bad);
                    wg[k * ws + wgc(k)] = make_double2(w, g);
                }
                continue;
            }
            for (int k = 0; k < K && c0 + k < n; ++k) {
                const int64_t m = c0 + k;
                const int s = tk_tidx(t, k);
                // the ring holds no lower at the first unknown nor upper at the last
                tk_unknown<AR, PF32>(m == 0, m == n - 1, m > 0 ? (double)tD[s] : 0.0, (double)tE[s],
                                     m < n - 1 ? (double)tF[s] : 0.0, (double)tR[s], w, g, bad);
                wg[k * ws + wgc(k)] = make_double2(w, g);
            }
        }
        __pipeline_wait_prior(0);
    }

    // Back substitution, a stage of K unknowns at a time so the loads of (W, G) leave the chain. With
    // W/G on chip the answers (in their own type, tk_keep_x) replace W and leave after the verdict; with
    // the global scratch they go straight to the output view.
    // Overflow is tracked as the largest |x| so far (one max per unknown instead of a flag kept in a byte):
    // from finite W and G the first non-finite answer can only be an infinity (fma and rounding of finite
    // values never give NaN), and the max keeps it.
    if (active && !bad) {
        // The answers replace W in W/G (shared memory or the scratch) and reach x only once the whole
        // line is known to have succeeded.
        TX x = (TX)g, mx = tk_abs(x);
        tk_keep_x(WG[(n - 1) * ws + wgc((int)((n - 1) % K))], x);
        tk_back_stages<AR>(WG, ws, wgc, n - 2, x, mx);
        bad = !tk_finite_x(mx);
    }
    if (active && bad) {
        atomicMin(a.err, (unsigned long long)ln.l);
        if (a.nfail)
            atomicAdd(a.nfail, 1ull);
    }
    if (!WGS) {
        if (active && !bad) {
            const double2 *pw = WG;
            TX *px = X + ln.oo;
            for (int64_t m = 0; m < n; ++m)
                px[(I)m * ln.so] = tk_kept_x<TX>(pw[m * ws]);
        }
        tk_finish(a, active && bad);
        return;
    }
    // Lines of this warp that failed: their answers stay out of x.
    const unsigned failed = __ballot_sync(0xffffffffu, active && bad);
    if (COOP) {
        cooperative_groups::this_grid().sync();
        const unsigned long long verdict = *(volatile unsigned long long *)a.err;
        if (blockIdx.x == 0 && t == 0) {
            *a.mirror = verdict;
            *a.next_err = ULLONG_MAX;
        }
        if (verdict != ULLONG_MAX)
            return;
    }
    const double2 *xs = (const double2 *)tk_dyn;
    if (CONTIG) {
        __syncwarp();
        const int k = t % K;
        for (int64_t c0 = 0; c0 < n; c0 += K) {
            const int64_t m = c0 + k;
            if (m < n) {
#pragma unroll
                for (int j = 0; j < K; ++j) {
                    const int lt = t / K + j * (T / K);
                    if (nl < T && lt >= nl)
                        break;
                    if ((failed >> lt) & 1u)
                        continue;
                    X[xc.lout[j] + (I)m * ln.so] = tk_kept_x<TX>(xs[m * T + (lt ^ k)]); // m % K == k
                }
            }
        }
    } else if (active && !bad) {
        const double2 *pw = xs + t;
        const I so = ln.so;
        TX *px = X + ln.oo;
        int64_t m = 0;
        for (; m + K <= n; m += K) {
#pragma unroll
            for (int k = 0; k < K; ++k)
                px[k * so] = tk_kept_x<TX>(pw[k * T]);
            px += K * so;
            pw += K * T;
        }
        for (; m < n; ++m) {
            *px = tk_kept_x<TX>(*pw);
            px += so;
            pw += T;
        }
    }
    tk_finish(a, active && bad);
}

} // namespace

#endif
