#!/bin/bash
# On a GPU machine: the checkpointed MOHID kernel (decision 046) checked and measured in one call. Builds this
# tree (BUILD=dir: use that build instead), then runs STEPS (default: all below), each under a time limit:
#   exact     test_mohid_exact, every MOHID kernel forced (line, ckpt) and the planner's rule, CELLS cells
#   cuda      test_cuda with TRIDI_CUDA_KERNEL=ckpt (failing lines, answer overflow, LINES/CALL, host arrays)
#   memcheck  compute-sanitizer memcheck over test_mohid_exact with ckpt forced (its short sweep)
#   ctest     ctest -L cuda (every GPU test, each MOHID kernel forced and the planner's rule)
#   bench     tridi_bench_gpu 0 --fast --passes=2 on GRIDS, TYPES (mixed f64) with KERNELS (ckpt line; rule:
#             the planner's), one CSV each (line = the kernel of main, unchanged: the same-run before)
# Logs and CSVs go to a work folder, packed at the end into $OUT/ckpt.tgz (default OUT: out-ckpt); a summary
# is printed last.
set -u
cd "$(dirname "$0")/../.."
DEST=${OUT:-out-ckpt}
OUT=$(mktemp -d)
mkdir -p "$DEST"
STEPS=${STEPS:-exact cuda bench memcheck}
CELLS=${CELLS:-3000000}
GRIDS=${GRIDS:---grid=1024x1024x128 --grid=512x512x512 --grid=2048x2048x32 --grid=140x140x56}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo -)}
export CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
STEP_LOGS=$OUT
# shellcheck source=device_steps.sh
. bench/gpu/device_steps.sh
machine_txt "$OUT/machine.txt" "$("$CUDACXX" --version | tail -2)" "commit $COMMIT"
B=${BUILD:-build-ckpt}
if [ -z "${BUILD:-}" ]; then
  step configure 120 cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DTRIDI_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DTRIDI_ENABLE_FORTRAN=OFF -DTRIDI_ENABLE_MPI=OFF -DTRIDI_BUILD_TESTCASES=OFF -DTRIDI_FAULT_INJECTION=ON \
    "-DCMAKE_CUDA_FLAGS=${SPLIT:---split-compile=0}" || { tail -30 "$OUT/configure.log"; exit 1; }
  targets=(test_mohid_exact test_cuda tridi_bench_gpu)
  has ctest && targets+=(test_fast_gpu test_cuda_faults test_upload_plain)
  step build "${BUILD_SECONDS:-330}" cmake --build "$B" -j 16 --target "${targets[@]}" ||
    { grep -E "error|Error" "$OUT/build.log" | head -30; tail -5 "$OUT/build.log"; exit 1; }
fi
T=$B/tests/cuda
has exact && step exact-ckpt 100 env TRIDI_CUDA_KERNEL=ckpt "$T/test_mohid_exact" "$CELLS"
if has bench; then
  for k in ${KERNELS:-ckpt line}; do
    kv=()
    [ "$k" != rule ] && kv=("TRIDI_CUDA_KERNEL=$k")
    for ty in ${TYPES:-mixed f64}; do
      # shellcheck disable=SC2086 # GRIDS: several arguments
      step "bench-$k-$ty" 90 env "${kv[@]}" "$B/bench/gpu/tridi_bench_gpu" 0 --fast --passes=2 --type=$ty $GRIDS \
        "--csv=$OUT/$k-$ty.csv" "--commit=$COMMIT"
    done
  done
fi
has exact && step exact-rule 100 "$T/test_mohid_exact" "$CELLS"
has ctest && step ctest "${CTEST_SECONDS:-200}" bash -c "cd '$B' && ctest -L cuda --output-on-failure -j 4"
has cuda && step cuda-ckpt 100 env TRIDI_CUDA_KERNEL=ckpt "$T/test_cuda"
has memcheck && step memcheck-ckpt 100 env TRIDI_CUDA_KERNEL=ckpt "$SAN" --tool memcheck --error-exitcode 9 \
  --report-api-errors no "$T/test_mohid_exact" 30000
printf '%s\n' "${summary[@]}"
grep -h -E "ERROR SUMMARY|test_mohid_exact:|tests passed|tests failed|FAILED" "$OUT"/*.log | sort | uniq -c | head -30
grep -H -E "^\| [0-9]+x[0-9]+x[0-9]+ \| (mixed|f64)" "$OUT"/bench*.log | sed "s|$OUT/||"
tar -C "$OUT" -czf "$DEST/ckpt.tgz" .
