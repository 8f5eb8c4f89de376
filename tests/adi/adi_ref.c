#include "adi_ref.h"

#include <stdlib.h>
#include <string.h>

int64_t ref_cells(const tridi_grid *g)
{
    int64_t n = 1;
    for (int a = 0; a < 3; ++a)
        n *= g->ubound[a] - g->lbound[a] + 1;
    return n;
}

int64_t ref_index(const tridi_grid *g, int64_t i, int64_t j, int64_t k)
{
    int64_t e0 = g->ubound[0] - g->lbound[0] + 1, e1 = g->ubound[1] - g->lbound[1] + 1;
    return (i - g->lbound[0]) + e0 * ((j - g->lbound[1]) + e1 * (k - g->lbound[2]));
}

static int64_t at(const ref_problem *p, const int64_t c[3]) { return ref_index(&p->grid, c[0], c[1], c[2]); }

static double face_kappa(const ref_problem *p, const int64_t a[3], const int64_t b[3])
{
    if (!p->kappa)
        return p->op.kappa;
    double k1 = p->kappa[at(p, a)], k2 = p->kappa[at(p, b)];
    if (p->op.mean == TRIDI_ADI_ARITHMETIC)
        return 0.5 * (k1 + k2);
    return k1 + k2 > 0.0 ? 2.0 * k1 * k2 / (k1 + k2) : 0.0;
}

/* Flux through the face from cell l to cell r along axis ax, given their values: diffusive -K du/dx plus
 * upwind advective V u. */
static double flux(const ref_problem *p, int ax, const int64_t l[3], const int64_t r[3], double ul, double ur)
{
    double h = p->op.spacing[ax];
    double f = -face_kappa(p, l, r) * (ur - ul) / h;
    if (p->vel[ax]) {
        double v = 0.5 * (p->vel[ax][at(p, l)] + p->vel[ax][at(p, r)]);
        f += v * (v > 0.0 ? ul : ur);
    }
    return f;
}

/* (L_ax y) at cell c from the values ym, y0, yp of its two neighbours and itself. */
static double lcell(const ref_problem *p, int ax, const int64_t c[3], double ym, double y0, double yp)
{
    int64_t m[3] = {c[0], c[1], c[2]}, q[3] = {c[0], c[1], c[2]};
    m[ax]--;
    q[ax]++;
    int closed_m = c[ax] == p->lo[ax] && p->op.bc_lo[ax] == TRIDI_ADI_ZERO_FLUX;
    int closed_p = c[ax] == p->hi[ax] && p->op.bc_hi[ax] == TRIDI_ADI_ZERO_FLUX;
    double fm = closed_m ? 0.0 : flux(p, ax, m, c, ym, y0);
    double fp = closed_p ? 0.0 : flux(p, ax, c, q, y0, yp);
    return -(fp - fm) / p->op.spacing[ax];
}

/* Neighbour value along ax: from y inside the box, from the halo of bnd outside. */
static double nb(const ref_problem *p, int ax, const int64_t c[3], int dir, const double *y, const double *bnd)
{
    int64_t n[3] = {c[0], c[1], c[2]};
    n[ax] += dir;
    int outside = n[ax] < p->lo[ax] || n[ax] > p->hi[ax];
    /* Nothing across a closed face is read: it may hold NaN or not be allocated at all. */
    if (outside && ((dir < 0 && p->op.bc_lo[ax] == TRIDI_ADI_ZERO_FLUX) || (dir > 0 && p->op.bc_hi[ax] == TRIDI_ADI_ZERO_FLUX)))
        return 0.0;
    return outside ? bnd[at(p, n)] : y[at(p, n)];
}

/* out = L_ax y over the box (other cells untouched). */
static void apply(const ref_problem *p, int ax, const double *y, const double *bnd, double *out)
{
    int64_t c[3];
    for (c[2] = p->lo[2]; c[2] <= p->hi[2]; ++c[2])
        for (c[1] = p->lo[1]; c[1] <= p->hi[1]; ++c[1])
            for (c[0] = p->lo[0]; c[0] <= p->hi[0]; ++c[0])
                out[at(p, c)] = lcell(p, ax, c, nb(p, ax, c, -1, y, bnd), y[at(p, c)], nb(p, ax, c, 1, y, bnd));
}

