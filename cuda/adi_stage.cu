// The CUDA backend's ADI operations (tridi_adi_ops, adi_internal.h; its table is backend_cuda.c's): the
// path of a plan (fused or staged), its device work arrays, stream, status word and sweep timer, and the
// stage kernel (one thread per cell of the box, the per-cell work shared with the CPU through
// src/adi_cell.inc). The staged sweeps' solves go through the plan's device solve plans on the same stream,
// so a step never waits for the host.
#include "adi_internal.h"

#include <cuda_runtime.h>
#include <cstring>
#include <new>

#define ADI_QUAL static __device__ __forceinline__
#define ADI_UNROLL _Pragma("unroll")
#include "adi_cell_types.inc"
#undef ADI_QUAL
#undef ADI_UNROLL

namespace {

// i runs along the contiguous axis so a warp reads consecutive cells; the stage is bound by memory
// traffic, and the neighbours along y and z are mostly L2 hits.
constexpr int BX = 64, BY = 4;

template <bool F64>
__global__ void __launch_bounds__(BX * BY) stage_kernel(const __grid_constant__ adi_stage s)
{
    const int64_t i = (int64_t)blockIdx.x * BX + threadIdx.x;
    const int64_t j = (int64_t)blockIdx.y * BY + threadIdx.y;
    if (i >= s.n[0] || j >= s.n[1])
        return;
    for (int64_t k = blockIdx.z; k < s.n[2]; k += gridDim.z) {
        if (F64)
            adi_cell_f64(&s, i, j, k);
        else
            adi_cell_f32(&s, i, j, k);
    }
}

tridi_status cuda_fail(const char *what, cudaError_t e) { return tridi_cuda_fail("tridi_adi (GPU)", what, e); }

struct adi_timer {
    int n;
    cudaEvent_t ev[4];
};

tridi_status stream_create(int device, void **stream)
{
    *stream = nullptr;
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cuda_fail("cudaSetDevice", e);
    // A blocking stream: it waits for work on the legacy default stream, where the library's plain
    // cudaMemcpy copies run, and a pageable host-to-device copy may still be in flight when it returns.
    cudaStream_t st;
    e = cudaStreamCreate(&st);
    if (e != cudaSuccess)
        return cuda_fail("cudaStreamCreate", e);
    *stream = st;
    return TRIDI_SUCCESS;
}

void stream_destroy(int device, void *stream)
{
    if (cudaSetDevice(device) == cudaSuccess)
        cudaStreamDestroy((cudaStream_t)stream);
}

tridi_status stream_sync(int device, void *stream)
{
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize((cudaStream_t)stream);
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("cudaStreamSynchronize", e);
}

void timer_destroy(int device, adi_timer *t);

tridi_status timer_create(int device, int nmarks, adi_timer **timer)
{
    *timer = nullptr;
    if (nmarks < 2 || nmarks > 4)
        return tridi_fail(TRIDI_ERROR_INTERNAL, "tridi_adi (GPU): timer with %d marks", nmarks);
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cuda_fail("cudaSetDevice", e);
    adi_timer *t = new (std::nothrow) adi_timer();
    if (!t)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi_adi (GPU): could not allocate the timer");
    t->n = 0;
    for (; t->n < nmarks; ++t->n) {
        e = cudaEventCreate(&t->ev[t->n]);
        if (e != cudaSuccess) {
            timer_destroy(device, t);
            return cuda_fail("cudaEventCreate", e);
        }
    }
    *timer = t;
    return TRIDI_SUCCESS;
}

void timer_destroy(int device, adi_timer *t)
{
    if (cudaSetDevice(device) == cudaSuccess)
        for (int i = 0; i < t->n; ++i)
            cudaEventDestroy(t->ev[i]);
    delete t;
}

tridi_status timer_mark(adi_timer *t, int mark, void *stream)
{
    cudaError_t e = cudaEventRecord(t->ev[mark], (cudaStream_t)stream);
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("cudaEventRecord", e);
}

tridi_status timer_read(adi_timer *t, double *ms)
{
    cudaError_t e = cudaEventSynchronize(t->ev[t->n - 1]);
    if (e != cudaSuccess)
        return cuda_fail("cudaEventSynchronize", e);
    for (int i = 0; i + 1 < t->n; ++i) {
        float part;
        e = cudaEventElapsedTime(&part, t->ev[i], t->ev[i + 1]);
        if (e != cudaSuccess)
            return cuda_fail("cudaEventElapsedTime", e);
        ms[i] += part;
    }
    return TRIDI_SUCCESS;
}

// What a plan on the GPU keeps beyond its work arrays and stream: the fused sweeps' status word (device
// memory, adi_internal.h) and tables of shared rows (adi_fused.table, one an axis, with the stage each was
// made for: decision 085), the event of the latest fused step's end (waited for by tridi_adi_synchronize),
// the timer of the sweep boundaries (profile).
struct adi_gpu {
    unsigned long long *status = nullptr;
    void *rows_table = nullptr;
    size_t table_bytes = 0;   // each axis's
    adi_stage made_for[3];    // the stage whose rows the axis's table holds, where made[axis]
    bool made[3] = {false, false, false};
    bool keep_tables = true;  // false once a step was captured in a graph: its replays remake tables
    void *done = nullptr;
    adi_timer *timer = nullptr;
    bool offsets64 = false;    // TRIDI_ADI_PATH=fused64
    bool force_ktiles = false; // TRIDI_ADI_PATH=fusedk
};

int device_of(const tridi_adi_s *plan) { return plan->ctx->config.device; }

bool f64_of(const tridi_adi_s *plan) { return plan->dtype == TRIDI_FLOAT64; }

// The GPU path of a plan (docs/decisions/032, 048): path 1 (TRIDI_ADI_PATH=fused, 3 fused64, 4 fusedk) or 2
// (staged) when set; otherwise fused. Staged wherever the fused sweeps cannot take the box: a line too long for
// a block of the partitioned solve, or past what the failure record holds (adi_internal.h, ADI_KEY).
bool choose_fused(const tridi_adi_s *plan, int path)
{
    const adi_stage *b = &plan->base;
    const int64_t cells = b->n[0] * b->n[1] * b->n[2];
    bool fits = true;
    for (int a = 0; a < plan->op.naxes; ++a)
        fits = fits && b->n[a] < ADI_KEY_N_LIMIT && cells / b->n[a] < ADI_KEY_LINE_LIMIT;
    fits = fits && tridi_adi_cuda_fused_fits(b, plan->op.naxes, f64_of(plan));
    return fits && path != 2;
}

// Whether stages a and b have the same values: every number of the stage bit for bit and each array present
// in both or in neither, only the arrays' addresses free. The rows of a sweep of shared rows depend on fewer
// (decision 085).
bool same_stage_values(const adi_stage &a, const adi_stage &b)
{
    // A new member of adi_stage joins the comparison below.
    static_assert(sizeof(adi_stage) == 280, "same_stage_values compares every member of adi_stage");
    auto same = [](const void *p, const void *q, size_t bytes) { return memcmp(p, q, bytes) == 0; };
    auto both = [](const void *p, const void *q) { return (p == nullptr) == (q == nullptr); };
    bool eq = same(a.n, b.n, sizeof a.n) && same(a.stride, b.stride, sizeof a.stride) && a.origin == b.origin &&
              a.naxes == b.naxes && a.axis == b.axis && same(a.alpha, b.alpha, sizeof a.alpha) &&
              same(&a.tdt, &b.tdt, sizeof a.tdt) && same(&a.kappa_const, &b.kappa_const, sizeof a.kappa_const) &&
              a.harmonic == b.harmonic && a.careful == b.careful && same(a.inv_h, b.inv_h, sizeof a.inv_h) &&
              same(a.inv_h2, b.inv_h2, sizeof a.inv_h2) && a.increment == b.increment &&
              same(a.dirichlet_lo, b.dirichlet_lo, sizeof a.dirichlet_lo) &&
              same(a.dirichlet_hi, b.dirichlet_hi, sizeof a.dirichlet_hi);
    eq = eq && both(a.field, b.field) && both(a.x0, b.x0) && both(a.y, b.y) && both(a.out, b.out) &&
         both(a.lower, b.lower) && both(a.diag, b.diag) && both(a.upper, b.upper) && both(a.kappa, b.kappa);
    for (int i = 0; i < 3; ++i)
        eq = eq && both(a.vel[i], b.vel[i]);
    return eq;
}

// Whether stream is not being captured into a graph (false if that cannot be told).
bool stream_idle_of_capture(int device, void *stream)
{
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaSetDevice(device) != cudaSuccess || cudaStreamIsCapturing((cudaStream_t)stream, &cs) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return cs == cudaStreamCaptureStatusNone;
}

// The fused sweeps' status word, their tables of shared rows and the event a step ends with.
tridi_status fused_alloc(const char *f, const tridi_adi_s *plan, adi_gpu *g)
{
    tridi_context ctx = plan->ctx;
    tridi_status s = tridi_adi_as_called(f, tridi_device_alloc(ctx, sizeof *g->status, (void **)&g->status));
    g->table_bytes = (tridi_adi_cuda_table_bytes(&plan->base, plan->op.naxes, f64_of(plan)) + 255) / 256 * 256;
    if (!s && g->table_bytes)
        s = tridi_adi_as_called(f, tridi_device_alloc(ctx, g->table_bytes * plan->op.naxes, &g->rows_table));
    if (!s)
        s = tridi_adi_cuda_status_reset(device_of(plan), g->status);
    if (!s)
        s = tridi_adi_cuda_event_create(device_of(plan), &g->done);
    return s;
}

} // namespace

