/* The cell arithmetic the CPU and the GPU share (src/adi_cell.inc's ADI_COEF: the GPU's staged sweeps and
 * careful re-solves form their rows with it) on the host: a NaN in the kappa field (either face mean) or
 * in a velocity must reach the right-hand side or the row of every cell whose faces read it, so that the
 * solve's check fails the step (the GPU does not scan its inputs; the CPU rejects them before the step).
 * A 3x3x3 box with a halo of one cell, every face open (Dirichlet), the NaN at its centre; each cell's
 * stage along x, y and z, double and float. The cells that do not read the NaN stay finite. */
#include "adi_internal.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define ADI_QUAL static inline
#define ADI_UNROLL
#include "adi_cell_types.inc"
#undef ADI_QUAL
#undef ADI_UNROLL

enum { W = 5, CELLS = W * W * W }; /* 3 cells a side and the halo */

static int64_t at(int i, int j, int k) { return (int64_t)(i + 1) + W * (j + 1) + W * W * (k + 1); }

/* which: 0 kappa, 1 + b the velocity along b; failures counted by testutil. */
static void check(int f64, int which, int harmonic)
{
    static double fd[CELLS], kd[CELLS], vd[3][CELLS];
    static float ff[CELLS], kf[CELLS], vf[3][CELLS];
    for (int64_t c = 0; c < CELLS; ++c) {
        fd[c] = 1.0 + 0.01 * (double)(c % 7);
        kd[c] = 0.5 + 0.02 * (double)(c % 5);
        for (int b = 0; b < 3; ++b)
            vd[b][c] = 0.05 * (double)((c + b) % 3) - 0.05;
    }
    const int64_t mid = at(1, 1, 1);
    if (which == 0)
        kd[mid] = NAN;
    else
        vd[which - 1][mid] = NAN;
    for (int64_t c = 0; c < CELLS; ++c) {
        ff[c] = (float)fd[c], kf[c] = (float)kd[c];
        for (int b = 0; b < 3; ++b)
            vf[b][c] = (float)vd[b][c];
    }
    adi_stage s = {0};
    for (int b = 0; b < 3; ++b) {
        s.n[b] = 3;
        s.inv_h[b] = s.inv_h2[b] = 1.0;
        s.alpha[b] = 0.25;
        s.dirichlet_lo[b] = s.dirichlet_hi[b] = 1;
        s.vel[b] = f64 ? (const void *)vd[b] : (const void *)vf[b];
    }
    s.stride[0] = 1, s.stride[1] = W, s.stride[2] = W * W;
    s.origin = at(0, 0, 0);
    s.naxes = 3;
    s.field = s.x0 = s.y = f64 ? (const void *)fd : (const void *)ff;
    s.kappa = f64 ? (const void *)kd : (const void *)kf;
    s.harmonic = harmonic;
    s.tdt = 0.5;
    for (int axis = 0; axis < 3; ++axis) {
        s.axis = axis;
        for (int k = 0; k < 3; ++k)
            for (int j = 0; j < 3; ++j)
                for (int i = 0; i < 3; ++i) {
                    double lo = 0.0, di = 1.0, up = 0.0;
                    const double r = f64 ? adi_coef_f64(&s, i, j, k, &lo, &di, &up, ADI_COEFS_ALL)
                                         : adi_coef_f32(&s, i, j, k, &lo, &di, &up, ADI_COEFS_ALL);
                    const int finite = isfinite(r) && isfinite(lo) && isfinite(di) && isfinite(up);
                    /* the cells that read the centre: it, and its neighbours across a face (kappa: every
                     * axis; a velocity along b: the neighbours along b) */
                    const int d = abs(i - 1) + abs(j - 1) + abs(k - 1);
                    const int along = which == 0 || (which == 1 ? j == 1 && k == 1
                                                     : which == 2 ? i == 1 && k == 1 : i == 1 && j == 1);
                    const int reads = d == 0 || (d == 1 && along);
                    char what[200];
                    snprintf(what, sizeof what, "%s, NaN %s%s, stage along %c, cell (%d, %d, %d): %s",
                             f64 ? "double" : "float", which == 0 ? "kappa" : "velocity ",
                             which == 0 ? (harmonic ? " (harmonic)" : " (arithmetic)") : &"x\0y\0z"[2 * (which - 1)],
                             "xyz"[axis], i, j, k, reads ? "reads it: not finite" : "does not: finite");
                    if (reads == finite)
                        tu_expect_true(what, 0);
                    else
                        ++tu_checks;
                }
    }
}

int main(void)
{
    for (int f64 = 0; f64 < 2; ++f64) {
        check(f64, 0, 1);
        check(f64, 0, 0);
        for (int b = 0; b < 3; ++b)
            check(f64, 1 + b, 0);
    }
    printf("test_adi_cell_nan: %d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
