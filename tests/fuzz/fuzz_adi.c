/* libFuzzer harness over the ADI API on the CPU backend: tridi_adi_create's validation of the grid, box,
 * type and operator (scheme, axes, theta, spacing, diffusivity, mean, velocities, boundaries, size), then
 * steps and caller-diagonal sweeps on tiny grids with bad arguments mixed in (dt, NULL or aliased
 * arrays, axes, non-finite or negative coefficients). Properties checked on every input:
 *   - no crash, no out-of-bounds access (arrays are allocated to the grid's exact size), no undefined
 *     behaviour, no leak (AddressSanitizer, UBSan, LeakSanitizer);
 *   - a failing create leaves *plan NULL; every failing call sets a message and leaves the field / x
 *     bit for bit as it was;
 *   - a successful step or sweep writes finite values in the box and nothing outside it, and, when the
 *     input holds only ordinary values, agrees with the oracles of the tests (tests/adi/adi_ref.c for a
 *     step, the reference Thomas of tests/common for a sweep). */
#include "adi_ref.h"
#include "fuzz_reader.h"
#include "testutil.h"
#include "tridi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Each table lists its ordinary entries first (REGULAR of them); the rest are bad or extreme. */
static const double theta_t[] = {0.5, 0.75, 1.0, 0.6, /* bad: */ 0.4, NAN, 1.01, -INFINITY};
static const double spacing_t[] = {1.0, 0.5, 2.0, 0.75, 1.25, /* bad: */ 0.0, -1.0, INFINITY, NAN, 1e-160, 1e160};
static const double kappa_t[] = {1.0, 0.0, 0.5, 2.0, 0.25, 3.0, /* bad: */ -1.0, NAN, INFINITY, 1e300};
static const double dt_t[] = {0.5, 1.0, 0.1, 2.0, 0.01, 4.0, /* extreme: */ 1e300, 1e-300,
                              /* bad: */ 0.0, -1.0, NAN, INFINITY};
enum { THETA_REGULAR = 4, SPACING_REGULAR = 5, KAPPA_REGULAR = 6, DT_REGULAR = 6, DT_VALID = 8 };

static int fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_adi: %s (last message: %s)\n", what, tridi_error_message());
    abort();
}
#define REQUIRE(cond, what) ((cond) ? (void)0 : (void)fuzz_fail(what))

/* An array of exactly `cells` elements of type t (+ `extra` elements), values from the input. */
static void *make_array(reader *r, int64_t cells, int64_t extra, tridi_dtype t, int wild, double scale, int nonneg)
{
    void *p = malloc((size_t)(cells + extra) * esize_of(t));
    for (int64_t c = 0; c < cells + extra; ++c) {
        double v = fz_value(r, wild) * scale;
        set(p, t, c, nonneg && !wild ? fabs(v) : v);
    }
    return p;
}

static double *to_double(const void *p, tridi_dtype t, int64_t cells)
{
    if (!p)
        return NULL;
    double *d = malloc(sizeof(double) * (size_t)cells);
    for (int64_t c = 0; c < cells; ++c)
        d[c] = get(p, t, c);
    return d;
}

static int in_box(const tridi_grid *g, const int64_t lo[3], const int64_t hi[3], const int64_t c[3])
{
    for (int a = 0; a < g->ndim; ++a)
        if (c[a] < lo[a] || c[a] > hi[a])
            return 0;
    return 1;
}

