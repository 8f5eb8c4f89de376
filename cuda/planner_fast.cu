// The FAST kernels' planner (decisions 021, 057): which shape of fp_line / fp_line_cl a FAST solve takes on
// all-float or all-double arrays, and its launch. The only file that instantiates the FAST kernels.
#include "cuda_status.h"
#include "kernels/fast_cluster.cuh"
#include "planner_internal.cuh"

#include <algorithm>

namespace {

// ---- FAST lines (TRIDI_ARITH_FAST on all-float or all-double arrays, docs/decisions/021) ----------------

template <class T, int L, int MODE>
void *fp_kernel_of(bool warp_join)
{
    return warp_join ? (void *)fp_line<T, L, MODE, 1> : (void *)fp_line<T, L, MODE, 0>;
}
template <class T, int L>
void *fp_kernel_of(int mode, bool warp_join)
{
    return mode == FP_STRIDED ? fp_kernel_of<T, L, FP_STRIDED>(warp_join) : fp_kernel_of<T, L, FP_CONTIG>(warp_join);
}

template <class T>
void *fp_kernel(const tk_plan &p)
{
    if (p.fast_cluster > 0) { // lines split over a cluster (decisions 057, 107): chunks of 4 or 8 doubles, 8 or 16 floats
        if constexpr (sizeof(T) == 4)
            return p.fast_chunk == 16 ? (p.fast_wide_fetch ? (void *)fp_line_cl<T, 16, true> : (void *)fp_line_cl<T, 16, false>)
                              : (void *)fp_line_cl<T, 8, true>;
        else
            return p.fast_chunk == 4 ? (void *)fp_line_cl<T, 4, true>
                             : (p.fast_wide_fetch ? (void *)fp_line_cl<T, 8, true> : (void *)fp_line_cl<T, 8, false>);
    }
    if constexpr (sizeof(T) == 4) // chunks of 16 doubles spill
        if (p.fast_chunk == 16)
            return fp_kernel_of<T, 16>(p.fast_mode, p.fgeom.warp_join);
    return fp_kernel_of<T, 8>(p.fast_mode, p.fgeom.warp_join);
}

// p's kernel, W/G on chip (no scratch) with 32-bit offsets, prepared: *k, and *optin the shared memory a block
// may opt in to.
template <class T>
cudaError_t fp_prepare(tk_plan &p, const void **k, size_t *optin)
{
    p.wg_on_chip = true;
    p.offsets32 = true;
    int sms = 0;
    *k = fp_kernel<T>(p);
    return tk_prepare(*k, &sms, optin);
}

// The join of lines of P chunks: wj 0 or 1 as asked (the benchmark's sweep), -1 the rule (decision 088: y/z
// lines only); a warp a line needs a chunk a lane.
inline int fp_warp_join(int P, bool contig, int wj)
{
    return fp_wj_rule(P) && (wj < 0 ? !contig : wj != 0);
}

constexpr int64_t FP_CL_MIN_N = 512; // y/z lines of at least this many unknowns take fp_line_cl (decision 107)
constexpr int FP_CL_LINES = 16;      // lines a cluster (128-byte L2 fetches fill the rest of the runs)
constexpr int FP_CL_MIN_THREADS = 128; // threads a block of fp_line_cl: the fewest that keep the cluster portable
// Blocks a cluster of `lines` lines of P0 chunks needs at `threads` threads a block (each a chunk of every line).
inline int fp_cl_blocks(int P0, int lines, int threads) { return (P0 + threads / lines - 1) / (threads / lines); }

// The plan of fp_line_cl (decision 057) for strided lines: chunks of at most L unknowns (4 or 8 doubles, 8
// or 16 floats), `lines` lines a cluster (at most FP_CL_MAX_LINES), `threads` threads a block, each line's
// chunks cut over as many blocks as it needs (at most FP_CL_MAX_BLOCKS; one block a line where the line's
// chunks fit in one), joined by a warp a line (so at least FP_WJ_MIN_P chunks: wj 0 is not built); wide:
// 128-byte L2 fetches. plan->fast false where the shape does not fit.
template <class T>
cudaError_t fp_cluster_plan(const tk_args &a, int L, int lines, int threads, bool wide, tk_plan *plan, int wj = -1)
{
    tk_plan p{};
    *plan = p;
    if (a.n < 4 || a.n > FP_N_MAX || a.l_count < 1 || lines < 1 || lines > FP_CL_MAX_LINES || threads < lines ||
        threads > FP_MAX_THREADS || wj == 0 ||
        (sizeof(T) == 4 ? L != 8 && L != 16 : L != 4 && L != 8) || tk_max_offset(a.in, a) >= INT32_MAX ||
        tk_max_offset(a.out, a) >= INT32_MAX)
        return cudaSuccess;
    const int P0 = fp_chunks(a.n, L);
    int Pb = threads / lines;
    const int C = fp_cl_blocks(P0, lines, threads);
    if (C > FP_CL_MAX_BLOCKS)
        return cudaSuccess;
    if (C == 1)
        Pb = P0;
    const int P = C * Pb;
    if (P > a.n / 2 || !fp_wj_rule(P))
        return cudaSuccess;
    p.fast_mode = FP_STRIDED;
    p.fast_chunk = L;
    p.fgeom = {P, lines, 1};
    p.fast_cluster = C;
    p.fast_wide_fetch = wide;
    p.threads = (unsigned)(Pb * lines);
    const int64_t clusters = (a.l_count + lines - 1) / lines;
    if (clusters * C > INT32_MAX)
        return cudaSuccess;
    p.blocks = (unsigned)(clusters * C);
    p.smem = fp_cl_smem_bytes<T>(a.n, p.fgeom, C);
    size_t optin = 0;
    const void *k = nullptr;
    cudaError_t e = fp_prepare<T>(p, &k, &optin);
    if (e != cudaSuccess || p.smem > optin)
        return e;
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = (unsigned)C, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3(p.blocks), cfg.blockDim = dim3(p.threads), cfg.dynamicSmemBytes = p.smem;
    cfg.attrs = at, cfg.numAttrs = 1;
    int nc = 0;
    if ((e = cudaOccupancyMaxActiveClusters(&nc, k, &cfg)) != cudaSuccess)
        return e;
    p.fast = nc > 0;
    if (p.fast)
        *plan = p;
    return cudaSuccess;
}

// Completes p (fast_mode and fast_chunk set) for lines of P chunks, `lines` lines a block, and prepares its
// kernel; *plan = p with p.fast where its shared memory fits.
template <class T>
cudaError_t fp_finish_plan(const tk_args &a, bool contig, int P, int lines, tk_plan p, tk_plan *plan, int wj = -1)
{
    p.fgeom = {P, lines, fp_warp_join(P, contig, wj)};
    p.threads = (unsigned)(P * lines);
    p.blocks = (unsigned)((a.l_count + lines - 1) / lines);
    p.smem = fp_smem_bytes<T>(a.n, p.fgeom);
    p.x_lines = contig;
    size_t optin = 0;
    const void *k = nullptr;
    cudaError_t e = fp_prepare<T>(p, &k, &optin);
    // x lines read their chunks' neighbouring runs through L1: half of the SM's memory left to it (the
    // driver takes more shared memory where a block needs it); y/z lines use none.
    if (e == cudaSuccess && contig)
        e = cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, 50);
    if (e != cudaSuccess)
        return e;
    p.fast = p.smem <= optin;
    if (p.fast)
        *plan = p;
    return cudaSuccess;
}

