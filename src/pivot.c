/* Pivot growth check and partial-pivoting fallback of host-array solves (tridi_config.pivoting): a pass
 * apart from the backends' kernels that runs Thomas's elimination again in double, writing nothing, and
 * measures each line's growth max_m (|L||U| row sum / |T| row sum) (docs/errors.md, "When Thomas is
 * stable"). TRIDI_PIVOT_CHECK fails the call with TRIDI_ERROR_UNSTABLE past the limit (x untouched);
 * TRIDI_PIVOT_FALLBACK answers the whole box here when a line is flagged or a pivot is zero: those lines by
 * Gaussian elimination with partial pivoting (as LAPACK's gtsv), the others by the same Thomas recurrence,
 * every line checked before any is written (the guard's CHECK_THEN_WRITE strategy, decision 053). */
#include "backend.h"
#include "thomas_core.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define TRIDI_PIVOT_GROWTH_LIMIT 1e6

typedef enum line_class {
    LINE_OK = 0,
    LINE_UNSTABLE = 1, /* growth past the limit (or an overflow in the elimination) */
    LINE_ZERO = 2,     /* a pivot of Thomas's elimination is exactly zero */
    LINE_NONFINITE = 3 /* an input value of the box is Inf or NaN */
} line_class;

typedef struct line_verdict {
    line_class cls;
    int64_t m;      /* unknown at fault: the small pivot (UNSTABLE), the zero pivot, the non-finite value */
    double growth;  /* UNSTABLE: the growth met */
    double pivot;   /* UNSTABLE: the pivot at m */
    int kind;       /* NONFINITE: which input (tridi_thomas_check_inputs) */
} line_verdict;

static inline double get(const void *base, tridi_dtype t, int64_t i)
{
    return t == TRIDI_FLOAT64 ? ((const double *)base)[i] : (double)((const float *)base)[i];
}

/* Unknown m of line l: its four coefficients (lower 0 at the first unknown, upper 0 at the last, as
 * they are never read there). */
static inline void coefficients(const tridi_problem *p, int64_t base, int64_t m, double *a, double *b, double *c,
                                double *r)
{
    const tridi_arrays *A = &p->arrays;
    const int64_t i = base + m * p->stride[p->axis];
    *a = m ? get(A->lower, A->lower_type, i) : 0.0;
    *b = get(A->diag, A->diag_type, i);
    *c = m < p->n - 1 ? get(A->upper, A->upper_type, i) : 0.0;
    *r = get(A->rhs, A->rhs_type, i);
}

static line_verdict classify(const tridi_problem *p, int64_t l)
{
    line_verdict v = {LINE_OK, 0, 0.0, 0.0, 0};
    const int64_t base = tridi_line_offset(p, l);
    double w = 0.0, prev_pivot = 0.0;
    for (int64_t m = 0; m < p->n; ++m) {
        double a, b, c, r;
        coefficients(p, base, m, &a, &b, &c, &r);
        const int kind = tridi_thomas_check_inputs(a, b, c, r);
        if (kind) {
            v.cls = LINE_NONFINITE;
            v.m = m;
            v.kind = kind;
            return v;
        }
        if (v.cls != LINE_OK)
            continue; /* flagged already: only non-finite inputs are still looked for */
        const double pivot = tridi_exact_pivot(a, b, w); /* the Thomas core's step, as the solve pivots */
        if (pivot == 0.0) {
            v.cls = LINE_ZERO;
            v.m = m;
            continue;
        }
        const double growth = (fabs(a) + fabs(a * w) + fabs(pivot) + fabs(c)) / (fabs(a) + fabs(b) + fabs(c));
        if (!(growth <= TRIDI_PIVOT_GROWTH_LIMIT)) { /* NaN too: an overflow in the elimination */
            v.cls = LINE_UNSTABLE;
            v.m = m ? m - 1 : 0; /* the pivot whose smallness made w large */
            v.growth = growth;
            v.pivot = m ? prev_pivot : pivot;
        }
        w = tridi_exact_wdiv(c, pivot);
        prev_pivot = pivot;
    }
    return v;
}

