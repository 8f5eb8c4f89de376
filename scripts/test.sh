#!/usr/bin/env bash
# The README's test command: installs dependencies, builds tridi with every part this machine can build
# and runs the whole test suite (GPU tests skip without a GPU), then the reliability checks
# (sanitizer build, valgrind, bounded fuzzing) when scripts/reliability.sh exists.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$TRIDI_ROOT/scripts/install-deps.sh"
BUILD="${TRIDI_BUILD_DIR:-$TRIDI_ROOT/build}"
# TRIDI_FAULT_INJECTION: the test-only hook that makes a kernel launch fail (tests/cuda/test_cuda_faults.c).
cmake -S "$TRIDI_ROOT" -B "$BUILD" "${CMAKE_OPTS[@]}" -DTRIDI_FAULT_INJECTION=ON
cmake --build "$BUILD" -j "$JOBS"
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS")
if [ -x "$TRIDI_ROOT/scripts/reliability.sh" ]; then
  "$TRIDI_ROOT/scripts/reliability.sh"
fi
