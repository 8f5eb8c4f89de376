/* Thread counts at tridi_create: a negative one is refused naming the argument; one far above the
 * processors (40000, 100000, INT_MAX: libgomp used to exit or crash on the first solve) is capped, the
 * solves and an ADI step still give the reference answer, and with verbose the cap is said once.
 * With --omp-count (ctest runs it with OMP_NUM_THREADS=100000) num_threads = 0 takes OpenMP's count, and
 * the same cap applies to it (it gave TRIDI_ERROR_OUT_OF_MEMORY on a 238k-cell solve). */
#include "testutil.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Solves the system along every axis and compares with the reference. */
static void solve_all_axes(const char *label, tridi_context ctx, tu_system *s, const int64_t lo[3],
                           const int64_t hi[3], uint64_t *rng)
{
    void *xref = malloc((size_t)s->cells * sizeof(double));
    for (int axis = 0; axis < 3; ++axis) {
        tu_poison_x(s, rng);
        memcpy(xref, s->a.x, (size_t)s->cells * sizeof(double));
        tridi_arrays r = s->a;
        r.x = xref;
        tu_reference_solve(&s->grid, (tridi_axis)axis, lo, hi, &r);
        char what[128];
        snprintf(what, sizeof what, "%s: solve along axis %d", label, axis);
        tu_expect(what, tridi_solve(ctx, &s->grid, (tridi_axis)axis, lo, hi, &s->a), TRIDI_SUCCESS, NULL);
        tu_checks++;
        if (tu_check(what, s, xref, lo, hi, (tridi_axis)axis, tu_tolerance(TRIDI_FLOAT64)))
            tu_failures++;
    }
    free(xref);
}

/* Everything written to stderr by tridi_create(cfg) and two solves. */
static char *stderr_of_create(const tridi_config *cfg, tridi_context *ctx, tu_system *s, const int64_t lo[3],
                              const int64_t hi[3])
{
    static char text[4096];
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    dup2(fileno(tmp), 2);
    tu_expect("create verbose", tridi_create(ctx, cfg), TRIDI_SUCCESS, NULL);
    tridi_solve(*ctx, &s->grid, TRIDI_AXIS_X, lo, hi, &s->a);
    tridi_solve(*ctx, &s->grid, TRIDI_AXIS_Z, lo, hi, &s->a);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(text, 1, sizeof text - 1, tmp);
    text[n] = '\0';
    fclose(tmp);
    return text;
}

/* A random all-real(8) system on g, the box one cell inside it, and a CPU backend's config. */
static void cpu_case(uint64_t *rng, const tridi_grid *g, int64_t lo[3], int64_t hi[3], tu_system *s, tridi_config *cfg)
{
    for (int a = 0; a < 3; ++a) {
        lo[a] = g->lbound[a] + 1;
        hi[a] = g->ubound[a] - 1;
    }
    tu_system_alloc(s, g, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, TRIDI_FLOAT64, rng);
    tridi_config_init(cfg);
    cfg->backend = TRIDI_BACKEND_CPU;
}

/* num_threads = 0 under an OMP_NUM_THREADS far above the processors: the same cap as for num_threads. */
static int omp_count(void)
{
    uint64_t rng = tu_seed("test_threads --omp-count");
    tridi_grid g = {3, {0, 0, 0}, {63, 63, 61}};
    int64_t lo[3], hi[3];
    tu_system s;
    tridi_config cfg;
    cpu_case(&rng, &g, lo, hi, &s, &cfg);
    cfg.num_threads = 0;
    cfg.verbose = 1;
    tridi_context ctx = NULL;
    const char *text = stderr_of_create(&cfg, &ctx, &s, lo, hi);
    printf("  verbose said: %s", text);
    const char *at = strstr(text, "backend cpu, ");
    const long said = at ? strtol(at + strlen("backend cpu, "), NULL, 10) : -1;
    const long procs = sysconf(_SC_NPROCESSORS_ONLN);
    printf("  threads said %ld, processors online %ld\n", said, procs);
    tu_expect_true("OpenMP's count is capped at the processors", said >= 1 && said <= procs);
    solve_all_axes("num_threads 0, OMP_NUM_THREADS far above the processors", ctx, &s, lo, hi, &rng);
    tridi_destroy(ctx);
    tu_system_free(&s);
    printf("%d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--omp-count"))
        return omp_count();
    uint64_t rng = tu_seed("test_threads");
    tridi_grid g = {3, {0, 0, 0}, {37, 21, 11}};
    int64_t lo[3], hi[3];
    tu_system s;
    tridi_config cfg;
    cpu_case(&rng, &g, lo, hi, &s, &cfg);
    tridi_context ctx = NULL;
    cfg.num_threads = -1;
    tu_expect("num_threads -1", tridi_create(&ctx, &cfg), TRIDI_ERROR_INVALID_VALUE, "config->num_threads = -1");
    tu_expect_true("no context on failure", ctx == NULL);
    cfg.num_threads = INT_MIN;
    tu_expect("num_threads INT_MIN", tridi_create(&ctx, &cfg), TRIDI_ERROR_INVALID_VALUE, "config->num_threads");

    const int many[3] = {40000, 100000, INT_MAX};
    for (int t = 0; t < 3; ++t) {
        cfg.num_threads = many[t];
        char label[64];
        snprintf(label, sizeof label, "num_threads %d", many[t]);
        tu_expect(label, tridi_create(&ctx, &cfg), TRIDI_SUCCESS, NULL);
        solve_all_axes(label, ctx, &s, lo, hi, &rng);
        /* ADI's own stages run on the context's threads too. */
        tridi_adi_operator op;
        tridi_adi_operator_init(&op);
        tridi_adi plan = NULL;
        tu_expect("adi create", tridi_adi_create(&plan, ctx, &g, lo, hi, TRIDI_FLOAT64, &op), TRIDI_SUCCESS, NULL);
        for (int64_t c = 0; c < s.cells; ++c)
            ((double *)s.a.x)[c] = tu_uniform(&rng);
        tu_expect("adi step", tridi_adi_step(plan, s.a.x, 0.25, NULL), TRIDI_SUCCESS, NULL);
        tridi_adi_destroy(plan);
        tridi_destroy(ctx);
    }

    cfg.num_threads = 100000;
    cfg.verbose = 1;
    const char *text = stderr_of_create(&cfg, &ctx, &s, lo, hi);
    printf("  verbose said: %s", text);
    static const char *needle = "config->num_threads = 100000 capped at";
    const char *at = strstr(text, needle);
    tu_expect_true("verbose states the cap", at != NULL);
    tu_expect_true("verbose states it once", at && !strstr(at + strlen(needle), "capped"));
    tridi_destroy(ctx);

    tu_system_free(&s);
    printf("%d checks, %d failures\n", tu_checks, tu_failures);
    return tu_failures ? 1 : 0;
}
