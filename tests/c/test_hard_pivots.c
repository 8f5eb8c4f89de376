/* Well-posed double systems with subnormal pivots (issue 24, item 5): a pivot of 1e-310 makes the
 * reciprocal 1/den overflow although -f/den and g/den are finite, so these must be solved (SUCCESS,
 * answers equal to a long double oracle), on every axis, through the vector kernels and the portable ones
 * (ctest runs this again with TRIDI_CPU_GENERIC=1). Lines that truly fail must be reported with their own
 * cell, not the first cell of their block, and leave their own line untouched with every other line
 * answered (ON_ERROR_LINES, the default), or x unchanged on a context asking for ON_ERROR_CALL. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NX 37
#define NY 21
#define NZ 19

static const int64_t LO[3] = {1, 1, 1}, HI[3] = {NX, NY, NZ};

static int64_t line_count(tridi_axis axis)
{
    int64_t k = 1;
    for (int a = 0; a < 3; ++a)
        if (a != (int)axis)
            k *= HI[a] - LO[a] + 1;
    return k;
}

/* Every line's answers within tol (relative, max norm over the line) of the long double oracle (x87
 * extended: 1e-310 is a normal number there). */
static int64_t compare_oracle(const char *label, const tu_system *s, tridi_axis axis, double tol)
{
    const int64_t n = HI[axis] - LO[axis] + 1, nl = line_count(axis);
    int64_t bad = 0;
    for (int64_t l = 0; l < nl; ++l) {
        long double xo[64], scale = 0.0L, err = 0.0L;
        tu_oracle_line(s, LO, HI, axis, l, xo);
        int64_t c[3];
        for (int64_t m = 0; m < n; ++m) {
            const double v = ((const double *)s->a.x)[tu_line_cell(&s->grid, LO, HI, axis, l, m, c)];
            scale = fmaxl(scale, fabsl(xo[m]));
            err = isfinite(v) ? fmaxl(err, fabsl((long double)v - xo[m])) : INFINITY;
        }
        if (!(err <= tol * scale)) {
            if (bad < 3)
                printf("  %s: line %lld differs from the oracle by %Lg (scale %Lg)\n", label, (long long)l, err,
                       scale);
            ++bad;
        }
    }
    return bad;
}

/* Makes unknown m of line l a subnormal pivot of its own: diag = rhs = 1e-310, no coupling to its
 * neighbours (its lower and upper, the upper above it and the lower below it are 0): its answer is 1. */
static void isolate_subnormal(tu_system *s, tridi_axis axis, int64_t l, int64_t m)
{
    const int64_t n = HI[axis] - LO[axis] + 1;
    int64_t c[3];
    const int64_t i = tu_line_cell(&s->grid, LO, HI, axis, l, m, c);
    double *D = (double *)s->a.lower, *E = (double *)s->a.diag, *F = (double *)s->a.upper, *R = (double *)s->a.rhs;
    E[i] = R[i] = 1e-310;
    D[i] = F[i] = 0.0;
    if (m > 0)
        F[tu_line_cell(&s->grid, LO, HI, axis, l, m - 1, c)] = 0.0;
    if (m < n - 1)
        D[tu_line_cell(&s->grid, LO, HI, axis, l, m + 1, c)] = 0.0;
}

static tridi_status solve(tridi_context ctx, tu_system *s, tridi_axis axis)
{
    return tridi_solve(ctx, &s->grid, axis, LO, HI, &s->a);
}

static void expect_solved(const char *label, tridi_context ctx, tu_system *s, tridi_axis axis, uint64_t *rng,
                          double tol)
{
    char what[160];
    snprintf(what, sizeof what, "%s, axis %c", label, "xyz"[axis]);
    tu_poison_x(s, rng);
    tu_expect(what, solve(ctx, s, axis), TRIDI_SUCCESS, NULL);
    tu_checks++;
    if (compare_oracle(what, s, axis, tol)) {
        tu_failures++;
        printf("FAILED %s: answers differ from the long double oracle\n", what);
    }
}

/* A failure that is real: status, the failing cell (not its block's first); on ctx (ON_ERROR_LINES) the
 * failing line untouched and every other one answered, on call_ctx (ON_ERROR_CALL) x unchanged. */
static void expect_failure(const char *label, tridi_context ctx, tridi_context call_ctx, tu_system *s,
                           tridi_axis axis, uint64_t *rng, tridi_status want, const int64_t cell[3])
{
    char what[160];
    snprintf(what, sizeof what, "%s, axis %c, lines", label, "xyz"[axis]);
    tu_poison_x(s, rng);
    tu_expect(what, solve(ctx, s, axis), want, "1 line failed");
    const int64_t failing = tu_line_of(&s->grid, LO, HI, axis, cell);
    tu_checks++;
    if (tu_check_lines(what, s, LO, HI, axis, 1e-11, &failing, 1)) {
        tu_failures++;
        printf("FAILED %s: the failing line was written or another line not answered\n", what);
    }
    snprintf(what, sizeof what, "%s, axis %c, call", label, "xyz"[axis]);
    tu_poison_x(s, rng);
    tu_expect(what, solve(call_ctx, s, axis), want, NULL);
    int64_t got[3] = {0, 0, 0};
    tu_checks++;
    if (tridi_error_cell(got) != 3 || memcmp(got, cell, sizeof got) != 0) {
        tu_failures++;
        printf("FAILED %s: cell (%lld, %lld, %lld) reported, (%lld, %lld, %lld) expected: %s\n", what,
               (long long)got[0], (long long)got[1], (long long)got[2], (long long)cell[0], (long long)cell[1],
               (long long)cell[2], tridi_error_message());
    }
    tu_checks++;
    if (tu_check_unchanged(what, s)) {
        tu_failures++;
        printf("FAILED %s: x was modified by a failing call\n", what);
    }
}

