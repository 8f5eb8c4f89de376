/* Convergence of tridi_adi_step to analytic heat solutions, with dt proportional to h, on the CPU backend
 * (or, with ADI_CONVERGENCE_BACKEND=cuda, on the GPU's fused sweeps with device-resident fields; exits 77
 * without a GPU):
 *  - 3D Douglas, theta 1/2, Dirichlet zero on all sides: u = sin(pi x) sin(pi y) sin(pi z) e^{-3 pi^2 k t};
 *    second order in h and dt, so the error drops ~4x when h halves.
 *  - 3D Douglas, theta 1 (first order in time): ~2x.
 *  - 2D Peaceman-Rachford, x Dirichlet, y zero flux (cell-centred cosine): u = sin(pi x) cos(pi y)
 *    e^{-2 pi^2 k t}: ~4x. Also on a 3D grid with naxes = 2, each k layer its own amplitude.
 *  - 3D Douglas, theta 1/2, float (h = 1/16 and 1/32, as the float heat series), through a kappa field and
 *    zero velocity fields: ~4x.
 * Then conservation: with every face closed, random diffusivity and velocities, the sum over the box
 * stays put (flux form) for both schemes. */
#include "adi_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double PI = 3.14159265358979323846;

static tridi_backend backend = TRIDI_BACKEND_CPU;

/* Steps a host array on the chosen backend: through a device copy on the GPU. */
static tridi_status run_steps(tridi_context ctx, const tridi_grid *g, const int64_t lo[3], const int64_t hi[3],
                              tridi_dtype t, tridi_adi_operator op, void *field, size_t bytes, int steps, double dt)
{
    void *dev[5] = {NULL, NULL, NULL, NULL, NULL};
    const void *host[5] = {field, op.kappa_field, op.velocity[0], op.velocity[1], op.velocity[2]};
    tridi_status s = TRIDI_SUCCESS;
    if (backend == TRIDI_BACKEND_CUDA) {
        for (int q = 0; q < 5 && !s; ++q)
            if (host[q]) {
                s = tridi_device_alloc(ctx, bytes, &dev[q]);
                if (!s)
                    s = tridi_copy_to_device(ctx, dev[q], host[q], bytes);
            }
        op.kappa_field = dev[1];
        for (int a = 0; a < 3; ++a)
            op.velocity[a] = dev[2 + a];
    }
    void *u = backend == TRIDI_BACKEND_CUDA ? dev[0] : field;
    tridi_adi plan = NULL;
    if (!s)
        s = tridi_adi_create(&plan, ctx, g, lo, hi, t, &op);
    for (int n = 0; n < steps && !s; ++n)
        s = tridi_adi_step(plan, u, dt, NULL);
    if (!s)
        s = tridi_adi_synchronize(plan);
    if (!s && backend == TRIDI_BACKEND_CUDA)
        s = tridi_copy_to_host(ctx, field, u, bytes);
    tridi_adi_destroy(plan);
    for (int q = 0; q < 5; ++q)
        if (dev[q])
            tridi_device_free(ctx, dev[q]);
    return s;
}

/* Set: the operator's diffusivity comes as a kappa field (the constant in every cell) and each axis has a
 * velocity field of zeros: the same exact solution through the rows of operators with coefficient arrays,
 * which float plans form in float on the GPU (decision 064). */
static int coef_fields = 0;

/* Runs to time T with N cells per Dirichlet axis; returns the max error relative to the max of the exact
 * solution, or -1 on a library failure. */
