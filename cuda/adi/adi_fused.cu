// Fused ADI sweeps on the GPU (docs/decisions/032): one kernel per sweep, each line partitioned over
// threads as the FAST resident solves partition theirs (cuda/kernels/fast_lines.cuh, decision 021). A thread
// forms the rows of its chunk of a line from the field and the coefficients with the cell arithmetic shared
// with the CPU (src/adi_cell.inc, ADI_COEF), rounded to the storage type as the staged path stores them,
// eliminates the chunk in registers, joins its line's chunks in shared memory (fp_join, decision 110) and
// writes the chunk's answers: the sweep reads its inputs once and writes its output once; no diagonal,
// right-hand side or elimination coefficient goes to memory.
#include "sweep_rows.cuh"

#include <cuda_runtime.h>

// Failures are deferred (docs/decisions/026): a line the partitioned solve flags is solved again by MOHID's
// recurrence (decision 022); if that fails too, its first failure is kept in the plan's status word
// (ADI_KEY) and every later sweep of the plan writes nothing until tridi_adi_synchronize has reported it
// (the word cleared and read: adi_status.cu).

namespace {

// One sweep along AXIS: a block takes geo.lines neighbouring lines (numbered with the lower other axis
// fastest, as ADI_KEY numbers them), each cut into geo.P chunks of at most L unknowns; MODE as the FAST
// solve lays out x lines (FP_CONTIG: a line's chunks on neighbouring threads) and y/z lines (FP_STRIDED:
// neighbouring lines on neighbouring threads, so every row's loads and the answers' stores are coalesced).
// FAMILY: FS, every line has the same rows (fs_block); FP, each line forms its own (fp_block); FO, x lines
// of their own rows staged through shared memory (fo_block). The rows along the line read their
// neighbours on the line (the thread's own chunk and the next ones) before any answer is written: a sweep
// may write its output over its own input.
enum { FP = 0, FS = 1, FO = 2 };

// This block's lines: li0 and the next (*nl in all). Blocks in line order, or in an x sweep's kernel built
// TILED (decision 104: a kernel of its own, so that the others keep their registers) tile after tile of
// fz.x_ktile k layers, each layer's lines cut into bands of geo.lines (the last one short where they do not
// divide), a tile's bands one after another and its layers fastest, so that the lines of neighbouring layers
// run at once (launch_kernel: the count of blocks).
template <bool TILED>
__device__ __forceinline__ int64_t block_lines(const adi_stage &s, const adi_fused &fz, const fp_geom &geo,
                                               int64_t nlines, int *nl)
{
    if constexpr (!TILED) {
        const int64_t li0 = (int64_t)blockIdx.x * geo.lines;
        *nl = (int)min((int64_t)geo.lines, nlines - li0);
        return li0;
    }
    const uint32_t b = blockIdx.x; // block numbers fit 32 bits (grid.x), and so does every product below
    const uint32_t nj = (uint32_t)s.n[1], bj = (nj + geo.lines - 1) / geo.lines, kt0 = (uint32_t)fz.x_ktile;
    const uint32_t k0 = b / (bj * kt0) * kt0, kt = min(kt0, (uint32_t)s.n[2] - k0), r = b - k0 * bj;
    const uint32_t j0 = r / kt * geo.lines;
    *nl = (int)min((uint32_t)geo.lines, nj - j0);
    return (int64_t)j0 + (int64_t)(k0 + r % kt) * nj;
}

template <typename T, int L, int MODE, int AXIS, int COEFS, int FAMILY, bool EXPL, bool LANES = false,
          typename XI = int64_t, int PX = 0, bool TILED = false>
__device__ __forceinline__ void sweep_block(const adi_stage &s, const adi_fused &fz, int64_t nlines, const fp_geom &geo,
                                            unsigned char *smem)
{
    using Rows = sweep_rows<T, L, AXIS, COEFS, EXPL, LANES, XI, PX>;
    static_assert(Rows::STAGED == (AXIS == 0), "fs_block stages x lines");
    static_assert(!Rows::RHS_ALL_LANES || (FAMILY == FS && AXIS != 0), "rhs from lanes: y/z lines of shared rows");
    int t, q;
    fp_place<MODE>(geo, &t, &q);
    int nl;
    const int64_t li0 = block_lines<TILED>(s, fz, geo, nlines, &nl);
    int64_t l1, l2;
    const int g = MODE == FP_STRIDED ? warp_run(geo.lines, sizeof(T)) : 1;
    const int64_t c0 = Rows::line_at(&s, li0 + (t < nl ? t : 0), &l1, &l2, g);
    // an earlier sweep failed (its verdict waits for tridi_adi_synchronize): the block forms and solves its
    // rows but writes nothing (src.halted)
    const bool halted = *fz.status != ADI_STATUS_CLEAR;
    Rows src{&s, &fz, l1 + l2 * s.n[Rows::A1], l1, l2, c0, s.n[AXIS], halted};
    if constexpr (FAMILY == FS)
        fs_block<T, L, MODE>(geo, (int)s.n[AXIS], nl, smem, src, (unsigned char *)fz.table);
    else if constexpr (FAMILY == FO)
        fo_block<T, L>(geo, (int)s.n[AXIS], nl, smem, src);
    else
        fp_block<T, L, MODE>(geo, (int)s.n[AXIS], nl, smem, src);
}

// !EXPL: a y/z sweep without explicit terms (x0_only), whose rows come from chunk_rows_x0.
template <typename T, int L, int MODE, int AXIS, int COEFS, bool EXPL>
__global__ void __launch_bounds__(FP_MAX_THREADS) fused_sweep(const __grid_constant__ adi_stage s,
                                                              const __grid_constant__ adi_fused fz, int64_t nlines,
                                                              const fp_geom geo)
{
    extern __shared__ __align__(16) unsigned char fp_dyn[];
    sweep_block<T, L, MODE, AXIS, COEFS, FP, EXPL>(s, fz, nlines, geo, fp_dyn);
}

// x lines of rows of their own (decision 048): blocks of at most FO_THREADS (a line of FP_N_MAX cells in
// chunks of CHUNK), fo_blocks_per_sm an SM: double two (128 registers), enough to hold a cell's loads, all
// issued before its arithmetic, without spilling (decision 111; 087 before it for long lines alone); float rows
// formed in float fit 64 registers with a few bytes of stack, and four blocks an SM beat three (064, 111).
constexpr int FO_THREADS = 256;
template <typename T>
constexpr int fo_blocks_per_sm() { return sizeof(T) == 4 ? 4 : 2; }
template <typename T, int L, int COEFS, typename XI, bool TILED = false>
__global__ void __launch_bounds__(FO_THREADS, fo_blocks_per_sm<T>()) fused_sweep_xown(const __grid_constant__ adi_stage s,
                                                                         const __grid_constant__ adi_fused fz,
                                                                         int64_t nlines, const fp_geom geo)
{
    extern __shared__ __align__(16) unsigned char fp_dyn[];
    sweep_block<T, L, FP_CONTIG, 0, COEFS, FO, true, false, XI, 0, TILED>(s, fz, nlines, geo, fp_dyn);
}

// Lines of shared rows: one thread carries a chunk's right-hand sides alone, so blocks stay small and
// several share an SM (decision 032). The registers a thread may have (decisions 034, 052, 065, 072-074):
// x blocks (at most 128 threads) four an SM (128 registers), a chunk's right-hand sides and its line's
// line_rhs without spilling, but float x lines whose cells read few loads (RHS_ONE, or x0 alone: !EXPL)
// five (96), which the occupancy pays for; y/z blocks (256 threads; 512 for lines of 64 chunks or more and
// double lines of 32, decisions 083, 084) 128 registers a thread: each holds more than 16 right-hand sides
// or loads (its explicit terms' loads, EXPL, double values, or float chunks of 32), which 80 would spill.
// ONE: the sweep's right-hand sides are RHS_ONE's.
template <typename T>
constexpr int fs_blocks_per_sm(int axis, bool expl, bool one)
{
    return axis == 0 ? (sizeof(T) == 8 || (expl && !one) ? 4 : 5) : 1;
}
constexpr int fs_threads(int axis) { return axis == 0 ? FS_X_THREADS : FS_LONG_THREADS; }

template <typename T, int L, int MODE, int AXIS, int COEFS, bool EXPL, bool LANES = false, bool ONE = false, int PX = 0,
          bool TILED = false>
__global__ void __launch_bounds__(fs_threads(AXIS), fs_blocks_per_sm<T>(AXIS, EXPL, ONE)) fused_sweep_shared(const __grid_constant__ adi_stage s,
                                                                                   const __grid_constant__ adi_fused fz,
                                                                                   int64_t nlines, const fp_geom geo)
{
    extern __shared__ __align__(16) unsigned char fp_dyn[];
    sweep_block<T, L, MODE, AXIS, COEFS, FS, EXPL, LANES, int64_t, PX, TILED>(s, fz, nlines, geo, fp_dyn);
}

// The table of the sweep's shared rows (line 0's), one thread a chunk, before the sweep on its stream, unless
// the plan's table for the axis holds them already (adi_fused.table_ready, decision 085).
template <typename T, int L, int AXIS, int COEFS>
__global__ void fused_table(const __grid_constant__ adi_stage s, const __grid_constant__ adi_fused fz, const fp_geom geo)
{
    const sweep_rows<T, L, AXIS, COEFS> src{&s, &fz, 0, 0, 0, s.origin, s.n[AXIS], false};
    fs_build_table<T>((unsigned char *)fz.table, (int)s.n[AXIS], geo.P, src);
}

// rhs_one_from_lanes where a warp holds runs of this many neighbouring lines or more: with fewer, half the
// lanes read their neighbours from memory anyway and the exchanges cost more than they save (decision 068).
constexpr int LANES_MIN_LINES = 8;

// Chunks of 8 for lines of their own rows: those rows take registers of their own, and chunks of 16 spill at
// the 128 registers a thread of a 512-thread block may have; 16 for shared rows (decision 032). Float y/z
// sweeps of coefficient arrays without explicit terms (x0_only: the Douglas step's corrections of the
// advection-diffusion operator) in chunks of 16: their rows fit those registers, and their join has half
// the rows (decision 075).
constexpr int CHUNK = 8, CHUNK_X0_F32 = 16;
// The shared memory every device gives a block without opting in: enough for every shape of lines up to
// FP_N_MAX but the staged rows of long x lines of their own (smem_optin); a guard.
constexpr size_t SMEM_MAX = 48 * 1024;

// Whether the lines along axis a all have the same rows: no kappa field, no velocity along a.
bool shared_rows(const adi_stage *s, int a) { return !s->kappa && !s->vel[a]; }

// Whether the stage's right-hand side is its x0 alone: no explicit term, and increments (no Dirichlet term
// moves to it).
bool x0_only(const adi_stage *s)
{
    return s->increment && s->x0 && s->alpha[0] == 0.0 && s->alpha[1] == 0.0 && s->alpha[2] == 0.0;
}

// Whether a y/z sweep of shared rows takes fs_block: sweep_rows::rhs forms explicit terms without coefficient
// arrays in line_rhs's RHS_ONE form alone; another stage's lines form their own rows (fp_block).
bool shared_rhs(const adi_stage *s, int a)
{
    return a == 0 || s->kappa || s->vel[0] || s->vel[1] || s->vel[2] || x0_only(s) || rhs_form(s, a) == RHS_ONE;
}

template <typename T>
bool shared_fits(int64_t n, int a, fp_geom *g)
{
    return fs_shape<T>(n, a == 0, g) && fs_smem_bytes<T>(n, *g, a == 0) <= SMEM_MAX;
}

// The shared memory a block may have on the current device once it opts in (x lines of their own rows
// stage four values a cell: a double line of FP_N_MAX cells takes about 72 KiB); SMEM_MAX if unknown.
size_t smem_optin()
{
    int dev = 0, v = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess || v < (int)SMEM_MAX) {
        cudaGetLastError();
        return SMEM_MAX;
    }
    return (size_t)v;
}

