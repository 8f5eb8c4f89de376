// Definitions shared by the GPU benchmark's tables (bench_gpu.cuh).
#include "bench_gpu.cuh"

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

bw measure_bandwidth()
{
    bw r{};
    const size_t bytes = (size_t)1 << 30;
    void *a, *b, *h;
    CUDA_OK(cudaMalloc(&a, bytes));
    CUDA_OK(cudaMalloc(&b, bytes));
    CUDA_OK(cudaMemset(a, 1, bytes));
    CUDA_OK(cudaHostAlloc(&h, bytes / 2, cudaHostAllocDefault));
    std::memset(h, 1, bytes / 2);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    auto timed = [&](void *dst, const void *src, size_t n, cudaMemcpyKind k) {
        std::vector<double> t;
        for (int rep = 0; rep < 7; ++rep) {
            cudaEventRecord(e0);
            cudaMemcpyAsync(dst, src, n, k);
            cudaEventRecord(e1);
            cudaEventSynchronize(e1);
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (rep)
                t.push_back(ms * 1e-3);
        }
        return median(t);
    };
    r.d2d = 2.0 * bytes / timed(b, a, bytes, cudaMemcpyDeviceToDevice); // read + write
    r.h2d = (bytes / 2) / timed(a, h, bytes / 2, cudaMemcpyHostToDevice);
    r.d2h = (bytes / 2) / timed(h, a, bytes / 2, cudaMemcpyDeviceToHost);
    cudaFree(a);
    cudaFree(b);
    cudaFreeHost(h);
    return r;
}

// The kernel a plan launches: FAST (decision 021), split, one thread per line with W/G on chip (line), in
// the global scratch (line+scr) or checkpointed (ckpt, decision 046).
const char *plan_kernel_name(const tk_plan &p)
{
    return p.fast ? (p.x_lines ? "fast-staged" : p.fast_cluster ? "fast-cluster" : "fast-strided")
           : p.pair  ? (p.arith == TK_AR_RCP ? "twisted" : "pair")
           : p.split ? "split"
           : p.ckpt  ? "ckpt"
           : p.wg_on_chip   ? "line"
                     : "line+scr";
}

tk_choice bare_choice{0, 0};

// The five arrays of a combo (0 f32, 1 f64, 2 mixed: diag double, the rest float) on the device, cells
// each, filled with a diagonally dominant system; tl / td: the types of the four float-or-double arrays
// and of the diagonal.
void alloc_system(tridi_context ctx, size_t cells, int combo, void *p[5], tridi_dtype *tl, tridi_dtype *td)
{
    *tl = combo == 1 ? TRIDI_FLOAT64 : TRIDI_FLOAT32;
    *td = combo == 0 ? TRIDI_FLOAT32 : TRIDI_FLOAT64;
    const size_t sl = *tl == TRIDI_FLOAT64 ? 8 : 4, sd = *td == TRIDI_FLOAT64 ? 8 : 4;
    for (int r = 0; r < 5; ++r) {
        const size_t es = r == 1 ? sd : sl;
        TRIDI_OK(tridi_device_alloc(ctx, cells * es, &p[r]));
        if (es == 8)
            fill_kernel<<<2048, 256>>>((double *)p[r], r, cells);
        else
            fill_kernel<<<2048, 256>>>((float *)p[r], r, cells);
    }
}

device_system make_system(tridi_context ctx, const grid3 &G, int combo, bool with_scratch)
{
    device_system s;
    s.scratch = nullptr;
    s.g = {3, {0, 0, 0}, {G.nx + 1, G.ny + 1, G.nz + 1}};
    s.cells = (size_t)(G.nx + 2) * (G.ny + 2) * (G.nz + 2);
    s.box = (size_t)G.nx * G.ny * G.nz;
    alloc_system(ctx, s.cells, combo, s.p, &s.tl, &s.td);
    if (with_scratch)
        CUDA_OK(cudaMalloc(&s.scratch, s.box * 16));
    CUDA_OK(cudaDeviceSynchronize());
    s.a = {s.p[0], s.tl, s.p[1], s.td, s.p[2], s.tl, s.p[3], s.tl, s.p[4], s.tl};
    return s;
}

void free_system(tridi_context ctx, const device_system &s)
{
    for (int r = 0; r < 5; ++r)
        TRIDI_OK(tridi_device_free(ctx, s.p[r]));
    cudaFree(s.scratch);
}

