/* The CUDA backend against the reference Thomas and the CPU backend: random 2D and 3D grids with halos,
 * every axis and type combination, host-array and device-resident modes, in-place solves, uploads ahead,
 * float transfer of double inputs, long lines, numerical failures under ON_ERROR_CALL and ON_ERROR_LINES
 * (each function's comment says what it checks), device memory exhaustion, systems at the edges of the
 * arithmetic, registered host arrays (all, subsets, in part, shared, caller page-locked), and the slab
 * pipeline with a failure in the last slab leaving x untouched (those two in test_cuda_slabs.c). Exits 77
 * when no GPU is present. */
#include "test_cuda.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tridi_cuda_device_count(void); /* internal, in libtridi: lets the test skip without a GPU */

/* The shared definitions of test_cuda.h. */
const tridi_dtype combos[3][5] = {
    {TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32},
    {TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64},
    {TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32}};
const char *combo_name[3] = {"f32", "f64", "mixed"};

tridi_context ctx_gpu, ctx_gpu_f32, ctx_cpu, ctx_slabs, ctx_gpu_lines, ctx_cpu_lines;
tridi_context ctx_slabs_eager, ctx_slabs_verdict;
tridi_context ctx_slabs_lines, ctx_slabs_lines_verdict, ctx_slabs_lines_plain;

tridi_context make_ctx_on_error(tridi_backend b, int f32, tridi_on_error on_error)
{
    tridi_config c;
    tridi_config_init(&c);
    c.backend = b;
    c.allow_f32_transfer = f32;
    c.on_error = on_error;
    tridi_context ctx = NULL;
    if (tridi_create(&ctx, &c)) {
        printf("tridi_create: %s\n", tridi_error_message());
        exit(1);
    }
    return ctx;
}

tridi_context make_ctx(tridi_backend b, int f32) { return make_ctx_on_error(b, f32, TRIDI_ON_ERROR_CALL); }

static void random_geometry(uint64_t *rng, int ndim, int axis, int long_line, tridi_grid *g, int64_t lo[3],
                            int64_t hi[3])
{
    g->ndim = ndim;
    for (int a = 0; a < 3; ++a) {
        g->lbound[a] = g->ubound[a] = 1;
        lo[a] = hi[a] = 1;
    }
    for (int a = 0; a < ndim; ++a) {
        int64_t lb = tu_randint(rng, -3, 2), halo = tu_randint(rng, 0, 2);
        int64_t n = tu_randint(rng, 1, 40);
        if (a == axis && long_line)
            /* past 220 (global W/G scratch), 256 (split x lines over several warps), 512 (longest split
             * y/z line by default) and, for x, 768 (x lines over 4 warps and more) */
            n = tu_randint(rng, 129, a == 0 ? 1100 : 700);
        else if (a != axis && tu_randint(rng, 0, 3) == 0)
            n = tu_randint(rng, 33, 70); /* several blocks of lines, partial last block */
        g->lbound[a] = lb - halo;
        g->ubound[a] = lb + n - 1 + halo;
        lo[a] = lb + tu_randint(rng, 0, n / 4);
        hi[a] = lb + n - 1 - tu_randint(rng, 0, n / 4);
    }
}

int register_set(tridi_context ctx, const tu_system *s, int mask, int half, int unregister)
{
    const void *p[5] = {s->a.lower, s->a.diag, s->a.upper, s->a.rhs, s->a.x};
    const tridi_dtype t[5] = {s->a.lower_type, s->a.diag_type, s->a.upper_type, s->a.rhs_type, s->a.x_type};
    int bad = 0;
    for (int r = 0; r < 5; ++r) {
        if (!(mask >> r & 1))
            continue;
        const size_t bytes = (size_t)s->cells * tu_esize(t[r]) / ((half >> r & 1) ? 2 : 1);
        tridi_status st = unregister ? tridi_host_unregister(ctx, p[r]) : tridi_host_register(ctx, p[r], bytes ? bytes : 1);
        if (st) {
            printf("  %s array %d: %s\n", unregister ? "unregister" : "register", r, tridi_error_message());
            bad++;
        }
    }
    return bad;
}

int host_solve_check(tridi_context ctx, const char *label, const char *mode, tu_system *s, int axis,
                     const int64_t lo[3], const int64_t hi[3], const void *xref, const void *poison, int upload_mask,
                     double tol)
{
    memcpy(s->a.x, poison, (size_t)s->cells * tu_esize(s->a.x_type));
    const void *p[4] = {s->a.lower, s->a.diag, s->a.upper, s->a.rhs};
    const tridi_dtype t[4] = {s->a.lower_type, s->a.diag_type, s->a.upper_type, s->a.rhs_type};
    tridi_status st = TRIDI_SUCCESS;
    for (int r = 0; r < 4 && !st; ++r)
        if (upload_mask >> r & 1)
            st = tridi_upload_async(ctx, &s->grid, (tridi_axis)axis, lo, hi, (tridi_array_role)r, p[r], t[r]);
    if (!st)
        st = tridi_solve(ctx, &s->grid, (tridi_axis)axis, lo, hi, &s->a);
    if (st) {
        printf("  %s %s: %s: %s\n", label, mode, tridi_status_name(st), tridi_error_message());
        return 1;
    }
    return tu_check(mode, s, xref, lo, hi, (tridi_axis)axis, tol) != 0;
}

