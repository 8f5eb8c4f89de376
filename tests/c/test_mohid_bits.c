/* MOHID's arithmetic bit for bit on every CPU kernel (docs/decisions/040): in TRIDI_ARITH_MOHID and
 * TRIDI_ARITH_MOHID_NEWTYPE, every answer of a CPU solve, and every cell outside the box, is bitwise what
 * MOHID's routines give (tests/common/mohid_reference.c, compiled without fused multiply-adds), for the
 * three type combinations and the three axes, under ON_ERROR_LINES and _CALL, on 1 and 2 threads.
 *
 * Which kernels run is the build's and the environment's choice, printed at the start: the library's
 * target clones pick the host's ISA (test_mohid_bits), the copies of the library compiled for x86-64-v3
 * and for baseline x86-64 run those (test_mohid_bits_v3, _baseline: src/CMakeLists.txt), TRIDI_CPU_GENERIC
 * =1 replaces the AVX-512 x kernel by the transposed generic one. Parts:
 *  1. every case on random MOHID-like systems (diagonally dominant, rows scaled over 10^-6..10^6);
 *  2. the careful path: a block with one failing line (a NaN rhs), whose other lines it solves; and the
 *     pivoting pass (src/pivot.c), which answers a box holding one line it must pivot;
 *  3. near ties: 3-unknown lines on which a reciprocal or a fused multiply-add rounds differently from
 *     MOHID's divisions (mixed: the last answer steered onto a float rounding boundary through the double
 *     diag of the first unknown; double: drawn). The search must find them;
 *  4. a random sweep of --cells=N cells (default below) per combination, arithmetic and axis.
 * Seeds from TRIDI_SEED or the clock, printed. */
#include "mohid_reference.h"
#include "testutil.h"
#include "tridi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_CELLS 100000

typedef struct combo {
    const char *name;
    tridi_dtype t[5]; /* lower, diag, upper, rhs, x */
} combo;

static const combo COMBOS[3] = {{"f32", {TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32}},
                                {"f64", {TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64}},
                                {"mixed", {TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32}}};
static const tridi_arith ARITHS[2] = {TRIDI_ARITH_MOHID, TRIDI_ARITH_MOHID_NEWTYPE};
static const char *arith_name(tridi_arith a) { return a == TRIDI_ARITH_MOHID ? "MOHID" : "NEWTYPE"; }

static tridi_context CTX[2]; /* 1 and 2 threads */
static tridi_context CTXP;   /* 2 threads, TRIDI_PIVOT_FALLBACK: src/pivot.c answers the box */
static int64_t g_bad_cases;

/* What runs, as far as this binary can tell. */
static void print_kernels(void)
{
    const char *g = getenv("TRIDI_CPU_GENERIC");
    const int generic = g && *g && strcmp(g, "0") != 0;
#if defined(TRIDI_TEST_ISA)
    printf("kernels: the library compiled for %s without target clones; x sweeps through the generic kernels\n",
           TRIDI_TEST_ISA);
    (void)generic;
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
    const int v4 = __builtin_cpu_supports("x86-64-v4"), v3 = __builtin_cpu_supports("x86-64-v3");
    const int x512 = !generic && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                     __builtin_cpu_supports("avx512dq");
    printf("kernels: the x86-64-%s target clone for y/z sweeps; x sweeps through %s\n",
           v4 ? "v4" : v3 ? "v3" : "default", x512 ? "the AVX-512 x kernel" : "the generic transposed kernels");
#else
    printf("kernels: no target clones (sanitizer or non-x86 build); x sweeps through the generic kernels\n");
    (void)generic;
#endif
}

/* A MOHID-like system: off-diagonals negative, diag positive and dominant (by a margin from 1e-3 to 2 of
 * the off-diagonal sum), every row scaled by 10^U(-6,6), rhs of varied size. Values in their types. */