extern "C" tridi_status tridi_adi_cuda_stage(int device, const adi_stage *s, int f64, void *stream)
{
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cuda_fail("cudaSetDevice", e);
    const int64_t gx = (s->n[0] + BX - 1) / BX, gy = (s->n[1] + BY - 1) / BY;
    if (gy > 65535)
        return tridi_fail(TRIDI_ERROR_UNSUPPORTED, "tridi_adi (GPU): the box has %lld cells along y; at most %d",
                          (long long)s->n[1], 65535 * BY);
    const unsigned gz = (unsigned)(s->n[2] < 65535 ? s->n[2] : 65535);
    dim3 grid((unsigned)gx, (unsigned)gy, gz), block(BX, BY);
    cudaStream_t st = (cudaStream_t)stream;
    if (f64)
        stage_kernel<true><<<grid, block, 0, st>>>(*s);
    else
        stage_kernel<false><<<grid, block, 0, st>>>(*s);
    e = cudaGetLastError();
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("stage kernel launch", e);
}

extern "C" tridi_status tridi_adi_cuda_create(const char *f, tridi_adi_s *plan, int path)
{
    adi_gpu *g = new (std::nothrow) adi_gpu();
    if (!g)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not allocate the plan's GPU state", f);
    plan->backend_state = g;
    plan->fused = choose_fused(plan, path);
    g->offsets64 = path == 3;
    g->force_ktiles = path == 4;
    tridi_status s = TRIDI_SUCCESS;
    for (int w = 0; w < plan->nwork && !s; ++w) {
        if (plan->fused && w != ADI_W_1)
            continue; // the fused sweeps keep their diagonals in registers and need one work array
        s = tridi_adi_as_called(f, tridi_device_alloc(plan->ctx, plan->work_bytes, &plan->work[w]));
    }
    if (!s && plan->fused)
        s = fused_alloc(f, plan, g);
    if (!s)
        s = stream_create(device_of(plan), &plan->stream);
    if (!s && plan->op.profile)
        s = timer_create(device_of(plan), plan->op.naxes + 1, &g->timer);
    return s;
}

