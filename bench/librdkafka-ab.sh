#!/usr/bin/env bash
# make bench-librdkafka: gate-proxy and the librdkafka passthrough limit on
# two librdkafkas, interleaved in one run of bench/run.sh on one broker:
#   this  BUILD_DIR, linked with the librdkafka make builds (2.14.2);
#   base  the same sources (or BASE_COMMIT's) built against the system's
#         librdkafka (Debian 12: 2.0.2) in BUILD_DIR-system.
#   bench/librdkafka-ab.sh BUILD_DIR
# The summary's "ab:" lines give this build's rate over the base's, round by
# round, for gate-proxy exactly-once (eos) and for the limit (limit); the
# throughput table gives each one's records/s and CPU seconds per million.
# BENCH_REPEATS, BENCH_RECORDS, BENCH_SIZES, ... as for bench/run.sh.
set -euo pipefail
build=$(cd "${1:?usage: bench/librdkafka-ab.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
base=$build-system
src=$top
if [ -n "${BASE_COMMIT:-}" ]; then
  src=$base-src
  rm -rf "$src"
  mkdir -p "$src"
  git -C "$top" archive "$BASE_COMMIT" | tar -x -C "$src"
fi
pkg-config --exists rdkafka ||
  { echo "bench: no system librdkafka (scripts/install-deps.sh system-librdkafka)" >&2; exit 2; }
cmake -S "$src" -B "$base" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
  -DGP_LIBRDKAFKA= >/dev/null
cmake --build "$base" --target gate-proxy gp-passthrough >/dev/null
echo "bench: this: $("$build/gate-proxy" --version | head -1); base: $("$base/gate-proxy" --version | head -1)${BASE_COMMIT:+ at $BASE_COMMIT}" >&2
BENCH_BASE_BIN=$base/gate-proxy BENCH_BASE_PASS=$base/bench/gp-passthrough \
  BENCH_CONTENDERS=${BENCH_CONTENDERS:-proxy_eos proxy_eos_base limit limit_base} \
  BENCH_SCALING=${BENCH_SCALING:-0} exec "$top/bench/run.sh" "$build"
