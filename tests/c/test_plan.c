/* Solve plans through the public API (tridi_plan_*), on the backend TRIDI_BACKEND names: plans reused
 * over many calls on fresh random systems, every axis and type combination, against the reference
 * (MOHID's recurrence) and bitwise outside the box; ON_ERROR_CALL (x unchanged) and ON_ERROR_LINES (the
 * failing lines untouched, the others answered, the status naming the first line and the count); on the
 * GPU device plans too, SYNC and DEFERRED verdicts, plans destroyed with work in flight; handles and
 * options refused naming the argument. Exit 77 (skipped) when TRIDI_BACKEND=cuda and no GPU is usable. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const tridi_dtype combos[3][5] = {
    {TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32},
    {TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64},
    {TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32}};
static const char *combo_name[3] = {"f32", "f64", "mixed"};

static int failures;

#define FAIL(...)                                                                                                  \
    do {                                                                                                           \
        printf("  FAILED: " __VA_ARGS__);                                                                          \
        printf("\n");                                                                                              \
        failures++;                                                                                                \
    } while (0)

/* A random grid with halos and a box strictly inside; lines of up to nmax unknowns. */
static void random_geometry(uint64_t *rng, int ndim, int axis, int64_t nmax, tridi_grid *g, int64_t lo[3],
                            int64_t hi[3])
{
    g->ndim = ndim;
    for (int a = 0; a < 3; ++a)
        g->lbound[a] = g->ubound[a] = lo[a] = hi[a] = 1;
    for (int a = 0; a < ndim; ++a) {
        int64_t lb = tu_randint(rng, -3, 2), halo = tu_randint(rng, 0, 2);
        int64_t n = a == axis ? tu_randint(rng, 2, nmax) : tu_randint(rng, 3, 24);
        g->lbound[a] = lb - halo;
        g->ubound[a] = lb + n - 1 + halo;
        /* Trimmed so that lines keep at least 2 unknowns and the box at least one line along each axis (the
         * failure cases put a zero pivot at a line's first unknown and a NaN at its last). */
        lo[a] = lb + (n > 2 ? tu_randint(rng, 0, 1) : 0);
        hi[a] = lb + n - 1 - (n > 3 ? tu_randint(rng, 0, 1) : 0);
    }
}

/* Box coordinates of unknown m of line l (lines numbered as tridi does: the lower line axis fastest). */
static int64_t line_cell(const tridi_grid *g, int axis, const int64_t lo[3], const int64_t hi[3], int64_t l,
                         int64_t m)
{
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t n1 = hi[a1] - lo[a1] + 1;
    int64_t c[3] = {1, 1, 1};
    c[axis] = lo[axis] + m;
    c[a1] = lo[a1] + l % n1;
    c[a2] = lo[a2] + l / n1;
    return tu_index(g, c[0], c[1], g->ndim == 3 ? c[2] : 1);
}

static int64_t count_lines(int axis, const int64_t lo[3], const int64_t hi[3])
{
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    return (hi[a1] - lo[a1] + 1) * (hi[a2] - lo[a2] + 1);
}

/* Where the arrays of a solve live for the test: on the host, or copied to the device. */
typedef struct where {
    tridi_memory memory;
    tridi_verdict verdict;
} where;

static const where device_deferred = {TRIDI_MEMORY_DEVICE, TRIDI_VERDICT_DEFERRED};

/* Runs the plan on s (device: uploads, solves, downloads x). The status of the call, and under DEFERRED the
 * status of the next tridi_plan_status in *deferred. */
