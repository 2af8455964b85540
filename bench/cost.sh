#!/usr/bin/env bash
# Instructions per record of reading the event time and routing, counted by
# callgrind (a count, so it does not move with the machine's load):
#   bench/cost.sh [BUILD_DIR] [RECORDS]
# BUILD_DIR holds an optimised build (default build/release, made by make
# build); RECORDS defaults to 200000. Prints one line per mode and
#   cost: route=R kafka=K json=J avro=A metrics=M   (instructions per record;
#   metrics - kafka: what the /metrics counters add to each record)
set -euo pipefail
build=${1:-build/release}
n=${2:-200000}
bin=$build/bench/gp-cost
[ -x "$bin" ] || { echo "cost.sh: $bin not found: run make build first" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "cost.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
line="cost:"
for mode in route kafka json avro metrics; do
  valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$out/$mode" \
    "$bin" "$mode" "$n" >"$out/$mode.stdout" 2>"$out/$mode.log" \
    || { cat "$out/$mode.log" >&2; exit 1; }
  ir=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$out/$mode")
  per=$(( (ir + n / 2) / n ))
  printf '%-6s %s, %s instructions in the loop, %s per record\n' "$mode" \
    "$(cat "$out/$mode.stdout")" "$ir" "$per"
  line="$line $mode=$per"
done
echo "$line"
