#!/usr/bin/env bash
# tests/lint.sh can fail: on a copy of the C sources, each wrong-way
# include below is injected alone, and lint.sh must fail naming its file
# and line; the unchanged copy must pass.
#   tests/lint_selftest.sh [REPO_DIR]
set -euo pipefail
repo=$(cd "${1:-$(dirname "$0")/..}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$repo"
copy() {
  rm -rf "$tmp/tree"
  mkdir -p "$tmp/tree/tests"
  cp "$repo/tests/lint.sh" "$tmp/tree/tests/"
  find gate k8s proxy tests bench -name '*.[ch]' -print0 | tar --null -cf - -T - | tar -xf - -C "$tmp/tree"
}
copy
bash "$tmp/tree/tests/lint.sh" "$tmp/tree" >/dev/null 2>&1 || {
  echo "lint_selftest: the unchanged tree does not pass lint.sh" >&2
  bash "$tmp/tree/tests/lint.sh" "$tmp/tree"
  exit 1
}
fails=0
# FILE|LINE TO APPEND|WHAT lint.sh must name
cases=(
  'proxy/loop/record.c|#include "proxy/cmd/demo.h"|proxy/loop/ includes proxy/cmd/'
  'proxy/control/status.c|#include "proxy/loop/proxy.h"|proxy/control/ includes proxy/loop/'
  'proxy/schema/registry.c|#include "proxy/control/ctl.h"|proxy/schema/ includes proxy/control/'
  'proxy/base/log.c|#include "proxy/conf/conf.h"|proxy/base/ includes proxy/conf/'
  'proxy/ops/verbs.c|#include "proxy/obs/endpoints.h"|proxy/ops/ includes proxy/obs/'
  'tests/unit/test_conf.c|#include "proxy/cmd/demo.h"|nothing includes the commands'
  'k8s/client.c|#include "proxy/loop/proxy.h"|k8s/ reaches into proxy/'
  'gate/gate.c|#include <pthread.h>|gate/ includes more than libc'
  'proxy/stray.c|int x;|a source of proxy/ outside its rooms'
)
for c in "${cases[@]}"; do
  IFS='|' read -r file line want <<<"$c"
  copy
  printf '%s\n' "$line" >>"$tmp/tree/$file"
  if out=$(bash "$tmp/tree/tests/lint.sh" "$tmp/tree" 2>&1); then
    echo "lint_selftest: FAIL: lint.sh passed with '$line' in $file" >&2
    fails=$((fails + 1))
  elif ! grep -qF "$want" <<<"$out" || ! grep -qF "$file" <<<"$out"; then
    echo "lint_selftest: FAIL: lint.sh failed on '$line' in $file but did not say '$want' and the file:" >&2
    echo "$out" >&2
    fails=$((fails + 1))
  else
    echo "lint_selftest: refused: $(grep -F "$file" <<<"$out" | head -1)"
  fi
done
[ $fails -eq 0 ] || exit 1
echo "lint_selftest: ${#cases[@]} wrong-way includes injected, each refused"
