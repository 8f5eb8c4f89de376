/* Every bad input of the C API: the status, a message naming the argument / index / cell, and the next
 * valid call still works. After an argument error x is unchanged; after a numerical failure x is as the
 * context's on_error says (issue 26, decision 2): TRIDI_ON_ERROR_LINES (the default) leaves the failing
 * lines untouched and answers every other line, TRIDI_ON_ERROR_CALL leaves x unchanged. */
#include "testutil.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_unchanged(const char *what, const tu_system *s)
{
    tu_checks++;
    if (tu_check_unchanged(what, s)) {
        tu_failures++;
        printf("FAILED %s: x was modified by a failing call\n", what);
    }
}

/* After a failure under ON_ERROR_LINES of the lines holding cells[0..ncells-1] (Fortran indices): those
 * lines untouched, the others equal to the oracle (tu_check_lines); then x is put back as it was, for the
 * next case. */
static void expect_lines(const char *what, tu_system *s, const int64_t lo[3], const int64_t hi[3], int axis,
                         int ncells, const int64_t cells[][3])
{
    int64_t failing[4];
    for (int k = 0; k < ncells; ++k)
        failing[k] = tu_line_of(&s->grid, lo, hi, (tridi_axis)axis, cells[k]);
    tu_checks++;
    if (tu_check_lines(what, s, lo, hi, (tridi_axis)axis, tu_tolerance(s->a.x_type), failing, ncells)) {
        tu_failures++;
        printf("FAILED %s: under ON_ERROR_LINES, a failing line was written or another line not answered\n", what);
    }
    memcpy(s->a.x, s->x_before, (size_t)s->cells * tu_esize(s->a.x_type));
}

/* x after a numerical failure on a context whose on_error is `mode` (0: LINES, 1: CALL). */
static void expect_contract(const char *what, int mode, tu_system *s, const int64_t lo[3], const int64_t hi[3],
                            int axis, int ncells, const int64_t cells[][3])
{
    if (mode)
        expect_unchanged(what, s);
    else
        expect_lines(what, s, lo, hi, axis, ncells, cells);
}

/* The values at cell c and the lower diagonal at cn (the next unknown along the solve axis), kept so that a
 * case can change them and put them back. */
typedef struct {
    int64_t c, cn;
    float rhs, lower, upper, lower_next;
    double diag;
} kept_cell;

static kept_cell keep_cell(const tu_system *s, int64_t c, int64_t cn)
{
    kept_cell k = {c, cn, ((float *)s->a.rhs)[c], ((float *)s->a.lower)[c], ((float *)s->a.upper)[c],
                   ((float *)s->a.lower)[cn], ((double *)s->a.diag)[c]};
    return k;
}

static void restore_cell(tu_system *s, const kept_cell *k)
{
    ((float *)s->a.rhs)[k->c] = k->rhs;
    ((float *)s->a.lower)[k->c] = k->lower;
    ((float *)s->a.upper)[k->c] = k->upper;
    ((float *)s->a.lower)[k->cn] = k->lower_next;
    ((double *)s->a.diag)[k->c] = k->diag;
}

/* Makes the answer at cell c overflow float while the elimination stays finite: x = 1 / 1e-300, and no
 * coupling to either neighbour (the next unknown's lower is zeroed, so the 1e300 stays out of it). */
static void make_overflow(tu_system *s, const kept_cell *k)
{
    ((double *)s->a.diag)[k->c] = 1e-300;
    ((float *)s->a.lower)[k->c] = 0.0f;
    ((float *)s->a.upper)[k->c] = 0.0f;
    ((float *)s->a.rhs)[k->c] = 1.0f;
    ((float *)s->a.lower)[k->cn] = 0.0f;
}

/* A context like cfg's with the given number of threads and on_error (0: LINES, 1: CALL). */
static tridi_context context_with_threads(const tridi_config *cfg, int threads, int mode)
{
    tridi_config c = *cfg;
    c.num_threads = threads;
    c.on_error = mode ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES;
    tridi_context cx = NULL;
    tu_expect("create context", tridi_create(&cx, &c), TRIDI_SUCCESS, NULL);
    return cx;
}

