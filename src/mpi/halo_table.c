/* The halo transports this build has: the only place where the build's options (CUDA, NCCL) decide
 * which transports exist; halo.c calls them only through this table. */
#include "halo_internal.h"

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
            [TRIDI_TRANSPORT_NCCL] = &tridi_halo_nccl,
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
