/* The halo transports this build has: the only place where the build's options (CUDA, NCCL) decide
 * which transports exist; halo.c calls them only through this table. */
#include "halo_internal.h"

#include <stdio.h>

#ifdef TRIDI_HAVE_NCCL
/* The NCCL transport lives in libtridi_nccl (decision 043), which only programs that use it link: this
 * library refers to it weakly and reaches it through the forwarding entries below, so a program without
 * it never loads libnccl and finds the transport unusable (AUTO passes over it; by name it fails). */
#pragma weak tridi_halo_nccl

static tridi_status nccl_probe(const char *f, tridi_halo h, int *usable, char *why, size_t why_len)
{
    if (!&tridi_halo_nccl) {
        *usable = 0;
        snprintf(why, why_len, "libtridi_nccl is not linked into this program (link tridi::nccl, or "
                               "`pkg-config --libs tridi_nccl`)");
        return TRIDI_SUCCESS;
    }
    return tridi_halo_nccl.probe ? tridi_halo_nccl.probe(f, h, usable, why, why_len) : TRIDI_SUCCESS;
}
static tridi_status nccl_attach(const char *f, tridi_halo h)
{
    return tridi_halo_nccl.attach ? tridi_halo_nccl.attach(f, h) : TRIDI_SUCCESS;
}
static tridi_status nccl_create(const char *f, tridi_halo h)
{
    return tridi_halo_nccl.create ? tridi_halo_nccl.create(f, h) : TRIDI_SUCCESS;
}
static tridi_status nccl_begin(const char *f, tridi_halo h) { return tridi_halo_nccl.begin(f, h); }
static tridi_status nccl_end(const char *f, tridi_halo h) { return tridi_halo_nccl.end(f, h); }
static void nccl_destroy(tridi_halo h)
{
    if (&tridi_halo_nccl && tridi_halo_nccl.destroy)
        tridi_halo_nccl.destroy(h);
}
static const tridi_halo_transport nccl_linked = {
    .probe = nccl_probe,
    .attach = nccl_attach,
    .create = nccl_create,
    .begin = nccl_begin,
    .end = nccl_end,
    .destroy = nccl_destroy,
};
#endif

#if defined(TRIDI_HAVE_CUDA) && !defined(TRIDI_HAVE_NCCL)
/* Asked for by name in a build without NCCL: the same build on every rank, so each fails alike. */
static const tridi_halo_transport nccl_unbuilt = {
    .unbuilt = "tridi was built without NCCL (nccl.h and libnccl were not found, or TRIDI_ENABLE_NCCL=OFF)",
};
#endif

const tridi_halo_table tridi_halo_transports = {
    .host = &tridi_halo_host,
#ifdef TRIDI_HAVE_CUDA
    .device_of = tridi_halo_device_of,
    .use_device = tridi_halo_use_device,
    .device =
        {
            [TRIDI_TRANSPORT_IPC] = &tridi_halo_ipc,
            [TRIDI_TRANSPORT_CUDA_AWARE] = &tridi_halo_cuda_aware,
            [TRIDI_TRANSPORT_STAGED] = &tridi_halo_staged,
#ifdef TRIDI_HAVE_NCCL
            [TRIDI_TRANSPORT_NCCL] = &nccl_linked,
#else
            [TRIDI_TRANSPORT_NCCL] = &nccl_unbuilt,
#endif
        },
#endif
    /* IPC when every rank can use it; NCCL only where IPC cannot serve (ranks on several nodes, GPUs
     * without peer access, arrays CUDA IPC cannot export), falling back to MPI when NCCL cannot be set up
     * on some rank (ranks sharing a GPU, ...); then CUDA-aware MPI, else host staging. */
    .auto_order = {TRIDI_TRANSPORT_IPC, TRIDI_TRANSPORT_NCCL, TRIDI_TRANSPORT_CUDA_AWARE, TRIDI_TRANSPORT_STAGED},
};
