// The CUDA runtime calls of the MPI layer's solves (src/mpi/mpi_device.h): copies, fills and waits on the
// caller's stream, device queries and IPC mappings, so that src/mpi holds no CUDA call and no CUDA type.
// Device memory is not here: it comes from the context's budget (cuda/memory.cu, docs/decisions/049).
#include "mpi_device.h"

#include <cuda_runtime.h>

static_assert(sizeof(cudaIpcMemHandle_t) == TRIDI_CUDA_IPC_HANDLE_BYTES, "an IPC handle crosses as its bytes");

namespace tridi_cuda {
namespace {

cudaMemcpyKind kind_of(tridi_mpi_copy_dir dir)
{
    switch (dir) {
    case TRIDI_MPI_TO_HOST: return cudaMemcpyDeviceToHost;
    case TRIDI_MPI_TO_DEVICE: return cudaMemcpyHostToDevice;
    case TRIDI_MPI_DEVICE_TO_DEVICE: break;
    }
    return cudaMemcpyDeviceToDevice;
}

} // namespace
} // namespace tridi_cuda

extern "C" {

tridi_status tridi_mpi_cuda_copy(void *dst, const void *src, size_t bytes, tridi_mpi_copy_dir dir, void *stream,
                                 const char *f, const char *what)
{
    const cudaError_t e =
        cudaMemcpyAsync(dst, src, bytes, tridi_cuda::kind_of(dir), static_cast<cudaStream_t>(stream));
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_cuda_fail(f, what, e);
}

tridi_status tridi_mpi_cuda_fill(void *dst, int byte, size_t bytes, void *stream, const char *f, const char *what)
{
    const cudaError_t e = cudaMemsetAsync(dst, byte, bytes, static_cast<cudaStream_t>(stream));
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_cuda_fail(f, what, e);
}

tridi_status tridi_mpi_cuda_wait(void *stream, const char *f, const char *what)
{
    const cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_cuda_fail(f, what, e);
}

int tridi_mpi_cuda_device(void)
{
    int dev = 0;
    cudaGetDevice(&dev);
    return dev;
}

int tridi_mpi_cuda_peer_access(int device, int peer)
{
    int access = 1;
    if (device != peer)
        cudaDeviceCanAccessPeer(&access, device, peer);
    return access;
}

tridi_status tridi_mpi_cuda_ipc_open(const void *handle, void **base)
{
    cudaIpcMemHandle_t h;
    __builtin_memcpy(&h, handle, sizeof h);
    const cudaError_t e = cudaIpcOpenMemHandle(base, h, cudaIpcMemLazyEnablePeerAccess);
    return e == cudaSuccess ? TRIDI_SUCCESS : tridi_cuda_fail("tridi MPI layer", "cudaIpcOpenMemHandle", e);
}

void tridi_mpi_cuda_ipc_close(void *base) { cudaIpcCloseMemHandle(base); }

} // extern "C"
