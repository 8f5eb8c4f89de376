/* The Thomas core (src/thomas_core.h), alone and through tridi_solve on the CPU:
 * - the message table: every failure kind has its own words and a failing status; the cut solve's pivot
 *   checks refuse zero, non-finite and non-dominant pivots;
 * - the reduced band solve (tridi_band_solve, tridi_reduced_line): random dominant block systems answered like
 *   a long double dense elimination with partial pivoting, several right-hand sides as one each, a row that
 *   is not dominant or a NaN coefficient refused (NaN ends);
 * - each failure kind planted at a random unknown of a random diagonally dominant line is reported at that
 *   unknown, by both forms of the forward step (MOHID's divisions and the vector kernels' reciprocal),
 *   and a failing step leaves W and G as they were;
 * - the steps are MOHID's recurrence (bitwise equal to it written out here) and answer like a long double
 *   oracle on dominant lines;
 * - tridi_solve, every axis and type combination: each planted failure is reported with the table's
 *   status and words at its cell; under ON_ERROR_LINES (the default) its line is left untouched and every
 *   other line answered, under ON_ERROR_CALL x is unchanged. An infinite pivot (e + d*w overflowing while W and G stay
 *   finite) fails there: before the core's check it was answered as if the unknowns before it were 0. */
#include "testutil.h"
#include "thomas_core.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define N 12

static int checks, failures;

static void expect(int ok, const char *what)
{
    ++checks;
    if (!ok) {
        ++failures;
        printf("FAILED %s\n", what);
    }
}

/* ---- the message table ---- */
static void test_table(void)
{
    expect(tridi_fail_status(TRIDI_FAIL_NONE) == TRIDI_SUCCESS, "table: NONE is a success");
    for (int k = 1; k < TRIDI_FAIL_KINDS; ++k) {
        char what[160];
        const char *t = tridi_fail_text(k);
        snprintf(what, sizeof what, "table: kind %d has words and a failing status (%s, %s)", k, t,
                 tridi_status_name(tridi_fail_status(k)));
        expect(t && *t && tridi_fail_status(k) != TRIDI_SUCCESS &&
                   strcmp(t, tridi_fail_text(TRIDI_FAIL_KINDS)) != 0,
               what);
        for (int j = 0; j < k; ++j) {
            snprintf(what, sizeof what, "table: kinds %d and %d have different words", j, k);
            expect(strcmp(t, tridi_fail_text(j)) != 0, what);
        }
    }
    expect(tridi_fail_status(TRIDI_FAIL_ZERO_PIVOT) == TRIDI_ERROR_ZERO_PIVOT &&
               tridi_fail_status(TRIDI_FAIL_SINGULAR) == TRIDI_ERROR_ZERO_PIVOT &&
               tridi_fail_status(TRIDI_FAIL_UNSTABLE) == TRIDI_ERROR_UNSTABLE &&
               tridi_fail_status(TRIDI_FAIL_NONFINITE_DIAG) == TRIDI_ERROR_NONFINITE &&
               tridi_fail_status(TRIDI_FAIL_ELIMINATION_OVERFLOW) == TRIDI_ERROR_NONFINITE &&
               tridi_fail_status(TRIDI_FAIL_ANSWER_OVERFLOW) == TRIDI_ERROR_NONFINITE &&
               tridi_fail_status(TRIDI_FAIL_UNLOCATED) == TRIDI_ERROR_INTERNAL,
           "table: the statuses of the kinds");
    expect(tridi_fail_status(TRIDI_FAIL_KINDS) == TRIDI_ERROR_INTERNAL && tridi_fail_status(-1) == TRIDI_ERROR_INTERNAL,
           "table: a kind out of range is an internal error");
}

