/* Halo exchange correctness: owned cells hold a code of their global indices, halo cells a poison; after
 * the exchange each halo cell must hold the code of the global cell it mirrors (wrapped on periodic axes),
 * or still the poison where no neighbour exists (non-periodic edges, corners when off). Host arrays, or
 * device arrays with the transport named ("--device ipc|staged|auto|cuda-aware|nccl"; with nccl two plans
 * per case, their exchanges interleaved, share the decomposition's NCCL communicator). "--all": host
 * arrays, then (with a GPU) every device transport in turn, staged also in tiny chunks, each rank on the
 * GPU of its local rank; a transport refused here is skipped, its reason printed once (ctest runs it
 * with MPI restricted to TCP, as between nodes). */
#include "mpi_testutil.h"
#include "tridi_mpi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef TRIDI_TEST_CUDA
#include <cuda_runtime_api.h>
#endif

#define POISON (-7.0)

typedef struct hcase {
    int ndim;
    int64_t n[3];
    int halo[3];
    int dims[2];
    int periodic[2];
    int corners;
    tridi_dtype dtype;
} hcase;

static double code(int64_t i, int64_t j, int64_t k) { return (double)(i + 64 * (j + 64 * (k + 4))); }

static int device_mode;
static tridi_transport device_transport;
static int all_mode;             /* --all: a transport refused here is skipped, its reason kept below */
static char unsupported[400];

static int64_t wrap(int64_t v, int64_t lo, int64_t hi, int periodic, int *valid)
{
    int64_t n = hi - lo + 1;
    if (v >= lo && v <= hi)
        return v;
    if (!periodic) {
        *valid = 0;
        return v;
    }
    return v < lo ? v + n : v - n;
}

static long run_case(const hcase *c, int ci, uint64_t *rng)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    tridi_decomp_config cfg;
    tridi_decomp_config_init(&cfg);
    cfg.ndim = c->ndim;
    /* Global bounds start at random places (MOHID's arrays start at 1, others anywhere). */
    for (int a = 0; a < 3; ++a) {
        cfg.lo[a] = tu_randint(rng, -3, 3);
        cfg.hi[a] = cfg.lo[a] + c->n[a] - 1;
        cfg.halo[a] = c->halo[a];
    }
    for (int a = 0; a < 2; ++a) {
        cfg.dims[a] = c->dims[a];
        cfg.periodic[a] = c->periodic[a];
    }
    tridi_decomp d;
    tridi_status s = tridi_decomp_create(&d, MPI_Comm_c2f(MPI_COMM_WORLD), &cfg);
    if (s) {
        printf("rank %d case %d: tridi_decomp_create: %s %s\n", rank, ci, tridi_status_name(s), tridi_error_message());
        return 1;
    }
    tridi_decomp_info in;
    tridi_decomp_get_info(d, &in);
    const tridi_grid *g = &in.grid;
    int64_t e0 = g->ubound[0] - g->lbound[0] + 1, e1 = g->ubound[1] - g->lbound[1] + 1;
    int64_t e2 = c->ndim == 3 ? g->ubound[2] - g->lbound[2] + 1 : 1;
    int64_t cells = e0 * e1 * e2;
    size_t es = c->dtype == TRIDI_FLOAT64 ? 8 : 4;
    void *host = malloc(cells * es);
    int64_t k0 = c->ndim == 3 ? g->lbound[2] : 1;
    for (int64_t k = 0; k < e2; ++k)
        for (int64_t j = 0; j < e1; ++j)
            for (int64_t i = 0; i < e0; ++i) {
                int64_t gi = g->lbound[0] + i, gj = g->lbound[1] + j;
                int own = gi >= in.lo[0] && gi <= in.hi[0] && gj >= in.lo[1] && gj <= in.hi[1];
                tu_set(host, c->dtype, i + e0 * (j + e1 * k), own ? code(gi, gj, k0 + k) : POISON);
            }

    void *array = host, *alloc = NULL;
    tridi_memory mem = TRIDI_MEMORY_HOST;
