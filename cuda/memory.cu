// Device memory of the CUDA backend: the context's budget (TRIDI_DEVICE_MEMORY_LIMIT), its buffers and
// pinned staging, tridi_device_alloc / free, the copies tridi_copy_to_device / host, and the registration
// of host arrays (tridi_host_register).
#include "cuda_internal.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <new>

namespace tridi_cuda {

namespace {

std::atomic<size_t> g_device_bytes{0}; // every device allocation of every context in this process

} // namespace

tridi_status device_alloc(device_budget &m, size_t bytes, void **p, const char *purpose)
{
    *p = nullptr;
    if (m.limit && bytes > m.limit - std::min(m.used, m.limit))
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY,
                          "tridi (CUDA): %zu bytes of device memory for %s would pass "
                          "TRIDI_DEVICE_MEMORY_LIMIT = %zu (%zu already in use by this context)",
                          bytes, purpose, m.limit, m.used);
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *p = nullptr;
        char what[160];
        std::snprintf(what, sizeof what, "cudaMalloc of %zu bytes for %s", bytes, purpose);
        return cuda_fail(what, e);
    }
    m.used += bytes;
    g_device_bytes.fetch_add(bytes);
    return TRIDI_SUCCESS;
}

void device_release(device_budget &m, void *p, size_t bytes)
{
    if (p) {
        cudaFree(p);
        m.used -= bytes;
        g_device_bytes.fetch_sub(bytes);
    }
}

tridi_status ensure(tridi_cuda_state *st, dbuf &b, size_t bytes, const char *purpose)
{
    if (b.bytes >= bytes && b.p)
        return TRIDI_SUCCESS;
    device_release(st->mem, b.p, b.bytes);
    b.p = nullptr;
    b.bytes = 0;
    tridi_status s = device_alloc(st->mem, bytes, &b.p, purpose);
    if (s == TRIDI_SUCCESS)
        b.bytes = bytes;
    return s;
}

tridi_status ensure_pinned(hbuf &b, size_t bytes)
{
    if (b.bytes >= bytes && b.p)
        return TRIDI_SUCCESS;
    if (b.p)
        cudaFreeHost(b.p);
    b.p = nullptr;
    b.bytes = 0;
    cudaError_t e = cudaHostAlloc(&b.p, bytes ? bytes : 1, cudaHostAllocDefault);
    if (e != cudaSuccess) {
        b.p = nullptr;
        cudaGetLastError();
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi (CUDA): cudaHostAlloc of %zu bytes of pinned staging: %s",
                          bytes, cudaGetErrorString(e));
    }
    b.bytes = bytes;
    return TRIDI_SUCCESS;
}

extern "C" {

tridi_status tridi_cuda_host_register(tridi_cuda_state *st, const void *ptr, size_t bytes, int *pinned)
{
    *pinned = 0;
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    // Memory CUDA already locks (cudaHostAlloc, the caller's own registration) is used as it is: CUDA
    // refuses to lock it twice, and its owner unlocks it.
    auto locked = [](const void *q) {
        cudaPointerAttributes at{};
        const bool yes = cudaPointerGetAttributes(&at, q) == cudaSuccess && at.type == cudaMemoryTypeHost;
        cudaGetLastError();
        return yes;
    };
    if (locked(ptr) && locked((const char *)ptr + bytes - 1))
        return TRIDI_SUCCESS;
    // Portable: a context on another device may move the same arrays.
    cudaError_t e = cudaHostRegister(const_cast<void *>(ptr), bytes, cudaHostRegisterPortable);
    if (e == cudaSuccess) {
        *pinned = 1;
        return TRIDI_SUCCESS;
    }
    cudaGetLastError(); // registration failures are not sticky
    if (e == cudaErrorHostMemoryAlreadyRegistered)
        return TRIDI_SUCCESS; // locked by the caller (or another context): used in place, unlocked by its owner
    const tridi_status code = e == cudaErrorMemoryAllocation ? TRIDI_ERROR_OUT_OF_MEMORY
                              : e == cudaErrorNotSupported   ? TRIDI_ERROR_UNSUPPORTED
                                                             : TRIDI_ERROR_CUDA;
    return tridi_fail(code, "tridi_host_register: cudaHostRegister of %zu bytes at %p: %s (%s); arrays that are not "
                      "registered still work, through pinned staging", bytes, ptr, cudaGetErrorString(e),
                      cudaGetErrorName(e));
}

tridi_status tridi_cuda_host_unregister(tridi_cuda_state *st, const void *ptr, int pinned)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    // Copies queued by tridi_upload_async may still read the range.
    uploads_settle(st);
    for (int r = 0; r < 4; ++r)
        CK(cudaStreamSynchronize(st->up[r]), "waiting for the uploads");
    if (pinned) {
        cudaError_t e = cudaHostUnregister(const_cast<void *>(ptr));
        if (e != cudaSuccess) {
            cudaGetLastError();
            return tridi_fail(TRIDI_ERROR_CUDA, "tridi_host_unregister: cudaHostUnregister(%p): %s (%s)", ptr,
                              cudaGetErrorString(e), cudaGetErrorName(e));
        }
    }
    return TRIDI_SUCCESS;
}

