/* 3D heat diffusion with tridi's ADI steps: u_t = kappa (u_xx + u_yy + u_zz) on the unit cube, zero on the
 * boundary, u(0) = sin(pi x) sin(pi y) sin(pi z), whose exact solution decays as exp(-3 pi^2 kappa t).
 * NX x NY x NZ unknowns (nodes i h_a, h_a = 1/(N_a+1)), K Douglas steps (theta 1/2) of dt = the smallest h.
 * Prints the time per step, Mcell-steps/s, the time per sweep (from a profiled run), the error against the
 * exact solution and, on the GPU, the step in field copies (the time of one device-to-device copy of the
 * field measured in the same run) beside the operator's floor (floor_copies) and floor / step in %.
 *
 *   heat3d [N=128 | NXxNYxNZ] [K=50] [auto|cpu|cuda|both] [f64|f32] [fused|fused64|fusedk|staged|compare]
 *          [heat|advdiff|pr]
 *
 * The operator: "heat" (default) the constant diffusivity above; "advdiff" the same problem through the
 * advection-diffusion operator's arrays (a diffusivity field of 0.1 and a velocity field per axis, all
 * read every step; the velocities are 0 so that the exact solution still holds); "pr" Peaceman-Rachford
 * on x and y in every z layer, whose exact solution decays as exp(-2 pi^2 kappa t).
 *
 * On the CUDA backend the field stays in device memory for all K steps. "both" runs the CPU and the GPU
 * one after the other in this process and prints their ratio. The last argument picks the GPU path
 * (TRIDI_ADI_PATH, docs/adi.md and docs/tuning.md); "compare" runs the staged and then the fused path on the
 * GPU in this process. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "tridi.h"
#ifdef HEAT3D_CUDART
#include <cuda_runtime.h>
#endif

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
    const char *path; /* GPU path, or "" */
    const char *oper;
    double step_ms, sweep_ms[3], error, copy_ms;
    int64_t profiled_steps;
} result;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Milliseconds of one device-to-device copy of bytes (the mean of 10 after one untimed), or 0 when this
 * build cannot time it. */
static double device_copy_ms(void *dst, const void *src, size_t bytes)
{
#ifdef HEAT3D_CUDART
    cudaEvent_t e0, e1;
    float ms = 0.0f;
    if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess)
        return 0.0;
    int ok = cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess;
    ok = ok && cudaEventRecord(e0, 0) == cudaSuccess;
    for (int i = 0; i < 10 && ok; ++i)
        ok = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, 0) == cudaSuccess;
    ok = ok && cudaEventRecord(e1, 0) == cudaSuccess && cudaEventSynchronize(e1) == cudaSuccess &&
         cudaEventElapsedTime(&ms, e0, e1) == cudaSuccess;
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return ok ? ms / 10.0 : 0.0;
#else
    (void)dst;
    (void)src;
    (void)bytes;
    return 0.0;
#endif
}

static void *fill(tridi_context ctx, int gpu, size_t bytes, size_t es, double v)
{
    void *h = malloc(bytes), *d = h;
    if (!h) {
        fprintf(stderr, "heat3d: out of host memory\n");
        exit(1);
    }
    for (size_t i = 0; i < bytes / es; ++i)
        if (es == 8)
            ((double *)h)[i] = v;
        else
            ((float *)h)[i] = (float)v;
    if (gpu) {
        CHECK(tridi_device_alloc(ctx, bytes, &d));
        CHECK(tridi_copy_to_device(ctx, d, h, bytes));
        free(h);
    }
    return d;
}