static tridi_status run(tridi_context ctx, tridi_plan plan, where w, tu_system *s, tridi_status *deferred)
{
    *deferred = TRIDI_SUCCESS;
    if (w.memory == TRIDI_MEMORY_HOST)
        return tridi_plan_solve(plan, &s->a);
    tu_dev_set d;
    if (tu_dev_upload(ctx, s, &d))
        return TRIDI_ERROR_INTERNAL;
    tridi_arrays da = tu_dev_arrays(s, &d);
    tridi_status st = tridi_plan_solve(plan, &da);
    if (w.verdict == TRIDI_VERDICT_DEFERRED)
        *deferred = tridi_plan_status(plan);
    /* tridi_copy_to_host waits for the context's work; a failure it would report was taken above. */
    tridi_status c = tridi_copy_to_host(ctx, s->a.x, d.p[4], d.bytes[4]);
    tu_dev_free(ctx, &d);
    return st ? st : c;
}

/* The plan options of a place (memory, verdict); the rest tridi_solve_options_init's. */
static tridi_solve_options place_options(where w)
{
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.memory = w.memory;
    o.verdict = w.verdict;
    return o;
}

static void case_label(char *label, size_t size, const char *what, int ndim, int axis, int combo, where w,
                       tridi_on_error oe)
{
    snprintf(label, size, "%s %dD axis %c %s memory %s verdict %s on_error %s", what, ndim, "xyz"[axis],
             combo_name[combo], w.memory ? "device" : "host", w.verdict ? "deferred" : "sync",
             oe == TRIDI_ON_ERROR_LINES ? "lines" : "call");
}

/* The oracle's x for s (malloc'd, the caller frees it): s's x before the solve, solved by the reference. */
static void *reference_x(const tu_system *s, const tridi_grid *g, int axis, const int64_t lo[3], const int64_t hi[3],
                         tridi_dtype xt)
{
    void *xref = malloc((size_t)s->cells * tu_esize(xt));
    memcpy(xref, s->x_before, (size_t)s->cells * tu_esize(xt));
    tridi_arrays ref = s->a;
    ref.x = xref;
    tu_reference_solve(g, (tridi_axis)axis, lo, hi, &ref);
    return xref;
}

/* Plans reused over several calls, each on a fresh random system of the plan's shape. */
static void reuse_case(uint64_t *rng, tridi_context ctx, int ndim, int axis, int combo, where w, tridi_on_error oe)
{
    tridi_grid g;
    int64_t lo[3], hi[3];
    random_geometry(rng, ndim, axis, 300, &g, lo, hi);
    const tridi_dtype *t = combos[combo];
    tridi_solve_options o = place_options(w);
    o.on_error = oe;
    tridi_plan plan;
    char label[200];
    case_label(label, sizeof label, "reuse", ndim, axis, combo, w, oe);
    tridi_status st = tridi_plan_create(ctx, &g, (tridi_axis)axis, lo, hi, t, &o, &plan);
    if (st) {
        FAIL("%s: tridi_plan_create: %s", label, tridi_error_message());
        return;
    }
    for (int call = 0; call < 4; ++call) {
        tu_system s;
        if (tu_system_alloc(&s, &g, t[0], t[1], t[2], t[3], t[4], rng)) {
            FAIL("%s: allocation", label);
            break;
        }
        void *xref = reference_x(&s, &g, axis, lo, hi, t[4]);
        tridi_status deferred;
        st = run(ctx, plan, w, &s, &deferred);
        if (st || deferred)
            FAIL("%s call %d: %s / %s: %s", label, call, tridi_status_name(st), tridi_status_name(deferred),
                 tridi_error_message());
        else if (tu_check(label, &s, xref, lo, hi, (tridi_axis)axis, tu_tolerance(t[4])))
            FAIL("%s call %d: answers", label, call);
        free(xref);
        tu_system_free(&s);
    }
    st = tridi_plan_destroy(plan);
    if (st)
        FAIL("%s: tridi_plan_destroy: %s", label, tridi_error_message());
}

/* Two lines fail (a zero pivot at an inner unknown of one, a NaN rhs in another): CALL leaves x unchanged,
 * LINES leaves exactly those lines untouched and answers the others. */
