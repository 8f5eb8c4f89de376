#!/usr/bin/env bash
# Issue 29's figures in one run on one host: each kind of solve per call inside flow_channel (70-28 and
# 140-56, backend cpu on 1, 4, 8 and 16 threads, backend gpu with host arrays registered and not) beside the
# same kind in tridi_bench_model_pattern (after a serial pass over memory, as the model's own loops; back to
# back), the solver time per step against the `reference` backend stepped alongside, the host-array GPU path
# and AUTO's choice in tridi_bench_gpu --host (assembly overlap, registered and plain swap, with the packing
# on tridi's pool and, TRIDI_CPU_POOL=0, on the caller; the adapter's solve after the GPU idled, on both 3D
# grids and a 2D call of each: decision 038), and tridi_bench_cpu back to back.
#   bench/run_inmodel.sh BUILD OUT [COMMIT] [SECONDS]
# BUILD: a build with flow_channel, tridi_bench_model_pattern, tridi_bench_gpu and tridi_bench_cpu; OUT: a
# folder for the logs, the side-by-side table (summary.txt) and the CSV rows (inmodel.csv); SECONDS: a
# budget (default 270) past which the remaining steps are skipped. Every command runs under `timeout`.
set -uo pipefail
b="$1"; out="$2"; commit="${3:-unknown}"; budget="${4:-270}"
export OMP_PROC_BIND=close OMP_PLACES=cores
mkdir -p "$out"
fc="$b/testcases/flow_channel/flow_channel"; mp="$b/bench/tridi_bench_model_pattern"
gb="$b/bench/gpu/tridi_bench_gpu"; cb="$b/bench/tridi_bench_cpu"
start=$SECONDS
status=0
# step NAME LIMIT CMD...: runs CMD under timeout into OUT/NAME.log unless the budget is spent.
step() {
  local name="$1" limit="$2"; shift 2
  local left=$((budget - (SECONDS - start)))
  if [ "$left" -lt 10 ]; then echo "skipped (budget): $name" | tee -a "$out/skipped.txt"; return; fi
  [ "$limit" -gt "$left" ] && limit="$left"
  local t0=$SECONDS
  timeout "$limit" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  echo "$name: rc $rc, $((SECONDS - t0)) s (at $((SECONDS - start)) s)" | tee -a "$out/steps.txt"
  [ "$rc" -ne 0 ] && status=1
}
threads="1 4 8 16"
# In order of what issue 29's targets need first, so that a short budget drops the extras at the end.
# The model's footprint between calls: 256 MiB streamed for 140-56; 70-28 has an eighth of its cells.
# cpu_rows GRID BOX MIB STEPS LIMIT: the model-pattern benchmark (MIB streamed between steps) and flow_channel
# (STEPS model steps) on the cpu backend at every thread count.
cpu_rows() {
  local t
  for t in $threads; do
    step "mp-$2-$t" "$5" env TRIDI_CPU_POOL=1 "$mp" "$t" 4 "$2" "$3"
  done
  for t in $threads; do
    step "fc-$1-cpu-$t" "$5" "$fc" "flow_channel_$1" --backend cpu --threads "$t" --compare reference \
      --steps "$4" --ramp 0 --quiet
  done
}
cpu_rows 140-56 140x140x56 256 6 90
step fc-140-56-gpu-registered 90 "$fc" flow_channel_140-56 --backend gpu --compare reference --steps 6 --ramp 0 --quiet
step fc-140-56-gpu-plain 90 env FLOW_CHANNEL_REGISTER=0 "$fc" flow_channel_140-56 --backend gpu --compare reference \
  --steps 6 --ramp 0 --quiet
step gpu-host 150 "$gb" 2e7 --host --grid=140x140x56 --grid=70x70x28 --grid=140x140x1 --grid=70x70x1
cpu_rows 70-28 70x70x28 32 16 60
step cpu-b2b-140x140x56 30 "$cb" 16 5 140x140x56
step cpu-b2b-70x70x28 30 "$cb" 16 5 70x70x28
step fc-70-28-gpu-registered 60 "$fc" flow_channel_70-28 --backend gpu --compare reference --steps 16 --ramp 0 --quiet
step gpu-host-pool0 90 env TRIDI_CPU_POOL=0 "$gb" 0 --host --grid=140x140x56

