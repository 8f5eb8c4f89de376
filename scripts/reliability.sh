#!/usr/bin/env bash
# Reliability checks run by test.sh (and so by CI), all on the CPU:
#  1. the CPU and Fortran tests again in a build with AddressSanitizer + UndefinedBehaviorSanitizer;
#  2. valgrind memcheck over the Fortran adapter test;
#  3. libFuzzer (clang) over argument validation and the solve on tiny random grids, bounded in time,
#     starting from the committed corpus tests/fuzz/corpus.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
FUZZ_SECONDS="${TRIDI_FUZZ_SECONDS:-60}"

echo "== reliability 1/3: ASan + UBSan build, cpu and fortran tests"
SAN="$TRIDI_ROOT/build-sanitize"
cmake -S "$TRIDI_ROOT" -B "$SAN" -DCMAKE_BUILD_TYPE=Debug -DTRIDI_SANITIZE=ON -DTRIDI_ENABLE_CUDA=OFF \
      -DTRIDI_ENABLE_MPI=OFF -DTRIDI_ENABLE_FORTRAN=ON -DTRIDI_BUILD_BENCH=OFF -DTRIDI_BUILD_TESTCASES=OFF
cmake --build "$SAN" -j "$JOBS"
# halt_on_error: any report fails the run; detect_leaks: leaks fail too.
# install_consumer is left out: an outside project linking the instrumented static library would need
# the sanitizer runtimes itself.
(cd "$SAN" && ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
   ctest --output-on-failure -j "$JOBS" -L "cpu|fortran" -E install_consumer)

echo "== reliability 2/3: valgrind memcheck over the Fortran adapter test"
BUILD="${TRIDI_BUILD_DIR:-$TRIDI_ROOT/build}"
ADAPTER_TEST="$(find "$BUILD/tests/fortran" -maxdepth 1 -type f -name 'test_adapter*' -perm -u+x | head -n 1)"
if [ -z "$ADAPTER_TEST" ]; then
  echo "reliability: the Fortran adapter test was not built in $BUILD" >&2
  exit 1
fi
TRIDI_BACKEND=cpu OMP_NUM_THREADS=2 valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
  --quiet "$ADAPTER_TEST"

echo "== reliability 3/3: libFuzzer, ${FUZZ_SECONDS} s"
FZ="$TRIDI_ROOT/build-fuzz"
mkdir -p "$FZ/corpus_work"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -I"$TRIDI_ROOT/include" \
  -I"$TRIDI_ROOT/src" "$TRIDI_ROOT"/src/{context,error,validate,solve,cpu_solve}.c \
  "$TRIDI_ROOT/tests/fuzz/fuzz_solve.c" -lm -o "$FZ/fuzz_solve"
"$FZ/fuzz_solve" -max_total_time="$FUZZ_SECONDS" -max_len=512 -print_final_stats=1 \
  "$FZ/corpus_work" "$TRIDI_ROOT/tests/fuzz/corpus"
echo "reliability: sanitizers, valgrind and fuzzing clean"