static void failure_case(uint64_t *rng, tridi_context ctx, int ndim, int axis, int combo, where w, tridi_on_error oe)
{
    tridi_grid g;
    int64_t lo[3], hi[3];
    random_geometry(rng, ndim, axis, 200, &g, lo, hi);
    const tridi_dtype *t = combos[combo];
    const int64_t nlines = count_lines(axis, lo, hi), n = hi[axis] - lo[axis] + 1;
    char label[200];
    case_label(label, sizeof label, "failure", ndim, axis, combo, w, oe);
    tu_system s;
    if (tu_system_alloc(&s, &g, t[0], t[1], t[2], t[3], t[4], rng)) {
        FAIL("%s: allocation", label);
        return;
    }
    const size_t xs = tu_esize(t[4]);
    void *xref = reference_x(&s, &g, axis, lo, hi, t[4]); /* before the failures: the good lines' oracle */

    /* The failing lines: bad1 gets a zero pivot at unknown 0 (a zero row: diag and upper 0, singular, so that
     * FAST arithmetic fails there too; its partitioned solve pivots past a zero diagonal alone), bad2 (when
     * there is a second line) a NaN rhs at its last unknown. */
    const int64_t bad1 = tu_randint(rng, 0, nlines - 1);
    int64_t bad2 = nlines > 1 ? tu_randint(rng, 0, nlines - 2) : -1;
    if (bad2 >= bad1)
        bad2++;
    tu_set((void *)s.a.diag, t[1], line_cell(&g, axis, lo, hi, bad1, 0), 0.0);
    tu_set((void *)s.a.upper, t[2], line_cell(&g, axis, lo, hi, bad1, 0), 0.0);
    if (bad2 >= 0)
        tu_set((void *)s.a.rhs, t[3], line_cell(&g, axis, lo, hi, bad2, n - 1), NAN);
    const int64_t first = bad2 >= 0 && bad2 < bad1 ? bad2 : bad1, nfailed = bad2 >= 0 ? 2 : 1;

    tridi_solve_options o = place_options(w);
    o.on_error = oe;
    tridi_plan plan;
    tridi_status st = tridi_plan_create(ctx, &g, (tridi_axis)axis, lo, hi, t, &o, &plan);
    if (st) {
        FAIL("%s: tridi_plan_create: %s", label, tridi_error_message());
        goto done;
    }
    tridi_status deferred;
    st = run(ctx, plan, w, &s, &deferred);
    const tridi_status want = first == bad1 ? TRIDI_ERROR_ZERO_PIVOT : TRIDI_ERROR_NONFINITE;
    const tridi_status got = w.verdict == TRIDI_VERDICT_DEFERRED ? deferred : st;
    if (w.verdict == TRIDI_VERDICT_DEFERRED && st)
        FAIL("%s: a deferred call returned %s (numerical failures belong to tridi_plan_status): %s", label,
             tridi_status_name(st), tridi_error_message());
    if (got != want) {
        FAIL("%s: status %s, expected %s: %s", label, tridi_status_name(got), tridi_status_name(want),
             tridi_error_message());
    } else {
        char needle[64];
        snprintf(needle, sizeof needle, "number %lld,", (long long)first);
        if (!strstr(tridi_error_message(), needle))
            FAIL("%s: the message does not name line %lld: %s", label, (long long)first, tridi_error_message());
        if (oe == TRIDI_ON_ERROR_LINES) {
            snprintf(needle, sizeof needle, "%lld line%s failed", (long long)nfailed, nfailed == 1 ? "" : "s");
            if (!strstr(tridi_error_message(), needle))
                FAIL("%s: the message does not say '%s': %s", label, needle, tridi_error_message());
        }
        /* The cell: unknown 0 of bad1 (its zero pivot) or the last unknown of bad2 (its NaN). */
        int64_t want_cell[3], got_cell[3] = {0, 0, 0};
        tu_line_cell(&g, lo, hi, (tridi_axis)axis, first, first == bad1 ? 0 : n - 1, want_cell);
        const int nd = tridi_error_cell(got_cell);
        if (nd != ndim || got_cell[0] != want_cell[0] || got_cell[1] != want_cell[1] ||
            (ndim == 3 && got_cell[2] != want_cell[2]))
            FAIL("%s: tridi_error_cell gives (%lld, %lld, %lld), the failing cell is (%lld, %lld, %lld)", label,
                 (long long)got_cell[0], (long long)got_cell[1], (long long)got_cell[2], (long long)want_cell[0],
                 (long long)want_cell[1], (long long)want_cell[2]);
        if (w.verdict == TRIDI_VERDICT_DEFERRED && !strstr(tridi_error_message(), "call"))
            FAIL("%s: a deferred failure's message does not name the call: %s", label, tridi_error_message());
        if (strncmp(tridi_error_message(), "tridi_plan_", 11) != 0)
            FAIL("%s: the message does not name the plan call the caller made: %s", label, tridi_error_message());
    }
    if (oe == TRIDI_ON_ERROR_CALL) {
        if (tu_check_unchanged(label, &s))
            FAIL("%s: x changed under ON_ERROR_CALL", label);
    } else {
        /* Expected: the reference on every good line, x as it was on the failing ones and outside the box. */
        memcpy(xref, s.x_before, (size_t)s.cells * xs); /* outside the box */
        tu_reference_solve(&g, (tridi_axis)axis, lo, hi, &(tridi_arrays){s.a.lower, t[0], s.a.diag, t[1], s.a.upper,
                                                                          t[2], s.a.rhs, t[3], xref, t[4]});
        int64_t bad = 0;
        for (int64_t l = 0; l < nlines; ++l) {
            const int failing = l == bad1 || l == bad2;
            double scale = 0.0;
            for (int64_t m = 0; m < n && !failing; ++m)
                scale = fmax(scale, fabs(tu_get(xref, t[4], line_cell(&g, axis, lo, hi, l, m))));
            for (int64_t m = 0; m < n; ++m) {
                const int64_t c = line_cell(&g, axis, lo, hi, l, m);
                if (failing) {
                    if (memcmp((char *)s.a.x + c * xs, (char *)s.x_before + c * xs, xs) && bad++ < 5)
                        printf("  %s: failing line %lld was written at unknown %lld\n", label, (long long)l,
                               (long long)m);
                } else {
                    const double got_v = tu_get(s.a.x, t[4], c), ref_v = tu_get(xref, t[4], c);
                    if (!(fabs(got_v - ref_v) <= tu_tolerance(t[4]) * (scale > 0 ? scale : 1)) && bad++ < 5)
                        printf("  %s: line %lld unknown %lld: %.9g, reference %.9g\n", label, (long long)l,
                               (long long)m, got_v, ref_v);
                }
            }
        }
        /* Cells outside the box: untouched. */
        for (int64_t c = 0; c < s.cells; ++c) {
            int inside = 1;
            /* a cell is in the box when its Fortran indices are */
            int64_t r = c, idx[3];
            for (int a = 0; a < 3; ++a) {
                const int64_t ext = g.ubound[a] - g.lbound[a] + 1;
                idx[a] = g.lbound[a] + r % ext;
                r /= ext;
                inside &= a >= ndim || (idx[a] >= lo[a] && idx[a] <= hi[a]);
            }
            if (!inside && memcmp((char *)s.a.x + c * xs, (char *)s.x_before + c * xs, xs) && bad++ < 5)
                printf("  %s: cell %lld outside the box was written\n", label, (long long)c);
        }
        if (bad)
            FAIL("%s: %lld bad cells under ON_ERROR_LINES", label, (long long)bad);
    }
    if (w.verdict == TRIDI_VERDICT_DEFERRED) {
        /* The failure was reported once; a later call on the same plan and stream is answered. */
        st = tridi_plan_status(plan);
        if (st)
            FAIL("%s: the failure was reported twice: %s", label, tridi_error_message());
        tu_system s2;
        if (!tu_system_alloc(&s2, &g, t[0], t[1], t[2], t[3], t[4], rng)) {
            memcpy(xref, s2.x_before, (size_t)s2.cells * xs);
            tridi_arrays r2 = s2.a;
            r2.x = xref;
            tu_reference_solve(&g, (tridi_axis)axis, lo, hi, &r2);
            st = run(ctx, plan, w, &s2, &deferred);
            if (st || deferred)
                FAIL("%s: the call after the failure: %s", label, tridi_error_message());
            else if (tu_check(label, &s2, xref, lo, hi, (tridi_axis)axis, tu_tolerance(t[4])))
                FAIL("%s: the call after the failure: answers", label);
            tu_system_free(&s2);
        }
    }
    tridi_plan_destroy(plan);
done:
    free(xref);
    tu_system_free(&s);
}

