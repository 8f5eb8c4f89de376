/* Indices at the ends of the int64 range (regressions of the fuzzers in tests/fuzz): grid bounds and
 * boxes must lie within +-2^62 (TRIDI_INDEX_LIMIT) so that index arithmetic never overflows, and grids
 * right at that limit must solve correctly. Before the limit, an ADI plan with an empty box whose other
 * axis started at INT64_MIN computed lo - 1 with signed overflow (tests/fuzz/corpus_adi/regression-*).
 * Run under UndefinedBehaviorSanitizer by scripts/reliability.sh. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIMIT ((int64_t)1 << 62)

/* A 3D grid of 6 x 5 x 4 cells whose lower bounds are `base`, solved along every axis against the
 * reference, and the ADI plan of its interior stepped once: indices right at the limit work. */
static void solve_at(tridi_context ctx, uint64_t *rng, int64_t base, const char *where)
{
    tridi_grid g = {3, {base, base, base}, {base + 5, base + 4, base + 3}};
    int64_t lo[3] = {base + 1, base, base + 1}, hi[3] = {base + 5, base + 3, base + 2};
    tu_system s;
    tu_system_alloc(&s, &g, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, rng);
    for (int axis = 0; axis < 3; ++axis) {
        char what[96];
        snprintf(what, sizeof what, "solve along %c %s", "xyz"[axis], where);
        tu_poison_x(&s, rng);
        void *ref = malloc((size_t)s.cells * 8);
        memcpy(ref, s.x_before, (size_t)s.cells * 8);
        tridi_arrays ra = s.a;
        ra.x = ref;
        tu_reference_solve(&g, (tridi_axis)axis, lo, hi, &ra);
        tu_expect(what, tridi_solve(ctx, &g, (tridi_axis)axis, lo, hi, &s.a), TRIDI_SUCCESS, NULL);
        tu_checks++;
        if (tu_check(what, &s, ref, lo, hi, (tridi_axis)axis, tu_tolerance(TRIDI_FLOAT64))) {
            tu_failures++;
            printf("FAILED %s: wrong answer\n", what);
        }
        free(ref);
    }

    /* ADI: Dirichlet on every side needs one halo cell, which the grid has below and above the box along
     * x and z; along y the box reaches the upper bound, so that side must be zero-flux. */
    tridi_adi_operator op;
    tridi_adi_operator_init(&op);
    int64_t alo[3] = {base + 1, base + 1, base + 1}, ahi[3] = {base + 4, base + 4, base + 2};
    tridi_adi plan = NULL;
    char what[96];
    snprintf(what, sizeof what, "ADI Dirichlet past the upper bound %s", where);
    tu_expect(what, tridi_adi_create(&plan, ctx, &g, alo, ahi, TRIDI_FLOAT64, &op), TRIDI_ERROR_BOUNDS, "bc_hi[1]");
    op.bc_hi[1] = TRIDI_ADI_ZERO_FLUX;
    snprintf(what, sizeof what, "ADI plan %s", where);
    tu_expect(what, tridi_adi_create(&plan, ctx, &g, alo, ahi, TRIDI_FLOAT64, &op), TRIDI_SUCCESS, NULL);
    double *field = malloc((size_t)s.cells * 8);
    for (int64_t c = 0; c < s.cells; ++c)
        field[c] = tu_uniform(rng);
    snprintf(what, sizeof what, "ADI step %s", where);
    tu_expect(what, tridi_adi_step(plan, field, 0.5, NULL), TRIDI_SUCCESS, NULL);
    tridi_adi_destroy(plan);
    free(field);
    tu_system_free(&s);
}

