/* Which table a context's calls go through, the second phase of the one guard (backend.h, docs/decisions/053)
 * and AUTO's choice between the GPU path and the CPU backend for host arrays (docs/decisions/018). */
#include "backend.h"

#ifdef TRIDI_HAVE_CUDA
#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_max_threads(void) { return 1; }
#endif
#include <stdio.h>
#endif

const tridi_backend_ops *tridi_backend_of(tridi_context ctx)
{
    return ctx->backend == TRIDI_BACKEND_CUDA ? &tridi_backend_cuda_ops : &tridi_backend_cpu_ops;
}

#ifdef TRIDI_FAULT_INJECTION
/* Tests only (CMake option TRIDI_FAULT_INJECTION): tridi_test_fail_verdict(n) turns the n-th successful first
 * phase from now into a failed verdict, so that each strategy's rollback is seen to put x back; no input
 * can fail a call whose every line succeeded. Declared in tridi_internal.h. */
static int verdicts_before_failure;

TRIDI_PRIVATE void tridi_test_fail_verdict(int nth)
{
    __atomic_store_n(&verdicts_before_failure, nth > 0 ? nth : 0, __ATOMIC_RELAXED);
}

static tridi_status injected(tridi_status own)
{
    if (own || __atomic_load_n(&verdicts_before_failure, __ATOMIC_RELAXED) <= 0 ||
        __atomic_sub_fetch(&verdicts_before_failure, 1, __ATOMIC_RELAXED) != 0)
        return own;
    return tridi_fail(TRIDI_ERROR_INTERNAL, "tridi_guard_settle: injected failure of the verdict (tests only)");
}
#else
static inline tridi_status injected(tridi_status own) { return own; }
#endif

tridi_status tridi_guard_settle(tridi_status own, tridi_guard_verdict *v, const tridi_guard_phases *ph)
{
    own = injected(own);
    const tridi_status call = v && v->decide ? v->decide(v->arg, own) : own;
    if (v)
        v->own = own, v->call = call;
    if (!ph)
        return call;
    if (!call)
        return ph->commit ? ph->commit(ph->self) : TRIDI_SUCCESS;
    const tridi_status r = ph->rollback ? ph->rollback(ph->self) : TRIDI_SUCCESS;
    return r ? r : call;
}

/* The backend's second phase, as tridi_guard_phases. */
typedef struct backend_kept {
    tridi_context ctx;
    const tridi_backend_ops *ops;
    tridi_memory memory;
    void *stream;
} backend_kept;

static tridi_status backend_commit(void *self)
{
    const backend_kept *k = self;
    return k->ops->commit(k->ctx, k->memory, k->stream);
}

static tridi_status backend_rollback(void *self)
{
    const backend_kept *k = self;
    return k->ops->rollback(k->ctx, k->memory, k->stream);
}

tridi_status tridi_guard_settle_backend(tridi_context ctx, const tridi_backend_ops *ops, tridi_memory memory,
                                        void *stream, tridi_status own, tridi_guard_verdict *v)
{
    backend_kept k = {ctx, ops, memory, stream};
    const tridi_guard_phases ph = {backend_commit, backend_rollback, &k};
    return tridi_guard_settle(own, v, &ph);
}

/* The H100 machine's host (docs/decisions/018 gives each constant's measurement): pinned PCIe each way, the
 * GPU call beyond its transfers, one thread's and all threads' host bandwidth, a late pool worker
 * (decision 028: counted on every call, since tridi cannot tell whether the caller's loop just ran) and a
 * sleeping OpenMP team's wake-up (TRIDI_CPU_POOL=0, decision 017). */
const tridi_auto_machine tridi_auto_h100_host = {55e9, 55e9, 75e-6, 6.8e9, 85.7e9, 4e-6, 13.3e-6};

/* One thread per 512 KiB of a call's traffic: the CPU backend's rule (docs/decisions/017) and the GPU
 * path's host copies' (docs/decisions/012, at most 8 threads). */
#define AUTO_BYTES_PER_THREAD (512.0 * 1024.0)
#define AUTO_COPY_THREADS_MAX 8

static int threads_for(double bytes, int cap)
{
    int t = 1;
    while (t < cap && (double)t * AUTO_BYTES_PER_THREAD < bytes)
        ++t;
    return t;
}

static double bandwidth(const tridi_auto_machine *m, int threads)
{
    const double b = threads * m->thread_bytes_per_s;
    return b < m->host_bytes_per_s ? b : m->host_bytes_per_s;
}