/* Handles, options and arrays refused with a clear status. */
static void argument_cases(uint64_t *rng, tridi_context ctx, int gpu)
{
    tridi_grid g = {3, {1, 1, 1}, {8, 6, 5}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {8, 6, 5};
    const tridi_dtype *t = combos[1];
    tridi_plan plan = NULL;
    tu_expect("plan_create NULL plan", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, hi, t, NULL, NULL),
              TRIDI_ERROR_NULL_POINTER, "'plan'");
    tu_expect("plan_create NULL types", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, hi, NULL, NULL, &plan),
              TRIDI_ERROR_NULL_POINTER, "'types'");
    tu_expect("plan_create NULL ctx", tridi_plan_create(NULL, &g, TRIDI_AXIS_X, lo, hi, t, NULL, &plan),
              TRIDI_ERROR_INVALID_HANDLE, "'ctx'");
    const tridi_dtype odd[5] = {TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32};
    tu_expect("plan_create unsupported types", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, hi, odd, NULL, &plan),
              TRIDI_ERROR_UNSUPPORTED, "type combination");
    int64_t far[3] = {8, 6, 9};
    tu_expect("plan_create box outside", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, far, t, NULL, &plan),
              TRIDI_ERROR_BOUNDS, "hi[2]");
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.size = 3;
    tu_expect("options size", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, hi, t, &o, &plan),
              TRIDI_ERROR_INVALID_VALUE, "options->size");
    tridi_solve_options_init(&o);
    o.on_error = (tridi_on_error)7;
    tu_expect("options on_error", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, hi, t, &o, &plan),
              TRIDI_ERROR_INVALID_VALUE, "options->on_error");
    tridi_solve_options_init(&o);
    o.arith = (tridi_arith)-1;
    tu_expect("options arith", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, hi, t, &o, &plan),
              TRIDI_ERROR_INVALID_VALUE, "options->arith");
    tridi_solve_options_init(&o);
    o.verdict = (tridi_verdict)2;
    tu_expect("options verdict", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, hi, t, &o, &plan),
              TRIDI_ERROR_INVALID_VALUE, "options->verdict");
    tridi_solve_options_init(&o);
    o.memory = (tridi_memory)5;
    tu_expect("options memory", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, hi, t, &o, &plan),
              TRIDI_ERROR_INVALID_VALUE, "options->memory");
    tridi_solve_options_init(&o);
    o.stream = &o;
    tu_expect("options stream on a host plan", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, hi, t, &o, &plan),
              TRIDI_ERROR_INVALID_VALUE, "options->stream");
    if (!gpu) {
        tridi_solve_options_init(&o);
        o.memory = TRIDI_MEMORY_DEVICE;
        tu_expect("device plan on the CPU", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, hi, t, &o, &plan),
                  TRIDI_ERROR_UNSUPPORTED, "CUDA backend");
    }
    if (plan)
        FAIL("a refused plan_create left *plan = %p", (void *)plan);

    tu_expect("plan_create", tridi_plan_create(ctx, &g, TRIDI_AXIS_Y, lo, hi, t, NULL, &plan), TRIDI_SUCCESS, NULL);
    tu_system s;
    if (tu_system_alloc(&s, &g, t[0], t[1], t[2], t[3], t[4], rng)) {
        FAIL("allocation");
        return;
    }
    tridi_arrays a = s.a;
    a.upper_type = TRIDI_FLOAT32;
    tu_expect("arrays of another type", tridi_plan_solve(plan, &a), TRIDI_ERROR_INVALID_VALUE, "arrays->upper_type");
    a = s.a;
    a.x = NULL;
    tu_expect("NULL x", tridi_plan_solve(plan, &a), TRIDI_ERROR_NULL_POINTER, "arrays->x");
    a = s.a;
    a.x = (void *)s.a.lower;
    tu_expect("x over lower", tridi_plan_solve(plan, &a), TRIDI_ERROR_ALIASING, "arrays->lower");
    tu_expect("NULL arrays", tridi_plan_solve(plan, NULL), TRIDI_ERROR_NULL_POINTER, "'arrays'");
    if (tu_check_unchanged("refused solves", &s))
        FAIL("a refused plan solve wrote x");
    tu_expect("plan_status of a host plan", tridi_plan_status(plan), TRIDI_SUCCESS, NULL);
    tu_expect("plan_destroy", tridi_plan_destroy(plan), TRIDI_SUCCESS, NULL);
    /* The handle is dead: refused without reading the freed plan (valgrind: no invalid read). */
    tu_expect("solve on a destroyed plan", tridi_plan_solve(plan, &s.a), TRIDI_ERROR_INVALID_HANDLE, "not a live");
    tu_expect("status of a destroyed plan", tridi_plan_status(plan), TRIDI_ERROR_INVALID_HANDLE, "not a live");
    tu_expect("destroy twice", tridi_plan_destroy(plan), TRIDI_ERROR_INVALID_HANDLE, "not a live");
    tu_expect("solve on a NULL plan", tridi_plan_solve(NULL, &s.a), TRIDI_ERROR_INVALID_HANDLE, "'plan' is NULL");
    tu_expect("destroy NULL", tridi_plan_destroy(NULL), TRIDI_SUCCESS, NULL);

    /* An empty box: a plan whose solves change nothing. */
    int64_t ehi[3] = {8, 0, 5};
    tu_expect("plan_create empty box", tridi_plan_create(ctx, &g, TRIDI_AXIS_X, lo, ehi, t, NULL, &plan),
              TRIDI_SUCCESS, NULL);
    tu_expect("solve on an empty box", tridi_plan_solve(plan, &s.a), TRIDI_SUCCESS, NULL);
    if (tu_check_unchanged("empty box", &s))
        FAIL("an empty box's solve wrote x");
    tridi_plan_destroy(plan);

    /* A plan destroyed right after an upload of its arrays was queued, and one destroyed with live siblings. */
    tridi_plan p1, p2;
    tu_expect("plan 1", tridi_plan_create(ctx, &g, TRIDI_AXIS_Z, lo, hi, t, NULL, &p1), TRIDI_SUCCESS, NULL);
    tu_expect("plan 2", tridi_plan_create(ctx, &g, TRIDI_AXIS_Z, lo, hi, t, NULL, &p2), TRIDI_SUCCESS, NULL);
    tu_expect("tridi_destroy with live plans", tridi_destroy(ctx), TRIDI_ERROR_INVALID_VALUE, "2 solve plans");
    tu_expect("upload", tridi_upload_async(ctx, &g, TRIDI_AXIS_Z, lo, hi, TRIDI_ROLE_DIAG, s.a.diag, t[1]),
              TRIDI_SUCCESS, NULL);
    tu_expect("destroy with an upload in flight", tridi_plan_destroy(p1), TRIDI_SUCCESS, NULL);
    tu_expect("the sibling still solves", tridi_plan_solve(p2, &s.a), TRIDI_SUCCESS, NULL);
    tu_expect("destroy the sibling", tridi_plan_destroy(p2), TRIDI_SUCCESS, NULL);
    tu_system_free(&s);
}

