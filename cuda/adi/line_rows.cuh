// The rows of an ADI stage along one line for operators with coefficient arrays (a kappa field, velocities),
// for the fused sweeps whose lines form their own rows (cuda/adi/adi_fused.cu, fp_block; decision 035).
// A cell's right-hand side and row are ADI_COEF's (src/adi_cell.inc): the same terms in the same order, the
// explicit products fused as written here (__fma_rn, __dmul_rn), but for float x rows (x_rows_f, decision
// 064: float, explicit terms regrouped), double x rows' harmonic face means (decision 065) and double's upwind
// parts and interior diffusion (decision 112: the same values but for a zero's sign). As in
// line_rhs.cuh, every choice of a face (halo or neighbour, open or closed, a coefficient array or the
// constant, an explicit weight of 0) is made once a line for the line's other axes and by selects for its
// own axis, so that a cell's loads are one basic block; a face ADI_COEF skips is read at the cell itself and
// weighted 0. Non-finite inputs send the line to the sweep's careful solve, which forms rows with ADI_COEF.
#ifndef TRIDI_ADI_LINE_ROWS_CUH
#define TRIDI_ADI_LINE_ROWS_CUH

#include "adi_internal.h"

#include <cfloat>

namespace {

// A velocity's upwind parts, ADI_COEF's: v where v > 0 (adi_pos) or v < 0 (adi_neg), else 0, and NaN for a
// NaN, which the row then carries to the solve's check (the GPU does not scan its inputs). In double a
// compare and a select; float's adi_pos is one instruction (FMNMX.NAN).
template <typename R>
__device__ __forceinline__ R adi_pos(R v) { return !(v <= R(0)) ? v : R(0); }
template <typename R>
__device__ __forceinline__ R adi_neg(R v) { return !(v >= R(0)) ? v : R(0); }
// One axis's coefficients of a cell from its two faces' diffusion (dm, dp) and velocity (vm, vp): cm, cp
// and c0 as ADI_COEF sums them, 0 for a closed face (om, op false), in R (float rows: decision 064). Double
// takes a velocity's negative part as v - adi_pos(v), one subtraction for a compare and two selects: the
// same value but for a zero's sign and an infinite velocity's (NaN: its row fails either way); float keeps
// adi_neg, measured faster there (decision 112).
template <typename R>
__device__ __forceinline__ void adi_axis_coefs(bool om, bool op, R dm, R vm, R dp, R vp, R *cm, R *cp, R *c0)
{
    R c = R(0);
    if constexpr (sizeof(R) == 8) {
        const R pm = adi_pos(vm), pp = adi_pos(vp);
        *cm = om ? dm + pm : R(0);
        c = om ? c + (-dm + (vm - pm)) : c;
        *cp = op ? dp - (vp - pp) : R(0);
        c = op ? c + (-dp - pp) : c;
    } else {
        *cm = om ? dm + adi_pos(vm) : R(0);
        c = om ? c + (-dm + adi_neg(vm)) : c;
        *cp = op ? dp - adi_neg(vp) : R(0);
        c = op ? c + (-dp - adi_pos(vp)) : c;
    }
    *c0 = c;
}

template <typename T, int AXIS>
struct line_rows {
    const T *y, *x0, *f, *k, *v[3]; // the line's first cell in each array (x0, k, v[b]: y's if absent)
    const T *ym[3], *yp[3];         // the other axes' neighbour lines in y or the field's halo (y if closed)
    int64_t km[3], kp[3];           // the other axes' offsets of the faces' far cells (0 if closed)
    double a[3], ih[3], ih2[3];     // explicit weights (0 where ADI_COEF skips the axis), 1/h, 1/h^2
    bool open_m[3], open_p[3], has_v[3];
    double kc, tdt;
    int64_t st, n;
    bool has_x0, has_k, harmonic, dlo, dhi, dirichlet_terms;