// The FAST solve's shape: fp_shape's (cuda/kernels/fast_lines.cuh, decision 021; the ADI's sweeps keep it),
// retuned on the H200 (decision 057): double x lines of 64 chunks or more one line a block (float ones lose
// more to the verdict's one atomic a block than they gain); float y/z lines of 32 to 64 unknowns chunks of
// 16, 128 threads a block.
template <class T>
bool fp_solve_shape(int64_t n, bool contig, int *L, fp_geom *g)
{
    if (!fp_shape<T>(n, contig, 16, L, g))
        return false;
    g->warp_join = fp_warp_join(g->P, contig, -1); // x lines keep the block's join (decision 088)
    if (contig && sizeof(T) == 8 && g->P >= 64) {
        g->lines = 1;
    } else if (!contig && sizeof(T) == 4 && n >= 32 && fp_chunks(n, 16) <= 4) {
        *L = 16;
        g->P = fp_chunks(n, 16);
        g->lines = std::min(128 / g->P, FP_MAX_LINES);
    }
    return true;
}

// The FAST plan for a.l_count lines of a.n unknowns, into *plan with plan->fast set; plan->fast false
// where the FAST kernel does not take them (lines past FP_N_MAX, offsets past int, shared memory, double
// y/z lines under 512 unknowns of fewer than 4 lines a block or short enough for W/G on chip): one thread
// per line in MOHID's arithmetic then does (plan_solve), which meets the FAST bound too.
// The shapes (fp_solve_shape), from the kernel-only measurements of decisions 021, 057, 088 and 107:
//  - x lines (FP_CONTIG): chunks of 8 loaded straight into registers, about 128 threads a block, one double
//    line a block from 64 chunks (the more blocks an SM holds, the better their load and reduction phases
//    overlap; staging through shared memory was slower); each line's chunks shifted onto 16-byte boundaries
//    where its last chunk has the room (fp_x_shift, decision 109; not by a chunk more);
//  - y/z lines (FP_STRIDED): chunks of 16 for float lines of 32 unknowns or more, else 8; 256 threads a
//    block (128 for float lines of at most 4 chunks), or up to 512 where that brings a warp's rows to 128
//    bytes of neighbouring lines; lines of 512 unknowns or more split over a cluster (fp_line_cl) of 16
//    lines in the smallest blocks of 128, 256 or 512 threads that keep it within 8 blocks (decision 107:
//    blocks of several clusters on an SM overlap the phases one block cannot). Double lines whose W/G stay
//    on chip gain nothing from float-free arithmetic: `tk_line` was faster (decision 021), or two threads a
//    line from both ends where tk_line leaves the SMs few warps (`tw_line`, decision 108).
// y/z lines of 32 chunks or more are joined by a warp a line (fp_shape, decision 088); x lines over the block.
template <class T>
cudaError_t fp_make_plan(const tk_args &a, bool contiguous, tk_plan *plan)
{
    tk_plan p{};
    p.fast = false;
    *plan = p;
    if (a.n < 1 || a.n > FP_N_MAX || a.l_count < 1 || tk_max_offset(a.in, a) >= INT32_MAX ||
        tk_max_offset(a.out, a) >= INT32_MAX)
        return cudaSuccess;
    const bool contig = contiguous && a.in.sm == 1 && a.out.sm == 1;
    p.fast_mode = contig ? FP_CONTIG : FP_STRIDED;
    fp_geom g;
    if (!fp_solve_shape<T>(a.n, contig, &p.fast_chunk, &g))
        return cudaSuccess;
    const int P = g.P, lines = g.lines;
    if (!contig && a.n >= FP_CL_MIN_N) {
        const int Lc = sizeof(T) == 4 ? 16 : 8, P0 = fp_chunks(a.n, Lc);
        int threads = FP_CL_MIN_THREADS;
        while (threads < FP_MAX_THREADS && fp_cl_blocks(P0, FP_CL_LINES, threads) > FP_CL_MAX_BLOCKS)
            threads *= 2;
        cudaError_t e = fp_cluster_plan<T>(a, Lc, FP_CL_LINES, threads, true, plan);
        if (e != cudaSuccess || plan->fast)
            return e;
    }
    if (!contig && sizeof(T) == 8 && (lines < 4 || !tk_needs_scratch(a.n)))
        return cudaSuccess;
    return fp_finish_plan<T>(a, contig, P, lines, p, plan, g.warp_join);
}

