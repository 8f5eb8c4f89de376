// GPU benchmark of the CUDA backend. Every figure is a ratio to something measured in the same run:
//  - device-resident solves (tridi_solve_device, one call = solve kernel + guarded commit) against the
//    device copy bandwidth at minimum traffic (24 B/cell mixed, 40 f64, 20 f32), against the bare solve
//    kernel (the cost of the no-partial-answer guarantee), and against cuSPARSE (gtsv2StridedBatch for
//    x lines, gtsvInterleavedBatch for z lines, each on a compact box in its own layout);
//  - host-array solves (tridi_solve, MOHID's mixed precision), staged (arrays not registered) and registered
//    (tridi_host_register: DMA straight from/to the arrays), against the time to move their bytes at the
//    pinned H2D/D2H bandwidths, MOHID's sequential THOMAS and its 16-thread OpenMP version, and tridi's
//    CPU backend; the copy engines' speed on the shapes involved (one run, whole planes, row by row);
//  - assembly overlap, both modes: a host loop assembling each diagonal, uploaded (tridi_upload_async) as
//    soon as it is filled, against assembling everything and then solving (the plain call right after the
//    assembly loop, OpenMP threads asleep as in a model, not back to back); and the registered solve after
//    the GPU has idled 0.05 to 20 ms, the host busy, as a model's calls find it.
//  - device plans (--plans): the per-call cost of each solve contract on the same data, ON_ERROR_LINES
//    against ON_ERROR_CALL and SYNC against DEFERRED verdicts, against floor traffic at the copy bandwidth.
//  - FAST arithmetic (--fast): device plans under ON_ERROR_LINES with deferred verdicts, FAST against MOHID
//    arithmetic and cuSPARSE on the same data (y lines too: one gtsvInterleavedBatch per k slab), kernel-only
//    and per call, as % of the copy bandwidth at floor traffic; every row in three passes (--passes), raw rows
//    to --csv.
//  - streams of small solves (--graph; --fast adds them for its small grid): a plan's calls back to back as
//    launched and captured in a CUDA graph, per call against the floor-traffic time.
//  - --ncu: one plan solve per FAST-table row inside a profiler range, for bench/gpu/ncu_rows.sh.
// Times are medians after warm-up. Usage: tridi_bench_gpu [max_cells_for_sequential] [--resident | --host |
// --plans | --fast | --graph | --ncu] [--grid=NXxNYxNZ]... (default 2e7, resident and host parts, the five grids;
// in the host part a grid of NZ = 1 is a model's 2D call: its x and y lines).
extern "C" {
#include "mohid_reference.h"
}
#include "planner.h"
#include "tridi.h"
#include "tridi_internal.h"

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <cusparse.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

// The planner's entry points (cuda/planner.h) time the bare kernels.
using tridi_cuda::kernel_types;
using tridi_cuda::launch_solve;
using tridi_cuda::plan_needs_scratch;
using tridi_cuda::plan_solve;
using tridi_cuda::run_solve;

#define CUDA_OK(x)                                                                                       \
    do {                                                                                                 \
        cudaError_t e_ = (x);                                                                            \
        if (e_ != cudaSuccess) {                                                                         \
            std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));             \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)
#define TRIDI_OK(x)                                                                                      \
    do {                                                                                                 \
        tridi_status s_ = (x);                                                                           \
        if (s_ != TRIDI_SUCCESS) {                                                                       \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, tridi_status_name(s_),           \
                         tridi_error_message());                                                         \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)
#define SP_OK(x)                                                                                         \
    do {                                                                                                 \
        cusparseStatus_t s_ = (x);                                                                       \
        if (s_ != CUSPARSE_STATUS_SUCCESS) {                                                             \
            std::fprintf(stderr, "%s:%d: cuSPARSE status %d\n", __FILE__, __LINE__, (int)s_);            \
            std::exit(1);                                                                                \
        }                                                                                                \
    } while (0)

static double now() { return omp_get_wtime(); }

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Median GPU time of launch() over reps launches after two warm-ups (CUDA events around each); then reports
// a failing line the kernel recorded in err, and frees err.
template <class Launch>
static double time_launches(int reps, unsigned long long *err, const char *what, Launch &&launch)
{
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<double> t;
    for (int rep = 0; rep < reps + 2; ++rep) {
        cudaEventRecord(e0);
        launch();
        cudaEventRecord(e1);
        CUDA_OK(cudaEventSynchronize(e1));
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (rep >= 2)
            t.push_back(ms * 1e-3);
    }
    unsigned long long v;
    CUDA_OK(cudaMemcpy(&v, err, 8, cudaMemcpyDeviceToHost));
    if (v != ~0ull)
        std::printf("  (%s reported a failing line %llu)\n", what, v);
    cudaFree(err);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return median(t);
}

__host__ __device__ inline double hash01(uint64_t i, uint64_t salt)
{
    uint64_t z = i * 0x9E3779B97F4A7C15ull + salt * 0xBF58476D1CE4E5B9ull + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

// Diagonally dominant values: lower/upper in [-0.9, -0.1], diag = |l| + |u| + 0.5 + u, rhs in [-1, 1].
__host__ __device__ inline double value(int role, uint64_t i)
{
    double l = -0.1 - 0.8 * hash01(i, 1), u = -0.1 - 0.8 * hash01(i, 3);
    switch (role) {
    case 0: return l;
    case 2: return u;
    case 1: return -l - u + 0.5 + hash01(i, 2);
    default: return 2.0 * hash01(i, 4) - 1.0;
    }
}

template <class T>
__global__ void fill_kernel(T *p, int role, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        p[i] = (T)value(role, i);
}

template <class T>
static void fill_host(T *p, int role, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i)
        p[i] = (T)value(role, i);
}

struct bw {
    double d2d, h2d, d2h;
};

static bw measure_bandwidth()
{
    bw r{};
    const size_t bytes = (size_t)1 << 30;
    void *a, *b, *h;
    CUDA_OK(cudaMalloc(&a, bytes));
    CUDA_OK(cudaMalloc(&b, bytes));
    CUDA_OK(cudaMemset(a, 1, bytes));
    CUDA_OK(cudaHostAlloc(&h, bytes / 2, cudaHostAllocDefault));
    std::memset(h, 1, bytes / 2);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    auto timed = [&](void *dst, const void *src, size_t n, cudaMemcpyKind k) {
        std::vector<double> t;
        for (int rep = 0; rep < 7; ++rep) {
            cudaEventRecord(e0);
            cudaMemcpyAsync(dst, src, n, k);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (rep)
                t.push_back(ms * 1e-3);
        }
        return median(t);
    };
    r.d2d = 2.0 * bytes / timed(b, a, bytes, cudaMemcpyDeviceToDevice); // read + write
    r.h2d = (bytes / 2) / timed(a, h, bytes / 2, cudaMemcpyHostToDevice);
    r.d2h = (bytes / 2) / timed(h, a, bytes / 2, cudaMemcpyDeviceToHost);
    cudaFree(a);
    cudaFree(b);
    cudaFreeHost(h);
    return r;
}

struct grid3 {
    int nx, ny, nz;
};

static const char *tname(int combo) { return combo == 0 ? "f32" : combo == 1 ? "f64" : "mixed"; }
static int floor_bytes(int combo) { return combo == 0 ? 20 : combo == 1 ? 40 : 24; }

// The kernel a plan launches: FAST (decision 021), split, one thread per line with W/G on chip (line), in
// the global scratch (line+scr) or checkpointed (ckpt, decision 046).
static const char *plan_kernel_name(const tk_plan &p)
{
    return p.fast ? (p.contig ? "fast-staged" : "fast-strided")
           : p.split ? "split"
           : p.ckpt  ? "ckpt"
           : p.wgs   ? "line"
                     : "line+scr";
}

// The kernel family of the bare kernel's plans: the GPU context's TRIDI_CUDA_KERNEL, as its solves have it.
static tk_choice bare_choice{0, 0};

// The kernel operand types (lower/upper/rhs, diag, answer) of a template instance.
template <class T>
static tridi_dtype dtype_of()
{
    return sizeof(T) == 8 ? TRIDI_FLOAT64 : TRIDI_FLOAT32;
}

