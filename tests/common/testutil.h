/* Test utilities shared by the C, CUDA, ADI and MPI tests: the reference Thomas solver in MOHID's
 * convention, random diagonally dominant systems, poisoning and comparisons. */
#ifndef TRIDI_TESTUTIL_H
#define TRIDI_TESTUTIL_H

#include "tridi.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seed from TRIDI_SEED (to replay a failure) or the clock; printed so every run can be repeated. */
uint64_t tu_seed(const char *test_name);
/* xorshift64* generator; uniform double in [0, 1). */
double tu_uniform(uint64_t *state);
int64_t tu_randint(uint64_t *state, int64_t lo, int64_t hi); /* inclusive */

/* One solve's worth of arrays on the host, allocated over the whole grid. */
typedef struct tu_system {
    tridi_grid grid;
    int64_t cells;
    tridi_arrays a;  /* pointers owned by this struct */
    void *x_before;  /* copy of x taken by tu_poison_x, to check untouched cells */
} tu_system;

/* Allocates the five arrays with the given types and fills every cell (halos too) with a random
 * diagonally dominant system: |diag| >= |lower| + |upper| + 0.5, random signs. x is poisoned. */
int tu_system_alloc(tu_system *s, const tridi_grid *grid, tridi_dtype lower, tridi_dtype diag,
                    tridi_dtype upper, tridi_dtype rhs, tridi_dtype x, uint64_t *rng);
void tu_system_free(tu_system *s);
/* Fills x with random garbage / NaN patterns and keeps a copy in x_before. */
void tu_poison_x(tu_system *s, uint64_t *rng);

/* Reference: MOHID "Original" Thomas, sequential, W and G in double, x rounded to its type before it
 * is used for the next unknown. Writes only the box. Returns 0, or -1 if a pivot is zero. */
int tu_reference_solve(const tridi_grid *grid, tridi_axis axis, const int64_t lo[3], const int64_t hi[3],
                       const tridi_arrays *a);

/* Bytes of one element of type t. */
size_t tu_esize(tridi_dtype t);

/* Device copies of the five arrays of a system (x too, so cells outside the box keep their poison), for
 * the tests of device-resident solves; only tridi's API is used, so this builds without CUDA. */
typedef struct tu_dev_set {
    void *p[5];       /* lower, diag, upper, rhs, x */
    size_t bytes[5];
} tu_dev_set;
/* Allocates and fills them. Returns 0, or 1 with tridi's message printed. */
int tu_dev_upload(tridi_context ctx, const tu_system *s, tu_dev_set *d);
void tu_dev_free(tridi_context ctx, tu_dev_set *d);
/* s's arrays (types) with the device copies in place of the host pointers. */
tridi_arrays tu_dev_arrays(const tu_system *s, const tu_dev_set *d);

/* Element accessors by type. */
double tu_get(const void *p, tridi_dtype t, int64_t i);
void tu_set(void *p, tridi_dtype t, int64_t i, double v);
int64_t tu_index(const tridi_grid *g, int64_t i, int64_t j, int64_t k); /* Fortran indices -> offset */

/* Compares x with xref inside the box (max-norm relative error per line <= tol; NaN fails) and checks
 * that every cell outside the box is bitwise equal to x_before. Prints the first failures with their
 * indices and values. Returns the number of bad cells. */
int64_t tu_check(const char *label, const tu_system *s, const void *xref, const int64_t lo[3],
                 const int64_t hi[3], tridi_axis axis, double tol);
/* The same with the scale of each cell given (line_scale[cell offset], for lines longer than the box a
 * rank holds: a distributed solve's answers are relative to the whole line, which a rank may see a few
 * cells of). */
int64_t tu_check_scaled(const char *label, const tu_system *s, const void *xref, const int64_t lo[3],
                        const int64_t hi[3], double tol, const double *line_scale);
/* Bitwise equality of x with x_before everywhere (for error cases). Returns bad cells. */
int64_t tu_check_unchanged(const char *label, const tu_system *s);

/* Status checks of the bad-input tests, counted in tu_checks / tu_failures (which a test's own checks
 * may count in too): `got` must be `want` and, when needle is not NULL, the message must contain it. */
extern int tu_checks, tu_failures;
void tu_expect(const char *what, tridi_status got, tridi_status want, const char *needle);
/* A yes/no check counted the same way: prints "ok what" or "FAILED what". */
void tu_expect_true(const char *what, int ok);

/* Unknown m of line l of the box lo..hi along axis (lines numbered as tridi numbers them: the first
 * other axis fastest): sets c to its Fortran indices and returns its offset in g. */
int64_t tu_line_cell(const tridi_grid *g, const int64_t lo[3], const int64_t hi[3], tridi_axis axis, int64_t l,
                     int64_t m, int64_t c[3]);
/* Oracle of line l of the box lo..hi along axis: Thomas in long double (x87 extended on x86, where a
 * double's subnormal pivot is a normal number), each answer rounded to x's type before it feeds the next;
 * xo gets the line's hi[axis] - lo[axis] + 1 answers. */
void tu_oracle_line(const tu_system *s, const int64_t lo[3], const int64_t hi[3], tridi_axis axis, int64_t l,
                    long double *xo);

/* The line (numbered as tridi numbers them) of the box lo..hi along axis that holds cell c (Fortran indices;
 * unused axes of a 2D grid ignored). */
int64_t tu_line_of(const tridi_grid *g, const int64_t lo[3], const int64_t hi[3], tridi_axis axis, const int64_t c[3]);
/* After a solve under TRIDI_ON_ERROR_LINES (issue 26, decision 2) in which the lines failing[0..nfailing-1]
 * failed: those lines must be bitwise as in x_before (untouched), every other line of the box within tol
 * (relative to the line's largest answer) of the oracle (tu_oracle_line), every cell outside the box bitwise
 * as in x_before. Prints the first faults. Returns the number of bad cells. */
int64_t tu_check_lines(const char *label, const tu_system *s, const int64_t lo[3], const int64_t hi[3],
                       tridi_axis axis, double tol, const int64_t *failing, int nfailing);

/* Tolerance for the answer type: float answers 2e-5, double 1e-11 (diagonally dominant systems). */
double tu_tolerance(tridi_dtype x_type);

#ifdef __cplusplus
}
#endif
#endif
