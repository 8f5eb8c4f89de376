// CUDA backend: the functions declared under TRIDI_HAVE_CUDA in src/tridi_internal.h.
//
// Host-array mode (tridi_solve on the caller's host arrays). The box of each input goes to a device buffer
// laid out like the caller's array restricted to the box, widened to whole rows and planes where the halo is
// thin (see plan_box), so that the kernels read it through a view and nothing is repacked. How an input gets
// there depends on its memory:
//  - registered (tridi_host_register): DMA straight from the caller's array, the box as a 3D copy whose
//    contiguous parts are folded into long runs; no host packing at all, so tridi_upload_async only queues
//    the copy on that input's stream and returns, and the transfer overlaps whatever the caller does next;
//  - otherwise: the box rows are packed on the host into pinned staging of the same layout, then sent.
// The solve is pipelined in slabs along the outer line axis: each input slab goes up on the input's own
// stream, each slab is solved on its own stream as soon as its four inputs are there, and its answers go
// back while later slabs are still going up. No partial answer ever stays in the caller's x (see x_path):
// answers for a registered x go by DMA straight into x, slab by slab after the old box of x was saved on the
// host (put back if any line failed) while inputs still move, or in one copy after the verdict when every
// input was already on the device; answers for an unregistered x go to pinned staging and are copied into x
// only once every line is known to have succeeded.
//
// Device mode solves into a compact box buffer owned by the context; a commit kernel copies it into the
// caller's x only if the solve's error slot is clear, so nothing synchronises and a failing solve leaves
// x as it was. Failures are collected by tridi_cuda_synchronize.
#include "thomas_kernels.cuh"
#include "tridi_internal.h"

#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace {

constexpr int NSLOT = 256;    // device-mode solves that may be in flight before the oldest is checked
constexpr int HOST_SLOT = NSLOT;
constexpr int MAX_SLABS = 8;
// Host-array pipeline: one slab per this many box cells (TRIDI_HOST_SLAB_CELLS overrides it: tuning.c). Fewer, larger
// slabs spend less on per-copy overhead; more, smaller ones leave a shorter tail (the last slab's solve and
// answers) after the last upload.
constexpr int64_t SLAB_CELLS = 1 << 19;

// tridi_upload_async sends a box of at most this many slabs as one copy with one event (each copy and
// event costs the host several us of CUDA calls, which the model waits for); larger boxes go slab by slab,
// so that the solve starts on the first slabs of the last array while the rest still moves.
constexpr int UPLOAD_WHOLE_MAX_SLABS = 3;

std::atomic<size_t> g_device_bytes{0}; // every device allocation of every context in this process

// One context's device allocations and its TRIDI_DEVICE_MEMORY_LIMIT (bytes; 0: none), read at
// tridi_create: allocations that would take the context past it fail with TRIDI_ERROR_OUT_OF_MEMORY.
struct device_budget {
    size_t limit = 0;
    size_t used = 0;
};

// The eager path (below) pays a host copy of x's old box, hidden only behind transfers this very call
// makes: it is taken when the call uploads at least EAGER_UPLOAD_RATIO times x's box bytes itself.
// TRIDI_HOST_X_PATH=eager / verdict (tridi_tuning::host_x) forces one way (the tests take both).
constexpr size_t EAGER_UPLOAD_RATIO = 4;

tridi_status cuda_fail(const char *what, cudaError_t e)
{
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); // allocation failures are not sticky: clear them so the next call works
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi (CUDA): %s: %s", what, cudaGetErrorString(e));
    }
    return tridi_fail(TRIDI_ERROR_CUDA, "tridi (CUDA): %s: %s (%s)", what, cudaGetErrorString(e),
                      cudaGetErrorName(e));
}

#define CK(call, what)                                                                                   \
    do {                                                                                                 \
        cudaError_t ck_e = (call);                                                                       \
        if (ck_e != cudaSuccess)                                                                         \
            return cuda_fail(what, ck_e);                                                                \
    } while (0)

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

#ifdef TRIDI_FAULT_INJECTION
// Tests only (CMake option TRIDI_FAULT_INJECTION, off by default): tridi_test_fail_launch(n) makes the n-th
// kernel launch from now fail for real, so that the path a refused launch takes (status, buffers, the
// context's next call) can be tested; no input can provoke one.
std::atomic<int> g_launches_before_failure{0};

__global__ void never_runs() {}

// Called where the library launches a kernel, just before: when that launch is the one due to fail, a
// launch of one block of 2048 threads (past every GPU's limit of 1024) is made instead, which the runtime
// refuses; its error is returned and the library's launch is not made.
cudaError_t injected_launch(cudaStream_t s)
{
    if (g_launches_before_failure.load() <= 0 || g_launches_before_failure.fetch_sub(1) != 1)
        return cudaSuccess;
    never_runs<<<1, 2048, 0, s>>>();
    return cudaGetLastError();
}
#else
inline cudaError_t injected_launch(cudaStream_t) { return cudaSuccess; }
#endif

// Every array of a device solve must be memory the context's device can address: a kernel reading host
// memory faults, and a fault is a sticky error that ends every later CUDA call of the process. Pointers
// once found good are remembered (per thread) so that repeated solves on the same arrays ask the driver
// nothing.
tridi_status check_device_arrays(int device, const tridi_problem *p)
{
    struct checked {
        const void *ptr;
        int device;
    };
    static thread_local checked good[16];
    static thread_local int next_good = 0;
    static const char *role[5] = {"lower", "diag", "upper", "rhs", "x"};
    const void *ptr[5] = {p->arrays.lower, p->arrays.diag, p->arrays.upper, p->arrays.rhs, p->arrays.x};
    for (int r = 0; r < 5; ++r) {
        bool known = false;
        for (const checked &c : good)
            known = known || (c.ptr == ptr[r] && c.device == device);
        if (known)
            continue;
        cudaPointerAttributes at;
        cudaError_t e = cudaPointerGetAttributes(&at, ptr[r]);
        if (e != cudaSuccess) {
            cudaGetLastError();
            char what[96];
            std::snprintf(what, sizeof what, "cudaPointerGetAttributes on arrays->%s", role[r]);
            return cuda_fail(what, e);
        }
        const bool ok = at.type == cudaMemoryTypeManaged || (at.type == cudaMemoryTypeDevice && at.device == device) ||
                        (at.type == cudaMemoryTypeHost && at.devicePointer == ptr[r]);
        if (!ok)
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "tridi_solve_device: arrays->%s = %p is %s, not memory that device %d can address "
                              "(allocate it with tridi_device_alloc or cudaMalloc on that device)",
                              role[r], ptr[r],
                              at.type == cudaMemoryTypeDevice ? "memory of another device"
                              : at.type == cudaMemoryTypeHost ? "pinned host memory not mapped for the device"
                                                              : "host memory",
                              device);
        good[next_good] = {ptr[r], device};
        next_good = (next_good + 1) % 16;
    }
    return TRIDI_SUCCESS;
}

struct dbuf {
    void *p = nullptr;
    size_t bytes = 0;
};

struct hbuf {
    void *p = nullptr;
    size_t bytes = 0;
};

// A compact box: rows of `len` contiguous cells; row = r + R*l2 starts at origin + r*rs + l2*s2 in the
// caller's array. x sweeps: a row is a line (len = n, R = n1); y and z sweeps: a row is a run along i
// of one unknown (len = n1, R = n), so neighbouring threads take neighbouring lines.
struct rows_geo {
    int64_t len, R, origin, rs, s2;
};

rows_geo geometry(const tridi_problem *p)
{
    if (p->axis == TRIDI_AXIS_X)
        return {p->n, p->n1, p->origin, p->stride[p->a1], p->stride[p->a2]};
    return {p->n1, p->n, p->origin, p->stride[p->axis], p->stride[p->a2]};
}

tk_view compact_view(const tridi_problem *p)
{
    if (p->axis == TRIDI_AXIS_X)
        return {0, p->n, p->n * p->n1, 1};
    return {0, 1, p->n1 * p->n, p->n1};
}

// ---- host-array mode: layouts, copies ----

// Where a host-array solve's box lives. Axes are the arrays' own (0 = i, contiguous); positions count
// elements from the allocation's first cell. Inputs live on the device in the "widened" layout: the box,
// stretched along i to the whole allocated rows when the halo adds at most an eighth, and then along j to
// the whole planes on the same rule. Why: a copy engine moves a long contiguous run at full PCIe speed but a
// box of short rows (140 floats = 560 B on the flow_channel grids) row by row; widened, each k-plane of the
// box is one run, and consecutive planes join into one run, for halo cells moved but never read. Answers
// live in the "box" layout: the box alone, in Fortran order, which is what goes back into x.
struct box_plan {
    int64_t ext[3];      // allocated extent of the caller's arrays
    int64_t lo[3], n[3]; // the box: first cell and extent
    int64_t wlo[3], w[3];// the widened box of the device inputs
    size_t wcells, bcells;
    int a2;              // slab axis: the outer line axis
    tk_view in, out;     // kernel views of the widened inputs and the box answer
};

