/* The CPU backend's own worker threads (docs/decisions/028). A call runs on its caller at once and on the
 * workers that arrive while it still has work: the caller never waits for a thread that is still waking. */
#ifndef TRIDI_CPU_POOL_H
#define TRIDI_CPU_POOL_H

#include <pthread.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tridi_cpu_pool tridi_cpu_pool;

/* Microseconds a worker watches for the next call after one ended before it sleeps, unless
 * TRIDI_CPU_SPIN_US says otherwise (docs/tuning.md): calls in a row find the workers awake, and a model's own
 * threads lose at most this much of a core after a call. */
#define TRIDI_CPU_SPIN_US_DEFAULT 100

/* The work of a call: fn(arg, id) runs on the caller with id 0 and on each worker that joins with ids
 * 1, 2, ... below `want`. fn must finish the whole call on whichever threads run it: id 0 alone may be
 * all there is (the workers share the work by taking it, they are not assigned any). */
typedef void (*tridi_cpu_pool_fn)(void *arg, int id);

/* A pool of `workers` threads, each placed on an OpenMP place after the caller's when OpenMP binds its
 * threads (close), else free like the caller. A worker watches for the next call until spin_ns nanoseconds
 * after the last one ended, then sleeps. NULL when a thread cannot be started (the caller then uses OpenMP). */
tridi_cpu_pool *tridi_cpu_pool_create(int workers, int64_t spin_ns);

/* The workers the pool has. */
int tridi_cpu_pool_workers(const tridi_cpu_pool *pool);

/* Wakes the workers, runs fn(arg, 0), lets no worker join once that returns, and returns when every worker
 * that joined has left fn: nothing touches arg afterwards. One call at a time per pool. */
void tridi_cpu_pool_run(tridi_cpu_pool *pool, tridi_cpu_pool_fn fn, void *arg, int want);
/* tridi_cpu_pool_run in two halves, for a caller that runs its own share in its own frame: open (the
 * workers may join), then fn(arg, 0) by the caller, then close (waits for the workers inside). */
void tridi_cpu_pool_open(tridi_cpu_pool *pool, tridi_cpu_pool_fn fn, void *arg, int want);
void tridi_cpu_pool_close(tridi_cpu_pool *pool);

/* Starts fn(arg) on a thread of tridi's own, placed as worker `index` of a pool made here would be and
 * taking no signal (tridi's upload thread, docs/decisions/033). pthread_create's result. */
int tridi_cpu_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg, int index);

/* CLOCK_MONOTONIC in nanoseconds: the spin deadlines of the workers and of tridi's upload thread. */
int64_t tridi_now_ns(void);

/* Ends and joins the workers and frees the pool (NULL: nothing). */
void tridi_cpu_pool_destroy(tridi_cpu_pool *pool);

#ifdef __cplusplus
}
#endif
#endif
