// Thomas kernel of lines split over the lanes and warps of a block (ts_line): see the first comment
// below. Instantiated and launched by cuda/planner.cu.
#ifndef TRIDI_CUDA_KERNELS_SPLIT_CUH
#define TRIDI_CUDA_KERNELS_SPLIT_CUH

#include <cooperative_groups.h>

#include <cstddef>
#include <cstdint>

#include "common.cuh"

namespace {

// ---- Split lines: several threads per line ----------------------------------------------------------
// tk_line gives a line one thread, so a grid of few lines (MOHID's 140x140x56 has 7840 x lines: one warp
// per SM scheduler) leaves the GPU waiting on each thread's chain of dependent divisions, and lines too
// long for W/G on chip pay 32 B/cell of scratch traffic. ts_line cuts a line into P segments of at most
// L unknowns, one lane per segment, a segment's inputs, W/G and answers in registers:
//  A. each segment's effect on the elimination as a linear map. The elimination is linear in the leading
//     principal minors p(m) (p(m) = E p(m-1) - D F(m-1) p(m-2), the pivot is p(m)/p(m-1)) and in
//     h(m) = p(m) G(m) (h(m) = R p(m-1) - D h(m-1)), so (p(m), p(m-1), h(m)) goes through a segment by a
//     3x3 matrix, kept scaled by powers of two (exact; only ratios matter);
//  B. a scan of those maps over the line's segments gives the state before every segment;
//  C. each segment runs MOHID's recurrence (W, G in double, the same pivots) from that state;
//  D. each segment's back substitution as an affine map x(first) = alpha x(first of next) + beta, and a
//     scan of those from the line's end gives every segment the answer after it, rounded to its type;
//  E. each segment substitutes from that answer, rounding every answer as MOHID's back substitution does.
// The answers equal one thread's within rounding (not always bit for bit: the state and the answer at a
// segment's edge are computed another way). A failing line (zero pivot, non-finite value, overflow) is
// flagged as in tk_line. The maps of A and D are only shortcuts: where A's overflow (inputs near the ends
// of the double range) the states are computed one unknown at a time, and where D's grow (a W above 1,
// never in a diagonally dominant line) or overflow the segments substitute one after another.
//
// Layout (ts_geom; below SW, WL, LW are its segs_per_warp, warps_per_line, lines_per_warp): a warp holds
// LW = 32 / SW lines of SW segments each, and a line's P = SW * WL segments
// span WL warps of one block. The scans run over a warp's lanes with shuffles, then across the WL warps
// through shared memory (a named barrier per group of WL warps; none when WL = 1, so warps stay
// independent and the loads of one overlap the arithmetic of others).
//  - x lines (a line's cells contiguous): the lanes of a line are neighbours (segments_first) and read neighbouring
//    runs of one line through L1; up to 32 * TS_L unknowns a line fits in one warp, longer ones take
//    several (x lines of 1024 unknowns: 4 warps, faster than tk_line with its scratch).
//  - y/z lines (neighbouring lines neighbouring in memory): the lanes run over LW lines first, so each
//    load reads SW runs of LW consecutive cells (LW = 8: a 32-byte sector of float); past 512 unknowns a
//    line would need more than 16 warps of 4 segments, so LW drops to 4.
// Threads per block where groups of WL warps fill it (WL = 1 or 2); a group of 3 or more warps is a block
// alone (96 threads for 3).
constexpr int TS_BLOCK = 128;
constexpr int TS_BLOCK_MAX = 512; // at most: 128 registers per thread
constexpr int TS_WL_MAX = TS_BLOCK_MAX / 32;
// Unknowns per lane, at most. 16 spilled registers (mixed precision: 272 bytes per thread) and measured
// slower than 8 on x lines of 384-1024 unknowns (see docs/decisions/006).
constexpr int TS_L = 8;


// 2^-e for m in [2^e, 2^(e+1)) (m > 0 finite); 1 for 0 and non-finite m. The exponent is clamped so the
// scale stays a normal number.
__device__ __forceinline__ double ts_unscale(double m)
{
    const int eb = (__double2hiint(m) >> 20) & 0x7ff;
    if (eb == 0 || eb == 0x7ff)
        return 1.0;
    return __hiloint2double((2046 - min(max(eb, 2), 2045)) << 20, 0);
}

// A segment's map of (p, p_, h): [[a b 0] [c d 0] [e f g]].
struct ts_map {
    double a, b, c, d, e, f, g;
};

// Scales m by the power of two that brings its largest entry into [1, 2) (exact: only ratios matter).
__device__ __forceinline__ void ts_rescale(ts_map &m)
{
    const double sc = ts_unscale(fmax(fmax(fmax(fabs(m.a), fabs(m.b)), fmax(fabs(m.c), fabs(m.d))),
                                      fmax(fmax(fabs(m.e), fabs(m.f)), fabs(m.g))));
    m.a *= sc, m.b *= sc, m.c *= sc, m.d *= sc, m.e *= sc, m.f *= sc, m.g *= sc;
}

// later * earlier, not rescaled: the scans compose maps whose largest entry is in [1, 2), and an entry of
// such a product is at most 3 * 2 * 2; five levels of a warp's scan (each composing two composed maps)
// stay below 1e50, and the up to 15 warps of a line composed one after another below 1e17, far inside
// the double range. Rescaling each product was measured as a fifth of a long x line's instructions.
__device__ __forceinline__ ts_map ts_compose(const ts_map &l, const ts_map &r)
{
    ts_map m;
    m.a = fma(l.a, r.a, l.b * r.c);
    m.b = fma(l.a, r.b, l.b * r.d);
    m.c = fma(l.c, r.a, l.d * r.c);
    m.d = fma(l.c, r.b, l.d * r.d);
    m.e = fma(l.e, r.a, fma(l.f, r.c, l.g * r.e));
    m.f = fma(l.e, r.b, fma(l.f, r.d, l.g * r.f));
    m.g = l.g * r.g;
    return m;
}

__device__ __forceinline__ ts_map ts_shfl_up(const ts_map &m, int d)
{
    return {__shfl_up_sync(0xffffffffu, m.a, d), __shfl_up_sync(0xffffffffu, m.b, d),
            __shfl_up_sync(0xffffffffu, m.c, d), __shfl_up_sync(0xffffffffu, m.d, d),
            __shfl_up_sync(0xffffffffu, m.e, d), __shfl_up_sync(0xffffffffu, m.f, d),
            __shfl_up_sync(0xffffffffu, m.g, d)};
}

// The WL warps of one group meet: barrier 1 or 2 (a block holds at most two groups of several warps;
// barrier 0 is __syncthreads). Constant ids: a register id makes ptxas reserve all 16 barriers, and the
// SM's barriers then allow only 4 blocks.
__device__ __forceinline__ void ts_group_sync(int gib, int WL)
{
    if (gib == 0)
        asm volatile("bar.sync 1, %0;" ::"r"(32 * WL) : "memory");
    else
        asm volatile("bar.sync 2, %0;" ::"r"(32 * WL) : "memory");
}

// What the warps of a group exchange: per warp and line, the warp's forward map, its back-substitution map
// (alpha, beta), the answer handed on by the segment-after-segment path, and whether its maps grew.
struct ts_xchg_cell {
    ts_map fw;
    double al, be;
    int bad; // the warp's segments of the line failed
};

__host__ __device__ inline size_t ts_xchg_bytes(const ts_geom &g)
{
    const size_t b = (size_t)g.warps_per_line * g.lines_per_warp * sizeof(ts_xchg_cell) +
                     g.lines_per_warp * sizeof(double) + g.warps_per_line * sizeof(int);
    return g.warps_per_line > 1 ? (b + 15) / 16 * 16 : 0; // a group's area stays aligned for the next
}

// Shared memory of a ts_line block of gpb groups: the groups' exchange areas and, in the one-wave variant,
// the answers of `per_group` iterations of each group until the grid barrier.
template <class TX>
__host__ __device__ inline size_t ts_smem_bytes(int64_t n, const ts_geom &g, int gpb, int64_t per_group)
{
    return gpb * ts_xchg_bytes(g) + (size_t)gpb * per_group * g.lines_per_warp * n * sizeof(TX);
}

// MULTI: a line may span several warps (WL > 1); without it the exchange code is compiled out (faster on
// x lines of 256 unknowns, which keeps fewer registers live). QF: geom.segments_first, whose lines
// are contiguous (x lines: unit strides, so a lane's loads and stores take immediate offsets from one
// address). The y/z layout, used only when forced, has one variant: MULTI, for any WL.
template <class TL, class TD, class TX, bool COOP, bool MULTI, bool QF>
__global__ void __launch_bounds__(TS_BLOCK_MAX) ts_line(const tk_args a, const ts_geom g)
{
    using I = int32_t; // planned only when every offset fits
    constexpr int L = TS_L;
    extern __shared__ __align__(16) unsigned char tk_dyn[];
    const int SW = g.segs_per_warp, WL = MULTI ? g.warps_per_line : 1, LW = g.lines_per_warp, P = SW * WL;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, wg = warp % WL, gib = warp / WL;
    const int t = QF ? lane / SW : lane % LW, qi = QF ? lane % SW : lane / LW; // line, segment in warp
    const int qs = QF ? 1 : LW; // lanes from one segment of a line to the next
    const int q = wg * SW + qi;
    const int n = (int)a.n, Ls = (n + P - 1) / P, s = q * Ls, len = max(0, min(Ls, n - s));
    const int64_t ngroups = (a.l_count + LW - 1) / LW;
    const int gpb = (int)(blockDim.x >> 5) / WL;
    const int64_t slot = (int64_t)blockIdx.x * gpb + gib, nslots = (int64_t)gridDim.x * gpb;
    const int64_t per_group = (ngroups + nslots - 1) / nslots;
    const size_t xbytes = ts_xchg_bytes(g);
    unsigned char *xc = tk_dyn + (size_t)gib * xbytes;
    ts_xchg_cell *cells = (ts_xchg_cell *)xc;                           // [WL][LW]
    double *handed = (double *)(xc + (size_t)WL * LW * sizeof(ts_xchg_cell)); // [LW]
    int *grew = (int *)(handed + LW);                                   // [WL]
    TX *stash = (TX *)(tk_dyn + gpb * xbytes) + (size_t)gib * per_group * LW * n;
    const TD *E = (const TD *)a.E;
    const TL *D = (const TL *)a.D, *F = (const TL *)a.F, *R = (const TL *)a.R;
    TX *X = (TX *)a.X;
    const I si = QF ? 1 : (I)a.in.sm, so = QF ? 1 : (I)a.out.sm;
    const bool xw = MULTI && WL > 1; // warps exchange

    int it = 0;
    bool recorded = false; // this lane recorded a failing line (tk_finish)
    for (int64_t grp = slot; grp < ngroups; grp += nslots, ++it) {
        const int64_t li0 = grp * LW;
        const bool active = t < (int)min((int64_t)LW, a.l_count - li0);
        const int my = active ? len : 0; // unknowns this lane solves
        const int64_t l = a.l_begin + li0 + (active ? t : 0), l1 = l % a.n1, l2 = l / a.n1;
        const I io = (I)(a.in.off + l1 * a.in.s1 + l2 * a.in.s2);
        const I oo = (I)(a.out.off + l1 * a.out.s1 + l2 * a.out.s2);

        // The segment's inputs, all loads issued at once. D at the first unknown and F at the last are
        // never read (MOHID's rules); F of the unknown before the segment enters its first pivot.
        TL dv[L], fv[L], rv[L];
        TD ev[L];
        TL fprev = TL(0);
        const I o0 = io + (I)s * si;
#pragma unroll
        for (int k = 0; k < L; ++k) {
            const I o = o0 + (I)k * si;
            const int m = s + k;
            ev[k] = k < my ? __ldg(E + o) : TD(1);
            rv[k] = k < my ? __ldg(R + o) : TL(0);
            dv[k] = k < my && m > 0 ? __ldg(D + o) : TL(0);
            fv[k] = k < my && m < n - 1 ? __ldg(F + o) : TL(0);
        }
        if (my && s > 0)
            fprev = __ldg(F + o0 - si);

        // A. (p, p_, h) after the segment = map * (p, p_, h) before it, rescaled every TS_RESCALE unknowns.
        // A step multiplies the entries by at most about |E| + |D F|: with float lower/upper/rhs four steps
        // stay inside the double range unless E is beyond float's (then the maps overflow, and the
        // fallback below takes over); double data rescales every 2 unknowns.
        constexpr int TS_RESCALE = sizeof(TL) == 4 ? 4 : 2;
        ts_map mp = {1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0};
#pragma unroll
        for (int k = 0; k < L; ++k) {
            if (k < my) {
                const double d = (double)dv[k], e = (double)ev[k], r = (double)rv[k];
                const double df = d * (double)(k ? fv[k - 1] : fprev);
                const double na = fma(e, mp.a, -df * mp.c), nb = fma(e, mp.b, -df * mp.d);
                const double ne = fma(r, mp.a, -d * mp.e), nf = fma(r, mp.b, -d * mp.f);
                mp.g = -d * mp.g;
                mp.c = mp.a, mp.d = mp.b, mp.a = na, mp.b = nb, mp.e = ne, mp.f = nf;
            }
            if (k % TS_RESCALE == TS_RESCALE - 1)
                ts_rescale(mp);
        }
        // B. Inclusive scan over the warp's segments of the line: mp = map of segments wg*SW..q.
        for (int d = 1; d < SW; d <<= 1) {
            const ts_map o = ts_shfl_up(mp, d * qs);
            if (qi >= d)
                mp = ts_compose(mp, o);
        }
        ts_rescale(mp);
        // Then over the warps: the maps of the warps before this one, composed, come first. `pre` is
        // the state before the warp's first segment (the state before unknown 0 being (p(-1), p(-2),
        // h(-1)) = (1, 0, 0)).
        double pa = 1.0, pc = 0.0, pe = 0.0;
        if (xw) {
            if (qi == SW - 1)
                cells[wg * LW + t].fw = mp;
            ts_group_sync(gib, WL);
            if (wg > 0) {
                ts_map pre = cells[t].fw;
                for (int w = 1; w < wg; ++w)
                    pre = ts_compose(cells[w * LW + t].fw, pre);
                mp = ts_compose(mp, pre);
                pa = pre.a, pc = pre.c, pe = pre.e;
            }
        }
        // The state before segment q is the first column of the map of segments 0..q-1.
        double vp = __shfl_up_sync(0xffffffffu, mp.a, qs), vq = __shfl_up_sync(0xffffffffu, mp.c, qs),
               vh = __shfl_up_sync(0xffffffffu, mp.e, qs);
        if (qi == 0)
            vp = pa, vq = pc, vh = pe;

        // C. The recurrence over the segment (the core's steps in FAST's arithmetic, tk_fused), W and G kept
        // in registers.
        double wv[L], gv[L];
        bool bad = false;
        {
            double w = 0.0, gg = 0.0;
            if (my && s > 0) {
                w = -(double)fprev * vq / vp; // -F(s-1) p(s-2) / p(s-1)
                gg = vh / vp;                 // h(s-1) / p(s-1)
                if (!tk_finite(w) || !tk_finite(gg)) {
                    // The maps overflowed, or the line fails before this segment (which the segment holding
                    // the failure reports): the state one unknown at a time, with two divisions as MOHID.
                    tk_fused_first((double)__ldg(E + io), (double)__ldg(F + io), (double)__ldg(R + io), n == 1, &w,
                                   &gg);
                    for (int m = 1; m < s; ++m) {
                        const I o = io + (I)m * si;
                        double den;
                        tk_fused_step(TRIDI_FORM_DIV, (double)__ldg(D + o), (double)__ldg(E + o),
                                      (double)__ldg(F + o), (double)__ldg(R + o), w, gg, 0, &den, &w, &gg);
                    }
                }
            }
#pragma unroll
            for (int k = 0; k < L; ++k) {
                const int m = s + k;
                if (k >= my) { // past the segment: x passes through unchanged (x = 1 x + 0)
                    wv[k] = 1.0, gv[k] = 0.0;
                    continue;
                }
                // W is 0 at the line's last unknown: the back substitution starts from a zero beyond the line
                tk_unknown<TK_AR_RCP, false>(m == 0, m == n - 1, (double)dv[k], (double)ev[k], (double)fv[k],
                                             (double)rv[k], w, gg, bad);
                wv[k] = w, gv[k] = gg;
            }
        }

        // D. x(s) = al x(s + len) + be over the segment, then a scan from the line's end: (al, be) of
        // segments q..P-1, whose be is x(s) (the answer past the line being zero).
        double al = 1.0, be = 0.0;
#pragma unroll
        for (int k = L - 1; k >= 0; --k) {
            be = tk_fused_back(wv[k], be, gv[k]);
            al = wv[k] * al;
        }
        // Composing these maps is as accurate as substituting one unknown at a time while they do not
        // grow (|alpha| <= 1: every W of a diagonally dominant line is below 1); growing maps compute the
        // edge answer as a difference of large terms (seen: 1e240 for an answer of 1), so then the group
        // substitutes segment after segment instead.
        const bool grows = !(fabs(al) <= 1.0);
        for (int d = 1; d < SW; d <<= 1) {
            const double oa = __shfl_down_sync(0xffffffffu, al, d * qs), ob = __shfl_down_sync(0xffffffffu, be, d * qs);
            if (qi + d < SW) {
                be = fma(al, ob, be);
                al *= oa;
            }
        }
        bool detour = __any_sync(0xffffffffu, grows | !tk_finite(al) | !tk_finite(be));
        // The answer at the first unknown of the next warp's segments: the later warps' maps applied
        // from the line's end.
        double next = 0.0;
        if (xw) {
            if (qi == 0) {
                cells[wg * LW + t].al = al;
                cells[wg * LW + t].be = be;
            }
            if (lane == 0)
                grew[wg] = detour;
            ts_group_sync(gib, WL);
            detour = false;
            for (int w = 0; w < WL; ++w)
                detour |= grew[w] != 0;
            for (int w = WL - 1; w > wg; --w)
                next = fma(cells[w * LW + t].al, next, cells[w * LW + t].be);
        }
        double after = __shfl_down_sync(0xffffffffu, fma(al, next, be), qs); // x at the next segment's first
        if (qi == SW - 1)
            after = next;

        // E. Back substitution from the edge answer, each answer rounded to TX as MOHID's are.
        TX xs[L];
        TX mx = TX(0);
        auto substitute = [&](TX x) {
#pragma unroll
            for (int k = L - 1; k >= 0; --k) {
                x = (TX)tk_fused_back(wv[k], (double)x, gv[k]);
                mx = tk_max(mx, tk_abs(x));
                xs[k] = x;
            }
            return x;
        };
        if (!detour) {
            substitute((TX)after);
        } else {
            // Segment after segment from the line's end, each from the answer of the one after it: within
            // a warp through shuffles, from warp to warp through shared memory.
            const int first_lane = QF ? t * SW : t; // lane of the line's first segment in the warp
            for (int w = WL - 1; w >= 0; --w) {
                if (wg == w) {
                    TX x = w == WL - 1 ? TX(0) : (TX)handed[t];
                    __syncwarp(); // every lane has read handed[t] before lane qi = 0 overwrites it
                    for (int j = SW - 1; j >= 0; --j) {
                        const TX first = qi == j ? substitute(x) : TX(0);
                        x = __shfl_sync(0xffffffffu, first, first_lane + j * qs);
                    }
                    if (xw && qi == 0)
                        handed[t] = (double)x;
                }
                if (xw)
                    ts_group_sync(gib, WL);
            }
        }
        bad |= !tk_finite_x(mx);
        // Whether the line failed in any of its segments: over the line's lanes of this warp, then over
        // its warps. A failing line writes none of its answers.
        const unsigned ballot = __ballot_sync(0xffffffffu, bad && active);
        unsigned mine = 0;
        for (int j = 0; j < SW; ++j)
            mine |= 1u << (QF ? t * SW + j : t + j * LW);
        bool line_bad = (ballot & mine) != 0;
        if (xw) {
            if (qi == 0)
                cells[wg * LW + t].bad = line_bad;
            ts_group_sync(gib, WL);
            for (int w = 0; w < WL; ++w)
                line_bad |= cells[w * LW + t].bad != 0;
        }
        if (bad && active)
            atomicMin(a.err, (unsigned long long)l);
        if (line_bad && active && qi == 0 && wg == 0 && a.nfail)
            atomicAdd(a.nfail, 1ull);
        recorded |= (bad || line_bad) && active;
#pragma unroll
        for (int k = 0; k < L; ++k)
            if (k < my && (COOP || !line_bad)) {
                if (COOP)
                    stash[((size_t)it * LW + t) * n + s + k] = xs[k];
                else
                    X[oo + (I)(s + k) * so] = xs[k];
            }
    }
    if (!COOP) {
        tk_finish(a, recorded);
        return;
    }
    cooperative_groups::this_grid().sync();
    const unsigned long long verdict = *(volatile unsigned long long *)a.err;
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *a.mirror = verdict;
        *a.next_err = ULLONG_MAX;
    }
    if (verdict != ULLONG_MAX)
        return;
    it = 0;
    for (int64_t grp = slot; grp < ngroups; grp += nslots, ++it) {
        const int64_t li0 = grp * LW;
        if (t >= (int)min((int64_t)LW, a.l_count - li0))
            continue;
        const int64_t l = a.l_begin + li0 + t, l1 = l % a.n1, l2 = l / a.n1;
        const I oo = (I)(a.out.off + l1 * a.out.s1 + l2 * a.out.s2);
#pragma unroll
        for (int k = 0; k < L; ++k)
            if (k < len)
                X[oo + (I)(s + k) * so] = stash[((size_t)it * LW + t) * n + s + k];
    }
}

} // namespace

#endif