// An x sweep whose rows read the k layers above and below (a 3D Douglas step's first sweep) takes its blocks in
// tiles of X_KTILE layers where one layer's bytes, read and written, reach the L2 cache's size over
// X_KTILE_L2_SHARE: in line order a layer's rows are read again a whole layer later, from DRAM past that size;
// below it the tiles' scattered layers cost more than they save (decision 104). force: TRIDI_ADI_PATH=fusedk.
constexpr int X_KTILE = 16, X_KTILE_L2_SHARE = 5;
// The blocks of a tiled x sweep (block_lines): every k layer's lines in bands of g.lines, a layer's last band
// maybe short.
int64_t tiled_blocks(const adi_stage *s, const fp_geom &g) { return (s->n[1] + g.lines - 1) / g.lines * s->n[2]; }
int x_ktile(const adi_stage *s, const fp_geom &g, size_t tsize, bool force)
{
    if (s->naxes < 3 || s->alpha[2] == 0.0 || s->n[2] < 2 || tiled_blocks(s, g) > INT32_MAX)
        return 0;
    if (force)
        return X_KTILE;
    int fields = 2 + (s->x0 != nullptr) + (s->kappa != nullptr); // y and the answers, x0, kappa, velocities
    for (int b = 0; b < 3; ++b)
        fields += s->vel[b] != nullptr;
    int dev = 0, l2 = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    const double layer = (double)s->n[0] * (double)s->n[1] * (double)tsize * fields;
    return layer * X_KTILE_L2_SHARE >= (double)l2 ? X_KTILE : 0;
}