static void fill_mohid(tu_system *s, uint64_t *rng)
{
    const tridi_arrays *a = &s->a;
    for (int64_t i = 0; i < s->cells; ++i) {
        const double sc = pow(10.0, 12.0 * tu_uniform(rng) - 6.0);
        const double d = -sc * tu_uniform(rng), f = -sc * tu_uniform(rng);
        const double margin = pow(10.0, 3.3 * tu_uniform(rng) - 3.0);
        tu_set((void *)a->lower, a->lower_type, i, d);
        tu_set((void *)a->upper, a->upper_type, i, f);
        tu_set((void *)a->diag, a->diag_type, i, (fabs(d) + fabs(f)) * (1.0 + margin) + 1e-3 * sc);
        tu_set((void *)a->rhs, a->rhs_type, i, sc * (2.0 * tu_uniform(rng) - 1.0) * pow(10.0, 4.0 * tu_uniform(rng) - 2.0));
    }
}

/* A grid of random extents (n along axis, 2D or 3D) with halos of 0..2 cells around the box. */
static void random_geometry(uint64_t *rng, tridi_axis axis, int64_t n, int64_t cells, tridi_grid *g, int64_t lo[3],
                            int64_t hi[3])
{
    const int nd = axis == TRIDI_AXIS_Z || tu_randint(rng, 0, 2) ? 3 : 2;
    int64_t ext[3] = {1, 1, 1};
    ext[axis] = n;
    int64_t lines = cells / n > 1 ? cells / n : 1;
    const int o1 = axis == TRIDI_AXIS_X ? 1 : 0, o2 = axis == TRIDI_AXIS_Z ? 1 : 2;
    if (nd == 3) {
        ext[o1] = tu_randint(rng, 1, lines > 1 ? (int64_t)sqrt((double)lines) * 2 : 1);
        ext[o2] = lines / ext[o1] > 1 ? lines / ext[o1] : 1;
    } else {
        ext[o1] = lines;
    }
    g->ndim = nd;
    for (int d = 0; d < 3; ++d) {
        const int64_t h0 = d < nd ? tu_randint(rng, 0, 2) : 0, h1 = d < nd ? tu_randint(rng, 0, 2) : 0;
        g->lbound[d] = d < nd ? tu_randint(rng, -2, 2) : 1;
        g->ubound[d] = g->lbound[d] + h0 + ext[d] + h1 - 1;
        lo[d] = g->lbound[d] + h0;
        hi[d] = lo[d] + ext[d] - 1;
    }
}

/* One solve through a plan of the given contract. */
static tridi_status plan_solve(tridi_context ctx, tu_system *s, tridi_axis axis, const int64_t lo[3],
                               const int64_t hi[3], tridi_arith arith, tridi_on_error oe)
{
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.arith = arith;
    o.on_error = oe;
    const tridi_dtype t[5] = {s->a.lower_type, s->a.diag_type, s->a.upper_type, s->a.rhs_type, s->a.x_type};
    tridi_plan plan;
    tridi_status st = tridi_plan_create(ctx, &s->grid, axis, lo, hi, t, &o, &plan);
    if (st) {
        printf("FAILED plan_create: %s\n", tridi_error_message());
        return st;
    }
    st = tridi_plan_solve(plan, &s->a);
    tridi_plan_destroy(plan);
    return st;
}

/* x bitwise equal to want over the whole grid; prints the first differing cells. */
static int64_t compare(const char *label, const tu_system *s, const void *want)
{
    const size_t es = tu_esize(s->a.x_type);
    int64_t bad = 0;
    for (int64_t i = 0; i < s->cells; ++i)
        if (memcmp((const char *)s->a.x + (size_t)i * es, (const char *)want + (size_t)i * es, es)) {
            if (bad++ < 4)
                printf("  %s: cell %lld: got %a, MOHID %a\n", label, (long long)i, tu_get(s->a.x, s->a.x_type, i),
                       tu_get(want, s->a.x_type, i));
        }
    if (bad) {
        printf("FAILED %s: %lld of %lld cells differ from MOHID's\n", label, (long long)bad, (long long)s->cells);
        ++g_bad_cases;
    }
    return bad;
}

