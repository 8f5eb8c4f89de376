/* Faults of the CUDA backend that no input provokes, through the library's own error paths:
 *  - host (non-device) arrays passed to tridi_solve_device: TRIDI_ERROR_INVALID_VALUE naming the array,
 *    before any kernel could touch them (which would end the process's CUDA context);
 *  - a kernel launch refused by the runtime (test builds only, CMake option TRIDI_FAULT_INJECTION:
 *    tridi_test_fail_launch(n) makes the n-th launch from now a real launch of an invalid configuration):
 *    for the solve of host arrays (a middle slab of the pipeline, and a box of one slab), the one-wave device
 *    solve, and both launches of the box + commit device solve (with a failing line queued before the
 *    refused commit).
 *    Each must give TRIDI_ERROR_CUDA with CUDA's own text, leave x as it was and device memory where it
 *    was (tridi's accounting; the driver's free memory not lower), and the next valid call must give the right
 *    answer; the context must then be destroyed cleanly, returning all its device memory.
 * Exits 77 when no GPU is present. */
#include "testutil.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Internal entry points of libtridi (not in tridi.h): the GPU count, and the test hooks. */
int tridi_cuda_device_count(void);
void tridi_test_fail_launch(int nth);
size_t tridi_test_device_bytes(void);

static int failures, checks;

static void check(int ok, const char *what, const char *detail)
{
    checks++;
    if (!ok) {
        failures++;
        printf("FAILED %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    } else {
        printf("ok %s\n", what);
    }
}

static size_t free_device_memory(void)
{
    size_t free_b = 0, total = 0;
    cudaMemGetInfo(&free_b, &total);
    return free_b;
}

/* One case: a grid, an axis, host or device arrays. */
typedef struct fault_case {
    const char *name;
    tridi_grid g;
    int64_t lo[3], hi[3];
    tridi_axis axis;
    int device;
    tu_system s;
    void *xref;
    tu_dev_set d;
} fault_case;

static void case_init(fault_case *c, const char *name, tridi_context ctx, uint64_t *rng, int64_t nx, int64_t ny,
                      int64_t nz, tridi_axis axis, int device)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    c->g = (tridi_grid){3, {0, -1, 1}, {nx + 1, ny, nz + 2}}; /* one halo cell on every side */
    const int64_t lo[3] = {1, 0, 2}, hi[3] = {nx, ny - 1, nz + 1};
    memcpy(c->lo, lo, sizeof lo);
    memcpy(c->hi, hi, sizeof hi);
    c->axis = axis;
    c->device = device;
    tu_system_alloc(&c->s, &c->g, TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, rng);
    const size_t xb = (size_t)c->s.cells * 4;
    c->xref = malloc(xb);
    memcpy(c->xref, c->s.x_before, xb);
    tridi_arrays ra = c->s.a;
    ra.x = c->xref;
    tu_reference_solve(&c->g, axis, lo, hi, &ra);
    if (device)
        if (tu_dev_upload(ctx, &c->s, &c->d))
            exit(1);
}

/* The solve of the case; for device arrays, x is fetched back into s.a.x. */
static tridi_status case_solve(fault_case *c, tridi_context ctx)
{
    if (!c->device)
        return tridi_solve(ctx, &c->g, c->axis, c->lo, c->hi, &c->s.a);
    tridi_arrays da = tu_dev_arrays(&c->s, &c->d);
    tridi_status st = tridi_solve_device(ctx, &c->g, c->axis, c->lo, c->hi, &da, NULL);
    tridi_status sync = tridi_synchronize(ctx);
    if (!st)
        st = sync;
    tridi_status copy = tridi_copy_to_host(ctx, c->s.a.x, c->d.p[4], c->d.bytes[4]);
    return st ? st : copy;
}

/* The case solved right: answers against the reference, nothing outside the box written. */
static void expect_right(fault_case *c, tridi_context ctx, uint64_t *rng, const char *when)
{
    char what[160];
    snprintf(what, sizeof what, "%s: %s", c->name, when);
    tu_poison_x(&c->s, rng);
    if (c->device)
        tridi_copy_to_device(ctx, c->d.p[4], c->s.a.x, c->d.bytes[4]);
    tridi_status st = case_solve(c, ctx);
    check(st == TRIDI_SUCCESS, what, st ? tridi_error_message() : NULL);
    if (!st)
        check(tu_check(what, &c->s, c->xref, c->lo, c->hi, c->axis, tu_tolerance(TRIDI_FLOAT32)) == 0, what,
              "answers against the reference");
}

