/* Bad input to the ADI API on the CPU backend: every case must return the expected status with a
 * message naming the argument, axis or cell, and leave the caller's field / x exactly as it was. */
#include "adi_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void expect(const char *what, tridi_status got, tridi_status want, const char *needle)
{
    const char *msg = tridi_error_message();
    int ok = got == want && (!needle || strstr(msg, needle));
    printf("%-58s %-28s %s%s\n", what, tridi_status_name(got), msg, ok ? "" : "  <-- FAIL");
    if (!ok) {
        printf("  expected %s with \"%s\" in the message\n", tridi_status_name(want), needle ? needle : "");
        failures++;
    }
}

/* The message must begin with the entry point the caller called (not the solve it made inside). */
static void expect_named(const char *what, const char *func)
{
    const char *msg = tridi_error_message();
    const size_t len = strlen(func);
    const int ok = !strncmp(msg, func, len) && msg[len] == ':' && !strstr(msg, "tridi_solve");
    printf("%-58s begins with \"%s:\"%s\n", what, func, ok ? "" : "  <-- FAIL");
    if (!ok)
        failures++;
}

int main(void)
{
    uint64_t rng = tu_seed("test_adi_errors");
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    tridi_context ctx;
    if (tridi_create(&ctx, &cfg)) {
        printf("create: %s\n", tridi_error_message());
        return 1;
    }
    /* A 3D grid 0..9 x -2..7 x 1..6 with box 1..8 x -1..6 x 2..5: one halo cell on every side. */
    tridi_grid g = {3, {0, -2, 1}, {9, 7, 6}};
    int64_t lo[3] = {1, -1, 2}, hi[3] = {8, 6, 5};
    const int64_t cells = 10 * 10 * 6;
    tridi_adi_operator op;
    tridi_adi_operator_init(&op);
    tridi_adi plan = NULL;

    expect("create: plan NULL", tridi_adi_create(NULL, ctx, &g, lo, hi, TRIDI_FLOAT64, &op), TRIDI_ERROR_NULL_POINTER,
           "'plan'");
    expect("create: ctx NULL", tridi_adi_create(&plan, NULL, &g, lo, hi, TRIDI_FLOAT64, &op),
           TRIDI_ERROR_INVALID_HANDLE, "'ctx'");
    expect("create: op NULL", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, NULL), TRIDI_ERROR_NULL_POINTER,
           "'op'");
    tridi_adi_operator bad = op;
    bad.size = 8;
    expect("create: op not initialised", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &bad),
           TRIDI_ERROR_INVALID_VALUE, "op->size");
    expect("create: dtype 7", tridi_adi_create(&plan, ctx, &g, lo, hi, (tridi_dtype)7, &op), TRIDI_ERROR_INVALID_VALUE,
           "dtype");
    int64_t hi_out[3] = {8, 8, 5};
    expect("create: box above the grid", tridi_adi_create(&plan, ctx, &g, lo, hi_out, TRIDI_FLOAT64, &op),
           TRIDI_ERROR_BOUNDS, "hi[1]");
    int64_t lo_edge[3] = {0, -1, 2};
    expect("create: Dirichlet x low without halo", tridi_adi_create(&plan, ctx, &g, lo_edge, hi, TRIDI_FLOAT64, &op),
           TRIDI_ERROR_BOUNDS, "bc_lo[0]");
    bad = op;
    bad.bc_lo[0] = TRIDI_ADI_ZERO_FLUX; /* the same box is fine once that side is closed */
    tridi_status s = tridi_adi_create(&plan, ctx, &g, lo_edge, hi, TRIDI_FLOAT64, &bad);
    expect("create: zero flux x low without halo is accepted", s, TRIDI_SUCCESS, NULL);
    tridi_adi_destroy(plan);
    plan = NULL;
    bad = op;
    bad.naxes = 4;
    expect("create: naxes 4", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &bad), TRIDI_ERROR_INVALID_VALUE,
           "naxes");
    bad = op;
    bad.scheme = TRIDI_ADI_PEACEMAN_RACHFORD;
    expect("create: Peaceman-Rachford on 3 axes", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &bad),
           TRIDI_ERROR_UNSUPPORTED, "Peaceman-Rachford");
    bad = op;
    bad.theta = 0.3;
    expect("create: theta 0.3", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &bad), TRIDI_ERROR_INVALID_VALUE,
           "theta");
    bad = op;
    bad.spacing[2] = 0.0;
    expect("create: spacing[2] 0", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &bad),
           TRIDI_ERROR_INVALID_VALUE, "spacing[2]");
    bad = op;
    bad.kappa = -1.0;
    expect("create: kappa -1", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &bad), TRIDI_ERROR_INVALID_VALUE,
           "kappa");
    bad = op;
    bad.bc_hi[1] = (tridi_adi_bc)5;
    expect("create: bc_hi[1] 5", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &bad), TRIDI_ERROR_INVALID_VALUE,
           "bc_hi[1]");
    bad = op;
    bad.mean = (tridi_adi_mean)3;
    expect("create: mean 3", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &bad), TRIDI_ERROR_INVALID_VALUE,
           "mean");

    /* A live plan with a diffusivity field. */
    double *kappa = malloc(sizeof(double) * cells), *field = malloc(sizeof(double) * cells);
    double *before = malloc(sizeof(double) * cells);
    for (int64_t i = 0; i < cells; ++i) {
        kappa[i] = 0.1 + tu_uniform(&rng);
        field[i] = 2.0 * tu_uniform(&rng) - 1.0;
    }
    memcpy(before, field, sizeof(double) * cells);
    tridi_adi_operator opk = op;
    opk.kappa_field = kappa;
    s = tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &opk);
    expect("create: valid plan", s, TRIDI_SUCCESS, NULL);
    if (s)
        return 1;
    expect("step: plan NULL", tridi_adi_step(NULL, field, 0.1, NULL), TRIDI_ERROR_INVALID_HANDLE, "'plan'");
    expect("step: field NULL", tridi_adi_step(plan, NULL, 0.1, NULL), TRIDI_ERROR_NULL_POINTER, "'field'");
    expect("step: dt 0", tridi_adi_step(plan, field, 0.0, NULL), TRIDI_ERROR_INVALID_VALUE, "dt");
    expect("step: dt NaN", tridi_adi_step(plan, field, NAN, NULL), TRIDI_ERROR_INVALID_VALUE, "dt");
    expect("step: field is the kappa field", tridi_adi_step(plan, kappa, 0.1, NULL), TRIDI_ERROR_ALIASING,
           "kappa_field");
    /* Cell (3, 4, 5) is offset (3-0) + 10*((4+2) + 10*(5-1)). */
    int64_t c345 = 3 + 10 * (6 + 10 * 4);
    kappa[c345] = -0.5;
    expect("step: negative kappa at (3, 4, 5)", tridi_adi_step(plan, field, 0.1, NULL), TRIDI_ERROR_INVALID_VALUE,
           "(3, 4, 5)");
    kappa[c345] = NAN;
    expect("step: NaN kappa at (3, 4, 5)", tridi_adi_step(plan, field, 0.1, NULL), TRIDI_ERROR_INVALID_VALUE,
           "(3, 4, 5)");
    kappa[c345] = 0.5;
    /* The Dirichlet halo cell (9, 4, 5) is read; (9, 7, 6), a corner, is not. */
    int64_t c945 = 9 + 10 * (6 + 10 * 4), c976 = 9 + 10 * (9 + 10 * 5);
    kappa[c976] = NAN;
    kappa[c945] = -1.0;
    expect("step: negative kappa in the halo at (9, 4, 5)", tridi_adi_step(plan, field, 0.1, NULL),
           TRIDI_ERROR_INVALID_VALUE, "(9, 4, 5)");
    kappa[c945] = 0.5;
    field[c345] = INFINITY;
    before[c345] = INFINITY;
    s = tridi_adi_step(plan, field, 0.1, NULL);
    int64_t cell[3] = {0};
    int rank = tridi_error_cell(cell);
    expect("step: Inf in the field at (3, 4, 5)", s, TRIDI_ERROR_NONFINITE, "(3, 4, 5)");
    if (rank != 3 || cell[0] != 3 || cell[1] != 4 || cell[2] != 5) {
        printf("  tridi_error_cell gave rank %d, cell (%lld, %lld, %lld)  <-- FAIL\n", rank, (long long)cell[0], (long long)cell[1], (long long)cell[2]);
        failures++;
    }
    if (memcmp(field, before, sizeof(double) * cells)) {
        printf("  the field changed although every step failed  <-- FAIL\n");
        failures++;
    }
    field[c345] = before[c345] = 0.25;
    s = tridi_adi_step(plan, field, 0.1, NULL);
    expect("step: valid after the failures (corner NaN never read)", s, TRIDI_SUCCESS, NULL);

    /* Caller diagonals: a zero pivot at (2, 0, 3) of an x sweep, answer untouched. */
    double *L = calloc(cells, sizeof(double)), *D = malloc(sizeof(double) * cells), *U = calloc(cells, sizeof(double));
    double *R = malloc(sizeof(double) * cells), *X = malloc(sizeof(double) * cells), *X0 = malloc(sizeof(double) * cells);
    for (int64_t i = 0; i < cells; ++i) {
        D[i] = 2.0;
        R[i] = tu_uniform(&rng);
        X[i] = X0[i] = -7.0;
    }
    D[2 + 10 * (2 + 10 * 2)] = 0.0;
    s = tridi_adi_sweep(plan, TRIDI_AXIS_X, L, D, U, R, X, NULL);
    expect("sweep: zero pivot at (2, 0, 3)", s, TRIDI_ERROR_ZERO_PIVOT, "(2, 0, 3)");
    expect_named("sweep: zero pivot", "tridi_adi_sweep");
    if (tridi_error_cell(cell) != 3 || cell[0] != 2 || cell[1] != 0 || cell[2] != 3) {
        printf("  tridi_error_cell does not give (2, 0, 3) after the renamed message  <-- FAIL\n");
        failures++;
    }
    if (memcmp(X, X0, sizeof(double) * cells)) {
        printf("  x changed although the sweep failed  <-- FAIL\n");
        failures++;
    }
    expect("sweep: axis 3", tridi_adi_sweep(plan, (tridi_axis)3, L, D, U, R, X, NULL), TRIDI_ERROR_INVALID_VALUE,
           "axis");
    expect("sweep: upper NULL", tridi_adi_sweep(plan, TRIDI_AXIS_Y, L, D, NULL, R, X, NULL), TRIDI_ERROR_NULL_POINTER,
           "'upper'");
    expect("sweep: x overlaps diag", tridi_adi_sweep(plan, TRIDI_AXIS_Y, L, D, U, R, D, NULL), TRIDI_ERROR_ALIASING,
           "overlaps");
    expect_named("sweep: x overlaps diag", "tridi_adi_sweep");
    D[2 + 10 * (2 + 10 * 2)] = 2.0;
    R[5 + 10 * (4 + 10 * 3)] = NAN;
    expect("sweep: NaN rhs at (5, 2, 4)", tridi_adi_sweep(plan, TRIDI_AXIS_Z, L, D, U, R, X, NULL),
           TRIDI_ERROR_NONFINITE, "(5, 2, 4)");
    expect_named("sweep: NaN rhs", "tridi_adi_sweep");
    R[5 + 10 * (4 + 10 * 3)] = 0.5;
    double ms[3];
    expect("timings without profile", tridi_adi_timings(plan, ms, NULL), TRIDI_ERROR_INVALID_VALUE, "profile");
    /* The context outlives its plans: destroying it first is refused, and both stay usable. */
    tridi_adi plan2 = NULL;
    expect("create: a second plan", tridi_adi_create(&plan2, ctx, &g, lo, hi, TRIDI_FLOAT64, &opk), TRIDI_SUCCESS, NULL);
    expect("context destroyed before 2 plans", tridi_destroy(ctx), TRIDI_ERROR_INVALID_VALUE, "2 ADI plans");
    expect("destroy the second plan", tridi_adi_destroy(plan2), TRIDI_SUCCESS, NULL);
    expect("context destroyed before 1 plan", tridi_destroy(ctx), TRIDI_ERROR_INVALID_VALUE, "1 ADI plan made");
    expect("step after the refused context destroy", tridi_adi_step(plan, field, 0.1, NULL), TRIDI_SUCCESS, NULL);
    expect("destroy", tridi_adi_destroy(plan), TRIDI_SUCCESS, NULL);
    expect("destroy NULL", tridi_adi_destroy(NULL), TRIDI_SUCCESS, NULL);
    expect("context destroyed after its plans", tridi_destroy(ctx), TRIDI_SUCCESS, NULL);
    free(kappa);
    free(field);
    free(before);
    free(L);
    free(D);
    free(U);
    free(R);
    free(X);
    free(X0);
    printf("test_adi_errors: %d failures\n", failures);
    return failures ? 1 : 0;
}