/* MOHID's answers for s into a copy of x_before (the cells outside the box keep it). */
static void *reference(const tu_system *s, tridi_axis axis, const int64_t lo[3], const int64_t hi[3], int newtype)
{
    const size_t bytes = (size_t)s->cells * tu_esize(s->a.x_type);
    void *want = malloc(bytes);
    memcpy(want, s->x_before, bytes);
    tridi_arrays r = s->a;
    r.x = want;
    mohid_solve(&s->grid, axis, lo, hi, &r, newtype);
    return want;
}

/* Parts 1 and 2: one random case. special 1: a line's rhs gets a NaN at a random unknown (the careful
 * path); 2: a line's first diag a tiny pivot, solved under TRIDI_PIVOT_FALLBACK, so that the pivoting
 * pass answers the box: that line by partial pivoting (not compared), every other by MOHID's recurrence. */
static void one_case(uint64_t *rng, const combo *c, tridi_arith arith, tridi_axis axis, int threads,
                     tridi_on_error oe, int special, int64_t cells, int64_t *ncells)
{
    tu_system s;
    tridi_grid g;
    int64_t lo[3], hi[3];
    random_geometry(rng, axis, tu_randint(rng, 2, 48), cells, &g, lo, hi);
    if (tu_system_alloc(&s, &g, c->t[0], c->t[1], c->t[2], c->t[3], c->t[4], rng)) {
        printf("FAILED allocation\n");
        ++g_bad_cases;
        return;
    }
    fill_mohid(&s, rng);
    int64_t nl = 1, failing = -1;
    for (int d = 0; d < g.ndim; ++d)
        if (d != (int)axis)
            nl *= hi[d] - lo[d] + 1;
    const int64_t n = hi[axis] - lo[axis] + 1;
    const int nan_line = special == 1;
    if (special) {
        failing = tu_randint(rng, 0, nl - 1);
        int64_t cc[3];
        if (nan_line) {
            tu_set((void *)s.a.rhs, s.a.rhs_type,
                   tu_line_cell(&g, lo, hi, axis, failing, tu_randint(rng, 0, n - 1), cc), NAN);
        } else {
            const int64_t at = tu_line_cell(&g, lo, hi, axis, failing, 0, cc);
            tu_set((void *)s.a.diag, s.a.diag_type, at, 1e-9 * tu_get(s.a.diag, s.a.diag_type, at));
        }
    }
    tu_poison_x(&s, rng);
    void *want = reference(&s, axis, lo, hi, arith == TRIDI_ARITH_MOHID_NEWTYPE);
    if (nan_line) { /* LINES: the failing line untouched; CALL: nothing written */
        const size_t es = tu_esize(s.a.x_type);
        for (int64_t m = 0; m < n; ++m) {
            int64_t cc[3];
            const int64_t at = tu_line_cell(&g, lo, hi, axis, failing, m, cc);
            memcpy((char *)want + (size_t)at * es, (const char *)s.x_before + (size_t)at * es, es);
        }
        if (oe == TRIDI_ON_ERROR_CALL)
            memcpy(want, s.x_before, (size_t)s.cells * es);
    }
    const tridi_status st = plan_solve(special == 2 ? CTXP : CTX[threads - 1], &s, axis, lo, hi, arith, oe);
    if (special == 2) { /* the flagged line's answers are partial pivoting's */
        const size_t es = tu_esize(s.a.x_type);
        for (int64_t m = 0; m < n; ++m) {
            int64_t cc[3];
            const int64_t at = tu_line_cell(&g, lo, hi, axis, failing, m, cc);
            memcpy((char *)want + (size_t)at * es, (const char *)s.a.x + (size_t)at * es, es);
        }
    }
    char label[160];
    snprintf(label, sizeof label, "%s %s axis %c, %d thread(s), %s, %lld lines of %lld%s", c->name, arith_name(arith),
             "xyz"[axis], threads, oe == TRIDI_ON_ERROR_LINES ? "LINES" : "CALL", (long long)nl, (long long)n,
             special == 1 ? ", one NaN line" : special == 2 ? ", one line for partial pivoting" : "");
    const tridi_status expect = nan_line ? TRIDI_ERROR_NONFINITE : TRIDI_SUCCESS;
    if (st != expect) {
        printf("FAILED %s: status %s, expected %s (%s)\n", label, tridi_status_name(st), tridi_status_name(expect),
               tridi_error_message());
        ++g_bad_cases;
    }
    compare(label, &s, want);
    *ncells += nl * n;
    free(want);
    tu_system_free(&s);
}

