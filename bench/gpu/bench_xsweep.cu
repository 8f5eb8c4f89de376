// The x-line sweep (--xsweep): the checkpointed MOHID kernel (tc_line, decision 046) on x lines with its ring
// deepened, its blocks per SM capped (shared memory padded) and its L2 fetch hint widened, to find what
// bounds x lines.
#include "bench_gpu.cuh"

// Shared memory of tc_line on x lines with ns ring stages (tc_smem_bytes in cuda/kernels/ckpt.cuh: a stage
// is 32 lines x 9 cells of the four inputs, plus one stage's answers).
static size_t tc_x_smem(int combo, int ns)
{
    const size_t sl = combo == 1 ? 8 : 4, sd = combo == 0 ? 4 : 8, tile = 32 * 9;
    return (size_t)ns * tile * (sd + 3 * sl) + tile * sl;
}

void xsweep_rows(tridi_context ctx, const grid3 &G, const bw &B, int combo)
{
    const device_system s = make_system(ctx, G, combo, true);
    const double bytes = (double)floor_bytes(combo) * s.box;
    const int reps = s.box < 2000000 ? 50 : 5;
    const tk_choice saved = bare_choice;
    bare_choice = tk_choice{3, 0}; // tc_line
    int dev = 0, smem_sm = 0;
    CUDA_OK(cudaGetDevice(&dev));
    CUDA_OK(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
    const int caps[] = {0, 8, 6, 4, 3, 2};
    const int stages[] = {2, 3, 4, 5, 6, 8, 9, 12};
    for (int wide = 0; wide < 2; ++wide)
        for (int ns : stages)
            for (int cap : caps) {
                const size_t natural = tc_x_smem(combo, ns);
                // a block also reserves 1 KiB of the SM's shared memory
                const size_t padded = cap ? ((size_t)smem_sm / cap - 1024) / 128 * 128 : natural;
                if (cap && (padded < natural || ns > 4))
                    continue;
                const int est = std::min<int>(12, (int)(smem_sm / (std::max(padded, natural) + 1024)));
                const char *kern = "";
                bool ckpt = false;
                const double t = time_kernel(s.g, 0, s.a, false, s.scratch, reps, &kern, [&](tk_plan &p) {
                    ckpt = p.ckpt && p.contig;
                    p.ns = ns | wide << 4; // tc_line's bit 4: the 256-byte L2 hint
                    p.smem = std::max(padded, natural);
                });
                if (!ckpt)
                    break;
                const double pct = 100.0 * bytes / t / B.d2d;
                std::printf("| %dx%dx%d | %s | x | %d | %d | %zu | %d | %.1f | %.1f%% |\n", G.nx, G.ny, G.nz, tname(combo),
                            ns, wide ? 256 : 128, std::max(padded, natural), est, t * 1e6, pct);
                std::fflush(stdout);
                char m[64];
                std::snprintf(m, sizeof m, "xsweep_ns%d_b%d_l2h%d_us", ns, est, wide ? 256 : 128);
                csv_row(G, tname(combo), 'x', m, t * 1e6, t * 1e6, "us");
            }
    bare_choice = saved;
    free_system(ctx, s);
}
