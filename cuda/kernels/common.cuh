// Device helpers of every Thomas kernel: the end of a block's solve (tk_finish), the block and stage
// sizes, the steps of the one Thomas core in each kernel arithmetic, a lane's line, the shared-memory
// tile and cp.async copies, and the answer kept on chip until the verdict.
#ifndef TRIDI_CUDA_KERNELS_COMMON_CUH
#define TRIDI_CUDA_KERNELS_COMMON_CUH

#include <cfloat>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "exact_q0.cuh"
#include "fused.cuh"
#include "kernel_args.h"
#include "thomas_core.h" // the one Thomas core: every kernel's steps (decision 056)

// Internal linkage: each kernel is instantiated and launched by one file of the library (cuda/planner.cu
// the Thomas kernels, cuda/planner_fast.cu the FAST ones, cuda/device_solve.cu the commit kernel,
// cuda/diagnose.cu the locate kernel); a kernel
// registered by two translation units would leave the runtime free to launch one copy with the attributes
// (shared-memory opt-in, carveout) set on the other.
namespace {

// Each failing line writes nothing of its own answer (ON_ERROR_LINES: a failing line is left untouched);
// the block's failures are recorded here, and with a.slot the grid's last block hands the verdict on.
// failed: this thread recorded a failing line (its atomics on a.err, a.nfail). The verdict reads nothing
// else a block writes, so only a block that recorded one fences before it counts itself done (decision 100).
__device__ __forceinline__ void tk_finish(const tk_args &a, bool failed)
{
    if (!a.slot)
        return;
    const bool recorded = __syncthreads_or(failed); // every thread of the block has made its atomics
    if (threadIdx.x == 0) {
        if (recorded)
            __threadfence();
        if (atomicAdd(&a.slot->done, 1u) == gridDim.x - 1) {
            __threadfence();
            volatile tk_slot *v = a.slot;
            a.verdict->first = v->first;
            a.verdict->nfailed = v->nfailed;
            v->first = ULLONG_MAX;
            v->nfailed = 0;
            v->done = 0;
            if (a.next_err)
                *a.next_err = ULLONG_MAX;
        }
    }
}

constexpr int TK_T = 32;               // lines per block: one warp
constexpr int TK_K = 8;                // unknowns per stage
constexpr int TK_STAGES_MAX = 4;       // stages in the ring (3 in flight while one is consumed)
constexpr int TK_WG_SHARED_MAX = 110 * 1024; // W/G of a block in shared memory up to this: >= 2 blocks/SM

__device__ __forceinline__ bool tk_finite(double v) { return tridi_thomas_finite(v); }

// The kernels' arithmetic AR (tk_arith, kernel_args.h) as the core's steps: MOHID's (TK_AR_MOHID) and
// NewType's float pivot where upper is float (TK_AR_NEWTYPE with PF32) are tridi_exact's, whose _rn
// intrinsics nvcc never contracts (decision 041); FAST's (TK_AR_RCP) is tk_fused's.
template <int AR, bool PF32>
constexpr int tk_form = AR == TK_AR_RCP                 ? TRIDI_FORM_RCP
                        : AR == TK_AR_NEWTYPE && PF32 ? TRIDI_FORM_NEWTYPE
                                                      : TRIDI_FORM_DIV;

// One unknown of the forward sweep (first, last: of the line), W and G carried in w, g; bad marked when
// the step fails. Lines whose upper diagonal is double ask the divisions' range test of the first product
// (tk_q0, decision 103; the same bits), float ones of the quotient.
template <int AR, bool PF32>
__device__ __forceinline__ void tk_unknown(bool first, bool last, double d, double e, double f, double r, double &w,
                                           double &g, bool &bad)
{
    if constexpr (AR == TK_AR_RCP)
        bad |= tk_fused_unknown(TRIDI_FORM_RCP, first, last, d, e, f, r, &w, &g, 0) != 0;
    else if constexpr (!PF32)
        bad |= tk_q0_unknown(tk_form<AR, PF32>, first, last, d, e, f, r, &w, &g, 0) != 0;
    else
        bad |= tridi_exact_unknown(tk_form<AR, PF32>, first, last, d, e, f, r, &w, &g, 0) != 0;
}

// One unknown of the back substitution, W*xnext + G before its rounding to x's type.
template <int AR>
__device__ __forceinline__ double tk_back(double w, double xnext, double g)
{
    if constexpr (AR == TK_AR_RCP)
        return tk_fused_back(w, xnext, g);
    else
        return tridi_exact_back(w, xnext, g);
}

// The rotation of a row of n1 y/z lines (neighbouring cells, the first at `row`, esize bytes each) that puts
// its lines sh, sh + 1, ... on its slots 0, 1, ...: every run of g slots from a multiple of g then starts on a
// multiple of g elements, and a warp's run reads no sector it does not use all of (decision 081). Slot u
// takes line row_rotate(u, sh, n1) = (u + sh) mod n1.
__device__ __forceinline__ int64_t row_shift(const void *row, int esize, int g, int64_t n1)
{
    const int64_t a = (int64_t)(((uintptr_t)row / (uintptr_t)esize) & (uintptr_t)(g - 1));
    return ((g - a) & (g - 1)) % n1;
}
__device__ __forceinline__ int64_t row_rotate(int64_t u, int64_t sh, int64_t n1)
{
    return u + sh < n1 ? u + sh : u + sh - n1;
}

// The run of neighbouring y/z lines a warp reads as one at each unknown, whose start tk_line_of aligns: a
// block's `lines` up to 32 and up to 128 bytes (esize bytes a cell), a power of two (decision 081).
__device__ __forceinline__ int warp_run(int lines, int esize)
{
    int r = lines < 32 ? lines : 32;
    r = r < 128 / esize ? r : 128 / esize;
    while (r & (r - 1))
        r &= r - 1;
    return r;
}

// The line of slot p of a launch (its coordinates l1, l2): p itself, but for y/z lines (g > 1) whose first
// line axis has neighbouring cells, in a row of n1 lines the launch holds whole: the row's rotation to R's
// alignment (esize: R's element size; the inputs share one view).
__device__ __forceinline__ int64_t tk_line_of(const tk_args &a, int esize, int64_t p, int g, int64_t *l1,
                                              int64_t *l2)
{
    *l1 = p % a.n1;
    *l2 = p / a.n1;
    const int64_t r0 = *l2 * a.n1;
    if (g > 1 && a.in.s1 == 1 && r0 >= a.l_begin && r0 + a.n1 <= a.l_begin + a.l_count) {
        *l1 = row_rotate(*l1, row_shift((const char *)a.R + (a.in.off + *l2 * a.in.s2) * esize, esize, g, a.n1),
                         a.n1);
        return r0 + *l1;
    }
    return p;
}

// A lane of a block of one line per thread (tk_line, tc_line, tx_line): its line of the launch and where
// the line's unknowns sit. Lanes past the launch's last line take the block's first line (valid offsets,
// cooperative copies) and are not active. y/z lines: the block's 32 lines start on 128 bytes of R (rows
// rotated, decision 081; esize: R's element size).
template <class I>
struct tk_lane {
    int t, nl;           // the lane, the block's lines
    bool active;         // t < nl
    int64_t li0, nch, l; // the block's first launch line, stages of TK_K unknowns, this lane's line
    I io, oo, si, so;    // offsets of the line's unknown 0 in the inputs and x, unknowns' spacing
    __device__ __forceinline__ tk_lane(const tk_args &a, int esize)
        : t((int)threadIdx.x), li0((int64_t)blockIdx.x * TK_T), nch((a.n + TK_K - 1) / TK_K)
    {
        nl = (int)min((int64_t)TK_T, a.l_count - li0);
        active = t < nl;
        int64_t l1, l2;
        l = tk_line_of(a, esize, a.l_begin + li0 + (active ? t : 0), warp_run(TK_T, esize), &l1, &l2);
        io = (I)(a.in.off + l1 * a.in.s1 + l2 * a.in.s2);
        oo = (I)(a.out.off + l1 * a.out.s1 + l2 * a.out.s2);
        si = (I)a.in.sm;
        so = (I)a.out.sm;
    }
};

// A ring stage (x lines) holds TK_K unknowns of each of the block's 32 lines per array, [t][k] padded to
// TK_K + 1, so the cooperative copies (4 lines x 8 unknowns per instruction) and the per-lane reads of one
// column both spread over the banks. W/G: unknown m of lane t at m*TK_T + t.
constexpr int TK_TILE = TK_T * (TK_K + 1);
__device__ __forceinline__ int tk_tidx(int t, int k) { return t * (TK_K + 1) + k; }

template <class TL, class TD>
__host__ __device__ constexpr size_t tk_stage_bytes() { return (size_t)TK_TILE * (sizeof(TD) + 3 * sizeof(TL)); }

__host__ __device__ inline size_t tk_wg_bytes(int64_t n) { return (size_t)n * TK_T * 2 * sizeof(double); }

// cp.async of one element (4 or 8 bytes) into shared memory, through L1, to a shared-memory address (lets
// the copies of one lane share a base and an immediate offset).
template <class T>
__device__ __forceinline__ void tk_cp_at(unsigned saddr, const T *gmem)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(saddr), "l"(gmem), "n"(sizeof(T)) : "memory");
}