// z lines of their own rows this long or longer keep fp_shape's block (decision 086).
constexpr int64_t OWN_LONG_Z = 512;

// Lines of their own rows: x lines staged (fo_block), y/z lines in registers (fp_block). *smem: the bytes;
// *L: the chunk, for a sweep with (x0only) or without (the default) x0_only. Chunks of 16 take no more shared
// memory than chunks of 8 (the join's rows a block, 6 per thread; the fallback's W and G the same).
template <typename T>
bool own_fits(int64_t n, int a, fp_geom *g, size_t *smem = nullptr, bool x0only = false, int *L = nullptr)
{
    int chunk;
    if (!fp_shape<T>(n, a == 0, x0only ? CHUNK_X0_F32 : CHUNK, &chunk, g))
        return false;
    if (L)
        *L = chunk;
    // y/z lines: a warp's rows 32 bytes of neighbouring lines (a whole sector) rather than fp_shape's 128
    // where that halves the block, so that two blocks share an SM and overlap their loads with each
    // other's reduction (decision 048); but z lines of OWN_LONG_Z cells or more, whose sweep reads and
    // writes more arrays a cell, keep fp_shape's block (decision 086).
    const int run = 32 / (int)sizeof(T);
    const bool halve = a == 1 || (a == 2 && n < OWN_LONG_Z);
    if (halve && g->lines > run && g->lines * g->P > FS_MAX_THREADS) {
        const int lines = FS_MAX_THREADS / g->P > run ? FS_MAX_THREADS / g->P : run;
        g->lines = lines < g->lines ? lines : g->lines;
    }
    const size_t b = a == 0 ? fo_smem_bytes<T>(n, *g) : fp_smem_bytes<T>(n, *g);
    if (smem)
        *smem = b;
    return b <= (a == 0 ? smem_optin() : SMEM_MAX);
}

