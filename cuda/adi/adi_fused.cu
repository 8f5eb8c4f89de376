// Fused ADI sweeps on the GPU (docs/decisions/025): one kernel per sweep, one thread per line. Each thread
// forms the rows of its line from the field and the coefficients with the cell arithmetic shared with the
// CPU (src/adi_cell.inc, ADI_COEF), runs the Thomas recurrence of src/thomas_core.h on them at once, and
// writes only the sweep's output; no diagonal or right-hand side goes to memory. The rows are rounded to
// the storage type as the staged path stores them, so both paths solve the same systems.
//
// Failures are deferred (docs/decisions/026): the first is kept in the plan's status word (ADI_KEY) and
// every later sweep of the plan does nothing until tridi_adi_synchronize has reported it.
#include "adi_internal.h"
#include "thomas_core.h"

#include <cuda_runtime.h>

#define ADI_QUAL static __device__ __forceinline__
#define ADI_UNROLL _Pragma("unroll")
#define ADI_LOAD(p) __ldg(p)
#include "adi_cell_types.inc"
#undef ADI_QUAL
#undef ADI_UNROLL
#undef ADI_LOAD

namespace {

constexpr int LINES_PER_BLOCK = 64; // small blocks spread a small grid's few lines evenly over the SMs
// y and z lines ask L2 for their rows this many unknowns ahead (docs/decisions/025: 4 beat 0, 8 and 16).
constexpr int PREFETCH_AHEAD = 4;
constexpr unsigned MAX_BLOCKS = 1u << 20; // a grid-stride loop covers the rest

// Asks L2 for the line holding p, without waiting: a y or z line's loads are independent of the
// recurrence but its thread has few of them in flight, so the rows a few unknowns ahead are fetched early
// and the loads themselves then hit L2.
__device__ __forceinline__ void prefetch_l2(const void *p)
{
    asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(p)));
}

template <typename T>
__device__ __forceinline__ double coef(const adi_stage *s, int64_t i, int64_t j, int64_t k, double *lo, double *di,
                                       double *up)
{
    if (sizeof(T) == 8)
        return adi_coef_f64(s, i, j, k, lo, di, up);
    return adi_coef_f32(s, i, j, k, lo, di, up);
}

// The row of unknown m as the staged path stores it (in T), with the lower coefficient of the first
// unknown and the upper one of the last set to 0: they fall outside the line and are never read.
template <typename T, int AXIS>
__device__ __forceinline__ double row(const adi_stage *s, int64_t l1, int64_t l2, int64_t m, int64_t n, double *d,
                                      double *e, double *f)
{
    constexpr int A1 = AXIS == 0 ? 1 : 0, A2 = AXIS == 2 ? 1 : 2;
    int64_t idx[3];
    idx[AXIS] = m;
    idx[A1] = l1;
    idx[A2] = l2;
    double lo = 0.0, di = 1.0, up = 0.0;
    const double r = (double)(T)coef<T>(s, idx[0], idx[1], idx[2], &lo, &di, &up);
    *d = m > 0 ? (double)(T)lo : 0.0;
    *e = (double)(T)di;
    *f = m < n - 1 ? (double)(T)up : 0.0;
    return r;
}