tridi_status tridi_cuda_alloc(tridi_cuda_state *st, size_t bytes, void **ptr)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    tridi_status s = device_alloc(st->mem, bytes, ptr, "tridi_device_alloc");
    if (s)
        return s;
    try {
        st->user_allocs[*ptr] = bytes;
    } catch (const std::bad_alloc &) {
        device_release(st->mem, *ptr, bytes);
        *ptr = nullptr;
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi_device_alloc: out of host memory");
    }
    return TRIDI_SUCCESS;
}

tridi_status tridi_cuda_free(tridi_cuda_state *st, void *ptr)
{
    auto it = st->user_allocs.find(ptr);
    if (it == st->user_allocs.end())
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "tridi_device_free: %p was not allocated by tridi_device_alloc on this context", ptr);
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    // Queued solves may still read it.
    if (st->have_last)
        CK(cudaEventSynchronize(st->ev_last), "waiting for earlier work");
    device_release(st->mem, it->first, it->second);
    st->user_allocs.erase(it);
    return TRIDI_SUCCESS;
}

tridi_status tridi_cuda_copy(tridi_cuda_state *st, void *dst, const void *src, size_t bytes, int to_device)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    // Copies see the results of solves queued before them, on any stream the caller gave.
    if (st->have_last)
        CK(cudaEventSynchronize(st->ev_last), "waiting for earlier work");
    // On the context's stream, waited for: cudaMemcpy from pageable memory may return before its DMA has
    // landed (CUDA's "API synchronization behavior"), and the solves run on streams that do not wait for
    // the legacy stream, so a solve right after the copy could read the old contents, or have its answers
    // overwritten by an x upload still in flight (seen on the H100 with another process on the GPU).
    const char *what = to_device ? "tridi_copy_to_device" : "tridi_copy_to_host";
    CK(cudaMemcpyAsync(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, st->compute),
       what);
    CK(cudaStreamSynchronize(st->compute), what);
    return TRIDI_SUCCESS;
}

// TRIDI_PRIVATE on the definitions below too: nvcc does not carry the declaration's visibility to them.
TRIDI_PRIVATE tridi_status tridi_cuda_scratch(tridi_cuda_state *st, tridi_cuda_scratch_id id, size_t bytes, void **p)
{
    static const char *const purpose[2] = {"the work arrays of the cut solve", "the reduced coefficients"};
    *p = nullptr;
    tridi_status s = TRIDI_SUCCESS;
    if (id == TRIDI_CUDA_SCRATCH_WORK || id == TRIDI_CUDA_SCRATCH_SMALL) {
        dbuf &b = st->mpi_dev[id == TRIDI_CUDA_SCRATCH_SMALL];
        s = ensure(st, b, bytes, purpose[id == TRIDI_CUDA_SCRATCH_SMALL]);
        *p = s ? nullptr : b.p;
    } else {
        hbuf &b = st->mpi_pinned[id == TRIDI_CUDA_SCRATCH_ENDS];
        s = ensure_pinned(b, bytes);
        *p = s ? nullptr : b.p;
    }
    return s;
}

TRIDI_PRIVATE tridi_status tridi_cuda_budget_alloc(tridi_cuda_state *st, size_t bytes, const char *purpose, void **p)
{
    return device_alloc(st->mem, bytes, p, purpose);
}

TRIDI_PRIVATE void tridi_cuda_budget_free(tridi_cuda_state *st, void *p, size_t bytes)
{
    device_release(st->mem, p, bytes);
}

TRIDI_PRIVATE tridi_status tridi_cuda_ipc_export(tridi_cuda_state *st, size_t bytes, void **buf, void *handle)
{
    device_budget probe = st->mem; // refuses what would pass the limit; the decomposition holds the buffer
    tridi_status s = device_alloc(probe, bytes, buf, "a reduced-system gather buffer");
    if (s)
        return s;
    cudaIpcMemHandle_t h{};
    const cudaError_t e = cudaIpcGetMemHandle(&h, *buf);
    if (e != cudaSuccess) {
        tridi_cuda_ipc_unexport(*buf, bytes);
        *buf = nullptr;
        return cuda_fail("cudaIpcGetMemHandle of a reduced-system gather buffer", e);
    }
    std::memcpy(handle, &h, sizeof h);
    return TRIDI_SUCCESS;
}

TRIDI_PRIVATE void tridi_cuda_ipc_unexport(void *buf, size_t bytes)
{
    if (buf) {
        cudaFree(buf);
        g_device_bytes.fetch_sub(bytes);
    }
}

#ifdef TRIDI_FAULT_INJECTION
// Test-only entry point (declared by the tests themselves, not in tridi.h).
size_t tridi_test_device_bytes(void) { return g_device_bytes.load(); }
#endif

} // extern "C"

} // namespace tridi_cuda
