/* CUDA-aware MPI transport of the halo exchange: device faces packed on the GPU into one buffer, handed
 * to an MPI library that reads and writes device memory, and unpacked on the GPU. */
#include "halo_internal.h"

#include <stdio.h>

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

static tridi_status aware_probe(const char *f, tridi_halo h, int *usable, char *why, size_t why_len)
{
    (void)f;
    (void)h;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
    *usable = MPIX_Query_cuda_support() == 1;
#else
    *usable = 0;
#endif
    if (!*usable)
        snprintf(why, why_len, "transport cuda-aware: this MPI library is not CUDA-aware (MPIX_Query_cuda_support)");
    return TRIDI_SUCCESS;
}

static tridi_status aware_create(const char *f, tridi_halo h) { return tridi_halo_device_buffers(f, h, 0); }

static tridi_status aware_begin(const char *f, tridi_halo h)
{
    tridi_status s = tridi_halo_pack(h, h->dev_send, 1);
    if (!s)
        s = tridi_halo_sync_stream(f, h);
    /* Posted even after a failure so the neighbours' receives complete. */
    tridi_halo_post_bytes(h, h->dev_send, h->dev_recv);
    return s;
}

static tridi_status aware_end(const char *f, tridi_halo h)
{
    tridi_status s = tridi_halo_wait(f, h);
    if (!s)
        s = tridi_halo_pack(h, h->dev_recv, 0);
    return s ? s : tridi_halo_sync_stream(f, h);
}

const tridi_halo_transport tridi_halo_cuda_aware = {
    .probe = aware_probe,
    .create = aware_create,
    .begin = aware_begin,
    .end = aware_end,
    .destroy = tridi_halo_device_buffers_free,
};
