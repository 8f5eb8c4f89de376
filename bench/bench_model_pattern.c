/* A model's pattern of calls against back-to-back calls (issue 29, item 4). The calls of one step of
 * flow_channel (testcases/flow_channel/fc_model.f90, MOHID's mixed precision, arrays with a halo of one):
 * four THOMAS_3D along x and four along y (the two half steps' momentum and the transport of T and S),
 * eight THOMASZ (n = NZ + 1, the boundary row past the work area), and one THOMAS_2D along x and one along
 * y. Each kind is timed per call three ways, in the same run:
 * - back-to-back: the same call repeated, caches and threads warm (what tridi_bench_cpu measures);
 * - after serial work: before every call a single-threaded streaming pass over a buffer larger than the
 *   last-level cache, as a model's serial code does (its threads go to sleep, its arrays leave the cache);
 * - after parallel work: the same pass shared by the threads, as a model's OpenMP loops do.
 * Each table is run twice in one process: the CPU backend's worker pool (the default) and an OpenMP team
 * per call (TRIDI_CPU_POOL=0, docs/tuning.md), each in a context of its own; with TRIDI_CPU_POOL set in the
 * environment, only that one (half the time, for a device run that times many thread counts).
 * Probes of why a call after the model's work costs more (issue 29), the same three ways:
 * - an OpenMP parallel region of the call's threads doing only this probe: what waking a team costs (the
 *   last thread's arrival after the fork), each thread's arrival (medians over the steps), how often a
 *   thread ran on another CPU than in the step before (migrations; 0 when OpenMP binds its threads), and
 *   how long a fixed chain of arithmetic then takes on each thread (a core that wakes at a low clock takes
 *   longer);
 * - a 2D call of 16x16 cells on every thread (TRIDI_CPU_BYTES_PER_THREAD=1): what the caller pays to wake
 *   its threads, the work itself being a few microseconds;
 * - the call's kinds on one thread: the cost of the arrays' cache state alone, no wake-up.
 * Rows starting "csv," repeat every figure for bench/results. Usage:
 * tridi_bench_model_pattern [threads] [steps] [NXxNYxNZ] [MiB of the streaming buffer] [default|mohid|fast]
 * (defaults: OpenMP's, 10, 140x140x56, 256, default). The last argument is the arithmetic: `default` calls
 * tridi_solve (MOHID's arithmetic for these mixed arrays); `mohid` and `fast` call a plan of that arithmetic,
 * made by each context's first call of a kind, so that one build times both. */
#define _GNU_SOURCE
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tridi.h"

enum { KINDS = 5, MODES = 3, VARIANTS = 2, MAX_THREADS = 1024 };
static const char *kind_name[KINDS] = {"THOMAS_3D x", "THOMAS_3D y", "THOMASZ", "THOMAS_2D x", "THOMAS_2D y"};
static const int kind_calls[KINDS] = {4, 4, 8, 1, 1}; /* per model step */
static const char *mode_name[MODES] = {"back-to-back", "after serial", "after parallel"};
static const char *variant_name[VARIANTS] = {"pool", "openmp-team"};
static const char *variant_env[VARIANTS] = {"1", "0"}; /* TRIDI_CPU_POOL */

/* The model's other work: one read-modify-write pass over buf, by one thread or by `threads`. */
static double stream_sink;
static void other_work(float *buf, size_t n, int parallel, int threads)
{
    double s = 0.0;
#pragma omp parallel for num_threads(parallel ? threads : 1) schedule(static) reduction(+ : s)
    for (size_t i = 0; i < n; ++i) {
        buf[i] = buf[i] * 0.5f + 1.0f;
        s += buf[i];
    }
    stream_sink += s;
}

/* A fixed chain of dependent multiply-adds (some 20 us at 3 GHz): timed on each thread as it arrives in a
 * region, it shows a core that starts slow (frequency, caches) after sleeping. Returns the time it ended. */
static double fixed_work(void)
{
    volatile double seed = 1.0;
    double v = seed;
    for (int i = 0; i < 15000; ++i)
        v = v * 0.999999 + 1e-9;
    stream_sink += v * 1e-30;
    return omp_get_wtime();
}

typedef struct arrays {
    tridi_grid g;
    size_t cells;
    float *D, *F, *T, *X;
    double *E;
} arrays;