#ifdef TRIDI_TEST_CUDA
    /* The array starts inside its allocation, as a model's sub-array would. */
    size_t lead = 256 * es;
    if (device_mode) {
        if (cudaMalloc(&alloc, cells * es + lead) != cudaSuccess) {
            printf("rank %d: cudaMalloc failed\n", rank);
            return 1;
        }
        array = (char *)alloc + lead;
        cudaMemcpy(array, host, cells * es, cudaMemcpyHostToDevice);
        cudaDeviceSynchronize(); /* a pageable upload may return before its DMA lands */
        mem = TRIDI_MEMORY_DEVICE;
    }
#endif
    /* Host plans ignore the transport: every value is accepted, NCCL included, in any build. */
    tridi_transport tr = device_mode ? device_transport : (tridi_transport)(ci % 5);
    tridi_halo h, h2 = NULL;
    s = tridi_halo_create(&h, d, array, c->dtype, mem, c->corners, tr);
    if (!s && device_mode && tr == TRIDI_TRANSPORT_NCCL)
        s = tridi_halo_create(&h2, d, array, c->dtype, mem, c->corners, tr);
    long bad = 0;
    /* Every rank gets the same refusal (tridi_mpi.h), so every rank skips alike. */
    const int refused = s == TRIDI_ERROR_UNSUPPORTED && all_mode && device_mode;
    if (refused)
        snprintf(unsupported, sizeof unsupported, "%s", tridi_error_message());
    else if (s)
        printf("rank %d case %d: tridi_halo_create: %s %s\n", rank, ci, tridi_status_name(s), tridi_error_message());
    if (s)
        bad = 1;
    /* Every other case destroys the decomposition now: the plan must not depend on the caller keeping it
     * (the plan keeps what it needs, the decomposition goes with the plan). */
    if (ci % 2 == 1 && !bad) {
        tridi_decomp_destroy(d);
        d = NULL;
    }
    /* Twice: the second exchange reuses the plan (and the IPC mappings) on unchanged data. */
    for (int rep = 0; rep < 2 && !bad; ++rep) {
        s = tridi_halo_begin(h, NULL);
        if (!s && h2)
            s = tridi_halo_begin(h2, NULL);
        if (!s)
            s = tridi_halo_end(h);
        if (!s && h2)
            s = tridi_halo_end(h2);
        if (s) {
            printf("rank %d case %d: exchange: %s %s\n", rank, ci, tridi_status_name(s), tridi_error_message());
            bad = 1;
        }
    }
    tridi_transport used = TRIDI_TRANSPORT_AUTO;
    tridi_halo_get_transport(h, &used);
#ifdef TRIDI_TEST_CUDA
    if (device_mode)
        cudaMemcpy(host, array, cells * es, cudaMemcpyDeviceToHost);