static result simulate(tridi_backend want, const int Nn[3], int K, tridi_dtype t, const char *path, const char *oper)
{
    result r;
    memset(&r, 0, sizeof r);
    r.path = "";
    r.oper = oper;
    if (path && want != TRIDI_BACKEND_CPU) {
        setenv("TRIDI_ADI_PATH", path, 1); /* read by tridi_adi_create */
        r.path = path;
    }
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = want;
    tridi_context ctx;
    CHECK(tridi_create(&ctx, &cfg));
    CHECK(tridi_get_backend(ctx, &r.backend));
    const int gpu = r.backend == TRIDI_BACKEND_CUDA;

    const int NX = Nn[0], NY = Nn[1], NZ = Nn[2];
    const double kappa = 0.1, h[3] = {1.0 / (NX + 1), 1.0 / (NY + 1), 1.0 / (NZ + 1)};
    const double dt = h[0] < h[1] ? (h[0] < h[2] ? h[0] : h[2]) : (h[1] < h[2] ? h[1] : h[2]);
    tridi_grid grid = {3, {0, 0, 0}, {NX + 1, NY + 1, NZ + 1}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {NX, NY, NZ};
    const int64_t ex = NX + 2, ey = NY + 2, cells = ex * ey * (NZ + 2);
    const size_t es = t == TRIDI_FLOAT64 ? 8 : 4, bytes = (size_t)cells * es;
    void *u0 = calloc((size_t)cells, es), *u = malloc(bytes);
    /* sin(pi i h) once per index and axis: their product is the initial and (scaled) exact field. */
    double *sn[3];
    for (int a = 0; a < 3; ++a)
        sn[a] = malloc(sizeof(double) * (size_t)(Nn[a] + 2));
    if (!u0 || !u || !sn[0] || !sn[1] || !sn[2]) {
        fprintf(stderr, "heat3d: out of host memory\n");
        exit(1);
    }
    for (int a = 0; a < 3; ++a)
        for (int64_t i = 0; i <= Nn[a] + 1; ++i)
            sn[a][i] = sin(PI * (double)i * h[a]);
    for (int64_t k = 1; k <= NZ; ++k)
        for (int64_t j = 1; j <= NY; ++j)
            for (int64_t i = 1; i <= NX; ++i) {
                double v = sn[0][i] * sn[1][j] * sn[2][k];
                int64_t c = i + ex * (j + ey * k);
                if (t == TRIDI_FLOAT64)
                    ((double *)u0)[c] = v;
                else
                    ((float *)u0)[c] = (float)v;
            }

    tridi_adi_operator op;
    tridi_adi_operator_init(&op);
    op.kappa = kappa;
    for (int a = 0; a < 3; ++a)
        op.spacing[a] = h[a];
    const int advdiff = !strcmp(oper, "advdiff"), pr = !strcmp(oper, "pr");
    void *coef[4] = {NULL, NULL, NULL, NULL};
    if (advdiff) {
        for (int q = 0; q < 4; ++q)
            coef[q] = fill(ctx, gpu, bytes, es, q ? 0.0 : kappa);
        op.kappa_field = coef[0];
        for (int a = 0; a < 3; ++a)
            op.velocity[a] = coef[1 + a];
    }
    if (pr) {
        op.scheme = TRIDI_ADI_PEACEMAN_RACHFORD;
        op.naxes = 2;
    }

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

    if (gpu) {
        CHECK(tridi_copy_to_host(ctx, u, field, bytes));
        r.copy_ms = device_copy_ms(scratch, field, bytes);
    }
    double decay = exp(-(pr ? 2.0 : 3.0) * PI * PI * kappa * K * dt), err = 0.0, umax = 0.0;
    for (int64_t k = 1; k <= NZ; ++k)
        for (int64_t j = 1; j <= NY; ++j)
            for (int64_t i = 1; i <= NX; ++i) {
                int64_t c = i + ex * (j + ey * k);
                double exact = sn[0][i] * sn[1][j] * sn[2][k] * decay;
                double got = t == TRIDI_FLOAT64 ? ((double *)u)[c] : ((float *)u)[c];
                double d = fabs(got - exact);
                err = d > err || isnan(d) ? d : err;
                umax = fabs(exact) > umax ? fabs(exact) : umax;
            }
    r.error = err / umax;

    if (gpu) {
        tridi_device_free(ctx, field);
        tridi_device_free(ctx, scratch);
        for (int q = 0; q < 4; ++q)
            if (coef[q])
                tridi_device_free(ctx, coef[q]);
    } else {
        free(scratch);
        for (int q = 0; q < 4; ++q)
            free(coef[q]);
    }
    for (int a = 0; a < 3; ++a)
        free(sn[a]);
    free(u0);
    free(u);
    tridi_destroy(ctx);
    return r;
}

/* The operator's floor in field copies: the field-sized arrays a step must read and write at least once,
 * over 2 (a copy reads and writes one). Douglas heat: x reads u, writes D1; y D1 -> D2; z reads D2 and u,
 * writes u: 7. advdiff: x reads u, kappa and three velocities, writes D1 (6); y D1, kappa, v -> D2 (4); z D2,
 * kappa, w, u -> u (5): 15. Peaceman-Rachford: u -> u*, u* -> u: 4. */
static double floor_copies(const char *oper)
{
    return !strcmp(oper, "advdiff") ? 7.5 : !strcmp(oper, "pr") ? 2.0 : 3.5;
}

/* Each sweep's floor, in field passes (the arrays above, per sweep; a copy is two): % of it = that time over
 * the sweep's time (docs/decisions/058). */
static double sweep_floor_pct(const result *r, int a)
{
    static const double heat[3] = {2, 2, 3}, adv[3] = {6, 4, 5}, pr[3] = {2, 2, 0};
    const double *p = !strcmp(r->oper, "advdiff") ? adv : !strcmp(r->oper, "pr") ? pr : heat;
    return r->sweep_ms[a] > 0.0 ? 100.0 * p[a] * 0.5 * r->copy_ms / r->sweep_ms[a] : 0.0;
}

static void report(const result *r, const int Nn[3], int K, tridi_dtype t)
{
    const double cells = (double)Nn[0] * Nn[1] * Nn[2];
    const double copies = r->copy_ms > 0.0 ? r->step_ms / r->copy_ms : 0.0, fl = floor_copies(r->oper);
    const double pct = copies > 0.0 ? 100.0 * fl / copies : 0.0;
    printf("  %-5s %-6s %10.3f ms  %8.1f Mcell-steps/s  %6.2f (%4.1f%%)  %8.3f / %8.3f / %8.3f ms  %10.3e\n",
           tridi_backend_name(r->backend), r->path, r->step_ms, cells / r->step_ms * 1e-3, copies, pct,
           r->sweep_ms[0], r->sweep_ms[1], r->sweep_ms[2], r->error);
    printf("HEAT3D N=%dx%dx%d op=%s steps=%d backend=%s path=%s dtype=%s step_ms=%.4f mcell_steps_per_s=%.1f "
           "copy_ms=%.4f field_copies=%.2f floor_copies=%.1f floor_pct=%.1f sweep_x_ms=%.4f sweep_y_ms=%.4f "
           "sweep_z_ms=%.4f rel_error=%.3e sweep_floor_pct=%.0f/%.0f/%.0f\n",
           Nn[0], Nn[1], Nn[2], r->oper, K, tridi_backend_name(r->backend), *r->path ? r->path : "-",
           t == TRIDI_FLOAT64 ? "f64" : "f32", r->step_ms, cells / r->step_ms * 1e-3, r->copy_ms, copies, fl, pct,
           r->sweep_ms[0], r->sweep_ms[1], r->sweep_ms[2], r->error, sweep_floor_pct(r, 0), sweep_floor_pct(r, 1),
           sweep_floor_pct(r, 2));
}

int main(int argc, char **argv)
{
    int Nn[3] = {128, 128, 128}, K = argc > 2 ? atoi(argv[2]) : 50;
    if (argc > 1 && sscanf(argv[1], "%dx%dx%d", &Nn[0], &Nn[1], &Nn[2]) != 3)
        Nn[0] = Nn[1] = Nn[2] = atoi(argv[1]);
    const char *bname = argc > 3 ? argv[3] : "auto";
    tridi_dtype t = argc > 4 && !strcasecmp(argv[4], "f32") ? TRIDI_FLOAT32 : TRIDI_FLOAT64;
    const char *path = argc > 5 ? argv[5] : NULL, *oper = argc > 6 ? argv[6] : "heat";
    int compare = path && !strcasecmp(path, "compare");
    if (Nn[0] < 2 || Nn[1] < 2 || Nn[2] < 2 || K < 1 ||
        (path && !compare && strcasecmp(path, "fused") && strcasecmp(path, "fused64") &&
         strcasecmp(path, "fusedk") && strcasecmp(path, "staged")) ||
        (strcmp(oper, "heat") && strcmp(oper, "advdiff") && strcmp(oper, "pr"))) {
        fprintf(stderr, "usage: heat3d [N>=2 | NXxNYxNZ] [K>=1] [auto|cpu|cuda|both] [f64|f32] "
                        "[fused|fused64|fusedk|staged|compare] [heat|advdiff|pr]\n");
        return 2;
    }
    int both = !strcasecmp(bname, "both");
    tridi_backend want = TRIDI_BACKEND_AUTO;
    if (!strcasecmp(bname, "cpu") || both)
        want = TRIDI_BACKEND_CPU;
    else if (!strcasecmp(bname, "cuda") || !strcasecmp(bname, "gpu"))
        want = TRIDI_BACKEND_CUDA;

    printf("heat3d: %dx%dx%d unknowns, %d %s steps of dt = min h, kappa 0.1, %s, operator %s\n", Nn[0], Nn[1], Nn[2],
           K, strcmp(oper, "pr") ? "Douglas" : "Peaceman-Rachford", t == TRIDI_FLOAT64 ? "double" : "float", oper);
    printf("  backend path    time/step     throughput         field copies (%% of the floor's %.1f)  "
           "sweep x / y / z (profiled)  error vs exact\n", floor_copies(oper));
    result r[2];
    int nr = 1;
    r[0] = simulate(want, Nn, K, t, compare ? "staged" : path, oper);
    report(&r[0], Nn, K, t);
    if (both || compare) {
        r[1] = simulate(TRIDI_BACKEND_CUDA, Nn, K, t, compare ? "fused" : path, oper);
        report(&r[1], Nn, K, t);
        nr = 2;
        printf("  %s / %s time per step: %.2fx   sweeps x / y / z: %.2fx / %.2fx / %.2fx\n",
               both ? "cpu" : "staged", both ? "cuda" : "fused", r[0].step_ms / r[1].step_ms,
               r[0].sweep_ms[0] / r[1].sweep_ms[0], r[0].sweep_ms[1] / r[1].sweep_ms[1],
               r[0].sweep_ms[2] / r[1].sweep_ms[2]);
    }
    printf("  (error: max norm relative to max |u|; field copies: step time over one device-to-device copy of "
           "the field in the same run, %% of floor: the operator's floor over them; sweep times from a profiled "
           "run of up to 20 steps)\n");
    for (int i = 0; i < nr; ++i)
        if (!(r[i].error < 0.05))
            return 1;
    return 0;
}
