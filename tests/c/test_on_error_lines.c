/* The CPU backend's two failure contracts (issue 26, decision 2), on a validated problem whose on_error is
 * set here (the plan API that lets callers choose it comes later; this test links libtridi's internals):
 * - TRIDI_ON_ERROR_LINES: failing lines (a zero pivot, a non-finite input, an answer that overflows its
 *   type in the back substitution) are left untouched, bit for bit; every other line, including those
 *   sharing a vector block with a failing one, equals the oracle; the status and cell are the lowest
 *   failing line's, with the number of failing lines.
 * - TRIDI_ON_ERROR_CALL: the same status and cell, x unchanged everywhere.
 * Every axis, all-double and MOHID's mixed types, 1 and 3 threads; ctest runs it through the vector and
 * the portable kernels (TRIDI_CPU_GENERIC). */
#include "testutil.h"
#include "backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A CPU solve of p as every entry point makes it: through the one guard (src/backend.h). */
static tridi_status guarded(tridi_context ctx, const tridi_problem *p)
{
    return tridi_guard_solve(ctx, tridi_backend_of(ctx), p, TRIDI_MEMORY_HOST, NULL, NULL, NULL);
}

#define NX 37
#define NY 21
#define NZ 19

static const int64_t LO[3] = {1, 1, 1}, HI[3] = {NX, NY, NZ};

/* Line l: untouched (bitwise x_before) when `failing`, else within tol of the oracle. Returns 1 if not. */
static int check_line(const char *what, const tu_system *s, tridi_axis axis, int64_t l, int failing, double tol)
{
    const int64_t n = HI[axis] - LO[axis] + 1;
    const size_t es = tu_esize(s->a.x_type);
    long double xo[64], scale = 0.0L, err = 0.0L;
    if (!failing)
        tu_oracle_line(s, LO, HI, axis, l, xo);
    int64_t c[3];
    for (int64_t m = 0; m < n; ++m) {
        const int64_t i = tu_line_cell(&s->grid, LO, HI, axis, l, m, c);
        if (failing) {
            if (memcmp((const char *)s->a.x + i * es, (const char *)s->x_before + i * es, es) != 0) {
                printf("  %s: failing line %lld was written at unknown %lld\n", what, (long long)l, (long long)m);
                return 1;
            }
            continue;
        }
        const double v = tu_get(s->a.x, s->a.x_type, i);
        scale = fmaxl(scale, fabsl(xo[m]));
        err = isfinite(v) ? fmaxl(err, fabsl((long double)v - xo[m])) : INFINITY;
    }
    if (!failing && !(err <= tol * scale)) {
        printf("  %s: line %lld differs from the oracle by %Lg (scale %Lg)\n", what, (long long)l, err, scale);
        return 1;
    }
    return 0;
}

/* Cells outside the box keep their poison. */
static int64_t outside_changed(const tu_system *s)
{
    const size_t es = tu_esize(s->a.x_type);
    int64_t bad = 0;
    for (int64_t k = s->grid.lbound[2]; k <= s->grid.ubound[2]; ++k)
        for (int64_t j = s->grid.lbound[1]; j <= s->grid.ubound[1]; ++j)
            for (int64_t i = s->grid.lbound[0]; i <= s->grid.ubound[0]; ++i) {
                if (i >= LO[0] && i <= HI[0] && j >= LO[1] && j <= HI[1] && k >= LO[2] && k <= HI[2])
                    continue;
                const int64_t o = tu_index(&s->grid, i, j, k);
                bad += memcmp((const char *)s->a.x + o * es, (const char *)s->x_before + o * es, es) != 0;
            }
    return bad;
}

#define NFAIL 5

