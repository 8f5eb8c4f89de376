/* Context lifetime, backend selection (AUTO resolves to CUDA when a GPU is usable, else CPU), version. */
#include "tridi_internal.h"

#ifdef _OPENMP
#include <omp.h>
#else /* a build without OpenMP (e.g. the fuzzing harness) runs the same code on one thread */
static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_get_num_procs(void) { return 1; }
static inline int omp_get_thread_limit(void) { return 1; }
#endif
#include <pthread.h>
#if defined(__SANITIZE_ADDRESS__)
#define TRIDI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TRIDI_ASAN 1
#endif
#endif
#ifdef TRIDI_ASAN
#include <sanitizer/asan_interface.h>
#else
#define ASAN_POISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(addr, size) ((void)(addr), (void)(size))
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRIDI_STR2(x) #x
#define TRIDI_STR(x) TRIDI_STR2(x)

const char *tridi_version_string(void)
{
    return TRIDI_STR(TRIDI_VERSION_MAJOR) "." TRIDI_STR(TRIDI_VERSION_MINOR) "." TRIDI_STR(TRIDI_VERSION_PATCH);
}

void tridi_version(int *major, int *minor, int *patch)
{
    if (major) *major = TRIDI_VERSION_MAJOR;
    if (minor) *minor = TRIDI_VERSION_MINOR;
    if (patch) *patch = TRIDI_VERSION_PATCH;
}

const char *tridi_backend_name(tridi_backend backend)
{
    switch (backend) {
    case TRIDI_BACKEND_AUTO: return "auto";
    case TRIDI_BACKEND_CPU: return "cpu";
    case TRIDI_BACKEND_CUDA: return "cuda";
    }
    return "unknown";
}

static void config_defaults(tridi_config *config, tridi_backend backend)
{
    memset(config, 0, sizeof *config);
    config->size = sizeof *config;
    config->backend = backend;
    config->on_error = TRIDI_ON_ERROR_LINES; /* docs/decisions/019 */
}

void tridi_config_init(tridi_config *config)
{
    if (config)
        config_defaults(config, tridi_tuning_backend());
}

/* The registry of live handles (tridi_internal.h says what it guarantees). A marker inside the handle's
 * memory cannot do this: the store that clears it just before free() is dead to the compiler, and a
 * destroyed handle's memory may already belong to someone else. Live handles are few (contexts, plans,
 * ADI plans, decompositions, halo plans), so a scan is enough. Destroyed handles keep their (small)
 * memory in a ring, oldest freed first, so that no new handle can be given their address. */
typedef struct live_handle {
    const void *h;
    tridi_handle_kind kind;
} live_handle;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static live_handle *live;
static size_t nlive, live_cap;
typedef struct buried_handle {
    void *h;
    size_t bytes;
} buried_handle;
static buried_handle *buried;
static size_t nburied, buried_cap, buried_next;

int tridi_handle_add(tridi_handle_kind kind, const void *h)
{
    int rc = 0;
    pthread_mutex_lock(&registry_lock);
    if (nlive == live_cap) {
        size_t cap = live_cap ? 2 * live_cap : 16;
        live_handle *grown = realloc(live, cap * sizeof *grown);
        if (grown) {
            live = grown;
            live_cap = cap;
        } else {
            rc = -1;
        }
    }
    if (!rc)
        live[nlive++] = (live_handle){h, kind};
    pthread_mutex_unlock(&registry_lock);
    return rc;
}

int tridi_handle_is_live(tridi_handle_kind kind, const void *h)
{
    int found = 0;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < nlive && !found; ++i)
        found = live[i].h == h && live[i].kind == kind;
    pthread_mutex_unlock(&registry_lock);
    return found;
}