// TABLE: every line of the sweep has the same rows, whose W is fz.table (made by tables_kernel with the
// same arithmetic); otherwise each line keeps its own W in fz.w. pd: how many unknowns ahead the rows (and,
// going back, W and G) are asked of L2 (PREFETCH_AHEAD).
template <typename T, typename S, int AXIS, bool TABLE>
__global__ void __launch_bounds__(LINES_PER_BLOCK) fused_sweep(const __grid_constant__ adi_stage s,
                                                               const __grid_constant__ adi_fused fz, int64_t nlines,
                                                               int pd)
{
    constexpr int A1 = AXIS == 0 ? 1 : 0, A2 = AXIS == 2 ? 1 : 2;
    if (*fz.status != ADI_STATUS_CLEAR)
        return; // an earlier sweep failed: its verdict waits for tridi_adi_synchronize
    const int64_t n = s.n[AXIS], n1 = s.n[A1];
    T *out = (T *)s.out;
    S *__restrict__ G = (S *)fz.g;
    S *__restrict__ W = (S *)fz.w;
    const double *__restrict__ tab = fz.table;
    const T *X0 = (const T *)s.x0, *Y = (const T *)s.y, *K = (const T *)s.kappa, *V = (const T *)s.vel[AXIS];
    const int64_t st = s.stride[AXIS];
    for (int64_t line = (int64_t)blockIdx.x * LINES_PER_BLOCK + threadIdx.x; line < nlines;
         line += (int64_t)gridDim.x * LINES_PER_BLOCK) {
        const int64_t l1 = line % n1, l2 = line / n1;
        const int64_t c0 = s.origin + l1 * s.stride[A1] + l2 * s.stride[A2];
        for (int64_t m = 0; m < pd && m < n; ++m) {
            prefetch_l2(X0 + c0 + m * st);
            prefetch_l2(Y + c0 + m * st);
        }
        double w = 0.0, g = 0.0;
        int kind = TRIDI_FAIL_NONE;
        int64_t m = 0;
        double d, e, f;
        double r = row<T, AXIS>(&s, l1, l2, 0, n, &d, &e, &f);
        for (; m < n; ++m) {
            // The next row first: its loads are in flight while this unknown's divisions run.
            double dn = 0.0, en = 1.0, fn = 0.0, rn = 0.0;
            if (m + pd < n) {
                const int64_t ca = c0 + (m + pd) * st;
                prefetch_l2(X0 + ca);
                prefetch_l2(Y + ca);
                if (K)
                    prefetch_l2(K + ca);
                if (V)
                    prefetch_l2(V + ca);
            }
            if (m + 1 < n)
                rn = row<T, AXIS>(&s, l1, l2, m + 1, n, &dn, &en, &fn);
            if (TABLE)
                w = m > 0 ? tab[m - 1] : 0.0;
            kind = tridi_thomas_forward(d, e, f, r, m == n - 1, &w, &g);
            if (kind)
                break;
            if (!TABLE)
                W[m * nlines + line] = (S)w;
            G[m * nlines + line] = (S)g;
            d = dn;
            e = en;
            f = fn;
            r = rn;
        }
        if (!kind) {
            int64_t c = c0 + (n - 1) * st;
            double x = 0.0;
            for (m = n - 1; m >= 0; --m, c -= st) {
                if (m >= pd) {
                    prefetch_l2(G + (m - pd) * nlines + line);
                    if (!TABLE)
                        prefetch_l2(W + (m - pd) * nlines + line);
                }
                const double wm = TABLE ? tab[m] : (double)W[m * nlines + line];
                x = tridi_thomas_back(wm, (double)G[m * nlines + line], x, m == n - 1, sizeof(T) == 8);
                if (!tridi_thomas_finite(x)) {
                    kind = TRIDI_FAIL_ANSWER_OVERFLOW;
                    break;
                }
                out[c] = (T)x;
            }
        }
        if (kind)
            atomicMin(fz.status, ADI_KEY(AXIS, line, m, kind));
    }
}

// x lines with rows of their own (a kappa field or a velocity along x): each warp takes 32 lines,
// XT_CHUNK cells of each at a time. The warp forms the chunk's rows together, XT_CHUNK lanes along each
// line (whole 32-byte sectors), into its own slice of shared memory; each lane then runs the recurrence
// of its line over the chunk, W and G going out indexed m * nlines + line (a warp's 32 lines in one run);
// the back substitution reads them the same way and puts the answers back through shared memory. No
// barrier but the warp's own. Failures as in fused_sweep.
constexpr int XT_CHUNK = 8, XT_WARPS = 4, XT_THREADS = 32 * XT_WARPS, XT_PITCH = XT_CHUNK + 1;
constexpr int XT_ROWS = 32 / XT_CHUNK; // lines a warp covers per cooperative access

