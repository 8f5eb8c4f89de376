/* The environment knobs (docs/tuning.md), read in one place at one moment: tridi_create reads them into
 * its context, so a live context never sees a variable change, and a value a knob does not take refuses
 * the create, naming the variable, instead of being ignored (a misspelt TRIDI_BACKEND would otherwise run
 * on a backend nobody asked for). */
#include "tridi_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The value of a knob, NULL when unset or empty (VAR= in a shell means "not set"). */
static const char *knob(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* A whole decimal number in [min, max] into *out; 0 when the text is anything else (strtoll alone would
 * take leading blanks and a '+'). */
static int parse_int(const char *v, long long min, long long max, long long *out)
{
    const char *digits = v[0] == '-' ? v + 1 : v;
    if (*digits < '0' || *digits > '9')
        return 0;
    char *end = NULL;
    errno = 0;
    const long long n = strtoll(v, &end, 10);
    if (errno || end == v || *end != '\0' || n < min || n > max)
        return 0;
    *out = n;
    return 1;
}

static tridi_status refuse(const char *func, const char *name, const char *value, const char *takes)
{
    return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                      "%s: environment variable %s = \"%s\" is not %s (docs/tuning.md; unset it for the default)",
                      func, name, value, takes);
}

/* TRIDI_BACKEND: 1 and *out when v names a backend. */
static int parse_backend(const char *v, tridi_backend *out)
{
    if (!strcasecmp(v, "auto")) *out = TRIDI_BACKEND_AUTO;
    else if (!strcasecmp(v, "cpu")) *out = TRIDI_BACKEND_CPU;
    else if (!strcasecmp(v, "cuda") || !strcasecmp(v, "gpu")) *out = TRIDI_BACKEND_CUDA;
    else return 0;
    return 1;
}

tridi_backend tridi_tuning_backend(void)
{
    tridi_backend b = TRIDI_BACKEND_AUTO;
    const char *v = knob("TRIDI_BACKEND");
    if (v && !parse_backend(v, &b))
        b = TRIDI_BACKEND_AUTO;
    return b;
}

/* A number knob in [min, max] into *out (left alone when unset). */
static tridi_status read_int(const char *func, const char *name, long long min, long long max, const char *takes,
                             long long *out)
{
    const char *v = knob(name);
    if (v && !parse_int(v, min, max, out))
        return refuse(func, name, v, takes);
    return TRIDI_SUCCESS;
}

/* TRIDI_CUDA_KERNEL: line, ckpt, split, or split:P with P a power of two from 1 to 32. */
static tridi_status read_cuda_kernel(const char *func, tridi_tuning *t)
{
    const char *v = knob("TRIDI_CUDA_KERNEL");
    if (!v)
        return TRIDI_SUCCESS;
    long long lanes = 0;
    if (!strcmp(v, "line")) {
        t->cuda_kernel = 1;
    } else if (!strcmp(v, "ckpt")) {
        t->cuda_kernel = 3;
    } else if (!strcmp(v, "split")) {
        t->cuda_kernel = 2;
    } else if (!strncmp(v, "split:", 6) && parse_int(v + 6, 1, 32, &lanes) && !(lanes & (lanes - 1))) {
        t->cuda_kernel = 2;
        t->cuda_split_lanes = (int)lanes;
    } else {
        return refuse(func, "TRIDI_CUDA_KERNEL", v, "line, ckpt, split or split:P (P = 1, 2, 4, 8, 16 or 32)");
    }
    return TRIDI_SUCCESS;
}

tridi_status tridi_tuning_adi_path(const char *func, int *path)
{
    const char *v = knob("TRIDI_ADI_PATH");
    *path = 0;
    if (!v)
        return TRIDI_SUCCESS;
    if (!strcmp(v, "fused"))
        *path = 1;
    else if (!strcmp(v, "staged"))
        *path = 2;
    else if (!strcmp(v, "fused64"))
        *path = 3;
    else if (!strcmp(v, "fusedk"))
        *path = 4;
    else
        return refuse(func, "TRIDI_ADI_PATH", v, "fused, fused64, fusedk or staged");
    return TRIDI_SUCCESS;
}

