// Why a line of a CUDA solve failed, found on the host or on the device, and the status that reports it
// (cuda/diagnose.cu).
#ifndef TRIDI_CUDA_DIAGNOSE_H
#define TRIDI_CUDA_DIAGNOSE_H

#include <cstdint>

#include "cuda_internal.h"
#include "host_box.h"

namespace tridi_cuda {

// ON_ERROR_LINES after a host-array solve in which a line failed: every line solved again on the host, each
// failing line left as it was (put back from `undo`, x's old box, when given), the others answered.
tridi_status lines_on_host(const char *func, const tridi_problem *p, const box_plan &b, const char *undo);
// Reports failing line `line` of a host-array solve, located on the host; f32: the inputs went as float.
tridi_status locate_on_host(const char *func, const tridi_problem *p, int64_t line, bool f32);
// Reports failing line `line` of a device solve, located by a one-thread kernel; nfailed under ON_ERROR_LINES.
tridi_status locate_on_device(tridi_cuda_state *st, const char *func, const tridi_problem *p, int64_t line,
                              int64_t nfailed);

} // namespace tridi_cuda

#endif