int main(void)
{
    uint64_t rng = tu_seed("test_on_error_lines");
    const tridi_grid grid = {3, {0, 0, 0}, {NX + 1, NY + 1, NZ + 1}};
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    const int threads[2] = {1, 3};
    for (int t = 0; t < 2; ++t) {
        cfg.num_threads = threads[t];
        tridi_context ctx;
        tu_expect("create context", tridi_create(&ctx, &cfg), TRIDI_SUCCESS, NULL);
        for (int mixed = 0; mixed < 2; ++mixed)
            for (int ax = 0; ax < 3; ++ax) {
                const tridi_axis axis = (tridi_axis)ax;
                const int64_t n = HI[ax] - LO[ax] + 1;
                int64_t nl = 1;
                for (int a = 0; a < 3; ++a)
                    nl *= a == ax ? 1 : HI[a] - LO[a] + 1;
                const tridi_dtype ft = mixed ? TRIDI_FLOAT32 : TRIDI_FLOAT64;
                tu_system s;
                if (tu_system_alloc(&s, &grid, ft, TRIDI_FLOAT64, ft, ft, ft, &rng)) {
                    printf("FAILED: allocation\n");
                    return 1;
                }
                /* Failing lines: one inside the first vector block among good lines, one further on, one
                 * whose answer overflows its type only in the back substitution, and the last line. */
                const int64_t fl[NFAIL] = {2, 17, 29 % nl, nl - 1, 42};
                int64_t c[3], want_cell[3];
                const int64_t zm = n / 2;
                const int64_t iz = tu_line_cell(&grid, LO, HI, axis, fl[0], zm, want_cell);
                tu_set((void *)s.a.lower, s.a.lower_type, iz, 0.0);
                tu_set((void *)s.a.diag, s.a.diag_type, iz, 0.0); /* zero pivot */
                tu_set((void *)s.a.rhs, s.a.rhs_type, tu_line_cell(&grid, LO, HI, axis, fl[1], 0, c), NAN);
                /* Overflow in the back substitution: x(n-1) = 1e200 (1e30 in float: 1e60 after the
                 * multiplication below), x(n-2) = -f * x(n-1) = -1e400, with every pivot 1. */
                {
                    const int64_t ia = tu_line_cell(&grid, LO, HI, axis, fl[2], n - 1, c);
                    const int64_t ib = tu_line_cell(&grid, LO, HI, axis, fl[2], n - 2, c);
                    const double big = mixed ? 1e30 : 1e200;
                    tu_set((void *)s.a.lower, s.a.lower_type, ia, 0.0);
                    tu_set((void *)s.a.diag, s.a.diag_type, ia, 1.0);
                    tu_set((void *)s.a.rhs, s.a.rhs_type, ia, big);
                    tu_set((void *)s.a.diag, s.a.diag_type, ib, 1.0);
                    tu_set((void *)s.a.lower, s.a.lower_type, ib, 0.0);
                    tu_set((void *)s.a.upper, s.a.upper_type, ib, -big);
                }
                tu_set((void *)s.a.diag, s.a.diag_type, tu_line_cell(&grid, LO, HI, axis, fl[3], n - 1, c), INFINITY);
                /* The same overflow with every |W| < 1, from G alone (G = x(n-1) = big, W(n-2) = 0.75), in a
                 * block of its own (a row of lines past the others): the forward sweep's bound must see it,
                 * or the block would be written without its save (decision 059). */
                {
                    const int64_t ia = tu_line_cell(&grid, LO, HI, axis, fl[4], n - 1, c);
                    const int64_t ib = tu_line_cell(&grid, LO, HI, axis, fl[4], n - 2, c);
                    const double big = mixed ? 3e38 : 1.5e308;
                    tu_set((void *)s.a.lower, s.a.lower_type, ia, 0.0);
                    tu_set((void *)s.a.diag, s.a.diag_type, ia, 1.0);
                    tu_set((void *)s.a.rhs, s.a.rhs_type, ia, big);
                    tu_set((void *)s.a.lower, s.a.lower_type, ib, 0.0);
                    tu_set((void *)s.a.diag, s.a.diag_type, ib, 1.0);
                    tu_set((void *)s.a.upper, s.a.upper_type, ib, -0.75);
                    tu_set((void *)s.a.rhs, s.a.rhs_type, ib, big);
                }
                tridi_problem p;
                int empty = 0;
                tu_expect("validate", tridi_validate("test", &grid, axis, LO, HI, &s.a, 1, &p, &empty), TRIDI_SUCCESS,
                          NULL);
                const double tol = tu_tolerance(s.a.x_type);
                for (int mode = 0; mode < 2; ++mode) {
                    char what[128];
                    snprintf(what, sizeof what, "%s, %s, axis %c, %d thread(s)", mode ? "CALL" : "LINES",
                             mixed ? "mixed" : "double", "xyz"[ax], threads[t]);
                    p.on_error = mode ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES;
                    tu_poison_x(&s, &rng);
                    tu_expect(what, guarded(ctx, &p), TRIDI_ERROR_ZERO_PIVOT, mode ? NULL : "5 lines failed");
                    int64_t got[3] = {0, 0, 0};
                    tu_checks++;
                    if (tridi_error_cell(got) != 3 || memcmp(got, want_cell, sizeof got) != 0) {
                        tu_failures++;
                        printf("FAILED %s: cell (%lld, %lld, %lld), want (%lld, %lld, %lld)\n", what,
                               (long long)got[0], (long long)got[1], (long long)got[2], (long long)want_cell[0],
                               (long long)want_cell[1], (long long)want_cell[2]);
                    }
                    tu_checks++;
                    if (tridi_error_failed_lines_internal() != (mode ? 1 : NFAIL)) {
                        tu_failures++;
                        printf("FAILED %s: %lld failing lines reported\n", what,
                               (long long)tridi_error_failed_lines_internal());
                    }
                    tu_checks++;
                    if (mode) {
                        if (tu_check_unchanged(what, &s)) {
                            tu_failures++;
                            printf("FAILED %s: x changed by a failing call\n", what);
                        }
                        continue;
                    }
                    int64_t bad = outside_changed(&s);
                    for (int64_t l = 0; l < nl; ++l) {
                        int failing = 0;
                        for (int q = 0; q < NFAIL; ++q)
                            failing |= l == fl[q];
                        bad += check_line(what, &s, axis, l, failing, tol);
                    }
                    if (bad) {
                        tu_failures++;
                        printf("FAILED %s: %lld lines wrong or failing lines touched\n", what, (long long)bad);
                    }
                }
                tu_system_free(&s);
            }
        tridi_destroy(ctx);
    }
    printf("test_on_error_lines: %d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
