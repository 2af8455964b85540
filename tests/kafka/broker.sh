#!/usr/bin/env bash
# Real Apache Kafka broker for the integration tests: one KRaft node
# (combined broker + controller) on loopback, run from the Maven Central
# jars of org.apache.kafka:kafka_2.13.
#
#   tests/kafka/broker.sh start       resolve the jars (once), format, start, wait
#   tests/kafka/broker.sh stop        stop it and delete its data dir
#   tests/kafka/broker.sh status      "running ..." (exit 0) or "stopped" (exit 3)
#   tests/kafka/broker.sh bootstrap   print 127.0.0.1:PORT
#   tests/kafka/broker.sh restart [kill]  stop (SIGTERM, or SIGKILL) and start
#                                     again on the same data
#   tests/kafka/broker.sh freeze|thaw SIGSTOP / SIGCONT the broker
#   tests/kafka/broker.sh version     print the resolved Kafka version
#
#   export GP_BOOTSTRAP="$(tests/kafka/broker.sh bootstrap)"
#
# Environment:
#   KAFKA_VERSION     3 | 3.9 (default, 3.9.2) | 4 | 4.1 (4.1.2) | a full x.y.z
#   GP_KAFKA_PORT     PLAINTEXT port (default 19092); the controller uses PORT+1
#   GP_KAFKA_DIR      data dir (default .cache/kafka-run/<version>); it is
#                     created by start and removed by stop
#   GP_KAFKA_HEAP     JVM heap (default 512m)
#   GP_KAFKA_JVM_OPTS extra JVM options (default: serial GC, C1 only: this
#                     runs on 2 shared cores)
#   GP_KAFKA_START_TIMEOUT seconds to wait for the broker (default 60)
#   GP_KAFKA_AUTO_CREATE   auto.create.topics.enable (default false; Kafka's
#                     own default is true)
#   JAVA_HOME / JAVA  which java to use (default: java on PATH, /usr/bin/java)
#   GP_KAFKA_LOG4J_VERSION  log4j2 version for 4.x jars (default: pom-4.x.xml's)
#
# Jars go to .cache/kafka/<version>/libs (git-ignored), resolved with
# `mvn dependency:copy-dependencies` on pom-3.9.xml or pom-4.x.xml beside
# this script; once there, no Maven call is made.
#
# `stop` with neither KAFKA_VERSION nor GP_KAFKA_DIR set stops every broker
# this script started under .cache/kafka-run/.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="$ROOT/.cache"
RUN_ROOT="$CACHE/kafka-run"

DEFAULT_3=3.9.2
DEFAULT_4=4.1.2

PORT="${GP_KAFKA_PORT:-19092}"
HEAP="${GP_KAFKA_HEAP:-512m}"
START_TIMEOUT="${GP_KAFKA_START_TIMEOUT:-60}"

log() { printf 'broker.sh: %s\n' "$*" >&2; }
die() { printf 'broker.sh: error: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
  exit 2
}

resolve_version() {
  local v="${KAFKA_VERSION:-}"
  case "$v" in
    ""|3|3.9) echo "$DEFAULT_3" ;;
    4|4.1)    echo "$DEFAULT_4" ;;
    [0-9]*.[0-9]*.[0-9]*) echo "$v" ;;
    *) die "KAFKA_VERSION='$v' is not 3, 3.9, 4, 4.1 or a full x.y.z version" ;;
  esac
}

VERSION="$(resolve_version)"
MAJOR="${VERSION%%.*}"
case "$PORT" in
  ''|*[!0-9]*) die "GP_KAFKA_PORT='$PORT' is not a port number" ;;
esac
CPORT=$((PORT + 1))
LIBS="$CACHE/kafka/$VERSION/libs"
DIR="${GP_KAFKA_DIR:-$RUN_ROOT/$VERSION}"
PIDFILE="$DIR/kafka.pid"

