// The kernel planner of the CUDA backend (cuda/planner.cu): which Thomas kernel and launch shape a solve
// takes, for the three kernel operand types, and the launch itself. The internal API that the backend's
// host code and the GPU benchmark (bench/gpu) call; neither includes a kernel header.
#ifndef TRIDI_CUDA_PLANNER_H
#define TRIDI_CUDA_PLANNER_H

#include <cuda_runtime.h>

#include <cstdint>

#include "kernel_args.h"
#include "tridi_internal.h"

namespace tridi_cuda {

// Storage types of the three kernel operands: lower/upper/rhs, diag, answer; fast: the solve may take
// FAST arithmetic (TRIDI_ARITH_FAST on all-float or all-double arrays: the FAST kernels, decision 021);
// arith: tk_line's arithmetic (tk_arith: MOHID's, NewType's, or FAST's reciprocal; decision 041).
struct kernel_types {
    tridi_dtype l, d, x;
    bool fast = false;
    int arith = TK_AR_MOHID;
};

// The operand types of p's kernel; f32_transfer: double inputs sent as float (allow_f32_transfer).
kernel_types types_of(const tridi_problem *p, bool f32_transfer);

// Chooses the kernel variant for a.l_count lines of a.n unknowns (see tk_make_plan in planner.cu).
// want_coop: the guarded one-wave variant if every line fits on the GPU at once (plan->one_wave says whether).
tridi_status plan_solve(const tk_choice &choice, const kernel_types &k, const tk_args &a, bool contiguous,
                        bool want_coop, tk_plan *plan);

// A FAST plan of a given shape, for the GPU benchmark's sweep (bench/gpu, --fsweep): chunks of at most L
// unknowns, `lines` lines a block of P * lines threads, or (cluster: strided lines) a cluster of blocks of
// `threads` threads whose loads ask L2 for 128-byte fetches where `wide` (decision 057). plan->fast false
// where the shape does not fit. warp_join: 1 or 0 joins each line's chunks by a warp or over the block, -1
// as the planner's rule (decision 088); lines of fewer than 32 chunks are always joined over the block.
tridi_status fast_variant_plan(const kernel_types &k, const tk_args &a, bool contiguous, int L, int lines, int threads,
                               bool cluster, bool wide, int warp_join, tk_plan *plan);

// Launches a plan on stream s.
tridi_status run_solve(const kernel_types &k, const tk_args &a, const tk_plan &plan, cudaStream_t s);

// A plain (not cooperative) solve: plan_solve then run_solve.
tridi_status launch_solve(const tk_choice &choice, const kernel_types &k, const tk_args &a, bool contiguous,
                          cudaStream_t s);

// True when W and G of a line of n unknowns do not stay in shared memory: the caller then gives a.scratch
// (2 * n * l_count doubles) to a plan that is not split.
bool tk_needs_scratch(int64_t n);
// True when `plan`, for lines of n unknowns, needs a.scratch (one thread per line with W/G that do not fit
// on chip; split and FAST lines keep everything on chip).
bool plan_needs_scratch(const tk_plan &plan, int64_t n);

} // namespace tridi_cuda

#endif
