#!/usr/bin/env bash
# Every bad argument of flow_channel: exit status 2, nothing on standard output and exactly one line on
# standard error that names the argument (and, where listed below, what it accepts); no run, no backtrace.
#   check_bad_args.sh EXE [SCRATCH_DIR]
# Each case: the arguments, then after '|' the texts the line must contain (separated by ';').
set -uo pipefail
exe="$1"
tmp="${2:-${TMPDIR:-/tmp}}/flow_channel_bad_args.$$"
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
g=flow_channel_70-28
# A build without NetCDF (-DFLOW_CHANNEL_NETCDF=OFF) refuses --output before it looks at the path.
folder_want="not a folder"
"$exe" $g --output "$tmp/" >/dev/null 2>"$tmp/probe" </dev/null
grep -qF "no NetCDF output" "$tmp/probe" && folder_want="no NetCDF output"
cases=(
  "|missing GRID;flow_channel_N-K"
  "flow_channel_7-28|flow_channel_7-28;flow_channel_70-28"
  "flow_channel_70-|flow_channel_70-"
  "flow_channel_x-28|flow_channel_x-28"
  "flow_channel_70-600|flow_channel_70-600;2..512"
  "$g $g|second GRID"
  "$g --bogus|--bogus"
  "$g --backend bogus|--backend bogus;reference, cpu, gpu, gpu-resident"
  "$g --backend|--backend needs a value;gpu-resident"
  "$g --compare bogus|--compare bogus;gpu-resident"
  "$g --backend cpu --compare gpu|--compare gpu"
  "$g --steps|--steps needs a value"
  "$g --steps abc|--steps abc;integer >= 1"
  "$g --steps -3|--steps -3;integer >= 1"
  "$g --steps 0|--steps 0"
  "$g --steps 1.5|--steps 1.5"
  "$g --steps 3,4|--steps 3,4"
  "$g --hours abc|--hours abc;number > 0"
  "$g --hours -1|--hours -1"
  "$g --hours 0|--hours 0"
  "$g --hours nan|--hours nan"
  "$g --hours inf|--hours inf"
  "$g --steps 3 --hours 1|--steps and --hours"
  "$g --dt 0|--dt 0;number > 0"
  "$g --dt x|--dt x"
  "$g --records 0|--records 0;integer >= 1"
  "$g --records two|--records two"
  "$g --tolerance -1|--tolerance -1;number >= 0"
  "$g --tolerance abc|--tolerance abc"
  "$g --ramp -5|--ramp -5;number >= 0"
  "$g --threads -2|--threads -2;integer >= 0"
  "$g --threads x|--threads x"
  "$g --transport bogus|--transport bogus;auto, ipc, cuda-aware, staged, nccl"
  "$g --output|--output needs a value"
  "$g --output $tmp/no/such/folder/f.nc|--output;$tmp/no/such/folder"
  "$g --output $tmp/|--output;$folder_want"
  "$g --verify-output|--verify-output;--output"
)
failed=0
for c in "${cases[@]}"; do
  args="${c%%|*}"; want="${c#*|}"
  # shellcheck disable=SC2086 # the arguments are split on blanks on purpose
  "$exe" $args >"$tmp/out" 2>"$tmp/err" </dev/null
  rc=$?
  why=""
  [[ $rc -eq 2 ]] || why="exit status $rc, not 2"
  [[ -s "$tmp/out" ]] && why="$why; standard output not empty"
  n=$(wc -l <"$tmp/err")
  [[ $n -eq 1 ]] || why="$why; $n lines on standard error, not 1"
  IFS=';' read -ra texts <<<"$want"
  for t in "${texts[@]}"; do
    grep -qF -- "$t" "$tmp/err" || why="$why; the message lacks '$t'"
  done
  if [[ -n "$why" ]]; then
    echo "check_bad_args: FAILED: flow_channel $args: ${why#; }"
    sed 's/^/  stderr: /' "$tmp/err" | head -5
    failed=$((failed + 1))
  else
    echo "ok: flow_channel $args -> $(cat "$tmp/err")"
  fi
done
[[ -e "$tmp/no" ]] && { echo "check_bad_args: FAILED: a folder was created for --output"; failed=$((failed + 1)); }
if [[ $failed -gt 0 ]]; then
  echo "check_bad_args: $failed of ${#cases[@]} cases failed"
  exit 1
fi
echo "check_bad_args: passed: ${#cases[@]} bad arguments, each exit 2 with one line naming it"
