/* The ADI steps on the CUDA backend (fields in device memory) against the CPU backend and the oracle, on
 * random cases (see test_adi_oracle.c), several steps per plan, through the fused sweeps and the staged
 * path; a step captured in a CUDA graph and replayed against the same steps uncaptured; the deferred
 * verdict of a failing step; the caller-diagonal sweep on the GPU against the reference Thomas and, bit
 * for bit, tridi_solve_device on the same arrays; the sweep timer. Exits 77 (skipped) without a usable
 * GPU. */
#include "adi_case.h"

#ifdef ADI_TEST_CUDART
#include <cuda_runtime.h>
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tridi_context gpu, cpu;

static void *upload(const void *host, size_t bytes)
{
    void *d = NULL;
    if (!host)
        return NULL;
    if (tridi_device_alloc(gpu, bytes, &d) || tridi_copy_to_device(gpu, d, host, bytes)) {
        printf("upload: %s\n", tridi_error_message());
        exit(1);
    }
    return d;
}

/* The GPU path of the plans created next (tridi_adi_create reads it). */
static void use_path(const char *path)
{
    setenv("TRIDI_ADI_PATH", path, 1);
}

/* The device copies of an operator's coefficient arrays (upload's; NULL where absent). */
static void free_coefs(const tridi_adi_operator *op)
{
    tridi_device_free(gpu, (void *)op->kappa_field);
    for (int a = 0; a < 3; ++a)
        tridi_device_free(gpu, (void *)op->velocity[a]);
}

/* The largest |value| of a case's array (NULL: 0). */
static double max_abs(const double *v, int64_t n)
{
    double m = 0.0;
    for (int64_t i = 0; v && i < n; ++i)
        m = fabs(v[i]) > m ? fabs(v[i]) : m;
    return m;
}

/* GPU against CPU in float, of the field's largest value (floor 1e-5), the bounds docs/adi.md states: for
 * the heat operator (no kappa field, no velocity), whose fused sweeps form their right-hand sides in float
 * (decision 052), per step 24 eps_f (1 + 4 dt sum_a kappa / h_a^2), 10 eps_f of it a sweep with explicit
 * terms; for a kappa field or velocities on the fused path, whose x rows and y/z rows form in float (decision
 * 064; face means two an approximate reciprocal, 076, 113), per step 80 eps_f (1 + dt sum_a (6 kappa_max /
 * h_a^2 + 8 v_max / h_a)): four times the right-hand side's bound (20 eps_f), which covers three sweeps' rows
 * (15 eps_f an entry) too. The staged path forms every row in double (1e-5). */
static double float_tolerance(const adi_case *c, int steps, int fused)
{
    const tridi_adi_operator *op = &c->ref.op;
    const int coefs = c->kappa || c->vel[0] || c->vel[1] || c->vel[2];
    if (coefs && !fused)
        return 1e-5;
    const double kmax = c->kappa ? max_abs(c->kappa, c->cells) : op->kappa;
    double w = 0.0;
    for (int a = 0; a < op->naxes; ++a) {
        const double h = op->spacing[a];
        w += coefs ? 6.0 * kmax / (h * h) + 8.0 * max_abs(c->vel[a], c->cells) / h : 4.0 * kmax / (h * h);
    }
    const double b = steps * (coefs ? 80.0 : 24.0) * ldexp(1.0, -24) * (1.0 + c->dt * w);
    return b > 1e-5 ? b : 1e-5;
}

/* The largest GPU-vs-CPU float and double errors over their tolerances among the fused cases (printed: the
 * bounds' margins; double x rows' face means, decision 065). */
static double worst_float_ratio = 0.0, worst_double_ratio = 0.0;

/* long_x: 1 the long axis is x; 2, 3, 4: x, y or z has exactly nlong cells and the operator is heat's; 5:
 * z has exactly nlong cells, any operator; 6: x has exactly nlong cells, every coefficient array. */
