/* The environment knobs (docs/tuning.md) are read once, at tridi_create:
 * - a context keeps the values it was created with when the environment changes afterwards: seen through
 *   TRIDI_CPU_WG_BUDGET, whose y blocks decide the size of the CPU scratch a solve keeps in the context
 *   (the smallest budget: blocks of 64 lines of 64 unknowns; the compiled one: blocks of 1024 lines),
 *   with every answer equal to the reference either way; and through TRIDI_BACKEND;
 * - a value a knob does not take refuses the create with TRIDI_ERROR_INVALID_VALUE naming the variable,
 *   and no context is made; an empty value counts as unset; the bounds of each range are accepted.
 * Links libtridi's internals to read the context's scratch size. */
#include "testutil.h"
#include "tridi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const KNOBS[] = {"TRIDI_BACKEND", "TRIDI_CPU_GENERIC", "TRIDI_CPU_WG_BUDGET",
                                    "TRIDI_CPU_BYTES_PER_THREAD", "TRIDI_CUDA_KERNEL", "TRIDI_HOST_SLAB_CELLS",
                                    "TRIDI_HOST_X_PATH", "TRIDI_DEVICE_MEMORY_LIMIT", "TRIDI_MPI_SUBBLOCKS",
                                    "TRIDI_CPU_SPIN_US", "TRIDI_CPU_POOL", "TRIDI_ADI_PATH"};

static tridi_status cpu_context(tridi_context *ctx)
{
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    cfg.num_threads = 1; /* one thread: the scratch size follows from the block shape alone */
    return tridi_create(ctx, &cfg);
}

/* A y solve of a 1024 x 64 x 2 box checked against the reference; returns the CPU scratch the context
 * keeps afterwards (0 on a failure, which is counted). */
static size_t y_solve_scratch(const char *what, tridi_context ctx, uint64_t *rng)
{
    tridi_grid g = {3, {1, 1, 1}, {1024, 64, 2}};
    const int64_t lo[3] = {1, 1, 1}, hi[3] = {1024, 64, 2};
    tu_system s;
    if (tu_system_alloc(&s, &g, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, rng)) {
        tu_expect_true("allocating the system", 0);
        return 0;
    }
    void *xref = malloc((size_t)s.cells * 8);
    memcpy(xref, s.x_before, (size_t)s.cells * 8);
    tridi_arrays ref = s.a;
    ref.x = xref;
    tu_reference_solve(&g, TRIDI_AXIS_Y, lo, hi, &ref);
    tridi_status st = tridi_solve(ctx, &g, TRIDI_AXIS_Y, lo, hi, &s.a);
    char label[128];
    snprintf(label, sizeof label, "%s: solve", what);
    tu_expect(label, st, TRIDI_SUCCESS, NULL);
    snprintf(label, sizeof label, "%s: answers equal the reference", what);
    tu_expect_true(label, !st && tu_check(what, &s, xref, lo, hi, TRIDI_AXIS_Y, tu_tolerance(TRIDI_FLOAT64)) == 0);
    free(xref);
    tu_system_free(&s);
    return st ? 0 : ctx->cpu->scratch_bytes;
}

static void read_at_create(uint64_t *rng)
{
    /* Created with the smallest budget, solved after the variable is gone. */
    tridi_context small = NULL, big = NULL;
    setenv("TRIDI_CPU_WG_BUDGET", "65536", 1);
    tu_expect("create with TRIDI_CPU_WG_BUDGET=65536", cpu_context(&small), TRIDI_SUCCESS, NULL);
    unsetenv("TRIDI_CPU_WG_BUDGET");
    /* Created with the compiled budget, solved with the smallest one in the environment. */
    tu_expect("create without TRIDI_CPU_WG_BUDGET", cpu_context(&big), TRIDI_SUCCESS, NULL);
    if (small && big) {
        const size_t a = y_solve_scratch("small budget", small, rng);
        setenv("TRIDI_CPU_WG_BUDGET", "65536", 1);
        const size_t b = y_solve_scratch("compiled budget", big, rng);
        printf("  CPU scratch after a y solve: %zu bytes (created with 65536), %zu bytes (created without)\n", a,
               b);
        /* W/G of 64 against 1024 lines: 64 KiB against 1 MiB, beside an undo log of 1 MiB either way
         * under ON_ERROR_CALL (none under LINES). */
        tu_expect_true("each context blocks as its creation's environment said (scratch at most 2/3)",
                       a && b && 3 * a <= 2 * b);
    }
    unsetenv("TRIDI_CPU_WG_BUDGET");
    tridi_destroy(small);
    tridi_destroy(big);

    /* The backend a NULL config takes: the environment's at create; a later change does not move it. */
    tridi_context c = NULL;
    setenv("TRIDI_BACKEND", "cpu", 1);
    tu_expect("create with TRIDI_BACKEND=cpu", tridi_create(&c, NULL), TRIDI_SUCCESS, NULL);
    setenv("TRIDI_BACKEND", "cuda", 1);
    tridi_backend be = TRIDI_BACKEND_AUTO;
    tu_expect("get backend", tridi_get_backend(c, &be), TRIDI_SUCCESS, NULL);
    tu_expect_true("TRIDI_BACKEND=cpu at create: the CPU backend", be == TRIDI_BACKEND_CPU);
    tu_expect_true("the context keeps TRIDI_BACKEND=cpu", c && c->tuning.backend == TRIDI_BACKEND_CPU);
    /* tridi_config_init reads the variable for its default too: the new value, for the next context. */
    tridi_config cfg;
    tridi_config_init(&cfg);
    tu_expect_true("tridi_config_init takes TRIDI_BACKEND=cuda", cfg.backend == TRIDI_BACKEND_CUDA);
    unsetenv("TRIDI_BACKEND");
    tridi_destroy(c);
}

