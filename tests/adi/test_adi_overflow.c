/* ADI operators whose face diffusion is finite although a naive formula overflows, and operators that are
 * not finite themselves (CPU path):
 * - a harmonic kappa_field of 1e200 (2 k1 k2 overflowed; an arithmetic one of 1e300 alongside): the step
 *   equals the step with kappa 1 and dt scaled by the same factor (only dt kappa enters the operator);
 * - kappa = 0 with spacing 1e-200 (0 * Inf was NaN): no diffusion, the step leaves the field as it was;
 * - an operator past double (kappa_field 1e308 with spacing 1e-2): NONFINITE naming the sweep, the
 *   coefficient, the cell and the kappa there, not "non-finite diag value" as if the caller had passed it;
 *   the field untouched.
 * Each used to fail with NONFINITE "non-finite diag value" for a diagonal the caller never supplied. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double *field_of(const tridi_grid *g, int64_t cells, uint64_t *rng)
{
    (void)g;
    double *u = malloc((size_t)cells * sizeof(double));
    for (int64_t c = 0; c < cells; ++c)
        u[c] = 2.0 * tu_uniform(rng) - 1.0;
    return u;
}

/* One Douglas step of u (a copy) with kappa (field of value kf when kf > 0, else the constant kc). */
static tridi_status step(tridi_context ctx, const tridi_grid *g, const int64_t lo[3], const int64_t hi[3],
                         int64_t cells, double *u, double kf, double kc, tridi_adi_mean mean, double h, double dt)
{
    double *kfield = NULL;
    tridi_adi_operator op;
    tridi_adi_operator_init(&op);
    op.mean = mean;
    op.kappa = kc;
    for (int a = 0; a < 3; ++a)
        op.spacing[a] = h;
    if (kf > 0.0) {
        kfield = malloc((size_t)cells * sizeof(double));
        for (int64_t c = 0; c < cells; ++c)
            kfield[c] = kf;
        op.kappa_field = kfield;
    }
    tridi_adi plan = NULL;
    tridi_status s = tridi_adi_create(&plan, ctx, g, lo, hi, TRIDI_FLOAT64, &op);
    if (!s)
        s = tridi_adi_step(plan, u, dt, NULL);
    tridi_adi_destroy(plan);
    free(kfield);
    return s;
}

static double max_rel_diff(const double *a, const double *b, int64_t cells)
{
    double m = 0.0, scale = 0.0;
    for (int64_t c = 0; c < cells; ++c) {
        scale = fmax(scale, fabs(b[c]));
        const double d = fabs(a[c] - b[c]);
        m = d > m || isnan(d) ? d : m;
    }
    return m / (scale > 0.0 ? scale : 1.0);
}

int main(void)
{
    uint64_t rng = tu_seed("test_adi_overflow");
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    tridi_context ctx = NULL;
    tu_expect("create", tridi_create(&ctx, &cfg), TRIDI_SUCCESS, NULL);
    tridi_grid g = {3, {0, 0, 0}, {11, 9, 7}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {10, 8, 6};
    const int64_t cells = 12 * 10 * 8;
    double *u0 = field_of(&g, cells, &rng);
    double *a = malloc((size_t)cells * sizeof(double)), *b = malloc((size_t)cells * sizeof(double));

    /* Large kappas: the same operator as kappa 1 with dt scaled. */
    const struct {
        const char *what;
        double kappa;
        tridi_adi_mean mean;
    } big[2] = {{"harmonic kappa_field 1e200", 1e200, TRIDI_ADI_HARMONIC},
                {"arithmetic kappa_field 1e300", 1e300, TRIDI_ADI_ARITHMETIC}};
    for (int q = 0; q < 2; ++q) {
        const double dt = 0.25;
        memcpy(a, u0, (size_t)cells * sizeof(double));
        memcpy(b, u0, (size_t)cells * sizeof(double));
        tu_expect(big[q].what, step(ctx, &g, lo, hi, cells, a, big[q].kappa, 0.0, big[q].mean, 1.0, dt), TRIDI_SUCCESS,
                  NULL);
        tu_expect("the same with kappa 1 and dt scaled",
                  step(ctx, &g, lo, hi, cells, b, 1.0, 0.0, big[q].mean, 1.0, dt * big[q].kappa), TRIDI_SUCCESS, NULL);
        const double d = max_rel_diff(a, b, cells);
        printf("  %s: largest difference %.3g of the field's scale\n", big[q].what, d);
        tu_expect_true("equal within rounding", d <= 1e-12);
    }
    /* No diffusion over a tiny spacing: the field as it was, bit for bit. */
    memcpy(a, u0, (size_t)cells * sizeof(double));
    tu_expect("kappa 0, spacing 1e-200", step(ctx, &g, lo, hi, cells, a, 0.0, 0.0, TRIDI_ADI_HARMONIC, 1e-200, 1.0),
              TRIDI_SUCCESS, NULL);
    tu_expect_true("the field unchanged", !memcmp(a, u0, (size_t)cells * sizeof(double)));

    /* An operator past double: named for what it is, the field untouched. */
    memcpy(a, u0, (size_t)cells * sizeof(double));
    tridi_status s = step(ctx, &g, lo, hi, cells, a, 1e308, 0.0, TRIDI_ADI_HARMONIC, 1e-2, 1.0);
    tu_expect("kappa_field 1e308 over spacing 1e-2", s, TRIDI_ERROR_NONFINITE, "sweep's operator is not finite at cell");
    tu_expect_true("the message names the kappa there", strstr(tridi_error_message(), "op->kappa_field = 1e+308 there") != NULL);
    tu_expect_true("and not a caller's diagonal", strstr(tridi_error_message(), "non-finite diag value") == NULL);
    int64_t cell[3];
    tu_expect_true("the cell is recorded", tridi_error_cell(cell) == 3);
    tu_expect_true("the field untouched", !memcmp(a, u0, (size_t)cells * sizeof(double)));

    free(a);
    free(b);
    free(u0);
    tridi_destroy(ctx);
    printf("%d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