#endif
    for (int64_t k = 0; k < e2 && !bad; ++k)
        for (int64_t j = 0; j < e1; ++j)
            for (int64_t i = 0; i < e0; ++i) {
                int64_t gi = g->lbound[0] + i, gj = g->lbound[1] + j;
                int out0 = gi < in.lo[0] || gi > in.hi[0], out1 = gj < in.lo[1] || gj > in.hi[1];
                int valid = 1;
                int64_t wi = wrap(gi, cfg.lo[0], cfg.hi[0], cfg.periodic[0], &valid);
                int64_t wj = wrap(gj, cfg.lo[1], cfg.hi[1], cfg.periodic[1], &valid);
                /* Along an axis with one rank and no wrap there is no neighbour at all. */
                if (out0 && in.dims[0] == 1 && !cfg.periodic[0])
                    valid = 0;
                if (out1 && in.dims[1] == 1 && !cfg.periodic[1])
                    valid = 0;
                if (out0 && out1 && !c->corners)
                    valid = 0;
                double want = valid ? code(wi, wj, k0 + k) : POISON;
                double got = tu_get(host, c->dtype, i + e0 * (j + e1 * k));
                if (got != want) {
                    if (bad < 5)
                        printf("rank %d case %d: cell (%lld, %lld, %lld) holds %g, expected %g\n", rank, ci,
                               (long long)gi, (long long)gj, (long long)(k0 + k), got, want);
                    bad++;
                }
            }
    if (rank == 0 && ci < 100 && !refused)
        printf("case %d: %dD %lldx%lldx%lld halo %d,%d dims %dx%d periodic %d,%d corners %d %s transport %s: %s\n", ci,
               c->ndim, (long long)c->n[0], (long long)c->n[1], (long long)c->n[2], c->halo[0], c->halo[1], in.dims[0],
               in.dims[1], c->periodic[0], c->periodic[1], c->corners, c->dtype == TRIDI_FLOAT64 ? "f64" : "f32",
               mem == TRIDI_MEMORY_HOST ? "host" : tridi_transport_name(used), bad ? "bad (see ranks)" : "ok");
    tridi_halo_destroy(h);
    tridi_halo_destroy(h2);
    tridi_decomp_destroy(d);
#ifdef TRIDI_TEST_CUDA
    if (alloc)
        cudaFree(alloc);
#endif
    (void)alloc;
    free(host);
    return refused ? -1 : bad;
}

#ifdef TRIDI_TEST_CUDA
/* A double field of d's local grid in device memory (NULL if it cannot be had: the plan then refuses it). */
static void *device_field(tridi_decomp d)
{
    tridi_decomp_info in;
    tridi_decomp_get_info(d, &in);
    size_t cells = 1;
    for (int a = 0; a < 3; ++a)
        cells *= (size_t)(in.grid.ubound[a] - in.grid.lbound[a] + 1);
    void *arr = NULL;
    return cudaMalloc(&arr, cells * 8) == cudaSuccess ? arr : NULL;
}

/* --device nccl: what this build and machine allow. Built without NCCL, every rank must get
 * TRIDI_ERROR_UNSUPPORTED with the same message naming the build; with ranks sharing a GPU (NCCL refuses
 * them), the same status naming two of the ranks, without a hang. Both then skip; else the cases run.
 * Returns 1 to skip; failures are added to *bad. */
static int nccl_probe(int nranks, int ndev, long *bad)
{
    tridi_decomp_config cfg;
    mt_base_config(&cfg, nranks, 4);
    tridi_decomp d;
    tridi_status s = tridi_decomp_create(&d, MPI_Comm_c2f(MPI_COMM_WORLD), &cfg);
    *bad += mt_expect("nccl probe: tridi_decomp_create", s, TRIDI_SUCCESS, NULL);
    if (s)
        return 0;
    void *arr = device_field(d);
    tridi_halo h = NULL;
    s = tridi_halo_create(&h, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_DEVICE, 0, TRIDI_TRANSPORT_NCCL);
    int skip = 1;
#ifndef TRIDI_TEST_NCCL
    *bad += mt_expect("nccl in a build without NCCL", s, TRIDI_ERROR_UNSUPPORTED, "built without NCCL");
#else
    if (nranks > ndev)
        *bad += mt_expect("nccl with ranks sharing a GPU", s, TRIDI_ERROR_UNSUPPORTED, "share one GPU");
    else {
        *bad += mt_expect("nccl halo plan", s, TRIDI_SUCCESS, NULL);
        skip = 0;
    }
#endif
    tridi_halo_destroy(h);
    tridi_decomp_destroy(d);
    cudaFree(arr);
    return skip;
}
#endif

#ifdef TRIDI_TEST_CUDA
/* The rank's place among the ranks of its node: Open MPI's launcher says it, else the node's
 * communicator does. Ranks are bound to GPUs by it, as on a cluster of multi-GPU nodes. */
