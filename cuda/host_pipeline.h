// Pieces of host-array mode shared by the solve (cuda/host_pipeline.cu) and the uploads ahead of it
// (cuda/host_upload.cu): the rows that packing copies, one slab's copy to the device, and the waits on
// tridi's upload thread (docs/decisions/033).
#ifndef TRIDI_CUDA_HOST_PIPELINE_H
#define TRIDI_CUDA_HOST_PIPELINE_H

#include "cuda_internal.h"
#include "host_box.h"

namespace tridi_cuda {

// The box cells of each slab inside the host array and the widened layout: the rows that packing copies.
struct slab_rows {
    region host[MAX_SLABS], wide[MAX_SLABS];
    int64_t rows(int sl) const { return host[sl].cnt[1] * host[sl].cnt[2]; }
    // Packs row i of slab sl of an input: from the caller's array (type st) into its widened pinned staging
    // (type dt).
    void pack(const box_plan &b, int sl, int64_t i, const void *src, tridi_dtype st, void *dst, tridi_dtype dt) const
    {
        copy_row(src, st, host_layout(b), host[sl].pos, dst, dt, widened_layout(b), wide[sl].pos, host[sl].cnt, i);
    }
};

slab_rows plan_slab_rows(const box_plan &b, int S);

// Host bytes that packing one input's box touches (what copy_threads sizes the threads by).
size_t pack_bytes(const box_plan &b, tridi_dtype st, tridi_dtype dt);

// Queues slab sl of input r (lines [b2, e2) along the slab axis) on the role's stream: DMA straight from a
// registered array, else from the pinned staging packed before; then records ev_in[r][sl]. On failure
// *what names the call.
cudaError_t send_slab(tridi_cuda_state *st, const box_plan &b, int r, const void *host, tridi_dtype xfer, bool direct,
                      int64_t b2, int64_t e2, int sl, const char **what);

// Returns once slab sl of role r's upload number seq (upload_key::seq; 0: queued by the caller itself) has its
// copy and event queued, running the upload here if tridi's upload thread has not started it; its failure,
// if it failed.
tridi_status upload_wait(tridi_cuda_state *st, int r, uint64_t seq, int sl);

// Returns once role r's upload job is neither queued nor running (a queued one is dropped: it has read
// nothing), so that waiting for the role's stream covers every read of its array.
void upload_settle(tridi_cuda_state *st, int r);

} // namespace tridi_cuda

#endif
