// 1/den on the device from the hardware's reciprocal estimate and two Newton steps: full double precision
// (within an ulp of the rounded quotient) at a fraction of the latency of the IEEE division routine, which
// sits on the recurrence's critical path. A zero or subnormal pivot gives Inf/NaN, which the callers'
// finiteness checks catch. Not MOHID's arithmetic (which divides, decision 041): used by FAST's fallback
// to tk_line (common.cuh, TK_AR_RCP), the FAST kernels (fast_core.cuh) and the MPI cut solve
// (cuda/mpi_solve.cu), whose answers are equal to the one-rank solve within rounding, not bit for bit.
#ifndef TRIDI_CUDA_KERNELS_RCP_CUH
#define TRIDI_CUDA_KERNELS_RCP_CUH

#if defined(__CUDACC__)
static __device__ __forceinline__ double tk_rcp(double den)
{
    double y;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(den));
    double e = fma(-den, y, 1.0);
    y = fma(y, e, y);
    e = fma(-den, y, 1.0);
    return fma(y, e, y);
}
#endif

#endif