static int local_rank(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (v && *v)
        return atoi(v);
    MPI_Comm node;
    int r = 0;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &r);
    MPI_Comm_free(&node);
    return r;
}

/* TRIDI_HALO_CHUNK_BYTES (read by staged plans at creation): a malformed value refuses the plan on every
 * rank naming the variable; values differing between ranks are a mismatch, not a hang or a truncation. */
static long chunk_knob_checks(int rank, int nranks)
{
    long bad = 0;
    tridi_decomp_config cfg;
    mt_base_config(&cfg, nranks, 4);
    tridi_decomp d;
    tridi_status s = tridi_decomp_create(&d, MPI_Comm_c2f(MPI_COMM_WORLD), &cfg);
    bad += mt_expect("chunk knob: tridi_decomp_create", s, TRIDI_SUCCESS, NULL);
    if (s)
        return bad;
    void *arr = device_field(d);
    tridi_halo h = NULL;
    setenv("TRIDI_HALO_CHUNK_BYTES", rank == nranks - 1 ? "12x" : "64", 1);
    s = tridi_halo_create(&h, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_DEVICE, 0, TRIDI_TRANSPORT_STAGED);
    bad += mt_expect("malformed TRIDI_HALO_CHUNK_BYTES", s, TRIDI_ERROR_INVALID_VALUE, "TRIDI_HALO_CHUNK_BYTES");
    tridi_halo_destroy(h);
    h = NULL;
    if (nranks > 1) {
        setenv("TRIDI_HALO_CHUNK_BYTES", rank == 0 ? "64" : "128", 1);
        s = tridi_halo_create(&h, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_DEVICE, 0, TRIDI_TRANSPORT_STAGED);
        bad += mt_expect("TRIDI_HALO_CHUNK_BYTES differing between ranks", s, TRIDI_ERROR_MISMATCH,
                         "TRIDI_HALO_CHUNK_BYTES");
        tridi_halo_destroy(h);
    }
    unsetenv("TRIDI_HALO_CHUNK_BYTES");
    tridi_decomp_destroy(d);
    cudaFree(arr);
    return bad;
}
#endif

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const char *name = "test_mpi_halo";
    int ndev = 0;
    (void)ndev; /* GPU builds only */
    all_mode = argc > 1 && !strcmp(argv[1], "--all");
    if (all_mode)
        name = "test_mpi_halo (all transports)";
    if (argc > 2 && !strcmp(argv[1], "--device")) {
        device_mode = 1;
        name = "test_mpi_halo (device)";
        const char *t = argv[2];
        device_transport = !strcmp(t, "ipc")          ? TRIDI_TRANSPORT_IPC
                           : !strcmp(t, "staged")     ? TRIDI_TRANSPORT_STAGED
                           : !strcmp(t, "cuda-aware") ? TRIDI_TRANSPORT_CUDA_AWARE
                           : !strcmp(t, "nccl")       ? TRIDI_TRANSPORT_NCCL
                                                      : TRIDI_TRANSPORT_AUTO;
#ifdef TRIDI_TEST_CUDA
        if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
            if (rank == 0)
                printf("%s: no GPU\n", name);
            return mt_finish(name, 0, 1);
        }
        cudaSetDevice(local_rank() % ndev);
        if (device_transport == TRIDI_TRANSPORT_NCCL) {
            long bad = 0;
            if (nccl_probe(nranks, ndev, &bad) || bad) /* bad: the failures of all ranks */
                return mt_finish(name, rank == 0 ? bad : 0, !bad);
        }
#else
        return mt_finish(name, 0, 1);
