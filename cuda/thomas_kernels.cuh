// Thomas kernels of the CUDA backend: one tridiagonal system per thread, MOHID's recurrence with the
// pivot arithmetic in double and every answer rounded to its storage type before it feeds the next one.
// Shared by cuda/cuda_backend.cu and the GPU benchmark (which times the bare kernel against the call).
#ifndef TRIDI_THOMAS_KERNELS_CUH
#define TRIDI_THOMAS_KERNELS_CUH

#include <cuda_pipeline.h>

#include <cfloat>
#include <climits>
#include <cstdint>

// Where line (l1, l2) of a launch starts and how its unknowns are spaced, in elements.
struct tk_view {
    int64_t off, s1, s2, sm;
};

struct tk_args {
    const void *D, *E, *F, *R; // lower, diag, upper, rhs (MOHID D, E, F, Ti)
    void *X;                   // answer
    tk_view in, out;           // the four inputs share one view
    int64_t n, n1;             // unknowns per line, lines along the first line axis
    int64_t l_begin, l_count;  // lines solved by this launch (a slab of the problem's line order)
    double *scratch;           // W and G of long lines (2 * n * l_count doubles); NULL: shared memory
    unsigned long long *err;   // lowest failing line (atomicMin); ULLONG_MAX: none
};

// W and G of a block live in shared memory up to this many bytes (two blocks still fit on an SM);
// longer lines keep them in a global scratch.
constexpr int TK_WG_SHARED_MAX = 112 * 1024;
constexpr int TK_LINES = 32; // lines (threads) per block
constexpr int TK_CHUNK = 16; // unknowns per staged tile

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

// One system per thread, loading straight from global memory: for y and z sweeps (neighbouring lines
// neighbouring in memory) thread t takes line l_begin + block*T + t, so a warp reads 32 consecutive
// cells of each array at every unknown. Measured faster than the tiled kernel for such lines up to 128
// unknowns (larger blocks, one wave on the flow-channel grids) and with the global W/G scratch.
template <class TL, class TD, class TX>
__global__ void tk_strided(const tk_args a)
{
    extern __shared__ double tk_smem[];
    const int t = threadIdx.x, T = blockDim.x;
    const int64_t li = (int64_t)blockIdx.x * T + t;
    if (li >= a.l_count)
        return;
    const int64_t l = a.l_begin + li, l1 = l % a.n1, l2 = l / a.n1, n = a.n;
    const int64_t io = a.in.off + l1 * a.in.s1 + l2 * a.in.s2, s = a.in.sm;
    const TL *D = (const TL *)a.D + io, *F = (const TL *)a.F + io, *R = (const TL *)a.R + io;
    const TD *E = (const TD *)a.E + io;
    TX *X = (TX *)a.X + a.out.off + l1 * a.out.s1 + l2 * a.out.s2;
    const int64_t so = a.out.sm;
    double *W, *G;
    int64_t ws;
    if (a.scratch) {
        W = a.scratch + li;
        G = W + n * a.l_count;
        ws = a.l_count;
    } else {
        W = tk_smem + t;
        G = tk_smem + n * T + t;
        ws = T;
    }
    double e = (double)E[0];
    double w = n > 1 ? -(double)F[0] / e : 0.0, g = (double)R[0] / e;
    bool bad = !tk_finite(w) | !tk_finite(g) | !tk_finite(e);
    W[0] = w;
    G[0] = g;
    // Four unknowns' inputs are loaded before their recurrence steps so the loads of a thread overlap
    // each other instead of waiting behind the division chain.
    int64_t m = 1;
    for (; m + 4 <= n - 1; m += 4) {
        double d[4], ee[4], f[4], r[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            d[u] = (double)D[(m + u) * s];
            ee[u] = (double)E[(m + u) * s];
            f[u] = (double)F[(m + u) * s];
            r[u] = (double)R[(m + u) * s];
        }
#pragma unroll
        for (int u = 0; u < 4; ++u) {
            const double den = fma(d[u], w, ee[u]), inv = tk_rcp(den);
            w = -f[u] * inv;
            g = fma(-d[u], g, r[u]) * inv;
            bad |= !tk_finite(w) | !tk_finite(g) | !tk_finite(d[u]) | !tk_finite(den);
            W[(m + u) * ws] = w;
            G[(m + u) * ws] = g;
        }
    }
    for (; m < n; ++m) {
        const double d = (double)D[m * s], den = fma(d, w, (double)E[m * s]);
        if (m < n - 1) {
            const double inv = tk_rcp(den);
            w = -(double)F[m * s] * inv;
            g = fma(-d, g, (double)R[m * s]) * inv;
        } else {
            g = fma(-d, g, (double)R[m * s]) / den;
        }
        bad |= !tk_finite(w) | !tk_finite(g) | !tk_finite(d) | !tk_finite(den);
        W[m * ws] = w;
        G[m * ws] = g;
    }
    if (!bad) {
        TX x = (TX)g;
        bad = !tk_finite((double)x);
        X[(n - 1) * so] = x;
        for (int64_t k = n - 2; k >= 0; --k) {
            x = (TX)(W[k * ws] * (double)x + G[k * ws]);
            bad |= !tk_finite((double)x);
            X[k * so] = x;
        }
    }
    if (bad)
        atomicMin(a.err, (unsigned long long)l);
}

