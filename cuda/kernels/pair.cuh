// tp_line: MOHID's arithmetic where every line of the call is on the GPU at once (a model's small grids),
// two threads a line, strided (y/z) lines. A warp holds 16 lines; lane j runs line j's W chain (pivot e + d*W,
// W = -f/pivot), lane j + 16 its G chain (G = (r - d*G)/pivot, the pivot passed by a shuffle, one unknown
// behind): one division a lane an unknown, twice tk_line's warps on SMs it leaves one or two. The operations and their order are tk_line's,
// so are the bits: r - d*G is formed as r + (-d)*G (IEEE: the same value and sign), and the first unknown is
// the same step with W, G and lower 0. W/G stay in shared memory; both lanes of a line run its back
// substitution (the same bits), the answers kept there until the line is known good. Decision 069;
// instantiated and launched by cuda/planner.cu.
#ifndef TRIDI_CUDA_KERNELS_PAIR_CUH
#define TRIDI_CUDA_KERNELS_PAIR_CUH

#include <cstdint>

#include "common.cuh"

namespace {

constexpr int TP_L = TK_T / 2; // lines a block (one warp, two lanes a line)

// Shared memory of a block: W and G of each of its lines per unknown (32 doubles an unknown).
__host__ __device__ inline size_t tp_smem_bytes(int64_t n) { return (size_t)n * TK_T * sizeof(double); }

// The second parameter (the stage count of the other kernels) is unused.
template <class TL, class TD, class TX, class I>
__global__ void __launch_bounds__(TK_T) tp_line(const tk_args a, const int)
{
    constexpr int K = TK_K, T = TK_T;
    constexpr unsigned FULL = 0xffffffffu;
    extern __shared__ __align__(16) unsigned char tk_dyn[];
    // unknown m of line j: W at wg[m * T + j], G at wg[m * T + TP_L + j]; later the answer in W's place
    double *wg = (double *)tk_dyn;
    const int t = (int)threadIdx.x, j = t % TP_L, role = t / TP_L; // role 0: W's chain, 1: G's
    const int64_t li0 = (int64_t)blockIdx.x * TP_L, n = a.n;
    const int nl = (int)min((int64_t)TP_L, a.l_count - li0);
    // lanes past the last line run the block's first line (valid addresses, full-warp shuffles), write nothing
    const bool active = j < nl;
    const int64_t l = a.l_begin + li0 + (active ? j : 0), l1 = l % a.n1, l2 = l / a.n1;
    const I io = (I)(a.in.off + l1 * a.in.s1 + l2 * a.in.s2), oo = (I)(a.out.off + l1 * a.out.s1 + l2 * a.out.s2);
    const I si = (I)a.in.sm, so = (I)a.out.sm;
    const TD *E = (const TD *)a.E;
    const TL *D = (const TL *)a.D;
    const TL *V = role ? (const TL *)a.R : (const TL *)a.F; // W's lane reads upper, G's lane rhs
    TX *X = (TX *)a.X;

    // A stage of K unknowns in registers, loaded one stage ahead (tk_line's y/z order): lower (0 at the
    // first unknown), upper or rhs (upper 0 at the last), diag (W's lane only).
    struct stage {
        TL d[K], v[K];
        TD e[K];
    };
    auto load = [&](stage &b, int64_t c0) {
        const I o = io + (I)c0 * si;
        if (c0 > 0 && c0 + K < n) {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                b.d[k] = __ldg(D + (o + k * si));
                b.v[k] = __ldg(V + (o + k * si));
                b.e[k] = role ? TD(0) : __ldg(E + (o + k * si));
            }
        } else {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const int64_t m = c0 + k;
                b.d[k] = m > 0 && m < n ? __ldg(D + (o + k * si)) : TL(0);
                b.v[k] = (role ? m < n : m < n - 1) ? __ldg(V + (o + k * si)) : TL(0);
                b.e[k] = !role && m < n ? __ldg(E + (o + k * si)) : TD(0);
            }
        }
    };
    bool bad = false;
    // this lane's W or G of the unknown before; G's lane runs one unknown behind W's, so that the pivot it
    // divides by arrives (dl) while W's lane divides, not before: its r and d (cv, cd) kept for that
    double prev = 0.0, dl = 1.0, cv = 0.0, cd = 0.0;
    // One stage: widened first (which waits on its loads), then the next stage asked for, then the chain:
    // s = A + B*prev is the pivot e + d*W (W's lane) or r + (-d)*G (G's lane); each lane divides once.
    auto sweep = [&](const stage &b, int64_t c0, auto &&after_widen) {
        double dd[K], vv[K], ee[K];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            dd[k] = (double)b.d[k], vv[k] = (double)b.v[k], ee[k] = (double)b.e[k];
            if (sizeof(TL) == 8)
                bad |= !tk_finite(dd[k]); // tk_widen's check (the same verdict)
        }
        after_widen();
        auto unknown = [&](int k) {
            const int64_t m = c0 + k;
            const double A = role ? cv : ee[k], B = role ? -cd : dd[k];
            const double s = __dadd_rn(A, __dmul_rn(B, prev));
            const double q = __ddiv_rn(role ? s : -vv[k], role ? dl : s);
            if (!role || m > 0) {
                bad |= !(tk_finite(role ? dl : s) && tk_finite(q));
                wg[(m - role) * T + t] = q;
            }
            dl = __shfl_xor_sync(FULL, s, TP_L);
            cv = vv[k], cd = dd[k];
            prev = q;
        };
        if (c0 + K <= n) { // a whole stage: no tests
#pragma unroll
            for (int k = 0; k < K; ++k)
                unknown(k);
            return;
        }