static int step_case(uint64_t *rng, int index, const char *path, int64_t nlong, int long_x)
{
    adi_case c;
    if (long_x == 6)
        adi_case_random_full_x(&c, rng, -1, nlong);
    else if (long_x == 5)
        adi_case_random_axis(&c, rng, -1, 3, 2, nlong);
    else if (long_x >= 2)
        adi_case_random_heat(&c, rng, -1, long_x == 4 ? 3 : 0, long_x - 2, nlong);
    else if (long_x)
        adi_case_random_long_x(&c, rng, -1, 0, nlong);
    else
        adi_case_random(&c, rng, -1, 0, nlong);
    use_path(path);
    size_t bytes = (size_t)c.cells * (c.dtype == TRIDI_FLOAT64 ? 8 : 4);
    int steps = (int)tu_randint(rng, 1, 4), bad = 0;
    tridi_adi_operator opg = c.ref.op;
    opg.profile = 1;
    opg.kappa_field = upload(c.kappa_t, bytes);
    for (int a = 0; a < 3; ++a)
        opg.velocity[a] = upload(c.vel_t[a], bytes);
    void *host_field = adi_to_type(c.u0, c.cells, c.dtype), *before = adi_to_type(c.u0, c.cells, c.dtype);
    void *gpu_result = malloc(bytes);
    void *dfield = upload(host_field, bytes);
    double *ref = malloc(sizeof(double) * c.cells);
    memcpy(ref, c.u0, sizeof(double) * c.cells);
    tridi_adi pg = NULL, pc = NULL;
    tridi_status s = tridi_adi_create(&pg, gpu, &c.ref.grid, c.ref.lo, c.ref.hi, c.dtype, &opg);
    if (!s)
        s = tridi_adi_create(&pc, cpu, &c.ref.grid, c.ref.lo, c.ref.hi, c.dtype, &c.ref.op);
    /* dt, dt, dt / 2, dt: a plan's tables of shared rows kept for the second step, made again for the third
     * and the fourth (decision 085). */
    for (int k = 0; k < steps && !s; ++k) {
        const double dt = k == 2 ? 0.5 * c.dt : c.dt;
        s = tridi_adi_step(pg, dfield, dt, NULL);
        if (!s)
            s = tridi_adi_step(pc, host_field, dt, NULL);
        ref_step(&c.ref, ref, dt);
    }
    if (!s)
        s = tridi_adi_synchronize(pg);
    if (!s)
        s = tridi_copy_to_host(gpu, gpu_result, dfield, bytes);
    if (s) {
        printf("%s case %d (%s): %s %s\n", path, index, c.label, tridi_status_name(s), tridi_error_message());
        bad = 1;
    } else {
        /* The oracle runs in double throughout: compare with it only in double; float runs are held to the
         * CPU backend, which rounds the same intermediates but for the heat operator's (float_tolerance). */
        double *cpu_d = malloc(sizeof(double) * c.cells);
        for (int64_t i = 0; i < c.cells; ++i)
            cpu_d[i] = tu_get(host_field, c.dtype, i);
        int64_t out1 = 0, out2 = 0;
        double e_cpu = adi_box_error(&c, gpu_result, cpu_d, before, &out1);
        double e_ref = c.dtype == TRIDI_FLOAT64 ? adi_box_error(&c, gpu_result, ref, before, &out2) : 0.0;
        const int fused = strncmp(path, "fused", 5) == 0; /* fused or fused64 */
        double tol_cpu = c.dtype == TRIDI_FLOAT64 ? 1e-12 : float_tolerance(&c, steps, fused), tol_ref = 1e-11;
        if (c.dtype == TRIDI_FLOAT32 && fused && e_cpu / tol_cpu > worst_float_ratio)
            worst_float_ratio = e_cpu / tol_cpu;
        if (c.dtype == TRIDI_FLOAT64 && fused && e_cpu / tol_cpu > worst_double_ratio)
            worst_double_ratio = e_cpu / tol_cpu;
        double ms[3] = {0};
        int64_t nsteps = 0;
        tridi_adi_timings(pg, ms, &nsteps);
        /* Event timing resolves about half a microsecond: a sweep of a tiny box may read 0, all of them
         * together may not. */
        int timer_ok = nsteps == steps && ms[0] + ms[1] + ms[2] > 0.0;
        for (int a = 0; a < 3; ++a)
            timer_ok &= a < c.ref.op.naxes ? ms[a] >= 0.0 : ms[a] == 0.0;
        if (!(e_cpu <= tol_cpu) || !(e_ref <= tol_ref) || out1 || !timer_ok) {
            printf("%s case %d (%s), %d steps: GPU vs CPU %.3e (tol %.1e), GPU vs oracle %.3e (tol %.0e), %lld cells "
                   "outside the box changed, timer %s\n", path, index, c.label, steps, e_cpu, tol_cpu, e_ref, tol_ref,
                   (long long)out1, timer_ok ? "ok" : "WRONG");
            bad = 1;
        }
        free(cpu_d);
    }
    tridi_adi_destroy(pg);
    tridi_adi_destroy(pc);
    tridi_device_free(gpu, dfield);
    free_coefs(&opg);
    free(host_field);
    free(before);
    free(gpu_result);
    free(ref);
    adi_case_free(&c);
    return bad;
}

