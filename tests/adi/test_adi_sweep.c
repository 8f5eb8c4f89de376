/* tridi_adi_sweep, the caller-diagonal path, on the CPU backend: random diagonally dominant systems on
 * the plan's grid and box, every axis, float and double, in place or not, against the reference Thomas
 * (tests/common) and bit for bit against a plan of the sweep's contract (FAST arithmetic, all or nothing:
 * docs/decisions/031) on the same diagonals. Cells outside the box must
 * stay as they were. */
#include "adi_case.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int run_case(uint64_t *rng, int index)
{
    adi_case c;
    tu_system sys;
    int axis;
    size_t bytes;
    if (adi_sweep_case(&c, &sys, &axis, &bytes, rng))
        return 1;
    const tridi_grid *g = &c.ref.grid;
    tridi_dtype t = c.dtype;
    const int inplace = tu_uniform(rng) < 0.3;
    void *rhs_copy = malloc(bytes), *xref = malloc(bytes);
    memcpy(rhs_copy, sys.a.rhs, bytes);
    if (inplace) { /* x is the rhs array itself */
        memcpy(sys.a.x, sys.a.rhs, bytes);
        memcpy(sys.x_before, sys.a.x, bytes);
    }
    memcpy(xref, sys.x_before, bytes);
    tridi_arrays ref = sys.a;
    ref.rhs = rhs_copy;
    ref.x = xref;
    tu_reference_solve(g, (tridi_axis)axis, c.ref.lo, c.ref.hi, &ref);

    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    tridi_context ctx;
    tridi_adi plan = NULL;
    int bad = 1;
    char label[320];
    snprintf(label, sizeof label, "case %d sweep %c%s (%s)", index, "xyz"[axis], inplace ? " in place" : "", c.label);
    if (tridi_create(&ctx, &cfg) == TRIDI_SUCCESS) {
        tridi_status s = tridi_adi_create(&plan, ctx, g, c.ref.lo, c.ref.hi, t, &c.ref.op);
        if (!s)
            s = tridi_adi_sweep(plan, (tridi_axis)axis, sys.a.lower, sys.a.diag, sys.a.upper,
                                inplace ? sys.a.x : sys.a.rhs, sys.a.x, NULL);
        if (s) {
            printf("%s: %s %s\n", label, tridi_status_name(s), tridi_error_message());
        } else {
            bad = tu_check(label, &sys, xref, c.ref.lo, c.ref.hi, (tridi_axis)axis, tu_tolerance(t)) != 0;
            /* The same diagonals through a plan of the sweep's contract: the sweep is that solve, bit for bit. */
            void *xs = malloc(bytes);
            memcpy(xs, inplace ? rhs_copy : sys.x_before, bytes);
            tridi_arrays direct = sys.a;
            direct.rhs = inplace ? xs : sys.a.rhs;
            direct.x = xs;
            s = adi_contract_solve(ctx, g, (tridi_axis)axis, c.ref.lo, c.ref.hi, TRIDI_MEMORY_HOST, &direct);
            if (s || memcmp(xs, sys.a.x, bytes)) {
                printf("%s: a FAST plan on the same diagonals %s\n", label,
                       s ? tridi_error_message() : "differs from the sweep");
                bad = 1;
            }
            free(xs);
        }
        tridi_adi_destroy(plan);
        tridi_destroy(ctx);
    }
    free(rhs_copy);
    free(xref);
    tu_system_free(&sys);
    adi_case_free(&c);
    return bad;
}

int main(void)
{
    uint64_t rng = tu_seed("test_adi_sweep");
    int failures = 0, cases = 200;
    for (int i = 0; i < cases; ++i)
        failures += run_case(&rng, i);
    printf("test_adi_sweep: %d of %d cases failed\n", failures, cases);
    return failures ? 1 : 0;
}
