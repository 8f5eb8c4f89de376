// The right-hand side of an ADI stage along one line for operators without coefficient arrays (the heat
// operator: a constant kappa, no velocity), for the fused sweeps (cuda/adi/adi_fused.cu, decision 034).
// A cell's value is ADI_COEF's (src/adi_cell.inc): the same terms in the same order, each product fused or
// rounded as written here (__fma_rn, __dmul_rn), where nvcc may have fused ADI_COEF's other way; a value
// may differ from the staged path's in its last bit, as both may from the CPU's. What differs is where the
// choices are made: each face's (halo or neighbour, open or closed, explicit weight 0 or not) once per
// line for the line's other axes, and by selects for its own axis, so that a cell's loads are one basic
// block and a thread has several cells' loads in flight; ADI_COEF's branches put each load in a block of
// its own and left the x sweep waiting on each in turn. interior() drops the tests of the line's ends.
#ifndef TRIDI_ADI_LINE_RHS_CUH
#define TRIDI_ADI_LINE_RHS_CUH

#include "adi_internal.h"

// A face that ADI_COEF skips (closed, or an axis whose explicit weight is 0) is read here at the cell
// itself with coefficients 0: it adds an exact 0 while the field is finite. Where it is not, the line's
// values stop being finite and the line goes to the sweep's careful solve, which forms its rows with
// ADI_COEF itself.
//
// Float lines form their interior cells in float (docs/decisions/052): each face's weight times the
// difference of the neighbour and the cell, c0 = -(cm + cp) for this operator; within the bound docs/adi.md
// states, not ADI_COEF's bits.

namespace {

enum { RHS_ALL = 0, RHS_X0 = 1, RHS_ONE = 2 };

// line_rhs's form of a stage along axis: RHS_ALL without x0 (Douglas's first sweep), RHS_ONE where x0 is y
// itself, nothing is explicit along the axis and at most one other axis is (Peaceman-Rachford's), else RHS_X0.
__host__ __device__ inline int rhs_form(const adi_stage *s, int axis)
{
    if (!s->x0)
        return RHS_ALL;
    int others = 0;
    for (int b = 0; b < s->naxes && b < 3; ++b)
        others += b != axis && s->alpha[b] != 0.0;
    const bool own = axis < s->naxes && s->alpha[axis] != 0.0;
    return s->x0 == s->y && !own && others <= 1 ? RHS_ONE : RHS_X0;
}

template <typename T, int AXIS>
struct line_rhs {
    const T *y, *x0;   // the line's first cell in the stage's y and x0 (x0: y's if the stage has none)
    const T *lo_end, *hi_end; // the line's halo cells along AXIS where Dirichlet, else its end cells in y
    const T *nb[3][2]; // the other axes' neighbour lines (minus, plus): y's, the field's halo, or y itself
    double c0[3], cm[3], cp[3], alpha[3]; // per other axis; 0 where ADI_COEF skips the term
    double d, alpha_ax, tdt;              // the line's own axis
    double c0_in, cm_in, cp_in;           // its coefficients inside the line (0 if alpha_ax is)
    float fw[3][2];                        // float lines: alpha cm, alpha cp per axis (own: the interior's)
    const T *o_nb[2];                      // RHS_ONE: the one other axis's neighbour lines, its weights
    double o_alpha, o_c0, o_cm, o_cp;
    float o_fw[2];
    int64_t st, n;
    int form; // interior()'s form for this stage: RHS_ALL, RHS_X0 or RHS_ONE
    bool has_x0, dlo, dhi, dirichlet_terms;

