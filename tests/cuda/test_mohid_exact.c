/* MOHID's arithmetic on the GPU, bit for bit (docs/decisions/041): the answers of every tk_line variant
 * (x lines through the shared-memory ring, y/z lines through registers, W/G in shared memory and, past
 * 220 unknowns, in the global scratch) must equal, bit for bit, MOHID's routines in C (the tests' one
 * reference, tests/common/mohid_reference.h, compiled without contraction): TRIDI_ARITH_MOHID (two
 * divisions per unknown in double, products rounded before their sums) and TRIDI_ARITH_MOHID_NEWTYPE (the
 * pivot rounded to float where upper is float, W divided in float), on f32, f64 and mixed arrays, x, y and
 * z lines, device and host arrays, ON_ERROR_LINES and _CALL. Seven parts:
 *  1. random grids, short and long lines, every combination above;
 *  2. near ties: 3-unknown mixed lines whose last answer sits on a float rounding boundary, where MOHID's
 *     divisions and a reciprocal with fused multiply-adds round apart (the test asserts some were found);
 *  3. a MOHID-like sweep (diffusion rows, wide scales) of CELLS cells per type and axis, both arithmetics,
 *     device arrays under LINES and host arrays under CALL. CELLS: argv[1] or TRIDI_TEST_SWEEP_CELLS
 *     (default 300000; the device runs give 100000000); argv[2] "5" or "6": that part alone;
 *  4. a pivot that is 0 as a float but not as a double: NEWTYPE reports it (cell named, LINES and CALL);
 *  5. x lines at tx_line's tile edges (1, 2, 15-17, 31-33, ... unknowns), and failing x lines;
 *  6. grids whose lines all fit on the GPU at once (tp_line): short lines, 140x140x56, failing lines;
 *  7. zero and tiny numerators and quotients inside lines, where __ddiv_rn leaves its fast path.
 * Outputs are poisoned before every solve and cells outside the box must keep the poison. Seed printed
 * (TRIDI_SEED replays). Exits 77 without a GPU. */
#include "mohid_reference.h"
#include "testutil.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tridi_cuda_device_count(void); /* internal, in libtridi */

enum { F32 = 0, F64 = 1, MIXED = 2 };
static const char *combo_name[3] = {"f32", "f64", "mixed"};
static const tridi_arith ariths[2] = {TRIDI_ARITH_MOHID, TRIDI_ARITH_MOHID_NEWTYPE};
static const char *arith_name[2] = {"MOHID", "NEWTYPE"};

static int64_t failures;

/* A grid with a one-cell halo on each side (lbound 0), the box 1..n along each axis. */
typedef struct sys {
    int combo;
    int64_t n[3], ext[3], cells;
    void *d, *e, *f, *r, *x; /* lower, diag, upper, rhs, x: host, the whole grid */
    void *ref;               /* the reference answers, x's type, the whole grid layout */
    size_t sl, sd, sx;       /* element sizes: lower/upper/rhs, diag, x */
} sys;

static size_t esize(int combo, int which) /* which: 0 lower/upper/rhs, 1 diag, 2 x */
{
    return combo == F64 || (combo == MIXED && which == 1) ? 8 : 4;
}

static double getv(const void *p, size_t s, int64_t i)
{
    return s == 8 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}
static void setv(void *p, size_t s, int64_t i, double v)
{
    if (s == 8)
        ((double *)p)[i] = v;
    else
        ((float *)p)[i] = (float)v;
}

static int sys_alloc(sys *s, int combo, int64_t nx, int64_t ny, int64_t nz)
{
    memset(s, 0, sizeof *s);
    s->combo = combo;
    s->n[0] = nx, s->n[1] = ny, s->n[2] = nz;
    s->cells = 1;
    for (int a = 0; a < 3; ++a) {
        s->ext[a] = s->n[a] + 2;
        s->cells *= s->ext[a];
    }
    s->sl = esize(combo, 0), s->sd = esize(combo, 1), s->sx = esize(combo, 2);
    s->d = malloc(s->cells * s->sl);
    s->e = malloc(s->cells * s->sd);
    s->f = malloc(s->cells * s->sl);
    s->r = malloc(s->cells * s->sl);
    s->x = malloc(s->cells * s->sx);
    s->ref = malloc(s->cells * s->sx);
    if (!s->d || !s->e || !s->f || !s->r || !s->x || !s->ref) {
        printf("out of host memory for %" PRId64 " cells\n", s->cells);
        return 1;
    }
    return 0;
}

static void sys_free(sys *s)
{
    free(s->d), free(s->e), free(s->f), free(s->r), free(s->x), free(s->ref);
}

static int64_t cell(const sys *s, int64_t i, int64_t j, int64_t k) { return i + s->ext[0] * (j + s->ext[1] * k); }