// One system per thread, a block of TK_LINES lines. The inputs go through shared-memory tiles of
// TK_CHUNK unknowns, loaded with cp.async one tile ahead of the recurrence: an SM holds few lines when
// W and G stay on chip, so each line's loads must be in flight while its division chain runs. The load
// pattern makes every warp access contiguous: CONTIG (x sweeps, unknowns adjacent) reads a run of one
// line; otherwise (neighbouring lines adjacent) reads one unknown of 32 neighbouring lines. The answer
// leaves through a tile the same way.
template <class TL, class TD, class TX, bool CONTIG>
__global__ void __launch_bounds__(TK_LINES) tk_tiled(const tk_args a)
{
    constexpr int T = TK_LINES, C = TK_CHUNK, P = C + 1; // P: padding spreads a line's row over banks
    extern __shared__ double tk_smem[];
    __shared__ int64_t in_off[T], out_off[T];
    __shared__ TD tE[2][T * P];
    __shared__ TL tD[2][T * P], tF[2][T * P], tR[2][T * P];
    __shared__ TX tX[T * P];
    const int t = threadIdx.x;
    const int64_t n = a.n, li0 = (int64_t)blockIdx.x * T;
    const int nl = (int)min((int64_t)T, a.l_count - li0);
    const bool active = t < nl;
    if (active) {
        const int64_t l = a.l_begin + li0 + t, l1 = l % a.n1, l2 = l / a.n1;
        in_off[t] = a.in.off + l1 * a.in.s1 + l2 * a.in.s2;
        out_off[t] = a.out.off + l1 * a.out.s1 + l2 * a.out.s2;
    }
    __syncthreads();
    double *W, *G;
    int64_t ws;
    if (a.scratch) {
        W = a.scratch + li0 + t;
        G = W + n * a.l_count;
        ws = a.l_count;
    } else {
        W = tk_smem + t;
        G = tk_smem + n * T + t;
        ws = T;
    }
    const TL *D = (const TL *)a.D, *F = (const TL *)a.F, *R = (const TL *)a.R;
    const TD *E = (const TD *)a.E;
    TX *X = (TX *)a.X;
    const int64_t si = a.in.sm, so = a.out.sm, nch = (n + C - 1) / C;
    auto issue = [&](int64_t c, int b) {
        const int64_t c0 = c * C;
        const int cc = (int)min((int64_t)C, n - c0);
        for (int q = t; q < T * C; q += T) {
            const int lt = CONTIG ? q / C : q % T, mm = CONTIG ? q % C : q / T;
            if (lt < nl && mm < cc) {
                const int64_t m = c0 + mm, o = in_off[lt] + m * si;
                __pipeline_memcpy_async(&tE[b][lt * P + mm], E + o, sizeof(TD));
                __pipeline_memcpy_async(&tR[b][lt * P + mm], R + o, sizeof(TL));
                if (m > 0) // lower is never read at the first unknown, upper never at the last
                    __pipeline_memcpy_async(&tD[b][lt * P + mm], D + o, sizeof(TL));
                if (m < n - 1)
                    __pipeline_memcpy_async(&tF[b][lt * P + mm], F + o, sizeof(TL));
            }
        }
        __pipeline_commit();
    };
    double w = 0.0, g = 0.0;
    bool bad = false;
    issue(0, 0);
    for (int64_t c = 0; c < nch; ++c) {
        if (c + 1 < nch) {
            issue(c + 1, (int)((c + 1) & 1));
            __pipeline_wait_prior(1);
        } else {
            __pipeline_wait_prior(0);
        }
        __syncthreads();
        const int b = (int)(c & 1);
        const int64_t c0 = c * C;
        const int cc = (int)min((int64_t)C, n - c0);
        if (active) {
            const TD *e_ = tE[b] + t * P;
            const TL *d_ = tD[b] + t * P, *f_ = tF[b] + t * P, *r_ = tR[b] + t * P;
            int mm = 0;
            if (c0 == 0) { // first unknown: no lower
                const double e = (double)e_[0];
                w = n > 1 ? -(double)f_[0] / e : 0.0;
                g = (double)r_[0] / e;
                bad |= !tk_finite(w) | !tk_finite(g) | !tk_finite(e);
                W[0] = w;
                G[0] = g;
                mm = 1;
            }
            // Interior unknowns; unrolled over a full tile so the tile reads are issued ahead of the chain.
            const int interior = (int)min((int64_t)cc, n - 1 - c0);
            if (mm == 0 && interior == C) {
#pragma unroll
                for (int u = 0; u < C; ++u) {
                    const double d = (double)d_[u], den = fma(d, w, (double)e_[u]), inv = tk_rcp(den);
                    w = -(double)f_[u] * inv;
                    g = fma(-d, g, (double)r_[u]) * inv;
                    bad |= !tk_finite(w) | !tk_finite(g) | !tk_finite(d) | !tk_finite(den);
                    W[(c0 + u) * ws] = w;
                    G[(c0 + u) * ws] = g;
                }
                mm = C;
            }
            for (; mm < interior; ++mm) {
                const double d = (double)d_[mm], den = fma(d, w, (double)e_[mm]), inv = tk_rcp(den);
                w = -(double)f_[mm] * inv;
                g = fma(-d, g, (double)r_[mm]) * inv;
                bad |= !tk_finite(w) | !tk_finite(g) | !tk_finite(d) | !tk_finite(den);
                W[(c0 + mm) * ws] = w;
                G[(c0 + mm) * ws] = g;
            }
            if (mm < cc && c0 + mm == n - 1 && n > 1) { // last unknown: no upper, and MOHID divides
                const double d = (double)d_[mm], den = fma(d, w, (double)e_[mm]);
                g = fma(-d, g, (double)r_[mm]) / den;
                bad |= !tk_finite(g) | !tk_finite(d) | !tk_finite(den);
            }
        }
        __syncthreads(); // the next issue overwrites this buffer
    }
    TX x = (TX)0;
    for (int64_t c = nch - 1; c >= 0; --c) {
        const int64_t c0 = c * C;
        const int cc = (int)min((int64_t)C, n - c0);
        if (active) {
            int mm = cc - 1;
            if (c0 + mm == n - 1) {
                x = (TX)g;
                bad |= !tk_finite((double)x);
                tX[t * P + mm] = x;
                --mm;
            }
            if (mm == C - 1) {
#pragma unroll
                for (int u = C - 1; u >= 0; --u) {
                    x = (TX)fma(W[(c0 + u) * ws], (double)x, G[(c0 + u) * ws]);
                    bad |= !tk_finite((double)x);
                    tX[t * P + u] = x;
                }
            } else {
                for (; mm >= 0; --mm) {
                    x = (TX)fma(W[(c0 + mm) * ws], (double)x, G[(c0 + mm) * ws]);
                    bad |= !tk_finite((double)x);
                    tX[t * P + mm] = x;
                }
            }
        }
        __syncthreads();
        for (int q = t; q < T * C; q += T) {
            const int lt = CONTIG ? q / C : q % T, mm = CONTIG ? q % C : q / T;
            if (lt < nl && mm < cc)
                X[out_off[lt] + (c0 + mm) * so] = tX[lt * P + mm];
        }
        __syncthreads();
    }
    if (active && bad)
        atomicMin(a.err, (unsigned long long)(a.l_begin + li0 + t));
}

