/* The pipelined Thomas (docs/mpi.md, "Stability of the cut solve"): the lines whose partition could grow
 * are solved by the one-rank recurrence itself, its forward state (W, G) passed from rank to rank and the
 * back substitution's x passed back, in chunks of lines so that the ranks overlap. That is the one-rank
 * arithmetic (src/thomas_core.h), so it is as stable as tridi_solve and reports the same failures. */
#include "dsolve_internal.h"
#include "thomas_core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tridi_fallback_free(tridi_fallback *fb)
{
    free(fb->lines);
    free(fb->abcr);
    free(fb->wg);
    free(fb->x);
    free(fb->msg);
    memset(fb, 0, sizeof *fb);
}

/* Finds the lines marked by NaN ends and allocates the fallback's host buffers. The marks, hence nf and
 * the chunks, are the same on every rank of a line. */
tridi_status tridi_fallback_prepare(const char *f, const tridi_dplan *dp, const double *ends, tridi_fallback *fb)
{
    memset(fb, 0, sizeof *fb);
    if (!(dp->has_lines && dp->n > 0))
        return TRIDI_SUCCESS;
    int64_t nf = 0;
    for (int64_t l = 0; l < dp->nlines; ++l)
        nf += isnan(ends[2 * l]) != 0;
    if (!nf)
        return TRIDI_SUCCESS;
    const size_t n = (size_t)dp->n, es = tridi_dtype_size(dp->p.arrays.x_type);
    /* Chunks: about 4 per line rank, so that while rank r sweeps chunk c, rank r+1 sweeps chunk c-1. */
    int64_t chunk = (nf + 4 * (int64_t)dp->line_size - 1) / (4 * (int64_t)dp->line_size);
    fb->chunk = chunk < 64 ? 64 : chunk;
    fb->nf = nf;
    fb->lines = malloc(sizeof(int64_t) * (size_t)nf);
    fb->abcr = malloc(sizeof(double) * 4 * n * (size_t)nf);
    fb->wg = malloc(sizeof(double) * 2 * n * (size_t)nf);
    fb->x = malloc(es * n * (size_t)nf);
    fb->msg = malloc(sizeof(double) * 2 * (size_t)fb->chunk);
    if (!fb->lines || !fb->abcr || !fb->wg || !fb->x || !fb->msg) {
        tridi_fallback_free(fb);
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY,
                          "%s: out of host memory for the pipelined Thomas of %lld lines", f, (long long)nf);
    }
    nf = 0;
    for (int64_t l = 0; l < dp->nlines; ++l)
        if (isnan(ends[2 * l]))
            fb->lines[nf++] = l;
    return TRIDI_SUCCESS;
}

/* A failure of the pipelined sweep on this rank: the first one of the lowest line (k: its index among
 * the fallback lines). */
typedef struct pipeline_failure {
    int64_t k;
    tridi_thomas_fail f;
} pipeline_failure;

static void pipeline_failure_note(pipeline_failure *pf, int64_t k, int64_t m, int kind)
{
    if (k < pf->k) {
        pf->k = k;
        pf->f = (tridi_thomas_fail){m, kind};
    }
}

/* Forward sweep of fallback line k over this rank's unknowns, from the previous rank's W, G: the
 * one-rank recurrence and checks, in the one-rank arithmetic: MOHID's divisions (NewType's float pivot
 * where p's arithmetic says so), or FAST's reciprocal (tridi_thomas_forward_rcp) as the CPU kernels do it.
 * No fused multiply-add on any ISA (-ffp-contract=off, docs/decisions/040), so it rounds as the one-rank
 * solve does. Returns 0, or 1 with the failure noted. */
static int pipe_forward(const tridi_dplan *dp, tridi_fallback *fb, int64_t k, double *w, double *g,
                        pipeline_failure *pf)
{
    const int64_t n = dp->n;
    const int rcp = dp->p.arith == TRIDI_ARITH_FAST, f32 = tridi_newtype_pivot_f32(&dp->p);
    const double *A = fb->abcr + 4 * n * k, *B = A + n, *C = B + n, *R = C + n;
    double *W = fb->wg + 2 * n * k, *G = W + n;
    for (int64_t m = 0; m < n; ++m) {
        const int gfirst = dp->first && m == 0, glast = dp->last && m == n - 1;
        const double d = gfirst ? 0.0 : A[m], e = B[m], f = glast ? 0.0 : C[m], r = R[m];
        const int kind = rcp ? tridi_thomas_forward_rcp(d, e, f, r, gfirst, glast, w, g)
                             : tridi_thomas_forward_newtype(d, e, f, r, gfirst, glast, f32, w, g);
        if (kind) {
            pipeline_failure_note(pf, k, m, kind);
            return 1;
        }
        W[m] = *w;
        G[m] = *g;
    }
    return 0;
}

/* Back substitution of fallback line k from the next rank's first answer (as rounded to x's type),
 * each answer rounded before it feeds the next, as tridi_solve. Returns the answer at this rank's first
 * unknown, NaN after an overflow (noted at the highest failing unknown). */
