/* The one guard (src/backend.h, docs/decisions/053), with the test-only verdict injection (TRIDI_FAULT_INJECTION):
 * - tridi_guard_settle: commit exactly once on a passing verdict, rollback exactly once on a failing one (own
 *   or decided), a rollback's failure reported over the verdict, no phase where nothing was kept;
 * - the strategy each backend names for each path (the table of docs/architecture.md);
 * - every CPU caller that takes the undo log (tridi_solve and tridi_plan_solve under ON_ERROR_CALL, the pivot
 *   check's way to the backend), every axis, type combination and 1 or 3 threads: a solve whose lines all
 *   succeed, its verdict turned into a failure, leaves x bitwise as it was; the next solve answers as the
 *   first did (bitwise) and as the oracle does; a LINES solve (one phase, its verdict per line) never
 *   reaches the injection. */
#include "testutil.h"
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tridi_test_fail_verdict(int nth); /* the hook (src/backend.c), in TRIDI_FAULT_INJECTION builds only */

/* ---- tridi_guard_settle alone ---- */
typedef struct counts {
    int commits, rollbacks;
    tridi_status rollback_status;
} counts;

static tridi_status count_commit(void *self) { return ((counts *)self)->commits++, TRIDI_SUCCESS; }
static tridi_status count_rollback(void *self)
{
    counts *c = self;
    c->rollbacks++;
    return c->rollback_status ? tridi_fail(c->rollback_status, "rollback failed (test)") : TRIDI_SUCCESS;
}
static tridi_status refuse(void *arg, tridi_status own)
{
    (void)arg;
    return own ? own : tridi_fail(TRIDI_ERROR_MISMATCH, "another rank failed (test)");
}

static void test_settle(void)
{
    counts c = {0, 0, TRIDI_SUCCESS};
    const tridi_guard_phases ph = {count_commit, count_rollback, &c};
    tridi_guard_verdict v = {NULL, NULL, 0, 0};
    tu_expect("settle: own success commits", tridi_guard_settle(TRIDI_SUCCESS, &v, &ph), TRIDI_SUCCESS, NULL);
    tu_expect_true("settle: one commit, no rollback", c.commits == 1 && c.rollbacks == 0 && !v.call);
    tridi_fail(TRIDI_ERROR_ZERO_PIVOT, "zero pivot (test)");
    tu_expect("settle: own failure rolls back and is the verdict",
              tridi_guard_settle(TRIDI_ERROR_ZERO_PIVOT, &v, &ph), TRIDI_ERROR_ZERO_PIVOT, "zero pivot (test)");
    tu_expect_true("settle: then one rollback", c.commits == 1 && c.rollbacks == 1 && v.own == v.call);
    tridi_guard_verdict outside = {refuse, NULL, 0, 0};
    tu_expect("settle: a decided failure rolls back a successful solve",
              tridi_guard_settle(TRIDI_SUCCESS, &outside, &ph), TRIDI_ERROR_MISMATCH, "another rank");
    tu_expect_true("settle: own success, verdict failure, one more rollback",
                   c.commits == 1 && c.rollbacks == 2 && !outside.own && outside.call == TRIDI_ERROR_MISMATCH);
    c.rollback_status = TRIDI_ERROR_CUDA;
    tu_expect("settle: a failed rollback is what the caller hears", tridi_guard_settle(TRIDI_SUCCESS, &outside, &ph),
              TRIDI_ERROR_CUDA, "rollback failed");
    tu_expect("settle: nothing kept, the verdict alone", tridi_guard_settle(TRIDI_SUCCESS, &outside, NULL),
              TRIDI_ERROR_MISMATCH, NULL);
    tu_expect_true("settle: and no phase ran", c.commits == 1 && c.rollbacks == 3);
    /* the injection itself: the nth successful first phase from now, once */
    c = (counts){0, 0, TRIDI_SUCCESS};
    tridi_test_fail_verdict(2);
    tu_expect("injection: first settle passes", tridi_guard_settle(TRIDI_SUCCESS, NULL, &ph), TRIDI_SUCCESS, NULL);
    tu_expect("injection: second settle fails", tridi_guard_settle(TRIDI_SUCCESS, NULL, &ph), TRIDI_ERROR_INTERNAL,
              "injected failure of the verdict");
    tu_expect("injection: third settle passes", tridi_guard_settle(TRIDI_SUCCESS, NULL, &ph), TRIDI_SUCCESS, NULL);
    tu_expect_true("injection: two commits, one rollback", c.commits == 2 && c.rollbacks == 1);
}

