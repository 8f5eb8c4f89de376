// FAST's chunk steps from the one Thomas core (fp_chunk / fp_finish) against the steps as written before,
// on the GPU (fused multiply-adds, the hardware reciprocal): every chunk of a random sweep (fast_core_ab.cuh's
// kinds, float chunks of 8 and 16, double of 4 and 8) must give the same flags and the same bits. Decision
// 060. Exit 77 without a GPU.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "fast_core_ab.cuh"

template <class T, int L>
__global__ void ab_kernel(int n, const T *in, const int *len, const T *uv, int *same)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        same[i] = fp_ab_chunk<T, L>(len[i], in + (size_t)4 * L * i, uv[2 * i], uv[2 * i + 1]);
}

template <class T, int L>
static void check(const char *tname, uint64_t *rng)
{
    const int n = 1 << 18;
    std::vector<T> in((size_t)4 * L * n), uv(2 * (size_t)n);
    std::vector<int> len(n), same(n);
    for (int i = 0; i < n; ++i) {
        len[i] = 1 + (int)tu_randint(rng, 0, L - 1);
        fp_ab_rows<T, L>(i, len[i], rng, &in[(size_t)4 * L * i]);
        uv[2 * i] = (T)(2.0 * tu_uniform(rng) - 1.0);
        uv[2 * i + 1] = (T)(2.0 * tu_uniform(rng) - 1.0);
    }
    T *din, *duv;
    int *dlen, *dsame;
    bool cuda_ok = cudaMalloc(&din, in.size() * sizeof(T)) == cudaSuccess &&
                   cudaMalloc(&duv, uv.size() * sizeof(T)) == cudaSuccess &&
                   cudaMalloc(&dlen, n * sizeof(int)) == cudaSuccess && cudaMalloc(&dsame, n * sizeof(int)) == cudaSuccess;
    cuda_ok = cuda_ok && cudaMemcpy(din, in.data(), in.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess &&
              cudaMemcpy(duv, uv.data(), uv.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess &&
              cudaMemcpy(dlen, len.data(), n * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess;
    if (cuda_ok) {
        ab_kernel<T, L><<<(n + 127) / 128, 128>>>(n, din, dlen, duv, dsame);
        cuda_ok = cudaGetLastError() == cudaSuccess &&
                  cudaMemcpy(same.data(), dsame, n * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess;
    }
    cudaFree(din), cudaFree(duv), cudaFree(dlen), cudaFree(dsame);
    char what[160];
    std::snprintf(what, sizeof what, "%s, chunks of %d: the GPU ran the sweep", tname, L);
    tu_expect_true(what, cuda_ok);
    int differ = 0;
    for (int i = 0; i < n; ++i)
        differ += cuda_ok && !same[i];
    std::snprintf(what, sizeof what, "%s, chunks of %d on the GPU: %d of %d chunks differ from the steps before (bits)",
                  tname, L, differ, n);
    tu_expect_true(what, cuda_ok && differ == 0);
}

int main()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        std::printf("test_fast_core_ab: no GPU, skipped\n");
        return 77;
    }
    uint64_t rng = tu_seed("test_fast_core_ab");
    check<float, 8>("float", &rng);
    check<float, 16>("float", &rng);
    check<double, 4>("double", &rng);
    check<double, 8>("double", &rng);
    std::printf("test_fast_core_ab: %d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
