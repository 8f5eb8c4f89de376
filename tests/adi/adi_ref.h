/* Oracle for the ADI tests: one step computed in double, line by line, from face fluxes. The
 * tridiagonal coefficients are recovered from the flux function by linearity (L applied to unit
 * values), not from the library's coefficient formulas, so a slip in either shows as a mismatch. */
#ifndef TRIDI_ADI_REF_H
#define TRIDI_ADI_REF_H

#include "tridi.h"

typedef struct ref_problem {
    tridi_grid grid;          /* ndim 2 grids use lbound[2] = ubound[2] = 1 */
    int64_t lo[3], hi[3];     /* [2] = 1 on 2D grids */
    tridi_adi_operator op;    /* naxes resolved; its pointers are ignored */
    const double *kappa;      /* full-grid double copies, or NULL */
    const double *vel[3];
} ref_problem;

/* One step of length dt on u (full grid, double), in place over the box. */
void ref_step(const ref_problem *p, double *u, double dt);
/* Full-grid cell count and offset of Fortran indices. */
int64_t ref_cells(const tridi_grid *g);
int64_t ref_index(const tridi_grid *g, int64_t i, int64_t j, int64_t k);

#endif
