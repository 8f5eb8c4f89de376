// MOHID's arithmetic, its range test of each division asked of the first product: a number type of the one
// Thomas core (src/thomas_core.h) equal to tridi_exact in every operation but _div2, whose test reads q0 =
// a*y with a margin, so that the next unknown does not wait on it (decision 103): the same bits. The Thomas
// kernels take it for lines whose upper diagonal is double (tk_unknown), where it measured faster.
#ifndef TRIDI_CUDA_KERNELS_EXACT_Q0_CUH
#define TRIDI_CUDA_KERNELS_EXACT_Q0_CUH

#include "thomas_core.h"

#if defined(__CUDACC__)
TRIDI_THOMAS_EXACT_OPS(static __device__ __forceinline__, tk_q0)
static __device__ __forceinline__ void tk_q0_div2(double a1, double a2, double b, double *q1, double *q2)
{
    tridi_exact_div2_tested(a1, a2, b, 1, q1, q2);
}
TRIDI_THOMAS_ROUNDED(static __device__ __forceinline__, tk_q0, double)
TRIDI_THOMAS_STEPS_FUSED(static __device__ __forceinline__, tk_q0, double, int)
#endif

#endif