/* The class of lines l0 .. l0+nb-1, neighbours along the first line axis (x, contiguous in memory: the
 * solve runs along y or z), swept together unknown by unknown so that the pass streams through memory
 * as the backends do instead of striding through it line by line. The same tests as classify. */
#define CLASSIFY_BLOCK 64
#if defined(__GNUC__)
#define TRIDI_INLINE static inline __attribute__((always_inline))
#else
#define TRIDI_INLINE static inline
#endif
/* One unknown m of the block's lines, branch-free so that it vectorises across them: flags gather bit 4
 * for a non-finite input, bit 2 for a zero pivot and bit 1 for growth past the limit, the first of the
 * two last only (what classify decides, the order of events included). t: the type of lower, upper and
 * rhs, dt: diag's; has_lower / has_upper: m is not the first / last unknown. Constants at every call, so
 * each combination gets its own loop. */
TRIDI_INLINE void classify_unknown(const tridi_arrays *A, int64_t o, int64_t nb, double *w, unsigned char *flags,
                                   tridi_dtype t, tridi_dtype dt, int has_lower, int has_upper)
{
    for (int64_t b = 0; b < nb; ++b) {
        const double a = has_lower ? get(A->lower, t, o + b) : 0.0;
        const double d = get(A->diag, dt, o + b);
        const double c = has_upper ? get(A->upper, t, o + b) : 0.0;
        const double r = get(A->rhs, t, o + b);
        const int bad = !(a * 0.0 + d * 0.0 + c * 0.0 + r * 0.0 == 0.0); /* Inf * 0 and NaN are NaN */
        const double pivot = tridi_exact_pivot(a, d, w[b]);
        const int zero = pivot == 0.0;
        /* classify's growth test without its division; NaN (an overflow) fails it as there */
        const int grows = !(fabs(a) + fabs(a * w[b]) + fabs(pivot) + fabs(c) <=
                            TRIDI_PIVOT_GROWTH_LIMIT * (fabs(a) + fabs(d) + fabs(c)));
        const int open = !(flags[b] & 3);
        flags[b] |= (unsigned char)((bad ? 4 : 0) | (open && zero ? 2 : 0) | (open && !zero && grows ? 1 : 0));
        w[b] = tridi_exact_wdiv(c, zero ? 1.0 : pivot);
    }
}

TRIDI_INLINE void classify_block_typed(const tridi_problem *p, int64_t l0, int64_t nb, unsigned char *cls,
                                       tridi_dtype t, tridi_dtype dt)
{
    double w[CLASSIFY_BLOCK];
    unsigned char flags[CLASSIFY_BLOCK];
    const tridi_arrays *A = &p->arrays;
    const int64_t base = tridi_line_offset(p, l0), st = p->stride[p->axis], n = p->n;
    for (int64_t b = 0; b < nb; ++b) {
        w[b] = 0.0;
        flags[b] = 0;
    }
    if (n == 1) {
        classify_unknown(A, base, nb, w, flags, t, dt, 0, 0);
    } else {
        classify_unknown(A, base, nb, w, flags, t, dt, 0, 1);
        for (int64_t m = 1; m < n - 1; ++m)
            classify_unknown(A, base + m * st, nb, w, flags, t, dt, 1, 1);
        classify_unknown(A, base + (n - 1) * st, nb, w, flags, t, dt, 1, 0);
    }
    for (int64_t b = 0; b < nb; ++b)
        cls[b] = flags[b] & 4 ? LINE_NONFINITE : flags[b] & 2 ? LINE_ZERO : flags[b] & 1 ? LINE_UNSTABLE : LINE_OK;
}

static void classify_block(const tridi_problem *p, int64_t l0, int64_t nb, unsigned char *cls)
{
    switch (p->combo) {
    case TRIDI_COMBO_F64: classify_block_typed(p, l0, nb, cls, TRIDI_FLOAT64, TRIDI_FLOAT64); break;
    case TRIDI_COMBO_MIXED: classify_block_typed(p, l0, nb, cls, TRIDI_FLOAT32, TRIDI_FLOAT64); break;
    default: classify_block_typed(p, l0, nb, cls, TRIDI_FLOAT32, TRIDI_FLOAT32); break;
    }
}