find_java() {
  local j=""
  if [ -n "${JAVA:-}" ]; then j="$(command -v "$JAVA" 2>/dev/null || echo "$JAVA")"
  elif [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ]; then j="$JAVA_HOME/bin/java"
  elif command -v java >/dev/null 2>&1; then j="$(command -v java)"
  elif [ -x /usr/bin/java ]; then j=/usr/bin/java
  fi
  if [ -z "$j" ] || [ ! -x "$j" ]; then die "no java found: install a JDK 17 (apt-get install openjdk-17-jre-headless) or set JAVA_HOME"; fi
  local spec
  spec="$("$j" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
  case "$spec" in
    1.*|''|[0-9]|1[0-6]) die "$j is Java '${spec:-?}'; Kafka $VERSION needs Java 17 or newer" ;;
  esac
  echo "$j"
}

# ---- jars -------------------------------------------------------------------

ensure_jars() {
  if [ -f "$LIBS/.complete" ]; then return 0; fi
  local pom
  case "$MAJOR" in
    3) pom="$HERE/pom-3.9.xml" ;;
    4) pom="$HERE/pom-4.x.xml" ;;
    *) die "no pom for Kafka major version $MAJOR (have 3 and 4)" ;;
  esac
  command -v mvn >/dev/null 2>&1 || die "mvn not found: apt-get install maven (needed once to fetch the Kafka $VERSION jars)"
  local tmp="$LIBS.tmp.$$" mlog="$CACHE/kafka/$VERSION/mvn.log"
  mkdir -p "$CACHE/kafka/$VERSION"
  rm -rf "$tmp"
  log "resolving org.apache.kafka:kafka_2.13:$VERSION and its dependencies from Maven Central (once)..."
  local t0=$SECONDS
  local extra=()
  if [ -n "${GP_KAFKA_LOG4J_VERSION:-}" ]; then extra+=("-Dlog4j.version=$GP_KAFKA_LOG4J_VERSION"); fi
  if ! mvn -q -B -f "$pom" -Dkafka.version="$VERSION" "${extra[@]}" -Dstyle.color=never \
        dependency:copy-dependencies -DoutputDirectory="$tmp" >"$mlog" 2>&1; then
    rm -rf "$tmp"
    tail -n 30 "$mlog" >&2 || true
    die "Maven could not resolve Kafka $VERSION (full log: $mlog)"
  fi
  [ -f "$tmp/kafka_2.13-$VERSION.jar" ] || { rm -rf "$tmp"; die "Maven ran but kafka_2.13-$VERSION.jar is missing from $tmp"; }
  rm -rf "$LIBS"
  mv "$tmp" "$LIBS"
  touch "$LIBS/.complete"
  local jars=("$LIBS"/*.jar)
  log "jars ready in $LIBS (${#jars[@]} jars, $((SECONDS - t0)) s)"
}

# ---- process ----------------------------------------------------------------

# pid of the broker owning $1 (a data dir), or nothing.
running_pid() {
  local d="$1" pid
  [ -f "$d/kafka.pid" ] || return 1
  pid="$(cat "$d/kafka.pid" 2>/dev/null || true)"
  case "$pid" in ''|*[!0-9]*) return 1 ;; esac
  kill -0 "$pid" 2>/dev/null || return 1
  # Guard against pid reuse: the process must be our kafka.Kafka on $d.
  local cmdline
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
  case "$cmdline" in *"kafka.Kafka $d/server.properties"*) echo "$pid" ;; *) return 1 ;; esac
}

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

write_config() {
  local quorum
  if [ "$MAJOR" -ge 4 ]; then
    # 4.x: dynamic quorum (KIP-853), formatted with --standalone.
    quorum="controller.quorum.bootstrap.servers=127.0.0.1:$CPORT"
  else
    # 3.9: static quorum.
    quorum="controller.quorum.voters=1@127.0.0.1:$CPORT"
  fi
  cat >"$DIR/server.properties" <<EOF
# Written by tests/kafka/broker.sh for Kafka $VERSION; recreated on each start.
process.roles=broker,controller
node.id=1
$quorum
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CPORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$DIR/data

num.partitions=1
# The tests write records with event (and Kafka) timestamps in the past;
# time-based retention would delete them under the test. Keep everything.
log.retention.ms=-1
default.replication.factor=1
auto.create.topics.enable=${GP_KAFKA_AUTO_CREATE:-false}
group.initial.rebalance.delay.ms=0

offsets.topic.replication.factor=1
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=8
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1

# Small: 2 shared cores, 512m heap.
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
background.threads=2
log.cleaner.threads=1
log.cleaner.dedupe.buffer.size=8388608
EOF

  if [ "$MAJOR" -ge 4 ]; then
    cat >"$DIR/log4j2.xml" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders>
    <File name="file" fileName="${sys:kafka.logs.dir}/server.log">
      <PatternLayout pattern="[%d] %p %m (%c)%n"/>
    </File>
  </Appenders>
  <Loggers>
    <Logger name="state.change.logger" level="WARN"/>
    <Logger name="kafka.request.logger" level="WARN"/>
    <Root level="INFO"><AppenderRef ref="file"/></Root>
  </Loggers>
</Configuration>
EOF
  else
    cat >"$DIR/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=${kafka.logs.dir}/server.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
EOF
  fi
}

# A Kafka Uuid: 16 random bytes, URL-safe base64 without padding; never
# one that starts with '-', which the storage tool would read as an option
# (as Kafka's own Uuid.randomUuid() avoids).
cluster_id() {
  local id
  while :; do
    id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
    [ "${id#-}" = "$id" ] && break
  done
  printf '%s' "$id"
}

log_tail() {
  local f
  for f in "$DIR/logs/server.log" "$DIR/logs/stdout.log"; do
    if [ -s "$f" ]; then
      printf -- '---- last lines of %s ----\n' "$f" >&2
      tail -n 40 "$f" >&2
    fi
  done
}

broker_answers() {
  if command -v kcat >/dev/null 2>&1; then
    local out
    out="$(kcat -L -b "127.0.0.1:$PORT" -m 3 2>/dev/null || true)"
    case "$out" in *" 1 brokers:"*) return 0 ;; *) return 1 ;; esac
  else
    port_in_use "$PORT"
  fi
}

# launch JAVA T0 JVM_OPTS...: start the broker on the formatted data dir and
# wait until it answers.
launch() {
  local java="$1" t0="$2" pid
  shift 2
  local jvm=("$@")
  log "starting Kafka $VERSION on 127.0.0.1:$PORT (controller $CPORT, dir $DIR)..."
  # setsid: the broker outlives this shell and its process group.
  setsid "$java" "${jvm[@]}" -cp "$LIBS/*" kafka.Kafka "$DIR/server.properties" \
    >"$DIR/logs/stdout.log" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PIDFILE"

  local deadline=$((SECONDS + START_TIMEOUT)) n=0
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log_tail
      rm -f "$PIDFILE"
      die "Kafka $VERSION exited during start-up (logs in $DIR/logs)"
    fi
    if grep -qs 'Kafka Server started' "$DIR/logs/server.log" && broker_answers; then
      break
    fi
    if [ "$SECONDS" -ge "$deadline" ]; then
      log_tail
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$PIDFILE"
      die "Kafka $VERSION did not answer on 127.0.0.1:$PORT within ${START_TIMEOUT}s (logs in $DIR/logs)"
    fi
    n=$((n + 1))
    [ $((n % 5)) -eq 0 ] && log "  waiting for the broker... $((SECONDS - t0)) s"
    sleep 1
  done
  log "Kafka $VERSION up on 127.0.0.1:$PORT (pid $pid, $((SECONDS - t0)) s)"
}

cmd_start() {
  local pid
  if pid="$(running_pid "$DIR")"; then
    log "Kafka $VERSION already running (pid $pid) on 127.0.0.1:$PORT"
    return 0
  fi
  if port_in_use "$PORT" || port_in_use "$CPORT"; then
    die "port $PORT or $CPORT on 127.0.0.1 is already in use (another broker? try: tests/kafka/broker.sh stop, or set GP_KAFKA_PORT)"
  fi
  local java
  java="$(find_java)"
  ensure_jars

  local t0=$SECONDS
  rm -rf "$DIR/data" "$DIR/logs" "$DIR/kafka.pid"
  mkdir -p "$DIR/data" "$DIR/logs"
  write_config

  local logopt
  if [ "$MAJOR" -ge 4 ]; then
    logopt="-Dlog4j2.configurationFile=$DIR/log4j2.xml"
  else
    logopt="-Dlog4j.configuration=file:$DIR/log4j.properties"
  fi
  # shellcheck disable=SC2206
  local jvm=(-Xms128m "-Xmx$HEAP" ${GP_KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1}
             -Djava.awt.headless=true "-Dkafka.logs.dir=$DIR/logs" "$logopt")

  local fmt=("$java" "${jvm[@]}" -cp "$LIBS/*" kafka.tools.StorageTool format
             -t "$(cluster_id)" -c "$DIR/server.properties")
  if [ "$MAJOR" -ge 4 ]; then fmt+=(--standalone); fi
  log "formatting $DIR/data (Kafka $VERSION)..."
  if ! "${fmt[@]}" >"$DIR/logs/format.log" 2>&1; then
    cat "$DIR/logs/format.log" >&2
    die "kafka.tools.StorageTool format failed"
  fi

  launch "$java" "$t0" "${jvm[@]}"
}

# stop_dir DIR: stop the broker of DIR (if any) and remove what start made.
stop_dir() {
  local d="$1" pid
  if pid="$(running_pid "$d")"; then
    log "stopping Kafka (pid $pid, dir $d)..."
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "  still alive after 30 s, killing"
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    log "stopped"
  fi
  # Remove only what start created, then the dir if it is empty.
  rm -rf "$d/data" "$d/logs" "$d/kafka.pid" "$d/server.properties" "$d/log4j.properties" "$d/log4j2.xml"
  rmdir "$d" 2>/dev/null || true
}

cmd_stop() {
  if [ -z "${KAFKA_VERSION:-}" ] && [ -z "${GP_KAFKA_DIR:-}" ]; then
    local d found=0
    for d in "$RUN_ROOT"/*/; do
      [ -d "$d" ] || continue
      found=1
      stop_dir "${d%/}"
    done
    [ "$found" = 1 ] || log "no broker running"
    return 0
  fi
  if ! running_pid "$DIR" >/dev/null; then log "Kafka $VERSION not running"; fi
  stop_dir "$DIR"
}