static tridi_grid grid_of(const sys *s)
{
    tridi_grid g = {3, {0, 0, 0}, {s->ext[0] - 1, s->ext[1] - 1, s->ext[2] - 1}};
    return g;
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double unit(uint64_t seed, int64_t i, int q) /* [0, 1), a pure function of (seed, cell, q) */
{
    return (double)(mix64(seed ^ mix64((uint64_t)i * 8 + (uint64_t)q)) >> 11) * 0x1.0p-53;
}

/* MOHID-like rows in every cell (halos too, which no solve may read): diffusion coefficients a, c over
 * eleven decades, diag = 1 + a + c (+ up to 50% more), rhs a field of order 10 plus noise over several
 * decades; a few rows with random signs and a diagonal barely above |a| + |c|. */
static void fill_mohid_like(sys *s, uint64_t seed)
{
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < s->cells; ++i) {
        const double a = exp(-18.0 + 25.0 * unit(seed, i, 0)) * 1e-2, c = exp(-18.0 + 25.0 * unit(seed, i, 1)) * 1e-2;
        double e = 1.0 + a + c + 0.5 * (a + c) * unit(seed, i, 2);
        double lower = -a, upper = -c;
        const double u = unit(seed, i, 3);
        if (u < 0.02) { /* weakly dominant, mixed signs */
            lower = unit(seed, i, 4) < 0.5 ? a : -a;
            upper = unit(seed, i, 5) < 0.5 ? c : -c;
            e = (a + c) * (1.0 + 1e-3 + unit(seed, i, 6)) + 1e-30;
            if (unit(seed, i, 7) < 0.5)
                e = -e;
        }
        const double rhs =
            12.0 + 4.0 * unit(seed, i, 8) + (unit(seed, i, 9) - 0.5) * pow(10.0, -4.0 + 7.0 * unit(seed, i, 10));
        setv(s->d, s->sl, i, lower);
        setv(s->e, s->sd, i, e);
        setv(s->f, s->sl, i, upper);
        setv(s->r, s->sl, i, rhs);
    }
}

/* ---- the reference: MOHID's routines (mohid_line), every line of the box ---- */

static tridi_arrays arrays_of(const sys *s, void *x)
{
    const tridi_dtype L = s->sl == 8 ? TRIDI_FLOAT64 : TRIDI_FLOAT32, D = s->sd == 8 ? TRIDI_FLOAT64 : TRIDI_FLOAT32,
                      X = s->sx == 8 ? TRIDI_FLOAT64 : TRIDI_FLOAT32;
    tridi_arrays a = {s->d, L, s->e, D, s->f, L, s->r, L, x, X};
    return a;
}

/* The reference answers of every line of the box along axis into s->ref (cells outside the box: 0), with
 * MOHID's Original (nt 0) or NewType (nt 1) pivot. Returns the number of lines the reference itself cannot
 * answer (a zero pivot or an answer that is not finite): the generated systems have none, part 4 one. */
static int64_t reference(sys *s, int axis, int nt)
{
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t n = s->n[axis], n1 = s->n[a1], n2 = s->n[a2];
    const int64_t st[3] = {1, s->ext[0], s->ext[0] * s->ext[1]};
    const tridi_arrays a = arrays_of(s, s->ref);
    memset(s->ref, 0, s->cells * s->sx);
    int64_t bad = 0;
#pragma omp parallel reduction(+ : bad)
    {
        double *W = malloc(sizeof(double) * 2 * (size_t)n), *G = W + n;
#pragma omp for schedule(dynamic, 64)
        for (int64_t l = 0; l < n1 * n2; ++l) {
            const int64_t o = (1 + l % n1) * st[a1] + (1 + l / n1) * st[a2] + st[axis];
            int fails = mohid_line(n, st[axis], &a, o, nt, W, G) != 0;
            for (int64_t m = 0; m < n && !fails; ++m)
                fails = !isfinite(getv(s->ref, s->sx, o + m * st[axis]));
            bad += fails;
        }
        free(W);
    }
    return bad;
}

/* ---- one solve through a plan and its bitwise check ---- */

typedef struct dev {
    void *p[5], *alloc[5];
    size_t bytes[5];
} dev;

/* The device copies of lower, diag, upper, rhs and x, each shift[q] cells past the start of its allocation
 * (shift NULL: none), so that their cells sit at other offsets within 16 bytes than the allocation's. */
static int dev_upload(tridi_context ctx, const sys *s, dev *v, const int *shift)
{
    const void *h[5] = {s->d, s->e, s->f, s->r, s->x};
    const size_t es[5] = {s->sl, s->sd, s->sl, s->sl, s->sx};
    memset(v, 0, sizeof *v);
    for (int q = 0; q < 5; ++q) {
        const size_t sh = shift ? (size_t)shift[q] * es[q] : 0;
        v->bytes[q] = s->cells * es[q];
        if (tridi_device_alloc(ctx, v->bytes[q] + sh, &v->alloc[q]) ||
            (v->p[q] = (char *)v->alloc[q] + sh,
             q < 4 && tridi_copy_to_device(ctx, v->p[q], h[q], v->bytes[q]))) {
            printf("device arrays: %s\n", tridi_error_message());
            return 1;
        }
    }
    return 0;
}