// A y/z line's stage of TK_K unknowns in registers (tk_line, tc_line), loaded one stage ahead of its use.
template <class TL, class TD>
struct tk_regstage {
    TL d[TK_K], f[TK_K], r[TK_K];
    TD e[TK_K];
};

// A register stage widened to double for the recurrence; double lower values are checked here, which makes
// the stage's first use wait on its loads (tk_line's and tc_line's order: widen, issue the next stage, solve).
template <class TL, class TD>
__device__ __forceinline__ void tk_widen(const tk_regstage<TL, TD> &b, double (&dv)[TK_K], double (&ev)[TK_K],
                                         double (&fv)[TK_K], double (&rv)[TK_K], bool &bad)
{
#pragma unroll
    for (int k = 0; k < TK_K; ++k) {
        dv[k] = (double)b.d[k];
        ev[k] = (double)b.e[k];
        fv[k] = (double)b.f[k];
        rv[k] = (double)b.r[k];
        if (sizeof(TL) == 8)
            bad |= !tk_finite(dv[k]);
    }
}

// Loads the stage of unknowns c0.. of the line whose unknown 0 is at offset io, unknowns si apart. Lower is
// not read at the first unknown nor upper at the last (they may be unset); interior stages test nothing.
template <class TL, class TD, class I>
__device__ __forceinline__ void tk_load_stage(tk_regstage<TL, TD> &b, int64_t c0, int64_t n, I io, I si, const TD *E,
                                              const TL *D, const TL *F, const TL *R)
{
    constexpr int K = TK_K;
    const I o = io + (I)c0 * si;
    if (c0 > 0 && c0 + K < n) {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            b.e[k] = __ldg(E + (o + k * si));
            b.d[k] = __ldg(D + (o + k * si));
            b.f[k] = __ldg(F + (o + k * si));
            b.r[k] = __ldg(R + (o + k * si));
        }
    } else {
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const int64_t m = c0 + k;
            b.e[k] = m < n ? __ldg(E + (o + k * si)) : TD(0);
            b.r[k] = m < n ? __ldg(R + (o + k * si)) : TL(0);
            b.d[k] = m > 0 && m < n ? __ldg(D + (o + k * si)) : TL(0);
            b.f[k] = m < n - 1 ? __ldg(F + (o + k * si)) : TL(0);
        }
    }
}

