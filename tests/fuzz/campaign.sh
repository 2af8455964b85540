#!/usr/bin/env bash
# A libFuzzer campaign: every fuzz target (or those named) for MINUTES each,
# two at a time, ASan and UBSan on, each on a copy of its seed corpus (new
# inputs do not land in the tree). One line per target at the end.
#   tests/fuzz/campaign.sh [MINUTES] [TARGET...]     (default 10, all)
# Builds build/fuzz with clang first. A finding stops that target and leaves
# the input under /tmp/gp-fuzz/<target>/art/: add it to corpus/<target>/
# once fixed.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
min=${1:-10}
[ $# -gt 0 ] && shift
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=($(ls "$top/tests/fuzz/corpus"))
cmake -S "$top" -B "$top/build/fuzz" -G Ninja -DCMAKE_C_COMPILER=clang -DGP_FUZZ=ON \
  -DGP_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$top/build/fuzz" >/dev/null
out=/tmp/gp-fuzz
mkdir -p "$out"
one() {
  local t=$1 d=$out/$1
  rm -rf "$d"; mkdir -p "$d/corpus" "$d/art"
  cp "$top/tests/fuzz/corpus/$t/"* "$d/corpus/"
  local rc=0
  "$top/build/fuzz/tests/fuzz/fuzz_$t" -max_total_time=$((min * 60)) -print_final_stats=1 \
    -rss_limit_mb=2048 -artifact_prefix="$d/art/" "$d/corpus" >"$d/log" 2>&1 || rc=$?
  printf '%-10s rc=%s executions=%s edges=%s corpus=%s findings=%s\n' "$t" $rc \
    "$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/log")" \
    "$(grep -o 'cov: [0-9]*' "$d/log" | tail -1 | cut -d' ' -f2)" \
    "$(ls "$d/corpus" | wc -l)" "$(ls "$d/art" | wc -l)"
}
echo "fuzzing ${#targets[@]} targets for $min minutes each, two at a time" >&2
for ((i = 0; i < ${#targets[@]}; i += 2)); do
  one "${targets[$i]}" &
  [ $((i + 1)) -lt ${#targets[@]} ] && one "${targets[$((i + 1))]}" &
  wait
done