/* Multiplies lower, diag, upper and rhs of every cell by f. */
static void scale_system(tu_system *s, double f)
{
    double *arr[4] = {(double *)s->a.lower, (double *)s->a.diag, (double *)s->a.upper, (double *)s->a.rhs};
    for (int q = 0; q < 4; ++q)
        for (int64_t i = 0; i < s->cells; ++i)
            arr[q][i] *= f;
}

int main(void)
{
    uint64_t rng = tu_seed("test_hard_pivots");
    const tridi_grid grid = {3, {0, 0, 0}, {NX + 1, NY + 1, NZ + 1}};
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    tridi_context ctxs[2], call_ctxs[2];
    const int threads[2] = {1, 3};
    for (int t = 0; t < 2; ++t) {
        cfg.num_threads = threads[t];
        cfg.on_error = TRIDI_ON_ERROR_LINES;
        tu_expect("create context", tridi_create(&ctxs[t], &cfg), TRIDI_SUCCESS, NULL);
        cfg.on_error = TRIDI_ON_ERROR_CALL;
        tu_expect("create context, on_error CALL", tridi_create(&call_ctxs[t], &cfg), TRIDI_SUCCESS, NULL);
    }
    for (int t = 0; t < 2; ++t) {
        tridi_context ctx = ctxs[t], call_ctx = call_ctxs[t];
        for (int ax = 0; ax < 3; ++ax) {
            const tridi_axis axis = (tridi_axis)ax;
            const int64_t n = HI[ax] - LO[ax] + 1, nl = line_count(axis);
            tu_system s;
            if (tu_system_alloc(&s, &grid, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64,
                                &rng)) {
                printf("FAILED: allocation\n");
                return 1;
            }
            const size_t bytes = (size_t)s.cells * sizeof(double);
            double *keep[4];
            void *arr[4] = {(void *)s.a.lower, (void *)s.a.diag, (void *)s.a.upper, (void *)s.a.rhs};
            for (int q = 0; q < 4; ++q) {
                keep[q] = malloc(bytes);
                memcpy(keep[q], arr[q], bytes);
            }
#define RESET()                                                                                                \
    for (int q = 0; q < 4; ++q)                                                                                \
    memcpy(arr[q], keep[q], bytes)

            /* A diagonal system of subnormals: diag = rhs = 1e-310 everywhere, x = 1. */
            double *D = (double *)s.a.lower, *E = (double *)s.a.diag, *F = (double *)s.a.upper, *R = (double *)s.a.rhs;
            for (int64_t i = 0; i < s.cells; ++i) {
                D[i] = F[i] = 0.0;
                E[i] = R[i] = 1e-310;
            }
            expect_solved("diag = rhs = 1e-310 everywhere", ctx, &s, axis, &rng, 1e-12);
            RESET();

            /* One isolated subnormal pivot per chosen line, at the first, second, middle, last but one and
             * last unknown (1/den overflows wherever the kernels multiply by a reciprocal), in lines that
             * are not the first of their block. */
            const int64_t ms[5] = {0, 1, n / 2, n - 2, n - 1};
            for (int k = 0; k < 5; ++k) {
                char label[96];
                snprintf(label, sizeof label, "a subnormal pivot at unknown %lld", (long long)ms[k]);
                for (int64_t l = 5 + k; l < nl; l += 37)
                    isolate_subnormal(&s, axis, l, ms[k]);
                expect_solved(label, ctx, &s, axis, &rng, 1e-12);
                RESET();
            }

            /* The whole random system scaled by 1e-310: every pivot subnormal (relative precision of the
             * subnormal products is about 1e-13). */
            scale_system(&s, 1e-310);
            expect_solved("the system scaled by 1e-310", ctx, &s, axis, &rng, 1e-9);
            RESET();

            /* Real failures next to flagged but solvable lines: the reported cell is the failing one. */
            int64_t cell[3];
            const int64_t fl = 11 < nl ? 11 : nl - 1, fm = n / 2 + 1;
            isolate_subnormal(&s, axis, 3, 2);
            const int64_t fi = tu_line_cell(&grid, LO, HI, axis, fl, fm, cell);
            D[fi] = 0.0;
            E[fi] = 0.0; /* den = 0 + 0*w */
            expect_failure("a zero pivot after a subnormal one", ctx, call_ctx, &s, axis, &rng, TRIDI_ERROR_ZERO_PIVOT,
                           cell);
            RESET();
            isolate_subnormal(&s, axis, 3, 2);
            isolate_subnormal(&s, axis, fl, fm);
            F[fi] = 1e10; /* w = -1e10 / 1e-310 overflows in any arithmetic */
            if (fm < n - 1) {
                expect_failure("an elimination that truly overflows", ctx, call_ctx, &s, axis, &rng,
                               TRIDI_ERROR_NONFINITE, cell);
            }
            RESET();
#undef RESET
            for (int q = 0; q < 4; ++q)
                free(keep[q]);
            tu_system_free(&s);
        }
    }
    for (int t = 0; t < 2; ++t) {
        tridi_destroy(ctxs[t]);
        tridi_destroy(call_ctxs[t]);
    }
    printf("test_hard_pivots: %d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
