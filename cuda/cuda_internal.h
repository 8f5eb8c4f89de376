// The CUDA backend's context state (tridi_cuda_state) and the helpers that its files share: device memory
// (cuda/memory.cu), the verdict slots of device solves. The backend's entry points are declared under
// TRIDI_HAVE_CUDA in src/tridi_internal.h.
#ifndef TRIDI_CUDA_INTERNAL_H
#define TRIDI_CUDA_INTERNAL_H

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "cuda_status.h"
#include "kernel_args.h"
#include "tridi_internal.h"

constexpr int NSLOT = 256;    // device-mode solves that may be in flight before the oldest is checked
constexpr int HOST_SLOT = NSLOT;
constexpr int GRAPH_SLOT = NSLOT + 1; // every device solve captured in a CUDA graph (device_solve.cu)
constexpr int NSLOT_ALL = NSLOT + 2;
constexpr int MAX_SLABS = 8;
// Host-array pipeline: one slab per this many box cells (TRIDI_HOST_SLAB_CELLS overrides it: tuning.c). Fewer, larger
// slabs spend less on per-copy overhead; more, smaller ones leave a shorter tail (the last slab's solve and
// answers) after the last upload.
constexpr int64_t SLAB_CELLS = 1 << 19;

// One context's device allocations and its TRIDI_DEVICE_MEMORY_LIMIT (bytes; 0: none), read at
// tridi_create: allocations that would take the context past it fail with TRIDI_ERROR_OUT_OF_MEMORY.
struct device_budget {
    size_t limit = 0;
    size_t used = 0;
};

struct dbuf {
    void *p = nullptr;
    size_t bytes = 0;
};

struct hbuf {
    void *p = nullptr;
    size_t bytes = 0;
};

// What tridi_upload_async left on the device for one input, so the next solve can use it.
struct upload_key {
    bool valid = false;
    tridi_grid grid{};
    int axis = 0;
    int64_t lo[3]{}, hi[3]{};
    const void *host = nullptr;
    tridi_dtype type = TRIDI_FLOAT32, xfer = TRIDI_FLOAT32;
    void *dptr = nullptr;
    int slabs = 0; // its slab s arrived when ev_in[role][s] fired; 1: the whole box (ev_in[role][0])
    uint64_t seq = 0; // its job on tridi's upload thread (cuda/host_upload.cu); 0: queued by the caller
};

struct pending_solve {
    bool active = false;
    tridi_problem p{};
    unsigned long long call = 0; // the context's device solve number (messages of deferred verdicts)
    bool plan = false;           // made by tridi_plan_solve (else tridi_solve_device)
};

// The plan of the context's latest device-mode solve and what it was made from: a model repeats the same
// solves, and the plan's occupancy queries cost the host a fair part of a small grid's call.
struct plan_memo {
    bool valid = false;
    tridi_dtype l = TRIDI_FLOAT32, d = TRIDI_FLOAT32, x = TRIDI_FLOAT32;
    tk_view view{};
    int64_t n = 0, n1 = 0, lines = 0;
    bool contig = false, coop_wanted = false;
    tk_plan plan{};
};

// tridi_upload_async's upload thread and pack threads (cuda/host_upload.cu).
namespace tridi_cuda {
struct host_uploads;
}
struct tridi_cpu_pool;

