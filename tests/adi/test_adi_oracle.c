/* tridi_adi_step on the CPU backend against the flux-form oracle (adi_ref.c): random geometry, lower
 * bounds and halos, boundary mix, both schemes, 2 and 3 axes, constant or per-cell diffusivity with both
 * means, upwind velocities, float and double, 1..3 threads, several steps on one plan. Cells outside
 * the box must come back bit for bit; NaN across closed faces must never be read. */
#include "adi_case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run_case(uint64_t *rng, int index)
{
    adi_case c;
    adi_case_random(&c, rng, -1, 0, 0);
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    cfg.num_threads = (int)tu_randint(rng, 1, 3);
    tridi_context ctx;
    if (tridi_create(&ctx, &cfg)) {
        printf("create: %s\n", tridi_error_message());
        return 1;
    }
    int bad = 0;
    tridi_adi plan;
    tridi_status s = tridi_adi_create(&plan, ctx, &c.ref.grid, c.ref.lo, c.ref.hi, c.dtype, &c.ref.op);
    if (s) {
        printf("case %d (%s): create failed: %s %s\n", index, c.label, tridi_status_name(s), tridi_error_message());
        tridi_destroy(ctx);
        adi_case_free(&c);
        return 1;
    }
    void *field = adi_to_type(c.u0, c.cells, c.dtype);
    void *before = adi_to_type(c.u0, c.cells, c.dtype);
    double *ref = malloc(sizeof(double) * c.cells);
    memcpy(ref, c.u0, sizeof(double) * c.cells);
    int steps = (int)tu_randint(rng, 1, 3);
    double tol = c.dtype == TRIDI_FLOAT64 ? 1e-11 : 2e-5;
    for (int k = 0; k < steps && !bad; ++k) {
        s = tridi_adi_step(plan, field, c.dt, NULL);
        ref_step(&c.ref, ref, c.dt);
        if (s) {
            printf("case %d (%s): step %d failed: %s %s\n", index, c.label, k, tridi_status_name(s),
                   tridi_error_message());
            bad = 1;
            break;
        }
        int64_t outside;
        double err = adi_box_error(&c, field, ref, before, &outside);
        if (!(err <= tol) || outside) {
            printf("case %d (%s): step %d: relative error %.3e (tolerance %.1e), %lld cells outside the box "
                   "changed\n", index, c.label, k, err, tol, (long long)outside);
            bad = 1;
        }
        /* Round the oracle to the storage type as the library does between steps. */
        if (c.dtype == TRIDI_FLOAT32)
            for (int64_t i = 0; i < c.cells; ++i)
                ref[i] = tu_get(field, c.dtype, i);
    }
    tridi_adi_destroy(plan);
    tridi_destroy(ctx);
    free(field);
    free(before);
    free(ref);
    adi_case_free(&c);
    return bad;
}

int main(void)
{
    uint64_t rng = tu_seed("test_adi_oracle");
    int failures = 0, cases = 300;
    for (int i = 0; i < cases; ++i)
        failures += run_case(&rng, i);
    printf("test_adi_oracle: %d of %d cases failed\n", failures, cases);
    return failures ? 1 : 0;
}
