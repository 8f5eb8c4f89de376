/* tridi_upload_async on arrays that were not registered (a model that only swaps its THOMAS calls), whose
 * copy into pinned staging now runs off the caller's thread, in stream order (issue 29 item 6,
 * docs/decisions/029): the caller's arrays are read until the solve that uses them returns, never after.
 * Each input lives in pages of its own; right after the solve returns (or tridi_destroy, or a solve of
 * another box that leaves the uploads unused) the pages are made unreadable (PROT_NONE) and then unmapped,
 * so any later read of them by tridi crashes the test. The arrays are also changed after the solve, and
 * the answers checked against the reference: along x, y and z, mixed and double types, one slab and
 * several (TRIDI_HOST_SLAB_CELLS), with the float transfer of double inputs (allow_f32_transfer), and many
 * calls in a row on one context. Exits 77 without a GPU. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int tridi_cuda_device_count(void); /* internal, in libtridi: lets the test skip without a GPU */

/* A copy of `bytes` from src in pages of its own. */
static void *paged_copy(const void *src, size_t bytes, size_t *mapped)
{
    const size_t page = 4096;
    *mapped = (bytes + page - 1) / page * page;
    void *p = mmap(NULL, *mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    memcpy(p, src, bytes);
    return p;
}

static tridi_context make_ctx(int f32_transfer)
{
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CUDA;
    cfg.allow_f32_transfer = f32_transfer;
    tridi_context ctx = NULL;
    if (tridi_create(&ctx, &cfg)) {
        printf("FAILED tridi_create: %s\n", tridi_error_message());
        exit(1);
    }
    return ctx;
}

enum { AFTER_SOLVE, AFTER_OTHER_BOX, AFTER_DESTROY };

/* One upload-ahead round on s along axis: the four inputs copied into pages of their own, uploaded, then
 * (how) solved, or solved on another box, or the context destroyed; the inputs' pages are then changed,
 * made unreadable and unmapped. Returns the bad answers (0 when how == AFTER_DESTROY). */
static int64_t round_trip(const char *label, tridi_context *ctx, int f32, tu_system *s, tridi_axis axis,
                          const int64_t lo[3], const int64_t hi[3], int how, uint64_t *rng)
{
    const void *src[4] = {s->a.lower, s->a.diag, s->a.upper, s->a.rhs};
    const tridi_dtype t[4] = {s->a.lower_type, s->a.diag_type, s->a.upper_type, s->a.rhs_type};
    void *in[4];
    size_t mapped[4];
    for (int r = 0; r < 4; ++r)
        if (!(in[r] = paged_copy(src[r], (size_t)s->cells * tu_esize(t[r]), &mapped[r]))) {
            printf("FAILED %s: mmap\n", label);
            return 1;
        }
    tu_poison_x(s, rng);
    void *xref = malloc((size_t)s->cells * 8);
    memcpy(xref, s->a.x, (size_t)s->cells * tu_esize(s->a.x_type));
    tridi_arrays ref = s->a;
    ref.x = xref;
    tu_reference_solve(&s->grid, axis, lo, hi, &ref);
    tridi_arrays a = {in[0], t[0], in[1], t[1], in[2], t[2], in[3], t[3], s->a.x, s->a.x_type};

    tridi_status st = TRIDI_SUCCESS;
    for (int r = 0; r < 4 && !st; ++r)
        st = tridi_upload_async(*ctx, &s->grid, axis, lo, hi, (tridi_array_role)r, in[r], t[r]);
    int64_t bad = 0;
    if (!st && how == AFTER_SOLVE) {
        st = tridi_solve(*ctx, &s->grid, axis, lo, hi, &a);
    } else if (!st && how == AFTER_OTHER_BOX) {
        /* The uploads go unused: the solve of a smaller box moves its own inputs (from s's arrays). */
        int64_t hi2[3] = {hi[0], hi[1], hi[2]};
        hi2[axis] = lo[axis] + (hi[axis] - lo[axis]) / 2;
        st = tridi_solve(*ctx, &s->grid, axis, lo, hi2, &s->a);
    } else if (!st) {
        tridi_destroy(*ctx);
        *ctx = make_ctx(f32);
    }
    if (st) {
        printf("FAILED %s: %s: %s\n", label, tridi_status_name(st), tridi_error_message());
        bad = 1;
    }
    /* The model changes its arrays after the solve, then frees them. */
    for (int r = 0; r < 4; ++r) {
        memset(in[r], 0xff, mapped[r]); /* NaN in every type */
        mprotect(in[r], mapped[r], PROT_NONE);
    }
    if (!bad && how == AFTER_SOLVE)
        bad = tu_check(label, s, xref, lo, hi, axis, f32 ? 1e-4 : tu_tolerance(s->a.x_type));
    /* More work on the context: a solve of s itself, which must not be answered from the old uploads. */
    if (how != AFTER_DESTROY) {
        tu_poison_x(s, rng);
        memcpy(xref, s->a.x, (size_t)s->cells * tu_esize(s->a.x_type));
        tu_reference_solve(&s->grid, axis, lo, hi, &ref);
        st = tridi_solve(*ctx, &s->grid, axis, lo, hi, &s->a);
        if (st) {
            printf("FAILED %s, next solve: %s\n", label, tridi_error_message());
            bad++;
        } else {
            bad += tu_check(label, s, xref, lo, hi, axis, f32 ? 1e-4 : tu_tolerance(s->a.x_type));
        }
    }
    for (int r = 0; r < 4; ++r)
        munmap(in[r], mapped[r]);
    free(xref);
    return bad;
}

int main(void)
{
    if (tridi_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    uint64_t rng = tu_seed("test_upload_plain");
    tridi_grid g = {3, {0, 0, 0}, {43, 29, 19}};
    const int64_t lo[3] = {1, 2, 1}, hi[3] = {41, 27, 18};
    tu_system mixed, f64;
    tu_system_alloc(&mixed, &g, TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, &rng);
    tu_system_alloc(&f64, &g, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, &rng);
    int failures = 0;
    for (int slabs = 0; slabs < 2; ++slabs) {
        if (slabs)
            setenv("TRIDI_HOST_SLAB_CELLS", "3000", 1); /* several slabs per box */
        for (int f32 = 0; f32 < 2; ++f32) {
            tridi_context ctx = make_ctx(f32);
            for (int axis = 0; axis < 3; ++axis)
                for (int sys = 0; sys < 2; ++sys)
                    for (int how = 0; how < 3; ++how) {
                        char label[160];
                        static const char *hows[3] = {"solved", "another box solved", "context destroyed"};
                        snprintf(label, sizeof label, "%s, axis %c, %s, %s, %s", slabs ? "slabs" : "one slab",
                                 "xyz"[axis], sys ? "f64" : "mixed", f32 ? "float transfer" : "own types",
                                 hows[how]);
                        const int64_t bad =
                            round_trip(label, &ctx, f32, sys ? &f64 : &mixed, (tridi_axis)axis, lo, hi, how, &rng);
                        tu_expect_true(label, bad == 0);
                        failures += bad != 0;
                    }
            /* Many rounds in a row on one context. */
            int64_t bad = 0;
            for (int k = 0; k < 30; ++k)
                bad += round_trip("in a row", &ctx, f32, k % 2 ? &f64 : &mixed, (tridi_axis)(k % 3), lo, hi,
                                  AFTER_SOLVE, &rng);
            tu_expect_true("30 upload rounds in a row on one context", bad == 0);
            failures += bad != 0;
            tridi_destroy(ctx);
        }
        unsetenv("TRIDI_HOST_SLAB_CELLS");
    }
    tu_system_free(&mixed);
    tu_system_free(&f64);
    printf("%d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
