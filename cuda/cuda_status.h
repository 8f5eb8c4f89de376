// CUDA errors as tridi statuses, and the test-only hook that makes a kernel launch fail
// (cuda/cuda_status.cu).
#ifndef TRIDI_CUDA_STATUS_H
#define TRIDI_CUDA_STATUS_H

#include <cuda_runtime.h>

#include "tridi_internal.h"

namespace tridi_cuda {

// Records a failed CUDA call (what: the call and its purpose) and returns its status: tridi_cuda_fail
// (src/tridi_internal.h) in the backend's words.
inline tridi_status cuda_fail(const char *what, cudaError_t e) { return tridi_cuda_fail("tridi (CUDA)", what, e); }

#define CK(call, what)                                                                                   \
    do {                                                                                                 \
        cudaError_t ck_e = (call);                                                                       \
        if (ck_e != cudaSuccess)                                                                         \
            return cuda_fail(what, ck_e);                                                                \
    } while (0)

#ifdef TRIDI_FAULT_INJECTION
// Called where the library launches a kernel, just before (see cuda/cuda_status.cu).
cudaError_t injected_launch(cudaStream_t s);
#else
inline cudaError_t injected_launch(cudaStream_t) { return cudaSuccess; }
#endif

} // namespace tridi_cuda

// device_solve.cu and the ADI files define only static and extern "C" tridi_ names; they reach the
// namespace's names through this directive.
using namespace tridi_cuda;

#endif
