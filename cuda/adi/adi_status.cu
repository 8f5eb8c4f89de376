// The CUDA side of an ADI plan's deferred verdict (docs/decisions/026): the status word its fused sweeps
// write (adi_fused.cu: the first failure's ADI_KEY, else ADI_STATUS_CLEAR), cleared and read here, and the
// event a step's end records for tridi_adi_synchronize to wait on. cuda/adi_stage.cu's operations call them.
#include "adi_internal.h"

#include <cuda_runtime.h>

namespace {

tridi_status cuda_fail(const char *what, cudaError_t e) { return tridi_cuda_fail("tridi_adi (GPU)", what, e); }

} // namespace

extern "C" tridi_status tridi_adi_cuda_status_reset(int device, unsigned long long *status)
{
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaMemset(status, 0xff, sizeof *status); // ADI_STATUS_CLEAR
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("clearing the plan's status", e);
}

extern "C" tridi_status tridi_adi_cuda_status_take(int device, unsigned long long *status, unsigned long long *key)
{
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess)
        e = cudaMemcpy(key, status, sizeof *key, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && *key != ADI_STATUS_CLEAR) { // rare: the clear must land before any later step
        e = cudaMemset(status, 0xff, sizeof *key);
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