    // The line at coordinates (p1, p2) along the other axes, lower axis first (ADI_KEY's numbering).
    __device__ line_rhs(const adi_stage *s, int64_t p1, int64_t p2)
    {
        constexpr int A1 = AXIS == 0 ? 1 : 0, A2 = AXIS == 2 ? 1 : 2;
        const int64_t c = s->origin + p1 * s->stride[A1] + p2 * s->stride[A2];
        const T *F = (const T *)s->field;
        y = (const T *)s->y + c;
        has_x0 = s->x0 != nullptr;
        x0 = has_x0 ? (const T *)s->x0 + c : y;
        // x lines: stride[0] is 1, a constant to the compiler (decisions 071, 073)
        st = AXIS == 0 ? 1 : s->stride[AXIS];
        n = s->n[AXIS];
        dlo = s->dirichlet_lo[AXIS];
        dhi = s->dirichlet_hi[AXIS];
        lo_end = dlo ? F + c - st : y;
        hi_end = dhi ? F + c + n * st : y + (n - 1) * st;
        d = AXIS < s->naxes ? s->kappa_const * s->inv_h2[AXIS] : 0.0;
        alpha_ax = AXIS < s->naxes ? s->alpha[AXIS] : 0.0;
        tdt = s->tdt;
        dirichlet_terms = !s->increment;
        const bool ex = alpha_ax != 0.0;
        cm_in = ex ? d + 0.0 : 0.0;
        cp_in = ex ? d - 0.0 : 0.0;
        c0_in = ex ? (0.0 + (-d + 0.0)) + (-d - 0.0) : 0.0;
#pragma unroll
        for (int b = 0; b < 3; ++b) {
            nb[b][0] = nb[b][1] = y;
            c0[b] = cm[b] = cp[b] = alpha[b] = 0.0;
            if (b == AXIS || b >= s->naxes || s->alpha[b] == 0.0)
                continue;
            const int64_t pb = b == A1 ? p1 : p2, sb = s->stride[b];
            const bool first = pb == 0, last = pb == s->n[b] - 1;
            const bool open_m = !first || s->dirichlet_lo[b], open_p = !last || s->dirichlet_hi[b];
            const double db = s->kappa_const * s->inv_h2[b];
            // ADI_COEF's sums with a velocity of 0
            if (open_m) {
                cm[b] = db + 0.0;
                c0[b] += -db + 0.0;
                nb[b][0] = (first ? F + c : y) - sb;
            }
            if (open_p) {
                cp[b] = db - 0.0;
                c0[b] += -db - 0.0;
                nb[b][1] = (last ? F + c : y) + sb;
            }
            alpha[b] = s->alpha[b];
        }
        o_nb[0] = o_nb[1] = y;
        o_alpha = o_c0 = o_cm = o_cp = 0.0;
#pragma unroll
        for (int b = 0; b < 3; ++b) {
            fw[b][0] = (float)(b == AXIS ? alpha_ax * cm_in : alpha[b] * cm[b]);
            fw[b][1] = (float)(b == AXIS ? alpha_ax * cp_in : alpha[b] * cp[b]);
            if (b != AXIS && alpha[b] != 0.0) {
                o_nb[0] = nb[b][0];
                o_nb[1] = nb[b][1];
                o_alpha = alpha[b];
                o_c0 = c0[b];
                o_cm = cm[b];
                o_cp = cp[b];
            }
        }
        o_fw[0] = (float)(o_alpha * o_cm);
        o_fw[1] = (float)(o_alpha * o_cp);
        form = rhs_form(s, AXIS);
    }

    // One axis's explicit term, alpha (c0 y + cm vm + cp vp), added to acc as ADI_COEF adds it.
    __device__ __forceinline__ static double term(double a, double c0v, double cmv, double cpv, double yc, double vm,
                                                  double vp, double acc)
    {
        double lu = __dmul_rn(c0v, yc);
        lu = __fma_rn(cmv, vm, lu);
        lu = __fma_rn(cpv, vp, lu);
        return __fma_rn(a, lu, acc);
    }
    // The explicit term of another axis b of the cell at offset off, added to acc.
    __device__ __forceinline__ double other_axis(int b, int64_t off, double yc, double acc) const
    {
        return term(alpha[b], c0[b], cm[b], cp[b], yc, (double)__ldg(nb[b][0] + off), (double)__ldg(nb[b][1] + off),
                    acc);
    }

    // The other axes' terms from axis b0 up to (not including) b1, added to acc in ADI_COEF's order.
    __device__ __forceinline__ double others(int b0, int b1, int64_t off, double yc, double acc) const
    {
        for (int b = b0; b < b1; ++b)
            acc = other_axis(b, off, yc, acc);
        return acc;
    }

