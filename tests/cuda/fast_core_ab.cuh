// A/B of FAST's chunk arithmetic: fp_chunk / fp_finish (cuda/kernels/fast_core.cuh, built from the one Thomas
// core, decision 060) against the same steps as written before (fp_chunk_before / fp_finish_before, kept here
// only as that reference). fp_ab_chunk runs both on one chunk and says whether every result has the same bits;
// the host unit test (tests/c/test_fast_partition.cpp) and the GPU test (test_fast_core_ab.cu) call it.
#ifndef TRIDI_TESTS_FAST_CORE_AB_CUH
#define TRIDI_TESTS_FAST_CORE_AB_CUH

#include <cmath>
#include <cstring>

#include "kernels/fast_core.cuh"
#include "testutil.h"

template <class T, int L>
FP_HD bool fp_chunk_before(int len, T (&a)[L], const T (&b)[L], T (&c)[L], T (&d)[L], fp_row<T> &ru, fp_row<T> &rv)
{
    bool ok = true;
    if (len == 1) {
        ok = fp_pivot_ok(b[0]);
        const T inv = fp_rcp(b[0]);
        ru = {a[0] * inv, c[0] * inv, d[0] * inv};
        rv = {T(0), T(0), T(0)};
        return ok && fp_finite(ru.d);
    }
    {
        ok &= fp_pivot_ok(b[1]);
        const T inv = fp_rcp(b[1]);
        a[1] *= inv;
        c[1] *= inv;
        d[1] *= inv;
        rv = {a[1], c[1], d[1]};
    }
FP_UNROLL
    for (int k = 2; k < L; ++k)
        if (k < len) {
            const T den = b[k] - a[k] * c[k - 1];
            ok &= fp_pivot_ok(den);
            const T inv = fp_rcp(den);
            d[k] = (d[k] - a[k] * d[k - 1]) * inv;
            a[k] = -a[k] * a[k - 1] * inv;
            c[k] *= inv;
            rv = {a[k], c[k], d[k]};
        }
FP_UNROLL
    for (int k = L - 3; k >= 1; --k)
        if (k <= len - 3) {
            d[k] -= c[k] * d[k + 1];
            a[k] -= c[k] * a[k + 1];
            c[k] = -c[k] * c[k + 1];
        }
    T B = b[0], C = c[0], D = d[0];
    if (len > 2) {
        B = b[0] - c[0] * a[1];
        D = d[0] - c[0] * d[1];
        C = -c[0] * c[1];
    }
    ok &= fp_pivot_ok(B);
    const T inv = fp_rcp(B);
    ru = {a[0] * inv, C * inv, D * inv};
    ok &= fp_finite(ru.a) & fp_finite(ru.c) & fp_finite(ru.d) & fp_finite(rv.a) & fp_finite(rv.c) & fp_finite(rv.d);
    return ok;
}

template <class T, int L>
FP_HD bool fp_finish_before(int len, const T (&a)[L], const T (&c)[L], T (&d)[L], T u, T v)
{
    T mx = fp_abs(u);
FP_UNROLL
    for (int k = 1; k < L; ++k) {
        d[k] = k < len - 1 ? d[k] - a[k] * u - c[k] * v : v;
        if (k < len)
            mx = fp_abs(d[k]) > mx ? fp_abs(d[k]) : mx;
    }
    d[0] = u;
    return fp_finite(mx);
}

template <class T>
FP_HD bool fp_same_bits(T x, T y)
{
    unsigned char bx[sizeof(T)], by[sizeof(T)];
    memcpy(bx, &x, sizeof(T));
    memcpy(by, &y, sizeof(T));
    bool same = true;
    for (int i = 0; i < (int)sizeof(T); ++i)
        same &= bx[i] == by[i];
    return same;
}

// One chunk of len rows (in[0..4L): lower, diag, upper, rhs) through both, u and v given: true when the
// flags and, on an unflagged chunk, the reduced rows and every answer have the same bits.
template <class T, int L>
FP_HD bool fp_ab_chunk(int len, const T *in, T u, T v)
{
    T a0[L], b0[L], c0[L], d0[L], a1[L], c1[L], d1[L];
    for (int k = 0; k < L; ++k) {
        a0[k] = a1[k] = in[k];
        b0[k] = in[L + k];
        c0[k] = c1[k] = in[2 * L + k];
        d0[k] = d1[k] = in[3 * L + k];
    }
    fp_row<T> ru0, rv0, ru1, rv1;
    bool ok0 = fp_chunk_before<T, L>(len, a0, b0, c0, d0, ru0, rv0);
    bool ok1 = fp_chunk<T, L>(len, a1, b0, c1, d1, ru1, rv1);
    if (ok0 != ok1)
        return false;
    if (!ok0)
        return true; // a flagged line goes to MOHID's recurrence: its chunk values are not used
    bool same = fp_same_bits(ru0.a, ru1.a) && fp_same_bits(ru0.c, ru1.c) && fp_same_bits(ru0.d, ru1.d) &&
                fp_same_bits(rv0.a, rv1.a) && fp_same_bits(rv0.c, rv1.c) && fp_same_bits(rv0.d, rv1.d);
    ok0 = fp_finish_before<T, L>(len, a0, c0, d0, u, v);
    ok1 = fp_finish<T, L>(len, a1, c1, d1, u, v);
    same &= ok0 == ok1;
    for (int k = 0; k < len; ++k)
        same &= fp_same_bits(d0[k], d1[k]);
    return same;
}

// fp_ab_rows (host): chunk number i of an A/B sweep, its rows in in[0..4L) (lower, diag, upper, rhs; rows past
// len as the kernels pad them): kinds by i % 5, dominant, weakly dominant, scaled 1e-30..1e30, not dominant
// (tiny and zero pivots, signed zeros), and values with exact zeros and halves (ties of the roundings).
template <class T, int L>
void fp_ab_rows(int i, int len, uint64_t *rng, T *in)
{
    const int kind = i % 5;
    for (int k = 0; k < L; ++k) {
        const bool on = k < len;
        double lo = 2.0 * tu_uniform(rng) - 1.0, up = 2.0 * tu_uniform(rng) - 1.0, r = 2.0 * tu_uniform(rng) - 1.0;
        const double sign = tu_uniform(rng) < 0.5 ? -1.0 : 1.0;
        double di = sign * (std::fabs(lo) + std::fabs(up) + 0.5 + 2.0 * tu_uniform(rng));
        if (kind == 1)
            di = sign * 1.001 * (std::fabs(lo) + std::fabs(up));
        if (kind == 2) {
            const double s = std::pow(10.0, -30.0 + 60.0 * tu_uniform(rng));
            lo *= s, up *= s, r *= s, di *= s;
        }
        if (kind == 3)
            di = tu_uniform(rng) < 0.2 ? (tu_uniform(rng) < 0.5 ? -0.0 : 0.0) : 1e-6 * (2.0 * tu_uniform(rng) - 1.0);
        if (kind == 4) {
            lo = std::ldexp(std::floor(8.0 * lo), -3), up = std::ldexp(std::floor(8.0 * up), -3);
            r = tu_uniform(rng) < 0.25 ? -0.0 : std::ldexp(std::floor(64.0 * r), -5);
        }
        in[k] = on ? (T)lo : T(0);
        in[L + k] = on ? (T)di : T(1);
        in[2 * L + k] = on ? (T)up : T(0);
        in[3 * L + k] = on ? (T)r : T(0);
    }
}

#endif
