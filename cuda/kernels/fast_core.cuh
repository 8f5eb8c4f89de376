// FAST arithmetic (TRIDI_ARITH_FAST, all-float or all-double arrays): the partitioned solve of one line in
// the arrays' own precision, written once for the GPU kernel (cuda/kernels/fast_lines.cuh) and for the host
// (its unit test, tests/c/test_fast_partition.cpp, which CI runs without a GPU). See docs/decisions/021.
#ifndef TRIDI_FAST_CORE_CUH
#define TRIDI_FAST_CORE_CUH

#include <cfloat>
#include <cmath>

#include "rcp.cuh"

// A line of n unknowns is cut into P chunks of n / P or n / P + 1 unknowns (P <= n / 2, so every chunk has
// at least two). A chunk's unknowns x_0 .. x_{len-1} are coupled to the rest of the line only through its
// first and last unknown, u = x_0 and v = x_{len-1}:
//  1. forward, rows 1 .. len-1: row k becomes  a'_k u + x_k + c'_k x_{k+1} = d'_k  (Thomas on the chunk
//     with the column of u carried along);
//  2. backward, rows len-2 .. 1: row k becomes  x_k = d''_k - a''_k u - c''_k v;
//  3. two rows of a reduced system in (u_0, v_0, u_1, v_1, ...), tridiagonal: the chunk's row 0 with x_1
//     substituted (coupling v of the chunk before, u, v), and its last forward row (u, v, u of the chunk
//     after); each is normalised to a unit diagonal;
//  4. the reduced system of 2P rows: each v row eliminates the u rows beside it (its chunk's and the next
//     one's), which leaves P rows in the v's alone; while more than FP_JOIN_PCR are left every other one is
//     eliminated (odd-even reduction), the rest solved by cyclic reduction (every row at once), the eliminated
//     rows then follow from their neighbours, and each u from its row and the v's beside it (fp_u_of;
//     decision 110);
//  5. every unknown follows from its chunk's u and v (step 2).
// On a row diagonally dominant line the chunks' pivots and the reduced system stay dominant (no growth).
// Whatever the line, a pivot (a chunk's or a reduction step's) that is not a normal number of the type, or
// any value that is not finite, flags the line: the kernel then solves it again with MOHID's recurrence.

#if defined(__CUDACC__)
#define FP_HD __host__ __device__ __forceinline__
#else
#define FP_HD inline
#endif
#if defined(__CUDA_ARCH__) // the device pass (the host compiler does not know the pragma)
#define FP_UNROLL _Pragma("unroll")
#define FP_NO_UNROLL _Pragma("unroll 1")
#else
#define FP_UNROLL
#define FP_NO_UNROLL
#endif

template <class T>
struct fp_limits;
template <>
struct fp_limits<float> {
    static FP_HD float tiny() { return FLT_MIN; }
    static FP_HD float huge() { return FLT_MAX; }
};
template <>
struct fp_limits<double> {
    static FP_HD double tiny() { return DBL_MIN; }
    static FP_HD double huge() { return DBL_MAX; }
};

FP_HD float fp_abs(float v) { return fabsf(v); }
FP_HD double fp_abs(double v) { return fabs(v); }

// A pivot the solve may divide by: a normal number of its type (NaN fails both comparisons).
template <class T>
FP_HD bool fp_pivot_ok(T p)
{
    const T m = fp_abs(p);
    return m >= fp_limits<T>::tiny() && m <= fp_limits<T>::huge();
}

template <class T>
FP_HD bool fp_finite(T v) { return fp_abs(v) <= fp_limits<T>::huge(); }

// 1/p. Device: the hardware estimate refined by Newton steps (one for float, two for double: within an ulp
// or two of the quotient) instead of the IEEE division routine, which would sit on the chain of dependent
// operations; pivots that are not normal numbers are flagged before their reciprocal is used (the estimate
// flushes subnormals). Host: the division.
FP_HD float fp_rcp(float p)
{
#if defined(__CUDA_ARCH__)
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(p));
    return fmaf(y, fmaf(-p, y, 1.0f), y);
#else
    return 1.0f / p;
#endif
}
FP_HD double fp_rcp(double p)
{
#if defined(__CUDA_ARCH__)
    return tk_rcp(p);
#else
    return 1.0 / p;
#endif
}

// The join's rows left to the cyclic reduction (a warp's threads); above, odd-even levels halve them.
constexpr int FP_JOIN_PCR = 32;

// One reduced row, unit diagonal: a * (row before) + x + c * (row after) = d.
template <class T>
struct fp_row {
    T a, c, d;
};

