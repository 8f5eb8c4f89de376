// FAST's arithmetic on the device as a number type of the one Thomas core (src/thomas_core.h, decision 056):
// each operation rounded once, a*b + c and c - a*b one fused multiply-add, 1/a from rcp.cuh's estimate.
// Used by the Thomas kernels' FAST form (common.cuh), the split lines and the MPI cut solve.
#ifndef TRIDI_CUDA_KERNELS_FUSED_CUH
#define TRIDI_CUDA_KERNELS_FUSED_CUH

#include "rcp.cuh"
#include "thomas_core.h"

#if defined(__CUDACC__)
static __device__ __forceinline__ double tk_fused_add(double a, double b) { return __dadd_rn(a, b); }
static __device__ __forceinline__ double tk_fused_sub(double a, double b) { return __dsub_rn(a, b); }
static __device__ __forceinline__ double tk_fused_mul(double a, double b) { return __dmul_rn(a, b); }
static __device__ __forceinline__ double tk_fused_div(double a, double b) { return __ddiv_rn(a, b); }
static __device__ __forceinline__ double tk_fused_neg(double a) { return -a; }
static __device__ __forceinline__ double tk_fused_zero() { return 0.0; }
static __device__ __forceinline__ double tk_fused_one() { return 1.0; }
static __device__ __forceinline__ double tk_fused_round32(double a) { return tridi_exact_round32(a); }
static __device__ __forceinline__ double tk_fused_div32(double a, double b) { return tridi_exact_div32(a, b); }
static __device__ __forceinline__ double tk_fused_madd(double a, double b, double c) { return fma(a, b, c); }
static __device__ __forceinline__ double tk_fused_nmadd(double a, double b, double c) { return fma(-a, b, c); }
static __device__ __forceinline__ double tk_fused_rcp(double a) { return tk_rcp(a); }
static __device__ __forceinline__ int tk_fused_flag3(int acc, double a, double b, double c)
{
    return tridi_exact_flag3(acc, a, b, c);
}
static __device__ __forceinline__ int tk_fused_flag4(int acc, double a, double b, double c, double d)
{
    return tridi_exact_flag4(acc, a, b, c, d);
}
TRIDI_THOMAS_DIV2(static __device__ __forceinline__, tk_fused, double)
TRIDI_THOMAS_STEPS_FUSED(static __device__ __forceinline__, tk_fused, double, int)
#endif

#endif
