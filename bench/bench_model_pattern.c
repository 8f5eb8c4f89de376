/* A model's pattern of calls against back-to-back calls (issue 29, item 4). The calls of one step of
 * flow_channel (testcases/flow_channel/fc_model.f90, MOHID's mixed precision, arrays with a halo of one):
 * four THOMAS_3D along x and four along y (the two half steps' momentum and the transport of T and S),
 * eight THOMASZ (n = NZ + 1, the boundary row past the work area), and one THOMAS_2D along x and one along
 * y. Each kind is timed per call three ways, in the same run:
 * - back-to-back: the same call repeated, caches and threads warm (what tridi_bench_cpu measures);
 * - after serial work: before every call a single-threaded streaming pass over a buffer larger than the
 *   last-level cache, as a model's serial code does (its threads go to sleep, its arrays leave the cache);
 * - after parallel work: the same pass shared by the threads, as a model's OpenMP loops do.
 * It also times an empty parallel region of the call's threads the same three ways: what waking them
 * costs. Usage: tridi_bench_model_pattern [threads] [steps] [NXxNYxNZ] [MiB of the streaming buffer]
 * (defaults: OpenMP's, 10, 140x140x56, 256). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tridi.h"

enum { KINDS = 5, MODES = 3 };
static const char *kind_name[KINDS] = {"THOMAS_3D x", "THOMAS_3D y", "THOMASZ", "THOMAS_2D x", "THOMAS_2D y"};
static const int kind_calls[KINDS] = {4, 4, 8, 1, 1}; /* per model step */
static const char *mode_name[MODES] = {"back-to-back", "after serial", "after parallel"};

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

    tridi_context ctx;
    if (bench_cpu_context(&ctx, threads))
        return 1;
    /* Boxes: 3D x/y lines over 1..N, THOMASZ over k = 1..NZ+1, 2D over 1..N. */
    const int64_t lo[3] = {1, 1, 1}, hi3[3] = {N[0], N[1], N[2]}, hiz[3] = {N[0], N[1], N[2] + 1},
                  hi2[3] = {N[0], N[1], 1};
    double *t[MODES][KINDS], wake[MODES];
    for (int m = 0; m < MODES; ++m)
        for (int k = 0; k < KINDS; ++k)
            t[m][k] = malloc(sizeof(double) * (size_t)(steps * kind_calls[k]));
    double *tw = malloc(sizeof(double) * (size_t)steps);
    for (int mode = 0; mode < MODES; ++mode) {
        for (int k = 0; k < KINDS; ++k) {
            arrays *a = k >= 3 ? &a2 : &a3;
            const tridi_axis axis = k == 0 || k == 3 ? TRIDI_AXIS_X : k == 2 ? TRIDI_AXIS_Z : TRIDI_AXIS_Y;
            const int64_t *hi = k >= 3 ? hi2 : k == 2 ? hiz : hi3;
            tridi_arrays ar = {a->D, TRIDI_FLOAT32, a->E, TRIDI_FLOAT64, a->F, TRIDI_FLOAT32,
                               a->T, TRIDI_FLOAT32, a->X, TRIDI_FLOAT32};
            const int calls = steps * kind_calls[k];
            for (int r = -1; r < calls; ++r) { /* r = -1: warm-up (scratch allocated) */
                if (mode > 0)
                    other_work(buf, nbuf, mode == 2, threads);
                const double t0 = omp_get_wtime();
                if (tridi_solve(ctx, &a->g, axis, lo, hi, &ar)) {
                    fprintf(stderr, "%s\n", tridi_error_message());
                    return 1;
                }
                if (r >= 0)
                    t[mode][k][r] = omp_get_wtime() - t0;
            }
        }
        for (int r = -1; r < steps; ++r) {
            if (mode > 0)
                other_work(buf, nbuf, mode == 2, threads);
            const double t0 = omp_get_wtime();
#pragma omp parallel num_threads(threads)
            {
                if (omp_get_thread_num() < 0) /* never: an empty region the compiler cannot drop */
                    stream_sink += 1.0;
            }
            if (r >= 0)
                tw[r] = omp_get_wtime() - t0;
        }
        wake[mode] = bench_median(tw, steps);
    }
    printf("tridi %s model-pattern benchmark: %d threads, grid %dx%dx%d, %d steps, %zu MiB streamed between calls, "
           "MOHID mixed precision\n",
           tridi_version_string(), threads, N[0], N[1], N[2], steps, mib);
    printf("median ms per call (calls per model step in brackets; MB: the five arrays' bytes over the box, 24 B/cell)\n");
    printf("%-16s %8s %14s %14s %14s %8s %8s\n", "kind", "MB", mode_name[0], mode_name[1], mode_name[2], "ser/b2b",
           "par/b2b");
    double step[MODES] = {0, 0, 0};
    for (int k = 0; k < KINDS; ++k) {
        double med[MODES];
        for (int m = 0; m < MODES; ++m) {
            med[m] = bench_median(t[m][k], steps * kind_calls[k]);
            step[m] += med[m] * kind_calls[k];
        }
        char name[40];
        snprintf(name, sizeof name, "%s [%d]", kind_name[k], kind_calls[k]);
        const double cells = (double)N[0] * N[1] * (k >= 3 ? 1 : k == 2 ? N[2] + 1 : N[2]);
        printf("%-16s %8.2f %14.3f %14.3f %14.3f %8.2f %8.2f\n", name, cells * 24.0 / 1e6, med[0] * 1e3,
               med[1] * 1e3, med[2] * 1e3, med[1] / med[0], med[2] / med[0]);
    }
    printf("%-16s %8s %14.3f %14.3f %14.3f %8.2f %8.2f\n", "solver per step", "", step[0] * 1e3, step[1] * 1e3,
           step[2] * 1e3, step[1] / step[0], step[2] / step[0]);
    printf("%-16s %8s %14.3f %14.3f %14.3f   (an empty parallel region of %d threads)\n", "wake-up ms", "", wake[0] * 1e3,
           wake[1] * 1e3, wake[2] * 1e3, threads);
    tridi_destroy(ctx);
    for (int m = 0; m < MODES; ++m)
        for (int k = 0; k < KINDS; ++k)
            free(t[m][k]);
    free(tw);
    arrays_free(&a3), arrays_free(&a2), free(buf);
    return stream_sink == 12345.0; /* keeps the streaming passes */
}
