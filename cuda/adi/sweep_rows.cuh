// The source of one thread's line of a fused ADI sweep (cuda/adi/adi_fused.cu): its rows, right-hand sides
// and answers from and to the stage's arrays, for the FAST partitioned solves of fast_lines.cuh (fp_block),
// fast_shared_rows.cuh (fs_block) and own_rows.cuh (fo_block), with the cell arithmetic shared with the
// CPU (src/adi_cell.inc, ADI_COEF).
#ifndef TRIDI_ADI_SWEEP_ROWS_CUH
#define TRIDI_ADI_SWEEP_ROWS_CUH

#include "adi_internal.h"
#include "kernels/fast_lines.cuh"
#include "kernels/fast_shared_rows.cuh"
#include "line_neighbours.cuh"
#include "line_rhs.cuh"
#include "line_rows.cuh"
#include "own_rows.cuh"

#define ADI_QUAL static __device__ __forceinline__
#define ADI_UNROLL _Pragma("unroll")
#define ADI_LOAD(p) __ldg(p)
#include "adi_cell_types.inc"
#undef ADI_QUAL
#undef ADI_UNROLL
#undef ADI_LOAD

namespace {

template <typename T, int COEFS>
__device__ __forceinline__ double coef(const adi_stage *s, int64_t i, int64_t j, int64_t k, double *lo, double *di,
                                       double *up)
{
    if (sizeof(T) == 8)
        return adi_coef_f64(s, i, j, k, lo, di, up, COEFS);
    return adi_coef_f32(s, i, j, k, lo, di, up, COEFS);
}

// The rows of one thread's line of a sweep along AXIS, for fp_block and fs_block: row m as the staged path
// stores it (in T); the line's first lower and last upper coefficients fall outside the line and are set
// to 0. COEFS: the coefficient arrays the operator has (ADI_COEFS_*, a constant, so that the heat
// operator's rows compile to the constant-coefficient arithmetic alone).
// LANES: RHS_ONE's neighbours across lines from the neighbouring lanes (rhs_one_from_lanes, decision 068).
// XI: the offsets' type of the staged x rows (stage_rows; int where they fit, decision 078).
// PX: x lines of the heat operator in PX chunks of L (0: any), whose stencil and answers lie at offsets the
// kernel knows (stage_fixed, decision 082).
template <typename T, int L, int AXIS, int COEFS, bool EXPL = true, bool LANES = false, typename XI = int64_t,
          int PX = 0>
struct sweep_rows {
    static_assert(PX == 0 || (AXIS == 0 && COEFS == 0), "fixed offsets: x lines without coefficient arrays");
    // fs_block: x lines have their right-hand sides and answers staged by the whole block.
    static constexpr bool STAGED = AXIS == 0;
    // fs_block: every thread of the block calls rhs (lanes exchange values; an inactive one's line is the block's)
    static constexpr bool RHS_ALL_LANES = LANES;
    // fs_block: lines of PX threads (x lines, PX chunks), each joined behind barriers of its own (082)
    static constexpr int LINE_THREADS = PX;
    static constexpr int A1 = AXIS == 0 ? 1 : 0, A2 = AXIS == 2 ? 1 : 2; // the other axes, lower first
    const adi_stage *s;
    const adi_fused *fz;
    int64_t line, l1, l2, c0, n;
    // An earlier sweep's failure held in the status word (decision 026): the sweep then writes nothing. Read
    // as the block starts and tested only before the first write, so the block's loads need not wait on it
    // (decision 101).
    bool halted;

