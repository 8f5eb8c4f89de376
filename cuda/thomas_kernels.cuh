// Thomas kernels of the CUDA backend: one tridiagonal system per thread, MOHID's recurrence with the
// pivot arithmetic in double and every answer rounded to its storage type before it feeds the next one.
// Shared by cuda/cuda_backend.cu and the GPU benchmark (which times the bare kernel against the call).
#ifndef TRIDI_THOMAS_KERNELS_CUH
#define TRIDI_THOMAS_KERNELS_CUH

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

// W and G of a block live in shared memory up to this many bytes (two blocks of 32 lines still fit on an
// SM); longer lines use the global scratch.
constexpr int TK_WG_SHARED_MAX = 112 * 1024;
constexpr int TK_LINES = 32; // lines per block when W and G are in shared memory
constexpr int TK_PF = 8;     // unknowns whose inputs are loaded ahead of the recurrence
// Unknowns per staged tile of the contiguous (x) kernel.
constexpr int TK_CHUNK = 32;
constexpr int TK_X_LINES = TK_LINES; // lines per block of the contiguous kernel

__device__ __forceinline__ bool tk_finite(double v) { return fabs(v) <= DBL_MAX; }

// One system per thread for lines whose unknowns are strided (y and z sweeps, or any layout where
// neighbouring lines are neighbouring in memory): thread t takes line l_begin + block*T + t, so a warp
// reads 32 consecutive cells of each array at every unknown.
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
    // The inputs of the next TK_PF unknowns are loaded while the current ones go through the division
    // chain: few lines fit on an SM when W and G stay on chip, so each line must keep loads in flight.
    double cd[TK_PF], ce[TK_PF], cf[TK_PF], cr[TK_PF];
    auto load = [&](int64_t m0, double *d, double *ee, double *f, double *r) {
#pragma unroll
        for (int u = 0; u < TK_PF; ++u) {
            const int64_t m = m0 + u;
            d[u] = m < n ? (double)D[m * s] : 0.0;
            ee[u] = m < n ? (double)E[m * s] : 1.0;
            f[u] = m < n - 1 ? (double)F[m * s] : 0.0;
            r[u] = m < n ? (double)R[m * s] : 0.0;
        }
    };
    load(1, cd, ce, cf, cr);
    for (int64_t m0 = 1; m0 < n; m0 += TK_PF) {
        double nd[TK_PF], ne[TK_PF], nf[TK_PF], nr[TK_PF];
        if (m0 + TK_PF < n)
            load(m0 + TK_PF, nd, ne, nf, nr);
#pragma unroll
        for (int u = 0; u < TK_PF; ++u) {
            const int64_t m = m0 + u;
            if (m < n) {
                const double den = ce[u] + cd[u] * w;
                if (m < n - 1) {
                    const double inv = 1.0 / den;
                    w = -cf[u] * inv;
                    g = (cr[u] - cd[u] * g) * inv;
                } else {
                    g = (cr[u] - cd[u] * g) / den;
                }
                bad |= !tk_finite(w) | !tk_finite(g) | !tk_finite(cd[u]) | !tk_finite(den);
                W[m * ws] = w;
                G[m * ws] = g;
            }
        }
#pragma unroll
        for (int u = 0; u < TK_PF; ++u) {
            cd[u] = nd[u];
            ce[u] = ne[u];
            cf[u] = nf[u];
            cr[u] = nr[u];
        }
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

// Lines with contiguous unknowns (x sweeps): a block of TK_X_LINES lines loads tiles of TK_CHUNK unknowns
// of each array cooperatively (a warp reads 128 contiguous bytes of one line instead of 32 lines' cells
// 4 bytes apart), each thread runs its line's recurrence out of the tile, and the answer goes back
// through a tile the same way.
template <class TL, class TD, class TX>
__global__ void tk_contiguous(const tk_args a)
{
    constexpr int T = TK_X_LINES, C = TK_CHUNK, P = C + 1; // P: padding keeps per-line rows off one bank
    extern __shared__ double tk_smem[];
    const int t = threadIdx.x;
    const int64_t n = a.n;
    __shared__ int64_t in_off[T], out_off[T];
    __shared__ TD tE[T * P];
    __shared__ TL tD[T * P], tF[T * P], tR[T * P];
    __shared__ TX tX[T * P];
    const int64_t li0 = (int64_t)blockIdx.x * T;
    const int nl = (int)min((int64_t)T, a.l_count - li0);
    const bool active = t < nl;
    if (active) {
        const int64_t l = a.l_begin + li0 + t, l1 = l % a.n1, l2 = l / a.n1;
        in_off[t] = a.in.off + l1 * a.in.s1 + l2 * a.in.s2;
        out_off[t] = a.out.off + l1 * a.out.s1 + l2 * a.out.s2;
    }
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
    double w = 0.0, g = 0.0;
    bool bad = false;
    for (int64_t c0 = 0; c0 < n; c0 += C) {
        const int cc = (int)min((int64_t)C, n - c0);
        __syncthreads();
        for (int q = t; q < nl * C; q += T) {
            const int lt = q / C, mm = q % C;
            if (mm < cc) {
                const int64_t m = c0 + mm, o = in_off[lt] + m;
                tE[lt * P + mm] = E[o];
                tR[lt * P + mm] = R[o];
                if (m > 0) // lower is never read at the first unknown, upper never at the last
                    tD[lt * P + mm] = D[o];
                if (m < n - 1)
                    tF[lt * P + mm] = F[o];
            }
        }
        __syncthreads();
        if (active) {
            for (int mm = 0; mm < cc; ++mm) {
                const int64_t m = c0 + mm;
                const double e = (double)tE[t * P + mm], r = (double)tR[t * P + mm];
                if (m == 0) {
                    w = n > 1 ? -(double)tF[t * P] / e : 0.0;
                    g = r / e;
                    bad |= !tk_finite(w) | !tk_finite(g) | !tk_finite(e);
                } else {
                    const double d = (double)tD[t * P + mm], den = e + d * w;
                    if (m < n - 1) {
                        const double inv = 1.0 / den;
                        w = -(double)tF[t * P + mm] * inv;
                        g = (r - d * g) * inv;
                    } else {
                        g = (r - d * g) / den;
                    }
                    bad |= !tk_finite(w) | !tk_finite(g) | !tk_finite(d) | !tk_finite(den);
                }
                W[m * ws] = w;
                G[m * ws] = g;
            }
        }
    }
    TX x = (TX)0;
    const int64_t last_c0 = ((n - 1) / C) * C;
    for (int64_t c0 = last_c0; c0 >= 0; c0 -= C) {
        const int cc = (int)min((int64_t)C, n - c0);
        if (active) {
            for (int mm = cc - 1; mm >= 0; --mm) {
                const int64_t m = c0 + mm;
                x = m == n - 1 ? (TX)g : (TX)(W[m * ws] * (double)x + G[m * ws]);
                bad |= !tk_finite((double)x);
                tX[t * P + mm] = x;
            }
        }
        __syncthreads();
        for (int q = t; q < nl * C; q += T) {
            const int lt = q / C, mm = q % C;
            if (mm < cc)
                X[out_off[lt] + c0 + mm] = tX[lt * P + mm];
        }
        __syncthreads();
    }
    if (active && bad)
        atomicMin(a.err, (unsigned long long)(a.l_begin + li0 + t));
}

// True when W and G of a line of n unknowns do not fit in shared memory for a block of TK_LINES lines.
inline bool tk_needs_scratch(int64_t n) { return (size_t)n * 2 * sizeof(double) * TK_LINES > (size_t)TK_WG_SHARED_MAX; }

// Launches the solve kernel for a.l_count lines (a.scratch set by the caller when tk_needs_scratch).
// contiguous: unknowns of a line are adjacent (a.in.sm == a.out.sm == 1), the x sweep's layout.
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
        e = cudaFuncSetAttribute(tk_strided<TL, TD, TX>, cudaFuncAttributeMaxDynamicSharedMemorySize, TK_WG_SHARED_MAX);
        if (e == cudaSuccess)
            e = cudaFuncSetAttribute(tk_contiguous<TL, TD, TX>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     TK_WG_SHARED_MAX);
        if (e != cudaSuccess)
            return e;
        __atomic_fetch_or(&attrs_set, bit, __ATOMIC_RELAXED);
    }
    const size_t wg = a.scratch ? 0 : (size_t)a.n * 2 * sizeof(double) * TK_LINES;
    if (contiguous) {
        tk_contiguous<TL, TD, TX><<<(unsigned)((a.l_count + TK_X_LINES - 1) / TK_X_LINES), TK_X_LINES, wg, stream>>>(a);
    } else {
        // With W and G in global scratch occupancy is free to be high; on chip, small blocks pack the SM.
        const int T = a.scratch ? 128 : TK_LINES;
        tk_strided<TL, TD, TX><<<(unsigned)((a.l_count + T - 1) / T), T, wg, stream>>>(a);
    }
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
