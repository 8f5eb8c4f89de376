/* CPU benchmark of the arithmetic contracts (docs/decisions/040): per grid, axis and type combination, the
 * median time of tridi_plan_solve on the CPU backend in TRIDI_ARITH_MOHID, TRIDI_ARITH_MOHID_NEWTYPE (where
 * the library has it) and TRIDI_ARITH_FAST, as CSV on stdout. Public API only, so that the same source
 * builds against an older tridi for a before/after comparison (run the two builds alternately).
 * Usage: tridi_bench_cpu_arith [threads] [reps] [call] [NXxNYxNZ]... (default: 2 threads, 9 reps, 140x140x56;
 * `call`: the plans take ON_ERROR_CALL, the undo log of decision 053's guard, instead of LINES) */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "tridi.h"

static tridi_on_error on_error = TRIDI_ON_ERROR_LINES;

/* One plan solved reps times after a warm-up; the median in ms (*min: the fastest, the figure least
 * disturbed on a shared host), or -1 if the plan is refused. */
static double time_plan(tridi_context ctx, const tridi_grid *g, tridi_axis axis, const int64_t lo[3],
                        const int64_t hi[3], const tridi_arrays *a, int arith, int reps, double *min)
{
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.arith = (tridi_arith)arith;
    o.on_error = on_error;
    const tridi_dtype t[5] = {a->lower_type, a->diag_type, a->upper_type, a->rhs_type, a->x_type};
    tridi_plan plan;
    if (tridi_plan_create(ctx, g, axis, lo, hi, t, &o, &plan))
        return -1.0;
    double *ts = malloc(sizeof(double) * (size_t)reps);
    for (int r = -1; r < reps; ++r) {
        const double t0 = omp_get_wtime();
        if (tridi_plan_solve(plan, a)) {
            fprintf(stderr, "%s\n", tridi_error_message());
            exit(1);
        }
        if (r >= 0)
            ts[r] = omp_get_wtime() - t0;
    }
    tridi_plan_destroy(plan);
    *min = ts[0];
    for (int r = 1; r < reps; ++r)
        *min = ts[r] < *min ? ts[r] : *min;
    *min *= 1e3;
    const double ms = 1e3 * bench_median(ts, reps);
    free(ts);
    return ms;
}

int main(int argc, char **argv)
{
    const int threads = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 2;
    const int reps = argc > 2 && atoi(argv[2]) >= 3 ? atoi(argv[2]) : 9;
    tridi_context ctx;
    if (bench_cpu_context(&ctx, threads))
        return 1;
    if (argc > 3 && !strcmp(argv[3], "call")) {
        on_error = TRIDI_ON_ERROR_CALL;
        argv++, argc--; /* the grids follow it (threads and reps are read) */
    }
    printf("grid,axis,combo,arith,median_ms,min_ms,min_ns_per_cell,on_error\n");
    const int ngrids = argc > 3 ? argc - 3 : 1;
    for (int gi = 0; gi < ngrids; ++gi) {
        int N[3] = {140, 140, 56};
        if (argc > 3 && sscanf(argv[3 + gi], "%dx%dx%d", &N[0], &N[1], &N[2]) != 3) {
            fprintf(stderr, "tridi_bench_cpu_arith: grid '%s' is not NXxNYxNZ\n", argv[3 + gi]);
            return 2;
        }
        const tridi_grid g = {3, {0, 0, 0}, {N[0] + 1, N[1] + 1, N[2] + 1}};
        const size_t cells = (size_t)(N[0] + 2) * (N[1] + 2) * (N[2] + 2);
        const int64_t lo[3] = {1, 1, 1}, hi[3] = {N[0], N[1], N[2]};
        for (int combo = 0; combo < 2; ++combo) { /* 0: mixed, 1: all double */
            const size_t es = combo ? 8 : 4;
            char *D = malloc(cells * es), *F = malloc(cells * es), *T = malloc(cells * es), *X = malloc(cells * es);
            double *E = malloc(cells * 8);
#pragma omp parallel for num_threads(threads) schedule(static)
            for (size_t c = 0; c < cells; ++c) { /* MOHID-like, first touch by the solving threads */
                const unsigned r = (unsigned)(c * 2654435761u) ^ 12345u;
                const double d = -0.3 - 0.2 * (double)((r >> 8) & 255) / 255.0;
                const double f = -0.3 - 0.2 * (double)((r >> 16) & 255) / 255.0;
                const double t = (double)((r >> 4) & 1023) / 512.0 - 1.0;
                if (combo) {
                    ((double *)D)[c] = d, ((double *)F)[c] = f, ((double *)T)[c] = t, ((double *)X)[c] = 0.0;
                } else {
                    ((float *)D)[c] = (float)d, ((float *)F)[c] = (float)f, ((float *)T)[c] = (float)t;
                    ((float *)X)[c] = 0.0f;
                }
                E[c] = 1.0 + (double)(r & 255) / 128.0;
            }
            const tridi_dtype ft = combo ? TRIDI_FLOAT64 : TRIDI_FLOAT32;
            const tridi_arrays a = {D, ft, E, TRIDI_FLOAT64, F, ft, T, ft, X, ft};
            for (int axis = 0; axis < 3; ++axis)
                for (int arith = 1; arith <= 3; ++arith) { /* MOHID, FAST, MOHID_NEWTYPE */
                    double min = 0.0;
                    const double ms = time_plan(ctx, &g, (tridi_axis)axis, lo, hi, &a, arith, reps, &min);
                    if (ms < 0)
                        continue; /* an arithmetic this library does not have */
                    printf("%dx%dx%d,%c,%s,%s,%.3f,%.3f,%.3f,%s\n", N[0], N[1], N[2], "xyz"[axis],
                           combo ? "f64" : "mixed", arith == 1 ? "MOHID" : arith == 2 ? "FAST" : "NEWTYPE", ms, min,
                           1e6 * min / ((double)N[0] * N[1] * N[2]), on_error == TRIDI_ON_ERROR_CALL ? "CALL" : "LINES");
                    fflush(stdout);
                }
            free(D), free(F), free(T), free(X), free(E);
        }
    }
    tridi_destroy(ctx);
    return 0;
}
