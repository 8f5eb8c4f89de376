// The arguments of the Thomas kernels and of their launches: plain structs shared by the kernels
// (cuda/kernels/), the planner (cuda/planner.cu), the host code of the backend and the GPU benchmark.
// No device code.
#ifndef TRIDI_CUDA_KERNEL_ARGS_H
#define TRIDI_CUDA_KERNEL_ARGS_H

#include <cstddef>
#include <cstdint>

// Where line (l1, l2) of a launch starts and how its unknowns are spaced, in elements.
struct tk_view {
    int64_t off, s1, s2, sm;
};

// The verdict of one device solve under ON_ERROR_LINES, on the device: the lowest failing line, how many
// lines failed, and how many blocks have finished (the last one hands the verdict to the host and re-arms
// the slot, so a solve needs no second kernel, memset or copy).
struct tk_slot {
    unsigned long long first, nfailed;
    unsigned int done, pad;
};
// What the host reads of a slot (mapped pinned memory).
struct tk_verdict {
    unsigned long long first, nfailed;
};

struct tk_args {
    const void *D, *E, *F, *R; // lower, diag, upper, rhs (MOHID D, E, F, Ti)
    void *X;                   // answer
    tk_view in, out;           // the four inputs share one view
    int64_t n, n1;             // unknowns per line, lines along the first line axis
    int64_t l_begin, l_count;  // lines solved by this launch (a slab of the problem's line order)
    double *scratch;           // (Wp, G) of long lines (2 * n * l_count doubles, 16-byte aligned); NULL: shared memory
    unsigned long long *err;   // lowest failing line (atomicMin); ULLONG_MAX: none
    // COOP only: the verdict is copied here for the host (mapped pinned memory) and next_err is re-armed
    // for the context's next call, after the grid barrier.
    unsigned long long *mirror, *next_err;
    unsigned long long *nfail; // lines that failed (atomicAdd), or NULL when only the first is wanted
    // ON_ERROR_LINES device solves: the slot whose verdict the last block hands to `verdict` (host) before
    // re-arming the slot and the next slot's first word (next_err); NULL otherwise.
    tk_slot *slot;
    tk_verdict *verdict;
};

// The arithmetic of tk_line's recurrence (cuda/kernels/common.cuh, decision 041): MOHID's (TRIDI_ARITH_MOHID,
// bit for bit), MOHID's NewType routines' (TRIDI_ARITH_MOHID_NEWTYPE: a float pivot where upper is float),
// or FAST's reciprocal and fused multiply-adds (TRIDI_ARITH_FAST on lines the FAST kernels do not take).
enum tk_arith : int { TK_AR_RCP = 0, TK_AR_MOHID = 1, TK_AR_NEWTYPE = 2 };

// The layout of split lines (cuda/kernels/split.cuh).
struct ts_geom {
    int segs_per_warp, warps_per_line, lines_per_warp; // lines_per_warp * segs_per_warp = 32
    int segments_first; // 1: a warp's lanes run over a line's segments first (x lines); 0: over its lines first
};

// The layout of FAST lines (cuda/kernels/fast_lines.cuh): a block is `lines` lines of P chunk threads.
struct fp_geom {
    int P;          // chunks (threads) per line
    int lines;      // lines per block
    int warp_join;  // 1: the chunks joined by a warp a line (P >= FP_WJ_MIN_P), 0: over the block (decision 088)
};

// How a call is launched. fast: fp_line (FAST arithmetic), chunks of at most fast_chunk unknowns in mode fast_mode
// (fp_mode), laid out as fgeom says; split: ts_line, segments of at most L unknowns laid out as geom says;
// otherwise tk_line, one warp per block.
struct tk_plan {
    bool x_lines;    // unknowns adjacent in memory (lines along the contiguous axis)
    bool wg_on_chip; // W/G in shared memory (no global scratch)
    bool one_wave;   // every line on the GPU at once: a cooperative launch with a grid barrier
    bool offsets32;  // every element offset fits in 32 bits
    bool split;      // ts_line: lines cut over several threads
    bool ckpt; // tc_line (cuda/kernels/ckpt.cuh): checkpoints in the scratch, W/G recomputed walking back
    bool l2wide; // tc_line's x lines ask L2 for 256-byte fetches, not 128 (decision 047)
    bool xtile;  // x lines of the checkpointed family in tx_line (cuda/kernels/xtile.cuh, decision 063)
    bool pair;   // two threads a line, every line at once: tp_line (MOHID's, decision 069), tw_line (FAST's, 108)
    int stages; // stages of the x lines' shared-memory ring
    ts_geom geom;
    size_t smem;
    unsigned blocks, threads;
    bool fast;
    int arith; // tk_arith of tk_line
    int fast_mode, fast_chunk; // fp_mode; unknowns per chunk thread
    fp_geom fgeom;
    int fast_cluster;     // FAST y/z lines split over clusters of that many blocks (fp_line_cl, decision 057); 0: one block a line
    bool fast_wide_fetch; // fp_line_cl's loads ask L2 for 128-byte fetches
};

// Which kernel family: TRIDI_CUDA_KERNEL=line, ckpt or split forces one (to compare them, and so the tests
// can run each), split:P also the lanes per x line of up to 256 unknowns (a power of two up to 32; ignored
// where a lane would hold more than TS_L unknowns). Otherwise MOHID's arithmetic runs one thread per line,
// W/G kept (line) or checkpointed (ckpt) as the planner's rule says (decisions 023, 046), and FAST solves
// their own kernel (decision 021). The context reads the variable once, at tridi_create (src/tuning.c).
struct tk_choice {
    int family; // 0 auto, 1 line, 2 split, 3 ckpt (MOHID's arithmetic only; FAST keeps its kernels)
    int lanes;  // forced lanes per split line; 0: the planner's
};

#endif