static void dev_free(tridi_context ctx, dev *v)
{
    for (int q = 0; q < 5; ++q)
        if (v->alloc[q])
            tridi_device_free(ctx, v->alloc[q]);
}

static const unsigned char POISON = 0xa5; /* a finite value in float and double, never an answer here */

static int in_box(const sys *s, int64_t c)
{
    const int64_t i = c % s->ext[0], j = c / s->ext[0] % s->ext[1], k = c / s->ext[0] / s->ext[1];
    return i >= 1 && i <= s->n[0] && j >= 1 && j <= s->n[1] && k >= 1 && k <= s->n[2];
}

/* The failing line of a solve expected to fail (part 4): a cell of it and the solve's axis; -1: none. Under
 * ON_ERROR_CALL every cell keeps the poison. */
static int64_t g_fail_cell = -1;
static int g_fail_axis, g_fail_all;
static tridi_status g_fail_status = TRIDI_ERROR_ZERO_PIVOT; /* the status solve_check_fail expects */

static int on_failing_line(const sys *s, int64_t c)
{
    if (g_fail_cell < 0)
        return 0;
    if (g_fail_all)
        return 1;
    int64_t p[3] = {c % s->ext[0], c / s->ext[0] % s->ext[1], c / s->ext[0] / s->ext[1]};
    int64_t q[3] = {g_fail_cell % s->ext[0], g_fail_cell / s->ext[0] % s->ext[1], g_fail_cell / s->ext[0] / s->ext[1]};
    for (int a = 0; a < 3; ++a)
        if (a != g_fail_axis && p[a] != q[a])
            return 0;
    return 1;
}

/* A box cell equals the reference bit for bit; any other cell (and a failing line's) still holds the poison. */
static int cell_ok(const sys *s, int64_t c)
{
    unsigned char poison[8];
    memset(poison, POISON, sizeof poison);
    const unsigned char *got = (const unsigned char *)s->x + c * s->sx;
    const int answered = in_box(s, c) && !on_failing_line(s, c);
    return memcmp(got, answered ? (const unsigned char *)s->ref + c * s->sx : poison, s->sx) == 0;
}

/* Solves the box of s along axis with arithmetic ar (0 MOHID, 1 NEWTYPE) through a plan over host arrays
 * or the device copies v, under on_error; x poisoned first; checks every box cell against s->ref bit for
 * bit and every other cell for the poison. Returns mismatching cells (or 1 for a failed call). */
static int64_t solve_check_fail(tridi_context ctx, sys *s, const dev *v, int axis, int ar, int device,
                                tridi_on_error on_error, const char *what, const char *want_msg);
static int64_t solve_check(tridi_context ctx, sys *s, const dev *v, int axis, int ar, int device,
                           tridi_on_error on_error, const char *what)
{
    return solve_check_fail(ctx, s, v, axis, ar, device, on_error, what, NULL);
}

/* The same, expecting the solve to fail with g_fail_status and a message holding want_msg (when not NULL);
 * g_fail_cell names the failing line. */
static int64_t solve_check_fail(tridi_context ctx, sys *s, const dev *v, int axis, int ar, int device,
                                tridi_on_error on_error, const char *what, const char *want_msg)
{
    char label[160];
    snprintf(label, sizeof label, "%s %s %c %s %s %s (%" PRId64 "x%" PRId64 "x%" PRId64 ")", what,
             combo_name[s->combo], "xyz"[axis], arith_name[ar], device ? "device" : "host",
             on_error == TRIDI_ON_ERROR_LINES ? "LINES" : "CALL", s->n[0], s->n[1], s->n[2]);
    const tridi_grid g = grid_of(s);
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {s->n[0], s->n[1], s->n[2]};
    const tridi_dtype L = s->sl == 8 ? TRIDI_FLOAT64 : TRIDI_FLOAT32, D = s->sd == 8 ? TRIDI_FLOAT64 : TRIDI_FLOAT32,
                      X = s->sx == 8 ? TRIDI_FLOAT64 : TRIDI_FLOAT32;
    const tridi_dtype types[5] = {L, D, L, L, X};
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.on_error = on_error;
    o.arith = ariths[ar];
    o.verdict = TRIDI_VERDICT_SYNC;
    o.memory = device ? TRIDI_MEMORY_DEVICE : TRIDI_MEMORY_HOST;
    memset(s->x, POISON, s->cells * s->sx);
    tridi_arrays arr = {s->d, L, s->e, D, s->f, L, s->r, L, s->x, X};
    if (device) {
        if (tridi_copy_to_device(ctx, v->p[4], s->x, v->bytes[4])) {
            printf("FAILED %s: poisoning x: %s\n", label, tridi_error_message());
            return 1;
        }
        arr = (tridi_arrays){v->p[0], L, v->p[1], D, v->p[2], L, v->p[3], L, v->p[4], X};
    }
    tridi_plan plan = NULL;
    tridi_status st = tridi_plan_create(ctx, &g, (tridi_axis)axis, lo, hi, types, &o, &plan);
    if (!st)
        st = tridi_plan_solve(plan, &arr);
    if (!st)
        st = tridi_plan_status(plan);
    tridi_plan_destroy(plan);
    if (want_msg) {
        const int ok = st == g_fail_status && strstr(tridi_error_message(), want_msg);
        printf("%s %s: %s: %s\n", ok ? "ok" : "FAILED", label, tridi_status_name(st), tridi_error_message());
        if (!ok)
            return 1;
        st = TRIDI_SUCCESS;
    }
    if (!st && device)
        st = tridi_copy_to_host(ctx, s->x, v->p[4], v->bytes[4]);
    if (st) {
        printf("FAILED %s: %s: %s\n", label, tridi_status_name(st), tridi_error_message());
        return 1;
    }
    int64_t bad = 0;
#pragma omp parallel for schedule(static) reduction(+ : bad)
    for (int64_t c = 0; c < s->cells; ++c)
        bad += !cell_ok(s, c);
    for (int64_t c = 0, shown = 0; bad && c < s->cells && shown < 5; ++c) /* the first few, in order */
        if (!cell_ok(s, c)) {
            const int64_t i = c % s->ext[0], j = c / s->ext[0] % s->ext[1], k = c / s->ext[0] / s->ext[1];
            printf("  %s: cell (%" PRId64 ",%" PRId64 ",%" PRId64 ")%s: got %a, want %a\n", label, i, j, k,
                   in_box(s, c) ? "" : " outside the box (want the poison)", getv(s->x, s->sx, c),
                   in_box(s, c) ? getv(s->ref, s->sx, c) : NAN);
            ++shown;
        }
    if (bad)
        printf("FAILED %s: %" PRId64 " cells differ\n", label, bad);
    return bad;
}

