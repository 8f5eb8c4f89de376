// Where a failing line fails, on the host or in a one-thread kernel. Used by cuda/diagnose.cu.
#ifndef TRIDI_CUDA_KERNELS_LOCATE_CUH
#define TRIDI_CUDA_KERNELS_LOCATE_CUH

#include <cstdint>

#include "thomas_core.h" // the one Thomas core: failure kinds, their texts and the diagnosis steps

// Internal linkage: each kernel is instantiated and launched by one file of the library (cuda/planner.cu
// the solve kernels, cuda/device_solve.cu the commit kernel, cuda/diagnose.cu the locate kernel); a kernel
// registered by two translation units would leave the runtime free to launch one copy with the attributes
// (shared-memory opt-in, carveout) set on the other.
namespace {

// Why a line failed: the first unknown that breaks, scanning as the CPU backend does (forward sweep
// first, then the answer's rounding in back-substitution order), with the one Thomas core's steps and
// failure kinds (src/thomas_core.h). Runs on the host (host-array mode) or in a one-thread kernel (device
// mode); W and G hold n doubles each. newtype: MOHID's NewType pivot (a float where upper, TL, is float),
// as the kernel that flagged the line computed it (decision 041).
using tk_fail = tridi_thomas_fail;

template <class TL, class TD, class TX>
__host__ __device__ void tk_locate(const TL *D, const TD *E, const TL *F, const TL *R, int64_t s, int64_t n,
                                   double *W, double *G, tk_fail *out, int newtype)
{
    double w = 0.0, g = 0.0;
    out->m = 0;
    out->kind = TRIDI_FAIL_NONE;
    for (int64_t m = 0; m < n; ++m) {
        const double d = m ? (double)D[m * s] : 0.0, e = (double)E[m * s];
        const double f = m < n - 1 ? (double)F[m * s] : 0.0, r = (double)R[m * s];
        const int k = newtype ? tridi_thomas_forward_newtype(d, e, f, r, m == 0, m == n - 1, sizeof(TL) == 4, &w, &g)
                              : tridi_thomas_forward(d, e, f, r, m == n - 1, &w, &g);
        if (k) {
            out->m = m;
            out->kind = k;
            return;
        }
        W[m] = w;
        G[m] = g;
    }
    double x = 0.0;
    for (int64_t m = n - 1; m >= 0; --m) {
        x = tridi_thomas_back(W[m], G[m], x, m == n - 1, sizeof(TX) == 8);
        if (!tridi_thomas_finite(x)) {
            out->m = m;
            out->kind = TRIDI_FAIL_ANSWER_OVERFLOW;
            return;
        }
    }
}

template <class TL, class TD, class TX>
__global__ void tk_locate_kernel(const TL *D, const TD *E, const TL *F, const TL *R, int64_t s, int64_t n,
                                 double *WG, tk_fail *out, int newtype)
{
    tk_locate<TL, TD, TX>(D, E, F, R, s, n, WG, WG + n, out, newtype);
}

} // namespace

#endif