template <typename T, typename S>
__global__ void __launch_bounds__(XT_THREADS) fused_sweep_x(const __grid_constant__ adi_stage s,
                                                            const __grid_constant__ adi_fused fz, int64_t nlines)
{
    __shared__ double sh[XT_WARPS][4][32 * XT_PITCH];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double *sd = sh[warp][0], *se = sh[warp][1], *sf = sh[warp][2], *sr = sh[warp][3];
    // One read per warp, so that its lanes all stay for the warp's own barriers; warps go their own way.
    if (__shfl_sync(0xffffffffu, lane == 0 && *fz.status != ADI_STATUS_CLEAR ? 1 : 0, 0))
        return;
    const int64_t n = s.n[0], n1 = s.n[1];
    T *out = (T *)s.out;
    S *__restrict__ G = (S *)fz.g;
    S *__restrict__ W = (S *)fz.w;
    const int sub = lane / XT_CHUNK, cell = lane % XT_CHUNK; // the cooperative accesses' line and cell
    for (int64_t base = ((int64_t)blockIdx.x * XT_WARPS + warp) * 32; base < nlines;
         base += (int64_t)gridDim.x * XT_THREADS) {
        const int64_t myline = base + lane;
        bool ok = myline < nlines; // this lane's line has not failed
        // The coordinates of each lane's line, divided out once; the cooperative loops take line q's from
        // lane q (every lane runs every iteration of those loops, so the shuffles see the whole warp).
        const int64_t my1 = myline % n1, my2 = myline / n1;
        double w = 0.0, g = 0.0;
        for (int64_t i0 = 0; i0 < n; i0 += XT_CHUNK) {
            const int cn = (int)(n - i0 < XT_CHUNK ? n - i0 : XT_CHUNK);
            __syncwarp();
            for (int q = sub; q < 32; q += XT_ROWS) {
                const int64_t line = base + q;
                const int64_t q1 = __shfl_sync(0xffffffffu, my1, q), q2 = __shfl_sync(0xffffffffu, my2, q);
                if (line < nlines && cell < cn) {
                    double d, e, f;
                    const double r = row<T, 0>(&s, q1, q2, i0 + cell, n, &d, &e, &f);
                    sd[q * XT_PITCH + cell] = d;
                    se[q * XT_PITCH + cell] = e;
                    sf[q * XT_PITCH + cell] = f;
                    sr[q * XT_PITCH + cell] = r;
                }
            }
            __syncwarp();
            if (ok) {
                for (int ii = 0; ii < cn; ++ii) {
                    const int64_t m = i0 + ii;
                    const int at = lane * XT_PITCH + ii;
                    const int kind = tridi_thomas_forward(sd[at], se[at], sf[at], sr[at], m == n - 1, &w, &g);
                    if (kind) {
                        ok = false;
                        atomicMin(fz.status, ADI_KEY(0, myline, m, kind));
                        break;
                    }
                    W[m * nlines + myline] = (S)w;
                    G[m * nlines + myline] = (S)g;
                }
            }
        }
        double x = 0.0;
        for (int64_t i0 = ((n - 1) / XT_CHUNK) * XT_CHUNK; i0 >= 0; i0 -= XT_CHUNK) {
            const int cn = (int)(n - i0 < XT_CHUNK ? n - i0 : XT_CHUNK);
            __syncwarp();
            if (ok) {
                for (int ii = cn - 1; ii >= 0; --ii) {
                    const int64_t m = i0 + ii;
                    x = tridi_thomas_back((double)W[m * nlines + myline], (double)G[m * nlines + myline], x, m == n - 1,
                                          sizeof(T) == 8);
                    if (!tridi_thomas_finite(x)) {
                        ok = false;
                        atomicMin(fz.status, ADI_KEY(0, myline, m, TRIDI_FAIL_ANSWER_OVERFLOW));
                        break;
                    }
                    se[lane * XT_PITCH + ii] = x;
                }
            }
            __syncwarp();
            const unsigned good = __ballot_sync(0xffffffffu, ok);
            for (int q = sub; q < 32; q += XT_ROWS) {
                const int64_t line = base + q;
                const int64_t q1 = __shfl_sync(0xffffffffu, my1, q), q2 = __shfl_sync(0xffffffffu, my2, q);
                if (line < nlines && cell < cn && (good >> q & 1))
                    out[s.origin + q1 * s.stride[1] + q2 * s.stride[2] + i0 + cell] = (T)se[q * XT_PITCH + cell];
            }
        }
    }
}

