/* tridi_host_register / tridi_host_unregister on the backend the environment picks (TRIDI_BACKEND; ctest
 * runs it on the CPU, where registration is validated and recorded but pins nothing, and with
 * TRIDI_BACKEND=cuda, label cuda, skipped with 77 where no GPU is usable): every bad argument with its
 * status and message, then solves on registered, partly registered and unregistered arrays against the
 * reference, uploads of registered arrays, a failing solve leaving x untouched, unregistering, and a context
 * destroyed with ranges still registered. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *slot(tu_system *s, int r)
{
    const void *p[5] = {s->a.lower, s->a.diag, s->a.upper, s->a.rhs, s->a.x};
    return (void *)p[r];
}

static size_t slot_bytes(const tu_system *s, int r)
{
    const tridi_dtype t[5] = {s->a.lower_type, s->a.diag_type, s->a.upper_type, s->a.rhs_type, s->a.x_type};
    return (size_t)s->cells * tu_esize(t[r]);
}

/* Random grid with halos and lower bounds from -3, a box strictly inside or touching the halo. */
static void random_case(uint64_t *rng, int ndim, tridi_grid *g, int64_t lo[3], int64_t hi[3])
{
    g->ndim = ndim;
    for (int a = 0; a < 3; ++a) {
        g->lbound[a] = g->ubound[a] = lo[a] = hi[a] = 1;
    }
    for (int a = 0; a < ndim; ++a) {
        int64_t lb = tu_randint(rng, -3, 2), halo = tu_randint(rng, 0, 2), n = tu_randint(rng, 1, 24);
        g->lbound[a] = lb - halo;
        g->ubound[a] = lb + n - 1 + halo;
        lo[a] = lb + tu_randint(rng, 0, n / 4);
        hi[a] = lb + n - 1 - tu_randint(rng, 0, n / 4);
    }
}

/* Solves (s, axis) and checks against the reference; x is poisoned first. Returns failed checks. */
static int solve_and_check(tridi_context ctx, const char *label, tu_system *s, int axis, const int64_t lo[3],
                           const int64_t hi[3], const void *xref, uint64_t *rng)
{
    tu_poison_x(s, rng);
    tridi_status st = tridi_solve(ctx, &s->grid, (tridi_axis)axis, lo, hi, &s->a);
    tu_checks++;
    if (st) {
        tu_failures++;
        printf("FAILED %s: %s: %s\n", label, tridi_status_name(st), tridi_error_message());
        return 1;
    }
    if (tu_check(label, s, xref, lo, hi, (tridi_axis)axis, tu_tolerance(s->a.x_type))) {
        tu_failures++;
        printf("FAILED %s: wrong answer\n", label);
        return 1;
    }
    return 0;
}

static void bad_arguments(tridi_context ctx, tu_system *s)
{
    int stack_var = 0;
    tu_expect("register NULL ctx", tridi_host_register(NULL, s->a.lower, 16), TRIDI_ERROR_INVALID_HANDLE, "'ctx'");
    tu_expect("register NULL ptr", tridi_host_register(ctx, NULL, 16), TRIDI_ERROR_NULL_POINTER, "'ptr' is NULL");
    tu_expect("register 0 bytes", tridi_host_register(ctx, s->a.lower, 0), TRIDI_ERROR_INVALID_VALUE, "bytes = 0");
    tu_expect("register past the address space", tridi_host_register(ctx, (void *)(UINTPTR_MAX - 63), 128),
           TRIDI_ERROR_INVALID_VALUE, "end of the address space");
    tu_expect("register lower", tridi_host_register(ctx, s->a.lower, slot_bytes(s, 0)), TRIDI_SUCCESS, NULL);
    tu_expect("register lower twice", tridi_host_register(ctx, s->a.lower, slot_bytes(s, 0)), TRIDI_ERROR_INVALID_VALUE,
           "already registered");
    tu_expect("register inside lower", tridi_host_register(ctx, (const char *)s->a.lower + 8, 16),
           TRIDI_ERROR_INVALID_VALUE, "overlaps");
    /* Refused before any memory is touched, so a range reaching before the allocation is safe to pass. */
    tu_expect("register around lower", tridi_host_register(ctx, (const char *)s->a.lower - 64, slot_bytes(s, 0) + 128),
           TRIDI_ERROR_INVALID_VALUE, "overlaps");
    tu_expect("unregister NULL ctx", tridi_host_unregister(NULL, s->a.lower), TRIDI_ERROR_INVALID_HANDLE, "'ctx'");
    tu_expect("unregister NULL", tridi_host_unregister(ctx, NULL), TRIDI_ERROR_NULL_POINTER, "'ptr' is NULL");
    tu_expect("unregister inside", tridi_host_unregister(ctx, (const char *)s->a.lower + 8), TRIDI_ERROR_INVALID_VALUE,
           "lies inside the range");
    tu_expect("unregister unknown", tridi_host_unregister(ctx, &stack_var), TRIDI_ERROR_INVALID_VALUE, "not registered");
    tu_expect("unregister lower", tridi_host_unregister(ctx, s->a.lower), TRIDI_SUCCESS, NULL);
    tu_expect("unregister lower again", tridi_host_unregister(ctx, s->a.lower), TRIDI_ERROR_INVALID_VALUE,
           "not registered");
    tu_expect("register lower again", tridi_host_register(ctx, s->a.lower, slot_bytes(s, 0)), TRIDI_SUCCESS, NULL);
    tu_expect("unregister lower at last", tridi_host_unregister(ctx, s->a.lower), TRIDI_SUCCESS, NULL);
}

