#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t tu_seed(const char *test_name)
{
    const char *env = getenv("TRIDI_SEED");
    uint64_t seed;
    if (env && *env) {
        seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
    }
    if (!seed)
        seed = 0x9e3779b97f4a7c15ull;
    printf("%s: seed %llu (replay with TRIDI_SEED=%llu)\n", test_name, (unsigned long long)seed,
           (unsigned long long)seed);
    fflush(stdout);
    return seed;
}

double tu_uniform(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return (double)((x * 0x2545F4914F6CDD1Dull) >> 11) * (1.0 / 9007199254740992.0);
}

int64_t tu_randint(uint64_t *s, int64_t lo, int64_t hi) { return lo + (int64_t)(tu_uniform(s) * (double)(hi - lo + 1)); }

double tu_get(const void *p, tridi_dtype t, int64_t i)
{
    return t == TRIDI_FLOAT64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

void tu_set(void *p, tridi_dtype t, int64_t i, double v)
{
    if (t == TRIDI_FLOAT64)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

int64_t tu_index(const tridi_grid *g, int64_t i, int64_t j, int64_t k)
{
    int64_t e0 = g->ubound[0] - g->lbound[0] + 1, e1 = g->ubound[1] - g->lbound[1] + 1;
    int64_t off = (i - g->lbound[0]) + (j - g->lbound[1]) * e0;
    if (g->ndim == 3)
        off += (k - g->lbound[2]) * e0 * e1;
    return off;
}

static int64_t grid_cells(const tridi_grid *g)
{
    int64_t c = 1;
    for (int a = 0; a < g->ndim; ++a)
        c *= g->ubound[a] - g->lbound[a] + 1;
    return c;
}

size_t tu_esize(tridi_dtype t) { return t == TRIDI_FLOAT64 ? 8 : 4; }

int tu_system_alloc(tu_system *s, const tridi_grid *grid, tridi_dtype lt, tridi_dtype dt, tridi_dtype ut,
                    tridi_dtype rt, tridi_dtype xt, uint64_t *rng)
{
    memset(s, 0, sizeof *s);
    s->grid = *grid;
    s->cells = grid_cells(grid);
    size_t c = (size_t)s->cells;
    void *lower = malloc(c * tu_esize(lt)), *diag = malloc(c * tu_esize(dt)), *upper = malloc(c * tu_esize(ut));
    void *rhs = malloc(c * tu_esize(rt)), *x = malloc(c * tu_esize(xt)), *xb = malloc(c * tu_esize(xt));
    if (!lower || !diag || !upper || !rhs || !x || !xb) {
        free(lower), free(diag), free(upper), free(rhs), free(x), free(xb);
        return -1;
    }
    for (int64_t i = 0; i < s->cells; ++i) {
        double d = 2.0 * tu_uniform(rng) - 1.0, f = 2.0 * tu_uniform(rng) - 1.0;
        double e = fabs(d) + fabs(f) + 0.5 + 2.0 * tu_uniform(rng);
        if (tu_uniform(rng) < 0.3)
            e = -e;
        tu_set(lower, lt, i, d);
        tu_set(diag, dt, i, e);
        tu_set(upper, ut, i, f);
        tu_set(rhs, rt, i, 10.0 * tu_uniform(rng) - 5.0);
    }
    s->a = (tridi_arrays){lower, lt, diag, dt, upper, ut, rhs, rt, x, xt};
    s->x_before = xb;
    tu_poison_x(s, rng);
    return 0;
}

void tu_system_free(tu_system *s)
{
    free((void *)s->a.lower);
    free((void *)s->a.diag);
    free((void *)s->a.upper);
    free((void *)s->a.rhs);
    free(s->a.x);
    free(s->x_before);
    memset(s, 0, sizeof *s);
}

void tu_poison_x(tu_system *s, uint64_t *rng)
{
    /* A mix of NaN and large values: a cell the solver forgets to write fails the comparison. */
    for (int64_t i = 0; i < s->cells; ++i)
        tu_set(s->a.x, s->a.x_type, i, tu_uniform(rng) < 0.5 ? NAN : 1e30 * (tu_uniform(rng) + 1.0));
    memcpy(s->x_before, s->a.x, (size_t)s->cells * tu_esize(s->a.x_type));
}

int tu_reference_solve(const tridi_grid *g, tridi_axis axis, const int64_t lo[3], const int64_t hi[3],
                       const tridi_arrays *a)
{
    int64_t L[3] = {lo[0], lo[1], g->ndim == 3 ? lo[2] : 1}, H[3] = {hi[0], hi[1], g->ndim == 3 ? hi[2] : 1};
    for (int ax = 0; ax < 3; ++ax)
        if (H[ax] < L[ax])
            return 0;
    int o1 = axis == 0 ? 1 : 0, o2 = axis == 2 ? 1 : 2;
    int64_t n = H[axis] - L[axis] + 1;
    double *W = malloc(sizeof(double) * (size_t)n), *G = malloc(sizeof(double) * (size_t)n);
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)n);
    int rc = 0;
    for (int64_t c2 = L[o2]; c2 <= H[o2]; ++c2)
        for (int64_t c1 = L[o1]; c1 <= H[o1]; ++c1) {
            int64_t cell[3];
            cell[o1] = c1;
            cell[o2] = c2;
            for (int64_t m = 0; m < n; ++m) {
                cell[axis] = L[axis] + m;
                idx[m] = tu_index(g, cell[0], cell[1], cell[2]);
            }
            /* MOHID: VECW(first) = -F/E, VECG(first) = Ti/E; AUX = E + D*VECW(m-1) */
            double e = tu_get(a->diag, a->diag_type, idx[0]);
            if (e == 0.0)
                rc = -1;
            W[0] = n > 1 ? -tu_get(a->upper, a->upper_type, idx[0]) / e : 0.0;
            G[0] = tu_get(a->rhs, a->rhs_type, idx[0]) / e;
            for (int64_t m = 1; m < n; ++m) {
                double d = tu_get(a->lower, a->lower_type, idx[m]);
                double aux = tu_get(a->diag, a->diag_type, idx[m]) + d * W[m - 1];
                if (aux == 0.0)
                    rc = -1;
                W[m] = m < n - 1 ? -tu_get(a->upper, a->upper_type, idx[m]) / aux : 0.0;
                G[m] = (tu_get(a->rhs, a->rhs_type, idx[m]) - d * G[m - 1]) / aux;
            }
            tu_set(a->x, a->x_type, idx[n - 1], G[n - 1]);
            for (int64_t m = n - 2; m >= 0; --m)
                tu_set(a->x, a->x_type, idx[m], W[m] * tu_get(a->x, a->x_type, idx[m + 1]) + G[m]);
        }
    free(W);
    free(G);
    free(idx);
    return rc;
}

