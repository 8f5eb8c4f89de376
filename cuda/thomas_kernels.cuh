// Thomas kernels of the CUDA backend: one tridiagonal system per thread, MOHID's recurrence with the
// pivot arithmetic in double and every answer rounded to its storage type before it feeds the next one.
// Shared by cuda/cuda_backend.cu and the GPU benchmark.
//
// Two kernels. ts_line (further down) cuts a line into segments over several threads; it takes the lines
// too long for W/G on chip (every x line past 220 unknowns, y/z lines of 221-512). tk_line takes the
// others, in a few variants. A block is one warp of 32 neighbouring lines. The inputs arrive
// in stages of TK_K unknowns, ahead of the recurrence, whose chain of dependent divisions would otherwise
// wait on every load.
//  - Loads: y/z lines (neighbouring lines neighbouring in memory): lane t loads its own line into
//    registers, one stage ahead, and a warp reads 32 consecutive cells per unknown. x lines (CONTIG,
//    unknowns adjacent): the warp copies a stage cooperatively into a shared-memory ring (cp.async, up to
//    three stages ahead), 8 consecutive unknowns of 4 lines per instruction. The answer leaves the same way.
//  - W and G (16 B per unknown) stay in shared memory for lines up to TK_WG_SHARED_MAX / 512 unknowns;
//    longer lines given to tk_line (y/z lines past 512 unknowns, or every line with TRIDI_CUDA_KERNEL=line)
//    keep them in a global scratch (32 B/cell more traffic).
//  - COOP (guarded, one wave): when every line of the call fits on the GPU at once, the kernel is launched
//    cooperatively, solves every line into shared memory, meets at a grid barrier and writes x only if no
//    line failed: the no-partial-answer rule without a second pass over x. Otherwise the answer goes to a
//    view (the context's compact box, copied into x by tk_commit only if no line failed).
//  - What bounds it (ncu; see docs/decisions/001 and 002): an SM holds few warps when W/G are on chip,
//    and each warp issues 50-70 instructions per unknown, a few cycles apart, most of them waiting on the
//    one before (FP64 latency, the reciprocal and the float/double conversions); not DRAM bandwidth.
#ifndef TRIDI_THOMAS_KERNELS_CUH
#define TRIDI_THOMAS_KERNELS_CUH

#include <cooperative_groups.h>
#include <cuda_pipeline.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <unordered_map>

#include "thomas_core.h" // the one Thomas core: failure kinds, their texts and the diagnosis steps

// Everything here has internal linkage: the library and the GPU benchmark both include this header, and
// two translation units registering the same kernel template would leave the runtime free to launch one
// copy with the attributes (shared-memory opt-in, carveout) set on the other.
namespace {

// Where line (l1, l2) of a launch starts and how its unknowns are spaced, in elements.
struct tk_view {
    int64_t off, s1, s2, sm;
};

// The verdict of one device solve under ON_ERROR_LINES, on the device: the lowest failing line, how many
// lines failed, and how many blocks have finished (the last one hands the verdict to the host and re-arms
// the slot, so a solve needs no second kernel, memset or copy).
struct tk_slot {
    unsigned long long first, nfailed;
    unsigned int done, pad;
};
// What the host reads of a slot (mapped pinned memory).
struct tk_verdict {
    unsigned long long first, nfailed;
};

struct tk_args {
    const void *D, *E, *F, *R; // lower, diag, upper, rhs (MOHID D, E, F, Ti)
    void *X;                   // answer
    tk_view in, out;           // the four inputs share one view
    int64_t n, n1;             // unknowns per line, lines along the first line axis
    int64_t l_begin, l_count;  // lines solved by this launch (a slab of the problem's line order)
    double *scratch;           // (Wp, G) of long lines (2 * n * l_count doubles, 16-byte aligned); NULL: shared memory
    unsigned long long *err;   // lowest failing line (atomicMin); ULLONG_MAX: none
    // COOP only: the verdict is copied here for the host (mapped pinned memory) and next_err is re-armed
    // for the context's next call, after the grid barrier.
    unsigned long long *mirror, *next_err;
    unsigned long long *nfail; // lines that failed (atomicAdd), or NULL when only the first is wanted
    // ON_ERROR_LINES device solves: the slot whose verdict the last block hands to `verdict` (host) before
    // re-arming the slot and the next slot's first word (next_err); NULL otherwise.
    tk_slot *slot;
    tk_verdict *verdict;
};

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

// 1/den from the hardware's reciprocal estimate and two Newton steps: full double precision (within an
// ulp of the rounded quotient) at a fraction of the latency of the IEEE division routine, which sits on
// the recurrence's critical path. A zero or subnormal pivot gives Inf/NaN, which the finiteness checks
// catch (the failure is then located with true divisions).
__device__ __forceinline__ double tk_rcp(double den)
{
    double y;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(den));
    double e = fma(-den, y, 1.0);
    y = fma(y, e, y);
    e = fma(-den, y, 1.0);
    return fma(y, e, y);
}

// An unknown between the first and the last of MOHID's forward sweep, W kept as Wp = -W. A non-finite
// lower makes den non-finite (or NaN where wp is 0), so it needs no check of its own.
__device__ __forceinline__ void tk_mid(double d, double e, double f, double r, double &wp, double &g, bool &bad)
{
    const double den = fma(-d, wp, e), inv = tk_rcp(den);
    wp = f * inv;
    g = fma(-d, g, r) * inv;
    bad |= !tk_finite(wp) | !tk_finite(g) | !tk_finite(den);
}