/* One random system solved with every registration pattern, uploads of registered arrays, and a failing
 * solve on registered arrays. */
static void one_case(tridi_context ctx, uint64_t *rng, int ndim, int axis, int combo)
{
    static const tridi_dtype combos[3][5] = {
        {TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32},
        {TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64},
        {TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32}};
    const tridi_dtype *t = combos[combo];
    tridi_grid g;
    int64_t lo[3], hi[3];
    random_case(rng, ndim, &g, lo, hi);
    tu_system s;
    if (tu_system_alloc(&s, &g, t[0], t[1], t[2], t[3], t[4], rng)) {
        tu_failures++;
        return;
    }
    const size_t xb = slot_bytes(&s, 4);
    void *xref = malloc(xb);
    memcpy(xref, s.a.x, xb);
    tu_reference_solve(&g, (tridi_axis)axis, lo, hi,
                       &(tridi_arrays){s.a.lower, t[0], s.a.diag, t[1], s.a.upper, t[2], s.a.rhs, t[3], xref, t[4]});
    char label[160];
    snprintf(label, sizeof label, "%dD axis %c combo %d box [%lld:%lld,%lld:%lld,%lld:%lld]", ndim, "xyz"[axis], combo,
             (long long)lo[0], (long long)hi[0], (long long)lo[1], (long long)hi[1], (long long)lo[2],
             (long long)hi[2]);
    char what[240];

    /* Every subset of the five arrays registered (32 patterns), plus the first half of every array. */
    for (int mask = 0; mask <= 32; ++mask) {
        for (int r = 0; r < 5; ++r) {
            const size_t bytes = mask == 32 ? slot_bytes(&s, r) / 2 : slot_bytes(&s, r);
            if ((mask == 32 || (mask >> r & 1)) && tridi_host_register(ctx, slot(&s, r), bytes)) {
                tu_failures++;
                printf("FAILED %s: register %d: %s\n", label, r, tridi_error_message());
            }
        }
        snprintf(what, sizeof what, "%s, registered %s0x%x", label, mask == 32 ? "first halves " : "", mask & 31);
        solve_and_check(ctx, what, &s, axis, lo, hi, xref, rng);
        if (mask == 31) { /* all registered: uploads of two inputs ahead, then an in-place solve */
            tu_poison_x(&s, rng);
            tridi_status st = tridi_upload_async(ctx, &g, (tridi_axis)axis, lo, hi, TRIDI_ROLE_DIAG, s.a.diag, t[1]);
            if (!st)
                st = tridi_upload_async(ctx, &g, (tridi_axis)axis, lo, hi, TRIDI_ROLE_LOWER, s.a.lower, t[0]);
            if (!st)
                st = tridi_solve(ctx, &g, (tridi_axis)axis, lo, hi, &s.a);
            snprintf(what, sizeof what, "%s, registered uploads", label);
            tu_checks++;
            if (st || tu_check(what, &s, xref, lo, hi, (tridi_axis)axis, tu_tolerance(t[4]))) {
                tu_failures++;
                printf("FAILED %s: %s\n", what, st ? tridi_error_message() : "wrong answer");
            }
            if (t[3] == t[4]) {
                const size_t rb = slot_bytes(&s, 3);
                void *rhs_keep = malloc(rb);
                memcpy(rhs_keep, s.a.rhs, rb);
                tridi_arrays ip = s.a;
                ip.x = (void *)ip.rhs;
                st = tridi_solve(ctx, &g, (tridi_axis)axis, lo, hi, &ip);
                tu_system s2 = s;
                s2.a.x = (void *)s.a.rhs;
                s2.x_before = rhs_keep;
                snprintf(what, sizeof what, "%s, registered in place", label);
                tu_checks++;
                if (st || tu_check(what, &s2, xref, lo, hi, (tridi_axis)axis, tu_tolerance(t[4]))) {
                    tu_failures++;
                    printf("FAILED %s: %s\n", what, st ? tridi_error_message() : "wrong answer");
                }
                memcpy((void *)s.a.rhs, rhs_keep, rb);
                free(rhs_keep);
            }
            /* A zero pivot: the failure is reported, its line keeps every old value and every other line
             * is answered (ON_ERROR_LINES, the default). */
            int64_t c[3] = {lo[0], lo[1], lo[2]};
            c[axis] = hi[axis];
            const int64_t o = tu_index(&g, c[0], c[1], c[2]);
            const double d_keep = tu_get(s.a.diag, t[1], o), l_keep = tu_get(s.a.lower, t[0], o);
            tu_set((void *)s.a.diag, t[1], o, 0.0);
            tu_set((void *)s.a.lower, t[0], o, 0.0);
            tu_poison_x(&s, rng);
            st = tridi_solve(ctx, &g, (tridi_axis)axis, lo, hi, &s.a);
            snprintf(what, sizeof what, "%s, registered zero pivot", label);
            tu_checks++;
            const int64_t failing = tu_line_of(&g, lo, hi, (tridi_axis)axis, c);
            if (st != TRIDI_ERROR_ZERO_PIVOT ||
                tu_check_lines(what, &s, lo, hi, (tridi_axis)axis, tu_tolerance(t[4]), &failing, 1)) {
                tu_failures++;
                printf("FAILED %s: got %s (%s)\n", what, tridi_status_name(st), tridi_error_message());
            }
            tu_set((void *)s.a.diag, t[1], o, d_keep);
            tu_set((void *)s.a.lower, t[0], o, l_keep);
        }
        for (int r = 0; r < 5; ++r)
            if ((mask == 32 || (mask >> r & 1)) && tridi_host_unregister(ctx, slot(&s, r))) {
                tu_failures++;
                printf("FAILED %s: unregister %d: %s\n", label, r, tridi_error_message());
            }
    }
    snprintf(what, sizeof what, "%s, after unregistering", label);
    solve_and_check(ctx, what, &s, axis, lo, hi, xref, rng);
    free(xref);
    tu_system_free(&s);
}

