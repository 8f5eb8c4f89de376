#include "mohid_reference.h"

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