# The side-by-side table and the CSV rows. Model-pattern kinds: THOMAS_2D is the mean of its x and y calls
# (one of each per step), as flow_channel counts them as one kind.
date=$(date -u +%Y-%m-%dT%H:%MZ)
{
  echo "flow_channel per call inside the model against tridi_bench_model_pattern (pool), ms; $(nproc) cores"
  echo "in-model: flow_channel's mean over its calls, and their median (the benchmark's statistic); ratios of the median"
  printf '%-7s %-4s %-12s %9s %9s %9s %9s %9s %8s %8s\n' grid thr kind mean median fc-replay mp-b2b mp-serial \
    in/serial in/b2b
} >"$out/summary.txt"
echo "device,date,commit,grid,type,axis,metric,value,value_max,unit" >"$out/inmodel.csv"
for g in 140-56 70-28; do
  case $g in 140-56) box=140x140x56 ;; *) box=70x70x28 ;; esac
  for t in $threads; do
    f="$out/fc-$g-cpu-$t.log"; m="$out/mp-$box-$t.log"
    [ -f "$f" ] && [ -f "$m" ] || continue
    awk -v g="$g" -v t="$t" -v dev=H100-host -v date="$date" -v commit="$commit" -v csv="$out/inmodel.csv" '
      FNR == NR && /^csv,kind,pool,/ { split($0, c, ","); k = c[5]; b2b[k] = c[6]; ser[k] = c[7]; next }
      FNR == NR { next }
      /^per call \(ms\), cpu, / {
        k = $0; sub(/^per call \(ms\), cpu, /, "", k); sub(/:.*/, "", k)
        inm = $0; sub(/.*in the model /, "", inm); sub(/ .*/, "", inm)
        med = $0; sub(/.*; median /, "", med); sub(/\).*/, "", med)
        rep = $0; sub(/.*back to back /, "", rep); sub(/ .*/, "", rep)
        mk = k
        if (k == "THOMAS_2D") { b2b[k] = (b2b["THOMAS_2D x"] + b2b["THOMAS_2D y"]) / 2; ser[k] = (ser["THOMAS_2D x"] + ser["THOMAS_2D y"]) / 2 }
        printf "%-7s %-4s %-12s %9.4f %9.4f %9.4f %9.4f %9.4f %8.2f %8.2f\n", g, t, k, inm, med, rep, b2b[k], ser[k], med / ser[k], med / b2b[k]
        ax = k; gsub(/ /, "_", ax)
        printf "%s,%s,%s,flow_channel_%s,mixed,%s,in_model_ms_per_call_%st,%.4f,,ms\n", dev, date, commit, g, ax, t, inm >> csv
        printf "%s,%s,%s,flow_channel_%s,mixed,%s,in_model_median_ms_per_call_%st,%.4f,,ms\n", dev, date, commit, g, ax, t, med >> csv
        printf "%s,%s,%s,flow_channel_%s,mixed,%s,replay_b2b_ms_per_call_%st,%.4f,,ms\n", dev, date, commit, g, ax, t, rep >> csv
        printf "%s,%s,%s,flow_channel_%s,mixed,%s,model_pattern_b2b_ms_per_call_%st,%.4f,,ms\n", dev, date, commit, g, ax, t, b2b[k] >> csv
        printf "%s,%s,%s,flow_channel_%s,mixed,%s,model_pattern_after_serial_ms_per_call_%st,%.4f,,ms\n", dev, date, commit, g, ax, t, ser[k] >> csv
      }
    ' "$m" "$f" >>"$out/summary.txt"
  done