static int sweep_case(uint64_t *rng, int index)
{
    adi_case c;
    tu_system sys;
    int axis, bad = 1;
    size_t bytes;
    if (adi_sweep_case(&c, &sys, &axis, &bytes, rng))
        return 1;
    const tridi_grid *g = &c.ref.grid;
    tridi_dtype t = c.dtype;
    void *xref = malloc(bytes);
    memcpy(xref, sys.x_before, bytes);
    tridi_arrays ref = sys.a;
    ref.x = xref;
    tu_reference_solve(g, (tridi_axis)axis, c.ref.lo, c.ref.hi, &ref);
    void *dl = upload(sys.a.lower, bytes), *dd = upload(sys.a.diag, bytes), *du = upload(sys.a.upper, bytes);
    void *dr = upload(sys.a.rhs, bytes), *dx = upload(sys.a.x, bytes);
    tridi_adi plan = NULL;
    char label[320];
    snprintf(label, sizeof label, "sweep case %d axis %c (%s)", index, "xyz"[axis], c.label);
    tridi_status s = tridi_adi_create(&plan, gpu, g, c.ref.lo, c.ref.hi, t, &c.ref.op);
    if (!s)
        s = tridi_adi_sweep(plan, (tridi_axis)axis, dl, dd, du, dr, dx, NULL);
    if (!s)
        s = tridi_adi_synchronize(plan);
    if (!s)
        s = tridi_copy_to_host(gpu, sys.a.x, dx, bytes);
    if (s) {
        printf("%s: %s %s\n", label, tridi_status_name(s), tridi_error_message());
    } else {
        bad = tu_check(label, &sys, xref, c.ref.lo, c.ref.hi, (tridi_axis)axis, tu_tolerance(t)) != 0;
        /* The same diagonals through a device plan of the sweep's contract (FAST arithmetic, all or
         * nothing: docs/decisions/031): bit for bit the sweep's answer. */
        void *dx2 = upload(sys.x_before, bytes), *x2 = malloc(bytes);
        tridi_arrays direct = {dl, t, dd, t, du, t, dr, t, dx2, t};
        s = adi_contract_solve(gpu, g, (tridi_axis)axis, c.ref.lo, c.ref.hi, TRIDI_MEMORY_DEVICE, &direct);
        if (!s)
            s = tridi_copy_to_host(gpu, x2, dx2, bytes);
        if (s || memcmp(x2, sys.a.x, bytes)) {
            printf("%s: a FAST device plan on the same diagonals %s\n", label,
                   s ? tridi_error_message() : "differs from the sweep");
            bad = 1;
        }
        tridi_device_free(gpu, dx2);
        free(x2);
    }
    tridi_adi_destroy(plan);
    void *d[5] = {dl, dd, du, dr, dx};
    for (int i = 0; i < 5; ++i)
        tridi_device_free(gpu, d[i]);
    free(xref);
    tu_system_free(&sys);
    adi_case_free(&c);
    return bad;
}