// One unknown m of MOHID's forward sweep: the first row divides by E, the last divides too (MOHID's
// division; its W is never used and stays as it was), the others are tk_mid. d is not read at the first
// row nor f at the last. Flags non-finite values in bad.
__device__ __forceinline__ void tk_step(int64_t m, int64_t n, double d, double e, double f, double r, double &wp,
                                        double &g, bool &bad)
{
    if (m == 0) {
        wp = n > 1 ? f / e : 0.0;
        g = r / e;
        bad |= !tk_finite(wp) | !tk_finite(g) | !tk_finite(e);
    } else if (m < n - 1) {
        tk_mid(d, e, f, r, wp, g, bad);
    } else {
        const double den = fma(-d, wp, e);
        g = fma(-d, g, r) / den;
        bad |= !tk_finite(g) | !tk_finite(d) | !tk_finite(den);
    }
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

// W is kept with the opposite sign (Wp = -W = F/pivot): every use negates it inside an fma for free, and
// the values are bit for bit those of MOHID's recurrence (negation is exact).
//
// y/z lines: every lane loads, solves and stores its own line; neighbouring lanes hold neighbouring cells,
// so each warp access is one contiguous run. x lines (CONTIG): the loads and the answer's stores are
// cooperative, 8 consecutive unknowns of 4 lines per warp instruction (measured twice as fast as each
// lane walking its own line, whose accesses touch 32 sectors per instruction).
// I: type of element offsets into the arrays (int32_t when every offset of the call fits: cheaper
// addressing, measured as a large share of the instructions).
template <class TL, class TD, class TX, class I, bool CONTIG, bool WGS, bool COOP>
__global__ void __launch_bounds__(TK_T) tk_line(const tk_args a, const int NS)
{
    constexpr int T = TK_T, K = TK_K, SE = TK_TILE;
    extern __shared__ __align__(16) unsigned char tk_dyn[];
    const int t = threadIdx.x;
    const int64_t n = a.n, li0 = (int64_t)blockIdx.x * T, nch = (n + K - 1) / K;
    const int nl = (int)min((int64_t)T, a.l_count - li0);
    // Lanes past the last line stay (inactive) to the end: tk_finish meets the whole block.
    const bool active = t < nl;

    // This lane's line (other lanes take the block's first line, so their offsets stay valid).
    const int64_t l = a.l_begin + li0 + (active ? t : 0), l1 = l % a.n1, l2 = l / a.n1;
    const I io = (I)(a.in.off + l1 * a.in.s1 + l2 * a.in.s2), oo = (I)(a.out.off + l1 * a.out.s1 + l2 * a.out.s2);
    const I si = (I)a.in.sm, so = (I)a.out.sm;

    // (Wp, G) of unknown m of this lane: shared memory at m*T + t, or the global scratch at m*l_count + li.
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

    // CONTIG: lane q moves unknown q % K of the lines q / K + j * (T / K), j < K; their offsets, once.
    I lin[CONTIG ? K : 1], lout[CONTIG ? K : 1];
    if (CONTIG) {
#pragma unroll
        for (int j = 0; j < K; ++j) {
            const int src = t / K + j * (T / K);
            lin[j] = __shfl_sync(0xffffffffu, io, src) + t % K;
            lout[j] = __shfl_sync(0xffffffffu, oo, src);
        }
    }

    // CONTIG copies: this lane's first ring cell as shared addresses, E's and D's (F and R follow D at
    // fixed distances).
    unsigned sbE = 0, sbL = 0, rF = 0, rR = 0;
    if (CONTIG) {
        const int s0 = tk_tidx(t / K, t % K);
        sbE = (unsigned)__cvta_generic_to_shared(sE + s0);
        sbL = (unsigned)__cvta_generic_to_shared(sD + s0);
        rF = (unsigned)(NS * SE * sizeof(TL));
        rR = 2 * rF;
    }

    int64_t next = 0; // next stage to issue
    int slot_in = 0;  // its ring slot
    // x lines: the cooperative copies of the next stage into the ring.
    auto issue = [&]() {
        if (next < nch) {
            const I c0 = (I)(next * K);
            const bool interior = c0 > 0 && c0 + K < n; // no first or last unknown: every array, no tests
            // Lane q copies unknown q % K of lines q / K + j * (T / K): one ring cell per line, the cells of
            // successive j a fixed (T / K) * (K + 1) apart, so every copy of a lane is one base address
            // plus an immediate offset. Lower is never read at the first unknown, upper never at the
            // last. In a warp of fewer than T lines the missing lines copy the warp's first line (their
            // offsets), into cells nobody reads: no test per line. (Tests, branches and addresses rebuilt
            // per line were a third of the kernel's instructions on 140-unknown lines.)
            const int k = t % K;
            const I m = c0 + k;
            if (m < n) {
                const bool okD = interior || m > 0, okF = interior || m < n - 1;
                const unsigned bE = sbE + slot_in * (unsigned)(SE * sizeof(TD)),
                               bL = sbL + slot_in * (unsigned)(SE * sizeof(TL));
                constexpr unsigned JS = (T / K) * (K + 1);
#pragma unroll
                for (int j = 0; j < K; ++j) {
                    const auto o = (std::make_unsigned_t<I>)(lin[j] + c0);
                    tk_cp_at(bE + j * JS * (unsigned)sizeof(TD), E + o);
                    tk_cp_at(bL + rR + j * JS * (unsigned)sizeof(TL), R + o);
                    if (okD)
                        tk_cp_at(bL + j * JS * (unsigned)sizeof(TL), D + o);
                    if (okF)
                        tk_cp_at(bL + rF + j * JS * (unsigned)sizeof(TL), F + o);
                }
            }
        }
        ++next;
        slot_in = slot_in + 1 == NS ? 0 : slot_in + 1;
        __pipeline_commit(); // an empty group past the end keeps the wait counts uniform
    };

    double wp = 0.0, g = 0.0;
    bool bad = false;
    if (!CONTIG) {
        // y/z lines: each lane loads its own line straight into registers, one stage ahead of the
        // recurrence (a stage is some thousand cycles of it, which covers the loads' latency). No ring in
        // shared memory: its copies, addresses and read-back were a third of the forward sweep's
        // instructions, and the shared memory it took is left to W/G (more warps per SM on short lines).
        struct stage {
            TL d[K], f[K], r[K];
            TD e[K];
        };
        auto load = [&](stage &b, int64_t c) {
            const int64_t c0 = c * K;
            const I o = io + (I)c0 * si;
            if (c0 > 0 && c0 + K < n) { // interior: no first or last unknown, no tests
#pragma unroll
                for (int k = 0; k < K; ++k) {
                    b.e[k] = __ldg(E + (o + k * si));
                    b.d[k] = __ldg(D + (o + k * si));
                    b.f[k] = __ldg(F + (o + k * si));
                    b.r[k] = __ldg(R + (o + k * si));
                }
            } else {
                // lower is not read at the first unknown nor upper at the last (they may be unset)
#pragma unroll
                for (int k = 0; k < K; ++k) {
                    const int64_t m = c0 + k;
                    b.e[k] = m < n ? __ldg(E + (o + k * si)) : TD(0);
                    b.r[k] = m < n ? __ldg(R + (o + k * si)) : TL(0);
                    b.d[k] = m > 0 && m < n ? __ldg(D + (o + k * si)) : TL(0);
                    b.f[k] = m < n - 1 ? __ldg(F + (o + k * si)) : TL(0);
                }
            }
        };
        // after_use: issues the next stage's loads once this stage's values are in use. A load's register is
        // waited on through a scoreboard shared with loads issued after it (loads complete out of order), so
        // a stage's first use waits for every load issued before that use: loads issued ahead of it were
        // waited on too (ncu: a third of the time). So the whole stage is widened to double first (the
        // conversions the recurrence needs anyway; double data, which needs none, waits on a finiteness check
        // of its lower diagonal), then the next stage is asked for. Measured: the stage's loads issued before
        // that wait took 1024x1024x128 z 2358 -> 2676 us; after it, 2406.
        auto sweep = [&](const stage &b, int64_t c, auto &&after_use) {
            const int64_t c0 = c * K;
            double2 *wg = WG + c0 * ws;
            double dv[K], ev[K], fv[K], rv[K];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                dv[k] = (double)b.d[k];
                ev[k] = (double)b.e[k];
                fv[k] = (double)b.f[k];
                rv[k] = (double)b.r[k];
                if (sizeof(TL) == 8)
                    bad |= !tk_finite(dv[k]);
            }
            after_use();
            if (c0 > 0 && c0 + K < n) {
#pragma unroll
                for (int k = 0; k < K; ++k) {
                    tk_mid(dv[k], ev[k], fv[k], rv[k], wp, g, bad);
                    wg[k * ws] = make_double2(wp, g);
                }
                return;
            }
#pragma unroll
            for (int k = 0; k < K; ++k)
                if (c0 + k < n) {
                    tk_step(c0 + k, n, dv[k], ev[k], fv[k], rv[k], wp, g, bad);
                    wg[k * ws] = make_double2(wp, g);
                }
        };
        if (active) {
            // Two buffers taking turns, so that no stage is copied from one register set to another.
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
                    tk_mid((double)dv[k], (double)ev[k], (double)fv[k], (double)rv[k], wp, g, bad);
                    wg[k * ws + wgc(k)] = make_double2(wp, g);
                }
                continue;
            }
            for (int k = 0; k < K && c0 + k < n; ++k) {
                const int64_t m = c0 + k;
                const int s = tk_tidx(t, k);
                // the ring holds no lower at the first unknown nor upper at the last
                tk_step(m, n, m > 0 ? (double)tD[s] : 0.0, (double)tE[s], m < n - 1 ? (double)tF[s] : 0.0,
                        (double)tR[s], wp, g, bad);
                wg[k * ws + wgc(k)] = make_double2(wp, g);
            }
        }
        __pipeline_wait_prior(0);
    }

    // Back substitution, a stage of K unknowns at a time so the loads of (Wp, G) leave the chain. With
    // W/G on chip the answers (in their own type, tk_keep_x) replace Wp and leave after the verdict; with
    // the global scratch they go straight to the output view.
    // Overflow is tracked as the largest |x| so far (one max per unknown instead of a flag kept in a byte):
    // from finite W and G the first non-finite answer can only be an infinity (fma and rounding of finite
    // values never give NaN), and the max keeps it.
    if (active && !bad) {
        // The answers replace Wp in W/G (shared memory or the scratch) and reach x only once the whole
        // line is known to have succeeded.
        TX x = (TX)g, mx = tk_abs(x);
        tk_keep_x(WG[(n - 1) * ws + wgc((int)((n - 1) % K))], x);
        for (int64_t c = (n - 2) / K; c >= 0 && n > 1; --c) {
            const int64_t c0 = c * K;
            double2 *wg = WG + c0 * ws;
            double2 v[K];
            TX xs[K];
            if (c0 + K - 1 <= n - 2) { // a full stage (all but the topmost): no guards
#pragma unroll
                for (int k = 0; k < K; ++k)
                    v[k] = wg[k * ws + wgc(k)];
#pragma unroll
                for (int k = K - 1; k >= 0; --k) {
                    x = (TX)fma(-v[k].x, (double)x, v[k].y);
                    mx = tk_max(mx, tk_abs(x));
                    xs[k] = x;
                }
#pragma unroll
                for (int k = 0; k < K; ++k)
                    tk_keep_x(wg[k * ws + wgc(k)], xs[k]);
                continue;
            }
#pragma unroll
            for (int k = 0; k < K; ++k)
                if (c0 + k <= n - 2)
                    v[k] = wg[k * ws + wgc(k)];
#pragma unroll
            for (int k = K - 1; k >= 0; --k)
                if (c0 + k <= n - 2) {
                    x = (TX)fma(-v[k].x, (double)x, v[k].y);
                    mx = tk_max(mx, tk_abs(x));
                    xs[k] = x;
                }
#pragma unroll
            for (int k = 0; k < K; ++k)
                if (c0 + k <= n - 2)
                    tk_keep_x(wg[k * ws + wgc(k)], xs[k]);
        }
        bad = !tk_finite_x(mx);
    }
    if (active && bad) {
        atomicMin(a.err, (unsigned long long)l);
        if (a.nfail)
            atomicAdd(a.nfail, 1ull);
    }
    if (!WGS) {
        if (active && !bad) {
            const double2 *pw = WG;
            TX *px = X + oo;
            for (int64_t m = 0; m < n; ++m)
                px[(I)m * so] = tk_kept_x<TX>(pw[m * ws]);
        }
        tk_finish(a);
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
                    X[lout[j] + (I)m * so] = tk_kept_x<TX>(xs[m * T + (lt ^ k)]); // m % K == k
                }
            }
        }
    } else if (active && !bad) {
        const double2 *pw = xs + t;
        TX *px = X + oo;
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
    tk_finish(a);
}

