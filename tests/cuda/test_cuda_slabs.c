/* test_cuda's host-array cases (test_cuda.h): the slab pipeline, all or nothing and per line, and
 * registrations shared by two contexts or page-locked by the caller. */
#include "test_cuda.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* On a context cutting boxes into slabs of 20000 cells (TRIDI_HOST_SLAB_CELLS), boxes of 60000 cells and
 * more, so the host-array pipeline runs in 3 to 8 slabs (along k for x and y lines, along j for z lines),
 * staged and registered, in place, with inputs uploaded ahead; then a zero pivot in the last line (the
 * last slab): x must keep every old value although the answers of the earlier slabs had already gone into
 * a registered x. */
int slab_case(tridi_context ctx_slabs, uint64_t *rng, int axis, int combo)
{
    tridi_grid g = {3, {0, 0, 0}, {0, 0, 0}};
    int64_t lo[3], hi[3];
    const int64_t n[3] = {tu_randint(rng, 60, 90), tu_randint(rng, 50, 80), tu_randint(rng, 20, 40)};
    for (int a = 0; a < 3; ++a) {
        g.lbound[a] = tu_randint(rng, -2, 1);
        const int64_t halo = tu_randint(rng, 0, 2);
        lo[a] = g.lbound[a] + halo;
        hi[a] = lo[a] + n[a] - 1;
        g.ubound[a] = hi[a] + tu_randint(rng, 0, 2);
    }
    if (tu_randint(rng, 0, 2) == 0) /* a thick halo along i: rows are copied one by one, not widened */
        g.ubound[0] += 20;
    const tridi_dtype *t = combos[combo];
    tu_system s;
    void *xref, *poison;
    size_t xb;
    if (combo_system(&s, &g, combo, axis, lo, hi, rng, &xref, &poison, &xb))
        return 1;
    char what[64], label[200];
    snprintf(what, sizeof what, "slabs axis %c %s", "xyz"[axis], combo_name[combo]);
    box_label(label, sizeof label, what, &g, lo, hi);
    const double tol = tu_tolerance(t[4]);
    int bad = 0;
    bad += host_solve_check(ctx_slabs, label, "slabs staged", &s, axis, lo, hi, xref, poison, 0, tol);
    bad += register_set(ctx_slabs, &s, 31, 0, 0);
    bad += host_solve_check(ctx_slabs, label, "slabs registered", &s, axis, lo, hi, xref, poison, 0, tol);
    bad += host_solve_check(ctx_slabs, label, "slabs registered, lower+upper ahead", &s, axis, lo, hi, xref, poison, 5, tol);
    bad += host_solve_check(ctx_slabs, label, "registered, all ahead", &s, axis, lo, hi, xref, poison, 15, tol);
    /* MOHID's adapter: D, E and F ahead in their slabs, the rhs sent by a one-slab solve (decision 039). */
    bad += host_solve_check(ctx_slabs, label, "registered, D E F ahead", &s, axis, lo, hi, xref, poison, 7, tol);
    /* All four uploads finished before the solve: the answers go into x by one copy after the verdict. */
    {
        memcpy(s.a.x, poison, xb);
        const void *in[4] = {s.a.lower, s.a.diag, s.a.upper, s.a.rhs};
        tridi_status st = TRIDI_SUCCESS;
        for (int r = 0; r < 4 && !st; ++r)
            st = tridi_upload_async(ctx_slabs, &g, (tridi_axis)axis, lo, hi, (tridi_array_role)r, in[r], t[r]);
        cudaDeviceSynchronize();
        if (!st)
            st = tridi_solve(ctx_slabs, &g, (tridi_axis)axis, lo, hi, &s.a);
        if (st || tu_check("registered, all ahead and arrived", &s, xref, lo, hi, (tridi_axis)axis, tol)) {
            printf("  %s all ahead and arrived: %s\n", label, st ? tridi_error_message() : "wrong answer");
            bad++;
        }
    }
    if (t[3] == t[4]) { /* in place: answers of slab s go into rhs while later rhs slabs still go up */
        const size_t rb = (size_t)s.cells * tu_esize(t[3]);
        void *rhs_keep = malloc(rb);
        memcpy(rhs_keep, s.a.rhs, rb);
        tridi_arrays ip = s.a;
        ip.x = (void *)ip.rhs;
        tridi_status st = tridi_solve(ctx_slabs, &g, (tridi_axis)axis, lo, hi, &ip);
        tu_system s2 = s;
        s2.a.x = (void *)s.a.rhs;
        s2.x_before = rhs_keep;
        if (st || tu_check("slabs registered in place", &s2, xref, lo, hi, (tridi_axis)axis, tol)) {
            printf("  %s in place: %s\n", label, st ? tridi_error_message() : "wrong answer");
            bad++;
        }
        memcpy((void *)s.a.rhs, rhs_keep, rb);
        free(rhs_keep);
    }
    /* Zero pivot at the last unknown of the last line. */
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    int64_t c[3];
    c[axis] = hi[axis];
    c[a1] = hi[a1];
    c[a2] = hi[a2];
    const int64_t o = tu_index(&g, c[0], c[1], c[2]);
    tu_set((void *)s.a.diag, t[1], o, 0.0);
    tu_set((void *)s.a.lower, t[0], o, 0.0);
    /* reg 2: registered, all uploaded and arrived (answers after the verdict); 1: registered (answers into x
     * slab by slab, then put back); 0: staged */
    for (int reg = 2; reg >= 0; --reg) {
        tu_poison_x(&s, rng);
        if (reg == 2) {
            const void *in[4] = {s.a.lower, s.a.diag, s.a.upper, s.a.rhs};
            for (int r = 0; r < 4; ++r)
                if (tridi_upload_async(ctx_slabs, &g, (tridi_axis)axis, lo, hi, (tridi_array_role)r, in[r], t[r]))
                    bad++;
            cudaDeviceSynchronize();
        }
        tridi_status st = tridi_solve(ctx_slabs, &g, (tridi_axis)axis, lo, hi, &s.a);
        int64_t cell[3] = {0, 0, 0};
        tridi_error_cell(cell);
        if (st != TRIDI_ERROR_ZERO_PIVOT || cell[0] != c[0] || cell[1] != c[1] || cell[2] != c[2]) {
            printf("  %s: last-slab failure (%s) gave %s at (%lld,%lld,%lld): %s\n", label,
                   reg == 2 ? "all uploaded" : reg ? "registered" : "staged", tridi_status_name(st), (long long)cell[0], (long long)cell[1],
                   (long long)cell[2], tridi_error_message());
            bad++;
        }
        if (tu_check_unchanged(reg ? "last-slab failure, registered" : "last-slab failure, staged", &s)) {
            printf("  %s: x was changed by a failing solve (%s)\n", label,
                   reg == 2 ? "all uploaded" : reg ? "registered" : "staged");
            bad++;
        }
        if (reg == 1)
            bad += register_set(ctx_slabs, &s, 31, 0, 1);
    }
    if (bad)
        printf("FAIL %s\n", label);
    free(xref);
    free(poison);
    tu_system_free(&s);
    return bad;
}

