#!/usr/bin/env bash
# install_test.sh BUILD SRC MPI FORTRAN [MPIEXEC]: tridi installed and used as a user would.
#  1. BUILD (the static build ctest runs in) is installed into a temporary prefix;
#  2. a small shared build of SRC (CPU only, no tests, benchmarks or test cases: the CUDA compile would
#     take most of CI's time) is configured, built and installed into another; its libtridi must export
#     only the public API (check_exports.sh), carry the SONAME libtridi.so.0.MINOR, and libtridi_fortran
#     a RUNPATH $ORIGIN;
#  3. against each prefix, outside projects are built and run: C through find_package and through
#     pkg-config (without --static), Fortran-only through find_package and through pkg-config, MPI C and
#     MPI Fortran on 2 ranks (MPI on), and the components: those built are found, one not built (or
#     unknown) leaves tridi_FOUND false and fails a REQUIRED find with a message naming it.
# Neither the installed tridi.pc nor tridiTargets*.cmake may name the build or source tree or a library
# file by its path (tridi.pc may name the CUDA toolkit's and NCCL's directories, in variables that a
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
run() { "$@" || fail "$*"; }

consumers() {
  local prefix="$1" kind="$2" libdir
  libdir="$(dirname "$(find "$prefix" -name tridi.pc -path '*pkgconfig*' | head -n 1)")/.."
  libdir="$(cd "$libdir" && pwd)"
  local config="$libdir/cmake/tridi/tridiConfig.cmake"
  [ -f "$config" ] || { fail "$kind: no tridiConfig.cmake under $libdir/cmake/tridi"; return; }
  [ -f "$prefix/include/tridi.h" ] || fail "$kind: tridi.h not installed"
  if on "$mpi"; then [ -f "$prefix/include/tridi_mpi.h" ] || fail "$kind: tridi_mpi.h not installed"; fi
  # Paths of this machine: the build tree, the source tree, library files of the dependencies.
  for f in "$libdir/pkgconfig/tridi.pc" "$libdir"/cmake/tridi/tridiTargets*.cmake; do
    if grep -nE "$build|$src|/libnccl|/libcudart|/libmpi|/libgomp" "$f"; then fail "$kind: $f names a path of the build machine"; fi
  done
  local present=() missing=(bogus)
  for c in cuda mpi nccl fortran; do
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

  step "$kind: C through pkg-config (no --static)"
  export PKG_CONFIG_PATH="$libdir/pkgconfig"
  # shellcheck disable=SC2046
  quiet "${CC:-cc}" "$here/consumer/consumer.c" -o "$work/$kind-pc_c" $(pkg-config --cflags --libs tridi) -Wl,-rpath,"$libdir" &&
    run "$work/$kind-pc_c"

  if on "$fortran"; then
    step "$kind: Fortran-only project (find_package)"
    if quiet cmake -S "$here/consumer/fortran" -B "$work/$kind-f" "${cmake_args[@]}" &&
       quiet cmake --build "$work/$kind-f" -j 2; then
      run "$work/$kind-f/consumer_f"
      if on "$mpi"; then run "$mpiexec" -n 2 --oversubscribe "$work/$kind-f/consumer_mpi_f"; fi
    fi
    step "$kind: Fortran through pkg-config (no --static)"
    # shellcheck disable=SC2046
    quiet "${FC:-gfortran}" "$here/consumer/consumer.f90" -o "$work/$kind-pc_f" -J "$work" $(pkg-config --cflags --libs tridi_fortran) \
      -Wl,-rpath,"$libdir" && run "$work/$kind-pc_f"
  fi
  unset PKG_CONFIG_PATH
}

step "installing the static build $build"
quiet cmake --install "$build" --prefix "$work/static" && consumers "$work/static" static

step "configuring and building a shared CPU build of $src (MPI $mpi, Fortran $fortran)"
if quiet cmake -S "$src" -B "$work/shared-build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
     -DTRIDI_ENABLE_CUDA=OFF -DTRIDI_ENABLE_MPI="$mpi" -DTRIDI_ENABLE_FORTRAN="$fortran" \
     -DTRIDI_BUILD_TESTS=OFF -DTRIDI_BUILD_BENCH=OFF -DTRIDI_BUILD_TESTCASES=OFF &&
   quiet cmake --build "$work/shared-build" -j 2 --target tridi &&
   { [ "${fortran^^}" != ON ] || quiet cmake --build "$work/shared-build" -j 2 --target tridi_fortran; } &&
   quiet cmake --build "$work/shared-build" -j 2 --target tridi_example_c; then
  # The example links the shared library (and libm for itself) and runs.
  run "$work/shared-build/examples/tridi_example_c" >/dev/null
fi
if quiet cmake --install "$work/shared-build" --prefix "$work/shared"; then
  lib="$(find "$work/shared" -name 'libtridi.so' | head -n 1)"
  headers=("$work/shared/include/tridi.h")
  if on "$mpi"; then headers+=("$work/shared/include/tridi_mpi.h"); fi
  "$here/check_exports.sh" "$lib" "${headers[@]}" || fail "shared: libtridi exports more or less than the public API"
  major_minor="$(sed -n 's/^#define TRIDI_VERSION_\(MAJOR\|MINOR\) \([0-9]*\).*/\2/p' "$src/include/tridi.h" | paste -sd.)"
  soname="$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')"
  if [ "$soname" = "libtridi.so.$major_minor" ]; then step "shared: SONAME $soname"
  else fail "shared: SONAME $soname, expected libtridi.so.$major_minor (the version file's SameMinorVersion)"; fi
  if on "$fortran"; then
    readelf -d "$(dirname "$lib")/libtridi_fortran.so" | grep -qE 'RUNPATH.*\$ORIGIN' ||
      fail "shared: libtridi_fortran has no RUNPATH \$ORIGIN"
  fi
  consumers "$work/shared" shared
fi
if [ "$failures" != 0 ]; then
  echo "install test: $failures check(s) FAILED" >&2
  exit 1
fi
echo "install test: static and shared installs used by every consumer"
