#!/usr/bin/env bash
# The NetCDF file written on N MPI ranks against the one written on one rank:
#   check_netcdf_mpi.sh MPIEXEC N TOL EXE DIR ARGS...
# Runs `EXE ARGS --output FILE --verify-output` under MPIEXEC on one rank and on N ranks (--oversubscribe),
# then check_cf.py checks both files' CF rules and that every field of the N-rank file equals the
# one-rank file's within TOL of its largest magnitude (same variables, coordinates, mask and fill).
set -uo pipefail
mpiexec="$1"; np="$2"; tol="$3"; exe="$4"; dir="$5"; shift 5
fail() { echo "check_netcdf_mpi: FAILED: $*"; exit 1; }
one="$dir/flow_channel_np1.nc"; many="$dir/flow_channel_np$np.nc"
rm -f "$one" "$many"
"$mpiexec" -n 1 --oversubscribe "$exe" "$@" --output "$one" --verify-output || fail "1 rank: exit status $?"
"$mpiexec" -n "$np" --oversubscribe "$exe" "$@" --output "$many" --verify-output || fail "$np ranks: exit status $?"
py=/usr/bin/python3
[[ -x "$py" ]] || py=python3
"$py" "$(dirname "$0")/check_cf.py" "$one" --same-as "$many" --tolerance "$tol" || fail "check_cf.py"
echo "check_netcdf_mpi: passed: the $np-rank file equals the one-rank file within $tol"
