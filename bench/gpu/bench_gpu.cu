// GPU benchmark of the CUDA backend: its usage and main; one bench_<table>.cu per table, shared setup in
// bench_gpu.cuh / bench_common.cu. Every figure is a ratio to something measured in the same run (the device
// copy bandwidth at floor traffic: 24 B/cell mixed, 40 f64, 20 f32; pinned bandwidths; the bare kernel;
// cuSPARSE; MOHID's THOMAS; the CPU backend). Tables: device-resident solves and host-array solves (default),
// --plans, --fast, --graph, --xsweep, --fsweep, --ncu (each file's header says what it measures). Times are medians
// after warm-up. Usage: tridi_bench_gpu [max_cells_for_sequential] [--resident | --host | --plans | --fast |
// --graph | --xsweep | --fsweep | --ncu] [--grid=NXxNYxNZ]... (default 2e7, resident and host parts, the five grids; in
// the host part a grid of NZ = 1 is a model's 2D call: its x and y lines).
#include "bench_gpu.cuh"

static void usage()
{
    std::fprintf(stderr, "usage: tridi_bench_gpu [max_cells_for_sequential] [--resident | --host] [--grid=NXxNYxNZ]...\n"
                         "  --resident / --host: only the device-resident / host-array tables (default: both)\n"
                         "  --plans: only the device plans' table (ON_ERROR_LINES / _CALL, SYNC / DEFERRED verdicts)\n"
                         "  --fast: only the FAST arithmetic table (FAST / MOHID / cuSPARSE; default grids: issue 27's)\n"
                         "  --csv=FILE: the FAST table's rows in bench/results/README.md's schema (ranges over the\n"
                         "    three passes); --commit=HASH fills its commit column; --passes=N: N passes, not 3\n"
                         "  --grid: only these grids (repeatable; default: the five grids of docs/performance.md);\n"
                         "    in the host-array table a grid of NZ = 1 is a model's 2D call (x and y lines)\n"
                         "  --axis=x|y|z, --type=f32|f64|mixed: only these rows (device-resident, plans, FAST,\n"
                         "    graph and ncu tables; with --grid, --fast runs a single row)\n"
                         "  --graph: only the table of small-grid streams, launched and captured in a CUDA graph\n"
                         "    (default grid 140x140x56; --fast adds it for that grid)\n"
                         "  --xsweep: x lines of MOHID's arithmetic in tx_line, ring stages and blocks per SM swept\n"
                         "    (default grid 1024x1024x128; --csv as --fast)\n"
                         "  --fsweep: FAST kernels' shapes (chunk length, lines a block, clusters, L2 fetches) swept,\n"
                         "    bare kernels (default grids: --fast's big three and 140x140x56; --csv as --fast)\n"
                         "  --ncu: one plan solve per FAST-table row between cudaProfilerStart/Stop, for\n"
                         "    ncu --profile-from-start off (bench/gpu/ncu_rows.sh)\n");
    std::exit(2);
}

