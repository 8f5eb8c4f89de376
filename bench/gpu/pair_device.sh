#!/bin/bash
# On a GPU machine: MOHID's two-threads-a-line kernel (decision 069) checked and measured in one call, from
# binaries built elsewhere: NEW=dir (tridi_bench_gpu, test_mohid_exact, test_fast_gpu of this branch) and
# OLD=dir (tridi_bench_gpu of the base commit). STEPS (default: all below), in this order:
#   graph     tridi_bench_gpu 0 --graph on GRAPH_GRIDS, OLD and NEW alternated (old new new old)
#   exact     test_mohid_exact (part 6: one-wave grids through tp_line), CELLS sweep cells
#   big       tridi_bench_gpu 0 --fast --passes=2 on BIG_GRIDS, OLD then NEW (the planner leaves them alone)
#   fast      test_fast_gpu (FAST unchanged: its bound, failures, graphs)
#   memcheck  compute-sanitizer memcheck over test_mohid_exact part 6 (the one-wave grids)
#   ncu       bench/gpu/ncu_rows.sh over NCU_ARGS (the planner's kernels of NEW)
#   racecheck compute-sanitizer racecheck over test_mohid_exact part 6 (the lanes' shared W/G)
# Logs and CSVs are packed into $OUT/pair.tgz after every step (default OUT: out-pair); a summary and the
# graph tables are printed last.
set -u
DEST=${OUT:-out-pair}
W=$(mktemp -d)
mkdir -p "$DEST"
STEPS=${STEPS:-graph exact big fast memcheck ncu racecheck}
NCU_ARGS=${NCU_ARGS:---grid=140x140x56}
NEW=${NEW:?NEW=dir}
OLD=${OLD:?OLD=dir}
CELLS=${CELLS:-1000000}
GRAPH_GRIDS=${GRAPH_GRIDS:---grid=140x140x56 --grid=70x70x28 --grid=140x140x28}
BIG_GRIDS=${BIG_GRIDS:---grid=1024x1024x128}
NC=${NEW_COMMIT:--} OC=${OLD_COMMIT:--}
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
STEP_LOGS=$W
# shellcheck source=device_steps.sh
. "$(dirname "$0")/device_steps.sh"
eval "step_() $(declare -f step | tail -n +2)"
machine_txt "$W/machine.txt" "new $NC, old $OC"
# each step's log packed as soon as it ends, so that a call cut short still brings them back
step() { step_ "$@"; local rc=$?; tar -C "$W" -czf "$DEST/pair.tgz" .; return $rc; }
if has graph; then
  for side in old new new old; do
    d=$OLD c=$OC
    [ $side = new ] && d=$NEW c=$NC
    i=$(ls "$W" | grep -c "^graph-$side.*log") || true
    # shellcheck disable=SC2086 # GRAPH_GRIDS: several arguments
    step "graph-$side-$i" ${GRAPH_SECONDS:-45} "$d/tridi_bench_gpu" 0 --graph $GRAPH_GRIDS \
      "--csv=$W/graph-$side-$i.csv" "--commit=$c"
  done
fi
has exact && step exact ${EXACT_SECONDS:-90} "$NEW/test_mohid_exact" "$CELLS"
if has big; then
  for side in old new; do
    d=$OLD c=$OC
    [ $side = new ] && d=$NEW c=$NC
    # shellcheck disable=SC2086
    step "big-$side" ${BIG_SECONDS:-75} "$d/tridi_bench_gpu" 0 --fast --passes=2 $BIG_GRIDS "--csv=$W/big-$side.csv" \
      "--commit=$c"
  done
fi
has fast && step fast ${FAST_SECONDS:-60} "$NEW/test_fast_gpu"
has memcheck && step memcheck ${MEMCHECK_SECONDS:-120} "$SAN" --tool memcheck --error-exitcode 9 --report-api-errors no \
  "$NEW/test_mohid_exact" 0 6
# shellcheck disable=SC2086 # NCU_ARGS: several arguments
has ncu && step ncu ${NCU_SECONDS:-120} bash "$(dirname "$0")/ncu_rows.sh" "$NEW/tridi_bench_gpu" "$W/ncu" $NCU_ARGS
[ -f "$W/ncu/ncu-rows.csv" ] && cp "$W/ncu/ncu-rows.csv" "$W/ncu-rows.csv" && tar -C "$W" -czf "$DEST/pair.tgz" .
has racecheck && step racecheck ${RACECHECK_SECONDS:-120} "$SAN" --tool racecheck --error-exitcode 9 \
  --report-api-errors no "$NEW/test_mohid_exact" 0 6
printf '%s\n' "${summary[@]}"
grep -h -E "ERROR SUMMARY|test_mohid_exact:|part [0-9]|tests passed|tests failed|FAILED|worst|checks" "$W"/*.log |
  sort | uniq -c | head -30
grep -H -E "^\| [0-9]+x[0-9]+x[0-9]+ \|" "$W"/graph-*.log "$W"/big-*.log | sed "s|$W/||"