// True when W and G of a line of n unknowns do not fit in shared memory for a block of TK_LINES lines.
inline bool tk_needs_scratch(int64_t n) { return (size_t)n * 2 * sizeof(double) * TK_LINES > (size_t)TK_WG_SHARED_MAX; }

// Launches the solve for a.l_count lines (a.scratch set by the caller when tk_needs_scratch).
// contiguous: unknowns of a line are adjacent in the inputs and the output (a.in.sm == a.out.sm == 1).
template <class TL, class TD, class TX>
cudaError_t tk_launch(const tk_args &a, bool contiguous, cudaStream_t stream)
{
    // The opt-in to more than 48 KiB of shared memory is per device: remember which devices have it.
    static unsigned long long attrs_set = 0;
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    const unsigned long long bit = 1ull << (dev & 63);
    if (!(__atomic_load_n(&attrs_set, __ATOMIC_RELAXED) & bit)) {
        e = cudaFuncSetAttribute(tk_tiled<TL, TD, TX, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 TK_WG_SHARED_MAX);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(tk_strided<TL, TD, TX>, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(tk_tiled<TL, TD, TX, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     TK_WG_SHARED_MAX);
        if (e != cudaSuccess)
            return e;
        __atomic_fetch_or(&attrs_set, bit, __ATOMIC_RELAXED);
    }
    const size_t per_line = (size_t)a.n * 2 * sizeof(double);
    if (!contiguous && (a.scratch || a.n <= 128)) {
        // Largest block whose W and G fit in 64 KiB: fewer, fuller blocks run the grid in one wave.
        int T = 128;
        while (!a.scratch && T > 32 && per_line * T > 64 * 1024)
            T /= 2;
        tk_strided<TL, TD, TX><<<(unsigned)((a.l_count + T - 1) / T), T, a.scratch ? 0 : per_line * T, stream>>>(a);
        return cudaGetLastError();
    }
    const size_t wg = a.scratch ? 0 : per_line * TK_LINES;
    const unsigned blocks = (unsigned)((a.l_count + TK_LINES - 1) / TK_LINES);
    if (contiguous)
        tk_tiled<TL, TD, TX, true><<<blocks, TK_LINES, wg, stream>>>(a);
    else
        tk_tiled<TL, TD, TX, false><<<blocks, TK_LINES, wg, stream>>>(a);
    return cudaGetLastError();
}

// Copies the box from the compact buffer into the caller's x only when no line of the solve failed, so a
// failing solve leaves x as it was without a round trip to the host. Rows of `len` contiguous cells:
// row = r + R * l2 starts at src row*len and at dst off + r*rs + l2*s2. One thread also hands the
// verdict to the host through mapped pinned memory (no copy in the stream) and re-arms the error slot
// of the context's next call, which is ordered after this one.
template <class TX, class I>
__global__ void tk_commit(const TX *__restrict__ src, TX *__restrict__ dst, I len, I R, I total, int64_t off,
                          int64_t rs, int64_t s2, const unsigned long long *err, unsigned long long *mirror,
                          unsigned long long *next_err)
{
    const unsigned long long verdict = *err;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *mirror = verdict;
        *next_err = ULLONG_MAX;
    }
    if (verdict != ULLONG_MAX)
        return;
    for (I idx = (I)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += (I)gridDim.x * blockDim.x) {
        const I row = idx / len, q = idx - row * len, l2 = row / R, r = row - l2 * R;
        dst[off + (int64_t)r * rs + (int64_t)l2 * s2 + q] = src[idx];
    }
}