/* A NaN in the device field: the step fails (reported by tridi_adi_synchronize, naming a cell), a second
 * step queued before the verdict does nothing, and the field comes back exactly as it was; on the fused
 * path the message names the sweep, and once the verdict is taken the plan steps again. nlong as for
 * adi_case_random. */
/* heat_x: x lines of exactly nlong cells and the heat operator (adi_case_random_heat_x). */
static int nan_case(uint64_t *rng, const char *path, int64_t nlong, int heat_x)
{
    adi_case c;
    if (heat_x)
        adi_case_random_heat(&c, rng, TRIDI_FLOAT64, 3, 0, nlong);
    else
        adi_case_random(&c, rng, TRIDI_FLOAT64, 3, nlong);
    const ref_problem *p = &c.ref;
    int64_t cell[3];
    for (int a = 0; a < 3; ++a)
        cell[a] = tu_randint(rng, p->lo[a], p->hi[a]);
    c.u0[ref_index(&p->grid, cell[0], cell[1], cell[2])] = NAN;
    size_t bytes = (size_t)c.cells * 8;
    tridi_adi_operator op = p->op;
    op.kappa_field = upload(c.kappa_t, bytes);
    for (int a = 0; a < 3; ++a)
        op.velocity[a] = upload(c.vel_t[a], bytes);
    void *dfield = upload(c.u0, bytes), *back = malloc(bytes);
    tridi_adi plan = NULL;
    int bad = 1;
    use_path(path);
    tridi_status s = tridi_adi_create(&plan, gpu, &p->grid, p->lo, p->hi, TRIDI_FLOAT64, &op);
    for (int k = 0; k < 2 && !s; ++k)
        s = tridi_adi_step(plan, dfield, c.dt, NULL);
    if (!s)
        s = tridi_adi_synchronize(plan);
    printf("%s: NaN at (%lld, %lld, %lld) in the device field (%s): %s %s\n", path, (long long)cell[0],
           (long long)cell[1], (long long)cell[2], c.label, tridi_status_name(s), tridi_error_message());
    int64_t named[3] = {0, 0, 0};
    const int has_cell = tridi_error_cell(named) == 3;
    if (!strncmp(path, "fused", 5) && (!strstr(tridi_error_message(), "(sweep x, deferred)") || !has_cell)) {
        printf("  the message does not name the sweep and a cell  <-- FAIL\n");
        s = TRIDI_ERROR_INTERNAL;
    }
    /* The staged step's solves run through the plan's solve plans: their messages still name the ADI call. */
    if (strncmp(tridi_error_message(), "tridi_adi_", 10)) {
        printf("  the message does not name the ADI entry point  <-- FAIL\n");
        s = TRIDI_ERROR_INTERNAL;
    }
    if (s == TRIDI_ERROR_NONFINITE && tridi_copy_to_host(gpu, back, dfield, bytes) == TRIDI_SUCCESS) {
        bad = 0;
        for (int64_t i = 0; i < c.cells; ++i) /* NaN == NaN bitwise: memcmp per cell */
            if (memcmp((char *)back + 8 * i, (char *)c.u0 + 8 * i, 8))
                bad = 1;
        if (bad)
            printf("  the field changed although the step failed  <-- FAIL\n");
    } else {
        printf("  expected TRIDI_ERROR_NONFINITE  <-- FAIL\n");
    }
    /* The verdict was taken: with the NaN gone the same plan steps again. */
    c.u0[ref_index(&p->grid, cell[0], cell[1], cell[2])] = 0.0;
    if (!bad && (tridi_copy_to_device(gpu, dfield, c.u0, bytes) || tridi_adi_step(plan, dfield, c.dt, NULL) ||
                 tridi_adi_synchronize(plan))) {
        printf("  a clean step after the reported failure: %s  <-- FAIL\n", tridi_error_message());
        bad = 1;
    }
    tridi_adi_destroy(plan);
    tridi_device_free(gpu, dfield);
    free_coefs(&op);
    free(back);
    adi_case_free(&c);
    return bad;
}

