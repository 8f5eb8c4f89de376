// Kernel choice of the CUDA backend: which Thomas kernel (one line per thread, cuda/kernels/line.cuh, the
// same with W/G checkpointed, ckpt.cuh, on x lines also xtile.cuh, or lines split over lanes, split.cuh) a
// solve takes, its variant and launch shape from the device's occupancy, and the launch. The only file that
// instantiates the solve kernels.
#include "planner.h"

#include "cuda_status.h"
#include "kernels/ckpt.cuh"
#include "kernels/line.cuh"
#include "kernels/pair.cuh"
#include "kernels/split.cuh"
#include "kernels/twisted.cuh"
#include "kernels/xtile.cuh"
#include "planner_internal.cuh"

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <type_traits>
#include <unordered_map>

namespace {

// Shared memory of one block (W/G when on chip, plus the stage ring).
template <class TL, class TD>
inline size_t tk_smem_bytes(int64_t n, bool contig, bool wgs, int ns)
{
    // y/z lines stage their inputs in registers: no ring.
    return (wgs ? tk_wg_bytes(n) : 0) + (contig ? (size_t)ns * tk_stage_bytes<TL, TD>() : 0);
}

// The split shape for lines of n unknowns, at most TS_L per lane; false where a line would need more than
// TS_WL_MAX warps.
//  - x lines of up to 32 * TS_L unknowns: one warp, P lanes per line (a power of two). Longer: 32 lanes per
//    warp and as many warps as the line needs.
//  - y/z lines: 8 lines per warp (a run of 8 float is one 32-byte sector) of 4 segments each (segs_per_warp), and as
//    many warps as the line needs (fewer lines per warp where that passes TS_WL_MAX); short lines fit in
//    one warp of 32 / P lines.
inline bool ts_shape(int64_t n, bool contig, int forced_lanes, ts_geom *g)
{
    auto ceil_div = [](int64_t x, int64_t y) { return (x + y - 1) / y; };
    const int64_t need = ceil_div(n, TS_L); // segments
    int sw = 1;
    while (sw < need && sw < 32)
        sw *= 2;
    if (contig && need <= 32) {
        if (forced_lanes && ceil_div(n, forced_lanes) <= TS_L)
            sw = forced_lanes;
    } else if (!contig) {
        sw = std::min(sw, 4);
    }
    int64_t wl = ceil_div(need, sw);
    while (wl > TS_WL_MAX && sw < 32)
        sw *= 2, wl = ceil_div(need, sw);
    if (wl > TS_WL_MAX)
        return false;
    g->segs_per_warp = sw, g->warps_per_line = (int)wl, g->lines_per_warp = 32 / sw, g->segments_first = contig;
    return true;
}

template <class TL, class TD, class TX>
void *ts_kernel_of(const tk_plan &p)
{
    if (!p.geom.segments_first)
        return p.one_wave ? (void *)ts_line<TL, TD, TX, true, true, false> : (void *)ts_line<TL, TD, TX, false, true, false>;
    if (p.geom.warps_per_line > 1)
        return p.one_wave ? (void *)ts_line<TL, TD, TX, true, true, true> : (void *)ts_line<TL, TD, TX, false, true, true>;
    return p.one_wave ? (void *)ts_line<TL, TD, TX, true, false, true> : (void *)ts_line<TL, TD, TX, false, false, true>;
}

template <class TL, class TD, class TX, class I, bool CONTIG, int AR>
void *tk_kernel_of_a(const tk_plan &p)
{
    if (!p.wg_on_chip)
        return (void *)tk_line<TL, TD, TX, I, CONTIG, false, false, AR>;
    return p.one_wave ? (void *)tk_line<TL, TD, TX, I, CONTIG, true, true, AR>
                  : (void *)tk_line<TL, TD, TX, I, CONTIG, true, false, AR>;
}

// tx_line (decision 063) with its tiles in 16-byte granules (g16) or cell by cell (decision 096).
template <class TL, class TD, class TX, class I>
void *tx_kernel_of(const tk_plan &p, bool g16)
{
    if constexpr (sizeof(TL) == 4)
        if (p.arith == TK_AR_NEWTYPE)
            return g16 ? (void *)tx_line<TL, TD, TX, I, TK_AR_NEWTYPE, true>
                       : (void *)tx_line<TL, TD, TX, I, TK_AR_NEWTYPE, false>;
    return g16 ? (void *)tx_line<TL, TD, TX, I, TK_AR_MOHID, true> : (void *)tx_line<TL, TD, TX, I, TK_AR_MOHID, false>;
}

// NewType's arithmetic is MOHID's where upper is double (its pivot then is a double): not instantiated.
// The checkpointed kernel runs MOHID's arithmetic only (FAST keeps its own kernels and tk_line). A plan names
// tx_line's granule form; tk_run takes the cell-by-cell one where the arrays' addresses need it.
template <class TL, class TD, class TX, class I, bool CONTIG>
void *tk_kernel_of_c(const tk_plan &p)
{
    if (CONTIG && p.xtile) // TRIDI_CUDA_KERNEL=ckpt's x lines, and by rule float ones
        return tx_kernel_of<TL, TD, TX, I>(p, true);
    if (p.ckpt) {
        if constexpr (sizeof(TL) == 4)
            if (p.arith == TK_AR_NEWTYPE)
                return (void *)tc_line<TL, TD, TX, I, CONTIG, TK_AR_NEWTYPE>;
        return (void *)tc_line<TL, TD, TX, I, CONTIG, TK_AR_MOHID>;
    }
    if (p.arith == TK_AR_RCP)
        return tk_kernel_of_a<TL, TD, TX, I, CONTIG, TK_AR_RCP>(p);
    if constexpr (sizeof(TL) == 4)
        if (p.arith == TK_AR_NEWTYPE)
            return tk_kernel_of_a<TL, TD, TX, I, CONTIG, TK_AR_NEWTYPE>(p);
    return tk_kernel_of_a<TL, TD, TX, I, CONTIG, TK_AR_MOHID>(p);
}

// Two threads a line, strided lines alone: MOHID's arithmetic in tp_line (decision 069), FAST's in tw_line
// (decision 108).
template <class TL, class TD, class TX>
void *tp_kernel_of(const tk_plan &p)
{
    if (p.arith == TK_AR_RCP)
        return p.offsets32 ? (void *)tw_line<TL, TD, TX, int32_t> : (void *)tw_line<TL, TD, TX, int64_t>;
    return p.offsets32 ? (void *)tp_line<TL, TD, TX, int32_t> : (void *)tp_line<TL, TD, TX, int64_t>;
}

template <class TL, class TD, class TX>
void *tx_cells_kernel_of(const tk_plan &p)
{
    return p.offsets32 ? tx_kernel_of<TL, TD, TX, int32_t>(p, false) : tx_kernel_of<TL, TD, TX, int64_t>(p, false);
}

template <class TL, class TD, class TX>
void *tk_kernel_of(const tk_plan &p)
{
    if (p.pair)
        return tp_kernel_of<TL, TD, TX>(p);
    if (p.split)
        return ts_kernel_of<TL, TD, TX>(p);
    if (p.offsets32)
        return p.x_lines ? tk_kernel_of_c<TL, TD, TX, int32_t, true>(p) : tk_kernel_of_c<TL, TD, TX, int32_t, false>(p);
    return p.x_lines ? tk_kernel_of_c<TL, TD, TX, int64_t, true>(p) : tk_kernel_of_c<TL, TD, TX, int64_t, false>(p);
}

// tc_line's ring stages (x lines; y/z lines have none): the fewest stages that give the most blocks per SM,
// then as many stages as keep that; *per_sm: those blocks (0: it does not fit).
template <class TL, class TD, class TX, class Fits>
cudaError_t tc_best_stages(tk_plan &q, Fits &&fits, int *per_sm)
{
    const int ns_min = q.x_lines ? 2 : TK_STAGES_MAX;
    int best = -1;
    for (int ns = ns_min; ns <= TK_STAGES_MAX; ++ns) {
        tk_plan r = q;
        r.stages = ns;
        r.smem = q.xtile ? tx_smem_bytes<TL, TD, TX>(ns) : tc_smem_bytes<TL, TD, TX>(q.x_lines, ns);
        int b = 0;
        cudaError_t e = fits(r, &b);
        if (e != cudaSuccess)
            return e;
        if (b > 0 && b >= best) {
            best = b;
            q.stages = ns;
            q.smem = r.smem;
        }
    }
    *per_sm = best > 0 ? best : 0;
    return cudaSuccess;
}

// The planner's rule between tk_line (plan p, po blocks per SM) and tc_line (pn blocks per SM), decision 046.
// tc_line reads the inputs twice (mixed 48 B/cell against 24; the re-reads mostly miss L2) at about the
// bandwidth of a strided stream: it wins where tk_line is slower than that, i.e. where W/G would go to the
// global scratch, and where W/G fit on chip but so few lines per SM that tk_line waits on its chain of
// divisions: y/z lines of float lower/upper/rhs (their conversions lengthen it) and TC_GAIN times tk_line's
// lines in flight. Double lines and x lines on chip (not measured there) and one wave that tk_line holds
// whole (MOHID's small grids) keep tk_line.
constexpr int TC_GAIN = 3;
// tc_line's blocks per SM on x lines that take several waves (decision 047): fewer warps than registers
// allow keep fewer lines' 256-byte L2 fetches alive at once.
constexpr int TC_X_BLOCKS = 8;
// tx_line's blocks per SM on double x lines: the fastest of 4 to 9 (decision 105; float lines: TC_X_BLOCKS).
constexpr int TX_X_BLOCKS_DOUBLE = 4;
// tk_line's warps an SM up to which two threads a line take strided lines: tp_line (decision 069), tw_line
// (decision 108).
constexpr int TP_WARPS = 2;
constexpr int TW_WARPS = 8;
inline bool tc_preferred(const tk_plan &p, int po, int pn, int sms, bool float_rows)
{
    if (!p.wg_on_chip)
        return true;
    const int64_t b = p.blocks, old_in = std::min<int64_t>(b, (int64_t)po * sms),
                  new_in = std::min<int64_t>(b, (int64_t)pn * sms);
    return float_rows && !p.x_lines && new_in >= TC_GAIN * old_in;
}

// Chooses the variant for a.l_count lines of a.n unknowns. want_coop: the caller wants the guarded
// one-wave variant if every line fits on the GPU at once (*plan.one_wave says whether it does). choice: the
// context's TRIDI_CUDA_KERNEL (the default is the planner's rule).
template <class TL, class TD, class TX>
cudaError_t tk_make_plan(const tk_args &a, bool contiguous, bool want_coop, tk_plan *plan,
                         const tk_choice &choice = tk_choice{0, 0}, int arith = TK_AR_MOHID)
{
    tk_plan p{};
    p.arith = arith;
    p.x_lines = contiguous && a.in.sm == 1 && a.out.sm == 1;
    // Headroom: a stage may form the offsets of a few unknowns past the line end (it does not use them).
    p.offsets32 = tk_max_offset(a.in, a) < INT32_MAX - 4 * TK_K && tk_max_offset(a.out, a) < INT32_MAX - 4 * TK_K;
    p.wg_on_chip = !tk_needs_scratch(a.n);
    p.blocks = (unsigned)((a.l_count + TK_T - 1) / TK_T);
    p.stages = TK_STAGES_MAX;
    p.threads = TK_T;
    const int family = choice.family;
    // Split lines only when TRIDI_CUDA_KERNEL asks for them (decision 023; where they measured faster:
    // decision 002).
    if (family == 2 && p.offsets32 && a.n > 0 &&
        ts_shape(a.n, p.x_lines, choice.lanes, &p.geom)) {
        p.split = true;
        p.wg_on_chip = true; // no scratch
        const ts_geom &g = p.geom;
        const int gpb = std::max(1, TS_BLOCK / 32 / g.warps_per_line); // groups of warps_per_line warps per block
        p.threads = (unsigned)(32 * g.warps_per_line * gpb);
        const int64_t groups = (a.l_count + g.lines_per_warp - 1) / g.lines_per_warp, need = (groups + gpb - 1) / gpb;
        int sms = 0;
        size_t optin = 0;
        cudaError_t e;
        if (want_coop) {
            // One wave: each group keeps the answers of its lines in shared memory until the grid barrier;
            // as many blocks per SM as registers and that memory allow.
            tk_plan q = p;
            q.one_wave = true;
            const void *k = tk_kernel_of<TL, TD, TX>(q);
            if ((e = tk_prepare(k, &sms, &optin)) != cudaSuccess)
                return e;
            for (int want = 16; want >= 1 && !p.one_wave; want /= 2) {
                const int64_t gs = std::min<int64_t>(need, (int64_t)want * sms);
                const int64_t per_group = (groups + gs * gpb - 1) / (gs * gpb);
                q.smem = ts_smem_bytes<TX>(a.n, g, gpb, per_group);
                int per_sm = 0;
                if (q.smem > optin)
                    continue;
                if ((e = tk_occupancy(k, q.smem, &per_sm, (int)p.threads)) != cudaSuccess)
                    return e;
                if ((int64_t)per_sm * sms >= gs) {
                    q.blocks = (unsigned)gs;
                    p = q;
                }
            }
        }
        if (!p.one_wave) {
            p.blocks = (unsigned)need;
            p.smem = ts_smem_bytes<TX>(a.n, g, gpb, 0);
            if ((e = tk_prepare(tk_kernel_of<TL, TD, TX>(p), &sms, &optin, false)) != cudaSuccess)
                return e;
        }
        *plan = p;
        return cudaSuccess;
    }
    auto bytes = [&](int ns) { return tk_smem_bytes<TL, TD>(a.n, p.x_lines, p.wg_on_chip, ns); };
    // Blocks per SM of a variant; 0 when its shared memory is more than the device allows.
    int sms = 0;
    auto fits = [&](const tk_plan &q, int *per_sm) {
        size_t optin = 0;
        const void *k = tk_kernel_of<TL, TD, TX>(q);
        // tc_line's y/z lines use no shared memory: L1 keeps the 32 KiB configuration's rest (its loads, spills)
        cudaError_t e = tk_prepare(k, &sms, &optin, !(q.ckpt && !q.x_lines));
        *per_sm = 0;
        if (e != cudaSuccess || q.smem > optin)
            return e;
        return tk_occupancy(k, q.smem, per_sm);
    };
    cudaError_t e;
    // y/z lines have no ring: their stage count changes nothing, so one variant is asked about.
    const int ns_min = p.x_lines ? 2 : TK_STAGES_MAX;
    if (want_coop && p.wg_on_chip) {
        // The guarded one-wave variant, with fewer stages if that is what lets every line be resident.
        for (int ns = TK_STAGES_MAX; ns >= ns_min && !p.one_wave; --ns) {
            tk_plan q = p;
            q.stages = ns;
            q.smem = bytes(ns);
            q.one_wave = true;
            int per_sm = 0;
            if ((e = fits(q, &per_sm)) != cudaSuccess)
                return e;
            if ((int64_t)per_sm * sms >= (int64_t)p.blocks)
                p = q;
        }
    }
    if (!p.one_wave && p.wg_on_chip) {
        // Several waves: as many lines per SM as two stages allow (W/G dominate the shared memory and the
        // SM's few warps are what bounds the speed), then as many stages as keep that occupancy.
        int best = 0;
        for (int ns = ns_min; ns <= TK_STAGES_MAX; ++ns) {
            tk_plan q = p;
            q.stages = ns;
            q.smem = bytes(ns);
            int per_sm = 0;
            if ((e = fits(q, &per_sm)) != cudaSuccess)
                return e;
            if (ns == ns_min)
                best = per_sm;
            if (per_sm >= best && per_sm > 0)
                p.stages = ns;
        }
    }
    if (!p.one_wave)
        p.smem = bytes(p.stages);
    size_t optin = 0;
    e = tk_prepare(tk_kernel_of<TL, TD, TX>(p), &sms, &optin);
    if (e == cudaSuccess && p.smem > optin)
        e = cudaErrorInvalidConfiguration;
    // MOHID's arithmetic with W/G checkpointed (tc_line, decision 046): forced, or where the rule prefers it.
    if (e == cudaSuccess && arith != TK_AR_RCP && a.n > 0 && (family == 3 || family == 0)) {
        tk_plan q = p;
        q.ckpt = true;
        q.wg_on_chip = false; // checkpoints in the scratch
        q.one_wave = false;
        // tx_line: x lines with the family forced, and by rule x lines over several waves of float operands
        // (mixed, all-float; decision 063) or all double (decision 105); other x lines keep tc_line's launch.
        const bool dbl = sizeof(TL) == 8 && sizeof(TD) == 8 && sizeof(TX) == 8;
        const bool x_types = (sizeof(TL) == 4 && sizeof(TX) == 4) || dbl;
        const int xblocks = dbl ? TX_X_BLOCKS_DOUBLE : TC_X_BLOCKS; // tx_line's blocks an SM
        q.xtile = q.x_lines && (family == 3 || (x_types && (int64_t)q.blocks > (int64_t)xblocks * sms));
        int pn = 0;
        if ((e = tc_best_stages<TL, TD, TX>(q, fits, &pn)) != cudaSuccess)
            return e;
        // x lines over several waves: TC_X_BLOCKS blocks per SM (shared memory padded) and two stages, tc_line
        // asking L2 for 256-byte fetches (decisions 047, 063); tx_line's tiles padded to xblocks on every grid
        // (more blocks an SM run slower, decisions 098, 105); kept only where the occupancy calculator confirms
        // those blocks.
        const int pad = q.xtile ? xblocks : TC_X_BLOCKS;
        if (q.x_lines && pn > pad && (q.xtile || (int64_t)q.blocks > (int64_t)pn * sms)) {
            tk_plan r = q;
            r.stages = 2;
            r.l2wide = !q.xtile;
            size_t optin = 0;
            if ((e = tk_prepare(tk_kernel_of<TL, TD, TX>(r), &sms, &optin)) != cudaSuccess)
                return e;
            const size_t natural = q.xtile ? tx_smem_bytes<TL, TD, TX>(2) : tc_smem_bytes<TL, TD, TX>(true, 2);
            // a block also holds 1 KiB of the SM's shared memory, which the per-block opt-in leaves out
            r.smem = std::max(natural, ((optin + 1024) / pad - 1024) / 128 * 128);
            int b = 0;
            if ((e = fits(r, &b)) != cudaSuccess)
                return e;
            if (b == pad) {
                q = r;
                pn = b;
            }
        }
        int po = 0;
        if (family == 0 && (e = fits(p, &po)) != cudaSuccess)
            return e;
        if (pn > 0 && (family == 3 || q.xtile || tc_preferred(p, po, pn, sms, sizeof(TL) == 4)))
            p = q;
        if (e == cudaSuccess && p.xtile) { // the cell-by-cell form, which tk_run may take, on the same terms
            size_t o = 0;
            e = tk_prepare(tx_cells_kernel_of<TL, TD, TX>(p), &sms, &o);
        }
    }
    // Strided lines whose tk_line launch leaves an SM few warps, where every line fits on the GPU at once:
    // two threads a line. MOHID's arithmetic (tp_line, decision 069) up to TP_WARPS warps an SM, FAST's
    // (tw_line, decision 108) up to TW_WARPS, with W/G on chip. x lines keep their cooperative ring, fuller
    // SMs and the guarded one-wave variant keep tk_line (measured no faster there).
    const bool pair_mohid = arith == TK_AR_MOHID && (int64_t)p.blocks <= (int64_t)TP_WARPS * sms;
    const bool pair_fast = arith == TK_AR_RCP && p.wg_on_chip && (int64_t)p.blocks <= (int64_t)TW_WARPS * sms;
    if (e == cudaSuccess && family == 0 && a.n > 0 && !p.one_wave && !p.x_lines && (pair_mohid || pair_fast)) {
        tk_plan q{};
        q.pair = true;
        q.arith = arith;
        q.x_lines = p.x_lines;
        q.offsets32 = p.offsets32;
        q.wg_on_chip = true;
        q.threads = TK_T;
        const int lines = pair_fast ? TW_L : TP_L;
        q.blocks = (unsigned)((a.l_count + lines - 1) / lines);
        q.smem = pair_fast ? tw_smem_bytes(a.n) : tp_smem_bytes(a.n);
        int pq = 0;
        if ((e = fits(q, &pq)) != cudaSuccess)
            return e;
        if (pq > 0 && (int64_t)pq * sms >= (int64_t)q.blocks)
            p = q;
    }
    *plan = p;
    return e;
}

template <class TL, class TD, class TX>
cudaError_t tk_run(const tk_args &a, const tk_plan &p, cudaStream_t stream)
{
    if (p.blocks == 0)
        return cudaSuccess;
    if constexpr (std::is_same_v<TL, TD> && std::is_same_v<TD, TX>)
        if (p.fast)
            return fast_run(sizeof(TL) == 4 ? TRIDI_FLOAT32 : TRIDI_FLOAT64, a, p, stream);
    void *k = p.xtile && !tx_granules_fit<TL, TD>(a) ? tx_cells_kernel_of<TL, TD, TX>(p) : tk_kernel_of<TL, TD, TX>(p);
    int ns = p.stages | (p.ckpt && p.l2wide ? 16 : 0); // tc_line reads the L2 hint in bit 4 of its stage count
    ts_geom geom = p.geom;
    void *params[] = {(void *)&a, p.split ? (void *)&geom : (void *)&ns}; // the kernels' second parameter
    if (p.one_wave)
        return cudaLaunchCooperativeKernel(k, dim3(p.blocks), dim3(p.threads), params, p.smem, stream);
    return cudaLaunchKernel(k, dim3(p.blocks), dim3(p.threads), params, p.smem, stream);
}

// Calls fn with null pointers of the three kernel operand types (lower/upper/rhs, diag, answer).
template <class Fn>
tridi_status with_types(const kernel_types &k, Fn &&fn)
{
    using F = float;
    using D = double;
    if (k.l == TRIDI_FLOAT32 && k.d == TRIDI_FLOAT32 && k.x == TRIDI_FLOAT32)
        return fn((F *)nullptr, (F *)nullptr, (F *)nullptr);
    if (k.l == TRIDI_FLOAT64 && k.d == TRIDI_FLOAT64 && k.x == TRIDI_FLOAT64)
        return fn((D *)nullptr, (D *)nullptr, (D *)nullptr);
    if (k.l == TRIDI_FLOAT32 && k.d == TRIDI_FLOAT64 && k.x == TRIDI_FLOAT32)
        return fn((F *)nullptr, (D *)nullptr, (F *)nullptr);
    if (k.l == TRIDI_FLOAT32 && k.d == TRIDI_FLOAT32 && k.x == TRIDI_FLOAT64)
        return fn((F *)nullptr, (F *)nullptr, (D *)nullptr);
    return tridi_fail(TRIDI_ERROR_INTERNAL, "tridi (CUDA): no kernel for this type combination (please report)");
}

} // namespace

