/* 3D heat diffusion with tridi's ADI steps: u_t = kappa (u_xx + u_yy + u_zz) on the unit cube, zero on the
 * boundary, u(0) = sin(pi x) sin(pi y) sin(pi z), whose exact solution decays as exp(-3 pi^2 kappa t).
 * N^3 unknowns (nodes i h, h = 1/(N+1)), K Douglas steps (theta 1/2) of dt = h. Prints the time per step,
 * the time per sweep (assembly + solve, from a profiled run) and the error against the exact solution.
 *
 *   heat3d [N=128] [K=50] [auto|cpu|cuda|both] [f64|f32]
 *
 * On the CUDA backend the field stays in device memory for all K steps. "both" runs the CPU and the GPU
 * one after the other in this process and prints their ratio. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tridi.h"

static const double PI = 3.14159265358979323846;

#define CHECK(call)                                                                                            \
    do {                                                                                                       \
        tridi_status s_ = (call);                                                                              \
        if (s_ != TRIDI_SUCCESS) {                                                                             \
            fprintf(stderr, "heat3d: %s failed: %s: %s\n", #call, tridi_status_name(s_), tridi_error_message()); \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)

typedef struct result {
    tridi_backend backend;
    double step_ms, sweep_ms[3], error;
    int64_t profiled_steps;
} result;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static result simulate(tridi_backend want, int N, int K, tridi_dtype t)
{
    result r;
    memset(&r, 0, sizeof r);
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = want;
    tridi_context ctx;
    CHECK(tridi_create(&ctx, &cfg));
    CHECK(tridi_get_backend(ctx, &r.backend));
    const int gpu = r.backend == TRIDI_BACKEND_CUDA;

    const double kappa = 0.1, h = 1.0 / (N + 1), dt = h;
    tridi_grid grid = {3, {0, 0, 0}, {N + 1, N + 1, N + 1}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {N, N, N};
    const int64_t e = N + 2, cells = e * e * e;
    const size_t es = t == TRIDI_FLOAT64 ? 8 : 4, bytes = (size_t)cells * es;
    void *u0 = calloc((size_t)cells, es), *u = malloc(bytes);
    /* sin(pi i h) once per index: the product over three axes is the initial and (scaled) exact field. */
    double *sn = malloc(sizeof(double) * (size_t)(N + 2));
    if (!u0 || !u || !sn) {
        fprintf(stderr, "heat3d: out of host memory\n");
        exit(1);
    }
    for (int64_t i = 0; i <= N + 1; ++i)
        sn[i] = sin(PI * (double)i * h);
    for (int64_t k = 1; k <= N; ++k)
        for (int64_t j = 1; j <= N; ++j)
            for (int64_t i = 1; i <= N; ++i) {
                double v = sn[i] * sn[j] * sn[k];
                int64_t c = i + e * (j + e * k);
                if (t == TRIDI_FLOAT64)
                    ((double *)u0)[c] = v;
                else
                    ((float *)u0)[c] = (float)v;
            }

    tridi_adi_operator op;
    tridi_adi_operator_init(&op);
    op.kappa = kappa;
    op.spacing[0] = op.spacing[1] = op.spacing[2] = h;

    /* The field the K steps run on, and a scratch copy for the warm-up and the profiled run. */
    void *field = u, *scratch = NULL;
    if (gpu) {
        CHECK(tridi_device_alloc(ctx, bytes, &field));
        CHECK(tridi_device_alloc(ctx, bytes, &scratch));
        CHECK(tridi_copy_to_device(ctx, field, u0, bytes));
        CHECK(tridi_copy_to_device(ctx, scratch, u0, bytes));
    } else {
        memcpy(u, u0, bytes);
        scratch = malloc(bytes);
        if (!scratch) {
            fprintf(stderr, "heat3d: out of host memory\n");
            exit(1);
        }
        memcpy(scratch, u0, bytes);
    }

    tridi_adi plan;
    CHECK(tridi_adi_create(&plan, ctx, &grid, lo, hi, t, &op));
    CHECK(tridi_adi_step(plan, scratch, dt, NULL)); /* warm-up: first touch, module load, clocks */
    CHECK(tridi_adi_synchronize(plan));
    double t0 = now_s();
    for (int n = 0; n < K; ++n)
        CHECK(tridi_adi_step(plan, field, dt, NULL));
    CHECK(tridi_adi_synchronize(plan));
    r.step_ms = (now_s() - t0) * 1e3 / K;
    CHECK(tridi_adi_destroy(plan));

    /* Per-sweep breakdown: a second plan that times its sweeps (it waits for the GPU after each step). */
    op.profile = 1;
    int P = K < 20 ? K : 20;
    CHECK(tridi_adi_create(&plan, ctx, &grid, lo, hi, t, &op));
    for (int n = 0; n < P; ++n)
        CHECK(tridi_adi_step(plan, scratch, dt, NULL));
    CHECK(tridi_adi_timings(plan, r.sweep_ms, &r.profiled_steps));
    CHECK(tridi_adi_destroy(plan));
    for (int a = 0; a < 3; ++a)
        r.sweep_ms[a] /= (double)r.profiled_steps;

    if (gpu)
        CHECK(tridi_copy_to_host(ctx, u, field, bytes));
    double decay = exp(-3.0 * PI * PI * kappa * K * dt), err = 0.0, umax = 0.0;
    for (int64_t k = 1; k <= N; ++k)
        for (int64_t j = 1; j <= N; ++j)
            for (int64_t i = 1; i <= N; ++i) {
                int64_t c = i + e * (j + e * k);
                double exact = sn[i] * sn[j] * sn[k] * decay;
                double got = t == TRIDI_FLOAT64 ? ((double *)u)[c] : ((float *)u)[c];
                double d = fabs(got - exact);
                err = d > err || isnan(d) ? d : err;
                umax = fabs(exact) > umax ? fabs(exact) : umax;
            }
    r.error = err / umax;

    if (gpu) {
        tridi_device_free(ctx, field);
        tridi_device_free(ctx, scratch);
    } else {
        free(scratch);
    }
    free(sn);
    free(u0);
    free(u);
    tridi_destroy(ctx);
    return r;
}