// ---- Split lines: several threads per line ----------------------------------------------------------
// tk_line gives a line one thread, so a grid of few lines (MOHID's 140x140x56 has 7840 x lines: one warp
// per SM scheduler) leaves the GPU waiting on each thread's chain of dependent divisions, and lines too
// long for W/G on chip pay 32 B/cell of scratch traffic. ts_line cuts a line into P segments of at most
// L unknowns, one lane per segment, a segment's inputs, W/G and answers in registers:
//  A. each segment's effect on the elimination as a linear map. The elimination is linear in the leading
//     principal minors p(m) (p(m) = E p(m-1) - D F(m-1) p(m-2), the pivot is p(m)/p(m-1)) and in
//     h(m) = p(m) G(m) (h(m) = R p(m-1) - D h(m-1)), so (p(m), p(m-1), h(m)) goes through a segment by a
//     3x3 matrix, kept scaled by powers of two (exact; only ratios matter);
//  B. a scan of those maps over the line's segments gives the state before every segment;
//  C. each segment runs MOHID's recurrence (W, G in double, the same pivots) from that state;
//  D. each segment's back substitution as an affine map x(first) = alpha x(first of next) + beta, and a
//     scan of those from the line's end gives every segment the answer after it, rounded to its type;
//  E. each segment substitutes from that answer, rounding every answer as MOHID's back substitution does.
// The answers equal one thread's within rounding (not always bit for bit: the state and the answer at a
// segment's edge are computed another way). A failing line (zero pivot, non-finite value, overflow) is
// flagged as in tk_line. The maps of A and D are only shortcuts: where A's overflow (inputs near the ends
// of the double range) the states are computed one unknown at a time, and where D's grow (a W above 1,
// never in a diagonally dominant line) or overflow the segments substitute one after another.
//
// Layout (ts_geom): a warp holds LW = 32 / SW lines of SW segments each, and a line's P = SW * WL segments
// span WL warps of one block. The scans run over a warp's lanes with shuffles, then across the WL warps
// through shared memory (a named barrier per group of WL warps; none when WL = 1, so warps stay
// independent and the loads of one overlap the arithmetic of others).
//  - x lines (a line's cells contiguous): the lanes of a line are neighbours (qfast) and read neighbouring
//    runs of one line through L1; up to 32 * TS_L unknowns a line fits in one warp, longer ones take
//    several (x lines of 1024 unknowns: 4 warps, 2x faster than tk_line with its scratch).
//  - y/z lines (neighbouring lines neighbouring in memory): the lanes run over LW lines first, so each
//    load reads SW runs of LW consecutive cells (LW = 8: a 32-byte sector of float); past 512 unknowns a
//    line would need more than 16 warps of 4 segments, so LW drops to 4.
// Threads per block where groups of WL warps fill it (WL = 1 or 2); a group of 3 or more warps is a block
// alone (96 threads for 3).
constexpr int TS_BLOCK = 128;
constexpr int TS_BLOCK_MAX = 512; // at most: 128 registers per thread
constexpr int TS_WL_MAX = TS_BLOCK_MAX / 32;
// Unknowns per lane, at most. 16 spilled registers (mixed precision: 272 bytes per thread) and measured
// slower than 8 on x lines of 384-1024 unknowns (see docs/decisions/006).
constexpr int TS_L = 8;

struct ts_geom {
    int SW, WL, LW; // segments per warp, warps per line, lines per warp (LW * SW = 32)
    int qfast;      // 1: a warp's lanes run over a line's segments first (x lines); 0: over its lines first
};

// 2^-e for m in [2^e, 2^(e+1)) (m > 0 finite); 1 for 0 and non-finite m. The exponent is clamped so the
// scale stays a normal number.
__device__ __forceinline__ double ts_unscale(double m)
{
    const int eb = (__double2hiint(m) >> 20) & 0x7ff;
    if (eb == 0 || eb == 0x7ff)
        return 1.0;
    return __hiloint2double((2046 - min(max(eb, 2), 2045)) << 20, 0);
}

