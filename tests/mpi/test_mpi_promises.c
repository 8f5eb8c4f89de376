/* Promises of tridi_mpi.h kept at the edges: destroyed decompositions and halo plans give
 * TRIDI_ERROR_INVALID_HANDLE without their memory being read (the sanitizer build reports a read of freed
 * memory otherwise); a decomposition's halo plans outlive it; a failing solve reports what the one-rank
 * solve of the same global arrays reports: status, cell and line number (it named the lowest failing
 * rank's failure, with that rank's own line numbers); ranks passing different decompositions to one solve
 * get TRIDI_ERROR_MISMATCH (they hung; ctest's TIMEOUT catches a hang). */
#include "mpi_testutil.h"
#include "tridi_mpi.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks;

/* A CPU context with the given on_error; a failed create counts in *bad (the checks then fail on it). */
static tridi_context cpu_context(tridi_on_error on_error, long *bad)
{
    tridi_context ctx = NULL;
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CPU;
    cfg.on_error = on_error;
    *bad += mt_expect("a CPU context", tridi_create(&ctx, &cfg), TRIDI_SUCCESS, NULL);
    return ctx;
}

static int64_t grid_cells(const tridi_grid *g)
{
    int64_t cells = 1;
    for (int a = 0; a < 3; ++a)
        cells *= g->ubound[a] - g->lbound[a] + 1;
    return cells;
}