/* Per-line isolation across slabs (docs/decisions/037): registered arrays cut into several slabs, zero pivots
 * in lines of chosen slabs (none; the first, a middle or the last slab; several). Each way x can get its
 * answers: inputs uploaded ahead (slabwise: a slab reaches x only once no line of it or of an earlier slab
 * failed), the verdict forced, no upload ahead (eager: x's old box saved first), and in place (x is the rhs)
 * with and without uploads ahead; then nothing registered (answers through pinned staging), with and
 * without uploads ahead, and in place. Failing lines must stay untouched,
 * every other line answered. */
int slab_lines_case(uint64_t *rng, int axis, int combo)
{
    tridi_grid g = {3, {0, 0, 0}, {0, 0, 0}};
    int64_t lo[3], hi[3];
    const int64_t n[3] = {tu_randint(rng, 50, 70), tu_randint(rng, 40, 60), tu_randint(rng, 20, 30)};
    for (int a = 0; a < 3; ++a) {
        g.lbound[a] = tu_randint(rng, -1, 1);
        lo[a] = g.lbound[a] + tu_randint(rng, 0, 1);
        hi[a] = lo[a] + n[a] - 1;
        g.ubound[a] = hi[a] + tu_randint(rng, 0, 1);
    }
    const tridi_dtype *t = combos[combo];
    tu_system s;
    if (tu_system_alloc(&s, &g, t[0], t[1], t[2], t[3], t[4], rng))
        return 1;
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t n1 = n[a1], n2 = n[a2], len = n[axis];
    /* Lines are numbered with a1 fastest; slabs cut along a2. */
    const int64_t at_a2[3] = {0, n2 / 2, n2 - 1};
    static const int sets[6] = {0, 1, 2, 4, 7, 6}; /* bit k: a failing line at at_a2[k] */
    static const char *set_name[6] = {"none", "first slab", "middle slab", "last slab", "three slabs",
                                      "middle and last"};
    const size_t rb = (size_t)s.cells * tu_esize(t[3]);
    void *rhs_keep = malloc(rb);
    int bad = register_set(ctx_slabs_lines, &s, 31, 0, 0) + register_set(ctx_slabs_lines_verdict, &s, 31, 0, 0);
    for (int si = 0; si < 6; ++si) {
        int64_t failing[3], cell[3][3], off[3];
        double old_d[3], old_l[3];
        int nf = 0;
        for (int k = 0; k < 3; ++k) {
            if (!(sets[si] >> k & 1))
                continue;
            const int64_t l = tu_randint(rng, 0, n1 - 1) + n1 * at_a2[k];
            off[nf] = tu_line_cell(&g, lo, hi, (tridi_axis)axis, l, tu_randint(rng, 0, len - 1), cell[nf]);
            old_d[nf] = tu_get(s.a.diag, t[1], off[nf]);
            old_l[nf] = tu_get(s.a.lower, t[0], off[nf]);
            tu_set((void *)s.a.diag, t[1], off[nf], 0.0); /* diag and lower zero: the pivot is exactly 0 */
            tu_set((void *)s.a.lower, t[0], off[nf], 0.0);
            failing[nf++] = l;
        }
        /* ways, registered: 0 uploads ahead, 1 verdict forced with uploads ahead, 2 no upload ahead, 3-4 in
         * place with and without uploads ahead; nothing registered: 5 uploads ahead, 6 no upload ahead, 7 in
         * place with uploads ahead */
        for (int way = 0; way < 8; ++way) {
            const int place = way == 3 || way == 4 || way == 7, ahead = way != 2 && way != 4 && way != 6;
            if (place && t[3] != t[4])
                continue;
            static const char *way_name[8] = {"uploads ahead", "verdict forced", "no upload ahead",
                                              "in place, uploads ahead", "in place", "plain, uploads ahead",
                                              "plain, no upload ahead", "plain, in place, uploads ahead"};
            char label[200];
            snprintf(label, sizeof label, "slab lines axis %c %s, %lld x %lld x %lld, failing: %s, %s", "xyz"[axis],
                     combo_name[combo], (long long)n[0], (long long)n[1], (long long)n[2], set_name[si],
                     way_name[way]);
            tridi_context ctx = way == 1 ? ctx_slabs_lines_verdict : way >= 5 ? ctx_slabs_lines_plain : ctx_slabs_lines;
            tu_poison_x(&s, rng);
            tu_system v = s;
            if (place) { /* the oracle reads the rhs kept aside; x (the rhs) starts as the rhs */
                memcpy(rhs_keep, s.a.rhs, rb);
                v.a.rhs = rhs_keep;
                v.a.x = (void *)s.a.rhs;
                v.x_before = rhs_keep;
            }
            tridi_arrays arr = s.a;
            if (place)
                arr.x = (void *)arr.rhs;
            const void *in[4] = {arr.lower, arr.diag, arr.upper, arr.rhs};
            tridi_status st = TRIDI_SUCCESS;
            for (int r = 0; r < 4 && ahead && !st; ++r)
                st = tridi_upload_async(ctx, &g, (tridi_axis)axis, lo, hi, (tridi_array_role)r, in[r], t[r]);
            if (!st)
                st = tridi_solve(ctx, &g, (tridi_axis)axis, lo, hi, &arr);
            const tridi_status want = nf ? TRIDI_ERROR_ZERO_PIVOT : TRIDI_SUCCESS;
            int64_t got[3] = {0, 0, 0};
            const int rank = tridi_error_cell(got);
            if (st != want || (nf && (rank != 3 || got[0] != cell[0][0] || got[1] != cell[0][1] || got[2] != cell[0][2]))) {
                printf("  %s: got %s at (%lld,%lld,%lld), want %s at (%lld,%lld,%lld): %s\n", label,
                       tridi_status_name(st), (long long)got[0], (long long)got[1], (long long)got[2],
                       tridi_status_name(want), (long long)cell[0][0], (long long)cell[0][1], (long long)cell[0][2],
                       tridi_error_message());
                bad++;
            }
            if (tu_check_lines(label, &v, lo, hi, (tridi_axis)axis, tu_tolerance(t[4]), failing, nf)) {
                printf("  %s: a failing line was written or another line not answered\n", label);
                bad++;
            }
            if (place)
                memcpy((void *)s.a.rhs, rhs_keep, rb);
        }
        for (int k = nf - 1; k >= 0; --k) {
            tu_set((void *)s.a.diag, t[1], off[k], old_d[k]);
            tu_set((void *)s.a.lower, t[0], off[k], old_l[k]);
        }
    }
    bad += register_set(ctx_slabs_lines, &s, 31, 0, 1) + register_set(ctx_slabs_lines_verdict, &s, 31, 0, 1);
    if (bad)
        printf("FAIL slab lines axis %c %s\n", "xyz"[axis], combo_name[combo]);
    free(rhs_keep);
    tu_system_free(&s);
    return bad;
}

