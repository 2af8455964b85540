#!/usr/bin/env bash
# The soak: exactly-once under faults, for minutes on end (make soak).
#
#   tests/soak.sh BUILD_DIR        (make soak: BUILD_DIR = build/test)
#
# On its own Kafka broker (tests/kafka/broker.sh), it runs gate-proxy on one
# source topic while, at the same time:
#   - gp-produce writes records at SOAK_RATE a second (one process, stopped
#     with SIGSTOP while a hop starts);
#   - cutovers go back and forth (blue -> green, finish, green -> blue, ...)
#     every few seconds, each one a "hop";
#   - the proxy is killed at random (SIGKILL, or SIGTERM for a clean stop)
#     and started again at once by a supervisor loop;
#   - the broker is restarted a few times (SIGTERM and SIGKILL alternately).
# A hop starts with the producer paused and the proxy drained (everything
# produced so far routed), so the source end offsets at its start are exact:
# each hop is judged on the records produced from its start to the next
# hop's start. At the end production stops, the proxy drains and stops, and
# gp-check proves, over everything: every record exactly once across the
# colour topics, in source order (no cutoff), and for every hop the split by
# its T (gp-check --hops: one line per hop, "T OLD since-offsets").
#
# A progress line every 10 s; at the end one summary line:
#   soak: minutes=M hops=H kills=K broker_restarts=B checked=N duplicates=D
#         missing=M reordered=R misrouted=X
# Exit 0 when everything holds; 1 on any problem (a checker finding, a hop
# that does not finish, a sanitizer report, an unexpected proxy exit, ...).
#
# Environment:
#   SOAK_MINUTES           how long to run the faults (default 30)
#   SOAK_RATE              records a second (default 2000)
#   SOAK_PARTITIONS        partitions of the source topic (default 4)
#   SOAK_KILL_MIN/MAX_S    seconds between two proxy kills, uniform (default 8, 30)
#   SOAK_SIGTERM_PCT       share of the kills that are SIGTERM (default 30)
#   SOAK_BROKER_RESTARTS   broker restarts, spread evenly (default 3 + minutes/15)
#   SOAK_HOP_PAUSE_MAX_S   longest steady time between two hops (default 2)
#   SOAK_SEED              seed of the random choices (default: the time)
#   SOAK_PROXY_CONF        extra proxy settings, "key=value key=value ..." (e.g.
#                          gate.delivery=at-least-once, to see the soak catch
#                          the duplicates a crash then makes)
#   SOAK_KEEP=1            keep the broker running and the work dir at the end
#   KAFKA_VERSION          broker version (default 3.9; 4 for 4.x)
#   GP_KAFKA_PORT          broker port (default 19192, so make test's 19092 is
#                          left alone)
#   GP_KAFKA_DIR           broker data dir (default .cache/kafka-run/soak-<version>)
#   GP_BIN, GP_CHECK, GP_PRODUCE  override the binaries of BUILD_DIR
set -uo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:?usage: tests/soak.sh BUILD_DIR}" && pwd) || exit 2
GP_BIN=${GP_BIN:-$BUILD/gate-proxy}
GP_CHECK=${GP_CHECK:-$BUILD/tests/tools/gp-check}
GP_PRODUCE=${GP_PRODUCE:-$BUILD/tests/tools/gp-produce}
for b in "$GP_BIN" "$GP_CHECK" "$GP_PRODUCE"; do
  [ -x "$b" ] || { echo "soak: $b is missing: build first (make build-test)" >&2; exit 2; }
done

MINUTES=${SOAK_MINUTES:-30}
RATE=${SOAK_RATE:-2000}
PARTS=${SOAK_PARTITIONS:-4}
KILL_MIN=${SOAK_KILL_MIN_S:-8}
KILL_MAX=${SOAK_KILL_MAX_S:-30}
TERM_PCT=${SOAK_SIGTERM_PCT:-30}
BROKER_RESTARTS=${SOAK_BROKER_RESTARTS:-$((3 + MINUTES / 15))}
HOP_PAUSE_MAX=${SOAK_HOP_PAUSE_MAX_S:-2}
SEED=${SOAK_SEED:-$(date +%s)}
for v in MINUTES RATE PARTS KILL_MIN KILL_MAX TERM_PCT BROKER_RESTARTS HOP_PAUSE_MAX SEED; do
  case "${!v}" in ''|*[!0-9]*) echo "soak: $v='${!v}' is not a whole number" >&2; exit 2 ;; esac