/* ---- the cut solve's pivot checks ---- */
static void test_partition_checks(void)
{
    expect(!tridi_thomas_pivot_ok(0.0) && !tridi_thomas_pivot_ok(-0.0) && !tridi_thomas_pivot_ok(INFINITY) &&
               !tridi_thomas_pivot_ok(-INFINITY) && !tridi_thomas_pivot_ok(NAN) && tridi_thomas_pivot_ok(1e-310) &&
               tridi_thomas_pivot_ok(-1e300),
           "pivot_ok: zero and non-finite pivots refused, tiny and huge finite ones accepted");
    expect(tridi_partition_step_ok(0.5, 1e300, -0.5) && tridi_partition_step_ok(-1.0, 0.0, 0.0) &&
               tridi_partition_step_ok(0.5 + 0.5e-8, 0.0, 0.5) && !tridi_partition_step_ok(0.5 + 1e-7, 0.0, 0.5) &&
               !tridi_partition_step_ok(NAN, 0.0, 0.0) && !tridi_partition_step_ok(0.0, INFINITY, 0.0) &&
               !tridi_partition_step_ok(0.0, 0.0, -INFINITY),
           "partition_step_ok: |W| + |S| <= 1 within the slack, W, G, S finite");
    expect(tridi_reduced_pivot_ok(1.0, 1.0) && tridi_reduced_pivot_ok(-2.0, 1.0) && tridi_reduced_pivot_ok(1.0, 1.0 + 0.5e-8) &&
               !tridi_reduced_pivot_ok(1.0, 1.0 + 1e-7) && !tridi_reduced_pivot_ok(0.0, 0.0) &&
               !tridi_reduced_pivot_ok(INFINITY, 1.0) && !tridi_reduced_pivot_ok(NAN, 0.0) &&
               !tridi_reduced_pivot_ok(1.0, NAN),
           "reduced_pivot_ok: a usable pivot that dominates its row within the slack");
}

/* ---- the reduced band solve ---- */
#define QMAX 8

/* Six coefficients per block whose rows stay dominant: |right| + |left| <= 0.9 of the unit diagonal. */
static void random_blocks(double *cf, int Q, uint64_t *rng)
{
    for (int q = 0; q < Q; ++q)
        for (int k = 0; k < 6; ++k)
            cf[6 * q + k] = k % 3 == 0 ? 4 * tu_uniform(rng) - 2 : 0.9 * tu_uniform(rng) - 0.45;
}

/* The same system as dense rows in long double, solved with partial pivoting. */
static void dense_oracle(const double *cf, int Q, long double *x)
{
    const int rows = 2 * Q;
    long double A[2 * QMAX][2 * QMAX + 1] = {{0}};
    for (int q = 0; q < Q; ++q)
        for (int h = 0; h < 2; ++h) {
            const int r = 2 * q + h;
            A[r][r] = 1;
            A[r][rows] = cf[6 * q + 3 * h];
            if (q > 0)
                A[r][2 * q - 1] = -cf[6 * q + 3 * h + 2];
            if (q < Q - 1)
                A[r][2 * q + 2] = -cf[6 * q + 3 * h + 1];
        }
    for (int c = 0; c < rows; ++c) {
        int best = c;
        for (int r = c + 1; r < rows; ++r)
            if (fabsl(A[r][c]) > fabsl(A[best][c]))
                best = r;
        for (int k = 0; k <= rows; ++k) {
            long double t = A[c][k];
            A[c][k] = A[best][k];
            A[best][k] = t;
        }
        for (int r = c + 1; r < rows; ++r) {
            long double f = A[r][c] / A[c][c];
            for (int k = c; k <= rows; ++k)
                A[r][k] -= f * A[c][k];
        }
    }
    for (int r = rows - 1; r >= 0; --r) {
        long double v = A[r][rows];
        for (int k = r + 1; k < rows; ++k)
            v -= A[r][k] * x[k];
        x[r] = v / A[r][r];
    }
}

