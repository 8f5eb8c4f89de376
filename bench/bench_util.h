/* Helpers shared by the CPU benchmarks: the median of a set of timings and the context they time. */
#ifndef TRIDI_BENCH_UTIL_H
#define TRIDI_BENCH_UTIL_H

#include "tridi.h"

/* Median of the n times in t (sorts t in place). */
double bench_median(double *t, int n);

/* A context of the CPU backend with `threads` threads. Returns 0, or 1 with tridi's message on stderr. */
int bench_cpu_context(tridi_context *ctx, int threads);

#endif
