// The FAST arithmetic table (--fast): device plans under ON_ERROR_LINES with deferred verdicts, FAST against
// MOHID arithmetic and cuSPARSE on the same data (y lines too: one gtsvInterleavedBatch per k slab), kernel
// alone and per call, as % of the copy bandwidth at floor traffic; every row in --passes passes, raw rows to
// --csv.
#include "bench_gpu.cuh"

// ---- FAST rows (--fast, issue 27) -------------------------------------------------------------------------
// Device plans under ON_ERROR_LINES with DEFERRED verdicts (calls back to back, one tridi_plan_status per
// batch), FAST against MOHID arithmetic on the same data; the bare kernels the planner picks for each (into x,
// no verdict); cuSPARSE on the same data and precision in the layout its routines need: x lines
// gtsv2StridedBatch, z lines gtsvInterleavedBatch, y lines gtsvInterleavedBatch once per k slab of a compact
// box (a slab's y lines are interleaved: no transpose, nz calls). Every row measured in g_passes passes; the
// table shows the median of the three (range of the per-call %), the CSV (--csv=FILE) every pass.

void fast_rows(tridi_context ctx, cusparseHandle_t sp, const grid3 &G, const bw &B, int combo)
{
    const device_system s = make_system(ctx, G, combo, true);
    const tridi_grid &g = s.g;
    const tridi_arrays a = s.a;
    const int reps = s.box < 2000000 ? 50 : s.box < 50000000 ? 10 : 5;
    const double bytes = (double)floor_bytes(combo) * s.box;
    for (int axis = 0; axis < 3; ++axis) {
        if (only_axis >= 0 && axis != only_axis)
            continue;
        const int64_t n = axis == 0 ? G.nx : axis == 1 ? G.ny : G.nz;
        double ts = 0.0;
        if (combo != 2) {
            const int64_t batch = (int64_t)(s.box / n);
            ts = combo == 0 ? time_cusparse<float>(sp, axis, n, batch, reps, G.nx)
                            : time_cusparse<double>(sp, axis, n, batch, reps, G.nx);
        }
        std::vector<double> kf, cf, cm, km;
        const char *kfn = "-", *kmn = "";
        for (int pass = 0; pass < g_passes; ++pass) {
            if (combo != 2) {
                kf.push_back(time_kernel(g, axis, a, true, s.scratch, reps, &kfn));
                cf.push_back(time_plan(ctx, g, axis, a, lines_deferred(TRIDI_ARITH_FAST), reps));
            }
            cm.push_back(time_plan(ctx, g, axis, a, lines_deferred(TRIDI_ARITH_MOHID), reps));
            km.push_back(time_kernel(g, axis, a, false, s.scratch, reps, &kmn));
        }
        const double mcm = median(cm), mkm = median(km);
        auto pct = [&](double t) { return 100.0 * bytes / t / B.d2d; };
        // every pass's figures as a range: times in us, shares of the copy bandwidth
        auto rows = [&](const char *metric, const std::vector<double> &t) {
            const double lo = *std::min_element(t.begin(), t.end()), hi = *std::max_element(t.begin(), t.end());
            char m[64];
            std::snprintf(m, sizeof m, "%s_us", metric);
            csv_row(G, tname(combo), "xyz"[axis], m, lo * 1e6, hi * 1e6, "us");
            std::snprintf(m, sizeof m, "%s_pct_copy", metric);
            csv_row(G, tname(combo), "xyz"[axis], m, pct(hi), pct(lo), "%");
        };
        if (combo != 2) {
            rows("fast_kernel", kf);
            rows("fast_call", cf);
            csv_row(G, tname(combo), "xyz"[axis], "cusparse_us", ts * 1e6, ts * 1e6, "us");
            csv_row(G, tname(combo), "xyz"[axis], "cusparse_over_fast_call", ts / median(cf), ts / median(cf), "ratio");
        }
        rows("mohid_kernel", km);
        rows("mohid_call", cm);
        if (combo == 2) {
            std::printf("| %dx%dx%d | %s | %c | - | - | - | - | %.1f (%s %.1f) | %.0f%% | - | - |\n", G.nx, G.ny, G.nz,
                        tname(combo), "xyz"[axis], mcm * 1e6, kmn, mkm * 1e6, pct(mcm));
        } else {
            const double mkf = median(kf), mcf = median(cf);
            const double lo = pct(*std::max_element(cf.begin(), cf.end())), hi = pct(*std::min_element(cf.begin(), cf.end()));
            std::printf("| %dx%dx%d | %s | %c | %s | %.1f | %.1f | %.0f%% | %.0f%% (%.0f-%.0f) | %.1f (%s %.1f) | %.0f%% | %.2fx "
                        "| %.1f | %.2fx |\n",
                        G.nx, G.ny, G.nz, tname(combo), "xyz"[axis], kfn, mkf * 1e6, mcf * 1e6, pct(mkf), pct(mcf), lo,
                        hi, mcm * 1e6, kmn, mkm * 1e6, pct(mcm), mcm / mcf, ts * 1e6, ts / mcf);
        }
        std::fflush(stdout);
    }
    free_system(ctx, s);
}
