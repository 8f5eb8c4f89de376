// The host-array tables (default, --host): tridi_solve on host arrays (MOHID's mixed precision), staged and
// registered (tridi_host_register: DMA straight from/to the arrays), against the pinned H2D/D2H time of their
// bytes, MOHID's sequential THOMAS, its 16-thread OpenMP version and tridi's CPU backend; the copy engines'
// speed on the shapes involved; assembly overlap (each diagonal uploaded with tridi_upload_async as soon as a
// host loop fills it, against assembling everything, then solving); the registered solve after the GPU has
// idled 0.05 to 20 ms, the host busy, as a model's calls find it.
#include "bench_gpu.cuh"

// MOHID-like assembly of one diagonal: a sequential host loop over the box writing each cell from a few
// flops of its indices (the model's own work the upload should hide behind).
template <class T>
static void assemble(T *a, int role, const tridi_grid &g, double phase)
{
    const int64_t e0 = g.ubound[0] - g.lbound[0] + 1, e1 = g.ubound[1] - g.lbound[1] + 1;
    for (int64_t k = 1; k < g.ubound[2]; ++k)
        for (int64_t j = 1; j < g.ubound[1]; ++j)
            for (int64_t i = 1; i < g.ubound[0]; ++i) {
                const double s = 0.001 * (double)(i + 3 * j + 7 * k) + phase;
                const double fr = s - std::floor(s);
                double v = role == 0 || role == 2 ? -0.1 - 0.8 * fr : role == 1 ? 2.2 + fr : 2.0 * fr - 1.0;
                a[i + e0 * (j + e1 * k)] = (T)v;
            }
}

// Median time of one host-array call on gpu, and the assembly-overlap figures of the same mode: a host loop
// assembles each diagonal and tridi_upload_async sends it at once. What the model waits for is the time inside
// tridi's calls (the four uploads + the solve); without overlap it is the plain call made right after the
// same assembly loop, ta (where a model calls: its OpenMP threads have gone to sleep during the serial loop,
// unlike in back-to-back calls). The upload share hidden = (ta - calls) / (ta - solve alone), "solve alone"
// being the solve once everything is on the device.
struct host_mode {
    double call, after_assembly, in_calls, in_uploads, assembly, solve_alone, hidden;
};

template <class F>
static double median_time(F &&fn, int reps)
{
    fn();
    std::vector<double> t;
    for (int k = 0; k < reps; ++k) {
        double t0 = now();
        fn();
        t.push_back(now() - t0);
    }
    return median(t);
}

static host_mode measure_host_mode(tridi_context gpu, const tridi_grid &g, int axis, const int64_t lo[3],
                                   const int64_t hi[3], float *D, double *E, float *F, float *R, const tridi_arrays &a,
                                   int reps)
{
    host_mode m{};
    const tridi_axis ax = (tridi_axis)axis;
    m.call = median_time([&] { TRIDI_OK(tridi_solve(gpu, &g, ax, lo, hi, &a)); }, reps);
    double ph = 0.0;
    std::vector<double> tc, ta, tu;
    for (int k = 0; k < reps + 1; ++k) {
        double in_calls = 0.0, in_asm = 0.0, t0;
        ph += 0.01;
        t0 = now(); assemble(D, 0, g, ph); in_asm += now() - t0;
        t0 = now(); TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_LOWER, D, TRIDI_FLOAT32)); in_calls += now() - t0;
        t0 = now(); assemble(E, 1, g, ph); in_asm += now() - t0;
        t0 = now(); TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_DIAG, E, TRIDI_FLOAT64)); in_calls += now() - t0;
        t0 = now(); assemble(F, 2, g, ph); in_asm += now() - t0;
        t0 = now(); TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_UPPER, F, TRIDI_FLOAT32)); in_calls += now() - t0;
        t0 = now(); assemble(R, 3, g, ph); in_asm += now() - t0;
        t0 = now(); TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_RHS, R, TRIDI_FLOAT32)); in_calls += now() - t0;
        const double in_up = in_calls;
        t0 = now(); TRIDI_OK(tridi_solve(gpu, &g, ax, lo, hi, &a)); in_calls += now() - t0;
        if (k) {
            tc.push_back(in_calls);
            ta.push_back(in_asm);
            tu.push_back(in_up);
        }
    }
    m.in_calls = median(tc);
    m.assembly = median(ta);
    m.in_uploads = median(tu);
    std::vector<double> tp;
    for (int k = 0; k < reps + 1; ++k) {
        ph += 0.01;
        assemble(D, 0, g, ph);
        assemble(E, 1, g, ph);
        assemble(F, 2, g, ph);
        assemble(R, 3, g, ph);
        const double t0 = now();
        TRIDI_OK(tridi_solve(gpu, &g, ax, lo, hi, &a));
        if (k)
            tp.push_back(now() - t0);
    }
    m.after_assembly = median(tp);
    std::vector<double> tt;
    for (int k = 0; k < reps; ++k) {
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_LOWER, D, TRIDI_FLOAT32));
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_DIAG, E, TRIDI_FLOAT64));
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_UPPER, F, TRIDI_FLOAT32));
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_RHS, R, TRIDI_FLOAT32));
        // tridi's upload thread queues the copies (docs/decisions/033), within a millisecond or two of the
        // posts; then the device has them all once it is idle. Waited for busy, as the model's assembly
        // keeps its core: a core that slept makes the solve that follows slower than after an assembly.
        for (const double t1 = now() + 0.02; now() < t1;)
            ;
        CUDA_OK(cudaDeviceSynchronize());
        double t0 = now();
        TRIDI_OK(tridi_solve(gpu, &g, ax, lo, hi, &a));
        tt.push_back(now() - t0);
    }
    m.solve_alone = median(tt);
    m.hidden = (m.after_assembly - m.in_calls) / (m.after_assembly - m.solve_alone);
    return m;
}