// The bare solve kernel on the caller's arrays into a compact box, launched as the backend does.
template <class TL, class TD, class TX>
static double time_bare_kernel(const tridi_grid &g, int axis, const void *D, const void *E, const void *F,
                               const void *R, void *box, double *scratch, int reps, bool *one_wave,
                               const char **kernel)
{
    const int64_t ext[3] = {g.ubound[0] - g.lbound[0] + 1, g.ubound[1] - g.lbound[1] + 1, g.ubound[2] - g.lbound[2] + 1};
    const int64_t str[3] = {1, ext[0], ext[0] * ext[1]};
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t n = ext[axis] - 2, n1 = ext[a1] - 2, n2 = ext[a2] - 2;
    tk_args a{};
    a.D = D;
    a.E = E;
    a.F = F;
    a.R = R;
    a.X = box;
    a.in = {str[0] + str[1] + str[2], str[a1], str[a2], str[axis]};
    a.out = axis == 0 ? tk_view{0, n, n * n1, 1} : tk_view{0, 1, n1 * n, n1};
    a.n = n;
    a.n1 = n1;
    a.l_begin = 0;
    a.l_count = n1 * n2;
    unsigned long long *err;
    CUDA_OK(cudaMalloc(&err, 8));
    CUDA_OK(cudaMemset(err, 0xff, 8));
    a.err = err;
    const bool contiguous = axis == 0;
    const kernel_types kt{dtype_of<TL>(), dtype_of<TD>(), dtype_of<TX>()};
    tk_plan plan;
    TRIDI_OK(plan_solve(bare_choice, kt, a, contiguous, true, &plan));
    a.scratch = scratch; // the launches plan again (no grid barrier), perhaps another kernel that needs it
    *one_wave = plan.coop; // what tridi_solve_device does: guard by a grid barrier, or box + commit
    *kernel = plan_kernel_name(plan);
    return time_launches(reps, err, "bare kernel", [&] { TRIDI_OK(launch_solve(bare_choice, kt, a, contiguous, 0)); });
}

// cuSPARSE on a compact box: x lines with gtsv2StridedBatch (systems contiguous, batchStride = n), z lines
// with gtsvInterleavedBatch (unknown m of system b at m*batch + b, the Fortran order of a compact box), y
// lines with gtsvInterleavedBatch once per k slab (in a slab of a compact box, unknown m of line i is at
// m*nx + i: nx interleaved systems; no transpose, nz calls of batch nx; nx: the box's first extent).
// Returns seconds per call (it solves in place: the answer of one call is the next call's rhs, whose
// size stays bounded for these diagonally dominant systems).
template <class T>
static double time_cusparse(cusparseHandle_t h, int axis, int64_t n, int64_t batch, int reps, int64_t nx = 0)
{
    const size_t cells = (size_t)(n * batch);
    const int64_t slabs = axis == 1 ? batch / nx : 1, per_call = axis == 1 ? nx : batch; // y: one call per k slab
    T *dl, *d, *du, *x;
    CUDA_OK(cudaMalloc(&dl, cells * sizeof(T)));
    CUDA_OK(cudaMalloc(&d, cells * sizeof(T)));
    CUDA_OK(cudaMalloc(&du, cells * sizeof(T)));
    CUDA_OK(cudaMalloc(&x, cells * sizeof(T)));
    fill_kernel<<<1024, 256>>>(dl, 0, cells);
    fill_kernel<<<1024, 256>>>(d, 1, cells);
    fill_kernel<<<1024, 256>>>(du, 2, cells);
    fill_kernel<<<1024, 256>>>(x, 3, cells);
    size_t wb = 0;
    const bool dbl = sizeof(T) == 8;
    if (axis == 0) {
        if (dbl)
            SP_OK(cusparseDgtsv2StridedBatch_bufferSizeExt(h, (int)n, (double *)dl, (double *)d, (double *)du,
                                                           (double *)x, (int)batch, (int)n, &wb));
        else
            SP_OK(cusparseSgtsv2StridedBatch_bufferSizeExt(h, (int)n, (float *)dl, (float *)d, (float *)du,
                                                           (float *)x, (int)batch, (int)n, &wb));
    } else {
        if (dbl)
            SP_OK(cusparseDgtsvInterleavedBatch_bufferSizeExt(h, 0, (int)n, (double *)dl, (double *)d, (double *)du,
                                                              (double *)x, (int)per_call, &wb));
        else
            SP_OK(cusparseSgtsvInterleavedBatch_bufferSizeExt(h, 0, (int)n, (float *)dl, (float *)d, (float *)du,
                                                              (float *)x, (int)per_call, &wb));
    }
    void *work;
    CUDA_OK(cudaMalloc(&work, wb ? wb : 1));
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<double> t;
    for (int rep = 0; rep < reps + 2; ++rep) {
        cudaEventRecord(e0);
        if (axis == 0) {
            if (dbl)
                SP_OK(cusparseDgtsv2StridedBatch(h, (int)n, (double *)dl, (double *)d, (double *)du, (double *)x,
                                                 (int)batch, (int)n, work));
            else
                SP_OK(cusparseSgtsv2StridedBatch(h, (int)n, (float *)dl, (float *)d, (float *)du, (float *)x,
                                                 (int)batch, (int)n, work));
        } else {
            for (int64_t k = 0; k < slabs; ++k) {
                const size_t o = (size_t)(k * n * per_call);
                if (dbl)
                    SP_OK(cusparseDgtsvInterleavedBatch(h, 0, (int)n, (double *)dl + o, (double *)d + o,
                                                        (double *)du + o, (double *)x + o, (int)per_call, work));
                else
                    SP_OK(cusparseSgtsvInterleavedBatch(h, 0, (int)n, (float *)dl + o, (float *)d + o,
                                                        (float *)du + o, (float *)x + o, (int)per_call, work));
            }
        }
        cudaEventRecord(e1);
        CUDA_OK(cudaEventSynchronize(e1));
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (rep >= 2)
            t.push_back(ms * 1e-3);
    }
    cudaFree(dl);
    cudaFree(d);
    cudaFree(du);
    cudaFree(x);
    cudaFree(work);
    return median(t);
}

// The five arrays of a combo (0 f32, 1 f64, 2 mixed: diag double, the rest float) on the device, cells
// each, filled with a diagonally dominant system; tl / td: the types of the four float-or-double arrays
// and of the diagonal.
static void alloc_system(tridi_context ctx, size_t cells, int combo, void *p[5], tridi_dtype *tl, tridi_dtype *td)
{
    *tl = combo == 1 ? TRIDI_FLOAT64 : TRIDI_FLOAT32;
    *td = combo == 0 ? TRIDI_FLOAT32 : TRIDI_FLOAT64;
    const size_t sl = *tl == TRIDI_FLOAT64 ? 8 : 4, sd = *td == TRIDI_FLOAT64 ? 8 : 4;
    for (int r = 0; r < 5; ++r) {
        const size_t es = r == 1 ? sd : sl;
        TRIDI_OK(tridi_device_alloc(ctx, cells * es, &p[r]));
        if (es == 8)
            fill_kernel<<<2048, 256>>>((double *)p[r], r, cells);
        else
            fill_kernel<<<2048, 256>>>((float *)p[r], r, cells);
    }
}

// Every grid of gs with every type combination (only_type: the one --type= selects, or -1), in table order.
template <class F>
static void for_each_case(const std::vector<grid3> &gs, int only_type, F &&fn)
{
    for (const grid3 &G : gs)
        for (int combo = 0; combo < 3; ++combo)
            if (only_type < 0 || combo == only_type)
                fn(G, combo);
}

// A grid's system on the device, filled by alloc_system: the grid (one-cell halo), its cell and box counts,
// the five arrays and their descriptor, and where asked a W/G scratch of 16 B a box cell for the bare
// kernels; every resident table starts from one.
struct device_system {
    tridi_grid g;
    size_t cells, box;
    void *p[5];
    tridi_dtype tl, td;
    tridi_arrays a;
    double *scratch;
};

static device_system make_system(tridi_context ctx, const grid3 &G, int combo, bool with_scratch = false)
{
    device_system s;
    s.scratch = nullptr;
    s.g = {3, {0, 0, 0}, {G.nx + 1, G.ny + 1, G.nz + 1}};
    s.cells = (size_t)(G.nx + 2) * (G.ny + 2) * (G.nz + 2);
    s.box = (size_t)G.nx * G.ny * G.nz;
    alloc_system(ctx, s.cells, combo, s.p, &s.tl, &s.td);
    if (with_scratch)
        CUDA_OK(cudaMalloc(&s.scratch, s.box * 16));
    CUDA_OK(cudaDeviceSynchronize());
    s.a = {s.p[0], s.tl, s.p[1], s.td, s.p[2], s.tl, s.p[3], s.tl, s.p[4], s.tl};
    return s;
}

static void free_system(tridi_context ctx, const device_system &s)
{
    for (int r = 0; r < 5; ++r)
        TRIDI_OK(tridi_device_free(ctx, s.p[r]));
    cudaFree(s.scratch);
}