#endif
    }
    if (strcmp(tridi_transport_name(TRIDI_TRANSPORT_NCCL), "nccl")) {
        printf("tridi_transport_name(TRIDI_TRANSPORT_NCCL) = \"%s\"\n", tridi_transport_name(TRIDI_TRANSPORT_NCCL));
        return mt_finish(name, 1, 0);
    }
    uint64_t rng = mt_seed(name);
    hcase cases[] = {
        {3, {13, 11, 3}, {1, 1, 0}, {0, 0}, {0, 0}, 0, TRIDI_FLOAT64},
        {3, {13, 11, 3}, {2, 1, 1}, {0, 0}, {0, 0}, 1, TRIDI_FLOAT32},
        {3, {12, 9, 2}, {2, 2, 0}, {0, 0}, {1, 1}, 1, TRIDI_FLOAT64},
        {3, {12, 9, 2}, {1, 2, 1}, {0, 0}, {1, 0}, 0, TRIDI_FLOAT32},
        {3, {17, 8, 2}, {3, 1, 0}, {nranks, 1}, {0, 1}, 1, TRIDI_FLOAT64},
        {3, {8, 17, 2}, {1, 3, 2}, {1, nranks}, {1, 0}, 1, TRIDI_FLOAT32},
        {2, {15, 13, 1}, {2, 2, 0}, {0, 0}, {1, 1}, 1, TRIDI_FLOAT64},
        {2, {15, 13, 1}, {1, 0, 0}, {nranks, 1}, {0, 0}, 0, TRIDI_FLOAT32},
        {2, {9, 14, 1}, {0, 2, 0}, {1, nranks}, {0, 1}, 1, TRIDI_FLOAT64},
        /* Rows of 160 bytes: device IPC copies these faces with the copy engines, not the kernel. */
        {3, {40, 12, 3}, {1, 2, 1}, {1, nranks}, {0, 1}, 1, TRIDI_FLOAT32},
        {3, {40, 12, 3}, {2, 1, 0}, {0, 0}, {1, 1}, 1, TRIDI_FLOAT64},
    };
    const int ncases = (int)(sizeof cases / sizeof cases[0]);
    long bad = 0;
    for (int ci = 0; ci < ncases; ++ci)
        bad += mt_total(run_case(&cases[ci], ci, &rng));
    if (!all_mode)
        return mt_finish(name, bad, 0);
#ifdef TRIDI_TEST_CUDA
    /* Every device transport in turn; "staged:24" cuts every face into chunks of 24 bytes (a chunk
     * boundary inside an element, several chunks per message). */
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        if (rank == 0)
            printf("%s: no GPU: the device transports are not run\n", name);
        return mt_finish(name, bad, 0);
    }
    const int lr = local_rank();
    cudaSetDevice(lr % ndev);
    printf("rank %d: local rank %d -> GPU %d of %d\n", rank, lr, lr % ndev, ndev);
    bad += mt_total(chunk_knob_checks(rank, nranks));
    static const char *tnames[] = {"ipc", "staged", "staged:24", "cuda-aware", "nccl", "auto"};
    static const tridi_transport tvals[] = {TRIDI_TRANSPORT_IPC,        TRIDI_TRANSPORT_STAGED, TRIDI_TRANSPORT_STAGED,
                                            TRIDI_TRANSPORT_CUDA_AWARE, TRIDI_TRANSPORT_NCCL,   TRIDI_TRANSPORT_AUTO};
    device_mode = 1;
    for (int t = 0; t < 6; ++t) {
        device_transport = tvals[t];
        if (!strcmp(tnames[t], "staged:24"))
            setenv("TRIDI_HALO_CHUNK_BYTES", "24", 1);
        for (int ci = 0; ci < ncases; ++ci) {
            long r = run_case(&cases[ci], ci, &rng);
            if (r < 0) { /* refused on every rank: the reason, once */
                if (rank == 0)
                    printf("transport %s not available here, skipped: %s\n", tnames[t], unsupported);
                break;
            }
            bad += mt_total(r);
        }
        unsetenv("TRIDI_HALO_CHUNK_BYTES");
    }
#endif
    return mt_finish(name, bad, 0);
}
