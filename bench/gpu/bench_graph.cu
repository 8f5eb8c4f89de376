// The table of small-grid streams (--graph; --fast adds it for its small grid): a plan's calls back to back
// as launched and captured in a CUDA graph, per call against the floor-traffic time.
#include "bench_gpu.cuh"

// MOHID's kernels on this box, bare (into x): tk_line (TRIDI_CUDA_KERNEL=line, main's choice on one-wave
// grids) and, where the planner takes it, tp_line (decision 069), each one's answers against the planner's
// (in want) bit for bit; CSV rows kernel_us_<name> and <name>_differ_bytes;
// returns the table's words.
static std::string mohid_variants(const device_system &s, int axis, const grid3 &G, void *want, size_t xbytes)
{
    std::string out;
    std::vector<char> h1(xbytes), h2(xbytes);
    CUDA_OK(cudaMemcpy(h1.data(), want, xbytes, cudaMemcpyDeviceToHost));
    const char *names[2] = {"line", "pair"};
    for (int v = 0; v < 2; ++v) {
        const tk_choice keep = bare_choice;
        if (v == 0)
            bare_choice = tk_choice{1, 0};
        CUDA_OK(cudaMemset(s.p[4], 0xff, xbytes));
        const char *kern = "-";
        const double us = time_kernel(s.g, axis, s.a, false, s.scratch, 50, &kern, [&](tk_plan &p, const tk_args &) {
            if (v > 0 && !p.pair)
                p.blocks = 0; // not a tp_line plan
        }) * 1e6;
        bare_choice = keep;
        if (us == 0.0)
            continue;
        CUDA_OK(cudaMemcpy(h2.data(), s.p[4], xbytes, cudaMemcpyDeviceToHost));
        size_t differ = 0;
        for (size_t i = 0; i < xbytes; ++i)
            differ += h1[i] != h2[i];
        csv_row(G, "mixed", "xyz"[axis], (std::string("kernel_us_") + names[v]).c_str(), us, us, "us");
        csv_row(G, "mixed", "xyz"[axis], (std::string(names[v]) + "_differ_bytes").c_str(), (double)differ,
                (double)differ, "B");
        char b[96];
        std::snprintf(b, sizeof b, ", %s %.1f%s", names[v], us, differ ? " DIFFER" : "");
        out += b;
    }
    return out;
}

