// Geometry and host copies of host-array mode's boxes (cuda/host_box.cu): where a solve's box lives on the
// host and on the device, its slabs, and the DMA and threaded host copies between layouts.
#ifndef TRIDI_CUDA_HOST_BOX_H
#define TRIDI_CUDA_HOST_BOX_H

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cpu_pool.h"
#include "kernel_args.h"
#include "tridi_internal.h"

#include <algorithm>
#include <type_traits>
#include <vector>

namespace tridi_cuda {

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

box_plan plan_box(const tridi_problem *p);
// Slabs of the pipeline (at most MAX_SLABS): from the box's size only, so that tridi_upload_async and the
// solve cut alike.
int slab_count(const box_plan &b, int64_t slab_cells);
// Lines along the slab axis of slab sl of S: [first, end).
void slab_range(const box_plan &b, int sl, int S, int64_t *first, int64_t *end);

// A region of a 3D layout: cnt cells from pos; the layout's rows hold dim0 cells and its planes dim1 rows.
struct region {
    int64_t pos[3], cnt[3];
};
struct layout {
    int64_t dim0, dim1;
};

void input_slab(const box_plan &b, int64_t b2, int64_t e2, region &host, region &dev);
void box_slab(const box_plan &b, int64_t b2, int64_t e2, region &host, region &box);
void box_in_widened(const box_plan &b, int64_t b2, int64_t e2, region &host, region &dev);
layout host_layout(const box_plan &b);
layout widened_layout(const box_plan &b);
layout box_layout(const box_plan &b);
int64_t cell_offset(const layout &l, const int64_t pos[3]);
cudaError_t dma_region(void *dst, const layout &dl, const int64_t dpos[3], const void *src, const layout &sl,
                       const int64_t spos[3], const int64_t cnt[3], size_t es, cudaMemcpyKind kind, cudaStream_t stream);
void copy_row(const void *src, tridi_dtype st, const layout &sl, const int64_t spos[3], void *dst, tridi_dtype dt,
              const layout &dl, const int64_t dpos[3], const int64_t cnt[3], int64_t row);
int copy_threads(size_t bytes);
// pool: tridi's copy threads (docs/decisions/028), or NULL for an OpenMP team of the caller.
void copy_rows(tridi_cpu_pool *pool, const void *src, tridi_dtype st, const layout &sl, const int64_t spos[3],
               void *dst, tridi_dtype dt, const layout &dl, const int64_t dpos[3], const int64_t cnt[3]);

inline void copy_relax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// pack_pipeline on tridi's threads: each takes rows of slab after slab, 16 at a time; the caller (id 0), once
// no row of slab sl is left to take, waits for the rows others took and queues the slab.
template <class Pack, class Queue>
struct pipeline_job {
    Pack *pack;
    Queue *queue;
    std::vector<int64_t> n, next, done;
    tridi_status status;
};

template <class Job>
void pipeline_share(void *arg, int id)
{
    Job *j = static_cast<Job *>(arg);
    const int S = (int)j->n.size();
    for (int sl = 0; sl < S; ++sl) {
        const int64_t n = j->n[sl];
        for (;;) {
            const int64_t i0 = __atomic_fetch_add(&j->next[sl], 16, __ATOMIC_RELAXED);
            if (i0 >= n)
                break;
            const int64_t i1 = std::min(n, i0 + 16);
            for (int64_t i = i0; i < i1; ++i)
                (*j->pack)(sl, i);
            __atomic_add_fetch(&j->done[sl], i1 - i0, __ATOMIC_RELEASE);
        }
        if (id == 0) {
            while (__atomic_load_n(&j->done[sl], __ATOMIC_ACQUIRE) < n)
                copy_relax();
            if (j->status == TRIDI_SUCCESS)
                j->status = (*j->queue)(sl);
        }
    }
}

// Packs slab after slab in ONE OpenMP region: pack(sl, i) for i < rows(sl) on nt threads, then queue(sl) on
// the calling thread (which holds the context's device) as soon as slab sl is packed, while the other
// threads go on to the next slab. Sleeping threads are woken once per call instead of once per slab and
// array, which is what packing cost between a model's serial loops (see copy_threads and
// docs/decisions/012). The first failing queue(sl) ends the queueing; its status is returned. With a pool
// (tridi's threads, docs/decisions/028) the same on its workers, none of which the call waits to wake.
template <class Rows, class Pack, class Queue>
tridi_status pack_pipeline(tridi_cpu_pool *pool, int nt, int S, Rows &&rows, Pack &&pack, Queue &&queue)
{
    if (pool && nt > 1) {
        using job_t = pipeline_job<std::remove_reference_t<Pack>, std::remove_reference_t<Queue>>;
        job_t j{&pack, &queue, std::vector<int64_t>(S), std::vector<int64_t>(S, 0), std::vector<int64_t>(S, 0),
                TRIDI_SUCCESS};
        for (int sl = 0; sl < S; ++sl)
            j.n[sl] = rows(sl);
        tridi_cpu_pool_run(pool, pipeline_share<job_t>, &j, nt);
        return j.status;
    }
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

} // namespace tridi_cuda

#endif
