/* CPU benchmark: per grid and axis, the MOHID-style reference (sequential and OpenMP over slabs, the way
 * MOHID parallelises THOMAS_3D / THOMASZ) against tridi's OpenMP backend, in MOHID's mixed precision,
 * and tridi's bandwidth at minimum traffic (24 B/cell: read D, E, F, Ti, write x) against a host copy
 * bandwidth measured in the same run. Times are medians after a warm-up. `differ` is the share of cells whose
 * answer is not bit for bit the reference's: 0 in MOHID's arithmetic, which tridi_solve uses for these
 * mixed types (both divide twice and fuse nothing, as MOHID's source reads: docs/decisions/040).
 * Usage: tridi_bench_cpu [threads] [reps] [NXxNYxNZ]   (threads default: OpenMP's default; reps default 9;
 * the grid, when given, is the only one run: tuning sweeps repeat one grid without the others) */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mohid_reference.h"
#include "bench_util.h"
#include "tridi.h"

/* Host copy bandwidth with all threads, counting bytes read + written: two buffers of 512 MiB, far
 * beyond any cache, allocated and first-touched once by the threads that copy them. */
typedef struct copy_bench {
    size_t n; /* floats per buffer */
    float *a, *b;
} copy_bench;

static int copy_init(copy_bench *cb, int threads)
{
    cb->n = (size_t)1 << 27;
    cb->a = malloc(cb->n * sizeof *cb->a);
    cb->b = malloc(cb->n * sizeof *cb->b);
    if (!cb->a || !cb->b)
        return 1;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < cb->n; ++i) {
        cb->a[i] = (float)i;
        cb->b[i] = 0.0f;
    }
    return 0;
}

/* Median of `reps` copies. Sampled again right before each grid and axis is timed: the host is shared and
 * its copy bandwidth drifts by 20% within seconds, so a figure taken once at start-up could be compared
 * with a solve timed under different load. */
