#!/bin/bash
# Builds unit_check.F90 against a MOHID build (its own ModuleFunctions, compiled with MOHID's flags) and
# tridi's adapter, and runs it: MOHID's THOMAS routines and tridi_mohid call by call, bit for bit.
# usage: run.sh MOHID_BUILD TRIDI_PREFIX [r8|r4]
#   MOHID_BUILD   a build folder of build_mohid.sh made WITHOUT tridi (mod/, obj/, build.log)
#   TRIDI_PREFIX  a tridi install with the Fortran package
#   PREC          r8 (default) or r4: must be the build's own (its flags are read from build.log)
# env: TRIDI_SEED (replay a run), OMP_NUM_THREADS, TRIDI_BACKEND (default cpu). Exit 0: every answer identical.
set -euo pipefail
B=$(cd "${1:?usage: run.sh MOHID_BUILD TRIDI_PREFIX [r8|r4]}" && pwd)
P=$(cd "${2:?TRIDI_PREFIX}" && pwd)
PREC=${3:-r8}
HERE=$(cd "$(dirname "$0")" && pwd)
FFLAGS=$(grep '^FFLAGS=' "$B/build.log" | tail -1 | cut -d= -f2-)
case $PREC in
    r8) [[ $FFLAGS == *-fdefault-real-8* ]] || { echo "$B is not an r8 build" >&2; exit 2; }; DEF=-DR8 ;;
    r4) [[ $FFLAGS != *-fdefault-real-8* ]] || { echo "$B is not an r4 build" >&2; exit 2; }; DEF= ;;
    *) echo "PREC must be r8 or r4" >&2; exit 2 ;;
esac
export PKG_CONFIG_PATH="$P/lib/pkgconfig:$P/lib64/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
OUT=$B/unit_check
mkdir -p "$OUT"
# tridi's .mod files and unit_check's own kept apart from MOHID's mod/.
gfortran $FFLAGS $DEF -I"$B/mod" $(pkg-config --cflags tridi_mohid) -J "$OUT" "$HERE/unit_check.F90" \
    $(ls "$B"/obj/*.o) $(pkg-config --libs tridi_mohid) \
    -lhdf5_serialhl_fortran -lhdf5_serial_hl -lhdf5_serial_fortran -lhdf5_serial -lnetcdff -lnetcdf -lz -ldl -lm \
    -o "$OUT/unit_check"
cd "$OUT"
TRIDI_BACKEND=${TRIDI_BACKEND:-cpu} ./unit_check
