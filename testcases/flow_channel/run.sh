#!/usr/bin/env bash
# The README's flow_channel command: runs flow_channel_70-28 for a few model hours on the GPU when one is
# present (backend gpu), else on tridi's CPU backend, with the reference backend stepped alongside in the
# same process for the speed-ups; writes NetCDF + PNGs and prints the timing table.
#
#   testcases/flow_channel/run.sh [BUILD_DIR] [OUT_DIR]
#
# Environment: FC_GRID (default flow_channel_70-28), FC_HOURS (default 5), FC_BACKEND (default: gpu if
# nvidia-smi sees a GPU, else cpu), FC_NO_PLOTS=1 to skip the PNGs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build="${1:-$root/build}"
grid="${FC_GRID:-flow_channel_70-28}"
out="${2:-$root/out/$grid}"
hours="${FC_HOURS:-5}"
exe="$build/testcases/flow_channel/flow_channel"

if [[ ! -x "$exe" ]]; then
  echo "run.sh: $exe not found: build first (the README's build command), or pass the build folder" >&2
  exit 2
fi
if [[ -n "${FC_BACKEND:-}" ]]; then
  backend="$FC_BACKEND"
elif command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
  backend=gpu
else
  backend=cpu
fi

mkdir -p "$out"
nc="$out/${grid}.nc"
echo "run.sh: $grid, $hours model hours, backend $backend (and reference alongside), output $out"
"$exe" "$grid" --backend "$backend" --compare reference --hours "$hours" --output "$nc" --records 8 \
  --verify-output | tee "$out/${grid}.log"

if [[ "${FC_NO_PLOTS:-0}" != 1 ]]; then
  py=/usr/bin/python3
  [[ -x "$py" ]] || py=python3
  if "$py" -c 'import matplotlib, netCDF4' 2>/dev/null; then
    "$py" "$here/plot_flow_channel.py" "$nc" --outdir "$out"
  else
    echo "run.sh: no PNGs: python3 with matplotlib and netCDF4 is missing (Debian: apt-get install" \
         "python3-matplotlib python3-netcdf4)" >&2
    exit 1
  fi
fi