/* A random 3D geometry for lines along axis (random_geometry) and a random system of types t on it.
 * Returns nonzero when out of memory. */
static int random_system(uint64_t *rng, int axis, int64_t nmax, const tridi_dtype t[5], tridi_grid *g, int64_t lo[3],
                         int64_t hi[3], tu_system *s)
{
    random_geometry(rng, 3, axis, nmax, g, lo, hi);
    return tu_system_alloc(s, g, t[0], t[1], t[2], t[3], t[4], rng);
}

/* s's arrays copied to the device (d) and their device pointers (da); a failure is counted, named by what. */
static int device_copy(tridi_context ctx, tu_system *s, tu_dev_set *d, tridi_arrays *da, const char *what)
{
    if (tu_dev_upload(ctx, s, d)) {
        FAIL("%s: upload", what);
        return 1;
    }
    *da = tu_dev_arrays(s, d);
    return 0;
}

/* Device plans destroyed with their solves still queued: the destroy waits, the answers land. */
static void destroy_in_flight(uint64_t *rng, tridi_context ctx)
{
    tridi_grid g;
    int64_t lo[3], hi[3];
    const tridi_dtype *t = combos[2];
    tu_system s;
    if (random_system(rng, 2, 120, t, &g, lo, hi, &s))
        return;
    void *xref = reference_x(&s, &g, TRIDI_AXIS_Z, lo, hi, t[4]);
    tu_dev_set d;
    tridi_arrays da;
    if (device_copy(ctx, &s, &d, &da, "destroy in flight")) {
        free(xref);
        tu_system_free(&s);
        return;
    }
    const tridi_solve_options o = place_options(device_deferred);
    for (int rep = 0; rep < 20; ++rep) {
        tridi_plan plan;
        tridi_status st = tridi_plan_create(ctx, &g, TRIDI_AXIS_Z, lo, hi, t, &o, &plan);
        if (!st)
            st = tridi_plan_solve(plan, &da);
        if (!st)
            st = tridi_plan_destroy(plan);
        if (st) {
            FAIL("destroy in flight, rep %d: %s", rep, tridi_error_message());
            break;
        }
    }
    tridi_status st = tridi_synchronize(ctx);
    if (!st)
        st = tridi_copy_to_host(ctx, s.a.x, d.p[4], d.bytes[4]);
    if (st)
        FAIL("destroy in flight: %s", tridi_error_message());
    else if (tu_check("destroy in flight", &s, xref, lo, hi, TRIDI_AXIS_Z, tu_tolerance(t[4])))
        FAIL("destroy in flight: answers");
    tu_dev_free(ctx, &d);
    free(xref);
    tu_system_free(&s);
}

