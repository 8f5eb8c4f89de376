/* libFuzzer harness over the MPI layer's validation in one process (MPI_COMM_SELF): decomposition
 * configurations (bounds up to the int64 extremes, halo widths, process grids, periodicity, transports,
 * sizes), halo plans on the resulting grid (types, memory kinds, corners, transports) with a real
 * exchange on small grids, and distributed solves over boxes that may leave the global grid. Properties
 * checked on every input:
 *   - no crash, no out-of-bounds access, no undefined behaviour (signed overflow included), no leak;
 *   - a failing call sets a message, leaves *decomp / *halo NULL and x bit for bit as it was;
 *   - a decomposition over one rank owns the whole global grid, with halos as configured and
 *     neighbours only across periodic axes (itself);
 *   - a halo exchange fills exactly the periodic halos (corners when asked) with the wrapped owned
 *     cells and touches nothing else;
 *   - tridi_mpi_solve over one rank fails where tridi_solve fails on the same box, and otherwise gives
 *     the same answer bit for bit. */
#include "fuzz_reader.h"
#include "tridi_mpi.h"

#include <limits.h>
#include <mpi.h>
#include <sanitizer/lsan_interface.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Open MPI leaves memory of its own (hwloc, unloaded components) at MPI_Finalize: the leak check at exit
 * would blame it. Leaks of tridi's are still caught input by input (libFuzzer's -detect_leaks). The memory
 * Open MPI drops during MPI_Init and its first collectives is allocated with LeakSanitizer disabled (an
 * input that allocates more than it frees, as a destroyed handle kept by the live-handle registry does,
 * makes libFuzzer run a full leak check, which would report that memory against the input). */
const char *__asan_default_options(void) { return "leak_check_at_exit=0"; }

static void finalize(void)
{
    int done = 0;
    MPI_Finalized(&done);
    if (!done)
        MPI_Finalize();
}

/* Open MPI sets up some state of its own at a process's first Cartesian communicator, collective and
 * refused call (collective components, hwloc bitmaps, error strings) and keeps it until MPI_Finalize:
 * libFuzzer's per-input leak check would blame whichever input reaches them first. One periodic
 * decomposition with a host halo exchange, and one call refused by the agreement, make those first uses
 * here, before any input. */
static void warm_up_mpi(void)
{
    const tridi_mpi_comm self = MPI_Comm_c2f(MPI_COMM_SELF);
    tridi_decomp_config c;
    tridi_decomp_config_init(&c);
    c.ndim = 3;
    for (int a = 0; a < 3; ++a) {
        c.lo[a] = 1;
        c.hi[a] = 4;
        c.halo[a] = a < 2 ? 1 : 0;
    }
    c.periodic[0] = c.periodic[1] = 1;
    tridi_decomp d;
    if (tridi_decomp_create(&d, self, &c) == TRIDI_SUCCESS) {
        tridi_decomp_info in;
        if (tridi_decomp_get_info(d, &in) == TRIDI_SUCCESS) {
            double *array = calloc(6 * 6 * 4, sizeof *array);
            tridi_halo h;
            if (array &&
                tridi_halo_create(&h, d, array, TRIDI_FLOAT64, TRIDI_MEMORY_HOST, 1, TRIDI_TRANSPORT_AUTO) ==
                    TRIDI_SUCCESS) {
                tridi_halo_exchange(h, NULL);
                tridi_halo_destroy(h);
            }
            free(array);
        }
        tridi_decomp_destroy(d);
    }
    tridi_decomp_create(NULL, self, &c);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    __lsan_disable();
    MPI_Init(NULL, NULL);
    warm_up_mpi();
    __lsan_enable();
    atexit(finalize);
    return 0;
}

static void fuzz_fail(const char *what)
{
    fprintf(stderr, "fuzz_mpi: %s (last message: %s)\n", what, tridi_error_message());
    abort();
}
#define REQUIRE(cond, what) ((cond) ? (void)0 : fuzz_fail(what))

/* Arrays are only allocated (halo exchanges, solves) for local grids up to this many cells. */
#define SMALL_GRID 4096

