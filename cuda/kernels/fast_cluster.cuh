// FAST y/z lines split over a cluster of blocks (fp_line_cl; decisions 057, 088, 107). A long strided line has
// so many chunks that one block holds only a few lines, one block an SM. A cluster of C blocks takes `lines`
// lines and cuts each line's P chunks into C runs of P / C, one per block (smaller blocks, more of them an SM,
// wider runs). Thread (t, q): line t = tid % lines, chunk q = rank * P / C + tid / lines. Each line is joined
// by one warp (fast_warp_join.cuh) of the block of rank t % C. The blocks exchange what they owe each other
// by stores into the other block's shared memory that count their bytes on its mbarriers (st.async), in
// three rounds: the chunks' reduced rows to the line's joining block, the chunks' two unknowns back, each
// block's failed lines to the others. A block waits only on its own mbarriers: no cluster barrier (whose
// release and acquire fence the whole GPU's memory) after the first, which says every block runs.
#ifndef TRIDI_FAST_CLUSTER_CUH
#define TRIDI_FAST_CLUSTER_CUH

#include "fast_lines.cuh"

#include <cooperative_groups.h>
#include <cuda/ptx>

namespace {

constexpr int FP_CL_MAX_BLOCKS = 8; // blocks a cluster: the portable limit
constexpr int FP_CL_MAX_LINES = 32; // lines a cluster: a bit each in a block's word of failed lines

// Shared memory of a block: the head (three mbarriers: rows, unknowns, failed lines; then a word of failed
// lines from each block of the cluster), the chunks' unknowns (a pair a thread, at ql * lines + t), the
// rows of the lines this block joins (fast_warp_join.cuh's layout, line t at (t / C) * 3 * plane); or,
// once every exchange is done, the fallback's W/G in place of the last two.
constexpr size_t FP_CL_HEAD = 64;
__host__ __device__ inline int fp_cl_joined(int lines, int C, int r) { return r < lines ? (lines - 1 - r) / C + 1 : 0; }
template <class T>
__host__ __device__ inline size_t fp_cl_pairs_bytes(const fp_geom &g, int C)
{
    return (size_t)2 * (g.P / C) * g.lines * sizeof(T);
}
template <class T>
__host__ __device__ inline size_t fp_cl_rows_bytes(const fp_geom &g, int C)
{
    return (size_t)3 * fp_wj_slots(g.P) * FP_WJ_PITCH * fp_cl_joined(g.lines, C, 0) * sizeof(T);
}
template <class T>
inline size_t fp_cl_smem_bytes(int64_t n, const fp_geom &g, int C)
{
    const size_t red = fp_cl_pairs_bytes<T>(g, C) + fp_cl_rows_bytes<T>(g, C), wg = (size_t)n * 2 * sizeof(double);
    return FP_CL_HEAD + (red > wg ? red : wg);
}

// A block's own mbarrier, used once a launch: its phase 0 complete (every byte counted on it arrived; the
// stores that counted them are then visible to this thread).
__device__ __forceinline__ void fp_cl_wait(uint64_t *bar)
{
    while (!cuda::ptx::mbarrier_try_wait_parity(bar, 0u)) {
    }
}

// fp_block for a cluster's lines (Src as for fp_block; nl: the cluster's lines; geo.warp_join, lines <=
// FP_CL_MAX_LINES). A line any of whose chunks failed, in any block, goes to src.careful in the cluster's
// first block, which returns true then (tk_finish's flag, as fp_block's).
template <class T, int L, class Src>
__device__ __forceinline__ bool fp_block_cl(const fp_geom &geo, int n, int nl, unsigned char *smem, Src &src)
{
    namespace ptx = cuda::ptx;
    cooperative_groups::cluster_group cl = cooperative_groups::this_cluster();
    const int C = (int)cl.num_blocks(), r = (int)cl.block_rank(), TL = geo.lines, P = geo.P, Pb = P / C;
    const int t = threadIdx.x % TL, ql = threadIdx.x / TL, q = r * Pb + ql;
    const int plane = fp_wj_slots(P) * FP_WJ_PITCH;
    uint64_t *bar = (uint64_t *)smem; // [0] rows, [1] unknowns, [2] failed lines
    unsigned *failed = (unsigned *)(smem + 32);
    T *pairs = (T *)(smem + FP_CL_HEAD), *rows = pairs + 2 * Pb * TL;
    if (threadIdx.x == 0) {
        for (int i = 0; i < 3; ++i)
            ptx::mbarrier_init(bar + i, 1);
        // each barrier's one arrival now, with the bytes the other blocks (and this one) will store
        const uint32_t nrows = (uint32_t)(fp_cl_joined(TL, C, r) * P * 6 * sizeof(T));
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar, nrows);
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar + 1,
                                       (uint32_t)(2 * Pb * TL * sizeof(T)));
        ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, bar + 2,
                                       (uint32_t)((C - 1) * sizeof(unsigned)));
        failed[r] = 0;
        ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    }
    __syncthreads(); // the block's threads see the barriers and its word of failed lines set
    // Another block's shared memory may be written only once that block runs with its barriers set: every
    // block says so here and waits for the others only before its first store there, after its loads.
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
    long long s0l;
    int len;
    fp_chunk_range(n, P, q, &s0l, &len);
    const int s0 = (int)s0l;
    const bool active = t < nl;
    if (!active)
        len = 1;

    T av[L], bv[L], cv[L], dv[L];
    fp_load_rows<T, L>(active, src, s0, len, av, bv, cv, dv);
    fp_row<T> ru, rv;
    bool ok = fp_chunk<T, L>(len, av, bv, cv, dv, ru, rv);
    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");
    {
        // 1. the chunk's two rows to line t's joining block
        int lane, slot;
        fp_wj_place(P, q, &lane, &slot);
        const int o = slot * FP_WJ_PITCH + lane;
        T *A = cl.map_shared_rank(rows, (unsigned)(t % C)) + 3 * plane * (t / C);
        uint64_t *b = cl.map_shared_rank(bar, (unsigned)(t % C));
        ptx::st_async(A + o, ru.a, b), ptx::st_async(A + plane + o, ru.c, b), ptx::st_async(A + 2 * plane + o, ru.d, b);
        A += FP_WJ_PITCH;
        ptx::st_async(A + o, rv.a, b), ptx::st_async(A + plane + o, rv.c, b), ptx::st_async(A + 2 * plane + o, rv.d, b);
    }
    fp_cl_wait(bar);
    // 2. this block's lines joined, a warp a line; each lane's run of chunks' two unknowns to their blocks
    const int lane = threadIdx.x % 32;
    for (int l = threadIdx.x / 32; l * C + r < TL; l += blockDim.x / 32) {
        T *A = rows + 3 * plane * l;
        fp_wj_line<T>(P, lane, A, plane);
        const T *D = A + 2 * plane;
        long long q0;
        int m;
        fp_chunk_range(P, 32, lane, &q0, &m);
        for (int i = 0; i < m; ++i) {
            const int qq = (int)q0 + i, to = qq / Pb;
            const T uv[2] = {D[2 * i * FP_WJ_PITCH + lane], D[(2 * i + 1) * FP_WJ_PITCH + lane]};
            ptx::st_async(cl.map_shared_rank(pairs, (unsigned)to) + 2 * ((qq % Pb) * TL + l * C + r), uv,
                          cl.map_shared_rank(bar + 1, (unsigned)to));
        }
    }
    // 3. the chunk's unknowns: its answers
    fp_cl_wait(bar + 1);
    const T u = pairs[2 * (ql * TL + t)], v = pairs[2 * (ql * TL + t) + 1];
    ok &= fp_finite(u) & fp_finite(v); // NaN where the line's warp met a bad pivot (fp_wj_line)
    ok &= fp_finish<T, L>(len, av, cv, dv, u, v);
    // 4. the lines any chunk of which failed, from every block
    if (!ok && active)
        atomicOr(failed + r, 1u << t);
    __syncthreads();
    if (threadIdx.x < C && threadIdx.x != r)
        ptx::st_async(cl.map_shared_rank(failed + r, threadIdx.x), failed[r], cl.map_shared_rank(bar + 2, threadIdx.x));
    fp_cl_wait(bar + 2);
    unsigned bad = 0;
    for (int b = 0; b < C; ++b)
        bad |= failed[b];
    if (active && !((bad >> t) & 1u))
        src.store(s0, len, dv);
    // every byte stored into this block has arrived: the area is free, and the block may leave
    const unsigned live = nl >= 32 ? ~0u : (1u << nl) - 1u;
    if (r != 0 || !(bad & live))
        return false;
    double2 *wg = (double2 *)pairs;
    for (int k = 0; k < nl; ++k) {
        if (!((bad >> k) & 1u))
            continue;
        __syncthreads(); // the line before is done with the W/G area
        if (t == k && ql == 0)
            src.careful(wg);
    }
    return true;
}

// The cluster's lines: blocks [C * c, C * c + C) take lines [lines * c, lines * c + lines).
template <class T, int L, bool WIDE>
__global__ void __launch_bounds__(FP_MAX_THREADS) fp_line_cl(const tk_args a, const fp_geom geo)
{
    extern __shared__ __align__(16) unsigned char fp_dyn[];
    const int C = (int)cooperative_groups::this_cluster().num_blocks();
    const int t = threadIdx.x % geo.lines;
    const int64_t li0 = (int64_t)(blockIdx.x / C) * geo.lines;
    const int nl = (int)min((int64_t)geo.lines, a.l_count - li0);
    auto src = fp_rows_of<T, L, WIDE, false>(a, li0 + (t < nl ? t : 0), warp_run(geo.lines, sizeof(T)));
    tk_finish(a, fp_block_cl<T, L>(geo, (int)a.n, nl, fp_dyn, src));
}

} // namespace

#endif
