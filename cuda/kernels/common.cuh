// Device helpers of every Thomas kernel: the end of a block's solve (tk_finish), the block and stage
// sizes, MOHID's forward-sweep step with the pivot arithmetic in double, the shared-memory tile and
// cp.async copies, and the answer kept on chip until the verdict.
#ifndef TRIDI_CUDA_KERNELS_COMMON_CUH
#define TRIDI_CUDA_KERNELS_COMMON_CUH

#include <cfloat>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernel_args.h"
#include "rcp.cuh"

// Internal linkage: each kernel is instantiated and launched by one file of the library (cuda/planner.cu
// the solve kernels, cuda/device_solve.cu the commit kernel, cuda/diagnose.cu the locate kernel); a kernel
// registered by two translation units would leave the runtime free to launch one copy with the attributes
// (shared-memory opt-in, carveout) set on the other.
namespace {

// Each failing line writes nothing of its own answer (ON_ERROR_LINES: a failing line is left untouched);
// the block's failures are recorded here, and with a.slot the grid's last block hands the verdict on.
__device__ __forceinline__ void tk_finish(const tk_args &a)
{
    if (!a.slot)
        return;
    __syncthreads(); // every thread of the block has made its atomics
    if (threadIdx.x == 0) {
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

__device__ __forceinline__ bool tk_finite(double v) { return fabs(v) <= DBL_MAX; }

// The forward sweep's arithmetic, AR (tk_arith, kernel_args.h):
//  - TK_AR_MOHID: MOHID's operations in MOHID's order, bit for bit: den = E + D*W with the product rounded
//    before the sum, W = -F/den and G = (Ti - D*G)/den by two correctly rounded divisions, every step an
//    _rn intrinsic, which nvcc never contracts into a fused multiply-add (decision 041).
//  - TK_AR_NEWTYPE with PF32 (upper stored as float): MOHID's NewType routines, whose pivot AUX is a
//    default real: den rounded to float, W = -(F/AUX) divided in float, G divided in double by the float
//    AUX, the zero and finiteness tests on AUX. Without PF32 it is TK_AR_MOHID.
//  - TK_AR_RCP: FAST arithmetic on lines the FAST kernels do not take (and FAST on the mixed type): fused
//    multiply-adds and one reciprocal per unknown (rcp.cuh), within the FAST bound, not MOHID's bits.
// W is kept as Wp = -W everywhere (negation is exact, so -W's bits are MOHID's W's with the sign flipped).
// A non-finite lower makes den non-finite (or NaN where wp is 0), so it needs no check of its own.
template <int AR, bool PF32>
__device__ __forceinline__ void tk_mid(double d, double e, double f, double r, double &wp, double &g, bool &bad)
{
    if constexpr (AR == TK_AR_RCP) {
        const double den = fma(-d, wp, e), inv = tk_rcp(den);
        wp = f * inv;
        g = fma(-d, g, r) * inv;
        bad |= !tk_finite(wp) | !tk_finite(g) | !tk_finite(den);
    } else {
        // e + d*W = e - d*Wp: the same rounding of the same exact value
        const double den = __dsub_rn(e, __dmul_rn(d, wp)), num = __dsub_rn(r, __dmul_rn(d, g));
        if constexpr (AR == TK_AR_NEWTYPE && PF32) {
            const float aux = __double2float_rn(den);
            wp = (double)__fdiv_rn((float)f, aux); // f holds a float value: the cast is exact
            g = __ddiv_rn(num, (double)aux);
            bad |= !tk_finite(wp) | !tk_finite(g) | !(fabsf(aux) <= FLT_MAX);
        } else {
            wp = __ddiv_rn(f, den);
            g = __ddiv_rn(num, den);
            bad |= !tk_finite(wp) | !tk_finite(g) | !tk_finite(den);
        }
    }
}

// One unknown m of MOHID's forward sweep: the first row divides by E (in double in every arithmetic), the
// last divides too (its W is never used and stays as it was), the others are tk_mid. d is not read at the
// first row nor f at the last. Flags non-finite values in bad.
template <int AR, bool PF32>
__device__ __forceinline__ void tk_step(int64_t m, int64_t n, double d, double e, double f, double r, double &wp,
                                        double &g, bool &bad)
{
    if (m == 0) {
        wp = n > 1 ? __ddiv_rn(f, e) : 0.0;
        g = __ddiv_rn(r, e);
        bad |= !tk_finite(wp) | !tk_finite(g) | !tk_finite(e);
    } else if (m < n - 1) {
        tk_mid<AR, PF32>(d, e, f, r, wp, g, bad);
    } else if constexpr (AR == TK_AR_RCP) {
        const double den = fma(-d, wp, e);
        g = fma(-d, g, r) / den;
        bad |= !tk_finite(g) | !tk_finite(d) | !tk_finite(den);
    } else {
        const double den = __dsub_rn(e, __dmul_rn(d, wp)), num = __dsub_rn(r, __dmul_rn(d, g));
        if constexpr (AR == TK_AR_NEWTYPE && PF32) {
            const float aux = __double2float_rn(den);
            g = __ddiv_rn(num, (double)aux);
            bad |= !tk_finite(g) | !tk_finite(d) | !(fabsf(aux) <= FLT_MAX);
        } else {
            g = __ddiv_rn(num, den);
            bad |= !tk_finite(g) | !tk_finite(d) | !tk_finite(den);
        }
    }
}

// One unknown of the back substitution, x = W*xnext + G (W = -wp) before its rounding to x's type: MOHID's
// product then sum, or FAST's fused multiply-add.
template <int AR>
__device__ __forceinline__ double tk_back(double wp, double xnext, double g)
{
    if constexpr (AR == TK_AR_RCP)
        return fma(-wp, xnext, g);
    else
        return __dadd_rn(__dmul_rn(-wp, xnext), g);
}

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

} // namespace

#endif
