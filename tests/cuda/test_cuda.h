/* What test_cuda's files share: the contexts main() makes, the type combinations, the solve-and-check steps,
 * and the cases of test_cuda_slabs.c (host arrays through the slab pipeline, registrations). */
#ifndef TRIDI_TEST_CUDA_H
#define TRIDI_TEST_CUDA_H

#include "testutil.h"

/* lower, diag, upper, rhs, x: all float, all double, MOHID's mixed kinds */
extern const tridi_dtype combos[3][5];
extern const char *combo_name[3];

/* All made with TRIDI_ON_ERROR_CALL: their cases test the all-or-nothing machinery (undo of a registered x,
 * answer box and commit, the slab pipeline); the _lines ones, with the default, test per-line isolation. */
extern tridi_context ctx_gpu, ctx_gpu_f32, ctx_cpu, ctx_slabs, ctx_gpu_lines, ctx_cpu_lines;
/* Slab contexts whose registered-x answers always take one way (TRIDI_HOST_X_PATH), so both ways meet
 * every upload pattern of slab_case, not only the one the rule picks for it. */
extern tridi_context ctx_slabs_eager, ctx_slabs_verdict;
/* Slab contexts under per-line isolation (the default contract): the rule's ways and the verdict forced. */
extern tridi_context ctx_slabs_lines, ctx_slabs_lines_verdict, ctx_slabs_lines_plain;

tridi_context make_ctx_on_error(tridi_backend b, int f32, tridi_on_error on_error);
tridi_context make_ctx(tridi_backend b, int f32);
/* Registers the arrays of s selected by mask (bit r: lower, diag, upper, rhs, x); bit r of half: only the
 * first half of that array, so it is not wholly inside a registered range. Returns failed calls. */
int register_set(tridi_context ctx, const tu_system *s, int mask, int half, int unregister);
/* Host solve of s on ctx with x poisoned first (and inputs uploaded ahead when upload_mask says so),
 * checked against xref. Returns failed checks. */
int host_solve_check(tridi_context ctx, const char *label, const char *mode, tu_system *s, int axis,
                     const int64_t lo[3], const int64_t hi[3], const void *xref, const void *poison, int upload_mask,
                     double tol);

/* A random system of combo's types on g into s, its reference answers along axis into a fresh *xref and x's old
 * values into a fresh *poison, *xb bytes each (the caller frees both). Returns 1 if s cannot be made. */
int combo_system(tu_system *s, const tridi_grid *g, int combo, int axis, const int64_t lo[3], const int64_t hi[3],
                 uint64_t *rng, void **xref, void **poison, size_t *xb);
/* "<what> box [lo:hi,...] of [lbound:ubound,...]" into label. */
void box_label(char *label, size_t size, const char *what, const tridi_grid *g, const int64_t lo[3],
               const int64_t hi[3]);

/* test_cuda_slabs.c; each returns failed checks. */
int slab_case(tridi_context ctx_slabs, uint64_t *rng, int axis, int combo);
int slab_lines_case(uint64_t *rng, int axis, int combo);
int sharing_case(uint64_t *rng);

#endif
