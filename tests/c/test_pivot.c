/* tridi_config.pivoting (issue 24 item 6): Thomas without pivoting answers [[1e-17, 1], [1, 1]] x = [1, 2]
 * with x = (0, 1) (exact: (1, 1)) and calls [[0, 1], [1, 1]] a zero pivot. TRIDI_PIVOT_CHECK must refuse
 * the first (TRIDI_ERROR_UNSTABLE, line and cell named, x untouched); TRIDI_PIVOT_FALLBACK must answer
 * both, and random non-dominant but well-conditioned lines, within rounding of a long double dense LU
 * with partial pivoting (each line's bound counting its condition and its elimination's growth);
 * singular lines and non-finite inputs still fail with x untouched. Every axis, all-double and MOHID's
 * mixed types. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NRAND 24 /* unknowns of the random lines */

static void expect_true(const char *what, int ok)
{
    tu_checks++;
    if (!ok) {
        tu_failures++;
        printf("FAILED %s\n", what);
    }
}

static tridi_context context_with(tridi_pivoting pivoting)
{
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    cfg.pivoting = pivoting;
    /* All or nothing, so that "x untouched" below holds for the backend's zero pivots too (the pivot pass's
     * own failures leave x unchanged whatever on_error says). */
    cfg.on_error = TRIDI_ON_ERROR_CALL;
    tridi_context c = NULL;
    tu_expect("create", tridi_create(&c, &cfg), TRIDI_SUCCESS, NULL);
    return c;
}

/* Offset of unknown m of the line through cell (c[0], c[1], c[2]) along axis. */
static int64_t at(const tridi_grid *g, const int64_t c[3], int axis, int64_t lo_axis, int64_t m)
{
    int64_t q[3] = {c[0], c[1], c[2]};
    q[axis] = lo_axis + m;
    return tu_index(g, q[0], q[1], q[2]);
}

/* Dense Gaussian elimination with partial pivoting in long double: the oracle. Also returns the
 * infinity-norm condition number (from the inverse by Gauss-Jordan). */
static void dense_oracle(int n, const double *a, const double *b, const double *c, const double *r, long double *x,
                         long double *cond)
{
    long double A[NRAND][2 * NRAND + 1];
    for (int i = 0; i < n; ++i) {
        for (int j = 0; j < 2 * n + 1; ++j)
            A[i][j] = 0.0L;
        if (i)
            A[i][i - 1] = a[i];
        A[i][i] = b[i];
        if (i + 1 < n)
            A[i][i + 1] = c[i];
        A[i][n + i] = 1.0L;
        A[i][2 * n] = r[i];
    }
    long double norm = 0.0L;
    for (int i = 0; i < n; ++i) {
        long double s = 0.0L;
        for (int j = 0; j < n; ++j)
            s += fabsl(A[i][j]);
        if (s > norm)
            norm = s;
    }
    for (int k = 0; k < n; ++k) {
        int piv = k;
        for (int i = k + 1; i < n; ++i)
            if (fabsl(A[i][k]) > fabsl(A[piv][k]))
                piv = i;
        for (int j = 0; j < 2 * n + 1; ++j) {
            long double t = A[k][j];
            A[k][j] = A[piv][j];
            A[piv][j] = t;
        }
        for (int i = 0; i < n; ++i) {
            if (i == k || A[i][k] == 0.0L)
                continue;
            long double f = A[i][k] / A[k][k];
            for (int j = k; j < 2 * n + 1; ++j)
                A[i][j] -= f * A[k][j];
        }
    }
    long double inorm = 0.0L;
    for (int i = 0; i < n; ++i) {
        x[i] = A[i][2 * n] / A[i][i];
        long double s = 0.0L;
        for (int j = 0; j < n; ++j)
            s += fabsl(A[i][n + j] / A[i][i]);
        if (s > inorm)
            inorm = s;
    }
    *cond = norm * inorm;
}

