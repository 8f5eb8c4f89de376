# Sourced by the one-call device scripts of bench/gpu (mohid_exact_device.sh, ckpt_device.sh, adi_device.sh).
# Needs STEPS (the steps asked for) and STEP_LOGS (the folder of the logs). `has NAME`: STEPS names it;
# `step NAME SECONDS COMMAND...`: COMMAND under a time limit, its output appended to STEP_LOGS/NAME.log and a
# line in summary[] (the command's last words when STEP_ARGS=1); `machine_txt FILE [LINES...]`: the GPU,
# driver, date and the given lines.
summary=()
has() { [[ " $STEPS " == *" $1 "* ]]; }
step() {
  local name=$1 secs=$2 t0=$SECONDS rc
  shift 2
  timeout "$secs" "$@" >>"$STEP_LOGS/$name.log" 2>&1
  rc=$?
  summary+=("$(printf '%-20s %-9s %5ss %s' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAIL($rc)")" \
    $((SECONDS - t0)) "$([ "${STEP_ARGS:-0}" = 1 ] && echo "${*: -5}")")")
  return $rc
}
machine_txt() {
  local f=$1
  shift
  { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; date -u; printf '%s\n' "$@"; } >"$f" 2>&1
}