static double heat(int ndim, int naxes, tridi_adi_scheme scheme, double theta, int N, tridi_dtype t)
{
    const double kappa = 0.1, T = 0.5;
    const double h = 1.0 / (N + 1);       /* Dirichlet axes: nodes i h, i = 0..N+1, unknowns 1..N */
    const double hc = 1.0 / N;            /* zero-flux y of the 2D case: cell centres (j - 1/2) / N */
    const int nz = ndim == 3 ? (naxes == 3 ? N : 4) : 1;
    const int cosine_y = naxes == 2;
    tridi_grid g = {ndim, {0, 0, 0}, {N + 1, N + 1, nz + 1}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {N, N, nz};
    if (ndim == 2)
        g.lbound[2] = g.ubound[2] = 1;
    tridi_adi_operator op;
    tridi_adi_operator_init(&op);
    op.scheme = scheme;
    op.naxes = naxes;
    op.theta = theta;
    op.kappa = kappa;
    op.spacing[0] = op.spacing[1] = op.spacing[2] = h;
    if (cosine_y) {
        op.spacing[1] = hc;
        op.bc_lo[1] = op.bc_hi[1] = TRIDI_ADI_ZERO_FLUX;
    }
    int steps = (int)lround(T / h);
    double dt = T / steps;
    double rate = (naxes == 3 ? 3.0 : 2.0) * PI * PI * kappa;
    tridi_grid gref = g;
    if (ndim == 2)
        gref.lbound[2] = gref.ubound[2] = 1;
    int64_t cells = ref_cells(&gref);
    double *u = calloc((size_t)cells, sizeof(double)), *exact = calloc((size_t)cells, sizeof(double));
    for (int64_t k = lo[2]; k <= hi[2]; ++k)
        for (int64_t j = lo[1]; j <= hi[1]; ++j)
            for (int64_t i = lo[0]; i <= hi[0]; ++i) {
                double v = sin(PI * i * h) * (cosine_y ? cos(PI * (j - 0.5) * hc) : sin(PI * j * h));
                if (naxes == 3)
                    v *= sin(PI * k * h);
                else if (ndim == 3)
                    v *= (double)k; /* independent layers, each with its own amplitude */
                int64_t c = ref_index(&gref, i, j, k);
                u[c] = v;
                exact[c] = v * exp(-rate * T);
            }
    void *field = adi_to_type(u, cells, t), *kf = NULL, *vf = NULL;
    if (coef_fields) {
        double *kd = malloc(sizeof(double) * (size_t)cells), *vd = calloc((size_t)cells, sizeof(double));
        for (int64_t c = 0; c < cells; ++c)
            kd[c] = kappa;
        kf = adi_to_type(kd, cells, t);
        vf = adi_to_type(vd, cells, t);
        free(kd);
        free(vd);
        op.kappa_field = kf;
        for (int a = 0; a < naxes; ++a)
            op.velocity[a] = vf;
    }
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = backend;
    tridi_context ctx;
    double err = -1.0;
    if (tridi_create(&ctx, &cfg) == TRIDI_SUCCESS) {
        tridi_status s = run_steps(ctx, &g, lo, hi, t, op, field, (size_t)cells * (t == TRIDI_FLOAT64 ? 8 : 4), steps,
                                   dt);
        if (s) {
            printf("  failed: %s %s\n", tridi_status_name(s), tridi_error_message());
        } else {
            double e = 0.0, m = 0.0;
            for (int64_t c = 0; c < cells; ++c) {
                double d = fabs(tu_get(field, t, c) - exact[c]);
                e = d > e || isnan(d) ? d : e;
                m = fabs(exact[c]) > m ? fabs(exact[c]) : m;
            }
            err = e / m;
        }
        tridi_destroy(ctx);
    }
    free(u);
    free(exact);
    free(field);
    free(kf);
    free(vf);
    return err;
}

static int series(const char *name, int ndim, int naxes, tridi_adi_scheme scheme, double theta, tridi_dtype t,
                  const int *Ns, int count, double rmin, double rmax)
{
    int bad = 0;
    double prev = 0.0;
    printf("%s\n", name);
    for (int i = 0; i < count; ++i) {
        double e = heat(ndim, naxes, scheme, theta, Ns[i], t);
        if (!(e >= 0.0)) {
            printf("  N = %3d: failed\n", Ns[i]);
            return 1;
        }
        if (i == 0) {
            printf("  N = %3d: error %.3e\n", Ns[i], e);
        } else {
            double r = prev / e;
            int ok = r >= rmin && r <= rmax;
            printf("  N = %3d: error %.3e, ratio %.2f (expected %.1f..%.1f)%s\n", Ns[i], e, r, rmin, rmax,
                   ok ? "" : "  <-- FAIL");
            bad |= !ok;
        }
        prev = e;
    }
    return bad;
}

static int conservation(uint64_t *rng, tridi_adi_scheme scheme, int ndim)
{
    adi_case c;
    adi_case_random(&c, rng, TRIDI_FLOAT64, ndim, 0);
    tridi_adi_operator op = c.ref.op;
    op.scheme = scheme;
    if (scheme == TRIDI_ADI_PEACEMAN_RACHFORD)
        op.naxes = 2;
    for (int a = 0; a < 3; ++a)
        op.bc_lo[a] = op.bc_hi[a] = TRIDI_ADI_ZERO_FLUX;
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = backend;
    tridi_context ctx;
    int bad = 1;
    double *u = adi_to_type(c.u0, c.cells, TRIDI_FLOAT64);
    const tridi_grid *g = &c.ref.grid;
    double before = 0.0, mag = 0.0, after = 0.0;
    const int64_t *lo = c.ref.lo, *hi = c.ref.hi;
    for (int64_t k = lo[2]; k <= hi[2]; ++k)
        for (int64_t j = lo[1]; j <= hi[1]; ++j)
            for (int64_t i = lo[0]; i <= hi[0]; ++i) {
                before += u[ref_index(g, i, j, k)];
                mag += fabs(u[ref_index(g, i, j, k)]);
            }
    if (tridi_create(&ctx, &cfg) == TRIDI_SUCCESS) {
        tridi_status s = run_steps(ctx, g, lo, hi, TRIDI_FLOAT64, op, u, (size_t)c.cells * 8, 20, c.dt);
        if (s)
            printf("conservation (%s): %s %s\n", c.label, tridi_status_name(s), tridi_error_message());
        else {
            for (int64_t k = lo[2]; k <= hi[2]; ++k)
                for (int64_t j = lo[1]; j <= hi[1]; ++j)
                    for (int64_t i = lo[0]; i <= hi[0]; ++i)
                        after += u[ref_index(g, i, j, k)];
            double rel = fabs(after - before) / mag;
            bad = !(rel < 1e-12);
            printf("conservation %s, %d axes, box %lldx%lldx%lld, all faces closed: sum %.15g -> %.15g, "
                   "change %.2e of sum|u|%s\n", scheme == TRIDI_ADI_DOUGLAS ? "douglas" : "peaceman-rachford",
                   op.naxes, (long long)(hi[0] - lo[0] + 1), (long long)(hi[1] - lo[1] + 1),
                   (long long)(hi[2] - lo[2] + 1), before, after, rel, bad ? "  <-- FAIL" : "");
        }
        tridi_destroy(ctx);
    }
    free(u);
    adi_case_free(&c);
    return bad;
}

int main(void)
{
    const char *want = getenv("ADI_CONVERGENCE_BACKEND");
    if (want && !strcmp(want, "cuda")) {
        backend = TRIDI_BACKEND_CUDA;
        tridi_config cfg;
        tridi_config_init(&cfg);
        cfg.backend = backend;
        tridi_context probe;
        tridi_status s = tridi_create(&probe, &cfg);
        if (s) {
            printf("test_adi_convergence (GPU): %s: %s\n", s == TRIDI_ERROR_NO_DEVICE ? "skipped" : "failed",
                   tridi_error_message());
            return s == TRIDI_ERROR_NO_DEVICE ? 77 : 1;
        }
        tridi_destroy(probe);
    }
    uint64_t rng = tu_seed("test_adi_convergence");
    int bad = 0;
    const int n3[3] = {15, 31, 63}, n2[3] = {31, 63, 127};
    bad |= series("3D Douglas theta 1/2, f64", 3, 3, TRIDI_ADI_DOUGLAS, 0.5, TRIDI_FLOAT64, n3, 3, 3.3, 4.7);
    bad |= series("3D Douglas theta 1/2, f32", 3, 3, TRIDI_ADI_DOUGLAS, 0.5, TRIDI_FLOAT32, n3, 2, 3.3, 4.7);
    coef_fields = 1;
    bad |= series("3D Douglas theta 1/2, f32, kappa and velocity fields", 3, 3, TRIDI_ADI_DOUGLAS, 0.5,
                  TRIDI_FLOAT32, n3, 2, 3.3, 4.7);
    coef_fields = 0;
    bad |= series("3D Douglas theta 1, f64", 3, 3, TRIDI_ADI_DOUGLAS, 1.0, TRIDI_FLOAT64, n3, 3, 1.6, 2.4);
    bad |= series("2D Peaceman-Rachford, x Dirichlet, y zero flux, f64", 2, 2, TRIDI_ADI_PEACEMAN_RACHFORD, 0.5,
                  TRIDI_FLOAT64, n2, 3, 3.3, 4.7);
    bad |= series("3D grid, 2 implicit axes (layers), Peaceman-Rachford, f64", 3, 2, TRIDI_ADI_PEACEMAN_RACHFORD, 0.5,
                  TRIDI_FLOAT64, n2, 2, 3.3, 4.7);
    bad |= series("2D Douglas theta 1/2, x Dirichlet, y zero flux, f64", 2, 2, TRIDI_ADI_DOUGLAS, 0.5, TRIDI_FLOAT64,
                  n2, 3, 3.3, 4.7);
    for (int r = 0; r < 4; ++r) {
        bad |= conservation(&rng, TRIDI_ADI_DOUGLAS, 0);
        bad |= conservation(&rng, TRIDI_ADI_PEACEMAN_RACHFORD, 0);
    }
    printf("test_adi_convergence: %s\n", bad ? "FAILED" : "passed");
    return bad;
}
