// The `gpu-resident` backend of flow_channel: the model's step (fc_model.f90) transliterated to CUDA
// kernels so that every field and every diagonal stays in GPU memory across steps; the 18 solves of a
// step are tridi_solve_device calls on the same stream (MOHID's boundary row past the work area
// included in each box, exactly as the adapter passes it). Same arrays, same bounds (0:IM+1, 0:JM+1,
// 0:KM+1; on MPI ranks each rank's rows j0-1:j1+1, halo rows exchanged by tridi's device halo plans and
// the J sweeps solved across the ranks by tridi_mpi_solve_device), same arithmetic order as the Fortran,
// so the results follow the reference backend's within the rounding of the GPU's solves. Only per-line
// budget sums (a few KB) come back to the host per step.
// fc_model.f90 documents the physics; the comments here only mark which Fortran routine each part is.
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <initializer_list>
#include <vector>

#include "fc_parallel.h"
#include "tridi.h"

namespace {

constexpr double kLength = 7000.0, kDepth = 20.0, kGrav = 9.81, kRho0 = 1025.0, kAlphaT = 2.0e-4, kBetaS = 7.6e-4;
constexpr double kTAmb = 15.0, kSAmb = 35.0, kTRiver = 20.0, kSRiver = 0.0;
constexpr double kViscH = 5.0, kDiffH = 1.0, kViscV = 1.0e-3, kDiffV = 1.0e-4, kDragCd = 2.5e-3;

// Device pointers and sizes, captured by value in the kernels' lambdas. j runs over this rank's
// allocated rows jlb..jub (owned j0..j1 plus one halo row on each side; 0..jm+1 on one rank), with
// global indices as in fc_model.f90; south and north: this rank holds the wall row there.
struct View {
    int im, jm, km, ni, nj, j0, j1, jlb, jub;
    bool south, north;
    double dx, dy, dt, area, sig;
    double *eta, *eta_start, *hu, *hv, *ubot, *ua, *cc, *tr, *tn;
    double *u, *v, *t, *s, *fx, *fy, *g, *pb, *v0, *v1, *ww;
    float *d3, *f3, *ti3, *x3, *ti3b, *x3b, *d2, *f2, *ti2, *x2;
    double *e3, *e2;
    double *lines;   // per-line sums (budgets, outflow)
    __host__ __device__ size_t i3(int i, int j, int k) const {
        return (size_t)i + (size_t)ni * ((size_t)(j - jlb) + (size_t)nj * k);
    }
    __host__ __device__ size_t i2(int i, int j) const { return (size_t)i + (size_t)ni * (size_t)(j - jlb); }
    __host__ __device__ size_t line(int j, int k) const { return (size_t)(j - jlb) + (size_t)nj * k; }
};

#define A3(p, i, j, k) V.p[V.i3((i), (j), (k))]
#define A2(p, i, j) V.p[V.i2((i), (j))]

template <class F>
__global__ void k3(int i0, int i1, int j0, int j1, int k0, F f) {
    int i = i0 + blockIdx.x * blockDim.x + threadIdx.x;
    int j = j0 + blockIdx.y * blockDim.y + threadIdx.y;
    int k = k0 + blockIdx.z;
    if (i <= i1 && j <= j1) f(i, j, k);
}

__device__ inline void ad_row(double sig, double c, double h, double kap, double &dd, double &ee, double &ff) {
    double cp = fmax(c, 0.0), cm = fmin(c, 0.0);
    dd = -sig * (cp / h + kap / (h * h));
    ee = 1 + sig * (cp / h - cm / h + 2 * kap / (h * h));
    ff = sig * (cm / h - kap / (h * h));
}

__device__ inline double v_at_u(const View &V, int i, int j, int k) {
    return 0.25 * (A3(v, i - 1, j, k) + A3(v, i, j, k) + A3(v, i - 1, j + 1, k) + A3(v, i, j + 1, k));
}
__device__ inline double u_at_v(const View &V, int i, int j, int k) {
    return 0.25 * (A3(u, i, j - 1, k) + A3(u, i + 1, j - 1, k) + A3(u, i, j, k) + A3(u, i + 1, j, k));
}
__device__ inline double explicit_x(const View &V, const double *f, double c, int i, int j, int k, int ilast,
                                    double h, double kap) {
    double fc = f[V.i3(i, j, k)], fw = f[V.i3(i - 1, j, k)];
    double fe = i < ilast ? f[V.i3(i + 1, j, k)] : fc;
    return -(fmax(c, 0.0) * (fc - fw) + fmin(c, 0.0) * (fe - fc)) / h + kap * (fe - 2 * fc + fw) / (h * h);
}
__device__ inline double explicit_y(const View &V, const double *f, double c, int i, int j, int k, double h,
                                    double kap) {
    double fc = f[V.i3(i, j, k)], fs = f[V.i3(i, j - 1, k)], fn = f[V.i3(i, j + 1, k)];
    return -(fmax(c, 0.0) * (fc - fs) + fmin(c, 0.0) * (fn - fc)) / h + kap * (fn - 2 * fc + fs) / (h * h);
}
__device__ inline double source(const View &V, int i, double q) { return i == 1 ? q / (V.jm * V.area) : 0.0; }
__device__ inline double zcond(const View &V, int i, int j, int k) {
    return (k >= 1 && k < V.km) ? V.dt * kDiffV * V.km / (kDepth + A2(eta, i, j)) : 0.0;
}

// The device arrays whose halo rows are exchanged between ranks (fc_model.f90's h_* plans).
enum { H_ETA, H_U, H_V, H_T, H_S, H_UA, H_CC, H_X2, H_X3, kHalos };

}  // namespace

struct fc_gpu {
    View V;
    fc_par *par = nullptr;           // null: the whole grid in this process
    void *halo[kHalos] = {};
    tridi_context ctx = nullptr;
    cudaStream_t stream = nullptr;
    cudaEvent_t ev[2 * 18 + 2];
    int nev = 0;
    tridi_grid grid3, grid2;
    std::vector<double> lines_host;
    char msg[512];
};

