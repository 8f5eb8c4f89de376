/* What the files of the distributed solve share (docs/mpi.md, "Distributed solves"): the plan of one
 * solve on this rank (dsolve.c), the cut solve on host arrays (dsolve_cpu.c) and on device arrays
 * (dsolve_device.c), the reduced systems (dsolve_reduced.c) and the pipelined Thomas of the lines the
 * partition cannot take (dsolve_pipeline.c). Not installed. */
#ifndef TRIDI_DSOLVE_INTERNAL_H
#define TRIDI_DSOLVE_INTERNAL_H

#include "mpi_internal.h"

/* One solve as this rank sees it, made by prepare (dsolve.c) on every rank. */
typedef struct tridi_dplan {
    tridi_problem p;   /* this rank's part of the box (valid when has_lines && n > 0) */
    int axis;          /* the axis solved along */
    int has_lines;     /* this rank holds lines of the box */
    int cut;           /* the axis is cut by rank boundaries: reduced system needed */
    int first, last;   /* the block holds the first / last unknown of the global lines */
    int64_t n, nlines;
    MPI_Comm line_comm;
    int line_size, line_rank;
    int64_t llo[3], lhi[3];
    int ns;            /* device cut solve: sub-blocks per line (tridi_mpi_cuda_subblocks) */
    int prev, next;    /* line ranks holding the unknowns just before / after this block's, -1: none */
    int ndim;
    int64_t glo[3], ghi[3]; /* the global box: the lines' numbering of a one-rank solve */
} tridi_dplan;

/* Element i of an array of type t, widened to double. */
static inline double tridi_dsolve_load(const void *p, tridi_dtype t, int64_t i)
{
    return t == TRIDI_FLOAT64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* ---- dsolve.c: failures in the order of a one-rank solve ---- */
/* Where failure s of this rank stands in the order of a one-rank solve (tridi_mpi.h): by global line,
 * then the forward sweep's failures by unknown, then the back substitution's from the last unknown
 * down. -1 when the failure names no cell (arguments, memory, MPI). *line: its global line. */
int64_t tridi_dsolve_failure_order(const tridi_dplan *dp, tridi_status s, int64_t *line);
/* The ranks' agreement on a solve's outcome: the failure a one-rank solve would report. Collective. */
tridi_status tridi_dsolve_agree(MPI_Comm comm, const tridi_dplan *dp, tridi_status s);
/* The same as the verdict of the one guard (src/backend.h): ranks is a tridi_dsolve_ranks. */
typedef struct tridi_dsolve_ranks {
    MPI_Comm comm;
    const tridi_dplan *dp;
} tridi_dsolve_ranks;
tridi_status tridi_dsolve_verdict(void *ranks, tridi_status own);
/* A failure of this rank recorded before the pipelined Thomas ran: its status, order, message and cell. */
typedef struct tridi_dsolve_failure {
    tridi_status s;
    int64_t order;
    int nd;
    int64_t cell[3];
    char text[1024];
} tridi_dsolve_failure;
void tridi_dsolve_failure_save(const tridi_dplan *dp, tridi_status s, tridi_dsolve_failure *out);
/* Of the saved failure a and the error record's b, the one a one-rank solve meets first, left in the
 * error record. */
tridi_status tridi_dsolve_first_of(const tridi_dplan *dp, const tridi_dsolve_failure *a, tridi_status b);

/* ---- dsolve_reduced.c: the reduced systems on the host ---- */
/* Gathers the reduced coefficients coef[6 * line] of the line's ranks and solves each line's reduced
 * system; ends gets this rank's x_L, x_R (NaN for a line marked for the pipelined Thomas). Collective
 * over the line. */
tridi_status tridi_dsolve_reduce(const char *f, tridi_decomp d, const tridi_dplan *dp, const double *coef,
                                 double *ends);

/* ---- dsolve_pipeline.c: the pipelined Thomas of the marked lines ---- */
/* The lines of this rank's block that the pipelined Thomas solves, their inputs widened to double (as
 * tridi_solve reads them) and their answers. */
typedef struct tridi_fallback {
    int64_t nf;        /* lines */
    int64_t *lines;    /* their local indices, ascending */
    double *abcr;      /* lower, diag, upper, rhs: 4 n per line */
    double *wg;        /* W, G of the forward sweep: 2 n per line */
    void *x;           /* answers: n per line, x's type */
    double *msg;       /* one chunk's messages: 2 per line */
    int64_t chunk;     /* lines per message */
} tridi_fallback;
void tridi_fallback_free(tridi_fallback *fb);
/* Finds the lines marked by NaN ends and allocates the fallback's host buffers. The marks, hence nf and
 * the chunks, are the same on every rank of a line. */
tridi_status tridi_fallback_prepare(const char *f, const tridi_dplan *dp, const double *ends, tridi_fallback *fb);
/* Forward sweep from rank to rank, then the back substitution back, over the ranks of the line holding
 * unknowns; the answers go to fb->x only. Runs every message whatever failed, as the other ranks wait. */
tridi_status tridi_pipeline_thomas(const char *f, const tridi_dplan *dp, tridi_fallback *fb);

/* ---- the cut solves ---- */
/* Host arrays (dsolve_cpu.c). Collective. */
tridi_status tridi_dsolve_cut_cpu(const char *f, tridi_decomp d, const tridi_dplan *dp);
#ifdef TRIDI_HAVE_CUDA
/* Device arrays on ctx's GPU (dsolve_device.c), queued on stream. Collective. */
tridi_status tridi_dsolve_cut_device(const char *f, tridi_context ctx, tridi_decomp d, tridi_dplan *dp,
                                     void *stream);
#endif

#endif
