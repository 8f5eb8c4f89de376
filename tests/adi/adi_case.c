#include "adi_case.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *adi_to_type(const double *src, int64_t n, tridi_dtype t)
{
    void *p = malloc((size_t)n * (t == TRIDI_FLOAT64 ? 8 : 4));
    for (int64_t i = 0; i < n; ++i)
        tu_set(p, t, i, src[i]);
    return p;
}

static double *rounded(double *v, int64_t n, tridi_dtype t)
{
    if (t == TRIDI_FLOAT32)
        for (int64_t i = 0; i < n; ++i)
            v[i] = (double)(float)v[i];
    return v;
}

static int long_x; /* adi_case_random_long_x: the long axis is x */
static int heat_only; /* random_exact: the operator is heat's */
static int long_axis_set = -1; /* random_exact: the long axis */
static int exact_long; /* random_exact: the long axis has exactly nlong cells */
static int all_coefs; /* adi_case_random_full_x: every coefficient array, three axes swept */

int adi_case_random_long_x(adi_case *c, uint64_t *rng, int dtype, int ndim, int64_t nlong)
{
    long_x = 1;
    const int r = adi_case_random(c, rng, dtype, ndim, nlong);
    long_x = 0;
    return r;
}

/* adi_case_random with the long axis exactly n cells long; heat: the heat operator's coefficients alone. */
static int random_exact(adi_case *c, uint64_t *rng, int dtype, int ndim, int axis, int64_t n, int heat)
{
    exact_long = 1;
    heat_only = heat;
    long_axis_set = axis;
    const int r = adi_case_random(c, rng, dtype, ndim, n);
    exact_long = heat_only = 0;
    long_axis_set = -1;
    return r;
}

int adi_case_random_heat(adi_case *c, uint64_t *rng, int dtype, int ndim, int axis, int64_t n)
{
    return random_exact(c, rng, dtype, ndim, axis, n, 1);
}

int adi_case_random_axis(adi_case *c, uint64_t *rng, int dtype, int ndim, int axis, int64_t n)
{
    return random_exact(c, rng, dtype, ndim, axis, n, 0);
}

int adi_case_random_full_x(adi_case *c, uint64_t *rng, int dtype, int64_t n)
{
    all_coefs = 1;
    const int r = random_exact(c, rng, dtype, 3, 0, n, 0);
    all_coefs = 0;
    return r;
}