namespace tridi_cuda {

// Per device: SM count and, per kernel variant, the opt-in to the whole shared memory. Kept once per
// process; a small table because a process drives few devices and few variants.
struct tk_device_cache {
    static constexpr int MAXD = 64, MAXK = 320;
    std::mutex mu;
    int sms[MAXD] = {};
    size_t smem_optin[MAXD] = {};
    const void *opted[MAXD][MAXK] = {};
    int nopted[MAXD] = {};
    // Blocks per SM of (kernel, dynamic shared memory << 11 | threads) on each device, as the occupancy
    // calculator says.
    std::unordered_map<const void *, std::unordered_map<size_t, int>> per_sm[MAXD];
};

tk_device_cache &tk_cache()
{
    static tk_device_cache c;
    return c;
}

// max_shared: the kernel prefers shared memory to L1 (the one-wave variants and tk_line, whose W/G fill it);
// otherwise 32 KiB of shared memory (split lines that run in several waves need a few KiB per block for
// the exchange between warps, and read x lines through L1; the default let the driver choose 8 KiB, one
// block of 9 warps per SM).
constexpr int TS_CARVEOUT_PERCENT = 14; // of 228 KiB: the 32 KiB configuration
cudaError_t tk_prepare(const void *kernel, int *sms, size_t *smem_optin, bool max_shared)
{
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    tk_device_cache &c = tk_cache();
    std::lock_guard<std::mutex> lock(c.mu);
    const int d = dev & (tk_device_cache::MAXD - 1);
    if (!c.sms[d]) {
        int v = 0, o = 0;
        if ((e = cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess)
            return e;
        if ((e = cudaDeviceGetAttribute(&o, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev)) != cudaSuccess)
            return e;
        c.sms[d] = v;
        c.smem_optin[d] = (size_t)o;
    }
    *sms = c.sms[d];
    *smem_optin = c.smem_optin[d];
    for (int i = 0; i < c.nopted[d]; ++i)
        if (c.opted[d][i] == kernel)
            return cudaSuccess;
    if ((e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)c.smem_optin[d])) != cudaSuccess)
        return e;
    // The occupancy calculator and the cooperative launch's check must see the same L1/shared split.
    if ((e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  max_shared ? (int)cudaSharedmemCarveoutMaxShared : TS_CARVEOUT_PERCENT)) !=
        cudaSuccess)
        return e;
    if (c.nopted[d] < tk_device_cache::MAXK)
        c.opted[d][c.nopted[d]++] = kernel;
    return cudaSuccess;
}

