#!/bin/bash
# On a GPU machine: MOHID's x lines (decision 047) checked and measured in one call. Builds this tree (BIN: a
# folder of binaries built elsewhere instead; BEFORE_BIN: another tree's, for a same-run before), then runs
# STEPS (default: all below), each under a time limit; CSVs and logs.tgz into $OUT (default out-x):
#   exact     test_mohid_exact, CELLS cells per type and axis (default 1e8), the planner's rule
#   memcheck  compute-sanitizer memcheck over test_mohid_exact's short sweep, ckpt forced and the rule
#   xsweep    tridi_bench_gpu --xsweep on XGRIDS: tc_line's x lines, ring depth, blocks per SM, L2 hint
#   bench     tridi_bench_gpu 0 --fast --passes=2 on GRIDS, this BIN and BEFORE_BIN
#   rule      the --fast rows of RGRIDS' x lines, the planner's rule and TRIDI_CUDA_KERNEL=ckpt (decision 046's
#             rule before 1d756d5 took tc_line for x lines whose W/G fit on chip)
#   ncu       bench/gpu/ncu_rows.sh on the MOHID mixed rows of 1024x1024x128
#   ctest     test_cuda, and test_mohid_exact's short sweep with each MOHID kernel forced (line, ckpt)
set -u
cd "$(dirname "$0")/../.." || exit
DEST=${OUT:-out-x}
W=$(mktemp -d) # the work folder: logs, CSVs, ncu's files
mkdir -p "$DEST"
STEPS=${STEPS:-exact xsweep bench rule memcheck ctest ncu}
CELLS=${CELLS:-100000000}
GRIDS=${GRIDS:---grid=1024x1024x128 --grid=140x140x56}
XGRIDS=${XGRIDS:---grid=1024x1024x128 --grid=512x512x512 --grid=2048x2048x32}
RGRIDS=${RGRIDS:---grid=256x256x256 --grid=384x384x96}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo -)}
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
STEP_LOGS=$W
# shellcheck source=device_steps.sh
. bench/gpu/device_steps.sh
machine_txt "$W/machine.txt" "commit $COMMIT"
B=${BIN:-}
if [ -z "$B" ]; then
  export CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  step configure 120 cmake -S . -B build-x -DCMAKE_BUILD_TYPE=Release -DTRIDI_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DTRIDI_ENABLE_FORTRAN=OFF -DTRIDI_ENABLE_MPI=OFF -DTRIDI_BUILD_TESTCASES=OFF &&
    step build 400 cmake --build build-x -j 16 --target tridi_bench_gpu test_mohid_exact test_cuda ||
    { printf '%s\n' "${summary[@]}"; tail -30 "$W"/build.log "$W"/configure.log; exit 1; }
  mkdir -p build-x/bin
  ln -sf ../bench/gpu/tridi_bench_gpu ../tests/cuda/test_mohid_exact build-x/bin/
  B=build-x/bin
fi
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
if has rule; then
  # shellcheck disable=SC2086
  step rule 200 "$B/tridi_bench_gpu" 0 --fast --passes=2 --axis=x $RGRIDS "--csv=$W/rule.csv" "--commit=$COMMIT"
  # shellcheck disable=SC2086
  TRIDI_CUDA_KERNEL=ckpt step rule-ckpt 200 "$B/tridi_bench_gpu" 0 --fast --passes=2 --axis=x $RGRIDS \
    "--csv=$W/rule-ckpt.csv" "--commit=$COMMIT"
fi
has ncu && step ncu 200 bash bench/gpu/ncu_rows.sh "$B/tridi_bench_gpu" "$W/ncu" --grid=1024x1024x128 --type=mixed
T='^cuda_test_(cuda|mohid_exact_line|mohid_exact_ckpt)$' # test_cuda, the short sweep with each kernel forced
has ctest && [ -d build-x ] && step ctest 200 bash -c "cd build-x && ctest -R '$T' -j 4"
printf '%s\n' "${summary[@]}"
grep -h -E "ERROR SUMMARY|test_mohid_exact:|near ties:|sweep |FAILED" "$W"/*.log | head -20
grep -h -E "words differ|tests passed|tests failed" "$W"/*.log
grep -H -E "^\| [0-9]+x[0-9]+x[0-9]+ \| (mixed|f64|f32) \| [xyz] \| " "$W"/bench*.log "$W"/rule*.log | sed "s|$W/||"
cat "$W"/rule.csv "$W"/rule-ckpt.csv >"$DEST/rule.csv" 2>/dev/null
cp "$W"/after.csv "$W"/before.csv "$W"/xsweep.csv "$W"/ncu/ncu-rows.csv "$DEST"/ 2>/dev/null
tar -C "$W" -czf "$DEST/logs.tgz" .