done
[ "$RATE" -gt 0 ] && [ "$PARTS" -gt 0 ] && [ "$KILL_MAX" -ge "$KILL_MIN" ] && [ "$KILL_MIN" -gt 0 ] \
  || { echo "soak: SOAK_RATE, SOAK_PARTITIONS, SOAK_KILL_MIN_S must be > 0 and MAX >= MIN" >&2; exit 2; }

export KAFKA_VERSION=${KAFKA_VERSION:-3.9}
export GP_KAFKA_PORT=${GP_KAFKA_PORT:-19192}
export GP_KAFKA_DIR=${GP_KAFKA_DIR:-$ROOT/.cache/kafka-run/soak-$KAFKA_VERSION}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
BROKER=$ROOT/tests/kafka/broker.sh
BOOT=127.0.0.1:$GP_KAFKA_PORT

if "$BROKER" status >/dev/null 2>&1; then
  echo "soak: a broker already runs in $GP_KAFKA_DIR (port $GP_KAFKA_PORT); the soak restarts" >&2
  echo "soak: its broker, so it starts its own: stop that one, or set GP_KAFKA_PORT and GP_KAFKA_DIR" >&2
  exit 2
fi
W=$(mktemp -d /tmp/gp-soak.XXXXXX)
CM=$W/cm.json
S=gp-soak-$(date +%s)
# Event time runs at RATE ms a second (ts-step 1): start far enough in the
# past that it stays behind the wall clock (Kafka 4 refuses timestamps more
# than an hour ahead) for hours.
BASE=$(( ($(date +%s) - 6 * 3600) * 1000 ))
BROKER_STARTED=0
BG_PIDS=()
T0=$(date +%s)

say() { printf '[%s] soak: %s\n' "$(date +%T)" "$*"; }
problem() { say "PROBLEM: $*"; echo "$*" >>"$W/problems"; }
elapsed() { echo $(( $(date +%s) - T0 )); }
lines() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }

cleanup() {
  local rc=$?
  touch "$W/stop-producing" "$W/stop-chaos" "$W/stop-proxy" "$W/stop-progress"
  local pid
  if [ -f "$W/proxy.pid" ]; then
    pid=$(cat "$W/proxy.pid" 2>/dev/null || true)
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  fi
  for pid in "${BG_PIDS[@]+"${BG_PIDS[@]}"}"; do
    pkill -9 -P "$pid" 2>/dev/null   # its gp-produce / sleep children
    kill -9 "$pid" 2>/dev/null
  done
  wait 2>/dev/null
  if [ "$BROKER_STARTED" = 1 ] && [ "${SOAK_KEEP:-0}" != 1 ]; then
    "$BROKER" stop >/dev/null 2>&1 || true
  fi
  if [ $rc -eq 0 ] && [ "${SOAK_KEEP:-0}" != 1 ]; then
    rm -rf "$W"
  else
    echo "soak: logs kept in $W (proxy.log, producer.log, chaos.log, check-*.txt)" >&2
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# key NAME: a data key of the control map ("" when absent)
key() {
  python3 - "$CM" "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1])).get("data") or {}
except Exception:
    d = {}
print(d.get(sys.argv[2], ""))
PY
}
# routed: records the proxy has committed, from its status keys
routed() {
  python3 - "$CM" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1])).get("data") or {}
    print(sum(int(d.get("gate-proxy.count." + k) or 0) for k in ("blue", "green", "dlq")))
except Exception:
    print(-1)
