#!/bin/bash
# The drop-in check: MOHID Water built twice (its own THOMAS routines; the tree swapped to tridi_mohid by
# swap.py), MohidJetDischarge run 1 h by each, every HDF5 result compared with `h5diff -r`.
# usage: check.sh MOHID_KIT WORK [r8|r4]
#   MOHID_KIT  the MOHID kit: scripts/ (prepare_sources.sh, build_mohid.sh, prepare_case.sh, run_case.sh,
#              compare.sh) and the MOHID snapshot they unpack (e.g. /work/shared/mohid)
#   WORK       work folder, reused between runs: mohid/ and src-gf/ (prepare_sources.sh), src-tridi-PREC/
#              (src-gf swapped), build-PREC/ and build-PREC-tridi/ (incremental builds), case/, run-*/
#   PREC       r8 (default: MOHID's own precision, -fdefault-real-8) or r4 (4-byte default real)
# env: TRIDI_PREFIX  a tridi install with the Fortran package (default: this checkout built CPU-only and
#                    installed into WORK/tridi-install);
#      OMP_NUM_THREADS (tridi's CPU threads; MOHID is built without OpenMP), SECONDS_RUN (default 3600).
# Exit 0 only when every HDF5 result of the two runs is identical bit for bit. Not part of .ci/run.
set -euo pipefail
KIT=$(cd "${1:?usage: check.sh MOHID_KIT WORK [r8|r4]}" && pwd)
mkdir -p "${2:?WORK}"
WORK=$(cd "$2" && pwd)
PREC=${3:-r8}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
S=$KIT/scripts
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
[[ $PREC == r8 || $PREC == r4 ]] || { echo "PREC must be r8 or r4" >&2; exit 2; }

if [[ -z ${TRIDI_PREFIX:-} ]]; then
    TRIDI_PREFIX=$WORK/tridi-install
    cmake -S "$REPO" -B "$WORK/tridi-build" -DCMAKE_BUILD_TYPE=Release -DTRIDI_ENABLE_CUDA=OFF \
        -DTRIDI_ENABLE_FORTRAN=ON -DTRIDI_ENABLE_MPI=OFF -DTRIDI_BUILD_TESTS=OFF -DTRIDI_BUILD_BENCH=OFF \
        -DTRIDI_BUILD_TESTCASES=OFF > "$WORK/tridi-build.log"
    cmake --build "$WORK/tridi-build" -j2 >> "$WORK/tridi-build.log"
    cmake --install "$WORK/tridi-build" --prefix "$TRIDI_PREFIX" >> "$WORK/tridi-build.log"
fi
echo "tridi: $TRIDI_PREFIX"

[[ -d $WORK/src-gf && -d $WORK/mohid ]] || "$S/prepare_sources.sh" "$WORK"
ST=$WORK/src-tridi-$PREC      # one per precision: an r8 and an r4 check may run side by side
rm -rf "$ST"
mkdir -p "$ST"
cp -r "$WORK/src-gf/Software" "$ST/"
python3 "$HERE/swap.py" "$ST"

B=$WORK/build-$PREC
BT=$WORK/build-$PREC-tridi
"$S/build_mohid.sh" "$WORK/src-gf" "$B" "$PREC" | tail -1
# The swapped build starts from the original's objects (build_mohid.sh recompiles what changed); the
# swapped modules recompile when tridi's module is newer than their objects (build_mohid.sh does not look
# at tridi_mohid.mod).
[[ -d $BT ]] || cp -a "$B" "$BT"
MOD=$(find "$TRIDI_PREFIX" -name tridi_mohid.mod | head -1)
for m in ModuleAdvectionDiffusion ModuleFreeVerticalMovement ModuleHydrodynamic; do
    [[ -f $BT/obj/$m.o && ! $MOD -nt $BT/obj/$m.o ]] || rm -f "$BT/obj/$m.o"
done
# The kit links pkg-config's tridi_fortran; the adapter is library tridi_mohid of its own (decision 043).
export PKG_CONFIG_PATH="$TRIDI_PREFIX/lib/pkgconfig:$TRIDI_PREFIX/lib64/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
EXTRA_OBJS="$(pkg-config --libs tridi_mohid)" "$S/build_mohid.sh" "$ST" "$BT" "$PREC" "$TRIDI_PREFIX" | tail -1

SECONDS_RUN=${SECONDS_RUN:-3600}
[[ -d $WORK/case ]] || "$S/prepare_case.sh" "$WORK/mohid" "$WORK/case" "$SECONDS_RUN" 600 > /dev/null
"$S/run_case.sh" "$B/bin/MohidWater.exe" "$WORK/case" "$WORK/run-$PREC-orig" > /dev/null
"$S/run_case.sh" "$BT/bin/MohidWater.exe" "$WORK/case" "$WORK/run-$PREC-tridi" > /dev/null
for r in orig tridi; do
    grep -a -q "successfully terminated" "$WORK/run-$PREC-$r/stdout.txt" ||
        { echo "the $r run did not terminate normally: $WORK/run-$PREC-$r/stdout.txt" >&2; exit 1; }
done
echo "compare ($PREC, OMP_NUM_THREADS=$OMP_NUM_THREADS):"
status=0
"$S/compare.sh" "$WORK/run-$PREC-orig" "$WORK/run-$PREC-tridi" || status=1
# The final states (*.fin, *.fin5) are HDF5 files too: their data must agree as well (their bytes differ in
# HDF5's own time stamps, so h5diff, not cmp).
for fa in "$WORK/run-$PREC-orig"/res/*.fin*; do
    f=$(basename "$fa")
    if h5diff -r "$fa" "$WORK/run-$PREC-tridi/res/$f" > /dev/null 2>&1; then
        echo "$f: identical data (h5diff -r exit 0)"
    else
        echo "$f: DIFFERENT (h5diff -r)"; status=1
    fi
done
if [[ $status == 0 ]]; then echo "check.sh: $PREC identical"; else echo "check.sh: $PREC DIFFERS"; fi
exit $status