// The solve of registered arrays as MOHID's adapter makes it (D, E and F uploaded ahead, the rhs sent by the
// call, all or nothing) after the GPU has had nothing to do for `ms` while the host stayed busy without
// touching memory: a model calls tridi after milliseconds of its own work, and a GPU left idle that long
// answers its next call later (docs/performance.md, "flow_channel inside the model").
static double solve_after_idle(tridi_context gpu, const tridi_grid &g, int axis, const int64_t lo[3],
                               const int64_t hi[3], float *D, double *E, float *F, const tridi_arrays &a, double ms,
                               int reps)
{
    const tridi_axis ax = (tridi_axis)axis;
    std::vector<double> t;
    for (int k = 0; k < reps + 1; ++k) {
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_LOWER, D, TRIDI_FLOAT32));
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_DIAG, E, TRIDI_FLOAT64));
        TRIDI_OK(tridi_upload_async(gpu, &g, ax, lo, hi, TRIDI_ROLE_UPPER, F, TRIDI_FLOAT32));
        for (const double t1 = now() + ms * 1e-3; now() < t1;)
            ;
        const double t0 = now();
        TRIDI_OK(tridi_solve(gpu, &g, ax, lo, hi, &a));
        if (k)
            t.push_back(now() - t0);
    }
    return median(t);
}

// The bare transfers of such a call after the same idle, as a reference measured beside it: the rhs box up
// and the answer box down (pinned buffers, one stream), no tridi, no kernel.
static double bare_after_idle(void *pinned, void *dev, size_t bytes, cudaStream_t s, double ms, int reps)
{
    std::vector<double> t;
    for (int k = 0; k < reps + 1; ++k) {
        for (const double t1 = now() + ms * 1e-3; now() < t1;)
            ;
        const double t0 = now();
        CUDA_OK(cudaMemcpyAsync(dev, pinned, bytes, cudaMemcpyHostToDevice, s));
        CUDA_OK(cudaMemcpyAsync(pinned, dev, bytes, cudaMemcpyDeviceToHost, s));
        CUDA_OK(cudaStreamSynchronize(s));
        if (k)
            t.push_back(now() - t0);
    }
    return median(t);
}