// x lines whose rows all lines share (the table case): each warp takes 32 lines, 32 cells of each at a
// time. The warp forms the chunk's right-hand sides with a lane per cell, one line after the other (a
// whole 256-byte run of each row per access), into shared memory; each lane then runs its own line over
// the chunk with the table's rows, and G goes out indexed m * nlines + line, so that a warp's 32 lines
// are one run too. The back substitution reads G the same way and puts the answers back through shared
// memory, a row at a time. Failures as in fused_sweep.
constexpr int XR_CHUNK = 32, XR_PITCH = XR_CHUNK + 1;

template <typename T, typename S>
__global__ void __launch_bounds__(XT_THREADS) fused_sweep_x_table(const __grid_constant__ adi_stage s,
                                                                  const __grid_constant__ adi_fused fz,
                                                                  int64_t nlines)
{
    __shared__ double sh[XT_WARPS][32 * XR_PITCH];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    double *rx = sh[warp]; // right-hand sides, then answers; row q of the chunk at rx + q * XR_PITCH
    if (__shfl_sync(0xffffffffu, lane == 0 && *fz.status != ADI_STATUS_CLEAR ? 1 : 0, 0))
        return;
    const int64_t n = s.n[0], n1 = s.n[1];
    T *out = (T *)s.out;
    S *__restrict__ G = (S *)fz.g;
    const double *__restrict__ tW = fz.table, *__restrict__ tD = tW + n, *__restrict__ tE = tW + 2 * n,
                                  *__restrict__ tF = tW + 3 * n;
    for (int64_t base = ((int64_t)blockIdx.x * XT_WARPS + warp) * 32; base < nlines;
         base += (int64_t)gridDim.x * XT_THREADS) {
        const int64_t myline = base + lane;
        bool ok = myline < nlines;
        const int64_t my1 = myline % n1, my2 = myline / n1;
        double g = 0.0;
        for (int64_t i0 = 0; i0 < n; i0 += XR_CHUNK) {
            const int cn = (int)(n - i0 < XR_CHUNK ? n - i0 : XR_CHUNK);
            __syncwarp();
            for (int q = 0; q < 32; ++q) {
                const int64_t q1 = __shfl_sync(0xffffffffu, my1, q), q2 = __shfl_sync(0xffffffffu, my2, q);
                if (base + q < nlines && lane < cn) {
                    double d, e, f;
                    rx[q * XR_PITCH + lane] = row<T, 0>(&s, q1, q2, i0 + lane, n, &d, &e, &f);
                }
            }
            __syncwarp();
            if (ok) {
                for (int ii = 0; ii < cn; ++ii) {
                    const int64_t m = i0 + ii;
                    double w = m > 0 ? tW[m - 1] : 0.0;
                    const int kind = tridi_thomas_forward(m > 0 ? tD[m] : 0.0, tE[m], tF[m], rx[lane * XR_PITCH + ii],
                                                          m == n - 1, &w, &g);
                    if (kind) {
                        ok = false;
                        atomicMin(fz.status, ADI_KEY(0, myline, m, kind));
                        break;
                    }
                    G[m * nlines + myline] = (S)g;
                }
            }
        }
        double x = 0.0;
        for (int64_t i0 = ((n - 1) / XR_CHUNK) * XR_CHUNK; i0 >= 0; i0 -= XR_CHUNK) {
            const int cn = (int)(n - i0 < XR_CHUNK ? n - i0 : XR_CHUNK);
            __syncwarp();
            if (ok) {
                for (int ii = cn - 1; ii >= 0; --ii) {
                    const int64_t m = i0 + ii;
                    x = tridi_thomas_back(tW[m], (double)G[m * nlines + myline], x, m == n - 1, sizeof(T) == 8);
                    if (!tridi_thomas_finite(x)) {
                        ok = false;
                        atomicMin(fz.status, ADI_KEY(0, myline, m, TRIDI_FAIL_ANSWER_OVERFLOW));
                        break;
                    }
                    rx[lane * XR_PITCH + ii] = x;
                }
            }
            __syncwarp();
            const unsigned good = __ballot_sync(0xffffffffu, ok);
            for (int q = 0; q < 32; ++q) {
                const int64_t q1 = __shfl_sync(0xffffffffu, my1, q), q2 = __shfl_sync(0xffffffffu, my2, q);
                if (base + q < nlines && lane < cn && (good >> q & 1))
                    out[s.origin + q1 * s.stride[1] + q2 * s.stride[2] + i0 + lane] = (T)rx[q * XR_PITCH + lane];
            }
        }
    }
}

