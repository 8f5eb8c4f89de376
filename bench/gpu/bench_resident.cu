// The device-resident table (default, --resident): tridi_solve_device (one call = solve kernel + guarded
// commit) against the device copy bandwidth at floor traffic, against the bare solve kernel (the cost of the
// no-partial-answer guarantee) and against cuSPARSE (gtsv2StridedBatch for x lines, gtsvInterleavedBatch for
// z lines, each on a compact box in its own layout).
#include "bench_gpu.cuh"

// The bare solve kernel on the caller's arrays into a compact box, launched as the backend does.
template <class TL, class TD, class TX>
static double time_bare_kernel(const tridi_grid &g, int axis, const void *D, const void *E, const void *F,
                               const void *R, void *box, double *scratch, int reps, bool *one_wave,
                               const char **kernel)
{
    const int64_t ext[3] = {g.ubound[0] - g.lbound[0] + 1, g.ubound[1] - g.lbound[1] + 1, g.ubound[2] - g.lbound[2] + 1};
    const int64_t str[3] = {1, ext[0], ext[0] * ext[1]};
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t n = ext[axis] - 2, n1 = ext[a1] - 2, n2 = ext[a2] - 2;
    tk_args a{};
    a.D = D;
    a.E = E;
    a.F = F;
    a.R = R;
    a.X = box;
    a.in = {str[0] + str[1] + str[2], str[a1], str[a2], str[axis]};
    a.out = axis == 0 ? tk_view{0, n, n * n1, 1} : tk_view{0, 1, n1 * n, n1};
    a.n = n;
    a.n1 = n1;
    a.l_begin = 0;
    a.l_count = n1 * n2;
    unsigned long long *err;
    CUDA_OK(cudaMalloc(&err, 8));
    CUDA_OK(cudaMemset(err, 0xff, 8));
    a.err = err;
    const bool contiguous = axis == 0;
    const kernel_types kt{dtype_of<TL>(), dtype_of<TD>(), dtype_of<TX>()};
    tk_plan plan;
    TRIDI_OK(plan_solve(bare_choice, kt, a, contiguous, true, &plan));
    a.scratch = scratch; // the launches plan again (no grid barrier), perhaps another kernel that needs it
    *one_wave = plan.one_wave; // what tridi_solve_device does: guard by a grid barrier, or box + commit
    *kernel = plan_kernel_name(plan);
    return time_launches(reps, err, "bare kernel", [&] { TRIDI_OK(launch_solve(bare_choice, kt, a, contiguous, 0)); });
}

void resident(tridi_context ctx, cusparseHandle_t sp, const grid3 &G, const bw &B, int combo)
{
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {G.nx, G.ny, G.nz};
    const device_system s = make_system(ctx, G, combo, true);
    const tridi_grid &g = s.g;
    void *boxbuf;
    CUDA_OK(cudaMalloc(&boxbuf, s.box * (s.tl == TRIDI_FLOAT64 ? 8 : 4)));
    tridi_arrays a = s.a;
    const int reps = s.box < 2000000 ? 50 : s.box < 50000000 ? 10 : 5;
    for (int axis = 0; axis < 3; ++axis) {
        if (only_axis >= 0 && axis != only_axis)
            continue;
        const int64_t n = axis == 0 ? G.nx : axis == 1 ? G.ny : G.nz;
        for (int w = 0; w < 3; ++w)
            TRIDI_OK(tridi_solve_device(ctx, &g, (tridi_axis)axis, lo, hi, &a, nullptr));
        TRIDI_OK(tridi_synchronize(ctx));
        // Calls back to back, as a model's time loop issues them: per-call time includes launch overhead.
        std::vector<double> t;
        for (int rep = 0; rep < 5; ++rep) {
            double t0 = now();
            for (int k = 0; k < reps; ++k)
                TRIDI_OK(tridi_solve_device(ctx, &g, (tridi_axis)axis, lo, hi, &a, nullptr));
            TRIDI_OK(tridi_synchronize(ctx));
            t.push_back((now() - t0) / reps);
        }
        const double tc = median(t);
        double tk;
        bool one_wave = false;
        const char *kern = "";
        if (combo == 0)
            tk = time_bare_kernel<float, float, float>(g, axis, s.p[0], s.p[1], s.p[2], s.p[3], boxbuf, s.scratch, reps, &one_wave, &kern);
        else if (combo == 1)
            tk = time_bare_kernel<double, double, double>(g, axis, s.p[0], s.p[1], s.p[2], s.p[3], boxbuf, s.scratch, reps, &one_wave, &kern);
        else
            tk = time_bare_kernel<float, double, float>(g, axis, s.p[0], s.p[1], s.p[2], s.p[3], boxbuf, s.scratch, reps, &one_wave, &kern);
        const double bytes = (double)floor_bytes(combo) * s.box;
        char sp_col[64] = "-";
        if (combo != 2 && axis != 1) {
            const int64_t batch = (int64_t)(s.box / n);
            const double ts = combo == 0 ? time_cusparse<float>(sp, axis, n, batch, reps)
                                         : time_cusparse<double>(sp, axis, n, batch, reps);
            std::snprintf(sp_col, sizeof sp_col, "%9.1f %6.2fx", ts * 1e6, ts / tc);
        } else if (combo != 2) {
            std::snprintf(sp_col, sizeof sp_col, "%16s", "n/a (layout)");
        }
        std::printf("| %4dx%4dx%3d | %c | %-5s | %-8s | %-7s | %9.1f | %9.1f | %5.1f%% | %6.1f | %5.1f%% | %6.1f%% | %s |\n",
                    G.nx, G.ny, G.nz, "xyz"[axis], tname(combo), kern,
                    one_wave ? "barrier" : "commit", tc * 1e6, tk * 1e6,
                    100.0 * (tc / tk - 1.0), bytes / tc * 1e-9, 100.0 * bytes / tc / B.d2d, 100.0 * bytes / tk / B.d2d,
                    sp_col);
        std::fflush(stdout);
    }
    free_system(ctx, s);
    cudaFree(boxbuf);
}
