#!/usr/bin/env bash
# Reliability checks run by test.sh (and so by CI), all on the CPU:
#  1. the CPU, Fortran and MPI tests again in a build with AddressSanitizer + UndefinedBehaviorSanitizer;
#  2. valgrind memcheck over the Fortran adapter test and the MPI tests on 2 ranks;
#  3. libFuzzer (clang) harnesses, each bounded in time and starting from its committed corpus:
#     fuzz_solve (argument validation and the solve on tiny random grids, tests/fuzz/corpus),
#     fuzz_adi (the ADI API: plans, steps and sweeps against the oracles, tests/fuzz/corpus_adi),
#     fuzz_mpi (the MPI layer's validation, halo exchange and solves over MPI_COMM_SELF,
#     tests/fuzz/corpus_mpi). A finding stops the script with the crashing input under build-fuzz/.
# Each stage's result goes to TRIDI_TEST_SUMMARY (test.sh prints it at the end) when set; the fuzzers'
# outputs go to build-fuzz/fuzz_*.log, not to the terminal.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
FUZZ_SECONDS="${TRIDI_FUZZ_SECONDS:-60}"
SUMMARY="${TRIDI_TEST_SUMMARY:-/dev/null}"
note() { echo "$*" >>"$SUMMARY"; }

echo "== reliability 1/3: ASan + UBSan build, cpu, fortran and mpi tests"
SAN="$TRIDI_ROOT/build-sanitize"
cmake -S "$TRIDI_ROOT" -B "$SAN" -DCMAKE_BUILD_TYPE=Debug -DTRIDI_SANITIZE=ON -DTRIDI_ENABLE_CUDA=OFF \
      -DTRIDI_ENABLE_MPI=ON -DTRIDI_ENABLE_FORTRAN=ON -DTRIDI_BUILD_BENCH=OFF -DTRIDI_BUILD_TESTCASES=OFF
cmake --build "$SAN" -j "$JOBS"
# halt_on_error: any report fails the run; detect_leaks: leaks fail too.
# install_consumer is left out: an outside project linking the instrumented static library would need
# the sanitizer runtimes itself.
note "sanitizers: started (ASan + UBSan, build-sanitize/)"
(cd "$SAN" && ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
   ctest --output-on-failure -j "$JOBS" -L "cpu|fortran" -LE mpi -E install_consumer) 2>&1 | tee "$SAN/ctest-cpu.log"
# The MPI layer on 1, 2 and 4 ranks: only there do lines cut by rank boundaries run (the fuzzer's single
# rank never cuts one). Leak checks off: Open MPI keeps memory of its own from MPI_Init to exit; tridi's
# leaks in the MPI layer are caught by valgrind below, which names the Open MPI frames it ignores.
# opal_signal empty: Open MPI leaves crashes to the sanitizers.
(cd "$SAN" && ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
   OMPI_MCA_opal_signal="" ctest --output-on-failure -j "$JOBS" -L mpi) 2>&1 | tee "$SAN/ctest-mpi.log"
note "sanitizers: cpu/fortran $(grep -E 'tests passed' "$SAN/ctest-cpu.log" | tail -n 1); mpi $(grep -E 'tests passed' "$SAN/ctest-mpi.log" | tail -n 1)"

echo "== reliability 2/3: valgrind memcheck over the Fortran adapter test and the MPI tests"
BUILD="${TRIDI_BUILD_DIR:-$TRIDI_ROOT/build}"
ADAPTER_TEST="$(find "$BUILD/tests/fortran" -maxdepth 1 -type f -name 'test_adapter*' -perm -u+x | head -n 1)"
if [ -z "$ADAPTER_TEST" ]; then
  echo "reliability: the Fortran adapter test was not built in $BUILD" >&2
  exit 1
fi
note "valgrind: started"
nvg=0
TRIDI_BACKEND=cpu OMP_NUM_THREADS=2 valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
  --quiet "$ADAPTER_TEST"
