/* Two threads solving through one plan, one context or one ADI plan at once (decision 045): each call
 * either gets its answer (checked against the reference) or is refused with TRIDI_ERROR_INVALID_VALUE and
 * a message saying the context is in use; none hangs (the plain build used to spin forever in the worker
 * pool, ctest's TIMEOUT catching it) and none returns SUCCESS with a wrong answer (the sanitizer build used
 * to). After the threads, the context solves as before. */
#include "testutil.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 40

typedef enum how { BY_PLAN, BY_CONTEXT, BY_ADI } how;

typedef struct worker {
    pthread_barrier_t *start;
    how by;
    tridi_context ctx;
    tridi_plan plan;
    tridi_adi adi;
    tu_system *s;
    const void *xref;
    const int64_t *lo, *hi;
    int solved, refused, wrong;
    char first_wrong[512];
} worker;

static void *run(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->start);
    for (int r = 0; r < ROUNDS; ++r) {
        memcpy(w->s->a.x, w->s->x_before, (size_t)w->s->cells * sizeof(double));
        tridi_status st;
        if (w->by == BY_PLAN)
            st = tridi_plan_solve(w->plan, &w->s->a);
        else if (w->by == BY_CONTEXT)
            st = tridi_solve(w->ctx, &w->s->grid, TRIDI_AXIS_Y, w->lo, w->hi, &w->s->a);
        else
            st = tridi_adi_sweep(w->adi, TRIDI_AXIS_Y, w->s->a.lower, w->s->a.diag, w->s->a.upper, w->s->a.rhs,
                                 w->s->a.x, NULL);
        if (st == TRIDI_ERROR_INVALID_VALUE && strstr(tridi_error_message(), "in use by another call")) {
            w->refused++;
            /* A refused call leaves x alone. */
            if (memcmp(w->s->a.x, w->s->x_before, (size_t)w->s->cells * sizeof(double)) && !w->wrong++)
                snprintf(w->first_wrong, sizeof w->first_wrong, "a refused call wrote x");
            continue;
        }
        if (st != TRIDI_SUCCESS) {
            if (!w->wrong++)
                snprintf(w->first_wrong, sizeof w->first_wrong, "%s: %s", tridi_status_name(st), tridi_error_message());
            continue;
        }
        w->solved++;
        char label[64];
        snprintf(label, sizeof label, "round %d", r);
        if (tu_check(label, w->s, w->xref, w->lo, w->hi, TRIDI_AXIS_Y, tu_tolerance(TRIDI_FLOAT64)) && !w->wrong++)
            snprintf(w->first_wrong, sizeof w->first_wrong, "SUCCESS with a wrong answer in round %d", r);
    }
    return NULL;
}

int main(void)
{
    uint64_t rng = tu_seed("test_concurrency");
    tridi_grid g = {3, {0, 0, 0}, {65, 65, 49}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {64, 64, 48};
    tu_system s[2];
    void *xref[2];
    for (int t = 0; t < 2; ++t) {
        tu_system_alloc(&s[t], &g, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, &rng);
        tu_poison_x(&s[t], &rng);
        xref[t] = malloc((size_t)s[t].cells * sizeof(double));
        memcpy(xref[t], s[t].x_before, (size_t)s[t].cells * sizeof(double));
        tridi_arrays r = s[t].a;
        r.x = xref[t];
        tu_reference_solve(&g, TRIDI_AXIS_Y, lo, hi, &r);
    }
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    cfg.num_threads = 2;
    tridi_context ctx = NULL;
    tu_expect("create", tridi_create(&ctx, &cfg), TRIDI_SUCCESS, NULL);
    tridi_dtype types[5] = {TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64};
    tridi_plan plan = NULL;
    tu_expect("plan", tridi_plan_create(ctx, &g, TRIDI_AXIS_Y, lo, hi, types, NULL, &plan), TRIDI_SUCCESS, NULL);
    tridi_adi_operator op;
    tridi_adi_operator_init(&op);
    tridi_adi adi = NULL;
    tu_expect("adi plan", tridi_adi_create(&adi, ctx, &g, lo, hi, TRIDI_FLOAT64, &op), TRIDI_SUCCESS, NULL);

    static const char *name[3] = {"one plan", "one context (tridi_solve)", "one ADI plan (tridi_adi_sweep)"};
    for (int by = 0; by < 3; ++by) {
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, 2);
        worker w[2];
        pthread_t th[2];
        for (int t = 0; t < 2; ++t) {
            memset(&w[t], 0, sizeof w[t]);
            w[t] = (worker){&start, (how)by, ctx, plan, adi, &s[t], xref[t], lo, hi, 0, 0, 0, ""};
            pthread_create(&th[t], NULL, run, &w[t]);
        }
        for (int t = 0; t < 2; ++t)
            pthread_join(th[t], NULL);
        pthread_barrier_destroy(&start);
        for (int t = 0; t < 2; ++t) {
            printf("  %s, thread %d: %d solved, %d refused (context in use), %d wrong%s%s\n", name[by], t,
                   w[t].solved, w[t].refused, w[t].wrong, w[t].wrong ? ": " : "", w[t].first_wrong);
            char what[128];
            snprintf(what, sizeof what, "%s from two threads, thread %d: answered or refused, never wrong", name[by],
                     t);
            tu_expect_true(what, !w[t].wrong && w[t].solved + w[t].refused == ROUNDS);
        }
        /* Whichever thread ran alone got its answers: between them every round was tried. */
        tu_expect_true("some call was answered", w[0].solved + w[1].solved > 0);
    }
    /* The context is free again once the threads are done. */
    memcpy(s[0].a.x, s[0].x_before, (size_t)s[0].cells * sizeof(double));
    tu_expect("plan solve after the threads", tridi_plan_solve(plan, &s[0].a), TRIDI_SUCCESS, NULL);
    tu_expect_true("its answer", !tu_check("after", &s[0], xref[0], lo, hi, TRIDI_AXIS_Y, tu_tolerance(TRIDI_FLOAT64)));
    tridi_adi_destroy(adi);
    tridi_plan_destroy(plan);
    tridi_destroy(ctx);
    for (int t = 0; t < 2; ++t) {
        free(xref[t]);
        tu_system_free(&s[t]);
    }
    printf("%d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
