/* The distributed solve on lines cut between ranks must be as stable as the one-rank Thomas (issue 24
 * item 1): lines where a rank's block starts on a tiny or zero diagonal that the one-rank sweep never
 * uses as a pivot, weakly dominant, widely scaled and non-dominant lines, each with its hard spot at
 * every position of the line and the box shifted so that the rank boundaries fall everywhere. Every
 * rank builds the same global 2D system (seed from rank 0), cut along i over all ranks; each line is
 * solved whole by tridi_solve on one rank and by tridi_mpi_solve, and both are compared with a
 * long-double solve with partial pivoting (the oracle): the distributed answer's error must stay within
 * 10 times the one-rank answer's plus the type's tolerance, and every status must be the one-rank
 * one. "--device": the distributed solve on GPUs (device arrays). */
#include "mpi_testutil.h"
#include "tridi_mpi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int device_mode;
static tridi_context ctx, cpu;

enum { KIND_DOMINANT, KIND_WEAK, KIND_SCALED, KIND_TINY, KIND_ZERO, KIND_GENERAL, NKINDS };
static const char *kind_name[NKINDS] = {"dominant", "weakly dominant", "widely scaled", "diag 1e-17", "diag 0",
                                        "not dominant"};

static const tridi_dtype combos[3][5] = {
    {TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64},
    {TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32}, /* MOHID */
    {TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32},
};
static const char *combo_name[3] = {"f64", "mixed", "f32"};

/* Decades of the scaled kind: 60 in double, 12 when the values are stored in float. */
static double scale_decades = 60.0;

static double sym(uint64_t *rng) { return 2.0 * tu_uniform(rng) - 1.0; }

/* One line of L unknowns (a: lower, b: diag, c: upper, r: rhs) of the given kind, its hard spot at p. */
static void make_line(int kind, int64_t L, int64_t p, double *a, double *b, double *c, double *r, uint64_t *rng)
{
    for (int64_t m = 0; m < L; ++m) {
        a[m] = sym(rng);
        c[m] = sym(rng);
        r[m] = sym(rng);
        double s = tu_uniform(rng) < 0.5 ? -1.0 : 1.0;
        switch (kind) {
        case KIND_DOMINANT: b[m] = s * (fabs(a[m]) + fabs(c[m]) + 0.5 + tu_uniform(rng)); break;
        case KIND_WEAK: b[m] = s * (fabs(a[m]) + fabs(c[m])) * (m == p ? 1.5 : 1.0); break;
        case KIND_SCALED: b[m] = s * (fabs(a[m]) + fabs(c[m]) + 0.5); break;
        case KIND_TINY:
        case KIND_ZERO:
            a[m] = 0.5 + 0.5 * tu_uniform(rng);
            c[m] = 0.5 + 0.5 * tu_uniform(rng);
            b[m] = s * (2.5 + tu_uniform(rng));
            break;
        default: b[m] = sym(rng); break;
        }
    }
    if (kind == KIND_SCALED) {
        /* Rows and columns scaled by 10^-60 .. 10^60 (x_m scaled by 1/cs[m]): a different problem to
         * each block's elimination, the same one to an exact solver. */
        double cs[64];
        for (int64_t m = 0; m < L; ++m)
            cs[m] = pow(10.0, scale_decades * (2.0 * tu_uniform(rng) - 1.0));
        for (int64_t m = 0; m < L; ++m) {
            double rs = pow(10.0, scale_decades * (2.0 * tu_uniform(rng) - 1.0));
            a[m] *= rs * (m > 0 ? cs[m - 1] : 1.0);
            b[m] *= rs * cs[m];
            c[m] *= rs * (m < L - 1 ? cs[m + 1] : 1.0);
            r[m] *= rs;
        }
    }
    /* A zero first pivot fails the one-rank solve too: that case belongs to the failure tests. */
    if (kind == KIND_TINY)
        b[p] = 1e-17;
    if (kind == KIND_ZERO && p > 0)
        b[p] = 0.0;
}

/* The oracle: Gaussian elimination with partial pivoting (LAPACK gtsv's scheme) in long double, on the
 * values as stored. Returns 0, or -1 if the line is singular in long double. */
