// GPU path of the ADI steps: the stage kernel (one thread per cell of the box, the per-cell work shared
// with the CPU through src/adi_cell.inc), the plan's stream and the sweep timer. The solves themselves
// go through tridi_solve_device on the same stream, so a step never waits for the host.
#include "adi_internal.h"

#include <cuda_runtime.h>
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

extern "C" tridi_status tridi_adi_cuda_stream_create(int device, void **stream)
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

extern "C" void tridi_adi_cuda_stream_destroy(int device, void *stream)
{
    if (cudaSetDevice(device) == cudaSuccess)
        cudaStreamDestroy((cudaStream_t)stream);
}

extern "C" tridi_status tridi_adi_cuda_stream_sync(int device, void *stream)
{
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize((cudaStream_t)stream);
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("cudaStreamSynchronize", e);
}

extern "C" tridi_status tridi_adi_cuda_timer_create(int device, int nmarks, void **timer)
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
            tridi_adi_cuda_timer_destroy(device, t);
            return cuda_fail("cudaEventCreate", e);
        }
    }
    *timer = t;
    return TRIDI_SUCCESS;
}

extern "C" void tridi_adi_cuda_timer_destroy(int device, void *timer)
{
    adi_timer *t = (adi_timer *)timer;
    if (cudaSetDevice(device) == cudaSuccess)
        for (int i = 0; i < t->n; ++i)
            cudaEventDestroy(t->ev[i]);
    delete t;
}

extern "C" tridi_status tridi_adi_cuda_timer_mark(void *timer, int mark, void *stream)
{
    adi_timer *t = (adi_timer *)timer;
    cudaError_t e = cudaEventRecord(t->ev[mark], (cudaStream_t)stream);
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("cudaEventRecord", e);
}

extern "C" tridi_status tridi_adi_cuda_timer_read(void *timer, double *ms)
{
    adi_timer *t = (adi_timer *)timer;
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