static void test_band(uint64_t *rng)
{
    double cf[6 * QMAX], band[10 * QMAX], rhs[2 * QMAX], band3[10 * QMAX], rhs3[3 * 2 * QMAX];
    int idx[QMAX];
    long double x[2 * QMAX];
    for (int q = 0; q < QMAX; ++q)
        idx[q] = q;
    int bad_oracle = 0, bad_multi = 0, bad_ends = 0;
    for (int trial = 0; trial < 200; ++trial) {
        const int Q = 1 + trial % QMAX;
        random_blocks(cf, Q, rng);
        dense_oracle(cf, Q, x);
        for (int q = 0; q < Q; ++q)
            tridi_band_rows(band, rhs, 1, q, Q, cf + 6 * q);
        if (!tridi_band_solve(band, rhs, 1, 2 * Q)) {
            bad_oracle++;
            continue;
        }
        for (int r = 0; r < 2 * Q; ++r)
            if (fabsl(rhs[r] - x[r]) > 1e-13L * (1 + fabsl(x[r])))
                bad_oracle++;
        /* three right-hand sides: the first the system's, the others scaled copies, each its own solve */
        for (int q = 0; q < Q; ++q)
            tridi_band_rows(band3, rhs3, 3, q, Q, cf + 6 * q);
        for (int r = 0; r < 2 * Q; ++r)
            rhs3[3 * r + 1] = 2 * rhs3[3 * r], rhs3[3 * r + 2] = -0.5 * rhs3[3 * r];
        if (!tridi_band_solve(band3, rhs3, 3, 2 * Q))
            bad_multi++;
        for (int r = 0; r < 2 * Q; ++r)
            if (rhs3[3 * r] != rhs[r] || rhs3[3 * r + 1] != 2 * rhs[r] || rhs3[3 * r + 2] != -0.5 * rhs[r])
                bad_multi++;
        /* the line as a rank sees it: its own block's neighbours' ends, pitch 6 between blocks */
        const int me = (int)(tu_uniform(rng) * Q);
        double ends[2];
        if (!tridi_reduced_line(cf, 6, idx, Q, me, band, rhs, ends))
            bad_ends++;
        else if (ends[0] != (me > 0 ? rhs[2 * me - 1] : 0.0) || ends[1] != (me < Q - 1 ? rhs[2 * me + 2] : 0.0) ||
                 (me > 0 && fabsl(ends[0] - x[2 * me - 1]) > 1e-13L * (1 + fabsl(x[2 * me - 1]))))
            bad_ends++;
    }
    expect(!bad_oracle, "band solve: 200 dominant systems of 1-8 blocks answered like the long double oracle");
    expect(!bad_multi, "band solve: three right-hand sides answered as one each, bit for bit");
    expect(!bad_ends, "reduced line: this rank's x_L, x_R are its neighbours' answers");
    /* refusals: a row losing dominance, a NaN coefficient, a zero pivot */
    double ends[2] = {0, 0};
    random_blocks(cf, 3, rng);
    cf[6 * 1 + 1] = 1.5; /* block 1's first row: its right neighbour outweighs the unit diagonal */
    expect(!tridi_reduced_line(cf, 6, idx, 3, 1, band, rhs, ends) && isnan(ends[0]) && isnan(ends[1]),
           "reduced line: a row not dominant (|right| = 1.5) gives NaN ends");
    random_blocks(cf, 3, rng);
    cf[6 * 2 + 4] = NAN;
    expect(!tridi_reduced_line(cf, 6, idx, 3, 0, band, rhs, ends) && isnan(ends[0]) && isnan(ends[1]),
           "reduced line: a NaN coefficient (a block marked for the pipelined Thomas) gives NaN ends");
    random_blocks(cf, 2, rng);
    for (int q = 0; q < 2; ++q)
        tridi_band_rows(band, rhs, 1, q, 2, cf + 6 * q);
    TRIDI_BAND(band, 1, 1) = 0.0;
    expect(!tridi_band_solve(band, rhs, 1, 4), "band solve: a zero pivot is refused");
}