int main(void)
{
    uint64_t rng = tu_seed("test_register");
    tridi_context ctx;
    if (tridi_create(&ctx, NULL) == TRIDI_ERROR_NO_DEVICE) { /* TRIDI_BACKEND=cuda on a machine without a GPU */
        printf("skipped: %s\n", tridi_error_message());
        return 77;
    }
    tridi_backend backend;
    tridi_get_backend(ctx, &backend);
    printf("backend %s\n", tridi_backend_name(backend));

    tridi_grid g = {3, {0, 0, 0}, {9, 7, 5}};
    tu_system s;
    tu_system_alloc(&s, &g, TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, &rng);
    bad_arguments(ctx, &s);

    for (int ndim = 2; ndim <= 3; ++ndim)
        for (int axis = 0; axis < ndim; ++axis)
            for (int combo = 0; combo < 3; ++combo)
                one_case(ctx, &rng, ndim, axis, combo);

    /* Destroyed with ranges registered: destroy unregisters them, so a new context may register them. */
    for (int r = 0; r < 5; ++r)
        tridi_host_register(ctx, slot(&s, r), slot_bytes(&s, r));
    tu_expect("destroy with registered ranges", tridi_destroy(ctx), TRIDI_SUCCESS, NULL);
    tu_expect("create again", tridi_create(&ctx, NULL), TRIDI_SUCCESS, NULL);
    tu_expect("register after destroy", tridi_host_register(ctx, s.a.diag, slot_bytes(&s, 1)), TRIDI_SUCCESS, NULL);
    tu_expect("destroy", tridi_destroy(ctx), TRIDI_SUCCESS, NULL);
    tu_system_free(&s);
    printf("%d checks, %d failed\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