namespace {

bool cuda_ok(fc_gpu *g, cudaError_t e, const char *what) {
    if (e == cudaSuccess) return true;
    snprintf(g->msg, sizeof g->msg, "%s: %s", what, cudaGetErrorString(e));
    return false;
}
bool tridi_ok(fc_gpu *g, tridi_status s, const char *what) {
    if (s == TRIDI_SUCCESS) return true;
    snprintf(g->msg, sizeof g->msg, "%s: %s: %s", what, tridi_status_name(s), tridi_error_message());
    return false;
}

template <class F>
void for3(fc_gpu *G, int i0, int i1, int j0, int j1, int k0, int k1, F f) {
    if (i1 < i0 || j1 < j0 || k1 < k0) return;
    dim3 b(64, 4, 1), n((i1 - i0 + 64) / 64, (j1 - j0 + 4) / 4, k1 - k0 + 1);
    k3<<<n, b, 0, G->stream>>>(i0, i1, j0, j1, k0, f);
}
template <class F>
void for2(fc_gpu *G, int i0, int i1, int j0, int j1, F f) {
    for3(G, i0, i1, j0, j1, 0, 0, [=] __device__(int i, int j, int) { f(i, j); });
}

// One solve on the device: MOHID's lines (di, dj) or THOMASZ columns, arrays of the 3D or 2D set.
bool solve(fc_gpu *G, int ndim, tridi_axis axis, int64_t lo0, int64_t lo1, int64_t lo2, int64_t hi0, int64_t hi1,
           int64_t hi2, float *d, double *e, float *f, float *ti, float *x) {
    int64_t lo[3] = {lo0, lo1, lo2}, hi[3] = {hi0, hi1, hi2};
    tridi_arrays a = {d, TRIDI_FLOAT32, e, TRIDI_FLOAT64, f, TRIDI_FLOAT32, ti, TRIDI_FLOAT32, x, TRIDI_FLOAT32};
    if (G->nev + 2 > (int)(sizeof G->ev / sizeof G->ev[0])) {
        snprintf(G->msg, sizeof G->msg, "fc_gpu: more solves per step than events");
        return false;
    }
    cudaEventRecord(G->ev[G->nev++], G->stream);
    if (G->par) {
        // On ranks: lines along J across the ranks (tridi_mpi_solve_device), the others on this rank's rows.
        char m[256] = "";
        int rc = fc_par_solve(G->par, G->ctx, ndim, axis, lo, hi, &a, 1, G->stream, m, (int)sizeof m);
        cudaEventRecord(G->ev[G->nev++], G->stream);
        if (rc != 0) snprintf(G->msg, sizeof G->msg, "%s", m);
        return rc == 0;
    }
    tridi_status s = tridi_solve_device(G->ctx, ndim == 3 ? &G->grid3 : &G->grid2, axis, lo, hi, &a, G->stream);
    cudaEventRecord(G->ev[G->nev++], G->stream);
    return tridi_ok(G, s, "tridi_solve_device");
}

// Halo rows of the listed device arrays from the neighbouring ranks (fc_model.f90's exchange; nothing
// on one rank). The exchange waits for the stream's work on the owned rows.
bool exchange(fc_gpu *G, std::initializer_list<int> which) {
    if (!G->par) return true;
    void *h[kHalos];
    int n = 0;
    for (int w : which) h[n++] = G->halo[w];
    char m[256] = "";
    if (fc_par_exchange(h, n, G->stream, m, (int)sizeof m) != 0) {
        snprintf(G->msg, sizeof G->msg, "halo exchange: %s", m);
        return false;
    }
    return true;
}

void fill_ghosts(fc_gpu *G) {
    View V = G->V;
    int im = V.im, jm = V.jm, km = V.km, jlb = V.jlb, jub = V.jub;
    bool south = V.south, north = V.north;
    for3(G, 0, 1, jlb, jub, 0, km + 1, [=] __device__(int i, int j, int k) { A3(u, i, j, k) = 0; });
    for2(G, 0, im + 1, 0, km + 1, [=] __device__(int i, int k) {
        if (south) A3(u, i, 0, k) = A3(u, i, 1, k);
        if (north) A3(u, i, jm + 1, k) = A3(u, i, jm, k);
        if (south) A3(v, i, 1, k) = 0;
        if (north) A3(v, i, jm + 1, k) = 0;
    });
    for2(G, jlb, jub, 0, km + 1, [=] __device__(int j, int k) {
        A3(v, 0, j, k) = A3(v, 1, j, k);
        A3(v, im + 1, j, k) = A3(v, im, j, k);
        A3(t, im + 1, j, k) = A3(t, im, j, k);
        A3(s, im + 1, j, k) = A3(s, im, j, k);
    });
    // eta(im+1) past the open side is the x half step's radiation condition (flather_row): left alone.
    for2(G, jlb, jub, 0, 0, [=] __device__(int j, int) { A2(eta, 0, j) = A2(eta, 1, j); });
    for2(G, 0, im + 1, 0, 0, [=] __device__(int i, int) {
        if (south) A2(eta, i, 0) = A2(eta, i, 1);
        if (north) A2(eta, i, jm + 1) = A2(eta, i, jm);
    });
}

void face_depths(fc_gpu *G) {
    View V = G->V;
    for2(G, 1, V.im + 1, V.j0, V.j1, [=] __device__(int i, int j) {
        A2(hu, i, j) = i == 1 ? kDepth + A2(eta, 1, j) : kDepth + 0.5 * (A2(eta, i - 1, j) + A2(eta, i, j));
    });
    for2(G, 1, V.im, V.j0, V.j1 + 1, [=] __device__(int i, int j) {
        A2(hv, i, j) = kDepth + 0.5 * (A2(eta, i, j - 1) + A2(eta, i, j));
    });
}

void baroclinic(fc_gpu *G) {
    View V = G->V;
    for2(G, 1, V.im, V.j0 > 1 ? V.j0 - 1 : 1, V.j1, [=] __device__(int i, int j) {
        double dz = (kDepth + A2(eta, i, j)) / V.km, above = 0;
        for (int k = V.km; k >= 1; k--) {
            double rho = kRho0 * (-kAlphaT * (A3(t, i, j, k) - kTAmb) + kBetaS * (A3(s, i, j, k) - kSAmb));
            A3(pb, i, j, k) = kGrav / kRho0 * (above + 0.5 * rho * dz);
            above += rho * dz;
        }
        if (i == V.im)
            for (int k = 0; k <= V.km + 1; k++) A3(pb, V.im + 1, j, k) = A3(pb, V.im, j, k);
    });
    if (V.south)
        for3(G, 0, V.im + 1, 0, 0, 0, V.km + 1, [=] __device__(int i, int, int k) { A3(pb, i, 0, k) = A3(pb, i, 1, k); });
}

// vertical_matrix: d3/e3/f3 of the face columns (ilo:ihi, jlo:jhi), layer depth from hf.
void vertical_matrix(fc_gpu *G, int ilo, int ihi, int jlo, int jhi, double *hf) {
    View V = G->V;
    for3(G, ilo, ihi, jlo, jhi, 1, V.km + 1, [=] __device__(int i, int j, int k) {
        double h = hf[V.i2(i, j)], a = V.sig * kViscV * V.km / h;
        A3(d3, i, j, k) = (float)((k == 1 || k > V.km) ? 0.0 : -a);
        A3(f3, i, j, k) = (float)(k >= V.km ? 0.0 : -a);
        double e = k > V.km ? 1.0 : h / V.km + (k == 1 ? 0.0 : a) + (k == V.km ? 0.0 : a);
        if (k == 1) e += V.sig * kDragCd * A2(ubot, i, j);
        A3(e3, i, j, k) = e;
    });
}

bool vertical_only(fc_gpu *G, int ilo, int ihi, int jlo, int jhi, double *hf, double *f) {
    View V = G->V;
    vertical_matrix(G, ilo, ihi, jlo, jhi, hf);
    for3(G, ilo, ihi, jlo, jhi, 1, V.km + 1, [=] __device__(int i, int j, int k) {
        A3(ti3, i, j, k) = (float)(k > V.km ? 0.0 : hf[V.i2(i, j)] / V.km * (double)A3(x3, i, j, k));
    });
    if (!solve(G, 3, TRIDI_AXIS_Z, ilo, jlo, 1, ihi, jhi, V.km + 1, V.d3, V.e3, V.f3, V.ti3, V.x3)) return false;
    for3(G, ilo, ihi, jlo, jhi, 1, V.km, [=] __device__(int i, int j, int k) { f[V.i3(i, j, k)] = (double)A3(x3, i, j, k); });
    return true;
}

bool vertical_coupled(fc_gpu *G, int ilo, int ihi, int jlo, int jhi, double *hf) {
    View V = G->V;
    vertical_matrix(G, ilo, ihi, jlo, jhi, hf);
    for3(G, ilo, ihi, jlo, jhi, 1, V.km + 1, [=] __device__(int i, int j, int k) {
        double dz = k > V.km ? 0.0 : hf[V.i2(i, j)] / V.km;
        A3(ti3, i, j, k) = (float)(dz * (double)A3(x3, i, j, k));
        A3(ti3b, i, j, k) = (float)dz;
    });
    if (!solve(G, 3, TRIDI_AXIS_Z, ilo, jlo, 1, ihi, jhi, V.km + 1, V.d3, V.e3, V.f3, V.ti3, V.x3)) return false;
    if (!solve(G, 3, TRIDI_AXIS_Z, ilo, jlo, 1, ihi, jhi, V.km + 1, V.d3, V.e3, V.f3, V.ti3b, V.x3b)) return false;
    for2(G, 0, V.im + 1, V.jlb, V.jub, [=] __device__(int i, int j) {
        double sa = 0, sc = 0;
        bool in = i >= ilo && i <= ihi && j >= jlo && j <= jhi;
        if (in) {
            for (int k = 1; k <= V.km; k++) {
                sa += (double)A3(x3, i, j, k);
                sc += (double)A3(x3b, i, j, k);
            }
            double dz = hf[V.i2(i, j)] / V.km;
            sa *= dz;
            sc *= dz;
        }
        A2(ua, i, j) = sa;
        A2(cc, i, j) = sc;
    });
    return true;
}

void continuity(fc_gpu *G, double q, double *tx, double *ty) {
    View V = G->V;
    for2(G, 1, V.im, V.j0, V.j1, [=] __device__(int i, int j) {
        A2(eta, i, j) = A2(eta, i, j) - V.sig * (tx[V.i2(i + 1, j)] - tx[V.i2(i, j)]) / V.dx -
                        V.sig * (ty[V.i2(i, j + 1)] - ty[V.i2(i, j)]) / V.dy + V.sig * source(V, i, q);
    });
}

// On ranks every loop runs over this rank's rows j0..j1 (v faces from v0), as in fc_model.f90; the
// rows of the walls (j = 1 south, jm+1 north) belong to the first and last ranks.
bool half_step_x(fc_gpu *G, double q) {
    View V = G->V;
    int im = V.im, jm = V.jm, km = V.km, j0 = V.j0, j1 = V.j1, v0 = V.j0 > 2 ? V.j0 : 2;
    int vtop = j1 + 1 < jm ? j1 + 1 : jm;
    double sig = V.sig;
    fill_ghosts(G);
    face_depths(G);
    baroclinic(G);
    for2(G, 0, im + 1, V.jlb, V.jub, [=] __device__(int i, int j) {
        double tr = 0;
        if (i >= 1 && i <= im && j >= v0 && j <= vtop)
            for (int k = 1; k <= km; k++) {
                A3(fy, i, j, k) += sig * A3(v, i, j, k) * A2(hv, i, j) / km * V.dx;
                tr += A3(v, i, j, k) * A2(hv, i, j) / km;
            }
        A2(tr, i, j) = tr;
    });
    // v: explicit along J, implicit along I, vertical.
    for3(G, 1, im, v0, j1, 1, km, [=] __device__(int i, int j, int k) {
        A3(g, i, j, k) = A3(v, i, j, k) + sig * (explicit_y(V, V.v, A3(v, i, j, k), i, j, k, V.dy, kViscH) -
                                                 (A3(pb, i, j, k) - A3(pb, i, j - 1, k)) / V.dy -
                                                 kGrav * (A2(eta, i, j) - A2(eta, i, j - 1)) / V.dy);
    });
    for3(G, 1, im + 1, v0, j1, 1, km, [=] __device__(int i, int j, int k) {
        if (i == im + 1) {
            A3(d3, i, j, k) = -1; A3(f3, i, j, k) = 0; A3(e3, i, j, k) = 1; A3(ti3, i, j, k) = 0;
            return;
        }
        double dd, ee, ff;
        ad_row(sig, u_at_v(V, i, j, k), V.dx, kViscH, dd, ee, ff);
        if (i == 1) { ee += dd; dd = 0; }
        A3(d3, i, j, k) = (float)dd; A3(f3, i, j, k) = (float)ff; A3(e3, i, j, k) = ee;
        A3(ti3, i, j, k) = (float)A3(g, i, j, k);
    });
    if (!solve(G, 3, TRIDI_AXIS_X, 1, 2, 1, im + 1, jm, km, V.d3, V.e3, V.f3, V.ti3, V.x3)) return false;
    for2(G, 1, im, v0, j1, [=] __device__(int i, int j) {
        A2(ubot, i, j) = sqrt(A3(v, i, j, 1) * A3(v, i, j, 1) + u_at_v(V, i, j, 1) * u_at_v(V, i, j, 1));
    });
    if (!vertical_only(G, 1, im, v0, j1, V.hv, V.v)) return false;
    if (!exchange(G, {H_V})) return false;
    fill_ghosts(G);
    // u: explicit along J, implicit along I, coupled vertical.
    for3(G, 2, im + 1, j0, j1, 1, km, [=] __device__(int i, int j, int k) {
        A3(g, i, j, k) = A3(u, i, j, k) + sig * (explicit_y(V, V.u, v_at_u(V, i, j, k), i, j, k, V.dy, kViscH) -
                                                 (A3(pb, i, j, k) - A3(pb, i - 1, j, k)) / V.dx);
    });
    for3(G, 1, im + 1, j0, j1, 1, km, [=] __device__(int i, int j, int k) {
        if (i == 1) {
            A3(d3, i, j, k) = 0; A3(f3, i, j, k) = 0; A3(e3, i, j, k) = 1; A3(ti3, i, j, k) = 0;
            return;
        }
        double dd, ee, ff;
        ad_row(sig, A3(u, i, j, k), V.dx, kViscH, dd, ee, ff);
        if (i == im + 1) { ee += ff; ff = 0; }
        A3(d3, i, j, k) = (float)dd; A3(f3, i, j, k) = (float)ff; A3(e3, i, j, k) = ee;
        A3(ti3, i, j, k) = (float)A3(g, i, j, k);
    });
    if (!solve(G, 3, TRIDI_AXIS_X, 1, 1, 1, im + 1, jm, km, V.d3, V.e3, V.f3, V.ti3, V.x3)) return false;
    for2(G, 2, im + 1, j0, j1, [=] __device__(int i, int j) {
        A2(ubot, i, j) = sqrt(A3(u, i, j, 1) * A3(u, i, j, 1) + v_at_u(V, i, j, 1) * v_at_u(V, i, j, 1));
    });
    if (!vertical_coupled(G, 2, im + 1, j0, j1, V.hu)) return false;
    // Elevation along I.
    double alpha = kGrav * sig * sig / (V.dx * V.dx);
    for2(G, 1, im + 1, j0, j1, [=] __device__(int i, int j) {
        if (i == im + 1) {  // flather_row
            double gc = kGrav * 0.5 * V.dt * A2(cc, im + 1, j) / V.dx, c0 = sqrt(kGrav * A2(hu, im + 1, j));
            double uext = q / kLength, eta_ext = 0;
            for (int k = 1; k <= km; k++) eta_ext = eta_ext + A3(pb, im + 1, j, k);
            eta_ext = -eta_ext / (km * kGrav);
            A2(d2, i, j) = (float)(-(gc - 0.5 * c0) / (gc + 0.5 * c0));
            A2(f2, i, j) = 0; A2(e2, i, j) = 1;
            A2(ti2, i, j) = (float)((A2(ua, im + 1, j) - uext + c0 * eta_ext) / (gc + 0.5 * c0));
            return;
        }
        A2(d2, i, j) = (float)(-alpha * A2(cc, i, j));
        A2(f2, i, j) = (float)(-alpha * A2(cc, i + 1, j));
        A2(e2, i, j) = 1 + alpha * (A2(cc, i, j) + A2(cc, i + 1, j));
        A2(ti2, i, j) = (float)(A2(eta, i, j) - sig * (A2(ua, i + 1, j) - A2(ua, i, j)) / V.dx -
                                sig * (A2(tr, i, j + 1) - A2(tr, i, j)) / V.dy + sig * source(V, i, q));
    });
    if (!solve(G, 2, TRIDI_AXIS_X, 1, 1, 0, im + 1, jm, 0, V.d2, V.e2, V.f2, V.ti2, V.x2)) return false;
    for2(G, 1, 1, j0, j1, [=] __device__(int, int j) { A2(eta, im + 1, j) = (double)A2(x2, im + 1, j); });
    for2(G, 0, im + 1, V.jlb, V.jub, [=] __device__(int i, int j) {
        double tn = 0;
        if (i >= 2 && i <= im + 1 && j >= j0 && j <= j1) {
            double grad = ((double)A2(x2, i, j) - (double)A2(x2, i - 1, j)) / V.dx;
            for (int k = 1; k <= km; k++) {
                double uk = (double)A3(x3, i, j, k) - kGrav * sig * grad * (double)A3(x3b, i, j, k);
                A3(u, i, j, k) = uk;
                A3(fx, i, j, k) += sig * uk * A2(hu, i, j) / km * V.dy;
                tn += uk * A2(hu, i, j) / km;
            }
        }
        A2(tn, i, j) = tn;
    });
    continuity(G, q, V.tn, V.tr);
    return exchange(G, {H_ETA});
}

bool half_step_y(fc_gpu *G, double q) {
    View V = G->V;
    int im = V.im, jm = V.jm, km = V.km, j0 = V.j0, j1 = V.j1, v0 = V.j0 > 2 ? V.j0 : 2;
    bool south = V.south, north = V.north;
    double sig = V.sig;
    fill_ghosts(G);
    face_depths(G);
    baroclinic(G);
    for2(G, 0, im + 1, V.jlb, V.jub, [=] __device__(int i, int j) {
        double tr = 0;
        if (i >= 2 && i <= im + 1 && j >= j0 && j <= j1)
            for (int k = 1; k <= km; k++) {
                A3(fx, i, j, k) += sig * A3(u, i, j, k) * A2(hu, i, j) / km * V.dy;
                tr += A3(u, i, j, k) * A2(hu, i, j) / km;
            }
        A2(tr, i, j) = tr;
    });
    // u: explicit along I, implicit along J, vertical.
    for3(G, 2, im + 1, j0, j1, 1, km, [=] __device__(int i, int j, int k) {
        A3(g, i, j, k) = A3(u, i, j, k) + sig * (explicit_x(V, V.u, A3(u, i, j, k), i, j, k, im + 1, V.dx, kViscH) -
                                                 (A3(pb, i, j, k) - A3(pb, i - 1, j, k)) / V.dx -
                                                 kGrav * (A2(eta, i, j) - A2(eta, i - 1, j)) / V.dx);
    });
    for3(G, 2, im + 1, j0, north ? jm + 1 : j1, 1, km, [=] __device__(int i, int j, int k) {
        if (j == jm + 1) {
            A3(d3, i, j, k) = -1; A3(f3, i, j, k) = 0; A3(e3, i, j, k) = 1; A3(ti3, i, j, k) = 0;
            return;
        }
        double dd, ee, ff;
        ad_row(sig, v_at_u(V, i, j, k), V.dy, kViscH, dd, ee, ff);
        if (j == 1) { ee += dd; dd = 0; }
        A3(d3, i, j, k) = (float)dd; A3(f3, i, j, k) = (float)ff; A3(e3, i, j, k) = ee;
        A3(ti3, i, j, k) = (float)A3(g, i, j, k);
    });
    if (!solve(G, 3, TRIDI_AXIS_Y, 2, 1, 1, im + 1, jm + 1, km, V.d3, V.e3, V.f3, V.ti3, V.x3)) return false;
    for2(G, 2, im + 1, j0, j1, [=] __device__(int i, int j) {
        A2(ubot, i, j) = sqrt(A3(u, i, j, 1) * A3(u, i, j, 1) + v_at_u(V, i, j, 1) * v_at_u(V, i, j, 1));
    });
    if (!vertical_only(G, 2, im + 1, j0, j1, V.hu, V.u)) return false;
    if (!exchange(G, {H_U})) return false;
    fill_ghosts(G);
    // v: explicit along I, implicit along J, coupled vertical.
    for3(G, 1, im, v0, j1, 1, km, [=] __device__(int i, int j, int k) {
        A3(g, i, j, k) = A3(v, i, j, k) + sig * (explicit_x(V, V.v, u_at_v(V, i, j, k), i, j, k, im + 1, V.dx, kViscH) -
                                                 (A3(pb, i, j, k) - A3(pb, i, j - 1, k)) / V.dy);
    });
    for3(G, 1, im, south ? 1 : v0, north ? jm + 1 : j1, 1, km, [=] __device__(int i, int j, int k) {
        if (j == 1 || j == jm + 1) {
            A3(d3, i, j, k) = 0; A3(f3, i, j, k) = 0; A3(e3, i, j, k) = 1; A3(ti3, i, j, k) = 0;
            return;
        }
        double dd, ee, ff;
        ad_row(sig, A3(v, i, j, k), V.dy, kViscH, dd, ee, ff);
        A3(d3, i, j, k) = (float)dd; A3(f3, i, j, k) = (float)ff; A3(e3, i, j, k) = ee;
        A3(ti3, i, j, k) = (float)A3(g, i, j, k);
    });
    if (!solve(G, 3, TRIDI_AXIS_Y, 1, 1, 1, im, jm + 1, km, V.d3, V.e3, V.f3, V.ti3, V.x3)) return false;
    for2(G, 1, im, v0, j1, [=] __device__(int i, int j) {
        A2(ubot, i, j) = sqrt(A3(v, i, j, 1) * A3(v, i, j, 1) + u_at_v(V, i, j, 1) * u_at_v(V, i, j, 1));
    });
    if (!vertical_coupled(G, 1, im, v0, j1, V.hv)) return false;
    if (!exchange(G, {H_UA, H_CC})) return false;
    double alpha = kGrav * sig * sig / (V.dy * V.dy);
    for2(G, 1, im, j0, north ? jm + 1 : j1, [=] __device__(int i, int j) {
        if (j == jm + 1) {
            A2(d2, i, j) = 0; A2(f2, i, j) = 0; A2(e2, i, j) = 1; A2(ti2, i, j) = 0;
            return;
        }
        A2(d2, i, j) = (float)(-alpha * A2(cc, i, j));
        A2(f2, i, j) = (float)(-alpha * A2(cc, i, j + 1));
        A2(e2, i, j) = 1 + alpha * (A2(cc, i, j) + A2(cc, i, j + 1));
        A2(ti2, i, j) = (float)(A2(eta, i, j) - sig * (A2(tr, i + 1, j) - A2(tr, i, j)) / V.dx -
                                sig * (A2(ua, i, j + 1) - A2(ua, i, j)) / V.dy + sig * source(V, i, q));
    });
    if (!solve(G, 2, TRIDI_AXIS_Y, 1, 1, 0, im, jm + 1, 0, V.d2, V.e2, V.f2, V.ti2, V.x2)) return false;
    if (!exchange(G, {H_X2})) return false;
    for2(G, 0, im + 1, V.jlb, V.jub, [=] __device__(int i, int j) {
        double tn = 0;
        if (i >= 1 && i <= im && j >= v0 && j <= j1) {
            double grad = ((double)A2(x2, i, j) - (double)A2(x2, i, j - 1)) / V.dy;
            for (int k = 1; k <= km; k++) {
                double vk = (double)A3(x3, i, j, k) - kGrav * sig * grad * (double)A3(x3b, i, j, k);
                A3(v, i, j, k) = vk;
                A3(fy, i, j, k) += sig * vk * A2(hv, i, j) / km * V.dx;
                tn += vk * A2(hv, i, j) / km;
            }
        }
        A2(tn, i, j) = tn;
    });
    // The face above the last row, v from its owner: its flux and transport as the owner computed them.
    if (!exchange(G, {H_V})) return false;
    if (j1 < jm)
        for2(G, 1, im, j1 + 1, j1 + 1, [=] __device__(int i, int j) {
            for (int k = 1; k <= km; k++) {
                A3(fy, i, j, k) += sig * A3(v, i, j, k) * A2(hv, i, j) / km * V.dx;
                A2(tn, i, j) += A3(v, i, j, k) * A2(hv, i, j) / km;
            }
        });
    continuity(G, q, V.tr, V.tn);
    return true;
}

__device__ inline double xcond(const View &V, int ii, int jj) {
    return (ii > 1 && ii <= V.im) ? V.dt * kDiffH * A2(hu, ii, jj) / V.km * V.dy / V.dx / V.area : 0.0;
}
__device__ inline double ycond(const View &V, int ii, int jj) {
    return (jj > 1 && jj <= V.jm) ? V.dt * kDiffH * A2(hv, ii, jj) / V.km * V.dx / V.dy / V.area : 0.0;
}

// transport of one tracer c; the content leaving through the east side per line (j, k) goes to
// lines (summed on the host, this rank's rows).
bool transport(fc_gpu *G, double *c, double c_river, double c_out, double q) {
    View V = G->V;
    int im = V.im, jm = V.jm, km = V.km, j0 = V.j0, j1 = V.j1;
    bool north = V.north;
    double dt = V.dt, a = V.area;
    for3(G, 1, im, j0, j1, 1, km, [=] __device__(int i, int j, int k) {
        double v0 = (kDepth + A2(eta_start, i, j)) / km;
        double src = i == 1 ? dt * q / (jm * km * a) : 0.0;
        A3(v0, i, j, k) = v0;
        A3(v1, i, j, k) = v0 - (A3(fx, i + 1, j, k) - A3(fx, i, j, k)) / a + src;
    });
    // Along I.
    for3(G, 1, im + 1, j0, j1, 1, km, [=] __device__(int i, int j, int k) {
        if (i == im + 1) {
            A3(d3, i, j, k) = 0; A3(f3, i, j, k) = 0; A3(e3, i, j, k) = 1; A3(ti3, i, j, k) = (float)c_out;
            return;
        }
        double ql = A3(fx, i, j, k) / a, qr = A3(fx, i + 1, j, k) / a;
        double src = i == 1 ? dt * q / (jm * km * a) : 0.0;
        A3(d3, i, j, k) = (float)(-(fmax(ql, 0.0) + xcond(V, i, j)));
        A3(f3, i, j, k) = (float)(fmin(qr, 0.0) - xcond(V, i + 1, j));
        A3(e3, i, j, k) = A3(v1, i, j, k) + fmax(qr, 0.0) + xcond(V, i + 1, j) - fmin(ql, 0.0) + xcond(V, i, j);
        A3(ti3, i, j, k) = (float)(A3(v0, i, j, k) * c[V.i3(i, j, k)] + src * c_river);
    });
    if (!solve(G, 3, TRIDI_AXIS_X, 1, 1, 1, im + 1, jm, km, V.d3, V.e3, V.f3, V.ti3, V.x3)) return false;
    for3(G, j0, j1, 1, km, 0, 0, [=] __device__(int j, int k, int) {
        double fl = 0;
        for (int i = 1; i <= im; i++) {
            double cw = (double)A3(x3, i, j, k), ce = i < im ? (double)A3(x3, i + 1, j, k) : c_out;
            double qr = A3(fx, i + 1, j, k) / a;
            double fr = fmax(qr, 0.0) * cw + fmin(qr, 0.0) * ce - xcond(V, i + 1, j) * (ce - cw);
            double src = i == 1 ? dt * q / (jm * km * a) : 0.0;
            A3(g, i, j, k) = (A3(v0, i, j, k) * c[V.i3(i, j, k)] + src * c_river - (fr - fl)) / A3(v1, i, j, k);
            fl = fr;
        }
        V.lines[V.line(j, k)] = fl * a;
    });
    for3(G, 1, im, j0, j1, 1, km, [=] __device__(int i, int j, int k) {
        c[V.i3(i, j, k)] = A3(g, i, j, k);
        A3(v0, i, j, k) = A3(v1, i, j, k);
        A3(v1, i, j, k) = A3(v1, i, j, k) - (A3(fy, i, j + 1, k) - A3(fy, i, j, k)) / a;
    });
    // Along J.
    for3(G, 1, im, j0, north ? jm + 1 : j1, 1, km, [=] __device__(int i, int j, int k) {
        if (j == jm + 1) {
            A3(d3, i, j, k) = 0; A3(f3, i, j, k) = 0; A3(e3, i, j, k) = 1; A3(ti3, i, j, k) = 0;
            return;
        }
        double ql = A3(fy, i, j, k) / a, qr = A3(fy, i, j + 1, k) / a;
        A3(d3, i, j, k) = (float)(-(fmax(ql, 0.0) + ycond(V, i, j)));
        A3(f3, i, j, k) = (float)(fmin(qr, 0.0) - ycond(V, i, j + 1));
        A3(e3, i, j, k) = A3(v1, i, j, k) + fmax(qr, 0.0) + ycond(V, i, j + 1) - fmin(ql, 0.0) + ycond(V, i, j);
        A3(ti3, i, j, k) = (float)(A3(v0, i, j, k) * c[V.i3(i, j, k)]);
    });
    if (!solve(G, 3, TRIDI_AXIS_Y, 1, 1, 1, im, jm + 1, km, V.d3, V.e3, V.f3, V.ti3, V.x3)) return false;
    // The fluxes through the faces between ranks read the answers on both sides.
    if (!exchange(G, {H_X3})) return false;
    for3(G, 1, im, 1, km, 0, 0, [=] __device__(int i, int k, int) {
        double fl = 0;
        if (j0 > 1) {  // the south face of the first row: the north face of the row below
            double cw = (double)A3(x3, i, j0 - 1, k), ce = (double)A3(x3, i, j0, k);
            double qr = A3(fy, i, j0, k) / a;
            fl = fmax(qr, 0.0) * cw + fmin(qr, 0.0) * ce - ycond(V, i, j0) * (ce - cw);
        }
        for (int j = j0; j <= j1; j++) {
            double cw = (double)A3(x3, i, j, k), ce = j < jm ? (double)A3(x3, i, j + 1, k) : cw;
            double qr = A3(fy, i, j + 1, k) / a;
            double fr = fmax(qr, 0.0) * cw + fmin(qr, 0.0) * ce - ycond(V, i, j + 1) * (ce - cw);
            A3(g, i, j, k) = (A3(v0, i, j, k) * c[V.i3(i, j, k)] - (fr - fl)) / A3(v1, i, j, k);
            fl = fr;
        }
    });
    for3(G, 1, im, j0, j1, 1, km, [=] __device__(int i, int j, int k) { c[V.i3(i, j, k)] = A3(g, i, j, k); });
    // Along K.
    for2(G, 1, im, j0, j1, [=] __device__(int i, int j) {
        A3(ww, i, j, 0) = 0;
        double vol1 = (kDepth + A2(eta, i, j)) / km;
        for (int k = 1; k <= km; k++) A3(ww, i, j, k) = A3(ww, i, j, k - 1) + A3(v1, i, j, k) - vol1;
        A3(ww, i, j, km) = 0;
    });
    for3(G, 1, im, j0, j1, 1, km + 1, [=] __device__(int i, int j, int k) {
        if (k > km) {
            A3(d3, i, j, k) = 0; A3(f3, i, j, k) = 0; A3(e3, i, j, k) = 1; A3(ti3, i, j, k) = 0;
            return;
        }
        double kl = zcond(V, i, j, k - 1), kr = zcond(V, i, j, k), vol1 = (kDepth + A2(eta, i, j)) / km;
        A3(d3, i, j, k) = (float)(-(fmax(A3(ww, i, j, k - 1), 0.0) + kl));
        A3(f3, i, j, k) = (float)(fmin(A3(ww, i, j, k), 0.0) - kr);
        A3(e3, i, j, k) = vol1 + fmax(A3(ww, i, j, k), 0.0) + kr - fmin(A3(ww, i, j, k - 1), 0.0) + kl;
        A3(ti3, i, j, k) = (float)(A3(v1, i, j, k) * c[V.i3(i, j, k)]);
    });
    if (!solve(G, 3, TRIDI_AXIS_Z, 1, j0, 1, im, j1, km + 1, V.d3, V.e3, V.f3, V.ti3, V.x3)) return false;
    for2(G, 1, im, j0, j1, [=] __device__(int i, int j) {
        double fl = 0, vol1 = (kDepth + A2(eta, i, j)) / km;
        for (int k = 1; k <= km; k++) {
            double cw = (double)A3(x3, i, j, k), ce = k < km ? (double)A3(x3, i, j, k + 1) : cw;
            double kr = zcond(V, i, j, k), w = A3(ww, i, j, k);
            double fr = fmax(w, 0.0) * cw + fmin(w, 0.0) * ce - kr * (ce - cw);
            A3(g, i, j, k) = (A3(v1, i, j, k) * c[V.i3(i, j, k)] - (fr - fl)) / vol1;
            fl = fr;
        }
    });
    for3(G, 1, im, j0, j1, 1, km, [=] __device__(int i, int j, int k) { c[V.i3(i, j, k)] = A3(g, i, j, k); });
    return true;
}

// Sum of the per-line values (this rank's rows j0..j1, k = 1..km) brought back to the host.
bool line_sum(fc_gpu *G, double *sum) {
    View &V = G->V;
    size_t n = (size_t)V.nj * (V.km + 2);
    if (!cuda_ok(G, cudaMemcpyAsync(G->lines_host.data(), V.lines, n * sizeof(double), cudaMemcpyDeviceToHost,
                                    G->stream), "fc_gpu: copy of the line sums"))
        return false;
    if (!cuda_ok(G, cudaStreamSynchronize(G->stream), "fc_gpu: step")) return false;
    double s = 0;
    for (int k = 1; k <= V.km; k++)
        for (int j = V.j0; j <= V.j1; j++) s += G->lines_host[V.line(j, k)];
    *sum = s;
    return true;
}

}  // namespace