static int arrays_alloc(arrays *a, int ndim, const int N[3], int threads)
{
    a->g.ndim = ndim;
    for (int d = 0; d < 3; ++d) {
        a->g.lbound[d] = 0;
        a->g.ubound[d] = d < ndim ? N[d] + 1 : 0;
    }
    a->cells = (size_t)(N[0] + 2) * (N[1] + 2) * (ndim == 3 ? N[2] + 2 : 1);
    a->D = malloc(a->cells * 4), a->F = malloc(a->cells * 4), a->T = malloc(a->cells * 4);
    a->X = malloc(a->cells * 4), a->E = malloc(a->cells * 8);
    if (!a->D || !a->F || !a->T || !a->X || !a->E)
        return 1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t c = 0; c < a->cells; ++c) { /* diagonally dominant, first touched by the model's threads */
        unsigned r = (unsigned)(c * 2654435761u);
        a->D[c] = -0.3f - 0.2f * (float)((r >> 8) & 255) / 255.0f;
        a->F[c] = -0.3f - 0.2f * (float)((r >> 16) & 255) / 255.0f;
        a->E[c] = 1.0 + (double)(r & 255) / 128.0;
        a->T[c] = (float)((r >> 4) & 1023) / 512.0f - 1.0f;
        a->X[c] = 0.0f;
    }
    return 0;
}

static void arrays_free(arrays *a) { free(a->D), free(a->F), free(a->T), free(a->X), free(a->E); }

/* The calls: tridi_solve in the default arithmetic, else a plan per context and call shape. */
static tridi_arith call_arith = TRIDI_ARITH_DEFAULT;
enum { PLAN_SLOTS = 32 };
static struct {
    tridi_context ctx;
    const tridi_grid *g;
    tridi_axis axis;
    const int64_t *hi;
    tridi_plan plan;
} plan_slot[PLAN_SLOTS];

static int call(tridi_context ctx, const tridi_grid *g, tridi_axis axis, const int64_t *lo, const int64_t *hi,
                const tridi_arrays *ar)
{
    if (call_arith == TRIDI_ARITH_DEFAULT)
        return tridi_solve(ctx, g, axis, lo, hi, ar) != TRIDI_SUCCESS;
    int s = 0;
    while (s < PLAN_SLOTS && plan_slot[s].plan &&
           !(plan_slot[s].ctx == ctx && plan_slot[s].g == g && plan_slot[s].axis == axis && plan_slot[s].hi == hi))
        ++s;
    if (s == PLAN_SLOTS)
        return 1;
    if (!plan_slot[s].plan) {
        tridi_solve_options o;
        tridi_solve_options_init(&o);
        o.arith = call_arith;
        const tridi_dtype types[5] = {ar->lower_type, ar->diag_type, ar->upper_type, ar->rhs_type, ar->x_type};
        if (tridi_plan_create(ctx, g, axis, lo, hi, types, &o, &plan_slot[s].plan))
            return 1;
        plan_slot[s].ctx = ctx, plan_slot[s].g = g, plan_slot[s].axis = axis, plan_slot[s].hi = hi;
    }
    return tridi_plan_solve(plan_slot[s].plan, ar) != TRIDI_SUCCESS;
}