/* ---- Part 3: near ties ---------------------------------------------------------------------------- */

enum { FORM_DIV, FORM_RCP, FORM_FMA };

/* A 3-unknown line in doubles (the values its arrays hold) by one form of the recurrence: MOHID's divisions,
 * the reciprocal the CPU kernels used before, or fused multiply-adds as GCC contracted them on x86-64-v3
 * and v4; aux_f32: the NewType float pivot. Answers rounded to float when xf32. */
static void form_line(const double *d, const double *e, const double *f, const double *r, int form, int aux_f32,
                      int xf32, double *x)
{
    double W[3], G[3];
    W[0] = -f[0] / e[0];
    G[0] = r[0] / e[0];
    for (int m = 1; m < 3; ++m) {
        double aux = form == FORM_FMA ? fma(d[m], W[m - 1], e[m]) : e[m] + d[m] * W[m - 1];
        if (aux_f32)
            aux = (double)(float)aux;
        const double num = form == FORM_FMA ? fma(-d[m], G[m - 1], r[m]) : r[m] - d[m] * G[m - 1];
        if (m == 2) {
            W[m] = 0.0;
            G[m] = num / aux;
        } else if (form == FORM_RCP) {
            const double inv = 1.0 / aux;
            W[m] = aux_f32 ? (double)(-(float)f[m] * (float)inv) : -f[m] * inv;
            G[m] = num * inv;
        } else {
            W[m] = aux_f32 ? (double)(-((float)f[m] / (float)aux)) : -f[m] / aux;
            G[m] = num / aux;
        }
    }
    x[2] = G[2];
    if (xf32)
        x[2] = (double)(float)x[2];
    for (int m = 1; m >= 0; --m) {
        x[m] = form == FORM_FMA ? fma(W[m], x[m + 1], G[m]) : W[m] * x[m + 1] + G[m];
        if (xf32)
            x[m] = (double)(float)x[m];
    }
}

/* Values of a line as stored in the combination's types. */
static double as_type(tridi_dtype t, double v) { return t == TRIDI_FLOAT64 ? v : (double)(float)v; }

/* Draws a line of combination c; for the mixed one, steers the last answer onto a float rounding boundary
 * by the secant method on the first unknown's double diag (every answer depends on G(first) = Ti/E). */
static void draw_line(uint64_t *rng, const combo *c, int aux_f32, double *d, double *e, double *f, double *r)
{
    for (int m = 0; m < 3; ++m) {
        d[m] = m ? as_type(c->t[0], -tu_uniform(rng)) : 0.0;
        f[m] = m < 2 ? as_type(c->t[2], -tu_uniform(rng)) : 0.0;
        e[m] = as_type(c->t[1], fabs(d[m]) + fabs(f[m]) + 0.01 + tu_uniform(rng));
        r[m] = as_type(c->t[3], 2.0 * tu_uniform(rng) - 1.0);
    }
    if (c->t[1] != TRIDI_FLOAT64 || c->t[4] != TRIDI_FLOAT32)
        return;
    double x[3];
    double W0, G2[2], E0[2] = {e[0], e[0] * (1.0 + 1e-9)};
    form_line(d, e, f, r, FORM_DIV, aux_f32, 0, x);
    const float xf = (float)x[2];
    const double t = 0.5 * ((double)xf + (double)nextafterf(xf, x[2] > (double)xf ? INFINITY : -INFINITY));
    for (int k = 0; k < 2; ++k) {
        e[0] = E0[k];
        form_line(d, e, f, r, FORM_DIV, aux_f32, 0, x);
        G2[k] = x[2];
    }
    for (int it = 0; it < 8 && G2[1] != G2[0] && G2[1] != t; ++it) {
        W0 = E0[1] - (G2[1] - t) * (E0[1] - E0[0]) / (G2[1] - G2[0]);
        E0[0] = E0[1];
        G2[0] = G2[1];
        E0[1] = W0;
        e[0] = W0;
        form_line(d, e, f, r, FORM_DIV, aux_f32, 0, x);
        G2[1] = x[2];
    }
    e[0] = E0[1];
}

