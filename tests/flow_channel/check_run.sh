#!/usr/bin/env bash
# Runs flow_channel and checks what it reports:
#   check_run.sh EXE TOL RATIO ARGS...
# - exit status 0, or 77 passed on (no GPU: the test is skipped) (the program itself fails on NaN, on a backend disagreement with --compare, on a
#   NetCDF file that does not read back equal with --verify-output, on a non-finite outflow);
# - one FLOW_CHANNEL line with every key, |volume_error| <= TOL and |salt_error| <= TOL;
# - RATIO (or '-' to skip): the mean outflow of the run's last hour lies within RATIO of the river's
#   7000 m3/s (relative); RATIO,SWING also: the outflow's swing in that hour (largest minus smallest
#   discharge of a step) is under SWING of 7000 m3/s.
set -uo pipefail
exe="$1"; tol="$2"; ratio="$3"; shift 3
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
"$exe" "$@" >"$log" 2>&1
status=$?
cat "$log"
fail() { echo "check_run: FAILED: $*"; exit 1; }
[[ $status -eq 77 ]] && { echo "check_run: skipped (no GPU)"; exit 77; }
[[ $status -eq 0 ]] || fail "flow_channel exited with status $status"
line="$(grep '^FLOW_CHANNEL ' "$log")" || fail "no FLOW_CHANNEL line"
[[ $(grep -c '^FLOW_CHANNEL ' "$log") -eq 1 ]] || fail "more than one FLOW_CHANNEL line"
for key in grid backend steps solver_ms total_ms outflow_m3s volume_error; do
  # The pattern in a variable: written inline, bash 5.2 rejects its unquoted space as a syntax error
  # and leaves the script with status 0, every check below unrun. The value may follow a space (the
  # Fortran writes "volume_error= 1.3E-14").
  re="(^| )$key= *[^ ]+"
  [[ "$line" =~ $re ]] || fail "FLOW_CHANNEL line lacks $key="
done
value() { sed -n "s/.* $1= *\([^ ]*\).*/\1/p" <<<"$line"; }
vol="$(value volume_error)"; salt="$(value salt_error)"; out="$(value outflow_m3s)"
awk -v v="$vol" -v s="$salt" -v t="$tol" -v q="$out" 'BEGIN {
  if (!(v == v + 0) || !(s == s + 0) || !(q == q + 0)) exit 1
  if ((v < 0 ? -v : v) > t || (s < 0 ? -s : s) > t) exit 1 }' ||
  fail "volume_error=$vol salt_error=$salt outflow_m3s=$out (tolerance $tol)"
if [[ "$ratio" != - ]]; then
  swing_max="${ratio#*,}"; [[ "$swing_max" == "$ratio" ]] && swing_max=""
  ratio="${ratio%%,*}"
  mean="$(sed -n 's/^outflow: mean over the last .* h: \([^ ]*\) m3\/s.*/\1/p' "$log")"
  [[ -n "$mean" ]] || fail "no mean outflow reported"
  awk -v m="$mean" -v r="$ratio" 'BEGIN { d = m / 7000 - 1; if (d < 0) d = -d; exit !(d <= r) }' ||
    fail "mean outflow of the last hour $mean m3/s is not within $ratio of 7000 m3/s"
  echo "check_run: mean outflow of the last hour $mean m3/s, within $ratio of 7000 m3/s"
  if [[ -n "$swing_max" ]]; then
    swing="$(sed -n 's/^outflow: range over the last .* m3\/s; swing \([^ ]*\) m3\/s.*/\1/p' "$log")"
    [[ -n "$swing" ]] || fail "no outflow swing reported"
    awk -v s="$swing" -v r="$swing_max" 'BEGIN { exit !(s == s + 0 && s >= 0 && s < r * 7000) }' ||
      fail "the outflow swings by $swing m3/s in the last hour, not under $swing_max of 7000 m3/s"
    echo "check_run: outflow swing in the last hour $swing m3/s, under $swing_max of 7000 m3/s"
  fi
fi
echo "check_run: passed (volume_error=$vol, salt_error=$salt, tolerance $tol)"