extern "C" void tridi_adi_cuda_destroy(tridi_adi_s *plan)
{
    adi_gpu *g = (adi_gpu *)plan->backend_state;
    const int device = device_of(plan);
    // Queued work may still use the work arrays.
    if (plan->stream)
        stream_sync(device, plan->stream);
    if (g && g->done)
        tridi_adi_cuda_event_sync(g->done);
    for (int w = 0; w < ADI_W_COUNT; ++w)
        if (plan->work[w]) {
            tridi_device_free(plan->ctx, plan->work[w]);
            plan->work[w] = nullptr;
        }
    if (g) {
        if (g->status)
            tridi_device_free(plan->ctx, g->status);
        if (g->rows_table)
            tridi_device_free(plan->ctx, g->rows_table);
        if (g->done)
            tridi_adi_cuda_event_destroy(device, g->done);
        if (g->timer)
            timer_destroy(device, g->timer);
        delete g;
        plan->backend_state = nullptr;
    }
    if (plan->stream)
        stream_destroy(device, plan->stream);
    plan->stream = nullptr;
}

extern "C" tridi_status tridi_adi_cuda_plan_stage(const tridi_adi_s *plan, const adi_stage *s, void *stream)
{
    return tridi_adi_cuda_stage(device_of(plan), s, f64_of(plan), stream);
}