/* ---- one line through the core's steps ---- */
typedef struct line {
    int n;
    double d[N], e[N], f[N], r[N];
} line;

static void random_line(line *L, int n, uint64_t *rng)
{
    L->n = n;
    for (int m = 0; m < n; ++m) {
        L->d[m] = m ? 2 * tu_uniform(rng) - 1 : 0.0;
        L->f[m] = m < n - 1 ? 2 * tu_uniform(rng) - 1 : 0.0;
        L->e[m] = (fabs(L->d[m]) + fabs(L->f[m]) + 0.5) * (tu_uniform(rng) < 0.5 ? -1 : 1);
        L->r[m] = 2 * tu_uniform(rng) - 1;
    }
}

/* The line solved by the core: rcp picks the reciprocal form, xdbl double answers (else float). */
static tridi_thomas_fail core_solve(const line *L, int rcp, int xdbl, double *x)
{
    const int n = L->n;
    double W[N], G[N], w = 0.0, g = 0.0;
    for (int m = 0; m < n; ++m) {
        const int k = rcp ? tridi_thomas_forward_rcp(L->d[m], L->e[m], L->f[m], L->r[m], m == 0, m == n - 1, &w, &g)
                          : tridi_thomas_forward(L->d[m], L->e[m], L->f[m], L->r[m], m == n - 1, &w, &g);
        if (k)
            return (tridi_thomas_fail){m, k};
        W[m] = w;
        G[m] = g;
    }
    double xn = 0.0;
    for (int m = n - 1; m >= 0; --m) {
        xn = tridi_thomas_back(W[m], G[m], xn, m == n - 1, xdbl);
        if (!tridi_thomas_finite(xn))
            return (tridi_thomas_fail){m, TRIDI_FAIL_ANSWER_OVERFLOW};
        x[m] = xn;
    }
    return (tridi_thomas_fail){0, TRIDI_FAIL_NONE};
}

/* MOHID's Original recurrence written out (real(8) W, G; ANSWER rounded to real when !xdbl). */
static void mohid_solve(const line *L, int rcp, int xdbl, double *x)
{
    const int n = L->n;
    double W[N], G[N];
    for (int m = 0; m < n; ++m) {
        if (m == 0) {
            W[0] = n > 1 ? -L->f[0] / L->e[0] : 0.0;
            G[0] = L->r[0] / L->e[0];
            continue;
        }
        const double den = L->e[m] + L->d[m] * W[m - 1];
        if (rcp && m < n - 1) {
            const double inv = 1.0 / den;
            W[m] = -L->f[m] * inv;
            G[m] = (L->r[m] - L->d[m] * G[m - 1]) * inv;
        } else {
            W[m] = m < n - 1 ? -L->f[m] / den : 0.0;
            G[m] = (L->r[m] - L->d[m] * G[m - 1]) / den;
        }
    }
    double xn = 0.0;
    for (int m = n - 1; m >= 0; --m) {
        const double v = m == n - 1 ? G[m] : W[m] * xn + G[m];
        xn = xdbl ? v : (double)(float)v;
        x[m] = xn;
    }
}

/* The tridiagonal solve in long double, with partial pivoting's accuracy not needed (dominant lines). */
static void oracle(const line *L, long double *x)
{
    long double W[N], G[N];
    for (int m = 0; m < L->n; ++m) {
        const long double den = (long double)L->e[m] + (m ? (long double)L->d[m] * W[m - 1] : 0.0L);
        W[m] = -(long double)L->f[m] / den;
        G[m] = ((long double)L->r[m] - (m ? (long double)L->d[m] * G[m - 1] : 0.0L)) / den;
    }
    for (int m = L->n - 1; m >= 0; --m)
        x[m] = G[m] + (m < L->n - 1 ? W[m] * x[m + 1] : 0.0L);
}