PY
}
# end_offsets: the source's end offsets as P:OFF,... ("" when the broker is away)
end_offsets() {
  "$GP_CHECK" --bootstrap "$BOOT" --source "$S" --end-offsets --timeout-ms 5000 2>/dev/null
}
total_of() { # total_of P:OFF,...
  local t=0 kv
  for kv in ${1//,/ }; do t=$((t + ${kv#*:})); done
  echo $t
}
# wait_until SECONDS COMMAND...: polls every 0.5 s; 1 on timeout
wait_until() {
  local secs=$1; shift
  local end=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || return 1
    sleep 0.5
  done
}
key_is() { [ "$(key "$1")" = "$2" ]; }
# drained: the producer is paused (or done) and every produced record is
# routed; DRAINED_AT holds the end offsets then
drained() {
  local off
  off=$(end_offsets) || return 1
  [ -n "$off" ] || return 1
  [ "$(routed)" -eq "$(total_of "$off")" ] || return 1
  DRAINED_AT=$off
}

# ---- broker ----------------------------------------------------------------
say "starting Kafka $KAFKA_VERSION on $BOOT (dir $GP_KAFKA_DIR)"
"$BROKER" start >"$W/broker.log" 2>&1 || { cat "$W/broker.log" >&2; echo "soak: the broker did not start" >&2; exit 1; }
BROKER_STARTED=1

say "minutes=$MINUTES rate=$RATE/s partitions=$PARTS kills every ${KILL_MIN}-${KILL_MAX} s" \
    "(${TERM_PCT}% SIGTERM) broker_restarts=$BROKER_RESTARTS seed=$SEED topic=$S work=$W"
"$GP_PRODUCE" --bootstrap "$BOOT" --topic "$S" --count 0 --partitions-hint "$PARTS" --quiet >/dev/null \
  || { echo "soak: cannot create $S" >&2; exit 1; }
"$GP_BIN" init --control "$CM" >/dev/null || exit 1
cat >"$W/p.conf" <<EOF
kafka.bootstrap.servers=$BOOT
gate.pipeline=soak-$$
gate.source.topics=$S
gate.event-time=json:ts
gate.topics.create=true
gate.dlq.topic=$S.dlq
gate.watermark.out-of-orderness.ms=200
gate.watermark.idle.ms=2000
gate.lateness.ms=1000
control.file=$CM
kafka.transaction.timeout.ms=10000
EOF
for kv in ${SOAK_PROXY_CONF:-}; do echo "$kv" >>"$W/p.conf"; done

# ---- the proxy, restarted whenever it stops ------------------------------------
(
  while [ ! -e "$W/stop-proxy" ]; do
    "$GP_BIN" run -c "$W/p.conf" >>"$W/proxy.log" 2>&1 &
    pid=$!
    echo "$pid" >"$W/proxy.pid"
    wait "$pid"
    rc=$?
    echo "$(date +%s) $rc" >>"$W/exits"
    [ -e "$W/stop-proxy" ] && break
    sleep 0.5
  done
  rm -f "$W/proxy.pid"
) 2>>"$W/supervisor.log" &
BG_PIDS+=($!)
SUPERVISOR=$!

# ---- the producer: one long gp-produce, paused (SIGSTOP) for a hop's start -------
# Event time follows the wall clock at RATE ms a second from T0; a gp-produce
# that fails (it should not: it retries through broker restarts) is started
# again with fresh ids.
(
  gen=0
  while [ ! -e "$W/stop-producing" ]; do
    if [ -e "$W/pause" ]; then sleep 0.1; continue; fi
    now_ms=$(( $(date +%s%N) / 1000000 ))
    "$GP_PRODUCE" --bootstrap "$BOOT" --topic "$S" --count 100000000000 \
      --start-id $((gen * 100000000000)) --ts-start $((BASE + (now_ms - T0 * 1000) * RATE / 1000)) \
      --rate "$RATE" --disorder 100 --headers --key-every 3 --seed "$((SEED + gen))" \
      --timeout-ms 300000 --quiet >>"$W/producer.log" 2>&1 &
    echo $! >"$W/producer.pid"
    wait $!
    rc=$?
    [ -e "$W/stop-producing" ] || echo "$(date +%T) gp-produce exited $rc; starting another" >>"$W/producer.log"
    gen=$((gen + 1))
  done
  rm -f "$W/producer.pid"
) 2>>"$W/supervisor.log" &
BG_PIDS+=($!)
PRODUCER=$!

# pause_producer: no record is produced until resume_producer. Records the
# stopped gp-produce has queued but not sent arrive after the resume: they
# belong to the hop that starts, which is right, as the proxy routes them
# after the hop's start.
pause_producer() {
  touch "$W/pause"
  local pid="" now
  for _ in 1 2 3; do   # the loop may be starting a new gp-produce just now
    now=$(cat "$W/producer.pid" 2>/dev/null || true)
    if [ -n "$now" ] && [ "$now" != "$pid" ]; then kill -STOP "$now" 2>/dev/null; pid=$now; fi
    sleep 0.1
  done
}
resume_producer() {
  rm -f "$W/pause"
  local pid
  pid=$(cat "$W/producer.pid" 2>/dev/null || true)
  [ -z "$pid" ] || kill -CONT "$pid" 2>/dev/null
  return 0
}
stop_producer() {
  touch "$W/stop-producing"
  local pid
  pid=$(cat "$W/producer.pid" 2>/dev/null || true)
  if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null; kill -CONT "$pid" 2>/dev/null; fi
  wait "$PRODUCER" 2>/dev/null
}

# ---- chaos: proxy kills at random, broker restarts spread evenly ----------------
END=$((T0 + MINUTES * 60))
(
  RANDOM=$((SEED + 2))
  next_kill=$(( $(date +%s) + KILL_MIN + RANDOM % (KILL_MAX - KILL_MIN + 1) ))
  b=1
  next_broker=$(( T0 + b * MINUTES * 60 / (BROKER_RESTARTS + 1) ))
  while [ ! -e "$W/stop-chaos" ] && [ "$(date +%s)" -lt "$END" ]; do
    now=$(date +%s)
    if [ "$BROKER_RESTARTS" -gt 0 ] && [ "$b" -le "$BROKER_RESTARTS" ] && [ "$now" -ge "$next_broker" ]; then
      how=""; [ $((b % 2)) -eq 0 ] && how=kill
      echo "$(date +%s) restart ${how:-term} begin" >>"$W/chaos.log"
      if "$BROKER" restart $how >>"$W/chaos.log" 2>&1; then
        echo "$(date +%s) restart ${how:-term} end" >>"$W/chaos.log"
        echo "$(date +%s) ${how:-term}" >>"$W/broker-restarts"
      else
        echo "$(date +%s) broker restart failed" >>"$W/chaos.log"
        echo "broker restart $b failed (see chaos.log)" >>"$W/problems"
      fi
      b=$((b + 1))
      next_broker=$(( T0 + b * MINUTES * 60 / (BROKER_RESTARTS + 1) ))
    fi
    # Kills land while records flow (not while a hop start holds them).
    if [ "$now" -ge "$next_kill" ] && [ ! -e "$W/pause" ]; then
      pid=$(cat "$W/proxy.pid" 2>/dev/null || true)
      if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        sig=KILL; [ $((RANDOM % 100)) -lt "$TERM_PCT" ] && sig=TERM
        if kill "-$sig" "$pid" 2>/dev/null; then
          echo "$(date +%s) $sig $pid" >>"$W/kills"
        fi
      fi
      next_kill=$(( now + KILL_MIN + RANDOM % (KILL_MAX - KILL_MIN + 1) ))
    fi
    sleep 0.5
  done
) &
BG_PIDS+=($!)
CHAOS=$!

# ---- progress every 10 s ------------------------------------------------------
(
  while [ ! -e "$W/stop-progress" ]; do
    sleep 10
    [ -e "$W/stop-progress" ] && break
    off=$(end_offsets)
    produced=$([ -n "$off" ] && total_of "$off" || echo "?")
    printf '[%s] soak: elapsed=%ds hops=%s kills=%s broker_restarts=%s produced=%s routed=%s\n' \
      "$(date +%T)" "$(elapsed)" "$(lines "$W/hops")" "$(lines "$W/kills")" \
      "$(lines "$W/broker-restarts")" "$produced" "$(routed)"
  done
) &
BG_PIDS+=($!)
PROGRESS=$!

# ---- hops ----------------------------------------------------------------------
RANDOM=$SEED
owner=blue
last_t=0
failed_hop=0
while [ "$(date +%s)" -lt "$END" ]; do
  to=green; [ "$owner" = green ] && to=blue
  # The hop's start: producer paused, proxy drained, exact end offsets.
  pause_producer
  if ! wait_until 300 drained; then
    problem "hop $(( $(lines "$W/hops") + 1 )): the proxy did not drain in 300 s (routed $(routed) of $(total_of "$(end_offsets)"))"
    failed_hop=1; break
  fi
  since=$DRAINED_AT
  delay=$((RANDOM % 1000))
  if ! "$GP_BIN" cutover --control "$CM" --to "$to" --delay-ms "$delay" >>"$W/cli.log" 2>&1; then
    problem "cutover to $to refused (see cli.log)"; failed_hop=1; break
  fi
  resume_producer
  if ! wait_until 300 key_is stage CLEAR_TO_TEARDOWN; then
    problem "hop $owner -> $to: no CLEAR_TO_TEARDOWN in 300 s (stage $(key stage), phase $(key gate-proxy.phase))"
    failed_hop=1; break
  fi
  t=$(key watermark-toggle-value)
  case "$t" in ''|*[!0-9]*) problem "hop $owner -> $to: watermark-toggle-value '$t'"; failed_hop=1; break ;; esac
  [ "$t" -gt "$last_t" ] || problem "hop $owner -> $to: T=$t is not after the previous T=$last_t"
  if ! "$GP_BIN" finish --control "$CM" >>"$W/cli.log" 2>&1; then
    problem "finish refused after CLEAR_TO_TEARDOWN (see cli.log)"; failed_hop=1; break
  fi
  echo "$t $owner $since" >>"$W/hops"
  last_t=$t
  owner=$to
  sleep "$(( RANDOM % (HOP_PAUSE_MAX + 1) )).$(( RANDOM % 10 ))"