double tu_tolerance(tridi_dtype x_type) { return x_type == TRIDI_FLOAT64 ? 1e-11 : 2e-5; }

static int in_box(const tridi_grid *g, const int64_t lo[3], const int64_t hi[3], const int64_t c[3])
{
    for (int a = 0; a < g->ndim; ++a)
        if (c[a] < lo[a] || c[a] > hi[a])
            return 0;
    return 1;
}

int64_t tu_check(const char *label, const tu_system *s, const void *xref, const int64_t lo[3], const int64_t hi[3],
                 tridi_axis axis, double tol)
{
    /* Each line's scale once, for all its cells: scanning the line again for every cell made the check
     * quadratic in the line length (seconds for a 10M-cell grid of 400-unknown lines). */
    const tridi_grid *g = &s->grid;
    double *scale = calloc((size_t)s->cells, sizeof(double));
    if (!scale) {
        printf("  %s: no memory for the line scales of %lld cells\n", label, (long long)s->cells);
        return 1;
    }
    const int o1 = axis == 0 ? 1 : 0, o2 = axis == 2 ? 1 : 2;
    const int64_t L2 = g->ndim == 3 ? lo[o2] : 1, H2 = g->ndim == 3 ? hi[o2] : 1;
    for (int64_t c2 = L2; c2 <= H2; ++c2)
        for (int64_t c1 = lo[o1]; c1 <= hi[o1]; ++c1) {
            int64_t c[3];
            c[o1] = c1;
            c[o2] = c2;
            double mx = 0.0; /* the max |xref| along the line */
            for (c[axis] = lo[axis]; c[axis] <= hi[axis]; ++c[axis]) {
                const double v = fabs(tu_get(xref, s->a.x_type, tu_index(g, c[0], c[1], c[2])));
                if (v > mx)
                    mx = v;
            }
            for (c[axis] = lo[axis]; c[axis] <= hi[axis]; ++c[axis])
                scale[tu_index(g, c[0], c[1], c[2])] = mx;
        }
    const int64_t bad = tu_check_scaled(label, s, xref, lo, hi, tol, scale);
    free(scale);
    return bad;
}

