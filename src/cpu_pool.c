/* The CPU backend's own worker threads (decision 028): not an OpenMP team per call, whose closing
 * barrier waits for a thread still waking after the model's serial loops. A call is a job that workers
 * join while it has work: the caller posts it and starts at once; when it runs out of work it closes the
 * job (one compare-and-swap on the job's generation, closed bit and count inside) and waits only for the
 * workers inside. Between jobs a worker spins until spin_ns after the last one closed, then sleeps on a
 * futex (a condition variable where there is none). */
#define _GNU_SOURCE
#include "cpu_pool.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

#define JOB_CLOSED (UINT64_C(1) << 31)
#define JOB_INSIDE (JOB_CLOSED - 1)

struct tridi_cpu_pool {
    /* The job: generation << 32 | JOB_CLOSED | workers inside fn. Written by the caller to post and to
     * close a job, and by workers joining and leaving it. */
    _Alignas(64) uint64_t state;
    tridi_cpu_pool_fn fn;
    void *arg;
    int want, next_id;
    /* The futex word the workers watch: the generation of the last job posted (only the caller writes it). */
    _Alignas(64) uint32_t gen;
    int sleepers, stop;
#ifndef __linux__
    pthread_mutex_t mu;
    pthread_cond_t cv;
#endif
    _Alignas(64) int64_t spin_ns;
    int nworkers;
    pthread_t *threads;
};

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

int64_t tridi_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Sleeps until gen may differ from seen. */
static void sleep_on(tridi_cpu_pool *p, uint32_t seen)
{
#ifdef __linux__
    syscall(SYS_futex, &p->gen, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
#else
    pthread_mutex_lock(&p->mu);
    while (__atomic_load_n(&p->gen, __ATOMIC_SEQ_CST) == seen)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
#endif
}

/* Wakes up to n sleeping workers (the caller has stored a new gen). */
static void wake(tridi_cpu_pool *p, int n)
{
    /* A worker counts itself a sleeper before it checks gen one last time, and the caller stores gen before
     * it reads the count (both sequentially consistent): one of the two sees the other. */
    if (!__atomic_load_n(&p->sleepers, __ATOMIC_SEQ_CST))
        return;
#ifdef __linux__
    syscall(SYS_futex, &p->gen, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
#else
    (void)n;
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
#endif
}

/* The generation of the next job after `seen`: watched while job `seen` is still open and for spin_ns after
 * it closed, then slept on. Counting from the close, not from when this worker ran out of blocks: a worker
 * that sleeps while the caller finishes its last block must be woken for the next call, which on a KVM
 * guest (idle vCPUs halt) is slow (docs/decisions/028). */
static uint32_t next_job(tridi_cpu_pool *p, uint32_t seen)
{
    uint32_t g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE);
    if (g != seen)
        return g;
    int64_t until = tridi_now_ns() + p->spin_ns;
    for (unsigned i = 1;; ++i) {
        relax();
        if ((g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE)) != seen)
            return g;
        if (!(i & 63)) {
            const uint64_t s = __atomic_load_n(&p->state, __ATOMIC_RELAXED);
            const int64_t t = tridi_now_ns();
            if ((uint32_t)(s >> 32) == seen && !(s & JOB_CLOSED))
                until = t + p->spin_ns;
            else if (t >= until)
                break;
        }
    }
    for (;;) {
        __atomic_fetch_add(&p->sleepers, 1, __ATOMIC_SEQ_CST);
        if ((g = __atomic_load_n(&p->gen, __ATOMIC_SEQ_CST)) == seen)
            sleep_on(p, seen);
        __atomic_fetch_sub(&p->sleepers, 1, __ATOMIC_SEQ_CST);
        if ((g = __atomic_load_n(&p->gen, __ATOMIC_ACQUIRE)) != seen)
            return g;
    }
}