static int oracle(int64_t L, const double *a, const double *b, const double *c, const double *r, long double *x)
{
    long double *dl = calloc((size_t)L, sizeof(long double)), *d = calloc((size_t)L, sizeof(long double));
    long double *du = calloc((size_t)L, sizeof(long double)), *du2 = calloc((size_t)L, sizeof(long double));
    int bad = 0;
    for (int64_t m = 0; m < L; ++m) {
        d[m] = b[m];
        dl[m] = m > 0 ? a[m] : 0.0L; /* dl[m]: row m's entry left of the diagonal */
        du[m] = m < L - 1 ? c[m] : 0.0L;
        x[m] = r[m];
    }
    for (int64_t m = 0; m < L - 1; ++m) {
        /* Rows m and m+1: pivot on the larger entry of column m. */
        if (fabsl(dl[m + 1]) > fabsl(d[m])) {
            long double t;
            t = d[m]; d[m] = dl[m + 1]; dl[m + 1] = t;
            t = du[m]; du[m] = d[m + 1]; d[m + 1] = t;
            du2[m] = du[m + 1]; du[m + 1] = 0.0L;
            t = x[m]; x[m] = x[m + 1]; x[m + 1] = t;
            long double f = dl[m + 1] / d[m];
            d[m + 1] -= f * du[m];
            du[m + 1] -= f * du2[m];
            x[m + 1] -= f * x[m];
        } else {
            if (d[m] == 0.0L) {
                bad = 1;
                break;
            }
            long double f = dl[m + 1] / d[m];
            d[m + 1] -= f * du[m];
            x[m + 1] -= f * x[m];
            du2[m] = 0.0L;
        }
    }
    if (!bad && d[L - 1] == 0.0L)
        bad = 1;
    if (!bad)
        for (int64_t m = L - 1; m >= 0; --m) {
            long double v = x[m];
            if (m + 1 < L)
                v -= du[m] * x[m + 1];
            if (m + 2 < L)
                v -= du2[m] * x[m + 2];
            x[m] = v / d[m];
        }
    free(dl);
    free(d);
    free(du);
    free(du2);
    return bad ? -1 : 0;
}

/* One call: N cells along i (cut over all ranks), ny lines along j, box lo0..hi0 along i; line j gets
 * kinds[j - 1] with its hard spot at spot[j - 1] (relative to the box); bitwise: the answers must also be
 * the one-rank CPU ones bit for bit (lines the partition must not take; on one rank with --device the
 * GPU's own Thomas solves them), and the errors are printed. Returns the failures of all ranks. */
