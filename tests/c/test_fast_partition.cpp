// The FAST kernels' math (cuda/kernels/fast_core.cuh) on the host, so that CI checks it without a GPU: lines
// partitioned into chunks as the GPU kernel cuts them, each chunk eliminated by fp_chunk, the reduced system
// joined as the kernels join it (join_rows: fp_reduce steps in the kernel's order, every row of a step from the
// rows of the step before, then fp_u_of), the answers by fp_finish; lines of 32 chunks or more also joined as
// one warp does it (fast_warp_join.cuh: 32 runs of chunks reduced by fp_run_reduce, their 64 rows by join_rows,
// each run solved by fp_run_finish).
// Against the long double oracle of tests/common/fast_oracle.h: every line within the stated bound |x - x*| <=
// 32 u cond(A, x*) |x*| (docs/api.md), float and double, chunks of 4, 8 and 16, lines of 1 to 2048 unknowns,
// random dominant, weakly dominant and widely scaled rows. A zero chunk pivot, a non-finite input and an
// answer of inf - inf must flag the line. The GPU test (tests/cuda/test_fast_gpu.c) checks the kernels
// themselves.
#include "fast_oracle.h"
#include "kernels/fast_core.cuh"
#include "testutil.h"

#include <cstdio>
#include <vector>