int adi_case_random(adi_case *c, uint64_t *rng, int dtype, int ndim, int64_t nlong)
{
    memset(c, 0, sizeof *c);
    ref_problem *p = &c->ref;
    tridi_adi_operator *op = &p->op;
    tridi_adi_operator_init(op);
    if (!ndim)
        ndim = (int)tu_randint(rng, 2, 3);
    c->dtype = dtype < 0 ? (tridi_dtype)tu_randint(rng, 0, 1) : (tridi_dtype)dtype;
    op->naxes = ndim == 3 ? (int)tu_randint(rng, 2, 3) : 2;
    if (long_axis_set == 2 || all_coefs)
        op->naxes = 3; /* z lines swept; every axis's terms (all_coefs) */
    op->scheme = op->naxes == 2 && tu_uniform(rng) < 0.5 ? TRIDI_ADI_PEACEMAN_RACHFORD : TRIDI_ADI_DOUGLAS;
    op->theta = tu_uniform(rng) < 0.5 ? 0.5 : 0.5 + 0.5 * tu_uniform(rng);
    op->mean = (tridi_adi_mean)tu_randint(rng, 0, 1);
    p->grid.ndim = ndim;
    const int long_axis = long_axis_set >= 0 ? long_axis_set
                          : nlong != 0      ? (long_x ? 0 : (int)tu_randint(rng, 0, ndim - 1))
                                            : -1;
    const int64_t full = nlong < 0 ? 32 : 1; /* the long axis a multiple of this */
    nlong = nlong < 0 ? -nlong : nlong;
    for (int a = 0; a < 3; ++a) {
        if (a >= ndim) {
            p->grid.lbound[a] = p->grid.ubound[a] = p->lo[a] = p->hi[a] = 1;
            continue;
        }
        op->bc_lo[a] = (tridi_adi_bc)tu_randint(rng, 0, 1);
        op->bc_hi[a] = (tridi_adi_bc)tu_randint(rng, 0, 1);
        op->spacing[a] = 0.5 + tu_uniform(rng);
        int64_t lb = tu_randint(rng, -3, 2), n = tu_randint(rng, 1, ndim == 3 ? 14 : 40);
        if (all_coefs) /* y wide enough for interior lines */
            n = a == 1 ? tu_randint(rng, 6, 24) : tu_randint(rng, 3, 6);
        if (a == long_axis)
            n = exact_long ? nlong : full * tu_randint(rng, nlong / 2 / full, nlong / full);
        int64_t hlo = tu_randint(rng, op->bc_lo[a] == TRIDI_ADI_DIRICHLET ? 1 : 0, 2);
        int64_t hhi = tu_randint(rng, op->bc_hi[a] == TRIDI_ADI_DIRICHLET ? 1 : 0, 2);
        p->lo[a] = lb;
        p->hi[a] = lb + n - 1;
        p->grid.lbound[a] = lb - hlo;
        p->grid.ubound[a] = lb + n - 1 + hhi;
    }
    c->cells = ref_cells(&p->grid);
    int64_t n = c->cells;
    c->u0 = malloc(sizeof(double) * n);
    for (int64_t i = 0; i < n; ++i)
        c->u0[i] = 2.0 * tu_uniform(rng) - 1.0;
    if (!heat_only && (all_coefs || tu_uniform(rng) < 0.7)) {
        c->kappa = malloc(sizeof(double) * n);
        for (int64_t i = 0; i < n; ++i)
            c->kappa[i] = tu_uniform(rng) < 0.05 ? 0.0 : 0.05 + 2.0 * tu_uniform(rng);
    } else {
        op->kappa = tu_uniform(rng) * 2.0;
    }
    /* |v| <= 0.1 with h >= 0.5 and dt <= 2.05 keeps dt |V_{m+1/2} - V_{m-1/2}| / h below 1, so every
     * sweep's system stays diagonally dominant and float rounding is not amplified. */
    for (int a = 0; a < op->naxes; ++a)
        if (!heat_only && (all_coefs || tu_uniform(rng) < 0.5)) {
            c->vel[a] = malloc(sizeof(double) * n);
            for (int64_t i = 0; i < n; ++i)
                c->vel[a][i] = 0.2 * tu_uniform(rng) - 0.1;
        }
    /* Closed faces: the cells across them hold NaN in every array, so a read of one shows. */
    int64_t cc[3];
    tridi_grid *g = &p->grid;
    for (cc[2] = g->lbound[2]; cc[2] <= g->ubound[2]; ++cc[2])
        for (cc[1] = g->lbound[1]; cc[1] <= g->ubound[1]; ++cc[1])
            for (cc[0] = g->lbound[0]; cc[0] <= g->ubound[0]; ++cc[0]) {
                int across = -1, outside = 0;
                for (int a = 0; a < ndim; ++a)
                    if (cc[a] < p->lo[a] || cc[a] > p->hi[a]) {
                        outside++;
                        if ((cc[a] == p->lo[a] - 1 && op->bc_lo[a] == TRIDI_ADI_ZERO_FLUX) ||
                            (cc[a] == p->hi[a] + 1 && op->bc_hi[a] == TRIDI_ADI_ZERO_FLUX))
                            across = a;
                    }
                if (outside != 1 || across < 0 || across >= op->naxes)
                    continue;
                int64_t i = ref_index(g, cc[0], cc[1], cc[2]);
                c->u0[i] = NAN;
                if (c->kappa)
                    c->kappa[i] = NAN;
                for (int a = 0; a < 3; ++a)
                    if (c->vel[a])
                        c->vel[a][i] = NAN;
            }
    rounded(c->u0, n, c->dtype);
    if (c->kappa) {
        rounded(c->kappa, n, c->dtype);
        c->kappa_t = adi_to_type(c->kappa, n, c->dtype);
    }
    for (int a = 0; a < 3; ++a)
        if (c->vel[a]) {
            rounded(c->vel[a], n, c->dtype);
            c->vel_t[a] = adi_to_type(c->vel[a], n, c->dtype);
        }
    p->kappa = c->kappa;
    for (int a = 0; a < 3; ++a)
        p->vel[a] = c->vel[a];
    op->kappa_field = c->kappa_t;
    for (int a = 0; a < 3; ++a)
        op->velocity[a] = c->vel_t[a];
    c->dt = 0.05 + 2.0 * tu_uniform(rng);
    snprintf(c->label, sizeof c->label,
             "%dD box %lldx%lldx%lld %s %s naxes %d theta %.3f %s kappa %s vel %d%d%d bc %d%d/%d%d/%d%d dt %.3f",
             ndim, (long long)(p->hi[0] - p->lo[0] + 1), (long long)(p->hi[1] - p->lo[1] + 1),
             (long long)(p->hi[2] - p->lo[2] + 1), c->dtype == TRIDI_FLOAT64 ? "f64" : "f32",
             op->scheme == TRIDI_ADI_DOUGLAS ? "douglas" : "peaceman-rachford", op->naxes, op->theta,
             op->mean == TRIDI_ADI_HARMONIC ? "harmonic" : "arithmetic", c->kappa ? "field" : "const",
             c->vel[0] != NULL, c->vel[1] != NULL, c->vel[2] != NULL, op->bc_lo[0], op->bc_hi[0], op->bc_lo[1],
             op->bc_hi[1], op->bc_lo[2], op->bc_hi[2], c->dt);
    return 0;
}

