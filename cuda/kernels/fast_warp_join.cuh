// Step 4 of fast_core.cuh for lines of at least 32 chunks: one warp a line (docs/decisions/088). The block's
// join (fp_join) passes a barrier at each of its levels and steps; here each thread leaves its chunk's two
// rows in shared memory, the line's warp gives each lane a run of neighbouring chunks (fp_chunk_range over 32
// lanes), reduces the run's rows to two (fp_run_reduce, fast_core.cuh: fp_chunk's steps on rows of unit
// diagonal), joins the warp's 64 rows through shuffles as the block joins its rows (decision 110: five
// cyclic-reduction steps), solves the run's rows from its two unknowns (fp_run_finish) and leaves each row's
// unknown where its chunk's thread reads it: three barriers whatever the line's length.
#ifndef TRIDI_FAST_WARP_JOIN_CUH
#define TRIDI_FAST_WARP_JOIN_CUH

#include "fast_core.cuh"

namespace {

constexpr int FP_WJ_MIN_P = 32; // lines of fewer chunks keep the block's cyclic reduction
constexpr int FP_WJ_PITCH = 33; // a slot's 32 lanes and a word of padding: a lane's rows on its own banks

// The rule: every line of at least FP_WJ_MIN_P chunks (each lane then has a chunk at least).
__host__ __device__ inline int fp_wj_rule(int P) { return P >= FP_WJ_MIN_P; }

// Rows a lane holds at most (two a chunk), and the area a block's lines need: three values a row.
__host__ __device__ inline int fp_wj_slots(int P) { return 2 * ((P + 31) / 32); }
template <class T>
__host__ __device__ inline size_t fp_wj_bytes(const fp_geom &g)
{
    return (size_t)3 * fp_wj_slots(g.P) * FP_WJ_PITCH * g.lines * sizeof(T);
}

// Chunk q's lane and the slot of its first row (its last at slot + 1): the inverse of fp_chunk_range(P, 32).
__device__ __forceinline__ void fp_wj_place(int P, int q, int *lane, int *slot)
{
    const int lb = P / 32, rem = P % 32, big = rem * (lb + 1);
    const int l = q < big ? q / (lb + 1) : rem + (q - big) / lb;
    *lane = l;
    *slot = 2 * (q - (l * lb + (l < rem ? l : rem)));
}

template <class T>
__device__ __forceinline__ fp_row<T> fp_wj_from(const fp_row<T> &r, int src)
{
    return {__shfl_sync(0xffffffffu, r.a, src), __shfl_sync(0xffffffffu, r.c, src),
            __shfl_sync(0xffffffffu, r.d, src)};
}

// One line's join by one warp: A, then a plane apart C and D, hold the line's 2P rows (lower, upper,
// right-hand side; unit diagonal), row `slot` of lane l at slot * FP_WJ_PITCH + l. On return D holds every
// row's unknown, or NaN in every row when a pivot was not a normal number or a value not finite (the chunks'
// fp_finish flag it).
template <class T>
__device__ __forceinline__ void fp_wj_line(int P, int lane, T *A, int plane)
{
    T *C = A + plane, *D = C + plane;
    long long q0;
    int m;
    fp_chunk_range(P, 32, lane, &q0, &m);
    const int len = 2 * m;
    fp_row<T> ru, rv;
    bool ok = fp_run_reduce<T>(len, A + lane, C + lane, D + lane, FP_WJ_PITCH, ru, rv);
    // the warp's rows u_0, v_0, u_1, v_1, ...: each v row from the u rows beside it, the v rows by cyclic
    // reduction, each u from the v's beside it (fast_core.cuh, decision 110); rows past either end are zero
    const fp_row<T> zero = {T(0), T(0), T(0)};
    {
        fp_row<T> uhi = fp_wj_from(ru, lane + 1);
        if (lane == 31)
            uhi = zero;
        ok &= fp_reduce(rv, ru, uhi);
    }
#pragma unroll 1
    for (int s = 1; s < 32; s <<= 1) {
        fp_row<T> lo = fp_wj_from(rv, lane - s), hi = fp_wj_from(rv, lane + s);
        if (lane < s)
            lo = zero;
        if (lane + s > 31)
            hi = zero;
        ok &= fp_reduce(rv, lo, hi);
    }
    T v = rv.d, vprev = __shfl_sync(0xffffffffu, v, lane - 1);
    T u = fp_u_of(ru, lane > 0 ? vprev : T(0), v);
    if (!__all_sync(0xffffffffu, ok))
        u = v = T(NAN); // spreads to every row below
    fp_run_finish<T>(len, A + lane, C + lane, D + lane, FP_WJ_PITCH, u, v);
}

// Thread (t, q)'s two rows into its line's area (A, C and D a plane apart) at o = its slot's offset, and its
// chunk's two unknowns back out of D; false when they are not finite.
template <class T>
__device__ __forceinline__ void fp_wj_put(T *A, int plane, int o, const fp_row<T> &ru, const fp_row<T> &rv)
{
    T *C = A + plane, *D = C + plane;
    A[o] = ru.a, C[o] = ru.c, D[o] = ru.d;
    A[o + FP_WJ_PITCH] = rv.a, C[o + FP_WJ_PITCH] = rv.c, D[o + FP_WJ_PITCH] = rv.d;
}
template <class T>
__device__ __forceinline__ bool fp_wj_get(const T *A, int plane, int o, fp_row<T> &ru, fp_row<T> &rv)
{
    const T *D = A + 2 * plane;
    ru.d = D[o];
    rv.d = D[o + FP_WJ_PITCH];
    return fp_finite(ru.d) & fp_finite(rv.d);
}

// fp_join for lines of at least FP_WJ_MIN_P chunks: thread (t, q)'s rows ru, rv in, the chunk's first and
// last unknowns out in ru.d, rv.d; false when they are not finite (the line's warp met a bad pivot). `area`:
// fp_wj_bytes. Every thread of the block calls it; it ends with a barrier (the area is free again).
template <class T>
__device__ __forceinline__ bool fp_join_warp(const fp_geom &geo, int t, int q, unsigned char *area, fp_row<T> &ru,
                                             fp_row<T> &rv)
{
    const int plane = fp_wj_slots(geo.P) * FP_WJ_PITCH;
    T *base = (T *)area, *mine = base + 3 * plane * t;
    int lane, slot;
    fp_wj_place(geo.P, q, &lane, &slot);
    const int o = slot * FP_WJ_PITCH + lane;
    fp_wj_put(mine, plane, o, ru, rv);
    __syncthreads();
    for (int l = threadIdx.x / 32; l < geo.lines; l += blockDim.x / 32)
        fp_wj_line<T>(geo.P, threadIdx.x % 32, base + 3 * plane * l, plane);
    __syncthreads();
    const bool ok = fp_wj_get(mine, plane, o, ru, rv);
    __syncthreads();
    return ok;
}

} // namespace

#endif
