#!/bin/bash
# MOHID Water on a GPU machine without a Fortran compiler: the executables built here by check.sh (pack.sh
# gathers them) run there, and every HDF5 result of each tridi run is compared with MOHID's own (h5diff -r).
# usage: run_device.sh PACK OUT
#   PACK  folder made by tools/mohid/pack.sh: bin/{orig,tridi}-{r8,r4}, lib/, h5diff, case/, run_case.sh
#   OUT   folder for the summary (summary.txt), the timings (timings.csv) and stdout tails
# Phase 1 runs, side by side (one core each): orig, tridi cpu 1 thread, tridi gpu, for r8 and r4.
# Phase 2: tridi cpu with 16 threads, r8 and r4. PHASES (default "1 2") runs a part: phase 2 compares with
# phase 1's orig runs. Exit 0 only when every compared result is identical.
set -uo pipefail
PACK=$(cd "${1:?usage: run_device.sh PACK OUT}" && pwd)
mkdir -p "${2:?OUT}"
OUT=$(cd "$2" && pwd)
RUNS=${RUNS:-/tmp/mohid-runs}
export LD_LIBRARY_PATH=$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PHASES=${PHASES:-1 2}
if [[ " $PHASES " == *" 1 "* ]]; then
    rm -rf "$RUNS"
    echo "prec,run,backend,threads,wall_s,thomas_wall_s,runmodel_wall_s,identical" > "$OUT/timings.csv"
fi
mkdir -p "$RUNS"

one() { # one PREC RUN BACKEND THREADS: a run in RUNS/PREC-RUN
    local exe=$PACK/bin/$( [[ $2 == orig ]] && echo orig || echo tridi )-$1 t0=$SECONDS
    OMP_NUM_THREADS=$4 TRIDI_BACKEND=$3 OMP_PROC_BIND=${5:-false} \
        timeout 900 bash "$PACK/run_case.sh" "$exe" "$PACK/case" "$RUNS/$1-$2" > "$RUNS/$1-$2.log" 2>&1
    echo $((SECONDS - t0)) > "$RUNS/$1-$2.wall" # the GPU machine may have neither /usr/bin/time nor bc
}
same() { # same DIR_A DIR_B: every HDF5 result and final state identical
    local f ok=yes
    for fa in "$1"/res/*.hdf5 "$1"/res/*.fin*; do
        [[ -e $fa ]] || continue
        f=$(basename "$fa")
        "$PACK/h5diff" -r "$fa" "$2/res/$f" > /dev/null 2>&1 || { ok=no; echo "  $f differs" >> "$OUT/summary.txt"; }
    done
    echo $ok
}
record() { # record PREC RUN BACKEND THREADS
    local d=$RUNS/$1-$2 wall th rm ok=-
    wall=$(cat "$RUNS/$1-$2.wall" 2>/dev/null)
    th=$(awk '$1 == "ModuleFunctions" && $2 ~ /THOMAS/ {w += $4} END {printf "%.3f", w}' "$d/res/Outwatch_1.txt" 2>/dev/null)
    rm=$(awk '$2 == "RunModel" {print $4}' "$d/res/Outwatch_1.txt" 2>/dev/null)
    if ! grep -a -q "successfully terminated" "$d/stdout.txt" 2>/dev/null; then
        ok=FAILED
        tail -n 5 "$d/stdout.txt" "$RUNS/$1-$2.log" > "$OUT/failed-$1-$2.txt" 2>&1
    elif [[ $2 != orig ]]; then
        ok=$(same "$RUNS/$1-orig" "$d")
    fi
    echo "$1,$2,$3,$4,${wall:-},${th:-},${rm:-},$ok" >> "$OUT/timings.csv"
    echo "$1 $2 ($3, $4 threads): identical=$ok wall=${wall:-?} s thomas=${th:-?} s" >> "$OUT/summary.txt"
}

if [[ " $PHASES " == *" 1 "* ]]; then
    { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E 'Model name|^CPU\(s\)'
      date -u; } > "$OUT/summary.txt" 2>&1
    for p in r8 r4; do
        one $p orig cpu 1 & one $p cpu1 cpu 1 & one $p gpu cuda 1 &
    done
    wait
    for p in r8 r4; do record $p orig cpu 1; record $p cpu1 cpu 1; record $p gpu cuda 1; done
fi
if [[ " $PHASES " == *" 2 "* ]]; then
    for p in r8 r4; do one $p cpu16 cpu 16 true; record $p cpu16 cpu 16; done
fi
cat "$OUT/summary.txt"
! grep -q -E ',(no|FAILED)$' "$OUT/timings.csv"
