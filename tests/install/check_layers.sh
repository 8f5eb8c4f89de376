#!/usr/bin/env bash
# check_layers.sh SRC: what the tree promises about its layers (docs/architecture.md): the environment is
# read only in src/tuning.c (getenv), and src/ makes no CUDA runtime call (the backend's are in cuda/,
# reached through src/tridi_internal.h, src/mpi/mpi_device.h and src/mpi/halo_backend.h; decisions 049, 050),
# src/adi_*.c never test the backend (decision 055), and every source file of src, cuda, fortran and
# adapter stays within 700 lines, its header comment within 10.
set -uo pipefail
src="$1"
fail=0
cd "$src" || exit 1
while IFS= read -r hit; do
  echo "check_layers: getenv outside src/tuning.c: $hit"; fail=1
done < <(grep -rnE '\b(secure_)?getenv\b|get_environment_variable' src cuda adapter fortran | grep -v '^src/tuning\.c:')
while IFS= read -r hit; do
  echo "check_layers: CUDA runtime call in src/: $hit"; fail=1
done < <(grep -rnE '\bcuda[A-Z][A-Za-z]*[[:space:]]*\(' src --include='*.c' --include='*.h')
while IFS= read -r hit; do
  echo "check_layers: ADI asks which backend it runs on (decision 055: the table's adi operations): $hit"; fail=1
done < <(grep -nE 'TRIDI_HAVE_CUDA|TRIDI_BACKEND_CUDA|->cuda\b' src/adi*.c src/adi*.inc)
while IFS= read -r f; do
  n=$(wc -l <"$f")
  [ "$n" -gt 700 ] && { echo "check_layers: $f has $n lines (at most 700: split it by concept)"; fail=1; }
  h=$(awk '/^(\/\/|\/\*| \*|\*\/|!)/ {c++; next} {print c + 0; exit}' "$f")
  [ "${h:-0}" -gt 10 ] && { echo "check_layers: $f opens with a $h-line comment (at most 10)"; fail=1; }
done < <(find src cuda fortran adapter include -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \
  -o -name '*.f90' -o -name '*.fypp' -o -name '*.inc' \) | sort)
[ "$fail" = 0 ] && echo "check_layers: getenv only in src/tuning.c; no CUDA runtime call in src/; ADI through its table; files within 700 lines, headers within 10"
exit "$fail"
