/* Destroyed and foreign handles (contexts, ADI plans): every entry point answers
 * TRIDI_ERROR_INVALID_HANDLE without reading the handle's memory (this test runs under valgrind, where
 * the old code read freed memory and freed twice, and under ASan, where a destroyed handle's memory is
 * poisoned), a second destroy is refused, and a new handle never takes the address of a destroyed one,
 * so a stale handle cannot reach it. */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCYCLES 200

static tridi_context new_cpu_context(void)
{
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    tridi_context c = NULL;
    tu_expect("create", tridi_create(&c, &cfg), TRIDI_SUCCESS, NULL);
    return c;
}

/* Two threads destroying the same context at once: one frees it, the other is refused. */
typedef struct racer {
    pthread_barrier_t *start;
    tridi_context ctx;
    tridi_status got;
} racer;

static void *destroy_racing(void *arg)
{
    racer *r = arg;
    pthread_barrier_wait(r->start);
    r->got = tridi_destroy(r->ctx);
    return NULL;
}

static void racing_destroys(int rounds)
{
    int wrong = 0;
    for (int i = 0; i < rounds; ++i) {
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, 2);
        tridi_config cfg;
        tridi_config_init(&cfg);
        cfg.backend = TRIDI_BACKEND_CPU;
        tridi_context c = NULL;
        if (tridi_create(&c, &cfg)) {
            wrong++;
            continue;
        }
        racer r[2] = {{&start, c, TRIDI_ERROR_INTERNAL}, {&start, c, TRIDI_ERROR_INTERNAL}};
        pthread_t t[2];
        for (int k = 0; k < 2; ++k)
            pthread_create(&t[k], NULL, destroy_racing, &r[k]);
        for (int k = 0; k < 2; ++k)
            pthread_join(t[k], NULL);
        pthread_barrier_destroy(&start);
        const int ok = (r[0].got == TRIDI_SUCCESS) + (r[1].got == TRIDI_SUCCESS);
        const int refused = (r[0].got == TRIDI_ERROR_INVALID_HANDLE) + (r[1].got == TRIDI_ERROR_INVALID_HANDLE);
        wrong += !(ok == 1 && refused == 1);
    }
    printf("  %d rounds of two threads destroying one context: %d rounds without exactly one success\n", rounds,
           wrong);
    tu_expect_true("racing destroys: exactly one succeeds", wrong == 0);
}

