/* The oracle itself checked against mathematics: manufactured solutions x_true, rhs = A x_true computed
 * in long double, solved by the reference and by tridi in double; both must return x_true. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    uint64_t rng = tu_seed("test_oracle");
    int failures = 0;
    for (int trial = 0; trial < 40; ++trial) {
        tridi_grid g = {3, {0, -1, 2}, {(int64_t)tu_randint(&rng, 1, 12), (int64_t)tu_randint(&rng, 0, 9),
                                        (int64_t)tu_randint(&rng, 3, 10)}};
        tridi_axis axis = (tridi_axis)tu_randint(&rng, 0, 2);
        tu_system s;
        if (tu_system_alloc(&s, &g, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, &rng))
            return 1;
        int64_t lo[3] = {g.lbound[0], g.lbound[1], g.lbound[2]}, hi[3] = {g.ubound[0], g.ubound[1], g.ubound[2]};
        double *xt = malloc(sizeof(double) * (size_t)s.cells);
        for (int64_t i = 0; i < s.cells; ++i)
            xt[i] = 4.0 * tu_uniform(&rng) - 2.0;
        /* rhs(m) = D(m) x(m-1) + E(m) x(m) + F(m) x(m+1) along each line of `axis` */
        int64_t st[3] = {1, g.ubound[0] - g.lbound[0] + 1, 0};
        st[2] = st[1] * (g.ubound[1] - g.lbound[1] + 1);
        double *D = (double *)s.a.lower, *E = (double *)s.a.diag, *F = (double *)s.a.upper, *R = (double *)s.a.rhs;
        for (int64_t k = lo[2]; k <= hi[2]; ++k)
            for (int64_t j = lo[1]; j <= hi[1]; ++j)
                for (int64_t i = lo[0]; i <= hi[0]; ++i) {
                    int64_t c[3] = {i, j, k}, o = tu_index(&g, i, j, k);
                    long double r = (long double)E[o] * xt[o];
                    if (c[axis] > lo[axis])
                        r += (long double)D[o] * xt[o - st[axis]];
                    if (c[axis] < hi[axis])
                        r += (long double)F[o] * xt[o + st[axis]];
                    R[o] = (double)r;
                }
        tridi_arrays ref = s.a;
        double *xr = malloc(sizeof(double) * (size_t)s.cells);
        ref.x = xr;
        tu_reference_solve(&g, axis, lo, hi, &ref);
        tridi_context ctx;
        if (tridi_create(&ctx, NULL)) {
            printf("create failed: %s\n", tridi_error_message());
            return 1;
        }
        tridi_status st2 = tridi_solve(ctx, &g, axis, lo, hi, &s.a);
        if (st2) {
            printf("trial %d: solve failed: %s\n", trial, tridi_error_message());
            failures++;
        }
        double eref = 0, elib = 0;
        for (int64_t i = 0; i < s.cells; ++i) {
            eref = fmax(eref, fabs(xr[i] - xt[i]));
            elib = fmax(elib, fabs(((double *)s.a.x)[i] - xt[i]));
        }
        if (!(eref < 1e-12) || !(elib < 1e-12)) {
            printf("trial %d axis %d: max error reference %.3g, tridi %.3g (bound 1e-12)\n", trial, axis, eref, elib);
            failures++;
        }
        tridi_destroy(ctx);
        free(xt);
        free(xr);
        tu_system_free(&s);
    }
    printf("test_oracle: %s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