// Seconds per call of a device plan with options o on arrays a (the box 1..n of grid g), calls back to back
// after three warm-up calls: the median of five runs of reps calls, each closed by tridi_plan_status.
static double time_plan(tridi_context ctx, const tridi_grid &g, int axis, const tridi_arrays &a,
                        const tridi_solve_options &o, int reps)
{
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {g.ubound[0] - 1, g.ubound[1] - 1, g.ubound[2] - 1};
    const tridi_dtype types[5] = {a.lower_type, a.diag_type, a.upper_type, a.rhs_type, a.x_type};
    tridi_plan plan;
    TRIDI_OK(tridi_plan_create(ctx, &g, (tridi_axis)axis, lo, hi, types, &o, &plan));
    for (int w = 0; w < 3; ++w)
        TRIDI_OK(tridi_plan_solve(plan, &a));
    TRIDI_OK(tridi_plan_status(plan));
    std::vector<double> t;
    for (int rep = 0; rep < 5; ++rep) {
        const double t0 = now();
        for (int k = 0; k < reps; ++k)
            TRIDI_OK(tridi_plan_solve(plan, &a));
        TRIDI_OK(tridi_plan_status(plan));
        t.push_back((now() - t0) / reps);
    }
    TRIDI_OK(tridi_plan_destroy(plan));
    return median(t);
}

// A device plan's options for the FAST table: per-line isolation, deferred verdicts, arithmetic arith.
static tridi_solve_options lines_deferred(tridi_arith arith)
{
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.memory = TRIDI_MEMORY_DEVICE;
    o.arith = arith;
    o.on_error = TRIDI_ON_ERROR_LINES;
    o.verdict = TRIDI_VERDICT_DEFERRED;
    return o;
}

static int only_axis = -1; // --axis: the resident table's rows of one axis; -1: all

static void resident(tridi_context ctx, cusparseHandle_t sp, const grid3 &G, const bw &B, int combo)
{
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {G.nx, G.ny, G.nz};
    const device_system s = make_system(ctx, G, combo, true);
    const tridi_grid &g = s.g;
    void *boxbuf;
    CUDA_OK(cudaMalloc(&boxbuf, s.box * (s.tl == TRIDI_FLOAT64 ? 8 : 4)));
    tridi_arrays a = s.a;
    const int reps = s.box < 2000000 ? 50 : s.box < 50000000 ? 10 : 5;
    for (int axis = 0; axis < 3; ++axis) {
        if (only_axis >= 0 && axis != only_axis)
            continue;
        const int64_t n = axis == 0 ? G.nx : axis == 1 ? G.ny : G.nz;
        for (int w = 0; w < 3; ++w)
            TRIDI_OK(tridi_solve_device(ctx, &g, (tridi_axis)axis, lo, hi, &a, nullptr));
        TRIDI_OK(tridi_synchronize(ctx));
        // Calls back to back, as a model's time loop issues them: per-call time includes launch overhead.
        std::vector<double> t;
        for (int rep = 0; rep < 5; ++rep) {
            double t0 = now();
            for (int k = 0; k < reps; ++k)
                TRIDI_OK(tridi_solve_device(ctx, &g, (tridi_axis)axis, lo, hi, &a, nullptr));
            TRIDI_OK(tridi_synchronize(ctx));
            t.push_back((now() - t0) / reps);
        }
        const double tc = median(t);
        double tk;
        bool one_wave = false;
        const char *kern = "";
        if (combo == 0)
            tk = time_bare_kernel<float, float, float>(g, axis, s.p[0], s.p[1], s.p[2], s.p[3], boxbuf, s.scratch, reps, &one_wave, &kern);
        else if (combo == 1)
            tk = time_bare_kernel<double, double, double>(g, axis, s.p[0], s.p[1], s.p[2], s.p[3], boxbuf, s.scratch, reps, &one_wave, &kern);
        else
            tk = time_bare_kernel<float, double, float>(g, axis, s.p[0], s.p[1], s.p[2], s.p[3], boxbuf, s.scratch, reps, &one_wave, &kern);
        const double bytes = (double)floor_bytes(combo) * s.box;
        char sp_col[64] = "-";
        if (combo != 2 && axis != 1) {
            const int64_t batch = (int64_t)(s.box / n);
            const double ts = combo == 0 ? time_cusparse<float>(sp, axis, n, batch, reps)
                                         : time_cusparse<double>(sp, axis, n, batch, reps);
            std::snprintf(sp_col, sizeof sp_col, "%9.1f %6.2fx", ts * 1e6, ts / tc);
        } else if (combo != 2) {
            std::snprintf(sp_col, sizeof sp_col, "%16s", "n/a (layout)");
        }
        std::printf("| %4dx%4dx%3d | %c | %-5s | %-8s | %-7s | %9.1f | %9.1f | %5.1f%% | %6.1f | %5.1f%% | %6.1f%% | %s |\n",
                    G.nx, G.ny, G.nz, "xyz"[axis], tname(combo), kern,
                    one_wave ? "barrier" : "commit", tc * 1e6, tk * 1e6,
                    100.0 * (tc / tk - 1.0), bytes / tc * 1e-9, 100.0 * bytes / tc / B.d2d, 100.0 * bytes / tk / B.d2d,
                    sp_col);
        std::fflush(stdout);
    }
    free_system(ctx, s);
    cudaFree(boxbuf);
}

// Device plans (tridi_plan_solve, calls back to back on device arrays): the cost of each contract, same data,
// same run: ON_ERROR_CALL (x unchanged on a failure: grid barrier in one wave, else answer box + commit
// kernel) against ON_ERROR_LINES (each line written once it succeeded: no box, no commit), each with a
// DEFERRED verdict (the call only enqueues; one tridi_plan_status after the batch) and a SYNC one (every call
// waits for its verdict).
static void plans(tridi_context ctx, const grid3 &G, const bw &B, int combo)
{
    const device_system s = make_system(ctx, G, combo);
    const tridi_grid &g = s.g;
    tridi_arrays a = s.a;
    const int reps = s.box < 2000000 ? 200 : s.box < 50000000 ? 10 : 5;
    for (int axis = 0; axis < 3; ++axis) {
        if (only_axis >= 0 && axis != only_axis)
            continue;
        double us[2][2]; // [on_error][verdict]
        for (int oe = 0; oe < 2; ++oe)
            for (int v = 0; v < 2; ++v) {
                tridi_solve_options o;
                tridi_solve_options_init(&o);
                o.memory = TRIDI_MEMORY_DEVICE;
                o.on_error = oe ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES;
                o.verdict = v ? TRIDI_VERDICT_DEFERRED : TRIDI_VERDICT_SYNC;
                us[oe][v] = time_plan(ctx, g, axis, a, o, reps) * 1e6;
            }
        const double bytes = (double)floor_bytes(combo) * s.box, floor_us = bytes / B.d2d * 1e6;
        std::printf("| %4dx%4dx%3d | %c | %-5s | %8.1f | %8.1f | %5.2f | %8.1f | %8.1f | %5.2f | %6.1f | %5.2f | %5.2f |\n",
                    G.nx, G.ny, G.nz, "xyz"[axis], tname(combo), us[1][1], us[0][1], us[1][1] / us[0][1], us[0][0],
                    us[0][1], us[0][0] / us[0][1], floor_us, us[0][1] / floor_us, us[1][1] / floor_us);
        std::fflush(stdout);
    }
    free_system(ctx, s);
}

// MOHID-like assembly of one diagonal: a sequential host loop over the box writing each cell from a few
// flops of its indices (the model's own work the upload should hide behind).
template <class T>
static void assemble(T *a, int role, const tridi_grid &g, double phase)
{
    const int64_t e0 = g.ubound[0] - g.lbound[0] + 1, e1 = g.ubound[1] - g.lbound[1] + 1;
    for (int64_t k = 1; k < g.ubound[2]; ++k)
        for (int64_t j = 1; j < g.ubound[1]; ++j)
            for (int64_t i = 1; i < g.ubound[0]; ++i) {
                const double s = 0.001 * (double)(i + 3 * j + 7 * k) + phase;
                const double fr = s - std::floor(s);
                double v = role == 0 || role == 2 ? -0.1 - 0.8 * fr : role == 1 ? 2.2 + fr : 2.0 * fr - 1.0;
                a[i + e0 * (j + e1 * k)] = (T)v;
            }
}

// Median time of one host-array call on gpu, and the assembly-overlap figures of the same mode: a host loop
// assembles each diagonal and tridi_upload_async sends it at once. What the model waits for is the time inside
// tridi's calls (the four uploads + the solve); without overlap it is the plain call made right after the
// same assembly loop, ta (where a model calls: its OpenMP threads have gone to sleep during the serial loop,
// unlike in back-to-back calls). The upload share hidden = (ta - calls) / (ta - solve alone), "solve alone"
// being the solve once everything is on the device.
struct host_mode {
    double call, after_assembly, in_calls, in_uploads, assembly, solve_alone, hidden;
};

template <class F>
static double median_time(F &&fn, int reps)
{
    fn();
    std::vector<double> t;
    for (int k = 0; k < reps; ++k) {
        double t0 = now();
        fn();
        t.push_back(now() - t0);
    }
    return median(t);
}

