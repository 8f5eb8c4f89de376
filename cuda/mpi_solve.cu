// Device half of the distributed solve (src/mpi/dsolve.c explains the method): one thread per line
// eliminates its block with the neighbours' boundary unknowns kept symbolic, then substitutes them
// back once the reduced system is solved on the host. Work arrays are [quantity][m][line] so that
// neighbouring threads touch neighbouring doubles.
#include "mpi_internal.h"

#include <cuda_runtime.h>

#include <cfloat>

namespace {

__device__ inline int64_t line_offset(const tridi_problem &p, int64_t l)
{
    int64_t l1 = l % p.n1, l2 = l / p.n1;
    return p.origin + l1 * p.stride[p.a1] + l2 * p.stride[p.a2];
}

// 1/den by the hardware estimate refined with two Newton steps: double precision without the long
// IEEE division on the recurrence's critical path. Zero pivots are tested before (den == 0).
__device__ __forceinline__ double rcp(double den)
{
    double y;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(den));
    double e = fma(-den, y, 1.0);
    y = fma(y, e, y);
    e = fma(-den, y, 1.0);
    return fma(y, e, y);
}

constexpr int AHEAD = 4; // unknowns whose loads are issued before their recurrence steps

template <typename TL, typename TD>
__global__ void forward(tridi_problem p, int first, int last, double *work, double *coef,
                        unsigned long long *fail)
{
    const int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (l >= p.nlines)
        return;
    const int64_t n = p.n, st = p.stride[p.axis], L = p.nlines;
    const int64_t base = line_offset(p, l);
    const TL *lower = static_cast<const TL *>(p.arrays.lower) + base;
    const TD *diag = static_cast<const TD *>(p.arrays.diag) + base;
    const TL *upper = static_cast<const TL *>(p.arrays.upper) + base;
    const TL *rhs = static_cast<const TL *>(p.arrays.rhs) + base;
    double *G = work + l, *W = work + n * L + l, *S = work + 2 * n * L + l;
    double Wp = 0, Gp = 0, Sp = 0;
    for (int64_t m0 = 0; m0 < n; m0 += AHEAD) {
        // The loads of AHEAD unknowns go out together, so they overlap instead of queueing behind
        // the recurrence.
        double a[AHEAD], b[AHEAD], c[AHEAD], r[AHEAD];
#pragma unroll
        for (int u = 0; u < AHEAD; ++u) {
            const int64_t m = m0 + u;
            const bool in = m < n;
            const int64_t o = (in ? m : 0) * st;
            a[u] = in && !(m == 0 && first) ? (double)lower[o] : 0.0;
            b[u] = in ? (double)diag[o] : 1.0;
            c[u] = in && !(m == n - 1 && last) ? (double)upper[o] : 0.0;
            r[u] = in ? (double)rhs[o] : 0.0;
        }
#pragma unroll
        for (int u = 0; u < AHEAD; ++u) {
            const int64_t m = m0 + u;
            if (m >= n)
                break;
            const double den = m == 0 ? b[u] : fma(a[u], Wp, b[u]);
            if (den == 0.0) {
                atomicMin(fail, ((unsigned long long)l << 24) | (m < (1 << 23) ? (unsigned long long)m : 0));
                return;
            }
            const double inv = rcp(den);
            Sp = (m == 0 ? -a[u] : -a[u] * Sp) * inv;
            Gp = (m == 0 ? r[u] : fma(-a[u], Gp, r[u])) * inv;
            Wp = -c[u] * inv;
            if (!isfinite(Wp) || !isfinite(Gp) || !isfinite(Sp)) {
                atomicMin(fail,
                          ((unsigned long long)l << 24) | (1ull << 23) | (m < (1 << 23) ? (unsigned long long)m : 0));
                return;
            }
            G[m * L] = Gp;
            W[m * L] = Wp;
            S[m * L] = Sp;
        }
    }
    // First unknown in terms of x_L and x_R: x_m = P + Q x_R + R x_L, from m = n-1 down.
    double P = Gp, Q = Wp, R = Sp;
    double *cf = coef + 6 * l;
    cf[3] = P;
    cf[4] = Q;
    cf[5] = R;
    for (int64_t m0 = n - 2; m0 >= 0; m0 -= AHEAD) {
        double g[AHEAD], w[AHEAD], sl[AHEAD];
#pragma unroll
        for (int u = 0; u < AHEAD; ++u) {
            const int64_t m = m0 - u;
            const int64_t mm = m >= 0 ? m : 0;
            g[u] = G[mm * L];
            w[u] = W[mm * L];
            sl[u] = S[mm * L];
        }
#pragma unroll
        for (int u = 0; u < AHEAD; ++u) {
            if (m0 - u < 0)
                break;
            P = fma(w[u], P, g[u]);
            Q = w[u] * Q;
            R = fma(w[u], R, sl[u]);
        }
    }
    cf[0] = P;
    cf[1] = Q;
    cf[2] = R;
}