/* The nth launch of the case's solve refused: TRIDI_ERROR_CUDA with CUDA's text, x unchanged. */
static void expect_refused(fault_case *c, tridi_context ctx, uint64_t *rng, int nth, const char *which)
{
    char what[160];
    snprintf(what, sizeof what, "%s: %s refused", c->name, which);
    tu_poison_x(&c->s, rng);
    if (c->device)
        tridi_copy_to_device(ctx, c->d.p[4], c->s.a.x, c->d.bytes[4]);
    tridi_test_fail_launch(nth);
    tridi_status st = case_solve(c, ctx);
    tridi_test_fail_launch(0);
    const char *msg = tridi_error_message();
    char detail[600];
    snprintf(detail, sizeof detail, "%s: %s", tridi_status_name(st), msg);
    printf("  %s -> %s\n", what, detail);
    /* The hook launches a block of 2048 threads: CUDA 12 refuses it as an invalid configuration, CUDA 13
     * (driver 580, H100) as an invalid argument. Either way the message must carry CUDA's own text. */
    const int cuda_text = strstr(msg, cudaGetErrorString(cudaErrorInvalidConfiguration)) != NULL ||
                          strstr(msg, cudaGetErrorString(cudaErrorInvalidValue)) != NULL;
    check(st == TRIDI_ERROR_CUDA && cuda_text, what, detail);
    /* For device arrays, case_solve fetched x back after the failure. */
    check(tu_check_unchanged(what, &c->s) == 0, what, "x was written");
}

static void case_free(fault_case *c, tridi_context ctx)
{
    if (c->device)
        tu_dev_free(ctx, &c->d);
    free(c->xref);
    tu_system_free(&c->s);
}

/* Host arrays given to tridi_solve_device: refused before any launch, naming the array. */
static void host_pointers(tridi_context ctx, uint64_t *rng)
{
    fault_case c;
    case_init(&c, "device solve on host arrays", ctx, rng, 12, 9, 7, TRIDI_AXIS_Y, 1);
    static const char *role[5] = {"lower", "diag", "upper", "rhs", "x"};
    const void *host[5] = {c.s.a.lower, c.s.a.diag, c.s.a.upper, c.s.a.rhs, c.s.a.x};
    for (int r = 0; r < 5; ++r) {
        tridi_arrays da = tu_dev_arrays(&c.s, &c.d);
        const void **slot[5] = {&da.lower, &da.diag, &da.upper, &da.rhs, (const void **)&da.x};
        *slot[r] = host[r];
        tridi_status st = tridi_solve_device(ctx, &c.g, c.axis, c.lo, c.hi, &da, NULL);
        char what[96], needle[32];
        snprintf(what, sizeof what, "host %s in tridi_solve_device", role[r]);
        snprintf(needle, sizeof needle, "arrays->%s", role[r]);
        printf("  %s -> %s: %s\n", what, tridi_status_name(st), tridi_error_message());
        check(st == TRIDI_ERROR_INVALID_VALUE && strstr(tridi_error_message(), needle) &&
                  strstr(tridi_error_message(), "host memory"),
              what, tridi_error_message());
    }
    check(tu_check_unchanged("host x", &c.s) == 0, "host x untouched by the refused solve", NULL);
    check(tridi_synchronize(ctx) == TRIDI_SUCCESS, "synchronize after the refused solves", tridi_error_message());
    expect_right(&c, ctx, rng, "device arrays after host arrays");

    /* Pinned, mapped host memory is addressable by the device: accepted, right answers. */
    tridi_arrays da = tu_dev_arrays(&c.s, &c.d);
    void *pinned_x = NULL;
    cudaMallocHost(&pinned_x, c.d.bytes[4]);
    memcpy(pinned_x, c.s.x_before, c.d.bytes[4]);
    da.x = pinned_x;
    tridi_status st = tridi_solve_device(ctx, &c.g, c.axis, c.lo, c.hi, &da, NULL);
    if (!st)
        st = tridi_synchronize(ctx);
    check(st == TRIDI_SUCCESS, "pinned host x in tridi_solve_device", st ? tridi_error_message() : NULL);
    if (!st) {
        memcpy(c.s.a.x, pinned_x, c.d.bytes[4]);
        check(tu_check("pinned host x", &c.s, c.xref, c.lo, c.hi, c.axis, tu_tolerance(TRIDI_FLOAT32)) == 0,
              "pinned host x: answers against the reference", NULL);
    }
    cudaFreeHost(pinned_x);
    case_free(&c, ctx);
}

