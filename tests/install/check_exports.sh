#!/usr/bin/env bash
# check_exports.sh LIB HEADER... [-- INTERNAL_HEADER...]: the functions a shared tridi library exports (nm -D
# --defined-only) must be exactly those the headers declare with TRIDI_API, plus any of the internal
# functions another of tridi's libraries calls (declared with TRIDI_PRIVATE in the internal headers,
# decision 043). Fails on an internal symbol that leaks (a missing
# hidden visibility, a static archive linked in without --exclude-libs) and on a public function that is
# not exported (a declaration without TRIDI_API), and on a declaration in the headers without TRIDI_API.
set -euo pipefail
lib="$1"; shift
headers=(); internal=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do headers+=("$1"); shift; done
[ $# -gt 0 ] && shift
internal=("$@")
set -- "${headers[@]:-/dev/null}"
fail=0
# Declarations: a line starting with a return type and a tridi_ function name, at the header's top level.
undecorated="$(grep -hnE '^(const )?[a-z_]+[ *]+tridi_[a-z0-9_]+\(' "$@" || true)"
if [ -n "$undecorated" ]; then
  echo "check_exports: public declarations without TRIDI_API:"; echo "$undecorated"; fail=1
fi
public="$( (grep -hoE '^TRIDI_API [^(]*\btridi_[a-z0-9_]+\(' "$@" | grep -oE 'tridi_[a-z0-9_]+\($' | tr -d '(' || true) | sort -u)"
# Symbols the linker itself defines in every shared object.
linker='^(_init|_fini|_edata|_end|__bss_start)$'
exported="$(nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | grep -vE "$linker" | sort -u)"
private=""
if [ ${#internal[@]} -gt 0 ]; then
  private="$( (grep -hoE 'TRIDI_PRIVATE [^(;]*\btridi_[a-z0-9_]+[(;]' "${internal[@]}" | grep -oE 'tridi_[a-z0-9_]+[(;]$' | tr -d '(;' || true) | sort -u)"
fi
leaked="$(comm -13 <(echo "$public") <(echo "$exported") | comm -23 - <(echo "$private"))"
missing="$(comm -23 <(echo "$public") <(echo "$exported"))"
if [ -n "$leaked" ]; then
  echo "check_exports: $(echo "$leaked" | wc -l) symbol(s) exported by $lib that no header declares with TRIDI_API:"
  echo "$leaked" | head -50; fail=1
fi
if [ -n "$missing" ]; then
  echo "check_exports: public functions not exported by $lib:"; echo "$missing"; fail=1
fi
nprivate="$(comm -12 <(echo "$private") <(echo "$exported") | grep -c . || true)"
[ "$fail" = 0 ] && echo "check_exports: $lib exports the $(echo "$public" | grep -c .) public functions, $nprivate internal ones of tridi's other libraries and nothing else"
exit "$fail"