void adi_case_free(adi_case *c)
{
    free(c->u0);
    free(c->kappa);
    free(c->kappa_t);
    for (int a = 0; a < 3; ++a) {
        free(c->vel[a]);
        free(c->vel_t[a]);
    }
}

int adi_sweep_case(adi_case *c, tu_system *sys, int *axis, size_t *bytes, uint64_t *rng)
{
    adi_case_random(c, rng, -1, 0, 0);
    const tridi_dtype t = c->dtype;
    if (tu_system_alloc(sys, &c->ref.grid, t, t, t, t, t, rng))
        return 1;
    *axis = (int)tu_randint(rng, 0, c->ref.grid.ndim - 1);
    *bytes = (size_t)sys->cells * (t == TRIDI_FLOAT64 ? 8 : 4);
    return 0;
}

double adi_box_error(const adi_case *c, const void *x, const double *ref, const void *before, int64_t *outside_bad)
{
    const ref_problem *p = &c->ref;
    const tridi_grid *g = &p->grid;
    double scale = 1e-300, err = 0.0;
    size_t es = c->dtype == TRIDI_FLOAT64 ? 8 : 4;
    *outside_bad = 0;
    int64_t cc[3];
    for (cc[2] = g->lbound[2]; cc[2] <= g->ubound[2]; ++cc[2])
        for (cc[1] = g->lbound[1]; cc[1] <= g->ubound[1]; ++cc[1])
            for (cc[0] = g->lbound[0]; cc[0] <= g->ubound[0]; ++cc[0]) {
                int64_t i = ref_index(g, cc[0], cc[1], cc[2]);
                int inside = 1;
                for (int a = 0; a < 3; ++a)
                    inside &= cc[a] >= p->lo[a] && cc[a] <= p->hi[a];
                if (!inside) {
                    if (memcmp((const char *)x + i * es, (const char *)before + i * es, es))
                        ++*outside_bad;
                    continue;
                }
                if (fabs(ref[i]) > scale)
                    scale = fabs(ref[i]);
            }
    for (cc[2] = p->lo[2]; cc[2] <= p->hi[2]; ++cc[2])
        for (cc[1] = p->lo[1]; cc[1] <= p->hi[1]; ++cc[1])
            for (cc[0] = p->lo[0]; cc[0] <= p->hi[0]; ++cc[0]) {
                int64_t i = ref_index(g, cc[0], cc[1], cc[2]);
                double d = fabs(tu_get(x, c->dtype, i) - ref[i]);
                if (!(d <= err)) /* NaN propagates as a failure */
                    err = isnan(d) ? INFINITY : d;
            }
    return err / scale;
}

tridi_status adi_contract_solve(tridi_context ctx, const tridi_grid *g, tridi_axis axis, const int64_t lo[3],
                                const int64_t hi[3], tridi_memory memory, const tridi_arrays *a)
{
    tridi_solve_options o;
    tridi_solve_options_init(&o);
    o.memory = memory;
    o.arith = TRIDI_ARITH_FAST;
    o.on_error = TRIDI_ON_ERROR_CALL;
    const tridi_dtype t = a->x_type, types[5] = {t, t, t, t, t};
    tridi_plan plan = NULL;
    tridi_status s = tridi_plan_create(ctx, g, axis, lo, hi, types, &o, &plan);
    if (!s)
        s = tridi_plan_solve(plan, a);
    tridi_plan_destroy(plan);
    return s;
}
