#!/usr/bin/env bash
# Two builds of tridi timed side by side in one run (a restructuring's before and after): each row runs
# old, new, new, old (so drift favours neither), each output in OUT/ROW.{old,new}.{1,2}.log, a line a run
# in OUT/runs.txt. Compare the figures each program prints (ratios within one row of this run).
#   bench/compare_builds.sh OLD_BUILD NEW_BUILD OUT [ROWS...]
# ROWS (default all): resident small xlines heat fc140 fc560np2 cpu cpu-fast (cpu-fast: the new build in FAST
# arithmetic against the old one's default, which was its only one: the structure's cost alone). A build needs tridi_bench_gpu, tridi_heat3d,
# flow_channel, flow_channel_mpi (NetCDF off is fine) and tridi_bench_model_pattern; every command runs
# under `timeout`.
set -uo pipefail
old="$1"; new="$2"; out="$3"; shift 3
rows="${*:-resident small xlines heat fc140 fc560np2 cpu cpu-fast}"
mkdir -p "$out"
export OMP_PROC_BIND=close OMP_PLACES=cores OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# run ROW LIMIT CMD... (CMD's first word relative to a build folder): old, new, new, old.
run() {
  local row="$1" limit="$2" b tag n=0 t0 rc; shift 2
  for b in "$old" "$new" "$new" "$old"; do
    n=$((n + 1)); tag=$([ "$b" = "$old" ] && echo old || echo new)
    local log="$out/$row.$tag.$(( n == 1 || n == 2 ? 1 : 2 )).log"
    t0=$SECONDS
    (cd "$b" && timeout "$limit" "$@") >"$log" 2>&1
    rc=$?
    echo "$row $tag rc=$rc $((SECONDS - t0))s" | tee -a "$out/runs.txt"
  done
}
fc=testcases/flow_channel
for r in $rows; do
  case "$r" in
  resident) run resident 120 bench/gpu/tridi_bench_gpu 0 --fast --grid=1024x1024x128 ;;
  small) run small 60 bench/gpu/tridi_bench_gpu 0 --fast --grid=140x140x56 ;;
  xlines) run xlines 60 bench/gpu/tridi_bench_gpu 0 --fast --passes=2 --axis=x --grid=1024x1024x128 \
    --grid=512x512x512 --grid=2048x2048x32 ;;
  heat)
    run heat-f64 60 examples/tridi_heat3d 512 10 cuda f64 fused heat
    run heat-f32 60 examples/tridi_heat3d 512 10 cuda f32 fused heat ;;
  fc140) run fc140 90 $fc/flow_channel flow_channel_140-56 --backend gpu-resident --steps 30 --ramp 0 --quiet ;;
  fc560np2)
    run fc560np2 120 mpirun --oversubscribe --bind-to none -np 2 $fc/flow_channel_mpi flow_channel_560-56 \
      --backend gpu-resident --steps 30 --ramp 0 --quiet ;;
  cpu)
    for t in 1 4 16; do
      run "cpu-t$t" 90 env TRIDI_CPU_POOL=1 bench/tridi_bench_model_pattern "$t" 4 140x140x56 256
    done ;;
  cpu-fast)
    for t in 1 4 16; do
      run "cpu-fast-t$t" 90 env TRIDI_CPU_POOL=1 bench/tridi_bench_model_pattern "$t" 4 140x140x56 256 fast
    done ;;
  *) echo "compare_builds: unknown row '$r'" >&2; exit 2 ;;
  esac
done