static void test_arithmetic(uint64_t *rng)
{
    for (int trial = 0; trial < 2000; ++trial) {
        line L;
        const int n = (int)tu_randint(rng, 1, N), rcp = trial & 1, xdbl = (trial >> 1) & 1;
        random_line(&L, n, rng);
        double x[N], xm[N];
        long double xo[N];
        const tridi_thomas_fail f = core_solve(&L, rcp, xdbl, x);
        mohid_solve(&L, rcp, xdbl, xm);
        oracle(&L, xo);
        char what[128];
        snprintf(what, sizeof what, "arithmetic: trial %d (n %d, %s, %s) succeeds, equals MOHID's bitwise", trial, n,
                 rcp ? "reciprocal" : "divisions", xdbl ? "double" : "float");
        expect(f.kind == TRIDI_FAIL_NONE && memcmp(x, xm, sizeof(double) * (size_t)n) == 0, what);
        double err = 0.0, scale = 0.0;
        for (int m = 0; m < n; ++m) {
            err = fmax(err, fabs((double)(x[m] - xo[m])));
            scale = fmax(scale, fabs((double)xo[m]));
        }
        snprintf(what, sizeof what, "arithmetic: trial %d within %g of the oracle (error %g)", trial,
                 xdbl ? 1e-13 : 1e-6, err / scale);
        expect(err <= (xdbl ? 1e-13 : 1e-6) * scale, what);
    }
}

/* A failure of `kind` planted at unknown m0 of L (variant: which non-finite value, which zero, which
 * overflow); returns the unknown it must be reported at, or -1 when the kind cannot be planted there.
 * ANSWER_OVERFLOW overflows float answers only. */
static int plant(line *L, int kind, int m0, int variant)
{
    const int n = L->n;
    const double bad = variant == 0 ? NAN : variant == 1 ? INFINITY : -INFINITY;
    switch (kind) {
    case TRIDI_FAIL_NONFINITE_DIAG:
        L->e[m0] = bad;
        if (m0 > 0)
            L->d[m0] = NAN; /* diag is named first */
        return m0;
    case TRIDI_FAIL_NONFINITE_LOWER:
        if (m0 == 0)
            return -1;
        L->d[m0] = bad;
        L->r[m0] = NAN; /* lower is named before rhs */
        return m0;
    case TRIDI_FAIL_NONFINITE_UPPER:
        if (m0 == n - 1)
            return -1;
        L->f[m0] = bad;
        return m0;
    case TRIDI_FAIL_NONFINITE_RHS: L->r[m0] = bad; return m0;
    case TRIDI_FAIL_ZERO_PIVOT:
        L->d[m0] = 0.0;
        L->e[m0] = variant == 2 ? -0.0 : 0.0;
        return m0;
    case TRIDI_FAIL_ELIMINATION_OVERFLOW:
        if (variant < 2) { /* a tiny pivot: G overflows at m0 */
            L->d[m0] = 0.0;
            L->e[m0] = 1e-300;
            L->r[m0] = 1e10;
            return m0;
        }
        /* an infinite pivot: W = 1e300 at m0 - 1, then e + d*W overflows at m0 while W and G stay finite */
        if (m0 == 0)
            return -1;
        if (m0 > 1)
            L->d[m0 - 1] = 0.0;
        L->e[m0 - 1] = 1e-300;
        L->f[m0 - 1] = -1.0;
        L->r[m0 - 1] = 0.0;
        L->d[m0] = 1e10;
        return m0;
    case TRIDI_FAIL_ANSWER_OVERFLOW: /* G = 1e40 at m0, decoupled from the unknowns around it */
        L->d[m0] = 0.0;
        L->f[m0] = 0.0;
        L->e[m0] = 1e-35;
        L->r[m0] = 1e5;
        if (m0 < n - 1)
            L->d[m0 + 1] = 0.0;
        return m0;
    default: return -1;
    }
}

