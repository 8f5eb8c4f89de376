// CUDA errors as tridi statuses, and the test-only launch-failure injection.
#include "cuda_status.h"

#include <atomic>

namespace tridi_cuda {

// TRIDI_PRIVATE here too: nvcc does not carry the declaration's visibility to this definition.
extern "C" TRIDI_PRIVATE tridi_status tridi_cuda_fail(const char *who, const char *what, int error)
{
    const cudaError_t e = static_cast<cudaError_t>(error);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); // allocation failures are not sticky: clear them so the next call works
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: %s: %s", who, what, cudaGetErrorString(e));
    }
    return tridi_fail(TRIDI_ERROR_CUDA, "%s: %s: %s (%s)", who, what, cudaGetErrorString(e), cudaGetErrorName(e));
}

#ifdef TRIDI_FAULT_INJECTION
namespace {

// Tests only (CMake option TRIDI_FAULT_INJECTION, off by default): tridi_test_fail_launch(n) makes the n-th
// kernel launch from now fail for real, so that the path a refused launch takes (status, buffers, the
// context's next call) can be tested; no input can provoke one.
std::atomic<int> g_launches_before_failure{0};

__global__ void never_runs() {}

} // namespace

// Called where the library launches a kernel, just before: when that launch is the one due to fail, a
// launch of one block of 2048 threads (past every GPU's limit of 1024) is made instead, which the runtime
// refuses; its error is returned and the library's launch is not made.
cudaError_t injected_launch(cudaStream_t s)
{
    if (g_launches_before_failure.load() <= 0 || g_launches_before_failure.fetch_sub(1) != 1)
        return cudaSuccess;
    never_runs<<<1, 2048, 0, s>>>();
    return cudaGetLastError();
}

extern "C" {
// Test-only entry point (declared by the tests themselves, not in tridi.h).
TRIDI_PRIVATE void tridi_test_fail_launch(int nth) { g_launches_before_failure.store(nth > 0 ? nth : 0); }
}
#endif

} // namespace tridi_cuda