/* ---- the strategies named per path ---- */
static void test_strategies(tridi_context ctx)
{
    tridi_problem p;
    memset(&p, 0, sizeof p);
    const tridi_backend_ops *cpu = &tridi_backend_cpu_ops;
    p.on_error = TRIDI_ON_ERROR_LINES;
    tu_expect_true("cpu, LINES, own verdict: the block save, one phase",
                   cpu->guard(ctx, &p, TRIDI_MEMORY_HOST, 0) == TRIDI_GUARD_LINE_SAVE &&
                       tridi_guard_one_phase(TRIDI_GUARD_LINE_SAVE));
    tu_expect_true("cpu, LINES, outside verdict: the undo log",
                   cpu->guard(ctx, &p, TRIDI_MEMORY_HOST, 1) == TRIDI_GUARD_UNDO_LOG);
    p.on_error = TRIDI_ON_ERROR_CALL;
    tu_expect_true("cpu, CALL: the undo log, two phases",
                   cpu->guard(ctx, &p, TRIDI_MEMORY_HOST, 0) == TRIDI_GUARD_UNDO_LOG &&
                       !tridi_guard_one_phase(TRIDI_GUARD_UNDO_LOG));
#ifdef TRIDI_HAVE_CUDA
    const tridi_backend_ops *gpu = &tridi_backend_cuda_ops;
    for (int e = 0; e < 2; ++e) {
        p.on_error = e ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES;
        tu_expect_true("cuda, host arrays, own verdict: slab verdict (one phase)",
                       gpu->guard(ctx, &p, TRIDI_MEMORY_HOST, 0) == TRIDI_GUARD_SLAB_VERDICT);
        tu_expect_true("cuda, host arrays, outside verdict: host box (two phases)",
                       gpu->guard(ctx, &p, TRIDI_MEMORY_HOST, 1) == TRIDI_GUARD_HOST_BOX &&
                           !tridi_guard_one_phase(TRIDI_GUARD_HOST_BOX));
        tu_expect_true("cuda, device arrays, own verdict: device verdict (one phase)",
                       gpu->guard(ctx, &p, TRIDI_MEMORY_DEVICE, 0) == TRIDI_GUARD_DEVICE_VERDICT &&
                           tridi_guard_one_phase(TRIDI_GUARD_DEVICE_VERDICT));
        tu_expect_true("cuda, device arrays, outside verdict: answer box (two phases)",
                       gpu->guard(ctx, &p, TRIDI_MEMORY_DEVICE, 1) == TRIDI_GUARD_ANSWER_BOX &&
                           !tridi_guard_one_phase(TRIDI_GUARD_ANSWER_BOX));
    }
#endif
}

/* ---- the CPU callers, the verdict injected ---- */
static tridi_context context(int on_error, int pivoting, int threads)
{
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    cfg.on_error = on_error;
    cfg.pivoting = pivoting;
    cfg.num_threads = threads;
    tridi_context ctx = NULL;
    tu_expect("tridi_create", tridi_create(&ctx, &cfg), TRIDI_SUCCESS, NULL);
    return ctx;
}

/* Solves s along axis with the caller's way in: 0 tridi_solve, 1 a plan under on_error. */
static tridi_status solve(tridi_context ctx, int way, int on_error, tu_system *s, tridi_axis axis, const int64_t lo[3],
                          const int64_t hi[3])
{
    if (way == 0)
        return tridi_solve(ctx, &s->grid, axis, lo, hi, &s->a);
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.on_error = (tridi_on_error)on_error;
    o.arith = TRIDI_ARITH_MOHID;
    const tridi_dtype t[5] = {s->a.lower_type, s->a.diag_type, s->a.upper_type, s->a.rhs_type, s->a.x_type};
    tridi_plan plan = NULL;
    tridi_status st = tridi_plan_create(ctx, &s->grid, axis, lo, hi, t, &o, &plan);
    if (!st)
        st = tridi_plan_solve(plan, &s->a);
    tridi_plan_destroy(plan);
    return st;
}