// A segment's map of (p, p_, h): [[a b 0] [c d 0] [e f g]].
struct ts_map {
    double a, b, c, d, e, f, g;
};

// Scales m by the power of two that brings its largest entry into [1, 2) (exact: only ratios matter).
__device__ __forceinline__ void ts_rescale(ts_map &m)
{
    const double sc = ts_unscale(fmax(fmax(fmax(fabs(m.a), fabs(m.b)), fmax(fabs(m.c), fabs(m.d))),
                                      fmax(fmax(fabs(m.e), fabs(m.f)), fabs(m.g))));
    m.a *= sc, m.b *= sc, m.c *= sc, m.d *= sc, m.e *= sc, m.f *= sc, m.g *= sc;
}

// later * earlier, not rescaled: the scans compose maps whose largest entry is in [1, 2), and an entry of
// such a product is at most 3 * 2 * 2; five levels of a warp's scan (each composing two composed maps)
// stay below 1e50, and the up to 15 warps of a line composed one after another below 1e17, far inside
// the double range. Rescaling each product was measured as a fifth of a long x line's instructions.
__device__ __forceinline__ ts_map ts_compose(const ts_map &l, const ts_map &r)
{
    ts_map m;
    m.a = fma(l.a, r.a, l.b * r.c);
    m.b = fma(l.a, r.b, l.b * r.d);
    m.c = fma(l.c, r.a, l.d * r.c);
    m.d = fma(l.c, r.b, l.d * r.d);
    m.e = fma(l.e, r.a, fma(l.f, r.c, l.g * r.e));
    m.f = fma(l.e, r.b, fma(l.f, r.d, l.g * r.f));
    m.g = l.g * r.g;
    return m;
}

__device__ __forceinline__ ts_map ts_shfl_up(const ts_map &m, int d)
{
    return {__shfl_up_sync(0xffffffffu, m.a, d), __shfl_up_sync(0xffffffffu, m.b, d),
            __shfl_up_sync(0xffffffffu, m.c, d), __shfl_up_sync(0xffffffffu, m.d, d),
            __shfl_up_sync(0xffffffffu, m.e, d), __shfl_up_sync(0xffffffffu, m.f, d),
            __shfl_up_sync(0xffffffffu, m.g, d)};
}

// The WL warps of one group meet: barrier 1 or 2 (a block holds at most two groups of several warps;
// barrier 0 is __syncthreads). Constant ids: a register id makes ptxas reserve all 16 barriers, and the
// SM's barriers then allow only 4 blocks.
__device__ __forceinline__ void ts_group_sync(int gib, int WL)
{
    if (gib == 0)
        asm volatile("bar.sync 1, %0;" ::"r"(32 * WL) : "memory");
    else
        asm volatile("bar.sync 2, %0;" ::"r"(32 * WL) : "memory");
}

// What the warps of a group exchange: per warp and line, the warp's forward map, its back-substitution map
// (alpha, beta), the answer handed on by the segment-after-segment path, and whether its maps grew.
struct ts_xchg_cell {
    ts_map fw;
    double al, be;
    int bad; // the warp's segments of the line failed
};

__host__ __device__ inline size_t ts_xchg_bytes(const ts_geom &g)
{
    const size_t b = (size_t)g.WL * g.LW * sizeof(ts_xchg_cell) + g.LW * sizeof(double) + g.WL * sizeof(int);
    return g.WL > 1 ? (b + 15) / 16 * 16 : 0; // a group's area stays aligned for the next
}

// Shared memory of a ts_line block of gpb groups: the groups' exchange areas and, in the one-wave variant,
// the answers of `per_group` iterations of each group until the grid barrier.
template <class TX>
__host__ __device__ inline size_t ts_smem_bytes(int64_t n, const ts_geom &g, int gpb, int64_t per_group)
{
    return gpb * ts_xchg_bytes(g) + (size_t)gpb * per_group * g.LW * n * sizeof(TX);
}