// One thread per axis: the W of the rows every line of that axis shares (line 0's), remade only when the
// implicit weight changed since the table was made (aux[1 + a] holds it; the bits of NaN at first).
template <typename T>
__global__ void tables_kernel(const __grid_constant__ adi_stage base, double *aux, int use0, int use1, int use2,
                              double tdt0, double tdt1, double tdt2)
{
    const int a = threadIdx.x;
    const int use[3] = {use0, use1, use2};
    const double tdt[3] = {tdt0, tdt1, tdt2};
    if (a >= 3 || !use[a] || aux[1 + a] == tdt[a])
        return;
    adi_stage s = base;
    s.axis = a;
    s.tdt = tdt[a];
    s.x0 = s.y = s.field;
    for (int b = 0; b < 3; ++b)
        s.alpha[b] = 0.0;
    double *tab = aux + ADI_AUX_TABLES;
    for (int b = 0; b < a; ++b)
        tab += ADI_TABLE_ARRAYS * base.n[b];
    const int64_t n = s.n[a];
    double w = 0.0;
    for (int64_t m = 0; m < n; ++m) {
        double d, e, f;
        switch (a) {
        case 0: row<T, 0>(&s, 0, 0, m, n, &d, &e, &f); break;
        case 1: row<T, 1>(&s, 0, 0, m, n, &d, &e, &f); break;
        default: row<T, 2>(&s, 0, 0, m, n, &d, &e, &f); break;
        }
        // Only W matters here; a failure shows again, with its line and cell, in the sweep itself.
        const double den = e + d * w;
        w = m == n - 1 ? 0.0 : -f / den;
        tab[m] = w;
        tab[n + m] = d;
        tab[2 * n + m] = e;
        tab[3 * n + m] = f;
    }
    aux[1 + a] = tdt[a];
}

tridi_status cuda_fail(const char *what, cudaError_t e)
{
    return tridi_fail(TRIDI_ERROR_CUDA, "tridi_adi (GPU): %s: %s (%s)", what, cudaGetErrorString(e),
                      cudaGetErrorName(e));
}

template <typename T, typename S, int AXIS>
void launch_axis(const adi_stage *s, const adi_fused *fz, int64_t nlines, cudaStream_t st)
{
    const int64_t want = (nlines + LINES_PER_BLOCK - 1) / LINES_PER_BLOCK;
    const unsigned blocks = (unsigned)(want < (int64_t)MAX_BLOCKS ? want : MAX_BLOCKS);
    if (fz->table)
        fused_sweep<T, S, AXIS, true><<<blocks, LINES_PER_BLOCK, 0, st>>>(*s, *fz, nlines, PREFETCH_AHEAD);
    else
        fused_sweep<T, S, AXIS, false><<<blocks, LINES_PER_BLOCK, 0, st>>>(*s, *fz, nlines, PREFETCH_AHEAD);
}

template <typename T, typename S>
void launch_x(const adi_stage *s, const adi_fused *fz, int64_t nlines, cudaStream_t st)
{
    const int64_t want = (nlines + XT_THREADS - 1) / XT_THREADS;
    const unsigned blocks = (unsigned)(want < (int64_t)MAX_BLOCKS ? want : MAX_BLOCKS);
    if (fz->table)
        fused_sweep_x_table<T, S><<<blocks, XT_THREADS, 0, st>>>(*s, *fz, nlines);
    else
        fused_sweep_x<T, S><<<blocks, XT_THREADS, 0, st>>>(*s, *fz, nlines);
}