// Why a line failed: the first unknown that breaks, scanning as the CPU backend does (forward sweep
// first, then the answer's rounding in back-substitution order). Runs on the host (host-array mode)
// or in a one-thread kernel (device mode); W and G hold n doubles each.
struct tk_fail {
    long long m;
    long long code; // (no padding: the struct is copied back whole) 0 none, 1 non-finite diag, 2 lower, 3 upper, 4 rhs, 5 zero pivot, 6 overflow, 7 answer
};

template <class TL, class TD, class TX>
__host__ __device__ void tk_locate(const TL *D, const TD *E, const TL *F, const TL *R, int64_t s, int64_t n,
                                   double *W, double *G, tk_fail *out)
{
    double w = 0.0, g = 0.0;
    out->code = 0;
    out->m = 0;
    for (int64_t m = 0; m < n; ++m) {
        const double d = m ? (double)D[m * s] : 0.0, e = (double)E[m * s];
        const double f = m < n - 1 ? (double)F[m * s] : 0.0, r = (double)R[m * s];
        const double den = e + d * w;
        const double nw = m < n - 1 ? -f / den : 0.0, ng = (r - d * g) / den;
        out->m = m;
        if (!(fabs(e) <= DBL_MAX)) { out->code = 1; return; }
        if (!(fabs(d) <= DBL_MAX)) { out->code = 2; return; }
        if (!(fabs(f) <= DBL_MAX)) { out->code = 3; return; }
        if (!(fabs(r) <= DBL_MAX)) { out->code = 4; return; }
        if (den == 0.0) { out->code = 5; return; }
        if (!(fabs(nw) <= DBL_MAX) || !(fabs(ng) <= DBL_MAX)) { out->code = 6; return; }
        w = W[m] = nw;
        g = G[m] = ng;
    }
    TX x = (TX)0;
    for (int64_t m = n - 1; m >= 0; --m) {
        x = m == n - 1 ? (TX)G[m] : (TX)(W[m] * (double)x + G[m]);
        if (!(fabs((double)x) <= DBL_MAX)) {
            out->m = m;
            out->code = 7;
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

#endif
