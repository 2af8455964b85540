#!/usr/bin/env bash
# The benchmark's peer (issue 6): a Kafka Streams application with
# exactly_once_v2 that does gate-proxy's cutoff split (bench/streams/).
#
#   bench/streams.sh build          build the jar once (Maven), print its path
#   bench/streams.sh jar            print the jar's path (exit 3 if not built)
#   bench/streams.sh run ARGS...    build if needed, then run the app with ARGS
#                                   (bench/streams.sh run --help lists them)
#
# The jar is cached as .cache/bench/streams-<hash>.jar (git-ignored), the
# hash taken over bench/streams/pom.xml and the Java sources: an edit makes a
# new jar (and removes the old), an unchanged tree reuses the jar without
# calling Maven. Maven
# resolves into ~/.m2 (the first build downloads Kafka Streams 4.1.2 and the
# plugins from Maven Central, about 70 MB with RocksDB's native library).
#
# Environment:
#   JAVA_HOME / JAVA     which java to run (default: java on PATH); 17 or newer
#   GP_STREAMS_JVM_OPTS  JVM options, replacing the defaults below
#   GP_STREAMS_HEAP      heap size (default 512m)
#
# JVM defaults, for a 2-core machine shared with the broker and the load
# generator: -Xms256m -Xmx512m (the app keeps no state; 512m leaves room
# for the producer's 32 MB buffer and the fetch buffers with short GCs) and
# -XX:+UseSerialGC (G1 and Parallel would start GC and concurrent threads
# that compete for the same 2 cores; the garbage here is short-lived
# records, which a small young collection clears in a few ms on one
# thread). The JIT is left at its default (C1 then C2): unlike the broker,
# the app runs a hot loop for the whole benchmark, and C2 code is what a
# user's deployment would run. -Xss is default; no -XX:+AlwaysPreTouch
# (it would lengthen start-up).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
SRC="$HERE/streams"
CACHE="$ROOT/.cache/bench"

log() { printf 'streams.sh: %s\n' "$*" >&2; }
die() { printf 'streams.sh: error: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
  exit 2
}

find_java() {
  local j=""
  if [ -n "${JAVA:-}" ]; then j="$(command -v "$JAVA" 2>/dev/null || echo "$JAVA")"
  elif [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then j="$JAVA_HOME/bin/java"
  elif command -v java >/dev/null 2>&1; then j="$(command -v java)"
  fi
  if [ -z "$j" ] || [ ! -x "$j" ]; then die "no java found: set JAVA_HOME or put a JDK 17+ on PATH"; fi
  local spec
  spec="$("$j" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
  case "$spec" in
    1.*|''|[0-9]|1[0-6]) die "$j is Java '${spec:-?}'; Kafka Streams 4.1 needs Java 17 or newer" ;;
  esac
  echo "$j"
}

# The hash of what the jar is built from: the pom and the Java sources,
# names and contents, in a stable order.
src_hash() {
  (cd "$SRC" && find pom.xml src -type f -name '*.java' -o -type f -name pom.xml | LC_ALL=C sort |
     while read -r f; do printf '%s\n' "$f"; cat "$f"; done) | sha256sum | cut -c1-16
}

jar_path() {
  echo "$CACHE/streams-$(src_hash).jar"
}

cmd_build() {
  local jar
  jar="$(jar_path)"
  if [ -s "$jar" ]; then
    log "jar up to date: $jar"
    echo "$jar"
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || die "mvn not found (apt-get install maven)"
  find_java >/dev/null
  mkdir -p "$CACHE"
  # Build out of the source tree, so no target/ appears under bench/streams.
  local work="$CACHE/streams-build.$$" mlog="$CACHE/streams-build.log" t0=$SECONDS
  rm -rf "$work"
  mkdir -p "$work"
  cp -r "$SRC/pom.xml" "$SRC/src" "$work/"
  log "building $(basename "$jar") with Maven (Kafka Streams 4.1.2; the first build downloads the dependencies)..."
  nice -n 5 mvn -q -B -f "$work/pom.xml" -Dstyle.color=never package >"$mlog" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if kill -0 "$pid" 2>/dev/null && [ $(((SECONDS - t0) % 15)) -eq 0 ]; then
      log "  still building... $((SECONDS - t0)) s"
    fi
  done
  if ! wait "$pid"; then
    tail -n 40 "$mlog" >&2 || true
    rm -rf "$work"
    die "Maven build failed (full log: $mlog)"
  fi
  [ -s "$work/target/streams-split.jar" ] || { rm -rf "$work"; die "Maven ran but target/streams-split.jar is missing"; }
  mv "$work/target/streams-split.jar" "$jar.tmp.$$"
  mv "$jar.tmp.$$" "$jar"
  rm -rf "$work"
  # Jars of earlier sources (92 MB each) are not kept.
  local old
  for old in "$CACHE"/streams-*.jar; do
    [ "$old" = "$jar" ] || rm -f "$old"
  done
  log "built $jar ($(du -h "$jar" | cut -f1), $((SECONDS - t0)) s)"
  echo "$jar"
}

cmd_jar() {
  local jar
  jar="$(jar_path)"
  [ -s "$jar" ] || { log "not built: run bench/streams.sh build"; exit 3; }
  echo "$jar"
}

cmd_run() {
  local jar java
  jar="$(jar_path)"
  [ -s "$jar" ] || cmd_build >/dev/null
  java="$(find_java)"
  # shellcheck disable=SC2206
  local jvm=(${GP_STREAMS_JVM_OPTS:--Xms256m "-Xmx${GP_STREAMS_HEAP:-512m}" -XX:+UseSerialGC}
             -Djava.awt.headless=true)
  exec "$java" "${jvm[@]}" -jar "$jar" "$@"
}

case "${1:-}" in
  build) cmd_build ;;
  jar)   cmd_jar ;;
  run)   shift; cmd_run "$@" ;;
  -h|--help|help) usage ;;
  *) usage ;;
esac
