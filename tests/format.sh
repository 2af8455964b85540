#!/usr/bin/env bash
# The C sources against .clang-format (clang-format 14, Debian 12's).
#   tests/format.sh check   fails, naming each file that differs and its
#                           first differing lines
#   tests/format.sh fix     rewrites them in place (make format)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
cf=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$cf" ]; then
  echo "format: clang-format-14 is missing (scripts/install-deps.sh test installs it)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files -- 'gate/*.[ch]' 'os/*.[ch]' 'k8s/*.[ch]' 'proxy/*.[ch]' \
  'tests/*.[ch]' 'bench/*.[ch]' 2>/dev/null || find gate os k8s proxy tests bench -name '*.[ch]')
case "$mode" in
  fix)
    "$cf" -i "${files[@]}"
    echo "format: ${#files[@]} files formatted"
    ;;
  check)
    bad=0
    for f in "${files[@]}"; do
      if ! out=$("$cf" "$f" | diff -u "$f" - ); then
        echo "format: $f differs from .clang-format (make format rewrites it):" >&2
        sed -n '3,14p' <<<"$out" >&2
        bad=$((bad + 1))
      fi
    done
    if [ $bad -ne 0 ]; then
      echo "format: $bad of ${#files[@]} files differ" >&2
      exit 1
    fi
    echo "format: ${#files[@]} files as .clang-format has them"
    ;;
  *) echo "usage: tests/format.sh check|fix" >&2; exit 2 ;;
esac