/* Destroyed handles: every entry point that takes one refuses it by value. */
static long destroyed_handles(tridi_mpi_comm world)
{
    long bad = 0;
    tridi_decomp_config c;
    mt_base_config(&c, nranks, 6);
    tridi_decomp d = NULL;
    tridi_status s = tridi_decomp_create(&d, world, &c);
    bad += mt_expect("decomposition", s, TRIDI_SUCCESS, NULL);
    if (s)
        return bad;
    tridi_decomp_info in;
    tridi_decomp_get_info(d, &in);
    double *arr = calloc((size_t)grid_cells(&in.grid), sizeof(double));
    tridi_halo h = NULL, h2 = NULL;
    s = tridi_halo_create(&h, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 0, TRIDI_TRANSPORT_AUTO);
    bad += mt_expect("halo plan", s, TRIDI_SUCCESS, NULL);
    s = tridi_halo_create(&h2, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 1, TRIDI_TRANSPORT_AUTO);
    bad += mt_expect("second halo plan", s, TRIDI_SUCCESS, NULL);
    s = tridi_halo_destroy(h);
    bad += mt_expect("destroy of the halo plan", s, TRIDI_SUCCESS, NULL);
    s = tridi_halo_exchange(h, NULL);
    bad += mt_expect("exchange of a destroyed halo plan", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_halo_exchange:");
    tridi_transport t;
    s = tridi_halo_get_transport(h, &t);
    bad += mt_expect("transport of a destroyed halo plan", s, TRIDI_ERROR_INVALID_HANDLE, "not a live halo plan");
    s = tridi_halo_destroy(h);
    bad += mt_expect("second destroy of a halo plan", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_halo_destroy:");

    /* The decomposition destroyed before its last halo plan: dead to the caller, kept for the plan. */
    s = tridi_decomp_destroy(d);
    bad += mt_expect("destroy of the decomposition", s, TRIDI_SUCCESS, NULL);
    s = tridi_decomp_get_info(d, &in);
    bad += mt_expect("info of a destroyed decomposition", s, TRIDI_ERROR_INVALID_HANDLE, "not a live decomposition");
    s = tridi_decomp_destroy(d);
    bad += mt_expect("second destroy of a decomposition", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_decomp_destroy:");
    tridi_halo h3 = NULL;
    s = tridi_halo_create(&h3, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 0, TRIDI_TRANSPORT_AUTO);
    bad += mt_expect("halo plan on a destroyed decomposition", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_halo_create:");
    tridi_context ctx = cpu_context(TRIDI_ON_ERROR_LINES, &bad);
    int64_t lo[3] = {1, 1, 1}, hi[3] = {6 * (int64_t)nranks, 5, 3};
    tridi_arrays a = {arr, TRIDI_FLOAT64, arr, TRIDI_FLOAT64, arr, TRIDI_FLOAT64, arr, TRIDI_FLOAT64, arr,
                      TRIDI_FLOAT64};
    s = tridi_mpi_solve(ctx, d, TRIDI_AXIS_X, lo, hi, &a);
    bad += mt_expect("solve on a destroyed decomposition", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_mpi_solve:");
    tridi_destroy(ctx);
    /* Its surviving halo plan still exchanges; its destroy releases the decomposition. */
    for (int64_t i = 0; i < grid_cells(&in.grid); ++i)
        arr[i] = rank;
    s = tridi_halo_exchange(h2, NULL);
    bad += mt_expect("exchange of a plan whose decomposition was destroyed", s, TRIDI_SUCCESS, NULL);
    s = tridi_halo_destroy(h2);
    bad += mt_expect("destroy of that plan", s, TRIDI_SUCCESS, NULL);
    s = tridi_halo_exchange(h2, NULL);
    bad += mt_expect("exchange of it after", s, TRIDI_ERROR_INVALID_HANDLE, "tridi_halo_exchange:");
    free(arr);
    return bad;
}

/* Global arrays (0..NI+1, 0..NJ+1, 0..NK+1) of a random dominant system, the same on every rank. */
enum { NI = 16, NJ = 8, NK = 4 };
#define GX (NI + 2)
#define GY (NJ + 2)
#define GZ (NK + 2)
static int64_t gidx(int64_t i, int64_t j, int64_t k) { return i + GX * (j + GY * k); }

typedef struct planted {
    int64_t cell[3];
    int what; /* 0: a zero row (lower = diag = 0: a zero pivot), 1: NaN diag, 2: NaN rhs */
} planted;

/* One case: the global system with its failures planted, solved by one rank (tridi_solve, all or
 * nothing) and by the decomposition; the outcomes must agree, and x must be unchanged everywhere. */
static long compare_with_one_rank(const char *what, tridi_context ctx, tridi_decomp d, tridi_axis axis,
                                  const planted *pl, int npl, uint64_t seed)
{
    const int64_t cells = (int64_t)GX * GY * GZ;
    double *G[5];
    for (int r = 0; r < 5; ++r)
        G[r] = malloc((size_t)cells * sizeof(double));
    uint64_t rng = seed;
    for (int64_t c = 0; c < cells; ++c) {
        G[0][c] = tu_uniform(&rng) - 0.5;
        G[2][c] = tu_uniform(&rng) - 0.5;
        G[1][c] = (tu_uniform(&rng) < 0.5 ? -1.0 : 1.0) * (fabs(G[0][c]) + fabs(G[2][c]) + 0.5 + tu_uniform(&rng));
        G[3][c] = tu_uniform(&rng) - 0.5;
        G[4][c] = 1e30; /* x's poison */
    }
    for (int q = 0; q < npl; ++q) {
        const int64_t c = gidx(pl[q].cell[0], pl[q].cell[1], pl[q].cell[2]);
        if (pl[q].what == 0)
            G[0][c] = G[1][c] = 0.0;
        else
            G[pl[q].what == 1 ? 1 : 3][c] = NAN;
    }
    tridi_grid gg = {3, {0, 0, 0}, {GX - 1, GY - 1, GZ - 1}};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {NI, NJ, NK};
    tridi_arrays ga = {G[0], TRIDI_FLOAT64, G[1], TRIDI_FLOAT64, G[2], TRIDI_FLOAT64, G[3], TRIDI_FLOAT64, G[4],
                       TRIDI_FLOAT64};
    long bad = 0;
    tridi_context one = cpu_context(TRIDI_ON_ERROR_CALL, &bad);
    const tridi_status want = tridi_solve(one, &gg, axis, lo, hi, &ga);
    char want_msg[1024];
    snprintf(want_msg, sizeof want_msg, "%s", tridi_error_message());
    int64_t want_cell[3] = {0, 0, 0};
    tridi_error_cell(want_cell);
    tridi_destroy(one);
    const char *num = strstr(want_msg, " number ");
    const long long want_line = num ? atoll(num + 8) : -1;

    /* This rank's arrays over its grid, copied from the global ones. */
    tridi_decomp_info in;
    tridi_decomp_get_info(d, &in);
    const tridi_grid *lg = &in.grid;
    const int64_t ex = lg->ubound[0] - lg->lbound[0] + 1, ey = lg->ubound[1] - lg->lbound[1] + 1;
    const int64_t lcells = grid_cells(lg);
    double *L[5];
    for (int r = 0; r < 5; ++r) {
        L[r] = malloc((size_t)lcells * sizeof(double));
        for (int64_t k = lg->lbound[2]; k <= lg->ubound[2]; ++k)
            for (int64_t j = lg->lbound[1]; j <= lg->ubound[1]; ++j)
                for (int64_t i = lg->lbound[0]; i <= lg->ubound[0]; ++i)
                    L[r][(i - lg->lbound[0]) + ex * ((j - lg->lbound[1]) + ey * (k - lg->lbound[2]))] =
                        G[r][gidx(i, j, k)];
    }
    tridi_arrays la = {L[0], TRIDI_FLOAT64, L[1], TRIDI_FLOAT64, L[2], TRIDI_FLOAT64, L[3], TRIDI_FLOAT64, L[4],
                       TRIDI_FLOAT64};
    const tridi_status got = tridi_mpi_solve(ctx, d, axis, lo, hi, &la);
    char got_msg[1024];
    snprintf(got_msg, sizeof got_msg, "%s", tridi_error_message());
    int64_t got_cell[3] = {0, 0, 0};
    tridi_error_cell(got_cell);
    const char *gnum = strstr(got_msg, " number ");
    const long long got_line = gnum ? atoll(gnum + 8) : -1;
    if (got != want || memcmp(got_cell, want_cell, sizeof got_cell) || got_line != want_line) {
        printf("rank %d: %s: got %s at (%lld, %lld, %lld) line %lld, the one-rank solve %s at (%lld, %lld, %lld) "
               "line %lld\n  got: %s\n  one rank: %s\n",
               rank, what, tridi_status_name(got), (long long)got_cell[0], (long long)got_cell[1],
               (long long)got_cell[2], got_line, tridi_status_name(want), (long long)want_cell[0],
               (long long)want_cell[1], (long long)want_cell[2], want_line, got_msg, want_msg);
        bad++;
    }
    for (int64_t c = 0; c < lcells && !bad; ++c)
        if (L[4][c] != 1e30) {
            printf("rank %d: %s: x written by a failed solve\n", rank, what);
            bad++;
        }
    bad = mt_total(bad);
    if (rank == 0)
        printf("%s: %s (one rank: %s, line %lld)\n", what, bad ? "WRONG" : "ok", want_msg, want_line);
    for (int r = 0; r < 5; ++r) {
        free(G[r]);
        free(L[r]);
    }
    return bad;
}

static long first_failing_line(tridi_mpi_comm world)
{
    tridi_decomp_config c;
    tridi_decomp_config_init(&c);
    c.ndim = 3;
    c.lo[0] = c.lo[1] = c.lo[2] = 1;
    c.hi[0] = NI;
    c.hi[1] = NJ;
    c.hi[2] = NK;
    c.halo[0] = c.halo[1] = c.halo[2] = 1; /* dims 0: MPI_Dims_create cuts i and j on 4 ranks */
    tridi_decomp d = NULL;
    long bad = mt_expect("decomposition over i and j", tridi_decomp_create(&d, world, &c), TRIDI_SUCCESS, NULL);
    tridi_context ctx = cpu_context(TRIDI_ON_ERROR_LINES, &bad);
    const uint64_t seed = mt_seed("test_mpi_promises");
    /* x lines (cut across i): line 0 meets a zero pivot at its last unknown, line 1 a NaN at its second. */
    const planted cut[2] = {{{16, 1, 1}, 0}, {{2, 2, 1}, 1}};
    bad += compare_with_one_rank("x solve: zero pivot at (16, 1, 1), NaN diag at (2, 2, 1)", ctx, d, TRIDI_AXIS_X,
                                 cut, 2, seed);
    const planted cut_rhs[2] = {{{3, 2, 2}, 2}, {{14, 1, 2}, 2}};
    bad += compare_with_one_rank("x solve: NaN rhs at (3, 2, 2) and (14, 1, 2)", ctx, d, TRIDI_AXIS_X, cut_rhs, 2,
                                 seed + 1);
    /* z lines (uncut) on a 2 x 2 process grid: (9, 1), on rank 2, comes before (1, 8), on rank 1, in the global
     * line order. */
    const planted z[2] = {{{1, 8, 3}, 0}, {{9, 1, 3}, 0}};
    bad += compare_with_one_rank("z solve: zero pivots at (1, 8, 3) and (9, 1, 3)", ctx, d, TRIDI_AXIS_Z, z, 2,
                                 seed + 2);
    /* y lines: two failures on one line, and one on a later line held by a lower rank. */
    const planted y[3] = {{{12, 7, 1}, 2}, {{12, 3, 1}, 1}, {{1, 2, 1}, 0}};
    bad += compare_with_one_rank("y solve: NaN at (12, 7, 1) and (12, 3, 1), zero pivot at (1, 2, 1)", ctx, d,
                                 TRIDI_AXIS_Y, y, 3, seed + 3);
    tridi_destroy(ctx);
    tridi_decomp_destroy(d);
    return bad;
}

/* Two decompositions of one configuration, each rank passing one of them to the same solve: a mismatch
 * on every rank (it hung, each group of ranks in collectives over another communicator). Then each works
 * when every rank passes it, and a decomposition of a sub-communicator too. */
static long different_decompositions(tridi_mpi_comm world)
{
    tridi_decomp_config c;
    mt_base_config(&c, nranks, 6);
    tridi_decomp d[2] = {NULL, NULL};
    long bad = 0;
    for (int q = 0; q < 2; ++q)
        bad += mt_expect("identical decomposition", tridi_decomp_create(&d[q], world, &c), TRIDI_SUCCESS, NULL);
    tridi_decomp_info in;
    tridi_decomp_get_info(d[0], &in);
    const int64_t cells = grid_cells(&in.grid);
    double *A[5];
    for (int r = 0; r < 5; ++r) {
        A[r] = malloc((size_t)cells * sizeof(double));
        for (int64_t i = 0; i < cells; ++i)
            A[r][i] = r == 1 ? 4.0 : r == 3 ? 1.0 : -1.0;
    }
    tridi_arrays a = {A[0], TRIDI_FLOAT64, A[1], TRIDI_FLOAT64, A[2], TRIDI_FLOAT64, A[3], TRIDI_FLOAT64, A[4],
                      TRIDI_FLOAT64};
    tridi_context ctx = cpu_context(TRIDI_ON_ERROR_LINES, &bad);
    int64_t lo[3] = {1, 1, 1}, hi[3] = {6 * (int64_t)nranks, 5, 3};
    for (int axis = 0; axis < 3; ++axis) {
        char what[96];
        snprintf(what, sizeof what, "axis %d, rank 0 passing another decomposition than the others", axis);
        tridi_status s = tridi_mpi_solve(ctx, d[rank == 0 ? 0 : 1], (tridi_axis)axis, lo, hi, &a);
        bad += mt_expect(what, s, nranks > 1 ? TRIDI_ERROR_MISMATCH : TRIDI_SUCCESS, "the decomposition");
        for (int q = 0; q < 2; ++q) {
            snprintf(what, sizeof what, "axis %d, every rank passing decomposition %d", axis, q);
            bad += mt_expect(what, tridi_mpi_solve(ctx, d[q], (tridi_axis)axis, lo, hi, &a), TRIDI_SUCCESS, NULL);
        }
    }
    tridi_halo h = NULL;
    tridi_status hs = tridi_halo_create(&h, d[rank == 0 ? 0 : 1], A[4], TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 0,
                                        TRIDI_TRANSPORT_AUTO);
    bad += mt_expect("halo plan, rank 0 passing another decomposition", hs,
                     nranks > 1 ? TRIDI_ERROR_MISMATCH : TRIDI_SUCCESS, "the decomposition");
    tridi_halo_destroy(h);
    /* A decomposition of half the ranks, numbered among its own group's. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int nhalf;
    MPI_Comm_size(half, &nhalf);
    tridi_decomp_config ch;
    mt_base_config(&ch, nhalf, 6);
    tridi_decomp dh = NULL;
    tridi_status s = tridi_decomp_create(&dh, MPI_Comm_c2f(half), &ch);
    bad += mt_expect("decomposition of half the ranks", s, TRIDI_SUCCESS, NULL);
    if (!s) {
        tridi_decomp_info ih;
        tridi_decomp_get_info(dh, &ih);
        const int64_t hcells = grid_cells(&ih.grid);
        double *H = malloc(5 * (size_t)hcells * sizeof(double));
        for (int64_t i = 0; i < 5 * hcells; ++i)
            H[i] = i / hcells == 1 ? 4.0 : i / hcells == 3 ? 1.0 : -1.0;
        tridi_arrays ha = {H, TRIDI_FLOAT64, H + hcells, TRIDI_FLOAT64, H + 2 * hcells, TRIDI_FLOAT64,
                           H + 3 * hcells, TRIDI_FLOAT64, H + 4 * hcells, TRIDI_FLOAT64};
        int64_t hhi[3] = {6 * (int64_t)nhalf, 5, 3};
        bad += mt_expect("solve on it", tridi_mpi_solve(ctx, dh, TRIDI_AXIS_X, lo, hhi, &ha), TRIDI_SUCCESS, NULL);
        free(H);
    }
    tridi_decomp_destroy(dh);
    MPI_Comm_free(&half);
    tridi_destroy(ctx);
    for (int q = 0; q < 2; ++q)
        tridi_decomp_destroy(d[q]);
    for (int r = 0; r < 5; ++r)
        free(A[r]);
    return bad;
}

int main(int argc, char **argv)
{
    int device = 0;
    const char *name = mt_start(&argc, &argv, "test_mpi_promises", &device);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    tridi_mpi_comm world = MPI_Comm_c2f(MPI_COMM_WORLD);
    long bad = 0;
    bad += destroyed_handles(world);
    bad += first_failing_line(world);
    bad += different_decompositions(world);
    return mt_finish(name, bad, 0);
}
