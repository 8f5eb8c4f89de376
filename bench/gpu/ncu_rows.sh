#!/bin/bash
# What bounds each big-grid row of the FAST table (issue 27): one plan solve per row profiled with ncu, one
# CSV line per row. The bench's --ncu mode runs, for every row of its selection, the table's plan (ON_ERROR_LINES,
# DEFERRED; FAST for f32 and f64, MOHID for the mixed type), three warm-up calls, then one call inside
# cudaProfilerStart/Stop: `ncu --profile-from-start off` profiles exactly the row's solve kernel, a few
# metrics (not a full set: a minute for the 27 rows), clocks left as they run (--clock-control none).
#
# Usage: bench/gpu/ncu_rows.sh BENCH OUTDIR [bench options: --grid=... --type=... --axis=...]
#   default rows: grids 1024x1024x128, 512x512x512, 2048x2048x32; f32 and f64 FAST, mixed MOHID; x, y, z.
# Writes OUTDIR/ncu-rows.csv (the table below), OUTDIR/ncu-raw.csv (every metric, base units),
# OUTDIR/ncu-bench.log (the bench's row order) and OUTDIR/ncu.log.
# Columns: grid,type,axis,arith,kernel (the planner's family), duration_us, dram_pct_peak (DRAM throughput
# over its peak), dram_gbs, dram_bytes_per_cell (read + written, over the box's cells), floor_bytes_per_cell,
# l2_hit_pct, sm_pct_peak, achieved_occupancy_pct, theoretical_occupancy_pct, registers, block_size, grid_size,
# occupancy_limiter (the launch__occupancy_limit_* of fewest blocks per SM; ties joined by +),
# blocks_per_sm, issue_active_pct, stall_* (warp issue stalls of each reason, % of active warp cycles).
set -u
BENCH=${1:?usage: ncu_rows.sh BENCH OUTDIR [bench options]}
OUTD=${2:?usage: ncu_rows.sh BENCH OUTDIR [bench options]}
shift 2
mkdir -p "$OUTD"
NCU=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
METRICS=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,\
dram__bytes_write.sum,lts__t_sector_hit_rate.pct,sm__throughput.avg.pct_of_peak_sustained_elapsed,\
sm__warps_active.avg.pct_of_peak_sustained_active,sm__maximum_warps_per_active_cycle_pct,\
launch__registers_per_thread,launch__block_size,launch__grid_size,launch__occupancy_limit_registers,\
launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,\
smsp__issue_active.avg.pct_of_peak_sustained_active,\
smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct,\
smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct,smsp__warp_issue_stalled_wait_per_warp_active.pct,\
smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct,\
smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct

profile() { # profile WHAT...: ncu over the bench's --ncu rows into $OUTD/ncu.ncu-rep
  rm -f "$OUTD/ncu.ncu-rep"
  "$NCU" --clock-control none --profile-from-start off "$@" -o "$OUTD/ncu" -f \
    "$BENCH" 0 --ncu "${BENCH_ARGS[@]}" >"$OUTD/ncu-bench.log" 2>"$OUTD/ncu.log"
}
BENCH_ARGS=("$@")
profile --metrics "$METRICS"
rc=$?
if [ $rc -ne 0 ] || [ ! -s "$OUTD/ncu.ncu-rep" ]; then
  # A metric this ncu does not know fails the whole run: the sections hold the same figures under their names.
  echo "ncu_rows.sh: ncu with explicit metrics failed (rc $rc), again with sections" | tee -a "$OUTD/ncu-fallback.log"
  cat "$OUTD/ncu.log" >>"$OUTD/ncu-fallback.log"
  profile --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    --section WarpStateStats --metrics dram__bytes_read.sum,dram__bytes_write.sum
  rc=$?
fi
[ -s "$OUTD/ncu.ncu-rep" ] || { echo "ncu_rows.sh: no report (rc $rc)"; tail -20 "$OUTD/ncu.log"; exit 1; }
"$NCU" --import "$OUTD/ncu.ncu-rep" --csv --page raw --print-units base >"$OUTD/ncu-raw.csv" 2>>"$OUTD/ncu.log" ||
  { echo "ncu_rows.sh: ncu --import failed"; exit 1; }
command -v python3 >/dev/null || { echo "ncu_rows.sh: no python3: the rows stay in ncu-raw.csv"; exit 1; }
python3 - "$OUTD/ncu-bench.log" "$OUTD/ncu-raw.csv" "$OUTD/ncu-rows.csv" <<'PY'
import csv, sys
rows = [l.strip().split(",")[1:] for l in open(sys.argv[1]) if l.startswith("ncu_row,")]
with open(sys.argv[2]) as f:
    lines = [l for l in f if not l.startswith("==")]
table = list(csv.reader(lines))
head, kernels = table[0], table[2:]  # the second line holds the units
if len(kernels) != len(rows):
    sys.exit("ncu_rows.sh: %d profiled kernels for %d rows" % (len(kernels), len(rows)))
floor = {"f32": 20, "f64": 40, "mixed": 24}
def num(k, name):
    try:
        return float(k[head.index(name)].replace(",", ""))
    except (ValueError, IndexError):
        return float("nan")
stalls = ["long_scoreboard", "barrier", "lg_throttle", "wait", "math_pipe_throttle", "short_scoreboard", "mio_throttle"]
fo = open(sys.argv[3], "w")
out = csv.writer(fo, lineterminator="\n")
out.writerow(["grid", "type", "axis", "arith", "kernel", "kernel_name", "duration_us", "dram_pct_peak", "dram_gbs",
              "dram_bytes_per_cell", "floor_bytes_per_cell", "l2_hit_pct", "sm_pct_peak", "achieved_occupancy_pct",
              "theoretical_occupancy_pct", "registers", "block_size", "grid_size", "occupancy_limiter",
              "blocks_per_sm", "issue_active_pct"] + ["stall_" + s for s in stalls])
for (grid, typ, axis, arith, kern), k in zip(rows, kernels):
    nx, ny, nz = (int(v) for v in grid.split("x"))
    cells = nx * ny * nz
    t = num(k, "gpu__time_duration.sum")  # ns (base units)
    by = num(k, "dram__bytes_read.sum") + num(k, "dram__bytes_write.sum")
    lim = {n: num(k, "launch__occupancy_limit_" + n) for n in ("registers", "shared_mem", "warps", "blocks")}
    low = min(lim.values())
    name = k[head.index("Kernel Name")] if "Kernel Name" in head else ""
    out.writerow([grid, typ, axis, arith, kern, name.split("(")[0][:60], "%.1f" % (t * 1e-3),
                  "%.1f" % num(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed"), "%.0f" % (by / t),
                  "%.1f" % (by / cells), floor[typ], "%.1f" % num(k, "lts__t_sector_hit_rate.pct"),
                  "%.1f" % num(k, "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
                  "%.1f" % num(k, "sm__warps_active.avg.pct_of_peak_sustained_active"),
                  "%.1f" % num(k, "sm__maximum_warps_per_active_cycle_pct"),
                  "%.0f" % num(k, "launch__registers_per_thread"), "%.0f" % num(k, "launch__block_size"),
                  "%.0f" % num(k, "launch__grid_size"), "+".join(n for n, v in lim.items() if v == low), "%.0f" % low,
                  "%.1f" % num(k, "smsp__issue_active.avg.pct_of_peak_sustained_active")] +
                 ["%.1f" % num(k, "smsp__warp_issue_stalled_%s_per_warp_active.pct" % s) for s in stalls])
fo.close()
print(open(sys.argv[3]).read(), end="")
PY
