#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs a consumer project through
# find_package(tridi) and a C program through pkg-config.
set -euo pipefail
build="$1"; src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer_c"
if [ -x "$work/consumer/consumer_f" ]; then "$work/consumer/consumer_f"; fi
export PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig:$work/prefix/lib64/pkgconfig:$work/prefix/lib/x86_64-linux-gnu/pkgconfig"
cc "$src/tests/install/consumer/consumer.c" -o "$work/pc_consumer" $(pkg-config --cflags --libs --static tridi)
"$work/pc_consumer"
echo "install test: find_package and pkg-config consumers ran"