int main(void)
{
    uint64_t rng = tu_seed("test_errors");
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    tridi_context ctx;
    tu_expect("create cpu", tridi_create(&ctx, &cfg), TRIDI_SUCCESS, NULL);

    tridi_grid g = {3, {0, 0, 0}, {9, 7, 5}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {8, 6, 4};
    tu_system s;
    tu_system_alloc(&s, &g, TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, &rng);
    tridi_arrays a = s.a;

    /* handles and pointers */
    tu_expect("NULL context", tridi_solve(NULL, &g, TRIDI_AXIS_X, lo, hi, &a), TRIDI_ERROR_INVALID_HANDLE, "'ctx'");
    tu_expect("NULL grid", tridi_solve(ctx, NULL, TRIDI_AXIS_X, lo, hi, &a), TRIDI_ERROR_NULL_POINTER, "'grid'");
    tu_expect("NULL lo", tridi_solve(ctx, &g, TRIDI_AXIS_X, NULL, hi, &a), TRIDI_ERROR_NULL_POINTER, "'lo'");
    tu_expect("NULL arrays", tridi_solve(ctx, &g, TRIDI_AXIS_X, lo, hi, NULL), TRIDI_ERROR_NULL_POINTER, "'arrays'");
    const char *names[5] = {"lower", "diag", "upper", "rhs", "x"};
    for (int i = 0; i < 5; ++i) {
        tridi_arrays b = a;
        const void **slot[5] = {&b.lower, &b.diag, &b.upper, &b.rhs, (const void **)&b.x};
        *slot[i] = NULL;
        char what[64], needle[64];
        snprintf(what, sizeof what, "NULL %s", names[i]);
        snprintf(needle, sizeof needle, "arrays->%s is NULL", names[i]);
        tu_expect(what, tridi_solve(ctx, &g, TRIDI_AXIS_Y, lo, hi, &b), TRIDI_ERROR_NULL_POINTER, needle);
    }
    expect_unchanged("after NULL pointers", &s);

    /* geometry */
    tridi_grid g1 = g;
    g1.ndim = 4;
    tu_expect("ndim 4", tridi_solve(ctx, &g1, TRIDI_AXIS_X, lo, hi, &a), TRIDI_ERROR_INVALID_VALUE, "ndim = 4");
    g1 = g;
    g1.ubound[1] = -1;
    tu_expect("empty allocation", tridi_solve(ctx, &g1, TRIDI_AXIS_X, lo, hi, &a), TRIDI_ERROR_INVALID_VALUE, "ubound[1]");
    g1 = g;
    g1.lbound[0] = INT64_MIN / 2;
    g1.ubound[0] = INT64_MAX / 2;
    tu_expect("huge grid", tridi_solve(ctx, &g1, TRIDI_AXIS_X, lo, hi, &a), TRIDI_ERROR_INVALID_VALUE, "too large");
    tu_expect("axis 3", tridi_solve(ctx, &g, (tridi_axis)3, lo, hi, &a), TRIDI_ERROR_INVALID_VALUE, "axis = 3");
    tu_expect("axis -1", tridi_solve(ctx, &g, (tridi_axis)-1, lo, hi, &a), TRIDI_ERROR_INVALID_VALUE, "axis = -1");
    tridi_grid g2 = {2, {0, 0, 0}, {9, 7, 0}};
    tu_expect("axis z on 2D", tridi_solve(ctx, &g2, TRIDI_AXIS_Z, lo, hi, &a), TRIDI_ERROR_INVALID_VALUE, "2D grid");
    int64_t bad_lo[3] = {1, -1, 1}, bad_hi[3] = {8, 6, 6};
    tu_expect("lo below lbound", tridi_solve(ctx, &g, TRIDI_AXIS_Z, bad_lo, hi, &a), TRIDI_ERROR_BOUNDS, "lo[1] = -1");
    tu_expect("hi above ubound", tridi_solve(ctx, &g, TRIDI_AXIS_Z, lo, bad_hi, &a), TRIDI_ERROR_BOUNDS, "hi[2] = 6");
    expect_unchanged("after bad geometry", &s);

    /* types and aliasing */
    tridi_arrays b = a;
    b.x_type = TRIDI_FLOAT64;
    tu_expect("f64 x with mixed inputs", tridi_solve(ctx, &g, TRIDI_AXIS_X, lo, hi, &b), TRIDI_ERROR_UNSUPPORTED,
           "unsupported type combination");
    b = a;
    b.rhs_type = (tridi_dtype)7;
    tu_expect("dtype 7", tridi_solve(ctx, &g, TRIDI_AXIS_X, lo, hi, &b), TRIDI_ERROR_INVALID_VALUE, "rhs_type = 7");
    b = a;
    b.x = (void *)((const char *)a.diag + 16);
    tu_expect("x overlaps diag", tridi_solve(ctx, &g, TRIDI_AXIS_X, lo, hi, &b), TRIDI_ERROR_ALIASING, "diag");
    b = a;
    b.x = (void *)a.upper;
    tu_expect("x is upper", tridi_solve(ctx, &g, TRIDI_AXIS_X, lo, hi, &b), TRIDI_ERROR_ALIASING, "upper");
    expect_unchanged("after bad types", &s);

    /* empty boxes are not errors and touch nothing */
    int64_t elo[3] = {5, 1, 1}, ehi[3] = {4, 6, 4};
    tu_expect("empty box", tridi_solve(ctx, &g, TRIDI_AXIS_Y, elo, ehi, &a), TRIDI_SUCCESS, NULL);
    expect_unchanged("after empty box", &s);

    /* numerical failures: first failing line and cell named; x as the context's on_error says */
    tridi_config cfg_call = cfg;
    cfg_call.on_error = TRIDI_ON_ERROR_CALL;
    tridi_context ctx_call;
    tu_expect("create cpu, on_error CALL", tridi_create(&ctx_call, &cfg_call), TRIDI_SUCCESS, NULL);
    const char *mode_name[2] = {"lines", "call"};
    int64_t cell_zero = tu_index(&g, 3, 4, 2), cell_nan = tu_index(&g, 6, 2, 3);
    const int64_t at_zero[1][3] = {{3, 4, 2}}, at_nan[1][3] = {{6, 2, 3}}, at_inf[1][3] = {{8, 6, 4}};
    for (int axis = 0; axis < 3; ++axis)
        for (int mode = 0; mode < 2; ++mode) {
            tridi_context cx = mode ? ctx_call : ctx;
            double e_saved = ((double *)s.a.diag)[cell_zero];
            float l_saved = ((float *)s.a.lower)[cell_zero];
            ((double *)s.a.diag)[cell_zero] = 0.0;
            ((float *)s.a.lower)[cell_zero] = 0.0f; /* pivot = diag + lower*w = 0 exactly */
            char what[64];
            snprintf(what, sizeof what, "zero pivot axis %c, %s", "xyz"[axis], mode_name[mode]);
            tu_expect(what, tridi_solve(cx, &g, (tridi_axis)axis, lo, hi, &a), TRIDI_ERROR_ZERO_PIVOT,
                      mode ? "(3, 4, 2)" : "(3, 4, 2); 1 line failed");
            int64_t cell[3];
            tu_checks++;
            if (tridi_error_cell(cell) != 3 || cell[0] != 3 || cell[1] != 4 || cell[2] != 2) {
                tu_failures++;
                printf("FAILED tridi_error_cell after zero pivot: (%lld,%lld,%lld)\n", (long long)cell[0],
                       (long long)cell[1], (long long)cell[2]);
            }
            expect_contract(what, mode, &s, lo, hi, axis, 1, at_zero);
            ((double *)s.a.diag)[cell_zero] = e_saved;
            ((float *)s.a.lower)[cell_zero] = l_saved;

            float r_saved = ((float *)s.a.rhs)[cell_nan];
            ((float *)s.a.rhs)[cell_nan] = NAN;
            snprintf(what, sizeof what, "NaN rhs axis %c, %s", "xyz"[axis], mode_name[mode]);
            tu_expect(what, tridi_solve(cx, &g, (tridi_axis)axis, lo, hi, &a), TRIDI_ERROR_NONFINITE, "(6, 2, 3)");
            expect_contract(what, mode, &s, lo, hi, axis, 1, at_nan);
            ((float *)s.a.rhs)[cell_nan] = r_saved;
        }
    int64_t c_inf = tu_index(&g, 8, 6, 4);
    for (int mode = 0; mode < 2; ++mode) {
        const double d_saved = ((double *)s.a.diag)[c_inf];
        ((double *)s.a.diag)[c_inf] = INFINITY;
        char what[64];
        snprintf(what, sizeof what, "Inf diag, %s", mode_name[mode]);
        tu_expect(what, tridi_solve(mode ? ctx_call : ctx, &g, TRIDI_AXIS_Z, lo, hi, &a), TRIDI_ERROR_NONFINITE,
                  "non-finite diag");
        expect_contract(what, mode, &s, lo, hi, TRIDI_AXIS_Z, 1, at_inf);
        ((double *)s.a.diag)[c_inf] = d_saved;
    }
    /* the answer overflowing float although the elimination is finite, on every axis (y and z log x's rows
     * inside the back substitution that overflows) */
    for (int axis = 0; axis < 3; ++axis)
        for (int mode = 0; mode < 2; ++mode) {
            const kept_cell k =
                keep_cell(&s, tu_index(&g, 2, 2, 2), tu_index(&g, 2 + (axis == 0), 2 + (axis == 1), 2 + (axis == 2)));
            make_overflow(&s, &k);
            char what[64];
            snprintf(what, sizeof what, "overflow axis %c, %s", "xyz"[axis], mode_name[mode]);
            tu_expect(what, tridi_solve(mode ? ctx_call : ctx, &g, (tridi_axis)axis, lo, hi, &a),
                      TRIDI_ERROR_NONFINITE, "(2, 2, 2)");
            const int64_t at[1][3] = {{2, 2, 2}};
            expect_contract(what, mode, &s, lo, hi, axis, 1, at);
            restore_cell(&s, &k);
        }

    /* Two failing lines: the report names the lower one even when another thread meets the higher one
     * first (a thread's first block fails at once, the lower line sits at the end of another's range). */
    {
        tridi_grid gb = {3, {1, 1, 1}, {64, 64, 8}};
        int64_t blo[3] = {1, 1, 1}, bhi[3] = {64, 64, 8};
        tu_system sb;
        tu_system_alloc(&sb, &gb, TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, &rng);
        ((float *)sb.a.rhs)[tu_index(&gb, 1, 40, 3)] = NAN;  /* x-sweep line 167 (j = 40, k = 3) */
        ((float *)sb.a.rhs)[tu_index(&gb, 5, 1, 6)] = NAN;   /* line 320 (j = 1, k = 6): higher */
        const int64_t at[2][3] = {{1, 40, 3}, {5, 1, 6}};
        for (int threads = 1; threads <= 4; ++threads)
            for (int mode = 0; mode < 2; ++mode) {
                tridi_context cx = context_with_threads(&cfg, threads, mode);
                char what[64];
                snprintf(what, sizeof what, "lowest failing line, %d threads, %s", threads, mode_name[mode]);
                for (int rep = 0; rep < 20; ++rep) {
                    tridi_status st = tridi_solve(cx, &gb, TRIDI_AXIS_X, blo, bhi, &sb.a);
                    if (rep == 0 || st != TRIDI_ERROR_NONFINITE || !strstr(tridi_error_message(), "(1, 40, 3)"))
                        tu_expect(what, st, TRIDI_ERROR_NONFINITE, mode ? "(1, 40, 3)" : "(1, 40, 3); 2 lines failed");
                }
                expect_contract(what, mode, &sb, blo, bhi, TRIDI_AXIS_X, 2, at);
                tridi_destroy(cx);
            }
        tu_system_free(&sb);
    }

    /* y and z: the failing line in the last block of the last thread's share, so that the other threads'
     * blocks have written x (and, under CALL, logged it) before the failure; it fails in the forward sweep
     * (NaN rhs) or in the back substitution (an answer overflowing float). Under CALL every written block
     * must be put back; under LINES every other line keeps its answer. */
    {
        tridi_grid gb = {3, {1, 1, 1}, {48, 40, 24}};
        int64_t blo[3] = {1, 1, 1}, bhi[3] = {48, 40, 24};
        tu_system sb;
        tu_system_alloc(&sb, &gb, TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, &rng);
        for (int axis = 1; axis < 3; ++axis)
            for (int kind = 0; kind < 2; ++kind) {
                /* a late line: the last unknown-row's plane for y (k = 24), the last row for z (j = 40) */
                const int64_t ci = 45, cj = axis == 1 ? 20 : 40, ck = axis == 1 ? 24 : 12;
                const kept_cell k =
                    keep_cell(&sb, tu_index(&gb, ci, cj, ck), tu_index(&gb, ci, cj + (axis == 1), ck + (axis == 2)));
                if (kind == 0)
                    ((float *)sb.a.rhs)[k.c] = NAN;
                else
                    make_overflow(&sb, &k);
                char cell[40];
                snprintf(cell, sizeof cell, "(%lld, %lld, %lld)", (long long)ci, (long long)cj, (long long)ck);
                const int64_t at[1][3] = {{ci, cj, ck}};
                for (int threads = 1; threads <= 4; ++threads)
                    for (int mode = 0; mode < 2; ++mode) {
                        tridi_context cx = context_with_threads(&cfg, threads, mode);
                        char what[96];
                        snprintf(what, sizeof what, "%s late in axis %c, %d threads, %s", kind ? "overflow" : "NaN",
                                 "xyz"[axis], threads, mode_name[mode]);
                        tu_expect(what, tridi_solve(cx, &gb, (tridi_axis)axis, blo, bhi, &sb.a),
                                  TRIDI_ERROR_NONFINITE, cell);
                        expect_contract(what, mode, &sb, blo, bhi, axis, 1, at);
                        tridi_destroy(cx);
                    }
                restore_cell(&sb, &k);
            }
        tu_system_free(&sb);
    }
    tridi_destroy(ctx_call);

    /* the next valid call works */
    tu_expect("valid call after errors", tridi_solve(ctx, &g, TRIDI_AXIS_X, lo, hi, &a), TRIDI_SUCCESS, NULL);

    /* device entry points on a CPU context, uploads, config */
    void *dp = NULL;
    tu_expect("device alloc on cpu", tridi_device_alloc(ctx, 64, &dp), TRIDI_ERROR_UNSUPPORTED, "CUDA backend");
    tu_expect("solve_device on cpu", tridi_solve_device(ctx, &g, TRIDI_AXIS_X, lo, hi, &a, NULL), TRIDI_ERROR_UNSUPPORTED,
           "CUDA backend");
    tu_expect("upload role x", tridi_upload_async(ctx, &g, TRIDI_AXIS_X, lo, hi, TRIDI_ROLE_X, a.rhs, TRIDI_FLOAT32),
           TRIDI_ERROR_INVALID_VALUE, "role = 4");
    tu_expect("upload bad box", tridi_upload_async(ctx, &g, TRIDI_AXIS_X, lo, bad_hi, TRIDI_ROLE_RHS, a.rhs, TRIDI_FLOAT32),
           TRIDI_ERROR_BOUNDS, "hi[2] = 6");
    tu_expect("upload on cpu", tridi_upload_async(ctx, &g, TRIDI_AXIS_X, lo, hi, TRIDI_ROLE_RHS, a.rhs, TRIDI_FLOAT32),
           TRIDI_SUCCESS, NULL);
    tu_expect("synchronize cpu", tridi_synchronize(ctx), TRIDI_SUCCESS, NULL);
    tridi_config bad = cfg;
    bad.size = 3;
    tridi_context c2;
    tu_expect("config size", tridi_create(&c2, &bad), TRIDI_ERROR_INVALID_VALUE, "tridi_config_init");
    bad = cfg;
    bad.backend = (tridi_backend)9;
    tu_expect("backend 9", tridi_create(&c2, &bad), TRIDI_ERROR_INVALID_VALUE, "backend = 9");
    bad = cfg;
    bad.num_threads = -2;
    tu_expect("threads -2", tridi_create(&c2, &bad), TRIDI_ERROR_INVALID_VALUE, "num_threads");
    bad = cfg;
    bad.on_error = 2;
    tu_expect("on_error 2", tridi_create(&c2, &bad), TRIDI_ERROR_INVALID_VALUE, "config->on_error = 2");
    tu_expect_true("tridi_config_init gives on_error LINES", cfg.on_error == TRIDI_ON_ERROR_LINES);
    /* A caller built before on_error existed (a config that ends before it) gets LINES. */
    bad = cfg;
    bad.size = offsetof(tridi_config, on_error);
    bad.on_error = 99; /* past the caller's size: never read */
    tu_expect("config without on_error", tridi_create(&c2, &bad), TRIDI_SUCCESS, NULL);
    if (c2) {
        const int64_t at_zero[1][3] = {{3, 4, 2}};
        const double e_saved = ((double *)s.a.diag)[cell_zero];
        const float l_saved = ((float *)s.a.lower)[cell_zero];
        ((double *)s.a.diag)[cell_zero] = 0.0;
        ((float *)s.a.lower)[cell_zero] = 0.0f;
        memcpy(s.x_before, s.a.x, (size_t)s.cells * sizeof(float));
        tu_expect("config without on_error: a zero pivot", tridi_solve(c2, &g, TRIDI_AXIS_X, lo, hi, &a),
                  TRIDI_ERROR_ZERO_PIVOT, "1 line failed");
        expect_lines("config without on_error: LINES", &s, lo, hi, TRIDI_AXIS_X, 1, at_zero);
        ((double *)s.a.diag)[cell_zero] = e_saved;
        ((float *)s.a.lower)[cell_zero] = l_saved;
        tridi_destroy(c2);
    }
    tu_expect("create NULL ctx ptr", tridi_create(NULL, &cfg), TRIDI_ERROR_NULL_POINTER, "'ctx'");
    tu_expect("destroy NULL", tridi_destroy(NULL), TRIDI_SUCCESS, NULL);
    tu_expect("status name", strcmp(tridi_status_name(TRIDI_ERROR_BOUNDS), "TRIDI_ERROR_BOUNDS") ? TRIDI_ERROR_INTERNAL
                                                                                              : TRIDI_SUCCESS,
           TRIDI_SUCCESS, NULL);
#ifndef TRIDI_TEST_EXPECT_GPU
    /* Without a GPU (CI) asking for CUDA must say so, and AUTO must fall back to the CPU. */
    bad = cfg;
    bad.backend = TRIDI_BACKEND_CUDA;
    tridi_status cs = tridi_create(&c2, &bad);
    if (cs == TRIDI_SUCCESS) {
        tridi_destroy(c2); /* a GPU is present: nothing to check here */
    } else {
        tu_expect("cuda without gpu", cs, TRIDI_ERROR_NO_DEVICE, "CUDA backend was asked for");
        bad.backend = TRIDI_BACKEND_AUTO;
        tu_expect("auto without gpu", tridi_create(&c2, &bad), TRIDI_SUCCESS, NULL);
        tridi_backend be;
        tridi_get_backend(c2, &be);
        tu_expect("auto resolves to cpu", be == TRIDI_BACKEND_CPU ? TRIDI_SUCCESS : TRIDI_ERROR_INTERNAL, TRIDI_SUCCESS, NULL);
        tridi_destroy(c2);
    }
#endif
    tridi_destroy(ctx);
    tu_system_free(&s);
    printf("%d passed, %d failed\n", tu_checks - tu_failures, tu_failures);
    return tu_failures ? 1 : 0;
}
