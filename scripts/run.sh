#!/usr/bin/env bash
# The README's main command: installs dependencies, builds tridi (with CUDA when nvcc is present) and runs
# the flow_channel_70-28 case on the GPU when there is one, else on the CPU; writes NetCDF + PNGs under
# out/flow_channel_70-28/ and prints the timing table. FC_GRID / FC_HOURS / FC_BACKEND override the case.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
"$TRIDI_ROOT/scripts/install-deps.sh"
BUILD="${TRIDI_BUILD_DIR:-$TRIDI_ROOT/build}"
cmake -S "$TRIDI_ROOT" -B "$BUILD" "${CMAKE_OPTS[@]}" -DTRIDI_FAULT_INJECTION=OFF # test.sh turns the test-only hook on in the same build folder
cmake --build "$BUILD" -j "$JOBS" --target flow_channel
grid="${FC_GRID:-flow_channel_70-28}"
exec "$TRIDI_ROOT/testcases/flow_channel/run.sh" "$BUILD" "$TRIDI_ROOT/out/$grid"
