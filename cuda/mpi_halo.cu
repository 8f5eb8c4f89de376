// Device part of the halo exchange: one launch copies every face (and corner) region of a face group
// between two grid-shaped arrays with their own strides. The same kernel packs faces into contiguous buffers,
// unpacks them, and - through CUDA IPC mappings - writes them straight into a neighbour's halo.
#include "mpi_internal.h"

#include <cuda_runtime.h>

namespace {

// Each region in the widest unit (16, 8 bytes, else the element) its row start and row length allow:
// one 16-byte access per thread instead of two or four keeps more bytes in flight per request, which is
// what NVLink writes into a neighbour's halo and the packing of strided faces (i faces: rows of a few
// cells) are short of. Per region, so that one odd region does not narrow the others.
struct regions {
    tridi_mpi_region r[8];
    int unit[8]; // bytes per access of each region: 16, 8 or 4
};

template <typename T> __device__ void copy_box(const tridi_mpi_region &r)
{
    const int64_t n0 = r.count[0], n1 = r.count[1];
    const int64_t total = n0 * n1 * r.count[2];
    const T *src = static_cast<const T *>(r.src);
    T *dst = static_cast<T *>(r.dst);
    if (total < (int64_t(1) << 31)) {
        // 32-bit index arithmetic: 64-bit division is emulated and would cost more than the copy.
        const uint32_t m0 = (uint32_t)n0, m1 = (uint32_t)n1, tot = (uint32_t)total;
        for (uint32_t c = blockIdx.x * blockDim.x + threadIdx.x; c < tot; c += gridDim.x * blockDim.x) {
            uint32_t i = c % m0, jk = c / m0, j = jk % m1, k = jk / m1;
            dst[i + j * r.dst_s1 + k * r.dst_s2] = src[i + j * r.src_s1 + k * r.src_s2];
        }
        return;
    }
    for (int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; c < total; c += (int64_t)gridDim.x * blockDim.x) {
        int64_t i = c % n0, jk = c / n0, j = jk % n1, k = jk / n1;
        dst[i + j * r.dst_s1 + k * r.dst_s2] = src[i + j * r.src_s1 + k * r.src_s2];
    }
}

// One launch for every region of a face group: blockIdx.y picks the region.
__global__ void copy_regions(regions rs)
{
    const int g = blockIdx.y;
    if (rs.unit[g] == 16)
        copy_box<uint4>(rs.r[g]);
    else if (rs.unit[g] == 8)
        copy_box<uint2>(rs.r[g]);
    else
        copy_box<unsigned>(rs.r[g]);
}

} // namespace

extern "C" tridi_status tridi_mpi_cuda_copy_regions(const tridi_mpi_region *r, int nregions, size_t esize,
                                                    void *stream)
{
    if (nregions <= 0)
        return TRIDI_SUCCESS;
    regions rs;
    int64_t biggest = 0;
    for (int i = 0; i < nregions; ++i) {
        const size_t bits = (size_t)(uintptr_t)r[i].src | (size_t)(uintptr_t)r[i].dst |
                            (size_t)r[i].count[0] * esize | (size_t)r[i].src_s1 * esize |
                            (size_t)r[i].src_s2 * esize | (size_t)r[i].dst_s1 * esize | (size_t)r[i].dst_s2 * esize;
        size_t unit = 16;
        while (unit > esize && bits % unit)
            unit /= 2;
        const int64_t per = (int64_t)(unit / esize); // elements per unit
        rs.unit[i] = (int)unit;
        rs.r[i] = r[i];
        rs.r[i].count[0] /= per;
        rs.r[i].src_s1 /= per;
        rs.r[i].src_s2 /= per;
        rs.r[i].dst_s1 /= per;
        rs.r[i].dst_s2 /= per;
        int64_t t = rs.r[i].count[0] * rs.r[i].count[1] * rs.r[i].count[2];
        if (t > biggest)
            biggest = t;
    }
    if (!biggest)
        return TRIDI_SUCCESS;
    const int threads = 256;
    int64_t blocks = (biggest + threads - 1) / threads;
    if (blocks > 4096)
        blocks = 4096; // grid-stride beyond: enough to fill an H200 several times
    dim3 grid((unsigned)blocks, (unsigned)nregions);
    copy_regions<<<grid, threads, 0, static_cast<cudaStream_t>(stream)>>>(rs);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
        return tridi_fail(TRIDI_ERROR_CUDA, "tridi_halo: copy kernel launch failed: %s", cudaGetErrorString(e));
    return TRIDI_SUCCESS;
}
