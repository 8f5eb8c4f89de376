#!/bin/bash
# On a GPU machine: MOHID's x lines (decision 047) checked and measured in one call, from binaries built
# elsewhere (BIN: a folder holding tridi_bench_gpu and test_mohid_exact; BEFORE_BIN: main's, for the same-run
# before). Runs STEPS (default: all below), each under a time limit; CSVs and logs.tgz into $OUT (default out-x):
#   exact     test_mohid_exact, CELLS cells per type and axis (default 1e8), the planner's rule
#   memcheck  compute-sanitizer memcheck over test_mohid_exact's short sweep, ckpt forced and the rule
#   xsweep    tridi_bench_gpu --xsweep on XGRIDS: tc_line's x lines, ring depth, blocks per SM, L2 hint
#   bench     tridi_bench_gpu 0 --fast --passes=2 on GRIDS, this BIN and BEFORE_BIN
#   ncu       bench/gpu/ncu_rows.sh on the MOHID mixed rows of 1024x1024x128
set -u
cd "$(dirname "$0")/../.." || exit
DEST=${OUT:-out-x}
W=$(mktemp -d) # the work folder: logs, CSVs, ncu's files
mkdir -p "$DEST"
STEPS=${STEPS:-exact memcheck xsweep bench ncu}
CELLS=${CELLS:-100000000}
GRIDS=${GRIDS:---grid=1024x1024x128 --grid=140x140x56}
XGRIDS=${XGRIDS:---grid=1024x1024x128 --grid=512x512x512}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo -)}
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
STEP_LOGS=$W
# shellcheck source=device_steps.sh
. bench/gpu/device_steps.sh
machine_txt "$W/machine.txt" "commit $COMMIT"
B=${BIN:?BIN: the folder of the binaries}
has exact && step exact 240 "$B/test_mohid_exact" "$CELLS"
if has memcheck; then
  TRIDI_CUDA_KERNEL=ckpt step memcheck 200 "$SAN" --tool memcheck --error-exitcode 9 --report-api-errors no \
    "$B/test_mohid_exact"
  step memcheck 200 "$SAN" --tool memcheck --error-exitcode 9 --report-api-errors no "$B/test_mohid_exact"
fi
# shellcheck disable=SC2086 # XGRIDS, GRIDS: several arguments
has xsweep && step xsweep 200 "$B/tridi_bench_gpu" 0 --xsweep $XGRIDS "--csv=$W/xsweep.csv" "--commit=$COMMIT"
if has bench; then
  # shellcheck disable=SC2086
  step bench 300 "$B/tridi_bench_gpu" 0 --fast --passes=2 $GRIDS "--csv=$W/after.csv" "--commit=$COMMIT"
  # shellcheck disable=SC2086
  [ -n "${BEFORE_BIN:-}" ] && step bench-before 300 "$BEFORE_BIN/tridi_bench_gpu" 0 --fast --passes=2 $GRIDS \
    "--csv=$W/before.csv" "--commit=${BEFORE_COMMIT:-before}"
fi
has ncu && step ncu 200 bash bench/gpu/ncu_rows.sh "$B/tridi_bench_gpu" "$W/ncu" --grid=1024x1024x128 --type=mixed
printf '%s\n' "${summary[@]}"
grep -h -E "ERROR SUMMARY|test_mohid_exact:|near ties:|sweep |FAILED" "$W"/*.log | head -20
grep -H -E "^\| [0-9]+x[0-9]+x[0-9]+ \| (mixed|f64|f32) \| [xyz] \| " "$W"/bench*.log | sed "s|$W/||"
cp "$W"/*.csv "$W"/ncu/ncu-rows.csv "$DEST"/ 2>/dev/null
tar -C "$W" -czf "$DEST/logs.tgz" .