box_plan plan_box(const tridi_problem *p)
{
    box_plan b{};
    for (int a = 0; a < 3; ++a) {
        b.ext[a] = p->extent[a];
        b.lo[a] = p->lo[a] - p->grid.lbound[a];
        b.n[a] = p->hi[a] - p->lo[a] + 1;
        b.wlo[a] = b.lo[a];
        b.w[a] = b.n[a];
    }
    if ((b.ext[0] - b.n[0]) * 8 <= b.n[0]) {
        b.wlo[0] = 0;
        b.w[0] = b.ext[0];
        if ((b.ext[1] - b.n[1]) * 8 <= b.n[1]) {
            b.wlo[1] = 0;
            b.w[1] = b.ext[1];
        }
    }
    b.wcells = (size_t)(b.w[0] * b.w[1] * b.w[2]);
    b.bcells = (size_t)(b.n[0] * b.n[1] * b.n[2]);
    b.a2 = p->a2;
    const int64_t ws[3] = {1, b.w[0], b.w[0] * b.w[1]}, bs[3] = {1, b.n[0], b.n[0] * b.n[1]};
    const int64_t off = (b.lo[0] - b.wlo[0]) + (b.lo[1] - b.wlo[1]) * ws[1] + (b.lo[2] - b.wlo[2]) * ws[2];
    b.in = {off, ws[p->a1], ws[p->a2], ws[p->axis]};
    b.out = {0, bs[p->a1], bs[p->a2], bs[p->axis]};
    return b;
}

// Slabs of the pipeline: from the box's size only, so that tridi_upload_async and the solve cut alike.
int slab_count(const box_plan &b, int64_t slab_cells)
{
    int64_t S = ((int64_t)b.bcells + slab_cells - 1) / slab_cells;
    S = S > MAX_SLABS ? MAX_SLABS : S;
    return (int)(S > b.n[b.a2] ? b.n[b.a2] : S);
}

// Lines along the slab axis of slab sl of S: [first, end).
void slab_range(const box_plan &b, int sl, int S, int64_t *first, int64_t *end)
{
    *first = b.n[b.a2] * sl / S;
    *end = b.n[b.a2] * (sl + 1) / S;
}

// A region of a 3D layout: cnt cells from pos; the layout's rows hold dim0 cells and its planes dim1 rows.
struct region {
    int64_t pos[3], cnt[3];
};
struct layout {
    int64_t dim0, dim1;
};

// The part of the inputs' widened box that slab [b2, e2) (lines along the slab axis) needs: whole widened
// rows and planes except along the slab axis. pos is relative to the allocation (host) and to the
// widened box (device).
void input_slab(const box_plan &b, int64_t b2, int64_t e2, region &host, region &dev)
{
    for (int a = 0; a < 3; ++a) {
        const int64_t start = a == b.a2 ? b.lo[a] + b2 : b.wlo[a], cnt = a == b.a2 ? e2 - b2 : b.w[a];
        host.pos[a] = start;
        dev.pos[a] = start - b.wlo[a];
        host.cnt[a] = dev.cnt[a] = cnt;
    }
}

// The box cells of slab [b2, e2) (only box cells: what may be written into x), relative to the
// allocation (host) and to the box (box layout).
void box_slab(const box_plan &b, int64_t b2, int64_t e2, region &host, region &box)
{
    for (int a = 0; a < 3; ++a) {
        const int64_t first = a == b.a2 ? b2 : 0, cnt = a == b.a2 ? e2 - b2 : b.n[a];
        host.pos[a] = b.lo[a] + first;
        box.pos[a] = first;
        host.cnt[a] = box.cnt[a] = cnt;
    }
}

// The box cells of slab [b2, e2) inside the widened layout (what the host packs into staging).
void box_in_widened(const box_plan &b, int64_t b2, int64_t e2, region &host, region &dev)
{
    box_slab(b, b2, e2, host, dev);
    for (int a = 0; a < 3; ++a)
        dev.pos[a] = host.pos[a] - b.wlo[a];
}

layout host_layout(const box_plan &b) { return {b.ext[0], b.ext[1]}; }
layout widened_layout(const box_plan &b) { return {b.w[0], b.w[1]}; }
layout box_layout(const box_plan &b) { return {b.n[0], b.n[1]}; }

int64_t cell_offset(const layout &l, const int64_t pos[3]) { return pos[0] + l.dim0 * (pos[1] + l.dim1 * pos[2]); }

// Copies region r (same extent on both sides) between two layouts by DMA, folding what is contiguous on
// both sides into longer runs: whole rows join into one run per plane, whole planes into one run.
cudaError_t dma_region(void *dst, const layout &dl, const int64_t dpos[3], const void *src, const layout &sl,
                       const int64_t spos[3], const int64_t cnt[3], size_t es, cudaMemcpyKind kind, cudaStream_t stream)
{
    char *d = (char *)dst + cell_offset(dl, dpos) * es;
    const char *s = (const char *)src + cell_offset(sl, spos) * es;
    const size_t drow = dl.dim0 * es, srow = sl.dim0 * es, dplane = drow * dl.dim1, splane = srow * sl.dim1;
    const bool full_rows = cnt[0] == dl.dim0 && cnt[0] == sl.dim0, full_planes = cnt[1] == dl.dim1 && cnt[1] == sl.dim1;
    const size_t pitch_max = (size_t)INT32_MAX; // cudaMemcpy2D's pitches are ints on the device side
    if (full_rows && (full_planes || cnt[2] == 1))
        return cudaMemcpyAsync(d, s, cnt[0] * cnt[1] * cnt[2] * es, kind, stream);
    if (full_rows && dplane <= pitch_max && splane <= pitch_max)
        return cudaMemcpy2DAsync(d, dplane, s, splane, cnt[0] * cnt[1] * es, cnt[2], kind, stream);
    if (drow > pitch_max || srow > pitch_max) { // absurdly long rows: one copy per row
        for (int64_t k = 0; k < cnt[2]; ++k)
            for (int64_t j = 0; j < cnt[1]; ++j) {
                cudaError_t e = cudaMemcpyAsync(d + j * drow + k * dplane, s + j * srow + k * splane, cnt[0] * es,
                                                kind, stream);
                if (e != cudaSuccess)
                    return e;
            }
        return cudaSuccess;
    }
    if (full_planes || cnt[2] == 1) // rows evenly spaced across planes
        return cudaMemcpy2DAsync(d, drow, s, srow, cnt[0] * es, cnt[1] * cnt[2], kind, stream);
    cudaMemcpy3DParms m{};
    m.srcPtr = make_cudaPitchedPtr((void *)s, srow, srow, sl.dim1);
    m.dstPtr = make_cudaPitchedPtr(d, drow, drow, dl.dim1);
    m.extent = make_cudaExtent(cnt[0] * es, cnt[1], cnt[2]);
    m.kind = kind;
    return cudaMemcpy3DAsync(&m, stream);
}

// Copies row `row` (of cnt[1] * cnt[2]) of a region between two host layouts; double -> float on the way
// when the destination type is narrower (the float transfer of double inputs).
inline void copy_row(const void *src, tridi_dtype st, const layout &sl, const int64_t spos[3], void *dst,
                     tridi_dtype dt, const layout &dl, const int64_t dpos[3], const int64_t cnt[3], int64_t row)
{
    const size_t se = tridi_dtype_size(st), de = tridi_dtype_size(dt);
    const int64_t j = row % cnt[1], k = row / cnt[1], len = cnt[0];
    const char *s = (const char *)src + (cell_offset(sl, spos) + (j + k * sl.dim1) * sl.dim0) * se;
    char *d = (char *)dst + (cell_offset(dl, dpos) + (j + k * dl.dim1) * dl.dim0) * de;
    if (st == dt) {
        std::memcpy(d, s, len * de);
    } else {
        const double *sd = (const double *)s;
        float *df = (float *)d;
        for (int64_t q = 0; q < len; ++q)
            df[q] = (float)sd[q];
    }
}

// Threads for a host copy of this many bytes: one per 512 KiB, at most 8. A model calls between its own
// serial loops, where OpenMP's idle threads fall asleep, and waking all 16 of a 16-core host's per copy cost
// more than they copied; keeping them spinning (OMP_WAIT_POLICY=active) is the caller's choice, which a
// library must not impose (see docs/decisions/012).
int copy_threads(size_t bytes)
{
    return (int)std::max<int64_t>(1, std::min<int64_t>((int64_t)(bytes >> 19), std::min(8, omp_get_max_threads())));
}

// Copies the rows of region cnt between two host layouts, threads over rows.
void copy_rows(const void *src, tridi_dtype st, const layout &sl, const int64_t spos[3], void *dst, tridi_dtype dt,
               const layout &dl, const int64_t dpos[3], const int64_t cnt[3])
{
    const size_t es = std::max(tridi_dtype_size(st), tridi_dtype_size(dt));
    const int64_t rows = cnt[1] * cnt[2];
    const int nt = copy_threads((size_t)(rows * cnt[0]) * es);
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t row = 0; row < rows; ++row)
        copy_row(src, st, sl, spos, dst, dt, dl, dpos, cnt, row);
}