/* Every plan kind on one system: both arithmetics, device and host arrays, LINES and CALL. */
static void all_paths_at(tridi_context ctx, sys *s, int axis, const char *what, const int *shift)
{
    dev v;
    if (dev_upload(ctx, s, &v, shift)) {
        ++failures;
        dev_free(ctx, &v);
        return;
    }
    for (int ar = 0; ar < 2; ++ar) {
        const int64_t refbad = reference(s, axis, ar);
        if (refbad) {
            printf("FAILED %s: the reference fails on %" PRId64 " lines of a generated system\n", what, refbad);
            ++failures;
            continue;
        }
        for (int device = 0; device < 2; ++device)
            for (int oe = 0; oe < 2; ++oe)
                failures += solve_check(ctx, s, &v, axis, ar, device, oe ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES,
                                        what) != 0;
    }
    dev_free(ctx, &v);
}

static void all_paths(tridi_context ctx, sys *s, int axis, const char *what) { all_paths_at(ctx, s, axis, what, NULL); }

/* ---- part 2: near ties ---- */

/* The old device arithmetic (a reciprocal, fused multiply-adds) on a 3-unknown line, MOHID's signs:
 * the form the search compares MOHID's divisions with. */
static void rcp_line3(const double *d, const double *e, const double *f, const double *r, float *x)
{
    double wp = f[0] / e[0], g = r[0] / e[0], W[3], G[3];
    W[0] = wp, G[0] = g;
    double den = fma(-d[1], wp, e[1]), inv = 1.0 / den;
    wp = f[1] * inv;
    g = fma(-d[1], g, r[1]) * inv;
    W[1] = wp, G[1] = g;
    den = fma(-d[2], wp, e[2]);
    G[2] = fma(-d[2], g, r[2]) / den;
    x[2] = (float)G[2];
    x[1] = (float)fma(-W[1], (double)x[2], G[1]);
    x[0] = (float)fma(-W[0], (double)x[1], G[0]);
}

/* Mixed 3-unknown lines whose last answer is made to sit on a float rounding boundary: rows 1-2 random,
 * diag of row 3 chosen so that G3 = t, a float midpoint, then moved by a few of its ulps; kept where the
 * reciprocal form rounds some answer to another float than MOHID's divisions. Returns how many were found
 * (up to want) in d, e, f, r (3 per line). */