static const int halo_t[] = {1, 0, 2, 1, 3, /* bad or extreme: */ -1, INT_MAX, 1 << 20, INT_MIN};
static const int dims_t[][2] = {{0, 0}, {1, 1}, {0, 1}, {1, 0}, {1, 0}, /* bad: */ {2, 1}, {-1, 0}, {65536, 65536},
                                {INT_MAX, 2}, {0, 3}, {1, -2}, {46341, 46341}};

static int64_t wrap(int64_t i, int64_t lo, int64_t n) { return lo + (((i - lo) % n) + n) % n; }

/* Halo plan on the decomposition, a real exchange on small grids, and the cells it must have filled. */
static void fuzz_halo(reader *r, tridi_decomp d, const tridi_decomp_info *in, const tridi_decomp_config *c,
                      int64_t cells)
{
    uint8_t b = fz_byte(r);
    tridi_dtype dtype = (tridi_dtype)(b & 1);
    if ((b & 0x0e) == 0x0e)
        dtype = (tridi_dtype)((b & 0x10) ? 2 : -1);
    tridi_memory memory = (b & 0x60) == 0x60 ? TRIDI_MEMORY_DEVICE : TRIDI_MEMORY_HOST;
    if (b == 0xff)
        memory = (tridi_memory)5;
    b = fz_byte(r);
    const int corners = (b & 3) == 3 ? 7 : (b & 1);
    tridi_transport transport = (tridi_transport)((b >> 2) & 3);
    if ((b & 0xf0) == 0xf0)
        transport = (tridi_transport)9;
    const int small = cells <= SMALL_GRID;
    const tridi_dtype at = dtype == TRIDI_FLOAT32 ? TRIDI_FLOAT32 : TRIDI_FLOAT64;
    /* Host arrays are not touched before an exchange: a large grid is planned over a small stand-in. */
    void *array = malloc((size_t)(small ? cells : 1) * esize_of(at));
    for (int64_t i = 0; i < (small ? cells : 1); ++i)
        set(array, at, i, (double)(i + 1)); /* every cell its own value */
    tridi_halo h = (tridi_halo)array;
    const int null_array = b == 0x42;
    tridi_status st = tridi_halo_create(&h, d, null_array ? NULL : array, dtype, memory, corners, transport);
    /* The transport is ignored for host arrays (tridi_mpi.h), whatever its value. */
    int valid = !null_array && (dtype == TRIDI_FLOAT32 || dtype == TRIDI_FLOAT64) &&
                (memory == TRIDI_MEMORY_HOST || (memory == TRIDI_MEMORY_DEVICE && (int)transport >= 0 &&
                                                 (int)transport <= 3));
    if (!valid || memory == TRIDI_MEMORY_DEVICE) /* a host array passed as device memory, or no CUDA */
        REQUIRE(st != TRIDI_SUCCESS, "tridi_halo_create accepted a bad argument or a host array as device memory");
    if (st) {
        REQUIRE(tridi_error_message()[0], "a failing tridi_halo_create set no message");
        REQUIRE(h == NULL, "a failing tridi_halo_create left *halo set");
        free(array);
        return;
    }
    tridi_transport used;
    REQUIRE(tridi_halo_get_transport(h, &used) == TRIDI_SUCCESS, "tridi_halo_get_transport");
    REQUIRE(tridi_halo_end(h) == TRIDI_ERROR_INVALID_VALUE, "tridi_halo_end without begin");
    if (small) {
        b = fz_byte(r);
        if (b & 1) {
            st = tridi_halo_exchange(h, NULL);
        } else {
            st = tridi_halo_begin(h, NULL);
            if (!st && (b & 2))
                REQUIRE(tridi_halo_begin(h, NULL) == TRIDI_ERROR_INVALID_VALUE, "a second tridi_halo_begin");
            if (!st)
                st = tridi_halo_end(h);
        }
        REQUIRE(st == TRIDI_SUCCESS, "a halo exchange over MPI_COMM_SELF failed");
        /* Expected: owned cells unchanged; halos of periodic axes from the wrapped owned cells (corners
         * when asked and both axes wrap); every other halo cell unchanged. */
        const tridi_grid *g = &in->grid;
        const int64_t e0 = g->ubound[0] - g->lbound[0] + 1, e1 = g->ubound[1] - g->lbound[1] + 1;
        const int64_t n0 = in->hi[0] - in->lo[0] + 1, n1 = in->hi[1] - in->lo[1] + 1;
        const int64_t k0 = g->ndim == 3 ? g->lbound[2] : 1, k1 = g->ndim == 3 ? g->ubound[2] : 1;
        const int wraps[2] = {c->periodic[0] != 0, c->periodic[1] != 0};
        for (int64_t k = k0; k <= k1; ++k)
            for (int64_t j = g->lbound[1]; j <= g->ubound[1]; ++j)
                for (int64_t i = g->lbound[0]; i <= g->ubound[0]; ++i) {
                    const int oi = i >= in->lo[0] && i <= in->hi[0], oj = j >= in->lo[1] && j <= in->hi[1];
                    int64_t si = i, sj = j;
                    int filled = 0;
                    if (!oi && oj && wraps[0])
                        si = wrap(i, in->lo[0], n0), filled = 1;
                    if (oi && !oj && wraps[1])
                        sj = wrap(j, in->lo[1], n1), filled = 1;
                    if (!oi && !oj && corners && wraps[0] && wraps[1])
                        si = wrap(i, in->lo[0], n0), sj = wrap(j, in->lo[1], n1), filled = 1;
                    const int64_t o = (i - g->lbound[0]) + e0 * ((j - g->lbound[1]) + e1 * (k - k0));
                    const int64_t so = (si - g->lbound[0]) + e0 * ((sj - g->lbound[1]) + e1 * (k - k0));
                    REQUIRE(get(array, at, o) == (double)(so + 1),
                            filled ? "a periodic halo cell holds the wrong value" : "the exchange wrote a cell it must not");
                }
    }
    REQUIRE(tridi_halo_destroy(h) == TRIDI_SUCCESS, "tridi_halo_destroy");
    free(array);
}

