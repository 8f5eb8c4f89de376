/* MOHID's Thomas routines in C (mohid_reference.h says which, and how they round). Compiled with
 * -ffp-contract=off: no product fused into its sum. */
#include "mohid_reference.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

/* One K slab (axis 0/1) or one J row (axis 2) of MOHID's loops, with its own VECW/VECG. */
static void slab(const mohid_grid *g, int axis, const int64_t lo[3], const int64_t hi[3], int64_t outer,
                 const float *D, const double *E, const float *F, const float *Ti, float *X, double *W, double *G)
{
    const int64_t e0 = g->ub[0] - g->lb[0] + 1, e1 = g->ub[1] - g->lb[1] + 1;
    const int64_t st[3] = {1, e0, e0 * e1};
    const int64_t s = st[axis];
    /* inner: the line index loop of MOHID (I for i0_j1 and THOMASZ, J for i1_j0) */
    const int inner_axis = axis == 0 ? 1 : 0;
    const int outer_axis = axis == 2 ? 1 : 2;
    const int64_t n = hi[axis] - lo[axis] + 1;
    for (int64_t c = lo[inner_axis]; c <= hi[inner_axis]; ++c) {
        int64_t idx[3];
        idx[axis] = lo[axis];
        idx[inner_axis] = c;
        idx[outer_axis] = outer;
        int64_t o = (idx[0] - g->lb[0]) + (idx[1] - g->lb[1]) * st[1] + (idx[2] - g->lb[2]) * st[2];
        W[0] = -(double)F[o] / E[o];
        G[0] = (double)Ti[o] / E[o];
        for (int64_t m = 1; m < n; ++m) {
            int64_t q = o + m * s;
            double aux = E[q] + (double)D[q] * W[m - 1];
            W[m] = -(double)F[q] / aux;
            G[m] = ((double)Ti[q] - (double)D[q] * G[m - 1]) / aux;
        }
        X[o + (n - 1) * s] = (float)G[n - 1];
        for (int64_t m = n - 2; m >= 0; --m)
            X[o + m * s] = (float)(W[m] * (double)X[o + (m + 1) * s] + G[m]);
    }
}

void mohid_thomas(const mohid_grid *g, int axis, const int64_t lo[3], const int64_t hi[3], const float *D,
                  const double *E, const float *F, const float *Ti, float *X, int threads)
{
    const int outer_axis = axis == 2 ? 1 : 2;
    const int64_t n = hi[axis] - lo[axis] + 1;
    if (threads <= 1) {
        double *W = malloc(sizeof(double) * (size_t)n), *G = malloc(sizeof(double) * (size_t)n);
        for (int64_t o = lo[outer_axis]; o <= hi[outer_axis]; ++o)
            slab(g, axis, lo, hi, o, D, E, F, Ti, X, W, G);
        free(W);
        free(G);
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        double *W = malloc(sizeof(double) * (size_t)n), *G = malloc(sizeof(double) * (size_t)n);
#pragma omp for schedule(static)
        for (int64_t o = lo[outer_axis]; o <= hi[outer_axis]; ++o)
            slab(g, axis, lo, hi, o, D, E, F, Ti, X, W, G);
        free(W);
        free(G);
    }
}