static void test_planted(uint64_t *rng)
{
    for (int kind = TRIDI_FAIL_NONFINITE_DIAG; kind <= TRIDI_FAIL_ANSWER_OVERFLOW; ++kind)
        for (int trial = 0; trial < 200; ++trial) {
            line L;
            const int n = (int)tu_randint(rng, 2, N), m0 = (int)tu_randint(rng, 0, n - 1), variant = trial % 3;
            random_line(&L, n, rng);
            const int want = plant(&L, kind, m0, variant);
            if (want < 0)
                continue;
            for (int rcp = 0; rcp < 2; ++rcp) {
                double x[N];
                const tridi_thomas_fail f = core_solve(&L, rcp, 0, x);
                char what[160];
                snprintf(what, sizeof what, "planted %s (variant %d) at %d of %d, %s: got kind %lld at %lld",
                         tridi_fail_text(kind), variant, m0, n, rcp ? "reciprocal" : "divisions", (long long)f.kind,
                         (long long)f.m);
                expect(f.kind == kind && f.m == want, what);
                if (kind == TRIDI_FAIL_ANSWER_OVERFLOW) { /* 1e40 fits a double */
                    snprintf(what, sizeof what, "planted answer of 1e40 at %d of %d answered in double (%s)", m0, n,
                             rcp ? "reciprocal" : "divisions");
                    expect(core_solve(&L, rcp, 1, x).kind == TRIDI_FAIL_NONE && x[m0] > 1e39 && x[m0] < 1e41, what);
                }
            }
        }
    /* A failing step keeps W and G. */
    double w = 0.25, g = -3.0;
    const int k = tridi_thomas_forward(1.0, 0.0, 1.0, 1.0, 0, &w, &g);
    const int k2 = tridi_thomas_forward_rcp(1.0, NAN, 1.0, 1.0, 0, 0, &w, &g);
    expect(k == TRIDI_FAIL_NONE && w != 0.25, "a good step moves W");
    const double w1 = w, g1 = g;
    expect(k2 == TRIDI_FAIL_NONFINITE_DIAG && w == w1 && g == g1, "a failing step (NaN diag) keeps W and G");
    expect(tridi_thomas_forward(2.0, -2.0 * w1, 1.0, 1.0, 0, &w, &g) == TRIDI_FAIL_ZERO_PIVOT && w == w1 && g == g1,
           "a failing step (zero pivot) keeps W and G");
}

/* ---- through tridi_solve ---- */
#define NX 9
#define NY 8
#define NZ 7