/* The 2x2 systems of the issue on one line of a dominant random system, along every axis. */
static void issue_cases(tridi_dtype diag_t, tridi_dtype other_t, uint64_t *rng)
{
    tridi_grid g = {3, {0, 0, 0}, {6, 7, 5}};
    tridi_context none = context_with(TRIDI_PIVOT_NONE), check = context_with(TRIDI_PIVOT_CHECK),
                  fallback = context_with(TRIDI_PIVOT_FALLBACK);
    for (int axis = 0; axis < 3; ++axis) {
        for (int zero = 0; zero < 2; ++zero) {
            tu_system s;
            tu_system_alloc(&s, &g, other_t, diag_t, other_t, other_t, other_t, rng);
            int64_t lo[3] = {1, 1, 1}, hi[3] = {5, 6, 4};
            lo[axis] = 2;
            hi[axis] = 3;
            /* The reference for the dominant lines, before the bad line is planted. */
            tu_poison_x(&s, rng);
            const size_t xbytes = (size_t)s.cells * tu_esize(other_t);
            void *xref = malloc(xbytes);
            memcpy(xref, s.a.x, xbytes);
            tridi_arrays r = s.a;
            r.x = xref;
            tu_reference_solve(&g, (tridi_axis)axis, lo, hi, &r);
            int64_t c[3] = {3, 4, 2};
            const int64_t c0 = at(&g, c, axis, lo[axis], 0), c1 = at(&g, c, axis, lo[axis], 1);
            tu_set((void *)s.a.diag, diag_t, c0, zero ? 0.0 : 1e-17);
            tu_set((void *)s.a.upper, other_t, c0, 1.0);
            tu_set((void *)s.a.lower, other_t, c1, 1.0);
            tu_set((void *)s.a.diag, diag_t, c1, 1.0);
            tu_set((void *)s.a.rhs, other_t, c0, 1.0);
            tu_set((void *)s.a.rhs, other_t, c1, 2.0);
            tu_set(xref, other_t, c0, 1.0);
            tu_set(xref, other_t, c1, 1.0);
            char label[160];
            snprintf(label, sizeof label, "axis %d, diag %s, %s types", axis, zero ? "0" : "1e-17",
                     diag_t == other_t ? "double" : "mixed");
            int64_t cell[3];
            char want_cell[64];
            int64_t q[3] = {c[0], c[1], c[2]};
            q[axis] = lo[axis];
            snprintf(want_cell, sizeof want_cell, "(%lld, %lld, %lld)", (long long)q[0], (long long)q[1],
                     (long long)q[2]);

            /* No pivoting: Thomas's answer (documented) or a zero pivot. */
            tridi_status st = tridi_solve(none, &g, (tridi_axis)axis, lo, hi, &s.a);
            if (zero) {
                tu_expect(label, st, TRIDI_ERROR_ZERO_PIVOT, NULL);
            } else {
                tu_expect(label, st, TRIDI_SUCCESS, NULL);
                expect_true("without pivoting x(1) is Thomas's 0, not 1 (the documented failure)",
                            fabs(tu_get(s.a.x, other_t, c0)) < 0.5);
            }

            /* The check: refused, the cell named, x untouched. */
            tu_poison_x(&s, rng);
            st = tridi_solve(check, &g, (tridi_axis)axis, lo, hi, &s.a);
            tu_expect(label, st, zero ? TRIDI_ERROR_ZERO_PIVOT : TRIDI_ERROR_UNSTABLE, zero ? NULL : want_cell);
            if (!zero) {
                expect_true("UNSTABLE names the count", strstr(tridi_error_message(), "1 line like this") != NULL);
                expect_true("tridi_error_cell gives the small pivot's cell",
                            tridi_error_cell(cell) == 3 && cell[0] == q[0] && cell[1] == q[1] && cell[2] == q[2]);
            }
            tu_checks++;
            if (tu_check_unchanged(label, &s))
                tu_failures++;

            /* The fallback: every line answered, the bad one by partial pivoting. */
            tu_poison_x(&s, rng);
            tu_expect(label, tridi_solve(fallback, &g, (tridi_axis)axis, lo, hi, &s.a), TRIDI_SUCCESS, NULL);
            tu_checks++;
            if (tu_check(label, &s, xref, lo, hi, (tridi_axis)axis, tu_tolerance(other_t)))
                tu_failures++;
            free(xref);
            tu_system_free(&s);
        }
    }
    tridi_destroy(none);
    tridi_destroy(check);
    tridi_destroy(fallback);
}

/* A line's growth as src/pivot.c measures it: the largest |L||U| over |T| row sum of Thomas's elimination
 * without pivoting (docs/errors.md, "When Thomas is stable"). */
static double thomas_growth(int n, const double *a, const double *b, const double *c)
{
    long double w = 0.0L, worst = 0.0L;
    for (int m = 0; m < n; ++m) {
        const long double pivot = b[m] - a[m] * w;
        const long double g = (fabsl(a[m]) + fabsl(a[m] * w) + fabsl(pivot) + fabsl(c[m])) /
                              (fabsl(a[m]) + fabsl(b[m]) + fabsl(c[m]));
        if (!(g <= worst))
            worst = g;
        w = c[m] / pivot;
    }
    return (double)worst;
}

