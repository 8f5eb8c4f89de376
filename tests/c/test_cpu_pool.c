/* The CPU backend's worker pool (src/cpu_pool.c, docs/decisions/028) and the solves that run on it.
 * - The pool alone, with 1 to 7 workers, workers that sleep at once (spin 0) and that watch a while: in
 *   thousands of jobs in a row, each wanting a random number of threads and interleaved with OpenMP
 *   regions, every item of a job is done exactly once, no thread id is given twice or beyond what the job
 *   wants, the caller always takes part, and once a job has returned nothing touches it again (its memory
 *   is freed at once: a late worker would be a use after free under ASan and valgrind, and its counters
 *   are checked again after the next job).
 * - Solves through tridi on every thread (TRIDI_CPU_BYTES_PER_THREAD=1), with the pool and with an OpenMP
 *   team per call (TRIDI_CPU_POOL=0), along x, y and z of random systems and a 2D one, between OpenMP
 *   loops over other memory and from inside an OpenMP region (one context per thread): every answer
 *   equals the sequential reference; a failing line is reported, the lowest one, with x unchanged.
 * - TRIDI_CPU_POOL and TRIDI_CPU_SPIN_US take only their documented values; unset, the pool is used unless
 *   OMP_WAIT_POLICY=active (read at tridi_create, as the knobs are).
 * No timings: only answers and counts. Links libtridi's internals for the pool. */
#include "cpu_pool.h"
#include "testutil.h"
#include "tridi_internal.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
    int want;
    int64_t items, next;
    unsigned char *done; /* per item: times done */
    int ids[64];         /* per thread id: times it ran fn */
    int64_t after;       /* the caller's count of fn calls by the end of run */
} job;

static void do_items(void *arg, int id)
{
    job *j = arg;
    if (id >= 0 && id < 64)
        __atomic_fetch_add(&j->ids[id], 1, __ATOMIC_RELAXED);
    for (;;) {
        const int64_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
        if (i >= j->items)
            break;
        __atomic_fetch_add(&j->done[i], 1, __ATOMIC_RELAXED);
    }
}

static double sink;
static void openmp_work(double *buf, int n)
{
    double s = 0;
#pragma omp parallel for reduction(+ : s)
    for (int i = 0; i < n; ++i) {
        buf[i] = buf[i] * 0.5 + 1.0;
        s += buf[i];
    }
    sink += s;
}

static void pool_jobs(uint64_t *rng)
{
    double *buf = calloc(1 << 16, sizeof *buf);
    for (int workers = 1; workers <= 7; workers += 3) {
        for (int spin = 0; spin < 2; ++spin) {
            tridi_cpu_pool *pool = tridi_cpu_pool_create(workers, spin ? 50000 : 0);
            char what[160];
            snprintf(what, sizeof what, "pool of %d workers (spin %s) created", workers, spin ? "50 us" : "0");
            tu_expect_true(what, pool != NULL && tridi_cpu_pool_workers(pool) == workers);
            if (!pool)
                continue;
            int64_t bad_items = 0, bad_ids = 0, late = 0;
            job *prev = NULL;
            int64_t prev_sum = 0;
            for (int r = 0; r < 1000; ++r) {
                job *j = calloc(1, sizeof *j);
                j->want = (int)tu_randint(rng, 1, workers + 2); /* more than the pool has, too */
                j->items = tu_randint(rng, 0, 3000);
                j->done = calloc((size_t)j->items + 1, 1);
                tridi_cpu_pool_run(pool, do_items, j, j->want);
                for (int64_t i = 0; i < j->items; ++i)
                    bad_items += j->done[i] != 1;
                bad_ids += j->ids[0] != 1;
                for (int id = 1; id < 64; ++id)
                    bad_ids += j->ids[id] > 1 || (id >= j->want && j->ids[id] != 0);
                /* The job before: nothing ran it after its run returned. */
                if (prev) {
                    int64_t sum = 0;
                    for (int id = 0; id < 64; ++id)
                        sum += prev->ids[id];
                    late += sum != prev_sum;
                    free(prev->done);
                    free(prev);
                }
                prev_sum = 0;
                for (int id = 0; id < 64; ++id)
                    prev_sum += j->ids[id];
                if (r % 3 == 0) { /* every third job's memory goes at once */
                    free(j->done);
                    free(j);
                    prev = NULL;
                } else {
                    prev = j;
                }
                if (r % 5 == 0)
                    openmp_work(buf, 1 << 16);
            }
            if (prev) {
                free(prev->done);
                free(prev);
            }
            snprintf(what, sizeof what, "pool of %d workers (spin %s): every item once (%lld bad)", workers,
                     spin ? "50 us" : "0", (long long)bad_items);
            tu_expect_true(what, bad_items == 0);
            snprintf(what, sizeof what, "pool of %d workers: ids once, below want, caller in (%lld bad)", workers,
                     (long long)bad_ids);
            tu_expect_true(what, bad_ids == 0);
            snprintf(what, sizeof what, "pool of %d workers: no job touched after its run (%lld late)", workers,
                     (long long)late);
            tu_expect_true(what, late == 0);
            tridi_cpu_pool_destroy(pool);
        }
    }
    free(buf);
}