static int64_t find_near_ties(uint64_t *rng, int64_t want, int64_t tries, double *D, double *E, double *F, double *R)
{
    int64_t found = 0;
    for (int64_t t = 0; t < tries && found < want; ++t) {
        double d[3], e[3], f[3], r[3], W[3], G[3];
        for (int m = 0; m < 3; ++m) {
            d[m] = m ? (double)(float)(-0.05 - tu_uniform(rng)) : 0.0;
            f[m] = m < 2 ? (double)(float)(-0.05 - tu_uniform(rng)) : 0.0;
            r[m] = (double)(float)(1.0 + 30.0 * tu_uniform(rng));
            e[m] = 2.5 + 3.0 * tu_uniform(rng);
        }
        W[0] = -f[0] / e[0], G[0] = r[0] / e[0];
        const double aux = e[1] + d[1] * W[0];
        W[1] = -f[1] / aux, G[1] = (r[1] - d[1] * G[0]) / aux;
        const double num = r[2] - d[2] * G[1];
        float y = (float)(1.0 + 15.0 * tu_uniform(rng));
        const double mid = (double)y + (double)(nextafterf(y, 2 * y) - y) / 2.0; /* exact in double */
        const double e3 = num / mid - d[2] * W[1];
        for (int k = -4; k <= 4 && found < want; ++k) {
            e[2] = e3;
            for (int q = 0; q < (k < 0 ? -k : k); ++q)
                e[2] = nextafter(e[2], k < 0 ? -INFINITY : INFINITY);
            float df[3], ff[3], rf[3], xf[3];
            for (int m = 0; m < 3; ++m)
                df[m] = (float)d[m], ff[m] = (float)f[m], rf[m] = (float)r[m];
            const tridi_arrays a = {df, TRIDI_FLOAT32, e, TRIDI_FLOAT64, ff, TRIDI_FLOAT32, rf, TRIDI_FLOAT32,
                                    xf, TRIDI_FLOAT32};
            if (mohid_line(3, 1, &a, 0, 0, W, G) || !isfinite(xf[0]) || !isfinite(xf[1]) || !isfinite(xf[2]))
                continue;
            float xr[3];
            rcp_line3(d, e, f, r, xr);
            if (xf[0] == xr[0] && xf[1] == xr[1] && xf[2] == xr[2])
                continue;
            for (int m = 0; m < 3; ++m) {
                D[3 * found + m] = d[m], E[3 * found + m] = e[m], F[3 * found + m] = f[m], R[3 * found + m] = r[m];
            }
            ++found;
        }
    }
    return found;
}

/* The found lines as the lines of a mixed grid along axis (3 unknowns each; spare lines repeat them). */
static int near_tie_system(sys *s, int axis, int64_t nf, const double *D, const double *E, const double *F,
                           const double *R)
{
    const int64_t n1 = 37, n2 = (nf + n1 - 1) / n1;
    int64_t n[3];
    n[axis] = 3;
    n[axis == 0 ? 1 : 0] = n1;
    n[axis == 2 ? 1 : 2] = n2;
    if (sys_alloc(s, MIXED, n[0], n[1], n[2]))
        return 1;
    fill_mohid_like(s, 12345); /* halos: never read */
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t st[3] = {1, s->ext[0], s->ext[0] * s->ext[1]};
    for (int64_t l = 0; l < n1 * n2; ++l) {
        const int64_t q = l % nf, o = (1 + l % n1) * st[a1] + (1 + l / n1) * st[a2] + st[axis];
        for (int m = 0; m < 3; ++m) {
            const int64_t c = o + m * st[axis];
            setv(s->d, 4, c, D[3 * q + m]);
            setv(s->e, 8, c, E[3 * q + m]);
            setv(s->f, 4, c, F[3 * q + m]);
            setv(s->r, 4, c, R[3 * q + m]);
        }
    }
    return 0;
}

/* 4. NewType's float pivot fails where MOHID's double one does not: one y line of a mixed grid gets the row
 * (d 0, e 1e-50, f 0, rhs 0), whose pivot is 1e-50 in double (MOHID answers it) but 0 as a float. Under
 * NEWTYPE the solve reports a zero pivot at that cell (the diagnosis runs NewType's pivot too); ON_ERROR_LINES
 * leaves that line untouched and answers the others bit for bit (the host arrays' re-solve on the host
 * included), ON_ERROR_CALL leaves x untouched. */
static void newtype_pivot_case(tridi_context ctx, uint64_t seed)
{
    sys s;
    if (sys_alloc(&s, MIXED, 5, 7, 3)) {
        ++failures;
        return;
    }
    fill_mohid_like(&s, seed);
    const int64_t fc = cell(&s, 2, 4, 2);
    setv(s.d, 4, fc, 0.0), setv(s.e, 8, fc, 1e-50);
    setv(s.f, 4, fc, 0.0), setv(s.r, 4, fc, 0.0);
    dev v;
    if (dev_upload(ctx, &s, &v, NULL)) {
        ++failures;
    } else {
        if (reference(&s, 1, 0)) {
            printf("FAILED newtype pivot: MOHID's reference fails on the tiny pivot\n");
            ++failures;
        }
        for (int device = 0; device < 2; ++device)
            for (int oe = 0; oe < 2; ++oe)
                failures += solve_check(ctx, &s, &v, 1, 0, device, oe ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES,
                                        "tiny double pivot") != 0;
        if (reference(&s, 1, 1) != 1) {
            printf("FAILED newtype pivot: NewType's reference should fail on exactly one line\n");
            ++failures;
        }
        g_fail_cell = fc;
        g_fail_axis = 1;
        for (int device = 0; device < 2; ++device)
            for (int oe = 0; oe < 2; ++oe) {
                g_fail_all = oe;
                failures += solve_check_fail(ctx, &s, &v, 1, 1, device, oe ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES,
                                             "float pivot 0", "zero pivot") != 0;
                failures += solve_check_fail(ctx, &s, &v, 1, 1, device, oe ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES,
                                             "float pivot 0", "at cell (2, 4, 2)") != 0;
            }
        g_fail_cell = -1;
        g_fail_all = 0;
    }
    dev_free(ctx, &v);
    sys_free(&s);
}