static host_mode measure_host_mode(tridi_context gpu, const tridi_grid &g, int axis, const int64_t lo[3],
                                   const int64_t hi[3], float *D, double *E, float *F, float *R, const tridi_arrays &a,
                                   int reps)
{
    host_mode m{};
    const tridi_axis ax = (tridi_axis)axis;
    m.call = median_time([&] { TRIDI_OK(tridi_solve(gpu, &g, ax, lo, hi, &a)); }, reps);
    double ph = 0.0;
    std::vector<double> tc, ta, tu;
    for (int k = 0; k < reps + 1; ++k) {
        double in_calls = 0.0, in_asm = 0.0, t0;
        ph += 0.01;
        t0 = now(); assemble(D, 0, g, ph); in_asm += now() - t0;
        t0 = now(); TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_LOWER, D, TRIDI_FLOAT32)); in_calls += now() - t0;
        t0 = now(); assemble(E, 1, g, ph); in_asm += now() - t0;
        t0 = now(); TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_DIAG, E, TRIDI_FLOAT64)); in_calls += now() - t0;
        t0 = now(); assemble(F, 2, g, ph); in_asm += now() - t0;
        t0 = now(); TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_UPPER, F, TRIDI_FLOAT32)); in_calls += now() - t0;
        t0 = now(); assemble(R, 3, g, ph); in_asm += now() - t0;
        t0 = now(); TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_RHS, R, TRIDI_FLOAT32)); in_calls += now() - t0;
        const double in_up = in_calls;
        t0 = now(); TRIDI_OK(tridi_solve(gpu, &g, ax, lo, hi, &a)); in_calls += now() - t0;
        if (k) {
            tc.push_back(in_calls);
            ta.push_back(in_asm);
            tu.push_back(in_up);
        }
    }
    m.in_calls = median(tc);
    m.assembly = median(ta);
    m.in_uploads = median(tu);
    std::vector<double> tp;
    for (int k = 0; k < reps + 1; ++k) {
        ph += 0.01;
        assemble(D, 0, g, ph);
        assemble(E, 1, g, ph);
        assemble(F, 2, g, ph);
        assemble(R, 3, g, ph);
        const double t0 = now();
        TRIDI_OK(tridi_solve(gpu, &g, ax, lo, hi, &a));
        if (k)
            tp.push_back(now() - t0);
    }
    m.after_assembly = median(tp);
    std::vector<double> tt;
    for (int k = 0; k < reps; ++k) {
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_LOWER, D, TRIDI_FLOAT32));
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_DIAG, E, TRIDI_FLOAT64));
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_UPPER, F, TRIDI_FLOAT32));
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_RHS, R, TRIDI_FLOAT32));
        // tridi's upload thread queues the copies (docs/decisions/033), within a millisecond or two of the
        // posts; then the device has them all once it is idle. Waited for busy, as the model's assembly
        // keeps its core: a core that slept makes the solve that follows slower than after an assembly.
        for (const double t1 = now() + 0.02; now() < t1;)
            ;
        CUDA_OK(cudaDeviceSynchronize());
        double t0 = now();
        TRIDI_OK(tridi_solve(gpu, &g, ax, lo, hi, &a));
        tt.push_back(now() - t0);
    }
    m.solve_alone = median(tt);
    m.hidden = (m.after_assembly - m.in_calls) / (m.after_assembly - m.solve_alone);
    return m;
}

// The solve of registered arrays as MOHID's adapter makes it (D, E and F uploaded ahead, the rhs sent by the
// call, all or nothing) after the GPU has had nothing to do for `ms` while the host stayed busy without
// touching memory: a model calls tridi after milliseconds of its own work, and a GPU left idle that long
// answers its next call later (docs/performance.md, "flow_channel inside the model").
static double solve_after_idle(tridi_context gpu, const tridi_grid &g, int axis, const int64_t lo[3],
                               const int64_t hi[3], float *D, double *E, float *F, const tridi_arrays &a, double ms,
                               int reps)
{
    const tridi_axis ax = (tridi_axis)axis;
    std::vector<double> t;
    for (int k = 0; k < reps + 1; ++k) {
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_LOWER, D, TRIDI_FLOAT32));
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_DIAG, E, TRIDI_FLOAT64));
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_UPPER, F, TRIDI_FLOAT32));
        for (const double t1 = now() + ms * 1e-3; now() < t1;)
            ;
        const double t0 = now();
        TRIDI_OK(tridi_solve(gpu, &g, ax, lo, hi, &a));
        if (k)
            t.push_back(now() - t0);
    }
    return median(t);
}

// The bare transfers of such a call after the same idle, as a reference measured beside it: the rhs box up
// and the answer box down (pinned buffers, one stream), no tridi, no kernel.
static double bare_after_idle(void *pinned, void *dev, size_t bytes, cudaStream_t s, double ms, int reps)
{
    std::vector<double> t;
    for (int k = 0; k < reps + 1; ++k) {
        for (const double t1 = now() + ms * 1e-3; now() < t1;)
            ;
        const double t0 = now();
        CUDA_OK(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, s));
        CUDA_OK(cudaMemcpyAsync(pinned, dev, bytes, cudaMemcpyDeviceToHost, s));
        CUDA_OK(cudaStreamSynchronize(s));
        if (k)
            t.push_back(now() - t0);
    }
    return median(t);
}