template <typename T, typename S>
void launch(const adi_stage *s, const adi_fused *fz, int64_t nlines, cudaStream_t st)
{
    switch (s->axis) {
    case 0: launch_x<T, S>(s, fz, nlines, st); break;
    case 1: launch_axis<T, S, 1>(s, fz, nlines, st); break;
    default: launch_axis<T, S, 2>(s, fz, nlines, st); break;
    }
}

} // namespace

extern "C" tridi_status tridi_adi_cuda_fused_sweep(int device, const adi_stage *s, int f64, const adi_fused *fz,
                                                   void *stream)
{
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cuda_fail("cudaSetDevice", e);
    const int64_t nlines = s->n[0] * s->n[1] * s->n[2] / s->n[s->axis];
    if (f64)
        launch<double, double>(s, fz, nlines, (cudaStream_t)stream);
    else if (fz->narrow)
        launch<float, float>(s, fz, nlines, (cudaStream_t)stream);
    else
        launch<float, double>(s, fz, nlines, (cudaStream_t)stream);
    e = cudaGetLastError();
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("fused sweep launch", e);
}

extern "C" tridi_status tridi_adi_cuda_tables(int device, const adi_stage *s, int f64, double *aux, const int use[3],
                                              const double tdt[3], void *stream)
{
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cuda_fail("cudaSetDevice", e);
    cudaStream_t st = (cudaStream_t)stream;
    if (f64)
        tables_kernel<double><<<1, 3, 0, st>>>(*s, aux, use[0], use[1], use[2], tdt[0], tdt[1], tdt[2]);
    else
        tables_kernel<float><<<1, 3, 0, st>>>(*s, aux, use[0], use[1], use[2], tdt[0], tdt[1], tdt[2]);
    e = cudaGetLastError();
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("table kernel launch", e);
}

extern "C" tridi_status tridi_adi_cuda_aux_reset(int device, double *aux, size_t bytes)
{
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaMemset(aux, 0xff, bytes); // status ADI_STATUS_CLEAR, table dts NaN (never equal to a dt)
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("clearing the plan's status", e);
}

extern "C" tridi_status tridi_adi_cuda_status_take(int device, double *aux, unsigned long long *key)
{
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaMemcpy(key, aux, sizeof *key, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && *key != ADI_STATUS_CLEAR) { // rare: the clear must land before any later step
        e = cudaMemset(aux, 0xff, sizeof *key);
        if (e == cudaSuccess)
            e = cudaDeviceSynchronize();
    }
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("reading the plan's status", e);
}

extern "C" tridi_status tridi_adi_cuda_event_create(int device, void **event)
{
    *event = nullptr;
    cudaError_t e = cudaSetDevice(device);
    cudaEvent_t ev;
    if (e == cudaSuccess)
        e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e != cudaSuccess)
        return cuda_fail("cudaEventCreate", e);
    *event = ev;
    return TRIDI_SUCCESS;
}

extern "C" void tridi_adi_cuda_event_destroy(int device, void *event)
{
    if (cudaSetDevice(device) == cudaSuccess)
        cudaEventDestroy((cudaEvent_t)event);
}

extern "C" tridi_status tridi_adi_cuda_event_record(void *event, void *stream)
{
    // A stream being captured into a graph gets no record: the graph's replays are the caller's to wait for.
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    cudaError_t e = cudaStreamIsCapturing((cudaStream_t)stream, &cs);
    if (e == cudaSuccess && cs == cudaStreamCaptureStatusNone)
        e = cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream);
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("cudaEventRecord", e);
}

extern "C" tridi_status tridi_adi_cuda_event_sync(void *event)
{
    cudaError_t e = cudaEventSynchronize((cudaEvent_t)event);
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("cudaEventSynchronize", e);
}