/* Destroys a context and the plans made on it. */
static void context_done(tridi_context ctx)
{
    int kept = 0;
    for (int s = 0; s < PLAN_SLOTS && plan_slot[s].plan; ++s) {
        if (plan_slot[s].ctx == ctx)
            tridi_plan_destroy(plan_slot[s].plan);
        else
            plan_slot[kept++] = plan_slot[s];
    }
    for (int s = kept; s < PLAN_SLOTS; ++s)
        plan_slot[s].plan = NULL;
    tridi_destroy(ctx);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : omp_get_max_threads();
    int steps = argc > 2 ? atoi(argv[2]) : 10;
    int N[3] = {140, 140, 56};
    size_t mib = argc > 4 ? (size_t)atol(argv[4]) : 256;
    if (argc > 3 && sscanf(argv[3], "%dx%dx%d", &N[0], &N[1], &N[2]) != 3) {
        fprintf(stderr, "tridi_bench_model_pattern: grid '%s' is not NXxNYxNZ\n", argv[3]);
        return 2;
    }
    const char *arith_name = argc > 5 ? argv[5] : "default";
    if (!strcmp(arith_name, "mohid"))
        call_arith = TRIDI_ARITH_MOHID;
    else if (!strcmp(arith_name, "fast"))
        call_arith = TRIDI_ARITH_FAST;
    else if (strcmp(arith_name, "default")) {
        fprintf(stderr, "tridi_bench_model_pattern: arithmetic '%s' is not default, mohid or fast\n", arith_name);
        return 2;
    }
    if (threads < 1)
        threads = 1;
    if (steps < 3)
        steps = 3;
    if (N[0] < 2 || N[1] < 2 || N[2] < 2 || mib < 1) {
        fprintf(stderr, "tridi_bench_model_pattern: sizes must be at least 2 (buffer 1 MiB)\n");
        return 2;
    }
    const size_t nbuf = mib * 1024 * 1024 / sizeof(float);
    float *buf = malloc(nbuf * sizeof *buf);
    arrays a3, a2;
    if (!buf || arrays_alloc(&a3, 3, N, threads) || arrays_alloc(&a2, 2, N, threads)) {
        fprintf(stderr, "tridi_bench_model_pattern: out of memory\n");
        return 1;
    }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < nbuf; ++i)
        buf[i] = (float)(i & 1023);

    printf("tridi %s model-pattern benchmark: %d threads, grid %dx%dx%d, %d steps, %zu MiB streamed between calls, "
           "MOHID mixed precision, %s arithmetic\n",
           tridi_version_string(), threads, N[0], N[1], N[2], steps, mib, arith_name);
    const char *envs[] = {"OMP_PROC_BIND", "OMP_PLACES", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "TRIDI_CPU_SPIN_US"};
    printf("environment:");
    for (int e = 0; e < 5; ++e)
        printf(" %s=%s", envs[e], getenv(envs[e]) ? getenv(envs[e]) : "(unset)");
    printf("\n");
    const double tp0 = omp_get_wtime();
    other_work(buf, nbuf, 0, threads);
    const double tp1 = omp_get_wtime();
    other_work(buf, nbuf, 1, threads);
    printf("the model's other work: %.2f ms serial, %.2f ms on %d threads\n", (tp1 - tp0) * 1e3,
           (omp_get_wtime() - tp1) * 1e3, threads);

    /* Boxes: 3D x/y lines over 1..N, THOMASZ over k = 1..NZ+1, 2D over 1..N. */
    const int64_t lo[3] = {1, 1, 1}, hi3[3] = {N[0], N[1], N[2]}, hiz[3] = {N[0], N[1], N[2] + 1},
                  hi2[3] = {N[0], N[1], 1}, hi16[3] = {16, 16, 1};
    double *t = malloc(sizeof(double) * (size_t)(steps * 8));
    double *tw = malloc(sizeof(double) * (size_t)steps);
    const int nt = threads < MAX_THREADS ? threads : MAX_THREADS;
    double *arrive = malloc(sizeof(double) * (size_t)(steps * nt));
    double *busy = malloc(sizeof(double) * (size_t)(steps * nt));
    int *cpu = malloc(sizeof(int) * (size_t)(steps * nt));
    if (!t || !tw || !arrive || !busy || !cpu)
        return 1;

    /* The probe of an OpenMP team's wake-up. */
    printf("\nOpenMP region of %d threads: the last thread's arrival after the fork (median ms); each thread's "
           "(median ms); migrations\n", threads);
    for (int mode = 0; mode < MODES; ++mode) {
        int migrations = 0;
        for (int r = -1; r < steps; ++r) {
            if (mode > 0)
                other_work(buf, nbuf, mode == 2, threads);
            const double t0 = omp_get_wtime();
#pragma omp parallel num_threads(threads)
            {
                const int id = omp_get_thread_num();
                if (r >= 0 && id < nt) {
                    const double ta = omp_get_wtime();
                    arrive[(size_t)id * steps + r] = ta - t0;
                    cpu[(size_t)id * steps + r] = sched_getcpu();
                    busy[(size_t)id * steps + r] = fixed_work() - ta;
                }
            }
            if (r >= 0)
                tw[r] = omp_get_wtime() - t0;
        }
        for (int id = 0; id < nt; ++id)
            for (int r = 1; r < steps; ++r)
                migrations += cpu[(size_t)id * steps + r] != cpu[(size_t)id * steps + r - 1];
        /* The wake-up: the last thread's arrival (the region itself also holds the fixed work). */
        for (int r = 0; r < steps; ++r) {
            tw[r] = 0;
            for (int id = 0; id < nt; ++id)
                tw[r] = arrive[(size_t)id * steps + r] > tw[r] ? arrive[(size_t)id * steps + r] : tw[r];
        }
        const double wake = bench_median(tw, steps);
        printf("%-15s %8.3f ms last arrival | arrivals:", mode_name[mode], wake * 1e3);
        for (int id = 0; id < nt; ++id)
            printf(" %.3f", bench_median(arrive + (size_t)id * steps, steps) * 1e3);
        printf(" | migrations %d\n", migrations);
        printf("%-15s fixed work on arrival, us by thread:", "");
        for (int id = 0; id < nt; ++id)
            printf(" %.1f", bench_median(busy + (size_t)id * steps, steps) * 1e6);
        printf("\n");
        printf("csv,wake,openmp-team-last-arrival,%d,%s,%.4f,%d\n", threads, mode_name[mode], wake * 1e3, migrations);
    }

    /* The kinds, per variant: the pool and an OpenMP team per call, each its own context; one more context
     * of each runs every call on all threads (the wake-up probe) and one runs on a single thread. */
    double step[VARIANTS][MODES];
    double med[VARIANTS][KINDS][MODES];
    const char *only = getenv("TRIDI_CPU_POOL");
    const int v0 = only && !strcmp(only, "0") ? 1 : 0, v1 = only && !strcmp(only, "1") ? 1 : VARIANTS;
    for (int v = v0; v < v1; ++v) {
        setenv("TRIDI_CPU_POOL", variant_env[v], 1);
        tridi_context ctx, ctx_all;
        if (bench_cpu_context(&ctx, threads))
            return 1;
        setenv("TRIDI_CPU_BYTES_PER_THREAD", "1", 1);
        if (bench_cpu_context(&ctx_all, threads))
            return 1;
        unsetenv("TRIDI_CPU_BYTES_PER_THREAD");
        for (int mode = 0; mode < MODES; ++mode) {
            step[v][mode] = 0;
            for (int k = 0; k <= KINDS; ++k) { /* k == KINDS: the 16x16 call on every thread */
                arrays *a = k >= 3 ? &a2 : &a3;
                const tridi_axis axis = k == 0 || k == 3 ? TRIDI_AXIS_X : k == 2 ? TRIDI_AXIS_Z : TRIDI_AXIS_Y;
                const int64_t *hi = k == KINDS ? hi16 : k >= 3 ? hi2 : k == 2 ? hiz : hi3;
                tridi_arrays ar = {a->D, TRIDI_FLOAT32, a->E, TRIDI_FLOAT64, a->F, TRIDI_FLOAT32,
                                   a->T, TRIDI_FLOAT32, a->X, TRIDI_FLOAT32};
                const int calls = k == KINDS ? steps : steps * kind_calls[k];
                for (int r = -1; r < calls; ++r) { /* r = -1: warm-up (scratch and workers made) */
                    if (mode > 0)
                        other_work(buf, nbuf, mode == 2, threads);
                    const double t0 = omp_get_wtime();
                    if (call(k == KINDS ? ctx_all : ctx, &a->g, axis, lo, hi, &ar)) {
                        fprintf(stderr, "%s\n", tridi_error_message());
                        return 1;
                    }
                    if (r >= 0)
                        t[r] = omp_get_wtime() - t0;
                }
                const double m = bench_median(t, calls);
                if (k < KINDS) {
                    med[v][k][mode] = m;
                    step[v][mode] += m * kind_calls[k];
                } else {
                    printf("%s: a 16x16 call on %d threads, %s: %.3f ms\n", variant_name[v], threads,
                           mode_name[mode], m * 1e3);
                    printf("csv,wake,%s-16x16-call,%d,%s,%.4f,\n", variant_name[v], threads, mode_name[mode],
                           m * 1e3);
                }
            }
        }
        context_done(ctx_all);
        context_done(ctx);
    }
    unsetenv("TRIDI_CPU_POOL");

    /* The cache state alone: the kinds on one thread. */
    double one[KINDS][MODES];
    {
        tridi_context c1;
        if (bench_cpu_context(&c1, 1))
            return 1;
        for (int mode = 0; mode < 2; ++mode)
            for (int k = 0; k < 3; ++k) {
                arrays *a = &a3;
                const tridi_axis axis = k == 0 ? TRIDI_AXIS_X : k == 2 ? TRIDI_AXIS_Z : TRIDI_AXIS_Y;
                const int64_t *hi = k == 2 ? hiz : hi3;
                tridi_arrays ar = {a->D, TRIDI_FLOAT32, a->E, TRIDI_FLOAT64, a->F, TRIDI_FLOAT32,
                                   a->T, TRIDI_FLOAT32, a->X, TRIDI_FLOAT32};
                const int calls = steps;
                for (int r = -1; r < calls; ++r) {
                    if (mode > 0)
                        other_work(buf, nbuf, 0, threads);
                    const double t0 = omp_get_wtime();
                    if (call(c1, &a->g, axis, lo, hi, &ar))
                        return 1;
                    if (r >= 0)
                        t[r] = omp_get_wtime() - t0;
                }
                one[k][mode] = bench_median(t, calls);
            }
        context_done(c1);
        printf("one thread, no wake-up (cache state alone), ms back-to-back / after serial: x %.3f / %.3f, "
               "y %.3f / %.3f, z %.3f / %.3f\n", one[0][0] * 1e3, one[0][1] * 1e3, one[1][0] * 1e3,
               one[1][1] * 1e3, one[2][0] * 1e3, one[2][1] * 1e3);
        for (int k = 0; k < 3; ++k)
            printf("csv,one-thread,%s,1,%s,%.4f,%.4f\n", kind_name[k], "b2b/serial", one[k][0] * 1e3,
                   one[k][1] * 1e3);
    }

    for (int v = v0; v < v1; ++v) {
        printf("\n%s: median ms per call (calls per model step in brackets; MB: the five arrays' bytes over the "
               "box, 24 B/cell)\n", variant_name[v]);
        printf("%-16s %8s %14s %14s %14s %8s %8s\n", "kind", "MB", mode_name[0], mode_name[1], mode_name[2],
               "ser/b2b", "par/b2b");
        for (int k = 0; k < KINDS; ++k) {
            char name[40];
            snprintf(name, sizeof name, "%s [%d]", kind_name[k], kind_calls[k]);
            const double cells = (double)N[0] * N[1] * (k >= 3 ? 1 : k == 2 ? N[2] + 1 : N[2]);
            const double *m = med[v][k];
            printf("%-16s %8.2f %14.3f %14.3f %14.3f %8.2f %8.2f\n", name, cells * 24.0 / 1e6, m[0] * 1e3,
                   m[1] * 1e3, m[2] * 1e3, m[1] / m[0], m[2] / m[0]);
            printf("csv,kind,%s,%d,%s,%.4f,%.4f,%.4f\n", variant_name[v], threads, kind_name[k], m[0] * 1e3,
                   m[1] * 1e3, m[2] * 1e3);
        }
        const double *st = step[v];
        printf("%-16s %8s %14.3f %14.3f %14.3f %8.2f %8.2f\n", "solver per step", "", st[0] * 1e3, st[1] * 1e3,
               st[2] * 1e3, st[1] / st[0], st[2] / st[0]);
        printf("csv,step,%s,%d,solver per step,%.4f,%.4f,%.4f\n", variant_name[v], threads, st[0] * 1e3,
               st[1] * 1e3, st[2] * 1e3);
    }
    if (v0 == 0 && v1 == VARIANTS)
        printf("\npool over openmp-team, solver per step: back-to-back %.2f, after serial %.2f, after parallel "
               "%.2f\n", step[0][0] / step[1][0], step[0][1] / step[1][1], step[0][2] / step[1][2]);
    free(t), free(tw), free(arrive), free(busy), free(cpu);
    arrays_free(&a3), arrays_free(&a2), free(buf);
    return stream_sink == 12345.0; /* keeps the streaming passes */
}