/* The unit roundoff of x's type. */
static double unit_of(tridi_dtype other_t) { return other_t == TRIDI_FLOAT64 ? 1.1e-16 : 6e-8; }

/* A line re-solved with partial pivoting in double and rounded to x's type once (a line past the growth
 * limit): a backward-stable solve of condition cond plus that rounding (relative, infinity norm). */
static double pivoted_tol(tridi_dtype other_t, double cond)
{
    return 64.0 * NRAND * 1.1e-16 * cond + 2.0 * unit_of(other_t);
}

/* The fallback's bound on a line of condition cond and growth g. A line under the growth limit keeps Thomas,
 * whose backward error is the unit roundoff times |L||U| (so g) and whose answers are rounded to x's type at
 * every unknown (MOHID's arithmetic): both count times the condition number. */
static double line_tol(tridi_dtype other_t, double cond, double g)
{
    const double stable = pivoted_tol(other_t, cond);
    return g > 1e6 ? stable : stable + 4.0 * unit_of(other_t) * cond * (g > 1.0 ? g : 1.0);
}

/* Random non-dominant lines (entries in [-1, 1], a third with a tiny first diagonal), condition <= 1e6,
 * against the long double oracle. */
static void random_lines(tridi_dtype diag_t, tridi_dtype other_t, uint64_t *rng)
{
    tridi_context none = context_with(TRIDI_PIVOT_NONE), check = context_with(TRIDI_PIVOT_CHECK),
                  fallback = context_with(TRIDI_PIVOT_FALLBACK);
    for (int axis = 0; axis < 3; ++axis) {
        tridi_grid g = {3, {0, 0, 0}, {6, 6, 6}};
        g.ubound[axis] = NRAND + 1;
        int64_t lo[3] = {1, 1, 1}, hi[3] = {5, 4, 3};
        hi[axis] = NRAND;
        tu_system s;
        tu_system_alloc(&s, &g, other_t, diag_t, other_t, other_t, other_t, rng);
        const int64_t nl1 = hi[axis == 0 ? 1 : 0] - lo[axis == 0 ? 1 : 0] + 1;
        const int64_t nl2 = hi[axis == 2 ? 1 : 2] - lo[axis == 2 ? 1 : 2] + 1;
        const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
        const int64_t nlines = nl1 * nl2;
        long double(*oracle)[NRAND] = malloc(sizeof *oracle * (size_t)nlines);
        double *line_cond = malloc(sizeof *line_cond * (size_t)nlines);
        double *line_growth = malloc(sizeof *line_growth * (size_t)nlines);
        double worst_cond = 0.0;
        int planted = 0;
        for (int64_t l = 0; l < nlines; ++l) {
            int64_t c[3] = {0, 0, 0};
            c[a1] = lo[a1] + l % nl1;
            c[a2] = lo[a2] + l / nl1;
            double a[NRAND], b[NRAND], cc[NRAND], r[NRAND];
            long double cond = 0.0L;
            do {
                for (int m = 0; m < NRAND; ++m) {
                    /* values the storage types hold exactly, so the oracle sees what tridi sees */
                    a[m] = m ? (double)(float)(2.0 * tu_uniform(rng) - 1.0) : 0.0;
                    b[m] = (double)(float)(2.0 * tu_uniform(rng) - 1.0);
                    cc[m] = m + 1 < NRAND ? (double)(float)(2.0 * tu_uniform(rng) - 1.0) : 0.0;
                    r[m] = (double)(float)(2.0 * tu_uniform(rng) - 1.0);
                }
                if (l % 3 == 0)
                    b[0] = diag_t == TRIDI_FLOAT64 ? 1e-13 * (1.0 + tu_uniform(rng)) : 1e-13;
                dense_oracle(NRAND, a, b, cc, r, oracle[l], &cond);
            } while (!(cond <= 1e6L));
            planted += l % 3 == 0;
            if ((double)cond > worst_cond)
                worst_cond = (double)cond;
            line_cond[l] = (double)cond;
            line_growth[l] = thomas_growth(NRAND, a, b, cc);
            for (int m = 0; m < NRAND; ++m) {
                const int64_t o = at(&g, c, axis, lo[axis], m);
                if (m)
                    tu_set((void *)s.a.lower, other_t, o, a[m]);
                tu_set((void *)s.a.diag, diag_t, o, b[m]);
                if (m + 1 < NRAND)
                    tu_set((void *)s.a.upper, other_t, o, cc[m]);
                tu_set((void *)s.a.rhs, other_t, o, r[m]);
            }
        }
        /* error of each context's answer against the oracle, max over lines (relative, infinity norm) */
        tridi_context ctxs[3] = {none, check, fallback};
        double err[3] = {0, 0, 0}, err_planted[3] = {0, 0, 0}, over_tol = 0.0; /* the fallback's worst err / tol */
        tridi_status st[3];
        for (int k = 0; k < 3; ++k) {
            tu_poison_x(&s, rng);
            st[k] = tridi_solve(ctxs[k], &g, (tridi_axis)axis, lo, hi, &s.a);
            if (st[k])
                continue;
            for (int64_t l = 0; l < nlines; ++l) {
                int64_t c[3] = {0, 0, 0};
                c[a1] = lo[a1] + l % nl1;
                c[a2] = lo[a2] + l / nl1;
                long double num = 0.0L, den = 0.0L;
                for (int m = 0; m < NRAND; ++m) {
                    long double d = (long double)tu_get(s.a.x, other_t, at(&g, c, axis, lo[axis], m)) - oracle[l][m];
                    if (isnan((double)d))
                        d = INFINITY;
                    if (fabsl(d) > num)
                        num = fabsl(d);
                    if (fabsl(oracle[l][m]) > den)
                        den = fabsl(oracle[l][m]);
                }
                const double e = (double)(num / den);
                if (e > err[k])
                    err[k] = e;
                if (l % 3 == 0 && e > err_planted[k])
                    err_planted[k] = e;
                const double of_tol = e / line_tol(other_t, line_cond[l], line_growth[l]);
                if (k == 2 && of_tol > over_tol)
                    over_tol = of_tol;
            }
        }
        const double tol_planted = pivoted_tol(other_t, worst_cond);
        printf("  random lines along axis %d (%s types): %lld lines, %d with a tiny first pivot, condition <= %.2g: "
               "error without pivoting %.2g (%s), check %s, fallback %.2g on the tiny-pivot lines (tolerance %.2g), "
               "%.2g on all (%.2g of its line's tolerance at worst)\n",
               axis, diag_t == other_t ? "double" : "mixed", (long long)nlines, planted, worst_cond, err_planted[0],
               tridi_status_name(st[0]), tridi_status_name(st[1]), err_planted[2], tol_planted, err[2], over_tol);
        expect_true("without pivoting a tiny-pivot line is far off (the test has teeth)",
                    st[0] != TRIDI_SUCCESS || (err_planted[0] > 1e-9 && err_planted[0] > 1e3 * err_planted[2]));
        expect_true("the check flags the random lines", st[1] == TRIDI_ERROR_UNSTABLE);
        expect_true("the fallback succeeds", st[2] == TRIDI_SUCCESS);
        expect_true("the fallback agrees with the long double oracle on the tiny-pivot lines",
                    st[2] == TRIDI_SUCCESS && err_planted[2] <= tol_planted);
        expect_true("the fallback agrees with the long double oracle on every line",
                    st[2] == TRIDI_SUCCESS && over_tol <= 1.0);
        free(oracle);
        free(line_cond);
        free(line_growth);
        tu_system_free(&s);
    }
    tridi_destroy(none);
    tridi_destroy(check);
    tridi_destroy(fallback);
}