// gpu_call: a GPU context whose solves are all or nothing (TRIDI_ON_ERROR_CALL, the MOHID adapter's contract),
// whose answers reach a registered x by another path (docs/decisions/010, 037): its overlap is timed beside.
void host_arrays(tridi_context gpu, tridi_context gpu_call, tridi_context cpu, tridi_context autoc, const grid3 &G,
                        const bw &B, double max_seq_cells)
{
    tridi_grid g = {3, {0, 0, 0}, {G.nx + 1, G.ny + 1, G.nz + 1}};
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {G.nx, G.ny, G.nz};
    const size_t cells = (size_t)(G.nx + 2) * (G.ny + 2) * (G.nz + 2), box = (size_t)G.nx * G.ny * G.nz;
    float *D = (float *)std::malloc(cells * 4), *F = (float *)std::malloc(cells * 4), *R = (float *)std::malloc(cells * 4),
          *X = (float *)std::malloc(cells * 4);
    double *E = (double *)std::malloc(cells * 8);
    fill_host(D, 0, cells);
    fill_host(E, 1, cells);
    fill_host(F, 2, cells);
    fill_host(R, 3, cells);
    fill_host(X, 3, cells);
    tridi_arrays a = {D, TRIDI_FLOAT32, E, TRIDI_FLOAT64, F, TRIDI_FLOAT32, R, TRIDI_FLOAT32, X, TRIDI_FLOAT32};
    void *arr[5] = {D, E, F, R, X};
    const size_t bytes[5] = {cells * 4, cells * 8, cells * 4, cells * 4, cells * 4};
    mohid_grid mg = {{0, 0, 0}, {G.nx + 1, G.ny + 1, G.nz + 1}};
    const int reps = box < 2000000 ? 15 : box < 50000000 ? 5 : 3;
    const double pinned = 20.0 * box / B.h2d + 4.0 * box / B.d2h;
    void *bare_h = nullptr, *bare_d = nullptr;
    cudaStream_t bare_s = nullptr;
    CUDA_OK(cudaMallocHost(&bare_h, box * 4));
    CUDA_OK(cudaMalloc(&bare_d, box * 4));
    CUDA_OK(cudaStreamCreateWithFlags(&bare_s, cudaStreamNonBlocking));
    std::memset(bare_h, 0, box * 4);
    for (int axis = 0; axis < 3; ++axis) {
        if (axis == 2 && G.nz == 1) // a grid of one plane: a model's 2D call (THOMAS_2D), x and y lines only
            continue;
        const host_mode st = measure_host_mode(gpu, g, axis, lo, hi, D, E, F, R, a, reps);
        for (int r = 0; r < 5; ++r)
            TRIDI_OK(tridi_host_register(gpu, arr[r], bytes[r]));
        const host_mode rg = measure_host_mode(gpu, g, axis, lo, hi, D, E, F, R, a, reps);
        for (int r = 0; r < 5; ++r) {
            TRIDI_OK(tridi_host_unregister(gpu, arr[r]));
            TRIDI_OK(tridi_host_register(gpu_call, arr[r], bytes[r]));
        }
        const host_mode rc = measure_host_mode(gpu_call, g, axis, lo, hi, D, E, F, R, a, reps);
        const double idle_ms[4] = {0.05, 1.0, 5.0, 20.0};
        double after_idle[4], bare_idle[4];
        for (int i = 0; i < 4; ++i) {
            after_idle[i] = solve_after_idle(gpu_call, g, axis, lo, hi, D, E, F, a, idle_ms[i], std::min(reps, 9));
            bare_idle[i] = bare_after_idle(bare_h, bare_d, box * 4, bare_s, idle_ms[i], std::min(reps, 9));
        }
        for (int r = 0; r < 5; ++r)
            TRIDI_OK(tridi_host_unregister(gpu_call, arr[r]));
        const double tcpu = median_time([&] { TRIDI_OK(tridi_solve(cpu, &g, (tridi_axis)axis, lo, hi, &a)); }, reps);
        // AUTO (docs/decisions/018) on the same arrays, not registered and registered with its own context: its
        // time against the faster of the two paths it chooses between (its choice is stated on stderr).
        auto on_auto = [&] { TRIDI_OK(tridi_solve(autoc, &g, (tridi_axis)axis, lo, hi, &a)); };
        const double tauto_st = median_time(on_auto, reps);
        for (int r = 0; r < 5; ++r)
            TRIDI_OK(tridi_host_register(autoc, arr[r], bytes[r]));
        const double tauto_rg = median_time(on_auto, reps);
        for (int r = 0; r < 5; ++r)
            TRIDI_OK(tridi_host_unregister(autoc, arr[r]));
        const double tomp = median_time([&] { mohid_thomas(&mg, axis, lo, hi, D, E, F, R, X, 16); }, reps);
        double tseq = NAN;
        if ((double)box <= max_seq_cells)
            tseq = median_time([&] { mohid_thomas(&mg, axis, lo, hi, D, E, F, R, X, 1); }, box < 2000000 ? 5 : 1);
        std::printf("| %4dx%4dx%3d | %c | %7.3f | %5.2fx | %7.3f | %5.2fx | %6.1fx | %5.2fx | %5.2fx | %8.3f | %4.0f%% | "
                    "%4.0f%% |\n",
                    G.nx, G.ny, G.nz, "xyz"[axis], st.call * 1e3, st.call / pinned, rg.call * 1e3, rg.call / pinned,
                    tseq / rg.call, tomp / rg.call, tcpu / rg.call, rg.assembly * 1e3, 100.0 * st.hidden,
                    100.0 * rg.hidden);
        std::printf("|   (MOHID seq %.3f ms, OMP16 %.3f ms, tridi CPU %.3f ms; staged: call after assembly %.3f ms, in "
                    "calls %.3f ms of which uploads %.3f, solve alone %.3f; registered: call after assembly %.3f ms, "
                    "in calls %.3f ms of which uploads %.3f, solve alone %.3f) |\n",
                    tseq * 1e3, tomp * 1e3, tcpu * 1e3, st.after_assembly * 1e3, st.in_calls * 1e3,
                    st.in_uploads * 1e3, st.solve_alone * 1e3, rg.after_assembly * 1e3, rg.in_calls * 1e3,
                    rg.in_uploads * 1e3, rg.solve_alone * 1e3);
        std::printf("|   (registered, all or nothing (TRIDI_ON_ERROR_CALL): call after assembly %.3f ms, in calls %.3f ms of "
                    "which uploads %.3f, solve alone %.3f, hidden %.0f%%) |\n",
                    rc.after_assembly * 1e3, rc.in_calls * 1e3, rc.in_uploads * 1e3, rc.solve_alone * 1e3,
                    100.0 * rc.hidden);
        std::printf("|   (registered, all or nothing, D, E and F uploaded ahead, the rhs by the call: solve after the GPU "
                    "idled 0.05 / 1 / 5 / 20 ms: %.3f / %.3f / %.3f / %.3f ms; the bare rhs up and answers down "
                    "after the same idle: %.3f / %.3f / %.3f / %.3f ms) |\n",
                    after_idle[0] * 1e3, after_idle[1] * 1e3, after_idle[2] * 1e3, after_idle[3] * 1e3,
                    bare_idle[0] * 1e3, bare_idle[1] * 1e3, bare_idle[2] * 1e3, bare_idle[3] * 1e3);
        std::printf("|   (AUTO, 16 threads: staged %.3f ms, %.2fx the faster of staged and tridi CPU; registered %.3f "
                    "ms, %.2fx the faster of registered and tridi CPU) |\n",
                    tauto_st * 1e3, tauto_st / std::min(st.call, tcpu), tauto_rg * 1e3,
                    tauto_rg / std::min(rg.call, tcpu));
        std::fflush(stdout);
    }
    std::free(D);
    std::free(E);
    std::free(F);
    std::free(R);
    std::free(X);
    CUDA_OK(cudaStreamDestroy(bare_s));
    CUDA_OK(cudaFree(bare_d));
    CUDA_OK(cudaFreeHost(bare_h));
}

