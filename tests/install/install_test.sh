#!/usr/bin/env bash
# install_test.sh BUILD SRC MPI FORTRAN [MPIEXEC]: tridi installed and used as a user would (decision 043).
#  1. BUILD (the static build ctest runs in) is installed into a temporary prefix, unless it has the
#     test-only hook (TRIDI_FAULT_INJECTION, as scripts/test.sh builds it): then `cmake --install` must
#     refuse it, naming the option, and install nothing;
#  2. a release build of SRC, library only (no tests, benchmarks or test cases; CPU only: the CUDA compile
#     would take most of CI's time), is configured, built and installed twice, static and shared; the
#     installed libraries must hold no test hook, the shared ones export only their public API
#     (check_exports.sh), carry the SONAME lib*.so.0.MINOR and a RUNPATH $ORIGIN;
#  3. against each prefix, outside projects are built and run, with no LD_LIBRARY_PATH: C through
#     find_package, pkg-config (without --static) and tridi-config; Fortran-only through find_package
#     (a preprocessed .F90 on tridi_version.h included), pkg-config and tridi-config; MPI C and MPI
#     Fortran on 2 ranks (MPI on) through find_package and pkg-config; the components: those built are
#     found, one not built (or unknown) leaves tridi_FOUND false and fails a REQUIRED find with a message
#     naming it; for the shared installs, ldd: a serial program loads no MPI or NCCL library, an MPI one
#     no CUDA library (CPU build).
# Neither the installed .pc files nor tridiTargets*.cmake may name the build or source tree or a library
# file by its path (a .pc may name the CUDA toolkit's and NCCL's directories, in variables that a
# consumer can redefine: cmake/install.cmake). CC and FC choose the compilers of the pkg-config consumers.
set -uo pipefail
build="$1"; src="$2"; mpi="${3:-OFF}"; fortran="${4:-OFF}"; mpiexec="${5:-mpiexec}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0
on() { case "${1^^}" in ON|1|TRUE|YES) return 0 ;; *) return 1 ;; esac; }
step() { echo "-- install test: $*"; }
# A failed check is reported and counted; the checks that do not depend on it still run.
fail() { echo "install test FAILED: $*" >&2; failures=$((failures + 1)); return 1; }
# Runs a command, printing its output only if it fails.
quiet() { local log="$work/log"; if ! "$@" >"$log" 2>&1; then cat "$log" >&2; fail "$*"; return 1; fi; }
# Runs a consumer program (or mpiexec with one), whose output is kept.
run() { env -u LD_LIBRARY_PATH "$@" || fail "$*"; }
# ldd of a program: none of the libraries matching the pattern may be loaded.
no_libs() {
  local prog="$1" pattern="$2" what="$3" found
  found="$(env -u LD_LIBRARY_PATH ldd "$prog" | grep -E "$pattern" || true)"
  if [ -n "$found" ]; then fail "$(basename "$prog") loads $what: $found"; else step "ldd $(basename "$prog"): loads no $what"; fi
}
# No installed library may hold the test-only failed-launch hook.
no_hook() {
  local f
  for f in $(find "$1" -name 'libtridi*' -type f); do
    if nm -A "$f" 2>/dev/null | grep -q 'tridi_test_fail_launch'; then fail "$f holds the test hook tridi_test_fail_launch"; fi
  done
}