/* What pivoting cannot save, and what it must not change. */
static void hard_cases(uint64_t *rng)
{
    tridi_grid g = {3, {0, 0, 0}, {7, 6, 5}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {6, 5, 4};
    tu_system s;
    tu_system_alloc(&s, &g, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, rng);
    tridi_context none = context_with(TRIDI_PIVOT_NONE), check = context_with(TRIDI_PIVOT_CHECK),
                  fallback = context_with(TRIDI_PIVOT_FALLBACK);

    /* Dominant systems: the fallback changes nothing, bit for bit. */
    tu_poison_x(&s, rng);
    tu_expect("dominant, no pivoting", tridi_solve(none, &g, TRIDI_AXIS_Y, lo, hi, &s.a), TRIDI_SUCCESS, NULL);
    const size_t xbytes = (size_t)s.cells * sizeof(double);
    double *x_none = malloc(xbytes);
    memcpy(x_none, s.a.x, xbytes);
    tu_expect("dominant, check", tridi_solve(check, &g, TRIDI_AXIS_Y, lo, hi, &s.a), TRIDI_SUCCESS, NULL);
    expect_true("check: same answer as no pivoting", !memcmp(x_none, s.a.x, xbytes));
    tu_expect("dominant, fallback", tridi_solve(fallback, &g, TRIDI_AXIS_Y, lo, hi, &s.a), TRIDI_SUCCESS, NULL);
    expect_true("fallback: same answer as no pivoting", !memcmp(x_none, s.a.x, xbytes));

    /* Several flagged lines: the check counts them. */
    double *diag = (double *)s.a.diag, *rhs = (double *)s.a.rhs;
    const int64_t t1 = tu_index(&g, 1, 2, 3), t2 = tu_index(&g, 1, 4, 1), t3 = tu_index(&g, 1, 5, 4);
    const double d1 = diag[t1], d2 = diag[t2], d3 = diag[t3];
    diag[t1] = diag[t2] = diag[t3] = 1e-14;
    tu_poison_x(&s, rng);
    tu_expect("three flagged lines", tridi_solve(check, &g, TRIDI_AXIS_X, lo, hi, &s.a), TRIDI_ERROR_UNSTABLE,
              "3 lines like this");
    tu_checks++;
    if (tu_check_unchanged("three flagged lines", &s))
        tu_failures++;

    /* A non-finite input with flagged lines about: NONFINITE, x untouched. */
    const int64_t tn = tu_index(&g, 4, 3, 2);
    const double rn = rhs[tn];
    rhs[tn] = NAN;
    tu_expect("NaN rhs, fallback", tridi_solve(fallback, &g, TRIDI_AXIS_X, lo, hi, &s.a), TRIDI_ERROR_NONFINITE,
              "(4, 3, 2)");
    tu_checks++;
    if (tu_check_unchanged("NaN rhs, fallback", &s))
        tu_failures++;
    rhs[tn] = rn;

    /* A singular line: rows (1, 1) and (1, 1) at x = 2, 3 of line (j, k) = (5, 4). */
    const int64_t s0 = tu_index(&g, 2, 5, 4), s1 = tu_index(&g, 3, 5, 4), s2 = tu_index(&g, 4, 5, 4);
    double *lower = (double *)s.a.lower, *upper = (double *)s.a.upper;
    const double keep[6] = {diag[s0], upper[s0], lower[s1], diag[s1], upper[s1], lower[s0]};
    diag[s0] = upper[s0] = lower[s1] = diag[s1] = 1.0;
    upper[s1] = 0.0;
    lower[s0] = 0.0; /* the line splits before x = 2, so its rows 2..3 alone are singular */
    const double keep_l2 = lower[s2];
    lower[s2] = 0.0;
    const int64_t s_before = tu_index(&g, 1, 5, 4);
    const double keep_u1 = upper[s_before];
    upper[s_before] = 0.0;
    tu_poison_x(&s, rng);
    tu_expect("singular line, fallback", tridi_solve(fallback, &g, TRIDI_AXIS_X, lo, hi, &s.a),
              TRIDI_ERROR_ZERO_PIVOT, "singular");
    int64_t cell[3];
    expect_true("singular line: the cell named is (3, 5, 4)",
                tridi_error_cell(cell) == 3 && cell[0] == 3 && cell[1] == 5 && cell[2] == 4);
    tu_checks++;
    if (tu_check_unchanged("singular line, fallback", &s))
        tu_failures++;
    diag[s0] = keep[0];
    upper[s0] = keep[1];
    lower[s1] = keep[2];
    diag[s1] = keep[3];
    upper[s1] = keep[4];
    lower[s2] = keep_l2;
    upper[s_before] = keep_u1;
    lower[s0] = keep[5];

    /* With the singular line gone, the three flagged lines are answered by the fallback. */
    tu_poison_x(&s, rng);
    tu_expect("three flagged lines, fallback", tridi_solve(fallback, &g, TRIDI_AXIS_X, lo, hi, &s.a), TRIDI_SUCCESS,
              NULL);
    diag[t1] = d1;
    diag[t2] = d2;
    diag[t3] = d3;

    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.pivoting = 7;
    tridi_context bad = NULL;
    tu_expect("pivoting 7", tridi_create(&bad, &cfg), TRIDI_ERROR_INVALID_VALUE, "config->pivoting = 7");
    free(x_none);
    tu_system_free(&s);
    tridi_destroy(none);
    tridi_destroy(check);
    tridi_destroy(fallback);
}

/* The status names the first failing line, whatever fails on it: 3 lines of 6 unknowns along x, random
 * dominant systems with a failure planted on two of them (the fallback named a later NaN line before an
 * earlier line singular even with pivoting, and the check an unstable line before an earlier NaN or zero
 * pivot). x is untouched each time. */
static void first_failing_line(uint64_t *rng)
{
    for (int axis = 0; axis < 2; ++axis) {
        const int64_t nl = 3, n = 6;
        tridi_grid g = {2, {0, 0, 1}, {axis ? nl + 1 : n + 1, axis ? n + 1 : nl + 1, 1}};
        int64_t lo[3] = {1, 1, 1}, hi[3] = {g.ubound[0] - 1, g.ubound[1] - 1, 1};
        tu_system s;
        tu_system_alloc(&s, &g, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, rng);
        double *A[4] = {(double *)s.a.lower, (double *)s.a.diag, (double *)s.a.upper, (double *)s.a.rhs};
        double *keep = malloc(4 * (size_t)s.cells * sizeof(double));
        for (int r = 0; r < 4; ++r)
            memcpy(keep + r * s.cells, A[r], (size_t)s.cells * sizeof(double));
        tridi_context check = context_with(TRIDI_PIVOT_CHECK), fallback = context_with(TRIDI_PIVOT_FALLBACK);
        /* cell of unknown m (1-based) of line l (0-based) */
#define CELL(m, l) (axis ? tu_index(&g, (l) + 1, (m), 1) : tu_index(&g, (m), (l) + 1, 1))
        for (int c = 0; c < 3; ++c) {
            for (int r = 0; r < 4; ++r)
                memcpy(A[r], keep + r * s.cells, (size_t)s.cells * sizeof(double));
            char label[160], want_cell[32];
            int64_t fail_line = 0, fail_m = 0;
            tridi_context ctx = fallback;
            tridi_status want = TRIDI_ERROR_ZERO_PIVOT;
            if (c == 0) { /* line 0: row 2 all zeros (singular even with pivoting); line 2: NaN rhs */
                A[0][CELL(2, 0)] = A[1][CELL(2, 0)] = A[2][CELL(2, 0)] = 0.0;
                A[3][CELL(4, 2)] = NAN;
                fail_m = 0; /* the cell is the pivoting's: checked by line below */
            } else if (c == 1) { /* check: line 0 NaN diag at 3; line 1 unstable (tiny first pivot) */
                ctx = check;
                A[1][CELL(3, 0)] = NAN;
                A[1][CELL(1, 1)] = 1e-14;
                want = TRIDI_ERROR_NONFINITE;
                fail_m = 3;
            } else { /* check: line 0 zero pivot at 2 (diag = -lower * w); line 2 unstable */
                ctx = check;
                const double w = -A[2][CELL(1, 0)] / A[1][CELL(1, 0)];
                A[1][CELL(2, 0)] = -A[0][CELL(2, 0)] * w;
                A[1][CELL(1, 2)] = 1e-14;
                fail_m = 2;
            }
            snprintf(label, sizeof label, "first failing line, case %d, %s lines", c, axis ? "y" : "x");
            snprintf(want_cell, sizeof want_cell, "number %lld,", (long long)fail_line);
            tu_poison_x(&s, rng);
            tu_expect(label, tridi_solve(ctx, &g, (tridi_axis)axis, lo, hi, &s.a), want, want_cell);
            int64_t cell[3] = {0, 0, 0};
            const int nd = tridi_error_cell(cell);
            const int64_t line_of = axis ? cell[0] - 1 : cell[1] - 1, m_of = axis ? cell[1] : cell[0];
            printf("  cell named (%lld, %lld)\n", (long long)cell[0], (long long)cell[1]);
            expect_true("the cell is on line 0", nd == 2 && line_of == fail_line && (!fail_m || m_of == fail_m));
            tu_checks++;
            if (tu_check_unchanged(label, &s))
                tu_failures++;
        }
#undef CELL
        free(keep);
        tu_system_free(&s);
        tridi_destroy(check);
        tridi_destroy(fallback);
    }
}

int main(void)
{
    uint64_t rng = tu_seed("test_pivot");
    issue_cases(TRIDI_FLOAT64, TRIDI_FLOAT64, &rng);
    issue_cases(TRIDI_FLOAT64, TRIDI_FLOAT32, &rng);
    random_lines(TRIDI_FLOAT64, TRIDI_FLOAT64, &rng);
    random_lines(TRIDI_FLOAT64, TRIDI_FLOAT32, &rng);
    hard_cases(&rng);
    first_failing_line(&rng);
    printf("%d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
