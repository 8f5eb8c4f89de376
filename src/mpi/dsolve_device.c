/* The cut solve on device arrays (docs/mpi.md, "Distributed solves"; docs/decisions/015): the kernels of
 * cuda/mpi_solve.cu eliminate every rank's block, the reduced systems travel GPU to GPU through CUDA IPC
 * (solve_cut_ipc) or through the host (solve_cut_staged, the host's reduced solve of dsolve_reduced.c),
 * and the back substitution keeps the old x so that a failure on any rank leaves x unchanged. Every CUDA
 * call goes through src/mpi/mpi_device.h; device memory is the context's (docs/decisions/049). */
#include "backend.h"
#include "dsolve_internal.h"
#include "mpi_device.h"
#include "thomas_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decides once per cut axis, with every rank of the decomposition, whether the reduced systems move
 * GPU to GPU through IPC: all ranks on one node, at most TRIDI_MPI_MAX_LINE ranks per line, and each
 * GPU able to reach the GPUs of its line. */
static tridi_status reduced_decide(const char *f, tridi_decomp d, int axis)
{
    tridi_reduced_ipc *red = &d->red[axis];
    if (red->state)
        return TRIDI_SUCCESS;
    MPI_Comm comm = d->comm, line = d->line_comm[axis];
    tridi_transport want = d->cfg.solve_transport;
    int P, me, node_size;
    MPI_Comm_size(line, &P);
    MPI_Comm_rank(line, &me);
    int dev = tridi_mpi_cuda_device();
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    int *devs = malloc(sizeof(int) * (size_t)P);
    if (!devs)
        return tridi_mpi_agree(comm, tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory", f));
    MPI_Allgather(&dev, 1, MPI_INT, devs, 1, MPI_INT, line);
    char why[160] = "";
    int able = 1;
    if (node_size != d->info.nranks) {
        able = 0;
        snprintf(why, sizeof why, "the ranks span more than one node");
    } else if (P > TRIDI_MPI_MAX_LINE) {
        able = 0;
        snprintf(why, sizeof why, "%d ranks along the line, at most %d", P, TRIDI_MPI_MAX_LINE);
    }
    for (int r = 0; r < P && able; ++r) {
        if (!tridi_mpi_cuda_peer_access(dev, devs[r])) {
            able = 0;
            snprintf(why, sizeof why, "GPU %d cannot reach GPU %d of line rank %d", dev, devs[r], r);
        }
    }
    free(devs);
    int all = 0;
    MPI_Allreduce(&able, &all, 1, MPI_INT, MPI_MIN, comm);
    tridi_status mine = TRIDI_SUCCESS;
    if (want == TRIDI_TRANSPORT_IPC && !able)
        mine = tridi_fail(TRIDI_ERROR_UNSUPPORTED, "%s: solve_transport ipc is not usable here: %s", f, why);
    tridi_status s = tridi_mpi_agree(comm, mine);
    if (s)
        return s;
    red->state = (all && want != TRIDI_TRANSPORT_STAGED) ? 1 : -1;
    return TRIDI_SUCCESS;
}

static void reduced_release(tridi_reduced_ipc *red)
{
    for (int r = 0; r < TRIDI_MPI_MAX_LINE; ++r) {
        if (red->opened[r])
            tridi_mpi_ipc_close(red->opened[r]);
        red->opened[r] = NULL;
        red->peer_buf[r] = NULL;
    }
    tridi_cuda_ipc_unexport(red->buf, red->bytes);
    red->buf = NULL;
    red->bytes = 0;
    red->cap = 0;
}

/* Makes the gather buffers of the line hold nl lines; collective over the line (equal nl there). */
static tridi_status reduced_grow(const char *f, tridi_context ctx, tridi_decomp d, int axis, size_t nl)
{
    tridi_reduced_ipc *red = &d->red[axis];
    if (red->cap >= nl && red->buf)
        return TRIDI_SUCCESS;
    MPI_Comm line = d->line_comm[axis];
    int P, me;
    MPI_Comm_size(line, &P);
    MPI_Comm_rank(line, &me);
    /* Nobody may still write into the buffers about to be freed. */
    MPI_Barrier(line);
    reduced_release(red);
    const int hb = TRIDI_CUDA_IPC_HANDLE_BYTES;
    size_t bytes = sizeof(double) * (6 * nl + 1) * (size_t)P;
    unsigned char mine[TRIDI_CUDA_IPC_HANDLE_BYTES], *all = malloc((size_t)hb * (size_t)P);
    memset(mine, 0, sizeof mine);
    void *buf = NULL;
    tridi_status s = tridi_cuda_ipc_export(ctx->cuda, bytes, &buf, mine);
    if (!s) {
        red->buf = buf;
        red->bytes = bytes;
    }
    if (!s && !all)
        s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: reduced-system buffer of %zu bytes: out of host memory", f,
                       bytes);
    int ok = !s, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, line);
    if (all_ok) {
        MPI_Allgather(mine, hb, MPI_BYTE, all, hb, MPI_BYTE, line);
        for (int r = 0; r < P && !s; ++r) {
            if (r == me) {
                red->peer_buf[r] = red->buf;
                continue;
            }
            void *b = NULL;
            s = tridi_mpi_ipc_open(all + (size_t)hb * (size_t)r, &b);
            red->opened[r] = b;
            red->peer_buf[r] = b;
        }
    } else if (!s) {
        s = tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: another rank of the line could not allocate its reduced-system buffer", f);
    }
    free(all);
    if (s)
        reduced_release(red);
    else
        red->cap = nl;
    return s;
}