// Steps 1-3 on a chunk of len (1 <= len <= L) rows held in a (lower), b (diag), c (upper), d (rhs); the
// line's first row has a = 0 and its last c = 0 (the caller's job: they are not read there). On return
// a, c, d of rows 1 .. len-2 hold step 2's a'', c'', d'', and ru, rv the chunk's two reduced rows. A
// chunk of one row (a line of one unknown) gives ru = its row, rv = an identity row. Returns false when a
// pivot is not a normal number or a value is not finite (the line is then flagged).
template <class T, int L>
FP_HD bool fp_chunk(int len, T (&a)[L], const T (&b)[L], T (&c)[L], T (&d)[L], fp_row<T> &ru, fp_row<T> &rv)
{
    bool ok = true;
    if (len == 1) {
        ok = fp_pivot_ok(b[0]);
        const T inv = fp_rcp(b[0]);
        ru = {a[0] * inv, c[0] * inv, d[0] * inv};
        rv = {T(0), T(0), T(0)};
        return ok && fp_finite(ru.d);
    }
    // 1. forward over rows 1 .. len-1, the column of u carried in a; rv follows the last row done (a
    // selection by k == len - 1 is turned by the compiler into an index known only at run time, which puts
    // the arrays in local memory)
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
    // 2. backward over rows len-3 .. 1 (row len-2 already refers to x_{len-1} = v)
FP_UNROLL
    for (int k = L - 3; k >= 1; --k)
        if (k <= len - 3) {
            d[k] -= c[k] * d[k + 1];
            a[k] -= c[k] * a[k + 1];
            c[k] = -c[k] * c[k + 1];
        }
    // 3. row 0 with x_1 = d1 - a1 u - c1 v (for len == 2, x_1 is v itself)
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

// One cyclic-reduction step of row r against its neighbours s rows before (lo) and after (hi); rows outside
// the system are zero rows. Returns false on a pivot that is not a normal number.
template <class T>
FP_HD bool fp_reduce(fp_row<T> &r, const fp_row<T> &lo, const fp_row<T> &hi)
{
    const T den = T(1) - r.a * lo.c - r.c * hi.a;
    const bool ok = fp_pivot_ok(den);
    const T inv = fp_rcp(den);
    const T d = (r.d - r.a * lo.d - r.c * hi.d) * inv;
    r.a = -r.a * lo.a * inv;
    r.c = -r.c * hi.c * inv;
    r.d = d;
    return ok;
}

// Step 4's last: a chunk's first unknown from its reduced row ru, the last unknown of the chunk before (0 for
// the line's first chunk) and its own last unknown v.
template <class T>
FP_HD T fp_u_of(const fp_row<T> &ru, T vprev, T v)
{
    return ru.d - ru.a * vprev - ru.c * v;
}

// Step 5: the chunk's answers from u and v, into d[0 .. len-1]; false if one is not finite. Each answer is
// checked: they are sums of products, not a chain, so a NaN (inf - inf) may come without an infinity
// before it, which a running max (`x > m ? x : m`, as fmax) would drop.
template <class T, int L>
FP_HD bool fp_finish(int len, const T (&a)[L], const T (&c)[L], T (&d)[L], T u, T v)
{
    bool ok = fp_finite(u);
FP_UNROLL
    for (int k = 1; k < L; ++k) {
        d[k] = k < len - 1 ? d[k] - a[k] * u - c[k] * v : v; // past len - 1: never stored
        if (k < len)
            ok &= fp_finite(d[k]);
    }
    d[0] = u;
    return ok;
}

// A run of len >= 2 reduced rows (unit diagonal; a, c, d of row k at A[k * st], C[k * st], D[k * st]) reduced
// to two rows as fp_chunk reduces a chunk (the join by a warp a line, fast_warp_join.cuh: a lane's run of
// chunks): steps 1-3 in place, ru (the run's first unknown) and rv (its last) out. False as fp_chunk.
template <class T>
FP_HD bool fp_run_reduce(int len, T *A, T *C, T *D, int st, fp_row<T> &ru, fp_row<T> &rv)
{
    bool ok = true;
    T ap = A[st], cp = C[st], dp = D[st]; // step 1 from row 2 (row 1's diagonal is 1 already)
FP_NO_UNROLL
    for (int k = 2; k < len; ++k) {
        const int o = k * st;
        const T a = A[o];
        const T den = T(1) - a * cp;
        ok &= fp_pivot_ok(den);
        const T inv = fp_rcp(den);
        dp = (D[o] - a * dp) * inv;
        ap = -a * ap * inv;
        cp = C[o] * inv;
        A[o] = ap, C[o] = cp, D[o] = dp;
    }
    rv = {ap, cp, dp};
    T an = A[(len - 2) * st], cn = C[(len - 2) * st], dn = D[(len - 2) * st]; // step 2
FP_NO_UNROLL
    for (int k = len - 3; k >= 1; --k) {
        const int o = k * st;
        const T c = C[o];
        dn = D[o] - c * dn;
        an = A[o] - c * an;
        cn = -c * cn;
        A[o] = an, C[o] = cn, D[o] = dn;
    }
    ru = {A[0], C[0], D[0]}; // step 3: row 0 with x_1 substituted (two rows: row 0 as it is)
    if (len > 2) {
        const T c0 = ru.c;
        const T B = T(1) - c0 * an;
        ok &= fp_pivot_ok(B);
        const T inv = fp_rcp(B);
        ru = {ru.a * inv, -c0 * cn * inv, (ru.d - c0 * dn) * inv};
    }
    return ok & fp_finite(ru.a) & fp_finite(ru.c) & fp_finite(ru.d) & fp_finite(rv.a) & fp_finite(rv.c) &
           fp_finite(rv.d);
}

// Step 5 for such a run: D[k * st] = its unknown k from u and v (the run's first and last).
template <class T>
FP_HD void fp_run_finish(int len, const T *A, const T *C, T *D, int st, T u, T v)
{
    D[0] = u;
FP_NO_UNROLL
    for (int k = 1; k < len - 1; ++k)
        D[k * st] = D[k * st] - A[k * st] * u - C[k * st] * v;
    D[(len - 1) * st] = v;
}

// Chunk q of P: first unknown and length (the first n % P chunks take one unknown more).
FP_HD void fp_chunk_range(long long n, int P, int q, long long *first, int *len)
{
    const long long lb = n / P, rem = n % P;
    *first = q * lb + (q < rem ? q : rem);
    *len = (int)(lb + (q < rem ? 1 : 0));
}

// Chunks for a line of n unknowns at most L per chunk, each of at least two unknowns (n >= 2); 1 for n <= 1.
FP_HD int fp_chunks(long long n, int L)
{
    long long P = (n + L - 1) / L;
    if (P > n / 2)
        P = n / 2;
    return P < 1 ? 1 : (int)P;
}

#endif