/* A context of `threads` threads with every thread used on any size; pool "1" or "0". */
static tridi_context all_threads_context(int threads, const char *pool, const char *spin_us)
{
    setenv("TRIDI_CPU_BYTES_PER_THREAD", "1", 1);
    setenv("TRIDI_CPU_POOL", pool, 1);
    setenv("TRIDI_CPU_SPIN_US", spin_us, 1);
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    cfg.num_threads = threads;
    tridi_context ctx = NULL;
    tu_expect("create", tridi_create(&ctx, &cfg), TRIDI_SUCCESS, NULL);
    unsetenv("TRIDI_CPU_BYTES_PER_THREAD");
    unsetenv("TRIDI_CPU_POOL");
    unsetenv("TRIDI_CPU_SPIN_US");
    return ctx;
}

/* One solve of s along axis checked against the reference; returns 1 when it fails. */
static int solve_checked(const char *label, tridi_context ctx, tu_system *s, tridi_axis axis, const int64_t lo[3],
                         const int64_t hi[3], uint64_t *rng)
{
    tu_poison_x(s, rng);
    void *xref = malloc((size_t)s->cells * 8);
    memcpy(xref, s->a.x, (size_t)s->cells * tu_esize(s->a.x_type));
    tridi_arrays ref = s->a;
    ref.x = xref;
    tu_reference_solve(&s->grid, axis, lo, hi, &ref);
    const tridi_status st = tridi_solve(ctx, &s->grid, axis, lo, hi, &s->a);
    int bad = st != TRIDI_SUCCESS;
    if (bad)
        printf("FAILED %s: %s\n", label, tridi_error_message());
    else
        bad = tu_check(label, s, xref, lo, hi, axis, tu_tolerance(s->a.x_type)) != 0;
    free(xref);
    return bad;
}