// The forward sweep of a y/z line in one lane (tk_line; tw_line's halves): its first len unknowns of a line of
// n, unknown k at io + k*si, in register stages loaded one stage ahead; (W, G) of unknown k stored at wg[k*ws].
// A stage is widened to double first, then the next stage's loads are issued, then the chain runs: a load's
// register is waited on through a scoreboard shared with loads issued after it (loads complete out of order),
// so loads issued before the stage's first use would be waited on too (ncu: a third of the time; double data,
// which needs no conversion, waits on a finiteness check of its lower diagonal; decision 004). Two buffers
// take turns, so that no stage is copied from one register set to another.
template <int AR, bool PF32, class TL, class TD, class I>
__device__ __forceinline__ void tk_strided_forward(int64_t len, int64_t n, I io, I si, const TD *E, const TL *D,
                                                   const TL *F, const TL *R, double2 *wg, int64_t ws, double &w,
                                                   double &g, bool &bad)
{
    constexpr int K = TK_K;
    using stage = tk_regstage<TL, TD>;
    auto load = [&](stage &b, int64_t c) { tk_load_stage(b, c * K, n, io, si, E, D, F, R); };
    auto sweep = [&](const stage &b, int64_t c, auto &&after_use) {
        const int64_t c0 = c * K;
        double2 *p = wg + c0 * ws;
        double dv[K], ev[K], fv[K], rv[K];
        tk_widen(b, dv, ev, fv, rv, bad);
        after_use();
        if (c0 > 0 && c0 + K <= len && c0 + K < n) { // no first or last unknown: unrolled, no tests
#pragma unroll
            for (int k = 0; k < K; ++k) {
                tk_unknown<AR, PF32>(false, false, dv[k], ev[k], fv[k], rv[k], w, g, bad);
                p[k * ws] = make_double2(w, g);
            }
            return;
        }
#pragma unroll
        for (int k = 0; k < K; ++k)
            if (c0 + k < len) {
                tk_unknown<AR, PF32>(c0 + k == 0, c0 + k == n - 1, dv[k], ev[k], fv[k], rv[k], w, g, bad);
                p[k * ws] = make_double2(w, g);
            }
    };
    const int64_t nch = (len + K - 1) / K;
    stage A, B;
    load(A, 0);
    for (int64_t c = 0; c < nch; c += 2) {
        sweep(A, c, [&] {
            if (c + 1 < nch)
                load(B, c + 1);
        });
        if (c + 1 >= nch)
            break;
        sweep(B, c + 1, [&] {
            if (c + 2 < nch)
                load(A, c + 2);
        });
    }
}