/* Element i of an array of type t, widened to double (exact). */
static inline double get(const void *p, tridi_dtype t, int64_t i)
{
    return t == TRIDI_FLOAT64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* v stored into element i of an array of type t (rounded to float there); returns the stored value. */
static inline double put(void *p, tridi_dtype t, int64_t i, double v)
{
    if (t == TRIDI_FLOAT64)
        return ((double *)p)[i] = v;
    return (double)(((float *)p)[i] = (float)v);
}

int64_t mohid_line(int64_t n, int64_t stride, const tridi_arrays *a, int64_t first, int newtype, double *W,
                   double *G)
{
    return mohid_line_from(n, stride, a, first, first, newtype, W, G);
}

int64_t mohid_line_from(int64_t n, int64_t stride, const tridi_arrays *a, int64_t first, int64_t first_in,
                        int newtype, double *W, double *G)
{
    const int aux_f32 = newtype && a->upper_type == TRIDI_FLOAT32;
    int64_t zero = 0;
    /* VECW(first) = -F/E, VECG(first) = Ti/E: E is double, so these divide in double in both routines */
    const double e0 = get(a->diag, a->diag_type, first_in);
    W[0] = n > 1 ? -get(a->upper, a->upper_type, first_in) / e0 : 0.0;
    G[0] = get(a->rhs, a->rhs_type, first_in) / e0;
    if (e0 == 0.0)
        zero = 1;
    for (int64_t m = 1; m < n; ++m) {
        const int64_t q = first + m * stride;
        const double d = get(a->lower, a->lower_type, q), e = get(a->diag, a->diag_type, q);
        const double ti = get(a->rhs, a->rhs_type, q);
        if (aux_f32) { /* real :: AUX in a real(4) build */
            const float aux = (float)(e + d * W[m - 1]);
            if (!(fabsf(aux) > 0) && !zero)
                zero = m + 1;
            W[m] = m < n - 1 ? (double)(-((float)get(a->upper, a->upper_type, q) / aux)) : 0.0;
            G[m] = (ti - d * G[m - 1]) / (double)aux;
        } else {
            const double aux = e + d * W[m - 1];
            if (!(fabs(aux) > 0) && !zero)
                zero = m + 1;
            W[m] = m < n - 1 ? -get(a->upper, a->upper_type, q) / aux : 0.0;
            G[m] = (ti - d * G[m - 1]) / aux;
        }
    }
    /* ANSWER(last) = VECG(last); ANSWER(m) = VECW(m)*ANSWER(m+1) + VECG(m), ANSWER of x's type */
    double xn = put(a->x, a->x_type, first + (n - 1) * stride, G[n - 1]);
    for (int64_t m = n - 2; m >= 0; --m)
        xn = put(a->x, a->x_type, first + m * stride, W[m] * xn + G[m]);
    return zero;
}

int64_t mohid_solve(const tridi_grid *g, tridi_axis axis, const int64_t lo[3], const int64_t hi[3],
                    const tridi_arrays *a, int newtype)
{
    const int nd = g->ndim;
    int64_t L[3] = {1, 1, 1}, H[3] = {1, 1, 1}, lb[3] = {1, 1, 1}, st[3];
    for (int d = 0; d < nd; ++d) {
        L[d] = lo[d];
        H[d] = hi[d];
        lb[d] = g->lbound[d];
    }
    st[0] = 1;
    st[1] = g->ubound[0] - g->lbound[0] + 1;
    st[2] = st[1] * (g->ubound[1] - g->lbound[1] + 1);
    for (int d = 0; d < 3; ++d)
        if (H[d] < L[d])
            return 0;
    const int o1 = axis == TRIDI_AXIS_X ? 1 : 0, o2 = axis == TRIDI_AXIS_Z ? 1 : 2;
    const int64_t n = H[axis] - L[axis] + 1;
    double *W = malloc(sizeof(double) * (size_t)n), *G = malloc(sizeof(double) * (size_t)n);
    int64_t bad = 0;
    for (int64_t c2 = L[o2]; c2 <= H[o2]; ++c2)
        for (int64_t c1 = L[o1]; c1 <= H[o1]; ++c1) {
            int64_t c[3];
            c[axis] = L[axis];
            c[o1] = c1;
            c[o2] = c2;
            const int64_t first = (c[0] - lb[0]) + (c[1] - lb[1]) * st[1] + (c[2] - lb[2]) * st[2];
            bad += mohid_line(n, st[axis], a, first, newtype, W, G) != 0;
        }
    free(W);
    free(G);
    return bad;
}

int64_t mohid_line_mixed(int64_t n, int64_t stride, int64_t first_in, const float *D, const double *E, const float *F,
                         const float *Ti, float *X)
{
    const tridi_arrays a = {D, TRIDI_FLOAT32, E, TRIDI_FLOAT64, F, TRIDI_FLOAT32, Ti, TRIDI_FLOAT32, X, TRIDI_FLOAT32};
    double *W = malloc(sizeof(double) * (size_t)n), *G = malloc(sizeof(double) * (size_t)n);
    if (!W || !G)
        abort();
    const int64_t zero = mohid_line_from(n, stride, &a, 0, first_in, 0, W, G);
    free(W);
    free(G);
    return zero;
}