tridi_auto_estimate tridi_auto_estimate_host(const tridi_auto_machine *m, const tridi_auto_call *c)
{
    tridi_auto_estimate e = {0, 0, 1, 1};
    const double cells = c->cells > 0 ? (double)c->cells : 0;
    const int threads = c->threads > 0 ? c->threads : 1;
    /* The CPU reads the inputs and writes x, and its undo log reads the old x and writes it again
     * (docs/decisions/007): 32 B/cell for MOHID's types. */
    e.cpu_threads = threads_for(cells * c->host_bytes, threads);
    const double workers = e.cpu_threads - 1.0;
    e.cpu_s = cells * (c->host_bytes + 2.0 * c->x_bytes) / bandwidth(m, e.cpu_threads) +
              (c->how == TRIDI_AUTO_CPU_POOL   ? m->pool_late_s * workers
               : c->how == TRIDI_AUTO_CPU_TEAM ? m->team_wake_s * workers * workers
                                               : 0.0);
    /* The GPU path: the inputs up, x down, and arrays not registered read into (or written from) pinned
     * staging on the host first. */
    e.gpu_s = m->gpu_call_s + cells * c->pcie_in_bytes / m->h2d_bytes_per_s + cells * c->x_bytes / m->d2h_bytes_per_s;
    if (c->staged_bytes > 0) {
        const int cap = threads < AUTO_COPY_THREADS_MAX ? threads : AUTO_COPY_THREADS_MAX;
        e.gpu_s += cells * 2.0 * c->staged_bytes / bandwidth(m, threads_for(cells * c->staged_bytes, cap));
    }
    e.use_cpu = e.cpu_s <= e.gpu_s;
    return e;
}

#ifdef TRIDI_HAVE_CUDA
static void print_auto_choice(const tridi_problem *p, int mask, const tridi_auto_call *c, const tridi_auto_estimate *e,
                int per_plan)
{
    long long ext[3];
    for (int a = 0; a < 3; ++a)
        ext[a] = (long long)(p->hi[a] - p->lo[a] + 1);
    fprintf(stderr,
            "tridi %s: AUTO, host arrays %lldx%lldx%lld along %c (%lld cells, %d of 5 arrays registered): %s "
            "backend, modelled %.3f ms on %d CPU thread%s (%s) against %.3f ms through the GPU "
            "(docs/decisions/018; stated once per %s)\n",
            tridi_version_string(), ext[0], ext[1], ext[2], "xyz"[p->axis], (long long)(p->nlines * p->n),
            __builtin_popcount((unsigned)mask), e->use_cpu ? "cpu" : "cuda", 1e3 * e->cpu_s, e->cpu_threads,
            e->cpu_threads > 1 ? "s" : "",
            c->how == TRIDI_AUTO_CPU_POOL   ? "tridi's worker pool, workers joining late after the caller's work"
            : c->how == TRIDI_AUTO_CPU_TEAM ? "an OpenMP team per call, waking after the caller's work"
                                            : "an OpenMP team kept spinning",
            1e3 * e->gpu_s, per_plan ? "plan and set of registered arrays" : "context and backend (tridi_solve)");
}

const tridi_backend_ops *tridi_host_ops(tridi_context ctx, const tridi_problem *p, signed char memo[32])
{
    /* An explicit TRIDI_BACKEND_CUDA keeps every call on the GPU. */
    if (ctx->backend != TRIDI_BACKEND_CUDA || ctx->config.backend != TRIDI_BACKEND_AUTO)
        return tridi_backend_of(ctx);
    /* Inputs uploaded ahead wait on the GPU for this solve, which also retires them there. */
    if (ctx->auto_uploads_queued) {
        ctx->auto_uploads_queued = 0;
        return &tridi_backend_cuda_ops;
    }
    const tridi_arrays *a = &p->arrays;
    const void *ptr[5] = {a->lower, a->diag, a->upper, a->rhs, a->x};
    const tridi_dtype type[5] = {a->lower_type, a->diag_type, a->upper_type, a->rhs_type, a->x_type};
    const int narrow = ctx->config.allow_f32_transfer && p->combo != TRIDI_COMBO_F32;
    tridi_auto_call c = {p->nlines * p->n, 0, (int)tridi_dtype_size(a->x_type), 0, 0,
                         tridi_cpu_threads(ctx),
                         !ctx->tuning.cpu_openmp_team    ? TRIDI_AUTO_CPU_POOL
                         : ctx->tuning.omp_wait_active ? TRIDI_AUTO_CPU_TEAM_AWAKE
                                                       : TRIDI_AUTO_CPU_TEAM};
    int mask = 0;
    for (int r = 0; r < 5; ++r) {
        const int es = (int)tridi_dtype_size(type[r]);
        const int xfer = narrow && r < 4 ? 4 : es;
        const int reg = tridi_host_is_registered(ctx, ptr[r], (size_t)p->total_cells * (size_t)es);
        mask |= reg << r;
        c.host_bytes += es;
        if (r < 4)
            c.pcie_in_bytes += xfer;
        if (!reg || xfer != es)
            c.staged_bytes += es;
    }
    if (memo && memo[mask])
        return memo[mask] == 2 ? &tridi_backend_cpu_ops : &tridi_backend_cuda_ops;
    const tridi_auto_estimate e = tridi_auto_estimate_host(&tridi_auto_h100_host, &c);
    const int choice = e.use_cpu ? 2 : 1;
    int tell = ctx->config.verbose;
    if (memo) {
        memo[mask] = (signed char)choice;
    } else {
        tell = tell && !(ctx->auto_said & choice);
        ctx->auto_said |= choice;
    }
    if (tell)
        print_auto_choice(p, mask, &c, &e, memo != NULL);
    return e.use_cpu ? &tridi_backend_cpu_ops : &tridi_backend_cuda_ops;
}
#else
const tridi_backend_ops *tridi_host_ops(tridi_context ctx, const tridi_problem *p, signed char memo[32])
{
    (void)p, (void)memo;
    return tridi_backend_of(ctx); /* no context holds the CUDA backend in a build without it */
}
#endif