// How the copy engines move a box of G's floats (arrays with a one-cell halo) between a registered host array
// and the device: the same bytes as one contiguous run, the box widened to whole rows (one run per k-plane,
// consecutive planes joined: what tridi does), and the box row by row (rows of nx floats); GB/s of box bytes.
void transfer_shapes(const grid3 &G)
{
    const int64_t e0 = G.nx + 2, e1 = G.ny + 2, e2 = G.nz + 2;
    const size_t cells = (size_t)(e0 * e1 * e2), boxb = (size_t)G.nx * G.ny * G.nz * 4;
    float *h = (float *)std::malloc(cells * 4);
    fill_host(h, 3, cells);
    CUDA_OK(cudaHostRegister(h, cells * 4, cudaHostRegisterPortable));
    void *d;
    CUDA_OK(cudaMalloc(&d, cells * 4));
    // GB/s of box bytes: the median of 7 copies after two warm-ups
    auto timed = [&](auto &&copy) { return boxb / time_gpu(7, [&] { CUDA_OK(copy()); }) * 1e-9; };
    char *hb = (char *)(h + 1 + e0 + e0 * e1); // box cell (1,1,1)
    char *hw = (char *)(h + e0 * e1);          // widened box: planes 1..nz whole
    auto box3d = [&](cudaMemcpyKind k) {
        cudaMemcpy3DParms m{};
        void *hp = hb, *dp = d;
        m.srcPtr = k == cudaMemcpyHostToDevice ? make_cudaPitchedPtr(hp, e0 * 4, e0 * 4, e1)
                                               : make_cudaPitchedPtr(dp, G.nx * 4, G.nx * 4, G.ny);
        m.dstPtr = k == cudaMemcpyHostToDevice ? make_cudaPitchedPtr(dp, G.nx * 4, G.nx * 4, G.ny)
                                               : make_cudaPitchedPtr(hp, e0 * 4, e0 * 4, e1);
        m.extent = make_cudaExtent(G.nx * 4, G.ny, G.nz);
        m.kind = k;
        return cudaMemcpy3DAsync(&m, 0);
    };
    const double up_run = timed([&] { return cudaMemcpyAsync(d, hb, boxb, cudaMemcpyHostToDevice, 0); });
    const double up_wide = timed([&] { return cudaMemcpyAsync(d, hw, (size_t)(e0 * e1 * G.nz) * 4, cudaMemcpyHostToDevice, 0); });
    const double up_rows = timed([&] { return box3d(cudaMemcpyHostToDevice); });
    const double down_run = timed([&] { return cudaMemcpyAsync(hb, d, boxb, cudaMemcpyDeviceToHost, 0); });
    const double down_rows = timed([&] { return box3d(cudaMemcpyDeviceToHost); });
    std::printf("| %dx%dx%d | %.1f | %.1f | %.1f | %.1f | %.1f |\n", G.nx, G.ny, G.nz, up_run, up_wide, up_rows, down_run,
                down_rows);
    CUDA_OK(cudaHostUnregister(h));
    cudaFree(d);
    std::free(h);
}