/* The status of the back substitution kernel's failure word, all ones if none: (line << 24) |
 * (2^24 - 1 - m), the answer overflowing x's type (tridi_mpi_cuda_backward). */
static tridi_status device_failure(const char *f, const tridi_problem *p, unsigned long long w)
{
    if (w == ~0ull)
        return TRIDI_SUCCESS;
    const int64_t line = (int64_t)(w >> 24), low = (int64_t)(w & ((1u << 24) - 1));
    return tridi_thomas_report(f, p, line, (tridi_thomas_fail){((1 << 24) - 1) - low, TRIDI_FAIL_ANSWER_OVERFLOW});
}

/* Device buffers of the pipelined Thomas's lines (from the context's budget): their list, their inputs
 * and their answers. */
typedef struct fallback_buffers {
    struct tridi_cuda_state *cuda;
    int64_t *lines;
    double *abcr;
    void *x;
    size_t bytes[3];
} fallback_buffers;

static void fallback_buffers_free(fallback_buffers *df)
{
    if (df->cuda) {
        tridi_cuda_budget_free(df->cuda, df->lines, df->bytes[0]);
        tridi_cuda_budget_free(df->cuda, df->abcr, df->bytes[1]);
        tridi_cuda_budget_free(df->cuda, df->x, df->bytes[2]);
    }
    memset(df, 0, sizeof *df);
}

/* The host and device buffers of the lines marked by NaN in ends (host copy of x_L, x_R). Before the
 * agreement that precedes the back substitution: the pipeline's messages start only if every rank
 * could allocate. Its rare lines pay their own allocations. */
static tridi_status fallback_buffers_prepare(const char *f, tridi_context ctx, const tridi_dplan *dp,
                                             const double *ends, tridi_fallback *fb, fallback_buffers *df)
{
    memset(df, 0, sizeof *df);
    tridi_status s = tridi_fallback_prepare(f, dp, ends, fb);
    if (s || !fb->nf)
        return s;
    const size_t n = (size_t)dp->n, nf = (size_t)fb->nf, es = tridi_dtype_size(dp->p.arrays.x_type);
    const char *what = "the pipelined Thomas's lines";
    df->cuda = ctx->cuda;
    df->bytes[0] = sizeof(int64_t) * nf;
    df->bytes[1] = sizeof(double) * 4 * n * nf;
    df->bytes[2] = es * n * nf;
    s = tridi_cuda_budget_alloc(ctx->cuda, df->bytes[0], what, (void **)&df->lines);
    if (!s)
        s = tridi_cuda_budget_alloc(ctx->cuda, df->bytes[1], what, (void **)&df->abcr);
    if (!s)
        s = tridi_cuda_budget_alloc(ctx->cuda, df->bytes[2], what, &df->x);
    if (!s)
        s = tridi_mpi_cuda_copy(df->lines, fb->lines, df->bytes[0], TRIDI_MPI_TO_DEVICE, NULL, f,
                                "the pipelined Thomas's line list");
    if (!s)
        s = tridi_mpi_cuda_wait(NULL, f, "the pipelined Thomas's line list");
    if (s) {
        fallback_buffers_free(df);
        tridi_fallback_free(fb);
    }
    return s;
}

/* The pipelined Thomas of the marked lines of a device solve: their inputs to the host, the pipeline,
 * their answers back into x when write is set (the back substitution kernel ran, so their old x is in
 * the undo copy). Runs every message of the pipeline whatever failed before, as the other ranks of the
 * line wait for them. */