/* After a successful call: box cells finite, every other cell bit for bit as before. */
static void check_written(const tridi_grid *g, const int64_t lo[3], const int64_t hi[3], const void *x,
                          const void *before, tridi_dtype t)
{
    const size_t es = esize_of(t);
    int64_t c[3];
    for (c[2] = g->lbound[2]; c[2] <= g->ubound[2]; ++c[2])
        for (c[1] = g->lbound[1]; c[1] <= g->ubound[1]; ++c[1])
            for (c[0] = g->lbound[0]; c[0] <= g->ubound[0]; ++c[0]) {
                int64_t o = ref_index(g, c[0], c[1], c[2]);
                if (in_box(g, lo, hi, c))
                    REQUIRE(isfinite(get(x, t, o)), "a successful call wrote a non-finite value in the box");
                else
                    REQUIRE(!memcmp((const char *)x + o * es, (const char *)before + o * es, es),
                            "a successful call wrote outside the box");
            }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    const uint8_t flags = fz_byte(&r);
    const int wild = flags & 1; /* extreme values allowed in the arrays */
    int regular = !wild;        /* every choice ordinary: the oracles apply */

    /* Geometry: up to 7 cells per axis, lower bounds -3..3, the box often a cell or two past the grid. */
    tridi_grid g;
    memset(&g, 0, sizeof g);
    uint8_t b = fz_byte(&r);
    g.ndim = 2 + (b & 1);
    if (b == 255)
        g.ndim = (int)(int8_t)fz_byte(&r);
    int64_t lo[3], hi[3], cells = 1;
    for (int a = 0; a < 3; ++a) {
        b = fz_byte(&r);
        g.lbound[a] = (int64_t)(b % 7) - 3;
        if (flags & 2) /* the grid placed near or past the ends of the index range */
            g.lbound[a] = fz_shifted(FZ_PICK(&r, fz_extreme_t), g.lbound[a]);
        g.ubound[a] = fz_shifted(g.lbound[a], (int64_t)((b >> 3) % 7) - ((b & 0xc0) == 0xc0 ? 2 : 0));
        b = fz_byte(&r);
        lo[a] = fz_shifted(g.lbound[a], (b & 3) - ((b & 4) ? 1 : 0));
        hi[a] = fz_shifted(g.ubound[a], ((b & 0x20) ? 1 : 0) - ((b >> 3) & 3));
        if ((flags & 2) && (b & 0xc0) == 0xc0) /* a box far from the grid */
            lo[a] = FZ_PICK(&r, fz_extreme_t);
        int64_t diff;
        if (__builtin_sub_overflow(g.ubound[a], g.lbound[a], &diff) || diff < 0)
            diff = 0; /* a grid without cells on this axis: rejected, any allocation will do */
        if (a < 2 || g.ndim == 3)
            cells *= diff + 1;
    }
    b = fz_byte(&r);
    tridi_dtype dtype = (tridi_dtype)(b & 1);
    if ((b & 0xf0) == 0xf0)
        dtype = (tridi_dtype)((b & 2) ? 2 : -1);
    const tridi_dtype at = dtype == TRIDI_FLOAT32 ? TRIDI_FLOAT32 : TRIDI_FLOAT64; /* room for either */

    /* Operator. */
    tridi_adi_operator op;
    tridi_adi_operator_init(&op);
    b = fz_byte(&r);
    op.scheme = (b % 8) < 5 ? TRIDI_ADI_DOUGLAS : (b % 8) < 7 ? TRIDI_ADI_PEACEMAN_RACHFORD : (tridi_adi_scheme)2;
    static const int naxes_t[] = {0, 0, 2, 3, 0, /* bad: */ 1, 4, -1};
    int k = fz_byte(&r) % 8;
    op.naxes = naxes_t[k];
    regular &= k < 5 && (b % 8) < 7;
    k = fz_byte(&r) % 8;
    op.theta = theta_t[k];
    regular &= k < THETA_REGULAR;
    for (int a = 0; a < 3; ++a) {
        k = fz_byte(&r) % 11;
        op.spacing[a] = spacing_t[k];
        regular &= k < SPACING_REGULAR;
        b = fz_byte(&r);
        op.bc_lo[a] = (b & 7) == 7 ? (tridi_adi_bc)2 : (tridi_adi_bc)(b & 1);
        op.bc_hi[a] = (b & 0x70) == 0x70 ? (tridi_adi_bc)-1 : (tridi_adi_bc)((b >> 4) & 1);
    }
    k = fz_byte(&r) % 10;
    op.kappa = kappa_t[k];
    regular &= k < KAPPA_REGULAR;
    b = fz_byte(&r);
    op.mean = (b % 8) == 7 ? (tridi_adi_mean)2 : (tridi_adi_mean)(b & 1);
    op.profile = (b >> 3) & 1;
    const int with_kappa = (b >> 4) & 1, with_vel[3] = {(b >> 5) & 1, (b >> 6) & 1, (b >> 7) & 1};
    void *kappa = with_kappa ? make_array(&r, cells, 0, at, wild, 0.5, 1) : NULL;
    void *vel[3];
    for (int a = 0; a < 3; ++a) {
        vel[a] = with_vel[a] ? make_array(&r, cells, 0, at, wild, 0.25, 0) : NULL;
        op.velocity[a] = vel[a];
    }
    op.kappa_field = kappa;
    b = fz_byte(&r);
    if (b == 0xa5)
        op.size = sizeof op - 8; /* not set by tridi_adi_operator_init */

    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    cfg.num_threads = 1;
    tridi_context ctx;
    REQUIRE(tridi_create(&ctx, &cfg) == TRIDI_SUCCESS, "tridi_create failed");

    tridi_adi plan = (tridi_adi)&flags; /* must be overwritten with NULL on failure */
    tridi_status st;
    b = fz_byte(&r);
    if (b == 0x11)
        st = tridi_adi_create(NULL, ctx, &g, lo, hi, dtype, &op);
    else if (b == 0x12)
        st = tridi_adi_create(&plan, ctx, &g, lo, hi, dtype, NULL);
    else if (b == 0x13)
        st = tridi_adi_create(&plan, ctx, NULL, lo, hi, dtype, &op);
    else if (b == 0x14)
        st = tridi_adi_create(&plan, NULL, &g, lo, hi, dtype, &op);
    else
        st = tridi_adi_create(&plan, ctx, &g, lo, hi, dtype, &op);
    if (b >= 0x11 && b <= 0x14)
        REQUIRE(st != TRIDI_SUCCESS, "tridi_adi_create accepted a NULL argument");
    if (st) {
        REQUIRE(tridi_error_message()[0], "a failing tridi_adi_create set no message");
        if (b != 0x11)
            REQUIRE(plan == NULL, "a failing tridi_adi_create left *plan set");
        plan = NULL;
    }

    /* The plan's view, as the oracles want it: 2D grids and boxes with axis 2 = 1..1. */
    tridi_grid pg = g;
    int64_t plo[3] = {lo[0], lo[1], lo[2]}, phi[3] = {hi[0], hi[1], hi[2]};
    int empty = 0;
    if (g.ndim == 2) {
        pg.lbound[2] = pg.ubound[2] = plo[2] = phi[2] = 1;
    }
    for (int a = 0; a < 3; ++a)
        empty |= phi[a] < plo[a];

    int64_t steps_done = 0;
    if (plan) {
        void *field = make_array(&r, cells, 0, at, wild, 1.0, 0);
        void *before = malloc((size_t)cells * esize_of(at));
        const int nsteps = 1 + (fz_byte(&r) & 1);
        for (int s = 0; s < nsteps; ++s) {
            k = fz_byte(&r) % 12;
            const double dt = dt_t[k];
            b = fz_byte(&r);
            void *fp = field;
            int aliased = 0;
            if (b % 16 == 1)
                fp = NULL;
            else if (b % 16 == 2 && kappa)
                fp = kappa, aliased = 1;
            else if (b % 16 == 3 && vel[0])
                fp = vel[0], aliased = 1;
            if (fp)
                memcpy(before, fp, (size_t)cells * esize_of(at));
            st = tridi_adi_step(plan, fp, dt, NULL);
            if (!fp || k >= DT_VALID)
                REQUIRE(st != TRIDI_SUCCESS, "tridi_adi_step accepted a NULL field or a bad dt");
            if (aliased && !empty && k < DT_VALID)
                REQUIRE(st == TRIDI_ERROR_ALIASING, "tridi_adi_step accepted a field that is one of its inputs");
            if (st) {
                REQUIRE(tridi_error_message()[0], "a failing tridi_adi_step set no message");
                if (fp)
                    REQUIRE(!memcmp(before, fp, (size_t)cells * esize_of(at)), "a failing tridi_adi_step wrote the field");
                continue;
            }
            steps_done += !empty; /* a plan with an empty box counts no steps */
            check_written(&pg, plo, phi, fp, before, at);
            if (regular && k < DT_REGULAR && !empty) {
                ref_problem rp;
                memset(&rp, 0, sizeof rp);
                rp.grid = pg;
                for (int a = 0; a < 3; ++a) {
                    rp.lo[a] = plo[a];
                    rp.hi[a] = phi[a];
                }
                rp.op = op;
                if (!rp.op.naxes)
                    rp.op.naxes = g.ndim;
                double *dk = to_double(kappa, at, cells), *dv[3], *u = to_double(before, at, cells);
                rp.kappa = dk;
                for (int a = 0; a < 3; ++a)
                    rp.vel[a] = dv[a] = a < rp.op.naxes ? to_double(vel[a], at, cells) : NULL;
                ref_step(&rp, u, dt);
                /* Rounding errors grow with the explicit terms, up to dt (4 K / h^2 + 2 |V| / h) per axis
                 * times the field: the bound is 64 roundings of the largest of them. */
                double scale = 0.0, err = 0.0, kmax = kappa ? 0.0 : op.kappa, vmax = 0.0, amp = 1.0;
                for (int64_t c = 0; c < cells; ++c) {
                    scale = fmax(scale, fmax(fabs(u[c]), fabs(get(before, at, c))));
                    err = fmax(err, fabs(get(fp, at, c) - u[c]));
                    if (kappa)
                        kmax = fmax(kmax, get(kappa, at, c));
                    for (int a = 0; a < rp.op.naxes; ++a)
                        if (vel[a])
                            vmax = fmax(vmax, fabs(get(vel[a], at, c)));
                }
                for (int a = 0; a < rp.op.naxes; ++a)
                    amp += dt * (4.0 * kmax / (op.spacing[a] * op.spacing[a]) + 2.0 * vmax / op.spacing[a]);
                const double tol = 64.0 * (at == TRIDI_FLOAT64 ? 0x1p-52 : 0x1p-23) * amp * scale;
                if (!(err <= tol)) {
                    fprintf(stderr, "fuzz_adi: step differs from the oracle by %g (bound %g)\n", err, tol);
                    abort();
                }
                free(dk);
                free(u);
                for (int a = 0; a < 3; ++a)
                    free(dv[a]);
            }
        }
        free(field);
        free(before);

        /* A sweep with the caller's diagonals: diagonally dominant unless wild. */
        b = fz_byte(&r);
        const tridi_axis axis = (tridi_axis)((int)(b % 5) - 1);
        void *l = make_array(&r, cells, 0, at, wild, 0.5, 0), *u = make_array(&r, cells, 0, at, wild, 0.5, 0);
        void *d = malloc((size_t)cells * esize_of(at));
        for (int64_t c = 0; c < cells; ++c) {
            double extra = fz_value(&r, wild);
            double v = fabs(get(l, at, c)) + fabs(get(u, at, c)) + 0.5 + fabs(extra) / 4.0;
            set(d, at, c, (fz_byte(&r) & 1) ? -v : v);
            if (wild && !isfinite(extra))
                set(d, at, c, extra);
        }
        void *rhs = make_array(&r, cells, 1, at, wild, 1.0, 0); /* one spare element: x may start inside it */
        void *x = make_array(&r, cells, 0, at, 1, 1.0, 0);      /* poisoned */
        const void *arr[4] = {l, d, u, rhs};
        void *xp = x;
        b = fz_byte(&r);
        int in_place = 0, bad_args = 0;
        switch (b % 8) {
        case 1: arr[b / 8 % 4] = NULL, bad_args = 1; break;
        case 2: xp = NULL, bad_args = 1; break;
        case 3: xp = rhs, in_place = 1; break;
        case 4: xp = d, bad_args = 1; break;
        case 5: xp = (char *)rhs + esize_of(at), bad_args = cells > 1; break; /* overlaps rhs but for one cell */
        default: break;
        }
        void *xbefore = malloc((size_t)cells * esize_of(at));
        void *xref = malloc((size_t)cells * esize_of(at));
        if (xp)
            memcpy(xbefore, xp, (size_t)cells * esize_of(at));
        st = tridi_adi_sweep(plan, axis, arr[0], arr[1], arr[2], arr[3], xp, NULL);
        if ((bad_args || (int)axis < 0 || (int)axis >= g.ndim) && !empty)
            REQUIRE(st != TRIDI_SUCCESS, "tridi_adi_sweep accepted a bad axis, a NULL or an aliased array");
        if (st) {
            REQUIRE(tridi_error_message()[0], "a failing tridi_adi_sweep set no message");
            if (xp)
                REQUIRE(!memcmp(xbefore, xp, (size_t)cells * esize_of(at)), "a failing tridi_adi_sweep wrote x");
        } else if (!empty) {
            check_written(&pg, plo, phi, xp, xbefore, at);
            if (!wild) {
                /* The reference from the same inputs (rhs as it was for an in-place solve). */
                memcpy(xref, xbefore, (size_t)cells * esize_of(at));
                tridi_arrays ra = {l, at, d, at, u, at, in_place ? xbefore : rhs, at, xref, at};
                REQUIRE(tu_reference_solve(&pg, axis, plo, phi, &ra) == 0, "reference: zero pivot");
                tu_system ts;
                memset(&ts, 0, sizeof ts);
                ts.grid = pg;
                ts.cells = cells;
                ts.a = ra;
                ts.a.x = xp;
                ts.x_before = xbefore;
                REQUIRE(tu_check("fuzz_adi sweep", &ts, xref, plo, phi, axis, tu_tolerance(at)) == 0,
                        "tridi_adi_sweep differs from the reference Thomas");
            }
        }
        free(xbefore);
        free(xref);
        free(l);
        free(d);
        free(u);
        free(rhs);
        free(x);

        double ms[3];
        int64_t nsteps_seen = -1;
        st = tridi_adi_timings(plan, ms, &nsteps_seen);
        if (op.profile) {
            REQUIRE(st == TRIDI_SUCCESS && nsteps_seen == steps_done, "tridi_adi_timings: wrong step count");
            for (int a = 0; a < 3; ++a)
                REQUIRE(isfinite(ms[a]) && ms[a] >= 0.0, "tridi_adi_timings: a bad time");
        } else {
            REQUIRE(st == TRIDI_ERROR_INVALID_VALUE, "tridi_adi_timings without profile");
        }
        REQUIRE(tridi_adi_synchronize(plan) == TRIDI_SUCCESS, "tridi_adi_synchronize on the CPU");
        REQUIRE(tridi_adi_destroy(plan) == TRIDI_SUCCESS, "tridi_adi_destroy");
    }
    tridi_destroy(ctx);
    free(kappa);
    for (int a = 0; a < 3; ++a)
        free(vel[a]);
    return 0;
}