// MULTI: a line may span several warps (WL > 1); without it the exchange code is compiled out (measured
// 4-13% faster on x lines of 256 unknowns, which keeps fewer registers live). QF: geom.qfast, whose lines
// are contiguous (x lines: unit strides, so a lane's loads and stores take immediate offsets from one
// address). The y/z layout, used only when forced, has one variant: MULTI, for any WL.
template <class TL, class TD, class TX, bool COOP, bool MULTI, bool QF>
__global__ void __launch_bounds__(TS_BLOCK_MAX) ts_line(const tk_args a, const ts_geom g)
{
    using I = int32_t; // planned only when every offset fits
    constexpr int L = TS_L;
    extern __shared__ __align__(16) unsigned char tk_dyn[];
    const int SW = g.SW, WL = MULTI ? g.WL : 1, LW = g.LW, P = SW * WL;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wg = warp % WL, gib = warp / WL;
    const int t = QF ? lane / SW : lane % LW, qi = QF ? lane % SW : lane / LW; // line, segment in warp
    const int qs = QF ? 1 : LW; // lanes from one segment of a line to the next
    const int q = wg * SW + qi;
    const int n = (int)a.n, Ls = (n + P - 1) / P, s = q * Ls, len = max(0, min(Ls, n - s));
    const int64_t ngroups = (a.l_count + LW - 1) / LW;
    const int gpb = (int)(blockDim.x >> 5) / WL;
    const int64_t slot = (int64_t)blockIdx.x * gpb + gib, nslots = (int64_t)gridDim.x * gpb;
    const int64_t per_group = (ngroups + nslots - 1) / nslots;
    const size_t xbytes = ts_xchg_bytes(g);
    unsigned char *xc = tk_dyn + (size_t)gib * xbytes;
    ts_xchg_cell *cells = (ts_xchg_cell *)xc;                           // [WL][LW]
    double *handed = (double *)(xc + (size_t)WL * LW * sizeof(ts_xchg_cell)); // [LW]
    int *grew = (int *)(handed + LW);                                   // [WL]
    TX *stash = (TX *)(tk_dyn + gpb * xbytes) + (size_t)gib * per_group * LW * n;
    const TD *E = (const TD *)a.E;
    const TL *D = (const TL *)a.D, *F = (const TL *)a.F, *R = (const TL *)a.R;
    TX *X = (TX *)a.X;
    const I si = QF ? 1 : (I)a.in.sm, so = QF ? 1 : (I)a.out.sm;
    const bool xw = MULTI && WL > 1; // warps exchange

    int it = 0;
    for (int64_t grp = slot; grp < ngroups; grp += nslots, ++it) {
        const int64_t li0 = grp * LW;
        const bool active = t < (int)min((int64_t)LW, a.l_count - li0);
        const int my = active ? len : 0; // unknowns this lane solves
        const int64_t l = a.l_begin + li0 + (active ? t : 0), l1 = l % a.n1, l2 = l / a.n1;
        const I io = (I)(a.in.off + l1 * a.in.s1 + l2 * a.in.s2);
        const I oo = (I)(a.out.off + l1 * a.out.s1 + l2 * a.out.s2);

        // The segment's inputs, all loads issued at once. D at the first unknown and F at the last are
        // never read (MOHID's rules); F of the unknown before the segment enters its first pivot.
        TL dv[L], fv[L], rv[L];
        TD ev[L];
        TL fprev = TL(0);
        const I o0 = io + (I)s * si;
#pragma unroll
        for (int k = 0; k < L; ++k) {
            const I o = o0 + (I)k * si;
            const int m = s + k;
            ev[k] = k < my ? __ldg(E + o) : TD(1);
            rv[k] = k < my ? __ldg(R + o) : TL(0);
            dv[k] = k < my && m > 0 ? __ldg(D + o) : TL(0);
            fv[k] = k < my && m < n - 1 ? __ldg(F + o) : TL(0);
        }
        if (my && s > 0)
            fprev = __ldg(F + o0 - si);

        // A. (p, p_, h) after the segment = map * (p, p_, h) before it, rescaled every TS_RESCALE unknowns.
        // A step multiplies the entries by at most about |E| + |D F|: with float lower/upper/rhs four steps
        // stay inside the double range unless E is beyond float's (then the maps overflow, and the
        // fallback below takes over); double data rescales every 2 unknowns.
        constexpr int TS_RESCALE = sizeof(TL) == 4 ? 4 : 2;
        ts_map mp = {1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0};
#pragma unroll
        for (int k = 0; k < L; ++k) {
            if (k < my) {
                const double d = (double)dv[k], e = (double)ev[k], r = (double)rv[k];
                const double df = d * (double)(k ? fv[k - 1] : fprev);
                const double na = fma(e, mp.a, -df * mp.c), nb = fma(e, mp.b, -df * mp.d);
                const double ne = fma(r, mp.a, -d * mp.e), nf = fma(r, mp.b, -d * mp.f);
                mp.g = -d * mp.g;
                mp.c = mp.a, mp.d = mp.b, mp.a = na, mp.b = nb, mp.e = ne, mp.f = nf;
            }
            if (k % TS_RESCALE == TS_RESCALE - 1)
                ts_rescale(mp);
        }
        // B. Inclusive scan over the warp's segments of the line: mp = map of segments wg*SW..q.
        for (int d = 1; d < SW; d <<= 1) {
            const ts_map o = ts_shfl_up(mp, d * qs);
            if (qi >= d)
                mp = ts_compose(mp, o);
        }
        ts_rescale(mp);
        // Then over the warps: the maps of the warps before this one, composed, come first. `pre` is
        // the state before the warp's first segment (the state before unknown 0 being (p(-1), p(-2),
        // h(-1)) = (1, 0, 0)).
        double pa = 1.0, pc = 0.0, pe = 0.0;
        if (xw) {
            if (qi == SW - 1)
                cells[wg * LW + t].fw = mp;
            ts_group_sync(gib, WL);
            if (wg > 0) {
                ts_map pre = cells[t].fw;
                for (int w = 1; w < wg; ++w)
                    pre = ts_compose(cells[w * LW + t].fw, pre);
                mp = ts_compose(mp, pre);
                pa = pre.a, pc = pre.c, pe = pre.e;
            }
        }
        // The state before segment q is the first column of the map of segments 0..q-1.
        double vp = __shfl_up_sync(0xffffffffu, mp.a, qs), vq = __shfl_up_sync(0xffffffffu, mp.c, qs),
               vh = __shfl_up_sync(0xffffffffu, mp.e, qs);
        if (qi == 0)
            vp = pa, vq = pc, vh = pe;

        // C. MOHID's recurrence over the segment, W (as Wp = -W) and G kept in registers.
        double wpv[L], gv[L];
        bool bad = false;
        {
            double wp = 0.0, gg = 0.0;
            if (my && s > 0) {
                wp = (double)fprev * vq / vp; // F(s-1) p(s-2) / p(s-1)
                gg = vh / vp;                 // h(s-1) / p(s-1)
                if (!tk_finite(wp) || !tk_finite(gg)) {
                    // The maps overflowed, or the line fails before this segment (which the segment holding
                    // the failure reports): the state one unknown at a time, as MOHID computes it.
                    const TD e0 = __ldg(E + io);
                    wp = n > 1 ? (double)__ldg(F + io) / (double)e0 : 0.0;
                    gg = (double)__ldg(R + io) / (double)e0;
                    for (int m = 1; m < s; ++m) {
                        const I o = io + (I)m * si;
                        const double d = (double)__ldg(D + o), den = fma(-d, wp, (double)__ldg(E + o));
                        wp = (double)__ldg(F + o) / den;
                        gg = fma(-d, gg, (double)__ldg(R + o)) / den;
                    }
                }
            }
#pragma unroll
            for (int k = 0; k < L; ++k) {
                const int m = s + k;
                if (k >= my) { // past the segment: x passes through unchanged (x = 0 - (-1) x)
                    wpv[k] = -1.0, gv[k] = 0.0;
                    continue;
                }
                tk_step(m, n, (double)dv[k], (double)ev[k], (double)fv[k], (double)rv[k], wp, gg, bad);
                if (m == n - 1)
                    wp = 0.0; // x(n-1) = G(n-1): the back substitution starts from a zero beyond the line
                wpv[k] = wp, gv[k] = gg;
            }
        }

        // D. x(s) = al x(s + len) + be over the segment, then a scan from the line's end: (al, be) of
        // segments q..P-1, whose be is x(s) (the answer past the line being zero).
        double al = 1.0, be = 0.0;
#pragma unroll
        for (int k = L - 1; k >= 0; --k) {
            be = fma(-wpv[k], be, gv[k]);
            al = -wpv[k] * al;
        }
        // Composing these maps is as accurate as substituting one unknown at a time while they do not
        // grow (|alpha| <= 1: every W of a diagonally dominant line is below 1); growing maps compute the
        // edge answer as a difference of large terms (seen: 1e240 for an answer of 1), so then the group
        // substitutes segment after segment instead.
        const bool grows = !(fabs(al) <= 1.0);
        for (int d = 1; d < SW; d <<= 1) {
            const double oa = __shfl_down_sync(0xffffffffu, al, d * qs), ob = __shfl_down_sync(0xffffffffu, be, d * qs);
            if (qi + d < SW) {
                be = fma(al, ob, be);
                al *= oa;
            }
        }
        bool detour = __any_sync(0xffffffffu, grows | !tk_finite(al) | !tk_finite(be));
        // The answer at the first unknown of the next warp's segments: the later warps' maps applied
        // from the line's end.
        double next = 0.0;
        if (xw) {
            if (qi == 0) {
                cells[wg * LW + t].al = al;
                cells[wg * LW + t].be = be;
            }
            if (lane == 0)
                grew[wg] = detour;
            ts_group_sync(gib, WL);
            detour = false;
            for (int w = 0; w < WL; ++w)
                detour |= grew[w] != 0;
            for (int w = WL - 1; w > wg; --w)
                next = fma(cells[w * LW + t].al, next, cells[w * LW + t].be);
        }
        double after = __shfl_down_sync(0xffffffffu, fma(al, next, be), qs); // x at the next segment's first
        if (qi == SW - 1)
            after = next;

        // E. Back substitution from the edge answer, each answer rounded to TX as MOHID's are.
        TX xs[L];
        TX mx = TX(0);
        auto substitute = [&](TX x) {
#pragma unroll
            for (int k = L - 1; k >= 0; --k) {
                x = (TX)fma(-wpv[k], (double)x, gv[k]);
                mx = tk_max(mx, tk_abs(x));
                xs[k] = x;
            }
            return x;
        };
        if (!detour) {
            substitute((TX)after);
        } else {
            // Segment after segment from the line's end, each from the answer of the one after it: within
            // a warp through shuffles, from warp to warp through shared memory.
            const int first_lane = QF ? t * SW : t; // lane of the line's first segment in the warp
            for (int w = WL - 1; w >= 0; --w) {
                if (wg == w) {
                    TX x = w == WL - 1 ? TX(0) : (TX)handed[t];
                    __syncwarp(); // every lane has read handed[t] before lane qi = 0 overwrites it
                    for (int j = SW - 1; j >= 0; --j) {
                        const TX first = qi == j ? substitute(x) : TX(0);
                        x = __shfl_sync(0xffffffffu, first, first_lane + j * qs);
                    }
                    if (xw && qi == 0)
                        handed[t] = (double)x;
                }
                if (xw)
                    ts_group_sync(gib, WL);
            }
        }
        bad |= !tk_finite_x(mx);
        // Whether the line failed in any of its segments: over the line's lanes of this warp, then over
        // its warps. A failing line writes none of its answers.
        const unsigned ballot = __ballot_sync(0xffffffffu, bad && active);
        unsigned mine = 0;
        for (int j = 0; j < SW; ++j)
            mine |= 1u << (QF ? t * SW + j : t + j * LW);
        bool line_bad = (ballot & mine) != 0;
        if (xw) {
            if (qi == 0)
                cells[wg * LW + t].bad = line_bad;
            ts_group_sync(gib, WL);
            for (int w = 0; w < WL; ++w)
                line_bad |= cells[w * LW + t].bad != 0;
        }
        if (bad && active)
            atomicMin(a.err, (unsigned long long)l);
        if (line_bad && active && qi == 0 && wg == 0 && a.nfail)
            atomicAdd(a.nfail, 1ull);
#pragma unroll
        for (int k = 0; k < L; ++k)
            if (k < my && (COOP || !line_bad)) {
                if (COOP)
                    stash[((size_t)it * LW + t) * n + s + k] = xs[k];
                else
                    X[oo + (I)(s + k) * so] = xs[k];
            }
    }
    if (!COOP) {
        tk_finish(a);
        return;
    }
    cooperative_groups::this_grid().sync();
    const unsigned long long verdict = *(volatile unsigned long long *)a.err;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *a.mirror = verdict;
        *a.next_err = ULLONG_MAX;
    }
    if (verdict != ULLONG_MAX)
        return;
    it = 0;
    for (int64_t grp = slot; grp < ngroups; grp += nslots, ++it) {
        const int64_t li0 = grp * LW;
        if (t >= (int)min((int64_t)LW, a.l_count - li0))
            continue;
        const int64_t l = a.l_begin + li0 + t, l1 = l % a.n1, l2 = l / a.n1;
        const I oo = (I)(a.out.off + l1 * a.out.s1 + l2 * a.out.s2);
#pragma unroll
        for (int k = 0; k < L; ++k)
            if (k < len)
                X[oo + (I)(s + k) * so] = stash[((size_t)it * LW + t) * n + s + k];
    }
}

