// What the two kernel planners (cuda/planner.cu: one thread per line and split lines; cuda/planner_fast.cu:
// the FAST kernels) share: the offsets a launch touches, the per-device kernel set-up and occupancy cache
// (defined in planner.cu), and the FAST planner's entry points. Included after the kernel headers.
#ifndef TRIDI_CUDA_PLANNER_INTERNAL_CUH
#define TRIDI_CUDA_PLANNER_INTERNAL_CUH

#include "planner.h"

namespace tridi_cuda {

// The largest element offset a launch touches through a view (first line axis up to n1 - 1).
inline int64_t tk_max_offset(const tk_view &v, const tk_args &a)
{
    const int64_t l2 = a.l_count ? (a.l_begin + a.l_count - 1) / a.n1 : 0;
    return v.off + (a.n1 - 1) * v.s1 + l2 * v.s2 + (a.n - 1) * v.sm;
}

// Opts kernel in to the device's whole shared memory (max_shared: preferring shared memory to L1; else the
// 32 KiB configuration) once per process; *sms and *smem_optin: the device's SM count and opt-in limit.
cudaError_t tk_prepare(const void *kernel, int *sms, size_t *smem_optin, bool max_shared = true);
// Blocks of `threads` threads and smem bytes of dynamic shared memory per SM, cached per kernel and device.
cudaError_t tk_occupancy(const void *kernel, size_t smem, int *per_sm, int threads = TK_T);

// The FAST plan of lines of type t (float or double) into *plan, plan->fast false where the FAST kernels do
// not take them (cuda/planner_fast.cu); fast_run launches such a plan.
cudaError_t fast_plan(tridi_dtype t, const tk_args &a, bool contiguous, tk_plan *plan);
cudaError_t fast_run(tridi_dtype t, const tk_args &a, const tk_plan &p, cudaStream_t stream);

} // namespace tridi_cuda

#endif
