#!/bin/bash
# On a GPU machine: MOHID's x lines checked and measured in one call, the rule's tc_line (decision 047)
# against tx_line (TRIDI_CUDA_KERNEL=ckpt, decision 063). Builds this tree (BIN: a folder with
# tridi_bench_gpu and test_mohid_exact built elsewhere instead; BEFORE_BIN: another tree's tridi_bench_gpu
# for a same-run before), then runs STEPS (default: all below), each under a time limit cut to DEADLINE;
# CSVs and logs.tgz into $OUT (default out-x):
#   tests     test_mohid_exact's short sweep three ways at once (the rule, TRIDI_CUDA_KERNEL=ckpt and =line:
#             ctest's cuda_test_mohid_exact*), and compute-sanitizer memcheck over tx_line's x solves (MEMGRID)
#   bench     tridi_bench_gpu 0 --fast --passes=2 --axis=x on GRIDS: [before], rule, ckpt, [ncu], ckpt,
#             rule, [before]
#   ncu       bench/gpu/ncu_rows.sh on the x rows of NCUGRID (every type), ckpt forced, between the pairs
#   xsweep    tridi_bench_gpu --xsweep on XGRIDS: tx_line's ring depth and blocks per SM
set -u
cd "$(dirname "$0")/../.." || exit
DEST=${OUT:-out-x}
W=$(mktemp -d) # the work folder: logs, CSVs, ncu's files
mkdir -p "$DEST"
STEPS=${STEPS:-tests bench ncu}
GRIDS=${GRIDS:---grid=1024x1024x128 --grid=512x512x512 --grid=2048x2048x32 --grid=140x140x56}
NCUGRID=${NCUGRID:---grid=1024x1024x128}
MEMGRID=${MEMGRID:---grid=301x37x2}
XGRIDS=${XGRIDS:---grid=1024x1024x128}
LIM=${LIM:-30}           # seconds per bench run at most
DEADLINE=${DEADLINE:-600} # seconds after the start past which no step runs (each step's limit shrinks to it)
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo -)}
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
STEP_LOGS=$W
# shellcheck source=device_steps.sh
. bench/gpu/device_steps.sh
machine_txt "$W/machine.txt" "commit $COMMIT"
# run NAME SECONDS COMMAND...: step, its limit cut to what DEADLINE leaves; skipped when under 5 s are left
run() {
  local name=$1 secs=$2 left=$((DEADLINE - SECONDS))
  shift 2
  [ "$left" -lt 5 ] && { summary+=("$name skipped: deadline"); return 1; }
  step "$name" $((secs < left ? secs : left)) "$@"
}
B=${BIN:-}
if [ -z "$B" ]; then
  export CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
  step configure 120 cmake -S . -B build-x -DCMAKE_BUILD_TYPE=Release -DTRIDI_ENABLE_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DTRIDI_ENABLE_FORTRAN=OFF -DTRIDI_ENABLE_MPI=OFF -DTRIDI_BUILD_TESTCASES=OFF &&
    step build 400 cmake --build build-x -j 16 --target tridi_bench_gpu test_mohid_exact ||
    { printf '%s\n' "${summary[@]}"; tail -30 "$W"/build.log "$W"/configure.log; exit 1; }
  mkdir -p build-x/bin
  ln -sf ../bench/gpu/tridi_bench_gpu ../tests/cuda/test_mohid_exact build-x/bin/
  B=build-x/bin
fi
if has tests; then
  run exact-rule 50 "$B/test_mohid_exact" &
  TRIDI_CUDA_KERNEL=ckpt run exact-ckpt 50 "$B/test_mohid_exact" &
  TRIDI_CUDA_KERNEL=line run exact-line 50 "$B/test_mohid_exact" &
  for t in mixed f64; do
    # shellcheck disable=SC2086
    TRIDI_CUDA_KERNEL=ckpt run "memcheck-$t" 50 "$SAN" --tool memcheck --error-exitcode 9 --report-api-errors no \
      "$B/tridi_bench_gpu" 0 \
      --fast --passes=1 --axis=x --type=$t $MEMGRID &
  done
  wait
  for f in exact-rule exact-ckpt exact-line memcheck-mixed memcheck-f64; do
    tail -3 "$W/$f.log" | sed "s/^/$f: /"
  done
fi
# shellcheck disable=SC2086 # GRIDS: several arguments
bench() { # bench NAME BIN [KERNEL]: KERNEL into TRIDI_CUDA_KERNEL
  run "bench-$1" "$LIM" env ${3:+TRIDI_CUDA_KERNEL=$3} "$2/tridi_bench_gpu" 0 --fast --passes=2 --axis=x $GRIDS \
    "--csv=$W/$1.csv" "--commit=$1"
}
if has bench; then
  [ -n "${BEFORE_BIN:-}" ] && bench before1 "$BEFORE_BIN"
  bench rule1 "$B"
  bench xtile1 "$B" ckpt
fi
# shellcheck disable=SC2086
has ncu && TRIDI_CUDA_KERNEL=ckpt run ncu 40 bash bench/gpu/ncu_rows.sh "$B/tridi_bench_gpu" "$W/ncu" --axis=x $NCUGRID
if has bench; then
  bench xtile2 "$B" ckpt
  bench rule2 "$B"
  [ -n "${BEFORE_BIN:-}" ] && bench before2 "$BEFORE_BIN"
fi
# shellcheck disable=SC2086
has xsweep && run xsweep 100 "$B/tridi_bench_gpu" 0 --xsweep $XGRIDS "--csv=$W/xsweep.csv" "--commit=$COMMIT"
printf '%s\n' "${summary[@]}"
grep -h -E "ERROR SUMMARY|test_mohid_exact:|FAILED" "$W"/*.log | head -20
grep -H -E "^\| [0-9]+x[0-9]+x[0-9]+ \| (mixed|f64|f32) \| x \| " "$W"/bench*.log "$W"/xsweep.log 2>/dev/null | sed "s|$W/||"
cat "$W"/before1.csv "$W"/rule1.csv "$W"/xtile1.csv "$W"/xtile2.csv "$W"/rule2.csv "$W"/before2.csv >"$DEST/bench.csv" \
  2>/dev/null
cp "$W"/xsweep.csv "$W"/ncu/ncu-rows.csv "$DEST"/ 2>/dev/null
cat "$W"/ncu/ncu-rows.csv 2>/dev/null
tar -C "$W" -czf "$DEST/logs.tgz" .
