/* TRIDI_ARITH_FAST on all-float arrays (issue 26, decision 3), on a validated problem whose arith is set
 * here (the plan API that lets callers choose it comes later; this test links libtridi's internals). Its
 * stated bound, per line, in the max norm: |x - x*| <= 32 u cond(A, x*) |x*|, u = 2^-24,
 * cond(A, x) = || |A^-1| |A| |x| || / ||x||, x* from a long double oracle. Systems: random diagonally
 * dominant, weakly dominant (|diag| = 1.001 (|lower| + |upper|)), and rows scaled by 10^-20..10^20. On y and
 * z the float recurrence must actually run (some answers differ from MOHID's arithmetic). Every axis, 1
 * and 3 threads, vector and portable kernels (ctest runs it with TRIDI_CPU_GENERIC too). */
#include "testutil.h"
#include "backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A CPU solve of p as every entry point makes it: through the one guard (src/backend.h). */
static tridi_status guarded(tridi_context ctx, const tridi_problem *p)
{
    return tridi_guard_solve(ctx, tridi_backend_of(ctx), p, TRIDI_MEMORY_HOST, NULL, NULL, NULL);
}

#define NX 37
#define NY 21
#define NZ 19
#define NMAX 40

static const int64_t LO[3] = {1, 1, 1}, HI[3] = {NX, NY, NZ};

static int64_t cell_of(const tridi_grid *g, tridi_axis axis, int64_t l, int64_t m)
{
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t n1 = HI[a1] - LO[a1] + 1;
    int64_t c[3];
    c[axis] = LO[axis] + m;
    c[a1] = LO[a1] + l % n1;
    c[a2] = LO[a2] + l / n1;
    return tu_index(g, c[0], c[1], c[2]);
}

/* Solves the line's matrix (d, e, f) with right-hand side r in long double. */
static void thomas_ld(int64_t n, const long double *d, const long double *e, const long double *f,
                      const long double *r, long double *x)
{
    long double w[NMAX], g[NMAX];
    for (int64_t m = 0; m < n; ++m) {
        const long double den = e[m] + (m ? d[m] * w[m - 1] : 0.0L);
        w[m] = m < n - 1 ? -f[m] / den : 0.0L;
        g[m] = (r[m] - (m ? d[m] * g[m - 1] : 0.0L)) / den;
    }
    for (int64_t m = n - 1; m >= 0; --m)
        x[m] = m == n - 1 ? g[m] : w[m] * x[m + 1] + g[m];
}

/* Lines whose answers break the bound; *differs counts cells whose answer differs from `mohid`. */
static int64_t check_bound(const char *what, const tu_system *s, tridi_axis axis, const float *mohid,
                           int64_t *differs)
{
    const int64_t n = HI[axis] - LO[axis] + 1;
    int64_t nl = 1, bad = 0;
    for (int a = 0; a < 3; ++a)
        nl *= a == (int)axis ? 1 : HI[a] - LO[a] + 1;
    const float *D = s->a.lower, *E = s->a.diag, *F = s->a.upper, *R = s->a.rhs, *X = s->a.x;
    for (int64_t l = 0; l < nl; ++l) {
        long double d[NMAX], e[NMAX], f[NMAX], r[NMAX], x[NMAX], col[NMAX], unit[NMAX], v[NMAX], c[NMAX];
        int64_t idx[NMAX];
        for (int64_t m = 0; m < n; ++m) {
            idx[m] = cell_of(&s->grid, axis, l, m);
            d[m] = m ? D[idx[m]] : 0.0L, e[m] = E[idx[m]], f[m] = m < n - 1 ? F[idx[m]] : 0.0L, r[m] = R[idx[m]];
        }
        thomas_ld(n, d, e, f, r, x);
        long double xn = 0.0L, err = 0.0L, cn = 0.0L;
        for (int64_t m = 0; m < n; ++m) {
            xn = fmaxl(xn, fabsl(x[m]));
            v[m] = fabsl(e[m] * x[m]) + (m ? fabsl(d[m] * x[m - 1]) : 0.0L) + (m < n - 1 ? fabsl(f[m] * x[m + 1]) : 0.0L);
            c[m] = 0.0L;
            const double got = X[idx[m]];
            err = isfinite(got) ? fmaxl(err, fabsl((long double)got - x[m])) : INFINITY;
            *differs += memcmp(X + idx[m], mohid + idx[m], sizeof(float)) != 0;
        }
        for (int64_t j = 0; j < n; ++j) { /* column j of A^-1, then c += |A^-1(:, j)| v(j) */
            for (int64_t m = 0; m < n; ++m)
                unit[m] = m == j;
            thomas_ld(n, d, e, f, unit, col);
            for (int64_t m = 0; m < n; ++m)
                c[m] += fabsl(col[m]) * v[j];
        }
        for (int64_t m = 0; m < n; ++m)
            cn = fmaxl(cn, c[m]);
        const long double bound = 32.0L * ldexpl(1.0L, -24) * cn; /* = 32 u cond(A, x) ||x|| */
        if (!(err <= bound)) {
            if (bad < 3)
                printf("  %s: line %lld error %Lg over the bound %Lg (|x| %Lg)\n", what, (long long)l, err, bound, xn);
            ++bad;
        }
    }
    return bad;
}

