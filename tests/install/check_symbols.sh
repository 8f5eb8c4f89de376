#!/usr/bin/env bash
# check_symbols.sh FAULT_INJECTION LIB...: the global symbols that tridi's static libraries define (nm) are
# the public API and tridi_-prefixed internals as C symbols (and the procedures of tridi's Fortran modules,
# __tridi*_MOD_*), C++ only inside namespace tridi_cuda (or the C++ library's own templates), and the test
# hooks tridi_test_* only in a build with TRIDI_FAULT_INJECTION (ON/OFF): a program linking libtridi.a
# meets no other name of tridi's.
set -euo pipefail
hooks="$1"; shift
# Mangled C++ names inside tridi_cuda, a tridi_-named type (tridi_cuda_state's members), an anonymous
# namespace (nvcc makes its names global, unique to their file by a hash, as it does the kernels'
# __device_stub__ functions) or std and __gnu_cxx (with the special names: vtables, typeinfo, guard
# variables, thread-local wrappers, local statics), and the language's and CUDA's own: operators new and
# delete, dim3's constructors (both emitted when not inlined).
cxx_ok='^_Z((T[VISTHW]|GV)?Z?N?[KVrLR]*(10tridi_cuda|[0-9]+tridi_|[0-9]+_GLOBAL__N_|S[tasiobd]|9__gnu_cxx)|(nw|na|dl|da)|N4dim3C|[0-9]+__device_stub__)'
fail=0
for lib in "$@"; do
  n=0
  while read -r member type name; do
    n=$((n + 1))
    why=""
    case "$name" in
      _Z*)
        if [[ ! "$name" =~ $cxx_ok ]]; then
          why="C++ outside namespace tridi_cuda: $(echo "$name" | c++filt)"
        fi ;;
      tridi_test_*)
        [ "${hooks^^}" = ON ] || why="test hook in a build without TRIDI_FAULT_INJECTION" ;;
      tridi_*|.gomp_critical_user_tridi_*|__tridi*_MOD_*) ;;
      DW.ref.*) ;; # the compiler's hidden references to the exception personality and typeinfo
      *) why="global symbol without the tridi_ prefix" ;;
    esac
    if [ -n "$why" ]; then
      echo "check_symbols: $(basename "$lib")($member): $name: $why"
      fail=1
    fi
  done < <(nm -A -g --defined-only "$lib" 2>/dev/null | sed -E 's/^[^:]*:([^:]*):[0-9a-fA-F]* ?/\1 /' | awk 'NF == 3')
  echo "check_symbols: $(basename "$lib"): $n global symbols checked"
done
exit "$fail"
