/* MOHID-style reference Thomas routines for benchmarks: the loop order and types of MOHID's Original
 * THOMAS_3D (i0_j1, i1_j0) and THOMASZ (D, F, Ti, ANSWER float; E double; VECG/VECW double), sequential
 * or with OpenMP over the outer K slab (X/Y sweeps) or J row (Z sweep), as MOHID parallelises them.
 * Arrays are Fortran-ordered with allocated bounds lb..ub per axis; the box is inclusive. */
#ifndef TRIDI_MOHID_REFERENCE_H
#define TRIDI_MOHID_REFERENCE_H
#include <stdint.h>

typedef struct mohid_grid {
    int64_t lb[3], ub[3];
} mohid_grid;

/* axis 0: lines along I (THOMAS_3D di=1,dj=0); 1: along J (di=0,dj=1); 2: along K (THOMASZ).
 * threads <= 1: sequential. */
void mohid_thomas(const mohid_grid *g, int axis, const int64_t lo[3], const int64_t hi[3], const float *D,
                  const double *E, const float *F, const float *Ti, float *X, int threads);
#endif
