/* Multi-GPU benchmark of the MPI layer (2 ranks, one GPU each or both on one GPU). Modes:
 *   halo [CSV] - exchange bandwidth per transport (ipc, nccl, staged by its rule, whole and in 1 MiB
 *                chunks, cuda-aware) against copies of the same bytes in the same run: a peer copy (a
 *                device-to-device copy when the ranks share a GPU), a pinned device-to-host copy and an
 *                MPI exchange between pinned host buffers (the staged transport's bound);
 *   weak / strong - an ADI-like step (x, y, z solves + a halo exchange), 1 GPU vs 2, fixed block per GPU
 *                / fixed grids (140x140x56, 512x512x256); breakdown - its parts;
 *   model - the parts on one GPU for a flow_channel_1120-56 block (the scaling model, docs/mpi.md).
 * 1-GPU figures come from rank 0 alone on a communicator of its own while rank 1 waits. Medians of
 * repeated runs after warm-up; random diagonally dominant systems (never zeros). */
#include "tridi_mpi.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks, ndev;

#define CK(call)                                                                                               \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess) {                                                                               \
            fprintf(stderr, "rank %d: %s: %s\n", rank, #call, cudaGetErrorString(e_));                         \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                                      \
        }                                                                                                      \
    } while (0)
#define TK(call)                                                                                               \
    do {                                                                                                       \
        tridi_status s_ = (call);                                                                              \
        if (s_ != TRIDI_SUCCESS) {                                                                             \
            fprintf(stderr, "rank %d: %s: %s\n", rank, #call, tridi_error_message());                          \
            MPI_Abort(MPI_COMM_WORLD, 2);                                                                      \
        }                                                                                                      \
    } while (0)

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double uniform(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545F4914F6CDD1Dull) >> 11) * (1.0 / 9007199254740992.0);
}

static void *dev_random(int64_t cells, int dbl, double lo, double hi)
{
    size_t es = dbl ? 8 : 4;
    void *h = malloc((size_t)cells * es), *d;
    for (int64_t i = 0; i < cells; ++i) {
        double v = lo + (hi - lo) * uniform();
        if (dbl)
            ((double *)h)[i] = v;
        else
            ((float *)h)[i] = (float)v;
    }
    CK(cudaMalloc(&d, (size_t)cells * es));
    CK(cudaMemcpy(d, h, (size_t)cells * es, cudaMemcpyHostToDevice));
    CK(cudaDeviceSynchronize()); /* a pageable upload may return before its DMA lands */
    free(h);
    return d;
}

/* ---- halo bandwidth ---- */

/* Copy of `bytes` by rank 0 alone, median seconds: GPU 0 to GPU 1 (peer, the bandwidth the link offers;
 * a device-to-device copy when there is one GPU), or pinned = 1: GPU 0 to pinned host memory. */
static double copy_seconds(size_t bytes, int reps, int pinned)
{
    double t = 0;
    if (rank == 0) {
        void *a, *b;
        cudaStream_t st;
        const int peer = ndev > 1 ? 1 : 0;
        CK(cudaSetDevice(peer));
        if (pinned)
            CK(cudaMallocHost(&b, bytes));
        else
            CK(cudaMalloc(&b, bytes));
        CK(cudaSetDevice(0));
        if (peer)
            cudaDeviceEnablePeerAccess(1, 0);
        cudaGetLastError();
        CK(cudaMalloc(&a, bytes));
        CK(cudaMemset(a, 1, bytes));
        CK(cudaStreamCreate(&st));
        cudaEvent_t e0, e1;
        cudaEventCreate(&e0);
        cudaEventCreate(&e1);
        double *v = malloc(sizeof(double) * (size_t)reps);
        for (int r = -3; r < reps; ++r) {
            cudaEventRecord(e0, st);
            if (pinned)
                CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToHost, st));
            else
                CK(cudaMemcpyPeerAsync(b, peer, a, 0, bytes, st));
            cudaEventRecord(e1, st);
            CK(cudaEventSynchronize(e1));
            float ms;
            cudaEventElapsedTime(&ms, e0, e1);
            if (r >= 0)
                v[r] = ms * 1e-3;
        }
        t = median(v, reps);
        free(v);
        cudaFree(a);
        CK(cudaSetDevice(peer));
        if (pinned)
            cudaFreeHost(b);
        else
            cudaFree(b);
        CK(cudaSetDevice(0));
        cudaStreamDestroy(st);
    }
    MPI_Bcast(&t, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    return t;
}