/* tridi_mpi_solve against tridi_solve on the same (one-rank) grid and box. */
static void fuzz_solve(reader *r, tridi_context ctx, tridi_decomp d, const tridi_decomp_info *in,
                       const tridi_decomp_config *c, int64_t cells)
{
    uint8_t b = fz_byte(r);
    const tridi_axis axis = (tridi_axis)((int)(b % 5) - 1);
    const int wild = (b >> 3) & 1;
    int64_t lo[3], hi[3];
    int empty = 0;
    for (int a = 0; a < 3; ++a) {
        b = fz_byte(r);
        const int64_t glo = in->grid.lbound[a], ghi = in->grid.ubound[a];
        lo[a] = fz_shifted(glo, (b & 3) - ((b & 4) ? 1 : 0));
        hi[a] = fz_shifted(ghi, ((b & 0x20) ? 1 : 0) - ((b >> 3) & 3));
        if (a < c->ndim)
            empty |= hi[a] < lo[a];
    }
    b = fz_byte(r);
    tridi_dtype t[5];
    const int combo = b % 4;
    for (int i = 0; i < 5; ++i)
        t[i] = combo == 1 ? TRIDI_FLOAT64 : combo == 2 && i == 1 ? TRIDI_FLOAT64 : TRIDI_FLOAT32;
    if (combo == 3)
        t[(b >> 2) % 5] = (b & 0x80) ? TRIDI_FLOAT64 : (tridi_dtype)2;
    void *arr[5], *x2;
    for (int i = 0; i < 5; ++i) {
        const tridi_dtype at = t[i] == TRIDI_FLOAT32 ? TRIDI_FLOAT32 : TRIDI_FLOAT64;
        arr[i] = malloc((size_t)cells * 8); /* room for either type: x may be made to alias diag */
        for (int64_t q = 0; q < cells; ++q)
            set(arr[i], at, q, fz_value(r, wild) + (i == 1 ? 20.0 : 0.0)); /* diag mostly dominant */
    }
    const tridi_dtype xt = t[4] == TRIDI_FLOAT32 ? TRIDI_FLOAT32 : TRIDI_FLOAT64;
    const size_t xbytes = (size_t)cells * esize_of(xt);
    x2 = malloc(xbytes);
    tridi_arrays a1 = {arr[0], t[0], arr[1], t[1], arr[2], t[2], arr[3], t[3], arr[4], t[4]}, a2 = a1;
    a2.x = x2;
    b = fz_byte(r);
    int in_place = 0, bad = 0;
    void *rhs2 = NULL;
    switch (b % 8) {
    case 1: a1.diag = a2.diag = NULL, bad = 1; break;
    case 2: a1.x = a2.x = NULL, bad = 1; break;
    case 3: a1.x = a2.x = arr[1], bad = 1; break; /* x overlaps diag */
    case 4:
        if (t[3] == t[4]) { /* in place, each call on its own copy of rhs */
            in_place = 1;
            rhs2 = malloc(xbytes);
            memcpy(rhs2, arr[3], xbytes);
            a1.x = arr[3];
            a2.x = rhs2;
            a2.rhs = rhs2;
        }
        break;
    default: break;
    }
    if (a2.x == x2)
        memcpy(x2, arr[4], xbytes);
    void *x1 = a1.x;
    void *before = malloc(xbytes);
    if (x1)
        memcpy(before, x1, xbytes);
    const int null_box = b == 0x58;
    tridi_status s1 = tridi_mpi_solve(ctx, d, axis, null_box ? NULL : lo, hi, &a1);
    if (null_box)
        REQUIRE(s1 == TRIDI_ERROR_NULL_POINTER, "tridi_mpi_solve accepted lo = NULL");
    if (s1) {
        REQUIRE(tridi_error_message()[0], "a failing tridi_mpi_solve set no message");
        if (x1)
            REQUIRE(!memcmp(before, x1, xbytes), "a failing tridi_mpi_solve wrote x");
    }
    const int axis_ok = (int)axis >= 0 && (int)axis < c->ndim;
    if (!null_box && !empty && axis_ok) {
        tridi_status s2 = tridi_solve(ctx, &in->grid, axis, lo, hi, &a2);
        /* Both fail or both succeed (the MPI layer checks the box against the global grid before the
         * types, so a case with two faults may name another one). */
        if (!s1 != !s2) {
            fprintf(stderr, "tridi_mpi_solve: %s; tridi_solve: %s (%s)\n", tridi_status_name(s1),
                    tridi_status_name(s2), tridi_error_message());
            fuzz_fail("tridi_mpi_solve and tridi_solve disagree on one rank");
        }
        if (!s1 && !bad)
            REQUIRE(!memcmp(x1, a2.x, xbytes), "tridi_mpi_solve and tridi_solve give different answers on one rank");
    } else if (!axis_ok && !null_box) {
        REQUIRE(s1 == TRIDI_ERROR_INVALID_VALUE, "tridi_mpi_solve accepted a bad axis");
    }
    (void)in_place;
    REQUIRE(tridi_mpi_solve_device(ctx, d, axis, lo, hi, &a1, NULL) == TRIDI_ERROR_UNSUPPORTED,
            "tridi_mpi_solve_device on a CPU context");
    free(before);
    free(rhs2);
    free(x2);
    for (int i = 0; i < 5; ++i)
        free(arr[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    const uint8_t flags = fz_byte(&r);
    tridi_decomp_config c;
    tridi_decomp_config_init(&c);
    static const int ndim_t[] = {3, 2, 3, 2, /* bad: */ 1, 4, 0};
    c.ndim = FZ_PICK(&r, ndim_t);
    for (int a = 0; a < 3; ++a) {
        uint8_t b = fz_byte(&r);
        c.lo[a] = (int64_t)(b % 9) - 4;
        c.hi[a] = c.lo[a] + (b >> 4) % 6 - ((b & 0x0f) == 0x0f ? 3 : 0);
        if (flags & 2) { /* bounds near the int64 extremes */
            b = fz_byte(&r);
            if (b & 1)
                c.lo[a] = FZ_PICK(&r, fz_extreme_t);
            if (b & 2)
                c.hi[a] = FZ_PICK(&r, fz_extreme_t);
        }
        c.halo[a] = FZ_PICK(&r, halo_t);
    }
    const int *dims = dims_t[fz_byte(&r) % (sizeof dims_t / sizeof dims_t[0])];
    c.dims[0] = dims[0];
    c.dims[1] = dims[1];
    uint8_t b = fz_byte(&r);
    c.periodic[0] = (b & 3) == 3 ? 5 : (b & 1);
    c.periodic[1] = (b & 0x0c) == 0x0c ? -1 : ((b >> 2) & 1);
    c.solve_transport = (tridi_transport)((b >> 4) & 3);
    if ((b & 0xc0) == 0xc0)
        c.solve_transport = (tridi_transport)((b & 0x10) ? 7 : -1);
    b = fz_byte(&r);
    if (b == 0x3c)
        c.size = sizeof c + 8; /* not set by tridi_decomp_config_init */

    tridi_mpi_comm comm = MPI_Comm_c2f(MPI_COMM_SELF);
    if (b == 0x3d)
        comm = MPI_Comm_c2f(MPI_COMM_NULL);
    tridi_decomp d = (tridi_decomp)&c;
    tridi_status st;
    if (b == 0x3e)
        st = tridi_decomp_create(&d, comm, NULL);
    else if (b == 0x3f)
        st = tridi_decomp_create(NULL, comm, &c);
    else
        st = tridi_decomp_create(&d, comm, &c);
    if (b >= 0x3c && b <= 0x3f)
        REQUIRE(st != TRIDI_SUCCESS, "tridi_decomp_create accepted a bad size, communicator or a NULL argument");
    if (st) {
        REQUIRE(tridi_error_message()[0], "a failing tridi_decomp_create set no message");
        if (b != 0x3f)
            REQUIRE(d == NULL, "a failing tridi_decomp_create left *decomp set");
        return 0;
    }

    /* One rank owns the whole global grid; halos as configured; neighbours only across periodic axes. */
    tridi_decomp_info in;
    REQUIRE(tridi_decomp_get_info(d, &in) == TRIDI_SUCCESS, "tridi_decomp_get_info");
    REQUIRE(tridi_decomp_get_info(d, NULL) == TRIDI_ERROR_NULL_POINTER, "tridi_decomp_get_info(NULL)");
    REQUIRE(in.nranks == 1 && in.rank == 0 && in.dims[0] == 1 && in.dims[1] == 1, "one rank, a 1 x 1 grid");
    REQUIRE(in.grid.ndim == c.ndim, "info.grid.ndim");
    int64_t cells = 1;
    for (int a = 0; a < 3; ++a) {
        if (a < c.ndim) {
            REQUIRE(in.lo[a] == c.lo[a] && in.hi[a] == c.hi[a], "one rank owns the whole global grid");
            REQUIRE(in.grid.lbound[a] == c.lo[a] - c.halo[a] && in.grid.ubound[a] == c.hi[a] + c.halo[a],
                    "the local grid is the owned block plus the halos");
            int64_t e = in.grid.ubound[a] - in.grid.lbound[a] + 1;
            cells = cells > SMALL_GRID || e > SMALL_GRID ? SMALL_GRID + 1 : cells * e;
        }
        if (a < 2)
            for (int s = 0; s < 2; ++s)
                REQUIRE(in.neighbour[a][s] == (c.periodic[a] ? 0 : -1), "neighbours of a single rank");
    }

    fuzz_halo(&r, d, &in, &c, cells);
    if (cells <= SMALL_GRID) {
        tridi_config cfg;
        tridi_config_init(&cfg);
        cfg.backend = TRIDI_BACKEND_CPU;
        cfg.num_threads = 1;
        tridi_context ctx;
        REQUIRE(tridi_create(&ctx, &cfg) == TRIDI_SUCCESS, "tridi_create");
        fuzz_solve(&r, ctx, d, &in, &c, cells);
        tridi_destroy(ctx);
    }
    REQUIRE(tridi_decomp_destroy(d) == TRIDI_SUCCESS, "tridi_decomp_destroy");
    return 0;
}