/* Device-resident solve of s on ctx_gpu (device copies of its arrays, x's copy poisoned as on the host),
 * answers brought back into s->a.x and checked against xref. Returns failed checks. */
static int device_solve_check(const char *label, tu_system *s, const tridi_grid *g, int axis, const int64_t lo[3],
                              const int64_t hi[3], const void *xref, double tol)
{
    tu_dev_set d;
    if (tu_dev_upload(ctx_gpu, s, &d))
        return 1;
    tridi_arrays da = tu_dev_arrays(s, &d);
    tridi_status st = tridi_solve_device(ctx_gpu, g, (tridi_axis)axis, lo, hi, &da, NULL);
    if (!st)
        st = tridi_synchronize(ctx_gpu);
    if (!st)
        st = tridi_copy_to_host(ctx_gpu, s->a.x, d.p[4], (size_t)s->cells * tu_esize(s->a.x_type));
    int bad = 0;
    if (st) {
        printf("  %s device: %s: %s\n", label, tridi_status_name(st), tridi_error_message());
        bad++;
    } else {
        bad += tu_check(label, s, xref, lo, hi, (tridi_axis)axis, tol) != 0;
    }
    tu_dev_free(ctx_gpu, &d);
    return bad;
}

int combo_system(tu_system *s, const tridi_grid *g, int combo, int axis, const int64_t lo[3], const int64_t hi[3],
                 uint64_t *rng, void **xref, void **poison, size_t *xb)
{
    const tridi_dtype *t = combos[combo];
    if (tu_system_alloc(s, g, t[0], t[1], t[2], t[3], t[4], rng))
        return 1;
    *xb = (size_t)s->cells * tu_esize(t[4]);
    *xref = malloc(*xb);
    *poison = malloc(*xb);
    memcpy(*xref, s->x_before, *xb);
    memcpy(*poison, s->x_before, *xb);
    tridi_arrays r = s->a;
    r.x = *xref;
    tu_reference_solve(g, (tridi_axis)axis, lo, hi, &r);
    return 0;
}

void box_label(char *label, size_t size, const char *what, const tridi_grid *g, const int64_t lo[3],
               const int64_t hi[3])
{
    snprintf(label, size, "%s box [%lld:%lld,%lld:%lld,%lld:%lld] of [%lld:%lld,%lld:%lld,%lld:%lld]", what,
             (long long)lo[0], (long long)hi[0], (long long)lo[1], (long long)hi[1], (long long)lo[2], (long long)hi[2],
             (long long)g->lbound[0], (long long)g->ubound[0], (long long)g->lbound[1], (long long)g->ubound[1],
             (long long)g->lbound[2], (long long)g->ubound[2]);
}

