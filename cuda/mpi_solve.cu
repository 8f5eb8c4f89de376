// Device half of the distributed solve (docs/mpi.md, "Distributed solves"; docs/decisions/015). A rank's
// block of each line is cut into ns sub-blocks, one thread each, as a cut axis has too few lines to fill
// the GPU with one chain per line: each thread eliminates its sub-block with the unknowns just outside it
// kept symbolic, one thread per line joins the sub-blocks (2 unknowns each) into the rank's reduced
// coefficients, and once x_L, x_R are known the same join gives each sub-block its outside values for the
// back substitution. Work arrays are [quantity][m][line]: neighbouring threads touch neighbouring values.
// A line whose eliminations could grow or whose joining or reduced system loses diagonal dominance is
// marked with NaN and left to the host's pipelined Thomas (src/mpi/dsolve_pipeline.c).
#include "mpi_device.h"
#include "mpi_internal.h"
#include "thomas_core.h" // the cut solve's pivot, partition and reduced-row checks
#include "kernels/fused.cuh" // the core's steps in FAST's arithmetic (tk_fused)

#include <cuda_runtime.h>
#include <math_constants.h>

#include <cfloat>
#include <cstdlib>

namespace tridi_cuda {

namespace {

__device__ inline int64_t line_offset(const tridi_problem &p, int64_t l)
{
    int64_t l1 = l % p.n1, l2 = l / p.n1;
    return p.origin + l1 * p.stride[p.a1] + l2 * p.stride[p.a2];
}

constexpr int AHEAD = 4; // unknowns whose loads are issued before their recurrence steps

constexpr int MAX_SUB = 16; // sub-blocks per line and rank (the joining system has 2 MAX_SUB unknowns)

// Unknowns [m0, m1) of the rank's block form sub-block s of ns.
// The (line, sub-block) of this thread of a forward or backward launch (one thread each, line fastest) and
// the sub-block's unknowns [mb, me); false for a thread past the last.
struct SubBlock {
    int64_t l, mb, me;
    int s;
};
__device__ __forceinline__ bool sub_block_of(const tridi_problem &p, int ns, SubBlock &b)
{
    const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x, L = p.nlines;
    if (t >= L * ns)
        return false;
    b.l = t % L;
    b.s = (int)(t / L);
    b.mb = p.n * b.s / ns;
    b.me = p.n * (b.s + 1) / ns;
    return true;
}


__device__ __forceinline__ void mark_unsafe(double *cf)
{
    for (int k = 0; k < 6; ++k)
        cf[k] = CUDART_NAN;
}

// One thread per (line, sub-block): eliminates unknowns [m0, m1) with the unknown before (x_L of the
// rank's block for the first sub-block) and the one after kept symbolic, keeps G, W, S, and writes the
// sub-block's six coefficients to sc[6 (s L + l)]: its first unknown = sc[0] + sc[1] right + sc[2] left,
// its last = sc[3] + sc[4] right + sc[5] left.
// The pivots are computed in double; G, W, S are kept in x's type TW (float for MOHID's mix), the
// precision the answer is rounded to anyway: the work arrays are most of what a cut solve moves (40 of
// its 64 bytes per cell with float answers, 72 of 96 in double), and the solve is bound by that
// traffic, not by its chains. The first unknown's relation is carried along the elimination (u = al +
// be x_next + ga left, from the rounded G, W, S the back substitution will use) instead of a second
// pass reading G, W, S back.
template <typename TL, typename TD, typename TW>
__global__ void forward(tridi_problem p, int first, int last, int ns, TW *work, double *sc)
{
    SubBlock b;
    if (!sub_block_of(p, ns, b))
        return;
    const int64_t l = b.l, mb = b.mb, me = b.me, L = p.nlines, t = b.s * L + l;
    const int s = b.s;
    const int64_t n = p.n, st = p.stride[p.axis];
    const bool no_left = s == 0 && first, no_right = s == ns - 1 && last;
    const int64_t base = line_offset(p, l);
    const TL *lower = static_cast<const TL *>(p.arrays.lower) + base;
    const TD *diag = static_cast<const TD *>(p.arrays.diag) + base;
    const TL *upper = static_cast<const TL *>(p.arrays.upper) + base;
    const TL *rhs = static_cast<const TL *>(p.arrays.rhs) + base;
    TW *G = work + l, *W = work + n * L + l, *S = work + 2 * n * L + l;
    double Wp = 0, Gp = 0, Sp = 1; // S = 1 before the sub-block: its left neighbour itself
    double al = 0, be = 1, ga = 0; // x_mb = al + be x_m + ga left, before unknown m is eliminated
    double gr = 0, wr = 0, sr = 0; // G, W, S of the last unknown as stored
    for (int64_t m0 = mb; m0 < me; m0 += AHEAD) {
        // The loads of AHEAD unknowns go out together, so they overlap instead of queueing behind
        // the recurrence.
        double a[AHEAD], b[AHEAD], c[AHEAD], r[AHEAD];
#pragma unroll
        for (int u = 0; u < AHEAD; ++u) {
            const int64_t m = m0 + u;
            const bool in = m < me;
            const int64_t o = (in ? m : mb) * st;
            a[u] = in && !(m == mb && no_left) ? (double)lower[o] : 0.0;
            b[u] = in ? (double)diag[o] : 1.0;
            c[u] = in && !(m == me - 1 && no_right) ? (double)upper[o] : 0.0;
            r[u] = in ? (double)rhs[o] : 0.0;
        }
#pragma unroll
        for (int u = 0; u < AHEAD; ++u) {
            const int64_t m = m0 + u;
            if (m >= me)
                break;
            // The core's step in FAST's arithmetic with the spike column; at the sub-block's first unknown the
            // pivot is diag alone (lower enters S alone), and the sub-block's last is never the line's last.
            double den;
            tk_fused_step_spike(TRIDI_FORM_RCP, m == mb ? 0.0 : a[u], b[u], c[u], r[u], Wp, Gp, a[u], Sp, 0, &den, &Wp,
                                &Gp, &Sp);
            if (!tridi_thomas_pivot_ok(den)) {
                mark_unsafe(sc + 6 * t);
                return;
            }
            if (!tridi_partition_step_ok(Wp, Gp, Sp)) {
                mark_unsafe(sc + 6 * t);
                return;
            }
            const TW gs = (TW)Gp, ws = (TW)Wp, ss = (TW)Sp;
            G[m * L] = gs;
            W[m * L] = ws;
            S[m * L] = ss;
            gr = gs;
            wr = ws;
            sr = ss;
            // x_m = G + W x_{m+1} + S left, substituted into x_mb's relation.
            al = fma(be, gr, al);
            ga = fma(be, sr, ga);
            be *= wr;
        }
    }
    double *cf = sc + 6 * t;
    cf[0] = al;
    cf[1] = be;
    cf[2] = ga;
    cf[3] = gr;
    cf[4] = wr;
    cf[5] = sr;
}

// The system that joins the ns sub-blocks of line l: unknowns u_0, v_0, u_1, v_1, ... (first and last of
// each sub-block), u_s = P + Q u_{s+1} + R v_{s-1} and v_s likewise, with v_{-1} = x_L and u_ns = x_R.
// Banded (2 sub- and 2 super-diagonals), eliminated without pivoting like the reduced system between
// ranks. NR = 3: right-hand sides for the constant, x_R and x_L parts (the rank's reduced coefficients);
// NR = 1: x_L and x_R known (xl, xr). Returns false where elimination without pivoting is not safe: a
// row not diagonally dominant at its pivot, a zero or non-finite pivot or a non-finite answer (a
// sub-block marked with NaN coefficients gives one).
template <int NR>
__device__ bool join(const double *sc, int ns, int64_t L, int64_t l, double xl, double xr, double (*rhs)[NR])
{
    double band[2 * MAX_SUB][5];
    for (int s = 0; s < ns; ++s) {
        const double *cf = sc + 6 * (s * L + l);
        const int rf = 2 * s, rl = 2 * s + 1;
        tridi_band_rows(band[0], rhs[0], NR, s, ns, cf);
        if (s == 0 && NR == 3) {
            rhs[rf][NR - 1] = cf[2];
            rhs[rl][NR - 1] = cf[5];
        } else if (s == 0) {
            rhs[rf][0] += cf[2] * xl;
            rhs[rl][0] += cf[5] * xl;
        }
        if (s == ns - 1 && NR == 3) {
            rhs[rf][1 % NR] = cf[1];
            rhs[rl][1 % NR] = cf[4];
        } else if (s == ns - 1) {
            rhs[rf][0] += cf[1] * xr;
            rhs[rl][0] += cf[4] * xr;
        }
    }
    return tridi_band_solve(band[0], rhs[0], NR, 2 * ns);
}

// The rank's six reduced coefficients of each line from its sub-blocks' (after forward, ns > 1); NaN for
// a line the join cannot take.
__global__ void join_forward(const double *sc, int ns, int64_t L, double *coef)
{
    const int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (l >= L)
        return;
    double rhs[2 * MAX_SUB][3];
    if (!join<3>(sc, ns, L, l, 0.0, 0.0, rhs)) {
        mark_unsafe(coef + 6 * l);
        return;
    }
    const int N = 2 * ns;
    double *cf = coef + 6 * l;
    for (int k = 0; k < 3; ++k) {
        cf[k] = rhs[0][k];
        cf[3 + k] = rhs[N - 1][k];
    }
}

// Given the line's x_L, x_R (ends[2 l], ends[2 l + 1]), the outside values of each sub-block:
// sends[2 (s L + l)] = the unknown before it, sends[2 (s L + l) + 1] = the one after it.
__global__ void join_backward(const double *sc, int ns, int64_t L, const double *ends, double *sends)
{
    const int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (l >= L)
        return;
    double rhs[2 * MAX_SUB][1];
    const double xl = ends[2 * l], xr = ends[2 * l + 1];
    if (isnan(xl) || isnan(xr)) { // a line of the pipelined Thomas: backward skips every sub-block
        for (int s = 0; s < ns; ++s)
            sends[2 * (s * L + l)] = sends[2 * (s * L + l) + 1] = CUDART_NAN;
        return;
    }
    join<1>(sc, ns, L, l, xl, xr, rhs); // its pivots are join_forward's, already checked
    for (int s = 0; s < ns; ++s) {
        sends[2 * (s * L + l)] = s == 0 ? xl : rhs[2 * s - 1][0];
        sends[2 * (s * L + l) + 1] = s == ns - 1 ? xr : rhs[2 * s + 2][0];
    }
}

__device__ __forceinline__ bool finite_in(float v) { return fabsf(v) <= FLT_MAX; }
__device__ __forceinline__ bool finite_in(double v) { return tridi_thomas_finite(v); }

// Writes each answer rounded to x's type over the old value, which goes to undo first; a line whose answer
// overflows that type reports its highest failing unknown (the first met going down), as the host does:
// the word is (line << 24) | (2^24 - 1 - m), so the smallest is the lowest line's highest failing unknown.
// One thread per (line, sub-block); ends: the outside values of each, 2 (s L + l). A line marked for the
// pipelined Thomas (NaN outside values) only has its old x saved to undo: the host writes its answers.
template <typename TX>
__global__ void backward(tridi_problem p, int ns, const TX *work, const double *ends, TX *undo,
                         unsigned long long *fail)
{
    SubBlock b;
    if (!sub_block_of(p, ns, b))
        return;
    const int64_t l = b.l, mb = b.mb, me = b.me, L = p.nlines, t = b.s * L + l;
    const int64_t n = p.n, st = p.stride[p.axis];
    TX *x = static_cast<TX *>(p.arrays.x) + line_offset(p, l);
    const TX *G = work + l, *W = work + n * L + l, *S = work + 2 * n * L + l;
    TX *u = undo + l;
    const double xl = ends[2 * t];
    double next = ends[2 * t + 1];
    if (isnan(xl) || isnan(next)) {
        for (int64_t m = mb; m < me; ++m)
            u[m * L] = x[m * st];
        return;
    }
    bool bad = false;
    for (int64_t m0 = me - 1; m0 >= mb; m0 -= AHEAD) {
        double g[AHEAD], w[AHEAD], sl[AHEAD];
#pragma unroll
        for (int k = 0; k < AHEAD; ++k) {
            const int64_t mm = m0 - k >= mb ? m0 - k : mb;
            g[k] = G[mm * L];
            w[k] = W[mm * L];
            sl[k] = S[mm * L];
        }
#pragma unroll
        for (int k = 0; k < AHEAD; ++k) {
            const int64_t m = m0 - k;
            if (m < mb)
                break;
            const double v = tk_fused_back(w[k], next, tk_fused_back(sl[k], xl, g[k])); // W x' + (S x_L + G)
            const TX xv = (TX)v;
            u[m * L] = x[m * st];
            x[m * st] = xv;
            if (!bad && !finite_in(xv)) {
                bad = true;
                atomicMin(fail, ((unsigned long long)l << 24) | ((1ull << 24) - 1 - (unsigned long long)(m < (1 << 23) ? m : 0)));
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
// eliminated without pivoting as on the host (src/mpi/dsolve_reduced.c), with the same marks: a line
// that a block marked (NaN coefficients), or that loses diagonal dominance, meets a zero pivot or a
// non-finite value, gets NaN ends and is counted in *marked.
__global__ void reduced(const double *gather, size_t cap, int P, int me, int64_t nlines, double *ends,
                        unsigned long long *marked)
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
    double band[2 * TRIDI_MPI_MAX_LINE][5], rhs[2 * TRIDI_MPI_MAX_LINE];
    if (!tridi_reduced_line(gather + 6 * l, slot, idx, Q, mine, band[0], rhs, ends + 2 * l))
        atomicAdd(marked, 1ull);
}

// The inputs of the lines of the pipelined Thomas, widened to double: lower, diag, upper, rhs of list
// entry k at abcr[4 n k ...], n each.
template <typename TL, typename TD>
__global__ void gather_lines(tridi_problem p, const int64_t *lines, int64_t nf, double *abcr)
{
    const int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (k >= nf)
        return;
    const int64_t n = p.n, st = p.stride[p.axis], base = line_offset(p, lines[k]);
    double *a = abcr + 4 * n * k, *b = a + n, *c = b + n, *r = c + n;
    for (int64_t m = 0; m < n; ++m) {
        const int64_t o = base + m * st;
        a[m] = (double)static_cast<const TL *>(p.arrays.lower)[o];
        b[m] = (double)static_cast<const TD *>(p.arrays.diag)[o];
        c[m] = (double)static_cast<const TL *>(p.arrays.upper)[o];
        r[m] = (double)static_cast<const TL *>(p.arrays.rhs)[o];
    }
}

// Their answers (x's type, n per list entry) into x.
template <typename TX>
__global__ void scatter_lines(tridi_problem p, const int64_t *lines, int64_t nf, const TX *xs)
{
    const int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (k >= nf)
        return;
    const int64_t n = p.n, st = p.stride[p.axis];
    TX *x = static_cast<TX *>(p.arrays.x) + line_offset(p, lines[k]);
    for (int64_t m = 0; m < n; ++m)
        x[m * st] = xs[n * k + m];
}

tridi_status launched(const char *what)
{
    cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_cuda_fail("tridi_mpi_solve_device", what, e);
}

} // namespace

static_assert(MAX_SUB == TRIDI_TUNING_MPI_SUBBLOCKS_MAX, "TRIDI_MPI_SUBBLOCKS's range (src/tuning.c) is MAX_SUB");

extern "C" int tridi_mpi_cuda_subblocks(const tridi_problem *p, int fixed)
{
    int ns = 1;
    if (fixed > 0) { // TRIDI_MPI_SUBBLOCKS, read by tridi_create (1..MAX_SUB): tests and tuning
        ns = fixed;
    } else {
        // Enough threads to fill about half the GPU's thread slots (the chains are latency-bound, the
        // work arrays take the bandwidth beyond that), sub-blocks of at least 32 unknowns.
        int dev = 0, sms = 0;
        if (cudaGetDevice(&dev) != cudaSuccess ||
            cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
            sms = 0;
        const int64_t want = (int64_t)sms * 1024;
        while (ns < MAX_SUB && p->nlines * ns < want && p->n / (2 * ns) >= 32)
            ns *= 2;
    }
    if (ns > p->n)
        ns = p->n > 1 ? (int)p->n : 1;
    return ns;
}

// Work layout: G, W, S (3 n L of x's type), the undo copy of x (n L), then with ns > 1 the sub-blocks'
// coefficients (6 ns L doubles) and outside values (2 ns L doubles).
static size_t sub_offset(const tridi_problem *p)
{
    const size_t b = 4 * (size_t)p->n * (size_t)p->nlines * tridi_dtype_size(p->arrays.x_type);
    return (b + sizeof(double) - 1) / sizeof(double) * sizeof(double);
}

extern "C" size_t tridi_mpi_cuda_work_bytes(const tridi_problem *p, int ns)
{
    return sub_offset(p) + (ns > 1 ? sizeof(double) * 8 * (size_t)ns * (size_t)p->nlines : 0);
}

static double *sub_coef(const tridi_problem *p, const void *work)
{
    return reinterpret_cast<double *>(const_cast<char *>(static_cast<const char *>(work)) + sub_offset(p));
}

static unsigned grid_of(int64_t threads, int per_block)
{
    return (unsigned)((threads + per_block - 1) / per_block);
}

extern "C" tridi_status tridi_mpi_cuda_forward(const tridi_problem *p, int first, int last, int ns, void *work,
                                               double *coef, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int threads = 128;
    const unsigned blocks = grid_of(p->nlines * ns, threads);
    double *sc = ns > 1 ? sub_coef(p, work) : coef; // one sub-block: its coefficients are the rank's
    float *wf = static_cast<float *>(work);
    double *wd = static_cast<double *>(work);
    switch (p->combo) { // G, W, S in x's type: float for F32 and MOHID's mix
    case TRIDI_COMBO_F32: forward<float, float><<<blocks, threads, 0, s>>>(*p, first, last, ns, wf, sc); break;
    case TRIDI_COMBO_F64: forward<double, double><<<blocks, threads, 0, s>>>(*p, first, last, ns, wd, sc); break;
    case TRIDI_COMBO_MIXED: forward<float, double><<<blocks, threads, 0, s>>>(*p, first, last, ns, wf, sc); break;
    }
    tridi_status st = launched("forward kernel launch");
    if (st || ns == 1)
        return st;
    join_forward<<<grid_of(p->nlines, threads), threads, 0, s>>>(sc, ns, p->nlines, coef);
    return launched("sub-block join kernel launch");
}

extern "C" tridi_status tridi_mpi_cuda_backward(const tridi_problem *p, int ns, const void *work, const double *ends,
                                                void *undo, unsigned long long *fail, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t e = cudaMemsetAsync(fail, 0xff, sizeof(unsigned long long), s);
    if (e != cudaSuccess)
        return tridi_cuda_fail("tridi_mpi_solve_device", "cudaMemsetAsync", e);
    const int threads = 128;
    const double *sends = ends;
    if (ns > 1) {
        double *sc = sub_coef(p, work);
        double *out = sc + 6 * (size_t)ns * (size_t)p->nlines;
        join_backward<<<grid_of(p->nlines, threads), threads, 0, s>>>(sc, ns, p->nlines, ends, out);
        tridi_status st = launched("sub-block join kernel launch");
        if (st)
            return st;
        sends = out;
    }
    const unsigned blocks = grid_of(p->nlines * ns, threads);
    if (p->arrays.x_type == TRIDI_FLOAT64)
        backward<double><<<blocks, threads, 0, s>>>(*p, ns, static_cast<const double *>(work), sends,
                                                    static_cast<double *>(undo), fail);
    else
        backward<float><<<blocks, threads, 0, s>>>(*p, ns, static_cast<const float *>(work), sends,
                                                   static_cast<float *>(undo), fail);
    return launched("backward kernel launch");
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
    return launched("restore kernel launch");
}

extern "C" tridi_status tridi_mpi_cuda_reduced(const double *gather, size_t cap, int P, int me, int64_t nlines,
                                               double *ends, unsigned long long *marked, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    cudaError_t e = cudaMemsetAsync(marked, 0, sizeof(unsigned long long), s);
    if (e != cudaSuccess)
        return tridi_cuda_fail("tridi_mpi_solve_device", "cudaMemsetAsync", e);
    const int threads = 128;
    const unsigned blocks = (unsigned)((nlines + threads - 1) / threads);
    reduced<<<blocks, threads, 0, s>>>(gather, cap, P, me, nlines, ends, marked);
    return launched("reduced-system kernel launch");
}

extern "C" tridi_status tridi_mpi_cuda_gather_lines(const tridi_problem *p, const int64_t *lines, int64_t nf,
                                                    double *abcr, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int threads = 128;
    const unsigned blocks = grid_of(nf, threads);
    switch (p->combo) {
    case TRIDI_COMBO_F32: gather_lines<float, float><<<blocks, threads, 0, s>>>(*p, lines, nf, abcr); break;
    case TRIDI_COMBO_F64: gather_lines<double, double><<<blocks, threads, 0, s>>>(*p, lines, nf, abcr); break;
    case TRIDI_COMBO_MIXED: gather_lines<float, double><<<blocks, threads, 0, s>>>(*p, lines, nf, abcr); break;
    }
    return launched("fallback gather kernel launch");
}

extern "C" tridi_status tridi_mpi_cuda_scatter_lines(const tridi_problem *p, const int64_t *lines, int64_t nf,
                                                     const void *x, void *stream)
{
    cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int threads = 128;
    const unsigned blocks = grid_of(nf, threads);
    if (p->arrays.x_type == TRIDI_FLOAT64)
        scatter_lines<double><<<blocks, threads, 0, s>>>(*p, lines, nf, static_cast<const double *>(x));
    else
        scatter_lines<float><<<blocks, threads, 0, s>>>(*p, lines, nf, static_cast<const float *>(x));
    return launched("fallback scatter kernel launch");
}

} // namespace tridi_cuda