// A FAST plan of the given shape (the GPU benchmark's sweep): chunks of at most L unknowns (8, or 16 for
// float), `lines` lines a block of P * lines threads.
template <class T>
cudaError_t fp_shaped_plan(const tk_args &a, bool contig, int L, int lines, int wj, tk_plan *plan)
{
    tk_plan p{};
    *plan = p;
    if (a.n < 1 || a.n > FP_N_MAX || a.l_count < 1 || lines < 1 || (L != 8 && (L != 16 || sizeof(T) != 4)) ||
        tk_max_offset(a.in, a) >= INT32_MAX || tk_max_offset(a.out, a) >= INT32_MAX)
        return cudaSuccess;
    const int P = fp_chunks(a.n, L);
    if (P * lines > FP_MAX_THREADS || lines > FP_MAX_LINES)
        return cudaSuccess;
    p.fast_mode = contig ? FP_CONTIG : FP_STRIDED;
    p.fast_chunk = L;
    return fp_finish_plan<T>(a, contig, P, lines, p, plan, wj);
}

template <class T>
cudaError_t fp_run(const tk_args &a, const tk_plan &p, cudaStream_t stream)
{
    fp_geom g = p.fgeom;
    void *params[] = {(void *)&a, (void *)&g};
    if (p.fast_cluster > 0) {
        cudaLaunchConfig_t cfg{};
        cudaLaunchAttribute at[1];
        at[0].id = cudaLaunchAttributeClusterDimension;
        at[0].val.clusterDim.x = (unsigned)p.fast_cluster, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = 1;
        cfg.gridDim = dim3(p.blocks), cfg.blockDim = dim3(p.threads), cfg.dynamicSmemBytes = p.smem;
        cfg.stream = stream, cfg.attrs = at, cfg.numAttrs = 1;
        return cudaLaunchKernelExC(&cfg, fp_kernel<T>(p), params);
    }
    return cudaLaunchKernel(fp_kernel<T>(p), dim3(p.blocks), dim3(p.threads), params, p.smem, stream);
}

} // namespace