int tridi_handle_retire(tridi_handle_kind kind, const void *h)
{
    int found = 0;
    pthread_mutex_lock(&registry_lock);
    for (size_t i = 0; i < nlive; ++i) {
        if (live[i].h == h && live[i].kind == kind) {
            live[i] = live[--nlive];
            found = 1;
            break;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return found;
}

void tridi_handle_bury(void *h, size_t bytes)
{
    /* In the sanitizer build a read of a buried handle is reported as a use after free would be. */
    ASAN_POISON_MEMORY_REGION(h, bytes);
    buried_handle evicted = {NULL, 0};
    pthread_mutex_lock(&registry_lock);
    if (nburied == buried_cap && buried_cap < TRIDI_HANDLE_BURIED_MAX) {
        size_t cap = buried_cap ? 2 * buried_cap : 16;
        buried_handle *grown = realloc(buried, cap * sizeof *grown);
        if (grown) {
            buried = grown;
            buried_cap = cap;
        }
    }
    if (nburied < buried_cap) {
        buried[nburied++] = (buried_handle){h, bytes};
    } else if (buried_cap) { /* full (or could not grow): the oldest goes */
        evicted = buried[buried_next];
        buried[buried_next] = (buried_handle){h, bytes};
        buried_next = (buried_next + 1) % buried_cap;
    } else {
        evicted = (buried_handle){h, bytes};
    }
    pthread_mutex_unlock(&registry_lock);
    if (evicted.h) {
        ASAN_UNPOISON_MEMORY_REGION(evicted.h, evicted.bytes);
        free(evicted.h);
    }
}

tridi_status tridi_check_handle(tridi_handle_kind kind, const void *h, const char *func, const char *if_null,
                                const char *if_dead)
{
    if (!h)
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "%s: %s", func, if_null);
    if (!tridi_handle_is_live(kind, h))
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "%s: %s", func, if_dead);
    return TRIDI_SUCCESS;
}

tridi_status tridi_check_context(const char *func, tridi_context ctx)
{
    return tridi_check_handle(TRIDI_HANDLE_CONTEXT, ctx, func, "argument 'ctx' is NULL (create it with tridi_create)",
                              "argument 'ctx' is not a live tridi context (destroyed, or never created)");
}

static int cpu_thread_cap(void)
{
    int cap = omp_get_num_procs();
    if (omp_get_thread_limit() < cap)
        cap = omp_get_thread_limit();
    return cap < 1 ? 1 : cap;
}

int tridi_cpu_threads(tridi_context ctx)
{
    const int n = ctx->config.num_threads > 0 ? ctx->config.num_threads : omp_get_max_threads();
    return n < 1 ? 1 : n > ctx->thread_cap ? ctx->thread_cap : n;
}

