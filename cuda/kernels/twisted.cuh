// tw_line: FAST's recurrence (tk_line's reciprocal form) on strided (y/z) lines where every line is on the GPU
// at once and tk_line would leave an SM few warps: two threads a line from both ends (a twisted factorization).
// A warp holds 16 lines: lane j runs line j's top half downwards (unknowns 0..h-1, h = ceil(n/2)), lane j + 16
// its bottom half upwards (the step with lower and upper exchanged: U = -lower/pivot, H = (r - upper*H)/pivot);
// they meet at x(h-1) = (G + W*H) / (1 - W*U), x(h) = U*x(h-1) + H, then substitute back over their halves.
// A line flagged there (a value not finite, |1 - W*U| under TW_DEN_MIN) is solved again by lane j as fp_line
// solves its flagged lines (fp_careful_line); only a line that fails there too fails. Decision 108;
// instantiated and launched by cuda/planner.cu.
#ifndef TRIDI_CUDA_KERNELS_TWISTED_CUH
#define TRIDI_CUDA_KERNELS_TWISTED_CUH

#include <cstdint>

#include "common.cuh"
#include "fast_lines.cuh" // fp_careful_line, the fallback

namespace {

constexpr int TW_L = TK_T / 2; // lines a block (one warp, two lanes a line)
// The meeting's pivot 1 - W*U below which the halves cancel too far (a third of double's bits lost to it):
// the line is solved again with one chain.
constexpr double TW_DEN_MIN = 0x1p-16;

__host__ __device__ inline int64_t tw_half(int64_t n) { return (n + 1) / 2; }
// Shared memory of a block: (W, G) of each lane's half, the answers later in W's place.
__host__ __device__ inline size_t tw_smem_bytes(int64_t n) { return (size_t)tw_half(n) * TK_T * sizeof(double2); }

// The second parameter (the stage count of the other kernels) is unused.
template <class TL, class TD, class TX, class I>
__global__ void __launch_bounds__(TK_T) tw_line(const tk_args a, const int)
{
    constexpr int T = TK_T;
    constexpr unsigned FULL = 0xffffffffu;
    extern __shared__ __align__(16) unsigned char tk_dyn[];
    double2 *wg = (double2 *)tk_dyn; // step k of lane t's half at wg[k * T + t]
    const int t = (int)threadIdx.x, j = t % TW_L, role = t / TW_L; // role 0: top half, 1: bottom half
    const int64_t li0 = (int64_t)blockIdx.x * TW_L, n = a.n, h = tw_half(n);
    const int nl = (int)min((int64_t)TW_L, a.l_count - li0);
    // lanes past the last line run the block's first line (valid offsets, full-warp shuffles), write nothing
    const bool active = j < nl;
    int64_t l1, l2;
    const int64_t l =
        tk_line_of(a, sizeof(TL), a.l_begin + li0 + (active ? j : 0), warp_run(TW_L, sizeof(TL)), &l1, &l2);
    const I io = (I)(a.in.off + l1 * a.in.s1 + l2 * a.in.s2), oo = (I)(a.out.off + l1 * a.out.s1 + l2 * a.out.s2);
    const I si = (I)a.in.sm, so = (I)a.out.sm;
    // This lane's half as a line of its own: len steps k, unknown m = k (top) or n-1-k (bottom), whose lower
    // and upper are the line's lower and upper (top) or its upper and lower (bottom).
    const int64_t len = role ? n - h : h;
    const I ib = role ? io + (I)(n - 1) * si : io, sb = role ? -si : si;
    const TD *E = (const TD *)a.E;
    const TL *D = (const TL *)a.D, *F = (const TL *)a.F, *R = (const TL *)a.R;
    const TL *Lo = role ? F : D, *Up = role ? D : F;
    TX *X = (TX *)a.X;

    // Forward: tk_line's y/z sweep over the half. Step k is the half's first at k = 0 and never the line's
    // last but on a line of one unknown; the loads' guards read no lower at k = 0 and no upper at k = n-1:
    // lower of unknown 0, upper of n-1.
    double w = 0.0, g = 0.0;
    bool bad = false;
    if (len > 0)
        tk_strided_forward<TK_AR_RCP, false>(len, n, ib, sb, E, Lo, Up, R, wg + t, (int64_t)T, w, g, bad);

    // The meeting, computed alike by both lanes: W, G at h-1 (top), U, H at h (bottom; 0, 0 on a line of one).
    const double wo = __shfl_xor_sync(FULL, w, TW_L), go = __shfl_xor_sync(FULL, g, TW_L);
    const double W = role ? wo : w, G = role ? go : g, U = role ? w : wo, H = role ? g : go;
    const double den = tk_fused_nmadd(W, U, 1.0);
    bad |= !(fabs(den) >= TW_DEN_MIN); // NaN too
    const TX xm = (TX)(tk_fused_madd(W, H, G) * tk_fused_rcp(den));
    // Back substitution over the half from the unknown next to the meeting, answers kept in W's place.
    TX x = role ? (TX)tk_back<TK_AR_RCP>(U, (double)xm, H) : xm, mx = len > 0 ? tk_abs(x) : TX(0);
    if (len > 0)
        tk_keep_x(wg[(len - 1) * T + t], x);
    tk_back_stages<TK_AR_RCP>(wg + t, (int64_t)T, [](int) { return 0; }, len - 2, x, mx);
    bad |= !tk_finite_x(mx);
    bad |= __shfl_xor_sync(FULL, (int)bad, TW_L) != 0; // the line is flagged if either half is
    __syncwarp(); // both lanes of a flagged line are done with its cells
    if (!bad && active) {
        // 16 neighbouring lines' cells a store, the top halves at one unknown, the bottom halves at another
        const I ob = role ? oo + (I)(n - 1) * so : oo, sob = role ? -so : so;
        for (int64_t k = 0; k < len; ++k)
            X[ob + (I)k * sob] = tk_kept_x<TX>(wg[k * T + t]);
    }
    __syncwarp(); // the good lines' answers are out of the cells, which the flagged lines' chains now take
    bool failed = false;
    if (bad && active && role == 0) {
        // fp_line's fallback (decision 022): MOHID's recurrence over the whole line, W/G in n cells of the
        // block's (16 lines of n fit the 32 halves of ceil(n/2)), the answers stored if every step succeeds
        auto row = [&](int64_t m, double *d, double *e, double *f) {
            const I o = io + (I)m * si;
            *d = m > 0 ? (double)__ldg(D + o) : 0.0;
            *e = (double)__ldg(E + o);
            *f = m < n - 1 ? (double)__ldg(F + o) : 0.0;
            return (double)__ldg(R + o);
        };
        auto put = [&](int64_t m, TX v) { X[oo + (I)m * so] = v; };
        int64_t at;
        failed = fp_careful_line<TX>(n, wg + (int64_t)j * n, row, put, &at) != TRIDI_FAIL_NONE;
        if (failed) {
            atomicMin(a.err, (unsigned long long)l);
            if (a.nfail)
                atomicAdd(a.nfail, 1ull);
        }
    }
    tk_finish(a, failed);
}

} // namespace

#endif
