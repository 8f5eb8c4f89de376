/* Host-staged transport of the halo exchange: device faces packed on the GPU, copied to a pinned host
 * buffer, moved by MPI between host buffers, copied back and unpacked. Works with any MPI library. */
#include "halo_internal.h"

#include <cuda_runtime_api.h>

static tridi_status staged_create(const char *f, tridi_halo h) { return tridi_halo_device_buffers(f, h, 1); }

static tridi_status staged_begin(const char *f, tridi_halo h)
{
    tridi_status s = tridi_halo_pack(h, h->dev_send, 1);
    if (!s && h->buf_bytes) {
        cudaError_t e = cudaMemcpyAsync(h->host_send, h->dev_send, h->buf_bytes, cudaMemcpyDeviceToHost,
                                        (cudaStream_t)h->stream);
        if (e != cudaSuccess)
            s = tridi_halo_cuda_fail(f, "cudaMemcpyAsync", e);
    }
    if (!s)
        s = tridi_halo_sync_stream(f, h);
    /* Posted even after a failure so the neighbours' receives complete. */
    tridi_halo_post_bytes(h, h->host_send, h->host_recv);
    return s;
}

static tridi_status staged_end(const char *f, tridi_halo h)
{
    tridi_status s = tridi_halo_wait(f, h);
    if (s)
        return s;
    if (h->buf_bytes) {
        cudaError_t e = cudaMemcpyAsync(h->dev_recv, h->host_recv, h->buf_bytes, cudaMemcpyHostToDevice,
                                        (cudaStream_t)h->stream);
        if (e != cudaSuccess)
            return tridi_halo_cuda_fail(f, "cudaMemcpyAsync", e);
    }
    s = tridi_halo_pack(h, h->dev_recv, 0);
    return s ? s : tridi_halo_sync_stream(f, h);
}

const tridi_halo_transport tridi_halo_staged = {
    .create = staged_create,
    .begin = staged_begin,
    .end = staged_end,
    .destroy = tridi_halo_device_buffers_free,
};