// gpu_call: a GPU context whose solves are all or nothing (TRIDI_ON_ERROR_CALL, the MOHID adapter's contract),
// whose answers reach a registered x by another path (docs/decisions/010, 037): its overlap is timed beside.
static void host_arrays(tridi_context gpu, tridi_context gpu_call, tridi_context cpu, tridi_context autoc, const grid3 &G,
                        const bw &B, double max_seq_cells)
{
    tridi_grid g = {3, {0, 0, 0}, {G.nx + 1, G.ny + 1, G.nz + 1}};
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {G.nx, G.ny, G.nz};
    const size_t cells = (size_t)(G.nx + 2) * (G.ny + 2) * (G.nz + 2), box = (size_t)G.nx * G.ny * G.nz;
    float *D = (float *)std::malloc(cells * 4), *F = (float *)std::malloc(cells * 4), *R = (float *)std::malloc(cells * 4),
          *X = (float *)std::malloc(cells * 4);
    double *E = (double *)std::malloc(cells * 8);
    fill_host(D, 0, cells);
    fill_host(E, 1, cells);
    fill_host(F, 2, cells);
    fill_host(R, 3, cells);
    fill_host(X, 3, cells);
    tridi_arrays a = {D, TRIDI_FLOAT32, E, TRIDI_FLOAT64, F, TRIDI_FLOAT32, R, TRIDI_FLOAT32, X, TRIDI_FLOAT32};
    void *arr[5] = {D, E, F, R, X};
    const size_t bytes[5] = {cells * 4, cells * 8, cells * 4, cells * 4, cells * 4};
    mohid_grid mg = {{0, 0, 0}, {G.nx + 1, G.ny + 1, G.nz + 1}};
    const int reps = box < 2000000 ? 15 : box < 50000000 ? 5 : 3;
    const double pinned = 20.0 * box / B.h2d + 4.0 * box / B.d2h;
    void *bare_h = nullptr, *bare_d = nullptr;
    cudaStream_t bare_s = nullptr;
    CUDA_OK(cudaMallocHost(&bare_h, box * 4));
    CUDA_OK(cudaMalloc(&bare_d, box * 4));
    CUDA_OK(cudaStreamCreateWithFlags(&bare_s, cudaStreamNonBlocking));
    std::memset(bare_h, 0, box * 4);
    for (int axis = 0; axis < 3; ++axis) {
        if (axis == 2 && G.nz == 1) // a grid of one plane: a model's 2D call (THOMAS_2D), x and y lines only
            continue;
        const host_mode st = measure_host_mode(gpu, g, axis, lo, hi, D, E, F, R, a, reps);
        for (int r = 0; r < 5; ++r)
            TRIDI_OK(tridi_host_register(gpu, arr[r], bytes[r]));
        const host_mode rg = measure_host_mode(gpu, g, axis, lo, hi, D, E, F, R, a, reps);
        for (int r = 0; r < 5; ++r) {
            TRIDI_OK(tridi_host_unregister(gpu, arr[r]));
            TRIDI_OK(tridi_host_register(gpu_call, arr[r], bytes[r]));
        }
        const host_mode rc = measure_host_mode(gpu_call, g, axis, lo, hi, D, E, F, R, a, reps);
        const double idle_ms[4] = {0.05, 1.0, 5.0, 20.0};
        double after_idle[4], bare_idle[4];
        for (int i = 0; i < 4; ++i) {
            after_idle[i] = solve_after_idle(gpu_call, g, axis, lo, hi, D, E, F, a, idle_ms[i], std::min(reps, 9));
            bare_idle[i] = bare_after_idle(bare_h, bare_d, box * 4, bare_s, idle_ms[i], std::min(reps, 9));
        }
        for (int r = 0; r < 5; ++r)
            TRIDI_OK(tridi_host_unregister(gpu_call, arr[r]));
        const double tcpu = median_time([&] { TRIDI_OK(tridi_solve(cpu, &g, (tridi_axis)axis, lo, hi, &a)); }, reps);
        // AUTO (docs/decisions/018) on the same arrays, not registered and registered with its own context: its
        // time against the faster of the two paths it chooses between (its choice is stated on stderr).
        auto on_auto = [&] { TRIDI_OK(tridi_solve(autoc, &g, (tridi_axis)axis, lo, hi, &a)); };
        const double tauto_st = median_time(on_auto, reps);
        for (int r = 0; r < 5; ++r)
            TRIDI_OK(tridi_host_register(autoc, arr[r], bytes[r]));
        const double tauto_rg = median_time(on_auto, reps);
        for (int r = 0; r < 5; ++r)
            TRIDI_OK(tridi_host_unregister(autoc, arr[r]));
        const double tomp = median_time([&] { mohid_thomas(&mg, axis, lo, hi, D, E, F, R, X, 16); }, reps);
        double tseq = NAN;
        if ((double)box <= max_seq_cells)
            tseq = median_time([&] { mohid_thomas(&mg, axis, lo, hi, D, E, F, R, X, 1); }, box < 2000000 ? 5 : 1);
        std::printf("| %4dx%4dx%3d | %c | %7.3f | %5.2fx | %7.3f | %5.2fx | %6.1fx | %5.2fx | %5.2fx | %8.3f | %4.0f%% | "
                    "%4.0f%% |\n",
                    G.nx, G.ny, G.nz, "xyz"[axis], st.call * 1e3, st.call / pinned, rg.call * 1e3, rg.call / pinned,
                    tseq / rg.call, tomp / rg.call, tcpu / rg.call, rg.assembly * 1e3, 100.0 * st.hidden,
                    100.0 * rg.hidden);
        std::printf("|   (MOHID seq %.3f ms, OMP16 %.3f ms, tridi CPU %.3f ms; staged: call after assembly %.3f ms, in "
                    "calls %.3f ms of which uploads %.3f, solve alone %.3f; registered: call after assembly %.3f ms, "
                    "in calls %.3f ms of which uploads %.3f, solve alone %.3f) |\n",
                    tseq * 1e3, tomp * 1e3, tcpu * 1e3, st.after_assembly * 1e3, st.in_calls * 1e3,
                    st.in_uploads * 1e3, st.solve_alone * 1e3, rg.after_assembly * 1e3, rg.in_calls * 1e3,
                    rg.in_uploads * 1e3, rg.solve_alone * 1e3);
        std::printf("|   (registered, all or nothing (TRIDI_ON_ERROR_CALL): call after assembly %.3f ms, in calls %.3f ms of "
                    "which uploads %.3f, solve alone %.3f, hidden %.0f%%) |\n",
                    rc.after_assembly * 1e3, rc.in_calls * 1e3, rc.in_uploads * 1e3, rc.solve_alone * 1e3,
                    100.0 * rc.hidden);
        std::printf("|   (registered, all or nothing, D, E and F uploaded ahead, the rhs by the call: solve after the GPU "
                    "idled 0.05 / 1 / 5 / 20 ms: %.3f / %.3f / %.3f / %.3f ms; the bare rhs up and answers down "
                    "after the same idle: %.3f / %.3f / %.3f / %.3f ms) |\n",
                    after_idle[0] * 1e3, after_idle[1] * 1e3, after_idle[2] * 1e3, after_idle[3] * 1e3,
                    bare_idle[0] * 1e3, bare_idle[1] * 1e3, bare_idle[2] * 1e3, bare_idle[3] * 1e3);
        std::printf("|   (AUTO, 16 threads: staged %.3f ms, %.2fx the faster of staged and tridi CPU; registered %.3f "
                    "ms, %.2fx the faster of registered and tridi CPU) |\n",
                    tauto_st * 1e3, tauto_st / std::min(st.call, tcpu), tauto_rg * 1e3,
                    tauto_rg / std::min(rg.call, tcpu));
        std::fflush(stdout);
    }
    std::free(D);
    std::free(E);
    std::free(F);
    std::free(R);
    std::free(X);
    CUDA_OK(cudaStreamDestroy(bare_s));
    CUDA_OK(cudaFree(bare_d));
    CUDA_OK(cudaFreeHost(bare_h));
}

// How the copy engines move a box of G's floats (arrays with a one-cell halo) between a registered host array
// and the device: the same bytes as one contiguous run, the box widened to whole rows (one run per k-plane,
// consecutive planes joined: what tridi does), and the box row by row (rows of nx floats); GB/s of box bytes.
static void transfer_shapes(const grid3 &G)
{
    const int64_t e0 = G.nx + 2, e1 = G.ny + 2, e2 = G.nz + 2;
    const size_t cells = (size_t)(e0 * e1 * e2), boxb = (size_t)G.nx * G.ny * G.nz * 4;
    float *h = (float *)std::malloc(cells * 4);
    fill_host(h, 3, cells);
    CUDA_OK(cudaHostRegister(h, cells * 4, cudaHostRegisterPortable));
    void *d;
    CUDA_OK(cudaMalloc(&d, cells * 4));
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    auto timed = [&](auto &&copy) {
        std::vector<double> t;
        for (int rep = 0; rep < 9; ++rep) {
            cudaEventRecord(t0);
            CUDA_OK(copy());
            cudaEventRecord(t1);
            CUDA_OK(cudaEventSynchronize(t1));
            float ms;
            cudaEventElapsedTime(&ms, t0, t1);
            if (rep >= 2)
                t.push_back(ms * 1e-3);
        }
        return boxb / median(t) * 1e-9;
    };
    char *hb = (char *)(h + 1 + e0 + e0 * e1); // box cell (1,1,1)
    char *hw = (char *)(h + e0 * e1);          // widened box: planes 1..nz whole
    auto box3d = [&](cudaMemcpyKind k) {
        cudaMemcpy3DParms m{};
        void *hp = hb, *dp = d;
        m.srcPtr = k == cudaMemcpyHostToDevice ? make_cudaPitchedPtr(hp, e0 * 4, e0 * 4, e1)
                                               : make_cudaPitchedPtr(dp, G.nx * 4, G.nx * 4, G.ny);
        m.dstPtr = k == cudaMemcpyHostToDevice ? make_cudaPitchedPtr(dp, G.nx * 4, G.nx * 4, G.ny)
                                               : make_cudaPitchedPtr(hp, e0 * 4, e0 * 4, e1);
        m.extent = make_cudaExtent(G.nx * 4, G.ny, G.nz);
        m.kind = k;
        return cudaMemcpy3DAsync(&m, 0);
    };
    const double up_run = timed([&] { return cudaMemcpyAsync(d, hb, boxb, cudaMemcpyHostToDevice, 0); });
    const double up_wide = timed([&] { return cudaMemcpyAsync(d, hw, (size_t)(e0 * e1 * G.nz) * 4, cudaMemcpyHostToDevice, 0); });
    const double up_rows = timed([&] { return box3d(cudaMemcpyHostToDevice); });
    const double down_run = timed([&] { return cudaMemcpyAsync(hb, d, boxb, cudaMemcpyDeviceToHost, 0); });
    const double down_rows = timed([&] { return box3d(cudaMemcpyDeviceToHost); });
    std::printf("| %dx%dx%d | %.1f | %.1f | %.1f | %.1f | %.1f |\n", G.nx, G.ny, G.nz, up_run, up_wide, up_rows, down_run,
                down_rows);
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    CUDA_OK(cudaHostUnregister(h));
    cudaFree(d);
    std::free(h);
}

// ---- FAST rows (--fast, issue 27) -------------------------------------------------------------------------
// Device plans under ON_ERROR_LINES with DEFERRED verdicts (calls back to back, one tridi_plan_status per
// batch), FAST against MOHID arithmetic on the same data; the bare kernels the planner picks for each (into x,
// no verdict); cuSPARSE on the same data and precision in the layout its routines need: x lines
// gtsv2StridedBatch, z lines gtsvInterleavedBatch, y lines gtsvInterleavedBatch once per k slab of a compact
// box (a slab's y lines are interleaved: no transpose, nz calls). Every row measured in g_passes passes; the
// table shows the median of the three (range of the per-call %), the CSV (--csv=FILE) every pass.
static FILE *g_csv;
static int g_passes = 3; // --passes: the FAST and graph tables' passes per row (fewer: a shorter run)
static std::string g_csv_head; // device,date,commit, (bench/results/README.md's schema)

// One row of bench/results/README.md's schema: the range of a figure over the passes (value_max empty when
// there is one figure).
static void csv_row(const grid3 &G, const char *type, char axis, const char *metric, double lo, double hi,
                    const char *unit)
{
    if (!g_csv)
        return;
    char range[64] = "";
    if (hi != lo)
        std::snprintf(range, sizeof range, "%.4g", hi);
    std::fprintf(g_csv, "%s%dx%dx%d,%s,%c,%s,%.4g,%s,%s\n", g_csv_head.c_str(), G.nx, G.ny, G.nz, type, axis, metric, lo,
                 range, unit);
    std::fflush(g_csv);
}