/* Every line's class. */
static void classify_all(const tridi_problem *p, int nt, unsigned char *cls)
{
    (void)nt;
    if (p->axis == TRIDI_AXIS_X) {
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
        for (int64_t l = 0; l < p->nlines; ++l)
            cls[l] = (unsigned char)classify(p, l).cls;
        return;
    }
    const int64_t per_row = (p->n1 + CLASSIFY_BLOCK - 1) / CLASSIFY_BLOCK, nblocks = per_row * p->n2;
#ifdef _OPENMP
#pragma omp parallel for num_threads(nt) schedule(static)
#endif
    for (int64_t k = 0; k < nblocks; ++k) {
        const int64_t l2 = k / per_row, b1 = (k % per_row) * CLASSIFY_BLOCK;
        const int64_t nb = p->n1 - b1 < CLASSIFY_BLOCK ? p->n1 - b1 : CLASSIFY_BLOCK;
        classify_block(p, l2 * p->n1 + b1, nb, cls + l2 * p->n1 + b1);
    }
}

/* Per-thread scratch of the fallback: five arrays of n doubles. */
typedef struct line_work {
    double *u0, *u1, *u2, *y, *x;
} line_work;

/* Thomas on line l, the backends' careful path (src/thomas_core.h: MOHID's divisions, pivots in double or,
 * in MOHID's NewType arithmetic on float upper values, in float; each answer rounded to x's type before
 * the next unknown uses it; docs/decisions/040). Answers in work->x. Returns
 * TRIDI_FAIL_NONE or the kind of the line's first failure, at *fm. */
static int thomas_line(const tridi_problem *p, int64_t l, line_work *work, int64_t *fm)
{
    const int64_t base = tridi_line_offset(p, l), n = p->n;
    const int xdbl = p->arrays.x_type == TRIDI_FLOAT64;
    const int f32 = tridi_newtype_pivot_f32(p);
    double w = 0.0, g = 0.0;
    for (int64_t m = 0; m < n; ++m) {
        double a, b, c, r;
        coefficients(p, base, m, &a, &b, &c, &r);
        const int kind = tridi_thomas_forward_newtype(a, b, c, r, m == 0, m == n - 1, f32, &w, &g);
        if (kind) {
            *fm = m;
            return kind;
        }
        work->u1[m] = w;
        work->y[m] = g;
    }
    double next = 0.0;
    for (int64_t m = n - 1; m >= 0; --m) {
        next = tridi_thomas_back(work->u1[m], work->y[m], next, m == n - 1, xdbl);
        if (!tridi_thomas_finite(next)) {
            *fm = m;
            return TRIDI_FAIL_ANSWER_OVERFLOW;
        }
        work->x[m] = next;
    }
    return TRIDI_FAIL_NONE;
}

/* Gaussian elimination with partial pivoting on line l. Step m keeps an active row (p at column m, q at
 * column m+1; nothing further right) and meets the next original row (lower, diag, upper at columns m,
 * m+1, m+2): the one with the larger entry in column m becomes row m of U, the other, minus a multiple
 * of it, the next active row. Row m of U is (u0, u1, u2) at columns m, m+1, m+2; u2 is non-zero only
 * after an interchange. Returns TRIDI_FAIL_NONE, TRIDI_FAIL_SINGULAR when column *fm has no non-zero
 * pivot, or TRIDI_FAIL_ANSWER_OVERFLOW when the answer at *fm does not fit x's type. */