cudaError_t tk_occupancy(const void *kernel, size_t smem, int *per_sm, int threads)
{
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess)
        return e;
    tk_device_cache &c = tk_cache();
    std::lock_guard<std::mutex> lock(c.mu);
    auto &m = c.per_sm[dev & (tk_device_cache::MAXD - 1)][kernel];
    const size_t key = smem << 11 | (size_t)threads;
    auto it = m.find(key);
    if (it != m.end()) {
        *per_sm = it->second;
        return cudaSuccess;
    }
    if ((e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernel, threads, smem)) == cudaSuccess)
        m[key] = *per_sm;
    return e;
}

bool tk_needs_scratch(int64_t n) { return tk_wg_bytes(n) > (size_t)TK_WG_SHARED_MAX; }

bool plan_needs_scratch(const tk_plan &plan, int64_t n)
{
    return plan.ckpt || (!plan.split && !plan.fast && !plan.pair && tk_needs_scratch(n));
}

kernel_types types_of(const tridi_problem *p, bool f32_transfer)
{
    kernel_types k{p->arrays.lower_type, p->arrays.diag_type, p->arrays.x_type};
    // FAST arithmetic on the arrays' own type: all float or all double (decision 021)
    k.fast = p->arith == TRIDI_ARITH_FAST && k.l == k.d && k.d == k.x;
    // NewType's float pivot only where the caller's upper values are float (not where the float transfer
    // made them so): MOHID's arithmetic otherwise, as on the CPU (decision 041)
    k.arith = p->arith == TRIDI_ARITH_FAST ? TK_AR_RCP : tridi_newtype_pivot_f32(p) ? TK_AR_NEWTYPE : TK_AR_MOHID;
    if (f32_transfer) {
        k.l = TRIDI_FLOAT32;
        k.d = TRIDI_FLOAT32;
    }
    return k;
}

