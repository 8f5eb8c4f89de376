/* Context lifetime, backend selection (AUTO resolves to CUDA when a GPU is usable, else CPU), version. */
#include "tridi_internal.h"

#ifdef _OPENMP
#include <omp.h>
#else /* a build without OpenMP (e.g. the fuzzing harness) runs the same code on one thread */
static inline int omp_get_max_threads(void) { return 1; }
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

void tridi_config_init(tridi_config *config)
{
    if (!config)
        return;
    memset(config, 0, sizeof *config);
    config->size = sizeof *config;
    config->backend = TRIDI_BACKEND_AUTO;
    const char *env = getenv("TRIDI_BACKEND");
    if (env) {
        if (!strcasecmp(env, "cpu")) config->backend = TRIDI_BACKEND_CPU;
        else if (!strcasecmp(env, "cuda") || !strcasecmp(env, "gpu")) config->backend = TRIDI_BACKEND_CUDA;
    }
}

tridi_status tridi_check_context(const char *func, tridi_context ctx)
{
    if (!ctx)
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "%s: argument 'ctx' is NULL (create it with tridi_create)", func);
    if (ctx->magic != TRIDI_CONTEXT_MAGIC)
        return tridi_fail(TRIDI_ERROR_INVALID_HANDLE, "%s: argument 'ctx' is not a live tridi context (destroyed?)", func);
    return TRIDI_SUCCESS;
}

tridi_status tridi_create(tridi_context *ctx, const tridi_config *config)
{
    static const char *f = "tridi_create";
    if (!ctx)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'ctx' is NULL", f);
    *ctx = NULL;
    tridi_config cfg;
    tridi_config_init(&cfg);
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
    if (cfg.device < 0)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: config->device = %d is negative", f, cfg.device);

    struct tridi_context_s *c = calloc(1, sizeof *c);
    if (!c)
        return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: could not allocate the context", f);
    c->magic = TRIDI_CONTEXT_MAGIC;
    c->config = cfg;
    c->backend = TRIDI_BACKEND_CPU;
    const char *why_cpu = "the CPU backend was asked for";

    if (cfg.backend != TRIDI_BACKEND_CPU) {
#ifdef TRIDI_HAVE_CUDA
        int ndev = tridi_cuda_device_count();
        if (ndev > cfg.device) {
            tridi_status s = tridi_cuda_create(cfg.device, &c->config, &c->cuda);
            if (s == TRIDI_SUCCESS) {
                c->backend = TRIDI_BACKEND_CUDA;
            } else if (cfg.backend == TRIDI_BACKEND_CUDA) {
                free(c);
                return s; /* message set by the CUDA backend */
            } else {
                why_cpu = "the GPU could not be initialised";
            }
        } else if (cfg.backend == TRIDI_BACKEND_CUDA) {
            free(c);
            return tridi_fail(TRIDI_ERROR_NO_DEVICE, "%s: the CUDA backend was asked for but %d usable GPU(s) were "
                              "found and config->device = %d", f, ndev, cfg.device);
        } else {
            why_cpu = "no usable GPU was found";
        }
#else
        if (cfg.backend == TRIDI_BACKEND_CUDA) {
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
                    cfg.num_threads ? cfg.num_threads : omp_get_max_threads(), why_cpu);
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
    tridi_host_unregister_all(ctx); /* before the CUDA state goes: it waits for transfers first */
#ifdef TRIDI_HAVE_CUDA
    if (ctx->cuda)
        tridi_cuda_destroy(ctx->cuda);
#endif
    free(ctx->cpu_scratch);
    ctx->magic = 0;
    free(ctx);
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