// ---- Streams of small solves (--graph, and in --fast on the 140x140x56 grid; issue 27's target 3) -------
// A plan on the caller's stream (ON_ERROR_LINES, DEFERRED verdicts; FAST f32 and f64, MOHID mixed): calls
// back to back as launched (reps calls between two events, then one tridi_plan_status), and the same calls
// captured in a CUDA graph (per_graph solves, replayed reps / per_graph times between two events). Before
// timing, x is poisoned (NaN) for each path and the captured answers must equal the launched ones bit for
// bit. Per call: event time / calls; floor: floor traffic at the device copy bandwidth. The planner's kernel
// is named and timed bare (into x, no plan) beside them.
void graph_rows(tridi_context ctx, const grid3 &G, const bw &B, int combo)
{
    const device_system s = make_system(ctx, G, combo, true);
    const tridi_grid &g = s.g;
    const size_t xbytes = s.cells * (s.tl == TRIDI_FLOAT64 ? 8 : 4);
    void *want;
    CUDA_OK(cudaMalloc(&want, xbytes));
    CUDA_OK(cudaDeviceSynchronize());
    const tridi_arrays a = s.a;
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {G.nx, G.ny, G.nz};
    const tridi_dtype types[5] = {s.tl, s.td, s.tl, s.tl, s.tl};
    const double floor_us = (double)floor_bytes(combo) * s.box / B.d2d * 1e6;
    const int reps = s.box < 2000000 ? 200 : 20, per_graph = s.box < 2000000 ? 20 : 5; // reps < NSLOT: no retire inside
    cudaStream_t st;
    CUDA_OK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    cudaEvent_t e0, e1;
    CUDA_OK(cudaEventCreate(&e0));
    CUDA_OK(cudaEventCreate(&e1));
    auto elapsed = [&] {
        CUDA_OK(cudaEventSynchronize(e1));
        float ms;
        CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
        return ms * 1e3;
    };
    const tridi_arith arith = combo == 2 ? TRIDI_ARITH_MOHID : TRIDI_ARITH_FAST;
    for (int axis = 0; axis < 3; ++axis) {
        if (only_axis >= 0 && axis != only_axis)
            continue;
        const char *kern = "-";
        CUDA_OK(cudaMemset(s.p[4], 0xff, xbytes)); // the halo as the variants find it
        const double kern_us = time_kernel(g, axis, s.a, arith == TRIDI_ARITH_FAST, s.scratch, 50, &kern) * 1e6;
        std::string alts;
        if (arith == TRIDI_ARITH_MOHID) {
            CUDA_OK(cudaMemcpy(want, s.p[4], xbytes, cudaMemcpyDeviceToDevice));
            alts = mohid_variants(s, axis, G, want, xbytes);
        }
        tridi_solve_options o = lines_deferred(arith);
        o.stream = st;
        tridi_plan plan;
        TRIDI_OK(tridi_plan_create(ctx, &g, (tridi_axis)axis, lo, hi, types, &o, &plan));
        // the launched answers, then the captured ones, each into a poisoned x
        CUDA_OK(cudaMemsetAsync(s.p[4], 0xff, xbytes, st));
        TRIDI_OK(tridi_plan_solve(plan, &a));
        CUDA_OK(cudaStreamSynchronize(st));
        TRIDI_OK(tridi_plan_status(plan));
        CUDA_OK(cudaMemcpy(want, s.p[4], xbytes, cudaMemcpyDeviceToDevice));
        CUDA_OK(cudaMemsetAsync(s.p[4], 0xff, xbytes, st));
        CUDA_OK(cudaStreamSynchronize(st));
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
        for (int k = 0; k < per_graph; ++k)
            TRIDI_OK(tridi_plan_solve(plan, &a));
        CUDA_OK(cudaStreamEndCapture(st, &graph));
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        CUDA_OK(cudaGraphLaunch(exec, st));
        CUDA_OK(cudaStreamSynchronize(st));
        TRIDI_OK(tridi_plan_status(plan));
        {
            std::vector<char> h1(xbytes), h2(xbytes);
            CUDA_OK(cudaMemcpy(h1.data(), want, xbytes, cudaMemcpyDeviceToHost));
            CUDA_OK(cudaMemcpy(h2.data(), s.p[4], xbytes, cudaMemcpyDeviceToHost));
            if (std::memcmp(h1.data(), h2.data(), xbytes)) {
                std::fprintf(stderr, "tridi_bench_gpu: %dx%dx%d %s %c: the graph's answers differ from the launched "
                             "ones\n", G.nx, G.ny, G.nz, tname(combo), "xyz"[axis]);
                std::exit(1);
            }
        }
        std::vector<double> tl_us, tg_us;
        for (int pass = 0; pass < g_passes; ++pass) {
            std::vector<double> t1, t2;
            for (int rep = 0; rep < 5; ++rep) {
                CUDA_OK(cudaEventRecord(e0, st));
                for (int k = 0; k < reps; ++k)
                    TRIDI_OK(tridi_plan_solve(plan, &a));
                CUDA_OK(cudaEventRecord(e1, st));
                t1.push_back(elapsed() / reps);
                TRIDI_OK(tridi_plan_status(plan));
                CUDA_OK(cudaEventRecord(e0, st));
                for (int k = 0; k < reps / per_graph; ++k)
                    CUDA_OK(cudaGraphLaunch(exec, st));
                CUDA_OK(cudaEventRecord(e1, st));
                t2.push_back(elapsed() / (reps / per_graph * per_graph));
            }
            tl_us.push_back(median(t1));
            tg_us.push_back(median(t2));
        }
        TRIDI_OK(tridi_plan_status(plan));
        CUDA_OK(cudaGraphExecDestroy(exec));
        CUDA_OK(cudaGraphDestroy(graph));
        TRIDI_OK(tridi_plan_destroy(plan));
        auto range = [&](const char *metric, const std::vector<double> &t, double scale, const char *unit) {
            csv_row(G, tname(combo), "xyz"[axis], metric, *std::min_element(t.begin(), t.end()) * scale,
                    *std::max_element(t.begin(), t.end()) * scale, unit);
        };
        range("stream_call_us", tl_us, 1.0, "us");
        range("stream_call_over_floor", tl_us, 1.0 / floor_us, "ratio");
        range("graph_call_us", tg_us, 1.0, "us");
        range("graph_call_over_floor", tg_us, 1.0 / floor_us, "ratio");
        csv_row(G, tname(combo), "xyz"[axis], (std::string("kernel_us_") + kern).c_str(), kern_us, kern_us, "us");
        const double ml = median(tl_us), mg = median(tg_us);
        std::printf("| %dx%dx%d | %s | %s | %c | %.1f | %.1f | %.2fx | %.1f | %.2fx | %.2f | %s %.1f%s |\n", G.nx, G.ny,
                    G.nz, tname(combo), combo == 2 ? "MOHID" : "FAST", "xyz"[axis], floor_us, ml, ml / floor_us, mg,
                    mg / floor_us, mg / ml, kern, kern_us, alts.c_str());
        std::fflush(stdout);
    }
    CUDA_OK(cudaEventDestroy(e0));
    CUDA_OK(cudaEventDestroy(e1));
    CUDA_OK(cudaStreamDestroy(st));
    cudaFree(want);
    free_system(ctx, s);
}