// Whether every cell the stage's sweeps read, halos included, lies at an offset that fits an int: the last
// one is the box's far corner plus one cell of halo on every axis.
bool offsets_fit_int(const adi_stage *s)
{
    int64_t last = s->origin;
    for (int b = 0; b < 3; ++b)
        last += s->n[b] * s->stride[b];
    return last <= INT32_MAX;
}

// A kernel of one of the families above on its own shape (g).
template <typename K>
cudaError_t launch_kernel(K *k, const fp_geom &g, size_t smem, const adi_stage *s, const adi_fused *fz,
                          int64_t nlines, cudaStream_t st)
{
    const unsigned blocks = (unsigned)(fz->x_ktile ? tiled_blocks(s, g) : (nlines + g.lines - 1) / g.lines);
    k<<<blocks, g.P * g.lines, smem, st>>>(*s, *fz, nlines, g);
    return cudaGetLastError();
}

// A sweep of shared rows; x lines of the heat operator in 8, 16, 32 or 64 whole chunks (the grids' common
// lengths) take a kernel that knows their offsets (decision 082).
template <typename T, int SL, int MODE, int AXIS, int COEFS, bool EXPL, bool LANES = false, bool ONE = false,
          bool TILED = false>
cudaError_t launch_shared(const fp_geom &g, size_t smem, const adi_stage *s, const adi_fused *fz, int64_t nlines,
                          cudaStream_t st)
{
    if constexpr (AXIS == 0 && !TILED)
        if (fz->x_ktile) // blocks in k tiles: the kernels built for them (decision 104)
            return launch_shared<T, SL, MODE, AXIS, COEFS, EXPL, LANES, ONE, true>(g, smem, s, fz, nlines, st);
    if constexpr (AXIS == 0 && COEFS == 0 && EXPL) {
        using K = decltype(&fused_sweep_shared<T, SL, MODE, AXIS, COEFS, EXPL, LANES, ONE>);
        const K fixed[] = {fused_sweep_shared<T, SL, MODE, AXIS, COEFS, EXPL, LANES, ONE, 8, TILED>,
                           fused_sweep_shared<T, SL, MODE, AXIS, COEFS, EXPL, LANES, ONE, 16, TILED>,
                           fused_sweep_shared<T, SL, MODE, AXIS, COEFS, EXPL, LANES, ONE, 32, TILED>,
                           fused_sweep_shared<T, SL, MODE, AXIS, COEFS, EXPL, LANES, ONE, 64, TILED>};
        for (int i = 0; i < 4; ++i)
            if (g.P == 8 << i && s->n[0] == (int64_t)g.P * SL)
                return launch_kernel(fixed[i], g, smem, s, fz, nlines, st);
    }
    return launch_kernel(fused_sweep_shared<T, SL, MODE, AXIS, COEFS, EXPL, LANES, ONE, 0, TILED>, g, smem, s, fz,
                         nlines, st);
}