/* A deferred failure whose inputs are repaired before the verdict is asked for: the status still names the
 * failing line (and says its cell can no longer be known), and that line of x is untouched. */
static void deferred_changed_inputs(uint64_t *rng, tridi_context ctx)
{
    tridi_grid g;
    int64_t lo[3], hi[3];
    const tridi_dtype *t = combos[1];
    tu_system s;
    if (random_system(rng, 1, 60, t, &g, lo, hi, &s))
        return;
    const int64_t nlines = count_lines(1, lo, hi), bad = tu_randint(rng, 0, nlines - 1);
    const int64_t cell = line_cell(&g, 1, lo, hi, bad, 0);
    const double good = tu_get(s.a.diag, t[1], cell);
    tu_set((void *)s.a.diag, t[1], cell, 0.0);
    tu_set((void *)s.a.upper, t[2], cell, 0.0); /* a zero row: FAST arithmetic fails there too */
    tu_dev_set d;
    tridi_arrays da;
    if (device_copy(ctx, &s, &d, &da, "changed inputs")) {
        tu_system_free(&s);
        return;
    }
    const tridi_solve_options o = place_options(device_deferred);
    tridi_plan plan;
    tridi_status st = tridi_plan_create(ctx, &g, TRIDI_AXIS_Y, lo, hi, t, &o, &plan);
    if (!st)
        st = tridi_plan_solve(plan, &da);
    if (st) {
        FAIL("changed inputs: %s", tridi_error_message());
    } else {
        tu_set((void *)s.a.diag, t[1], cell, good);
        st = tridi_copy_to_device(ctx, (char *)d.p[1] + cell * 8, (const char *)s.a.diag + cell * 8, 8);
        tridi_status v = tridi_plan_status(plan);
        char needle[64];
        snprintf(needle, sizeof needle, "number %lld,", (long long)bad);
        if (st || v != TRIDI_ERROR_NONFINITE || !strstr(tridi_error_message(), needle) ||
            !strstr(tridi_error_message(), "inputs changed"))
            FAIL("changed inputs: status %s: %s", tridi_status_name(v), tridi_error_message());
        else
            printf("ok changed inputs: %s\n", tridi_error_message());
        tridi_copy_to_host(ctx, s.a.x, d.p[4], d.bytes[4]);
        for (int64_t m = 0; m < hi[1] - lo[1] + 1; ++m) {
            const int64_t c = line_cell(&g, 1, lo, hi, bad, m);
            if (memcmp((char *)s.a.x + c * 8, (char *)s.x_before + c * 8, 8)) {
                FAIL("changed inputs: the failing line was written at unknown %lld", (long long)m);
                break;
            }
        }
        tridi_plan_destroy(plan);
    }
    tu_dev_free(ctx, &d);
    tu_system_free(&s);
}