/* One random case in every mode. Returns the number of failed checks. */
static int run_case(uint64_t *rng, int ndim, int axis, int combo, int long_line)
{
    tridi_grid g;
    int64_t lo[3], hi[3];
    random_geometry(rng, ndim, axis, long_line, &g, lo, hi);
    const tridi_dtype *t = combos[combo];
    tu_system s;
    void *xref, *poison;
    size_t xb;
    if (combo_system(&s, &g, combo, axis, lo, hi, rng, &xref, &poison, &xb))
        return 1;
    void *xcpu = malloc(xb);
    char what[64], label[200];
    snprintf(what, sizeof what, "%dD axis %c %s", ndim, "xyz"[axis], combo_name[combo]);
    box_label(label, sizeof label, what, &g, lo, hi);
    const double tol = tu_tolerance(t[4]);
    int bad = 0;
    tridi_status st;

    /* CPU backend, for the GPU-vs-CPU comparison. */
    st = tridi_solve(ctx_cpu, &g, (tridi_axis)axis, lo, hi, &s.a);
    memcpy(xcpu, s.a.x, xb);
    if (st) {
        printf("  %s: CPU backend failed: %s\n", label, tridi_error_message());
        bad++;
    }

    /* Host arrays. */
    memcpy(s.a.x, poison, xb);
    st = tridi_solve(ctx_gpu, &g, (tridi_axis)axis, lo, hi, &s.a);
    if (st) {
        printf("  %s host: %s: %s\n", label, tridi_status_name(st), tridi_error_message());
        bad++;
    } else {
        bad += tu_check("host vs reference", &s, xref, lo, hi, (tridi_axis)axis, tol) != 0;
        bad += tu_check("host vs CPU backend", &s, xcpu, lo, hi, (tridi_axis)axis, tol) != 0;
        /* MOHID's arithmetic is MOHID's recurrence bit for bit on every line length, long lines included
         * (docs/decisions/023): on the mixed type the kernel the planner picks equals the CPU backend
         * exactly. */
        if (combo == 2 && !getenv("TRIDI_CUDA_KERNEL"))
            bad += tu_check("host vs CPU backend, bit for bit", &s, xcpu, lo, hi, (tridi_axis)axis, 0.0) != 0;
    }

    /* Host arrays with two inputs uploaded ahead (rhs and diag), the others moved by the solve. */
    memcpy(s.a.x, poison, xb);
    st = tridi_upload_async(ctx_gpu, &g, (tridi_axis)axis, lo, hi, TRIDI_ROLE_RHS, s.a.rhs, t[3]);
    if (!st)
        st = tridi_upload_async(ctx_gpu, &g, (tridi_axis)axis, lo, hi, TRIDI_ROLE_DIAG, s.a.diag, t[1]);
    if (!st)
        st = tridi_solve(ctx_gpu, &g, (tridi_axis)axis, lo, hi, &s.a);
    if (st) {
        printf("  %s upload_async: %s: %s\n", label, tridi_status_name(st), tridi_error_message());
        bad++;
    } else {
        bad += tu_check("upload_async vs reference", &s, xref, lo, hi, (tridi_axis)axis, tol) != 0;
    }

    /* An upload whose data changed before the solve would be stale; an upload for another box must not
     * be used at all: upload rhs for a different box, then solve this one. */
    if (hi[axis] > lo[axis]) {
        int64_t lo2[3] = {lo[0], lo[1], lo[2]};
        lo2[axis] += 1;
        memcpy(s.a.x, poison, xb);
        st = tridi_upload_async(ctx_gpu, &g, (tridi_axis)axis, lo2, hi, TRIDI_ROLE_RHS, s.a.rhs, t[3]);
        if (!st)
            st = tridi_solve(ctx_gpu, &g, (tridi_axis)axis, lo, hi, &s.a);
        if (st || tu_check("upload of another box ignored", &s, xref, lo, hi, (tridi_axis)axis, tol)) {
            printf("  %s: upload for another box: %s\n", label, st ? tridi_error_message() : "wrong answer");
            bad++;
        }
    }

    /* Registered arrays: all five (with and without uploads ahead, and with the float transfer), then a
     * random subset with random arrays registered only in part; then unregistered again. */
    {
        const int mask = (int)tu_randint(rng, 0, 31), half = (int)tu_randint(rng, 0, 31) & mask;
        const int ups = (int)tu_randint(rng, 1, 15);
        bad += register_set(ctx_gpu, &s, 31, 0, 0);
        bad += host_solve_check(ctx_gpu, label, "registered", &s, axis, lo, hi, xref, poison, 0, tol);
        bad += host_solve_check(ctx_gpu, label, "registered, uploads ahead", &s, axis, lo, hi, xref, poison, ups, tol);
        bad += register_set(ctx_gpu, &s, 31, 0, 1);
        bad += register_set(ctx_gpu, &s, mask, half, 0);
        bad += host_solve_check(ctx_gpu, label, "partly registered", &s, axis, lo, hi, xref, poison, ups, tol);
        bad += register_set(ctx_gpu, &s, mask, half, 1);
        bad += host_solve_check(ctx_gpu, label, "after unregistering", &s, axis, lo, hi, xref, poison, ups, tol);
        if (combo != 0) {
            bad += register_set(ctx_gpu_f32, &s, 31, 0, 0);
            bad += host_solve_check(ctx_gpu_f32, label, "registered, f32 transfer", &s, axis, lo, hi, xref, poison,
                                    ups, 1e-4);
            bad += register_set(ctx_gpu_f32, &s, 31, 0, 1);
        }
    }

    /* In place on the host: x is the rhs array. */
    {
        size_t rb = (size_t)s.cells * tu_esize(t[3]);
        void *rhs_keep = malloc(rb);
        memcpy(rhs_keep, s.a.rhs, rb);
        tu_system s2 = s;
        s2.x_before = rhs_keep;
        s2.a.x = (void *)s.a.rhs;
        tridi_arrays a = s.a;
        a.x = (void *)a.rhs;
        if (t[3] == t[4]) {
            st = tridi_solve(ctx_gpu, &g, (tridi_axis)axis, lo, hi, &a);
            if (st) {
                printf("  %s in place: %s\n", label, tridi_error_message());
                bad++;
            } else {
                bad += tu_check("host in place", &s2, xref, lo, hi, (tridi_axis)axis, tol) != 0;
            }
            memcpy((void *)s.a.rhs, rhs_keep, rb);
        }
        free(rhs_keep);
    }

    /* Float transfer of double inputs: float rounding of the inputs, so a float-level bound. */
    if (combo != 0) {
        memcpy(s.a.x, poison, xb);
        st = tridi_solve(ctx_gpu_f32, &g, (tridi_axis)axis, lo, hi, &s.a);
        if (st) {
            printf("  %s f32 transfer: %s\n", label, tridi_error_message());
            bad++;
        } else {
            bad += tu_check("allow_f32_transfer", &s, xref, lo, hi, (tridi_axis)axis, 1e-4) != 0;
        }
    }

    /* Device-resident, on the context's stream and on a caller's stream; then in place. */
    for (int use_stream = 0; use_stream < 2; ++use_stream) {
        memcpy(s.a.x, poison, xb);
        tu_dev_set d;
        if (tu_dev_upload(ctx_gpu, &s, &d)) {
            bad++;
            break;
        }
        tridi_arrays da = tu_dev_arrays(&s, &d);
        cudaStream_t cs = NULL;
        if (use_stream)
            cudaStreamCreate(&cs);
        st = tridi_solve_device(ctx_gpu, &g, (tridi_axis)axis, lo, hi, &da, (void *)cs);
        if (!st)
            st = tridi_synchronize(ctx_gpu);
        if (!st)
            st = tridi_copy_to_host(ctx_gpu, s.a.x, d.p[4], xb);
        if (st) {
            printf("  %s device%s: %s: %s\n", label, use_stream ? " (caller stream)" : "", tridi_status_name(st),
                   tridi_error_message());
            bad++;
        } else {
            bad += tu_check(use_stream ? "device, caller stream" : "device", &s, xref, lo, hi, (tridi_axis)axis,
                            tol) != 0;
        }
        if (!use_stream && t[3] == t[4]) {
            tridi_arrays ip = da;
            ip.x = (void *)ip.rhs;
            size_t rb = (size_t)s.cells * tu_esize(t[3]);
            void *rhs_after = malloc(rb);
            tu_system s2 = s;
            s2.x_before = (void *)s.a.rhs;
            s2.a.x = rhs_after;
            st = tridi_solve_device(ctx_gpu, &g, (tridi_axis)axis, lo, hi, &ip, NULL);
            if (!st)
                st = tridi_synchronize(ctx_gpu);
            if (!st)
                st = tridi_copy_to_host(ctx_gpu, rhs_after, d.p[3], rb);
            if (st) {
                printf("  %s device in place: %s\n", label, tridi_error_message());
                bad++;
            } else {
                bad += tu_check("device in place", &s2, xref, lo, hi, (tridi_axis)axis, tol) != 0;
            }
            free(rhs_after);
        }
        if (cs)
            cudaStreamDestroy(cs);
        tu_dev_free(ctx_gpu, &d);
    }
    if (bad)
        printf("FAIL %s\n", label);
    free(xref);
    free(xcpu);
    free(poison);
    tu_system_free(&s);
    return bad;
}

