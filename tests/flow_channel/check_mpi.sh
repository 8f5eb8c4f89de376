#!/usr/bin/env bash
# flow_channel on N MPI ranks against one rank:
#   check_mpi.sh MPIEXEC N TOL EXE GRID BACKEND ARGS...
# Runs `EXE GRID --backend BACKEND ARGS` under MPIEXEC on one rank and on N ranks (--oversubscribe).
# The N-rank run also steps the model whole, not cut, on rank 0 (--compare BACKEND --tolerance TOL):
# the program fails if any field differs from it by more than TOL of the field's scale. Then checked:
# - both runs exit 0 (77, no GPU, is passed on: the test is skipped);
# - the N-rank run reports the cut over N ranks (N > 1), and its device halos go by T when ARGS hold
#   --transport T;
# - the FLOW_CHANNEL lines name the same grid, backend and steps, and their outflows agree within TOL
#   (relative);
# - water and salt balances of both runs within 1e-9 (conservation holds across the ranks' faces).
set -uo pipefail
mpiexec="$1"; np="$2"; tol="$3"; exe="$4"; grid="$5"; backend="$6"; shift 6
one="$(mktemp)"; many="$(mktemp)"
trap 'rm -f "$one" "$many"' EXIT
fail() { echo "check_mpi: FAILED: $*"; exit 1; }
run() { # ranks log args...
  local n="$1" log="$2"; shift 2
  "$mpiexec" -n "$n" --oversubscribe "$exe" "$grid" --backend "$backend" "$@" >"$log" 2>&1
}
run 1 "$one" "$@"; s1=$?
run "$np" "$many" "$@" --compare "$backend" --tolerance "$tol"; sn=$?
echo "---- 1 rank"; cat "$one"; echo "---- $np ranks"; cat "$many"
[[ $s1 -eq 77 || $sn -eq 77 ]] && { echo "check_mpi: skipped (no GPU)"; exit 77; }
[[ $s1 -eq 0 ]] || fail "1 rank: exit status $s1"
[[ $sn -eq 0 ]] || fail "$np ranks: exit status $sn"
if [[ $np -gt 1 ]]; then
  grep -q "cut along j over $np MPI ranks" "$many" || fail "the $np-rank run does not report its cut"
fi
# --transport T (gpu-resident): the ranks' device halos must go by T.
want=""; prev=""
for a in "$@"; do [[ "$prev" == "--transport" ]] && want="$a"; prev="$a"; done
if [[ -n "$want" && $np -gt 1 ]]; then
  grep -q "device halos by $want" "$many" || fail "the $np-rank run's halos do not go by $want"
fi
grep -q "agree within" "$many" || fail "the $np-rank run did not compare its fields with the whole model"
l1="$(grep '^FLOW_CHANNEL ' "$one")" || fail "1 rank: no FLOW_CHANNEL line"
ln="$(grep '^FLOW_CHANNEL ' "$many")" || fail "$np ranks: no FLOW_CHANNEL line"
value() { sed -n "s/.* $1= *\([^ ]*\).*/\1/p" <<<"$2"; }
for key in grid backend steps; do
  [[ "$(value $key "$l1")" == "$(value $key "$ln")" && -n "$(value $key "$l1")" ]] ||
    fail "$key differs: '$(value $key "$l1")' on 1 rank, '$(value $key "$ln")' on $np"
done
awk -v a="$(value outflow_m3s "$l1")" -v b="$(value outflow_m3s "$ln")" -v t="$tol" \
    -v v1="$(value volume_error "$l1")" -v vn="$(value volume_error "$ln")" \
    -v s1="$(value salt_error "$l1")" -v sn="$(value salt_error "$ln")" 'function abs(x) { return x < 0 ? -x : x }
  BEGIN {
    if (!(a == a + 0 && b == b + 0 && v1 == v1 + 0 && vn == vn + 0 && s1 == s1 + 0 && sn == sn + 0)) exit 1
    d = abs(a - b) / (abs(a) > 1 ? abs(a) : 1)
    if (d > t || abs(v1) > 1e-9 || abs(vn) > 1e-9 || abs(s1) > 1e-9 || abs(sn) > 1e-9) exit 1 }' ||
  fail "summaries: 1 rank: $l1; $np ranks: $ln"
echo "check_mpi: passed: $np ranks agree with 1 rank (fields within $tol of their scale, outflow" \
     "$(value outflow_m3s "$ln") vs $(value outflow_m3s "$l1") m3/s)"