/* A NaN in a coefficient array the step reads (which: 0 the kappa field, with the harmonic mean on odd
 * draws; 1 a velocity of a swept axis), at an interior cell: the GPU does not scan its inputs, so the rows
 * must carry it to the solve's check (the harmonic mean and the upwind selects once turned it into 0): the
 * step fails with TRIDI_ERROR_NONFINITE and the field comes back exactly as it was. */
static int coef_nan_case(uint64_t *rng, const char *path, int dtype, int which, int draw)
{
    adi_case c;
    int axis = -1;
    for (;;) { /* a case with the array, along an axis of two cells or more (an open face at every cell) */
        adi_case_random(&c, rng, dtype, 3, 0);
        if (which == 0 && c.kappa_t && c.ref.hi[0] > c.ref.lo[0])
            break;
        for (int a = 0; a < c.ref.op.naxes && which == 1 && axis < 0; ++a)
            if (c.vel_t[a] && c.ref.hi[a] > c.ref.lo[a])
                axis = a;
        if (axis >= 0)
            break;
        adi_case_free(&c);
    }
    const ref_problem *p = &c.ref;
    tridi_adi_operator op = p->op;
    if (which == 0)
        op.mean = draw % 2 ? TRIDI_ADI_HARMONIC : TRIDI_ADI_ARITHMETIC;
    int64_t cell[3];
    for (int a = 0; a < 3; ++a)
        cell[a] = tu_randint(rng, p->lo[a], p->hi[a]);
    const int64_t at = ref_index(&p->grid, cell[0], cell[1], cell[2]);
    void *arr = which == 0 ? c.kappa_t : c.vel_t[axis];
    if (c.dtype == TRIDI_FLOAT64)
        ((double *)arr)[at] = NAN;
    else
        ((float *)arr)[at] = NAN;
    const size_t es = c.dtype == TRIDI_FLOAT64 ? 8 : 4, bytes = (size_t)c.cells * es;
    void *field = adi_to_type(c.u0, c.cells, c.dtype); /* the field in dtype */
    if (c.kappa_t)
        op.kappa_field = upload(c.kappa_t, bytes);
    for (int a = 0; a < 3; ++a)
        op.velocity[a] = c.vel_t[a] ? upload(c.vel_t[a], bytes) : NULL;
    void *dfield = upload(field, bytes), *back = malloc(bytes);
    tridi_adi plan = NULL;
    use_path(path);
    tridi_status s = tridi_adi_create(&plan, gpu, &p->grid, p->lo, p->hi, c.dtype, &op);
    if (!s)
        s = tridi_adi_step(plan, dfield, c.dt, NULL);
    if (!s)
        s = tridi_adi_synchronize(plan);
    static const char *const vel_name[3] = {"velocity x", "velocity y", "velocity z"};
    const char *what = which == 1                      ? vel_name[axis]
                       : op.mean == TRIDI_ADI_HARMONIC ? "the kappa field, harmonic"
                                                       : "the kappa field, arithmetic";
    printf("%s %s: NaN at (%lld, %lld, %lld) in %s (%s): %s %s\n", path, c.dtype == TRIDI_FLOAT64 ? "f64" : "f32",
           (long long)cell[0], (long long)cell[1], (long long)cell[2], what, c.label, tridi_status_name(s),
           tridi_error_message());
    int bad = 1;
    if (s == TRIDI_ERROR_NONFINITE && tridi_copy_to_host(gpu, back, dfield, bytes) == TRIDI_SUCCESS) {
        bad = memcmp(back, field, bytes) != 0;
        if (bad)
            printf("  the field changed although the step failed  <-- FAIL\n");
    } else {
        printf("  expected TRIDI_ERROR_NONFINITE  <-- FAIL\n");
    }
    tridi_adi_destroy(plan);
    tridi_device_free(gpu, dfield);
    free_coefs(&op);
    free(back);
    free(field);
    adi_case_free(&c);
    return bad;
}

