// Fused sweeps whose lines have rows of their own (a kappa field, a velocity along the axis), laid out for
// whole runs of memory (docs/decisions/048):
//  - x lines: fo_block stages the rows through shared memory: each thread forms the rows of cells of its
//    own line a chunk count apart (neighbouring threads on neighbouring cells), then reads its chunk's rows
//    from shared memory, solves as fp_block does and leaves its answers the same way;
//  - y/z lines of a sweep with no explicit term (the Douglas step's later sweeps): chunk_rows_x0 forms a
//    chunk's rows from each coefficient cell read once (its faces shared by the cells on either side),
//    with ADI_COEF's arithmetic (float plans': float, decision 064) and no branch.
#ifndef TRIDI_ADI_OWN_ROWS_CUH
#define TRIDI_ADI_OWN_ROWS_CUH

#include "adi_internal.h"
#include "kernels/fast_lines.cuh"
#include "line_rows.cuh"

namespace {

// Staged rows: unknown m of a line at fo_pos(m), one word of padding every 8 so that the chunks of 8 that a
// warp's threads read fall on different banks (float and double).
__host__ __device__ inline int fo_pos(int m) { return m + (m >> 3); }
__host__ __device__ inline int fo_pitch(int64_t n) { return (int)(n + n / 8 + 1); }

// Shared memory of an fo_block: the line flags, then one area for the staged rows (four arrays of lines *
// fo_pitch), in turn the reduction's, the staged answers' and the fallback's.
template <class T>
inline size_t fo_smem_bytes(int64_t n, const fp_geom &g)
{
    const size_t rows = (size_t)4 * g.lines * fo_pitch(n) * sizeof(T);
    const size_t red = fp_join_bytes<T>(g), wg = (size_t)n * 2 * sizeof(double);
    size_t area = red > wg ? red : wg;
    area = area > rows ? area : rows;
    return fp_flag_bytes(g) + area;
}

// fp_block for x lines of rows of their own (FP_CONTIG: thread (t, q), chunk q of the block's line t).
// src.stage_rows(ra, rb, rc, rd, q, P) writes rows q, q + P, ... of the thread's own line at fo_pos(m) of
// the four arrays (the line's first a and last c zero); src.unstage_line(buf, q, P) stores the same cells'
// answers from buf, for a line that succeeded; src.careful as for fp_block. smem: fo_smem_bytes.
template <class T, int L, class Src>
__device__ __forceinline__ void fo_block(const fp_geom &geo, int n, int nl, unsigned char *smem, Src &src)
{
    const auto [t, q, s0, len, active, lflag, area] = fp_block_start<FP_CONTIG>(geo, n, nl, smem);
    const int pitch = fo_pitch(n), plane = geo.lines * pitch;
    T *ra = (T *)area + t * pitch, *rb = ra + plane, *rc = rb + plane, *rd = rc + plane;
    if (active)
        src.stage_rows(ra, rb, rc, rd, q, geo.P);
    __syncthreads();
    T av[L], bv[L], cv[L], dv[L];
FP_UNROLL
    for (int k = 0; k < L; ++k) {
        const bool in = active && k < len;
        const int p = fo_pos(s0 + (in ? k : 0));
        av[k] = in ? ra[p] : T(0);
        bv[k] = in ? rb[p] : T(1);
        cv[k] = in ? rc[p] : T(0);
        dv[k] = in ? rd[p] : T(0);
    }
    __syncthreads(); // the area is the reduction's next
    fp_row<T> ru, rv;
    bool ok = fp_chunk<T, L>(len, av, bv, cv, dv, ru, rv);
    ok &= fp_join<T, FP_CONTIG>(geo, t, q, area, ru, rv); // ends with a barrier: the area is free again
    ok &= fp_finish<T, L>(len, av, cv, dv, ru.d, rv.d);
    if (!ok && active)
        lflag[t] = 1;
    T *mine = (T *)area + t * pitch;
FP_UNROLL
    for (int k = 0; k < L; ++k)
        if (active && k < len)
            mine[fo_pos(s0 + k)] = dv[k];
    __syncthreads();
    if (active && !lflag[t])
        src.unstage_line(mine, q, geo.P);
    fp_fallback(t, q, nl, lflag, area, src);
}

// The rows s0 .. s0+len-1 of a y/z line whose stage has no explicit term and solves for increments
// (x0_only in adi_fused.cu): right-hand side x0, row of (I - tdt L_axis) as ADI_COEF forms it, each face's
// diffusion and velocity formed once from the cells on either side (ADI_COEF forms each face twice, the same
// operands in the same order: the same bits). A face ADI_COEF does not read (closed) is formed from the cell
// itself and weighted 0; cells past the chunk are read at the line's last cell, or across its Dirichlet face.
template <class T, int L>
__device__ __forceinline__ void chunk_rows_x0(const adi_stage *s, int axis, int64_t c0, int s0, int len,
                                              T (&av)[L], T (&bv)[L], T (&cv)[L], T (&dv)[L])
{
    // Arithmetic in the storage type T: double as ADI_COEF, float in float (decision 064, line_rows.cuh).
    const int64_t st = s->stride[axis], n = s->n[axis];
    const bool dlo = s->dirichlet_lo[axis], dhi = s->dirichlet_hi[axis];
    const bool has_k = s->kappa != nullptr, has_v = s->vel[axis] != nullptr, harmonic = s->harmonic;
    const T *x0 = (const T *)s->x0 + c0;
    const T *K = has_k ? (const T *)s->kappa + c0 : x0, *V = has_v ? (const T *)s->vel[axis] + c0 : x0;
    const T kc = (T)s->kappa_const, ih = (T)s->inv_h[axis], ih2 = (T)s->inv_h2[axis], tdt = (T)s->tdt;
    T kk[L + 2], vv[L + 2];
    T xv[L];
FP_UNROLL
    for (int j = 0; j < L + 2; ++j) {
        const int64_t m = s0 - 1 + j;
        const int64_t r = m < 0 ? (dlo ? -1 : 0) : m >= n ? (m == n && dhi ? n : n - 1) : m;
        kk[j] = has_k ? (T)__ldg(K + r * st) : T(0);
        vv[j] = has_v ? (T)__ldg(V + r * st) : T(0);
    }
FP_UNROLL
    for (int k = 0; k < L; ++k)
        xv[k] = __ldg(x0 + (int64_t)(s0 + (k < len ? k : 0)) * st);
    T fd[L + 1], fv[L + 1]; // face j: between cells s0 + j - 1 and s0 + j
FP_UNROLL
    for (int j = 0; j < L + 1; ++j)
        fv[j] = has_v ? T(0.5) * (vv[j] + vv[j + 1]) * ih : T(0);
    // faces two a reciprocal, j and j + 1 about cell s0 + j (decisions 076, 077); the last alone
    auto diffusion = [&](T mean) -> T {
        if constexpr (sizeof(T) == 8)
            return adi_face_diffusion(mean, ih2);
        else
            return adi_face_diffusion_f(mean, ih2);
    };
    auto mean_of = [&](T k1, T k2) -> T {
        if constexpr (sizeof(T) == 8)
            return adi_face_mean(k1, k2, harmonic);
        else
            return adi_face_mean_f(k1, k2, harmonic);
    };
FP_UNROLL
    for (int j = 0; j < L + 1; j += 2) {
        const bool pair = j + 1 < L + 1;
        T mm = kc, mp = kc;
        if (has_k && pair)
            adi_face_means(kk[j], kk[j + 1], kk[j + 2], harmonic, &mm, &mp);
        else if (has_k)
            mm = mean_of(kk[j], kk[j + 1]);
        fd[j] = diffusion(mm);
        if (pair)
            fd[j + 1] = diffusion(mp);
    }
FP_UNROLL
    for (int k = 0; k < L; ++k) {
        const int64_t m = s0 + k;
        const bool om = m > 0 || dlo, op = m < n - 1 || dhi, in = k < len;
        T cm, cp, c;
        adi_axis_coefs(om, op, fd[k], fv[k], fd[k + 1], fv[k + 1], &cm, &cp, &c);
        av[k] = in && m > 0 ? (T)(-tdt * cm) : T(0);
        bv[k] = in ? (T)(T(1) - tdt * c) : T(1);
        cv[k] = in && m < n - 1 ? (T)(-tdt * cp) : T(0);
        dv[k] = in ? xv[k] : T(0);
    }
}

} // namespace

#endif