/* Exchange of `bytes` between pinned host buffers of ranks 0 and 1 with MPI_Sendrecv, median seconds of the
 * slower rank: what MPI's host path alone moves, the bound of the staged transport (docs/decisions/050). */
static double mpi_host_seconds(size_t bytes, int reps)
{
    double t = 0;
    void *snd, *rcv;
    CK(cudaMallocHost(&snd, bytes));
    CK(cudaMallocHost(&rcv, bytes));
    memset(snd, 1, bytes);
    memset(rcv, 0, bytes);
    const int peer = rank ^ 1;
    double *v = malloc(sizeof(double) * (size_t)reps);
    for (int r = -3; r < reps; ++r) {
        double t1 = 0, tmax;
        MPI_Barrier(MPI_COMM_WORLD);
        if (peer < nranks) {
            double t0 = MPI_Wtime();
            MPI_Sendrecv(snd, (int)bytes, MPI_BYTE, peer, 7, rcv, (int)bytes, MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            t1 = MPI_Wtime() - t0;
        }
        MPI_Allreduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (r >= 0)
            v[r] = tmax;
    }
    t = median(v, reps);
    free(v);
    cudaFreeHost(snd);
    cudaFreeHost(rcv);
    return t;
}

static void bench_halo(const char *csv_path)
{
    FILE *csv = NULL;
    if (rank == 0) {
        const char *ref = ndev > 1 ? "peer copy" : "same-GPU copy";
        printf("\n## Halo exchange, 2 ranks (%s), double, halo width 2, one face per rank; copies of the same "
               "bytes by rank 0 alone, same run\n",
               ndev > 1 ? "one GPU each" : "both on one GPU");
        printf("| cut | local block | face bytes | transport | chunk | exchange us | GB/s | %s GB/s | halo/%s | "
               "pinned D2H GB/s | halo/pinned | MPI host GB/s | halo/MPI host |\n",
               ref, ref);
        printf("|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        if (csv_path && (csv = fopen(csv_path, "w")) != NULL)
            fprintf(csv, "cut,block,face_bytes,transport,chunk,exchange_us,gbs,ref,ref_gbs,pinned_d2h_gbs,"
                         "mpi_host_gbs,gpus\n");
    }
    struct {
        int cut; /* 0: along i (faces strided: 2 cells per row), 1: along j (faces of whole rows) */
        int64_t n[3];
    } cfgs[] = {{1, {256, 64, 32}}, {1, {1024, 64, 128}}, {1, {2048, 64, 512}}, {1, {4096, 64, 1024}},
                {0, {64, 256, 32}},  {0, {64, 1024, 128}}, {0, {64, 2048, 512}}};
    /* Staged three ways: the chunk rule, one chunk per face (the transport before pipelining), 1 MiB. */
    const struct {
        tridi_transport t;
        const char *chunk; /* TRIDI_HALO_CHUNK_BYTES, NULL: unset */
        const char *label;
    } trs[] = {{TRIDI_TRANSPORT_IPC, NULL, "-"},         {TRIDI_TRANSPORT_NCCL, NULL, "-"},
               {TRIDI_TRANSPORT_STAGED, NULL, "rule"},   {TRIDI_TRANSPORT_STAGED, "0", "uncut"},
               {TRIDI_TRANSPORT_STAGED, "1048576", "1 MiB"}, {TRIDI_TRANSPORT_CUDA_AWARE, NULL, "-"}};
    const int ntr = (int)(sizeof trs / sizeof trs[0]);
    const int h = 2, reps = 30;
    for (size_t c = 0; c < sizeof cfgs / sizeof cfgs[0]; ++c) {
        tridi_decomp_config dc;
        tridi_decomp_config_init(&dc);
        int cut = cfgs[c].cut;
        for (int a = 0; a < 3; ++a) {
            dc.lo[a] = 1;
            dc.hi[a] = cfgs[c].n[a] * (a == cut ? nranks : 1);
            dc.halo[a] = a < 2 ? h : 0;
        }
        dc.dims[0] = cut == 0 ? nranks : 1;
        dc.dims[1] = cut == 1 ? nranks : 1;
        tridi_decomp d;
        TK(tridi_decomp_create(&d, MPI_Comm_c2f(MPI_COMM_WORLD), &dc));
        tridi_decomp_info in;
        TK(tridi_decomp_get_info(d, &in));
        int64_t cells = 1;
        for (int a = 0; a < 3; ++a)
            cells *= in.grid.ubound[a] - in.grid.lbound[a] + 1;
        void *arr = dev_random(cells, 1, -1, 1);
        size_t face = (size_t)h * 8 * (size_t)(cut == 1 ? cfgs[c].n[0] : cfgs[c].n[1]) * (size_t)cfgs[c].n[2];
        double tpeer = copy_seconds(face, reps, 0), tpin = copy_seconds(face, reps, 1);
        double thost = mpi_host_seconds(face, reps);
        char blk[64];
        snprintf(blk, sizeof blk, "%lldx%lldx%lld", (long long)cfgs[c].n[0], (long long)cfgs[c].n[1],
                 (long long)cfgs[c].n[2]);
        for (int t = 0; t < ntr; ++t) {
            if (trs[t].chunk)
                setenv("TRIDI_HALO_CHUNK_BYTES", trs[t].chunk, 1);
            else
                unsetenv("TRIDI_HALO_CHUNK_BYTES");
            tridi_halo hl;
            tridi_status s = tridi_halo_create(&hl, d, arr, TRIDI_FLOAT64, TRIDI_MEMORY_DEVICE, 0, trs[t].t);
            unsetenv("TRIDI_HALO_CHUNK_BYTES");
            if (s) {
                if (rank == 0)
                    printf("| %s | %s | %zu | %s | %s | - | - | - | not available: %s (%s) | - | - | - | - |\n",
                           cut ? "j" : "i", blk, face, tridi_transport_name(trs[t].t), trs[t].label,
                           tridi_status_name(s), tridi_error_message());
                continue;
            }
            double v[64];
            for (int r = -5; r < reps; ++r) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                TK(tridi_halo_begin(hl, NULL));
                TK(tridi_halo_end(hl));
                double t1 = MPI_Wtime() - t0, tmax;
                MPI_Allreduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (r >= 0)
                    v[r] = tmax;
            }
            double tm = median(v, reps);
            if (rank == 0) {
                printf("| %s | %s | %zu | %s | %s | %.1f | %.2f | %.1f | %.0f%% | %.1f | %.0f%% | %.2f | %.0f%% |\n",
                       cut ? "j" : "i", blk, face, tridi_transport_name(trs[t].t), trs[t].label, tm * 1e6,
                       face / tm * 1e-9, face / tpeer * 1e-9, 100.0 * tpeer / tm, face / tpin * 1e-9,
                       100.0 * tpin / tm, face / thost * 1e-9, 100.0 * thost / tm);
                if (csv)
                    fprintf(csv, "%s,%s,%zu,%s,%s,%.2f,%.3f,%s,%.2f,%.2f,%.3f,%d\n", cut ? "j-cut" : "i-cut", blk,
                            face, tridi_transport_name(trs[t].t), trs[t].label, tm * 1e6, face / tm * 1e-9,
                            ndev > 1 ? "peer" : "same-gpu", face / tpeer * 1e-9, face / tpin * 1e-9,
                            face / thost * 1e-9, ndev);
                if (csv)
                    fflush(csv); /* rows kept if a time limit stops the run */
            }
            TK(tridi_halo_destroy(hl));
        }
        cudaFree(arr);
        TK(tridi_decomp_destroy(d));
    }
    if (csv)
        fclose(csv);
}

/* ---- ADI-like step ---- */

typedef struct step_data {
    tridi_decomp d;
    tridi_decomp_info in;
    tridi_context ctx;
    void *lower, *diag, *upper, *rhs, *x;
    tridi_halo halo;
} step_data;

/* MOHID's types: diag double, the rest float; one halo cell on i and j. */
static void step_setup(step_data *sd, MPI_Comm comm, const int64_t n[3], int dims1, tridi_transport tr)
{
    tridi_decomp_config dc;
    tridi_decomp_config_init(&dc);
    for (int a = 0; a < 3; ++a) {
        dc.lo[a] = 1;
        dc.hi[a] = n[a];
        dc.halo[a] = a < 2 ? 1 : 0;
    }
    dc.dims[0] = 1;
    dc.dims[1] = dims1;
    /* The reduced systems of the cut axis travel the same way as the halos. */
    dc.solve_transport = tr == TRIDI_TRANSPORT_STAGED ? TRIDI_TRANSPORT_STAGED : TRIDI_TRANSPORT_AUTO;
    TK(tridi_decomp_create(&sd->d, MPI_Comm_c2f(comm), &dc));
    TK(tridi_decomp_get_info(sd->d, &sd->in));
    int64_t cells = 1;
    for (int a = 0; a < 3; ++a)
        cells *= sd->in.grid.ubound[a] - sd->in.grid.lbound[a] + 1;
    sd->lower = dev_random(cells, 0, -1, 1);
    sd->upper = dev_random(cells, 0, -1, 1);
    sd->diag = dev_random(cells, 1, 2.5, 4);
    sd->rhs = dev_random(cells, 0, -1, 1);
    sd->x = dev_random(cells, 0, -1, 1);
    tridi_config cfg;
    tridi_config_init(&cfg);
    cfg.backend = TRIDI_BACKEND_CUDA;
    cfg.device = rank % ndev;
    TK(tridi_create(&sd->ctx, &cfg));
    TK(tridi_halo_create(&sd->halo, sd->d, sd->x, TRIDI_FLOAT32, TRIDI_MEMORY_DEVICE, 0, tr));
}

static void step_free(step_data *sd)
{
    TK(tridi_halo_destroy(sd->halo));
    cudaFree(sd->lower);
    cudaFree(sd->diag);
    cudaFree(sd->upper);
    cudaFree(sd->rhs);
    cudaFree(sd->x);
    tridi_destroy(sd->ctx);
    TK(tridi_decomp_destroy(sd->d));
}

/* Median seconds of one step: solves along x, y, z of the whole grid, then a halo exchange of x. */
static double step_time(step_data *sd, MPI_Comm comm, const int64_t n[3], int reps)
{
    tridi_arrays a = {sd->lower, TRIDI_FLOAT32, sd->diag, TRIDI_FLOAT64, sd->upper, TRIDI_FLOAT32,
                      sd->rhs, TRIDI_FLOAT32, sd->x, TRIDI_FLOAT32};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {n[0], n[1], n[2]};
    double *v = malloc(sizeof(double) * (size_t)reps);
    for (int r = -3; r < reps; ++r) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (int ax = 0; ax < 3; ++ax)
            TK(tridi_mpi_solve_device(sd->ctx, sd->d, (tridi_axis)ax, lo, hi, &a, NULL));
        TK(tridi_halo_exchange(sd->halo, NULL));
        double t1 = MPI_Wtime() - t0, tmax;
        MPI_Allreduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
        if (r >= 0)
            v[r] = tmax;
    }
    double m = median(v, reps);
    free(v);
    return m;
}