static void test_solve(tridi_context ctx, tridi_context call_ctx, uint64_t *rng)
{
    static const tridi_dtype combos[3][2] = {
        {TRIDI_FLOAT32, TRIDI_FLOAT32}, {TRIDI_FLOAT64, TRIDI_FLOAT64}, {TRIDI_FLOAT32, TRIDI_FLOAT64}};
    static const char *combo_name[3] = {"float", "double", "mixed"};
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {NX, NY, NZ};
    tridi_grid grid = {3, {0, 0, 0}, {NX + 1, NY + 1, NZ + 1}};
    for (int cb = 0; cb < 3; ++cb)
        for (int axis = 0; axis < 3; ++axis)
            for (int kind = TRIDI_FAIL_NONFINITE_DIAG; kind <= TRIDI_FAIL_ANSWER_OVERFLOW; ++kind)
                for (int variant = 0; variant < 3; ++variant) {
                    const tridi_dtype t = combos[cb][0], dt = combos[cb][1];
                    /* 1e-300 needs a double diag, 1e40 a float answer */
                    if ((kind == TRIDI_FAIL_ELIMINATION_OVERFLOW && dt != TRIDI_FLOAT64) ||
                        (kind == TRIDI_FAIL_ANSWER_OVERFLOW && t != TRIDI_FLOAT32))
                        continue;
                    tu_system s;
                    if (tu_system_alloc(&s, &grid, t, dt, t, t, t, rng)) {
                        expect(0, "allocation");
                        return;
                    }
                    const int64_t n = hi[axis] - lo[axis] + 1;
                    int64_t c[3];
                    for (int a = 0; a < 3; ++a)
                        c[a] = tu_randint(rng, lo[a], hi[a]);
                    line L;
                    L.n = (int)n;
                    for (int m = 0; m < n; ++m) {
                        c[axis] = lo[axis] + m;
                        const int64_t o = tu_index(&grid, c[0], c[1], c[2]);
                        L.d[m] = tu_get(s.a.lower, t, o);
                        L.e[m] = tu_get(s.a.diag, dt, o);
                        L.f[m] = tu_get(s.a.upper, t, o);
                        L.r[m] = tu_get(s.a.rhs, t, o);
                    }
                    const int m0 = (int)tu_randint(rng, 0, n - 1), want = plant(&L, kind, m0, variant);
                    if (want < 0) {
                        tu_system_free(&s);
                        continue;
                    }
                    for (int m = 0; m < n; ++m) {
                        c[axis] = lo[axis] + m;
                        const int64_t o = tu_index(&grid, c[0], c[1], c[2]);
                        tu_set((void *)s.a.lower, t, o, L.d[m]);
                        tu_set((void *)s.a.diag, dt, o, L.e[m]);
                        tu_set((void *)s.a.upper, t, o, L.f[m]);
                        tu_set((void *)s.a.rhs, t, o, L.r[m]);
                    }
                    c[axis] = lo[axis] + want;
                    for (int mode = 0; mode < 2; ++mode) {
                        tu_poison_x(&s, rng);
                        char what[200];
                        snprintf(what, sizeof what,
                                 "tridi_solve %s axis %c: %s (variant %d) at (%lld, %lld, %lld), %s", combo_name[cb],
                                 "xyz"[axis], tridi_fail_text(kind), variant, (long long)c[0], (long long)c[1],
                                 (long long)c[2], mode ? "call" : "lines");
                        tu_expect(what, tridi_solve(mode ? call_ctx : ctx, &grid, (tridi_axis)axis, lo, hi, &s.a),
                                  tridi_fail_status(kind), tridi_fail_text(kind));
                        int64_t got[3];
                        const int nd = tridi_error_cell(got);
                        char cw[260];
                        snprintf(cw, sizeof cw, "%s: cell named (%lld, %lld, %lld)", what, (long long)got[0],
                                 (long long)got[1], (long long)got[2]);
                        expect(nd == 3 && got[0] == c[0] && got[1] == c[1] && got[2] == c[2], cw);
                        if (mode) {
                            expect(tu_check_unchanged(what, &s) == 0, what);
                        } else {
                            const int64_t failing = tu_line_of(&grid, lo, hi, (tridi_axis)axis, c);
                            expect(tu_check_lines(what, &s, lo, hi, (tridi_axis)axis, tu_tolerance(t), &failing,
                                                  1) == 0,
                                   what);
                        }
                    }
                    tu_system_free(&s);
                }
}

int main(void)
{
    uint64_t rng = tu_seed("test_thomas_core");
    test_table();
    test_partition_checks();
    test_band(&rng);
    test_arithmetic(&rng);
    test_planted(&rng);
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    tridi_context ctx = NULL;
    if (tridi_create(&ctx, &cfg)) {
        printf("FAILED tridi_create: %s\n", tridi_error_message());
        return 1;
    }
    cfg.on_error = TRIDI_ON_ERROR_CALL;
    tridi_context call_ctx = NULL;
    if (tridi_create(&call_ctx, &cfg)) {
        printf("FAILED tridi_create: %s\n", tridi_error_message());
        return 1;
    }
    test_solve(ctx, call_ctx, &rng);
    tridi_destroy(ctx);
    tridi_destroy(call_ctx);
    checks += tu_checks;
    failures += tu_failures;
    printf("test_thomas_core: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
