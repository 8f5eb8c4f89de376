/* MOHID's Thomas routines as MOHID computes them (MOHIDBase1/ModuleFunctions.F90, read, not copied): the
 * one C reference of tridi's tests and benchmarks for MOHID's arithmetic (docs/decisions/040). Compiled
 * with -ffp-contract=off (tests/common/mohid_reference.cmake), as MOHID's gfortran build for baseline
 * x86-64 has no fused multiply-add: each product rounded, then the sum; two divisions per unknown.
 *
 * Original routines (THOMAS_2D, THOMAS_3D, THOMASZ): the pivot AUX, W and G in double. NewType routines
 * (THOMAS_2D_NewType, THOMAS_3D_*_NewType, THOMASZ_NewType*): AUX is a default real, so in a build of
 * real(4) upper values AUX = e + d*W(m-1) is rounded to float, W(m) = -(F/AUX) divided in float, G(m) =
 * (Ti - D*G(m-1))/AUX divided in double; with real(8) upper values the two are the same.
 * Arrays are Fortran-ordered with allocated bounds lb..ub per axis; boxes are inclusive. */
#ifndef TRIDI_MOHID_REFERENCE_H
#define TRIDI_MOHID_REFERENCE_H
#include "tridi.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mohid_grid {
    int64_t lb[3], ub[3];
} mohid_grid;

/* MOHID's mixed-kind Original THOMAS_3D (i0_j1, i1_j0) and THOMASZ (D, F, Ti, ANSWER float; E double),
 * in MOHID's loop order, sequential or with OpenMP over the outer K slab (X/Y sweeps) or J row (Z sweep),
 * as MOHID parallelises them (the benchmarks' baseline). axis 0: lines along I; 1: along J; 2: along K.
 * threads <= 1: sequential. */
void mohid_thomas(const mohid_grid *g, int axis, const int64_t lo[3], const int64_t hi[3], const float *D,
                  const double *E, const float *F, const float *Ti, float *X, int threads);

/* One line of n unknowns, element m of each array at [m*stride] of its type; newtype: the NewType pivot
 * (float where upper is float). X gets the answers, each rounded to X's type before it feeds the unknown
 * above; W and G (n doubles each) MOHID's VECW and VECG. Returns 0, or m+1 for the first unknown m whose
 * pivot is zero (MOHID skips such an unknown; the answers are then meaningless). */
int64_t mohid_line(int64_t n, int64_t stride, const tridi_arrays *a, int64_t first, int newtype, double *W,
                   double *G);

/* The same, the first unknown's coefficients read at element first_in (MOHID's first-row quirks: THOMASZ
 * reads them at K = 1, THOMAS_2D at a cell of its own); its answer still goes to first. */
int64_t mohid_line_from(int64_t n, int64_t stride, const tridi_arrays *a, int64_t first, int64_t first_in,
                        int newtype, double *W, double *G);

/* MOHID's Original routines' one line in mixed kinds (D, F, Ti, X float; E double), each pointer at the
 * line's first answer cell, first_in elements from there the first unknown's coefficients: the Fortran
 * tests' reference (tests/fortran/mohid_reference.f90, bind(C)). Returns as mohid_line. */
int64_t mohid_line_mixed(int64_t n, int64_t stride, int64_t first_in, const float *D, const double *E, const float *F,
                         const float *Ti, float *X);

/* Every line of the box lo..hi along axis of a grid (2D or 3D) by mohid_line; cells outside the box are
 * not written. Returns the number of lines with a zero pivot. */
int64_t mohid_solve(const tridi_grid *g, tridi_axis axis, const int64_t lo[3], const int64_t hi[3],
                    const tridi_arrays *a, int newtype);

#ifdef __cplusplus
}
#endif
#endif