/* Registrations seen by two contexts, and memory the caller page-locked itself: both are used in place;
 * when the owner unregisters, the other context's solves stay right (CUDA then stages the copies). */
int sharing_case(uint64_t *rng)
{
    tridi_grid g = {3, {-1, 0, 1}, {30, 25, 14}};
    int64_t lo[3] = {0, 1, 2}, hi[3] = {29, 24, 13};
    tu_system s;
    if (tu_system_alloc(&s, &g, TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, rng))
        return 1;
    const size_t xb = (size_t)s.cells * 4;
    void *xref = malloc(xb), *poison = malloc(xb);
    memcpy(xref, s.x_before, xb);
    memcpy(poison, s.x_before, xb);
    tu_reference_solve(&g, TRIDI_AXIS_Y, lo, hi, &s.a);
    memcpy(xref, s.a.x, xb);
    int bad = 0;
    tridi_context other = make_ctx(TRIDI_BACKEND_CUDA, 0);
    bad += register_set(ctx_gpu, &s, 31, 0, 0);
    bad += register_set(other, &s, 31, 0, 0); /* already locked by ctx_gpu: accepted */
    bad += host_solve_check(other, "sharing", "registered by two contexts", &s, 1, lo, hi, xref, poison, 3, 2e-5);
    bad += register_set(ctx_gpu, &s, 31, 0, 1); /* the owner unlocks */
    bad += host_solve_check(other, "sharing", "after the owner unregistered", &s, 1, lo, hi, xref, poison, 3, 2e-5);
    bad += register_set(other, &s, 31, 0, 1);
    tridi_destroy(other);

    /* x in memory the caller allocated page-locked. */
    float *px = NULL;
    if (cudaHostAlloc((void **)&px, xb, cudaHostAllocDefault) != cudaSuccess) {
        printf("  sharing: cudaHostAlloc failed\n");
        bad++;
    } else {
        tu_system s2 = s;
        s2.a.x = px;
        tridi_status st = tridi_host_register(ctx_gpu, px, xb);
        if (st) {
            printf("  sharing: registering cudaHostAlloc memory: %s\n", tridi_error_message());
            bad++;
        }
        bad += host_solve_check(ctx_gpu, "sharing", "x from cudaHostAlloc", &s2, 1, lo, hi, xref, poison, 0, 2e-5);
        if (tridi_host_unregister(ctx_gpu, px)) {
            printf("  sharing: unregistering cudaHostAlloc memory: %s\n", tridi_error_message());
            bad++;
        }
        cudaFreeHost(px); /* still valid: tridi left its unlocking to us */
    }
    if (bad)
        printf("FAIL sharing\n");
    free(xref);
    free(poison);
    tu_system_free(&s);
    return bad;
}