/* Median seconds of each part of the step: the x, y, z solves and the halo exchange. */
static void part_times(step_data *sd, MPI_Comm comm, const int64_t n[3], int reps, double t[4])
{
    tridi_arrays a = {sd->lower, TRIDI_FLOAT32, sd->diag, TRIDI_FLOAT64, sd->upper, TRIDI_FLOAT32,
                      sd->rhs, TRIDI_FLOAT32, sd->x, TRIDI_FLOAT32};
    int64_t lo[3] = {1, 1, 1}, hi[3] = {n[0], n[1], n[2]};
    double *v = malloc(sizeof(double) * (size_t)reps);
    for (int part = 0; part < 4; ++part) {
        for (int r = -3; r < reps; ++r) {
            MPI_Barrier(comm);
            double t0 = MPI_Wtime();
            if (part < 3)
                TK(tridi_mpi_solve_device(sd->ctx, sd->d, (tridi_axis)part, lo, hi, &a, NULL));
            else
                TK(tridi_halo_exchange(sd->halo, NULL));
            double t1 = MPI_Wtime() - t0, tmax;
            MPI_Allreduce(&t1, &tmax, 1, MPI_DOUBLE, MPI_MAX, comm);
            if (r >= 0)
                v[r] = tmax;
        }
        t[part] = median(v, reps);
    }
    free(v);
}

