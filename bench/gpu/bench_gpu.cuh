// Shared setup of the GPU benchmark (bench_gpu.cu has its usage and main): includes, error macros, filled
// systems, timers, the CSV schema. One bench_<table>.cu per table; their definitions in bench_common.cu.
#ifndef TRIDI_BENCH_GPU_CUH
#define TRIDI_BENCH_GPU_CUH

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
#include <functional>
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

inline double now() { return omp_get_wtime(); }

double median(std::vector<double> v);

// Median GPU time of launch() over reps launches after two warm-ups (CUDA events around each, default stream).
template <class Launch>
double time_gpu(int reps, Launch &&launch)
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
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return median(t);
}

// time_gpu, then reports a failing line the kernel recorded in err, and frees err.
template <class Launch>
double time_launches(int reps, unsigned long long *err, const char *what, Launch &&launch)
{
    const double t = time_gpu(reps, launch);
    unsigned long long v;
    CUDA_OK(cudaMemcpy(&v, err, 8, cudaMemcpyDeviceToHost));
    if (v != ~0ull)
        std::printf("  (%s reported a failing line %llu)\n", what, v);
    cudaFree(err);
    return t;
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
void fill_host(T *p, int role, size_t n)
{
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i)
        p[i] = (T)value(role, i);
}

struct bw {
    double d2d, h2d, d2h;
};

bw measure_bandwidth();

struct grid3 {
    int nx, ny, nz;
};

inline const char *tname(int combo) { return combo == 0 ? "f32" : combo == 1 ? "f64" : "mixed"; }
inline int floor_bytes(int combo) { return combo == 0 ? 20 : combo == 1 ? 40 : 24; }

// The kernel a plan launches: FAST (decision 021), split, one thread per line with W/G on chip (line), in
// the global scratch (line+scr) or checkpointed (ckpt, decision 046).
const char *plan_kernel_name(const tk_plan &p);

// The kernel family of the bare kernel's plans: the GPU context's TRIDI_CUDA_KERNEL, as its solves have it.
extern tk_choice bare_choice;

// The kernel operand types (lower/upper/rhs, diag, answer) of a template instance.
template <class T>
tridi_dtype dtype_of()
{
    return sizeof(T) == 8 ? TRIDI_FLOAT64 : TRIDI_FLOAT32;
}

// cuSPARSE on a compact box: x lines with gtsv2StridedBatch (systems contiguous, batchStride = n), z lines
// with gtsvInterleavedBatch (unknown m of system b at m*batch + b, the Fortran order of a compact box), y
// lines with gtsvInterleavedBatch once per k slab (in a slab of a compact box, unknown m of line i is at
// m*nx + i: nx interleaved systems; no transpose, nz calls of batch nx; nx: the box's first extent).
// Returns seconds per call (it solves in place: the answer of one call is the next call's rhs, whose
// size stays bounded for these diagonally dominant systems).
template <class T>
double time_cusparse(cusparseHandle_t h, int axis, int64_t n, int64_t batch, int reps, int64_t nx = 0)
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
void alloc_system(tridi_context ctx, size_t cells, int combo, void *p[5], tridi_dtype *tl, tridi_dtype *td);

// Every grid of gs with every type combination (only_type: the one --type= selects, or -1), in table order.
template <class F>
void for_each_case(const std::vector<grid3> &gs, int only_type, F &&fn)
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

device_system make_system(tridi_context ctx, const grid3 &G, int combo, bool with_scratch = false);

void free_system(tridi_context ctx, const device_system &s);

// Seconds per call of a device plan with options o on arrays a (the box 1..n of grid g), calls back to back
// after three warm-up calls: the median of five runs of reps calls, each closed by tridi_plan_status.
double time_plan(tridi_context ctx, const tridi_grid &g, int axis, const tridi_arrays &a,
                        const tridi_solve_options &o, int reps);

// A device plan's options for the FAST table: per-line isolation, deferred verdicts, arithmetic arith.
tridi_solve_options lines_deferred(tridi_arith arith);

extern int only_axis; // --axis: the resident table's rows of one axis; -1: all

// The FAST and graph tables' CSV (--csv, bench/results/README.md's schema) and passes per row (--passes).
extern FILE *g_csv;
extern int g_passes;
extern std::string g_csv_head; // device,date,commit,

// One row of bench/results/README.md's schema: the range of a figure over the passes (value_max empty when
// there is one figure).
void csv_row(const grid3 &G, const char *type, char axis, const char *metric, double lo, double hi,
                    const char *unit);

// Seconds of the planner's kernel for a LINES solve of the box into x in place (FAST or MOHID arithmetic),
// launched bare; *kern names it; tweak, where given, changes the plan before the launches (--xsweep,
// --fsweep; a plan it leaves with no blocks is not timed: 0 is returned).
double time_kernel(const tridi_grid &g, int axis, const tridi_arrays &arr, bool fast, double *scratch, int reps,
                   const char **kern, const std::function<void(tk_plan &, const tk_args &)> &tweak = {});

// The tables, one file each.
void resident(tridi_context ctx, cusparseHandle_t sp, const grid3 &G, const bw &B, int combo);
void plans(tridi_context ctx, const grid3 &G, const bw &B, int combo);
void host_arrays(tridi_context gpu, tridi_context gpu_call, tridi_context cpu, tridi_context autoc, const grid3 &G,
                        const bw &B, double max_seq_cells);
void transfer_shapes(const grid3 &G);
void fast_rows(tridi_context ctx, cusparseHandle_t sp, const grid3 &G, const bw &B, int combo);
void graph_rows(tridi_context ctx, const grid3 &G, const bw &B, int combo);
void ncu_rows(tridi_context ctx, const grid3 &G, int combo);
void xsweep_rows(tridi_context ctx, const grid3 &G, const bw &B, int combo);
void fsweep_rows(tridi_context ctx, const grid3 &G, const bw &B, int combo);

#endif