static long run_call(const char *title, int64_t N, int64_t ny, int64_t lo0, int64_t hi0, const int *kinds,
                     const int64_t *spot, int combo, uint64_t *rng, int bitwise)
{
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    tridi_decomp_config cfg;
    tridi_decomp_config_init(&cfg);
    cfg.ndim = 2;
    cfg.lo[0] = cfg.lo[1] = 1;
    cfg.hi[0] = N;
    cfg.hi[1] = ny;
    cfg.dims[0] = nranks;
    cfg.dims[1] = 1;
    tridi_decomp d;
    if (tridi_decomp_create(&d, MPI_Comm_c2f(MPI_COMM_WORLD), &cfg)) {
        printf("rank %d %s: tridi_decomp_create: %s\n", rank, title, tridi_error_message());
        return mt_total(1);
    }
    tridi_decomp_info in;
    tridi_decomp_get_info(d, &in);
    const tridi_dtype *ty = combos[combo];
    tridi_grid gg = {2, {0, 0, 1}, {N + 1, ny + 1, 1}};
    tu_system gs, ls;
    tu_system_alloc(&gs, &gg, ty[0], ty[1], ty[2], ty[3], ty[4], rng); /* the same draws on every rank */
    uint64_t lrng = *rng ^ (uint64_t)(rank + 1) * 0x9e3779b97f4a7c15ull;
    tu_system_alloc(&ls, &in.grid, ty[0], ty[1], ty[2], ty[3], ty[4], &lrng);
    const int64_t L = hi0 - lo0 + 1;
    scale_decades = ty[1] == TRIDI_FLOAT64 && ty[0] == TRIDI_FLOAT64 ? 60.0 : 12.0;
    double a[64], b[64], c[64], r[64];
    for (int64_t j = 1; j <= ny; ++j) {
        make_line(kinds[j - 1], L, spot[j - 1], a, b, c, r, rng);
        for (int64_t m = 0; m < L; ++m) {
            int64_t o = tu_index(&gg, lo0 + m, j, 1);
            tu_set((void *)gs.a.lower, ty[0], o, a[m]);
            tu_set((void *)gs.a.diag, ty[1], o, b[m]);
            tu_set((void *)gs.a.upper, ty[2], o, c[m]);
            tu_set((void *)gs.a.rhs, ty[3], o, r[m]);
        }
    }
    for (int64_t j = in.grid.lbound[1]; j <= in.grid.ubound[1]; ++j)
        for (int64_t i = in.grid.lbound[0]; i <= in.grid.ubound[0]; ++i) {
            int64_t go = tu_index(&gg, i, j, 1), lo_ = tu_index(&in.grid, i, j, 1);
            tu_set((void *)ls.a.lower, ty[0], lo_, tu_get(gs.a.lower, ty[0], go));
            tu_set((void *)ls.a.diag, ty[1], lo_, tu_get(gs.a.diag, ty[1], go));
            tu_set((void *)ls.a.upper, ty[2], lo_, tu_get(gs.a.upper, ty[2], go));
            tu_set((void *)ls.a.rhs, ty[3], lo_, tu_get(gs.a.rhs, ty[3], go));
        }
    tu_poison_x(&ls, &lrng);
    int64_t lo[3] = {lo0, 1, 1}, hi[3] = {hi0, ny, 1};
    tridi_status s1 = tridi_solve(cpu, &gg, TRIDI_AXIS_X, lo, hi, &gs.a);
    char msg1[512];
    snprintf(msg1, sizeof msg1, "%s", tridi_error_message());
    tridi_status sm = mt_solve(ctx, device_mode, d, ls.cells, TRIDI_AXIS_X, lo, hi, &ls.a);
    long bad = 0;
    if (sm != s1) {
        printf("rank %d %s: tridi_mpi_solve gave %s (%s), the one-rank solve %s (%s)\n", rank, title,
               tridi_status_name(sm), sm ? tridi_error_message() : "", tridi_status_name(s1), s1 ? msg1 : "");
        bad++;
    }
    /* Each rank measures its own cells against the oracle; the line's error is the largest over ranks. */
    double *err_m = calloc((size_t)ny, sizeof(double)), *err_1 = calloc((size_t)ny, sizeof(double));
    long double x[64];
    for (int64_t j = 1; !sm && !s1 && j <= ny; ++j) {
        for (int64_t m = 0; m < L; ++m) {
            int64_t o = tu_index(&gg, lo0 + m, j, 1);
            a[m] = tu_get(gs.a.lower, ty[0], o);
            b[m] = tu_get(gs.a.diag, ty[1], o);
            c[m] = tu_get(gs.a.upper, ty[2], o);
            r[m] = tu_get(gs.a.rhs, ty[3], o);
        }
        if (oracle(L, a, b, c, r, x)) {
            printf("rank %d %s: line %lld is singular\n", rank, title, (long long)j);
            bad++;
            continue;
        }
        long double scale = 0.0L;
        for (int64_t m = 0; m < L; ++m)
            scale = fabsl(x[m]) > scale ? fabsl(x[m]) : scale;
        for (int64_t m = 0; m < L; ++m) {
            int64_t i = lo0 + m;
            double e1 = (double)(fabsl((long double)tu_get(gs.a.x, ty[4], tu_index(&gg, i, j, 1)) - x[m]) / scale);
            err_1[j - 1] = !(e1 <= err_1[j - 1]) ? e1 : err_1[j - 1];
            int mine = i >= in.grid.lbound[0] && i <= in.grid.ubound[0] &&
                       (i >= in.lo[0] || in.coords[0] == 0) && (i <= in.hi[0] || in.coords[0] == nranks - 1);
            if (mine && bitwise && (nranks > 1 || !device_mode)) {
                /* The pipelined Thomas is the one-rank CPU arithmetic: the same bits. */
                double xm = tu_get(ls.a.x, ty[4], tu_index(&in.grid, i, j, 1));
                double x1 = tu_get(gs.a.x, ty[4], tu_index(&gg, i, j, 1));
                if (memcmp(&xm, &x1, sizeof xm)) {
                    printf("rank %d %s: line %lld, x(%lld) = %.17g, the one-rank solve's %.17g\n", rank, title,
                           (long long)j, (long long)i, xm, x1);
                    bad++;
                }
            }
            if (mine) {
                double em = (double)(fabsl((long double)tu_get(ls.a.x, ty[4], tu_index(&in.grid, i, j, 1)) - x[m]) /
                                     scale);
                err_m[j - 1] = !(em <= err_m[j - 1]) ? (isnan(em) ? INFINITY : em) : err_m[j - 1];
            }
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, err_m, (int)ny, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double tol = tu_tolerance(ty[4]);
    for (int64_t j = 1; !sm && !s1 && rank == 0 && j <= ny; ++j) {
        const double limit = 10.0 * err_1[j - 1] + tol;
        if (!(err_m[j - 1] <= limit)) {
            printf("  %s, line %lld (%s, hard spot at box cell %lld): error %.3g against the oracle, one-rank "
                   "solve %.3g\n",
                   title, (long long)j, kind_name[kinds[j - 1]], (long long)spot[j - 1], err_m[j - 1], err_1[j - 1]);
            bad++;
        } else if (bitwise) {
            printf("  %s, line %lld (%s): error %.3g against the oracle, one-rank solve %.3g\n", title, (long long)j,
                   kind_name[kinds[j - 1]], err_m[j - 1], err_1[j - 1]);
        }
    }
    free(err_m);
    free(err_1);
    tu_system_free(&ls);
    tu_system_free(&gs);
    tridi_decomp_destroy(d);
    return mt_total(bad);
}

int main(int argc, char **argv)
{
    const char *name = mt_start(&argc, &argv, "test_mpi_stability", &device_mode);
    int nranks;
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (mt_create_context(0, name, &cpu)) /* the one-rank solves' */
        return mt_finish(name, 1, 0);
    int made = mt_create_context(device_mode, name, &ctx);
    if (made) {
        tridi_destroy(cpu);
        return mt_finish(name, made == 1, made == 77);
    }
    uint64_t rng = mt_seed(name);
    long bad = 0;

    /* The case: 8 unknowns (split 4|4 on 2 ranks, 2|2|2|2 on 4), diag 1e-17 then 0 at unknown 5,
     * the first of rank 1's block (rank 2's on 4 ranks). */
    {
        int kinds[2] = {KIND_TINY, KIND_ZERO};
        int64_t spot[2] = {4, 4};
        bad += run_call("issue 24 case", 8, 2, 1, 8, kinds, spot, 0, &rng, 1);
    }
    /* Every kind with its hard spot at every cell of the box, boxes shifted by 0..3 cells (reaching into
     * the global halo or not) so that the rank boundaries fall at every position of the line, for
     * every type combination. */
    static const int64_t lengths[2] = {8, 13};
    int call = 0;
    for (int li = 0; li < 2; ++li) {
        const int64_t N = lengths[li] < nranks ? nranks : lengths[li];
        for (int64_t lo0 = 0; lo0 <= 3; ++lo0) {
            const int64_t hi0 = (lo0 % 2) ? N + 1 : N - (lo0 == 2);
            const int64_t L = hi0 - lo0 + 1;
            const int64_t ny = NKINDS * L * 2;
            int *kinds = malloc(sizeof(int) * (size_t)ny);
            int64_t *spot = malloc(sizeof(int64_t) * (size_t)ny);
            for (int64_t j = 0; j < ny; ++j) {
                kinds[j] = (int)((j / L) % NKINDS);
                spot[j] = j % L;
            }
            char title[128];
            int combo = call++ % 3;
            snprintf(title, sizeof title, "N = %lld, box %lld..%lld, %s", (long long)N, (long long)lo0,
                     (long long)hi0, combo_name[combo]);
            bad += run_call(title, N, ny, lo0, hi0, kinds, spot, combo, &rng, 0);
            free(kinds);
            free(spot);
        }
    }
    tridi_destroy(ctx);
    tridi_destroy(cpu);
    return mt_finish(name, bad, 0);
}
