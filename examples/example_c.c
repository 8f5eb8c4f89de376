/* A C simulation using tridi directly: its own 3D arrays with a halo of one cell, diffusion-like
 * systems along each axis, solved through the public API on the fastest backend available. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tridi.h"

#define NX 64
#define NY 48
#define NZ 20

int main(void)
{
    /* Arrays (0:NX+1, 0:NY+1, 0:NZ+1) in Fortran order; the solve box is the interior 1..N. */
    tridi_grid grid = {3, {0, 0, 0}, {NX + 1, NY + 1, NZ + 1}};
    size_t cells = (size_t)(NX + 2) * (NY + 2) * (NZ + 2);
    double *lower = malloc(cells * sizeof *lower), *diag = malloc(cells * sizeof *diag);
    double *upper = malloc(cells * sizeof *upper), *rhs = malloc(cells * sizeof *rhs);
    double *x = malloc(cells * sizeof *x);
    if (!lower || !diag || !upper || !rhs || !x)
        return 1;
    const double r = 0.8; /* kappa dt / h^2 of an implicit diffusion step */
    for (size_t c = 0; c < cells; ++c) {
        lower[c] = -r;
        upper[c] = -r;
        diag[c] = 1.0 + 2.0 * r;
        rhs[c] = sin(0.001 * (double)c);
        x[c] = 0.0;
    }
    tridi_context ctx;
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.verbose = 1;
    if (tridi_create(&ctx, &cfg) != TRIDI_SUCCESS) {
        fprintf(stderr, "tridi_create: %s\n", tridi_error_message());
        return 1;
    }
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {NX, NY, NZ};
    tridi_arrays arrays = {lower, TRIDI_FLOAT64, diag, TRIDI_FLOAT64, upper, TRIDI_FLOAT64,
                           rhs, TRIDI_FLOAT64, x, TRIDI_FLOAT64};
    for (int axis = 0; axis < 3; ++axis) {
        tridi_status st = tridi_solve(ctx, &grid, (tridi_axis)axis, lo, hi, &arrays);
        if (st != TRIDI_SUCCESS) {
            fprintf(stderr, "tridi_solve: %s (%s)\n", tridi_error_message(), tridi_status_name(st));
            return 1;
        }
        /* Residual of one interior line as a check that the answer solves the system. */
        size_t sx = 1, sy = NX + 2, sz = (size_t)(NX + 2) * (NY + 2), s = axis == 0 ? sx : axis == 1 ? sy : sz;
        double res = 0.0;
        size_t c0 = 5 * sx + 7 * sy + 3 * sz;
        int n = axis == 0 ? NX : axis == 1 ? NY : NZ;
        for (int m = 1; m <= n; ++m) {
            size_t c = c0 + (size_t)(m - (axis == 0 ? 5 : axis == 1 ? 7 : 3)) * s;
            double ax = diag[c] * x[c] + (m > 1 ? lower[c] * x[c - s] : 0.0) + (m < n ? upper[c] * x[c + s] : 0.0);
            res = fmax(res, fabs(ax - rhs[c]));
        }
        printf("axis %c: solved %d lines of %d unknowns, max residual of one line %.2e\n", "xyz"[axis],
               (NX * NY * NZ) / n, n, res);
    }
    tridi_destroy(ctx);
    free(lower), free(diag), free(upper), free(rhs), free(x);
    return 0;
}