int main(void)
{
    uint64_t rng = tu_seed("test_handles");
    tridi_grid g = {3, {0, 0, 0}, {7, 6, 5}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {6, 5, 4};
    tu_system s;
    tu_system_alloc(&s, &g, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, &rng);

    /* A destroyed context: every call refuses it, x is left as it was. */
    tridi_context dead = new_cpu_context();
    tu_expect("solve on a live context", tridi_solve(dead, &g, TRIDI_AXIS_Y, lo, hi, &s.a), TRIDI_SUCCESS, NULL);
    tu_expect("destroy", tridi_destroy(dead), TRIDI_SUCCESS, NULL);
    tu_poison_x(&s, &rng);
    tu_expect("solve on a destroyed context", tridi_solve(dead, &g, TRIDI_AXIS_Y, lo, hi, &s.a),
              TRIDI_ERROR_INVALID_HANDLE, "tridi_solve: argument 'ctx' is not a live tridi context");
    tu_checks++;
    if (tu_check_unchanged("solve on a destroyed context", &s))
        tu_failures++;
    tridi_backend b = TRIDI_BACKEND_AUTO;
    tu_expect("get_backend on a destroyed context", tridi_get_backend(dead, &b), TRIDI_ERROR_INVALID_HANDLE,
              "tridi_get_backend: argument 'ctx'");
    tu_expect("upload on a destroyed context",
              tridi_upload_async(dead, &g, TRIDI_AXIS_Y, lo, hi, TRIDI_ROLE_DIAG, s.a.diag, TRIDI_FLOAT64),
              TRIDI_ERROR_INVALID_HANDLE, "tridi_upload_async");
    tu_expect("register on a destroyed context", tridi_host_register(dead, s.a.rhs, 64),
              TRIDI_ERROR_INVALID_HANDLE, "tridi_host_register");
    tu_expect("synchronize on a destroyed context", tridi_synchronize(dead), TRIDI_ERROR_INVALID_HANDLE,
              "tridi_synchronize");
    tu_expect("second destroy", tridi_destroy(dead), TRIDI_ERROR_INVALID_HANDLE,
              "tridi_destroy: argument 'ctx' is not a live tridi context");
    tu_expect("third destroy", tridi_destroy(dead), TRIDI_ERROR_INVALID_HANDLE, "tridi_destroy");

    /* A pointer that was never a context is refused without being read. */
    double not_a_context[64];
    memset(not_a_context, 0xA5, sizeof not_a_context);
    tu_expect("solve on a foreign pointer", tridi_solve((tridi_context)not_a_context, &g, TRIDI_AXIS_X, lo, hi, &s.a),
              TRIDI_ERROR_INVALID_HANDLE, "never created");
    tu_expect("destroy of a foreign pointer", tridi_destroy((tridi_context)not_a_context),
              TRIDI_ERROR_INVALID_HANDLE, "tridi_destroy");

    /* No aliasing: contexts created after a destroy never get a destroyed address (malloc would hand the
     * freed block straight back), so the stale handle stays refused while the new ones work. */
    tridi_context stale[2 * NCYCLES], kept[NCYCLES];
    int nstale = 0, nkept = 0, aliased = 0, stale_accepted = 0;
    for (int c = 0; c < NCYCLES; ++c) {
        tridi_context first = new_cpu_context();
        tridi_destroy(first);
        stale[nstale++] = first;
        tridi_context fresh = new_cpu_context();
        for (int q = 0; q < nstale; ++q) {
            aliased += fresh == stale[q];
            stale_accepted += tridi_get_backend(stale[q], &b) != TRIDI_ERROR_INVALID_HANDLE;
        }
        if (tridi_get_backend(fresh, &b) != TRIDI_SUCCESS || b != TRIDI_BACKEND_CPU)
            stale_accepted++;
        if (c % 4 == 0) { /* some stay alive, so that live and retired addresses interleave */
            kept[nkept++] = fresh;
        } else {
            tridi_destroy(fresh);
            stale[nstale++] = fresh;
        }
    }
    for (int q = 0; q < nkept; ++q)
        if (tridi_destroy(kept[q]) != TRIDI_SUCCESS)
            stale_accepted++;
    printf("  %d context cycles: %d new context(s) at a destroyed address, %d stale handle(s) accepted\n", NCYCLES,
           aliased, stale_accepted);
    tu_expect_true("no new context at a destroyed context's address", aliased == 0);
    tu_expect_true("every stale context refused, every fresh one accepted", stale_accepted == 0);

    /* ADI plans: the same. */
    tridi_context ctx = new_cpu_context();
    tridi_adi_operator op;
    tridi_adi_operator_init(&op);
    tridi_adi plan = NULL;
    tu_expect("adi create", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &op), TRIDI_SUCCESS, NULL);
    tu_expect("destroy of a context with a live plan", tridi_destroy(ctx), TRIDI_ERROR_INVALID_VALUE, "ADI plan");
    tu_expect("adi destroy", tridi_adi_destroy(plan), TRIDI_SUCCESS, NULL);
    void *field = s.a.x;
    tu_poison_x(&s, &rng);
    tu_expect("step on a destroyed plan", tridi_adi_step(plan, field, 0.1, NULL), TRIDI_ERROR_INVALID_HANDLE,
              "tridi_adi_step: argument 'plan' is not a live ADI plan");
    tu_checks++;
    if (tu_check_unchanged("step on a destroyed plan", &s))
        tu_failures++;
    tu_expect("sweep on a destroyed plan",
              tridi_adi_sweep(plan, TRIDI_AXIS_X, s.a.lower, s.a.diag, s.a.upper, s.a.rhs, s.a.x, NULL),
              TRIDI_ERROR_INVALID_HANDLE, "tridi_adi_sweep: argument 'plan'");
    double ms[3];
    tu_expect("timings on a destroyed plan", tridi_adi_timings(plan, ms, NULL), TRIDI_ERROR_INVALID_HANDLE,
              "tridi_adi_timings");
    tu_expect("synchronize on a destroyed plan", tridi_adi_synchronize(plan), TRIDI_ERROR_INVALID_HANDLE,
              "tridi_adi_synchronize");
    tu_expect("second adi destroy", tridi_adi_destroy(plan), TRIDI_ERROR_INVALID_HANDLE,
              "tridi_adi_destroy: argument 'plan' is not a live ADI plan");
    tu_expect("adi destroy of a context handle", tridi_adi_destroy((tridi_adi)ctx), TRIDI_ERROR_INVALID_HANDLE,
              "tridi_adi_destroy");
    tu_expect("the context is free to go once its plan is", tridi_destroy(ctx), TRIDI_SUCCESS, NULL);
    tu_expect("a plan on the destroyed context",
              tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &op), TRIDI_ERROR_INVALID_HANDLE,
              "tridi_adi_create: argument 'ctx'");

    ctx = new_cpu_context();
    tridi_adi stale_plans[NCYCLES];
    aliased = stale_accepted = 0;
    for (int c = 0; c < NCYCLES; ++c) {
        tu_expect("adi create (cycle)", tridi_adi_create(&stale_plans[c], ctx, &g, lo, hi, TRIDI_FLOAT64, &op),
                  TRIDI_SUCCESS, NULL);
        tridi_adi_destroy(stale_plans[c]);
        tridi_adi fresh = NULL;
        tridi_adi_create(&fresh, ctx, &g, lo, hi, TRIDI_FLOAT64, &op);
        for (int q = 0; q <= c; ++q) {
            aliased += fresh == stale_plans[q];
            stale_accepted += tridi_adi_timings(stale_plans[q], ms, NULL) != TRIDI_ERROR_INVALID_HANDLE;
        }
        tridi_adi_destroy(fresh);
    }
    printf("  %d plan cycles: %d new plan(s) at a destroyed address, %d stale handle(s) accepted\n", NCYCLES,
           aliased, stale_accepted);
    tu_expect_true("no new plan at a destroyed plan's address", aliased == 0);
    tu_expect_true("every stale plan refused", stale_accepted == 0);
    tu_expect("destroy after the plan cycles", tridi_destroy(ctx), TRIDI_SUCCESS, NULL);

    racing_destroys(100);

    tu_system_free(&s);
    printf("%d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