/* Finds up to `want` lines of c on which MOHID's form (arith) and another form round differently, lays
 * them along each axis and checks the solve. Returns the number found. */
static int64_t near_ties(uint64_t *rng, const combo *c, tridi_arith arith, int64_t want)
{
    const int aux_f32 = arith == TRIDI_ARITH_MOHID_NEWTYPE && c->t[2] == TRIDI_FLOAT32;
    const int xf32 = c->t[4] == TRIDI_FLOAT32;
    double *L = malloc(sizeof(double) * 12 * (size_t)want);
    int64_t found = 0, draws = 0;
    while (found < want && draws < 400 * want) {
        double d[3], e[3], f[3], r[3], x[3], y[3];
        draw_line(rng, c, aux_f32, d, e, f, r);
        ++draws;
        form_line(d, e, f, r, FORM_DIV, aux_f32, xf32, x);
        int differs = 0;
        for (int form = FORM_RCP; form <= FORM_FMA; ++form) {
            form_line(d, e, f, r, form, aux_f32, xf32, y);
            differs |= memcmp(x, y, sizeof x) != 0;
        }
        if (aux_f32) { /* NewType: also where the float pivot itself changes the answers */
            form_line(d, e, f, r, FORM_DIV, 0, xf32, y);
            differs |= memcmp(x, y, sizeof x) != 0;
        }
        if (!differs)
            continue;
        double *o = L + 12 * found++;
        memcpy(o, d, sizeof d);
        memcpy(o + 3, e, sizeof e);
        memcpy(o + 6, f, sizeof f);
        memcpy(o + 9, r, sizeof r);
    }
    printf("near ties %s %s: %lld lines of %lld drawn\n", c->name, arith_name(arith), (long long)found,
           (long long)draws);
    for (int axis = 0; axis < 3 && found; ++axis) {
        /* lines along axis, 3 unknowns each; the others laid over a 2D plane (z: 3D) */
        tridi_grid g = {3, {1, 1, 1}, {1, 1, 1}};
        const int o1 = axis == 0 ? 1 : 0, o2 = axis == 2 ? 1 : 2;
        const int64_t e1 = (int64_t)ceil(sqrt((double)found)), e2 = (found + e1 - 1) / e1;
        g.ubound[axis] = 3;
        g.ubound[o1] = e1;
        g.ubound[o2] = e2;
        const int64_t lo[3] = {1, 1, 1}, hi[3] = {g.ubound[0], g.ubound[1], g.ubound[2]};
        tu_system s;
        if (tu_system_alloc(&s, &g, c->t[0], c->t[1], c->t[2], c->t[3], c->t[4], rng)) {
            ++g_bad_cases;
            break;
        }
        for (int64_t l = 0; l < e1 * e2; ++l) { /* lines past `found` repeat the first */
            const double *o = L + 12 * (l < found ? l : 0);
            for (int m = 0; m < 3; ++m) {
                int64_t cc[3];
                const int64_t at = tu_line_cell(&g, lo, hi, (tridi_axis)axis, l, m, cc);
                tu_set((void *)s.a.lower, s.a.lower_type, at, o[m]);
                tu_set((void *)s.a.diag, s.a.diag_type, at, o[3 + m]);
                tu_set((void *)s.a.upper, s.a.upper_type, at, o[6 + m]);
                tu_set((void *)s.a.rhs, s.a.rhs_type, at, o[9 + m]);
            }
        }
        tu_poison_x(&s, rng);
        void *want_x = reference(&s, (tridi_axis)axis, lo, hi, arith == TRIDI_ARITH_MOHID_NEWTYPE);
        /* the search's own form is MOHID's: the reference agrees on every line */
        int64_t self = 0;
        for (int64_t l = 0; l < found; ++l) {
            double x[3];
            const double *o = L + 12 * l;
            form_line(o, o + 3, o + 6, o + 9, FORM_DIV, aux_f32, xf32, x);
            for (int m = 0; m < 3; ++m) {
                int64_t cc[3];
            {
                const double ref = tu_get(want_x, s.a.x_type, tu_line_cell(&g, lo, hi, (tridi_axis)axis, l, m, cc));
                if (ref != x[m] && self < 3)
                    printf("  line %lld unknown %d: form %a reference %a (e %a %a %a)\n", (long long)l, m, x[m], ref, o[3], o[4], o[5]);
                self += ref != x[m];
            }
            }
        }
        tu_expect_true("near ties: the search's MOHID form agrees with the reference", self == 0);
        for (int threads = 1; threads <= 2; ++threads) {
            char label[128];
            snprintf(label, sizeof label, "near ties %s %s axis %c, %d thread(s)", c->name, arith_name(arith),
                     "xyz"[axis], threads);
            memcpy(s.a.x, s.x_before, (size_t)s.cells * tu_esize(s.a.x_type));
            const tridi_status st = plan_solve(CTX[threads - 1], &s, (tridi_axis)axis, lo, hi, arith,
                                               TRIDI_ON_ERROR_LINES);
            if (st) {
                printf("FAILED %s: %s\n", label, tridi_error_message());
                ++g_bad_cases;
            }
            compare(label, &s, want_x);
        }
        free(want_x);
        tu_system_free(&s);
    }
    free(L);
    return found;
}