static int pivoted_line(const tridi_problem *p, int64_t l, line_work *work, int64_t *fm)
{
    const int64_t base = tridi_line_offset(p, l), n = p->n;
    double a, b, c, r;
    coefficients(p, base, 0, &a, &b, &c, &r);
    double pa = b, qa = c, ra = r; /* the active row */
    for (int64_t m = 0; m + 1 < n; ++m) {
        coefficients(p, base, m + 1, &a, &b, &c, &r);
        if (fabs(pa) >= fabs(a)) {
            if (pa == 0.0) {
                *fm = m;
                return TRIDI_FAIL_SINGULAR;
            }
            const double f = a / pa;
            work->u0[m] = pa;
            work->u1[m] = qa;
            work->u2[m] = 0.0;
            work->y[m] = ra;
            pa = b - f * qa;
            qa = c;
            ra = r - f * ra;
        } else {
            const double f = pa / a;
            work->u0[m] = a;
            work->u1[m] = b;
            work->u2[m] = c;
            work->y[m] = r;
            pa = qa - f * b;
            qa = -f * c;
            ra = ra - f * r;
        }
    }
    if (pa == 0.0) {
        *fm = n - 1;
        return TRIDI_FAIL_SINGULAR;
    }
    work->u0[n - 1] = pa;
    work->y[n - 1] = ra;
    const int xdbl = p->arrays.x_type == TRIDI_FLOAT64;
    double x1 = 0.0, x2 = 0.0; /* the answers at m+1 and m+2, in double */
    for (int64_t m = n - 1; m >= 0; --m) {
        double v = work->y[m];
        if (m + 1 < n)
            v -= work->u1[m] * x1;
        if (m + 2 < n)
            v -= work->u2[m] * x2;
        v /= work->u0[m];
        const double stored = tridi_thomas_round(v, xdbl);
        if (!tridi_thomas_finite(stored)) {
            *fm = m;
            return TRIDI_FAIL_ANSWER_OVERFLOW;
        }
        work->x[m] = stored;
        x2 = x1;
        x1 = v;
    }
    return TRIDI_FAIL_NONE;
}

static void store_line(const tridi_problem *p, int64_t l, const line_work *work)
{
    const int64_t base = tridi_line_offset(p, l), st = p->stride[p->axis];
    for (int64_t m = 0; m < p->n; ++m) {
        if (p->arrays.x_type == TRIDI_FLOAT64)
            ((double *)p->arrays.x)[base + m * st] = work->x[m];
        else
            ((float *)p->arrays.x)[base + m * st] = (float)work->x[m];
    }
}

static int thread_count(tridi_context ctx)
{
#ifdef _OPENMP
    return tridi_cpu_threads(ctx);
#else
    (void)ctx;
    return 1;
#endif
}

/* The fallback's own solve of the whole box: pass 0 only checks that every line can be answered (the
 * first failing line in *bad_line, INT64_MAX when none, and its failure in *bad), pass 1 writes x.
 * scratch: 5 n doubles for each of nt threads. */
static void answer_box(const tridi_problem *p, const unsigned char *cls, int nt, double *scratch, int write,
                       int64_t *bad_line, tridi_thomas_fail *bad)
{
    int64_t first = INT64_MAX;
    tridi_thomas_fail fail = {0, TRIDI_FAIL_NONE};
    (void)nt;
#ifdef _OPENMP
#pragma omp parallel num_threads(nt)
#endif
    {
#ifdef _OPENMP
        double *mem = scratch + (size_t)omp_get_thread_num() * 5 * (size_t)p->n;
#else
        double *mem = scratch;
#endif
        line_work work = {mem, mem + p->n, mem + 2 * p->n, mem + 3 * p->n, mem + 4 * p->n};
        int64_t my_first = INT64_MAX;
        tridi_thomas_fail my_fail = {0, TRIDI_FAIL_NONE};
#ifdef _OPENMP
#pragma omp for schedule(static)
#endif
        for (int64_t l = 0; l < p->nlines; ++l) {
            if (l > my_first)
                continue;
            int64_t fm = 0;
            int kind;
            if (cls[l] == LINE_NONFINITE) { /* fails whatever the elimination: its first non-finite input */
                const line_verdict v = classify(p, l);
                fm = v.m;
                kind = v.kind;
            } else {
                kind = cls[l] == LINE_OK ? thomas_line(p, l, &work, &fm) : pivoted_line(p, l, &work, &fm);
            }
            if (kind) {
                my_first = l;
                my_fail = (tridi_thomas_fail){fm, kind};
            } else if (write) {
                store_line(p, l, &work);
            }
        }
#ifdef _OPENMP
#pragma omp critical(tridi_pivot_first)
#endif
        {
            if (my_first < first) {
                first = my_first;
                fail = my_fail;
            }
        }
    }
    *bad_line = first;
    *bad = fail;
}