/* A value of TRIDI_ADI_PATH that names no path: refused at creation, the message naming the variable. */
static int bad_path_case(uint64_t *rng)
{
    adi_case c;
    adi_case_random(&c, rng, TRIDI_FLOAT64, 0, 0);
    use_path("fast");
    tridi_adi plan = NULL;
    tridi_status s = tridi_adi_create(&plan, gpu, &c.ref.grid, c.ref.lo, c.ref.hi, c.dtype, &c.ref.op);
    const int bad = s != TRIDI_ERROR_INVALID_VALUE || !strstr(tridi_error_message(), "TRIDI_ADI_PATH") || plan;
    printf("TRIDI_ADI_PATH=fast: %s %s%s\n", tridi_status_name(s), tridi_error_message(), bad ? "  <-- FAIL" : "");
    tridi_adi_destroy(plan);
    adi_case_free(&c);
    return bad;
}

#ifdef ADI_TEST_CUDART
/* A fused step captured in a CUDA graph on the caller's stream, replayed with an uncaptured step of
 * another dt in between (the captured table must not be stale), against the same three steps uncaptured
 * on a second plan: equal bit for bit. Odd cases: the heat operator (tables of shared rows, decision 085),
 * with an uncaptured step before the capture too. */
static int graph_case(uint64_t *rng, int index)
{
    adi_case c;
    if (index % 2)
        adi_case_random_heat(&c, rng, -1, 3, index % 3, 256);
    else
        adi_case_random(&c, rng, -1, 3, 0);
    use_path("fused");
    const size_t bytes = (size_t)c.cells * (c.dtype == TRIDI_FLOAT64 ? 8 : 4);
    tridi_adi_operator op = c.ref.op;
    op.kappa_field = upload(c.kappa_t, bytes);
    for (int a = 0; a < 3; ++a)
        op.velocity[a] = upload(c.vel_t[a], bytes);
    void *host = adi_to_type(c.u0, c.cells, c.dtype), *got = malloc(bytes), *want = malloc(bytes);
    void *d1 = upload(host, bytes), *d2 = upload(host, bytes);
    tridi_adi p1 = NULL, p2 = NULL;
    cudaStream_t st = NULL;
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    int bad = 1;
    const char *why = "";
    tridi_status s = tridi_adi_create(&p1, gpu, &c.ref.grid, c.ref.lo, c.ref.hi, c.dtype, &op);
    if (!s)
        s = tridi_adi_create(&p2, gpu, &c.ref.grid, c.ref.lo, c.ref.hi, c.dtype, &op);
    if (!s && index % 2) { /* the same step on both plans first: the first plan's tables made eagerly */
        s = tridi_adi_step(p1, d1, c.dt, NULL);
        if (!s)
            s = tridi_adi_step(p2, d2, c.dt, NULL);
        if (!s)
            s = tridi_adi_synchronize(p1);
    }
    if (s) {
        why = tridi_error_message();
    } else if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess ||
               cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
        why = "could not begin the capture";
    } else {
        s = tridi_adi_step(p1, d1, c.dt, st);
        cudaError_t e = cudaStreamEndCapture(st, &graph);
        if (s)
            why = tridi_error_message();
        else if (e != cudaSuccess || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
            why = "the step could not be captured";
        else if (cudaGraphLaunch(exec, st) != cudaSuccess || tridi_adi_step(p1, d1, 0.5 * c.dt, st) ||
                 cudaGraphLaunch(exec, st) != cudaSuccess || cudaStreamSynchronize(st) != cudaSuccess)
            why = "replay failed";
        else if (tridi_adi_step(p2, d2, c.dt, NULL) || tridi_adi_step(p2, d2, 0.5 * c.dt, NULL) ||
                 tridi_adi_step(p2, d2, c.dt, NULL) || tridi_adi_synchronize(p2) || tridi_adi_synchronize(p1))
            why = tridi_error_message();
        else if (tridi_copy_to_host(gpu, got, d1, bytes) || tridi_copy_to_host(gpu, want, d2, bytes))
            why = tridi_error_message();
        else if (memcmp(got, want, bytes))
            why = "the replayed graph differs from the uncaptured steps";
        else
            bad = 0;
    }
    if (bad)
        printf("graph case %d (%s): %s  <-- FAIL\n", index, c.label, why);
    if (exec)
        cudaGraphExecDestroy(exec);
    if (graph)
        cudaGraphDestroy(graph);
    if (st)
        cudaStreamDestroy(st);
    tridi_adi_destroy(p1);
    tridi_adi_destroy(p2);
    tridi_device_free(gpu, d1);
    tridi_device_free(gpu, d2);
    free_coefs(&op);
    free(host);
    free(got);
    free(want);
    adi_case_free(&c);
    return bad;
}
#endif

