/* tridi_solve on the CPU backend against the reference, on random grids: 2D and 3D, every axis, every
 * type combination, non-1 lower bounds, halos, boxes strictly inside, in-place x == rhs, 1..3 threads. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tridi_dtype combos[3][5] = {
    {TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32},
    {TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64},
    {TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32}};
static const char *combo_name[3] = {"f32", "f64", "mixed"};

/* big: 0 small grids, 1 larger ones, 2 a few wide rows of lines, 3 long lines in rows wider than a block */
static int run_case(uint64_t *rng, int ndim, int axis, int combo, int threads, int inplace, int big)
{
    tridi_grid g = {ndim, {0}, {0}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {1, 1, 1};
    for (int a = 0; a < ndim; ++a) {
        int64_t lb = tu_randint(rng, -3, 2), halo = tu_randint(rng, 0, 2);
        int64_t n = big ? tu_randint(rng, 40, 100) : tu_randint(rng, 1, 20);
        if (big == 2) /* a few wide rows of lines: the CPU backend cuts them to share them among threads */
            n = a == 0 ? tu_randint(rng, 130, 300) : a == axis ? tu_randint(rng, 2, 30) : tu_randint(rng, 1, 4);
        else if (big == 3) /* rows wider than the W/G budget of lines this long allows: cut into pieces */
            n = a == 0 ? tu_randint(rng, 2000, 2100) : tu_randint(rng, 600, 650);
        g.lbound[a] = lb - halo;
        g.ubound[a] = lb + n - 1 + halo;
        lo[a] = lb + tu_randint(rng, 0, n / 4);
        hi[a] = lb + n - 1 - tu_randint(rng, 0, n / 4);
    }
    const tridi_dtype *t = combos[combo];
    tu_system s;
    if (tu_system_alloc(&s, &g, t[0], t[1], t[2], t[3], t[4], rng))
        return 1;
    if (inplace) { /* x is the rhs array: poison nothing, keep a copy of rhs to build the reference */
        memcpy(s.a.x, s.a.rhs, (size_t)s.cells * (t[4] == TRIDI_FLOAT64 ? 8u : 4u));
        memcpy(s.x_before, s.a.x, (size_t)s.cells * (t[4] == TRIDI_FLOAT64 ? 8u : 4u));
    }
    size_t es = t[4] == TRIDI_FLOAT64 ? 8 : 4;
    void *xref = malloc((size_t)s.cells * es);
    memcpy(xref, s.x_before, (size_t)s.cells * es);
    tridi_arrays ref = s.a;
    ref.x = xref;
    tu_reference_solve(&g, (tridi_axis)axis, lo, hi, &ref);

    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    cfg.num_threads = threads;
    tridi_context ctx;
    int bad = 0;
    if (tridi_create(&ctx, &cfg)) {
        printf("create: %s\n", tridi_error_message());
        return 1;
    }
    tridi_arrays arr = s.a;
    if (inplace)
        arr.rhs = arr.x;
    char label[160];
    snprintf(label, sizeof label, "%dD axis %c %s threads %d%s grid %lldx%lldx%lld", ndim, "xyz"[axis],
             combo_name[combo], threads, inplace ? " in-place" : "", (long long)(g.ubound[0] - g.lbound[0] + 1),
             (long long)(g.ubound[1] - g.lbound[1] + 1), ndim == 3 ? (long long)(g.ubound[2] - g.lbound[2] + 1) : 1LL);
    tridi_status st = tridi_solve(ctx, &g, (tridi_axis)axis, lo, hi, &arr);
    if (st) {
        printf("  %s: unexpected status %s: %s\n", label, tridi_status_name(st), tridi_error_message());
        bad = 1;
    } else if (tu_check(label, &s, xref, lo, hi, (tridi_axis)axis, tu_tolerance(t[4]))) {
        bad = 1;
    }
    /* The same context again (cached scratch) must give the same answer bit for bit. */
    if (!bad && !inplace) {
        void *first = malloc((size_t)s.cells * es);
        memcpy(first, s.a.x, (size_t)s.cells * es);
        tu_poison_x(&s, rng);
        st = tridi_solve(ctx, &g, (tridi_axis)axis, lo, hi, &arr);
        if (st || tu_check(label, &s, first, lo, hi, (tridi_axis)axis, 0.0)) {
            printf("  %s: second call differs from the first\n", label);
            bad = 1;
        }
        free(first);
    }
    tridi_destroy(ctx);
    free(xref);
    tu_system_free(&s);
    if (bad)
        printf("FAILED: %s\n", label);
    return bad;
}

int main(void)
{
    uint64_t rng = tu_seed("test_solve");
    int failures = 0, cases = 0;
    for (int ndim = 2; ndim <= 3; ++ndim)
        for (int axis = 0; axis < ndim; ++axis)
            for (int combo = 0; combo < 3; ++combo)
                for (int threads = 1; threads <= 3; ++threads)
                    for (int rep = 0; rep < 6; ++rep) {
                        failures += run_case(&rng, ndim, axis, combo, threads, rep == 5, 0);
                        cases++;
                    }
    /* Larger grids: several blocks per line plane, partial blocks. */
    for (int axis = 0; axis < 3; ++axis)
        for (int combo = 0; combo < 3; ++combo) {
            failures += run_case(&rng, 3, axis, combo, 2, 0, 1);
            cases++;
        }
    /* More threads than lines or blocks: threads with empty or one-line shares. */
    for (int axis = 0; axis < 3; ++axis) {
        failures += run_case(&rng, 3, axis, axis, 9, 0, 0);
        cases++;
    }
    /* y and z blocks cut from rows: for balance among 2-4 threads, and by the budget of long lines. */
    for (int rep = 0; rep < 6; ++rep) {
        failures += run_case(&rng, 3, 1 + rep % 2, rep % 3, 2 + rep % 3, 0, 2);
        cases++;
    }
    for (int combo = 0; combo < 3; ++combo) {
        failures += run_case(&rng, 2, 1, combo, 2, 0, 3);
        cases++;
    }
    printf("%d passed, %d failed\n", cases - failures, failures);
    return failures ? 1 : 0;
}