int main(void)
{
    if (tridi_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    uint64_t rng = tu_seed("test_cuda_faults");
    /* Small slabs, so that a host solve runs several and the refused launch is a middle one. */
    setenv("TRIDI_HOST_SLAB_CELLS", "2000", 1);
    cudaFree(0); /* the CUDA context exists before anything is measured */
    const size_t bytes_before = tridi_test_device_bytes();

    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CUDA;
    cfg.on_error = TRIDI_ON_ERROR_CALL; /* x unchanged whatever fails, a refused launch included */
    tridi_context ctx = NULL;
    if (tridi_create(&ctx, &cfg)) {
        printf("tridi_create: %s\n", tridi_error_message());
        return 1;
    }
    host_pointers(ctx, &rng);

    /* Host arrays (8 slabs, and one); device arrays in one wave (guarded by a grid barrier: one launch); device
     * arrays of more lines than a wave holds (solve into the box, then the commit: two launches). With
     * lines split over several threads a wave holds the answers of every line in shared memory until the
     * barrier, up to about 7M float cells on an H100: 12M cells exceed that. */
    fault_case host, one, wave, many;
    case_init(&host, "host arrays, 8 slabs", ctx, &rng, 20, 20, 40, TRIDI_AXIS_Z, 0);
    case_init(&one, "host arrays, one slab", ctx, &rng, 12, 10, 8, TRIDI_AXIS_Y, 0);
    case_init(&wave, "device arrays, one wave", ctx, &rng, 30, 20, 10, TRIDI_AXIS_X, 1);
    case_init(&many, "device arrays, box + commit", ctx, &rng, 2000, 2000, 3, TRIDI_AXIS_Z, 1);

    /* Every path once, and one refused launch, before memory is measured: buffers are grown and kernels
     * loaded (modules load lazily, the refused launch's too). */
    expect_right(&host, ctx, &rng, "warm-up");
    expect_refused(&one, ctx, &rng, 1, "warm-up launch");
    expect_right(&one, ctx, &rng, "warm-up, after the refused launch");
    expect_right(&wave, ctx, &rng, "warm-up");
    expect_right(&many, ctx, &rng, "warm-up");
    expect_refused(&wave, ctx, &rng, 1, "warm-up launch");
    const size_t bytes_warm = tridi_test_device_bytes(), free_warm = free_device_memory();

    for (int round = 0; round < 2; ++round) {
        expect_refused(&host, ctx, &rng, 3, "the third slab's launch");
        expect_right(&host, ctx, &rng, "next call after the refused launch");
        expect_refused(&one, ctx, &rng, 1, "the launch");
        expect_right(&one, ctx, &rng, "next call after the refused launch");
        expect_refused(&wave, ctx, &rng, 1, "the launch");
        expect_right(&wave, ctx, &rng, "next call after the refused launch");
        expect_refused(&many, ctx, &rng, 1, "the solve's launch");
        expect_right(&many, ctx, &rng, "next call after the refused solve");

        /* The commit refused after the solve was queued, that solve finding a NaN: its failing line must
         * not become the verdict of the next solve in the same slot. */
        int64_t bad = tu_index(&many.g, 700, 250, 3);
        float keep = ((float *)many.s.a.rhs)[bad];
        ((float *)many.s.a.rhs)[bad] = NAN;
        tridi_copy_to_device(ctx, many.d.p[3], many.s.a.rhs, many.d.bytes[3]);
        expect_refused(&many, ctx, &rng, 2, "the commit's launch, after a failing line");
        ((float *)many.s.a.rhs)[bad] = keep;
        tridi_copy_to_device(ctx, many.d.p[3], many.s.a.rhs, many.d.bytes[3]);
        expect_right(&many, ctx, &rng, "next call after the refused commit");

        char detail[160];
        const size_t bytes_now = tridi_test_device_bytes(), free_now = free_device_memory();
        snprintf(detail, sizeof detail, "tridi %zu bytes (after warm-up %zu), driver free %zu (after warm-up %zu)",
                 bytes_now, bytes_warm, free_now, free_warm);
        printf("  round %d: %s\n", round, detail);
        /* tridi's count exactly; the driver's free memory not below (it could only grow, if at all). */
        check(bytes_now == bytes_warm && free_now >= free_warm, "device memory where it was after the refused launches",
              detail);
    }

    case_free(&host, ctx);
    case_free(&one, ctx);
    case_free(&wave, ctx);
    case_free(&many, ctx);
    const tridi_status st = tridi_destroy(ctx);
    check(st == TRIDI_SUCCESS, "tridi_destroy after the refused launches", st ? tridi_error_message() : NULL);
    char detail[120];
    snprintf(detail, sizeof detail, "tridi %zu bytes, %zu before the context", tridi_test_device_bytes(), bytes_before);
    check(tridi_test_device_bytes() == bytes_before, "every device byte of the context returned", detail);
    snprintf(detail, sizeof detail, "driver free %zu, %zu after warm-up", free_device_memory(), free_warm);
    check(free_device_memory() >= free_warm, "the driver got the context's memory back", detail);
    printf("test_cuda_faults: %d of %d checks failed\n", failures, checks);
    return failures ? 1 : 0;
}