static double copy_bandwidth(const copy_bench *cb, int threads, int reps)
{
    double t[9];
    if (reps > 9)
        reps = 9;
    for (int r = 0; r < reps; ++r) {
        double t0 = omp_get_wtime();
#pragma omp parallel num_threads(threads)
        {
            int id = omp_get_thread_num(), nt = omp_get_num_threads();
            size_t c0 = cb->n * (size_t)id / (size_t)nt, c1 = cb->n * (size_t)(id + 1) / (size_t)nt;
            memcpy(cb->b + c0, cb->a + c0, (c1 - c0) * sizeof *cb->a);
        }
        t[r] = omp_get_wtime() - t0;
    }
    return 2.0 * (double)(cb->n * sizeof *cb->a) / bench_median(t, reps);
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : omp_get_max_threads();
    int reps = argc > 2 ? atoi(argv[2]) : 9;
    if (threads < 1)
        threads = 1;
    if (reps < 3)
        reps = 3;
    static const int default_grids[][3] = {{70, 70, 28}, {140, 140, 28}, {140, 140, 56}, {560, 560, 56}};
    int grids[4][3];
    size_t ngrids = 4;
    memcpy(grids, default_grids, sizeof grids);
    if (argc > 3) {
        char tail;
        if (sscanf(argv[3], "%dx%dx%d%c", &grids[0][0], &grids[0][1], &grids[0][2], &tail) != 3 || grids[0][0] < 1 ||
            grids[0][1] < 1 || grids[0][2] < 1) {
            fprintf(stderr, "tridi_bench_cpu: grid '%s' is not NXxNYxNZ with positive sizes\n", argv[3]);
            return 2;
        }
        ngrids = 1;
    }
    copy_bench cb;
    if (copy_init(&cb, threads)) {
        fprintf(stderr, "could not allocate the copy buffers (1 GiB)\n");
        return 1;
    }
    printf("tridi %s CPU benchmark: %d threads, host copy bandwidth %.1f GB/s at start (read+write), MOHID mixed "
           "precision\n",
           tridi_version_string(), threads, copy_bandwidth(&cb, threads, 7) / 1e9);
    printf("(copy_GB/s: sampled right before each row's tridi timing; %%copy is tridi's GB/s over it)\n");
    printf("%-12s %-4s %10s %10s %10s %9s %9s %9s %10s %8s %9s\n", "grid", "axis", "seq_ms", "omp_ms", "tridi_ms",
           "vs_seq", "vs_omp", "GB/s", "copy_GB/s", "%copy", "differ");
    tridi_context ctx;
    if (bench_cpu_context(&ctx, threads))
        return 1;
    for (size_t gi = 0; gi < ngrids; ++gi) {
        const int *N = grids[gi];
        tridi_grid g = {3, {0, 0, 0}, {N[0] + 1, N[1] + 1, N[2] + 1}};
        mohid_grid mg = {{0, 0, 0}, {N[0] + 1, N[1] + 1, N[2] + 1}};
        size_t cells = (size_t)(N[0] + 2) * (N[1] + 2) * (N[2] + 2);
        float *D = malloc(cells * 4), *F = malloc(cells * 4), *T = malloc(cells * 4), *X = malloc(cells * 4);
        float *Xr = malloc(cells * 4);
        double *E = malloc(cells * 8);
        unsigned s = 12345u + (unsigned)gi;
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t c = 0; c < cells; ++c) { /* first touch by the threads that will use the data */
            unsigned r = (unsigned)(c * 2654435761u) ^ s;
            D[c] = -0.3f - 0.2f * (float)((r >> 8) & 255) / 255.0f;
            F[c] = -0.3f - 0.2f * (float)((r >> 16) & 255) / 255.0f;
            E[c] = 1.0 + (double)(r & 255) / 128.0;
            T[c] = (float)((r >> 4) & 1023) / 512.0f - 1.0f;
            X[c] = Xr[c] = 0.0f;
        }
        const int64_t lo[3] = {1, 1, 1}, hi[3] = {N[0], N[1], N[2]};
        const double ncells = (double)N[0] * N[1] * N[2];
        int greps = cells > 4000000 ? (reps < 7 ? reps : 7) : reps;
        double *t = malloc(sizeof(double) * (size_t)greps);
        for (int axis = 0; axis < 3; ++axis) {
            double tm[3], bw = 0.0;
            for (int variant = 0; variant < 3; ++variant) {
                if (variant == 2)
                    bw = copy_bandwidth(&cb, threads, 3);
                for (int r = -1; r < greps; ++r) { /* r = -1: warm-up */
                    double t0 = omp_get_wtime();
                    if (variant == 0)
                        mohid_thomas(&mg, axis, lo, hi, D, E, F, T, Xr, 1);
                    else if (variant == 1)
                        mohid_thomas(&mg, axis, lo, hi, D, E, F, T, Xr, threads);
                    else {
                        tridi_arrays a = {D, TRIDI_FLOAT32, E, TRIDI_FLOAT64, F, TRIDI_FLOAT32, T, TRIDI_FLOAT32,
                                          X, TRIDI_FLOAT32};
                        if (tridi_solve(ctx, &g, (tridi_axis)axis, lo, hi, &a)) {
                            fprintf(stderr, "%s\n", tridi_error_message());
                            return 1;
                        }
                    }
                    double dt = omp_get_wtime() - t0;
                    if (r >= 0)
                        t[r] = dt;
                }
                tm[variant] = bench_median(t, greps);
            }
            /* The answer must match the reference, or the timing means nothing. */
            double maxerr = 0.0;
            size_t differ = 0;
            for (size_t c = 0; c < cells; ++c) {
                maxerr = fmax(maxerr, fabs((double)X[c] - (double)Xr[c]));
                differ += memcmp(X + c, Xr + c, sizeof *X) != 0;
            }
            if (!(maxerr < 1e-4)) {
                fprintf(stderr, "answer differs from the reference by %g\n", maxerr);
                return 1;
            }
            double gbs = 24.0 * ncells / tm[2] / 1e9;
            char name[32];
            snprintf(name, sizeof name, "%dx%dx%d", N[0], N[1], N[2]);
            printf("%-12s %-4c %10.3f %10.3f %10.3f %9.1f %9.2f %9.1f %10.1f %7.0f%% %8.4f%%\n", name,
                   "xyz"[axis], tm[0] * 1e3, tm[1] * 1e3, tm[2] * 1e3, tm[0] / tm[2], tm[1] / tm[2], gbs, bw / 1e9,
                   100.0 * gbs * 1e9 / bw, 100.0 * (double)differ / ncells);
            fflush(stdout);
        }
        free(t);
        free(D), free(F), free(T), free(X), free(Xr), free(E);
    }
    tridi_destroy(ctx);
    free(cb.a);
    free(cb.b);
    return 0;
}
