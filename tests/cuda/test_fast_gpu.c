/* FAST arithmetic on the GPU (device plans, all-float and all-double arrays; docs/api.md, "FAST arithmetic"):
 *  - accuracy: every line within |x - x*| <= 32 u cond(A, x*) |x*| (the oracle of tests/common/fast_oracle.h),
 *    on random diagonally dominant, weakly dominant (|diag| = 1.001 (|lower| + |upper|)) and widely scaled
 *    lines (rows times 10^-30..10^30), of 2 to 16384 unknowns, along x, y and z: every FAST kernel variant
 *    (strided y/z lines, staged x lines, chunks of 8 and, for float lines past 512 unknowns, 16) and the
 *    lines past 2048 unknowns that keep MOHID's kernels; cells outside the box keep their poison; the
 *    partitioned arithmetic really ran (some answers differ from a MOHID plan's on the same data);
 *  - failures: a line with a NaN is left untouched and reported with its line and cell under ON_ERROR_LINES
 *    (every other line answered) and ON_ERROR_CALL (x unchanged), with SYNC and DEFERRED verdicts; a line
 *    whose partition meets a zero pivot but whose Thomas recurrence does not is answered (lines of 40, and one
 *    there whose last diagonal is 0, the first pivot of the bottom half where two threads share a line: f64
 *    y/z lines under ON_ERROR_LINES; of 1500, which y/z solves split over a cluster of blocks; and 3072 lines
 *    of 513 and of 1500, more tiles than the blocks that run at once, the two lines past the first wave);
 *  - CUDA graphs (docs/decisions/030): a plan's solves captured on the caller's stream and replayed give the
 *    uncaptured answers bit for bit (FAST f32 and f64, MOHID mixed; short lines and lines past 2048 unknowns,
 *    whose W/G scratch the plan owns from its creation); capturing runs nothing; a NaN line in a replay is left
 *    untouched, the others answered, and the next tridi_plan_status names its line and cell, then the slot
 *    is clear; a SYNC plan's solve is refused while the stream is captured.
 * Outputs are poisoned before every solve; the seed is printed (TRIDI_SEED replays it). Exits 77 without a GPU.
 * --quick: fewer line lengths (one per kernel variant), for the sanitizers (tests/cuda/run_device.sh). */
#include "fast_oracle.h"
#include "testutil.h"

#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tridi_cuda_device_count(void); /* internal, in libtridi: lets the test skip without a GPU */

static tridi_context ctx;
static int quick;
static const char *kind_name[3] = {"dominant", "weakly dominant", "rows scaled 1e-30..1e30"};

/* Fills the box's lines of s with systems of the given kind (the halo keeps tu_system_alloc's values). */
static void fill(tu_system *s, const int64_t lo[3], const int64_t hi[3], tridi_axis axis, int kind, uint64_t *rng)
{
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t n = hi[axis] - lo[axis] + 1, nl = (hi[a1] - lo[a1] + 1) * (hi[a2] - lo[a2] + 1);
    for (int64_t l = 0; l < nl; ++l)
        for (int64_t m = 0; m < n; ++m) {
            int64_t c[3];
            const int64_t i = tu_line_cell(&s->grid, lo, hi, axis, l, m, c);
            const double d = 2.0 * tu_uniform(rng) - 1.0, f = 2.0 * tu_uniform(rng) - 1.0;
            const double sign = tu_uniform(rng) < 0.5 ? -1.0 : 1.0;
            double e = sign * (fabs(d) + fabs(f) + 0.5 + 2.0 * tu_uniform(rng));
            if (kind == 1)
                e = sign * 1.001 * (fabs(d) + fabs(f));
            const double k = kind == 2 ? pow(10.0, -30.0 + 60.0 * tu_uniform(rng)) : 1.0;
            /* the cells never read (lower at a line's first unknown, upper at its last) hold NaNs */
            tu_set((void *)s->a.lower, s->a.lower_type, i, m ? d * k : NAN);
            tu_set((void *)s->a.diag, s->a.diag_type, i, e * k);
            tu_set((void *)s->a.upper, s->a.upper_type, i, m < n - 1 ? f * k : NAN);
            tu_set((void *)s->a.rhs, s->a.rhs_type, i, (2.0 * tu_uniform(rng) - 1.0) * k);
        }
}