// Seconds of the planner's kernel for a LINES solve of the box into x in place (FAST or MOHID arithmetic),
// launched bare; *kern names it.
static double time_kernel(const tridi_grid &g, int axis, const tridi_arrays &arr, bool fast, double *scratch, int reps,
                          const char **kern)
{
    const int64_t ext[3] = {g.ubound[0] - g.lbound[0] + 1, g.ubound[1] - g.lbound[1] + 1, g.ubound[2] - g.lbound[2] + 1};
    const int64_t str[3] = {1, ext[0], ext[0] * ext[1]};
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    tk_args a{};
    a.D = arr.lower;
    a.E = arr.diag;
    a.F = arr.upper;
    a.R = arr.rhs;
    a.X = arr.x;
    a.in = {str[0] + str[1] + str[2], str[a1], str[a2], str[axis]};
    a.out = a.in;
    a.n = ext[axis] - 2;
    a.n1 = ext[a1] - 2;
    a.l_count = a.n1 * (ext[a2] - 2);
    unsigned long long *err;
    CUDA_OK(cudaMalloc(&err, 8));
    CUDA_OK(cudaMemset(err, 0xff, 8));
    a.err = err;
    kernel_types kt{arr.lower_type, arr.diag_type, arr.x_type};
    kt.fast = fast;
    kt.arith = fast ? TK_AR_RCP : TK_AR_MOHID; // as types_of makes them (decision 041)
    tk_plan plan;
    TRIDI_OK(plan_solve(bare_choice, kt, a, axis == 0, false, &plan));
    a.scratch = plan_needs_scratch(plan, a.n) ? scratch : nullptr;
    *kern = plan_kernel_name(plan);
    return time_launches(reps, err, "kernel", [&] { TRIDI_OK(run_solve(kt, a, plan, 0)); });
}

static void fast_rows(tridi_context ctx, cusparseHandle_t sp, const grid3 &G, const bw &B, int combo)
{
    const device_system s = make_system(ctx, G, combo, true);
    const tridi_grid &g = s.g;
    const tridi_arrays a = s.a;
    const int reps = s.box < 2000000 ? 50 : s.box < 50000000 ? 10 : 5;
    const double bytes = (double)floor_bytes(combo) * s.box;
    for (int axis = 0; axis < 3; ++axis) {
        if (only_axis >= 0 && axis != only_axis)
            continue;
        const int64_t n = axis == 0 ? G.nx : axis == 1 ? G.ny : G.nz;
        double ts = 0.0;
        if (combo != 2) {
            const int64_t batch = (int64_t)(s.box / n);
            ts = combo == 0 ? time_cusparse<float>(sp, axis, n, batch, reps, G.nx)
                            : time_cusparse<double>(sp, axis, n, batch, reps, G.nx);
        }
        std::vector<double> kf, cf, cm, km;
        const char *kfn = "-", *kmn = "";
        for (int pass = 0; pass < g_passes; ++pass) {
            if (combo != 2) {
                kf.push_back(time_kernel(g, axis, a, true, s.scratch, reps, &kfn));
                cf.push_back(time_plan(ctx, g, axis, a, lines_deferred(TRIDI_ARITH_FAST), reps));
            }
            cm.push_back(time_plan(ctx, g, axis, a, lines_deferred(TRIDI_ARITH_MOHID), reps));
            km.push_back(time_kernel(g, axis, a, false, s.scratch, reps, &kmn));
        }
        const double mcm = median(cm), mkm = median(km);
        auto pct = [&](double t) { return 100.0 * bytes / t / B.d2d; };
        // every pass's figures as a range: times in us, shares of the copy bandwidth
        auto rows = [&](const char *metric, const std::vector<double> &t) {
            const double lo = *std::min_element(t.begin(), t.end()), hi = *std::max_element(t.begin(), t.end());
            char m[64];
            std::snprintf(m, sizeof m, "%s_us", metric);
            csv_row(G, tname(combo), "xyz"[axis], m, lo * 1e6, hi * 1e6, "us");
            std::snprintf(m, sizeof m, "%s_pct_copy", metric);
            csv_row(G, tname(combo), "xyz"[axis], m, pct(hi), pct(lo), "%");
        };
        if (combo != 2) {
            rows("fast_kernel", kf);
            rows("fast_call", cf);
            csv_row(G, tname(combo), "xyz"[axis], "cusparse_us", ts * 1e6, ts * 1e6, "us");
            csv_row(G, tname(combo), "xyz"[axis], "cusparse_over_fast_call", ts / median(cf), ts / median(cf), "ratio");
        }
        rows("mohid_kernel", km);
        rows("mohid_call", cm);
        if (combo == 2) {
            std::printf("| %dx%dx%d | %s | %c | - | - | - | - | %.1f (%s %.1f) | %.0f%% | - | - |\n", G.nx, G.ny, G.nz,
                        tname(combo), "xyz"[axis], mcm * 1e6, kmn, mkm * 1e6, pct(mcm));
        } else {
            const double mkf = median(kf), mcf = median(cf);
            const double lo = pct(*std::max_element(cf.begin(), cf.end())), hi = pct(*std::min_element(cf.begin(), cf.end()));
            std::printf("| %dx%dx%d | %s | %c | %s | %.1f | %.1f | %.0f%% | %.0f%% (%.0f-%.0f) | %.1f (%s %.1f) | %.0f%% | %.2fx "
                        "| %.1f | %.2fx |\n",
                        G.nx, G.ny, G.nz, tname(combo), "xyz"[axis], kfn, mkf * 1e6, mcf * 1e6, pct(mkf), pct(mcf), lo,
                        hi, mcm * 1e6, kmn, mkm * 1e6, pct(mcm), mcm / mcf, ts * 1e6, ts / mcf);
        }
        std::fflush(stdout);
    }
    free_system(ctx, s);
}

