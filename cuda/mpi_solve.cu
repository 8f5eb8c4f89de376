// Device half of the distributed solve (src/mpi/dsolve.c explains the method): one thread per line
// eliminates its block with the neighbours' boundary unknowns kept symbolic, then substitutes them
// back once the reduced system is solved on the host. Work arrays are [quantity][m][line] so that
// neighbouring threads touch neighbouring doubles.
#include "mpi_internal.h"

#include <cuda_runtime.h>

namespace {

__device__ inline int64_t line_offset(const tridi_problem &p, int64_t l)
{
    int64_t l1 = l % p.n1, l2 = l / p.n1;
    return p.origin + l1 * p.stride[p.a1] + l2 * p.stride[p.a2];
}

template <typename TL, typename TD, typename TX>
__global__ void forward(tridi_problem p, int first, int last, double *work, double *coef,
                        unsigned long long *fail)
{
    const int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (l >= p.nlines)
        return;
    const TL *lower = static_cast<const TL *>(p.arrays.lower);
    const TD *diag = static_cast<const TD *>(p.arrays.diag);
    const TL *upper = static_cast<const TL *>(p.arrays.upper);
    const TL *rhs = static_cast<const TL *>(p.arrays.rhs);
    const int64_t n = p.n, st = p.stride[p.axis], L = p.nlines;
    const int64_t base = line_offset(p, l);
    double *G = work, *W = work + n * L, *S = work + 2 * n * L;
    double Wp = 0, Gp = 0, Sp = 0;
    for (int64_t m = 0; m < n; ++m) {
        const int64_t o = base + m * st;
        double a = (m == 0 && first) ? 0.0 : (double)lower[o];
        double b = (double)diag[o];
        double c = (m == n - 1 && last) ? 0.0 : (double)upper[o];
        double r = (double)rhs[o];
        double den = m == 0 ? b : b + a * Wp;
        double sl = m == 0 ? -a : -a * Sp;
        if (den == 0.0) {
            atomicMin(fail, ((unsigned long long)l << 24) | (m < (1 << 23) ? (unsigned long long)m : 0));
            return;
        }
        double inv = 1.0 / den;
        Wp = -c * inv;
        Gp = (m == 0 ? r : r - a * Gp) * inv;
        Sp = sl * inv;
        if (!isfinite(Wp) || !isfinite(Gp) || !isfinite(Sp)) {
            atomicMin(fail, ((unsigned long long)l << 24) | (1ull << 23) | (m < (1 << 23) ? (unsigned long long)m : 0));
            return;
        }
        G[m * L + l] = Gp;
        W[m * L + l] = Wp;
        S[m * L + l] = Sp;
    }
    double P = Gp, Q = Wp, R = Sp;
    double *cf = coef + 6 * l;
    cf[3] = P;
    cf[4] = Q;
    cf[5] = R;
    for (int64_t m = n - 2; m >= 0; --m) {
        double w = W[m * L + l];
        P = G[m * L + l] + w * P;
        Q = w * Q;
        R = S[m * L + l] + w * R;
    }
    cf[0] = P;
    cf[1] = Q;
    cf[2] = R;
}

template <typename TX>
__global__ void backward(tridi_problem p, const double *work, const double *ends)
{
    const int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (l >= p.nlines)
        return;
    TX *x = static_cast<TX *>(p.arrays.x);
    const int64_t n = p.n, st = p.stride[p.axis], L = p.nlines;
    const int64_t base = line_offset(p, l);
    const double *G = work, *W = work + n * L, *S = work + 2 * n * L;
    const double xl = ends[2 * l];
    double next = ends[2 * l + 1];
    for (int64_t m = n - 1; m >= 0; --m) {
        double v = G[m * L + l] + W[m * L + l] * next + S[m * L + l] * xl;
        x[base + m * st] = (TX)v;
        next = v;
    }
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
    case TRIDI_COMBO_F32: forward<float, float, float><<<blocks, threads, 0, s>>>(*p, first, last, work, coef, fail); break;
    case TRIDI_COMBO_F64: forward<double, double, double><<<blocks, threads, 0, s>>>(*p, first, last, work, coef, fail); break;
    case TRIDI_COMBO_MIXED: forward<float, double, float><<<blocks, threads, 0, s>>>(*p, first, last, work, coef, fail); break;
    }
    return launched("forward");
}

extern "C" tridi_status tridi_mpi_cuda_backward(const tridi_problem *p, const double *work, const double *ends,
                                                void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int threads = 128;
    const unsigned blocks = (unsigned)((p->nlines + threads - 1) / threads);
    if (p->arrays.x_type == TRIDI_FLOAT64)
        backward<double><<<blocks, threads, 0, s>>>(*p, work, ends);
    else
        backward<float><<<blocks, threads, 0, s>>>(*p, work, ends);
    return launched("backward");
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