cmd_status() {
  local pid
  if pid="$(running_pid "$DIR")"; then
    if broker_answers; then
      echo "running: Kafka $VERSION pid $pid bootstrap 127.0.0.1:$PORT dir $DIR"
      return 0
    fi
    echo "starting or unresponsive: Kafka $VERSION pid $pid bootstrap 127.0.0.1:$PORT dir $DIR"
    return 1
  fi
  echo "stopped: Kafka $VERSION (dir $DIR)"
  return 3
}


# restart [kill]: stop the running broker (SIGTERM, or SIGKILL with "kill")
# and start it again on the same data: a broker outage while clients run.
cmd_restart() {
  local pid java t0=$SECONDS
  pid="$(running_pid "$DIR")" || die "Kafka $VERSION is not running"
  if [ "${1:-}" = kill ]; then kill -KILL "$pid"; else kill -TERM "$pid"; fi
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid"; sleep 0.5; }
  log "broker stopped (pid $pid); starting it again"
  rm -f "$PIDFILE"
  java="$(find_java)"
  local logopt
  if [ "$MAJOR" -ge 4 ]; then
    logopt="-Dlog4j2.configurationFile=$DIR/log4j2.xml"
  else
    logopt="-Dlog4j.configuration=file:$DIR/log4j.properties"
  fi
  mv "$DIR/logs/server.log" "$DIR/logs/server.log.$(date +%s)" 2>/dev/null || true
  # shellcheck disable=SC2206
  local jvm=(-Xms128m "-Xmx$HEAP" ${GP_KAFKA_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1}
             -Djava.awt.headless=true "-Dkafka.logs.dir=$DIR/logs" "$logopt")
  launch "$java" "$t0" "${jvm[@]}"
}

# freeze / thaw: SIGSTOP / SIGCONT the broker (a hung broker).
cmd_signal() {
  local pid
  pid="$(running_pid "$DIR")" || die "Kafka $VERSION is not running"
  kill "-$1" "$pid"
  log "sent SIG$1 to Kafka $VERSION (pid $pid)"
}

case "${1:-}" in
  start)     cmd_start ;;
  stop)      cmd_stop ;;
  status)    cmd_status ;;
  restart)   cmd_restart "${2:-}" ;;
  freeze)    cmd_signal STOP ;;
  thaw)      cmd_signal CONT ;;
  bootstrap) echo "127.0.0.1:$PORT" ;;
  version)   echo "$VERSION" ;;
  -h|--help|help) usage ;;
  *) usage ;;
esac