namespace {

// Cyclic reduction of a system of reduced rows, every row of a step from the rows of the step before.
template <class T>
bool reduce_all(std::vector<fp_row<T>> &rows)
{
    const int R2 = (int)rows.size();
    std::vector<fp_row<T>> next(R2);
    const fp_row<T> zero = {T(0), T(0), T(0)};
    bool ok = true;
    for (int s = 1; s < R2; s <<= 1) {
        for (int i = 0; i < R2; ++i) {
            next[i] = rows[i];
            ok &= fp_reduce(next[i], i - s >= 0 ? rows[i - s] : zero, i + s < R2 ? rows[i + s] : zero);
        }
        rows.swap(next);
    }
    return ok;
}

// The join of a line's reduced rows u_0, v_0, u_1, v_1, ... as the block joins them (fp_join, decision 110):
// each v row from the u rows beside it; while more than FP_JOIN_PCR v rows are left, every other one eliminated
// (odd-even reduction); those left by cyclic reduction; the eliminated rows back from their neighbours; each u
// from the v's beside it. pcr: the rows left to the cyclic reduction (the warp's join: all of them). rows[i].d
// is then unknown i.
template <class T>
bool join_rows(std::vector<fp_row<T>> &rows, int pcr = FP_JOIN_PCR)
{
    const int P = (int)rows.size() / 2;
    const fp_row<T> zero = {T(0), T(0), T(0)};
    std::vector<std::vector<fp_row<T>>> level(1, std::vector<fp_row<T>>(P));
    bool ok = true;
    for (int q = 0; q < P; ++q) {
        level[0][q] = rows[2 * q + 1];
        ok &= fp_reduce(level[0][q], rows[2 * q], q + 1 < P ? rows[2 * q + 2] : zero);
    }
    while ((int)level.back().size() > pcr) {
        const std::vector<fp_row<T>> &l = level.back();
        const int R = (int)l.size();
        std::vector<fp_row<T>> next(R / 2);
        for (int j = 0; j < R / 2; ++j) {
            next[j] = l[2 * j + 1];
            ok &= fp_reduce(next[j], l[2 * j], 2 * j + 2 < R ? l[2 * j + 2] : zero);
        }
        level.push_back(next);
    }
    ok &= reduce_all(level.back());
    for (int k = (int)level.size() - 2; k >= 0; --k) {
        std::vector<fp_row<T>> &l = level[k];
        const std::vector<fp_row<T>> &x = level[k + 1]; // its rows' d: their unknowns
        const int R = (int)l.size();
        for (int j = 0; j < (R + 1) / 2; ++j) {
            const T lo = j > 0 ? x[j - 1].d : T(0), hi = j < R / 2 ? x[j].d : T(0);
            l[2 * j].d = l[2 * j].d - l[2 * j].a * lo - l[2 * j].c * hi;
            if (2 * j + 1 < R)
                l[2 * j + 1].d = hi;
        }
    }
    for (int q = 0; q < P; ++q) {
        rows[2 * q].d = fp_u_of(rows[2 * q], q ? level[0][q - 1].d : T(0), level[0][q].d);
        rows[2 * q + 1].d = level[0][q].d;
    }
    return ok;
}

// The join by a warp a line (P >= FP_WJ_MIN_P = 32 chunks): lane j's run of chunks fp_chunk_range(P, 32, j)
// reduced to two rows, the 64 rows joined, each run's rows solved; rows[i].d is then unknown i.
template <class T>
bool warp_join(std::vector<fp_row<T>> &rows)
{
    const int P = (int)rows.size() / 2;
    std::vector<T> A(2 * P), C(2 * P), D(2 * P);
    for (int i = 0; i < 2 * P; ++i)
        A[i] = rows[i].a, C[i] = rows[i].c, D[i] = rows[i].d;
    std::vector<fp_row<T>> red(64);
    bool ok = true;
    for (int lane = 0; lane < 32; ++lane) {
        long long q0;
        int m;
        fp_chunk_range(P, 32, lane, &q0, &m);
        ok &= fp_run_reduce<T>(2 * m, &A[2 * q0], &C[2 * q0], &D[2 * q0], 1, red[2 * lane], red[2 * lane + 1]);
    }
    ok &= join_rows(red, 32);
    for (int lane = 0; lane < 32; ++lane) {
        long long q0;
        int m;
        fp_chunk_range(P, 32, lane, &q0, &m);
        fp_run_finish<T>(2 * m, &A[2 * q0], &C[2 * q0], &D[2 * q0], 1, red[2 * lane].d, red[2 * lane + 1].d);
    }
    for (int i = 0; i < 2 * P; ++i)
        rows[i].d = D[i];
    return ok;
}

// The kernel's partitioned solve of one line, one chunk after another, joined over the block or (warp, lines
// of 32 chunks or more) by a warp. Returns false when flagged.
template <class T, int L>
bool partition_solve(int64_t n, const T *d, const T *e, const T *f, const T *r, T *x, bool warp = false)
{
    const int P = fp_chunks(n, L);
    std::vector<fp_row<T>> rows(2 * P);
    std::vector<T> A((size_t)P * L), C((size_t)P * L), Dv((size_t)P * L);
    bool ok = true;
    for (int q = 0; q < P; ++q) {
        long long s0;
        int len;
        fp_chunk_range(n, P, q, &s0, &len);
        T a[L], b[L], c[L], dd[L];
        for (int k = 0; k < L; ++k) {
            const int64_t m = s0 + k;
            const bool in = k < len;
            b[k] = in ? e[m] : T(1);
            dd[k] = in ? r[m] : T(0);
            a[k] = in && m > 0 ? d[m] : T(0);
            c[k] = in && m < n - 1 ? f[m] : T(0);
        }
        ok &= fp_chunk<T, L>(len, a, b, c, dd, rows[2 * q], rows[2 * q + 1]);
        for (int k = 0; k < L; ++k)
            A[(size_t)q * L + k] = a[k], C[(size_t)q * L + k] = c[k], Dv[(size_t)q * L + k] = dd[k];
    }
    ok &= warp && P >= 32 ? warp_join(rows) : join_rows(rows);
    for (int q = 0; q < P; ++q) {
        long long s0;
        int len;
        fp_chunk_range(n, P, q, &s0, &len);
        T a[L], c[L], dd[L];
        for (int k = 0; k < L; ++k)
            a[k] = A[(size_t)q * L + k], c[k] = C[(size_t)q * L + k], dd[k] = Dv[(size_t)q * L + k];
        ok &= fp_finish<T, L>(len, a, c, dd, rows[2 * q].d, rows[2 * q + 1].d);
        for (int k = 0; k < len; ++k)
            x[s0 + k] = dd[k];
    }
    return ok;
}

// One line of n unknowns of the given kind: 0 dominant, 1 weakly dominant (|diag| = 1.001 (|lower| +
// |upper|)), 2 dominant rows scaled by 10^-30..10^30.
template <class T>
void make_line(int64_t n, int kind, uint64_t *rng, std::vector<T> &d, std::vector<T> &e, std::vector<T> &f,
               std::vector<T> &r)
{
    d.assign(n, T(0)), e.assign(n, T(0)), f.assign(n, T(0)), r.assign(n, T(0));
    for (int64_t m = 0; m < n; ++m) {
        const double lo = 2.0 * tu_uniform(rng) - 1.0, up = 2.0 * tu_uniform(rng) - 1.0;
        const double sign = tu_uniform(rng) < 0.5 ? -1.0 : 1.0;
        double di = sign * (std::fabs(lo) + std::fabs(up) + 0.5 + 2.0 * tu_uniform(rng));
        if (kind == 1)
            di = sign * 1.001 * (std::fabs(lo) + std::fabs(up));
        const double k = kind == 2 ? std::pow(10.0, -30.0 + 60.0 * tu_uniform(rng)) : 1.0;
        d[m] = (T)(m ? lo * k : 0.0);
        f[m] = (T)(m < n - 1 ? up * k : 0.0);
        e[m] = (T)(di * k);
        r[m] = (T)((2.0 * tu_uniform(rng) - 1.0) * k);
    }
}

// Every line within the bound (warp: the lines of 32 chunks or more, joined by a warp); returns the worst
// error over its bound.
template <class T, int L>
double check_lines(const char *tname, uint64_t *rng, bool warp = false)
{
    static const int64_t lens[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 64, 100, 255, 256, 257, 1000, 2048};
    static const char *kinds[] = {"dominant", "weakly dominant", "rows scaled 1e-30..1e30"};
    const long double u = sizeof(T) == 4 ? ldexpl(1.0L, -24) : ldexpl(1.0L, -53);
    double worst = 0.0;
    for (int64_t n : lens)
        for (int kind = 0; kind < 3 && (!warp || fp_chunks(n, L) >= 32); ++kind)
            for (int rep = 0; rep < 3; ++rep) {
                std::vector<T> d, e, f, r, x(n);
                make_line<T>(n, kind, rng, d, e, f, r);
                for (int64_t m = 0; m < n; ++m)
                    x[m] = T(NAN); // poison
                const bool ok = partition_solve<T, L>(n, d.data(), e.data(), f.data(), r.data(), x.data(), warp);
                std::vector<long double> ld(n), le(n), lf(n), lr(n), xs(n);
                for (int64_t m = 0; m < n; ++m)
                    ld[m] = d[m], le[m] = e[m], lf[m] = f[m], lr[m] = r[m];
                long double bound = 0.0L;
                if (fo_line(n, ld.data(), le.data(), lf.data(), lr.data(), u, xs.data(), &bound)) {
                    tu_expect_true("oracle memory", 0);
                    return 1e30;
                }
                long double err = 0.0L;
                for (int64_t m = 0; m < n; ++m)
                    err = std::isfinite((double)x[m]) ? fmaxl(err, fabsl((long double)x[m] - xs[m])) : INFINITY;
                const double ratio = (double)(err / bound);
                worst = std::max(worst, ratio);
                char what[160];
                std::snprintf(what, sizeof what,
                              "%s, chunks of %d%s, %s line of %lld: flagged %d, error %.3g of the bound", tname, L,
                              warp ? " joined by a warp" : "", kinds[kind], (long long)n, !ok, ratio);
                if (!ok || !(ratio <= 1.0))
                    tu_expect_true(what, 0);
                else
                    ++tu_checks;
            }
    std::printf("ok %s, chunks of %d%s: worst error %.3g of the bound\n", tname, L, warp ? " joined by a warp" : "",
                worst);
    return worst;
}

// A line whose partition meets a zero pivot (a chunk's second diagonal 0: the Thomas recurrence of the whole
// line does not) and a line with a NaN must be flagged.
template <class T, int L>
void check_flags(const char *tname, uint64_t *rng, bool warp = false)
{
    const int64_t n = warp ? 40 * L : 40; // 40 chunks: joined by a warp
    std::vector<T> d, e, f, r, x(n);
    make_line<T>(n, 0, rng, d, e, f, r);
    long long s0;
    int len;
    fp_chunk_range(n, fp_chunks(n, L), 1, &s0, &len);
    e[s0 + 1] = T(0);
    char what[128];
    const char *j = warp ? ", joined by a warp" : "";
    std::snprintf(what, sizeof what, "%s, chunks of %d%s: a chunk's zero pivot flags the line", tname, L, j);
    tu_expect_true(what, !partition_solve<T, L>(n, d.data(), e.data(), f.data(), r.data(), x.data(), warp));
    make_line<T>(n, 0, rng, d, e, f, r);
    r[n / 2] = T(NAN);
    std::snprintf(what, sizeof what, "%s, chunks of %d%s: a NaN flags the line", tname, L, j);
    tu_expect_true(what, !partition_solve<T, L>(n, d.data(), e.data(), f.data(), r.data(), x.data(), warp));
    make_line<T>(n, 0, rng, d, e, f, r);
    e[0] = std::numeric_limits<T>::denorm_min();
    d[1] = f[0] = T(0);
    std::snprintf(what, sizeof what, "%s, chunks of %d%s: a subnormal pivot flags the line", tname, L, j);
    tu_expect_true(what, !partition_solve<T, L>(n, d.data(), e.data(), f.data(), r.data(), x.data(), warp));
    // Every value finite until the answers: x1 = 5 - M X + M X with M X past the type's range, which the
    // finish evaluates as (5 - inf) + inf, NaN (a fused multiply-add gives -inf): flagged either way.
    if (!warp) {
        const T M = sizeof(T) == 4 ? T(1e30) : T(1e300), X = T(1e10);
        const T d3[3] = {T(0), M, T(0)}, e3[3] = {T(1), T(1), T(1)}, f3[3] = {T(0), -M, T(0)}, r3[3] = {X, T(5), X};
        T x3[3];
        std::snprintf(what, sizeof what, "%s, chunks of %d: an answer of inf - inf (NaN) flags the line", tname, L);
        tu_expect_true(what, !partition_solve<T, L>(3, d3, e3, f3, r3, x3));
    }
}

} // namespace

int main()
{
    uint64_t rng = tu_seed("test_fast_partition");
    check_lines<float, 4>("float", &rng);
    check_lines<float, 8>("float", &rng);
    check_lines<float, 16>("float", &rng);
    check_lines<double, 4>("double", &rng);
    check_lines<double, 8>("double", &rng);
    check_flags<float, 8>("float", &rng);
    check_flags<double, 8>("double", &rng);
    check_flags<float, 16>("float", &rng);
    check_lines<float, 4>("float", &rng, true);
    check_lines<float, 8>("float", &rng, true);
    check_lines<float, 16>("float", &rng, true);
    check_lines<double, 4>("double", &rng, true);
    check_lines<double, 8>("double", &rng, true);
    check_flags<float, 8>("float", &rng, true);
    check_flags<double, 8>("double", &rng, true);
    std::printf("test_fast_partition: %d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