done
# The gpu backend's calls (registered) against tridi_bench_gpu --host's solve of the same shape after the
# GPU idled 5 and 20 ms, as it does through the model's own work (docs/decisions/038). THOMAS_2D: the 2D
# grid's x and y solves averaged.
{
  echo
  echo "gpu registered per call inside the model (median) against the host-array benchmark's solve after 5 and 20 ms of GPU idle, ms"
  printf '%-7s %-12s %9s %9s %9s %9s %9s\n' grid kind median idle5 idle20 in/idle5 in/idle20
} >>"$out/summary.txt"
for g in 140-56 70-28; do
  case $g in 140-56) box=140x140x56; box2=140x140x1 ;; *) box=70x70x28; box2=70x70x1 ;; esac
  f="$out/fc-$g-gpu-registered.log"; h="$out/gpu-host.log"
  [ -f "$f" ] && [ -f "$h" ] || continue
  awk -v g="$g" -v box="$box" -v box2="$box2" -v dev=H100-host -v date="$date" -v commit="$commit" \
      -v csv="$out/inmodel.csv" '
    FNR == NR && /^\| +[0-9]+x +[0-9]+x +[0-9]+ \| [xyz] \|/ {
      split($0, c, "|"); gr = c[2]; gsub(/ /, "", gr); ax = c[3]; gsub(/ /, "", ax); next }
    FNR == NR && /idled 0.05 \/ 1 \/ 5 \/ 20 ms:/ {
      v = $0; sub(/.*idled 0.05 \/ 1 \/ 5 \/ 20 ms: /, "", v); split(v, w, " / ")
      i5[gr "," ax] = w[3]; i20[gr "," ax] = w[4] + 0; next }
    FNR == NR { next }
    /^per call \(ms\), gpu, / {
      k = $0; sub(/^per call \(ms\), gpu, /, "", k); sub(/:.*/, "", k)
      med = $0; sub(/.*; median /, "", med); sub(/\).*/, "", med)
      if (k == "THOMAS_3D x") { a5 = i5[box ",x"]; a20 = i20[box ",x"] }
      else if (k == "THOMAS_3D y") { a5 = i5[box ",y"]; a20 = i20[box ",y"] }
      else if (k == "THOMASZ") { a5 = i5[box ",z"]; a20 = i20[box ",z"] }
      else { a5 = (i5[box2 ",x"] + i5[box2 ",y"]) / 2; a20 = (i20[box2 ",x"] + i20[box2 ",y"]) / 2 }
      if (a5 + 0 <= 0 || a20 + 0 <= 0) next
      printf "%-7s %-12s %9.4f %9.4f %9.4f %9.2f %9.2f\n", g, k, med, a5, a20, med / a5, med / a20
      kk = k; gsub(/ /, "_", kk)
      printf "%s,%s,%s,flow_channel_%s,mixed,xyz,in_model_median_ms_per_call_gpu-registered_%s,%.4f,,ms\n", dev, date, commit, g, kk, med >> csv
      printf "%s,%s,%s,flow_channel_%s,mixed,xyz,bench_solve_after_idle_5ms_%s,%.4f,,ms\n", dev, date, commit, g, kk, a5 >> csv
      printf "%s,%s,%s,flow_channel_%s,mixed,xyz,bench_solve_after_idle_20ms_%s,%.4f,,ms\n", dev, date, commit, g, kk, a20 >> csv
    }
  ' "$h" "$f" >>"$out/summary.txt"
done
{
  echo
  echo "solver ms per step (FLOW_CHANNEL lines: main backend; the reference stepped alongside in the same process)"
  for f in "$out"/fc-*.log; do
    n=$(basename "$f" .log)
    grep -h '^FLOW_CHANNEL ' "$f" | sed "s/^/$n: /"
    grep -hE '^ *[0-9]+-[0-9]+ +[a-z-]+ ' "$f" | sed "s/^/$n: /"
    grep -h '^solver time by kind' "$f" | sed "s/^/$n: /"
    grep -h '^per call (ms), gpu' "$f" | sed "s/^/$n: /"
    grep -hE '^compare: (FAILED|.*agree)|FAILED' "$f" | sed "s/^/$n: /"
  done
  echo
  echo "model-pattern solver per step (pool): back-to-back, after serial, after parallel"
  grep -h '^csv,step,' "$out"/mp-*.log
  echo
  echo "host arrays (tridi_bench_gpu --host; gpu-host-pool0: TRIDI_CPU_POOL=0, packing on the caller)"
  for n in gpu-host gpu-host-pool0; do
    [ -f "$out/$n.log" ] && grep -hE '^\| +[0-9]+x|^\|   \(|AUTO|pinned H2D' "$out/$n.log" | sed "s/^/$n: /"
  done
  echo
  echo "tridi_bench_cpu 16 threads, back to back"
  grep -hE '^(grid |[0-9]+x[0-9]+x[0-9]+ )' "$out"/cpu-b2b-*.log 2>/dev/null
  echo
  cat "$out/steps.txt" "$out/skipped.txt" 2>/dev/null
} >>"$out/summary.txt"
for t in $threads; do
  for box in 140x140x56 70x70x28; do
    grep -h '^csv,step,pool,' "$out/mp-$box-$t.log" 2>/dev/null | awk -F, -v dev=H100-host -v date="$date" \
      -v commit="$commit" -v box="$box" '{ printf "%s,%s,%s,%s,mixed,xyz,model_pattern_b2b_ms_per_step_%st,%s,,ms\n", dev, date, commit, box, $4, $6
           printf "%s,%s,%s,%s,mixed,xyz,model_pattern_after_serial_ms_per_step_%st,%s,,ms\n", dev, date, commit, box, $4, $7
           printf "%s,%s,%s,%s,mixed,xyz,model_pattern_after_parallel_ms_per_step_%st,%s,,ms\n", dev, date, commit, box, $4, $8 }' >>"$out/inmodel.csv"
  done
done
cat "$out/summary.txt"
exit $status