done
resume_producer

# ---- the end: stop the faults and the producer, drain, stop, check ---------------
say "faults over after $(elapsed) s: stopping production, draining"
touch "$W/stop-chaos"
wait "$CHAOS" 2>/dev/null
stop_producer
"$BROKER" status >/dev/null 2>&1 || problem "the broker is not up after the chaos (see chaos.log)"
# A proxy stopped by the last kill is started again by the supervisor.
if ! wait_until 600 drained; then
  problem "the proxy did not drain in 600 s after production stopped (routed $(routed) of $(total_of "$(end_offsets)"))"
fi
touch "$W/stop-proxy"
# SIGTERM to whichever proxy runs (the supervisor may be starting one now).
termed=""
for _ in $(seq 1 180); do
  kill -0 "$SUPERVISOR" 2>/dev/null || break
  pid=$(cat "$W/proxy.pid" 2>/dev/null || true)
  if [ -n "$pid" ] && [ "$pid" != "$termed" ] && kill -TERM "$pid" 2>/dev/null; then termed=$pid; fi
  sleep 1
done
kill -0 "$SUPERVISOR" 2>/dev/null && problem "the proxy did not stop within 180 s of SIGTERM"
wait "$SUPERVISOR" 2>/dev/null
touch "$W/stop-progress"
kill "$PROGRESS" 2>/dev/null
wait "$PROGRESS" 2>/dev/null