/* A zero pivot planted in one line and a NaN in a later line: both backends and both GPU modes must
 * name the first failing line's cell, and x must stay untouched. */
/* overflow = 0: a zero pivot and a NaN in two lines (the lower one is reported). overflow = 1 (float x
 * only): one answer overflows float although every step of the elimination is finite, which only the back
 * substitution can see; the kernels track it apart from the forward sweep's checks. long_line: lines of
 * up to 400 unknowns, past the on-chip W/G limit, so both kernel variants (W/G in shared memory and in the
 * global scratch) meet each failure. */
static int failure_case(uint64_t *rng, int ndim, int axis, int combo, int overflow, int long_line)
{
    tridi_grid g;
    int64_t lo[3], hi[3];
    random_geometry(rng, ndim, axis, long_line, &g, lo, hi);
    int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    if (hi[a1] == lo[a1]) { /* two lines at least */
        hi[a1] = lo[a1] + 1;
        if (g.ubound[a1] < hi[a1])
            g.ubound[a1] = hi[a1];
    }
    const tridi_dtype *t = combos[combo];
    tu_system s;
    if (tu_system_alloc(&s, &g, t[0], t[1], t[2], t[3], t[4], rng))
        return 1;
    /* A zero pivot in line Lz (diag and lower zero at one unknown: the pivot is exactly 0) and a NaN rhs
     * at the last unknown of another line Ln. Lines follow the two other axes in Fortran order. */
    const int64_t n1 = hi[a1] - lo[a1] + 1, nlines = n1 * (hi[a2] - lo[a2] + 1);
    const int64_t line_z = tu_randint(rng, 0, nlines - 1);
    int64_t line_n = tu_randint(rng, 0, nlines - 2);
    if (line_n >= line_z)
        line_n++;
    int64_t cz[3] = {1, 1, 1}, cn[3] = {1, 1, 1};
    cz[axis] = lo[axis] + tu_randint(rng, 0, hi[axis] - lo[axis]);
    cz[a1] = lo[a1] + line_z % n1;
    cz[a2] = lo[a2] + line_z / n1;
    cn[axis] = hi[axis];
    cn[a1] = lo[a1] + line_n % n1;
    cn[a2] = lo[a2] + line_n / n1;
    int64_t oz = tu_index(&g, cz[0], cz[1], cz[2]);
    int64_t first_line = line_n < line_z ? line_n : line_z;
    int64_t *want = first_line == line_z ? cz : cn;
    tridi_status want_st = first_line == line_z ? TRIDI_ERROR_ZERO_PIVOT : TRIDI_ERROR_NONFINITE;
    if (overflow) {
        /* x = 100 / pivot at cz with the pivot tiny (and normal in the diagonal's type): 1e302 in mixed
         * precision, 5e39 with a float diagonal; no coupling to the next unknown, so the elimination stays
         * finite. The answers below cz on the line overflow too; the highest is reported. */
        tu_set((void *)s.a.diag, t[1], oz, t[1] == TRIDI_FLOAT64 ? 1e-300 : 2e-38);
        tu_set((void *)s.a.lower, t[0], oz, 0.0);
        tu_set((void *)s.a.upper, t[2], oz, 0.0);
        tu_set((void *)s.a.rhs, t[3], oz, 100.0);
        if (cz[axis] < hi[axis]) {
            int64_t c1[3] = {cz[0], cz[1], cz[2]};
            c1[axis]++;
            tu_set((void *)s.a.lower, t[0], tu_index(&g, c1[0], c1[1], c1[2]), 0.0);
        }
        want = cz;
        want_st = TRIDI_ERROR_NONFINITE;
    } else {
        tu_set((void *)s.a.diag, t[1], oz, 0.0);
        tu_set((void *)s.a.lower, t[0], oz, 0.0);
        tu_set((void *)s.a.rhs, t[3], tu_index(&g, cn[0], cn[1], cn[2]), NAN);
    }

    char label[160];
    if (overflow)
        snprintf(label, sizeof label, "failure %dD axis %c %s answer overflow at (%lld,%lld,%lld) line %lld", ndim,
                 "xyz"[axis], combo_name[combo], (long long)cz[0], (long long)cz[1], (long long)cz[2],
                 (long long)line_z);
    else
        snprintf(label, sizeof label, "failure %dD axis %c %s zero pivot at (%lld,%lld,%lld) line %lld, NaN line %lld",
                 ndim, "xyz"[axis], combo_name[combo], (long long)cz[0], (long long)cz[1], (long long)cz[2],
                 (long long)line_z, (long long)line_n);
    int bad = 0;
    /* modes 0-3: ON_ERROR_CALL; 4-7: the same under ON_ERROR_LINES */
    const int64_t failing[2] = {line_z, line_n};
    for (int mode = 0; mode < 8; ++mode) {
        const int lines = mode >= 4, m = mode % 4;
        tridi_context gpu = lines ? ctx_gpu_lines : ctx_gpu;
        tu_poison_x(&s, rng);
        if (m == 3 && register_set(gpu, &s, 31, 0, 0))
            bad++;
        tridi_status st;
        tu_dev_set d;
        if (m == 2) {
            if (tu_dev_upload(gpu, &s, &d))
                return bad + 1;
            tridi_arrays da = tu_dev_arrays(&s, &d);
            st = tridi_solve_device(gpu, &g, (tridi_axis)axis, lo, hi, &da, NULL);
            if (st == TRIDI_SUCCESS)
                st = tridi_synchronize(gpu);
            tridi_copy_to_host(gpu, s.a.x, d.p[4], (size_t)s.cells * tu_esize(t[4]));
            tu_dev_free(gpu, &d);
        } else {
            st = tridi_solve(m == 0 ? (lines ? ctx_cpu_lines : ctx_cpu) : gpu, &g, (tridi_axis)axis, lo, hi, &s.a);
        }
        if (m == 3 && register_set(gpu, &s, 31, 0, 1))
            bad++;
        char mname[48];
        static const char *where[4] = {"cpu", "gpu host", "gpu device", "gpu registered"};
        snprintf(mname, sizeof mname, "%s, %s", where[m], lines ? "lines" : "call");
        int64_t cell[3] = {0, 0, 0};
        int rank = tridi_error_cell(cell);
        int cell_ok = rank == ndim && cell[0] == want[0] && cell[1] == want[1] && (ndim == 2 || cell[2] == want[2]);
        if (st != want_st || !cell_ok) {
            printf("  %s [%s]: got %s at (%lld,%lld,%lld) rank %d, want %s at (%lld,%lld,%lld): %s\n", label, mname,
                   tridi_status_name(st), (long long)cell[0], (long long)cell[1], (long long)cell[2], rank,
                   tridi_status_name(want_st), (long long)want[0], (long long)want[1], (long long)want[2],
                   tridi_error_message());
            bad++;
        }
        if (lines && tu_check_lines(mname, &s, lo, hi, (tridi_axis)axis, tu_tolerance(t[4]), failing,
                                    overflow ? 1 : 2)) {
            printf("  %s [%s]: a failing line was written or another line not answered\n", label, mname);
            bad++;
        }
        if (!lines && tu_check_unchanged(mname, &s)) {
            printf("  %s [%s]: x was written by a failing solve\n", label, mname);
            bad++;
        }
    }
    /* After a failure the next call works. */
    if (tridi_synchronize(ctx_gpu)) {
        printf("  %s: synchronize after the failure: %s\n", label, tridi_error_message());
        bad++;
    }
    if (bad)
        printf("FAIL %s\n", label);
    tu_system_free(&s);
    return bad;
}