// fused_sweep_xown with its blocks in line order or in k tiles (decision 104).
template <typename T, int COEFS, typename XI>
auto xown_kernel(bool tiled)
{
    return tiled ? fused_sweep_xown<T, CHUNK, COEFS, XI, true> : fused_sweep_xown<T, CHUNK, COEFS, XI>;
}

template <typename T, int AXIS, int COEFS>
cudaError_t launch_axis(const adi_stage *s, const adi_fused *fz, int64_t nlines, cudaStream_t st)
{
    constexpr int MODE = AXIS == 0 ? FP_CONTIG : FP_STRIDED;
    fp_geom g{};
    const int64_t n = s->n[AXIS];
    adi_fused zx = *fz; // the x sweeps' order of blocks, once the shape is known
    if (shared_rows(s, AXIS) && shared_fits<T>(n, AXIS, &g) && shared_rhs(s, AXIS)) {
        if (AXIS == 0) {
            zx.x_ktile = x_ktile(s, g, sizeof(T), fz->force_ktiles);
            fz = &zx;
        }
        const size_t smem = fs_smem_bytes<T>(n, g, AXIS == 0);
        constexpr int SL = fs_chunk<T>();
        if (!fz->table_ready)
            fused_table<T, SL, AXIS, COEFS><<<1, (g.P + 31) / 32 * 32, 0, st>>>(*s, *fz, g);
        if (x0_only(s))
            return launch_kernel(fused_sweep_shared<T, SL, MODE, AXIS, COEFS, false>, g, smem, s, fz, nlines, st);
        // y/z lines whose warps hold runs of at least LANES_MIN_LINES lines: the neighbours from the lanes
        constexpr bool LANES = AXIS != 0 && COEFS == 0;
        if (LANES && g.lines >= LANES_MIN_LINES)
            return launch_kernel(fused_sweep_shared<T, SL, MODE, AXIS, COEFS, true, LANES>, g, smem, s, fz, nlines, st);
        if constexpr (AXIS == 0 && sizeof(T) == 4)
            if (rhs_form(s, AXIS) == RHS_ONE)
                return launch_shared<T, SL, MODE, AXIS, COEFS, true, false, true>(g, smem, s, fz, nlines, st);
        return launch_shared<T, SL, MODE, AXIS, COEFS, true>(g, smem, s, fz, nlines, st);
    }
    size_t smem = 0;
    int L = CHUNK;
    own_fits<T>(n, AXIS, &g, &smem, COEFS != 0 && x0_only(s), &L); // tridi_adi_cuda_fused_fits has said it fits
    if constexpr (AXIS == 0) {
        zx.x_ktile = x_ktile(s, g, sizeof(T), fz->force_ktiles);
        fz = &zx;
        const bool narrow = !fz->offsets64 && offsets_fit_int(s);
        const bool tiled = fz->x_ktile != 0;
        auto *k = narrow ? xown_kernel<T, COEFS, int>(tiled) : xown_kernel<T, COEFS, int64_t>(tiled);
        if (smem > SMEM_MAX) { // long lines: the block opts in to more shared memory
            const cudaError_t e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
            if (e != cudaSuccess)
                return e;
        }
        return launch_kernel(k, g, smem, s, fz, nlines, st);
    } else {
        if constexpr (sizeof(T) == 4 && COEFS != 0)
            if (L == CHUNK_X0_F32) // x0_only, lines of 64 or more (fp_shape)
                return launch_kernel(fused_sweep<T, CHUNK_X0_F32, MODE, AXIS, COEFS, false>, g, smem, s, fz, nlines,
                                     st);
        if (x0_only(s))
            return launch_kernel(fused_sweep<T, CHUNK, MODE, AXIS, COEFS, false>, g, smem, s, fz, nlines, st);
        return launch_kernel(fused_sweep<T, CHUNK, MODE, AXIS, COEFS, true>, g, smem, s, fz, nlines, st);
    }
}