// tk_cp_at with L2 asked to fetch the whole aligned B (128 or 256) bytes around the element (tc_line's x
// lines, decision 046: they read 32-64 bytes of each line per stage, lines 4 KiB and more apart).
template <int B, class T>
__device__ __forceinline__ void tc_cp_at(unsigned saddr, const T *gmem)
{
    if constexpr (B == 256)
        asm volatile("cp.async.ca.shared.global.L2::256B [%0], [%1], %2;\n" ::"r"(saddr), "l"(gmem), "n"(sizeof(T))
                     : "memory");
    else
        asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], %2;\n" ::"r"(saddr), "l"(gmem), "n"(sizeof(T))
                     : "memory");
}

// The x lines' cooperative copies into a ring of ns stages (tk_line and tc_line): lane q moves unknown q % K
// of the lines q / K + j * (T / K), j < K; their offsets (lin, lout) and this lane's first ring cell as
// shared addresses (E's and D's; F and R follow D at fixed distances), once.
template <class TL, class TD, class I>
struct tk_xcopy {
    static constexpr int T = TK_T, K = TK_K;
    I lin[K], lout[K];
    unsigned sbE, sbL, rF;
    __device__ __forceinline__ void init(int t, I io, I oo, TD *sE, TL *sD, int ns)
    {
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int src = t / K + j * (T / K);
            lin[j] = __shfl_sync(0xffffffffu, io, src) + t % K;
            lout[j] = __shfl_sync(0xffffffffu, oo, src);
        }
        const int s0 = tk_tidx(t / K, t % K);
        sbE = (unsigned)__cvta_generic_to_shared(sE + s0);
        sbL = (unsigned)__cvta_generic_to_shared(sD + s0);
        rF = (unsigned)(ns * TK_TILE * sizeof(TL));
    }
    // The copies of the stage of unknowns c0.. into ring slot `slot` (L2H: 0, none, or tc_cp_at's hint of L2H
    // bytes).
    // One ring cell per line, the cells of successive j a fixed (T / K) * (K + 1) apart, so every copy of a
    // lane is one base address plus an immediate offset. Lower is never read at the first unknown, upper
    // never at the last. In a warp of fewer than T lines the missing lines copy the warp's first line (their
    // offsets), into cells nobody reads: no test per line. (Tests, branches and addresses rebuilt per line
    // were a third of the kernel's instructions on 140-unknown lines.)
    template <int L2H>
    __device__ __forceinline__ void copy(I c0, int64_t n, int t, int slot, const TD *E, const TL *D, const TL *F,
                                         const TL *R) const
    {
        const bool interior = c0 > 0 && c0 + K < n; // no first or last unknown: every array, no tests
        const I m = c0 + t % K;
        if (m >= n)
            return;
        const bool okD = interior || m > 0, okF = interior || m < n - 1;
        const unsigned bE = sbE + slot * (unsigned)(TK_TILE * sizeof(TD)),
                       bL = sbL + slot * (unsigned)(TK_TILE * sizeof(TL)), rR = 2 * rF;
        constexpr unsigned JS = (T / K) * (K + 1);
        auto cp = [](unsigned sa, const auto *g) {
            if constexpr (L2H != 0)
                tc_cp_at<L2H>(sa, g);
            else
                tk_cp_at(sa, g);
        };
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const auto o = (std::make_unsigned_t<I>)(lin[j] + c0);
            cp(bE + j * JS * (unsigned)sizeof(TD), E + o);
            cp(bL + rR + j * JS * (unsigned)sizeof(TL), R + o);
            if (okD)
                cp(bL + j * JS * (unsigned)sizeof(TL), D + o);
            if (okF)
                cp(bL + rF + j * JS * (unsigned)sizeof(TL), F + o);
        }
    }
};

