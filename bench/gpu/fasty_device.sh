#!/bin/bash
# On a GPU machine: the FAST shapes of decision 057 checked and measured in one call, from binaries built
# elsewhere (AFTER=dir and, for a same-call before/after, BEFORE=dir, each holding tridi_bench_gpu and
# test_fast_gpu; default: this tree's build-fasty). STEPS (default: sweep test ncu), run in this order:
#   sweep     tridi_bench_gpu --fsweep on GRIDS (every shape against the planner's, same data)
#   test      test_fast_gpu (every FAST variant against the long double oracle, failures, graphs)
#   ncu       bench/gpu/ncu_rows.sh over NCU_ARGS (the planner's kernels)
#   fast      tridi_bench_gpu --fast --passes=2 on FAST_GRIDS, FAST_RUNS (side-type: after-f32 before-f32 ...)
#   memcheck  compute-sanitizer memcheck over test_fast_gpu --quick
# Step limits: SWEEP_SECONDS, TEST_SECONDS, NCU_SECONDS, FAST_SECONDS, MEMCHECK_SECONDS. Logs are packed into
# $OUT/fasty.tgz after every step (default OUT: out-fasty), the CSVs beside it; a summary (each sweep row's
# planner plan and best variant) is printed last.
set -u
cd "$(dirname "$0")/../.."
DEST=${OUT:-out-fasty}
W=$(mktemp -d)
mkdir -p "$DEST"
STEPS=${STEPS:-test sweep ncu}
AFTER=${AFTER:-build-fasty}
BEFORE=${BEFORE:-}
COMMIT=${COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo -)}
GRIDS=${GRIDS:---grid=1024x1024x128 --grid=512x512x512 --grid=2048x2048x32 --grid=140x140x56}
FAST_GRIDS=${FAST_GRIDS:-$GRIDS}
NCU_ARGS=${NCU_ARGS:---grid=1024x1024x128 --axis=y}
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
STEP_LOGS=$W
# shellcheck source=device_steps.sh
. bench/gpu/device_steps.sh
machine_txt "$W/machine.txt" "commit $COMMIT"
# each step's log packed as soon as it ends, so that a call cut short still brings them back
step_() { step "$@"; local rc=$?; tar -C "$W" -czf "$DEST/fasty.tgz" .; return $rc; }
# shellcheck disable=SC2086 # GRIDS: several arguments
has sweep && step_ sweep ${SWEEP_SECONDS:-150} "$AFTER/tridi_bench_gpu" 0 --fsweep $GRIDS "--csv=$DEST/sweep.csv" \
  "--commit=$COMMIT"
has test && step_ test ${TEST_SECONDS:-90} "$AFTER/test_fast_gpu"
# shellcheck disable=SC2086
has ncu && step_ ncu ${NCU_SECONDS:-120} bash bench/gpu/ncu_rows.sh "$AFTER/tridi_bench_gpu" "$W/ncu" $NCU_ARGS
if has fast; then
  for run in ${FAST_RUNS:-after-f32 before-f32 after-f64 before-f64}; do
    side=${run%-*} ty=${run#*-}
    d=$AFTER
    [ $side = before ] && d=$BEFORE
    [ -n "$d" ] || continue
    # shellcheck disable=SC2086
    step_ "fast-$side-$ty" ${FAST_SECONDS:-150} "$d/tridi_bench_gpu" 0 --fast --passes=2 --type=$ty $FAST_GRIDS \
      "--csv=$DEST/fast-$side-$ty.csv" "--commit=$COMMIT"
  done
fi
has memcheck && step_ memcheck ${MEMCHECK_SECONDS:-120} "$SAN" --tool memcheck --error-exitcode 9 --report-api-errors no \
  "$AFTER/test_fast_gpu" --quick
[ -f "$W/ncu/ncu-rows.csv" ] && cp "$W/ncu/ncu-rows.csv" "$DEST/ncu-rows.csv"
tar -C "$W" -czf "$DEST/fasty.tgz" .
printf '%s\n' "${summary[@]}"
grep -h -E "ERROR SUMMARY|tests passed|tests failed|FAILED|worst error" "$W"/*.log | sort | uniq -c | head -30
[ -f "$W/sweep.log" ] && python3 - "$W/sweep.log" <<'PY'
import sys
rows = {}
for l in open(sys.argv[1]):
    f = [x.strip() for x in l.split("|")[1:-1]]
    if len(f) != 12 or not f[0][:1].isdigit():
        continue
    key = tuple(f[:3])
    r = rows.setdefault(key, {"rule": None, "best": None})
    if f[4] == "0":
        r["rule"] = f
    elif f[11] == "0" and (r["best"] is None or float(f[9]) < float(r["best"][9])):
        r["best"] = f
    if f[11] != "0":
        print("BAD", " ".join(f))
for k, r in rows.items():
    a, b = r["rule"], r["best"]
    print(" ".join(k), "rule", a[3], a[9], a[10], "| best", " ".join(b[3:11]) if b else "-")
PY
