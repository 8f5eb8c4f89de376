/* Internal declarations of the ADI steps: the plan (adi_plan.c), its steps and sweeps (adi_step.c), the
 * backends' ADI operations (adi_cpu.c; cuda/adi_stage.cu through backend_cuda.c), the per-cell work shared
 * with cuda/adi (adi_cell.inc). Not installed. */
#ifndef TRIDI_ADI_INTERNAL_H
#define TRIDI_ADI_INTERNAL_H

#include "tridi_internal.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One stage of a step, done per cell of the box (adi_cell.inc):
 *   out = x0 + sum_b alpha[b] (L_b y)
 * and, when axis >= 0, the diagonals of (I - tdt L_axis) written to lower/diag/upper, with the
 * Dirichlet values of that axis moved to out. Neighbours outside the box are read from field (its halo
 * holds the boundary values) so work arrays need no halo of their own. out may be x0 (each cell reads
 * its own x0 before writing); out must not be y. x0 NULL: no x0 term. increment: the stage's unknowns
 * are increments of the field (the fused GPU Douglas step, docs/decisions/032), whose halo values are 0,
 * so no Dirichlet term moves to out. */
typedef struct adi_stage {
    int64_t n[3];          /* box extent per axis (1 on axes a 2D grid lacks) */
    int64_t stride[3];     /* element stride per axis; stride[0] is 1 (the GPU sweeps rely on it) */
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
    int careful;           /* CPU rows (adi_row.inc): faces through adi_face_mean, whose plain formulas could
                              overflow (a kappa past 1e150 this step, or 1 / spacing^2 past double) */
    const void *vel[3];
    double inv_h[3], inv_h2[3];
    int dirichlet_lo[3], dirichlet_hi[3];
    int increment;
} adi_stage;

#if defined(__CUDACC__)
#define ADI_HD static __host__ __device__ __forceinline__
#else
#define ADI_HD static inline
#endif

/* The diffusion of a face between cells of kappa k1 and k2 (kc, the constant, when there is no kappa
 * field), over spacing^2 (ih2 = 1 / spacing^2), for every path (adi_cell.inc, adi_row.inc, the fused
 * sweeps' line_rows.cuh). Formed without overflow where the result is finite: the harmonic mean 2 k1 k2 /
 * (k1 + k2) and the arithmetic (k1 + k2) / 2 overflowed in k1 k2 and k1 + k2 for kappas past 1e154 and
 * 9e307; where they do not, the formula and its bits are as before (so are its underflows). A zero diffusion stays zero over a
 * spacing whose 1 / spacing^2 overflows (0 * Inf is NaN). */
ADI_HD double adi_face_mean(double k1, double k2, int harmonic)
{
    if (!harmonic)
        return 0.5 * k1 + 0.5 * k2; /* halving is exact: the bits of 0.5 * (k1 + k2) */
    const double sum = k1 + k2;
    if (sum <= 0.0)
        return 0.0; /* a NaN kappa goes on to a NaN mean: the row that reads it fails, not a zero diffusion */
    const double p = 2.0 * k1 * k2;
    if (fabs(p) <= 1.7976931348623157e308 && sum <= 1.7976931348623157e308)
        return p / sum;
    const double m = k1 > k2 ? k1 : k2; /* > 0: k1 k2 or k1 + k2 overflowed, scale by the larger */
    const double a = k1 / m, b = k2 / m;
    return m * (2.0 * a * b / (a + b));
}

ADI_HD double adi_face_diffusion(double mean, double ih2) { return mean == 0.0 ? 0.0 : mean * ih2; }

/* adi_cell.inc's coefficient arrays (ADI_COEF's coefs): the kappa field, the velocities. */
#define ADI_COEFS_KAPPA 1
#define ADI_COEFS_VEL 2
#define ADI_COEFS_ALL 3

/* The fused GPU sweeps (cuda/adi/adi_fused.cu, docs/decisions/032): one kernel per sweep, each line
 * partitioned over threads, the rows formed with adi_cell.inc's ADI_COEF and solved on chip; only the
 * sweep's output (s->out) is written. */
