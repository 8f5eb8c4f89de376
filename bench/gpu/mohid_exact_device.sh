#!/bin/bash
# On a GPU machine: MOHID's exact arithmetic (decision 041) checked and measured in one call. Builds this
# tree (and, with BEFORE=dir, another checkout's benchmark, for a before/after pair built and run in the
# same call), then runs the steps named in STEPS (default: exact memcheck bench):
#   exact     tests/cuda/test_mohid_exact with a sweep of CELLS cells per type and axis (default 1e8)
#   memcheck  compute-sanitizer memcheck over test_mohid_exact (its default, short sweep)
#   ctest     ctest -L cuda (every GPU test; builds them all)
#   bench     tridi_bench_gpu 0 --fast --grid=1024x1024x128 --passes=2 of this build (and BEFORE's), CSVs
# Every step has a time limit; its log goes to a work folder, packed at the end into $OUT/logs.tgz with the
# CSVs beside it (default OUT: out-mohid-exact); a summary is printed last. COMMIT names this tree's commit
# in the CSV (default: git's HEAD).
set -u
cd "$(dirname "$0")/../.."
DEST=${OUT:-out-mohid-exact}
OUT=$(mktemp -d)
STEPS=${STEPS:-exact memcheck bench}
CELLS=${CELLS:-100000000}
BEFORE=${BEFORE:-}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo -)}
export CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
mkdir -p "$OUT"
has() { [[ " $STEPS " == *" $1 "* ]]; }
summary=()
step() { # step NAME SECONDS COMMAND...
  local name=$1 secs=$2 t0=$SECONDS rc
  shift 2
  timeout "$secs" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  summary+=("$(printf '%-16s %-9s %5ss' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAIL($rc)")" $((SECONDS - t0)))")
  return $rc
}
cfg() { # cfg SRC BUILD
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release -DTRIDI_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DTRIDI_ENABLE_FORTRAN=OFF -DTRIDI_ENABLE_MPI=OFF -DTRIDI_BUILD_TESTCASES=OFF -DTRIDI_FAULT_INJECTION=ON
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$CUDACXX" --version | tail -2; date -u
  echo "commit $COMMIT"; } >"$OUT/machine.txt" 2>&1

targets=(test_mohid_exact tridi_bench_gpu)
has ctest && targets=(all)
B=build-exact
step configure 300 cfg . "$B" || { tail -30 "$OUT/configure.log"; exit 1; }
if [ -n "$BEFORE" ] && has bench; then
  step configure-before 300 cfg "$BEFORE" "$BEFORE/build-before" &&
    { step build-before 580 cmake --build "$BEFORE/build-before" -j 6 --target tridi_bench_gpu & }
fi
step build 580 cmake --build "$B" -j 10 --target "${targets[@]}" || { tail -40 "$OUT/build.log"; exit 1; }
wait

has exact && step exact 400 "$B/tests/cuda/test_mohid_exact" "$CELLS"
has memcheck && step memcheck 400 "$SAN" --tool memcheck --error-exitcode 9 --report-api-errors no \
  "$B/tests/cuda/test_mohid_exact"
has ctest && step ctest 580 bash -c "cd '$B' && ctest -L cuda --output-on-failure -j 2"
if has bench; then
  step bench 300 "$B/bench/gpu/tridi_bench_gpu" 0 --fast --grid=1024x1024x128 --passes=2 \
    "--csv=$OUT/after.csv" "--commit=$COMMIT"
  [ -n "$BEFORE" ] && [ -x "$BEFORE/build-before/bench/gpu/tridi_bench_gpu" ] &&
    step bench-before 300 "$BEFORE/build-before/bench/gpu/tridi_bench_gpu" 0 --fast --grid=1024x1024x128 \
      --passes=2 "--csv=$OUT/before.csv" "--commit=$(git -C "$BEFORE" rev-parse --short HEAD 2>/dev/null || echo before)"
fi
printf '%s\n' "${summary[@]}"
grep -h -E "ERROR SUMMARY|test_mohid_exact:|near ties:|sweep |FAILED|tests passed|tests failed" "$OUT"/*.log | head -40
grep -h -E "^\| 1024x1024x128" "$OUT"/bench*.log
mkdir -p "$DEST"
cp "$OUT"/*.csv "$DEST"/ 2>/dev/null
tar -C "$OUT" -czf "$DEST/logs.tgz" .