int64_t tu_check_scaled(const char *label, const tu_system *s, const void *xref, const int64_t lo[3],
                        const int64_t hi[3], double tol, const double *line_scale)
{
    const tridi_grid *g = &s->grid;
    int64_t bad = 0;
    size_t es = tu_esize(s->a.x_type);
    int64_t K0 = g->ndim == 3 ? g->lbound[2] : 1, K1 = g->ndim == 3 ? g->ubound[2] : 1;
    /* line_scale[cell]: the max |xref| along the cell's line, so the bound is a line-wise relative error. */
    for (int64_t k = K0; k <= K1; ++k)
        for (int64_t j = g->lbound[1]; j <= g->ubound[1]; ++j)
            for (int64_t i = g->lbound[0]; i <= g->ubound[0]; ++i) {
                int64_t c[3] = {i, j, k}, off = tu_index(g, i, j, k);
                if (!in_box(g, lo, hi, c)) {
                    if (memcmp((const char *)s->a.x + off * es, (const char *)s->x_before + off * es, es)) {
                        if (bad++ < 5)
                            printf("  %s: cell (%lld,%lld,%lld) outside the box was modified: %g (was %g)\n", label,
                                   (long long)i, (long long)j, (long long)k, tu_get(s->a.x, s->a.x_type, off),
                                   tu_get(s->x_before, s->a.x_type, off));
                    }
                    continue;
                }
                double scale = line_scale[off];
                if (scale < 1e-30)
                    scale = 1e-30;
                double got = tu_get(s->a.x, s->a.x_type, off), want = tu_get(xref, s->a.x_type, off);
                double err = fabs(got - want) / scale;
                if (!(err <= tol)) {
                    if (bad++ < 5)
                        printf("  %s: cell (%lld,%lld,%lld): got %.9g, reference %.9g, relative error %.3g > %.3g\n",
                               label, (long long)i, (long long)j, (long long)k, got, want, err, tol);
                }
            }
    if (bad)
        printf("  %s: %lld bad cells\n", label, (long long)bad);
    return bad;
}

int64_t tu_check_unchanged(const char *label, const tu_system *s)
{
    size_t es = tu_esize(s->a.x_type);
    int64_t bad = 0;
    for (int64_t i = 0; i < s->cells; ++i)
        if (memcmp((const char *)s->a.x + i * es, (const char *)s->x_before + i * es, es))
            if (bad++ < 3)
                printf("  %s: x changed at offset %lld although the call failed\n", label, (long long)i);
    return bad;
}

int tu_checks, tu_failures;

void tu_expect(const char *what, tridi_status got, tridi_status want, const char *needle)
{
    tu_checks++;
    const char *msg = tridi_error_message();
    if (got != want || (needle && !strstr(msg, needle))) {
        tu_failures++;
        printf("FAILED %s: got %s, want %s; message \"%s\" (should contain \"%s\")\n", what, tridi_status_name(got),
               tridi_status_name(want), msg, needle ? needle : "");
    } else {
        printf("ok %s: %s%s%s\n", what, tridi_status_name(got), got ? ": " : "", got ? msg : "");
    }
}

void tu_expect_true(const char *what, int ok)
{
    tu_checks++;
    if (!ok) {
        tu_failures++;
        printf("FAILED %s\n", what);
    } else {
        printf("ok %s\n", what);
    }
}

int64_t tu_line_cell(const tridi_grid *g, const int64_t lo[3], const int64_t hi[3], tridi_axis axis, int64_t l,
                     int64_t m, int64_t c[3])
{
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t n1 = hi[a1] - lo[a1] + 1;
    c[axis] = lo[axis] + m;
    c[a1] = lo[a1] + l % n1;
    c[a2] = lo[a2] + l / n1;
    return tu_index(g, c[0], c[1], c[2]);
}

void tu_oracle_line(const tu_system *s, const int64_t lo[3], const int64_t hi[3], tridi_axis axis, int64_t l,
                    long double *xo)
{
    const int64_t n = hi[axis] - lo[axis] + 1;
    long double *w = malloc(2 * (size_t)n * sizeof *w), *g = w + n;
    int64_t c[3];
    for (int64_t m = 0; m < n; ++m) {
        const int64_t i = tu_line_cell(&s->grid, lo, hi, axis, l, m, c);
        const long double d = m ? tu_get(s->a.lower, s->a.lower_type, i) : 0.0L;
        const long double f = m < n - 1 ? tu_get(s->a.upper, s->a.upper_type, i) : 0.0L;
        const long double den = tu_get(s->a.diag, s->a.diag_type, i) + d * (m ? w[m - 1] : 0.0L);
        w[m] = -f / den;
        g[m] = (tu_get(s->a.rhs, s->a.rhs_type, i) - d * (m ? g[m - 1] : 0.0L)) / den;
    }
    for (int64_t m = n - 1; m >= 0; --m) {
        xo[m] = m == n - 1 ? g[m] : w[m] * xo[m + 1] + g[m];
        if (s->a.x_type == TRIDI_FLOAT32)
            xo[m] = (float)xo[m];
    }
    free(w);
}