/* TRIDI_HALO_CHUNK_BYTES, read at tridi_halo_create for staged device plans (declared in
 * src/mpi/halo_internal.h): -1 unset (the rule), 0 no cut, else the bytes of a chunk. */
TRIDI_PRIVATE tridi_status tridi_tuning_halo_chunk(const char *func, long long *bytes)
{
    *bytes = -1;
    return read_int(func, "TRIDI_HALO_CHUNK_BYTES", 0, 1LL << 30, "a byte count from 0 to 1073741824", bytes);
}

tridi_status tridi_tuning_read(const char *func, tridi_tuning *out)
{
    tridi_tuning t;
    memset(&t, 0, sizeof t);
    t.backend = TRIDI_BACKEND_AUTO;
    t.host_x = TRIDI_HOST_X_RULE;
    const char *v = knob("TRIDI_BACKEND");
    if (v && !parse_backend(v, &t.backend))
        return refuse(func, "TRIDI_BACKEND", v, "auto, cpu, cuda or gpu");

    const long long TiB = 1LL << 40;
    long long n = 0;
    tridi_status s = read_int(func, "TRIDI_CPU_GENERIC", 0, 1, "0 or 1", &n);
    t.cpu_generic = (int)n;
    n = 0;
    if (!s)
        s = read_int(func, "TRIDI_CPU_WG_BUDGET", TRIDI_TUNING_WG_BUDGET_MIN, TiB,
                     "a number of bytes from 65536 to 2^40", &n);
    t.cpu_wg_budget = n;
    n = 0;
    if (!s)
        s = read_int(func, "TRIDI_CPU_BYTES_PER_THREAD", 1, TiB, "a number of bytes from 1 to 2^40", &n);
    t.cpu_bytes_per_thread = n;
    n = -1;
    if (!s)
        s = read_int(func, "TRIDI_CPU_POOL", 0, 1, "0 or 1", &n);
    /* Unset: the pool, unless the model keeps OpenMP's threads spinning, where a team is always awake and
     * the pool's workers would share cores with the spinning threads (docs/decisions/028). */
    const char *wait = getenv("OMP_WAIT_POLICY");
    t.cpu_openmp_team = n == 0 || (n < 0 && wait && !strcasecmp(wait, "active"));
    t.cpu_pool_off = n == 0;
    t.omp_wait_active = wait && !strcasecmp(wait, "active");
    n = -1;
    if (!s)
        s = read_int(func, "TRIDI_CPU_SPIN_US", 0, 1000000, "a number of microseconds from 0 to 1000000", &n);
    t.cpu_spin_set = n >= 0;
    t.cpu_spin_us = n >= 0 ? n : 0;
    if (!s)
        s = read_cuda_kernel(func, &t);
    n = 0;
    if (!s)
        s = read_int(func, "TRIDI_HOST_SLAB_CELLS", 1, TiB, "a number of cells from 1 to 2^40", &n);
    t.host_slab_cells = n;
    if (!s && (v = knob("TRIDI_HOST_X_PATH")) != NULL) {
        if (!strcmp(v, "eager")) t.host_x = TRIDI_HOST_X_EAGER;
        else if (!strcmp(v, "verdict")) t.host_x = TRIDI_HOST_X_VERDICT;
        else s = refuse(func, "TRIDI_HOST_X_PATH", v, "eager or verdict");
    }
    n = 0;
    if (!s)
        s = read_int(func, "TRIDI_DEVICE_MEMORY_LIMIT", 1, LLONG_MAX, "a number of bytes from 1 to 2^63-1", &n);
    t.device_memory_limit = (uint64_t)n;
    n = 0;
    if (!s)
        s = read_int(func, "TRIDI_MPI_SUBBLOCKS", 1, TRIDI_TUNING_MPI_SUBBLOCKS_MAX, "a count from 1 to 16", &n);
    t.mpi_subblocks = (int)n;
    if (!s)
        *out = t;
    return s;
}
