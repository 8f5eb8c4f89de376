#!/usr/bin/env bash
# Times flow_channel on the three grids with the gpu-resident, gpu and cpu backends, each stepped alongside the
# reference backend in the same process, so every speed-up against reference is a same-run ratio (the
# flow_channel figures of docs/performance.md). The cpu and gpu backends cannot share one process (the MOHID adapter
# holds one tridi context), so a gpu/cpu ratio comes from two back-to-back runs.
#   bench.sh EXE [THREADS] [LOG]
# THREADS: OpenMP threads of the cpu backend (default: all cores). LOG: full output (default: bench.log).
set -uo pipefail
exe="$1"; threads="${2:-$(nproc)}"; log="${3:-bench.log}"
steps() { case "$1" in *70-28) echo 40 ;; *140-28) echo 24 ;; *) echo 16 ;; esac; }
: >"$log"
status=0
for grid in flow_channel_70-28 flow_channel_140-28 flow_channel_140-56; do
  for backend in gpu-resident gpu cpu; do
    timeout 300 "$exe" "$grid" --backend "$backend" --threads "$threads" --compare reference \
      --steps "$(steps "$grid")" --ramp 0 --quiet >>"$log" 2>&1 || { status=1; echo "bench: $grid $backend failed" >>"$log"; }
  done
done
echo "flow_channel timings: $(nproc) cores, cpu backend on $threads threads; ms per step after a warm-up step"
grep -E '^(compare: .*agree|compare: FAILED|flow_channel: FAILED|bench:)' "$log"
echo 'grid              backend      solver      total   solver speed-up   total speed-up'
grep -E '^ *[0-9]+-[0-9]+ +[a-z-]+ ' "$log"
grep '^FLOW_CHANNEL ' "$log"
exit $status