static void solves(uint64_t *rng)
{
    const int procs = omp_get_num_procs();
    double *buf = calloc(1 << 18, sizeof *buf);
    tridi_grid g3 = {3, {0, 0, 0}, {41, 23, 13}}, g2 = {2, {0, 0, 0}, {57, 31, 0}};
    const int64_t lo[3] = {1, 1, 1}, hi3[3] = {40, 22, 12}, hi2[3] = {56, 30, 1};
    tu_system s3, s2;
    tu_system_alloc(&s3, &g3, TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, rng);
    tu_system_alloc(&s2, &g2, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, rng);
    const int counts[4] = {1, 2, 3, procs > 4 ? procs : 4};
    for (int c = 0; c < 4; ++c)
        for (int v = 0; v < 3; ++v) {
            const char *pool = v == 2 ? "0" : "1", *spin = v == 0 ? "0" : "100";
            tridi_context ctx = all_threads_context(counts[c], pool, spin);
            int bad = 0;
            for (int r = 0; r < 24; ++r) {
                bad += solve_checked("3D", ctx, &s3, (tridi_axis)(r % 3), lo, hi3, rng);
                if (r % 4 == 0)
                    bad += solve_checked("2D", ctx, &s2, (tridi_axis)(r / 4 % 2), lo, hi2, rng);
                if (r % 2)
                    openmp_work(buf, 1 << 18);
            }
            char what[160];
            snprintf(what, sizeof what, "%d threads, %s (spin %s us): 24 solves between OpenMP loops equal the "
                     "reference", counts[c], v == 2 ? "OpenMP team" : "pool", spin);
            tu_expect_true(what, bad == 0);
            tridi_destroy(ctx);
        }

    /* From inside an OpenMP region, one context and system per thread: each solves on its own thread. */
    int bad = 0;
#pragma omp parallel num_threads(2) reduction(+ : bad)
    {
        uint64_t r = *rng + 7919u * (uint64_t)omp_get_thread_num();
        tu_system s;
        tu_system_alloc(&s, &g3, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, &r);
        tridi_context ctx = NULL;
#pragma omp critical
        ctx = all_threads_context(2, "1", "0");
        for (int k = 0; k < 6; ++k)
            bad += solve_checked("3D inside a region", ctx, &s, (tridi_axis)(k % 3), lo, hi3, &r);
        tridi_destroy(ctx);
        tu_system_free(&s);
    }
    tu_expect_true("solves from inside an OpenMP region equal the reference", bad == 0);

    /* A zero pivot in two lines: the lowest is named, x is left as it was (ON_ERROR_CALL, a plan). */
    tridi_context ctx = all_threads_context(procs > 4 ? procs : 4, "1", "0");
    tu_poison_x(&s3, rng);
    const int64_t l1 = tu_index(&g3, 1, 17, 9), l2 = tu_index(&g3, 1, 5, 3);
    const double e1 = tu_get(s3.a.diag, TRIDI_FLOAT64, l1), e2 = tu_get(s3.a.diag, TRIDI_FLOAT64, l2);
    tu_set((void *)s3.a.diag, TRIDI_FLOAT64, l1, 0.0);
    tu_set((void *)s3.a.diag, TRIDI_FLOAT64, l2, 0.0);
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.on_error = TRIDI_ON_ERROR_CALL;
    tridi_plan plan = NULL;
    const tridi_dtype types[5] = {s3.a.lower_type, s3.a.diag_type, s3.a.upper_type, s3.a.rhs_type, s3.a.x_type};
    tu_expect("plan", tridi_plan_create(ctx, &g3, TRIDI_AXIS_X, lo, hi3, types, &o, &plan), TRIDI_SUCCESS, NULL);
    tu_expect("two zero pivots on the pool", tridi_plan_solve(plan, &s3.a), TRIDI_ERROR_ZERO_PIVOT, "at cell (1, 5, 3)");
    tu_expect_true("x unchanged after the failure", tu_check_unchanged("x after the failure", &s3) == 0);
    tridi_plan_destroy(plan);
    tu_set((void *)s3.a.diag, TRIDI_FLOAT64, l1, e1);
    tu_set((void *)s3.a.diag, TRIDI_FLOAT64, l2, e2);
    tridi_destroy(ctx);

    tu_system_free(&s3);
    tu_system_free(&s2);
    free(buf);
}

static void knobs(void)
{
    const char *bad[][2] = {{"TRIDI_CPU_POOL", "2"}, {"TRIDI_CPU_POOL", "yes"}, {"TRIDI_CPU_SPIN_US", "-1"},
                            {"TRIDI_CPU_SPIN_US", "1000001"}, {"TRIDI_CPU_SPIN_US", "10us"}};
    for (int k = 0; k < 5; ++k) {
        setenv(bad[k][0], bad[k][1], 1);
        tridi_context ctx = NULL;
        char what[96];
        snprintf(what, sizeof what, "%s=%s refused", bad[k][0], bad[k][1]);
        tu_expect(what, tridi_create(&ctx, NULL), TRIDI_ERROR_INVALID_VALUE, bad[k][0]);
        unsetenv(bad[k][0]);
    }
    const char *policy[4] = {NULL, "active", "ACTIVE", "passive"};
    for (int k = 0; k < 4; ++k)
        for (int pool = -1; pool < 2; ++pool) {
            if (policy[k])
                setenv("OMP_WAIT_POLICY", policy[k], 1);
            if (pool >= 0)
                setenv("TRIDI_CPU_POOL", pool ? "1" : "0", 1);
            tridi_context ctx = NULL;
            tu_expect("create", tridi_create(&ctx, NULL), TRIDI_SUCCESS, NULL);
            const int team = pool == 0 || (pool < 0 && k && k < 3);
            char what[128];
            snprintf(what, sizeof what, "OMP_WAIT_POLICY=%s, TRIDI_CPU_POOL=%s: %s", policy[k] ? policy[k] : "(unset)",
                     pool < 0 ? "(unset)" : pool ? "1" : "0", team ? "OpenMP team" : "pool");
            tu_expect_true(what, ctx && ctx->tuning.cpu_openmp_team == team && ctx->tuning.cpu_pool_off == (pool == 0));
            tridi_destroy(ctx);
            unsetenv("OMP_WAIT_POLICY");
            unsetenv("TRIDI_CPU_POOL");
        }
}

int main(void)
{
    uint64_t rng = tu_seed("test_cpu_pool");
    pool_jobs(&rng);
    solves(&rng);
    knobs();
    printf("%d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