    // The line at coordinates (p1, p2) along the other axes, lower axis first (ADI_KEY's numbering).
    __device__ line_rows(const adi_stage *s, int64_t p1, int64_t p2)
    {
        constexpr int A1 = AXIS == 0 ? 1 : 0, A2 = AXIS == 2 ? 1 : 2;
        const int64_t c = s->origin + p1 * s->stride[A1] + p2 * s->stride[A2];
        y = (const T *)s->y + c;
        f = (const T *)s->field + c;
        has_x0 = s->x0 != nullptr;
        x0 = has_x0 ? (const T *)s->x0 + c : y;
        has_k = s->kappa != nullptr;
        k = has_k ? (const T *)s->kappa + c : y;
        harmonic = s->harmonic;
        kc = s->kappa_const;
        tdt = s->tdt;
        st = s->stride[AXIS];
        n = s->n[AXIS];
        dlo = s->dirichlet_lo[AXIS];
        dhi = s->dirichlet_hi[AXIS];
        dirichlet_terms = !s->increment;
#pragma unroll
        for (int b = 0; b < 3; ++b) {
            const bool on = b < s->naxes;
            has_v[b] = on && s->vel[b] != nullptr;
            v[b] = has_v[b] ? (const T *)s->vel[b] + c : y;
            ih[b] = on ? s->inv_h[b] : 0.0;
            ih2[b] = on ? s->inv_h2[b] : 0.0;
            a[b] = on ? s->alpha[b] : 0.0;
            ym[b] = yp[b] = y;
            km[b] = kp[b] = 0;
            open_m[b] = open_p[b] = false;
            if (b == AXIS || !on || s->alpha[b] == 0.0)
                continue;
            const int64_t pb = b == A1 ? p1 : p2, sb = s->stride[b];
            const bool first = pb == 0, last = pb == s->n[b] - 1;
            open_m[b] = !first || s->dirichlet_lo[b];
            open_p[b] = !last || s->dirichlet_hi[b];
            if (open_m[b]) {
                ym[b] = (first ? f : y) - sb;
                km[b] = -sb;
            }
            if (open_p[b]) {
                yp[b] = (last ? f : y) + sb;
                kp[b] = sb;
            }
        }
    }

    // A face's diffusion, ADI_COEF's d: the mean of the kappas on either side, or the constant.
    __device__ __forceinline__ double face_d(double k1, double k2, int b) const
    {
        return adi_face_diffusion(has_k ? adi_face_mean(k1, k2, harmonic) : kc, ih2[b]);
    }
    // A face's velocity, ADI_COEF's v.
    __device__ __forceinline__ double face_v(double v1, double v2, int b) const
    {
        return has_v[b] ? 0.5 * (v1 + v2) * ih[b] : 0.0;
    }
    // One axis's coefficients of the cell: cm, cp and c0 as ADI_COEF sums them, 0 for a closed face.
    __device__ __forceinline__ void coefs(int b, bool om, bool op, double kcell, double k_m, double k_p,
                                          double vcell, double v_m, double v_p, double *cm, double *cp,
                                          double *c0) const
    {
        adi_axis_coefs(om, op, face_d(k_m, kcell, b), face_v(v_m, vcell, b), face_d(kcell, k_p, b),
                       face_v(vcell, v_p, b), cm, cp, c0);
    }
    __device__ __forceinline__ static double ld(const T *p) { return (double)__ldg(p); }