/* Lines of the box whose answers in x break the bound (lines in `skip` are not checked; -1: none). *worst:
 * the largest error over its bound. */
static int64_t check_bound(const char *what, const tu_system *s, const void *x, const int64_t lo[3], const int64_t hi[3],
                           tridi_axis axis, int64_t skip, double *worst)
{
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t n = hi[axis] - lo[axis] + 1, nl = (hi[a1] - lo[a1] + 1) * (hi[a2] - lo[a2] + 1);
    const tridi_dtype t = s->a.x_type;
    const long double u = t == TRIDI_FLOAT32 ? ldexpl(1.0L, -24) : ldexpl(1.0L, -53);
    long double *buf = malloc((size_t)n * 5 * sizeof *buf);
    long double *d = buf, *e = buf + n, *f = buf + 2 * n, *r = buf + 3 * n, *xs = buf + 4 * n;
    int64_t bad = 0;
    for (int64_t l = 0; l < nl; ++l) {
        if (l == skip)
            continue;
        int64_t c[3];
        for (int64_t m = 0; m < n; ++m) {
            const int64_t i = tu_line_cell(&s->grid, lo, hi, axis, l, m, c);
            d[m] = m ? tu_get(s->a.lower, t, i) : 0.0L;
            e[m] = tu_get(s->a.diag, t, i);
            f[m] = m < n - 1 ? tu_get(s->a.upper, t, i) : 0.0L;
            r[m] = tu_get(s->a.rhs, t, i);
        }
        long double bound = 0.0L, err = 0.0L;
        if (fo_line(n, d, e, f, r, u, xs, &bound)) {
            printf("FAILED %s: oracle out of memory\n", what);
            exit(1);
        }
        for (int64_t m = 0; m < n; ++m) {
            const double v = tu_get(x, t, tu_line_cell(&s->grid, lo, hi, axis, l, m, c));
            err = isfinite(v) ? fmaxl(err, fabsl((long double)v - xs[m])) : INFINITY;
        }
        const double ratio = (double)(err / bound);
        if (!(ratio <= *worst))
            *worst = ratio;
        if (!(ratio <= 1.0)) {
            if (bad < 3)
                printf("  %s: line %lld error %Lg over the bound %Lg\n", what, (long long)l, err, bound);
            ++bad;
        }
    }
    free(buf);
    return bad;
}

/* A device plan for s's types; stream NULL: the context's own. */
static tridi_plan make_plan_on(const tu_system *s, tridi_axis axis, const int64_t lo[3], const int64_t hi[3],
                               tridi_arith arith, tridi_on_error on_error, tridi_verdict verdict, void *stream)
{
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.memory = TRIDI_MEMORY_DEVICE;
    o.arith = arith;
    o.on_error = on_error;
    o.verdict = verdict;
    o.stream = stream;
    const tridi_dtype types[5] = {s->a.lower_type, s->a.diag_type, s->a.upper_type, s->a.rhs_type, s->a.x_type};
    tridi_plan plan = NULL;
    if (tridi_plan_create(ctx, &s->grid, axis, lo, hi, types, &o, &plan)) {
        printf("FAILED tridi_plan_create: %s\n", tridi_error_message());
        exit(1);
    }
    return plan;
}

static tridi_plan make_plan(const tu_system *s, tridi_axis axis, const int64_t lo[3], const int64_t hi[3],
                            tridi_arith arith, tridi_on_error on_error, tridi_verdict verdict)
{
    return make_plan_on(s, axis, lo, hi, arith, on_error, verdict, NULL);
}

/* Poisons x (host copy kept in x_before) and sends it to the device. */
static void poison(tu_system *s, tu_dev_set *dev, uint64_t *rng)
{
    tu_poison_x(s, rng);
    if (tridi_copy_to_device(ctx, dev->p[4], s->a.x, dev->bytes[4])) {
        printf("FAILED copy: %s\n", tridi_error_message());
        exit(1);
    }
}

static void fetch(tu_system *s, const tu_dev_set *dev)
{
    if (tridi_copy_to_host(ctx, s->a.x, dev->p[4], dev->bytes[4])) {
        printf("FAILED copy: %s\n", tridi_error_message());
        exit(1);
    }
}

/* A grid whose box is n along axis and n1 x n2 across it, one halo cell on every side; pad > 1: pad cells on
 * either side along x (pad 4 puts the box's rows on 16-byte boundaries where n is a multiple of 4). */