// Packs slab after slab in ONE OpenMP region: pack(sl, i) for i < rows(sl) on nt threads, then queue(sl) on
// the calling thread (which holds the context's device) as soon as slab sl is packed, while the other
// threads go on to the next slab. Sleeping threads are woken once per call instead of once per slab and
// array, which is what packing cost between a model's serial loops (see copy_threads and
// docs/decisions/012). The first failing queue(sl) ends the queueing; its status is returned.
template <class Rows, class Pack, class Queue>
tridi_status pack_pipeline(int nt, int S, Rows &&rows, Pack &&pack, Queue &&queue)
{
    tridi_status status = TRIDI_SUCCESS;
#pragma omp parallel num_threads(nt) if (nt > 1)
    for (int sl = 0; sl < S; ++sl) {
        const int64_t n = rows(sl);
#pragma omp for schedule(dynamic, 16)
        for (int64_t i = 0; i < n; ++i)
            pack(sl, i);
        // for's barrier: slab sl is packed. The master queues it without a barrier after, so the others
        // start on slab sl + 1, taking the master's share by the dynamic schedule.
#pragma omp master
        if (status == TRIDI_SUCCESS)
            status = queue(sl);
    }
    return status;
}

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
};

bool same_box(const upload_key &k, const tridi_problem *p)
{
    if (!k.valid || k.axis != (int)p->axis || k.grid.ndim != p->grid.ndim)
        return false;
    for (int a = 0; a < 3; ++a)
        if (k.grid.lbound[a] != p->grid.lbound[a] || k.grid.ubound[a] != p->grid.ubound[a] || k.lo[a] != p->lo[a] ||
            k.hi[a] != p->hi[a])
            return false;
    return true;
}

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

} // namespace

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
    cudaEvent_t ev_slot[NSLOT] = {};       // device-mode solve of a slot committed
    cudaEvent_t ev_last = nullptr;         // the context's latest queued work
    bool have_last = false;
    cudaStream_t last_stream = nullptr;    // the stream ev_last was recorded on
    tk_slot *d_slots = nullptr;            // NSLOT + 1 verdict slots; the last one is host mode's
    tk_verdict *h_mirror = nullptr, *h_mirror_dev = nullptr; // mapped pinned verdicts of the slots
    unsigned long long calls = 0;          // device solves queued so far
    unsigned long long *h_verdict = nullptr; // pinned: host mode's verdict, read without a pageable copy
    int next_slot = 0;
    pending_solve pending[NSLOT];
    dbuf din[4], dout, dbox, scratch;
    hbuf hin[4], hout;                     // pinned staging of unregistered arrays
    std::vector<char> undo;                // the old box of a registered x, put back if a line fails
    plan_memo memo;                        // device mode's latest plan
    // A held solve (tridi_cuda_solve_device_held): its answers wait in dbox for tridi_cuda_commit_held.
    // Any later device solve reuses the box, so it drops the hold.
    bool held = false;
    int held_slot = 0;
    tridi_problem held_p{};
    upload_key uploaded[4];
    std::unordered_map<void *, size_t> user_allocs;
};

namespace {

// The lowest failing line of a slot (every kernel's atomicMin target).
unsigned long long *err_word(tridi_cuda_state *st, int slot) { return &st->d_slots[slot].first; }

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

// Storage types of the three kernel operands: lower/upper/rhs, diag, answer.
struct kernel_types {
    tridi_dtype l, d, x;
};

kernel_types types_of(const tridi_problem *p, bool f32_transfer)
{
    kernel_types k{p->arrays.lower_type, p->arrays.diag_type, p->arrays.x_type};
    if (f32_transfer) {
        k.l = TRIDI_FLOAT32;
        k.d = TRIDI_FLOAT32;
    }
    return k;
}

// Calls fn with null pointers of the three kernel operand types (lower/upper/rhs, diag, answer).
template <class Fn>
tridi_status with_types(const kernel_types &k, Fn &&fn)
{
    using F = float;
    using D = double;
    if (k.l == TRIDI_FLOAT32 && k.d == TRIDI_FLOAT32 && k.x == TRIDI_FLOAT32)
        return fn((F *)nullptr, (F *)nullptr, (F *)nullptr);
    if (k.l == TRIDI_FLOAT64 && k.d == TRIDI_FLOAT64 && k.x == TRIDI_FLOAT64)
        return fn((D *)nullptr, (D *)nullptr, (D *)nullptr);
    if (k.l == TRIDI_FLOAT32 && k.d == TRIDI_FLOAT64 && k.x == TRIDI_FLOAT32)
        return fn((F *)nullptr, (D *)nullptr, (F *)nullptr);
    if (k.l == TRIDI_FLOAT32 && k.d == TRIDI_FLOAT32 && k.x == TRIDI_FLOAT64)
        return fn((F *)nullptr, (F *)nullptr, (D *)nullptr);
    return tridi_fail(TRIDI_ERROR_INTERNAL, "tridi (CUDA): no kernel for this type combination (please report)");
}

tridi_status plan_solve(const tk_choice &choice, const kernel_types &k, const tk_args &a, bool contiguous,
                        bool want_coop, tk_plan *plan)
{
    return with_types(k, [&](auto *l, auto *d, auto *x) {
        using TL = std::remove_pointer_t<decltype(l)>;
        using TD = std::remove_pointer_t<decltype(d)>;
        using TX = std::remove_pointer_t<decltype(x)>;
        CK((tk_make_plan<TL, TD, TX>(a, contiguous, want_coop, plan, choice)), "planning the Thomas kernel");
        return TRIDI_SUCCESS;
    });
}

tridi_status run_solve(const kernel_types &k, const tk_args &a, const tk_plan &plan, cudaStream_t s)
{
    return with_types(k, [&](auto *l, auto *d, auto *x) {
        using TL = std::remove_pointer_t<decltype(l)>;
        using TD = std::remove_pointer_t<decltype(d)>;
        using TX = std::remove_pointer_t<decltype(x)>;
        CK(injected_launch(s), "launching the Thomas kernel");
        CK((tk_run<TL, TD, TX>(a, plan, s)), "launching the Thomas kernel");
        return TRIDI_SUCCESS;
    });
}

// A plain (not cooperative) solve: the host-array pipeline's.
tridi_status launch_solve(const tk_choice &choice, const kernel_types &k, const tk_args &a, bool contiguous,
                          cudaStream_t s)
{
    tk_plan plan;
    tridi_status st = plan_solve(choice, k, a, contiguous, false, &plan);
    return st ? st : run_solve(k, a, plan, s);
}

// A failure record with no failing unknown found: the float transfer of double inputs overflowed
// (allow_f32_transfer), or a kernel flagged what the diagnosis cannot find.
tridi_status report_failure(const char *func, const tridi_problem *p, int64_t line, const tk_fail &f, bool f32)
{
    tk_fail g = f;
    if (g.kind == TRIDI_FAIL_NONE)
        g = tk_fail{0, f32 ? TRIDI_FAIL_F32_TRANSFER : TRIDI_FAIL_UNLOCATED};
    return tridi_thomas_report(func, p, line, g);
}

template <class TL, class TD, class TX>
void locate_host_typed(const tridi_problem *p, int64_t off, tk_fail *out, double *W, double *G)
{
    const int64_t s = p->stride[p->axis];
    tk_locate<TL, TD, TX>((const TL *)p->arrays.lower + off, (const TD *)p->arrays.diag + off,
                          (const TL *)p->arrays.upper + off, (const TL *)p->arrays.rhs + off, s, p->n, W, G, out);
}

// ON_ERROR_LINES after a host-array solve in which a line failed (the rare path): every line is solved
// again on the host (MOHID's recurrence with true divisions, tk_locate), so that each failing line keeps
// x's old values (put back from `undo`, x's old box, when the answers already went into x) and every other
// line gets its answer. The device's answers of failing lines were never written, so they cannot be used.
template <class TL, class TD, class TX>
void lines_on_host_typed(const tridi_problem *p, const int64_t box_n[3], const char *undo, int64_t *first,
                         tk_fail *first_fail, int64_t *nfailed)
{
    const int64_t str = p->stride[p->axis], n = p->n;
    const size_t xs = sizeof(TX);
    int64_t lowest = INT64_MAX, count = 0;
    tk_fail lowest_fail{};
#pragma omp parallel
    {
        std::vector<double> W((size_t)n), G((size_t)n);
        int64_t my_lowest = INT64_MAX, my_count = 0;
        tk_fail my_fail{};
#pragma omp for schedule(static) nowait
        for (int64_t l = 0; l < p->nlines; ++l) {
            const int64_t off = tridi_line_offset(p, l);
            tk_fail f{};
            tk_locate<TL, TD, TX>((const TL *)p->arrays.lower + off, (const TD *)p->arrays.diag + off,
                                  (const TL *)p->arrays.upper + off, (const TL *)p->arrays.rhs + off, str, n, W.data(),
                                  G.data(), &f);
            TX *X = (TX *)p->arrays.x + off;
            if (f.kind) {
                ++my_count;
                if (l < my_lowest) {
                    my_lowest = l;
                    my_fail = f;
                }
                if (undo) {
                    int64_t pos[3];
                    pos[p->a1] = l % p->n1;
                    pos[p->a2] = l / p->n1;
                    for (int64_t m = 0; m < n; ++m) {
                        pos[p->axis] = m;
                        std::memcpy(X + m * str, undo + (pos[0] + box_n[0] * (pos[1] + box_n[1] * pos[2])) * xs, xs);
                    }
                }
                continue;
            }
            TX x = (TX)G[n - 1];
            X[(n - 1) * str] = x;
            for (int64_t m = n - 2; m >= 0; --m) {
                x = (TX)(W[m] * (double)x + G[m]);
                X[m * str] = x;
            }
        }
#pragma omp critical
        {
            count += my_count;
            if (my_lowest < lowest) {
                lowest = my_lowest;
                lowest_fail = my_fail;
            }
        }
    }
    *first = lowest;
    *first_fail = lowest_fail;
    *nfailed = count;
}

tridi_status lines_on_host(const char *func, const tridi_problem *p, const box_plan &b, const char *undo)
{
    int64_t first = 0, nfailed = 0;
    tk_fail f{};
    try {
        switch (p->combo) {
        case TRIDI_COMBO_F32: lines_on_host_typed<float, float, float>(p, b.n, undo, &first, &f, &nfailed); break;
        case TRIDI_COMBO_F64: lines_on_host_typed<double, double, double>(p, b.n, undo, &first, &f, &nfailed); break;
        case TRIDI_COMBO_MIXED: lines_on_host_typed<float, double, float>(p, b.n, undo, &first, &f, &nfailed); break;
        }
    } catch (const std::bad_alloc &) {
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: a line failed and its diagnosis ran out of memory", func);
    }
    if (nfailed == 0) // only the float transfer of double inputs failed: every line is answered from the doubles
        return TRIDI_SUCCESS;
    return tridi_thomas_report_lines(func, p, first, f, nfailed);
}

tridi_status locate_on_host(const char *func, const tridi_problem *p, int64_t line, bool f32)
{
    std::vector<double> wg;
    try {
        wg.resize((size_t)p->n * 2);
    } catch (const std::bad_alloc &) {
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: line %lld failed and its diagnosis ran out of memory",
                          func, (long long)line);
    }
    tk_fail f{};
    const int64_t off = tridi_line_offset(p, line);
    switch (p->combo) {
    case TRIDI_COMBO_F32: locate_host_typed<float, float, float>(p, off, &f, wg.data(), wg.data() + p->n); break;
    case TRIDI_COMBO_F64: locate_host_typed<double, double, double>(p, off, &f, wg.data(), wg.data() + p->n); break;
    case TRIDI_COMBO_MIXED: locate_host_typed<float, double, float>(p, off, &f, wg.data(), wg.data() + p->n); break;
    }
    return report_failure(func, p, line, f, f32);
}