int main(int argc, char **argv)
{
    double max_seq_cells = 2e7;
    bool do_resident = true, do_host = true, do_plans = false, do_fast = false, do_graph = false, do_ncu = false,
         do_xsweep = false, do_fsweep = false;
    const char *csv_path = nullptr, *commit = "-";
    std::vector<grid3> grids;
    int only_type = -1;
    for (int i = 1; i < argc; ++i) {
        grid3 G{};
        if (!std::strncmp(argv[i], "--axis=", 7) && argv[i][7] >= 'x' && argv[i][7] <= 'z' && !argv[i][8])
            only_axis = argv[i][7] - 'x';
        else if (!std::strncmp(argv[i], "--type=", 7) && (!std::strcmp(argv[i] + 7, "f32") ||
                                                          !std::strcmp(argv[i] + 7, "f64") || !std::strcmp(argv[i] + 7, "mixed")))
            only_type = argv[i][8] == '3' ? 0 : argv[i][8] == '6' ? 1 : 2;
        else if (!std::strcmp(argv[i], "--resident"))
            do_host = false;
        else if (!std::strcmp(argv[i], "--host"))
            do_resident = false;
        else if (!std::strcmp(argv[i], "--plans"))
            do_plans = true, do_resident = do_host = false;
        else if (!std::strcmp(argv[i], "--fast"))
            do_fast = true, do_resident = do_host = false;
        else if (!std::strcmp(argv[i], "--graph"))
            do_graph = true, do_resident = do_host = false;
        else if (!std::strcmp(argv[i], "--xsweep"))
            do_xsweep = true, do_resident = do_host = false;
        else if (!std::strcmp(argv[i], "--fsweep"))
            do_fsweep = true, do_resident = do_host = false;
        else if (!std::strcmp(argv[i], "--ncu"))
            do_ncu = true, do_resident = do_host = false;
        else if (!std::strncmp(argv[i], "--passes=", 9) && std::atoi(argv[i] + 9) > 0)
            g_passes = std::atoi(argv[i] + 9);
        else if (!std::strncmp(argv[i], "--csv=", 6) && argv[i][6])
            csv_path = argv[i] + 6;
        else if (!std::strncmp(argv[i], "--commit=", 9) && argv[i][9])
            commit = argv[i] + 9;
        else if (std::sscanf(argv[i], "--grid=%dx%dx%d", &G.nx, &G.ny, &G.nz) == 3 && G.nx > 0 && G.ny > 0 && G.nz > 0)
            grids.push_back(G);
        else if (argv[i][0] >= '0' && argv[i][0] <= '9') // 0: no sequential reference at all
            max_seq_cells = std::atof(argv[i]);
        else
            usage();
    }
    if (grids.empty() && do_fast)
        grids = {{1024, 1024, 128}, {512, 512, 512}, {2048, 2048, 32}, {560, 560, 56}, {140, 140, 56}};
    if (grids.empty() && do_xsweep)
        grids = {{1024, 1024, 128}};
    if (grids.empty() && do_fsweep)
        grids = {{1024, 1024, 128}, {512, 512, 512}, {2048, 2048, 32}, {140, 140, 56}};
    if (grids.empty() && do_ncu)
        grids = {{1024, 1024, 128}, {512, 512, 512}, {2048, 2048, 32}};
    if (grids.empty() && do_graph)
        grids = {{140, 140, 56}};
    if (grids.empty())
        grids = {{70, 70, 28}, {140, 140, 28}, {140, 140, 56}, {560, 560, 56}, {1024, 1024, 128}};
    cudaDeviceProp prop;
    CUDA_OK(cudaGetDeviceProperties(&prop, 0));
    char date[64];
    std::time_t tt = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&tt));
    std::printf("tridi GPU benchmark, %s, %s, %d host threads\n", prop.name, date, omp_get_max_threads());
    const bw B = measure_bandwidth();
    std::printf("device copy %.0f GB/s (read+write), pinned H2D %.1f GB/s, D2H %.1f GB/s\n\n", B.d2d * 1e-9,
                B.h2d * 1e-9, B.d2h * 1e-9);

    tridi_config c;
    tridi_config_init(&c);
    c.backend = TRIDI_BACKEND_CUDA;
    tridi_context gpu, gpu_call, cpu;
    TRIDI_OK(tridi_create(&gpu, &c));
    bare_choice = tk_choice{gpu->tuning.cuda_kernel, gpu->tuning.cuda_split_lanes};
    c.on_error = TRIDI_ON_ERROR_CALL;
    TRIDI_OK(tridi_create(&gpu_call, &c));
    tridi_config_init(&c);
    c.backend = TRIDI_BACKEND_CPU;
    c.num_threads = 16;
    TRIDI_OK(tridi_create(&cpu, &c));
    tridi_context autoc = nullptr; // AUTO's choice for host arrays, timed in the host-array table
    c.backend = TRIDI_BACKEND_AUTO;
    c.verbose = 1;
    TRIDI_OK(tridi_create(&autoc, &c));
    c.verbose = 0;
    cusparseHandle_t sp;
    SP_OK(cusparseCreate(&sp));

    if (do_resident) {
        std::printf("Device-resident (tridi_solve_device, calls back to back; kernel = bare solve kernel into a box, "
                    "no guard; kernel: line = one thread per line, line+scr = the same with W/G in global memory, split = "
                    "several threads per line; guard: barrier = one wave, x written after a grid barrier, commit = "
                    "box + commit kernel)\n");
        std::printf("| grid | axis | type | kernel | guard | us/call | us kernel | guard cost | GB/s at floor | %% of copy (call) "
                    "| %% of copy (kernel) | cuSPARSE us, ratio |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for_each_case(grids, only_type, [&](const grid3 &G, int combo) { resident(gpu, sp, G, B, combo); });
    }
    if (do_plans) {
        std::printf("Device plans (tridi_plan_solve on device arrays, calls back to back; LINES = ON_ERROR_LINES, CALL = "
                    "ON_ERROR_CALL; DEFERRED = one tridi_plan_status per batch, SYNC = every call waits for its verdict; "
                    "floor = floor traffic at the device copy bandwidth)\n");
        std::printf("| grid | axis | type | us CALL deferred | us LINES deferred | CALL / LINES | us LINES sync "
                    "| us LINES deferred | SYNC / DEFERRED | us floor | LINES deferred / floor | CALL deferred / floor |\n"
                    "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for_each_case(grids, only_type, [&](const grid3 &G, int combo) { plans(gpu, G, B, combo); });
    }
    if (do_ncu)
        for_each_case(grids, only_type, [&](const grid3 &G, int combo) { ncu_rows(gpu, G, combo); });
    if (do_fast || do_graph || do_xsweep || do_fsweep) {
        if (csv_path && !(g_csv = std::fopen(csv_path, "w"))) {
            std::fprintf(stderr, "tridi_bench_gpu: cannot write %s\n", csv_path);
            return 2;
        }
        if (g_csv) {
            char iso[32];
            std::strftime(iso, sizeof iso, "%Y-%m-%dT%H:%MZ", std::gmtime(&tt));
            const char *dev = std::strstr(prop.name, "H100") ? "H100" : std::strstr(prop.name, "H200") ? "H200" : prop.name;
            g_csv_head = std::string(dev) + "," + iso + "," + commit + ",";
            std::fprintf(g_csv, "device,date,commit,grid,type,axis,metric,value,value_max,unit\n");
            std::fprintf(g_csv, "%s-,-,-,device_copy_bw,%.4g,,GB/s\n", g_csv_head.c_str(), B.d2d * 1e-9);
        }
    }
    if (do_xsweep) {
        std::printf("x lines of MOHID's arithmetic, tx_line forced (bare kernel into x): ring stages and blocks per "
                    "SM (shared memory padded; est = blocks the SM's shared memory allows); %% = floor traffic at "
                    "the device copy bandwidth\n");
        std::printf("| grid | type | axis | stages | smem B | blocks/SM est | us | %% copy |\n"
                    "|---|---|---|---|---|---|---|---|\n");
        for_each_case(grids, only_type, [&](const grid3 &G, int combo) { xsweep_rows(gpu, G, B, combo); });
        if (g_csv && !do_fast && !do_graph)
            std::fclose(g_csv);
    }
    if (do_fsweep) {
        std::printf("FAST kernels' shapes (bare kernel into x, median of its launches): plain = one block a line "
                    "(chunks of L, lines a block), cluster = strided lines split over a cluster of blocks (decision "
                    "057), L2 = 128-byte L2 fetches; %% = floor traffic at the device copy bandwidth; bad = cells "
                    "off the planner's answers by more than 1e-3 (f32) / 1e-9 (f64) relative\n");
        std::printf("| grid | type | axis | kernel | L | lines | threads | cluster | L2 | us | %% copy | bad |\n"
                    "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for_each_case(grids, only_type, [&](const grid3 &G, int combo) { fsweep_rows(gpu, G, B, combo); });
        if (g_csv && !do_fast && !do_graph)
            std::fclose(g_csv);
    }
    if (do_fast) {
        std::printf("FAST arithmetic (device plans, ON_ERROR_LINES, DEFERRED verdicts, calls back to back; FAST / "
                    "MOHID call = us per tridi_plan_solve; kernel = the planner's kernel alone, into x; %% = floor "
                    "traffic at the device copy bandwidth of this run, median of the passes (range of the "
                    "per-call %% over them); cuSPARSE: x gtsv2StridedBatch, y gtsvInterleavedBatch per k slab, z "
                    "gtsvInterleavedBatch, same data and precision, compact box)\n");
        std::printf("| grid | type | axis | FAST kernel | us kernel | us call | %% copy kernel | %% copy call (range) "
                    "| MOHID us call (kernel, us) | MOHID %% copy call | MOHID / FAST | cuSPARSE us | cuSPARSE / FAST |\n"
                    "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for_each_case(grids, only_type, [&](const grid3 &G, int combo) { fast_rows(gpu, sp, G, B, combo); });
    }
    if (do_fast || do_graph) {
        // --fast: the small grids' streams too (a grid of a few million cells takes no longer than its launch)
        std::vector<grid3> small;
        for (const grid3 &G : grids)
            if (do_graph || (size_t)G.nx * G.ny * G.nz <= 2000000)
                small.push_back(G);
        if (!small.empty()) {
            std::printf("\nStreams of solves, launched and captured in a CUDA graph (a device plan on the caller's "
                        "stream, ON_ERROR_LINES, DEFERRED verdicts; launched: calls back to back between two events, "
                        "one tridi_plan_status after them; graph: the same calls captured and replayed; floor: floor "
                        "traffic at the device copy bandwidth; medians of the passes; answers of both paths equal bit "
                        "for bit)\n");
            std::printf("| grid | type | arithmetic | axis | us floor | us launched | launched / floor | us graph "
                        "| graph / floor | graph / launched | kernel, us bare |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
        }
        for_each_case(small, only_type, [&](const grid3 &G, int combo) { graph_rows(gpu, G, B, combo); });
        if (g_csv)
            std::fclose(g_csv);
    }
    if (do_host) {
        std::printf("\nCopy shapes, registered host array <-> device, float box with a one-cell halo (GB/s of box "
                    "bytes): H2D as one run of the same bytes, H2D widened (whole planes, tridi's way), H2D row by "
                    "row (3D copy), D2H as one run, D2H row by row (3D copy, how answers go into x)\n");
        std::printf("| grid | H2D run | H2D widened | H2D rows | D2H run | D2H rows |\n|---|---|---|---|---|---|\n");
        for (const grid3 &G : grids)
            if ((size_t)G.nx * G.ny * G.nz <= 20000000)
                transfer_shapes(G);
        std::printf("\nHost arrays, MOHID mixed precision (tridi_solve on host arrays). staged = arrays not registered "
                    "(packed into pinned staging); registered = all five arrays registered with tridi_host_register "
                    "(DMA straight from/to them). / pinned = call time / time of 20 B/cell at the pinned H2D bandwidth "
                    "+ 4 B/cell at D2H. vs seq / OMP16 / tridi CPU = their time / the registered call's time. "
                    "Assembly overlap: each diagonal uploaded (tridi_upload_async) as soon as a host loop has "
                    "assembled it; hidden = (ms of the call made after assembling all four - ms in tridi calls) / "
                    "(that - ms of the solve once everything is uploaded)\n");
        std::printf("| grid | axis | staged ms | staged / pinned | registered ms | registered / pinned | vs seq "
                    "| vs OMP16 | vs tridi CPU | ms assembly | hidden staged | hidden registered |\n"
                    "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (const grid3 &G : grids)
            host_arrays(gpu, gpu_call, cpu, autoc, G, B, max_seq_cells);
    }
    cusparseDestroy(sp);
    tridi_destroy(gpu);
    tridi_destroy(gpu_call);
    tridi_destroy(cpu);
    tridi_destroy(autoc);
    return 0;
}