consumers() {
  local prefix="$1" kind="$2" libdir
  libdir="$(dirname "$(find "$prefix" -name tridi.pc -path '*pkgconfig*' | head -n 1)")/.."
  libdir="$(cd "$libdir" && pwd)"
  local config="$libdir/cmake/tridi/tridiConfig.cmake"
  [ -f "$config" ] || { fail "$kind: no tridiConfig.cmake under $libdir/cmake/tridi"; return; }
  [ -f "$prefix/include/tridi.h" ] || fail "$kind: tridi.h not installed"
  if on "$mpi"; then [ -f "$prefix/include/tridi_mpi.h" ] || fail "$kind: tridi_mpi.h not installed"; fi
  # Paths of this machine: the build tree, the source tree, library files of the dependencies.
  [ -f "$prefix/include/tridi_version.h" ] || fail "$kind: tridi_version.h not installed"
  for f in LICENSE CHANGELOG.md; do [ -f "$prefix/share/doc/tridi/$f" ] || fail "$kind: $f not installed"; done
  for f in "$prefix/include/tridi.h" "$prefix/include/tridi_version.h" "$libdir"/pkgconfig/*.pc "$libdir"/cmake/tridi/*.cmake \
           "$prefix/bin/tridi-config"; do
    grep -q 'SPDX-License-Identifier: BSD-3-Clause' "$f" || fail "$kind: $f has no SPDX licence line"
  done
  no_hook "$prefix"
  for f in "$libdir"/pkgconfig/*.pc "$libdir"/cmake/tridi/tridiTargets*.cmake; do
    if grep -nE "$build|$src|/libnccl|/libcudart|/libmpi|/libgomp" "$f"; then fail "$kind: $f names a path of the build machine"; fi
  done
  local present=() missing=(bogus)
  for c in cuda mpi nccl fortran mohid; do
    if grep -q "set(tridi_${c}_FOUND ON)" "$config"; then present+=("$c"); else missing+=("$c"); fi
  done
  step "$kind: components built: ${present[*]:-none}; expected missing: ${missing[*]}"
  local cmake_args=(-DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release -DTRIDI_CONSUMER_MPI="$mpi")

  step "$kind: C project (find_package, components)"
  if quiet cmake -S "$here/consumer/c" -B "$work/$kind-c" "${cmake_args[@]}" \
       "-DTRIDI_CONSUMER_PRESENT=$(IFS=';'; echo "${present[*]}")" "-DTRIDI_CONSUMER_MISSING=$(IFS=';'; echo "${missing[*]}")" &&
     quiet cmake --build "$work/$kind-c" -j 2; then
    run "$work/$kind-c/consumer_c"
    if on "$mpi"; then run "$mpiexec" -n 2 --oversubscribe "$work/$kind-c/consumer_mpi_c"; fi
    if [ "$kind" = shared ]; then
      no_libs "$work/$kind-c/consumer_c" 'libmpi|libnccl|libtridi_mpi|libtridi_nccl' "MPI or NCCL library"
      if on "$mpi"; then no_libs "$work/$kind-c/consumer_mpi_c" 'libcuda|libnccl' "CUDA or NCCL library"; fi
    fi
  fi
  local want="${missing[1]:-bogus}" out
  if out="$(cmake -S "$here/consumer/require" -B "$work/$kind-require" "${cmake_args[@]}" \
            -DTRIDI_CONSUMER_WANT="$want" 2>&1)"; then
    fail "$kind: find_package(tridi REQUIRED COMPONENTS $want) succeeded without that component"
  fi
  if echo "$out" | grep -q "component '$want'"; then
    step "$kind: REQUIRED COMPONENTS $want fails:$(echo "$out" | grep -m 1 "component '$want'")"
  else
    echo "$out"; fail "$kind: the failure does not name component $want"
  fi

  step "$kind: C through pkg-config (no --static, no -Wl,-rpath of the consumer's own)"
  export PKG_CONFIG_PATH="$libdir/pkgconfig"
  # shellcheck disable=SC2046
  quiet "${CC:-cc}" "$here/consumer/consumer.c" -o "$work/$kind-pc_c" $(pkg-config --cflags --libs tridi) &&
    run "$work/$kind-pc_c"
  if on "$mpi"; then
    step "$kind: MPI C through pkg-config (tridi_mpi)"
    # shellcheck disable=SC2046
    quiet mpicc "$here/consumer/consumer_mpi.c" -o "$work/$kind-pc_mpi_c" $(pkg-config --cflags --libs tridi_mpi) &&
      run "$mpiexec" -n 2 --oversubscribe "$work/$kind-pc_mpi_c"
  fi
  step "$kind: C through tridi-config"
  "$prefix/bin/tridi-config" --all || fail "$kind: tridi-config --all"
  [ "$("$prefix/bin/tridi-config" --version)" = "tridi $(sed -n 's/^project(tridi VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")" ] ||
    fail "$kind: tridi-config --version"
  [ "$("$prefix/bin/tridi-config" --has-mpi)" = "$(on "$mpi" && echo yes || echo no)" ] || fail "$kind: tridi-config --has-mpi"
  # shellcheck disable=SC2046
  quiet "${CC:-cc}" "$here/consumer/consumer.c" -o "$work/$kind-tc_c" $("$prefix/bin/tridi-config" --cflags --libs) &&
    run "$work/$kind-tc_c"

  if on "$fortran"; then
    step "$kind: Fortran-only project (find_package)"
    if quiet cmake -S "$here/consumer/fortran" -B "$work/$kind-f" "${cmake_args[@]}" &&
       quiet cmake --build "$work/$kind-f" -j 2; then
      run "$work/$kind-f/consumer_f"
      run "$work/$kind-f/consumer_version_f"
      if on "$mpi"; then run "$mpiexec" -n 2 --oversubscribe "$work/$kind-f/consumer_mpi_f"; fi
      if [ "$kind" = shared ]; then
        no_libs "$work/$kind-f/consumer_f" 'libmpi|libnccl|libtridi_mpi|libtridi_nccl' "MPI or NCCL library"
      fi
    fi
    step "$kind: Fortran through pkg-config (tridi_mohid; no --static)"
    # shellcheck disable=SC2046
    quiet "${FC:-gfortran}" "$here/consumer/consumer.f90" -o "$work/$kind-pc_f" -J "$work" $(pkg-config --cflags --libs tridi_mohid) &&
      run "$work/$kind-pc_f"
    if on "$mpi"; then
      step "$kind: MPI Fortran through pkg-config (tridi_mpi_fortran)"
      # shellcheck disable=SC2046
      quiet mpifort "$here/consumer/consumer_mpi.f90" -o "$work/$kind-pc_mpi_f" -J "$work" \
        $(pkg-config --cflags --libs tridi_mpi_fortran) && run "$mpiexec" -n 2 --oversubscribe "$work/$kind-pc_mpi_f"
    fi
    step "$kind: preprocessed Fortran through tridi-config"
    # shellcheck disable=SC2046
    quiet "${FC:-gfortran}" -cpp "$here/consumer/consumer_version.F90" -o "$work/$kind-tc_f" -J "$work" \
      $("$prefix/bin/tridi-config" --fflags --flibs) && run "$work/$kind-tc_f"
  fi
  unset PKG_CONFIG_PATH
}

if grep -q '^TRIDI_FAULT_INJECTION:BOOL=ON' "$build/CMakeCache.txt"; then
  step "the test build $build has the test hook: cmake --install must refuse it"
  if out="$(cmake --install "$build" --prefix "$work/test-build" 2>&1)"; then
    fail "cmake --install of a build with TRIDI_FAULT_INJECTION=ON succeeded"
  elif ! echo "$out" | grep -q TRIDI_FAULT_INJECTION; then
    echo "$out"; fail "the refusal does not name TRIDI_FAULT_INJECTION"
  fi
  if [ -n "$(find "$work/test-build" -type f 2>/dev/null)" ]; then fail "the refused install left files"; fi
else
  step "installing the static test build $build"
  quiet cmake --install "$build" --prefix "$work/static-test" && consumers "$work/static-test" static-test
fi

release_opts=(-DCMAKE_BUILD_TYPE=Release -DTRIDI_ENABLE_CUDA=OFF -DTRIDI_ENABLE_MPI="$mpi" -DTRIDI_ENABLE_FORTRAN="$fortran"
              -DTRIDI_BUILD_TESTS=OFF -DTRIDI_BUILD_BENCH=OFF -DTRIDI_BUILD_TESTCASES=OFF)
for kind in static shared; do
  shared_libs=OFF; [ "$kind" = shared ] && shared_libs=ON
  step "configuring, building and installing a $kind release build of $src (library only, MPI $mpi, Fortran $fortran)"
  if quiet cmake -S "$src" -B "$work/$kind-build" "${release_opts[@]}" -DBUILD_SHARED_LIBS=$shared_libs &&
     quiet cmake --build "$work/$kind-build" -j 2 &&
     quiet cmake --install "$work/$kind-build" --prefix "$work/$kind"; then
    if [ "$kind" = shared ]; then
      lib="$(find "$work/shared" -name 'libtridi.so' | head -n 1)"
      libdir="$(dirname "$lib")"
      internal=("$src/src/tridi_internal.h" "$src/src/backend.h" "$src/src/mpi/mpi_internal.h" "$src/src/mpi/halo_internal.h"
        "$src/src/mpi/halo_backend.h")
      "$here/check_exports.sh" "$lib" "$work/shared/include/tridi.h" -- "${internal[@]}" ||
        fail "shared: libtridi exports more or less than the public API"
      if on "$mpi"; then
        "$here/check_exports.sh" "$libdir/libtridi_mpi.so" "$work/shared/include/tridi_mpi.h" -- "${internal[@]}" ||
          fail "shared: libtridi_mpi exports more or less than the public API"
        no_libs "$lib" 'libmpi' "MPI library"
      fi
      major_minor="$(sed -n 's/^#define TRIDI_VERSION_\(MAJOR\|MINOR\) \([0-9]*\).*/\2/p' "$src/include/tridi.h" | paste -sd.)"
      for l in "$libdir"/libtridi*.so; do
        name="$(basename "$l")"
        soname="$(readelf -d "$l" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
        if [ "$soname" = "$name.$major_minor" ]; then step "shared: SONAME $soname"
        else fail "shared: SONAME $soname, expected $name.$major_minor (the version file's SameMinorVersion)"; fi
        if [ "$name" != libtridi.so ]; then
          readelf -d "$l" | grep -qE 'RUNPATH.*\$ORIGIN' || fail "shared: $name has no RUNPATH \$ORIGIN"
        fi
      done
    fi
    consumers "$work/$kind" "$kind"
  fi
done
if [ "$failures" != 0 ]; then
  echo "install test: $failures check(s) FAILED" >&2
  exit 1
fi
echo "install test: the test build's install refused or used, static and shared release installs used by every consumer"
