#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double bench_median(double *t, int n)
{
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return t[n / 2];
}

int bench_cpu_context(tridi_context *ctx, int threads)
{
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    cfg.num_threads = threads;
    if (tridi_create(ctx, &cfg)) {
        fprintf(stderr, "%s\n", tridi_error_message());
        return 1;
    }
    return 0;
}