// Diagnoses failing line `line` of a device solve (its inputs are still on the device: a failing line's
// own cells are never written, in place or not) and reports it; under ON_ERROR_LINES with the count.
tridi_status locate_on_device(tridi_cuda_state *st, const char *func, const tridi_problem *p, int64_t line,
                              int64_t nfailed)
{
    void *wg = nullptr;
    tk_fail *df = nullptr;
    tridi_status s = device_alloc(st->mem, (size_t)p->n * 2 * sizeof(double) + sizeof(tk_fail), &wg,
                                  "diagnosing a failed line");
    if (s)
        return s;
    df = (tk_fail *)((double *)wg + 2 * p->n);
    const int64_t off = tridi_line_offset(p, line), str = p->stride[p->axis];
    const tridi_arrays &A = p->arrays;
    switch (p->combo) {
    case TRIDI_COMBO_F32:
        tk_locate_kernel<float, float, float><<<1, 1, 0, st->compute>>>(
            (const float *)A.lower + off, (const float *)A.diag + off, (const float *)A.upper + off,
            (const float *)A.rhs + off, str, p->n, (double *)wg, df);
        break;
    case TRIDI_COMBO_F64:
        tk_locate_kernel<double, double, double><<<1, 1, 0, st->compute>>>(
            (const double *)A.lower + off, (const double *)A.diag + off, (const double *)A.upper + off,
            (const double *)A.rhs + off, str, p->n, (double *)wg, df);
        break;
    case TRIDI_COMBO_MIXED:
        tk_locate_kernel<float, double, float><<<1, 1, 0, st->compute>>>(
            (const float *)A.lower + off, (const double *)A.diag + off, (const float *)A.upper + off,
            (const float *)A.rhs + off, str, p->n, (double *)wg, df);
        break;
    }
    tk_fail f{};
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&f, df, sizeof f, cudaMemcpyDeviceToHost, st->compute);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(st->compute);
    device_release(st->mem, wg, (size_t)p->n * 2 * sizeof(double) + sizeof(tk_fail));
    if (e != cudaSuccess)
        return cuda_fail("diagnosing a failed line", e);
    if (f.kind == TRIDI_FAIL_NONE && p->verdict == TRIDI_VERDICT_DEFERRED) {
        // The line failed when it was solved, but its inputs were changed before this deferred verdict
        // was asked for: the line is known, its cell no longer.
        const char *what = "a zero pivot or non-finite value (the inputs changed before the deferred verdict "
                           "was asked for: the cell shown is the line's first, not the failing one)";
        return p->on_error == TRIDI_ON_ERROR_LINES
                   ? tridi_fail_numeric_lines(func, p, TRIDI_ERROR_NONFINITE, line, 0, what, nfailed)
                   : tridi_fail_numeric(func, p, TRIDI_ERROR_NONFINITE, line, 0, what);
    }
    if (p->on_error == TRIDI_ON_ERROR_LINES && f.kind != TRIDI_FAIL_NONE)
        return tridi_thomas_report_lines(func, p, line, f, nfailed);
    return report_failure(func, p, line, f, false);
}

// Checks device-mode solve `slot` (waiting for it); returns its failure, if any.
tridi_status retire_slot(tridi_cuda_state *st, int slot)
{
    pending_solve &ps = st->pending[slot];
    if (!ps.active)
        return TRIDI_SUCCESS;
    ps.active = false;
    CK(cudaEventSynchronize(st->ev_slot[slot]), "waiting for a device solve");
    const tk_verdict v = st->h_mirror[slot];
    if (v.first == ULLONG_MAX)
        return TRIDI_SUCCESS;
    char func[96];
    if (!ps.plan)
        std::snprintf(func, sizeof func, "tridi_solve_device");
    else if (ps.p.verdict == TRIDI_VERDICT_DEFERRED)
        std::snprintf(func, sizeof func, "tridi_plan_solve (device solve call %llu of the context, deferred)",
                      ps.call);
    else
        std::snprintf(func, sizeof func, "tridi_plan_solve");
    return locate_on_device(st, func, &ps.p, (int64_t)v.first, (int64_t)v.nfailed);
}

void free_state(tridi_cuda_state *st)
{
    for (int r = 0; r < 4; ++r) {
        device_release(st->mem, st->din[r].p, st->din[r].bytes);
        if (st->hin[r].p)
            cudaFreeHost(st->hin[r].p);
    }
    device_release(st->mem, st->dout.p, st->dout.bytes);
    device_release(st->mem, st->dbox.p, st->dbox.bytes);
    device_release(st->mem, st->scratch.p, st->scratch.bytes);
    if (st->hout.p)
        cudaFreeHost(st->hout.p);
    device_release(st->mem, st->d_slots, (NSLOT + 1) * sizeof(tk_slot));
    if (st->h_mirror)
        cudaFreeHost(st->h_mirror);
    if (st->h_verdict)
        cudaFreeHost(st->h_verdict);
    for (auto &kv : st->user_allocs)
        device_release(st->mem, kv.first, kv.second);
    auto dest_ev = [](cudaEvent_t e) {
        if (e)
            cudaEventDestroy(e);
    };
    for (int r = 0; r < 4; ++r) {
        for (int s = 0; s < MAX_SLABS; ++s)
            dest_ev(st->ev_in[r][s]);
        if (st->up[r])
            cudaStreamDestroy(st->up[r]);
    }
    for (int s = 0; s < MAX_SLABS; ++s) {
        dest_ev(st->ev_solved[s]);
        if (st->slab[s])
            cudaStreamDestroy(st->slab[s]);
    }
    dest_ev(st->ev_armed);
    for (int s = 0; s < NSLOT; ++s)
        dest_ev(st->ev_slot[s]);
    dest_ev(st->ev_last);
    if (st->compute)
        cudaStreamDestroy(st->compute);
    if (st->down)
        cudaStreamDestroy(st->down);
    delete st;
}

