// The x-line sweep (--xsweep): MOHID's checkpointed x-line kernel (tx_line, decision 063) with its ring
// deepened and its blocks per SM capped (shared memory padded), to find what bounds x lines.
#include "bench_gpu.cuh"

// Cells where a and b differ bit for bit (n bytes of each, in 4-byte words), added to *count.
__global__ void xsweep_differ(const unsigned *a, const unsigned *b, size_t words, unsigned long long *count)
{
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x)
        c += a[i] != b[i];
    if (c)
        atomicAdd(count, c);
}

// Shared memory of tx_line with ns ring slots (tx_smem_bytes in cuda/kernels/xtile.cuh: a slot is 32 lines x
// S cells and 16 bytes of each of the four inputs, S = 64 bytes of lower, 32 for all-float lines; plus a tile
// of 32 x (S + 1) answers).
static size_t tx_x_smem(int combo, int ns)
{
    const size_t sl = combo == 1 ? 8 : 4, sd = combo == 0 ? 4 : 8, S = (sd == 4 ? 32 : 64) / sl;
    return (size_t)ns * 32 * (S * sd + 16 + 3 * (S * sl + 16)) + 32 * (S + 1) * sl;
}

void xsweep_rows(tridi_context ctx, const grid3 &G, const bw &B, int combo)
{
    const device_system s = make_system(ctx, G, combo, true);
    const double bytes = (double)floor_bytes(combo) * s.box;
    const int reps = s.box < 2000000 ? 50 : 5;
    const tk_choice saved = bare_choice;
    int dev = 0, smem_sm = 0;
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    // The planner's own plan first: its answers are the reference each variant must give bit for bit (x is
    // poisoned before each variant).
    const size_t xbytes = s.cells * (combo == 1 ? 8 : 4);
    void *ref;
    unsigned long long *ndiff;
    CUDA_OK(cudaMalloc(&ref, xbytes));
    CUDA_OK(cudaMalloc(&ndiff, 8));
    const char *k0 = "";
    CUDA_OK(cudaMemset(s.p[4], 0xff, xbytes));
    const double t0 = time_kernel(s.g, 0, s.a, false, s.scratch, reps, &k0);
    CUDA_OK(cudaMemcpy(ref, s.p[4], xbytes, cudaMemcpyDeviceToDevice));
    std::printf("| %dx%dx%d | %s | x | planner's (%s) | | | | %.1f | %.1f%% |\n", G.nx, G.ny, G.nz, tname(combo), k0,
                t0 * 1e6, 100.0 * bytes / t0 / B.d2d);
    csv_row(G, tname(combo), 'x', "xsweep_planner_us", t0 * 1e6, t0 * 1e6, "us");
    bare_choice = tk_choice{3, 0}; // the checkpointed kernels forced: tx_line on x lines
    unsigned long long total_diff = 0;
    const int caps[] = {0, 8, 6, 4};
    for (int ns = 2; ns <= 4; ++ns)
        for (int cap : caps) {
            const size_t natural = tx_x_smem(combo, ns);
            // a block also reserves 1 KiB of the SM's shared memory
            const size_t padded = cap ? ((size_t)smem_sm / cap - 1024) / 128 * 128 : natural;
            if (cap && padded <= natural)
                continue;
            const int est = std::min<int>(32, (int)(smem_sm / (std::max(padded, natural) + 1024)));
            const char *kern = "";
            bool ckpt = false;
            CUDA_OK(cudaMemset(s.p[4], 0xff, xbytes));
            const double t = time_kernel(s.g, 0, s.a, false, s.scratch, reps, &kern, [&](tk_plan &p, const tk_args &) {
                ckpt = p.ckpt && p.x_lines;
                p.stages = ns;
                p.l2wide = false;
                p.smem = std::max(padded, natural);
            });
            if (!ckpt)
                break;
            unsigned long long nd = 0;
            CUDA_OK(cudaMemset(ndiff, 0, 8));
            xsweep_differ<<<1024, 256>>>((const unsigned *)ref, (const unsigned *)s.p[4], xbytes / 4, ndiff);
            CUDA_OK(cudaMemcpy(&nd, ndiff, 8, cudaMemcpyDeviceToHost));
            total_diff += nd;
            const double pct = 100.0 * bytes / t / B.d2d;
            std::printf("| %dx%dx%d | %s | x | %d | %zu | %d | %.1f | %.1f%% |%s\n", G.nx, G.ny, G.nz, tname(combo), ns,
                        std::max(padded, natural), est, t * 1e6, pct, nd ? " ANSWERS DIFFER" : "");
            std::fflush(stdout);
            char m[64];
            std::snprintf(m, sizeof m, "xsweep_ns%d_b%d_us", ns, est);
            csv_row(G, tname(combo), 'x', m, t * 1e6, t * 1e6, "us");
        }
    std::printf("xsweep %dx%dx%d %s: %llu words differ from the planner's answers\n", G.nx, G.ny, G.nz, tname(combo),
                total_diff);
    bare_choice = saved;
    cudaFree(ref);
    cudaFree(ndiff);
    free_system(ctx, s);
}