extern "C" {

// Creates the resident model: a CUDA context of tridi, device copies of every array over this rank's
// rows. Returns 0, or 77 when there is no usable GPU, or 1 with the reason in msg. par (null: one
// process holds the whole grid), jlo..jhi (this rank's rows) and node_rank (its index among the ranks of
// its node: GPU node_rank modulo the node's GPUs, so ranks share GPUs when there are fewer) come from
// fc_model.f90. On ranks the halo rows of the exchanged arrays move by tridi's device halo plans.
int fc_gpu_create(fc_gpu **out, int im, int jm, int km, double dt, void *par, int jlo, int jhi, int node_rank,
                  char *msg, int msglen) {
    fc_gpu *G = new fc_gpu();
    *out = G;
    G->msg[0] = 0;
    G->par = (fc_par *)par;
    View &V = G->V;
    if (!G->par) { jlo = 1; jhi = jm; }
    V.im = im; V.jm = jm; V.km = km; V.ni = im + 2;
    V.j0 = jlo; V.j1 = jhi; V.jlb = jlo - 1; V.jub = jhi + 1; V.nj = V.jub - V.jlb + 1;
    V.south = jlo == 1; V.north = jhi == jm;
    V.dx = 7000.0 / im; V.dy = 7000.0 / jm; V.area = V.dx * V.dy; V.dt = dt; V.sig = 0.5 * dt;
    int rc = 1, ndev = 0;
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CUDA;
    if (G->par && cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0) {
        cfg.device = node_rank % ndev;
        cudaSetDevice(cfg.device);
    }
    tridi_status st = tridi_create(&G->ctx, &cfg);
    size_t n2 = (size_t)V.ni * V.nj, n3 = n2 * (km + 2);
    double **d2s[] = {&V.eta, &V.eta_start, &V.hu, &V.hv, &V.ubot, &V.ua, &V.cc, &V.tr, &V.tn, &V.e2};
    double **d3s[] = {&V.u, &V.v, &V.t, &V.s, &V.fx, &V.fy, &V.g, &V.pb, &V.v0, &V.v1, &V.ww, &V.e3};
    float **f3s[] = {&V.d3, &V.f3, &V.ti3, &V.x3, &V.ti3b, &V.x3b};
    float **f2s[] = {&V.d2, &V.f2, &V.ti2, &V.x2};
    struct { int ndim; void *p; tridi_dtype t; } halos[kHalos] = {
        {2, nullptr, TRIDI_FLOAT64}, {3, nullptr, TRIDI_FLOAT64}, {3, nullptr, TRIDI_FLOAT64},
        {3, nullptr, TRIDI_FLOAT64}, {3, nullptr, TRIDI_FLOAT64}, {2, nullptr, TRIDI_FLOAT64},
        {2, nullptr, TRIDI_FLOAT64}, {2, nullptr, TRIDI_FLOAT32}, {3, nullptr, TRIDI_FLOAT32}};
    static const char *const transports[] = {"auto", "ipc", "cuda-aware", "staged", "nccl"};
    int transport = 0;
    if (st == TRIDI_ERROR_NO_DEVICE) {
        rc = 77;
        tridi_ok(G, st, "tridi_create");
        goto done;
    }
    if (!tridi_ok(G, st, "tridi_create")) goto done;
    if (!cuda_ok(G, cudaStreamCreateWithFlags(&G->stream, cudaStreamNonBlocking), "cudaStreamCreate")) goto done;
    for (auto &e : G->ev)
        if (!cuda_ok(G, cudaEventCreate(&e), "cudaEventCreate")) goto done;
    for (auto p : d2s)
        if (!cuda_ok(G, cudaMalloc(p, n2 * sizeof(double)), "cudaMalloc") ||
            !cuda_ok(G, cudaMemset(*p, 0, n2 * sizeof(double)), "cudaMemset"))
            goto done;
    for (auto p : d3s)
        if (!cuda_ok(G, cudaMalloc(p, n3 * sizeof(double)), "cudaMalloc") ||
            !cuda_ok(G, cudaMemset(*p, 0, n3 * sizeof(double)), "cudaMemset"))
            goto done;
    for (auto p : f3s)
        if (!cuda_ok(G, cudaMalloc(p, n3 * sizeof(float)), "cudaMalloc") ||
            !cuda_ok(G, cudaMemset(*p, 0, n3 * sizeof(float)), "cudaMemset"))
            goto done;
    for (auto p : f2s)
        if (!cuda_ok(G, cudaMalloc(p, n2 * sizeof(float)), "cudaMalloc") ||
            !cuda_ok(G, cudaMemset(*p, 0, n2 * sizeof(float)), "cudaMemset"))
            goto done;
    if (!cuda_ok(G, cudaMalloc(&V.lines, n3 / V.ni * sizeof(double)), "cudaMalloc") ||
        !cuda_ok(G, cudaMemset(V.lines, 0, n3 / V.ni * sizeof(double)), "cudaMemset"))
        goto done;
    G->lines_host.assign(n3 / V.ni, 0.0);
    G->grid3.ndim = 3;
    G->grid2.ndim = 2;
    for (int a = 0; a < 3; a++) {
        G->grid3.lbound[a] = 0;
        G->grid2.lbound[a] = 0;
    }
    G->grid3.lbound[1] = V.jlb; G->grid2.lbound[1] = V.jlb;
    G->grid3.ubound[0] = im + 1; G->grid3.ubound[1] = V.jub; G->grid3.ubound[2] = km + 1;
    G->grid2.ubound[0] = im + 1; G->grid2.ubound[1] = V.jub; G->grid2.ubound[2] = 0;
    if (G->par) {
        halos[H_ETA].p = V.eta; halos[H_U].p = V.u; halos[H_V].p = V.v; halos[H_T].p = V.t; halos[H_S].p = V.s;
        halos[H_UA].p = V.ua; halos[H_CC].p = V.cc; halos[H_X2].p = V.x2; halos[H_X3].p = V.x3;
        for (int h = 0; h < kHalos; h++) {
            char m[256] = "";
            if (fc_par_halo_create(G->par, halos[h].ndim, halos[h].p, (int)halos[h].t, 1, &G->halo[h], &transport, m,
                                   (int)sizeof m) != 0) {
                snprintf(G->msg, sizeof G->msg, "device halo plan: %s", m);
                goto done;
            }
        }
        if (node_rank == 0)
            printf("flow_channel: gpu-resident on ranks: rank's GPU %d of %d on its node, device halos by %s, "
                   "sweeps along J by tridi_mpi_solve_device\n", cfg.device, ndev,
                   transport >= 0 && transport <= 4 ? transports[transport] : "?");
    }
    rc = 0;
done:
    if (rc != 0 && msg && msglen > 0) snprintf(msg, (size_t)msglen, "%s", G->msg);
    return rc;
}

// Host <-> device copies of the prognostic fields (whole arrays, halos included).
int fc_gpu_put(fc_gpu *G, const double *eta, const double *u, const double *v, const double *t, const double *s) {
    View &V = G->V;
    size_t n2 = (size_t)V.ni * V.nj * sizeof(double), n3 = n2 * (V.km + 2);
    // On the step's stream (non-blocking), waited for: a plain cudaMemcpy from pageable memory may return
    // before its DMA lands, and would not wait for a step still running on that stream.
    const cudaMemcpyKind h2d = cudaMemcpyHostToDevice;
    bool ok = cuda_ok(G, cudaMemcpyAsync(V.eta, eta, n2, h2d, G->stream), "put eta") &&
              cuda_ok(G, cudaMemcpyAsync(V.u, u, n3, h2d, G->stream), "put u") &&
              cuda_ok(G, cudaMemcpyAsync(V.v, v, n3, h2d, G->stream), "put v") &&
              cuda_ok(G, cudaMemcpyAsync(V.t, t, n3, h2d, G->stream), "put t") &&
              cuda_ok(G, cudaMemcpyAsync(V.s, s, n3, h2d, G->stream), "put s") &&
              cuda_ok(G, cudaStreamSynchronize(G->stream), "put");
    return ok ? 0 : 1;
}

int fc_gpu_get(fc_gpu *G, double *eta, double *u, double *v, double *t, double *s) {
    View &V = G->V;
    size_t n2 = (size_t)V.ni * V.nj * sizeof(double), n3 = n2 * (V.km + 2);
    bool ok = cuda_ok(G, cudaStreamSynchronize(G->stream), "step") &&
              cuda_ok(G, cudaMemcpy(eta, V.eta, n2, cudaMemcpyDeviceToHost), "get eta") &&
              cuda_ok(G, cudaMemcpy(u, V.u, n3, cudaMemcpyDeviceToHost), "get u") &&
              cuda_ok(G, cudaMemcpy(v, V.v, n3, cudaMemcpyDeviceToHost), "get v") &&
              cuda_ok(G, cudaMemcpy(t, V.t, n3, cudaMemcpyDeviceToHost), "get t") &&
              cuda_ok(G, cudaMemcpy(s, V.s, n3, cudaMemcpyDeviceToHost), "get s");
    return ok ? 0 : 1;
}

// One step with discharge q. Returns the outflow volume (m3), the heat and salt that left through the
// east side (content x m3), and the GPU time of the solves (ms, CUDA events).
int fc_gpu_step(fc_gpu *G, double q, double *outflow_volume, double *heat_out, double *salt_out, double *solver_ms,
                char *msg, int msglen) {
    View V = G->V;
    G->nev = 0;
    cudaMemcpyAsync(V.eta_start, V.eta, (size_t)V.ni * V.nj * sizeof(double), cudaMemcpyDeviceToDevice, G->stream);
    size_t n3 = (size_t)V.ni * V.nj * (V.km + 2) * sizeof(double);
    cudaMemsetAsync(V.fx, 0, n3, G->stream);
    cudaMemsetAsync(V.fy, 0, n3, G->stream);
    bool ok = half_step_x(G, q) && half_step_y(G, q);
    if (ok) {
        fill_ghosts(G);
        // Outflow: the east faces' volumes, summed per line like the budgets.
        View W = V;
        for3(G, V.j0, V.j1, 1, V.km, 0, 0, [=] __device__(int j, int k, int) {
            W.lines[W.line(j, k)] = W.fx[W.i3(W.im + 1, j, k)];
        });
        ok = line_sum(G, outflow_volume) && transport(G, V.t, kTRiver, kTAmb, q) && line_sum(G, heat_out) &&
             transport(G, V.s, kSRiver, kSAmb, q) && line_sum(G, salt_out) &&
             exchange(G, {H_T, H_S, H_ETA});  // what the next step reads from the neighbours' last rows
    }
    if (ok) ok = cuda_ok(G, cudaGetLastError(), "fc_gpu kernels") && tridi_ok(G, tridi_synchronize(G->ctx), "tridi");
    double total = 0;
    for (int e = 0; ok && e + 1 < G->nev; e += 2) {
        float ms = 0;
        ok = cuda_ok(G, cudaEventElapsedTime(&ms, G->ev[e], G->ev[e + 1]), "cudaEventElapsedTime");
        total += ms;
    }
    *solver_ms = total;
    if (!ok && msg && msglen > 0) snprintf(msg, (size_t)msglen, "%s", G->msg);
    return ok ? 0 : 1;
}

void fc_gpu_destroy(fc_gpu *G) {
    if (!G) return;
    View &V = G->V;
    void *ptrs[] = {V.eta, V.eta_start, V.hu, V.hv, V.ubot, V.ua, V.cc, V.tr, V.tn, V.e2, V.u, V.v, V.t, V.s,
                    V.fx, V.fy, V.g, V.pb, V.v0, V.v1, V.ww, V.e3, V.d3, V.f3, V.ti3, V.x3, V.ti3b, V.x3b,
                    V.d2, V.f2, V.ti2, V.x2, V.lines};
    for (void *p : ptrs)
        if (p) cudaFree(p);
    for (void *h : G->halo) fc_par_halo_destroy(h);
    for (auto &e : G->ev)
        if (e) cudaEventDestroy(e);
    if (G->stream) cudaStreamDestroy(G->stream);
    tridi_destroy(G->ctx);
    delete G;
}

}  // extern "C"