/* The step's parts on rank 0's GPU alone (a communicator of one rank): t filled on rank 0 only. */
static void solo_part_times(const int64_t n[3], double t[4])
{
    MPI_Comm solo;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &solo);
    if (rank == 0) {
        step_data sd;
        step_setup(&sd, solo, n, 1, TRIDI_TRANSPORT_AUTO);
        part_times(&sd, solo, n, 10, t);
        step_free(&sd);
        MPI_Comm_free(&solo);
    }
}

/* Where the time of a weak-scaling step goes: each part on 1 GPU and on all ranks (IPC). */
static void bench_breakdown(void)
{
    int64_t n1[3] = {512, 512, 128}, n2[3] = {512, 512 * (int64_t)nranks, 128};
    double t1[4] = {0, 0, 0, 0}, t2[4];
    solo_part_times(n1, t1);
    MPI_Barrier(MPI_COMM_WORLD);
    step_data sd;
    step_setup(&sd, MPI_COMM_WORLD, n2, nranks, TRIDI_TRANSPORT_IPC);
    part_times(&sd, MPI_COMM_WORLD, n2, 10, t2);
    step_free(&sd);
    if (rank == 0) {
        printf("\n## Parts of the weak-scaling step, 512x512x128 cells per GPU, ms (1 GPU / %d GPUs, IPC)\n", nranks);
        printf("| part | 1 GPU | %d GPUs | ratio |\n|---|---:|---:|---:|\n", nranks);
        const char *name[4] = {"x solve (uncut)", "y solve (cut)", "z solve (uncut)", "halo exchange"};
        for (int p = 0; p < 4; ++p)
            printf("| %s | %.3f | %.3f | %.2f |\n", name[p], t1[p] * 1e3, t2[p] * 1e3, t1[p] > 0 ? t2[p] / t1[p] : 0.0);
    }
}