HOPS=$(lines "$W/hops")
KILLS=$(lines "$W/kills")
BRESTARTS=$(lines "$W/broker-restarts")
PRODUCED=$(total_of "$(end_offsets)")
say "checking $PRODUCED records and $HOPS hops"

# Every record exactly once, in order, nothing else in the colour topics.
"$GP_CHECK" --bootstrap "$BOOT" --source "$S" --dlq "$S.dlq" --event-time json:ts \
  --timeout-ms 120000 --verbose >"$W/check-all.txt" 2>"$W/check-all.err"
rc_all=$?
ALL=$(cat "$W/check-all.txt")
say "checker (all): $ALL"
if [ $rc_all -ne 0 ]; then
  problem "checker (all) exit $rc_all: $ALL"
  tail -n 25 "$W/check-all.err"
fi
num() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$2"; }
CHECKED=$(num checked "$ALL"); DUP=$(num duplicates "$ALL"); MISS=$(num missing "$ALL")
REORD=$(num reordered "$ALL")
[ "${CHECKED:-0}" -eq "$PRODUCED" ] || problem "checked ${CHECKED:-?} records, produced $PRODUCED"
[ "$PRODUCED" -gt 0 ] || problem "nothing was produced"

# Each hop split by its T, judged on its own records.
MISR=0
if [ "$HOPS" -gt 0 ]; then
  "$GP_CHECK" --bootstrap "$BOOT" --source "$S" --dlq "$S.dlq" --event-time json:ts \
    --hops "$W/hops" --timeout-ms 120000 --verbose >"$W/check-hops.txt" 2>"$W/check-hops.err"
  rc_hops=$?
  HOPC=$(cat "$W/check-hops.txt")
  say "checker ($HOPS hops): $HOPC"
  if [ $rc_hops -ne 0 ]; then
    problem "checker (hops) exit $rc_hops: $HOPC"
    tail -n 25 "$W/check-hops.err"
  fi
  MISR=$(num misrouted "$HOPC")
