#include <stdio.h>
#include <string.h>
#include <tridi.h>

#if !TRIDI_VERSION_GE(0, 1, 0) || TRIDI_VERSION_GE(TRIDI_VERSION_MAJOR, TRIDI_VERSION_MINOR, TRIDI_VERSION_PATCH + 1)
#error "TRIDI_VERSION_GE disagrees with TRIDI_VERSION_*"
#endif

/* Solves 2x + y = 3, x + 2y = 3 (x = y = 1) as a 1x2 grid line along x. */
int main(void)
{
    tridi_context ctx;
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    if (tridi_create(&ctx, &cfg))
        return 1;
    tridi_grid g = {2, {1, 1, 0}, {2, 1, 0}};
    double lower[2] = {0, 1}, diag[2] = {2, 2}, upper[2] = {1, 0}, rhs[2] = {3, 3}, x[2] = {0, 0};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {2, 1, 1};
    tridi_arrays a = {lower, TRIDI_FLOAT64, diag, TRIDI_FLOAT64, upper, TRIDI_FLOAT64, rhs, TRIDI_FLOAT64, x,
                      TRIDI_FLOAT64};
    tridi_status s = tridi_solve(ctx, &g, TRIDI_AXIS_X, lo, hi, &a);
    tridi_destroy(ctx);
    printf("consumer_c: tridi %s, x = %g %g\n", tridi_version_string(), x[0], x[1]);
    /* The installed header and library describe the same build, and it is a release: no test hook. */
    tridi_build_info b;
    memset(&b, 0, sizeof b);
    b.size = sizeof b;
    int bad = tridi_get_build_info(&b) != TRIDI_SUCCESS || b.fault_injection != 0 ||
              strstr(tridi_build_info_string(), "fault") != NULL;
#ifdef TRIDI_HAVE_CUDA
    bad |= b.cuda != 1;
#else
    bad |= b.cuda != 0;
#endif
#ifdef TRIDI_HAVE_MPI
    bad |= b.mpi != 1;
#else
    bad |= b.mpi != 0;
#endif
#ifdef TRIDI_HAVE_NCCL
    bad |= b.nccl != 1;
#else
    bad |= b.nccl != 0;
#endif
    if (bad)
        fprintf(stderr, "consumer_c: build info \"%s\" disagrees with tridi_version.h or has the test hook\n",
                tridi_build_info_string());
    return bad || s != TRIDI_SUCCESS || x[0] != 1.0 || x[1] != 1.0;
}