#pragma unroll
        for (int k = 0; k < K; ++k)
            if (c0 + k < n)
                unknown(k);
    };
    {
        const int64_t nch = (n + K - 1) / K;
        stage SA, SB; // two buffers taking turns
        load(SA, 0);
        for (int64_t c = 0; c < nch; c += 2) {
            sweep(SA, c * K, [&] {
                if (c + 1 < nch)
                    load(SB, (c + 1) * K);
            });
            if (c + 1 >= nch)
                break;
            sweep(SB, (c + 1) * K, [&] {
                if (c + 2 < nch)
                    load(SA, (c + 2) * K);
            });
        }
    }
    { // G's lane: the line's last G (W's lane divides 0 by 1)
        const double s = __dadd_rn(role ? cv : 0.0, __dmul_rn(role ? -cd : 0.0, prev));
        const double q = __ddiv_rn(role ? s : 0.0, role ? dl : 1.0);
        if (role) {
            bad |= !(tk_finite(dl) && tk_finite(q));
            wg[(n - 1) * T + t] = q;
        }
    }
    __syncwarp(); // every W and G of the line is visible to both lanes

    // Back substitution by both lanes of a line (the same bits), K unknowns at a time from the end: read,
    // solved, then (once both lanes have read them) W's lane keeps the answers in W's place. Lines that
    // failed run it too (no divergence around the warp barriers) and are not written.
    TX x = (TX)wg[(n - 1) * T + TP_L + j], mx = tk_abs(x);
    if (role == 0)
        *reinterpret_cast<TX *>(&wg[(n - 1) * T + j]) = x;
    for (int64_t top = n - 2; top >= 0; top -= K) {
        double wv[K], gv[K];
        TX xs[K];
#pragma unroll
        for (int k = 0; k < K; ++k)
            if (top - k >= 0) {
                wv[k] = wg[(top - k) * T + j];
                gv[k] = wg[(top - k) * T + TP_L + j];
            }
#pragma unroll
        for (int k = 0; k < K; ++k)
            if (top - k >= 0) {
                x = (TX)tk_back<TK_AR_MOHID>(wv[k], (double)x, gv[k]);
                mx = tk_max(mx, tk_abs(x));
                xs[k] = x;
            }
        __syncwarp();
        if (role == 0) {
#pragma unroll
            for (int k = 0; k < K; ++k)
                if (top - k >= 0)
                    *reinterpret_cast<TX *>(&wg[(top - k) * T + j]) = xs[k];
        }
    }
    bad |= __shfl_xor_sync(FULL, (int)bad, TP_L) != 0; // the line fails if either chain did
    bad |= !tk_finite_x(mx);
    if (role == 0 && active && bad) {
        atomicMin(a.err, (unsigned long long)l);
        if (a.nfail)
            atomicAdd(a.nfail, 1ull);
    }
    const unsigned ok = __ballot_sync(FULL, active && !bad && role == 0);
    __syncwarp(); // the kept answers are visible
    if ((ok >> j) & 1u) {
        // 16 neighbouring lines' cells a store, the two lanes of a line taking turns
        for (int64_t m = role; m < n; m += 2)
            X[oo + (I)m * so] = *reinterpret_cast<const TX *>(&wg[m * T + j]);
    }
    tk_finish(a, role == 0 && active && bad);
}

} // namespace

#endif