int64_t tu_line_of(const tridi_grid *g, const int64_t lo[3], const int64_t hi[3], tridi_axis axis, const int64_t c[3])
{
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t c2 = g->ndim == 2 ? 0 : c[a2] - lo[a2]; /* a 2D grid's k is not a line axis */
    return (c[a1] - lo[a1]) + (hi[a1] - lo[a1] + 1) * c2;
}

int64_t tu_check_lines(const char *label, const tu_system *s, const int64_t lo[3], const int64_t hi[3],
                       tridi_axis axis, double tol, const int64_t *failing, int nfailing)
{
    const tridi_grid *g = &s->grid;
    const int64_t L[3] = {lo[0], lo[1], g->ndim == 3 ? lo[2] : 1}, H[3] = {hi[0], hi[1], g->ndim == 3 ? hi[2] : 1};
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t n = H[axis] - L[axis] + 1, nlines = (H[a1] - L[a1] + 1) * (H[a2] - L[a2] + 1);
    const size_t es = tu_esize(s->a.x_type);
    long double *xo = malloc(sizeof *xo * (size_t)n);
    unsigned char *in_box = calloc((size_t)s->cells, 1);
    int64_t bad = 0;
    for (int64_t l = 0; l < nlines; ++l) {
        int fails = 0;
        for (int k = 0; k < nfailing; ++k)
            fails |= failing[k] == l;
        int64_t c[3];
        if (!fails)
            tu_oracle_line(s, L, H, axis, l, xo);
        long double scale = 0.0L;
        for (int64_t m = 0; m < n && !fails; ++m)
            scale = fabsl(xo[m]) > scale ? fabsl(xo[m]) : scale;
        for (int64_t m = 0; m < n; ++m) {
            const int64_t i = tu_line_cell(g, L, H, axis, l, m, c);
            in_box[i] = 1;
            if (fails) {
                if (memcmp((const char *)s->a.x + i * es, (const char *)s->x_before + i * es, es) && bad++ < 3)
                    printf("  %s: failing line %lld was written at (%lld, %lld, %lld)\n", label, (long long)l,
                           (long long)c[0], (long long)c[1], (long long)c[2]);
            } else {
                const double v = tu_get(s->a.x, s->a.x_type, i);
                if (!(fabsl((long double)v - xo[m]) <= tol * (scale > 0 ? scale : 1.0L)) && bad++ < 3)
                    printf("  %s: line %lld at (%lld, %lld, %lld): %.9g, oracle %.9Lg (every line but the failing ones "
                           "must be answered)\n",
                           label, (long long)l, (long long)c[0], (long long)c[1], (long long)c[2], v, xo[m]);
            }
        }
    }
    for (int64_t i = 0; i < s->cells; ++i)
        if (!in_box[i] && memcmp((const char *)s->a.x + i * es, (const char *)s->x_before + i * es, es) && bad++ < 3)
            printf("  %s: x changed at offset %lld outside the box\n", label, (long long)i);
    free(xo);
    free(in_box);
    return bad;
}

int tu_dev_upload(tridi_context ctx, const tu_system *s, tu_dev_set *d)
{
    const void *h[5] = {s->a.lower, s->a.diag, s->a.upper, s->a.rhs, s->a.x};
    const tridi_dtype t[5] = {s->a.lower_type, s->a.diag_type, s->a.upper_type, s->a.rhs_type, s->a.x_type};
    for (int r = 0; r < 5; ++r) {
        d->bytes[r] = (size_t)s->cells * tu_esize(t[r]);
        if (tridi_device_alloc(ctx, d->bytes[r], &d->p[r]) || tridi_copy_to_device(ctx, d->p[r], h[r], d->bytes[r])) {
            printf("  device alloc/copy: %s\n", tridi_error_message());
            return 1;
        }
    }
    return 0;
}

void tu_dev_free(tridi_context ctx, tu_dev_set *d)
{
    for (int r = 0; r < 5; ++r)
        tridi_device_free(ctx, d->p[r]);
}

tridi_arrays tu_dev_arrays(const tu_system *s, const tu_dev_set *d)
{
    tridi_arrays a = s->a;
    a.lower = d->p[0];
    a.diag = d->p[1];
    a.upper = d->p[2];
    a.rhs = d->p[3];
    a.x = d->p[4];
    return a;
}
