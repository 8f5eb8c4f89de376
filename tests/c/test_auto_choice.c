/* AUTO for host arrays (docs/decisions/018): the model that chooses between the GPU path and the CPU
 * backend picks as documented for the figures of docs/performance.md, and an AUTO context solves host
 * arrays right whichever backend it resolved to (the CPU on a machine without a GPU, as before). */
#include "backend.h"
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int near(double got, double want) { return fabs(got - want) <= 1e-9 * fabs(want) + 1e-15; }

/* MOHID's types: float lower, upper, rhs and x, double diag. */
static tridi_auto_call mohid_call(int64_t cells, int registered, int threads)
{
    tridi_auto_call c = {cells, 24, 4, 20, registered ? 0 : 24, threads, TRIDI_AUTO_CPU_POOL};
    return c;
}

static void check_model(void)
{
    const tridi_auto_machine *m = &tridi_auto_h100_host;
    const int64_t big = 140 * 140 * 56;

    /* 140x140x56 on 16 threads of the pool, registered: 32 B/cell at 85.7 GB/s plus 4 us for each of the
     * 15 workers joining after the model's work (0.47 ms) against 75 us + 20 B/cell up and 4 down at 55 GB/s
     * (0.55 ms); the CPU (in flow_channel_140-56 7.8 ms of solves per step on 16 threads against 8.1 through
     * the GPU with registered arrays, docs/decisions/018). */
    tridi_auto_call c = mohid_call(big, 1, 16);
    tridi_auto_estimate e = tridi_auto_estimate_host(m, &c);
    tu_expect_true("140x140x56, 16 threads: the CPU call takes all 16 threads", e.cpu_threads == 16);
    tu_expect_true("140x140x56, 16 threads, pool: CPU time = 32 B/cell over the host bandwidth + 15 late workers",
                   near(e.cpu_s, big * 32.0 / 85.7e9 + 4e-6 * 15));
    tu_expect_true("140x140x56, registered: GPU time = 75 us + 20 B/cell up + 4 B/cell down at 55 GB/s",
                   near(e.gpu_s, 75e-6 + big * 20.0 / 55e9 + big * 4.0 / 55e9));
    tu_expect_true("140x140x56, 16 threads of the pool, registered: the CPU backend", e.use_cpu == 1);
    /* An OpenMP team per call (TRIDI_CPU_POOL=0) waits for its last thread to wake: quadratic, 3 ms. */
    c.how = TRIDI_AUTO_CPU_TEAM;
    e = tridi_auto_estimate_host(m, &c);
    tu_expect_true("140x140x56, 16 threads, sleeping team: CPU time + waking 15 threads, 13.3 us x 15^2",
                   near(e.cpu_s, big * 32.0 / 85.7e9 + 13.3e-6 * 15 * 15));
    tu_expect_true("140x140x56, 16 threads, sleeping team, registered: the GPU", e.use_cpu == 0);
    /* A team kept spinning (OMP_WAIT_POLICY=active) costs no wake-up: the CPU (back to back it measured
     * 0.24-0.30 ms against 0.53 ms). */
    c.how = TRIDI_AUTO_CPU_TEAM_AWAKE;
    e = tridi_auto_estimate_host(m, &c);
    tu_expect_true("140x140x56, 16 threads, spinning team: CPU time = the bandwidth term alone",
                   near(e.cpu_s, big * 32.0 / 85.7e9));
    tu_expect_true("140x140x56, 16 threads awake, registered: the CPU backend", e.use_cpu == 1);
    /* The pool's term grows with the threads, not their square: 8 threads pay 7 x 4 us, and at 54.4 GB/s
     * registered arrays go faster through the GPU. */
    c = mohid_call(big, 1, 8);
    e = tridi_auto_estimate_host(m, &c);
    tu_expect_true("140x140x56, 8 threads of the pool: 8 x 6.8 GB/s + 7 late workers",
                   near(e.cpu_s, big * 32.0 / (8 * 6.8e9) + 4e-6 * 7));
    tu_expect_true("140x140x56, 8 threads of the pool, registered: the GPU", e.use_cpu == 0);
    /* 70x70x28 offered 16 threads takes 7 (3.3 MB of traffic): 0.116 ms against 0.135 ms, the CPU. */
    c = mohid_call(70 * 70 * 28, 1, 16);
    e = tridi_auto_estimate_host(m, &c);
    tu_expect_true("70x70x28, 16 threads offered: the CPU call takes 7", e.cpu_threads == 7);
    tu_expect_true("70x70x28, registered: the CPU backend", e.use_cpu == 1);
    tridi_auto_machine awake = *m;
    awake.pool_late_s = awake.team_wake_s = 0;

    /* 4 threads draw 27 GB/s: registered arrays go faster through the GPU... */
    c = mohid_call(big, 1, 4);
    e = tridi_auto_estimate_host(m, &c);
    tu_expect_true("140x140x56, 4 threads of the pool: CPU time at 4 x 6.8 GB/s + 3 late workers",
                   near(e.cpu_s, big * 32.0 / (4 * 6.8e9) + 4e-6 * 3));
    tu_expect_true("140x140x56, 4 threads, registered: the GPU", e.use_cpu == 0);
    /* ...arrays that are not registered are packed into staging on those threads first: the CPU. */
    c = mohid_call(big, 0, 4);
    e = tridi_auto_estimate_host(m, &c);
    tu_expect_true("140x140x56, 4 threads, not registered: GPU time adds the staging copy (48 B/cell on 4 threads)",
                   near(e.gpu_s, 75e-6 + big * 24.0 / 55e9 + big * 48.0 / (4 * 6.8e9)));
    tu_expect_true("140x140x56, 4 threads, not registered: the CPU backend", e.use_cpu == 1);

    /* Staging copies take at most 8 threads (decision 012), capped at the host's bandwidth. */
    c = mohid_call(big, 0, 16);
    e = tridi_auto_estimate_host(m, &c);
    tu_expect_true("140x140x56, 16 threads, not registered: staging on 8 threads (54.4 GB/s)",
                   near(e.gpu_s, 75e-6 + big * 24.0 / 55e9 + big * 48.0 / (8 * 6.8e9)));

    /* A 70x70 THOMAS_2D (117 KB of traffic) takes one thread (decision 017) whatever the context offers. */
    c = mohid_call(70 * 70, 1, 16);
    e = tridi_auto_estimate_host(m, &c);
    tu_expect_true("70x70 2D: one CPU thread", e.cpu_threads == 1);
    tu_expect_true("70x70 2D: CPU time at one thread's 6.8 GB/s", near(e.cpu_s, 70 * 70 * 32.0 / 6.8e9));
    tu_expect_true("70x70 2D, registered: the GPU's fixed 75 us is more than the CPU's 23 us: the CPU",
                   e.use_cpu == 1);

    /* A tie goes to the CPU: a machine whose GPU call costs exactly what the CPU call does. */
    tridi_auto_machine tie = awake;
    c = mohid_call(big, 1, 16);
    tie.gpu_call_s = 0;
    e = tridi_auto_estimate_host(&tie, &c);
    tie.gpu_call_s = e.cpu_s - e.gpu_s;
    if (tie.gpu_call_s > 0) {
        e = tridi_auto_estimate_host(&tie, &c);
        tu_expect_true("equal times: the CPU backend", e.use_cpu == 1 || e.cpu_s > e.gpu_s);
    }
    /* A faster link moves the choice to the GPU; a slower host too. */
    tridi_auto_machine fast_link = awake;
    fast_link.h2d_bytes_per_s = fast_link.d2h_bytes_per_s = 400e9;
    e = tridi_auto_estimate_host(&fast_link, &c);
    tu_expect_true("140x140x56, 16 threads, a 400 GB/s link: the GPU", e.use_cpu == 0);
    tridi_auto_machine slow_host = awake;
    slow_host.host_bytes_per_s = 20e9;
    e = tridi_auto_estimate_host(&slow_host, &c);
    tu_expect_true("140x140x56, 16 threads, a 20 GB/s host: the GPU", e.use_cpu == 0);
    /* No threads offered counts as one; an empty box costs the GPU its fixed part only. */
    c = mohid_call(0, 1, 0);
    e = tridi_auto_estimate_host(m, &c);
    tu_expect_true("an empty box: one thread, no CPU time, the CPU", e.cpu_threads == 1 && e.cpu_s == 0 &&
                                                                    near(e.gpu_s, 75e-6) && e.use_cpu == 1);
}