tridi_status create_state(tridi_cuda_state *st)
{
    const unsigned fl = cudaEventDisableTiming;
    CK(cudaStreamCreateWithFlags(&st->compute, cudaStreamNonBlocking), "cudaStreamCreate");
    CK(cudaStreamCreateWithFlags(&st->down, cudaStreamNonBlocking), "cudaStreamCreate");
    for (int r = 0; r < 4; ++r) {
        CK(cudaStreamCreateWithFlags(&st->up[r], cudaStreamNonBlocking), "cudaStreamCreate");
        for (int s = 0; s < MAX_SLABS; ++s)
            CK(cudaEventCreateWithFlags(&st->ev_in[r][s], fl), "cudaEventCreate");
    }
    for (int s = 0; s < MAX_SLABS; ++s) {
        CK(cudaEventCreateWithFlags(&st->ev_solved[s], fl), "cudaEventCreate");
        CK(cudaStreamCreateWithFlags(&st->slab[s], cudaStreamNonBlocking), "cudaStreamCreate");
    }
    CK(cudaEventCreateWithFlags(&st->ev_armed, fl), "cudaEventCreate");
    for (int s = 0; s < NSLOT; ++s)
        CK(cudaEventCreateWithFlags(&st->ev_slot[s], fl), "cudaEventCreate");
    CK(cudaEventCreateWithFlags(&st->ev_last, fl), "cudaEventCreate");
    void *p = nullptr;
    tridi_status s = device_alloc(st->mem, (NSLOT + 1) * sizeof(tk_slot), &p, "error slots");
    if (s)
        return s;
    st->d_slots = (tk_slot *)p;
    std::vector<tk_slot> armed(NSLOT + 1, tk_slot{ULLONG_MAX, 0, 0, 0});
    CK(cudaMemcpy(st->d_slots, armed.data(), (NSLOT + 1) * sizeof(tk_slot), cudaMemcpyHostToDevice), "cudaMemcpy");
    CK(cudaHostAlloc((void **)&st->h_mirror, NSLOT * sizeof(tk_verdict), cudaHostAllocMapped),
       "cudaHostAlloc (mapped)");
    CK(cudaHostGetDevicePointer((void **)&st->h_mirror_dev, st->h_mirror, 0), "cudaHostGetDevicePointer");
    CK(cudaHostAlloc((void **)&st->h_verdict, sizeof(unsigned long long), cudaHostAllocDefault), "cudaHostAlloc");
    return TRIDI_SUCCESS;
}

// Later work of the context shares its buffers with earlier work: work queued on stream s waits for the
// context's latest device solve. When both are on the context's own stream, stream order already sees to
// it, and the wait's host cost is a good part of a small grid's call. (A caller's stream always waits: a
// stream destroyed with work pending and a new one at the same address would look alike.)
tridi_status after_last(tridi_cuda_state *st, cudaStream_t s)
{
    if (st->have_last && !(s == st->compute && st->last_stream == st->compute))
        CK(cudaStreamWaitEvent(s, st->ev_last, 0), "cudaStreamWaitEvent");
    return TRIDI_SUCCESS;
}

// copy = false: only the verdict is handed on (to the host's mirror, and the next slot re-armed), as a
// held solve needs before its answers may go into x (tridi_cuda_commit_held).
tridi_status launch_commit(tridi_cuda_state *st, const tridi_problem *p, const void *src, int slot,
                           cudaStream_t stream, bool copy = true)
{
    const rows_geo g = geometry(p);
    const int64_t rows = copy ? g.R * p->n2 : 0, total = g.len * rows;
    // Threads across a row: enough for its cells at `per` each (a warp at least), at most 256; the
    // rest of the block's 256 threads take further rows.
    const int64_t per = TK_COMMIT_BYTES / (int64_t)tridi_dtype_size(p->arrays.x_type); // cells per thread
    int tx = 32;
    while (tx < 256 && tx * per < g.len)
        tx *= 2;
    const int ty = 256 / tx;
    const int64_t bx = copy ? std::min<int64_t>((g.len + tx * per - 1) / (tx * per), 65535) : 1;
    const int64_t by = std::max<int64_t>(1, std::min<int64_t>((rows + ty - 1) / ty, std::max<int64_t>(1, 16384 / bx)));
    const dim3 blocks((unsigned)bx, (unsigned)by), threads((unsigned)tx, (unsigned)ty);
    unsigned long long *err = err_word(st, slot), *mirror = &st->h_mirror_dev[slot].first,
                       *next = err_word(st, (slot + 1) % NSLOT);
    const bool small = total < (int64_t)INT32_MAX / 2; // 32-bit indices are cheaper; margin for q0 + k * tx
    void *dst = p->arrays.x;
    CK(injected_launch(stream), "launching the commit kernel");
    if (p->arrays.x_type == TRIDI_FLOAT64) {
        if (small)
            tk_commit<double, int32_t><<<blocks, threads, 0, stream>>>((const double *)src, (double *)dst,
                (int32_t)g.len, (int32_t)g.R, (int32_t)rows, g.origin, g.rs, g.s2, err, mirror, next);
        else
            tk_commit<double, int64_t><<<blocks, threads, 0, stream>>>((const double *)src, (double *)dst, g.len,
                g.R, rows, g.origin, g.rs, g.s2, err, mirror, next);
    } else {
        if (small)
            tk_commit<float, int32_t><<<blocks, threads, 0, stream>>>((const float *)src, (float *)dst,
                (int32_t)g.len, (int32_t)g.R, (int32_t)rows, g.origin, g.rs, g.s2, err, mirror, next);
        else
            tk_commit<float, int64_t><<<blocks, threads, 0, stream>>>((const float *)src, (float *)dst, g.len, g.R,
                rows, g.origin, g.rs, g.s2, err, mirror, next);
    }
    CK(cudaGetLastError(), "launching the commit kernel");
    return TRIDI_SUCCESS;
}

// Queues slab sl of input r (lines [b2, e2) along the slab axis) on the role's stream: DMA straight from a
// registered array, else from the pinned staging packed before; then records ev_in[r][sl].
tridi_status send_slab(tridi_cuda_state *st, const box_plan &b, int r, const void *host, tridi_dtype xfer,
                       bool direct, int64_t b2, int64_t e2, int sl)
{
    region hr, dr;
    input_slab(b, b2, e2, hr, dr);
    const size_t es = tridi_dtype_size(xfer);
    if (direct)
        CK(dma_region(st->din[r].p, widened_layout(b), dr.pos, host, host_layout(b), hr.pos, dr.cnt, es,
                      cudaMemcpyHostToDevice, st->up[r]),
           "copying an input slab to the device");
    else
        CK(dma_region(st->din[r].p, widened_layout(b), dr.pos, st->hin[r].p, widened_layout(b), dr.pos, dr.cnt, es,
                      cudaMemcpyHostToDevice, st->up[r]),
           "copying an input slab to the device");
    CK(cudaEventRecord(st->ev_in[r][sl], st->up[r]), "cudaEventRecord");
    return TRIDI_SUCCESS;
}

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

// Host bytes that packing one input's box touches (what copy_threads sizes the threads by).
size_t pack_bytes(const box_plan &b, tridi_dtype st, tridi_dtype dt)
{
    return b.bcells * std::max(tridi_dtype_size(st), tridi_dtype_size(dt));
}

slab_rows plan_slab_rows(const box_plan &b, int S)
{
    slab_rows sr;
    for (int sl = 0; sl < S; ++sl) {
        int64_t b2, e2;
        slab_range(b, sl, S, &b2, &e2);
        box_in_widened(b, b2, e2, sr.host[sl], sr.wide[sl]);
    }
    return sr;
}

// How the answers of a host-array solve reach x without ever leaving a partial answer there.
enum class x_path {
    staged,  // x not registered: slabs go to pinned staging, copied into x on the host once all succeeded
    eager,   // x registered, the call itself uploads most of the inputs: each slab goes by DMA into x as soon
             // as it is solved, after its old values were saved in st->undo on the host (put back if any
             // line failed); the host copy runs while the GPU moves the inputs, and the answers' transfer
             // overlaps theirs
    verdict  // x registered, the inputs already on the device or queued by tridi_upload_async: little would
             // hide that host copy, so the whole box goes into x by one DMA once the verdict says every line
             // succeeded (the solve still starts on each slab as soon as its inputs are there)
};

// Host-array solve once the buffers are there: queues every slab (inputs up, solve, answers down as xp
// says) and the read of the verdict into st->h_verdict. Slab s is solved on its own stream as soon as its
// four inputs are there, so slabs overlap each other as well as the transfers. *x_written: some answers
// may have reached x (eager).
// Whether the host-array solve of box b keeps W/G of long lines in the global scratch: the plan of the whole
// box decides (a slab's plan, of fewer lines, never needs the scratch where the whole box's does not).
tridi_status host_needs_scratch(const tridi_cuda_state *st, const tridi_problem *p, const box_plan &b,
                                const kernel_types &kt, bool *scratch)
{
    tk_args a{};
    a.in = b.in;
    a.out = b.out;
    a.n = p->n;
    a.n1 = p->n1;
    a.l_count = p->n1 * b.n[b.a2];
    tk_plan plan;
    tridi_status s = plan_solve(st->kernel, kt, a, p->axis == TRIDI_AXIS_X, false, &plan);
    *scratch = !s && !plan.split && tk_needs_scratch(p->n);
    return s;
}