// ---- Streams of small solves (--graph, and in --fast on the 140x140x56 grid; issue 27's target 3) -------
// A plan on the caller's stream (ON_ERROR_LINES, DEFERRED verdicts; FAST f32 and f64, MOHID mixed): calls
// back to back as launched (reps calls between two events, then one tridi_plan_status), and the same calls
// captured in a CUDA graph (per_graph solves, replayed reps / per_graph times between two events). Before
// timing, x is poisoned (NaN) for each path and the captured answers must equal the launched ones bit for
// bit. Per call: event time / calls; floor: floor traffic at the device copy bandwidth.
static void graph_rows(tridi_context ctx, const grid3 &G, const bw &B, int combo)
{
    const device_system s = make_system(ctx, G, combo);
    const tridi_grid &g = s.g;
    const size_t xbytes = s.cells * (s.tl == TRIDI_FLOAT64 ? 8 : 4);
    void *want;
    CUDA_OK(cudaMalloc(&want, xbytes));
    CUDA_OK(cudaDeviceSynchronize());
    const tridi_arrays a = s.a;
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {G.nx, G.ny, G.nz};
    const tridi_dtype types[5] = {s.tl, s.td, s.tl, s.tl, s.tl};
    const double floor_us = (double)floor_bytes(combo) * s.box / B.d2d * 1e6;
    const int reps = s.box < 2000000 ? 200 : 20, per_graph = s.box < 2000000 ? 20 : 5; // reps < NSLOT: no retire inside
    cudaStream_t st;
    CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    auto elapsed = [&] {
        CUDA_OK(cudaEventSynchronize(e1));
        float ms;
        CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
        return ms * 1e3;
    };
    const tridi_arith arith = combo == 2 ? TRIDI_ARITH_MOHID : TRIDI_ARITH_FAST;
    for (int axis = 0; axis < 3; ++axis) {
        if (only_axis >= 0 && axis != only_axis)
            continue;
        tridi_solve_options o = lines_deferred(arith);
        o.stream = st;
        tridi_plan plan;
        TRIDI_OK(tridi_plan_create(ctx, &g, (tridi_axis)axis, lo, hi, types, &o, &plan));
        // the launched answers, then the captured ones, each into a poisoned x
        CUDA_OK(cudaMemsetAsync(s.p[4], 0xff, xbytes, st));
        TRIDI_OK(tridi_plan_solve(plan, &a));
        CUDA_OK(cudaStreamSynchronize(st));
        TRIDI_OK(tridi_plan_status(plan));
        CUDA_OK(cudaMemcpy(want, s.p[4], xbytes, cudaMemcpyDeviceToDevice));
        CUDA_OK(cudaMemsetAsync(s.p[4], 0xff, xbytes, st));
        CUDA_OK(cudaStreamSynchronize(st));
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (int k = 0; k < per_graph; ++k)
            TRIDI_OK(tridi_plan_solve(plan, &a));
        CUDA_OK(cudaStreamEndCapture(st, &graph));
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        CUDA_OK(cudaGraphLaunch(exec, st));
        CUDA_OK(cudaStreamSynchronize(st));
        TRIDI_OK(tridi_plan_status(plan));
        {
            std::vector<char> h1(xbytes), h2(xbytes);
            CUDA_OK(cudaMemcpy(h1.data(), want, xbytes, cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemcpy(h2.data(), s.p[4], xbytes, cudaMemcpyDeviceToHost));
            if (std::memcmp(h1.data(), h2.data(), xbytes)) {
                std::fprintf(stderr, "tridi_bench_gpu: %dx%dx%d %s %c: the graph's answers differ from the launched "
                             "ones\n", G.nx, G.ny, G.nz, tname(combo), "xyz"[axis]);
                std::exit(1);
            }
        }
        std::vector<double> tl_us, tg_us;
        for (int pass = 0; pass < g_passes; ++pass) {
            std::vector<double> t1, t2;
            for (int rep = 0; rep < 5; ++rep) {
                CUDA_OK(cudaEventRecord(e0, st));
                for (int k = 0; k < reps; ++k)
                    TRIDI_OK(tridi_plan_solve(plan, &a));
                CUDA_OK(cudaEventRecord(e1, st));
                t1.push_back(elapsed() / reps);
                TRIDI_OK(tridi_plan_status(plan));
                CUDA_OK(cudaEventRecord(e0, st));
                for (int k = 0; k < reps / per_graph; ++k)
                    CUDA_OK(cudaGraphLaunch(exec, st));
                CUDA_OK(cudaEventRecord(e1, st));
                t2.push_back(elapsed() / (reps / per_graph * per_graph));
            }
            tl_us.push_back(median(t1));
            tg_us.push_back(median(t2));
        }
        TRIDI_OK(tridi_plan_status(plan));
        CUDA_OK(cudaGraphExecDestroy(exec));
        CUDA_OK(cudaGraphDestroy(graph));
        TRIDI_OK(tridi_plan_destroy(plan));
        auto range = [&](const char *metric, const std::vector<double> &t, double scale, const char *unit) {
            csv_row(G, tname(combo), "xyz"[axis], metric, *std::min_element(t.begin(), t.end()) * scale,
                    *std::max_element(t.begin(), t.end()) * scale, unit);
        };
        range("stream_call_us", tl_us, 1.0, "us");
        range("stream_call_over_floor", tl_us, 1.0 / floor_us, "ratio");
        range("graph_call_us", tg_us, 1.0, "us");
        range("graph_call_over_floor", tg_us, 1.0 / floor_us, "ratio");
        const double ml = median(tl_us), mg = median(tg_us);
        std::printf("| %dx%dx%d | %s | %s | %c | %.1f | %.1f | %.2fx | %.1f | %.2fx | %.2f |\n", G.nx, G.ny, G.nz,
                    tname(combo), combo == 2 ? "MOHID" : "FAST", "xyz"[axis], floor_us, ml, ml / floor_us, mg,
                    mg / floor_us, mg / ml);
        std::fflush(stdout);
    }
    CUDA_OK(cudaEventDestroy(e0));
    CUDA_OK(cudaEventDestroy(e1));
    CUDA_OK(cudaStreamDestroy(st));
    cudaFree(want);
    free_system(ctx, s);
}

// ---- One solve per row under the profiler (--ncu: bench/gpu/ncu_rows.sh) -----------------------------
// For every row of the FAST table's selection (FAST for f32 and f64, MOHID for the mixed type): the plan of
// the table (ON_ERROR_LINES, DEFERRED), three warm-up calls, then one call between cudaProfilerStart and
// cudaProfilerStop, so that `ncu --profile-from-start off` profiles exactly that call's kernel. A line
// "ncu_row,<grid>,<type>,<axis>,<arith>,<kernel>" per row, in the profiled order.
static void ncu_rows(tridi_context ctx, const grid3 &G, int combo)
{
    const device_system s = make_system(ctx, G, combo, true);
    const tridi_grid &g = s.g;
    const tridi_arrays a = s.a;
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {G.nx, G.ny, G.nz};
    const tridi_dtype types[5] = {s.tl, s.td, s.tl, s.tl, s.tl};
    const bool fast = combo != 2;
    for (int axis = 0; axis < 3; ++axis) {
        if (only_axis >= 0 && axis != only_axis)
            continue;
        const char *kern = "";
        time_kernel(g, axis, a, fast, s.scratch, 1, &kern); // names the planner's kernel (outside the profiled range)
        const tridi_solve_options o = lines_deferred(fast ? TRIDI_ARITH_FAST : TRIDI_ARITH_MOHID);
        tridi_plan plan;
        TRIDI_OK(tridi_plan_create(ctx, &g, (tridi_axis)axis, lo, hi, types, &o, &plan));
        for (int w = 0; w < 3; ++w)
            TRIDI_OK(tridi_plan_solve(plan, &a));
        TRIDI_OK(tridi_plan_status(plan));
        CUDA_OK(cudaProfilerStart());
        TRIDI_OK(tridi_plan_solve(plan, &a));
        TRIDI_OK(tridi_plan_status(plan));
        CUDA_OK(cudaProfilerStop());
        TRIDI_OK(tridi_plan_destroy(plan));
        std::printf("ncu_row,%dx%dx%d,%s,%c,%s,%s\n", G.nx, G.ny, G.nz, tname(combo), "xyz"[axis],
                    fast ? "FAST" : "MOHID", kern);
        std::fflush(stdout);
    }
    free_system(ctx, s);
}

static void usage()
{
    std::fprintf(stderr, "usage: tridi_bench_gpu [max_cells_for_sequential] [--resident | --host] [--grid=NXxNYxNZ]...\n"
                         "  --resident / --host: only the device-resident / host-array tables (default: both)\n"
                         "  --plans: only the device plans' table (ON_ERROR_LINES / _CALL, SYNC / DEFERRED verdicts)\n"
                         "  --fast: only the FAST arithmetic table (FAST / MOHID / cuSPARSE; default grids: issue 27's)\n"
                         "  --csv=FILE: the FAST table's rows in bench/results/README.md's schema (ranges over the\n"
                         "    three passes); --commit=HASH fills its commit column; --passes=N: N passes, not 3\n"
                         "  --grid: only these grids (repeatable; default: the five grids of docs/performance.md);\n"
                         "    in the host-array table a grid of NZ = 1 is a model's 2D call (x and y lines)\n"
                         "  --axis=x|y|z, --type=f32|f64|mixed: only these rows (device-resident, plans, FAST,\n"
                         "    graph and ncu tables; with --grid, --fast runs a single row)\n"
                         "  --graph: only the table of small-grid streams, launched and captured in a CUDA graph\n"
                         "    (default grid 140x140x56; --fast adds it for that grid)\n"
                         "  --ncu: one plan solve per FAST-table row between cudaProfilerStart/Stop, for\n"
                         "    ncu --profile-from-start off (bench/gpu/ncu_rows.sh)\n");
    std::exit(2);
}

int main(int argc, char **argv)
{
    double max_seq_cells = 2e7;
    bool do_resident = true, do_host = true, do_plans = false, do_fast = false, do_graph = false, do_ncu = false;
    const char *csv_path = nullptr, *commit = "-";
    std::vector<grid3> grids;
    int only_type = -1;
    for (int i = 1; i < argc; ++i) {
        grid3 G{};
        if (!std::strncmp(argv[i], "--axis=", 7) && argv[i][7] >= 'x' && argv[i][7] <= 'z' && !argv[i][8])
            only_axis = argv[i][7] - 'x';
        else if (!std::strncmp(argv[i], "--type=", 7) && (!std::strcmp(argv[i] + 7, "f32") ||
                                                          !std::strcmp(argv[i] + 7, "f64") || !std::strcmp(argv[i] + 7, "mixed")))
            only_type = argv[i][8] == '3' ? 0 : argv[i][8] == '6' ? 1 : 2;
        else if (!std::strcmp(argv[i], "--resident"))
            do_host = false;
        else if (!std::strcmp(argv[i], "--host"))
            do_resident = false;
        else if (!std::strcmp(argv[i], "--plans"))
            do_plans = true, do_resident = do_host = false;
        else if (!std::strcmp(argv[i], "--fast"))
            do_fast = true, do_resident = do_host = false;
        else if (!std::strcmp(argv[i], "--graph"))
            do_graph = true, do_resident = do_host = false;
        else if (!std::strcmp(argv[i], "--ncu"))
            do_ncu = true, do_resident = do_host = false;
        else if (!std::strncmp(argv[i], "--passes=", 9) && std::atoi(argv[i] + 9) > 0)
            g_passes = std::atoi(argv[i] + 9);
        else if (!std::strncmp(argv[i], "--csv=", 6) && argv[i][6])
            csv_path = argv[i] + 6;
        else if (!std::strncmp(argv[i], "--commit=", 9) && argv[i][9])
            commit = argv[i] + 9;
        else if (std::sscanf(argv[i], "--grid=%dx%dx%d", &G.nx, &G.ny, &G.nz) == 3 && G.nx > 0 && G.ny > 0 && G.nz > 0)
            grids.push_back(G);
        else if (argv[i][0] >= '0' && argv[i][0] <= '9') // 0: no sequential reference at all
            max_seq_cells = std::atof(argv[i]);
        else
            usage();
    }
    if (grids.empty() && do_fast)
        grids = {{1024, 1024, 128}, {512, 512, 512}, {2048, 2048, 32}, {560, 560, 56}, {140, 140, 56}};
    if (grids.empty() && do_ncu)
        grids = {{1024, 1024, 128}, {512, 512, 512}, {2048, 2048, 32}};
    if (grids.empty() && do_graph)
        grids = {{140, 140, 56}};
    if (grids.empty())
        grids = {{70, 70, 28}, {140, 140, 28}, {140, 140, 56}, {560, 560, 56}, {1024, 1024, 128}};
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    char date[64];
    std::time_t tt = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&tt));
    std::printf("tridi GPU benchmark, %s, %s, %d host threads\n", prop.name, date, omp_get_max_threads());
    const bw B = measure_bandwidth();
    std::printf("device copy %.0f GB/s (read+write), pinned H2D %.1f GB/s, D2H %.1f GB/s\n\n", B.d2d * 1e-9,
                B.h2d * 1e-9, B.d2h * 1e-9);

    tridi_config c;
    tridi_config_init(&c);
    c.backend = TRIDI_BACKEND_CUDA;
    tridi_context gpu, gpu_call, cpu;
    TRIDI_OK(tridi_create(&gpu, &c));
    bare_choice = tk_choice{gpu->tuning.cuda_kernel, gpu->tuning.cuda_split_lanes};
    c.on_error = TRIDI_ON_ERROR_CALL;
    TRIDI_OK(tridi_create(&gpu_call, &c));
    tridi_config_init(&c);
    c.backend = TRIDI_BACKEND_CPU;
    c.num_threads = 16;
    TRIDI_OK(tridi_create(&cpu, &c));
    tridi_context autoc = nullptr; // AUTO's choice for host arrays, timed in the host-array table
    c.backend = TRIDI_BACKEND_AUTO;
    c.verbose = 1;
    TRIDI_OK(tridi_create(&autoc, &c));
    c.verbose = 0;
    cusparseHandle_t sp;
    SP_OK(cusparseCreate(&sp));

    if (do_resident) {
        std::printf("Device-resident (tridi_solve_device, calls back to back; kernel = bare solve kernel into a box, "
                    "no guard; kernel: line = one thread per line, line+scr = the same with W/G in global memory, split = "
                    "several threads per line; guard: barrier = one wave, x written after a grid barrier, commit = "
                    "box + commit kernel)\n");
        std::printf("| grid | axis | type | kernel | guard | us/call | us kernel | guard cost | GB/s at floor | %% of copy (call) "
                    "| %% of copy (kernel) | cuSPARSE us, ratio |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for_each_case(grids, only_type, [&](const grid3 &G, int combo) { resident(gpu, sp, G, B, combo); });
    }
    if (do_plans) {
        std::printf("Device plans (tridi_plan_solve on device arrays, calls back to back; LINES = ON_ERROR_LINES, CALL = "
                    "ON_ERROR_CALL; DEFERRED = one tridi_plan_status per batch, SYNC = every call waits for its verdict; "
                    "floor = floor traffic at the device copy bandwidth)\n");
        std::printf("| grid | axis | type | us CALL deferred | us LINES deferred | CALL / LINES | us LINES sync "
                    "| us LINES deferred | SYNC / DEFERRED | us floor | LINES deferred / floor | CALL deferred / floor |\n"
                    "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for_each_case(grids, only_type, [&](const grid3 &G, int combo) { plans(gpu, G, B, combo); });
    }
    if (do_ncu)
        for_each_case(grids, only_type, [&](const grid3 &G, int combo) { ncu_rows(gpu, G, combo); });
    if (do_fast || do_graph) {
        if (csv_path && !(g_csv = std::fopen(csv_path, "w"))) {
            std::fprintf(stderr, "tridi_bench_gpu: cannot write %s\n", csv_path);
            return 2;
        }
        if (g_csv) {
            char iso[32];
            std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%MZ", std::gmtime(&tt));
            const char *dev = std::strstr(prop.name, "H100") ? "H100" : std::strstr(prop.name, "H200") ? "H200" : prop.name;
            g_csv_head = std::string(dev) + "," + iso + "," + commit + ",";
            std::fprintf(g_csv, "device,date,commit,grid,type,axis,metric,value,value_max,unit\n");
            std::fprintf(g_csv, "%s-,-,-,device_copy_bw,%.4g,,GB/s\n", g_csv_head.c_str(), B.d2d * 1e-9);
        }
    }
    if (do_fast) {
        std::printf("FAST arithmetic (device plans, ON_ERROR_LINES, DEFERRED verdicts, calls back to back; FAST / "
                    "MOHID call = us per tridi_plan_solve; kernel = the planner's kernel alone, into x; %% = floor "
                    "traffic at the device copy bandwidth of this run, median of the passes (range of the "
                    "per-call %% over them); cuSPARSE: x gtsv2StridedBatch, y gtsvInterleavedBatch per k slab, z "
                    "gtsvInterleavedBatch, same data and precision, compact box)\n");
        std::printf("| grid | type | axis | FAST kernel | us kernel | us call | %% copy kernel | %% copy call (range) "
                    "| MOHID us call (kernel, us) | MOHID %% copy call | MOHID / FAST | cuSPARSE us | cuSPARSE / FAST |\n"
                    "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for_each_case(grids, only_type, [&](const grid3 &G, int combo) { fast_rows(gpu, sp, G, B, combo); });
    }
    if (do_fast || do_graph) {
        // --fast: the small grids' streams too (a grid of a few million cells takes no longer than its launch)
        std::vector<grid3> small;
        for (const grid3 &G : grids)
            if (do_graph || (size_t)G.nx * G.ny * G.nz <= 2000000)
                small.push_back(G);
        if (!small.empty()) {
            std::printf("\nStreams of solves, launched and captured in a CUDA graph (a device plan on the caller's "
                        "stream, ON_ERROR_LINES, DEFERRED verdicts; launched: calls back to back between two events, "
                        "one tridi_plan_status after them; graph: the same calls captured and replayed; floor: floor "
                        "traffic at the device copy bandwidth; medians of the passes; answers of both paths equal bit "
                        "for bit)\n");
            std::printf("| grid | type | arithmetic | axis | us floor | us launched | launched / floor | us graph "
                        "| graph / floor | graph / launched |\n|---|---|---|---|---|---|---|---|---|---|\n");
        }
        for_each_case(small, only_type, [&](const grid3 &G, int combo) { graph_rows(gpu, G, B, combo); });
        if (g_csv)
            std::fclose(g_csv);
    }
    if (do_host) {
        std::printf("\nCopy shapes, registered host array <-> device, float box with a one-cell halo (GB/s of box "
                    "bytes): H2D as one run of the same bytes, H2D widened (whole planes, tridi's way), H2D row by "
                    "row (3D copy), D2H as one run, D2H row by row (3D copy, how answers go into x)\n");
        std::printf("| grid | H2D run | H2D widened | H2D rows | D2H run | D2H rows |\n|---|---|---|---|---|---|\n");
        for (const grid3 &G : grids)
            if ((size_t)G.nx * G.ny * G.nz <= 20000000)
                transfer_shapes(G);
        std::printf("\nHost arrays, MOHID mixed precision (tridi_solve on host arrays). staged = arrays not registered "
                    "(packed into pinned staging); registered = all five arrays registered with tridi_host_register "
                    "(DMA straight from/to them). / pinned = call time / time of 20 B/cell at the pinned H2D bandwidth "
                    "+ 4 B/cell at D2H. vs seq / OMP16 / tridi CPU = their time / the registered call's time. "
                    "Assembly overlap: each diagonal uploaded (tridi_upload_async) as soon as a host loop has "
                    "assembled it; hidden = (ms of the call made after assembling all four - ms in tridi calls) / "
                    "(that - ms of the solve once everything is uploaded)\n");
        std::printf("| grid | axis | staged ms | staged / pinned | registered ms | registered / pinned | vs seq "
                    "| vs OMP16 | vs tridi CPU | ms assembly | hidden staged | hidden registered |\n"
                    "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (const grid3 &G : grids)
            host_arrays(gpu, gpu_call, cpu, autoc, G, B, max_seq_cells);
    }
    cusparseDestroy(sp);
    tridi_destroy(gpu);
    tridi_destroy(gpu_call);
    tridi_destroy(cpu);
    tridi_destroy(autoc);
    return 0;
}