static void geometry(tridi_axis axis, int64_t n, int64_t n1, int64_t n2, int64_t pad, tridi_grid *g, int64_t lo[3],
                     int64_t hi[3])
{
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    int64_t ext[3];
    ext[axis] = n, ext[a1] = n1, ext[a2] = n2;
    g->ndim = 3;
    for (int a = 0; a < 3; ++a) {
        g->lbound[a] = a == 0 && pad > 1 ? 1 - pad : 0;
        g->ubound[a] = a == 0 && pad > 1 ? ext[a] + pad : ext[a] + 1;
        lo[a] = 1;
        hi[a] = ext[a];
    }
}

static void accuracy(tridi_dtype t, uint64_t *rng)
{
    static const int64_t all[] = {2, 3, 5, 8, 16, 17, 56, 100, 128, 257, 513, 1000, 2048, 2049, 16384};
    static const int64_t few[] = {2, 17, 56, 513, 1500, 2049};
    const int64_t *lens = quick ? few : all;
    const int nlens = quick ? (int)(sizeof few / sizeof few[0]) : (int)(sizeof all / sizeof all[0]);
    const char *tn = t == TRIDI_FLOAT32 ? "f32" : "f64";
    for (int ax = 0; ax < 3; ++ax) {
        const tridi_axis axis = (tridi_axis)ax;
        int64_t differs = 0, cells_fast = 0;
        double worst = 0.0, worst_kept = 0.0; /* lines of the FAST kernel, lines past 2048 (MOHID's kernels) */
        for (int li = 0; li < nlens; ++li)
            for (int kind = 0; kind < 3; ++kind) {
                const int64_t n = lens[li];
                /* 37 lines across the first other axis (a partial tile of 32), fewer for the longest lines */
                const int64_t n1 = n > 4096 ? 5 : 37, n2 = n > 4096 ? 2 : n > 1024 ? 2 : 3;
                tridi_grid g;
                int64_t lo[3], hi[3];
                /* x rows on 16-byte boundaries but for the weakly dominant kind (a one-cell halo: rows at every
                 * offset, their chunks shifted onto the boundaries: decision 109) */
                geometry(axis, n, n1, n2, kind == 1 ? 1 : 4, &g, lo, hi);
                tu_system s;
                tu_dev_set dev;
                if (tu_system_alloc(&s, &g, t, t, t, t, t, rng)) {
                    printf("FAILED allocation\n");
                    exit(1);
                }
                fill(&s, lo, hi, axis, kind, rng);
                if (tu_dev_upload(ctx, &s, &dev))
                    exit(1);
                const tridi_arrays da = tu_dev_arrays(&s, &dev);
                char what[160];
                snprintf(what, sizeof what, "FAST %s, axis %c, %s lines of %lld", tn, "xyz"[ax], kind_name[kind],
                         (long long)n);
                /* MOHID's arithmetic on the same data, to see that the partitioned solve ran */
                void *mohid = malloc(dev.bytes[4]);
                tridi_plan pm = make_plan(&s, axis, lo, hi, TRIDI_ARITH_MOHID, TRIDI_ON_ERROR_LINES, TRIDI_VERDICT_SYNC);
                poison(&s, &dev, rng);
                tu_expect(what, tridi_plan_solve(pm, &da), TRIDI_SUCCESS, NULL);
                fetch(&s, &dev);
                memcpy(mohid, s.a.x, dev.bytes[4]);
                tridi_plan_destroy(pm);

                tridi_plan pf = make_plan(&s, axis, lo, hi, TRIDI_ARITH_FAST, TRIDI_ON_ERROR_LINES, TRIDI_VERDICT_SYNC);
                poison(&s, &dev, rng);
                tu_expect(what, tridi_plan_solve(pf, &da), TRIDI_SUCCESS, NULL);
                fetch(&s, &dev);
                tridi_plan_destroy(pf);
                ++tu_checks;
                if (check_bound(what, &s, s.a.x, lo, hi, axis, -1, n <= 2048 ? &worst : &worst_kept)) {
                    ++tu_failures;
                    printf("FAILED %s: answers outside the stated bound\n", what);
                }
                /* cells outside the box keep their poison */
                int64_t outside = 0;
                for (int64_t i = 0; i < s.cells; ++i) {
                    int64_t c[3] = {g.lbound[0] + i % (g.ubound[0] - g.lbound[0] + 1), 0, 0};
                    const int64_t r = i / (g.ubound[0] - g.lbound[0] + 1);
                    c[1] = g.lbound[1] + r % (g.ubound[1] - g.lbound[1] + 1);
                    c[2] = g.lbound[2] + r / (g.ubound[1] - g.lbound[1] + 1);
                    const int in = c[0] >= lo[0] && c[0] <= hi[0] && c[1] >= lo[1] && c[1] <= hi[1] && c[2] >= lo[2] &&
                                   c[2] <= hi[2];
                    const size_t es = tu_esize(t);
                    if (in) {
                        if (n <= 2048 && n >= 8) {
                            ++cells_fast;
                            differs += memcmp((char *)s.a.x + i * es, (char *)mohid + i * es, es) != 0;
                        }
                    } else {
                        outside += memcmp((char *)s.a.x + i * es, (char *)s.x_before + i * es, es) != 0;
                    }
                }
                char w2[200];
                snprintf(w2, sizeof w2, "%s: cells outside the box unchanged", what);
                if (outside) {
                    printf("  %lld cells outside the box changed\n", (long long)outside);
                    tu_expect_true(w2, 0);
                } else {
                    ++tu_checks;
                }
                free(mohid);
                tu_dev_free(ctx, &dev);
                tu_system_free(&s);
            }
        char what[256];
        snprintf(what, sizeof what,
                 "FAST %s, axis %c: worst error %.3g of the bound (lines past 2048: %.3g); %lld of %lld answers of "
                 "the FAST kernel differ from MOHID's arithmetic",
                 tn, "xyz"[ax], worst, worst_kept, (long long)differs, (long long)cells_fast);
        tu_expect_true(what, differs > 0);
    }
}