/* Several device solves queued, the middle one failing: synchronize reports that one. */
static int queued_failure(uint64_t *rng)
{
    tridi_grid g = {3, {0, 0, 0}, {20, 17, 9}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {19, 16, 8};
    tu_system s;
    if (tu_system_alloc(&s, &g, TRIDI_FLOAT32, TRIDI_FLOAT64, TRIDI_FLOAT32, TRIDI_FLOAT32, TRIDI_FLOAT32, rng))
        return 1;
    tu_dev_set good, badset;
    if (tu_dev_upload(ctx_gpu, &s, &good))
        return 1;
    int64_t o = tu_index(&g, 5, 7, 3);
    tu_set((void *)s.a.diag, TRIDI_FLOAT64, o, INFINITY);
    if (tu_dev_upload(ctx_gpu, &s, &badset))
        return 1;
    tridi_arrays ga = tu_dev_arrays(&s, &good), ba = tu_dev_arrays(&s, &badset);
    int bad = 0;
    tridi_status st = TRIDI_SUCCESS;
    for (int k = 0; k < 300 && !st; ++k) /* more than the ring of 256 pending solves */
        st = tridi_solve_device(ctx_gpu, &g, TRIDI_AXIS_Z, lo, hi, k == 150 ? &ba : &ga, NULL);
    if (!st)
        st = tridi_synchronize(ctx_gpu);
    int64_t cell[3];
    tridi_error_cell(cell);
    if (st != TRIDI_ERROR_NONFINITE || cell[0] != 5 || cell[1] != 7 || cell[2] != 3) {
        printf("  queued failure: got %s (%s), want TRIDI_ERROR_NONFINITE at (5,7,3)\n", tridi_status_name(st),
               tridi_error_message());
        bad++;
    }
    st = tridi_solve_device(ctx_gpu, &g, TRIDI_AXIS_Z, lo, hi, &ga, NULL);
    if (!st)
        st = tridi_synchronize(ctx_gpu);
    if (st) {
        printf("  queued failure: the next call failed: %s\n", tridi_error_message());
        bad++;
    }
    tu_dev_free(ctx_gpu, &good);
    tu_dev_free(ctx_gpu, &badset);
    tu_system_free(&s);
    return bad;
}

/* More lines than an H100 can hold at once (132 SMs x 16 blocks x 32 lines of one thread each; split lines
 * about 7M cells, so the long-line grids have about 8.5M): the device solve cannot be guarded by a grid
 * barrier and goes through the context's box and the commit kernel. Short lines (tk_line), or long ones
 * (230-600 unknowns: split lines, and tk_line with W/G in global memory for y/z lines past 512). Right
 * answers, then a NaN in one random cell: that cell named, x untouched. */
static int many_lines_case(uint64_t *rng, int axis, int combo, int long_lines)
{
    const int64_t n = long_lines ? tu_randint(rng, 230, 600) : tu_randint(rng, 2, 9);
    const int64_t wide = long_lines ? 200 + tu_randint(rng, 0, 20) : 700 + tu_randint(rng, 0, 50);
    const int64_t deep = long_lines ? 8500000 / (n * wide) + tu_randint(rng, 0, 5) : 260 + tu_randint(rng, 0, 20);
    tridi_grid g = {3, {0, 0, 0}, {0, 0, 0}};
    int64_t lo[3], hi[3];
    const int a1 = axis == 0 ? 1 : 0, a2 = axis == 2 ? 1 : 2;
    const int64_t len[3] = {axis == 0 ? n : wide, axis == 1 ? n : a1 == 1 ? wide : deep, axis == 2 ? n : deep};
    for (int a = 0; a < 3; ++a) {
        g.lbound[a] = tu_randint(rng, -2, 1);
        lo[a] = g.lbound[a] + 1;
        hi[a] = lo[a] + len[a] - 1;
        g.ubound[a] = hi[a] + 1;
    }
    (void)a2;
    const tridi_dtype *t = combos[combo];
    tu_system s;
    if (tu_system_alloc(&s, &g, t[0], t[1], t[2], t[3], t[4], rng))
        return 1;
    const size_t xb = (size_t)s.cells * tu_esize(t[4]);
    void *xref = malloc(xb);
    memcpy(xref, s.x_before, xb);
    tu_reference_solve(&g, (tridi_axis)axis, lo, hi, &(tridi_arrays){s.a.lower, t[0], s.a.diag, t[1], s.a.upper, t[2],
                                                                     s.a.rhs, t[3], xref, t[4]});
    char label[120];
    snprintf(label, sizeof label, "many lines axis %c %s, %lld x %lld x %lld", "xyz"[axis], combo_name[combo],
             (long long)len[0], (long long)len[1], (long long)len[2]);
    int bad = device_solve_check(label, &s, &g, axis, lo, hi, xref, tu_tolerance(t[4]));
    tu_dev_set d;
    tridi_arrays da;
    tridi_status st;
    /* A NaN in the diag of one random cell: NONFINITE there, x as it was. */
    int64_t c[3];
    for (int a = 0; a < 3; ++a)
        c[a] = lo[a] + tu_randint(rng, 0, hi[a] - lo[a]);
    tu_set((void *)s.a.diag, t[1], tu_index(&g, c[0], c[1], c[2]), NAN);
    tu_poison_x(&s, rng);
    if (tu_dev_upload(ctx_gpu, &s, &d))
        return bad + 1;
    da = tu_dev_arrays(&s, &d);
    st = tridi_solve_device(ctx_gpu, &g, (tridi_axis)axis, lo, hi, &da, NULL);
    if (!st)
        st = tridi_synchronize(ctx_gpu);
    int64_t cell[3] = {0, 0, 0};
    tridi_error_cell(cell);
    tridi_copy_to_host(ctx_gpu, s.a.x, d.p[4], xb);
    tu_dev_free(ctx_gpu, &d);
    if (st != TRIDI_ERROR_NONFINITE || cell[0] != c[0] || cell[1] != c[1] || cell[2] != c[2]) {
        printf("  %s: NaN at (%lld,%lld,%lld) reported as %s at (%lld,%lld,%lld): %s\n", label, (long long)c[0],
               (long long)c[1], (long long)c[2], tridi_status_name(st), (long long)cell[0], (long long)cell[1],
               (long long)cell[2], tridi_error_message());
        bad++;
    }
    if (tu_check_unchanged(label, &s)) {
        printf("  %s: x was written by a failing solve\n", label);
        bad++;
    }
    if (bad)
        printf("FAIL %s\n", label);
    free(xref);
    tu_system_free(&s);
    return bad;
}

/* TRIDI_DEVICE_MEMORY_LIMIT (read at tridi_create) makes a context's allocations fail: OUT_OF_MEMORY, x
 * untouched, and the next call on a context without the limit works. */
static int oom_case(uint64_t *rng)
{
    tridi_grid g = {3, {1, 1, 1}, {64, 64, 32}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {64, 64, 32};
    tu_system s;
    if (tu_system_alloc(&s, &g, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, rng))
        return 1;
    int bad = 0;
    tridi_context c = make_ctx(TRIDI_BACKEND_CUDA, 0);
    setenv("TRIDI_DEVICE_MEMORY_LIMIT", "65536", 1);
    tridi_context limited = make_ctx(TRIDI_BACKEND_CUDA, 0);
    unsetenv("TRIDI_DEVICE_MEMORY_LIMIT");
    tridi_status st = tridi_solve(limited, &g, TRIDI_AXIS_Y, lo, hi, &s.a);
    if (st != TRIDI_ERROR_OUT_OF_MEMORY || tu_check_unchanged("oom host", &s)) {
        printf("  oom: host solve gave %s (%s)\n", tridi_status_name(st), tridi_error_message());
        bad++;
    } else {
        printf("  oom message: %s\n", tridi_error_message());
    }
    void *p = NULL;
    st = tridi_device_alloc(limited, 1 << 20, &p);
    if (st != TRIDI_ERROR_OUT_OF_MEMORY || p) {
        printf("  oom: device_alloc gave %s\n", tridi_status_name(st));
        bad++;
    }
    tridi_destroy(limited);
    void *xref = malloc((size_t)s.cells * 8);
    memcpy(xref, s.x_before, (size_t)s.cells * 8);
    tu_reference_solve(&g, TRIDI_AXIS_Y, lo, hi,
                       &(tridi_arrays){s.a.lower, TRIDI_FLOAT64, s.a.diag, TRIDI_FLOAT64, s.a.upper, TRIDI_FLOAT64,
                                       s.a.rhs, TRIDI_FLOAT64, xref, TRIDI_FLOAT64});
    st = tridi_solve(c, &g, TRIDI_AXIS_Y, lo, hi, &s.a);
    if (st || tu_check("after oom", &s, xref, lo, hi, TRIDI_AXIS_Y, tu_tolerance(TRIDI_FLOAT64))) {
        printf("  oom: the next call failed: %s\n", st ? tridi_error_message() : "wrong answer");
        bad++;
    }
    /* A real cudaMalloc failure: far more than any GPU has. */
    st = tridi_device_alloc(c, (size_t)1 << 50, &p);
    if (st != TRIDI_ERROR_OUT_OF_MEMORY) {
        printf("  oom: a 1 PiB device_alloc gave %s (%s)\n", tridi_status_name(st), tridi_error_message());
        bad++;
    }
    st = tridi_solve(c, &g, TRIDI_AXIS_Y, lo, hi, &s.a);
    if (st) {
        printf("  oom: the call after a cudaMalloc failure failed: %s\n", tridi_error_message());
        bad++;
    }
    tridi_destroy(c);
    free(xref);
    tu_system_free(&s);
    return bad;
}

/* Systems at the edges of the arithmetic, solved exactly by MOHID's recurrence, which the shortcuts of
 * split lines (cuda/kernels/split.cuh: maps of whole segments) cannot take: kind 0, rows of a random
 * double system scaled by 1e200 (the product of a lower and an upper overflows double, their ratios
 * do not); kind 1, float rows D = 0, E = 1, F = 1e10 whose answer alternates 1, 0 exactly although every
 * step of the back substitution multiplies by 1e10 (a segment's affine map overflows). Lines of 40 to
 * 300 unknowns along `axis`, host and device arrays, against the reference. Returns failed checks. */
static int extreme_case(uint64_t *rng, int axis, int kind)
{
    tridi_grid g = {3, {0, 0, 0}, {5, 4, 3}};
    g.ubound[axis] = tu_randint(rng, 40, 300) + 1;
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {g.ubound[0] - 1, g.ubound[1] - 1, g.ubound[2] - 1};
    const tridi_dtype t = kind == 0 ? TRIDI_FLOAT64 : TRIDI_FLOAT32, td = kind == 0 ? TRIDI_FLOAT64 : TRIDI_FLOAT32;
    tu_system s;
    if (tu_system_alloc(&s, &g, t, td, t, t, t, rng))
        return 1;
    const int64_t n = hi[axis];
    for (int64_t c = 0; c < s.cells; ++c) {
        if (kind == 0) {
            tu_set((void *)s.a.lower, t, c, tu_get(s.a.lower, t, c) * 1e200);
            tu_set((void *)s.a.diag, td, c, tu_get(s.a.diag, td, c) * 1e200);
            tu_set((void *)s.a.upper, t, c, tu_get(s.a.upper, t, c) * 1e200);
            tu_set((void *)s.a.rhs, t, c, tu_get(s.a.rhs, t, c) * 1e200);
        } else {
            /* unknown m of its line: the answer is 1 at even m, 0 at odd m (x(m) = R(m) - 1e10 x(m+1)) */
            const int64_t e0 = g.ubound[0] + 1, e1 = g.ubound[1] + 1;
            const int64_t cc[3] = {c % e0, c / e0 % e1, c / (e0 * e1)}, m = cc[axis] - 1;
            const int even = m % 2 == 0, last = m == n - 1;
            tu_set((void *)s.a.lower, t, c, 0.0);
            tu_set((void *)s.a.diag, td, c, 1.0);
            tu_set((void *)s.a.upper, t, c, 1e10);
            tu_set((void *)s.a.rhs, t, c, even ? 1.0 : last ? 0.0 : 1e10);
        }
    }
    const size_t xb = (size_t)s.cells * tu_esize(t);
    void *xref = malloc(xb);
    memcpy(xref, s.x_before, xb);
    tu_reference_solve(&g, (tridi_axis)axis, lo, hi, &(tridi_arrays){s.a.lower, t, s.a.diag, td, s.a.upper, t, s.a.rhs, t, xref, t});
    char label[96];
    snprintf(label, sizeof label, "%s along %c, %lld unknowns", kind == 0 ? "rows scaled by 1e200" : "growth 1e10 per step",
             "xyz"[axis], (long long)n);
    int bad = 0;
    tridi_status st = tridi_solve(ctx_gpu, &g, (tridi_axis)axis, lo, hi, &s.a);
    if (st) {
        printf("  %s host: %s: %s\n", label, tridi_status_name(st), tridi_error_message());
        bad++;
    } else {
        bad += tu_check(label, &s, xref, lo, hi, (tridi_axis)axis, tu_tolerance(t)) != 0;
    }
    memcpy(s.a.x, s.x_before, xb);
    bad += device_solve_check(label, &s, &g, axis, lo, hi, xref, tu_tolerance(t));
    free(xref);
    tu_system_free(&s);
    return bad;
}

int main(void)
{
    if (tridi_cuda_device_count() == 0) {
        printf("no CUDA device: skipped\n");
        return 77;
    }
    uint64_t rng = tu_seed("test_cuda");
    ctx_gpu = make_ctx(TRIDI_BACKEND_CUDA, 0);
    ctx_gpu_f32 = make_ctx(TRIDI_BACKEND_CUDA, 1);
    ctx_cpu = make_ctx(TRIDI_BACKEND_CPU, 0);
    ctx_gpu_lines = make_ctx_on_error(TRIDI_BACKEND_CUDA, 0, TRIDI_ON_ERROR_LINES);
    ctx_cpu_lines = make_ctx_on_error(TRIDI_BACKEND_CPU, 0, TRIDI_ON_ERROR_LINES);
    setenv("TRIDI_HOST_SLAB_CELLS", "20000", 1);
    ctx_slabs = make_ctx(TRIDI_BACKEND_CUDA, 0);
    ctx_slabs_lines = make_ctx_on_error(TRIDI_BACKEND_CUDA, 0, TRIDI_ON_ERROR_LINES);
    ctx_slabs_lines_plain = make_ctx_on_error(TRIDI_BACKEND_CUDA, 0, TRIDI_ON_ERROR_LINES);
    setenv("TRIDI_HOST_X_PATH", "eager", 1);
    ctx_slabs_eager = make_ctx(TRIDI_BACKEND_CUDA, 0);
    setenv("TRIDI_HOST_X_PATH", "verdict", 1);
    ctx_slabs_verdict = make_ctx(TRIDI_BACKEND_CUDA, 0);
    ctx_slabs_lines_verdict = make_ctx_on_error(TRIDI_BACKEND_CUDA, 0, TRIDI_ON_ERROR_LINES);
    unsetenv("TRIDI_HOST_X_PATH");
    unsetenv("TRIDI_HOST_SLAB_CELLS");
    int bad = 0, cases = 0;
    for (int rep = 0; rep < 3; ++rep)
        for (int ndim = 2; ndim <= 3; ++ndim)
            for (int axis = 0; axis < ndim; ++axis)
                for (int combo = 0; combo < 3; ++combo) {
                    bad += run_case(&rng, ndim, axis, combo, rep == 2);
                    bad += failure_case(&rng, ndim, axis, combo, 0, rep == 2);
                    cases += 2;
                    if (combo != 1) { /* float answers */
                        bad += failure_case(&rng, ndim, axis, combo, 1, rep == 2);
                        cases++;
                    }
                }
    for (int axis = 0; axis < 3; ++axis)
        for (int combo = 1; combo < 3; ++combo) {
            bad += slab_case(ctx_slabs, &rng, axis, combo);
            cases++;
        }
    for (int axis = 0; axis < 3; ++axis)
        for (int combo = 0; combo < 3; ++combo) {
            bad += slab_lines_case(&rng, axis, combo);
            cases++;
        }
    for (int axis = 0; axis < 3; ++axis) {
        bad += slab_case(ctx_slabs_eager, &rng, axis, 2);
        bad += slab_case(ctx_slabs_verdict, &rng, axis, 2);
        cases += 2;
    }
    for (int axis = 0; axis < 3; ++axis) {
        for (int combo = 0; combo < 3; ++combo) {
            bad += many_lines_case(&rng, axis, combo, 0);
            cases++;
        }
        /* long lines once per axis (about 8.5M cells), in a random type */
        bad += many_lines_case(&rng, axis, (int)tu_randint(&rng, 0, 2), 1);
        cases++;
    }
    for (int axis = 0; axis < 3; ++axis)
        for (int kind = 0; kind < 2; ++kind) {
            bad += extreme_case(&rng, axis, kind);
            cases++;
        }
    bad += sharing_case(&rng);
    bad += queued_failure(&rng);
    bad += oom_case(&rng);
    tridi_destroy(ctx_gpu);
    tridi_destroy(ctx_gpu_f32);
    tridi_destroy(ctx_cpu);
    tridi_destroy(ctx_gpu_lines);
    tridi_destroy(ctx_cpu_lines);
    tridi_destroy(ctx_slabs);
    tridi_destroy(ctx_slabs_eager);
    tridi_destroy(ctx_slabs_verdict);
    tridi_destroy(ctx_slabs_lines);
    tridi_destroy(ctx_slabs_lines_verdict);
    tridi_destroy(ctx_slabs_lines_plain);
    printf("%d cases, %d failed checks\n", cases + 3, bad);
    return bad ? 1 : 0;
}
