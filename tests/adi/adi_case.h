/* Random ADI problems for the tests: geometry (lower bounds, halos, box inside), boundary mix, operator
 * (scheme, axes, theta, spacing, diffusivity constant or per cell, mean, upwind velocities), type. */
#ifndef TRIDI_ADI_CASE_H
#define TRIDI_ADI_CASE_H

#include "adi_ref.h"
#include "testutil.h"

typedef struct adi_case {
    ref_problem ref;          /* the oracle's view; its kappa/vel point at the double arrays below */
    tridi_dtype dtype;
    int64_t cells;
    double *u0;               /* initial field, values already rounded to dtype; halos hold the boundary
                                 values, NaN across zero-flux faces (never to be read) */
    double *kappa, *vel[3];   /* rounded to dtype; NULL when absent */
    void *kappa_t, *vel_t[3]; /* the same in dtype, for the library */
    double dt;
    char label[256];
} adi_case;

/* One solve of arrays a (all of x's type, on the host or the device) through a plan of the ADI solves'
 * contract, FAST arithmetic and all or nothing (docs/decisions/031): what tridi_adi_sweep must equal bit
 * for bit. The plan's status (device plans: a synchronous verdict). */
tridi_status adi_contract_solve(tridi_context ctx, const tridi_grid *g, tridi_axis axis, const int64_t lo[3],
                                const int64_t hi[3], tridi_memory memory, const tridi_arrays *a);

/* dtype < 0: random. ndim 0: random 2 or 3. nlong > 0: one random axis gets nlong / 2 .. nlong cells
 * (lines that the GPU's partitioned solves cut into many chunks), the others their usual few; nlong < 0:
 * as for -nlong, a multiple of 32 cells (lines whose chunks are all full, decision 034). Returns 0 on
 * success. */
int adi_case_random(adi_case *c, uint64_t *rng, int dtype, int ndim, int64_t nlong);
/* adi_case_random with the long axis x (nlong > 0): the x lines of rows of their own that the GPU stages
 * through shared memory, up to the fused sweeps' longest (decision 048). */
int adi_case_random_long_x(adi_case *c, uint64_t *rng, int dtype, int ndim, int64_t nlong);
/* adi_case_random with lines of exactly n cells along axis (0-2; a 3D box for axis 2) and the heat operator
 * (a constant diffusivity, no velocity): lines of shared rows, x lines of whole chunks solved at fixed
 * offsets (decision 082), long y/z lines eight a block (decision 083). */
int adi_case_random_heat(adi_case *c, uint64_t *rng, int dtype, int ndim, int axis, int64_t n);
/* adi_case_random with lines of exactly n cells along axis (0-2; a 3D box for axis 2), the operator drawn as
 * adi_case_random draws it (a kappa field, velocities, or neither). */
int adi_case_random_axis(adi_case *c, uint64_t *rng, int dtype, int ndim, int axis, int64_t n);
/* A 3D box of x lines of exactly n cells, a kappa field and a velocity on every axis, three axes swept, y
 * 6-24 cells wide: most x lines are the operator's interior lines, whose rows the GPU forms without face
 * choices (decision 080). */
int adi_case_random_full_x(adi_case *c, uint64_t *rng, int dtype, int64_t n);
void adi_case_free(adi_case *c);
/* A caller-diagonal sweep's problem: a random case, on its grid a random system of its type (rhs and x
 * in sys; *bytes the size of each of its arrays) and a random axis. Returns 0 on success. */
int adi_sweep_case(adi_case *c, tu_system *sys, int *axis, size_t *bytes, uint64_t *rng);
/* Newly allocated copy of n doubles in type t. */
void *adi_to_type(const double *src, int64_t n, tridi_dtype t);
/* Max over the box of |x - ref| / max(max|ref|, 1e-300); x in type t. Also counts cells outside the box
 * that differ bitwise from before (before in type t). */
double adi_box_error(const adi_case *c, const void *x, const double *ref, const void *before, int64_t *outside_bad);

#endif
