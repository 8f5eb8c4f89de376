// Geometry and host copies of host-array mode's boxes: see cuda/host_box.h.
#include "host_box.h"

#include "cuda_internal.h" // MAX_SLABS

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace tridi_cuda {

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
void copy_row(const void *src, tridi_dtype st, const layout &sl, const int64_t spos[3], void *dst,
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

namespace {

struct rows_job {
    const void *src;
    tridi_dtype st;
    const layout *sl;
    const int64_t *spos;
    void *dst;
    tridi_dtype dt;
    const layout *dl;
    const int64_t *dpos, *cnt;
    int64_t rows, next;
};

void rows_share(void *arg, int)
{
    rows_job *j = static_cast<rows_job *>(arg);
    for (;;) {
        const int64_t r0 = __atomic_fetch_add(&j->next, 16, __ATOMIC_RELAXED);
        if (r0 >= j->rows)
            return;
        for (int64_t row = r0; row < std::min(j->rows, r0 + 16); ++row)
            copy_row(j->src, j->st, *j->sl, j->spos, j->dst, j->dt, *j->dl, j->dpos, j->cnt, row);
    }
}

} // namespace

// Copies the rows of region cnt between two host layouts, threads over rows: the pool's (tridi's threads,
// none of which the copy waits to wake: docs/decisions/028) or an OpenMP team's.
void copy_rows(tridi_cpu_pool *pool, const void *src, tridi_dtype st, const layout &sl, const int64_t spos[3],
               void *dst, tridi_dtype dt, const layout &dl, const int64_t dpos[3], const int64_t cnt[3])
{
    const size_t es = std::max(tridi_dtype_size(st), tridi_dtype_size(dt));
    const int64_t rows = cnt[1] * cnt[2];
    const int nt = copy_threads((size_t)(rows * cnt[0]) * es);
    if (pool && nt > 1) {
        rows_job j{src, st, &sl, spos, dst, dt, &dl, dpos, cnt, rows, 0};
        tridi_cpu_pool_run(pool, rows_share, &j, nt);
        return;
    }
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
    for (int64_t row = 0; row < rows; ++row)
        copy_row(src, st, sl, spos, dst, dt, dl, dpos, cnt, row);
}

namespace {

// Copies the box of p's x between x and a packed buffer (to_box: x into box), row by row along axis 0.
void copy_x_box(const tridi_problem *p, char *box, bool to_box)
{
    const size_t es = tridi_dtype_size(p->arrays.x_type);
    const size_t row = (size_t)(p->hi[0] - p->lo[0] + 1) * es;
    char *x = static_cast<char *>(p->arrays.x), *b = box;
    for (int64_t k = p->lo[2]; k <= p->hi[2]; ++k)
        for (int64_t j = p->lo[1]; j <= p->hi[1]; ++j, b += row) {
            char *r = x + (size_t)((p->lo[0] - p->grid.lbound[0]) + p->stride[1] * (j - p->grid.lbound[1]) +
                                   p->stride[2] * (k - p->grid.lbound[2])) * es;
            if (to_box)
                std::memcpy(b, r, row);
            else
                std::memcpy(r, b, row);
        }
}

} // namespace

extern "C" {

tridi_status tridi_cuda_host_keep(tridi_cuda_state *st, const tridi_problem *p)
{
    st->host_kept = false;
    const size_t bytes = (size_t)p->nlines * (size_t)p->n * tridi_dtype_size(p->arrays.x_type);
    if (bytes > st->host_kept_cap) {
        char *mem = new (std::nothrow) char[bytes];
        if (!mem)
            return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not allocate %zu bytes for the old answer box",
                              p->func, bytes);
        st->host_kept_box.reset(mem);
        st->host_kept_cap = bytes;
    }
    copy_x_box(p, st->host_kept_box.get(), true);
    st->host_kept = true;
    st->host_kept_p = *p;
    return TRIDI_SUCCESS;
}

void tridi_cuda_host_drop(tridi_cuda_state *st) { st->host_kept = false; }

void tridi_cuda_host_restore(tridi_cuda_state *st)
{
    if (st->host_kept)
        copy_x_box(&st->host_kept_p, st->host_kept_box.get(), false);
    st->host_kept = false;
}

} // extern "C"

} // namespace tridi_cuda