// Shared memory of one block (W/G when on chip, plus the stage ring).
template <class TL, class TD>
inline size_t tk_smem_bytes(int64_t n, bool contig, bool wgs, int ns)
{
    // y/z lines stage their inputs in registers: no ring.
    return (wgs ? tk_wg_bytes(n) : 0) + (contig ? (size_t)ns * tk_stage_bytes<TL, TD>() : 0);
}

// True when W and G of a line of n unknowns do not stay in shared memory: the caller then gives a.scratch
// (2 * n * l_count doubles).
inline bool tk_needs_scratch(int64_t n) { return tk_wg_bytes(n) > (size_t)TK_WG_SHARED_MAX; }

// How a call is launched. split: ts_line, segments of at most L unknowns laid out as geom says;
// otherwise tk_line, one warp per block.
struct tk_plan {
    bool contig, wgs, coop, i32, split;
    int ns;
    ts_geom geom;
    size_t smem;
    unsigned blocks, threads;
};

// Which kernel family: TRIDI_CUDA_KERNEL=line or split forces one (to compare them, and so the tests can
// run both), split:P also the lanes per x line of up to 256 unknowns (a power of two up to 32; ignored
// where a lane would hold more than TS_L unknowns). Otherwise (ts_wins) split lines only where they
// measured faster. The context reads the variable once, at tridi_create (src/tuning.c).
struct tk_choice {
    int family; // 0 auto, 1 line, 2 split
    int lanes;  // forced lanes per split line; 0: the planner's
};

// The split shape for lines of n unknowns, at most TS_L per lane; false where a line would need more than
// TS_WL_MAX warps.
//  - x lines of up to 32 * TS_L unknowns: one warp, P lanes per line (a power of two). Longer: 32 lanes per
//    warp and as many warps as the line needs.
//  - y/z lines: 8 lines per warp (a run of 8 float is one 32-byte sector) of SW = 4 segments each, and as
//    many warps as the line needs (fewer lines per warp where that passes TS_WL_MAX); short lines fit in
//    one warp of 32 / P lines.
inline bool ts_shape(int64_t n, bool contig, int forced_lanes, ts_geom *g)
{
    auto ceil_div = [](int64_t x, int64_t y) { return (x + y - 1) / y; };
    const int64_t need = ceil_div(n, TS_L); // segments
    int sw = 1;
    while (sw < need && sw < 32)
        sw *= 2;
    if (contig && need <= 32) {
        if (forced_lanes && ceil_div(n, forced_lanes) <= TS_L)
            sw = forced_lanes;
    } else if (!contig) {
        sw = std::min(sw, 4);
    }
    int64_t wl = ceil_div(need, sw);
    while (wl > TS_WL_MAX && sw < 32)
        sw *= 2, wl = ceil_div(need, sw);
    if (wl > TS_WL_MAX)
        return false;
    g->SW = sw, g->WL = (int)wl, g->LW = 32 / sw, g->qfast = contig;
    return true;
}

// Where split lines beat one thread per line (see docs/decisions/002): lines too long for W/G in shared
// memory (tk_line then moves 32 B/cell more through a global scratch): every such x line, and y/z lines
// of up to 512 unknowns (8 lines per warp, 32-byte runs: 1.1-1.2x faster). Longer y/z lines get 4 lines
// per warp (16-byte runs) and measured slower than tk_line. Shorter lines stay on tk_line, which keeps
// MOHID's arithmetic bit for bit (split answers differ within rounding): split x lines measured as fast on
// 140x140x56 and 1.5x faster on 70x70x28 and 140x140x28, whose few lines leave tk_line under one warp per
// SM; split y/z lines of those grids from 1.3x faster (y, 70x70x28) to 1.8x slower (z, 140x140x56).
// TRIDI_CUDA_KERNEL=split gives the split kernel everywhere.
inline bool ts_wins(bool contig, int64_t n)
{
    return tk_needs_scratch(n) && (contig || n <= 4 * TS_L * TS_WL_MAX);
}

template <class TL, class TD, class TX>
void *ts_kernel_of(const tk_plan &p)
{
    if (!p.geom.qfast)
        return p.coop ? (void *)ts_line<TL, TD, TX, true, true, false> : (void *)ts_line<TL, TD, TX, false, true, false>;
    if (p.geom.WL > 1)
        return p.coop ? (void *)ts_line<TL, TD, TX, true, true, true> : (void *)ts_line<TL, TD, TX, false, true, true>;
    return p.coop ? (void *)ts_line<TL, TD, TX, true, false, true> : (void *)ts_line<TL, TD, TX, false, false, true>;
}

template <class TL, class TD, class TX, class I, bool CONTIG>
void *tk_kernel_of_c(const tk_plan &p)
{
    if (!p.wgs)
        return (void *)tk_line<TL, TD, TX, I, CONTIG, false, false>;
    return p.coop ? (void *)tk_line<TL, TD, TX, I, CONTIG, true, true> : (void *)tk_line<TL, TD, TX, I, CONTIG, true, false>;
}

