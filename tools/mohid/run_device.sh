#!/bin/bash
# MOHID Water on a GPU machine without a Fortran compiler: check.sh's executables (pack.sh gathers them) run
# there, every HDF5 result of each tridi run compared with MOHID's first run (h5diff -r). usage: run_device.sh PACK OUT
#   PACK  pack.sh's folder: bin/{orig,tridi}-{r8,r4}, lib/, h5diff, case/, run_case.sh; OUT: summary.txt,
#         timings.csv (one row per run), medians.csv, stdout tails of failed runs
# Phase 1: per precision a Latin square of BUILDS (default "orig cpu1 gpu"; orig first), one stream per build
# side by side on one core each, rotated per round (A: orig cpu1 gpu; B: cpu1 gpu orig; C: gpu orig cpu1),
# r8 and r4 together, a barrier between rounds: each build meets the same contention. Phase 2: tridi cpu on
# 16 threads (PREC2, default "r8 r4"). PHASES (default "1 2") runs a part; PRECS (default "r8 r4") the
# precisions of phase 1. A build named in BUILDS whose PACK/bin/NAME-PREC exists (e.g. main-r8: MOHID linked
# against another tridi, pack.sh's EXTRA_BINS) runs that program on the cpu backend. BENCHES: programs of
# PACK/bin run first, alternately (3 rounds), their output in bench.txt (thomasz_bench.f90 builds).
# Exit 0 only when every compared result is identical.
set -uo pipefail
PACK=$(cd "${1:?usage: run_device.sh PACK OUT}" && pwd)
mkdir -p "${2:?OUT}"
OUT=$(cd "$2" && pwd)
RUNS=${RUNS:-/tmp/mohid-runs}
read -r -a order <<< "${BUILDS:-orig cpu1 gpu}"
NB=${#order[@]}
streams=(A B C D E F)
export LD_LIBRARY_PATH=$PACK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PHASES=${PHASES:-1 2}
CSV=$OUT/timings.csv
if [[ " $PHASES " == *" 1 "* ]]; then
    rm -rf "$RUNS"
    echo "prec,run,backend,threads,round,stream,wall_s,thomas_wall_s,runmodel_wall_s,identical" > "$CSV"
fi
mkdir -p "$RUNS"

backend() { case $1 in gpu) echo cuda ;; *) echo cpu ;; esac; }
one() { # one PREC RUN TAG THREADS [BIND]: a run in RUNS/PREC-RUN-TAG
    local exe=$PACK/bin/$( [[ $2 == orig ]] && echo orig || echo tridi )-$1 t0=$SECONDS d=$RUNS/$1-$2-$3
    [[ -x $PACK/bin/$2-$1 ]] && exe=$PACK/bin/$2-$1
    OMP_NUM_THREADS=$4 TRIDI_BACKEND=$(backend "$2") OMP_PROC_BIND=${5:-false} \
        timeout 900 bash "$PACK/run_case.sh" "$exe" "$PACK/case" "$d" > "$d.log" 2>&1
    echo $((SECONDS - t0)) > "$d.wall" # the GPU machine may have neither /usr/bin/time nor bc
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
record() { # record PREC RUN TAG THREADS STREAM REF: one CSV row; REF the orig run compared with
    local d=$RUNS/$1-$2-$3 wall th rm ok=-
    wall=$(cat "$d.wall" 2>/dev/null)
    th=$(awk '$1 == "ModuleFunctions" && $2 ~ /THOMAS/ {w += $4} END {printf "%.3f", w}' "$d/res/Outwatch_1.txt" 2>/dev/null)
    rm=$(awk '$2 == "RunModel" {print $4}' "$d/res/Outwatch_1.txt" 2>/dev/null)
    if ! grep -a -q "successfully terminated" "$d/stdout.txt" 2>/dev/null; then
        ok=FAILED
        tail -n 5 "$d/stdout.txt" "$d.log" > "$OUT/failed-$1-$2-$3.txt" 2>&1
    elif [[ $d != "$6" ]]; then
        ok=$(same "$6" "$d")
    fi
    echo "$1,$2,$(backend "$2"),$4,$3,$5,${wall:-},${th:-},${rm:-},$ok" >> "$CSV"
    echo "$1 $2 (round $3, stream $5, $4 threads): identical=$ok wall=${wall:-?} s thomas=${th:-?} s runmodel=${rm:-?} s" \
        >> "$OUT/summary.txt"
}
median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

if [[ -n ${BENCHES:-} ]]; then
    for r in 1 2 3; do
        for b in $BENCHES; do
            echo "== $b round $r" >> "$OUT/bench.txt"
            OMP_NUM_THREADS=1 timeout 60 "$PACK/bin/$b" 300 $((1000 + r)) >> "$OUT/bench.txt" 2>&1
        done
    done
fi
if [[ " $PHASES " == *" 1 "* ]]; then
    { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E 'Model name|^CPU\(s\)'
      date -u; } > "$OUT/summary.txt" 2>&1
    for ((r = 0; r < NB; r++)); do
        for p in ${PRECS:-r8 r4}; do
            for ((s = 0; s < NB; s++)); do one $p "${order[(s + r) % NB]}" $((r + 1)) 1 & done
        done
        wait # a barrier: the next round starts together (recorded first: a cut-off run keeps its rounds)
        for p in ${PRECS:-r8 r4}; do
            for ((s = 0; s < NB; s++)); do
                record $p "${order[(s + r) % NB]}" $((r + 1)) 1 "${streams[s]}" "$RUNS/$p-orig-1"
            done
        done
    done
fi
if [[ " $PHASES " == *" 2 "* ]]; then
    for p in ${PREC2:-r8 r4}; do one $p cpu16 1 16 true; record $p cpu16 1 16 - "$RUNS/$p-orig-1"; done
fi
{
    echo "prec,run,runs,thomas_median_s,runmodel_median_s,wall_median_s,orig_over_run_thomas"
    for p in r8 r4; do
        seen=0
        o=$(awk -F, -v p=$p '$1 == p && $2 == "orig" {print $8}' "$CSV" | median)
        for run in orig "${order[@]}" cpu16; do
            [[ $run == orig && $((seen++)) -gt 0 ]] && continue
            n=$(awk -F, -v p=$p -v r=$run '$1 == p && $2 == r' "$CSV" | wc -l)
            [[ $n -gt 0 ]] || continue
            th=$(awk -F, -v p=$p -v r=$run '$1 == p && $2 == r {print $8}' "$CSV" | median)
            rmm=$(awk -F, -v p=$p -v r=$run '$1 == p && $2 == r {print $9}' "$CSV" | median)
            wm=$(awk -F, -v p=$p -v r=$run '$1 == p && $2 == r {print $7}' "$CSV" | median)
            echo "$p,$run,$n,$th,$rmm,$wm,$(awk -v a="$o" -v b="$th" 'BEGIN {if (b > 0) printf "%.2f", a / b}')"
        done
    done
} > "$OUT/medians.csv"
cat "$OUT/summary.txt" "$OUT/medians.csv"
! grep -q -E ',(no|FAILED)$' "$CSV"