int main(void)
{
    uint64_t rng = tu_seed("test_fast_arith");
    const tridi_grid grid = {3, {0, 0, 0}, {NX + 1, NY + 1, NZ + 1}};
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    static const char *case_name[3] = {"dominant", "weakly dominant", "rows scaled 1e-20..1e20"};
    const int threads[2] = {1, 3};
    for (int t = 0; t < 2; ++t) {
        cfg.num_threads = threads[t];
        tridi_context ctx;
        tu_expect("create context", tridi_create(&ctx, &cfg), TRIDI_SUCCESS, NULL);
        for (int ax = 0; ax < 3; ++ax)
            for (int kase = 0; kase < 3; ++kase) {
                const tridi_axis axis = (tridi_axis)ax;
                tu_system s;
                if (tu_system_alloc(&s, &grid, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32,
                                    TRIDI_FLOAT32, &rng)) {
                    printf("FAILED: allocation\n");
                    return 1;
                }
                float *D = (float *)s.a.lower, *E = (float *)s.a.diag, *F = (float *)s.a.upper, *R = (float *)s.a.rhs;
                for (int64_t i = 0; i < s.cells; ++i) {
                    if (kase == 1) {
                        D[i] = (float)(0.5 + 0.5 * tu_uniform(&rng)) * (tu_uniform(&rng) < 0.5 ? -1.0f : 1.0f);
                        F[i] = (float)(0.5 + 0.5 * tu_uniform(&rng)) * (tu_uniform(&rng) < 0.5 ? -1.0f : 1.0f);
                        E[i] = 1.001f * (fabsf(D[i]) + fabsf(F[i])) * (tu_uniform(&rng) < 0.5 ? -1.0f : 1.0f);
                    } else if (kase == 2) {
                        const float k = (float)pow(10.0, -20.0 + 40.0 * tu_uniform(&rng));
                        D[i] *= k, E[i] *= k, F[i] *= k, R[i] *= k;
                    }
                }
                tridi_problem p;
                int empty = 0;
                tu_expect("validate", tridi_validate("test", &grid, axis, LO, HI, &s.a, 1, &p, &empty), TRIDI_SUCCESS,
                          NULL);
                char what[128];
                snprintf(what, sizeof what, "FAST, %s, axis %c, %d thread(s)", case_name[kase], "xyz"[ax], threads[t]);
                tu_poison_x(&s, &rng);
                p.arith = TRIDI_ARITH_MOHID;
                tu_expect(what, guarded(ctx, &p), TRIDI_SUCCESS, NULL);
                float *mohid = malloc((size_t)s.cells * sizeof(float));
                memcpy(mohid, s.a.x, (size_t)s.cells * sizeof(float));
                tu_poison_x(&s, &rng);
                p.arith = TRIDI_ARITH_FAST;
                tu_expect(what, guarded(ctx, &p), TRIDI_SUCCESS, NULL);
                int64_t differs = 0;
                tu_checks++;
                if (check_bound(what, &s, axis, mohid, &differs)) {
                    tu_failures++;
                    printf("FAILED %s: answers outside the stated bound\n", what);
                }
                if (axis != TRIDI_AXIS_X) {
                    tu_checks++;
                    if (!differs) {
                        tu_failures++;
                        printf("FAILED %s: every answer equals MOHID's arithmetic: the float recurrence did not run\n",
                               what);
                    }
                }
                free(mohid);
                tu_system_free(&s);
            }
        tridi_destroy(ctx);
    }
    printf("test_fast_arith: %d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