template <class TL, class TD, class TX>
void *tk_kernel_of(const tk_plan &p)
{
    if (p.split)
        return ts_kernel_of<TL, TD, TX>(p);
    if (p.i32)
        return p.contig ? tk_kernel_of_c<TL, TD, TX, int32_t, true>(p) : tk_kernel_of_c<TL, TD, TX, int32_t, false>(p);
    return p.contig ? tk_kernel_of_c<TL, TD, TX, int64_t, true>(p) : tk_kernel_of_c<TL, TD, TX, int64_t, false>(p);
}

// The largest element offset a launch touches through a view (first line axis up to n1 - 1).
inline int64_t tk_max_offset(const tk_view &v, const tk_args &a)
{
    const int64_t l2 = a.l_count ? (a.l_begin + a.l_count - 1) / a.n1 : 0;
    return v.off + (a.n1 - 1) * v.s1 + l2 * v.s2 + (a.n - 1) * v.sm;
}

// Per device: SM count and, per kernel variant, the opt-in to the whole shared memory. Kept once per
// process; a small table because a process drives few devices and few variants.
struct tk_device_cache {
    static constexpr int MAXD = 64, MAXK = 160;
    std::mutex mu;
    int sms[MAXD] = {};
    size_t smem_optin[MAXD] = {};
    const void *opted[MAXD][MAXK] = {};
    int nopted[MAXD] = {};
    // Blocks per SM of (kernel, dynamic shared memory << 11 | threads) on each device, as the occupancy
    // calculator says.
    std::unordered_map<const void *, std::unordered_map<size_t, int>> per_sm[MAXD];
};

inline tk_device_cache &tk_cache()
{
    static tk_device_cache c;
    return c;
}

// max_shared: the kernel prefers shared memory to L1 (the one-wave variants and tk_line, whose W/G fill it);
// otherwise 32 KiB of shared memory (split lines that run in several waves need a few KiB per block for
// the exchange between warps, and read x lines through L1; the default let the driver choose 8 KiB, one
// block of 9 warps per SM).
constexpr int TS_CARVEOUT_PERCENT = 14; // of 228 KiB: the 32 KiB configuration
inline cudaError_t tk_prepare(const void *kernel, int *sms, size_t *smem_optin, bool max_shared = true)
{
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    tk_device_cache &c = tk_cache();
    std::lock_guard<std::mutex> lock(c.mu);
    const int d = dev & (tk_device_cache::MAXD - 1);
    if (!c.sms[d]) {
        int v = 0, o = 0;
        if ((e = cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
            return e;
        if ((e = cudaDeviceGetAttribute(&o, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess)
            return e;
        c.sms[d] = v;
        c.smem_optin[d] = (size_t)o;
    }
    *sms = c.sms[d];
    *smem_optin = c.smem_optin[d];
    for (int i = 0; i < c.nopted[d]; ++i)
        if (c.opted[d][i] == kernel)
            return cudaSuccess;
    if ((e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)c.smem_optin[d])) != cudaSuccess)
        return e;
    // The occupancy calculator and the cooperative launch's check must see the same L1/shared split.
    if ((e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  max_shared ? (int)cudaSharedmemCarveoutMaxShared : TS_CARVEOUT_PERCENT)) !=
        cudaSuccess)
        return e;
    if (c.nopted[d] < tk_device_cache::MAXK)
        c.opted[d][c.nopted[d]++] = kernel;
    return cudaSuccess;
}

inline cudaError_t tk_occupancy(const void *kernel, size_t smem, int *per_sm, int threads = TK_T)
{
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    tk_device_cache &c = tk_cache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto &m = c.per_sm[dev & (tk_device_cache::MAXD - 1)][kernel];
    const size_t key = smem << 11 | (size_t)threads;
    auto it = m.find(key);
    if (it != m.end()) {
        *per_sm = it->second;
        return cudaSuccess;
    }
    if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernel, threads, smem)) == cudaSuccess)
        m[key] = *per_sm;
    return e;
}

// Chooses the variant for a.l_count lines of a.n unknowns. want_coop: the caller wants the guarded
// one-wave variant if every line fits on the GPU at once (*plan.coop says whether it does). choice: the
// context's TRIDI_CUDA_KERNEL (the default is the planner's rule).
template <class TL, class TD, class TX>
cudaError_t tk_make_plan(const tk_args &a, bool contiguous, bool want_coop, tk_plan *plan,
                         const tk_choice &choice = tk_choice{0, 0})
{
    tk_plan p{};
    p.contig = contiguous && a.in.sm == 1 && a.out.sm == 1;
    // Headroom: a stage may form the offsets of a few unknowns past the line end (it does not use them).
    p.i32 = tk_max_offset(a.in, a) < INT32_MAX - 4 * TK_K && tk_max_offset(a.out, a) < INT32_MAX - 4 * TK_K;
    p.wgs = !tk_needs_scratch(a.n);
    p.blocks = (unsigned)((a.l_count + TK_T - 1) / TK_T);
    p.ns = TK_STAGES_MAX;
    p.threads = TK_T;
    const int family = choice.family;
    if ((family == 2 || (family == 0 && ts_wins(p.contig, a.n))) && p.i32 && a.n > 0 &&
        ts_shape(a.n, p.contig, choice.lanes, &p.geom)) {
        p.split = true;
        p.wgs = true; // no scratch
        const ts_geom &g = p.geom;
        const int gpb = std::max(1, TS_BLOCK / 32 / g.WL); // groups of WL warps per block
        p.threads = (unsigned)(32 * g.WL * gpb);
        const int64_t groups = (a.l_count + g.LW - 1) / g.LW, need = (groups + gpb - 1) / gpb;
        int sms = 0;
        size_t optin = 0;
        cudaError_t e;
        if (want_coop) {
            // One wave: each group keeps the answers of its lines in shared memory until the grid barrier;
            // as many blocks per SM as registers and that memory allow.
            tk_plan q = p;
            q.coop = true;
            const void *k = tk_kernel_of<TL, TD, TX>(q);
            if ((e = tk_prepare(k, &sms, &optin)) != cudaSuccess)
                return e;
            for (int want = 16; want >= 1 && !p.coop; want /= 2) {
                const int64_t gs = std::min<int64_t>(need, (int64_t)want * sms);
                const int64_t per_group = (groups + gs * gpb - 1) / (gs * gpb);
                q.smem = ts_smem_bytes<TX>(a.n, g, gpb, per_group);
                int per_sm = 0;
                if (q.smem > optin)
                    continue;
                if ((e = tk_occupancy(k, q.smem, &per_sm, (int)p.threads)) != cudaSuccess)
                    return e;
                if ((int64_t)per_sm * sms >= gs) {
                    q.blocks = (unsigned)gs;
                    p = q;
                }
            }
        }
        if (!p.coop) {
            p.blocks = (unsigned)need;
            p.smem = ts_smem_bytes<TX>(a.n, g, gpb, 0);
            if ((e = tk_prepare(tk_kernel_of<TL, TD, TX>(p), &sms, &optin, false)) != cudaSuccess)
                return e;
        }
        *plan = p;
        return cudaSuccess;
    }
    auto bytes = [&](int ns) { return tk_smem_bytes<TL, TD>(a.n, p.contig, p.wgs, ns); };
    // Blocks per SM of a variant; 0 when its shared memory is more than the device allows.
    int sms = 0;
    auto fits = [&](const tk_plan &q, int *per_sm) {
        size_t optin = 0;
        const void *k = tk_kernel_of<TL, TD, TX>(q);
        cudaError_t e = tk_prepare(k, &sms, &optin);
        *per_sm = 0;
        if (e != cudaSuccess || q.smem > optin)
            return e;
        return tk_occupancy(k, q.smem, per_sm);
    };
    cudaError_t e;
    // y/z lines have no ring: their stage count changes nothing, so one variant is asked about.
    const int ns_min = p.contig ? 2 : TK_STAGES_MAX;
    if (want_coop && p.wgs) {
        // The guarded one-wave variant, with fewer stages if that is what lets every line be resident.
        for (int ns = TK_STAGES_MAX; ns >= ns_min && !p.coop; --ns) {
            tk_plan q = p;
            q.ns = ns;
            q.smem = bytes(ns);
            q.coop = true;
            int per_sm = 0;
            if ((e = fits(q, &per_sm)) != cudaSuccess)
                return e;
            if ((int64_t)per_sm * sms >= (int64_t)p.blocks)
                p = q;
        }
    }
    if (!p.coop && p.wgs) {
        // Several waves: as many lines per SM as two stages allow (W/G dominate the shared memory and the
        // SM's few warps are what bounds the speed), then as many stages as keep that occupancy.
        int best = 0;
        for (int ns = ns_min; ns <= TK_STAGES_MAX; ++ns) {
            tk_plan q = p;
            q.ns = ns;
            q.smem = bytes(ns);
            int per_sm = 0;
            if ((e = fits(q, &per_sm)) != cudaSuccess)
                return e;
            if (ns == ns_min)
                best = per_sm;
            if (per_sm >= best && per_sm > 0)
                p.ns = ns;
        }
    }
    if (!p.coop)
        p.smem = bytes(p.ns);
    size_t optin = 0;
    e = tk_prepare(tk_kernel_of<TL, TD, TX>(p), &sms, &optin);
    if (e == cudaSuccess && p.smem > optin)
        e = cudaErrorInvalidConfiguration;
    *plan = p;
    return e;
}