typedef struct adi_fused {
    unsigned long long *status; /* the plan's deferred verdict: ADI_STATUS_CLEAR or the first failure */
    int accumulate;             /* the answers are added to out (the last sweep of a Douglas step in
                                   increments, decision 032) instead of written over it */
    void *table;                /* device memory for the elimination of the sweep's shared rows
                                   (tridi_adi_cuda_table_bytes), the plan's own for the sweep's axis */
    int table_ready;            /* table holds this sweep's rows already: made by an earlier sweep of a
                                   stage of the same values, not made again (decision 085) */
    int offsets64;              /* the x rows' offsets in 64 bits where an int would hold them too
                                   (TRIDI_ADI_PATH=fused64: the tests of the wide offsets; decision 078) */
    int force_ktiles;           /* the x sweeps' blocks in k tiles wherever they can be, not by the rule
                                   (TRIDI_ADI_PATH=fusedk: the tests of the tiles; decision 104) */
    int x_ktile;                /* set by the launch: the k layers of a tile of an x sweep's blocks, 0 for
                                   blocks in line order (decision 104) */
    /* The x rows' constants (cuda/adi/line_rows.cuh, decision 078), made by the launch from the stage: per
     * axis the explicit weight, 1 / h and 1 / h^2, each 0 on the axes past naxes, in double and in float;
     * kappa_const and tdt in float. A row reads them where it uses them: no test or conversion a cell. */
    double xr_alpha[3], xr_ih[3], xr_ih2[3];
    float xr_alpha_f[3], xr_ih_f[3], xr_ih2_f[3], xr_kappa_f, xr_tdt_f;
} adi_fused;

/* A failure as the fused kernels record it (atomicMin: the earliest sweep, then the lowest line, wins):
 * sweep axis in bits 62-63, line in bits 24-61, unknown along the line in bits 4-23, tridi_fail_kind in
 * bits 0-3. The fused path is taken only for boxes within these widths. */
#define ADI_STATUS_CLEAR (~0ull)
#define ADI_KEY_LINE_LIMIT ((int64_t)1 << 38)
#define ADI_KEY_N_LIMIT ((int64_t)1 << 20)
#define ADI_KEY(axis, line, m, kind)                                                                         \
    (((unsigned long long)(axis) << 62) | ((unsigned long long)(line) << 24) | ((unsigned long long)(m) << 4) | \
     (unsigned long long)(kind))

/* ---- the plan (adi_plan.c) ---- */
enum { ADI_W_LOWER, ADI_W_DIAG, ADI_W_UPPER, ADI_W_1, ADI_W_2, ADI_W_COUNT };

struct tridi_adi_ops;

struct tridi_adi_s {
    tridi_context ctx;
    const struct tridi_adi_ops *ops; /* the ADI operations of the context's backend (backend.h) */
    tridi_grid grid;
    int64_t lo[3], hi[3];
    tridi_dtype dtype;
    tridi_adi_operator op;
    adi_stage base;      /* geometry and operator; each stage fills in the rest */
    int empty;           /* the box has no cells: steps and sweeps do nothing */
    /* One solve plan per axis of the grid (a non-empty box): validated once here, all or nothing, FAST
     * arithmetic (docs/decisions/031), in the backend's memory; each sweep's solve runs through it. */
    struct tridi_plan_s solves[3];
    int nsolves;
    int nwork;           /* work arrays the staged sweeps use (the fused sweeps: ADI_W_1 alone) */
    size_t work_bytes;   /* each one grid-shaped in the plan's type */
    void *work[ADI_W_COUNT];
    void *stream;        /* the plan's own stream (CUDA), used when the caller passes NULL */
    int fused;           /* steps through the fused sweeps (CUDA) instead of stage + solve */
    void *backend_state; /* the backend's own (ops->create / ops->destroy) */
    double mark_ms[4];   /* the CPU's clock at the sweep boundaries of a profiled step */
    double ms[3];
    int64_t steps;
};

/* TRIDI_ERROR_INVALID_HANDLE unless plan is a live ADI plan of a live context; f names the caller. */
tridi_status tridi_adi_check_plan(const char *f, struct tridi_adi_s *plan);
/* A failure of the library call an ADI entry point made names that call ("tridi_solve: ...",
 * "tridi_plan_solve (...): ..."); the caller called f, so the message is renamed (its cell kept). */
tridi_status tridi_adi_as_called(const char *f, tridi_status s);

/* ---- the backends' ADI operations: the `adi` table of backend.h ----
 * src/adi_cpu.c for the CPU; cuda/adi_stage.cu, cuda/adi/adi_fused.cu behind backend_cuda.c for CUDA.
 * f: the entry point the caller called. */
