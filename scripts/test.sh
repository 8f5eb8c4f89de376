#!/usr/bin/env bash
# The README's test command: installs dependencies, builds tridi with every part this machine can build
# and runs the whole test suite (GPU tests skip without a GPU), then the reliability checks
# (sanitizer build, valgrind, bounded fuzzing) when scripts/reliability.sh exists. Ends with one summary
# block; the full outputs are in the log files it names.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
estimate "scripts/test.sh (build, ctest, sanitizers, valgrind, 3 minutes of fuzzing)" "20 to 35 minutes" \
  "about 15 minutes (more on a loaded machine)"
"$TRIDI_ROOT/scripts/install-deps.sh"
# Its own build folder (run.sh uses build-run/): this one has the test-only hook, which `cmake --install`
# refuses (decision 043).
BUILD="${TRIDI_BUILD_DIR:-$TRIDI_ROOT/build}"
export TRIDI_BUILD_DIR="$BUILD"
SUMMARY="$BUILD/test-summary.txt"
mkdir -p "$BUILD"
: >"$SUMMARY"
export TRIDI_TEST_SUMMARY="$SUMMARY"
start=$SECONDS
summary() {
  local rc=$?
  echo
  echo "==================== scripts/test.sh summary ===================="
  if [ -s "$SUMMARY" ]; then cat "$SUMMARY"; else echo "(stopped before ctest)"; fi
  echo "elapsed: $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s; $([ "$rc" = 0 ] && echo PASSED || echo "FAILED (exit $rc)")"
  echo "================================================================="
}
trap summary EXIT
# TRIDI_FAULT_INJECTION: the test-only hook that makes a kernel launch fail (tests/cuda/test_cuda_faults.c).
cmake -S "$TRIDI_ROOT" -B "$BUILD" "${CMAKE_OPTS[@]}" -DTRIDI_FAULT_INJECTION=ON
cmake --build "$BUILD" -j "$JOBS"
rc=0
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS") 2>&1 | tee "$BUILD/ctest.log" || rc=$?
{
  echo "ctest:      $(grep -E 'tests passed' "$BUILD/ctest.log" | tail -n 1)"
  echo "            skipped (no GPU): $(grep -c 'Not Run\|\*\*\*Skipped' "$BUILD/ctest.log" || true); log $BUILD/ctest.log"
} >>"$SUMMARY"
[ "$rc" = 0 ] || exit "$rc"
if [ -x "$TRIDI_ROOT/scripts/reliability.sh" ]; then
  "$TRIDI_ROOT/scripts/reliability.sh"
fi