int main(void)
{
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CUDA;
    tridi_status s = tridi_create(&gpu, &cfg);
    if (s == TRIDI_ERROR_NO_DEVICE) {
        printf("test_adi_cuda: skipped: %s\n", tridi_error_message());
        return 77;
    }
    if (s) {
        printf("test_adi_cuda: %s %s\n", tridi_status_name(s), tridi_error_message());
        return 1;
    }
    cfg.backend = TRIDI_BACKEND_CPU;
    if (tridi_create(&cpu, &cfg)) {
        printf("cpu context: %s\n", tridi_error_message());
        return 1;
    }
    uint64_t rng = tu_seed("test_adi_cuda");
    int steps_bad = 0, staged_bad = 0, sweeps_bad = 0, cases = 150, long_cases = 24, full_cases = 12,
        long_x_cases = 10, wide_cases = 30, staged_cases = 60, heat_x_cases = 16, long_yz_cases = 12,
        z512_cases = 6, full_x_cases = 9, ktile_cases = 24;
    for (int i = 0; i < cases; ++i)
        steps_bad += step_case(&rng, i, "fused", 0, 0);
    /* One axis of 350-700 cells: the fused sweeps cut its lines into 44-88 chunks joined by cyclic
     * reduction over several warps (docs/decisions/032). */
    for (int i = 0; i < long_cases; ++i)
        steps_bad += step_case(&rng, cases + i, "fused", 700, 0);
    /* A long axis of a multiple of 32 cells: every chunk full, solved at fixed offsets (decision 034). */
    for (int i = 0; i < full_cases; ++i)
        steps_bad += step_case(&rng, cases + long_cases + i, "fused", -640, 0);
    /* x lines of 1024-2048 cells: a kappa field or x velocity stages rows of 32 bytes a cell in double, past
     * the 48 KiB a block has without opting in (decision 048). */
    for (int i = 0; i < long_x_cases; ++i)
        steps_bad += step_case(&rng, cases + long_cases + full_cases + i, "fused", 2048, 1);
    /* The x rows' 64-bit offsets, which only fields past 2^31 cells need (decision 078), forced on small ones:
     * random cases and long x lines. */
    for (int i = 0; i < wide_cases; ++i)
        steps_bad += step_case(&rng, cases + long_cases + full_cases + long_x_cases + i, "fused64", i % 3 ? 0 : 2048,
                               i % 3 == 0);
    /* Heat x lines of 256-2048 cells: 16, 32 or 64 whole chunks in double or float, solved at fixed offsets
     * and joined behind each line's own barriers (decision 082), or 128 chunks (double 2048) without. */
    const int first_heat = cases + long_cases + full_cases + long_x_cases + wide_cases;
    for (int i = 0; i < heat_x_cases; ++i)
        steps_bad += step_case(&rng, first_heat + i, "fused", (int64_t)256 << (i % 4), 2);
    /* Heat y and z lines of 512, 1024 and 2048 cells: 32, 64 or 128 chunks in double, 16, 32 or 64 in float;
     * blocks of 512 threads from 64 chunks and for double lines of 32 (decisions 083, 084). */
    const int first_long_yz = first_heat + heat_x_cases;
    for (int i = 0; i < long_yz_cases; ++i)
        steps_bad += step_case(&rng, first_long_yz + i, "fused", (int64_t)512 << (i % 3), 3 + (i / 3) % 2);
    /* z lines of 512 cells, any operator: lines of their own rows in fp_shape's blocks (decision 086). */
    const int first_z512 = first_long_yz + long_yz_cases;
    for (int i = 0; i < z512_cases; ++i)
        steps_bad += step_case(&rng, first_z512 + i, "fused", 512, 5);
    /* x lines of 128-1024 cells with every coefficient array: the operator's interior lines, rows without
     * face choices (decision 080), beside the lines at the box's faces. */
    const int first_full_x = first_z512 + z512_cases;
    for (int i = 0; i < full_x_cases; ++i)
        steps_bad += step_case(&rng, first_full_x + i, "fused", (int64_t)128 << (i % 4), 6);
    /* The x sweeps' blocks in tiles of k layers (decision 104), which the rule takes on large layers alone,
     * forced on small ones: z axes of 17-82 layers (whole and short tiles), x lines with every coefficient
     * array, heat x lines at fixed offsets, random boxes (2D ones and naxes 2 keep the line order). */
    const int first_ktile = first_full_x + full_x_cases;
    for (int i = 0; i < ktile_cases; ++i) {
        const int kind = i % 4;
        const int64_t n = kind == 0 ? 17 + 13 * (i / 4) : kind == 1 ? (int64_t)128 << (i / 4 % 3)
                          : kind == 2 ? (int64_t)256 << (i / 4 % 3) : 0;
        steps_bad += step_case(&rng, first_ktile + i, "fusedk", n, kind == 0 ? 5 : kind == 1 ? 6 : kind == 2 ? 2 : 0);
    }
    for (int i = 0; i < staged_cases; ++i)
        staged_bad += step_case(&rng, i, "staged", 0, 0);
    for (int i = 0; i < cases; ++i)
        sweeps_bad += sweep_case(&rng, i);
    int nan_bad = bad_path_case(&rng), graph_bad = 0, graph_cases = 0;
    for (int i = 0; i < 6; ++i)
        nan_bad += nan_case(&rng, i % 2 ? "staged" : "fused", i < 4 ? 0 : 700, 0); /* the last two: a long axis */
    for (int i = 0; i < 3; ++i) /* heat x lines of 16, 32, 64 chunks (decision 082) */
        nan_bad += nan_case(&rng, "fused", (int64_t)256 << i, 1);
    for (int i = 0; i < 2; ++i) /* the lowest failing line named whatever order the blocks run in (104) */
        nan_bad += nan_case(&rng, "fusedk", i ? 256 : 0, i);
    for (int i = 0; i < 12; ++i) /* NaN coefficients: kappa (harmonic, arithmetic), a velocity; f64, f32 */
        nan_bad += coef_nan_case(&rng, i % 6 == 5 ? "staged" : "fused", i % 2 ? TRIDI_FLOAT32 : TRIDI_FLOAT64,
                                 i / 2 % 2, i / 4 + 1);
#ifdef ADI_TEST_CUDART
    graph_cases = 6;
    for (int i = 0; i < graph_cases; ++i)
        graph_bad += graph_case(&rng, i);
#endif
    printf("test_adi_cuda: fused steps %d of %d cases failed, staged steps %d of %d, caller-diagonal sweeps %d of "
           "%d, NaN and bad-path cases %d of 24, graph replays %d of %d\n", steps_bad,
           first_ktile + ktile_cases, staged_bad,
           staged_cases,
           sweeps_bad, cases, nan_bad, graph_bad, graph_cases);
    printf("test_adi_cuda: largest fused float error over its tolerance %.3g, double %.3g\n", worst_float_ratio,
           worst_double_ratio);
    tridi_destroy(cpu);
    tridi_destroy(gpu);
    return steps_bad || staged_bad || sweeps_bad || nan_bad || graph_bad ? 1 : 0;
}
