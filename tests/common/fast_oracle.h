/* The FAST accuracy bound's oracle (docs/api.md, "FAST arithmetic"), for the host test of the partitioned
 * solve's math (tests/c/test_fast_partition.cpp) and the GPU test of the FAST kernels
 * (tests/cuda/test_fast_gpu.c). A line's exact answer x* comes from the Thomas recurrence in long double;
 * the bound is |x - x*| <= 32 u cond(A, x*) |x*| in the max norm, cond(A, x) = || |A^-1| |A| |x| || / ||x||.
 * |A^-1| v is computed column by column up to FO_EXACT_MAX unknowns and on every line that is not row
 * diagonally dominant; longer dominant lines use <A>^-1 v, with <A> the comparison matrix (|diag| on the
 * diagonal, -|lower|, -|upper| off it): for a diagonally dominant A, <A>^-1 >= |A^-1| entry by entry, so the
 * bound checked there is the stated one or looser by that ratio (for another A it can be smaller than
 * |A^-1| v, the bound then too tight).
 * A line that is not row diagonally dominant is outside the stated bound (docs/api.md: it gets MOHID's
 * recurrence's guarantee); for it |A| |x| becomes max(|A| |x|, |L| |U| |x|) with L, U the recurrence's
 * own factors, the backward error of an LU without pivoting, so that the bound allows the recurrence's
 * growth where a row is not dominant. */
#ifndef TRIDI_FAST_ORACLE_H
#define TRIDI_FAST_ORACLE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#define FO_EXACT_MAX 256

/* Thomas in long double (d[0] and f[n-1] not read). w, g: scratch of n. */
static void fo_thomas(int64_t n, const long double *d, const long double *e, const long double *f,
                      const long double *r, long double *x, long double *w, long double *g)
{
    for (int64_t m = 0; m < n; ++m) {
        const long double den = e[m] + (m ? d[m] * w[m - 1] : 0.0L);
        w[m] = m < n - 1 ? -f[m] / den : 0.0L;
        g[m] = (r[m] - (m ? d[m] * g[m - 1] : 0.0L)) / den;
    }
    for (int64_t m = n - 1; m >= 0; --m)
        x[m] = m == n - 1 ? g[m] : w[m] * x[m + 1] + g[m];
}

/* The line's exact answer into x and the bound's right-hand side 32 u cond(A, x*) ||x*|| (u: the unit
 * roundoff of the arrays' type) into *bound. Returns -1 when out of memory. */
static int fo_line(int64_t n, const long double *d, const long double *e, const long double *f, const long double *r,
                   long double u, long double *x, long double *bound)
{
    long double *buf = (long double *)malloc((size_t)n * 7 * sizeof(long double));
    if (!buf)
        return -1;
    long double *w = buf, *g = buf + n, *v = buf + 2 * n, *c = buf + 3 * n, *col = buf + 4 * n, *t1 = buf + 5 * n,
                *t2 = buf + 6 * n;
    fo_thomas(n, d, e, f, r, x, w, g);
    int dominant = 1;
    for (int64_t m = 0; m < n; ++m) {
        dominant &= fabsl(e[m]) >= (m ? fabsl(d[m]) : 0.0L) + (m < n - 1 ? fabsl(f[m]) : 0.0L);
        v[m] = fabsl(e[m] * x[m]) + (m ? fabsl(d[m] * x[m - 1]) : 0.0L) + (m < n - 1 ? fabsl(f[m] * x[m + 1]) : 0.0L);
    }
    if (!dominant) /* v = max(v, |L| |U| |x|): U's pivots den_m and f_m, L's multipliers d_m / den_(m-1) */
        for (int64_t m = 0; m < n; ++m) {
            const long double den = e[m] + (m ? d[m] * w[m - 1] : 0.0L);
            long double lu = fabsl(den * x[m]) + (m < n - 1 ? fabsl(f[m] * x[m + 1]) : 0.0L);
            if (m) {
                const long double prev = e[m - 1] + (m > 1 ? d[m - 1] * w[m - 2] : 0.0L);
                lu += fabsl(d[m] / prev) * (fabsl(prev * x[m - 1]) + fabsl(f[m - 1] * x[m]));
            }
            v[m] = fmaxl(v[m], lu);
        }
    long double cn = 0.0L;
    if (n <= FO_EXACT_MAX || !dominant) {
        for (int64_t m = 0; m < n; ++m)
            c[m] = 0.0L;
        for (int64_t j = 0; j < n; ++j) { /* column j of A^-1, then c += |A^-1(:, j)| v(j) */
            for (int64_t m = 0; m < n; ++m)
                t1[m] = m == j;
            fo_thomas(n, d, e, f, t1, col, w, g);
            for (int64_t m = 0; m < n; ++m)
                c[m] += fabsl(col[m]) * v[j];
        }
    } else {
        for (int64_t m = 0; m < n; ++m) { /* the comparison matrix, into t1 (lower), t2 (diag), col (upper) */
            t1[m] = -fabsl(d[m]);
            t2[m] = fabsl(e[m]);
            col[m] = -fabsl(f[m]);
        }
        fo_thomas(n, t1, t2, col, v, c, w, g);
    }
    for (int64_t m = 0; m < n; ++m)
        cn = fmaxl(cn, fabsl(c[m]));
    *bound = 32.0L * u * cn;
    free(buf);
    return 0;
}

#endif