tridi_status run_host_solve(tridi_cuda_state *st, const tridi_problem *p, const box_plan &b, const kernel_types &kt,
                            const bool have[4], const bool direct[4], x_path xp, int S, bool scratch, bool *x_written)
{
    const void *user_in[4] = {p->arrays.lower, p->arrays.diag, p->arrays.upper, p->arrays.rhs};
    const tridi_dtype user_t[4] = {p->arrays.lower_type, p->arrays.diag_type, p->arrays.upper_type, p->arrays.rhs_type};
    const tridi_dtype xfer_t[4] = {kt.l, kt.d, kt.l, kt.l};
    const size_t xs = tridi_dtype_size(p->arrays.x_type);
    unsigned long long *err = err_word(st, HOST_SLOT);
    CK(cudaMemsetAsync(err, 0xff, sizeof *err, st->compute), "cudaMemsetAsync");
    CK(cudaEventRecord(st->ev_armed, st->compute), "cudaEventRecord");
    tk_args a{};
    a.D = st->din[0].p;
    a.E = st->din[1].p;
    a.F = st->din[2].p;
    a.R = st->din[3].p;
    a.X = st->dout.p;
    a.in = b.in;
    a.out = b.out;
    a.n = p->n;
    a.n1 = p->n1;
    a.err = err;
    // Inputs that are neither on the device already nor registered are packed into staging, slab by slab,
    // each slab queued (its DMAs, its solve, its answers) as soon as it is packed.
    const slab_rows sr = plan_slab_rows(b, S);
    int packed[4], npack = 0;
    size_t bytes = 0;
    for (int r = 0; r < 4; ++r)
        if (!have[r] && !direct[r]) {
            packed[npack++] = r;
            bytes += pack_bytes(b, user_t[r], xfer_t[r]);
        }
    auto pack = [&](int sl, int64_t i) {
        const int64_t per = sr.rows(sl);
        const int r = packed[i / per];
        sr.pack(b, sl, i % per, user_in[r], user_t[r], st->hin[r].p, xfer_t[r]);
    };
    auto queue = [&](int sl) -> tridi_status {
        int64_t b2, e2;
        slab_range(b, sl, S, &b2, &e2);
        cudaStream_t cs = st->slab[sl];
        CK(cudaStreamWaitEvent(cs, st->ev_armed, 0), "cudaStreamWaitEvent");
        for (int r = 0; r < 4; ++r) {
            if (!have[r]) {
                tridi_status s = send_slab(st, b, r, user_in[r], xfer_t[r], direct[r], b2, e2, sl);
                if (s)
                    return s;
            }
            const int ev = have[r] && st->uploaded[r].slabs == 1 ? 0 : sl; // uploaded ahead as one copy
            CK(cudaStreamWaitEvent(cs, st->ev_in[r][ev], 0), "cudaStreamWaitEvent");
        }
        a.l_begin = b2 * p->n1;
        a.l_count = (e2 - b2) * p->n1;
        // Slabs run concurrently: each its own part of the W/G scratch of long lines.
        a.scratch = scratch ? (double *)st->scratch.p + 2 * p->n * a.l_begin : nullptr;
        tridi_status s = launch_solve(st->kernel, kt, a, p->axis == TRIDI_AXIS_X, cs);
        if (s)
            return s;
        CK(cudaEventRecord(st->ev_solved[sl], cs), "cudaEventRecord");
        CK(cudaStreamWaitEvent(st->compute, st->ev_solved[sl], 0), "cudaStreamWaitEvent");
        if (xp == x_path::staged) {
            region xh, xb;
            box_slab(b, b2, e2, xh, xb);
            CK(cudaStreamWaitEvent(st->down, st->ev_solved[sl], 0), "cudaStreamWaitEvent");
            CK(dma_region(st->hout.p, box_layout(b), xb.pos, st->dout.p, box_layout(b), xb.pos, xb.cnt, xs,
                          cudaMemcpyDeviceToHost, st->down),
               "copying an answer slab to the host");
        }
        return TRIDI_SUCCESS;
    };
    tridi_status s = pack_pipeline(npack ? copy_threads(bytes) : 1, S, [&](int sl) { return npack * sr.rows(sl); },
                                   pack, queue);
    if (s)
        return s;
    if (xp == x_path::eager) { // every upload is queued: save x's old box slab by slab, each slab's answers after
        region xh[MAX_SLABS], xb[MAX_SLABS];
        for (int sl = 0; sl < S; ++sl) {
            int64_t b2, e2;
            slab_range(b, sl, S, &b2, &e2);
            box_slab(b, b2, e2, xh[sl], xb[sl]);
        }
        s = pack_pipeline(
            copy_threads(b.bcells * xs), S, [&](int sl) { return xb[sl].cnt[1] * xb[sl].cnt[2]; },
            [&](int sl, int64_t i) {
                copy_row(p->arrays.x, p->arrays.x_type, host_layout(b), xh[sl].pos, st->undo.data(), p->arrays.x_type,
                         box_layout(b), xb[sl].pos, xb[sl].cnt, i);
            },
            [&](int sl) -> tridi_status {
                CK(cudaStreamWaitEvent(st->down, st->ev_solved[sl], 0), "cudaStreamWaitEvent");
                *x_written = true;
                CK(dma_region(p->arrays.x, host_layout(b), xh[sl].pos, st->dout.p, box_layout(b), xb[sl].pos,
                              xb[sl].cnt, xs, cudaMemcpyDeviceToHost, st->down),
                   "copying an answer slab into x");
                return TRIDI_SUCCESS;
            });
        if (s)
            return s;
    }
    CK(cudaMemcpyAsync(st->h_verdict, err, sizeof *err, cudaMemcpyDeviceToHost, st->compute), "reading the verdict");
    return TRIDI_SUCCESS;
}

} // namespace

extern "C" {

int tridi_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}

tridi_status tridi_cuda_create(int device, const tridi_config *config, const tridi_tuning *tuning,
                               tridi_cuda_state **out)
{
    *out = nullptr;
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cuda_fail("cudaSetDevice", e);
    tridi_cuda_state *st = new (std::nothrow) tridi_cuda_state;
    if (!st)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi_create: could not allocate the CUDA state");
    st->device = device;
    st->allow_f32 = config ? config->allow_f32_transfer : 0;
    if (tuning) {
        st->slab_cells = tuning->host_slab_cells ? tuning->host_slab_cells : SLAB_CELLS;
        st->x_choice = tuning->host_x;
        st->mem.limit = (size_t)tuning->device_memory_limit;
        st->kernel = tk_choice{tuning->cuda_kernel, tuning->cuda_split_lanes};
    }
    tridi_status s = create_state(st);
    if (s) {
        free_state(st);
        return s;
    }
    *out = st;
    return TRIDI_SUCCESS;
}

void tridi_cuda_destroy(tridi_cuda_state *st)
{
    if (!st)
        return;
    cudaSetDevice(st->device);
    if (st->have_last)
        cudaEventSynchronize(st->ev_last);
    for (int r = 0; r < 4; ++r)
        cudaStreamSynchronize(st->up[r]);
    cudaStreamSynchronize(st->compute);
    cudaStreamSynchronize(st->down);
    free_state(st);
}

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

tridi_status tridi_cuda_upload_async(tridi_cuda_state *st, const tridi_problem *p, tridi_array_role role,
                                     const void *host, tridi_dtype type, int registered)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    const int r = (int)role;
    const tridi_dtype xt = st->allow_f32 && type == TRIDI_FLOAT64 ? TRIDI_FLOAT32 : type;
    const bool direct = registered && xt == type; // narrowing to float needs the host pass
    const box_plan b = plan_box(p);
    const size_t bytes = b.wcells * tridi_dtype_size(xt);
    st->uploaded[r].valid = false;
    // Packing reuses the staging, which may still feed this role's previous copy; a buffer being replaced may
    // still be written by it. A direct copy into a large enough buffer just queues behind it.
    if (!direct || st->din[r].bytes < bytes)
        CK(cudaStreamSynchronize(st->up[r]), "waiting for the previous upload");
    tridi_status s = ensure(st, st->din[r], bytes, "a device input box");
    if (!s && !direct)
        s = ensure_pinned(st->hin[r], bytes);
    if (s)
        return s;
    // Sent in the solve's slabs, each with its event, so that the solve starts on the first slabs of the
    // last array uploaded while the rest still moves; a box of few slabs as one copy (UPLOAD_WHOLE_MAX_SLABS).
    const int S_solve = slab_count(b, st->slab_cells), S = S_solve <= UPLOAD_WHOLE_MAX_SLABS ? 1 : S_solve;
    const slab_rows sr = plan_slab_rows(b, S);
    s = pack_pipeline(
        direct ? 1 : copy_threads(pack_bytes(b, type, xt)), S, [&](int sl) { return direct ? 0 : sr.rows(sl); },
        [&](int sl, int64_t i) { sr.pack(b, sl, i, host, type, st->hin[r].p, xt); },
        [&](int sl) {
            int64_t b2, e2;
            slab_range(b, sl, S, &b2, &e2);
            return send_slab(st, b, r, host, xt, direct, b2, e2, sl);
        });
    if (s)
        return s;
    upload_key &k = st->uploaded[r];
    k.grid = p->grid;
    k.axis = (int)p->axis;
    for (int a = 0; a < 3; ++a) {
        k.lo[a] = p->lo[a];
        k.hi[a] = p->hi[a];
    }
    k.host = host;
    k.type = type;
    k.xfer = xt;
    k.dptr = st->din[r].p;
    k.slabs = S;
    k.valid = true;
    return TRIDI_SUCCESS;
}