template <typename T, int AXIS>
cudaError_t launch_t(const adi_stage *s, const adi_fused *fz, int64_t nlines, cudaStream_t st)
{
    if (s->kappa || s->vel[0] || s->vel[1] || s->vel[2])
        return launch_axis<T, AXIS, ADI_COEFS_ALL>(s, fz, nlines, st);
    return launch_axis<T, AXIS, 0>(s, fz, nlines, st);
}

template <typename T>
cudaError_t launch(const adi_stage *s, const adi_fused *fz, int64_t nlines, cudaStream_t st)
{
    switch (s->axis) {
    case 0: return launch_t<T, 0>(s, fz, nlines, st);
    case 1: return launch_t<T, 1>(s, fz, nlines, st);
    default: return launch_t<T, 2>(s, fz, nlines, st);
    }
}

template <typename T>
bool fits(const adi_stage *s, int naxes)
{
    for (int a = 0; a < naxes; ++a) {
        fp_geom g;
        // own_fits for y/z lines too: a stage shared_rhs declines goes there
        if (!(shared_rows(s, a) && shared_fits<T>(s->n[a], a, &g) && a == 0) && !own_fits<T>(s->n[a], a, &g))
            return false;
    }
    return true;
}

// The x rows' constants of stage s into z (adi_fused's xr_*).
void row_constants(const adi_stage *s, adi_fused *z)
{
    for (int b = 0; b < 3; ++b) {
        const bool on = b < s->naxes;
        z->xr_alpha[b] = on ? s->alpha[b] : 0.0;
        z->xr_ih[b] = on ? s->inv_h[b] : 0.0;
        z->xr_ih2[b] = on ? s->inv_h2[b] : 0.0;
        z->xr_alpha_f[b] = (float)z->xr_alpha[b];
        z->xr_ih_f[b] = (float)z->xr_ih[b];
        z->xr_ih2_f[b] = (float)z->xr_ih2[b];
    }
    z->xr_kappa_f = (float)s->kappa_const;
    z->xr_tdt_f = (float)s->tdt;
}

tridi_status cuda_fail(const char *what, cudaError_t e) { return tridi_cuda_fail("tridi_adi (GPU)", what, e); }

} // namespace

extern "C" int tridi_adi_cuda_fused_fits(const adi_stage *s, int naxes, int f64)
{
    return f64 ? fits<double>(s, naxes) : fits<float>(s, naxes);
}

extern "C" size_t tridi_adi_cuda_table_bytes(const adi_stage *s, int naxes, int f64)
{
    size_t bytes = 0;
    for (int a = 0; a < naxes; ++a) {
        fp_geom g;
        if (!shared_rows(s, a))
            continue;
        const size_t b = f64 ? (shared_fits<double>(s->n[a], a, &g) ? fs_table_bytes<double>(g.P) : 0)
                             : (shared_fits<float>(s->n[a], a, &g) ? fs_table_bytes<float>(g.P) : 0);
        bytes = b > bytes ? b : bytes;
    }
    return bytes;
}

extern "C" tridi_status tridi_adi_cuda_fused_sweep(int device, const adi_stage *s, int f64, const adi_fused *fz,
                                                   void *stream)
{
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess)
        return cuda_fail("cudaSetDevice", e);
    const int64_t nlines = s->n[0] * s->n[1] * s->n[2] / s->n[s->axis];
    adi_fused z = *fz;
    row_constants(s, &z);
    e = f64 ? launch<double>(s, &z, nlines, (cudaStream_t)stream) : launch<float>(s, &z, nlines, (cudaStream_t)stream);
    return e == cudaSuccess ? TRIDI_SUCCESS : cuda_fail("fused sweep launch", e);
}