/* ---- Part 4: the sweep ---------------------------------------------------------------------------- */

static void sweep(uint64_t *rng, int64_t cells)
{
    for (int ci = 0; ci < 3; ++ci)
        for (int ai = 0; ai < 2; ++ai)
            for (int axis = 0; axis < 3; ++axis) {
                int64_t done = 0, calls = 0;
                const int64_t bad0 = g_bad_cases;
                while (done < cells) {
                    const int64_t left = cells - done, chunk = left < 1000000 ? left : 1000000;
                    one_case(rng, &COMBOS[ci], ARITHS[ai], (tridi_axis)axis, 2, TRIDI_ON_ERROR_LINES, 0,
                             chunk > 64 ? chunk : 64, &done);
                    ++calls;
                }
                printf("sweep %s %s axis %c: %lld cells in %lld calls, %s\n", COMBOS[ci].name, arith_name(ARITHS[ai]),
                       "xyz"[axis], (long long)done, (long long)calls,
                       g_bad_cases == bad0 ? "all bit for bit" : "DIFFERENCES");
            }
}

int main(int argc, char **argv)
{
    int64_t cells = DEFAULT_CELLS;
    for (int i = 1; i < argc; ++i) {
        if (!strncmp(argv[i], "--cells=", 8) && atoll(argv[i] + 8) > 0) {
            cells = atoll(argv[i] + 8);
        } else {
            fprintf(stderr, "usage: %s [--cells=N] (N > 0: random cells per combination, arithmetic and axis)\n",
                    argv[0]);
            return 2;
        }
    }
    uint64_t rng = tu_seed("test_mohid_bits");
    print_kernels();
    {
        tridi_config cfg;
        tridi_config_init(&cfg);
        cfg.backend = TRIDI_BACKEND_CPU;
        cfg.num_threads = 2;
        cfg.pivoting = TRIDI_PIVOT_FALLBACK;
        if (tridi_create(&CTXP, &cfg)) {
            printf("FAILED tridi_create: %s\n", tridi_error_message());
            return 1;
        }
    }
    for (int t = 0; t < 2; ++t) {
        tridi_config cfg;
        tridi_config_init(&cfg);
        cfg.backend = TRIDI_BACKEND_CPU;
        cfg.num_threads = t + 1;
        if (tridi_create(&CTX[t], &cfg)) {
            printf("FAILED tridi_create: %s\n", tridi_error_message());
            return 1;
        }
    }
    /* the arithmetic's value is validated: 3 (MOHID_NEWTYPE) taken, 4 refused naming the option */
    {
        const tridi_grid g = {2, {1, 1, 1}, {4, 4, 1}};
        const int64_t lo[3] = {1, 1, 1}, hi[3] = {4, 4, 1};
        const tridi_dtype t[5] = {TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32};
        tridi_solve_options o;
        tridi_solve_options_init(&o);
        tridi_plan plan = NULL;
        o.arith = TRIDI_ARITH_MOHID_NEWTYPE;
        tu_expect("plan with TRIDI_ARITH_MOHID_NEWTYPE", tridi_plan_create(CTX[0], &g, TRIDI_AXIS_X, lo, hi, t, &o, &plan),
                  TRIDI_SUCCESS, NULL);
        tridi_plan_destroy(plan);
        o.arith = (tridi_arith)4;
        tu_expect("plan with arith 4", tridi_plan_create(CTX[0], &g, TRIDI_AXIS_X, lo, hi, t, &o, &plan),
                  TRIDI_ERROR_INVALID_VALUE, "options->arith = 4");
    }
    /* 1 and 2: every case, then the careful path */
    int64_t cases_cells = 0;
    for (int ci = 0; ci < 3; ++ci)
        for (int ai = 0; ai < 2; ++ai)
            for (int axis = 0; axis < 3; ++axis)
                for (int threads = 1; threads <= 2; ++threads)
                    for (int oe = 0; oe < 2; ++oe)
                        for (int special = 0; special < 3; ++special)
                            one_case(&rng, &COMBOS[ci], ARITHS[ai], (tridi_axis)axis, threads, (tridi_on_error)oe,
                                     special, 6000, &cases_cells);
    printf("cases: %lld cells\n", (long long)cases_cells);
    /* 3: near ties (none searched in all-float arrays: a float diag leaves no double to steer by) */
    for (int ci = 1; ci < 3; ++ci)
        for (int ai = 0; ai < 2; ++ai) {
            const int64_t found = near_ties(&rng, &COMBOS[ci], ARITHS[ai], 512);
            char what[96];
            snprintf(what, sizeof what, "near ties %s %s: at least 64 lines found", COMBOS[ci].name,
                     arith_name(ARITHS[ai]));
            tu_expect_true(what, found >= 64);
        }
    /* 4 */
    sweep(&rng, cells);
    /* tridi_solve too: the context's contract, LINES and MOHID's arithmetic */
    for (int ci = 0; ci < 3; ++ci)
        for (int axis = 0; axis < 3; ++axis) {
            tu_system s;
            tridi_grid g;
            int64_t lo[3], hi[3];
            random_geometry(&rng, (tridi_axis)axis, tu_randint(&rng, 2, 48), 5000, &g, lo, hi);
            if (tu_system_alloc(&s, &g, COMBOS[ci].t[0], COMBOS[ci].t[1], COMBOS[ci].t[2], COMBOS[ci].t[3],
                                COMBOS[ci].t[4], &rng))
                return 1;
            fill_mohid(&s, &rng);
            tu_poison_x(&s, &rng);
            void *want = reference(&s, (tridi_axis)axis, lo, hi, 0);
            char label[96];
            snprintf(label, sizeof label, "tridi_solve %s axis %c", COMBOS[ci].name, "xyz"[axis]);
            tu_expect(label, tridi_solve(CTX[1], &g, (tridi_axis)axis, lo, hi, &s.a), TRIDI_SUCCESS, NULL);
            compare(label, &s, want);
            free(want);
            tu_system_free(&s);
        }
    tridi_destroy(CTXP);
    tridi_destroy(CTX[0]);
    tridi_destroy(CTX[1]);
    const int failed = g_bad_cases > 0 || tu_failures > 0;
    printf("%s: %lld failing cases, %d failed checks\n", failed ? "FAILED" : "passed", (long long)g_bad_cases,
           tu_failures);
    return failed;
}
