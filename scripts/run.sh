#!/usr/bin/env bash
# The README's main command: installs dependencies, builds tridi (with CUDA when nvcc is present) and runs
# the flow_channel_70-28 case on the GPU when there is one, else on the CPU; writes NetCDF + PNGs under
# out/flow_channel_70-28/ and prints the timing table. FC_GRID / FC_HOURS / FC_BACKEND override the case.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
estimate "scripts/run.sh (build, then 5 model hours of flow_channel_70-28)" "about 4 minutes" "about 5 minutes, most of it compiling the CUDA backend"
"$TRIDI_ROOT/scripts/install-deps.sh"
# Its own build folder, never test.sh's (build/, with the test-only hook): neither rebuilds the other's
# objects, and this one (release options, no hook) is the one to install (docs/install.md).
BUILD="${TRIDI_RUN_BUILD_DIR:-$TRIDI_ROOT/build-run}"
cmake -S "$TRIDI_ROOT" -B "$BUILD" "${CMAKE_OPTS[@]}" -DTRIDI_FAULT_INJECTION=OFF -DTRIDI_BUILD_TESTS=OFF -DTRIDI_BUILD_BENCH=OFF
cmake --build "$BUILD" -j "$JOBS" --target flow_channel
grid="${FC_GRID:-flow_channel_70-28}"
exec "$TRIDI_ROOT/testcases/flow_channel/run.sh" "$BUILD" "$TRIDI_ROOT/out/$grid"