template <class TL, class TD, class TX>
cudaError_t tk_run(const tk_args &a, const tk_plan &p, cudaStream_t stream)
{
    if (p.blocks == 0)
        return cudaSuccess;
    void *k = tk_kernel_of<TL, TD, TX>(p);
    int ns = p.ns;
    ts_geom geom = p.geom;
    void *params[] = {(void *)&a, p.split ? (void *)&geom : (void *)&ns}; // the kernels' second parameter
    if (p.coop)
        return cudaLaunchCooperativeKernel(k, dim3(p.blocks), dim3(p.threads), params, p.smem, stream);
    return cudaLaunchKernel(k, dim3(p.blocks), dim3(p.threads), params, p.smem, stream);
}

// Plain (not cooperative) solve of a.l_count lines into a.X through a.out (a.scratch set by the caller
// when tk_needs_scratch). contiguous: unknowns of a line adjacent in the inputs and the output.
template <class TL, class TD, class TX>
cudaError_t tk_launch(const tk_args &a, bool contiguous, cudaStream_t stream,
                      const tk_choice &choice = tk_choice{0, 0})
{
    tk_plan p;
    cudaError_t e = tk_make_plan<TL, TD, TX>(a, contiguous, false, &p, choice);
    return e == cudaSuccess ? tk_run<TL, TD, TX>(a, p, stream) : e;
}

// Copies the box from the compact buffer into the caller's x only when no line of the solve failed, so a
// failing solve leaves x as it was without a round trip to the host. Rows of `len` contiguous cells:
// row = r + R * l2 starts at src row*len and at dst off + r*rs + l2*s2. One thread also hands the
// verdict to the host through mapped pinned memory (no copy in the stream) and re-arms the error slot
// of the context's next call, which is ordered after this one.
// A block is blockDim.y rows of blockDim.x threads; a thread finds its row once (instead of two divisions
// per cell) and copies TK_COMMIT_BYTES of it, all loads before the stores, so that enough bytes are in
// flight: measured against one cell per thread, 16 and 32 bytes per thread (see docs/decisions/005).
constexpr int TK_COMMIT_BYTES = 64;
template <class TX, class I>
__global__ void __launch_bounds__(256) tk_commit(const TX *__restrict__ src, TX *__restrict__ dst, I len, I R,
                                                 I rows, int64_t off, int64_t rs, int64_t s2,
                                                 const unsigned long long *err, unsigned long long *mirror,
                                                 unsigned long long *next_err)
{
    const unsigned long long verdict = *err;
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
        *mirror = verdict;
        *next_err = ULLONG_MAX;
    }
    if (verdict != ULLONG_MAX)
        return;
    constexpr int V = TK_COMMIT_BYTES / sizeof(TX);
    const I tx = (I)blockDim.x, span = tx * V;
    for (I row = (I)blockIdx.y * blockDim.y + threadIdx.y; row < rows; row += (I)gridDim.y * blockDim.y) {
        const I l2 = row / R, r = row - l2 * R;
        const TX *s = src + (int64_t)row * len;
        TX *d = dst + off + (int64_t)r * rs + (int64_t)l2 * s2;
        for (I q0 = (I)blockIdx.x * span + threadIdx.x; q0 < len; q0 += (I)gridDim.x * span) {
            TX v[V];
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (q0 + k * tx < len)
                    v[k] = s[q0 + k * tx];
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (q0 + k * tx < len)
                    d[q0 + k * tx] = v[k];
        }
    }
}

// Why a line failed: the first unknown that breaks, scanning as the CPU backend does (forward sweep
// first, then the answer's rounding in back-substitution order), with the one Thomas core's steps and
// failure kinds (src/thomas_core.h). Runs on the host (host-array mode) or in a one-thread kernel (device
// mode); W and G hold n doubles each.
using tk_fail = tridi_thomas_fail;

template <class TL, class TD, class TX>
__host__ __device__ void tk_locate(const TL *D, const TD *E, const TL *F, const TL *R, int64_t s, int64_t n,
                                   double *W, double *G, tk_fail *out)
{
    double w = 0.0, g = 0.0;
    out->m = 0;
    out->kind = TRIDI_FAIL_NONE;
    for (int64_t m = 0; m < n; ++m) {
        const double d = m ? (double)D[m * s] : 0.0, e = (double)E[m * s];
        const double f = m < n - 1 ? (double)F[m * s] : 0.0, r = (double)R[m * s];
        const int k = tridi_thomas_forward(d, e, f, r, m == n - 1, &w, &g);
        if (k) {
            out->m = m;
            out->kind = k;
            return;
        }
        W[m] = w;
        G[m] = g;
    }
    double x = 0.0;
    for (int64_t m = n - 1; m >= 0; --m) {
        x = tridi_thomas_back(W[m], G[m], x, m == n - 1, sizeof(TX) == 8);
        if (!tridi_thomas_finite(x)) {
            out->m = m;
            out->kind = TRIDI_FAIL_ANSWER_OVERFLOW;
            return;
        }
    }
}

template <class TL, class TD, class TX>
__global__ void tk_locate_kernel(const TL *D, const TD *E, const TL *F, const TL *R, int64_t s, int64_t n,
                                 double *WG, tk_fail *out)
{
    tk_locate<TL, TD, TX>(D, E, F, R, s, n, WG, WG + n, out);
}

} // namespace

#endif