__device__ __forceinline__ bool finite_in(float v) { return fabsf(v) <= FLT_MAX; }
__device__ __forceinline__ bool finite_in(double v) { return fabs(v) <= DBL_MAX; }

// Writes each answer rounded to x's type over the old value, which goes to undo first; a line whose answer
// overflows that type reports its highest failing unknown (the first met going down), as the host does.
template <typename TX>
__global__ void backward(tridi_problem p, const double *work, const double *ends, TX *undo, unsigned long long *fail)
{
    const int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (l >= p.nlines)
        return;
    const int64_t n = p.n, st = p.stride[p.axis], L = p.nlines;
    TX *x = static_cast<TX *>(p.arrays.x) + line_offset(p, l);
    const double *G = work + l, *W = work + n * L + l, *S = work + 2 * n * L + l;
    TX *u = undo + l;
    const double xl = ends[2 * l];
    double next = ends[2 * l + 1];
    bool bad = false;
    for (int64_t m0 = n - 1; m0 >= 0; m0 -= AHEAD) {
        double g[AHEAD], w[AHEAD], sl[AHEAD];
#pragma unroll
        for (int k = 0; k < AHEAD; ++k) {
            const int64_t mm = m0 - k >= 0 ? m0 - k : 0;
            g[k] = G[mm * L];
            w[k] = W[mm * L];
            sl[k] = S[mm * L];
        }
#pragma unroll
        for (int k = 0; k < AHEAD; ++k) {
            const int64_t m = m0 - k;
            if (m < 0)
                break;
            const double v = fma(w[k], next, fma(sl[k], xl, g[k]));
            const TX xv = (TX)v;
            u[m * L] = x[m * st];
            x[m * st] = xv;
            if (!bad && !finite_in(xv)) {
                bad = true;
                atomicMin(fail, ((unsigned long long)l << 24) | (m < (1 << 23) ? (unsigned long long)m : 0));
            }
            next = v;
        }
    }
}

template <typename TX>
__global__ void restore(tridi_problem p, const TX *undo)
{
    const int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (l >= p.nlines)
        return;
    const int64_t n = p.n, st = p.stride[p.axis], L = p.nlines;
    TX *x = static_cast<TX *>(p.arrays.x) + line_offset(p, l);
    for (int64_t m = 0; m < n; ++m)
        x[m * st] = undo[m * L + l];
}

// The banded reduced system of one line (2 unknowns per block holding unknowns: its first and last),
// eliminated without pivoting as on the host (src/mpi/dsolve.c, reduced_solve).
__global__ void reduced(const double *gather, size_t cap, int P, int me, int64_t nlines, double *ends,
                        unsigned long long *fail)
{
    const int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (l >= nlines)
        return;
    const size_t slot = 6 * cap + 1;
    int idx[TRIDI_MPI_MAX_LINE], Q = 0, mine = -1;
    for (int r = 0; r < P; ++r)
        if (reinterpret_cast<const unsigned long long *>(gather)[r * slot + 6 * cap]) {
            if (r == me)
                mine = Q;
            idx[Q++] = r;
        }
    const int N = 2 * Q;
    double band[2 * TRIDI_MPI_MAX_LINE][6];
    for (int r = 0; r < N; ++r)
        for (int c = 0; c < 6; ++c)
            band[r][c] = 0.0;
#define B(row, col) band[row][(col) - (row) + 2]
    for (int q = 0; q < Q; ++q) {
        const double *cf = gather + idx[q] * slot + 6 * l;
        const int rf = 2 * q, rl = 2 * q + 1;
        B(rf, rf) = 1.0;
        B(rl, rl) = 1.0;
        band[rf][5] = cf[0];
        band[rl][5] = cf[3];
        if (q > 0) {
            B(rf, rf - 1) = -cf[2];
            B(rl, rf - 1) = -cf[5];
        }
        if (q < Q - 1) {
            B(rf, rf + 2) = -cf[1];
            B(rl, rf + 2) = -cf[4];
        }
    }
    for (int r = 0; r < N; ++r) {
        const double piv = B(r, r);
        if (piv == 0.0 || !isfinite(piv)) {
            atomicMin(fail, (unsigned long long)l);
            return;
        }
        for (int rr = r + 1; rr <= r + 2 && rr < N; ++rr) {
            const double fac = B(rr, r) / piv;
            for (int c = r; c <= r + 2 && c < N; ++c)
                B(rr, c) -= fac * B(r, c);
            band[rr][5] -= fac * band[r][5];
        }
    }
    for (int r = N - 1; r >= 0; --r) {
        double v = band[r][5];
        for (int c = r + 1; c <= r + 2 && c < N; ++c)
            v -= B(r, c) * band[c][5];
        band[r][5] = v / B(r, r);
    }
#undef B
    ends[2 * l] = mine > 0 ? band[2 * mine - 1][5] : 0.0;
    ends[2 * l + 1] = mine >= 0 && mine < Q - 1 ? band[2 * mine + 2][5] : 0.0;
}