// Seconds per call of a device plan with options o on arrays a (the box 1..n of grid g), calls back to back
// after three warm-up calls: the median of five runs of reps calls, each closed by tridi_plan_status.
double time_plan(tridi_context ctx, const tridi_grid &g, int axis, const tridi_arrays &a,
                        const tridi_solve_options &o, int reps)
{
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {g.ubound[0] - 1, g.ubound[1] - 1, g.ubound[2] - 1};
    const tridi_dtype types[5] = {a.lower_type, a.diag_type, a.upper_type, a.rhs_type, a.x_type};
    tridi_plan plan;
    TRIDI_OK(tridi_plan_create(ctx, &g, (tridi_axis)axis, lo, hi, types, &o, &plan));
    for (int w = 0; w < 3; ++w)
        TRIDI_OK(tridi_plan_solve(plan, &a));
    TRIDI_OK(tridi_plan_status(plan));
    std::vector<double> t;
    for (int rep = 0; rep < 5; ++rep) {
        const double t0 = now();
        for (int k = 0; k < reps; ++k)
            TRIDI_OK(tridi_plan_solve(plan, &a));
        TRIDI_OK(tridi_plan_status(plan));
        t.push_back((now() - t0) / reps);
    }
    TRIDI_OK(tridi_plan_destroy(plan));
    return median(t);
}

// A device plan's options for the FAST table: per-line isolation, deferred verdicts, arithmetic arith.
tridi_solve_options lines_deferred(tridi_arith arith)
{
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.memory = TRIDI_MEMORY_DEVICE;
    o.arith = arith;
    o.on_error = TRIDI_ON_ERROR_LINES;
    o.verdict = TRIDI_VERDICT_DEFERRED;
    return o;
}

int only_axis = -1;

FILE *g_csv;
int g_passes = 3;
std::string g_csv_head;

// One row of bench/results/README.md's schema: the range of a figure over the passes (value_max empty when
// there is one figure).
void csv_row(const grid3 &G, const char *type, char axis, const char *metric, double lo, double hi,
                    const char *unit)
{
    if (!g_csv)
        return;
    char range[64] = "";
    if (hi != lo)
        std::snprintf(range, sizeof range, "%.4g", hi);
    std::fprintf(g_csv, "%s%dx%dx%d,%s,%c,%s,%.4g,%s,%s\n", g_csv_head.c_str(), G.nx, G.ny, G.nz, type, axis, metric, lo,
                 range, unit);
    std::fflush(g_csv);
}

// Seconds of the planner's kernel for a LINES solve of the box into x in place (FAST or MOHID arithmetic),
// launched bare; *kern names it.
double time_kernel(const tridi_grid &g, int axis, const tridi_arrays &arr, bool fast, double *scratch, int reps,
                   const char **kern, const std::function<void(tk_plan &, const tk_args &)> &tweak)
{
    const int64_t ext[3] = {g.ubound[0] - g.lbound[0] + 1, g.ubound[1] - g.lbound[1] + 1, g.ubound[2] - g.lbound[2] + 1};
    const int64_t str[3] = {1, ext[0], ext[0] * ext[1]};
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    tk_args a{};
    a.D = arr.lower;
    a.E = arr.diag;
    a.F = arr.upper;
    a.R = arr.rhs;
    a.X = arr.x;
    a.in = {str[0] + str[1] + str[2], str[a1], str[a2], str[axis]};
    a.out = a.in;
    a.n = ext[axis] - 2;
    a.n1 = ext[a1] - 2;
    a.l_count = a.n1 * (ext[a2] - 2);
    unsigned long long *err;
    CUDA_OK(cudaMalloc(&err, 8));
    CUDA_OK(cudaMemset(err, 0xff, 8));
    a.err = err;
    kernel_types kt{arr.lower_type, arr.diag_type, arr.x_type};
    kt.fast = fast;
    kt.arith = fast ? TK_AR_RCP : TK_AR_MOHID; // as types_of makes them (decision 041)
    tk_plan plan;
    TRIDI_OK(plan_solve(bare_choice, kt, a, axis == 0, false, &plan));
    if (tweak) {
        tweak(plan, a);
        if (plan.blocks == 0) {
            cudaFree(err);
            return 0.0;
        }
    }
    a.scratch = plan_needs_scratch(plan, a.n) ? scratch : nullptr;
    *kern = plan_kernel_name(plan);
    return time_launches(reps, err, "kernel", [&] { TRIDI_OK(run_solve(kt, a, plan, 0)); });
}
