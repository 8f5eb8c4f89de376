#!/bin/bash
# On a GPU machine: MOHID's exact arithmetic (decision 041) checked and measured in one call. Builds this
# tree (and, with BEFORE=dir, another checkout's benchmark, for a before/after pair built and run in the
# same call), then runs the steps named in STEPS (default: exact memcheck bench):
#   exact     tests/cuda/test_mohid_exact with a sweep of CELLS cells per type and axis (default 1e8)
#   memcheck  compute-sanitizer memcheck over test_mohid_exact (its default, short sweep)
#   ctest     ctest -L cuda (every GPU test; builds them all)
#   bench     tridi_bench_gpu 0 --fast --passes=2 $GRIDS (default --grid=1024x1024x128) of this build (and
#             BEFORE's), CSVs
#   sass      registers and spills of the tk_line variants (cuobjdump -res-usage)
# Every step has a time limit; its log goes to a work folder, packed at the end into $OUT/logs.tgz with the
# CSVs beside it (default OUT: out-mohid-exact); a summary is printed last. COMMIT names this tree's commit
# in the CSV (default: git's HEAD).
set -u
cd "$(dirname "$0")/../.."
DEST=${OUT:-out-mohid-exact}
OUT=${WORK:-$(mktemp -d)} # the work folder of the logs (WORK: a caller's, to pack it itself after a time limit)
mkdir -p "$OUT"
STEPS=${STEPS:-exact memcheck bench}
CELLS=${CELLS:-100000000}
GRIDS=${GRIDS:---grid=1024x1024x128}
BEFORE=${BEFORE:-}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo -)}
export CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
mkdir -p "$OUT"
STEP_LOGS=$OUT
# shellcheck source=device_steps.sh
. bench/gpu/device_steps.sh
machine_txt "$OUT/machine.txt" "$("$CUDACXX" --version | tail -2)" "commit $COMMIT"
CFG=(-DCMAKE_BUILD_TYPE=Release -DTRIDI_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DTRIDI_ENABLE_FORTRAN=OFF
  -DTRIDI_ENABLE_MPI=OFF -DTRIDI_BUILD_TESTCASES=OFF -DTRIDI_FAULT_INJECTION=ON)
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$CUDACXX" --version | tail -2; date -u
  echo "commit $COMMIT"; } >"$OUT/machine.txt" 2>&1

targets=(test_mohid_exact tridi_bench_gpu)
has ctest && targets=(all)
B=build-exact
step configure 300 cmake -S . -B "$B" "${CFG[@]}" || { tail -30 "$OUT/configure.log"; exit 1; }
if [ -n "$BEFORE" ] && has bench; then
  step configure-before 300 cmake -S "$BEFORE" -B "$BEFORE/build-before" "${CFG[@]}" &&
    { step build-before 580 cmake --build "$BEFORE/build-before" -j 6 --target tridi_bench_gpu & }
fi
step build 580 cmake --build "$B" -j 10 --target "${targets[@]}" || { tail -40 "$OUT/build.log"; exit 1; }
wait

has exact && step exact 400 "$B/tests/cuda/test_mohid_exact" "$CELLS"
has memcheck && step memcheck 400 "$SAN" --tool memcheck --error-exitcode 9 --report-api-errors no \
  "$B/tests/cuda/test_mohid_exact"
has ctest && step ctest "${CTEST_SECONDS:-400}" bash -c "cd '$B' && ctest -L cuda --output-on-failure -j 3"
if has bench; then
  # shellcheck disable=SC2086 # GRIDS: several arguments
  step bench 200 "$B/bench/gpu/tridi_bench_gpu" 0 --fast --passes=2 $GRIDS "--csv=$OUT/after.csv" "--commit=$COMMIT"
  # shellcheck disable=SC2086
  [ -n "$BEFORE" ] && [ -x "$BEFORE/build-before/bench/gpu/tridi_bench_gpu" ] &&
    step bench-before 200 "$BEFORE/build-before/bench/gpu/tridi_bench_gpu" 0 --fast --passes=2 $GRIDS \
      "--csv=$OUT/before.csv" "--commit=$(git -C "$BEFORE" rev-parse --short HEAD 2>/dev/null || echo before)"
fi
has sass && step sass 60 bash -c "cuobjdump -res-usage '$B/cuda/CMakeFiles/tridi_cuda.dir/planner.cu.o' |
  grep -A1 -E 'Function .*tk_line' | grep -oE '(Function [^:]*|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+)' | paste - - - - |
  c++filt | head -200"
printf '%s\n' "${summary[@]}"
grep -h -E "ERROR SUMMARY|test_mohid_exact:|near ties:|sweep |FAILED|tests passed|tests failed" "$OUT"/*.log | head -40
grep -H -E "^\| [0-9]+x[0-9]+x[0-9]+ \| (mixed|f64)" "$OUT"/bench*.log | sed "s|$OUT/||"
mkdir -p "$DEST"
cp "$OUT"/*.csv "$DEST"/ 2>/dev/null
tar -C "$OUT" -czf "$DEST/logs.tgz" .