static void report(const result *r, int N, int K, tridi_dtype t)
{
    printf("  %-5s  %10.3f ms  %8.1f Mcell-steps/s   %8.3f / %8.3f / %8.3f ms  %10.3e\n",
           tridi_backend_name(r->backend), r->step_ms, (double)N * N * N / r->step_ms * 1e-3, r->sweep_ms[0],
           r->sweep_ms[1], r->sweep_ms[2], r->error);
    printf("HEAT3D N=%d steps=%d backend=%s dtype=%s step_ms=%.4f sweep_x_ms=%.4f sweep_y_ms=%.4f sweep_z_ms=%.4f "
           "rel_error=%.3e\n", N, K, tridi_backend_name(r->backend), t == TRIDI_FLOAT64 ? "f64" : "f32", r->step_ms,
           r->sweep_ms[0], r->sweep_ms[1], r->sweep_ms[2], r->error);
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 128, K = argc > 2 ? atoi(argv[2]) : 50;
    const char *bname = argc > 3 ? argv[3] : "auto";
    tridi_dtype t = argc > 4 && !strcasecmp(argv[4], "f32") ? TRIDI_FLOAT32 : TRIDI_FLOAT64;
    if (N < 2 || K < 1) {
        fprintf(stderr, "usage: heat3d [N>=2] [K>=1] [auto|cpu|cuda|both] [f64|f32]\n");
        return 2;
    }
    int both = !strcasecmp(bname, "both");
    tridi_backend want = TRIDI_BACKEND_AUTO;
    if (!strcasecmp(bname, "cpu") || both)
        want = TRIDI_BACKEND_CPU;
    else if (!strcasecmp(bname, "cuda") || !strcasecmp(bname, "gpu"))
        want = TRIDI_BACKEND_CUDA;

    const double h = 1.0 / (N + 1);
    printf("heat3d: %d^3 unknowns, %d Douglas steps of dt = h = %.3g (t = %.3g), kappa 0.1, %s\n", N, K, h, K * h,
           t == TRIDI_FLOAT64 ? "double" : "float");
    printf("  backend  time/step     throughput             sweep x / y / z (assembly + solve)   error vs exact\n");
    result r[2];
    r[0] = simulate(want, N, K, t);
    report(&r[0], N, K, t);
    if (both) {
        r[1] = simulate(TRIDI_BACKEND_CUDA, N, K, t);
        report(&r[1], N, K, t);
        printf("  cpu / cuda time per step: %.1fx   sweeps x / y / z: %.1fx / %.1fx / %.1fx\n",
               r[0].step_ms / r[1].step_ms, r[0].sweep_ms[0] / r[1].sweep_ms[0], r[0].sweep_ms[1] / r[1].sweep_ms[1],
               r[0].sweep_ms[2] / r[1].sweep_ms[2]);
    }
    printf("  (error: max norm relative to max |u|; sweep times from a profiled run of up to 20 steps)\n");
    for (int i = 0; i < (both ? 2 : 1); ++i)
        if (!(r[i].error < 0.05))
            return 1;
    return 0;
}
