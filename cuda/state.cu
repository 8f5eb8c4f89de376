// The CUDA backend's context: device count, tridi_create / tridi_destroy of a CUDA context (its streams,
// events, verdict slots and buffers).
#include "cpu_pool.h"
#include "cuda_internal.h"

#include <climits>
#include <new>
#include <vector>

namespace tridi_cuda {

namespace {

void free_state(tridi_cuda_state *st)
{
    free_host_threads(st);
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
    device_release(st->mem, st->d_slots, NSLOT_ALL * sizeof(tk_slot));
    if (st->h_mirror)
        cudaFreeHost(st->h_mirror);
    if (st->h_verdict)
        cudaFreeHost(st->h_verdict);
    for (auto &kv : st->user_allocs)
        device_release(st->mem, kv.first, kv.second);
    for (dbuf &b : st->mpi_dev)
        device_release(st->mem, b.p, b.bytes);
    for (hbuf &b : st->mpi_pinned)
        if (b.p)
            cudaFreeHost(b.p);
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
    tridi_status s = device_alloc(st->mem, NSLOT_ALL * sizeof(tk_slot), &p, "error slots");
    if (s)
        return s;
    st->d_slots = (tk_slot *)p;
    std::vector<tk_slot> armed(NSLOT_ALL, tk_slot{ULLONG_MAX, 0, 0, 0});
    CK(cudaMemcpy(st->d_slots, armed.data(), NSLOT_ALL * sizeof(tk_slot), cudaMemcpyHostToDevice), "cudaMemcpy");
    CK(cudaHostAlloc((void **)&st->h_mirror, NSLOT * sizeof(tk_verdict), cudaHostAllocMapped),
       "cudaHostAlloc (mapped)");
    CK(cudaHostGetDevicePointer((void **)&st->h_mirror_dev, st->h_mirror, 0), "cudaHostGetDevicePointer");
    CK(cudaHostAlloc((void **)&st->h_verdict, (1 + MAX_SLABS) * sizeof(unsigned long long), cudaHostAllocDefault),
       "cudaHostAlloc");
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
        st->pack_spin_ns = 1000 * (tuning->cpu_spin_set ? tuning->cpu_spin_us : TRIDI_CPU_SPIN_US_DEFAULT);
        st->openmp_copies = tuning->cpu_openmp_team;
        st->uploads_on_caller = tuning->cpu_pool_off;
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
    uploads_settle(st);
    for (int r = 0; r < 4; ++r)
        cudaStreamSynchronize(st->up[r]);
    cudaStreamSynchronize(st->compute);
    cudaStreamSynchronize(st->down);
    free_state(st);
}

} // extern "C"

} // namespace tridi_cuda