    // Line p's coordinates along the other axes (ADI_KEY's numbering) and the offset of its first unknown.
    // A 32-bit division where the numbers fit (a 64-bit one is a long routine: decision 034). g > 1: slot p
    // of a row of lines along A1 (neighbouring cells) takes the line row_shift's rotation of the row
    // puts there (x0's alignment, y's without x0), so that a warp's runs of g lines read whole sectors (081).
    __device__ static int64_t line_at(const adi_stage *s, int64_t p, int64_t *p1, int64_t *p2, int g = 1)
    {
        const int64_t n1 = s->n[A1];
        if (p <= UINT32_MAX && n1 <= UINT32_MAX) {
            const uint32_t q = (uint32_t)p / (uint32_t)n1;
            *p2 = q;
            *p1 = (uint32_t)p - q * (uint32_t)n1;
        } else {
            *p1 = p % n1;
            *p2 = p / n1;
        }
        if (g > 1 && s->stride[A1] == 1) {
            const T *row = (const T *)(s->x0 ? s->x0 : s->y) + offset_of(s, 0, *p2);
            *p1 = row_rotate(*p1, row_shift(row, sizeof(T), g, n1), n1);
        }
        return offset_of(s, *p1, *p2);
    }
    __device__ static int64_t offset_of(const adi_stage *s, int64_t p1, int64_t p2)
    {
        return s->origin + p1 * s->stride[A1] + p2 * s->stride[A2];
    }
    // Row m of line (p1, p2) in double, each value rounded to T first; returns the right-hand side.
    __device__ double row_of(int64_t p1, int64_t p2, int64_t m, double *d, double *e, double *f) const
    {
        int64_t idx[3];
        idx[AXIS] = m;
        idx[A1] = p1;
        idx[A2] = p2;
        double lo = 0.0, di = 1.0, up = 0.0;
        const double r = (double)(T)coef<T, COEFS>(s, idx[0], idx[1], idx[2], &lo, &di, &up);
        *d = m > 0 ? (double)(T)lo : 0.0;
        *e = (double)(T)di;
        *f = m < n - 1 ? (double)(T)up : 0.0;
        return r;
    }
    __device__ double row(int64_t m, double *d, double *e, double *f) const { return row_of(l1, l2, m, d, e, f); }
    __device__ void rows(int s0, int len, T (&av)[L], T (&bv)[L], T (&cv)[L], T (&dv)[L]) const
    {
        if constexpr (COEFS != 0 && AXIS != 0 && !EXPL) {
            // a y/z sweep without explicit terms: each coefficient cell read once (decision 048)
            chunk_rows_x0<T, L>(s, AXIS, c0, s0, len, av, bv, cv, dv);
        } else if constexpr (COEFS != 0 && AXIS == 0) {
            // x rows with coefficient arrays come from line_rows, whose loads batch (decision 035): every k
            // forms a row of the line (the last one past the chunk's end), then drops it. y/z rows keep
            // ADI_COEF, which skips the axes a sweep without explicit terms does not read (line_rows reads
            // them all, and spills, in those sweeps).
            const line_rows<T, AXIS> lr(s, l1, l2);
FP_UNROLL
            for (int k = 0; k < L; ++k) {
                const int64_t m = s0 + k < n ? s0 + k : n - 1;
                double d, e, f;
                const double r = lr(m, &d, &e, &f);
                const bool in = k < len;
                av[k] = in && m > 0 ? (T)d : T(0);
                bv[k] = in ? (T)e : T(1);
                cv[k] = in && m < n - 1 ? (T)f : T(0);
                dv[k] = in ? (T)r : T(0);
            }
        } else {
FP_UNROLL
            for (int k = 0; k < L; ++k) {
                double d = 0.0, e = 1.0, f = 0.0, r = 0.0;
                if (k < len)
                    r = row(s0 + k, &d, &e, &f);
                av[k] = (T)d;
                bv[k] = (T)e;
                cv[k] = (T)f;
                dv[k] = (T)r;
            }
        }
    }
    // fo_block (x lines of rows of their own, decision 048): rows q, q + P, ... of the thread's line into
    // the staged arrays, neighbouring threads on neighbouring cells; every cell's loads are issued (those
    // past the line's end at its last cell), the rows past the end not stored. x_rows holds no per-line
    // copies of the stage, so that forming a row does not spill (decision 058). Float rows in float (064);
    // one cell an iteration, its every load asked for before its arithmetic (078, 111).
    // The operator's interior lines take rows without the choices of the box's faces (080).
    __device__ void stage_rows(T *ra, T *rb, T *rc, T *rd, int q, int P) const
    {
        const typename x_rows_of<T, XI>::type lr(s, fz, l1, l2);
        if (lr.full())
            stage_rows_of<true>(lr, ra, rb, rc, rd, q, P);
        else
            stage_rows_of<false>(lr, ra, rb, rc, rd, q, P);
    }
    template <bool FULL, typename XR>
    __device__ __forceinline__ void stage_rows_of(const XR &lr, T *ra, T *rb, T *rc, T *rd, int q, int P) const
    {
        using R = typename XR::real;
#pragma unroll 1
        for (int j = 0; j < L; ++j) {
            const int m0 = q + j * P, m = m0 < n ? m0 : (int)n - 1;
            R d, e, f;
            const R r = lr.template operator()<FULL>(m, &d, &e, &f);
            if (m0 < n) {
                const int p = fo_pos(m);
                ra[p] = m > 0 ? (T)d : T(0);
                rb[p] = (T)e;
                rc[p] = m < n - 1 ? (T)f : T(0);
                rd[p] = (T)r;
            }
        }
    }
    // fo_block: the answers of rows q, q + P, ... of the thread's line from buf (its line's, fo_pos-indexed).
    __device__ void unstage_line(const T *buf, int q, int P) const
    {
        if (halted)
            return;
        T *o = (T *)s->out + c0;
        const int64_t st = s->stride[AXIS];
#pragma unroll 4
        for (int j = 0; j < L; ++j) {
            const int m = q + j * P;
            if (m < n)
                put(o + m * st, buf[fo_pos(m)]);
        }
    }
    // fs_block: the rows every line of the sweep has (line 0's), and this line's right-hand sides alone.
    __device__ void shared_row(int64_t m, T *a, T *b, T *c) const
    {
        double d, e, f;
        row_of(0, 0, m, &d, &e, &f);
        *a = (T)d;
        *b = (T)e;
        *c = (T)f;
    }
    // !EXPL: the stage has no explicit term and no Dirichlet term to move (x0_only), its right-hand side is x0.
    __device__ void rhs(int s0, int len, T (&dv)[L]) const
    {
        const T *x0 = (const T *)s->x0 + c0;
        const T *out = (const T *)s->out + c0;
        const int64_t st = s->stride[AXIS];
        if constexpr (EXPL && COEFS == 0) {
            // Without coefficient arrays the explicit terms come from line_rhs, whose loads batch
            // (decision 034), in its one form launch_axis sends here (Peaceman-Rachford's y sweep); the
            // line's ends made again after, outside the unrolled chunk: a copy of operator() and of each form
            // in every cell of the chunk bloated the kernel's code and slowed it (decision 067).
            const line_rhs<T, AXIS> cr(s, l1, l2);
            if constexpr (LANES) {
                rhs_one_from_lanes<T, AXIS, L>(cr, s0, len, dv);
            } else {
FP_UNROLL
                for (int k = 0; k < L; ++k)
                    dv[k] = k < len ? cr.template interior<RHS_ONE>(s0 + k) : T(0);
            }
            if (s0 == 0)
                dv[0] = (T)cr(0);
            if (s0 + len == n) {
                const T v = (T)cr(n - 1);
FP_UNROLL
                for (int k = 0; k < L; ++k)
                    dv[k] = k == len - 1 ? v : dv[k];
            }
        } else {
FP_UNROLL
            for (int k = 0; k < L; ++k) {
                double d, e, f;
                if (EXPL)
                    dv[k] = k < len ? (T)row(s0 + k, &d, &e, &f) : T(0);
                else
                    dv[k] = k < len ? __ldg(x0 + (s0 + k) * st) : T(0);
            }
        }
        // The values store() will add to, asked of L2 now: their loads then wait on L2, not on DRAM, after
        // the reduction (the Douglas step's last sweep: decision 032).
        if (fz->accumulate) {
FP_UNROLL
            for (int k = 0; k < L; ++k)
                if (k < len)
                    asm volatile("prefetch.global.L2 [%0];" ::"l"(__cvta_generic_to_global(out + (s0 + k) * st)));
        }
    }
    // Cells first, first + step, ... of a line into row (the line's, fs_pos-indexed). A thread has at most L
    // of them (step >= P: P chunks of at most L); it forms L, those past the line's end at its last cell and
    // not stored, so that no test separates a batch's cells and their loads are in flight together.
    template <int FORM>
    __device__ void stage_cells(const line_rhs<T, AXIS> &cr, T *row, int first, int step) const
    {
        if constexpr (PX > 0) {
            if (fixed(step)) {
                stage_fixed<FORM>(cr, row, first);
                return;
            }
        }
#pragma unroll 4
        for (int j = 0; j < L; ++j) {
            const int m0 = first + j * step, m = m0 < n ? m0 : (int)n - 1;
            const T v = (T)cr.template interior<FORM>(m);
            if (m0 < n)
                row[fs_pos<L>(m)] = v;
        }
    }
    // The line's right-hand sides, cells first, first + step, ..., into row.
    __device__ void stage_line(T *row, int first, int step) const
    {
        // Several cells' loads in flight per thread: the stencil's loads wait on L2. Without coefficient
        // arrays line_rhs gives ADI_COEF's values with each cell's loads in one block (decision 034).
        if constexpr (COEFS == 0) {
            const line_rhs<T, AXIS> cr(s, l1, l2);
            if (cr.form == RHS_ONE)
                stage_cells<RHS_ONE>(cr, row, first, step);
            else if (cr.form == RHS_X0)
                stage_cells<RHS_X0>(cr, row, first, step);
            else
                stage_cells<RHS_ALL>(cr, row, first, step);
            // the line's ends made again by the threads that wrote them
            if (first == 0)
                row[fs_pos<L>(0)] = (T)cr(0);
            if (first == ((int)n - 1) % step) // n <= FP_N_MAX
                row[fs_pos<L>(n - 1)] = (T)cr(n - 1);
        } else {
#pragma unroll 4
            for (int m = first; m < n; m += step) {
                double d, e, f;
                row[fs_pos<L>(m)] = (T)row_of(l1, l2, m, &d, &e, &f);
            }
        }
    }
    // Whether the line is PX chunks of L: thread q's cells are q + j PX (j < L), and fs_pos(q + j PX) is
    // fs_pos(q) + fixed_pos(j), as q < PX and one of PX, L divides the other.
    __device__ bool fixed(int P) const { return PX > 0 && P == PX && n == (int64_t)PX * L; }
    __device__ static constexpr int fixed_pos(int j) { return j * PX + j * PX / L; }
    // stage_cells for fixed() lines: every cell's loads at constant offsets from the thread's first cell's,
    // the tests of the line's ends in its first and last cell alone (082).
    template <int FORM>
    __device__ __forceinline__ void stage_fixed(const line_rhs<T, AXIS> &cr, T *row, int q) const
    {
        T *mine = row + q + q / L;
#pragma unroll
        for (int j = 0; j < L; ++j) {
            const int64_t m = q + (int64_t)j * PX;
            mine[fixed_pos(j)] = j == 0 || j == L - 1 ? (T)cr.template interior<FORM>(m)
                                                      : (T)cr.template interior<FORM, false>(m);
        }
    }
    // STAGED: the block's right-hand sides into buf (line t's at t * fs_pitch<T>(n)); thread (t, q) of fs_block.
    // Each line by its own P threads, thread q unknowns q, q + P, ..., with one line_rhs a thread (decisions
    // 071, 073).
    __device__ void stage(T *buf, int t, int q, int P, bool active) const
    {
        if (active)
            stage_line(buf + t * fs_pitch<T>(n), q, P);
    }
    // STAGED: the block's answers from buf, the lines flagged in lflag left to careful; thread q stores
    // unknowns q, q + P, ... of its line, as stage wrote them.
    __device__ void unstage(const T *buf, const int *lflag, int t, int q, int P, bool active) const
    {
        if (halted || !active || lflag[t])
            return;
        const T *row = buf + t * fs_pitch<T>(n);
        T *o = (T *)s->out + c0; // x lines: stride[0] is 1
        if constexpr (PX > 0) {
            if (fixed(P)) { // as stage_fixed: constant offsets
                const T *mine = row + q + q / L;
                if (fz->accumulate) {
#pragma unroll
                    for (int j = 0; j < L; ++j)
                        o[q + j * PX] += mine[fixed_pos(j)];
                } else {
#pragma unroll
                    for (int j = 0; j < L; ++j)
                        o[q + j * PX] = mine[fixed_pos(j)];
                }
                return;
            }
        }
#pragma unroll 4
        for (int m = q; m < n; m += P)
            put(o + m, row[fs_pos<L>(m)]);
    }
    // An answer into out, or added to it (fz->accumulate: out holds the field, the answer its increment).
    // A float sum of two floats is the double sum rounded to float (53 >= 2 * 24 + 2 bits), without the
    // conversions.
    __device__ void put(T *o, T x) const { *o = fz->accumulate ? *o + x : x; }
    __device__ void store(int s0, int len, const T (&xv)[L]) const
    {
        if (halted)
            return;
        T *out = (T *)s->out + c0;
        const int64_t st = s->stride[AXIS];
        if (fz->accumulate) {
            // Every value added to is loaded before the first store, so that the loads wait on L2 together,
            // not one after another behind stores the compiler cannot tell apart from them (decision 034).
            T old[L];
FP_UNROLL
            for (int k = 0; k < L; ++k)
                old[k] = k < len ? out[(s0 + k) * st] : T(0);
FP_UNROLL
            for (int k = 0; k < L; ++k)
                if (k < len)
                    out[(s0 + k) * st] = old[k] + xv[k]; // as put()
            return;
        }
FP_UNROLL
        for (int k = 0; k < L; ++k)
            if (k < len)
                out[(s0 + k) * st] = xv[k];
    }
    __device__ void careful(double2 *wg) const
    {
        if (halted)
            return;
        T *out = (T *)s->out + c0;
        const int64_t st = s->stride[AXIS];
        auto put = [&](int64_t m, T x) { this->put(out + m * st, x); };
        auto get = [&](int64_t m, double *d, double *e, double *f) { return row(m, d, e, f); };
        int64_t at = 0;
        const int kind = fp_careful_line<T>(n, wg, get, put, &at);
        if (kind != TRIDI_FAIL_NONE)
            atomicMin(fz->status, ADI_KEY(AXIS, line, at, kind));
    }
};

} // namespace

#endif
