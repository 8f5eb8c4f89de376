// Peaceman-Rachford's y/z right-hand sides with the neighbours across lines read once (docs/decisions/068):
// a block's neighbouring lines sit on neighbouring lanes, so a cell's neighbour along the other axis is
// often the value another lane has just read. line_rhs's arithmetic (interior_one) on values taken from the
// lanes where the pointers say they are the same cells, from memory where not: the same values and bits.
#ifndef TRIDI_ADI_LINE_NEIGHBOURS_CUH
#define TRIDI_ADI_LINE_NEIGHBOURS_CUH

#include "line_rhs.cuh"

namespace {

// The lanes of this thread's warp that the block has (its last warp may be partial).
struct warp_lanes {
    int lane, count;
    unsigned mask;
    __device__ warp_lanes()
    {
        lane = (int)(threadIdx.x & 31);
        count = min(32, (int)blockDim.x - (int)(threadIdx.x & ~31u));
        mask = count == 32 ? ~0u : (1u << count) - 1;
    }
};

// RHS_ONE along a y/z line, neighbouring lines on neighbouring lanes (FP_STRIDED): the other axis's
// neighbour of a cell comes from the lane holding that line at the same chunk, else from memory. Every
// lane of the block calls it (an inactive one on a line of its block).
template <typename T, int AXIS, int L>
__device__ __forceinline__ void rhs_one_from_lanes(const line_rhs<T, AXIS> &cr, int s0, int len, T (&dv)[L])
{
    const warp_lanes w;
    const auto me = (unsigned long long)cr.y;
    const unsigned long long below = __shfl_up_sync(w.mask, me, 1), above = __shfl_down_sync(w.mask, me, 1);
    const int s0_below = __shfl_up_sync(w.mask, s0, 1), s0_above = __shfl_down_sync(w.mask, s0, 1);
    const bool lo_lane = w.lane > 0 && s0_below == s0 && below == (unsigned long long)cr.o_nb[0];
    const bool hi_lane = w.lane + 1 < w.count && s0_above == s0 && above == (unsigned long long)cr.o_nb[1];
    const int last = (int)cr.n - 1;
    T yv[L];
#pragma unroll
    for (int k = 0; k < L; ++k)
        yv[k] = __ldg(cr.y + (int64_t)min(s0 + k, last) * cr.st);
#pragma unroll
    for (int k = 0; k < L; ++k) {
        const int64_t off = (int64_t)min(s0 + k, last) * cr.st;
        T vm = __shfl_up_sync(w.mask, yv[k], 1), vp = __shfl_down_sync(w.mask, yv[k], 1);
        if (!lo_lane)
            vm = __ldg(cr.o_nb[0] + off);
        if (!hi_lane)
            vp = __ldg(cr.o_nb[1] + off);
        dv[k] = k < len ? cr.interior_one(yv[k], vm, vp) : T(0);
    }
}

} // namespace

#endif