struct tridi_cuda_state {
    int device = 0;
    int allow_f32 = 0;
    int64_t slab_cells = SLAB_CELLS;
    tridi_host_x_choice x_choice = TRIDI_HOST_X_RULE;
    device_budget mem;                        // device allocations and TRIDI_DEVICE_MEMORY_LIMIT
    tk_choice kernel{0, 0};                   // TRIDI_CUDA_KERNEL (family 0: the planner's rule)
    cudaStream_t compute = nullptr, down = nullptr, up[4] = {};
    cudaStream_t slab[MAX_SLABS] = {};     // host mode: slab s is solved on slab[s] (slabs solve concurrently)
    cudaEvent_t ev_in[4][MAX_SLABS] = {};  // slab s of a role has arrived (by the solve or upload_async)
    cudaEvent_t ev_solved[MAX_SLABS] = {}; // slab s solved
    cudaEvent_t ev_armed = nullptr;        // host mode's error slot reset
    // Host mode's error slot was reset behind the previous call's verdict and that call synchronised
    // after it: the next call queues no reset and no wait for one (docs/decisions/039).
    bool host_err_armed = false;
    cudaEvent_t ev_slot[NSLOT] = {};       // device-mode solve of a slot committed
    cudaEvent_t ev_last = nullptr;         // the context's latest queued work
    bool have_last = false;
    cudaStream_t last_stream = nullptr;    // the stream ev_last was recorded on
    tk_slot *d_slots = nullptr;            // NSLOT_ALL verdict slots: the ring, host mode's, the graphs'
    tk_verdict *h_mirror = nullptr, *h_mirror_dev = nullptr; // mapped pinned verdicts of the slots
    unsigned long long calls = 0;          // device solves queued so far
    // Pinned: host mode's verdict (h_verdict[0]), and the lowest failing line after slab s was solved
    // (h_verdict[1 + s], the slabwise answers of docs/decisions/037), read without a pageable copy.
    unsigned long long *h_verdict = nullptr;
    int next_slot = 0;
    pending_solve pending[NSLOT];
    dbuf din[4], dout, dbox, scratch;
    hbuf hin[4], hout;                     // pinned staging of unregistered arrays
    std::vector<char> undo;                // the old box of a registered x, put back if a line fails
    plan_memo memo;                        // device mode's latest plan
    // Solves captured in CUDA graphs share GRAPH_SLOT, whose failures add up over the replays until
    // tridi_cuda_synchronize reads it (docs/decisions/030). graph_p: the latest captured solve, of the live
    // plan graph_plan (NULL once it is destroyed); graph_mixed: solves of another plan, box or arrays were
    // captured while it lived. Only when neither holds is a failing line's cell located (in graph_p's arrays).
    bool graph_used = false, graph_mixed = false;
    const void *graph_plan = nullptr;
    tridi_problem graph_p{};
    // A kept solve (tridi_cuda_solve_keep): its answers wait in dbox for tridi_cuda_commit or
    // tridi_cuda_rollback (docs/decisions/020).
    // Any later device solve reuses the box, so it drops the kept answers.
    bool kept = false;
    int kept_slot = 0;
    tridi_problem kept_p{};
    upload_key uploaded[4];
    tridi_cuda::host_uploads *uploads = nullptr;       // made by the first tridi_upload_async
    int64_t pack_spin_ns = 0;              // how long tridi's threads watch for the next job (TRIDI_CPU_SPIN_US)
    // The caller's host copies (packing, x's box): tridi's threads (docs/decisions/028), made by the first
    // copy that wants them, or the caller's OpenMP team (openmp_copies: tridi_tuning::cpu_openmp_team).
    tridi_cpu_pool *copy_pool = nullptr;
    bool copy_pool_failed = false;
    bool openmp_copies = false;
    bool uploads_on_caller = false;        // TRIDI_CPU_POOL=0: uploads packed on the caller's team, as before
    std::unordered_map<void *, size_t> user_allocs;
    // The MPI layer's cut solves (tridi_cuda_scratch): work arrays and reduced coefficients on the device,
    // coefficients and x_L, x_R in pinned host memory.
    dbuf mpi_dev[2];
    hbuf mpi_pinned[2];
    // A kept host-array solve (tridi_cuda_host_keep): the old box of x, packed, for its rollback.
    std::unique_ptr<char[]> host_kept_box;
    size_t host_kept_cap = 0;
    bool host_kept = false;
    tridi_problem host_kept_p{};
};

namespace tridi_cuda {

// The lowest failing line of a slot (every kernel's atomicMin target).
inline unsigned long long *err_word(tridi_cuda_state *st, int slot) { return &st->d_slots[slot].first; }

// Device memory counted against the context's budget (cuda/memory.cu).
tridi_status device_alloc(device_budget &m, size_t bytes, void **p, const char *purpose);
void device_release(device_budget &m, void *p, size_t bytes);
// Grows b to at least `bytes` (its contents are not kept).
tridi_status ensure(tridi_cuda_state *st, dbuf &b, size_t bytes, const char *purpose);
tridi_status ensure_pinned(hbuf &b, size_t bytes);
// Returns once no upload of tridi's upload thread is queued or running (queued ones are dropped: they never
// read the caller's arrays), so that waiting for the up streams covers every read of them (host_upload.cu).
void uploads_settle(tridi_cuda_state *st);
// Ends tridi's host threads of the state (host_upload.cu): the upload and pack threads (after
// uploads_settle) and the copy threads.
void free_host_threads(tridi_cuda_state *st);

} // namespace tridi_cuda

#endif