int main(void)
{
    uint64_t rng = tu_seed("test_plan");
    tridi_context ctx;
    tridi_status st = tridi_create(&ctx, NULL);
    if (st == TRIDI_ERROR_NO_DEVICE) {
        printf("no usable GPU: skipped (%s)\n", tridi_error_message());
        return 77;
    }
    if (st) {
        printf("tridi_create: %s\n", tridi_error_message());
        return 1;
    }
    tridi_backend be;
    tridi_get_backend(ctx, &be);
    const int gpu = be == TRIDI_BACKEND_CUDA;
    printf("backend %s\n", tridi_backend_name(be));

    where places[3] = {{TRIDI_MEMORY_HOST, TRIDI_VERDICT_SYNC},
                       {TRIDI_MEMORY_DEVICE, TRIDI_VERDICT_SYNC},
                       {TRIDI_MEMORY_DEVICE, TRIDI_VERDICT_DEFERRED}};
    const int nplaces = gpu ? 3 : 1;
    for (int w = 0; w < nplaces; ++w)
        for (int ndim = 2; ndim <= 3; ++ndim)
            for (int axis = 0; axis < ndim; ++axis)
                for (int combo = 0; combo < 3; ++combo) {
                    reuse_case(&rng, ctx, ndim, axis, combo, places[w],
                               (axis + combo) % 2 ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES);
                    failure_case(&rng, ctx, ndim, axis, combo, places[w], TRIDI_ON_ERROR_CALL);
                    failure_case(&rng, ctx, ndim, axis, combo, places[w], TRIDI_ON_ERROR_LINES);
                }
    argument_cases(&rng, ctx, gpu);
    if (gpu) {
        destroy_in_flight(&rng, ctx);
        deferred_changed_inputs(&rng, ctx);
    }
    st = tridi_destroy(ctx);
    if (st)
        FAIL("tridi_destroy: %s", tridi_error_message());
    failures += tu_failures;
    printf("%d checks of arguments, %d failures in all\n", tu_checks, failures);
    return failures ? 1 : 0;
}