static void test_callers(uint64_t *rng)
{
    const tridi_grid g = {3, {0, -1, 2}, {20, 10, 8}};
    const int64_t lo[3] = {1, 0, 3}, hi[3] = {19, 9, 7};
    const tridi_dtype types[3][5] = {{TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64},
                                     {TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32},
                                     {TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32}};
    const char *type_name[3] = {"double", "float", "mixed"};
    for (int threads = 1; threads <= 3; threads += 2)
        for (int caller = 0; caller < 3; ++caller) { /* tridi_solve, a plan, the pivot check's way in */
            tridi_context call = context(TRIDI_ON_ERROR_CALL, caller == 2 ? TRIDI_PIVOT_CHECK : TRIDI_PIVOT_NONE,
                                         threads);
            tridi_context lines = context(TRIDI_ON_ERROR_LINES, TRIDI_PIVOT_NONE, threads);
            for (int ty = 0; ty < 3; ++ty)
                for (int ax = 0; ax < 3; ++ax) {
                    const tridi_dtype *t = types[ty];
                    tu_system s;
                    if (tu_system_alloc(&s, &g, t[0], t[1], t[2], t[3], t[4], rng))
                        return;
                    const size_t xbytes = (size_t)s.cells * tu_esize(t[4]);
                    void *first = malloc(xbytes);
                    char what[160];
                    snprintf(what, sizeof what, "%s, %s, axis %c, %d thread(s)",
                             caller == 0 ? "tridi_solve" : caller == 1 ? "plan" : "pivot check", type_name[ty],
                             "xyz"[ax], threads);
                    const tridi_axis axis = (tridi_axis)ax;
                    const int way = caller == 1;
                    tu_expect(what, solve(call, way, TRIDI_ON_ERROR_CALL, &s, axis, lo, hi), TRIDI_SUCCESS, NULL);
                    memcpy(first, s.a.x, xbytes);
                    void *ref = malloc(xbytes);
                    memcpy(ref, s.x_before, xbytes);
                    tridi_arrays ra = s.a;
                    ra.x = ref;
                    tu_reference_solve(&g, axis, lo, hi, &ra);
                    tu_checks++;
                    if (tu_check(what, &s, ref, lo, hi, axis, tu_tolerance(t[4])))
                        tu_failures++;
                    /* the verdict injected: x as it was, bit for bit */
                    tu_poison_x(&s, rng);
                    tridi_test_fail_verdict(1);
                    char w2[200];
                    snprintf(w2, sizeof w2, "%s, verdict injected", what);
                    tu_expect(w2, solve(call, way, TRIDI_ON_ERROR_CALL, &s, axis, lo, hi), TRIDI_ERROR_INTERNAL,
                              "injected failure of the verdict");
                    tu_checks++;
                    if (tu_check_unchanged(w2, &s))
                        tu_failures++;
                    /* a LINES solve is one phase: the armed injection is not its verdict */
                    tridi_test_fail_verdict(1);
                    snprintf(w2, sizeof w2, "%s, LINES with the injection armed", what);
                    tu_expect(w2, solve(lines, way, TRIDI_ON_ERROR_LINES, &s, axis, lo, hi), TRIDI_SUCCESS, NULL);
                    tu_checks++;
                    if (tu_check(w2, &s, first, lo, hi, axis, 0.0))
                        tu_failures++;
                    tridi_test_fail_verdict(0);
                    /* and the next CALL solve answers as the first */
                    tu_poison_x(&s, rng);
                    snprintf(w2, sizeof w2, "%s, after the rollback", what);
                    tu_expect(w2, solve(call, way, TRIDI_ON_ERROR_CALL, &s, axis, lo, hi), TRIDI_SUCCESS, NULL);
                    tu_checks++;
                    if (tu_check(w2, &s, first, lo, hi, axis, 0.0))
                        tu_failures++;
                    free(ref);
                    free(first);
                    tu_system_free(&s);
                }
            tridi_destroy(call);
            tridi_destroy(lines);
        }
}

int main(void)
{
    uint64_t rng = tu_seed("test_guard");
    test_settle();
    tridi_context ctx = context(TRIDI_ON_ERROR_CALL, TRIDI_PIVOT_NONE, 1);
    test_strategies(ctx);
    tridi_destroy(ctx);
    test_callers(&rng);
    printf("test_guard: %d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
