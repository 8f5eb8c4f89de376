// The FAST shape sweep (--fsweep): the FAST kernels launched bare with other chunk lengths and lines per
// block, and strided lines split over clusters with and without 128-byte L2 fetches (decision 057), against
// the planner's own plan on the same data, to find what bounds each axis.
#include "bench_gpu.cuh"

#include <string>

// Cells where x is off ref by more than tol relative (or is NaN where ref is not, or the reverse), into *bad.
template <class T>
__global__ void fsweep_off(const T *x, const T *ref, size_t n, double tol, unsigned long long *bad)
{
    unsigned long long c = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const double a = (double)x[i], b = (double)ref[i];
        if (isnan(a) != isnan(b) || (!isnan(b) && fabs(a - b) > tol * (1.0 + fabs(b))))
            ++c;
    }
    if (c)
        atomicAdd(bad, c);
}

void fsweep_rows(tridi_context ctx, const grid3 &G, const bw &B, int combo)
{
    if (combo == 2)
        return;
    const device_system s = make_system(ctx, G, combo, true);
    const double bytes = (double)floor_bytes(combo) * s.box;
    const int reps = s.box < 2000000 ? 50 : 5;
    const size_t es = combo == 1 ? 8 : 4, xbytes = s.cells * es;
    void *ref;
    unsigned long long *nbad;
    CUDA_OK(cudaMalloc(&ref, xbytes));
    CUDA_OK(cudaMalloc(&nbad, 8));
    kernel_types kt{s.tl, s.td, s.tl};
    kt.fast = true;
    kt.arith = TK_AR_RCP;
    for (int axis = 0; axis < 3; ++axis) {
        if (only_axis >= 0 && axis != only_axis)
            continue;
        const char *k0 = "";
        CUDA_OK(cudaMemset(s.p[4], 0xff, xbytes));
        const double t0 = time_kernel(s.g, axis, s.a, true, s.scratch, reps, &k0);
        CUDA_OK(cudaMemcpy(ref, s.p[4], xbytes, cudaMemcpyDeviceToDevice));
        auto row = [&](const char *kern, int L, int lines, int threads, int cl, int wide, double t, unsigned long long bad) {
            std::printf("| %dx%dx%d | %s | %c | %s | %d | %d | %d | %d | %d | %.1f | %.1f%% | %llu |\n", G.nx, G.ny, G.nz,
                        tname(combo), "xyz"[axis], kern, L, lines, threads, cl, wide, t * 1e6, 100.0 * bytes / t / B.d2d,
                        bad);
            std::fflush(stdout);
            char m[96];
            std::snprintf(m, sizeof m, "fsweep_%s_L%d_l%d_t%d_c%d_w%d_us", kern, L, lines, threads, cl, wide);
            csv_row(G, tname(combo), "xyz"[axis], m, t * 1e6, t * 1e6, "us");
        };
        row(k0, 0, 0, 0, 0, 0, t0, 0);
        // one variant: the plan fast_variant_plan makes, timed if it fits, its answers against the planner's;
        // lines of 32 chunks or more twice: joined by a warp a line, and over the block (kernel name +wj, +bj;
        // clusters join by a warp a line only, decision 107)
        auto variant1 = [&](bool cluster, int L, int lines, int threads, bool wide, int wj) {
            tk_plan vp{};
            CUDA_OK(cudaMemset(s.p[4], 0xff, xbytes));
            const char *kern = "";
            const double t = time_kernel(s.g, axis, s.a, true, s.scratch, reps, &kern, [&](tk_plan &p, const tk_args &a) {
                TRIDI_OK(fast_variant_plan(kt, a, axis == 0, L, lines, threads, cluster, wide, wj, &vp));
                p = vp;
                if (!vp.fast)
                    p.blocks = 0;
            });
            if (t <= 0.0)
                return false;
            unsigned long long bad = 0;
            CUDA_OK(cudaMemset(nbad, 0, 8));
            if (es == 8)
                fsweep_off<<<1024, 256>>>((const double *)s.p[4], (const double *)ref, s.cells, 1e-9, nbad);
            else
                fsweep_off<<<1024, 256>>>((const float *)s.p[4], (const float *)ref, s.cells, 1e-3, nbad);
            CUDA_OK(cudaMemcpy(&bad, nbad, 8, cudaMemcpyDeviceToHost));
            std::string name = kern;
            if (vp.fgeom.P >= 32)
                name += wj ? "+wj" : "+bj";
            row(name.c_str(), L, lines, (int)vp.threads, vp.fast_cluster, wide, t, bad);
            return vp.fgeom.P >= 32;
        };
        auto variant = [&](bool cluster, int L, int lines, int threads, bool wide) {
            if (variant1(cluster, L, lines, threads, wide, 1))
                variant1(cluster, L, lines, threads, wide, 0);
        };
        const int Ls[2] = {8, 16}, nL = combo == 0 ? 2 : 1;
        // one-wave grids: every count of lines a block up to 16, so that a shape filling the SMs once shows
        for (int li = 0; li < nL; ++li)
            for (int lines = 1; lines <= 128; lines = s.box < 2000000 && lines < 16 ? lines + 1 : lines * 2)
                variant(false, Ls[li], lines, 0, false);
        if (axis != 0) {
            const int CL[2][2] = {{8, 16}, {4, 8}};
            for (int li = 0; li < 2; ++li)
                for (int run = 32; run <= 128; run *= 2)
                    for (int threads = 128; threads <= 512; threads *= 2)
                        variant(true, CL[combo][li], run / (int)es, threads, true);
            variant(true, CL[combo][1], 128 / (int)es, 256, false);
        }
    }
    cudaFree(ref);
    cudaFree(nbad);
    free_system(ctx, s);
}