/* An AUTO context solves host arrays right through tridi_solve and a host plan, whichever backend it
 * resolved to; without a GPU that is the CPU backend, as before. */
static void check_context(uint64_t *rng)
{
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_AUTO;
    cfg.verbose = 1;
    tridi_context ctx = NULL;
    tu_expect("tridi_create (AUTO)", tridi_create(&ctx, &cfg), TRIDI_SUCCESS, NULL);
    if (!ctx)
        return;
    tridi_backend b = TRIDI_BACKEND_AUTO;
    tu_expect("tridi_get_backend", tridi_get_backend(ctx, &b), TRIDI_SUCCESS, NULL);
    tridi_build_info info;
    memset(&info, 0, sizeof info);
    info.size = sizeof info;
    tu_expect("tridi_get_build_info", tridi_get_build_info(&info), TRIDI_SUCCESS, NULL);
    if (info.cuda_devices <= 0)
        tu_expect_true("AUTO without a usable GPU resolves to the CPU backend", b == TRIDI_BACKEND_CPU);
    printf("AUTO resolved to %s (%d usable GPUs)\n", tridi_backend_name(b), info.cuda_devices);

    const int64_t shapes[2][3] = {{140, 140, 56}, {24, 18, 9}};
    for (int g = 0; g < 2; ++g) {
        tridi_grid grid = {3, {0, 0, 0}, {shapes[g][0] + 1, shapes[g][1] + 1, shapes[g][2] + 1}};
        const int64_t lo[3] = {1, 1, 1}, hi[3] = {shapes[g][0], shapes[g][1], shapes[g][2]};
        tu_system s;
        if (tu_system_alloc(&s, &grid, TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32,
                            rng)) {
            tu_expect_true("allocating the system", 0);
            break;
        }
        float *xref = malloc((size_t)s.cells * sizeof *xref);
        const tridi_dtype types[5] = {TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32};
        for (int axis = 0; axis < 3 && xref; ++axis) {
            for (int via_plan = 0; via_plan < 2; ++via_plan) {
                char what[160];
                snprintf(what, sizeof what, "AUTO %s, %lldx%lldx%lld along %c", via_plan ? "plan" : "tridi_solve",
                         (long long)hi[0], (long long)hi[1], (long long)hi[2], "xyz"[axis]);
                tu_poison_x(&s, rng);
                memcpy(xref, s.a.x, (size_t)s.cells * sizeof *xref);
                tridi_arrays r = s.a;
                r.x = xref;
                tu_reference_solve(&grid, (tridi_axis)axis, lo, hi, &r);
                if (via_plan) {
                    tridi_plan plan = NULL;
                    tu_expect(what, tridi_plan_create(ctx, &grid, (tridi_axis)axis, lo, hi, types, NULL, &plan),
                              TRIDI_SUCCESS, NULL);
                    tu_expect(what, tridi_plan_solve(plan, &s.a), TRIDI_SUCCESS, NULL);
                    tu_expect(what, tridi_plan_destroy(plan), TRIDI_SUCCESS, NULL);
                } else {
                    tu_expect(what, tridi_solve(ctx, &grid, (tridi_axis)axis, lo, hi, &s.a), TRIDI_SUCCESS, NULL);
                }
                tu_checks++;
                if (tu_check(what, &s, xref, lo, hi, (tridi_axis)axis, tu_tolerance(TRIDI_FLOAT32)))
                    tu_failures++;
            }
        }
        free(xref);
        tu_system_free(&s);
    }
    tu_expect("tridi_destroy", tridi_destroy(ctx), TRIDI_SUCCESS, NULL);
}

int main(void)
{
    uint64_t rng = tu_seed("test_auto_choice");
    check_model();
    check_context(&rng);
    printf("test_auto_choice: %d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
