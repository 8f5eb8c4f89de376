/* A build without CUDA: the CUDA table's stubs. No context holds the CUDA backend in such a build
 * (tridi_create refuses it), so reaching one is a bug. */
#include "adi_internal.h"
#include "backend.h"

static tridi_status absent(void)
{
    return tridi_fail(TRIDI_ERROR_INTERNAL, "tridi: a CUDA call in a build without CUDA (please report)");
}

static tridi_status nc_plan_create(tridi_context c, struct tridi_plan_s *p) { (void)c, (void)p; return absent(); }
static void nc_plan_destroy(tridi_context c, struct tridi_plan_s *p) { (void)c, (void)p; }
static tridi_status nc_solve_host(tridi_context c, const tridi_problem *p)
{
    (void)c, (void)p;
    return absent();
}
static tridi_status nc_solve_device(tridi_context c, const tridi_problem *p, void *st, void *s)
{
    (void)c, (void)p, (void)st, (void)s;
    return absent();
}
static tridi_status nc_upload(tridi_context c, const tridi_problem *p, tridi_array_role r, const void *h, tridi_dtype t)
{
    (void)c, (void)p, (void)r, (void)h, (void)t;
    return absent();
}
static tridi_status nc_register(tridi_context c, const void *p, size_t b, int *pinned)
{
    (void)c, (void)p, (void)b;
    *pinned = 0;
    return absent();
}
static tridi_status nc_unregister(tridi_context c, const void *p, int pinned)
{
    (void)c, (void)p, (void)pinned;
    return absent();
}
static tridi_status nc_alloc(tridi_context c, size_t b, void **p) { (void)c, (void)b, (void)p; return absent(); }
static tridi_status nc_free(tridi_context c, void *p) { (void)c, (void)p; return absent(); }
static tridi_status nc_copy(tridi_context c, void *d, const void *s, size_t b, int to)
{
    (void)c, (void)d, (void)s, (void)b, (void)to;
    return absent();
}
static tridi_status nc_synchronize(tridi_context c) { (void)c; return absent(); }
static int nc_guard(tridi_context c, const tridi_problem *p, tridi_memory m, int outside)
{
    (void)c, (void)p, (void)m, (void)outside;
    return TRIDI_GUARD_SLAB_VERDICT; /* its one-phase solves report the backend's absence */
}
static tridi_status nc_solve_keep(tridi_context c, const tridi_problem *p, tridi_memory m, void *s)
{
    (void)c, (void)p, (void)m, (void)s;
    return absent();
}
static tridi_status nc_end(tridi_context c, tridi_memory m, void *s)
{
    (void)c, (void)m, (void)s;
    return absent();
}

static tridi_status nc_adi_create(const char *f, struct tridi_adi_s *plan, int path)
{
    (void)f, (void)plan, (void)path;
    return absent();
}
static void nc_adi_destroy(struct tridi_adi_s *plan) { (void)plan; }
static tridi_status nc_adi_check(const char *f, const struct tridi_adi_s *plan, const void *field, double *kmax)
{
    (void)f, (void)plan, (void)field;
    *kmax = 0.0;
    return absent();
}
static tridi_status nc_adi_explain(const char *f, const struct tridi_adi_s *plan, int axis, double dt, tridi_status s)
{
    (void)f, (void)plan, (void)axis, (void)dt, (void)s;
    return absent();
}
static tridi_status nc_adi_stage(const struct tridi_adi_s *plan, const adi_stage *s, void *stream)
{
    (void)plan, (void)s, (void)stream;
    return absent();
}
static tridi_status nc_adi_sweep(const struct tridi_adi_s *plan, const adi_stage *s, int accumulate, void *stream)
{
    (void)plan, (void)s, (void)accumulate, (void)stream;
    return absent();
}
static tridi_status nc_adi_mark(struct tridi_adi_s *plan, int m, void *stream)
{
    (void)plan, (void)m, (void)stream;
    return absent();
}
static tridi_status nc_adi_finish(struct tridi_adi_s *plan, void *stream)
{
    (void)plan, (void)stream;
    return absent();
}
static tridi_status nc_adi_wait(struct tridi_adi_s *plan, unsigned long long *key)
{
    (void)plan;
    *key = ADI_STATUS_CLEAR;
    return absent();
}

static const tridi_adi_ops nc_adi = {
    .memory = TRIDI_MEMORY_DEVICE,
    .create = nc_adi_create,
    .destroy = nc_adi_destroy,
    .check_inputs = nc_adi_check,
    .explain = nc_adi_explain,
    .stage = nc_adi_stage,
    .fused_sweep = nc_adi_sweep,
    .mark = nc_adi_mark,
    .finish = nc_adi_finish,
    .wait = nc_adi_wait,
};

const tridi_backend_ops tridi_backend_cuda_ops = {
    .name = "cuda (not built)",
    .plan_create = nc_plan_create,
    .plan_destroy = nc_plan_destroy,
    .guard = nc_guard,
    .solve_host = nc_solve_host,
    .solve_device = nc_solve_device,
    .solve_keep = nc_solve_keep,
    .commit = nc_end,
    .rollback = nc_end,
    .upload = nc_upload,
    .host_register = nc_register,
    .host_unregister = nc_unregister,
    .alloc = nc_alloc,
    .free = nc_free,
    .copy = nc_copy,
    .synchronize = nc_synchronize,
    .adi = &nc_adi,
};