int main(void)
{
    uint64_t rng = tu_seed("test_limits");
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    tridi_context ctx;
    tu_expect("create cpu", tridi_create(&ctx, &cfg), TRIDI_SUCCESS, NULL);

    /* Right at the limit: the lowest and the highest grids tridi accepts. */
    solve_at(ctx, &rng, -LIMIT, "at -2^62");
    solve_at(ctx, &rng, LIMIT - 5, "ending at 2^62");

    /* Past the limit: grid bounds, and boxes (empty ones too, whose coordinates were never checked). */
    tridi_grid g = {3, {0, 0, 0}, {5, 4, 3}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {4, 3, 2};
    tu_system s;
    tu_system_alloc(&s, &g, TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, &rng);
    tridi_grid gb = g;
    gb.lbound[1] = -LIMIT - 1;
    tu_expect("lbound below -2^62", tridi_solve(ctx, &gb, TRIDI_AXIS_X, lo, hi, &s.a), TRIDI_ERROR_INVALID_VALUE,
           "grid->lbound[1]");
    gb = g;
    gb.lbound[2] = INT64_MAX - 3;
    gb.ubound[2] = INT64_MAX;
    tu_expect("grid at INT64_MAX", tridi_solve(ctx, &gb, TRIDI_AXIS_X, lo, hi, &s.a), TRIDI_ERROR_INVALID_VALUE,
           "index range");
    int64_t far_lo[3] = {1, INT64_MIN, 1}, empty_hi[3] = {0, 3, 2};
    tu_expect("empty box, lo[1] = INT64_MIN", tridi_solve(ctx, &g, TRIDI_AXIS_Z, far_lo, empty_hi, &s.a),
           TRIDI_ERROR_INVALID_VALUE, "lo[1]");
    int64_t far_hi[3] = {4, 3, INT64_MAX};
    tu_expect("hi[2] = INT64_MAX", tridi_solve(ctx, &g, TRIDI_AXIS_Z, lo, far_hi, &s.a), TRIDI_ERROR_INVALID_VALUE,
           "hi[2]");
    tu_expect("upload_async, lo[1] = INT64_MIN",
           tridi_upload_async(ctx, &g, TRIDI_AXIS_X, far_lo, empty_hi, TRIDI_ROLE_RHS, s.a.rhs, TRIDI_FLOAT32),
           TRIDI_ERROR_INVALID_VALUE, "lo[1]");
    tu_checks++;
    if (tu_check_unchanged("after indices past the limit", &s)) {
        tu_failures++;
        printf("FAILED x was written by a failing call\n");
    }

    /* The fuzzer's finding: an ADI plan whose box is empty along x and starts at INT64_MIN along y. */
    tridi_adi_operator op;
    tridi_adi_operator_init(&op);
    tridi_adi plan = NULL;
    tu_expect("ADI empty box, lo[1] = INT64_MIN", tridi_adi_create(&plan, ctx, &g, far_lo, empty_hi, TRIDI_FLOAT32, &op),
           TRIDI_ERROR_INVALID_VALUE, "lo[1]");
    tu_checks++;
    if (plan) {
        tu_failures++;
        printf("FAILED a failing tridi_adi_create left a plan\n");
    }

    /* The next valid call works. */
    void *ref = malloc((size_t)s.cells * 4);
    memcpy(ref, s.x_before, (size_t)s.cells * 4);
    tridi_arrays ra = s.a;
    ra.x = ref;
    tu_reference_solve(&g, TRIDI_AXIS_Y, lo, hi, &ra);
    tu_expect("valid solve afterwards", tridi_solve(ctx, &g, TRIDI_AXIS_Y, lo, hi, &s.a), TRIDI_SUCCESS, NULL);
    tu_checks++;
    if (tu_check("valid solve afterwards", &s, ref, lo, hi, TRIDI_AXIS_Y, tu_tolerance(TRIDI_FLOAT32))) {
        tu_failures++;
        printf("FAILED wrong answer after the errors\n");
    }
    free(ref);
    tu_system_free(&s);
    tridi_destroy(ctx);
    printf("test_limits: %d of %d checks failed\n", tu_failures, tu_checks);
    return tu_failures ? 1 : 0;
}
