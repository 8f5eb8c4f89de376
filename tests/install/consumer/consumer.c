#include <stdio.h>
#include <tridi.h>

/* Solves 2x + y = 3, x + 2y = 3 (x = y = 1) as a 1x2 grid line along x. */
int main(void)
{
    tridi_context ctx;
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    if (tridi_create(&ctx, &cfg))
        return 1;
    tridi_grid g = {2, {1, 1, 0}, {2, 1, 0}};
    double lower[2] = {0, 1}, diag[2] = {2, 2}, upper[2] = {1, 0}, rhs[2] = {3, 3}, x[2] = {0, 0};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {2, 1, 1};
    tridi_arrays a = {lower, TRIDI_FLOAT64, diag, TRIDI_FLOAT64, upper, TRIDI_FLOAT64, rhs, TRIDI_FLOAT64, x,
                      TRIDI_FLOAT64};
    tridi_status s = tridi_solve(ctx, &g, TRIDI_AXIS_X, lo, hi, &a);
    tridi_destroy(ctx);
    printf("consumer_c: tridi %s, x = %g %g\n", tridi_version_string(), x[0], x[1]);
    return s != TRIDI_SUCCESS || x[0] != 1.0 || x[1] != 1.0;
}