static tridi_status device_pipeline(const char *f, const tridi_dplan *dp, tridi_fallback *fb, fallback_buffers *df,
                                    int write, void *stream)
{
    const size_t n = (size_t)dp->n, nf = (size_t)fb->nf, es = tridi_dtype_size(dp->p.arrays.x_type);
    const char *in = "reading the lines of the pipelined Thomas", *out = "writing the answers of the pipelined Thomas";
    tridi_status s = tridi_mpi_cuda_gather_lines(&dp->p, df->lines, fb->nf, df->abcr, stream);
    if (!s)
        s = tridi_mpi_cuda_copy(fb->abcr, df->abcr, sizeof(double) * 4 * n * nf, TRIDI_MPI_TO_HOST, stream, f, in);
    if (!s)
        s = tridi_mpi_cuda_wait(stream, f, in);
    tridi_status sp = tridi_pipeline_thomas(f, dp, fb);
    if (!s && !sp && write) {
        s = tridi_mpi_cuda_copy(df->x, fb->x, es * n * nf, TRIDI_MPI_TO_DEVICE, stream, f, out);
        if (!s) {
            s = tridi_mpi_cuda_scatter_lines(&dp->p, df->lines, fb->nf, df->x, stream);
            const tridi_status w = tridi_mpi_cuda_wait(stream, f, out);
            if (!s)
                s = w;
        }
    }
    return s ? s : sp;
}

/* After a kernel queued on stream whose launch gave s: brings its failure word from dfail to *hfail and
 * waits for the stream; a CUDA error becomes a status naming the step. */
static tridi_status fetch_failure(const char *f, const char *step, tridi_status s, const unsigned long long *dfail,
                                  unsigned long long *hfail, void *stream)
{
    if (s)
        return s;
    s = tridi_mpi_cuda_copy(hfail, dfail, sizeof *hfail, TRIDI_MPI_TO_HOST, stream, f, step);
    return s ? s : tridi_mpi_cuda_wait(stream, f, step);
}

/* The device cut solve's kept state, and the rollback of the guard's cut-undo strategy: x put back from
 * the undo copy, waited for. */
typedef struct device_kept {
    const tridi_dplan *dp;
    void *undo, *stream;
    const char *f;
} device_kept;

static tridi_status device_restore(void *self)
{
    const device_kept *k = self;
    const tridi_status r = tridi_mpi_cuda_restore(&k->dp->p, k->undo, k->stream);
    const tridi_status w = tridi_mpi_cuda_wait(k->stream, k->f, "putting x back after a failure");
    return r ? r : w;
}

/* Back substitution on the device, agreed over the decomposition: an answer that overflows x's type on
 * any rank fails the call on every rank, and each rank whose back substitution ran puts its old x back
 * from the undo copy (no partial answer, as tridi_solve and the host path). dfail/hfail: one word on the
 * device and in pinned host memory. */
static tridi_status device_backward(const char *f, MPI_Comm comm, const tridi_dplan *dp, double *work,
                                    const double *dends, unsigned long long *dfail, unsigned long long *hfail,
                                    tridi_fallback *fb, fallback_buffers *df, void *stream)
{
    const int work_here = dp->has_lines && dp->n > 0;
    void *undo = work_here ? (char *)work + tridi_dtype_size(dp->p.arrays.x_type) * 3 * (size_t)dp->n * (size_t)dp->nlines
                           : NULL;
    tridi_status s = TRIDI_SUCCESS;
    int ran = 0; /* the kernel completed: undo holds every old value it replaced */
    if (work_here) {
        s = fetch_failure(f, "back substitution", tridi_mpi_cuda_backward(&dp->p, dp->ns, work, dends, undo, dfail, stream),
                          dfail, hfail, stream);
        ran = !s;
        if (!s)
            s = device_failure(f, &dp->p, *hfail);
    }
    if (fb->nf) {
        tridi_dsolve_failure before;
        tridi_dsolve_failure_save(dp, s, &before);
        tridi_status sp = device_pipeline(f, dp, fb, df, ran, stream);
        s = tridi_dsolve_first_of(dp, &before, sp);
    }
    tridi_fallback_free(fb);
    fallback_buffers_free(df);
    /* The one guard (src/backend.h, docs/decisions/053): the ranks' verdict, then the undo copy put back
     * by the restore kernel where the back substitution ran (a failed restore is what the caller hears). */
    tridi_dsolve_ranks ranks = {comm, dp};
    tridi_guard_verdict v = {tridi_dsolve_verdict, &ranks, s, TRIDI_SUCCESS};
    device_kept kept = {dp, undo, stream, f};
    const tridi_guard_phases undo_copy = {NULL, device_restore, &kept};
    return tridi_guard_settle(s, &v, ran ? &undo_copy : NULL);
}