/* Solves (I - w L_ax) z = rhs over the box, the halo of bnd giving the boundary values; z may be rhs. */
static void implicit(const ref_problem *p, int ax, double w, const double *rhs, const double *bnd, double *z)
{
    int64_t n = p->hi[ax] - p->lo[ax] + 1;
    double *A = malloc(sizeof(double) * n), *B = malloc(sizeof(double) * n), *C = malloc(sizeof(double) * n),
           *R = malloc(sizeof(double) * n);
    int o1 = ax == 0 ? 1 : 0, o2 = ax == 2 ? 1 : 2;
    int64_t c[3];
    for (c[o2] = p->lo[o2]; c[o2] <= p->hi[o2]; ++c[o2])
        for (c[o1] = p->lo[o1]; c[o1] <= p->hi[o1]; ++c[o1]) {
            for (int64_t m = 0; m < n; ++m) {
                c[ax] = p->lo[ax] + m;
                /* L at one cell is affine in (ym, y0, yp): its coefficients by unit values. */
                double gm = m == 0 ? nb(p, ax, c, -1, rhs, bnd) : 0.0;
                double gp = m == n - 1 ? nb(p, ax, c, 1, rhs, bnd) : 0.0;
                double base = lcell(p, ax, c, gm, 0.0, gp);
                double cm = lcell(p, ax, c, 1.0, 0.0, 0.0) - lcell(p, ax, c, 0.0, 0.0, 0.0);
                double c0 = lcell(p, ax, c, 0.0, 1.0, 0.0) - lcell(p, ax, c, 0.0, 0.0, 0.0);
                double cp = lcell(p, ax, c, 0.0, 0.0, 1.0) - lcell(p, ax, c, 0.0, 0.0, 0.0);
                A[m] = -w * cm;
                B[m] = 1.0 - w * c0;
                C[m] = -w * cp;
                R[m] = rhs[at(p, c)] + w * base;
            }
            for (int64_t m = 1; m < n; ++m) { /* plain Thomas, double */
                double f = A[m] / B[m - 1];
                B[m] -= f * C[m - 1];
                R[m] -= f * R[m - 1];
            }
            R[n - 1] /= B[n - 1];
            for (int64_t m = n - 2; m >= 0; --m)
                R[m] = (R[m] - C[m] * R[m + 1]) / B[m];
            for (int64_t m = 0; m < n; ++m) {
                c[ax] = p->lo[ax] + m;
                z[at(p, c)] = R[m];
            }
        }
    free(A);
    free(B);
    free(C);
    free(R);
}

void ref_step(const ref_problem *p, double *u, double dt)
{
    int64_t cells = ref_cells(&p->grid);
    size_t bytes = sizeof(double) * (size_t)cells;
    int na = p->op.naxes;
    double *Y = malloc(bytes), *T = malloc(bytes), *Lu[3] = {0};
    memcpy(Y, u, bytes);
    memcpy(T, u, bytes);
    int64_t c[3];
#define BOX for (c[2] = p->lo[2]; c[2] <= p->hi[2]; ++c[2]) for (c[1] = p->lo[1]; c[1] <= p->hi[1]; ++c[1]) \
        for (c[0] = p->lo[0]; c[0] <= p->hi[0]; ++c[0])
    if (p->op.scheme == TRIDI_ADI_DOUGLAS) {
        double th = p->op.theta;
        for (int a = 0; a < na; ++a) {
            Lu[a] = malloc(bytes);
            apply(p, a, u, u, Lu[a]);
        }
        BOX {
            int64_t i = at(p, c);
            for (int a = 0; a < na; ++a)
                Y[i] += dt * Lu[a][i];
        }
        for (int a = 0; a < na; ++a) {
            BOX {
                int64_t i = at(p, c);
                Y[i] -= th * dt * Lu[a][i];
            }
            implicit(p, a, th * dt, Y, u, Y);
        }
    } else {
        Lu[0] = malloc(bytes);
        apply(p, 1, u, u, Lu[0]);
        BOX {
            int64_t i = at(p, c);
            Y[i] = u[i] + 0.5 * dt * Lu[0][i];
        }
        implicit(p, 0, 0.5 * dt, Y, u, Y);
        apply(p, 0, Y, u, Lu[0]);
        BOX {
            int64_t i = at(p, c);
            T[i] = Y[i] + 0.5 * dt * Lu[0][i];
        }
        implicit(p, 1, 0.5 * dt, T, u, Y);
    }
    BOX {
        int64_t i = at(p, c);
        u[i] = Y[i];
    }
#undef BOX
    for (int a = 0; a < 3; ++a)
        free(Lu[a]);
    free(Y);
    free(T);
}
