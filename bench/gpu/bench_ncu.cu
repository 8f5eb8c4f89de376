// One plan solve per FAST-table row inside a profiler range (--ncu, for bench/gpu/ncu_rows.sh).
#include "bench_gpu.cuh"

// ---- One solve per row under the profiler (--ncu: bench/gpu/ncu_rows.sh) -----------------------------
// For every row of the FAST table's selection (FAST for f32 and f64) and MOHID's arithmetic for every type:
// the plan of the table (ON_ERROR_LINES, DEFERRED), three warm-up calls, then one call between
// cudaProfilerStart and cudaProfilerStop, so that `ncu --profile-from-start off` profiles exactly that call's
// kernel. A line "ncu_row,<grid>,<type>,<axis>,<arith>,<kernel>" per row, in the profiled order.
void ncu_rows(tridi_context ctx, const grid3 &G, int combo)
{
    const device_system s = make_system(ctx, G, combo, true);
    const tridi_grid &g = s.g;
    const tridi_arrays a = s.a;
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {G.nx, G.ny, G.nz};
    const tridi_dtype types[5] = {s.tl, s.td, s.tl, s.tl, s.tl};
    for (int row = 0; row < 6; ++row) {
        const int axis = row / 2;
        const bool fast = row % 2 == 0;
        if ((only_axis >= 0 && axis != only_axis) || (fast && combo == 2))
            continue;
        const char *kern = "";
        time_kernel(g, axis, a, fast, s.scratch, 1, &kern); // names the planner's kernel (outside the profiled range)
        const tridi_solve_options o = lines_deferred(fast ? TRIDI_ARITH_FAST : TRIDI_ARITH_MOHID);
        tridi_plan plan;
        TRIDI_OK(tridi_plan_create(ctx, &g, (tridi_axis)axis, lo, hi, types, &o, &plan));
        for (int w = 0; w < 3; ++w)
            TRIDI_OK(tridi_plan_solve(plan, &a));
        TRIDI_OK(tridi_plan_status(plan));
        CUDA_OK(cudaProfilerStart());
        TRIDI_OK(tridi_plan_solve(plan, &a));
        TRIDI_OK(tridi_plan_status(plan));
        CUDA_OK(cudaProfilerStop());
        TRIDI_OK(tridi_plan_destroy(plan));
        std::printf("ncu_row,%dx%dx%d,%s,%c,%s,%s\n", G.nx, G.ny, G.nz, tname(combo), "xyz"[axis],
                    fast ? "FAST" : "MOHID", kern);
        std::fflush(stdout);
    }
    free_system(ctx, s);
}