tridi_status tridi_cuda_solve_host(tridi_cuda_state *st, const tridi_problem *p, const int registered[5])
{
    const char *f = p->func;
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    const bool f32 = st->allow_f32 && (p->combo != TRIDI_COMBO_F32);
    const kernel_types kt = types_of(p, f32);
    const void *user_in[4] = {p->arrays.lower, p->arrays.diag, p->arrays.upper, p->arrays.rhs};
    const tridi_dtype user_t[4] = {p->arrays.lower_type, p->arrays.diag_type, p->arrays.upper_type, p->arrays.rhs_type};
    const tridi_dtype xfer_t[4] = {kt.l, kt.d, kt.l, kt.l};
    const size_t xs = tridi_dtype_size(p->arrays.x_type);
    const box_plan b = plan_box(p);
    bool have[4], direct[4];
    for (int r = 0; r < 4; ++r) {
        const upload_key &k = st->uploaded[r];
        have[r] = same_box(k, p) && k.host == user_in[r] && k.type == user_t[r] && k.xfer == xfer_t[r] &&
                  k.dptr == st->din[r].p && st->din[r].bytes >= b.wcells * tridi_dtype_size(xfer_t[r]) &&
                  (k.slabs == slab_count(b, st->slab_cells) || k.slabs == 1);
        direct[r] = registered[r] && user_t[r] == xfer_t[r];
    }
    const int S = slab_count(b, st->slab_cells);
    // Bytes this call uploads itself. Uploads queued ahead by tridi_upload_async and still running do not
    // count: the host copy of the eager path would outlast the last of them (the assembly-overlap case:
    // 4.4 MB still moving, about 0.1 ms, against a 0.7-0.9 ms copy by sleeping threads on 140x140x56).
    size_t up_bytes = 0;
    for (int r = 0; r < 4; ++r)
        if (!have[r])
            up_bytes += b.wcells * tridi_dtype_size(xfer_t[r]);
    const bool eager = st->x_choice == TRIDI_HOST_X_RULE ? up_bytes >= EAGER_UPLOAD_RATIO * b.bcells * xs
                                                            : st->x_choice == TRIDI_HOST_X_EAGER;
    const x_path xp = !registered[4] ? x_path::staged : eager ? x_path::eager : x_path::verdict;

    // Settle earlier device-mode work first: its failures belong to tridi_synchronize, and it shares scratch.
    if (st->have_last)
        CK(cudaEventSynchronize(st->ev_last), "waiting for earlier work");
    tridi_status s = TRIDI_SUCCESS;
    for (int r = 0; r < 4 && !s; ++r) {
        if (have[r])
            continue;
        const size_t bytes = b.wcells * tridi_dtype_size(xfer_t[r]);
        // An upload of this role for another box may still be running into these buffers.
        CK(cudaStreamSynchronize(st->up[r]), "waiting for the previous upload");
        s = ensure(st, st->din[r], bytes, "a device input box");
        if (!s && !direct[r])
            s = ensure_pinned(st->hin[r], bytes);
    }
    if (!s)
        s = ensure(st, st->dout, b.bcells * xs, "the device answer box");
    if (!s && xp == x_path::staged)
        s = ensure_pinned(st->hout, b.bcells * xs);
    bool scratch = false;
    if (!s)
        s = host_needs_scratch(st, p, b, kt, &scratch);
    if (!s && scratch)
        s = ensure(st, st->scratch, b.bcells * 2 * sizeof(double), "the W/G scratch of long lines");
    if (!s && xp == x_path::eager) {
        try {
            if (st->undo.size() < b.bcells * xs)
                st->undo.resize(b.bcells * xs);
        } catch (const std::bad_alloc &) {
            s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the %zu-byte copy of x's box", f,
                           b.bcells * xs);
        }
    }
    if (s) {
        for (int r = 0; r < 4; ++r)
            st->uploaded[r].valid = false;
        return s;
    }

    bool x_written = false;
    s = run_host_solve(st, p, b, kt, have, direct, xp, S, scratch, &x_written);
    for (int r = 0; r < 4; ++r)
        st->uploaded[r].valid = false; // an upload serves one solve: the model changes its arrays after it
    // Every upload is awaited by a slab and every slab by the compute stream: waiting for it and for the
    // answers' stream covers all, unless queueing stopped half way.
    cudaError_t e = cudaStreamSynchronize(st->compute), e2 = cudaStreamSynchronize(st->down);
    if (e == cudaSuccess)
        e = e2;
    if (s)
        for (int r = 0; r < 4 + MAX_SLABS; ++r)
            cudaStreamSynchronize(r < 4 ? st->up[r] : st->slab[r - 4]);
    const unsigned long long verdict = s || e != cudaSuccess ? 0 : *st->h_verdict;
    if (!s && e == cudaSuccess && verdict != ULLONG_MAX && p->on_error == TRIDI_ON_ERROR_LINES)
        return lines_on_host(f, p, b, x_written ? st->undo.data() : nullptr);
    if (verdict != ULLONG_MAX && x_written) { // nothing is in flight any more: put x's old box back
        region xh, xb;
        box_slab(b, 0, b.n[b.a2], xh, xb);
        copy_rows(st->undo.data(), p->arrays.x_type, box_layout(b), xb.pos, p->arrays.x, p->arrays.x_type,
                  host_layout(b), xh.pos, xb.cnt);
    }
    if (s)
        return s;
    if (e != cudaSuccess)
        return cuda_fail("host-array solve", e);
    if (verdict != ULLONG_MAX)
        return locate_on_host(f, p, (int64_t)verdict, f32);
    region xh, xb;
    box_slab(b, 0, b.n[b.a2], xh, xb);
    if (xp == x_path::staged) {
        copy_rows(st->hout.p, p->arrays.x_type, box_layout(b), xb.pos, p->arrays.x, p->arrays.x_type, host_layout(b),
                  xh.pos, xb.cnt);
    } else if (xp == x_path::verdict) {
        // Only a failing DMA (a device fault) could stop this copy half way.
        CK(dma_region(p->arrays.x, host_layout(b), xh.pos, st->dout.p, box_layout(b), xb.pos, xb.cnt, xs,
                      cudaMemcpyDeviceToHost, st->down),
           "copying the answers into x");
        CK(cudaStreamSynchronize(st->down), "copying the answers into x");
    }
    return TRIDI_SUCCESS;
}

} // extern "C"