extern "C" tridi_status tridi_adi_cuda_plan_sweep(const tridi_adi_s *plan, const adi_stage *s, int accumulate,
                                                  void *stream)
{
    adi_gpu *g = (adi_gpu *)plan->backend_state;
    const int a = s->axis;
    // A captured sweep remakes its table at each replay, whatever eager steps made in between (decision 085).
    if (g->keep_tables && !stream_idle_of_capture(device_of(plan), stream))
        g->keep_tables = false;
    const bool ready = g->keep_tables && g->made[a] && same_stage_values(g->made_for[a], *s);
    void *table = g->rows_table ? (char *)g->rows_table + (size_t)a * g->table_bytes : nullptr;
    const adi_fused fz = {g->status, accumulate, table, ready, g->offsets64, g->force_ktiles};
    g->made[a] = false; // until this sweep's launch has made the table
    const tridi_status st = tridi_adi_cuda_fused_sweep(device_of(plan), s, f64_of(plan), &fz, stream);
    if (!st && g->keep_tables) {
        g->made_for[a] = *s;
        g->made[a] = true;
    }
    return st;
}

extern "C" tridi_status tridi_adi_cuda_mark(tridi_adi_s *plan, int m, void *stream)
{
    const adi_gpu *g = (const adi_gpu *)plan->backend_state;
    return g && g->timer ? timer_mark(g->timer, m, stream) : TRIDI_SUCCESS;
}

extern "C" tridi_status tridi_adi_cuda_finish(tridi_adi_s *plan, void *stream)
{
    const adi_gpu *g = (const adi_gpu *)plan->backend_state;
    tridi_status s = TRIDI_SUCCESS;
    if (plan->fused)
        s = tridi_adi_cuda_event_record(g->done, stream);
    if (!s && g->timer)
        s = timer_read(g->timer, plan->ms);
    return s;
}

extern "C" tridi_status tridi_adi_cuda_wait(tridi_adi_s *plan, unsigned long long *key)
{
    *key = ADI_STATUS_CLEAR;
    const adi_gpu *g = (const adi_gpu *)plan->backend_state;
    tridi_status s = TRIDI_SUCCESS;
    if (plan->stream)
        s = stream_sync(device_of(plan), plan->stream);
    if (!s && plan->fused) {
        // Steps on the caller's stream end with the plan's event; then the status word is final.
        s = tridi_adi_cuda_event_sync(g->done);
        if (!s)
            s = tridi_adi_cuda_status_take(device_of(plan), g->status, key);
    }
    return s;
}