tridi_status tridi_pivot_solve(const char *func, tridi_context ctx, const tridi_problem *p,
                               const tridi_backend_ops *ops)
{
    unsigned char *cls = malloc((size_t)p->nlines);
    if (!cls)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not allocate %lld bytes for the pivot check", func,
                          (long long)p->nlines);
    const int nt = thread_count(ctx);
    (void)nt;
    classify_all(p, nt, cls);
    int64_t count[4] = {0, 0, 0, 0}, first[4] = {-1, -1, -1, -1};
    for (int64_t l = 0; l < p->nlines; ++l) {
        if (first[cls[l]] < 0)
            first[cls[l]] = l;
        count[cls[l]]++;
    }

    tridi_status s = TRIDI_SUCCESS;
    if (p->pivoting == TRIDI_PIVOT_CHECK || (!count[LINE_UNSTABLE] && !count[LINE_ZERO])) {
        /* The call fails before the backend runs: the first failing line is named, an unstable one or a
         * line with a zero pivot or a non-finite input before it. */
        int64_t lowest = first[LINE_UNSTABLE];
        for (int c = LINE_ZERO; c <= LINE_NONFINITE && count[LINE_UNSTABLE]; ++c)
            if (first[c] >= 0 && first[c] < lowest)
                lowest = first[c];
        if (count[LINE_UNSTABLE] && lowest != first[LINE_UNSTABLE]) {
            const line_verdict v = classify(p, lowest);
            s = tridi_thomas_report(func, p, lowest,
                                    (tridi_thomas_fail){v.m, v.cls == LINE_ZERO ? TRIDI_FAIL_ZERO_PIVOT : v.kind});
        } else if (count[LINE_UNSTABLE]) {
            const line_verdict v = classify(p, first[LINE_UNSTABLE]);
            char what[256];
            snprintf(what, sizeof what,
                     "%s: a pivot of %.3g makes the elimination without pivoting grow %.3g times "
                     "(limit %.0e; %lld line%s like this; TRIDI_PIVOT_FALLBACK re-solves them with partial pivoting)",
                     tridi_fail_text(TRIDI_FAIL_UNSTABLE), v.pivot, v.growth, TRIDI_PIVOT_GROWTH_LIMIT, (long long)count[LINE_UNSTABLE],
                     count[LINE_UNSTABLE] == 1 ? "" : "s");
            s = tridi_fail_numeric(func, p, tridi_fail_status(TRIDI_FAIL_UNSTABLE), first[LINE_UNSTABLE], v.m, what);
        } else {
            tridi_problem q = *p;
            q.pivoting = TRIDI_PIVOT_NONE;
            s = tridi_guard_solve(ctx, ops, &q, TRIDI_MEMORY_HOST, NULL, NULL, NULL);
        }
        free(cls);
        return s;
    }

    /* FALLBACK with lines Thomas cannot be trusted on: this pass answers the box, or names its first
     * failing line (a line singular even with pivoting before one with a non-finite input included). */
    double *scratch = malloc(sizeof(double) * 5 * (size_t)p->n * (size_t)nt);
    if (!scratch) {
        free(cls);
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not allocate the partial-pivoting scratch (%lld "
                          "unknowns per line, %d threads)", func, (long long)p->n, nt);
    }
    int64_t bad_line = 0;
    tridi_thomas_fail bad;
    answer_box(p, cls, nt, scratch, 0, &bad_line, &bad);
    if (bad_line != INT64_MAX) {
        s = tridi_thomas_report(func, p, bad_line, bad);
        free(scratch);
        free(cls);
        return s;
    }
    answer_box(p, cls, nt, scratch, 1, &bad_line, &bad); /* the check's own computations: cannot fail now */
    free(scratch);
    free(cls);
    return TRIDI_SUCCESS;
}