tridi_status plan_solve(const tk_choice &choice, const kernel_types &k, const tk_args &a, bool contiguous,
                        bool want_coop, tk_plan *plan)
{
    return with_types(k, [&](auto *l, auto *d, auto *x) {
        using TL = std::remove_pointer_t<decltype(l)>;
        using TD = std::remove_pointer_t<decltype(d)>;
        using TX = std::remove_pointer_t<decltype(x)>;
        // FAST arithmetic unless TRIDI_CUDA_KERNEL forces a family of MOHID's kernels (decision 021). Lines
        // the FAST kernel does not take go to one thread per line (two on grids of few lines: tw_line,
        // decision 108): split lines of more than 2048 unknowns with rows scaled over 10^-30..10^30 measured
        // outside the FAST bound (test_fast_gpu).
        // MOHID's arithmetic is MOHID's recurrence bit for bit: one thread per line, W/G kept (tk_line) or
        // checkpointed (tc_line) by the planner's rule (decision 046), unless TRIDI_CUDA_KERNEL forces a
        // family: split lines' answers differ within rounding and lose accuracy on lines of widely scaled
        // rows (decision 023). TRIDI_CUDA_KERNEL=ckpt leaves FAST solves to their own kernels.
        tk_choice c = choice;
        const bool auto_fast = choice.family == 0 || choice.family == 3;
        if (k.arith == TK_AR_RCP && choice.family == 3)
            c = tk_choice{0, 0};
        if constexpr (std::is_same_v<TL, TD> && std::is_same_v<TD, TX>)
            if (k.fast && auto_fast) {
                CK(fast_plan(k.l, a, contiguous, plan), "planning the FAST kernel");
                if (plan->fast)
                    return TRIDI_SUCCESS;
            }
        CK((tk_make_plan<TL, TD, TX>(a, contiguous, want_coop, plan, c, k.arith)), "planning the Thomas kernel");
        return TRIDI_SUCCESS;
    });
}

tridi_status run_solve(const kernel_types &k, const tk_args &a, const tk_plan &plan, cudaStream_t s)
{
    return with_types(k, [&](auto *l, auto *d, auto *x) {
        using TL = std::remove_pointer_t<decltype(l)>;
        using TD = std::remove_pointer_t<decltype(d)>;
        using TX = std::remove_pointer_t<decltype(x)>;
        CK(injected_launch(s), "launching the Thomas kernel");
        CK((tk_run<TL, TD, TX>(a, plan, s)), "launching the Thomas kernel");
        return TRIDI_SUCCESS;
    });
}

// A plain (not cooperative) solve: the host-array pipeline's.
tridi_status launch_solve(const tk_choice &choice, const kernel_types &k, const tk_args &a, bool contiguous,
                          cudaStream_t s)
{
    tk_plan plan;
    tridi_status st = plan_solve(choice, k, a, contiguous, false, &plan);
    return st ? st : run_solve(k, a, plan, s);
}

} // namespace tridi_cuda