/* One failing line among good ones (mixed, lines of n unknowns along axis, 37 x 2 of them): kind 0 a zero
 * pivot at unknown m (any W before it), kind 1 a tiny diag under a huge rhs there (the answer past float's
 * range, W and G finite). LINES answers the other lines bit for bit, CALL leaves x untouched. */
static void failing_line(tridi_context ctx, uint64_t seed, int axis, int64_t n, int64_t m, int kind)
{
    int64_t ext[3] = {37, 37, 2}, at[3] = {20, 20, 2};
    ext[axis] = n, at[axis] = 1 + m;
    sys s;
    if (sys_alloc(&s, MIXED, ext[0], ext[1], ext[2])) {
        ++failures;
        return;
    }
    fill_mohid_like(&s, seed);
    const int64_t fc = cell(&s, at[0], at[1], at[2]);
    setv(s.d, 4, fc, 0.0), setv(s.f, 4, fc, 0.0);
    setv(s.e, 8, fc, kind == 0 ? 0.0 : 1e-20), setv(s.r, 4, fc, kind == 0 ? 0.0 : 1e30);
    dev v;
    if (dev_upload(ctx, &s, &v, NULL)) {
        ++failures;
    } else {
        for (int ar = 0; ar < 2; ++ar) {
            if (reference(&s, axis, ar) != 1) {
                printf("FAILED %c failing line: the reference should fail on exactly one line\n", "xyz"[axis]);
                ++failures;
                continue;
            }
            g_fail_cell = fc, g_fail_axis = axis, g_fail_status = kind ? TRIDI_ERROR_NONFINITE : TRIDI_ERROR_ZERO_PIVOT;
            for (int device = 0; device < 2; ++device)
                for (int oe = 0; oe < 2; ++oe) {
                    g_fail_all = oe;
                    failures += solve_check_fail(ctx, &s, &v, axis, ar, device,
                                                 oe ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES,
                                                 kind == 0 ? "zero pivot" : "answer overflow",
                                                 kind == 0 ? "zero pivot" : "overflows its storage type") != 0;
                }
        }
    }
    g_fail_cell = -1, g_fail_all = 0, g_fail_status = TRIDI_ERROR_ZERO_PIVOT;
    dev_free(ctx, &v);
    sys_free(&s);
}

/* 5. x lines at the edges of tx_line's tiles (docs/decisions/063, 096: 64 bytes of a line a tile, from a
 * 16-byte boundary up to 3 cells before the line), 1 and 2 unknowns included, halos around (rows start at
 * every offset within 16 bytes), a last warp of fewer than 32 lines; device arrays also one cell past their
 * allocation's start (all five: tiles from other boundaries, cells before the array's first read; diag
 * alone, or upper two cells: no common boundary, the cell-by-cell copies); then one failing line among good
 * ones: a zero pivot mid-line, and answers past float's range (the kernel's walk back without writing):
 * LINES answers the others bit for bit, CALL leaves x untouched. */
static void x_tile_edges(tridi_context ctx, uint64_t seed)
{
    static const int64_t lens[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 221, 223, 224, 225, 257, 1000};
    static const int shifts[4][5] = {{0, 0, 0, 0, 0}, {1, 1, 1, 1, 1}, {0, 1, 0, 0, 0}, {0, 0, 2, 0, 0}};
    static const char *what[4] = {"x tile edges", "x tile edges, arrays a cell in", "x tile edges, diag a cell in",
                                  "x tile edges, upper two cells in"};
    for (int combo = 0; combo < 3; ++combo)
        for (size_t q = 0; q < sizeof lens / sizeof *lens; ++q) {
            sys s;
            if (sys_alloc(&s, combo, lens[q], 37, 2)) {
                ++failures;
                continue;
            }
            fill_mohid_like(&s, mix64(seed + 64 * (uint64_t)combo + q));
            for (int h = 0; h < 4; ++h)
                if (h == 0 || q % 3 == h - 1 || lens[q] == 1000) /* the shifted arrays on a third of the lengths each */
                    all_paths_at(ctx, &s, 0, what[h], shifts[h]);
            sys_free(&s);
        }
    for (int kind = 0; kind < 2; ++kind)
        failing_line(ctx, mix64(seed ^ (0xfa11ull + (uint64_t)kind)), 0, 300, 149, kind);
}

/* 7. Quotients off __ddiv_rn's fast path inside lines (where the shared reciprocal's test fails, the kernels
 * take __ddiv_rn: decision 079): MOHID-like rows where one cell in about 24 has upper or rhs 0 (a zero
 * numerator), tiny (a float subnormal, or 1e-310 where the array is double: a numerator or a quotient under the
 * fast path's range) or both; x, y and z lines of 24-300 unknowns, each type. */