tridi_status tridi_context_enter(const char *f, tridi_context ctx, const void *plan)
{
    int idle = 0;
    if (__atomic_compare_exchange_n(&ctx->in_use, &idle, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
        return TRIDI_SUCCESS;
    if (plan)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: plan %p: its context is in use by another call still running (another thread's?): "
                          "a context and its plans are used by one thread at a time (docs/api.md, decision 045)",
                          f, plan);
    return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                      "%s: argument 'ctx' is in use by another call still running (another thread's?): a context "
                      "is used by one thread at a time (docs/api.md, decision 045)", f);
}

void tridi_context_leave(tridi_context ctx) { __atomic_store_n(&ctx->in_use, 0, __ATOMIC_RELEASE); }

tridi_status tridi_create(tridi_context *ctx, const tridi_config *config)
{
    static const char *f = "tridi_create";
    if (!ctx)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'ctx' is NULL", f);
    *ctx = NULL;
    /* The environment is read here and only here (docs/tuning.md): a malformed knob refuses the create. */
    tridi_tuning tuning;
    tridi_status ts = tridi_tuning_read(f, &tuning);
    if (ts)
        return ts;
    tridi_config cfg;
    config_defaults(&cfg, tuning.backend);
    if (config) {
        if (config->size < offsetof(tridi_config, allow_f32_transfer) + sizeof(int) || config->size > 4096)
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "%s: config->size = %zu is not sizeof(tridi_config) = %zu: call tridi_config_init first",
                              f, config->size, sizeof(tridi_config));
        memcpy(&cfg, config, sizeof cfg < config->size ? sizeof cfg : config->size);
        cfg.size = sizeof cfg;
    }
    if (cfg.backend != TRIDI_BACKEND_AUTO && cfg.backend != TRIDI_BACKEND_CPU && cfg.backend != TRIDI_BACKEND_CUDA)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: config->backend = %d is not AUTO (0), CPU (1) or CUDA (2)",
                          f, (int)cfg.backend);
    if (cfg.num_threads < 0)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: config->num_threads = %d is negative", f, cfg.num_threads);
    /* More threads than processors never pays for a memory-bound solve, and far more makes libgomp exit
     * the process ("Thread creation failed") or crash: such a request is capped, not refused, and so is
     * OpenMP's own count when num_threads is 0 (tridi_cpu_threads). */
    const int asked_threads = cfg.num_threads;
    const int thread_cap = cpu_thread_cap();
    if (cfg.num_threads > thread_cap)
        cfg.num_threads = thread_cap;
    if (cfg.pivoting != TRIDI_PIVOT_NONE && cfg.pivoting != TRIDI_PIVOT_CHECK && cfg.pivoting != TRIDI_PIVOT_FALLBACK)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: config->pivoting = %d is not TRIDI_PIVOT_NONE (0), TRIDI_PIVOT_CHECK (1) or "
                          "TRIDI_PIVOT_FALLBACK (2)", f, cfg.pivoting);
    if (cfg.device < 0)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: config->device = %d is negative", f, cfg.device);
    if (cfg.on_error != TRIDI_ON_ERROR_LINES && cfg.on_error != TRIDI_ON_ERROR_CALL)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: config->on_error = %d is neither TRIDI_ON_ERROR_LINES (0) nor TRIDI_ON_ERROR_CALL (1)",
                          f, cfg.on_error);

    struct tridi_context_s *c = calloc(1, sizeof *c);
    if (!c)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not allocate the context", f);
    c->cpu = tridi_cpu_state_create();
    if (!c->cpu) {
        free(c);
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not allocate the CPU backend's state", f);
    }
    c->config = cfg;
    c->tuning = tuning;
    c->thread_cap = thread_cap;
    c->backend = TRIDI_BACKEND_CPU;
    const char *why_cpu = "the CPU backend was asked for";

    if (cfg.backend != TRIDI_BACKEND_CPU) {
#ifdef TRIDI_HAVE_CUDA
        int ndev = tridi_cuda_device_count();
        if (ndev > cfg.device) {
            tridi_status s = tridi_cuda_create(cfg.device, &c->config, &c->tuning, &c->cuda);
            if (s == TRIDI_SUCCESS) {
                c->backend = TRIDI_BACKEND_CUDA;
            } else if (cfg.backend == TRIDI_BACKEND_CUDA) {
                tridi_cpu_state_destroy(c->cpu);
                free(c);
                return s; /* message set by the CUDA backend */
            } else {
                why_cpu = "the GPU could not be initialised";
            }
        } else if (cfg.backend == TRIDI_BACKEND_CUDA) {
            tridi_cpu_state_destroy(c->cpu);
            free(c);
            return tridi_fail(TRIDI_ERROR_NO_DEVICE, "%s: the CUDA backend was asked for but %d usable GPU(s) were "
                              "found and config->device = %d", f, ndev, cfg.device);
        } else {
            why_cpu = "no usable GPU was found";
        }
#else
        if (cfg.backend == TRIDI_BACKEND_CUDA) {
            tridi_cpu_state_destroy(c->cpu);
            free(c);
            return tridi_fail(TRIDI_ERROR_NO_DEVICE,
                              "%s: the CUDA backend was asked for but this tridi was built without CUDA "
                              "(TRIDI_ENABLE_CUDA=OFF)", f);
        }
        why_cpu = "tridi was built without CUDA";
#endif
    }
    if (cfg.verbose) {
        if (c->backend == TRIDI_BACKEND_CUDA)
            fprintf(stderr, "tridi %s: backend cuda (device %d)\n", tridi_version_string(), cfg.device);
        else
            fprintf(stderr, "tridi %s: backend cpu, %d OpenMP threads (%s)\n", tridi_version_string(),
                    tridi_cpu_threads(c), why_cpu);
        if (asked_threads > cfg.num_threads)
            fprintf(stderr, "tridi %s: config->num_threads = %d capped at %d, the processors OpenMP reports "
                    "(omp_get_num_procs = %d, omp_get_thread_limit = %d)\n", tridi_version_string(), asked_threads,
                    cfg.num_threads, omp_get_num_procs(), omp_get_thread_limit());
    }
    if (tridi_handle_add(TRIDI_HANDLE_CONTEXT, c)) {
#ifdef TRIDI_HAVE_CUDA
        if (c->cuda)
            tridi_cuda_destroy(c->cuda);
#endif
        tridi_cpu_state_destroy(c->cpu);
        free(c);
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not record the new context", f);
    }
    *ctx = c;
    return TRIDI_SUCCESS;
}

