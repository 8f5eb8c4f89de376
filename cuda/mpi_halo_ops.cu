// The CUDA runtime calls of the device halo transports (src/mpi/halo_backend.h): src/mpi/halo*.c call
// these instead of the runtime, so no CUDA type or header appears there.
#include "halo_backend.h"

#include <cstring>
#include <cuda_runtime.h>

static cudaStream_t st(void *s) { return static_cast<cudaStream_t>(s); }

extern "C" {

tridi_status tridi_halo_cuda_fail(const char *f, const char *call, int e)
{
    return tridi_fail(TRIDI_ERROR_CUDA, "%s: %s failed: %s", f, call, cudaGetErrorString((cudaError_t)e));
}

tridi_status tridi_halo_device_of(const char *f, const void *array, int *device)
{
    // Without a GPU (or a driver) the runtime's first call fails with its own reason, such as "CUDA driver
    // version is insufficient": say what it means.
    int ngpu = 0;
    cudaError_t e = cudaGetDeviceCount(&ngpu);
    if (e != cudaSuccess || ngpu == 0) {
        cudaGetLastError();
        return tridi_fail(TRIDI_ERROR_NO_DEVICE,
                          "%s: memory = TRIDI_MEMORY_DEVICE, but this rank sees no GPU (the CUDA runtime says: %s)", f,
                          e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    }
    cudaPointerAttributes at;
    e = cudaPointerGetAttributes(&at, array);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return tridi_halo_cuda_fail(f, "cudaPointerGetAttributes on 'array'", e);
    }
    if (at.type != cudaMemoryTypeDevice)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: 'array' is not device memory (memory = TRIDI_MEMORY_DEVICE)",
                          f);
    *device = at.device;
    return TRIDI_SUCCESS;
}

void tridi_halo_use_device(int device) { cudaSetDevice(device); }

tridi_status tridi_halo_mem_alloc(const char *f, void **p, size_t bytes, int pinned)
{
    *p = nullptr;
    cudaError_t e = pinned ? cudaMallocHost(p, bytes ? bytes : 1) : cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *p = nullptr;
        cudaGetLastError();
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: %s staging buffer of %zu bytes: %s", f,
                          pinned ? "pinned host" : "device", bytes, cudaGetErrorString(e));
    }
    return TRIDI_SUCCESS;
}

void tridi_halo_mem_free(void *p, int pinned)
{
    if (p && pinned)
        cudaFreeHost(p);
    else if (p)
        cudaFree(p);
}

tridi_status tridi_halo_copy_async(const char *f, void *dst, const void *src, size_t bytes, void *stream)
{
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, st(stream));
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_halo_cuda_fail(f, "cudaMemcpyAsync", e);
}

tridi_status tridi_halo_copy_3d(const char *f, void *dst, size_t dst_pitch, size_t dst_rows, const void *src,
                                size_t src_pitch, size_t src_rows, size_t width, size_t height, size_t depth,
                                void *stream)
{
    cudaMemcpy3DParms cp;
    std::memset(&cp, 0, sizeof cp);
    cp.srcPtr = make_cudaPitchedPtr(const_cast<void *>(src), src_pitch, width, src_rows);
    cp.dstPtr = make_cudaPitchedPtr(dst, dst_pitch, width, dst_rows);
    cp.extent = make_cudaExtent(width, height, depth);
    cp.kind = cudaMemcpyDefault;
    cudaError_t e = cudaMemcpy3DAsync(&cp, st(stream));
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_halo_cuda_fail(f, "cudaMemcpy3DAsync to a neighbour's halo", e);
}

tridi_status tridi_halo_stream_sync(const char *f, void *stream)
{
    cudaError_t e = cudaStreamSynchronize(st(stream));
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_halo_cuda_fail(f, "cudaStreamSynchronize", e);
}

tridi_status tridi_halo_stream_poll(const char *f, void *stream, int *done)
{
    cudaError_t e = cudaStreamQuery(st(stream));
    *done = e != cudaErrorNotReady;
    return e == cudaSuccess || e == cudaErrorNotReady ? TRIDI_SUCCESS
                                                      : tridi_halo_cuda_fail(f, "waiting for the stream", e);
}

tridi_status tridi_halo_stream_create(const char *f, void **stream)
{
    cudaStream_t s = nullptr;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    *stream = s;
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_halo_cuda_fail(f, "cudaStreamCreateWithFlags", e);
}

void tridi_halo_stream_destroy(void *stream)
{
    if (stream)
        cudaStreamDestroy(st(stream));
}

tridi_status tridi_halo_event_create(const char *f, void **event)
{
    cudaEvent_t ev = nullptr;
    cudaError_t e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    *event = ev;
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_halo_cuda_fail(f, "cudaEventCreateWithFlags", e);
}

void tridi_halo_event_destroy(void *event)
{
    if (event)
        cudaEventDestroy(static_cast<cudaEvent_t>(event));
}

tridi_status tridi_halo_event_record(const char *f, void *event, void *stream)
{
    cudaError_t e = cudaEventRecord(static_cast<cudaEvent_t>(event), st(stream));
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_halo_cuda_fail(f, "cudaEventRecord", e);
}

tridi_status tridi_halo_event_poll(const char *f, void *event, int *done)
{
    cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event));
    *done = e != cudaErrorNotReady;
    return e == cudaSuccess || e == cudaErrorNotReady ? TRIDI_SUCCESS : tridi_halo_cuda_fail(f, "cudaEventQuery", e);
}

tridi_status tridi_halo_stream_wait(const char *f, void *stream, void *event)
{
    cudaError_t e = cudaStreamWaitEvent(st(stream), static_cast<cudaEvent_t>(event), 0);
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_halo_cuda_fail(f, "cudaStreamWaitEvent", e);
}

// The allocation holding ptr: IPC handles name allocations, and the array may start inside one. The
// driver's cuMemGetAddressRange is reached through the runtime so that tridi never links libcuda.
typedef int (*get_range_fn)(unsigned long long *base, size_t *bytes, unsigned long long ptr);
int tridi_halo_ipc_export(const void *array, void *handle, int64_t *offset)
{
    static get_range_fn fn;
    if (!fn) {
        cudaDriverEntryPointQueryResult q;
        void *p = nullptr;
        if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &p, 12000, cudaEnableDefault, &q) !=
                cudaSuccess ||
            q != cudaDriverEntryPointSuccess || !p) {
            cudaGetLastError();
            return -1;
        }
        fn = (get_range_fn)p;
    }
    unsigned long long b = 0;
    size_t bytes = 0;
    if (fn(&b, &bytes, (unsigned long long)(uintptr_t)array) != 0)
        return -1;
    static_assert(sizeof(cudaIpcMemHandle_t) == 64, "halo_backend.h: IPC handles of 64 bytes");
    cudaIpcMemHandle_t hd;
    if (cudaIpcGetMemHandle(&hd, (void *)(uintptr_t)b) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    std::memcpy(handle, &hd, sizeof hd);
    *offset = (int64_t)((uintptr_t)array - (uintptr_t)b);
    return 0;
}

int tridi_halo_can_reach(int device, int peer)
{
    int access = 1;
    if (device != peer && cudaDeviceCanAccessPeer(&access, device, peer) != cudaSuccess) {
        cudaGetLastError();
        access = 0;
    }
    return access;
}

tridi_status tridi_halo_gpu_uuid(const char *f, int device, unsigned char uuid[16])
{
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return tridi_halo_cuda_fail(f, "cudaGetDeviceProperties", e);
    }
    std::memcpy(uuid, p.uuid.bytes, 16);
    return TRIDI_SUCCESS;
}

} // extern "C"