tridi_status launched(const char *what)
{
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return tridi_fail(TRIDI_ERROR_CUDA, "tridi_mpi_solve_device: %s kernel launch failed: %s", what,
                          cudaGetErrorString(e));
    return TRIDI_SUCCESS;
}

} // namespace

extern "C" tridi_status tridi_mpi_cuda_forward(const tridi_problem *p, int first, int last, double *work,
                                               double *coef, unsigned long long *fail, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t e = cudaMemsetAsync(fail, 0xff, sizeof(unsigned long long), s);
    if (e != cudaSuccess)
        return tridi_fail(TRIDI_ERROR_CUDA, "tridi_mpi_solve_device: cudaMemsetAsync: %s", cudaGetErrorString(e));
    const int threads = 128;
    const unsigned blocks = (unsigned)((p->nlines + threads - 1) / threads);
    switch (p->combo) {
    case TRIDI_COMBO_F32: forward<float, float><<<blocks, threads, 0, s>>>(*p, first, last, work, coef, fail); break;
    case TRIDI_COMBO_F64: forward<double, double><<<blocks, threads, 0, s>>>(*p, first, last, work, coef, fail); break;
    case TRIDI_COMBO_MIXED: forward<float, double><<<blocks, threads, 0, s>>>(*p, first, last, work, coef, fail); break;
    }
    return launched("forward");
}

extern "C" tridi_status tridi_mpi_cuda_backward(const tridi_problem *p, const double *work, const double *ends,
                                                void *undo, unsigned long long *fail, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t e = cudaMemsetAsync(fail, 0xff, sizeof(unsigned long long), s);
    if (e != cudaSuccess)
        return tridi_fail(TRIDI_ERROR_CUDA, "tridi_mpi_solve_device: cudaMemsetAsync: %s", cudaGetErrorString(e));
    const int threads = 128;
    const unsigned blocks = (unsigned)((p->nlines + threads - 1) / threads);
    if (p->arrays.x_type == TRIDI_FLOAT64)
        backward<double><<<blocks, threads, 0, s>>>(*p, work, ends, static_cast<double *>(undo), fail);
    else
        backward<float><<<blocks, threads, 0, s>>>(*p, work, ends, static_cast<float *>(undo), fail);
    return launched("backward");
}

extern "C" tridi_status tridi_mpi_cuda_restore(const tridi_problem *p, const void *undo, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int threads = 128;
    const unsigned blocks = (unsigned)((p->nlines + threads - 1) / threads);
    if (p->arrays.x_type == TRIDI_FLOAT64)
        restore<double><<<blocks, threads, 0, s>>>(*p, static_cast<const double *>(undo));
    else
        restore<float><<<blocks, threads, 0, s>>>(*p, static_cast<const float *>(undo));
    return launched("restore");
}

extern "C" tridi_status tridi_mpi_cuda_reduced(const double *gather, size_t cap, int P, int me, int64_t nlines,
                                               double *ends, unsigned long long *fail, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t e = cudaMemsetAsync(fail, 0xff, sizeof(unsigned long long), s);
    if (e != cudaSuccess)
        return tridi_fail(TRIDI_ERROR_CUDA, "tridi_mpi_solve_device: cudaMemsetAsync: %s", cudaGetErrorString(e));
    const int threads = 128;
    const unsigned blocks = (unsigned)((nlines + threads - 1) / threads);
    reduced<<<blocks, threads, 0, s>>>(gather, cap, P, me, nlines, ends, fail);
    return launched("reduced-system");
}