namespace {

// A device plan's own state: the kernel chosen once for its shape and contract, and the buffers its solves
// need (the answer box of an ON_ERROR_CALL solve too large for one wave, the W/G scratch of long lines).
struct cuda_plan {
    tk_plan plan{};
    dbuf box, scratch;
};

// The kernel arguments of a device solve of p, without its verdict slot.
tk_args device_args(const tridi_problem *p)
{
    const tk_view user = {p->origin, p->stride[p->a1], p->stride[p->a2], p->stride[p->axis]};
    tk_args a{};
    a.D = p->arrays.lower;
    a.E = p->arrays.diag;
    a.F = p->arrays.upper;
    a.R = p->arrays.rhs;
    a.in = user;
    a.n = p->n;
    a.n1 = p->n1;
    a.l_begin = 0;
    a.l_count = p->nlines;
    a.out = user; // x's view when x is written in place; the box's is alike along x (unit stride), which the plan reads
    return a;
}

// Device-mode solve. hold: the answers stay in the context's box (never the one-wave variant, which
// writes x itself) and only the verdict is handed on; tridi_cuda_commit_held copies them into x later.
// cp: a plan's state (its kernel and buffers, p's contract honoured), or NULL for tridi_solve_device
// (ON_ERROR_CALL, deferred: the context's one-entry memo of the latest kernel choice and its buffers).
tridi_status solve_device(tridi_cuda_state *st, const tridi_problem *p, void *stream, bool hold, cuda_plan *cp)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    st->held = false; // this solve reuses the box
    tridi_status s = check_device_arrays(st->device, p);
    if (s)
        return s;
    cudaStream_t cs = stream ? (cudaStream_t)stream : st->compute;
    const int slot = st->next_slot;
    s = retire_slot(st, slot); // the ring is full: the oldest solve must be checked first
    if (s)
        return s;
    const bool lines = cp && p->on_error == TRIDI_ON_ERROR_LINES;
    const bool contiguous = p->axis == TRIDI_AXIS_X && p->stride[0] == 1;
    const kernel_types kt = types_of(p, false);
    const size_t cells = (size_t)(p->n * p->nlines), xs = tridi_dtype_size(p->arrays.x_type);
    tk_args a = device_args(p);
    const tk_view user = a.in;
    a.err = err_word(st, slot);
    tk_plan plan;
    dbuf *box = &st->dbox, *scr = &st->scratch;
    if (cp) {
        plan = cp->plan;
        box = &cp->box;
        scr = &cp->scratch;
    } else {
        // When every line fits on the GPU at once the solve guards x itself (grid barrier before writing);
        // otherwise it solves into the context's box and a commit kernel copies the box into x.
        plan_memo &mm = st->memo;
        const bool known = mm.valid && mm.l == kt.l && mm.d == kt.d && mm.x == kt.x && mm.n == a.n &&
                           mm.n1 == a.n1 && mm.lines == a.l_count && mm.contig == contiguous &&
                           mm.coop_wanted == !hold && mm.view.off == user.off && mm.view.s1 == user.s1 &&
                           mm.view.s2 == user.s2 && mm.view.sm == user.sm;
        if (!known) {
            tk_plan made;
            s = plan_solve(st->kernel, kt, a, contiguous, !hold, &made);
            if (s)
                return s;
            mm = {true, kt.l, kt.d, kt.x, user, a.n, a.n1, a.l_count, contiguous, !hold, made};
        }
        plan = mm.plan;
    }
    const bool scratch = !plan.split && tk_needs_scratch(p->n); // split lines keep W/G in registers
    const size_t need_box = plan.coop || lines ? 0 : cells * xs, need_scratch = scratch ? cells * 2 * sizeof(double) : 0;
    if (box->bytes < need_box || scr->bytes < need_scratch) {
        // Growing frees buffers that queued solves may still use.
        if (st->have_last)
            CK(cudaEventSynchronize(st->ev_last), "waiting for earlier work");
        if (need_box)
            s = ensure(st, *box, need_box, "the device answer box");
        if (!s && need_scratch)
            s = ensure(st, *scr, need_scratch, "the W/G scratch of long lines");
        if (s)
            return s;
    }
    s = after_last(st, cs);
    if (s)
        return s;
    a.scratch = scratch ? (double *)scr->p : nullptr;
    if (lines) {
        // Each line writes its answers into x only once it has succeeded; the grid's last block hands the
        // verdict (first failing line, count) to the host's mirror and re-arms the slot.
        a.X = p->arrays.x;
        a.out = user;
        a.nfail = &st->d_slots[slot].nfailed;
        a.slot = &st->d_slots[slot];
        a.verdict = &st->h_mirror_dev[slot];
        a.next_err = err_word(st, (slot + 1) % NSLOT);
        s = run_solve(kt, a, plan, cs);
    } else if (plan.coop) {
        a.X = p->arrays.x;
        a.out = user;
        a.mirror = &st->h_mirror_dev[slot].first;
        a.next_err = err_word(st, (slot + 1) % NSLOT);
        s = run_solve(kt, a, plan, cs);
    } else {
        a.X = box->p;
        a.out = compact_view(p);
        s = run_solve(kt, a, plan, cs);
        if (!s)
            s = launch_commit(st, p, box->p, slot, cs, !hold);
    }
    if (s) {
        // A launch was refused, perhaps after the solve was queued: later work must wait for that solve,
        // and the failing line it may record must not become the verdict of this slot's next solve.
        cudaMemsetAsync(err_word(st, slot), 0xff, sizeof(unsigned long long), cs);
        if (cudaEventRecord(st->ev_last, cs) == cudaSuccess) {
            st->have_last = true;
            st->last_stream = cs;
        }
        cudaGetLastError();
        return s;
    }
    CK(cudaEventRecord(st->ev_slot[slot], cs), "cudaEventRecord");
    CK(cudaEventRecord(st->ev_last, cs), "cudaEventRecord");
    st->have_last = true;
    st->last_stream = cs;
    pending_solve &ps = st->pending[slot];
    ps.active = true;
    ps.p = *p;
    ps.call = ++st->calls;
    ps.plan = cp != nullptr;
    st->next_slot = (slot + 1) % NSLOT;
    if (hold) {
        st->held = true;
        st->held_slot = slot;
        st->held_p = *p;
    }
    // A plan's SYNC verdict: wait for this solve and report it (deferred ones wait for the next status).
    if (cp && p->verdict == TRIDI_VERDICT_SYNC)
        return retire_slot(st, slot);
    return TRIDI_SUCCESS;
}

} // namespace

extern "C" {

tridi_status tridi_cuda_solve_device(tridi_cuda_state *st, const tridi_problem *p, void *stream)
{
    return solve_device(st, p, stream, false, nullptr);
}

tridi_status tridi_cuda_solve_device_held(tridi_cuda_state *st, const tridi_problem *p, void *stream)
{
    return solve_device(st, p, stream, true, nullptr);
}

tridi_status tridi_cuda_plan_create(tridi_cuda_state *st, const tridi_problem *p, void **state)
{
    *state = nullptr;
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    cuda_plan *cp = new (std::nothrow) cuda_plan;
    if (!cp)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "tridi_plan_create: out of host memory");
    // ON_ERROR_CALL keeps x unchanged on a failure: by a grid barrier when every line fits in one wave,
    // else through the plan's answer box and a commit kernel. ON_ERROR_LINES needs neither.
    tridi_status s = plan_solve(st->kernel, types_of(p, false), device_args(p),
                                p->axis == TRIDI_AXIS_X && p->stride[0] == 1, p->on_error == TRIDI_ON_ERROR_CALL,
                                &cp->plan);
    if (s) {
        delete cp;
        return s;
    }
    *state = cp;
    return TRIDI_SUCCESS;
}

void tridi_cuda_plan_destroy(tridi_cuda_state *st, void *state)
{
    cuda_plan *cp = (cuda_plan *)state;
    if (!cp)
        return;
    cudaSetDevice(st->device);
    // Solves queued with the plan's buffers may still run.
    if (st->have_last)
        cudaEventSynchronize(st->ev_last);
    device_release(st->mem, cp->box.p, cp->box.bytes);
    device_release(st->mem, cp->scratch.p, cp->scratch.bytes);
    delete cp;
}

tridi_status tridi_cuda_solve_device_plan(tridi_cuda_state *st, const tridi_problem *p, void *state, void *stream)
{
    return solve_device(st, p, stream, false, (cuda_plan *)state);
}

tridi_status tridi_cuda_commit_held(tridi_cuda_state *st, void *stream)
{
    if (!st->held)
        return tridi_fail(TRIDI_ERROR_INTERNAL, "tridi: no held device solve to commit (please report)");
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    cudaStream_t cs = stream ? (cudaStream_t)stream : st->compute;
    tridi_status s = after_last(st, cs);
    if (s)
        return s;
    st->held = false;
    // The held slot's error word still holds the verdict (no solve has run since): the commit copies the
    // box only if it is clear, as for any multi-wave solve.
    s = launch_commit(st, &st->held_p, st->dbox.p, st->held_slot, cs);
    if (s)
        return s;
    CK(cudaEventRecord(st->ev_last, cs), "cudaEventRecord");
    st->have_last = true;
    st->last_stream = cs;
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

tridi_status tridi_cuda_synchronize(tridi_cuda_state *st)
{
    CK(cudaSetDevice(st->device), "cudaSetDevice");
    tridi_status first = TRIDI_SUCCESS;
    // Oldest first, so the failure reported is that of the earliest failing solve.
    for (int k = 0; k < NSLOT; ++k) {
        const int slot = (st->next_slot + k) % NSLOT;
        tridi_status s = retire_slot(st, slot);
        if (s && !first) {
            first = s;
            // keep the first message: retire the rest without letting them overwrite it
            for (int j = k + 1; j < NSLOT; ++j) {
                const int sj = (st->next_slot + j) % NSLOT;
                if (st->pending[sj].active) {
                    st->pending[sj].active = false;
                    cudaEventSynchronize(st->ev_slot[sj]);
                }
            }
            break;
        }
    }
    cudaError_t e = cudaStreamSynchronize(st->compute);
    if (!first && e != cudaSuccess)
        return cuda_fail("tridi_synchronize", e);
    return first;
}

#ifdef TRIDI_FAULT_INJECTION
// Test-only entry points (declared by the tests themselves, not in tridi.h).
void tridi_test_fail_launch(int nth) { g_launches_before_failure.store(nth > 0 ? nth : 0); }
size_t tridi_test_device_bytes(void) { return g_device_bytes.load(); }
#endif

} // extern "C"
