/* Which table a context's calls go through. */
#include "backend.h"

const tridi_backend_ops *tridi_backend_of(tridi_context ctx)
{
    return ctx->backend == TRIDI_BACKEND_CUDA ? &tridi_backend_cuda_ops : &tridi_backend_cpu_ops;
}