# The MPI tests on 2 ranks (a few seconds each): valgrind-openmpi.supp hides only what Open MPI and PMIx
# keep or send themselves (anchored on their frames); anything reached from tridi still fails the run.
for t in test_mpi_errors test_mpi_halo test_mpi_solve test_mpi_limits test_mpi_fortran; do
  [ -x "$BUILD/tests/mpi/$t" ] || continue
  echo "-- valgrind: $t on 2 ranks"
  TRIDI_BACKEND=cpu OMP_NUM_THREADS=2 mpiexec -n 2 --oversubscribe valgrind --error-exitcode=99 --leak-check=full \
    --errors-for-leak-kinds=definite --num-callers=60 --suppressions="$TRIDI_ROOT/scripts/valgrind-openmpi.supp" \
    --quiet "$BUILD/tests/mpi/$t"
  nvg=$((nvg + 1))
done
note "valgrind: clean over the Fortran adapter test and $nvg MPI tests on 2 ranks"

echo "== reliability 3/3: libFuzzer, ${FUZZ_SECONDS} s per harness"
FZ="$TRIDI_ROOT/build-fuzz"
# The sources come from the build (files CMake writes: the core and CPU backend of library tridi, the
# MPI layer's host part) and the generated tridi_version.h from the sanitizer build (CPU only).
FUZZ_FLAGS=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I"$TRIDI_ROOT/include"
            -I"$SAN/include" -I"$TRIDI_ROOT/src")
mapfile -t CORE <"$SAN/tridi_core_sources.txt"
mapfile -t MPI_SOURCES <"$SAN/tridi_mpi_sources.txt"
mkdir -p "$FZ"
clang "${FUZZ_FLAGS[@]}" "${CORE[@]}" "$TRIDI_ROOT/tests/fuzz/fuzz_solve.c" -lm -o "$FZ/fuzz_solve"
clang "${FUZZ_FLAGS[@]}" -I"$TRIDI_ROOT/tests/common" -I"$TRIDI_ROOT/tests/adi" "${CORE[@]}" \
  "$TRIDI_ROOT/tests/common/testutil.c" "$TRIDI_ROOT/tests/adi/adi_ref.c" "$TRIDI_ROOT/tests/fuzz/fuzz_adi.c" -lm \
  -o "$FZ/fuzz_adi"
# The MPI layer is compiled with MPI's own flags (mpicc --showme); the harness runs as an MPI singleton.
# opal_signal empty: Open MPI leaves crashes to the sanitizers, which print the report and the input.
read -r -a MPI_CFLAGS <<<"$(mpicc --showme:compile)"
read -r -a MPI_LIBS <<<"$(mpicc --showme:link)"
clang "${FUZZ_FLAGS[@]}" -I"$TRIDI_ROOT/src/mpi" "${MPI_CFLAGS[@]}" "${CORE[@]}" \
  "${MPI_SOURCES[@]}" "$TRIDI_ROOT/tests/fuzz/fuzz_mpi.c" \
  "${MPI_LIBS[@]}" -lm -o "$FZ/fuzz_mpi"
# harness:corpus:max_len (the ADI harness reads more bytes per case: five arrays and an operator)
for run in solve:corpus:512 adi:corpus_adi:1024 mpi:corpus_mpi:512; do
  IFS=: read -r h corpus max_len <<<"$run"
  mkdir -p "$FZ/work_$h"
  log="$FZ/fuzz_$h.log"
  echo "-- fuzz_$h: ${FUZZ_SECONDS} s, output in $log"
  if ! OMPI_MCA_opal_signal="" "$FZ/fuzz_$h" -max_total_time="$FUZZ_SECONDS" -max_len="$max_len" -print_final_stats=1 \
       -artifact_prefix="$FZ/fuzz_$h-" "$FZ/work_$h" "$TRIDI_ROOT/tests/fuzz/$corpus" >"$log" 2>&1; then
    tail -n 60 "$log"
    note "fuzz_$h: FINDING (input under $FZ/, log $log)"
    exit 1
  fi
  note "fuzz_$h: clean, $(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1) runs in ${FUZZ_SECONDS} s (log $log)"
done
echo "reliability: sanitizers, valgrind and fuzzing clean"
