/* Registration of the caller's host memory (tridi_host_register / tridi_host_unregister). Explicit, not
 * behind the caller's back: a page-locked range stays bound to its pages, and an array freed and reallocated
 * at the same address would be moved through a stale registration; only the caller knows when its arrays
 * die. The ranges are kept here for every backend (the same statuses on CPU and GPU); only the CUDA backend
 * locks pages. Correctness never depends on registration: an unregistered array is only slower. */
#include "tridi_internal.h"

#include <stdlib.h>

static int overlaps(uintptr_t a, size_t abytes, uintptr_t b, size_t bbytes)
{
    return a < b + bbytes && b < a + abytes;
}

int tridi_host_is_registered(tridi_context ctx, const void *ptr, size_t bytes)
{
    const uintptr_t p = (uintptr_t)ptr;
    for (int i = 0; i < ctx->nranges; ++i) {
        const tridi_host_range *r = &ctx->ranges[i];
        if (p >= r->begin && bytes <= r->bytes && p - r->begin <= r->bytes - bytes)
            return 1;
    }
    return 0;
}

tridi_status tridi_host_register(tridi_context ctx, const void *ptr, size_t bytes)
{
    static const char *f = "tridi_host_register";
    tridi_status s = tridi_check_context(f, ctx);
    if (s)
        return s;
    if (!ptr)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'ptr' is NULL", f);
    if (bytes == 0)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: bytes = 0: there is nothing to register at %p", f, ptr);
    const uintptr_t p = (uintptr_t)ptr;
    if (p + bytes < p)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: %p + %zu bytes passes the end of the address space", f,
                          ptr, bytes);
    for (int i = 0; i < ctx->nranges; ++i) {
        const tridi_host_range *r = &ctx->ranges[i];
        if (r->begin == p && r->bytes == bytes)
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "%s: %p (%zu bytes) is already registered on this context (double registration)",
                              f, ptr, bytes);
        if (overlaps(p, bytes, r->begin, r->bytes))
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "%s: [%p, %p) overlaps the range [%p, %p) already registered on this context; "
                              "unregister that one first (tridi_host_unregister(ctx, %p))",
                              f, ptr, (const void *)(p + bytes), (const void *)r->begin,
                              (const void *)(r->begin + r->bytes), (const void *)r->begin);
    }
    if (ctx->nranges == ctx->ranges_cap) {
        const int cap = ctx->ranges_cap ? 2 * ctx->ranges_cap : 16;
        tridi_host_range *grown = realloc(ctx->ranges, (size_t)cap * sizeof *grown);
        if (!grown)
            return tridi_fail(TRIDI_ERROR_OUT_OF_MEMORY, "%s: out of host memory for the list of ranges", f);
        ctx->ranges = grown;
        ctx->ranges_cap = cap;
    }
    int pinned = 0;
#ifdef TRIDI_HAVE_CUDA
    if (ctx->backend == TRIDI_BACKEND_CUDA) {
        s = tridi_cuda_host_register(ctx->cuda, ptr, bytes, &pinned);
        if (s)
            return s;
    }
#endif
    ctx->ranges[ctx->nranges++] = (tridi_host_range){p, bytes, pinned};
    return TRIDI_SUCCESS;
}

tridi_status tridi_host_unregister(tridi_context ctx, const void *ptr)
{
    static const char *f = "tridi_host_unregister";
    tridi_status s = tridi_check_context(f, ctx);
    if (s)
        return s;
    if (!ptr)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: argument 'ptr' is NULL", f);
    const uintptr_t p = (uintptr_t)ptr;
    int found = -1;
    for (int i = 0; i < ctx->nranges && found < 0; ++i) {
        const tridi_host_range *r = &ctx->ranges[i];
        if (r->begin == p)
            found = i;
        else if (overlaps(p, 1, r->begin, r->bytes))
            return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                              "%s: %p lies inside the range registered at %p (%zu bytes); pass the pointer that "
                              "was registered", f, ptr, (const void *)r->begin, r->bytes);
    }
    if (found < 0)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE, "%s: %p is not registered on this context", f, ptr);
#ifdef TRIDI_HAVE_CUDA
    if (ctx->backend == TRIDI_BACKEND_CUDA) {
        s = tridi_cuda_host_unregister(ctx->cuda, ptr, ctx->ranges[found].pinned);
        if (s)
            return s;
    }
#endif
    for (int i = found + 1; i < ctx->nranges; ++i)
        ctx->ranges[i - 1] = ctx->ranges[i];
    ctx->nranges--;
    return TRIDI_SUCCESS;
}