typedef struct tridi_adi_ops {
    /* Where the plan's arrays live: its solve plans' memory. */
    tridi_memory memory;
    /* A plan with a non-empty box, its geometry and operator set: chooses its path (plan->fused; path is
     * TRIDI_ADI_PATH's 0 unset, 1 fused, 2 staged), allocates its nwork work arrays of work_bytes each
     * (zeroed: their halo cells are never written) and whatever else its steps need (plan->stream,
     * plan->backend_state). */
    tridi_status (*create)(const char *f, struct tridi_adi_s *plan, int path);
    /* Waits for the plan's queued work and frees what create made, also after a create that failed. */
    void (*destroy)(struct tridi_adi_s *plan);
    /* Before a step: the field and the operator's arrays checked wherever the stages read them (where
     * the library can read them); *kappa_max: the largest kappa_field value read (0 if none). */
    tridi_status (*check_inputs)(const char *f, const struct tridi_adi_s *plan, const void *field,
                                 double *kappa_max);
    /* Status s of the solve of a step's sweep along axis: its message made to name the operator's
     * coefficient that overflowed, where the inputs were checked before the step; else s as it is. */
    tridi_status (*explain)(const char *f, const struct tridi_adi_s *plan, int axis, double dt, tridi_status s);
    /* One stage (adi_stage) over the plan's box, queued on stream. */
    tridi_status (*stage)(const struct tridi_adi_s *plan, const adi_stage *s, void *stream);
    /* One fused sweep along s->axis (plan->fused only): accumulate adds the answers to s->out. */
    tridi_status (*fused_sweep)(const struct tridi_adi_s *plan, const adi_stage *s, int accumulate, void *stream);
    /* Sweep boundary m (0 before the first sweep) of a step, timed when op.profile is set. */
    tridi_status (*mark)(struct tridi_adi_s *plan, int m, void *stream);
    /* After a step's last sweep was queued: the step's end recorded for wait, and, profiled, each sweep's
     * time added to plan->ms. */
    tridi_status (*finish)(struct tridi_adi_s *plan, void *stream);
    /* Waits for the plan's stream and latest step; *key: the fused sweeps' first recorded failure
     * (ADI_STATUS_CLEAR: none), then cleared. */
    tridi_status (*wait)(struct tridi_adi_s *plan, unsigned long long *key);
} tridi_adi_ops;

extern const tridi_adi_ops tridi_adi_cpu_ops;

/* ---- GPU entry points (cuda/adi_stage.cu, cuda/adi/adi_fused.cu; CUDA builds only) ----
 * The CUDA table's operations (backend_cuda.c), as tridi_adi_ops says. */
tridi_status tridi_adi_cuda_create(const char *f, struct tridi_adi_s *plan, int path);
void tridi_adi_cuda_destroy(struct tridi_adi_s *plan);
tridi_status tridi_adi_cuda_plan_stage(const struct tridi_adi_s *plan, const adi_stage *s, void *stream);
tridi_status tridi_adi_cuda_plan_sweep(const struct tridi_adi_s *plan, const adi_stage *s, int accumulate,
                                       void *stream);
tridi_status tridi_adi_cuda_mark(struct tridi_adi_s *plan, int m, void *stream);
tridi_status tridi_adi_cuda_finish(struct tridi_adi_s *plan, void *stream);
tridi_status tridi_adi_cuda_wait(struct tridi_adi_s *plan, unsigned long long *key);
/* The stage kernel. device: the context's CUDA ordinal. */
tridi_status tridi_adi_cuda_stage(int device, const adi_stage *s, int f64, void *stream);
/* Whether the fused sweeps take the plan's stage s (its box and coefficients) along each of its naxes
 * axes: their lines fit a block of the partitioned solve. */
int tridi_adi_cuda_fused_fits(const adi_stage *s, int naxes, int f64);
/* The bytes of adi_fused's table for the plan's stage s: the largest of its axes' (0 if none has shared
 * rows). */
size_t tridi_adi_cuda_table_bytes(const adi_stage *s, int naxes, int f64);
/* One fused sweep along s->axis: out = (I - tdt L_axis)^-1 (s's right-hand side), nothing else written;
 * writes nothing once *fz->status holds a failure. */
tridi_status tridi_adi_cuda_fused_sweep(int device, const adi_stage *s, int f64, const adi_fused *fz, void *stream);
/* Clears the plan's status word (no failure). */
tridi_status tridi_adi_cuda_status_reset(int device, unsigned long long *status);
/* Reads the status word and clears it; call after the plan's streams are drained. */
tridi_status tridi_adi_cuda_status_take(int device, unsigned long long *status, unsigned long long *key);
/* The event a step records on its stream (not while the stream is captured), waited for by
 * tridi_adi_synchronize. */
tridi_status tridi_adi_cuda_event_create(int device, void **event);
void tridi_adi_cuda_event_destroy(int device, void *event);
tridi_status tridi_adi_cuda_event_record(void *event, void *stream);
tridi_status tridi_adi_cuda_event_sync(void *event);

#ifdef __cplusplus
}
#endif
#endif