namespace tridi_cuda {

cudaError_t fast_plan(tridi_dtype t, const tk_args &a, bool contiguous, tk_plan *plan)
{
    return t == TRIDI_FLOAT32 ? fp_make_plan<float>(a, contiguous, plan) : fp_make_plan<double>(a, contiguous, plan);
}

cudaError_t fast_run(tridi_dtype t, const tk_args &a, const tk_plan &p, cudaStream_t stream)
{
    return t == TRIDI_FLOAT32 ? fp_run<float>(a, p, stream) : fp_run<double>(a, p, stream);
}

tridi_status fast_variant_plan(const kernel_types &k, const tk_args &a, bool contiguous, int L, int lines, int threads,
                               bool cluster, bool wide, int warp_join, tk_plan *plan)
{
    plan->fast = false;
    if (!k.fast || (k.l != TRIDI_FLOAT32 && k.l != TRIDI_FLOAT64))
        return TRIDI_SUCCESS;
    const bool contig = contiguous && a.in.sm == 1 && a.out.sm == 1;
    cudaError_t e;
    if (k.l == TRIDI_FLOAT32)
        e = cluster ? fp_cluster_plan<float>(a, L, lines, threads, wide, plan, warp_join)
                    : fp_shaped_plan<float>(a, contig, L, lines, warp_join, plan);
    else
        e = cluster ? fp_cluster_plan<double>(a, L, lines, threads, wide, plan, warp_join)
                    : fp_shaped_plan<double>(a, contig, L, lines, warp_join, plan);
    if (cluster && contig)
        plan->fast = false;
    CK(e, "planning a FAST variant");
    return TRIDI_SUCCESS;
}

} // namespace tridi_cuda