/* A NaN in line `bad` and, in line `fixable`, a zero diagonal at the second unknown of the line's second
 * chunk of 8 (the partitioned solve's pivot there is 0; the Thomas recurrence's is not). */
static void failures(tridi_dtype t, uint64_t *rng)
{
    const char *tn = t == TRIDI_FLOAT32 ? "f32" : "f64";
    for (int ax = 0; ax < 3; ++ax)
        for (int variant = 0; variant < 12; ++variant) {
            if (quick && variant > 8 && variant != 10)
                continue;
            const tridi_axis axis = (tridi_axis)ax;
            const tridi_on_error oe = variant & 1 ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES;
            const tridi_verdict vd = variant & 2 ? TRIDI_VERDICT_DEFERRED : TRIDI_VERDICT_SYNC;
            /* variant & 4: lines of 1500, which float y/z solves split over a cluster of blocks (decision 057): the
             * NaN in the line's last block, the zero pivot at the first chunk's second unknown; variants 8-11:
             * 64 x 48 lines (of 513, and of 1500 from variant 10), more tiles of lines than the blocks or
             * clusters that run at once (blocks recording a failure while others count themselves done,
             * decision 100): the NaN and the zero pivot in lines past the first wave */
            const int many = variant >= 8;
            const int64_t n = many ? (variant >= 10 ? 1500 : 513) : variant & 4 ? 1500 : 40;
            const int64_t bad = many ? 3001 : 45, fixable = many ? 2002 : 7;
            const int64_t mbad = many ? 400 : variant & 4 ? 1400 : 23, mfix = many || variant & 4 ? 1 : 9;
            tridi_grid g;
            int64_t lo[3], hi[3];
            geometry(axis, n, many ? 64 : 37, many ? 48 : 3, 4, &g, lo, hi);
            tu_system s;
            tu_dev_set dev;
            if (tu_system_alloc(&s, &g, t, t, t, t, t, rng))
                exit(1);
            fill(&s, lo, hi, axis, 0, rng);
            int64_t c[3], cbad[3];
            tu_set((void *)s.a.diag, t, tu_line_cell(&g, lo, hi, axis, bad, mbad, cbad), NAN);
            /* lines of 40: chunks of 8, unknown 9 the second chunk's second; of 1500: the first chunk's second */
            const int64_t i9 = tu_line_cell(&g, lo, hi, axis, fixable, mfix, c);
            tu_set((void *)s.a.diag, t, i9, 0.0);
            tu_set((void *)s.a.lower, t, i9, 0.7);
            tu_set((void *)s.a.upper, t, i9, 0.6);
            if (n == 40) {
                /* and in line 20 a zero diagonal at the last unknown: the first pivot of tw_line's bottom half
                 * (decision 108: f64 y/z lines under ON_ERROR_LINES), never a pivot of the recurrence from the
                 * top */
                const int64_t il = tu_line_cell(&g, lo, hi, axis, 20, n - 1, c);
                tu_set((void *)s.a.diag, t, il, 0.0);
                tu_set((void *)s.a.lower, t, il, 0.7);
            }
            if (tu_dev_upload(ctx, &s, &dev))
                exit(1);
            const tridi_arrays da = tu_dev_arrays(&s, &dev);
            char what[160];
            snprintf(what, sizeof what, "FAST %s, axis %c, %s, %s: a NaN line of %lld", tn, "xyz"[ax],
                     oe == TRIDI_ON_ERROR_CALL ? "CALL" : "LINES", vd == TRIDI_VERDICT_SYNC ? "SYNC" : "DEFERRED",
                     (long long)n);
            tridi_plan plan = make_plan(&s, axis, lo, hi, TRIDI_ARITH_FAST, oe, vd);
            poison(&s, &dev, rng);
            tridi_status st = tridi_plan_solve(plan, &da);
            if (vd == TRIDI_VERDICT_DEFERRED) {
                tu_expect(what, st, TRIDI_SUCCESS, NULL);
                st = tridi_plan_status(plan);
            }
            char needle[64];
            snprintf(needle, sizeof needle, "number %lld,", (long long)bad);
            tu_expect(what, st, TRIDI_ERROR_NONFINITE, needle);
            int64_t cell[3] = {0, 0, 0};
            tridi_error_cell(cell);
            char w2[220];
            snprintf(w2, sizeof w2, "%s: the failing cell (%lld, %lld, %lld) is named", what, (long long)cbad[0],
                     (long long)cbad[1], (long long)cbad[2]);
            tu_expect_true(w2, cell[0] == cbad[0] && cell[1] == cbad[1] && cell[2] == cbad[2]);
            fetch(&s, &dev);
            if (oe == TRIDI_ON_ERROR_CALL) {
                snprintf(w2, sizeof w2, "%s: x unchanged", what);
                tu_expect_true(w2, tu_check_unchanged(w2, &s) == 0);
            } else {
                int64_t touched = 0;
                for (int64_t m = 0; m < n; ++m) {
                    const int64_t i = tu_line_cell(&g, lo, hi, axis, bad, m, c);
                    const size_t es = tu_esize(t);
                    touched += memcmp((char *)s.a.x + i * es, (char *)s.x_before + i * es, es) != 0;
                }
                snprintf(w2, sizeof w2, "%s: the failing line untouched", what);
                tu_expect_true(w2, touched == 0);
                double worst = 0.0;
                snprintf(w2, sizeof w2, "%s: every other line (the one the partition cannot pivot included) answered",
                         what);
                tu_expect_true(w2, check_bound(w2, &s, s.a.x, lo, hi, axis, bad, &worst) == 0);
            }
            tridi_plan_destroy(plan);
            /* the same plan kind without the NaN: every line answered, the zero-pivot one by the fallback */
            tu_set((void *)s.a.diag, t, tu_line_cell(&g, lo, hi, axis, bad, mbad, c), 3.0);
            tu_dev_free(ctx, &dev);
            if (tu_dev_upload(ctx, &s, &dev))
                exit(1);
            const tridi_arrays db = tu_dev_arrays(&s, &dev);
            plan = make_plan(&s, axis, lo, hi, TRIDI_ARITH_FAST, oe, vd);
            poison(&s, &dev, rng);
            snprintf(w2, sizeof w2, "FAST %s, axis %c, %s, %s: a line of %lld only the partition cannot pivot", tn,
                     "xyz"[ax], oe == TRIDI_ON_ERROR_CALL ? "CALL" : "LINES", vd == TRIDI_VERDICT_SYNC ? "SYNC" : "DEFERRED",
                     (long long)n);
            st = tridi_plan_solve(plan, &db);
            if (st == TRIDI_SUCCESS)
                st = tridi_plan_status(plan);
            tu_expect(w2, st, TRIDI_SUCCESS, NULL);
            fetch(&s, &dev);
            double worst = 0.0;
            tu_expect_true(w2, check_bound(w2, &s, s.a.x, lo, hi, axis, -1, &worst) == 0);
            tridi_plan_destroy(plan);
            tu_dev_free(ctx, &dev);
            tu_system_free(&s);
        }
}