static void off_fast_path(tridi_context ctx, uint64_t seed)
{
    for (int combo = 0; combo < 3; ++combo)
        for (int axis = 0; axis < 3; ++axis) {
            uint64_t rng = mix64(seed + (uint64_t)(combo * 3 + axis));
            int64_t n[3] = {29, 17, 11};
            n[axis] = tu_randint(&rng, 24, 300);
            sys s;
            if (sys_alloc(&s, combo, n[0], n[1], n[2])) {
                ++failures;
                continue;
            }
            const uint64_t fs = mix64(seed ^ (0x0ffull + (uint64_t)(combo * 3 + axis)));
            fill_mohid_like(&s, fs);
            const double tiny = s.sl == 8 ? 1e-310 : 1e-41;
            for (int64_t c = 0; c < s.cells; ++c) {
                const uint64_t h = mix64(fs + (uint64_t)c);
                if (h % 24)
                    continue;
                const int kind = (int)(h / 24 % 5);
                const double sign = (h >> 40) & 1 ? -1.0 : 1.0;
                if (kind == 0)
                    setv(s.f, s.sl, c, 0.0);
                else if (kind == 1)
                    setv(s.r, s.sl, c, 0.0);
                else if (kind == 2)
                    setv(s.r, s.sl, c, sign * tiny);
                else if (kind == 3)
                    setv(s.f, s.sl, c, sign * tiny);
                else
                    setv(s.f, s.sl, c, sign * tiny), setv(s.r, s.sl, c, -sign * tiny);
            }
            all_paths(ctx, &s, axis, "off the fast path");
            sys_free(&s);
        }
}

/* 6. One-wave grids (tp_line on strided lines, docs/decisions/069): short lines around a stage of 8, a last
 * warp of fewer than 16 lines; 140x140x56, its diag scaled by 2^121 (quotients far from 1), rows of small
 * integers (exact, power-of-two quotients, zero numerators); each type and axis; a failing line on every
 * axis (zero pivot at the first, a middle, the last unknown; an answer past float's range). */
static void one_wave_grids(tridi_context ctx, uint64_t seed)
{
    static const int64_t lens[] = {1, 2, 7, 8, 9, 16, 17};
    for (int combo = 0; combo < 3; ++combo)
        for (int axis = 0; axis < 3; ++axis)
            for (int q = 0; q < 10; ++q) {
                int64_t n[3] = {q < 7 ? 5 : 140, q < 7 ? 7 : 140, q < 7 ? 3 : 56};
                if (q < 7)
                    n[axis] = lens[q];
                sys s;
                if (sys_alloc(&s, combo, n[0], n[1], n[2])) {
                    ++failures;
                    continue;
                }
                const uint64_t fs = mix64(seed + 64 * (uint64_t)(combo * 3 + axis) + (uint64_t)q);
                fill_mohid_like(&s, fs);
                for (int64_t c = 0; c < s.cells && q >= 8; ++c) {
                    const uint64_t h = mix64(fs + (uint64_t)c); /* q 9: d, f in 0..-2, diag 4..8, rhs 0..4 */
                    if (q == 9) {
                        setv(s.d, s.sl, c, -(double)(h % 3)), setv(s.f, s.sl, c, -(double)(h / 3 % 3));
                        setv(s.e, s.sd, c, 4.0 + 2.0 * (double)(h / 9 % 3)), setv(s.r, s.sl, c, (double)(h / 27 % 5));
                    } else {
                        setv(s.e, s.sd, c, ldexp(getv(s.e, s.sd, c), 121));
                    }
                }
                all_paths(ctx, &s, axis, q < 7 ? "one wave short" : q == 7 ? "one wave 140x140x56"
                                                 : q == 8 ? "one wave scaled" : "one wave integers");
                sys_free(&s);
            }
    for (int axis = 0; axis < 3; ++axis)
        for (int kind = 0; kind < 4; ++kind)
            failing_line(ctx, mix64(seed ^ (0x0a1eull + (uint64_t)(axis * 4 + kind))), axis, 40,
                         kind == 0 ? 0 : kind == 1 ? 39 : 20, kind >= 2 ? kind - 2 : 0);
}