/* The step on 1 GPU (rank 0 alone) and on all ranks; n1/n2 are the global grids of each. */
static void scaling_row(const char *what, const int64_t n1[3], const int64_t n2[3], int weak, int reps)
{
    MPI_Comm solo;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? 0 : MPI_UNDEFINED, 0, &solo);
    double t1 = 0;
    if (rank == 0) {
        step_data sd;
        step_setup(&sd, solo, n1, 1, TRIDI_TRANSPORT_AUTO);
        t1 = step_time(&sd, solo, n1, reps);
        step_free(&sd);
        MPI_Comm_free(&solo);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    tridi_transport tr[2] = {TRIDI_TRANSPORT_IPC, TRIDI_TRANSPORT_STAGED};
    for (int t = 0; t < 2; ++t) {
        step_data sd;
        step_setup(&sd, MPI_COMM_WORLD, n2, nranks, tr[t]);
        double t2 = step_time(&sd, MPI_COMM_WORLD, n2, reps);
        step_free(&sd);
        if (rank == 0) {
            double cells1 = (double)(n1[0] * n1[1] * n1[2]), cells2 = (double)(n2[0] * n2[1] * n2[2]);
            double eff = weak ? t1 / t2 : t1 / t2 / nranks;
            printf("| %s | %lldx%lldx%lld | %.3f | %lldx%lldx%lld | %s | %.3f | %.2f | %.0f%% | %.2f / %.2f |\n", what,
                   (long long)n1[0], (long long)n1[1], (long long)n1[2], t1 * 1e3, (long long)n2[0], (long long)n2[1],
                   (long long)n2[2], tridi_transport_name(tr[t]), t2 * 1e3, t1 / t2, 100.0 * eff,
                   cells1 / t1 * 1e-9, cells2 / t2 * 1e-9);
        }
    }
}