/* name=value must refuse the create, naming the variable. */
static void refused(const char *name, const char *value)
{
    setenv(name, value, 1);
    tridi_context c = (tridi_context)&c; /* not NULL: the create must clear it */
    char what[160];
    snprintf(what, sizeof what, "%s=\"%s\" refused", name, value);
    tu_expect(what, cpu_context(&c), TRIDI_ERROR_INVALID_VALUE, name);
    snprintf(what, sizeof what, "%s=\"%s\": no context", name, value);
    tu_expect_true(what, c == NULL);
    unsetenv(name);
}

/* name=value must be taken. */
static tridi_tuning accepted(const char *name, const char *value)
{
    setenv(name, value, 1);
    tridi_context c = NULL;
    char what[160];
    snprintf(what, sizeof what, "%s=\"%s\" accepted", name, value);
    tu_expect(what, cpu_context(&c), TRIDI_SUCCESS, NULL);
    tridi_tuning t;
    memset(&t, 0, sizeof t);
    if (c)
        t = c->tuning;
    tridi_destroy(c);
    unsetenv(name);
    return t;
}

static void malformed(void)
{
    refused("TRIDI_BACKEND", "cpuu");
    /* tridi_config_init cannot refuse: it falls back to AUTO, and the create refuses. */
    setenv("TRIDI_BACKEND", "cpuu", 1);
    tridi_config cfg;
    tridi_config_init(&cfg);
    tu_expect_true("tridi_config_init: TRIDI_BACKEND=cpuu gives AUTO", cfg.backend == TRIDI_BACKEND_AUTO);
    unsetenv("TRIDI_BACKEND");
    refused("TRIDI_CPU_GENERIC", "2");
    refused("TRIDI_CPU_GENERIC", "yes");
    refused("TRIDI_CPU_WG_BUDGET", "65535");
    refused("TRIDI_CPU_WG_BUDGET", "8M");
    refused("TRIDI_CPU_WG_BUDGET", "99999999999999999999999");
    refused("TRIDI_CPU_BYTES_PER_THREAD", "0");
    refused("TRIDI_CPU_BYTES_PER_THREAD", "-5");
    refused("TRIDI_CUDA_KERNEL", "splitt");
    refused("TRIDI_CUDA_KERNEL", "split:3");
    refused("TRIDI_CUDA_KERNEL", "split:64");
    refused("TRIDI_HOST_SLAB_CELLS", "0");
    refused("TRIDI_HOST_X_PATH", "lazy");
    refused("TRIDI_DEVICE_MEMORY_LIMIT", "1e9");
    refused("TRIDI_MPI_SUBBLOCKS", "0");
    refused("TRIDI_MPI_SUBBLOCKS", "17");
    /* Whole decimal numbers only: strtoll alone took leading blanks and a '+' (they were accepted). */
    refused("TRIDI_CPU_WG_BUDGET", " 65536");
    refused("TRIDI_CPU_WG_BUDGET", "+65536");
    refused("TRIDI_CPU_SPIN_US", "\t5");
    refused("TRIDI_MPI_SUBBLOCKS", "+3");
    refused("TRIDI_CPU_GENERIC", " 1");
    refused("TRIDI_CPU_BYTES_PER_THREAD", "-");
    refused("TRIDI_CUDA_KERNEL", "split:+4");
    refused("TRIDI_CUDA_KERNEL", "split: 4");
    refused("TRIDI_MPI_SUBBLOCKS", "3 ");
    /* TRIDI_ADI_PATH, read at tridi_adi_create: a misspelt value refuses it on a CPU context too (it was
     * read on CUDA contexts only, and ignored here). */
    {
        tridi_context ctx = NULL;
        tu_expect("cpu context", cpu_context(&ctx), TRIDI_SUCCESS, NULL);
        tridi_grid g = {3, {0, 0, 0}, {9, 9, 9}};
        int64_t lo[3] = {1, 1, 1}, hi[3] = {8, 8, 8};
        tridi_adi_operator op;
        tridi_adi_operator_init(&op);
        tridi_adi plan = NULL;
        setenv("TRIDI_ADI_PATH", "fussed", 1);
        tu_expect("TRIDI_ADI_PATH=fussed on a CPU context", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &op),
                  TRIDI_ERROR_INVALID_VALUE, "environment variable TRIDI_ADI_PATH = \"fussed\"");
        tu_expect_true("no ADI plan on failure", plan == NULL);
        setenv("TRIDI_ADI_PATH", "staged", 1);
        tu_expect("TRIDI_ADI_PATH=staged on a CPU context", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &op),
                  TRIDI_SUCCESS, NULL);
        tridi_adi_destroy(plan);
        plan = NULL;
        setenv("TRIDI_ADI_PATH", "fusedk", 1); /* a GPU path (decision 104): the CPU's plan takes no path */
        tu_expect("TRIDI_ADI_PATH=fusedk on a CPU context", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &op),
                  TRIDI_SUCCESS, NULL);
        tridi_adi_destroy(plan);
        unsetenv("TRIDI_ADI_PATH");
        tridi_destroy(ctx);
    }

    /* Empty = unset; the bounds of the ranges are taken, and read into the context. */
    tridi_tuning t = accepted("TRIDI_CPU_WG_BUDGET", "");
    tu_expect_true("empty TRIDI_CPU_WG_BUDGET: the compiled value", t.cpu_wg_budget == 0);
    t = accepted("TRIDI_CPU_WG_BUDGET", "65536");
    tu_expect_true("TRIDI_CPU_WG_BUDGET=65536 read", t.cpu_wg_budget == 65536);
    t = accepted("TRIDI_CPU_BYTES_PER_THREAD", "1");
    tu_expect_true("TRIDI_CPU_BYTES_PER_THREAD=1 read", t.cpu_bytes_per_thread == 1);
    t = accepted("TRIDI_CPU_GENERIC", "1");
    tu_expect_true("TRIDI_CPU_GENERIC=1 read", t.cpu_generic == 1);
    t = accepted("TRIDI_CUDA_KERNEL", "split:32");
    tu_expect_true("TRIDI_CUDA_KERNEL=split:32 read", t.cuda_kernel == 2 && t.cuda_split_lanes == 32);
    t = accepted("TRIDI_CUDA_KERNEL", "line");
    tu_expect_true("TRIDI_CUDA_KERNEL=line read", t.cuda_kernel == 1 && t.cuda_split_lanes == 0);
    t = accepted("TRIDI_CUDA_KERNEL", "ckpt");
    tu_expect_true("TRIDI_CUDA_KERNEL=ckpt read", t.cuda_kernel == 3 && t.cuda_split_lanes == 0);
    t = accepted("TRIDI_HOST_SLAB_CELLS", "1");
    tu_expect_true("TRIDI_HOST_SLAB_CELLS=1 read", t.host_slab_cells == 1);
    t = accepted("TRIDI_HOST_X_PATH", "verdict");
    tu_expect_true("TRIDI_HOST_X_PATH=verdict read", t.host_x == TRIDI_HOST_X_VERDICT);
    t = accepted("TRIDI_DEVICE_MEMORY_LIMIT", "65536");
    tu_expect_true("TRIDI_DEVICE_MEMORY_LIMIT=65536 read", t.device_memory_limit == 65536);
    t = accepted("TRIDI_MPI_SUBBLOCKS", "16");
    tu_expect_true("TRIDI_MPI_SUBBLOCKS=16 read", t.mpi_subblocks == 16);
    t = accepted("TRIDI_BACKEND", "GPU");
    tu_expect_true("TRIDI_BACKEND=GPU read (any case)", t.backend == TRIDI_BACKEND_CUDA);
}

int main(void)
{
    uint64_t rng = tu_seed("test_tuning");
    for (size_t i = 0; i < sizeof KNOBS / sizeof KNOBS[0]; ++i)
        unsetenv(KNOBS[i]); /* this test sets each knob itself */
    read_at_create(&rng);
    malformed();
    printf("%d passed, %d failed\n", tu_checks - tu_failures, tu_failures);
    return tu_failures ? 1 : 0;
}
