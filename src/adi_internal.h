/* Internal declarations of the ADI steps, shared by src/adi.c (plan, CPU path) and cuda/adi_stage.cu
 * (GPU path). Not installed. */
#ifndef TRIDI_ADI_INTERNAL_H
#define TRIDI_ADI_INTERNAL_H

#include "tridi_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One stage of a step, done per cell of the box (adi_cell.inc):
 *   out = x0 + sum_b alpha[b] (L_b y)
 * and, when axis >= 0, the diagonals of (I - tdt L_axis) written to lower/diag/upper, with the
 * Dirichlet values of that axis moved to out. Neighbours outside the box are read from field (its halo
 * holds the boundary values) so work arrays need no halo of their own. out may be x0 (each cell reads
 * its own x0 before writing); out must not be y. */
typedef struct adi_stage {
    int64_t n[3];          /* box extent per axis (1 on axes a 2D grid lacks) */
    int64_t stride[3];     /* element stride per axis */
    int64_t origin;        /* offset of the box's first cell */
    int naxes;             /* operator axes 0..naxes-1 */
    int axis;              /* axis whose diagonals are assembled, -1 for none */
    const void *field;     /* boundary values (halo cells) */
    const void *x0;
    const void *y;
    void *out;
    double alpha[3];
    double tdt;            /* implicit weight times dt */
    void *lower, *diag, *upper;
    const void *kappa;     /* NULL: kappa_const everywhere */
    double kappa_const;
    int harmonic;
    const void *vel[3];
    double inv_h[3], inv_h2[3];
    int dirichlet_lo[3], dirichlet_hi[3];
} adi_stage;

#ifdef TRIDI_HAVE_CUDA
/* GPU path (cuda/adi_stage.cu). device: the context's CUDA ordinal. */
tridi_status tridi_adi_cuda_stage(int device, const adi_stage *s, int f64, void *stream);
tridi_status tridi_adi_cuda_stream_create(int device, void **stream);
void tridi_adi_cuda_stream_destroy(int device, void *stream);
tridi_status tridi_adi_cuda_stream_sync(int device, void *stream);
/* nmarks CUDA events; mark i is recorded on stream; read waits for mark nmarks-1 and adds the time
 * between marks i and i+1 to ms[i]. */
tridi_status tridi_adi_cuda_timer_create(int device, int nmarks, void **timer);
void tridi_adi_cuda_timer_destroy(int device, void *timer);
tridi_status tridi_adi_cuda_timer_mark(void *timer, int mark, void *stream);
tridi_status tridi_adi_cuda_timer_read(void *timer, double *ms);
#endif

#ifdef __cplusplus
}
#endif
#endif
