// The device plans' table (--plans): the per-call cost of each solve contract on the same data, ON_ERROR_LINES
// against ON_ERROR_CALL and SYNC against DEFERRED verdicts, against floor traffic at the copy bandwidth.
#include "bench_gpu.cuh"

// Device plans (tridi_plan_solve, calls back to back on device arrays): the cost of each contract, same data,
// same run: ON_ERROR_CALL (x unchanged on a failure: grid barrier in one wave, else answer box + commit
// kernel) against ON_ERROR_LINES (each line written once it succeeded: no box, no commit), each with a
// DEFERRED verdict (the call only enqueues; one tridi_plan_status after the batch) and a SYNC one (every call
// waits for its verdict).
void plans(tridi_context ctx, const grid3 &G, const bw &B, int combo)
{
    const device_system s = make_system(ctx, G, combo);
    const tridi_grid &g = s.g;
    tridi_arrays a = s.a;
    const int reps = s.box < 2000000 ? 200 : s.box < 50000000 ? 10 : 5;
    for (int axis = 0; axis < 3; ++axis) {
        if (only_axis >= 0 && axis != only_axis)
            continue;
        double us[2][2]; // [on_error][verdict]
        for (int oe = 0; oe < 2; ++oe)
            for (int v = 0; v < 2; ++v) {
                tridi_solve_options o;
                tridi_solve_options_init(&o);
                o.memory = TRIDI_MEMORY_DEVICE;
                o.on_error = oe ? TRIDI_ON_ERROR_CALL : TRIDI_ON_ERROR_LINES;
                o.verdict = v ? TRIDI_VERDICT_DEFERRED : TRIDI_VERDICT_SYNC;
                us[oe][v] = time_plan(ctx, g, axis, a, o, reps) * 1e6;
            }
        const double bytes = (double)floor_bytes(combo) * s.box, floor_us = bytes / B.d2d * 1e6;
        std::printf("| %4dx%4dx%3d | %c | %-5s | %8.1f | %8.1f | %5.2f | %8.1f | %8.1f | %5.2f | %6.1f | %5.2f | %5.2f |\n",
                    G.nx, G.ny, G.nz, "xyz"[axis], tname(combo), us[1][1], us[0][1], us[1][1] / us[0][1], us[0][0],
                    us[0][1], us[0][0] / us[0][1], floor_us, us[0][1] / floor_us, us[1][1] / floor_us);
        std::fflush(stdout);
    }
    free_system(ctx, s);
}