int main(int argc, char **argv)
{
    if (tridi_cuda_device_count() < 1) {
        printf("test_mohid_exact: no GPU, skipped\n");
        return 77;
    }
    uint64_t seed = tu_seed("test_mohid_exact"), rng = seed;
    const char *env = getenv("TRIDI_TEST_SWEEP_CELLS");
    const int64_t sweep_cells = argc > 1 ? strtoll(argv[1], NULL, 0) : env && *env ? strtoll(env, NULL, 0) : 300000;
    tridi_config c;
    tridi_config_init(&c);
    c.backend = TRIDI_BACKEND_CUDA;
    tridi_context ctx = NULL;
    if (tridi_create(&ctx, &c)) {
        printf("tridi_create: %s\n", tridi_error_message());
        return 1;
    }

    /* argv[2] "5" or "6": that part alone (under compute-sanitizer) */
    const int only = argc > 2 && (!strcmp(argv[2], "5") || !strcmp(argv[2], "6")) ? argv[2][0] - '0' : 0;
    /* 1. Random grids: short lines (W/G in shared memory) and long ones (past 220 unknowns: the scratch). */
    for (int combo = 0; combo < 3 && !only; ++combo)
        for (int axis = 0; axis < 3; ++axis)
            for (int lng = 0; lng < 2; ++lng) {
                int64_t n[3];
                for (int a = 0; a < 3; ++a)
                    n[a] = tu_randint(&rng, 1, tu_randint(&rng, 0, 2) ? 12 : 70);
                n[axis] = lng ? tu_randint(&rng, 221, 700) : tu_randint(&rng, 1, 220);
                sys s;
                if (sys_alloc(&s, combo, n[0], n[1], n[2])) {
                    ++failures;
                    continue;
                }
                fill_mohid_like(&s, mix64(seed + (uint64_t)(combo * 6 + axis * 2 + lng)));
                all_paths(ctx, &s, axis, lng ? "random long" : "random short");
                sys_free(&s);
            }
    printf("part 1 (random grids): %" PRId64 " failures so far\n", failures);

    /* 2. Near ties. */
    if (!only) {
        const int64_t want = 2000;
        double *D = malloc(sizeof(double) * 12 * want), *E = D + 3 * want, *F = E + 3 * want, *R = F + 3 * want;
        const int64_t nf = find_near_ties(&rng, want, 200000, D, E, F, R);
        printf("near ties: %" PRId64 " mixed 3-unknown lines where MOHID's divisions and a reciprocal round apart\n",
               nf);
        tu_expect_true("near-tie lines found by the search", nf > 0);
        for (int axis = 0; axis < 3 && nf > 0; ++axis) {
            sys s;
            if (near_tie_system(&s, axis, nf, D, E, F, R)) {
                ++failures;
                continue;
            }
            all_paths(ctx, &s, axis, "near ties");
            sys_free(&s);
        }
        free(D);
    }
    printf("part 2 (near ties): %" PRId64 " failures so far\n", failures);

    if (!only)
        newtype_pivot_case(ctx, mix64(seed ^ 0x7e57ull));
    printf("part 4 (NewType's float pivot): %" PRId64 " failures so far\n", failures);

    if (only != 6)
        x_tile_edges(ctx, mix64(seed ^ 0x711eull));
    printf("part 5 (x tile edges, failing x lines): %" PRId64 " failures so far\n", failures);

    if (only != 5)
        one_wave_grids(ctx, mix64(seed ^ 0x0a1eull));
    printf("part 6 (one-wave grids, failing lines on each axis): %" PRId64 " failures so far\n", failures);

    if (!only)
        off_fast_path(ctx, mix64(seed ^ 0x5bedull));
    printf("part 7 (quotients off the division's fast path): %" PRId64 " failures so far\n", failures);

    /* 3. The sweep: per type one grid of about sweep_cells cells, each axis, both arithmetics, device arrays
     * under LINES and host arrays under CALL. Line lengths drawn so that both W/G homes are met. */
    for (int combo = 0; combo < 3 && sweep_cells > 0 && !only; ++combo) {
        const int64_t nz = tu_randint(&rng, 16, 160), nx = tu_randint(&rng, 100, 1100);
        int64_t ny = (sweep_cells + nx * nz - 1) / (nx * nz);
        if (ny < 1)
            ny = 1;
        sys s;
        if (sys_alloc(&s, combo, nx, ny, nz)) {
            ++failures;
            continue;
        }
        const uint64_t fs = mix64(seed ^ (0x5eedull + (uint64_t)combo));
        fill_mohid_like(&s, fs);
        dev v;
        if (dev_upload(ctx, &s, &v, NULL)) {
            ++failures;
        } else {
            for (int axis = 0; axis < 3; ++axis)
                for (int ar = 0; ar < 2; ++ar) {
                    const int64_t refbad = reference(&s, axis, ar);
                    if (refbad) {
                        printf("FAILED sweep %s %c %s: the reference fails on %" PRId64 " generated lines\n",
                               combo_name[combo], "xyz"[axis], arith_name[ar], refbad);
                        ++failures;
                        continue;
                    }
                    failures += solve_check(ctx, &s, &v, axis, ar, 1, TRIDI_ON_ERROR_LINES, "sweep") != 0;
                    failures += solve_check(ctx, &s, &v, axis, ar, 0, TRIDI_ON_ERROR_CALL, "sweep") != 0;
                }
        }
        printf("sweep %s: %" PRId64 "x%" PRId64 "x%" PRId64 " = %" PRId64 " cells per axis and arithmetic\n",
               combo_name[combo], nx, ny, nz, nx * ny * nz);
        dev_free(ctx, &v);
        sys_free(&s);
    }
    tridi_destroy(ctx);
    failures += tu_failures;
    printf("test_mohid_exact: %s (%" PRId64 " failures, seed %llu)\n", failures ? "FAILED" : "all bit for bit",
           failures, (unsigned long long)seed);
    return failures ? 1 : 0;
}