    // Row m of the line (0 <= m < n): returns the right-hand side, the row of (I - tdt L_AXIS) in *lo, *di,
    // *up, all unrounded.
    __device__ __forceinline__ double operator()(int64_t m, double *lo, double *di, double *up) const
    {
        const int64_t off = m * st;
        double acc = has_x0 ? ld(x0 + off) : 0.0;
        const double yc = ld(y + off), kcell = ld(k + off);
#pragma unroll
        for (int b = 0; b < 3; ++b) {
            const double vcell = ld(v[b] + off);
            if (b != AXIS) {
                double cm, cp, c0;
                coefs(b, open_m[b], open_p[b], kcell, ld(k + off + km[b]), ld(k + off + kp[b]), vcell,
                      ld(v[b] + off + km[b]), ld(v[b] + off + kp[b]), &cm, &cp, &c0);
                double lu = __dmul_rn(c0, yc);
                lu = __fma_rn(cm, ld(ym[b] + off), lu);
                lu = __fma_rn(cp, ld(yp[b] + off), lu);
                acc = __fma_rn(a[b], lu, acc);
                continue;
            }
            const bool first = m == 0, last = m == n - 1;
            const bool om = !first || dlo, op = !last || dhi;
            const int64_t sm = om ? -st : 0, sp = op ? st : 0; // a closed face read at the cell
            double cm, cp, c0;
            coefs(b, om, op, kcell, ld(k + off + sm), ld(k + off + sp), vcell, ld(v[b] + off + sm),
                  ld(v[b] + off + sp), &cm, &cp, &c0);
            const double vm = ld((first ? f : y) + off + sm), vp = ld((last ? f : y) + off + sp);
            double lu = __dmul_rn(c0, yc);
            lu = __fma_rn(cm, vm, lu);
            lu = __fma_rn(cp, vp, lu);
            acc = __fma_rn(a[b], lu, acc);
            *lo = -tdt * cm;
            *di = 1.0 - tdt * c0;
            *up = -tdt * cp;
            // the halo's term of the implicit operator, moved to the right-hand side (not for increments)
            acc = __fma_rn(first && dlo && dirichlet_terms ? tdt * cm : 0.0, vm, acc);
            acc = __fma_rn(last && dhi && dirichlet_terms ? tdt * cp : 0.0, vp, acc);
        }
        return acc;
    }
};

// The operations of either type that adi_face_means takes: rounded to nearest but for means_rcp.
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double div_rn(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float div_rn(float a, float b) { return __fdiv_rn(a, b); }
// The reciprocal of a product of two face means, a normal number: rounded in double; in float the hardware's
// approximation, within one unit in the last place, without the rounding's fix-up (decision 113).
__device__ __forceinline__ double means_rcp(double a) { return __drcp_rn(a); }
__device__ __forceinline__ float means_rcp(float a)
{
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
    return r;
}

// The face means of one axis of a cell, below (k_m, kc) and above (kc, k_p), for the x rows and the y/z
// corrections (decisions 065, 076, 077, 113): arithmetic as adi_face_mean; harmonic as k1 (k2 / h), h = (k1 +
// k2) / 2 (064's form, no overflow), the divisions by hm and hp from one reciprocal of hm hp where both lie in
// 2^-500..2^500 (double) or 2^-60..2^60 (float), where the product and the reciprocal are normal, else one
// division each. Within the bounds of docs/adi.md ("Double x rows' face means", "Float rows").
template <typename R>
__device__ __forceinline__ void adi_face_means(R k_m, R kc, R k_p, bool harmonic, R *mm, R *mp)
{
    const R hm = R(0.5) * k_m + R(0.5) * kc, hp = R(0.5) * kc + R(0.5) * k_p;
    if (!harmonic) {
        *mm = hm;
        *mp = hp;
        return;
    }
    constexpr R lo = sizeof(R) == 8 ? R(0x1p-500) : R(0x1p-60), hi = sizeof(R) == 8 ? R(0x1p500) : R(0x1p60);
    if (hm >= lo && hm <= hi && hp >= lo && hp <= hi) {
        const R r = means_rcp(mul_rn(hm, hp));
        *mm = mul_rn(k_m, mul_rn(kc, mul_rn(hp, r)));
        *mp = mul_rn(k_p, mul_rn(kc, mul_rn(hm, r)));
    } else {
        *mm = !(hm <= R(0)) ? mul_rn(k_m, div_rn(kc, hm)) : R(0); // NaN stays NaN, as adi_face_mean
        *mp = !(hp <= R(0)) ? mul_rn(k_p, div_rn(kc, hp)) : R(0);
    }
}

// A staged x line (x_rows, x_rows_f): the stage, the line's first cell and a word of face bits, per other
// axis b (bit 4 (b - 1)): open below, open above, below from the field, above too; the stage's arrays as T.
// I: the type of the cells' offsets, int where every offset of the stage's arrays fits (decision 078).
template <typename T, typename I>
struct x_line {
    const adi_stage *s;
    const adi_fused *z; // the constants of the stage's rows (xr_*)
    I c;
    unsigned fl;

    __device__ x_line(const adi_stage *st, const adi_fused *fz, int64_t p1, int64_t p2)
        : s(st), z(fz), c((I)(st->origin + p1 * st->stride[1] + p2 * st->stride[2])), fl(0)
    {
#pragma unroll
        for (int b = 1; b < 3; ++b) {
            if (b >= s->naxes || s->alpha[b] == 0.0)
                continue;
            const int64_t pb = b == 1 ? p1 : p2;
            const bool first = pb == 0, last = pb == s->n[b] - 1;
            const unsigned om = !first || s->dirichlet_lo[b], op = !last || s->dirichlet_hi[b];
            fl |= (om | op << 1 | (om & first) << 2 | (op & last) << 3) << 4 * (b - 1);
        }
    }
    // Whether the line is one of the operator's interior lines: a kappa field, a velocity on every axis of
    // three, and both faces of every other axis open and inside y; double: every 1/h^2 finite. Its rows (FULL)
    // take the same operations in the same order with none of the choices a line at the box's faces needs
    // (decision 080); in double a face's diffusion is mean / h^2 without adi_face_diffusion's test (0 for a
    // zero mean over any finite spacing, but a zero's sign; decision 112).
    __device__ __forceinline__ bool full() const
    {
        return s->kappa && s->naxes == 3 && s->vel[0] && s->vel[1] && s->vel[2] && fl == 0x33u &&
               (sizeof(T) == 4 || (z->xr_ih2[0] <= DBL_MAX && z->xr_ih2[1] <= DBL_MAX && z->xr_ih2[2] <= DBL_MAX));
    }
    __device__ __forceinline__ const T *yb() const { return (const T *)s->y; }
    template <bool FULL = false>
    __device__ __forceinline__ const T *kb() const
    {
        return FULL || s->kappa ? (const T *)s->kappa : yb();
    }
    template <bool FULL = false>
    __device__ __forceinline__ bool has_v(int b) const
    {
        return FULL || (b < s->naxes && s->vel[b] != nullptr);
    }
    template <bool FULL = false>
    __device__ __forceinline__ const T *vb(int b) const
    {
        return has_v<FULL>(b) ? (const T *)s->vel[b] : yb();
    }
    // The face bits of other axis b (FULL: open both ways, inside y).
    template <bool FULL>
    __device__ __forceinline__ unsigned faces(int b) const { return FULL ? 3u : fl >> 4 * (b - 1); }
    // The seven values other axis B's explicit term of cell off reads, as R: y (or the field's halo) below and
    // above, kappa below and above, the velocity at the cell, below and above. Read before any of the cell's
    // arithmetic, so that a cell waits on its loads once rather than once an axis (decision 111).
    template <int B, bool FULL, typename R>
    __device__ __forceinline__ void other_loads(I off, R (&v)[7]) const
    {
        const unsigned f = faces<FULL>(B);
        const I sb = (I)s->stride[B], km = f & 1 ? -sb : 0, kp = f & 2 ? sb : 0;
        const T *K = kb<FULL>(), *V = vb<FULL>(B);
        const I below = off + km, above = off + kp; // summed in I: one multiply-add an address (decision 092)
        v[0] = (R)__ldg((f & 4 ? (const T *)s->field : yb()) + below);
        v[1] = (R)__ldg((f & 8 ? (const T *)s->field : yb()) + above);
        v[2] = (R)__ldg(K + below);
        v[3] = (R)__ldg(K + above);
        v[4] = (R)__ldg(V + off);
        v[5] = (R)__ldg(V + below);
        v[6] = (R)__ldg(V + above);
    }
};

// line_rows for the staged x rows (fo_block, decision 058): the same row, the same operations in the same
// order but the face means (adi_face_means, decision 065), from a line state of one offset and a word of
// face bits; every other value is read from the stage, a kernel parameter, where it is used, so that forming
// a row holds no per-line copies in registers.
template <typename T, typename I>
struct x_rows : x_line<T, I> {
    using real = double;
    using L = x_line<T, I>;
    using L::s, L::z, L::c, L::yb;

    __device__ x_rows(const adi_stage *st, const adi_fused *fz, int64_t p1, int64_t p2) : L(st, fz, p1, p2) {}
    __device__ __forceinline__ static double ld(const T *p) { return (double)__ldg(p); }
    template <bool FULL>
    __device__ __forceinline__ double face_v(double v1, double v2, int b) const
    {
        return L::template has_v<FULL>(b) ? 0.5 * (v1 + v2) * z->xr_ih[b] : 0.0;
    }
    // line_rows::coefs, the two face means from adi_face_means (decision 065).
    template <bool FULL>
    __device__ __forceinline__ void coefs(int b, bool om, bool op, double kcell, double k_m, double k_p,
                                          double vcell, double v_m, double v_p, double *cm, double *cp,
                                          double *c0) const
    {
        double mm = s->kappa_const, mp = s->kappa_const;
        if (FULL || s->kappa)
            adi_face_means(k_m, kcell, k_p, s->harmonic, &mm, &mp);
        const double ih2 = z->xr_ih2[b];
        auto diffusion = [&](double mean) { return FULL ? __dmul_rn(mean, ih2) : adi_face_diffusion(mean, ih2); };
        adi_axis_coefs(om, op, diffusion(mm), face_v<FULL>(v_m, vcell, b), diffusion(mp), face_v<FULL>(vcell, v_p, b),
                       cm, cp, c0);
    }
    // One other axis's explicit term of a cell from its other_loads v, added to acc as line_rows adds it.
    template <int B, bool FULL>
    __device__ __forceinline__ double other(const double (&v)[7], double yc, double kcell, double acc) const
    {
        const unsigned f = L::template faces<FULL>(B);
        double cm, cp, c0;
        coefs<FULL>(B, f & 1, f & 2, kcell, v[2], v[3], v[4], v[5], v[6], &cm, &cp, &c0);
        double lu = __dmul_rn(c0, yc);
        lu = __fma_rn(cm, v[0], lu);
        lu = __fma_rn(cp, v[1], lu);
        return __fma_rn(z->xr_alpha[B], lu, acc);
    }
    // line_rows::operator() along x, row m (0 <= m < n); FULL: the line is full() (the same values).
    template <bool FULL = false>
    __device__ __forceinline__ double operator()(int m, double *lo, double *di, double *up) const
    {
        const I st = 1, off = c + m; // stride[0] is 1
        const int n = (int)s->n[0];
        const bool first = m == 0, last = m == n - 1, dlo = s->dirichlet_lo[0], dhi = s->dirichlet_hi[0];
        double acc = s->x0 ? ld((const T *)s->x0 + off) : 0.0;
        const double yc = ld(yb() + off), kcell = ld(L::template kb<FULL>() + off);
        const bool om = !first || dlo, op = !last || dhi;
        const I sm = om ? -st : 0, sp = op ? st : 0; // a closed face read at the cell
        const T *K = L::template kb<FULL>() + off, *V = L::template vb<FULL>(0) + off;
        const double k_m = ld(K + sm), k_p = ld(K + sp), vc = ld(V), v_m = ld(V + sm), v_p = ld(V + sp);
        const double vm = ld((first ? (const T *)s->field : yb()) + off + sm);
        const double vp = ld((last ? (const T *)s->field : yb()) + off + sp);
        double o1[7], o2[7];
        L::template other_loads<1, FULL>(off, o1);
        L::template other_loads<2, FULL>(off, o2);
        double cm, cp, c0;
        coefs<FULL>(0, om, op, kcell, k_m, k_p, vc, v_m, v_p, &cm, &cp, &c0);
        double lu = __dmul_rn(c0, yc);
        lu = __fma_rn(cm, vm, lu);
        lu = __fma_rn(cp, vp, lu);
        acc = __fma_rn(z->xr_alpha[0], lu, acc);
        const double tdt = s->tdt;
        *lo = -tdt * cm;
        *di = 1.0 - tdt * c0;
        *up = -tdt * cp;
        // the halo's term of the implicit operator, moved to the right-hand side (not for increments)
        const bool terms = !s->increment;
        acc = __fma_rn(first && dlo && terms ? tdt * cm : 0.0, vm, acc);
        acc = __fma_rn(last && dhi && terms ? tdt * cp : 0.0, vp, acc);
        acc = other<1, FULL>(o1, yc, kcell, acc);
        return other<2, FULL>(o2, yc, kcell, acc);
    }
};

// Float plans form their x rows in float (decision 064): x_rows's loads and choices, float arithmetic, and the
// explicit terms as differences of neighbours, cm (u[m-1] - u) + cp (u[m+1] - u) + g u, with g = c0 + cm + cp
// the face velocities' difference (exactly 0 without velocities): the form ADI_COEF sums, c0 u + cm u[m-1] +
// cp u[m+1], cancels terms of dt kappa / h^2 |u|, which float would keep to eps_f of that size (decision 052).
// Within the bound of docs/adi.md ("Float rows of operators with coefficient arrays").

// The face mean of two float kappas as k1 k2 / ((k1 + k2) / 2): no intermediate exceeds the larger kappa, so
// nothing overflows, and nothing underflows where the mean is a normal float; 0 where both are 0.
__device__ __forceinline__ float adi_face_mean_f(float k1, float k2, bool harmonic)
{
    const float h = __fadd_rn(0.5f * k1, 0.5f * k2); // halving is exact for normal kappas
    if (!harmonic)
        return h;
    return !(h <= 0.0f) ? __fmul_rn(k1, __fdiv_rn(k2, h)) : 0.0f; // NaN stays NaN, as adi_face_mean
}

// adi_face_diffusion in float: a zero diffusion stays zero over any spacing.
__device__ __forceinline__ float adi_face_diffusion_f(float mean, float ih2) { return mean == 0.0f ? 0.0f : mean * ih2; }

template <typename I>
struct x_rows_f : x_line<float, I> {
    using real = float;
    using L = x_line<float, I>;
    using L::s, L::z, L::c, L::yb;

    __device__ x_rows_f(const adi_stage *st, const adi_fused *fz, int64_t p1, int64_t p2) : L(st, fz, p1, p2) {}
    __device__ __forceinline__ static float ld(const float *p) { return __ldg(p); }
    // The diffusions of a cell's two faces along b, below (k_m, kcell) and above (kcell, k_p).
    template <bool FULL>
    __device__ __forceinline__ void face_ds(float k_m, float kcell, float k_p, int b, float *dm, float *dp) const
    {
        float mm = z->xr_kappa_f, mp = mm;
        if (FULL || s->kappa)
            adi_face_means(k_m, kcell, k_p, s->harmonic, &mm, &mp);
        const float ih2 = z->xr_ih2_f[b];
        *dm = adi_face_diffusion_f(mm, ih2);
        *dp = adi_face_diffusion_f(mp, ih2);
    }
    template <bool FULL>
    __device__ __forceinline__ float face_v(float v1, float v2, int b) const
    {
        return L::template has_v<FULL>(b) ? __fmul_rn(0.5f * __fadd_rn(v1, v2), z->xr_ih_f[b]) : 0.0f;
    }
    // adi_axis_coefs in float, and g = c0 + cm + cp: the open faces' velocities, below minus above.
    template <bool FULL>
    __device__ __forceinline__ void coefs(int b, bool om, bool op, float kcell, float k_m, float k_p, float vcell,
                                          float v_m, float v_p, float *cm, float *cp, float *c0, float *g) const
    {
        float dm, dp;
        face_ds<FULL>(k_m, kcell, k_p, b, &dm, &dp);
        const float vm = face_v<FULL>(v_m, vcell, b), vp = face_v<FULL>(vcell, v_p, b);
        adi_axis_coefs(om, op, dm, vm, dp, vp, cm, cp, c0);
        *g = __fsub_rn(om ? vm : 0.0f, op ? vp : 0.0f);
    }
    // The explicit term of one axis, alpha (cm (ym - yc) + cp (yp - yc) + g yc), added to acc.
    __device__ __forceinline__ static float term(float alpha, float cm, float cp, float g, float ym, float yc,
                                                 float yp, float acc)
    {
        float lu = __fmul_rn(g, yc);
        lu = __fmaf_rn(cm, __fsub_rn(ym, yc), lu);
        lu = __fmaf_rn(cp, __fsub_rn(yp, yc), lu);
        return __fmaf_rn(alpha, lu, acc);
    }
    template <int B, bool FULL>
    __device__ __forceinline__ float other(const float (&v)[7], float yc, float kcell, float acc) const
    {
        const unsigned f = L::template faces<FULL>(B);
        float cm, cp, c0, g;
        coefs<FULL>(B, f & 1, f & 2, kcell, v[2], v[3], v[4], v[5], v[6], &cm, &cp, &c0, &g);
        return term(z->xr_alpha_f[B], cm, cp, g, v[0], yc, v[1], acc);
    }
    // x_rows::operator() in float: row m (0 <= m < n), the right-hand side returned; FULL as there.
    template <bool FULL = false>
    __device__ __forceinline__ float operator()(int m, float *lo, float *di, float *up) const
    {
        const I st = 1, off = c + m; // stride[0] is 1
        const int n = (int)s->n[0];
        const bool first = m == 0, last = m == n - 1, dlo = s->dirichlet_lo[0], dhi = s->dirichlet_hi[0];
        float acc = s->x0 ? ld((const float *)s->x0 + off) : 0.0f;
        const float yc = ld(yb() + off), kcell = ld(L::template kb<FULL>() + off);
        const bool om = !first || dlo, op = !last || dhi;
        const I sm = om ? -st : 0, sp = op ? st : 0; // a closed face read at the cell
        const float *K = L::template kb<FULL>() + off, *V = L::template vb<FULL>(0) + off;
        const float k_m = ld(K + sm), k_p = ld(K + sp), vc = ld(V), v_m = ld(V + sm), v_p = ld(V + sp);
        const float vm = ld((first ? (const float *)s->field : yb()) + off + sm);
        const float vp = ld((last ? (const float *)s->field : yb()) + off + sp);
        float o1[7], o2[7];
        L::template other_loads<1, FULL>(off, o1);
        L::template other_loads<2, FULL>(off, o2);
        float cm, cp, c0, g;
        coefs<FULL>(0, om, op, kcell, k_m, k_p, vc, v_m, v_p, &cm, &cp, &c0, &g);
        acc = term(z->xr_alpha_f[0], cm, cp, g, vm, yc, vp, acc);
        const float tdt = z->xr_tdt_f;
        *lo = -tdt * cm;
        *di = 1.0f - tdt * c0;
        *up = -tdt * cp;
        const bool terms = !s->increment;
        acc = __fmaf_rn(first && dlo && terms ? tdt * cm : 0.0f, vm, acc);
        acc = __fmaf_rn(last && dhi && terms ? tdt * cp : 0.0f, vp, acc);
        acc = other<1, FULL>(o1, yc, kcell, acc);
        return other<2, FULL>(o2, yc, kcell, acc);
    }
};

// The x rows of storage type T: double arithmetic for double, float for float (decision 064).
template <typename T, typename I>
struct x_rows_of {
    using type = x_rows<T, I>;
};
template <typename I>
struct x_rows_of<float, I> {
    using type = x_rows_f<I>;
};

} // namespace

#endif