static void bench_scaling(int weak)
{
    if (rank == 0) {
        printf("\n## ADI-like step (solves along x, y, z + halo exchange of x; MOHID types), %s scaling, "
               "1 GPU vs %d, j cut; transport = halos and reduced systems\n", weak ? "weak" : "strong", nranks);
        printf("| case | 1-GPU grid | 1 GPU ms | %d-GPU grid | transport | %d GPU ms | speed-up | efficiency | "
               "Gcell-steps/s (1 / %d) |\n", nranks, nranks, nranks);
        printf("|---|---|---:|---|---|---:|---:|---:|---:|\n");
    }
    if (weak) {
        int64_t blocks[2][3] = {{256, 256, 64}, {512, 512, 128}};
        for (int b = 0; b < 2; ++b) {
            int64_t n2[3] = {blocks[b][0], blocks[b][1] * nranks, blocks[b][2]};
            scaling_row("weak", blocks[b], n2, 1, 10);
        }
    } else {
        int64_t grids[2][3] = {{140, 140, 56}, {512, 512, 256}};
        const char *names[2] = {"flow_channel_140-56", "67M cells"};
        for (int g = 0; g < 2; ++g)
            scaling_row(names[g], grids[g], grids[g], 0, g ? 10 : 30);
    }
}

/* The scaling model's measured inputs (docs/mpi.md): the parts of the ADI-like step on one GPU for a
 * flow_channel_1120-56 block (1120x1120x56 cells, MOHID's types), as ms and ns per cell. */
static void bench_model(void)
{
    const int64_t n[3] = {1120, 1120, 56};
    double t[4] = {0, 0, 0, 0};
    solo_part_times(n, t);
    if (rank == 0) {
        const double cells = (double)(n[0] * n[1] * n[2]);
        printf("\n## Scaling model input: the step's parts on one GPU, 1120x1120x56 (flow_channel_1120-56), mixed\n");
        printf("| part | ms | ns per cell |\n|---|---:|---:|\n");
        const char *name[4] = {"x solve", "y solve", "z solve", "halo exchange (no neighbour)"};
        for (int p = 0; p < 4; ++p)
            printf("| %s | %.3f | %.4f |\n", name[p], t[p] * 1e3, t[p] / cells * 1e9);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    setvbuf(stdout, NULL, _IOLBF, 0); /* tables kept line by line if a time limit stops the run */
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1 || nranks != 2) {
        if (rank == 0)
            printf("bench_mpi needs exactly 2 ranks and a GPU (ranks %d, GPUs %d)\n", nranks, ndev);
        MPI_Finalize();
        return 1;
    }
    /* Two GPUs: one each; one GPU: both ranks on it (IPC and staged work there, NCCL refuses). */
    CK(cudaSetDevice(rank % ndev));
    const char *what = argc > 1 ? argv[1] : "all";
    if (rank == 0) {
        struct cudaDeviceProp p;
        cudaGetDeviceProperties(&p, 0);
        int access = 0;
        if (ndev > 1)
            cudaDeviceCanAccessPeer(&access, 0, 1);
        printf("# bench_mpi: %d ranks, %s x%d, peer access %s\n", nranks, p.name, ndev,
               ndev > 1 ? (access ? "yes" : "no") : "- (both ranks on one GPU)");
    }
    if (!strcmp(what, "all") || !strcmp(what, "halo"))
        bench_halo(argc > 2 ? argv[2] : NULL);
    if (!strcmp(what, "all") || !strcmp(what, "weak"))
        bench_scaling(1);
    if (!strcmp(what, "all") || !strcmp(what, "strong"))
        bench_scaling(0);
    if (!strcmp(what, "all") || !strcmp(what, "breakdown"))
        bench_breakdown();
    if (!strcmp(what, "all") || !strcmp(what, "model"))
        bench_model();
    MPI_Finalize();
    return 0;
}
