#!/bin/bash
# On a GPU machine: the ADI steps checked and measured in one call (docs/decisions/048, 052), from binaries
# built beforehand (NEW=dir and OLD=dir each holding tridi_heat3d; NEW also test_adi_cuda and
# test_adi_convergence; PREV=dir, a third build's heat3d). Steps (STEPS, default: test conv memcheck bench ncu), in
# this order: test_adi_cuda, heat3d of NEW, OLD and PREV one after the other on each of RUNS ("GRID TYPE OP"
# separated by ';'; PREV only on those of PREV_RUNS where set), the GPU convergence series, memcheck over small heat3d runs
# (MEMCHECK: argument lists separated by ';'), ncu of NEW's fused sweeps (NCU: "TYPE OP KERNEL-REGEX SKIP" separated
# by ';', at 256^3; decision 058). Time limits a run: T_TEST, T_CONV, T_BENCH, T_MEMCHECK, T_NCU (s). Logs under OUT.
set -u
NEW=${NEW:?NEW=dir of the new binaries}
OLD=${OLD:-}
DEST=${OUT:-out-adi}
mkdir -p "$DEST"
STEPS=${STEPS:-test conv memcheck bench ncu}
COMMIT=${COMMIT:--}
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
STEP_LOGS=$DEST STEP_ARGS=1
# shellcheck source=device_steps.sh
. "$(dirname "$0")/device_steps.sh"
machine_txt "$DEST/machine.txt" "commit $COMMIT"

# registers, stack and spills of the fused sweeps
for d in "$NEW" $OLD ${PREV:-}; do
  echo "== $d"
  cuobjdump -res-usage "$d/tridi_heat3d" 2>&1 | grep -A1 -E "Function .*fused_sweep" |
    grep -oE "(Function [^:]*|REG:[0-9]+|STACK:[0-9]+|SHARED:[0-9]+|LOCAL:[0-9]+)" | paste - - - - - | c++filt
done >"$DEST/regs.txt"
has test && step test "${T_TEST:-150}" "$NEW/test_adi_cuda"
if has bench; then
  run() { # run BUILD DIR GRID TYPE PATH OP: the HEAT3D lines of the run, tagged with the build
    local tag=$1 dir=$2 before
    shift 2
    before=$(cat "$DEST/bench.log" 2>/dev/null | wc -l)
    step bench "${T_BENCH:-120}" "$dir/tridi_heat3d" "$1" 10 cuda "$2" "$3" "$4"
    tail -n +"$((before + 1))" "$DEST/bench.log" | grep "^HEAT3D" | sed "s/^/$tag /" >>"$DEST/heat3d-lines.txt"
  }
  RUNS=${RUNS:-512 f64 advdiff;512 f32 advdiff;256 f64 advdiff;256 f32 advdiff;1024x1024x128 f64 advdiff;\
1024x1024x128 f32 advdiff;512 f64 heat;512 f32 heat;512 f64 pr;512 f32 pr}
  IFS=';' read -ra runs <<<"$RUNS"
  for o in "${runs[@]}"; do
    set -- $o
    run new "$NEW" "$1" "$2" fused "$3"
    [ -n "$OLD" ] && run old "$OLD" "$1" "$2" fused "$3"
    [ -n "${PREV:-}" ] && { [ -z "${PREV_RUNS:-}" ] || [[ ";$PREV_RUNS;" == *";$o;"* ]]; } &&
      run prev "$PREV" "$1" "$2" fused "$3"
  done
fi
has conv && step conv "${T_CONV:-90}" env ADI_CONVERGENCE_BACKEND=cuda TRIDI_ADI_PATH=fused "$NEW/test_adi_convergence"
if has memcheck; then
  IFS=';' read -ra mc <<<"${MEMCHECK:-96 2 cuda f64 fused advdiff;96 2 cuda f32 fused advdiff;2048x12x12 2 cuda f64 \
fused advdiff;1500x10x10 2 cuda f32 fused advdiff;64 2 cuda f64 fused heat;64 2 cuda f32 fused heat;\
48 2 cuda f64 fused pr}"
  for a in "${mc[@]}"; do
    # shellcheck disable=SC2086 # a: heat3d's arguments
    step memcheck "${T_MEMCHECK:-60}" "$SAN" --tool memcheck --error-exitcode 9 "$NEW/tridi_heat3d" $a
  done
fi
if has ncu; then
  NCU_BIN=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
  IFS=';' read -ra nc <<<"${NCU:-f64 advdiff fused_sweep_xown 2;f32 advdiff fused_sweep_xown 2;f64 heat fused_sweep_shared 3}"
  for a in "${nc[@]}"; do
    # shellcheck disable=SC2086 # a: four words
    set -- $a
    echo "=== ncu $1 $2 256^3 $3 (skip $4)" >>"$DEST/ncu.log"
    step ncu "${T_NCU:-60}" "$NCU_BIN" --clock-control none --kernel-name "regex:$3" --launch-skip "$4" --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
      "$NEW/tridi_heat3d" 256 2 cuda "$1" fused "$2"
  done
fi
printf '%s\n' "${summary[@]}"
grep -h -E "ERROR SUMMARY|test_adi_cuda:|FAIL|ratio" "$DEST"/test.log "$DEST"/conv.log "$DEST"/memcheck.log 2>/dev/null | head -40
[ -f "$DEST/heat3d-lines.txt" ] && cat "$DEST/heat3d-lines.txt"
[ -f "$DEST/ncu.log" ] && grep -E "^===|Duration|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Spilling Requests  " "$DEST/ncu.log"