/* The device work arrays of this rank: G, W, S, the undo copy and the sub-blocks' (work), and a small
 * buffer of small_bytes (reduced coefficients or x_L, x_R, then the failure word). */
static tridi_status device_scratch(tridi_context ctx, const tridi_dplan *dp, size_t small_bytes, double **work,
                                   double **small)
{
    tridi_status s = tridi_cuda_scratch(ctx->cuda, TRIDI_CUDA_SCRATCH_WORK,
                                        tridi_mpi_cuda_work_bytes(&dp->p, dp->ns), (void **)work);
    if (!s)
        s = tridi_cuda_scratch(ctx->cuda, TRIDI_CUDA_SCRATCH_SMALL, small_bytes, (void **)small);
    return s;
}

/* A cut axis with the reduced systems moved GPU to GPU: forward kernel into this rank's slot of its
 * gather buffer, copies of that slot into the other line ranks' buffers, reduced systems and back
 * substitution on the GPU. Every agreement below is also the barrier the copies need: each rank
 * synchronises its stream before entering it. */
static tridi_status solve_cut_ipc(const char *f, tridi_context ctx, tridi_decomp d, const tridi_dplan *dp,
                                  void *stream)
{
    MPI_Comm comm = d->comm;
    const int work_here = dp->has_lines && dp->n > 0;
    tridi_reduced_ipc *red = NULL;
    size_t nl = (size_t)dp->nlines;
    tridi_status s = TRIDI_SUCCESS;
    int P = dp->line_size, me = dp->line_rank;
    if (dp->has_lines) {
        int ax = 0;
        for (int a = 0; a < 2; ++a)
            if (d->line_comm[a] == dp->line_comm)
                ax = a;
        red = &d->red[ax];
        s = reduced_grow(f, ctx, d, ax, nl);
    }
    unsigned long long *hfail = NULL;
    if (!s)
        s = tridi_cuda_scratch(ctx->cuda, TRIDI_CUDA_SCRATCH_COEF, 2 * sizeof(unsigned long long), (void **)&hfail);
    double *dends = NULL;
    unsigned long long *dfail = NULL;
    double *work = NULL;
    if (!s && work_here) {
        s = device_scratch(ctx, dp, sizeof(double) * (2 * nl + 2), &work, &dends);
        if (!s)
            dfail = (unsigned long long *)(dends + 2 * nl);
    }
    size_t slot = red ? 6 * red->cap + 1 : 0;
    double *mine = red && red->buf ? red->buf + (size_t)me * slot : NULL;
    if (!s && dp->has_lines) {
        /* The flag word: whether this rank holds unknowns of the line. */
        const char *what = "forward elimination";
        s = tridi_mpi_cuda_fill(mine + 6 * red->cap, work_here ? 0xff : 0, sizeof(double), stream, f, what);
        if (!s && work_here)
            s = tridi_mpi_cuda_forward(&dp->p, dp->first, dp->last, dp->ns, work, mine, stream);
        const tridi_status w = tridi_mpi_cuda_wait(stream, f, what);
        if (!s)
            s = w;
    }
    s = tridi_mpi_agree(comm, s);
    if (!s && dp->has_lines) {
        const char *what = "copying the reduced system to the line's GPUs";
        for (int r = 0; r < P && !s; ++r) {
            if (r == me)
                continue;
            double *dst = red->peer_buf[r] + (size_t)me * slot;
            s = tridi_mpi_cuda_copy(dst, mine, sizeof(double) * 6 * nl, TRIDI_MPI_DEVICE_TO_DEVICE, stream, f, what);
            if (!s)
                s = tridi_mpi_cuda_copy(dst + 6 * red->cap, mine + 6 * red->cap, sizeof(double),
                                        TRIDI_MPI_DEVICE_TO_DEVICE, stream, f, what);
        }
        if (!s)
            s = tridi_mpi_cuda_wait(stream, f, what);
    }
    s = tridi_mpi_agree(comm, s);
    /* The reduced systems; lines they mark (hfail[0] of them) go to the pipelined Thomas, whose buffers
     * are allocated before the agreement. */
    tridi_fallback fb = {0};
    fallback_buffers df = {0};
    if (!s && work_here) {
        s = fetch_failure(f, "reduced systems",
                          tridi_mpi_cuda_reduced(red->buf, red->cap, P, me, (int64_t)nl, dends, dfail, stream), dfail,
                          hfail, stream);
        if (!s && hfail[0]) {
            double *ends = malloc(sizeof(double) * 2 * nl);
            s = !ends ? tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory", f)
                      : tridi_mpi_cuda_copy(ends, dends, sizeof(double) * 2 * nl, TRIDI_MPI_TO_HOST, NULL, f,
                                            "reading x_L, x_R");
            if (!s)
                s = tridi_mpi_cuda_wait(NULL, f, "reading x_L, x_R");
            if (!s)
                s = fallback_buffers_prepare(f, ctx, dp, ends, &fb, &df);
            free(ends);
        }
    }
    s = tridi_mpi_agree(comm, s);
    if (s) {
        tridi_fallback_free(&fb);
        fallback_buffers_free(&df);
        return s;
    }
    return device_backward(f, comm, dp, work, dends, dfail, hfail, &fb, &df, stream);
}