/* The registry of tridi_host_register (register.c) dies with the context; here rather than in register.c
 * so that builds of the core files alone (the fuzzing harness) need nothing more. */
void tridi_host_unregister_all(tridi_context ctx)
{
#ifdef TRIDI_HAVE_CUDA
    if (ctx->backend == TRIDI_BACKEND_CUDA)
        for (int i = 0; i < ctx->nranges; ++i)
            tridi_cuda_host_unregister(ctx->cuda, (const void *)ctx->ranges[i].begin, ctx->ranges[i].pinned);
#endif
    free(ctx->ranges);
    ctx->ranges = NULL;
    ctx->nranges = ctx->ranges_cap = 0;
}

tridi_status tridi_destroy(tridi_context ctx)
{
    if (!ctx)
        return TRIDI_SUCCESS;
    tridi_status s = tridi_check_context("tridi_destroy", ctx);
    if (s)
        return s;
    if (ctx->adi_plans > 0) /* freeing it would leave them a dangling context; the caller's context stays usable */
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "tridi_destroy: %d ADI plan%s made with this context %s still alive: destroy %s first "
                          "(tridi_adi_destroy)",
                          ctx->adi_plans, ctx->adi_plans > 1 ? "s" : "", ctx->adi_plans > 1 ? "are" : "is",
                          ctx->adi_plans > 1 ? "them" : "it");
    if (ctx->plans > 0) /* the same for solve plans (tridi_plan_create) */
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "tridi_destroy: %d solve plan%s made with this context %s still alive: destroy %s first "
                          "(tridi_plan_destroy)",
                          ctx->plans, ctx->plans > 1 ? "s" : "", ctx->plans > 1 ? "are" : "is",
                          ctx->plans > 1 ? "them" : "it");
    /* From here the handle is dead to every caller; of two destroys racing, one frees. */
    if (!tridi_handle_retire(TRIDI_HANDLE_CONTEXT, ctx))
        return tridi_check_context("tridi_destroy", ctx);
    tridi_host_unregister_all(ctx); /* before the CUDA state goes: it waits for transfers first */
#ifdef TRIDI_HAVE_CUDA
    if (ctx->cuda)
        tridi_cuda_destroy(ctx->cuda);
#endif
    tridi_cpu_state_destroy(ctx->cpu);
    ctx->cpu = NULL;
    tridi_handle_bury(ctx, sizeof *ctx);
    return TRIDI_SUCCESS;
}

tridi_status tridi_get_backend(tridi_context ctx, tridi_backend *backend)
{
    tridi_status s = tridi_check_context("tridi_get_backend", ctx);
    if (s)
        return s;
    if (!backend)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "tridi_get_backend: argument 'backend' is NULL");
    *backend = ctx->backend;
    return TRIDI_SUCCESS;
}
