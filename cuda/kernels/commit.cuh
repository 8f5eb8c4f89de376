// The commit kernel of device solves under ON_ERROR_CALL that do not fit in one wave: the answer box is
// copied into x only if no line failed. Launched by cuda/device_solve.cu.
#ifndef TRIDI_CUDA_KERNELS_COMMIT_CUH
#define TRIDI_CUDA_KERNELS_COMMIT_CUH

#include <climits>
#include <cstdint>

// Internal linkage: each kernel is instantiated and launched by one file of the library (cuda/planner.cu
// the solve kernels, cuda/device_solve.cu the commit kernel, cuda/diagnose.cu the locate kernel); a kernel
// registered by two translation units would leave the runtime free to launch one copy with the attributes
// (shared-memory opt-in, carveout) set on the other.
namespace {

// Copies the box from the compact buffer into the caller's x only when no line of the solve failed, so a
// failing solve leaves x as it was without a round trip to the host. Rows of `len` contiguous cells:
// row = r + R * l2 starts at src row*len and at dst off + r*rs + l2*s2. One thread also hands the
// verdict to the host through mapped pinned memory (no copy in the stream) and re-arms the error slot
// of the context's next call, which is ordered after this one.
// A block is blockDim.y rows of blockDim.x threads; a thread finds its row once (instead of two divisions
// per cell) and copies TK_COMMIT_BYTES of it, all loads before the stores, so that enough bytes are in
// flight: measured against one cell per thread, 16 and 32 bytes per thread (see docs/decisions/005).
constexpr int TK_COMMIT_BYTES = 64;
template <class TX, class I>
__global__ void __launch_bounds__(256) tk_commit(const TX *__restrict__ src, TX *__restrict__ dst, I len, I R,
                                                 I rows, int64_t off, int64_t rs, int64_t s2,
                                                 const unsigned long long *err, unsigned long long *mirror,
                                                 unsigned long long *next_err)
{
    const unsigned long long verdict = *err;
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) {
        *mirror = verdict;
        *next_err = ULLONG_MAX;
    }
    if (verdict != ULLONG_MAX)
        return;
    constexpr int V = TK_COMMIT_BYTES / sizeof(TX);
    const I tx = (I)blockDim.x, span = tx * V;
    for (I row = (I)blockIdx.y * blockDim.y + threadIdx.y; row < rows; row += (I)gridDim.y * blockDim.y) {
        const I l2 = row / R, r = row - l2 * R;
        const TX *s = src + (int64_t)row * len;
        TX *d = dst + off + (int64_t)r * rs + (int64_t)l2 * s2;
        for (I q0 = (I)blockIdx.x * span + threadIdx.x; q0 < len; q0 += (I)gridDim.x * span) {
            TX v[V];
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (q0 + k * tx < len)
                    v[k] = s[q0 + k * tx];
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (q0 + k * tx < len)
                    d[q0 + k * tx] = v[k];
        }
    }
}

} // namespace

#endif