/* A cut axis with the reduced systems through the host: the coefficients to pinned memory, the host's
 * reduced solve over the line (dsolve_reduced.c), x_L, x_R back to the device. */
static tridi_status solve_cut_staged(const char *f, tridi_context ctx, tridi_decomp d, const tridi_dplan *dp,
                                     void *stream)
{
    MPI_Comm comm = d->comm;
    const int work_here = dp->has_lines && dp->n > 0;
    size_t nl = (size_t)dp->nlines;
    /* Pinned host buffers: coefficients (+ the failure word) down, x_L/x_R up. */
    double *coef = NULL, *ends = NULL;
    tridi_status s = tridi_cuda_scratch(ctx->cuda, TRIDI_CUDA_SCRATCH_COEF, sizeof(double) * (6 * nl + 2),
                                        (void **)&coef);
    if (!s)
        s = tridi_cuda_scratch(ctx->cuda, TRIDI_CUDA_SCRATCH_ENDS, sizeof(double) * (2 * nl + 1), (void **)&ends);
    double *dwork = NULL, *dcoef = NULL;
    unsigned long long *dfail = NULL;
    if (!s && work_here) {
        s = device_scratch(ctx, dp, sizeof(double) * (6 * nl + 2), &dwork, &dcoef);
        if (!s)
            dfail = (unsigned long long *)(dcoef + 6 * nl);
    }
    unsigned long long *failp = coef ? (unsigned long long *)(coef + 6 * nl) : NULL;
    if (!s && work_here)
        s = tridi_mpi_cuda_forward(&dp->p, dp->first, dp->last, dp->ns, dwork, dcoef, stream);
    if (!s && work_here) {
        const char *what = "reading the reduced coefficients";
        s = tridi_mpi_cuda_copy(coef, dcoef, sizeof(double) * 6 * nl, TRIDI_MPI_TO_HOST, stream, f, what);
        if (!s)
            s = tridi_mpi_cuda_wait(stream, f, what);
    }
    s = tridi_mpi_agree(comm, s);
    /* The reduced systems on the host, then the buffers of the lines they marked for the pipelined
     * Thomas, allocated before the agreement. */
    tridi_fallback fb = {0};
    fallback_buffers df = {0};
    if (!s) {
        s = dp->has_lines ? tridi_dsolve_reduce(f, d, dp, coef, ends) : TRIDI_SUCCESS;
        if (!s && work_here)
            s = fallback_buffers_prepare(f, ctx, dp, ends, &fb, &df);
        s = tridi_mpi_agree(comm, s);
    }
    double *dends = dcoef; /* the coefficients are no longer needed on the device */
    if (!s && work_here)
        s = tridi_mpi_cuda_copy(dends, ends, sizeof(double) * 2 * nl, TRIDI_MPI_TO_DEVICE, stream, f,
                                "sending x_L, x_R to the device");
    s = tridi_mpi_agree(comm, s);
    if (s) {
        tridi_fallback_free(&fb);
        fallback_buffers_free(&df);
        return s;
    }
    return device_backward(f, comm, dp, dwork, dends, dfail, failp, &fb, &df, stream);
}

tridi_status tridi_dsolve_cut_device(const char *f, tridi_context ctx, tridi_decomp d, tridi_dplan *dp, void *stream)
{
    tridi_status s = reduced_decide(f, d, dp->axis);
    if (s)
        return s;
    dp->ns = dp->has_lines && dp->n > 0 ? tridi_mpi_cuda_subblocks(&dp->p, ctx->tuning.mpi_subblocks) : 1;
    return d->red[dp->axis].state > 0 ? solve_cut_ipc(f, ctx, d, dp, stream) : solve_cut_staged(f, ctx, d, dp, stream);
}