static double pipe_backward(const tridi_dplan *dp, tridi_fallback *fb, int64_t k, double xnext, pipeline_failure *pf)
{
    const int64_t n = dp->n;
    const double *W = fb->wg + 2 * n * k, *G = W + n;
    const int f64 = dp->p.arrays.x_type == TRIDI_FLOAT64;
    int failed = 0;
    for (int64_t m = n - 1; m >= 0; --m) {
        xnext = tridi_thomas_back(W[m], G[m], xnext, dp->last && m == n - 1, f64);
        if (f64)
            ((double *)fb->x)[k * n + m] = xnext;
        else
            ((float *)fb->x)[k * n + m] = (float)xnext;
        if (!failed && !tridi_thomas_finite(xnext)) {
            failed = 1;
            pipeline_failure_note(pf, k, m, TRIDI_FAIL_ANSWER_OVERFLOW);
        }
    }
    return failed ? NAN : xnext;
}

/* The pipelined Thomas of the fallback lines over the ranks of the line holding unknowns: rank r takes
 * each chunk's W, G (last unknown of rank r-1) from rank r-1, sweeps its unknowns and sends its own on;
 * the back substitution then flows from the last rank down, each rank sending the answer at its first
 * unknown. A line that fails on some rank travels on as NaN, so the ranks after it skip it and only the
 * rank that met the failure reports it. Every rank runs every message even after a failure, so no
 * rank waits for ever. Writes the answers to fb->x only. */
tridi_status tridi_pipeline_thomas(const char *f, const tridi_dplan *dp, tridi_fallback *fb)
{
    enum { TAG_FORWARD = 0x7d01, TAG_BACKWARD = 0x7d02 };
    const int64_t nf = fb->nf, C = fb->chunk;
    MPI_Comm line = dp->line_comm;
    pipeline_failure pf = {INT64_MAX, {0, TRIDI_FAIL_NONE}};
    int mpi_err = MPI_SUCCESS;
    const char *mpi_call = NULL;
    for (int64_t c0 = 0; c0 < nf; c0 += C) {
        const int64_t cn = nf - c0 < C ? nf - c0 : C;
        double *msg = fb->msg;
        if (dp->prev >= 0) {
            int e = MPI_Recv(msg, (int)(2 * cn), MPI_DOUBLE, dp->prev, TAG_FORWARD, line, MPI_STATUS_IGNORE);
            if (e != MPI_SUCCESS && !mpi_call) {
                mpi_err = e;
                mpi_call = "MPI_Recv";
            }
        }
        for (int64_t i = 0; i < cn; ++i) {
            double w = dp->prev >= 0 ? msg[2 * i] : 0.0, g = dp->prev >= 0 ? msg[2 * i + 1] : 0.0;
            int failed = isnan(w) || isnan(g) || mpi_call;
            if (!failed)
                failed = pipe_forward(dp, fb, c0 + i, &w, &g, &pf);
            msg[2 * i] = failed ? NAN : w;
            msg[2 * i + 1] = failed ? NAN : g;
            if (failed) /* no back substitution here: the rank after gets NaN, this one marks its answer */
                fb->wg[2 * dp->n * (c0 + i)] = NAN;
        }
        if (dp->next >= 0) {
            int e = MPI_Send(msg, (int)(2 * cn), MPI_DOUBLE, dp->next, TAG_FORWARD, line);
            if (e != MPI_SUCCESS && !mpi_call) {
                mpi_err = e;
                mpi_call = "MPI_Send";
            }
        }
    }
    for (int64_t c0 = 0; c0 < nf; c0 += C) {
        const int64_t cn = nf - c0 < C ? nf - c0 : C;
        double *msg = fb->msg;
        if (dp->next >= 0) {
            int e = MPI_Recv(msg, (int)cn, MPI_DOUBLE, dp->next, TAG_BACKWARD, line, MPI_STATUS_IGNORE);
            if (e != MPI_SUCCESS && !mpi_call) {
                mpi_err = e;
                mpi_call = "MPI_Recv";
            }
        }
        for (int64_t i = 0; i < cn; ++i) {
            const int64_t k = c0 + i;
            const double xn = dp->next >= 0 ? msg[i] : 0.0;
            const int failed = isnan(xn) || isnan(fb->wg[2 * dp->n * k]) || mpi_call;
            msg[i] = failed ? NAN : pipe_backward(dp, fb, k, xn, &pf);
        }
        if (dp->prev >= 0) {
            int e = MPI_Send(msg, (int)cn, MPI_DOUBLE, dp->prev, TAG_BACKWARD, line);
            if (e != MPI_SUCCESS && !mpi_call) {
                mpi_err = e;
                mpi_call = "MPI_Send";
            }
        }
    }
    if (mpi_call)
        return tridi_mpi_fail(f, mpi_call, mpi_err);
    if (pf.f.kind)
        return tridi_thomas_report(f, &dp->p, fb->lines[pf.k], pf.f);
    return TRIDI_SUCCESS;
}