// An answer kept on chip in the x (Wp) half of its (Wp, G) cell until the verdict, in its own type: no
// conversion on the way in or out.
template <class TX>
__device__ __forceinline__ void tk_keep_x(double2 &c, TX v) { *reinterpret_cast<TX *>(&c.x) = v; }
template <class TX>
__device__ __forceinline__ TX tk_kept_x(const double2 &c) { return *reinterpret_cast<const TX *>(&c.x); }

template <class TX>
__device__ __forceinline__ bool tk_finite_x(TX v) { return fabs((double)v) <= DBL_MAX; }
template <>
__device__ __forceinline__ bool tk_finite_x<float>(float v) { return fabsf(v) <= FLT_MAX; }
__device__ __forceinline__ float tk_abs(float v) { return fabsf(v); }
__device__ __forceinline__ double tk_abs(double v) { return fabs(v); }
__device__ __forceinline__ float tk_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double tk_max(double a, double b) { return fmax(a, b); }

// The back substitution over steps top, top - 1, ..., 0 from x, the answer at step top + 1: step m's (W, G) at
// wg[m * ws + col(m % K)], its answer kept in W's place; mx: the largest |x|. A stage of K steps is read,
// substituted and kept in turn; FULL: all K of the stage's steps are at most top (no guards).
template <bool FULL, int AR, class TX, class Col>
__device__ __forceinline__ void tk_back_stage(double2 *wg, int64_t ws, Col col, int64_t c0, int64_t top, TX &x, TX &mx)
{
    constexpr int K = TK_K;
    double2 v[K];
    TX xs[K];
#pragma unroll
    for (int k = 0; k < K; ++k)
        if (FULL || c0 + k <= top)
            v[k] = wg[k * ws + col(k)];
#pragma unroll
    for (int k = K - 1; k >= 0; --k)
        if (FULL || c0 + k <= top) {
            x = (TX)tk_back<AR>(v[k].x, (double)x, v[k].y);
            mx = tk_max(mx, tk_abs(x));
            xs[k] = x;
        }
#pragma unroll
    for (int k = 0; k < K; ++k)
        if (FULL || c0 + k <= top)
            tk_keep_x(wg[k * ws + col(k)], xs[k]);
}
template <int AR, class TX, class Col>
__device__ __forceinline__ void tk_back_stages(double2 *WG, int64_t ws, Col col, int64_t top, TX &x, TX &mx)
{
    for (int64_t c = top >= 0 ? top / TK_K : -1; c >= 0; --c) {
        const int64_t c0 = c * TK_K;
        if (c0 + TK_K - 1 <= top) // every stage but the topmost
            tk_back_stage<true, AR>(WG + c0 * ws, ws, col, c0, top, x, mx);
        else
            tk_back_stage<false, AR>(WG + c0 * ws, ws, col, c0, top, x, mx);
    }
}

// The end of a checkpointed kernel (tc_line, tx_line; decision 046): where its forward sweep cannot bound the
// answers (|W| > 1, or G's sum near the type's range), a walk back that writes nothing checks them first
// (`back(false_type, 0)` keeps mx, their largest magnitude); failing lines are recorded, then the lines that
// passed are written by `back(true_type, okmask)`.
template <class TX, class Back>
__device__ __forceinline__ void tk_ckpt_verdict(const tk_args &a, bool active, bool bad, bool wbig, int64_t n,
                                                double gsum, const TX &mx, unsigned long long line, Back &back)
{
    const bool safe = !wbig && n <= (int64_t(1) << 20) && gsum <= (sizeof(TX) == 4 ? 0.5 * FLT_MAX : 0.5 * DBL_MAX);
    if (__any_sync(0xffffffffu, active && !bad && !safe)) {
        back(std::false_type{}, 0u);
        bad |= !tk_finite_x(mx);
    }
    if (active && bad) {
        atomicMin(a.err, line);
        if (a.nfail)
            atomicAdd(a.nfail, 1ull);
    }
    const unsigned okmask = __ballot_sync(0xffffffffu, active && !bad);
    tk_finish(a, active && bad); // the verdict waits on the failures alone, not on the answers written after
    if (okmask)
        back(std::true_type{}, okmask);
}

} // namespace

#endif