/* Whether the device x of the box's lines other than `skip` (-1: none) equals want bit for bit, and line
 * `skip` equals s->x_before (untouched). */
static int compare_lines(tu_system *s, const tu_dev_set *dev, const void *want, const int64_t lo[3],
                         const int64_t hi[3], tridi_axis axis, int64_t skip)
{
    fetch(s, dev);
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t n = hi[axis] - lo[axis] + 1, nl = (hi[a1] - lo[a1] + 1) * (hi[a2] - lo[a2] + 1);
    const size_t es = tu_esize(s->a.x_type);
    int64_t c[3], wrong = 0;
    for (int64_t l = 0; l < nl; ++l)
        for (int64_t m = 0; m < n; ++m) {
            const int64_t i = tu_line_cell(&s->grid, lo, hi, axis, l, m, c);
            const char *ref = l == skip ? (const char *)s->x_before : (const char *)want;
            wrong += memcmp((const char *)s->a.x + i * es, ref + i * es, es) != 0;
        }
    return wrong == 0;
}

/* Plan solves captured in a CUDA graph on the caller's stream, against the same solves uncaptured. */
static void captured(tridi_dtype tl, tridi_dtype td, tridi_arith arith, uint64_t *rng)
{
    const char *tn = tl == TRIDI_FLOAT32 ? (td == TRIDI_FLOAT32 ? "f32" : "mixed") : "f64";
    cudaStream_t st;
    if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess) {
        printf("FAILED cudaStreamCreate\n");
        exit(1);
    }
    for (int ax = 0; ax < 3; ++ax)
        for (int longl = 0; longl < 2; ++longl) {
            const tridi_axis axis = (tridi_axis)ax;
            const int64_t n = longl ? 3000 : 40, bad = 5, mbad = 17;
            tridi_grid g;
            int64_t lo[3], hi[3];
            geometry(axis, n, longl ? 5 : 37, 3, 1, &g, lo, hi);
            tu_system s;
            tu_dev_set dev;
            if (tu_system_alloc(&s, &g, tl, td, tl, tl, tl, rng))
                exit(1);
            fill(&s, lo, hi, axis, 0, rng);
            if (tu_dev_upload(ctx, &s, &dev))
                exit(1);
            const tridi_arrays da = tu_dev_arrays(&s, &dev);
            char what[160], w2[240];
            snprintf(what, sizeof what, "graph: %s %s, axis %c, lines of %lld", arith == TRIDI_ARITH_FAST ? "FAST" : "MOHID",
                     tn, "xyz"[ax], (long long)n);
            tridi_plan plan = make_plan_on(&s, axis, lo, hi, arith, TRIDI_ON_ERROR_LINES, TRIDI_VERDICT_DEFERRED, st);
            tridi_plan sync_plan = make_plan_on(&s, axis, lo, hi, arith, TRIDI_ON_ERROR_LINES, TRIDI_VERDICT_SYNC, st);
            /* the uncaptured answers */
            poison(&s, &dev, rng);
            tridi_status r = tridi_plan_solve(plan, &da);
            if (!r && cudaStreamSynchronize(st) != cudaSuccess)
                r = TRIDI_ERROR_CUDA;
            if (!r)
                r = tridi_plan_status(plan);
            tu_expect(what, r, TRIDI_SUCCESS, NULL);
            fetch(&s, &dev);
            const size_t xb = dev.bytes[4];
            void *want = malloc(xb);
            memcpy(want, s.a.x, xb);
            /* two solves captured (and a SYNC plan's refused meanwhile), then the graph replayed twice */
            poison(&s, &dev, rng);
            cudaGraph_t graph = NULL;
            cudaGraphExec_t exec = NULL;
            tridi_status r1 = TRIDI_ERROR_CUDA, r2 = TRIDI_ERROR_CUDA, rs = TRIDI_SUCCESS;
            if (cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
                r1 = tridi_plan_solve(plan, &da);
                rs = tridi_plan_solve(sync_plan, &da);
                r2 = tridi_plan_solve(plan, &da);
                if (cudaStreamEndCapture(st, &graph) != cudaSuccess ||
                    cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
                    exec = NULL;
            }
            snprintf(w2, sizeof w2, "%s: captured", what);
            tu_expect(w2, r1 ? r1 : r2, TRIDI_SUCCESS, NULL);
            tu_expect_true(w2, exec != NULL);
            snprintf(w2, sizeof w2, "%s: a SYNC plan's solve refused while the stream is captured", what);
            tu_expect(w2, rs, TRIDI_ERROR_UNSUPPORTED, "captured");
            snprintf(w2, sizeof w2, "%s: capturing ran nothing", what);
            tu_expect_true(w2, cudaStreamSynchronize(st) == cudaSuccess && compare_lines(&s, &dev, s.x_before, lo, hi, axis, -1));
            if (exec) {
                r = cudaGraphLaunch(exec, st) == cudaSuccess && cudaGraphLaunch(exec, st) == cudaSuccess &&
                            cudaStreamSynchronize(st) == cudaSuccess
                        ? tridi_plan_status(plan)
                        : TRIDI_ERROR_CUDA;
                snprintf(w2, sizeof w2, "%s: replayed twice, the uncaptured answers bit for bit", what);
                tu_expect(w2, r, TRIDI_SUCCESS, NULL);
                tu_expect_true(w2, compare_lines(&s, &dev, want, lo, hi, axis, -1));
                /* a NaN in line `bad`: replays leave it untouched, answer the others, and the verdict names it */
                int64_t cbad[3];
                const int64_t ib = tu_line_cell(&g, lo, hi, axis, bad, mbad, cbad);
                const double keep = tu_get(s.a.diag, td, ib);
                tu_set((void *)s.a.diag, td, ib, NAN);
                if (tridi_copy_to_device(ctx, dev.p[1], s.a.diag, dev.bytes[1]))
                    exit(1);
                poison(&s, &dev, rng);
                r = cudaGraphLaunch(exec, st) == cudaSuccess && cudaStreamSynchronize(st) == cudaSuccess
                        ? tridi_plan_status(plan)
                        : TRIDI_ERROR_CUDA;
                char needle[64];
                snprintf(needle, sizeof needle, "number %lld,", (long long)bad);
                snprintf(w2, sizeof w2, "%s: a NaN line in a replay", what);
                tu_expect(w2, r, TRIDI_ERROR_NONFINITE, needle);
                int64_t cell[3] = {0, 0, 0};
                tridi_error_cell(cell);
                snprintf(w2, sizeof w2, "%s: a NaN line in a replay: its cell named, the line untouched, the others "
                         "answered", what);
                tu_expect_true(w2, cell[0] == cbad[0] && cell[1] == cbad[1] && cell[2] == cbad[2]);
                tu_expect_true(w2, compare_lines(&s, &dev, want, lo, hi, axis, bad));
                snprintf(w2, sizeof w2, "%s: the next status is clear", what);
                tu_expect(w2, tridi_plan_status(plan), TRIDI_SUCCESS, NULL);
                tu_set((void *)s.a.diag, td, ib, keep);
                cudaGraphExecDestroy(exec);
            }
            if (graph)
                cudaGraphDestroy(graph);
            free(want);
            tridi_plan_destroy(plan);
            tridi_plan_destroy(sync_plan);
            tu_dev_free(ctx, &dev);
            tu_system_free(&s);
        }
    cudaStreamDestroy(st);
}

int main(int argc, char **argv)
{
    quick = argc > 1 && !strcmp(argv[1], "--quick");
    uint64_t rng = tu_seed("test_fast_gpu");
    if (tridi_cuda_device_count() <= 0) {
        printf("test_fast_gpu: no GPU, skipped\n");
        return 77;
    }
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CUDA;
    if (tridi_create(&ctx, &cfg)) {
        printf("tridi_create: %s\n", tridi_error_message());
        return 1;
    }
    accuracy(TRIDI_FLOAT32, &rng);
    accuracy(TRIDI_FLOAT64, &rng);
    failures(TRIDI_FLOAT32, &rng);
    failures(TRIDI_FLOAT64, &rng);
    captured(TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_ARITH_FAST, &rng);
    captured(TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_ARITH_FAST, &rng);
    captured(TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_ARITH_MOHID, &rng);
    tridi_destroy(ctx);
    printf("test_fast_gpu: %d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