    // The right-hand side of unknown m (0 <= m < n), unrounded (the line's two ends: a cold path).
    __device__ double operator()(int64_t m) const
    {
        const int64_t off = m * st;
        const double yc = (double)__ldg(y + off);
        double acc = others(0, AXIS, off, yc, has_x0 ? (double)__ldg(x0 + off) : 0.0);
        const bool first = m == 0, last = m == n - 1;
        const bool open_m = !first || dlo, open_p = !last || dhi;
        const double vm = (double)__ldg(first ? lo_end : y + off - st);
        const double vp = (double)__ldg(last ? hi_end : y + off + st);
        // the explicit term (none if the axis's weight is 0)
        const bool ex = alpha_ax != 0.0;
        const double cmv = ex && open_m ? d + 0.0 : 0.0, cpv = ex && open_p ? d - 0.0 : 0.0;
        double c0v = 0.0;
        c0v = ex && open_m ? c0v + (-d + 0.0) : c0v;
        c0v = ex && open_p ? c0v + (-d - 0.0) : c0v;
        acc = term(alpha_ax, c0v, cmv, cpv, yc, vm, vp, acc);
        // the halo's term of the implicit operator, moved to the right-hand side (not for increments)
        acc = __fma_rn(first && dlo && dirichlet_terms ? tdt * (d + 0.0) : 0.0, vm, acc);
        acc = __fma_rn(last && dhi && dirichlet_terms ? tdt * (d - 0.0) : 0.0, vp, acc);
        return others(AXIS + 1, 3, off, yc, acc);
    }

    // operator()(m) for 0 < m < n - 1 with no test of the line's ends: their neighbours are read at the
    // nearest cell of the line, so that it may run on every m, the ends then made again by operator().
    // FORM (form, a constant): RHS_ALL no x0, so nothing is read for it; RHS_X0 an x0; RHS_ONE reads y and
    // the one other axis's neighbours alone: the terms it drops add exact zeros (decision 067).
    // Float lines: in float, the same terms as weight * (neighbour - cell) (decision 052).
    // ENDS false: the caller knows 0 < m < n - 1, and the neighbours along the line need no test (082).
    template <int FORM, bool ENDS = true>
    __device__ __forceinline__ auto interior(int64_t m) const
    {
        if constexpr (FORM == RHS_ONE)
            return interior_one(m);
        else if constexpr (sizeof(T) == 4)
            return interior_f<FORM == RHS_X0, ENDS>(m);
        else
            return interior_d<FORM == RHS_X0, ENDS>(m);
    }
    __device__ __forceinline__ T interior_one(int64_t m) const
    {
        const int64_t off = m * st;
        return interior_one(__ldg(y + off), __ldg(o_nb[0] + off), __ldg(o_nb[1] + off));
    }
    // RHS_ONE's arithmetic on the cell's value and its neighbours' along the one other axis.
    __device__ __forceinline__ T interior_one(T yc, T vm, T vp) const
    {
        if constexpr (sizeof(T) == 4) {
            float acc = __fmaf_rn(o_fw[0], __fsub_rn(vm, yc), yc);
            return __fmaf_rn(o_fw[1], __fsub_rn(vp, yc), acc);
        } else {
            return term(o_alpha, o_c0, o_cm, o_cp, yc, vm, vp, yc);
        }
    }
    template <bool X0, bool ENDS>
    __device__ __forceinline__ float interior_f(int64_t m) const
    {
        const int64_t off = m * st;
        const float yc = __ldg(y + off);
        float acc = X0 ? __ldg(x0 + off) : 0.0f;
#pragma unroll
        for (int b = 0; b < 3; ++b) {
            const T *lo = b == AXIS ? y + off - (!ENDS || m > 0 ? st : 0) : nb[b][0] + off;
            const T *hi = b == AXIS ? y + off + (!ENDS || m < n - 1 ? st : 0) : nb[b][1] + off;
            acc = __fmaf_rn(fw[b][0], __fsub_rn(__ldg(lo), yc), acc);
            acc = __fmaf_rn(fw[b][1], __fsub_rn(__ldg(hi), yc), acc);
        }
        return acc;
    }
    template <bool X0, bool ENDS>
    __device__ __forceinline__ double interior_d(int64_t m) const
    {
        const int64_t off = m * st;
        double acc = X0 ? (double)__ldg(x0 + off) : 0.0;
        const double yc = (double)__ldg(y + off);
#pragma unroll
        for (int b = 0; b < 3; ++b) {
            if (b != AXIS) {
                acc = other_axis(b, off, yc, acc);
                continue;
            }
            const double vm = (double)__ldg(y + off - (!ENDS || m > 0 ? st : 0));
            const double vp = (double)__ldg(y + off + (!ENDS || m < n - 1 ? st : 0));
            acc = term(alpha_ax, c0_in, cm_in, cp_in, yc, vm, vp, acc);
        }
        return acc;
    }
};

} // namespace

#endif
