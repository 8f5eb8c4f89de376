// FAST's arithmetic on the device as a number type of the one Thomas core (src/thomas_core.h, decision 056):
// each operation rounded once, a*b + c and c - a*b one fused multiply-add, 1/a from rcp.cuh's estimate.
// Used by the Thomas kernels' FAST form (common.cuh), the split lines and the MPI cut solve.
#ifndef TRIDI_CUDA_KERNELS_FUSED_CUH
#define TRIDI_CUDA_KERNELS_FUSED_CUH

#include "rcp.cuh"
#include "thomas_core.h"

#if defined(__CUDACC__)
TRIDI_THOMAS_EXACT_OPS(static __device__ __forceinline__, tk_fused)
static __device__ __forceinline__ double tk_fused_madd(double a, double b, double c) { return fma(a, b, c); }
static __device__ __forceinline__ double tk_fused_nmadd(double a, double b, double c) { return fma(-a, b, c); }
static __device__ __forceinline__ double tk_fused_rcp(double a) { return tk_rcp(a); }
TRIDI_THOMAS_DIV2(static __device__ __forceinline__, tk_fused, double)
TRIDI_THOMAS_STEPS_FUSED(static __device__ __forceinline__, tk_fused, double, int)
#endif

#endif