else
  problem "no hop was completed"
fi

# The proxy's exits: 0 (SIGTERM), 143 (SIGTERM before the handler is set)
# and 137 (SIGKILL) are ours; exits 1 and 4
# (a fatal Kafka error, topics unreadable at start) are expected only around
# a broker restart; anything else, or a sanitizer report, is a problem.
restart_windows=$(awk '/restart .* begin/{b=$1} /restart .* end/{print b, $1 + 60}' "$W/chaos.log" 2>/dev/null)
declare -A EXITS=()
while read -r when code; do
  EXITS[$code]=$(( ${EXITS[$code]:-0} + 1 ))
  case "$code" in
    0|137|143) ;;
    1|4)
      near=0
      while read -r b e; do
        [ -n "$b" ] && [ "$when" -ge "$b" ] && [ "$when" -le "$e" ] && near=1
      done <<<"$restart_windows"
      [ $near = 1 ] || problem "the proxy exited $code at $(date -d "@$when" +%T), not near a broker restart (see proxy.log)"
      ;;
    *) problem "the proxy exited $code at $(date -d "@$when" +%T) (see proxy.log)" ;;
  esac
done <"$W/exits"
exits=""
for code in $(printf '%s\n' "${!EXITS[@]}" | sort -n); do exits+=" $code:${EXITS[$code]}"; done
say "proxy exits by code:${exits:- none}"
# The proxy's own error lines (not librdkafka's connection noise), numbers
# folded, most frequent first.
if grep '^[^ ]* error ' "$W/proxy.log" | grep -qv '^[^ ]* error librdkafka '; then
  say "proxy error lines (numbers folded):"
  grep '^[^ ]* error ' "$W/proxy.log" | grep -v '^[^ ]* error librdkafka ' | cut -d' ' -f3- \
    | sed -E 's/[0-9]+/N/g' | cut -c1-200 | sort | uniq -c | sort -rn | head -n 8
fi
if grep -qE 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:' "$W/proxy.log"; then
  problem "sanitizer report in proxy.log: $(grep -m1 -E 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:' "$W/proxy.log")"
fi
grep -q 'starting another' "$W/producer.log" 2>/dev/null \
  && say "note: gp-produce failed $(grep -c 'starting another' "$W/producer.log") time(s) and was started again (what reached the source is checked)"

echo "soak: minutes=$MINUTES hops=$HOPS kills=$KILLS broker_restarts=$BRESTARTS checked=${CHECKED:-0}" \
     "duplicates=${DUP:-?} missing=${MISS:-?} reordered=${REORD:-?} misrouted=${MISR:-?}"
say "took $(elapsed) s"
if [ -s "$W/problems" ] || [ "$failed_hop" = 1 ]; then
  say "FAILED: $(wc -l <"$W/problems") problem(s):"
  sed 's/^/  /' "$W/problems"
  exit 1
fi
say "PASS"
