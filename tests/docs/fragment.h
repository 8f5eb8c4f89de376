/* The names the C fragments of README.md and the docs use for a model's state (sizes, arrays, a
 * context), declared so that a fragment compiles inside a function (check_docs.py). A fragment's own
 * declarations of the same names take precedence. */
#ifndef TRIDI_DOCS_FRAGMENT_H
#define TRIDI_DOCS_FRAGMENT_H
extern int nx, ny, nz, steps;
extern int64_t IMAX, JMAX, KMAX;
extern float *D, *F, *Ti, *X;
extern double *E;
extern tridi_context ctx;
extern tridi_grid grid;
extern int64_t lo[3], hi[3];
extern double h, dt;
extern double *w; /* a grid-shaped array of velocities */
extern void *field;
#endif