static void *worker(void *arg)
{
    tridi_cpu_pool *p = arg;
    uint32_t seen = 0;
    for (;;) {
        const uint32_t g = next_job(p, seen);
        seen = g;
        if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
            return NULL;
        /* Join job g if it is still open: the count inside keeps the caller from returning (and from
         * posting the next job) until this worker has left. */
        uint64_t s = __atomic_load_n(&p->state, __ATOMIC_ACQUIRE);
        int joined = 0;
        while ((uint32_t)(s >> 32) == g && !(s & JOB_CLOSED))
            if (__atomic_compare_exchange_n(&p->state, &s, s + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                joined = 1;
                break;
            }
        if (!joined)
            continue; /* finished without this worker */
        const int id = __atomic_fetch_add(&p->next_id, 1, __ATOMIC_RELAXED);
        if (id < p->want)
            p->fn(p->arg, id);
        __atomic_fetch_sub(&p->state, 1, __ATOMIC_RELEASE); /* the last touch of the job */
    }
}

/* Places worker i (0-based) on the OpenMP place i + 1 after the caller's, as a close team would, when
 * OpenMP binds its threads; otherwise the worker keeps the caller's mask (the whole machine unless the
 * caller was restricted). */
static void place_worker(pthread_attr_t *attr, int i)
{
#if defined(_OPENMP) && defined(__linux__)
    const int nplaces = omp_get_num_places();
    if (omp_get_proc_bind() == omp_proc_bind_false || nplaces <= 0)
        return;
    const int here = omp_get_place_num() >= 0 ? omp_get_place_num() : 0;
    const int place = (here + 1 + i) % nplaces;
    const int nprocs = omp_get_place_num_procs(place);
    int *ids = nprocs > 0 ? malloc(sizeof(int) * (size_t)nprocs) : NULL;
    if (!ids)
        return;
    omp_get_place_proc_ids(place, ids);
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int k = 0; k < nprocs; ++k)
        if (ids[k] >= 0 && ids[k] < CPU_SETSIZE)
            CPU_SET(ids[k], &set);
    free(ids);
    if (CPU_COUNT(&set))
        pthread_attr_setaffinity_np(attr, sizeof set, &set);
#else
    (void)attr, (void)i;
#endif
}

tridi_cpu_pool *tridi_cpu_pool_create(int workers, int64_t spin_ns)
{
    if (workers < 1)
        return NULL;
    tridi_cpu_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->threads = calloc((size_t)workers, sizeof *p->threads);
    if (!p->threads) {
        free(p);
        return NULL;
    }
    p->spin_ns = spin_ns > 0 ? spin_ns : 0;
    p->state = JOB_CLOSED; /* job 0: none, closed */
#ifndef __linux__
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
#endif
    /* Workers take no signal: the model's handlers run on its own threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int i = 0; i < workers; ++i) {
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        place_worker(&attr, i);
        const int err = pthread_create(&p->threads[i], &attr, worker, p);
        pthread_attr_destroy(&attr);
        if (err)
            break;
        p->nworkers = i + 1;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (p->nworkers < workers) {
        tridi_cpu_pool_destroy(p);
        return NULL;
    }
    return p;
}

int tridi_cpu_thread_start(pthread_t *thread, void *(*fn)(void *), void *arg, int index)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    place_worker(&attr, index);
    const int err = pthread_create(thread, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return err;
}

int tridi_cpu_pool_workers(const tridi_cpu_pool *pool) { return pool ? pool->nworkers : 0; }

void tridi_cpu_pool_open(tridi_cpu_pool *p, tridi_cpu_pool_fn fn, void *arg, int want)
{
    p->fn = fn;
    p->arg = arg;
    p->want = want;
    p->next_id = 1;
    const uint32_t g = p->gen + 1;
    __atomic_store_n(&p->state, (uint64_t)g << 32, __ATOMIC_RELEASE); /* job g, open, nobody inside */
    __atomic_store_n(&p->gen, g, __ATOMIC_SEQ_CST);
    wake(p, want - 1); /* those a call does not need sleep on */
}

void tridi_cpu_pool_close(tridi_cpu_pool *p)
{
    /* No worker joins from here; those inside are finishing the blocks they took. */
    uint64_t s = __atomic_or_fetch(&p->state, JOB_CLOSED, __ATOMIC_ACQ_REL);
    for (unsigned i = 1; s & JOB_INSIDE; ++i) {
        if (i & 1023)
            relax();
        else
            sched_yield(); /* a worker descheduled mid-block needs the core back */
        s = __atomic_load_n(&p->state, __ATOMIC_ACQUIRE);
    }
}

void tridi_cpu_pool_run(tridi_cpu_pool *p, tridi_cpu_pool_fn fn, void *arg, int want)
{
    tridi_cpu_pool_open(p, fn, arg, want);
    fn(arg, 0);
    tridi_cpu_pool_close(p);
}

void tridi_cpu_pool_destroy(tridi_cpu_pool *p)
{
    if (!p)
        return;
    __atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_SEQ_CST);
    wake(p, INT_MAX);
    for (int i = 0; i < p->nworkers; ++i)
        pthread_join(p->threads[i], NULL);
#ifndef __linux__
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
#endif
    free(p->threads);
    free(p);
}
