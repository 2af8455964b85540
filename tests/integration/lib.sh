# tests/integration/lib.sh: shared steps of the integration tests, sourced
# by each test. Needs GP_BOOTSTRAP (a real broker: tests/kafka/broker.sh) and
# GP_BIN, GP_CHECK, GP_PRODUCE (set by ctest).
set -euo pipefail
[ -z "${GP_TEST_TRACE:-}" ] || set -x # GP_TEST_TRACE=1: every command on stderr

: "${GP_BIN:?run through ctest}" "${GP_CHECK:?}" "${GP_PRODUCE:?}"
if [ -z "${GP_BOOTSTRAP:-}" ]; then
  echo "GP_BOOTSTRAP is not set: start a broker with tests/kafka/broker.sh start and" >&2
  echo "export GP_BOOTSTRAP=\$(tests/kafka/broker.sh bootstrap), or run make test" >&2
  exit 1
fi

RUN_ID=$(date +%s%N | tail -c 9)$$
WORK=$(mktemp -d "/tmp/gp-it.XXXXXX")
PROXY_PID=""
PROM_PID=""
trap 'finish_test' EXIT

# ON_EXIT: commands a test adds to run at exit, before the proxy is killed
# and the work directory goes (stopping its own processes).
ON_EXIT=""
finish_test() {
  local rc=$?
  eval "$ON_EXIT" || true
  prometheus_stop
  local proxy="not started"
  if [ -n "$PROXY_PID" ] && kill -0 "$PROXY_PID" 2>/dev/null; then
    proxy="running (pid $PROXY_PID), killed now"
    kill -9 "$PROXY_PID" 2>/dev/null || true
  elif [ -n "$PROXY_PID" ]; then
    proxy="exited (pid $PROXY_PID)"
  fi
  if [ $rc -ne 0 ]; then
    # What was there, said also when it was not: a missing file is a
    # finding of its own.
    echo "--- the proxy: $proxy; the work directory $WORK:" >&2
    ls -la "$WORK" >&2 2>&1 || echo "(gone)" >&2
    echo "--- last lines of the proxy log ($WORK/proxy.log):" >&2
    tail -n 40 "$WORK/proxy.log" >&2 || true
    echo "--- control map:" >&2
    cat "$WORK/cm.json" >&2 || true
    if [ -s "$WORK/stacks.txt" ]; then
      echo "--- the proxy's threads when it stopped beating ($WORK/stacks.txt):" >&2
      cat "$WORK/stacks.txt" >&2
    fi
  else
    rm -rf "$WORK"
  fi
  exit $rc
}

# dump_stacks PID: every thread's stack of PID, appended to $WORK/stacks.txt
# (gdb, when installed): where a loop that stopped beating waits.
dump_stacks() {
  command -v gdb >/dev/null || return 0
  { echo "=== pid $1 at $(date +%T.%N)"
    timeout 60 gdb -q -batch -p "$1" -ex 'thread apply all bt' 2>&1 \
      | grep -E '^(Thread|#)' ; } >>"$WORK/stacks.txt" 2>&1 || true
}

say() { printf '[%s] %s\n' "$(date +%T)" "$*"; }
fail() { say "FAIL: $*"; exit 1; }

# conf_lines TOPIC: the settings every test proxy shares, less its control
# map (later lines of a file override earlier ones)
conf_lines() {
  echo "kafka.bootstrap.servers=$GP_BOOTSTRAP"
  echo "gate.pipeline=it-$RUN_ID"
  echo "gate.source.topics=$1"
  echo "gate.event-time=json:ts"
  echo "gate.topics.create=true"
  echo "gate.dlq.topic=$1.dlq"
  echo "gate.watermark.out-of-orderness.ms=200"
  echo "gate.watermark.idle.ms=2000"
  echo "kafka.transaction.timeout.ms=10000"
  membership_lines "${GP_INSTANCE:-it}"
}

# membership_lines INSTANCE: GP_MEMBERSHIP=group runs the proxies as members
# of the consumer group (gate.membership=group) under that instance name,
# with a session timeout at the broker's minimum so that a killed member's
# partitions move on within seconds (the transaction timeout below it);
# GP_STATIC=1 makes the instance name the static group.instance.id too, so
# a restart under it takes the member's place without waiting for that
membership_lines() {
  if [ "${GP_MEMBERSHIP:-assign}" = group ]; then
    echo "gate.membership=group"
    echo "gate.instance=$1"
    echo "kafka.session.timeout.ms=6000"
    echo "kafka.transaction.timeout.ms=5000"
    [ -z "${GP_STATIC:-}" ] || echo "kafka.group.instance.id=$1"
  fi
}

# write_conf NAME TOPIC [key=value...]: a proxy configuration in $WORK/NAME.conf
# with the control map in $WORK/cm.json
write_conf() {
  local name=$1 topic=$2; shift 2
  { conf_lines "$topic"; echo "control.file=$WORK/cm.json"; printf '%s\n' "$@"; } \
    > "$WORK/$name.conf"
}

# start_proxy NAME: runs the proxy in the background, log in $WORK/proxy.log
start_proxy() {
  "$GP_BIN" run -c "$WORK/$1.conf" >>"$WORK/proxy.log" 2>&1 &
  PROXY_PID=$!
  say "proxy started (pid $PROXY_PID)"
}

# stop_proxy: SIGTERM, then the exit code must be 0
stop_proxy() {
  kill -TERM "$PROXY_PID"
  local rc=0
  wait "$PROXY_PID" || rc=$?
  PROXY_PID=""
  [ $rc -eq 0 ] || fail "proxy exited $rc after SIGTERM (expected 0)"
  say "proxy stopped cleanly"
}

# signal_proxy SIGNAL SECONDS WHAT: sends SIGNAL and waits up to SECONDS for
# the proxy to exit (else fails, naming WHAT); its exit code goes to EXIT_RC
signal_proxy() {
  kill -"$1" "$PROXY_PID"
  await_proxy "$2" "$3"
}
# await_proxy SECONDS WHAT: the proxy ($PROXY_PID) ends within SECONDS of
# WHAT (a signal sent some other way); its exit code in EXIT_RC
await_proxy() {
  local end=$(( $(date +%s) + $1 ))
  while kill -0 "$PROXY_PID" 2>/dev/null; do
    [ "$(date +%s)" -lt "$end" ] || fail "$2 did not end the proxy within $1 s"
    sleep 0.05
  done
  EXIT_RC=0
  wait "$PROXY_PID" || EXIT_RC=$?
  PROXY_PID=""
}

kill_proxy() {
  kill -9 "$PROXY_PID" 2>/dev/null || true
  wait "$PROXY_PID" 2>/dev/null || true
  PROXY_PID=""
  say "proxy killed (SIGKILL)"
}

# key NAME: a data key of the control map ("" when absent)
key() {
  python3 - "$WORK/cm.json" "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1])).get("data") or {}
except Exception:
    d = {}
print(d.get(sys.argv[2], ""))
PY
}

# routed: records the proxy has committed (blue + green + dlq, from its
# status; a key not written yet counts 0)
routed() {
  local b g d
  b=$(key gate-proxy.count.blue) g=$(key gate-proxy.count.green) d=$(key gate-proxy.count.dlq)
  echo $(( ${b:-0} + ${g:-0} + ${d:-0} ))
}

# wait_for DESCRIPTION SECONDS COMMAND...: polls COMMAND every 0.2 s
wait_for() {
  local what=$1 secs=$2; shift 2
  local end=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || fail "timed out after ${secs}s waiting for $what"
    if [ -n "$PROXY_PID" ] && ! kill -0 "$PROXY_PID" 2>/dev/null; then
      fail "the proxy died while waiting for $what"
    fi
    sleep 0.2
  done
}

# free_port: a TCP port free on loopback
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# prometheus_start PORT: a real Prometheus (job gate-proxy) scraping
# 127.0.0.1:PORT/metrics every second, at $PROM; stopped at exit
prometheus_start() {
  command -v prometheus >/dev/null || fail "prometheus is not installed (scripts/install-deps.sh test)"
  local pp
  pp=$(free_port)
  printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: gate-proxy\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' \
    "$1" >"$WORK/prom.yml"
  prometheus --config.file="$WORK/prom.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="127.0.0.1:$pp" >"$WORK/prometheus.log" 2>&1 &
  PROM_PID=$!
  PROM=http://127.0.0.1:$pp
}

prometheus_stop() {
  [ -n "$PROM_PID" ] || return 0
  kill "$PROM_PID" 2>/dev/null || true
  wait "$PROM_PID" 2>/dev/null || true
  PROM_PID=""
}

# prom_q EXPR: the value of an instant query's first sample, "" when none
# (or while Prometheus does not answer yet)
prom_q() {
  curl -s --get "$PROM/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
    python3 -c 'import json,sys
try: r=json.load(sys.stdin)["data"]["result"]
except (ValueError, KeyError): r=[]
print(r[0]["value"][1] if r else "")'
}

routed_is() { [ "$(routed)" -ge "$1" ]; }
key_is() { [ "$(key "$1")" = "$2" ]; }

# produce TOPIC COUNT START_ID [gp-produce options...]
produce() {
  local topic=$1 count=$2 start=$3; shift 3
  "$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$topic" --count "$count" \
    --start-id "$start" --quiet "$@" >/dev/null
}

# check TOPIC [gp-check options...]: the checker must report all zeros
check() {
  local topic=$1; shift
  local out
  out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$topic" --event-time json:ts "$@") \
    || fail "checker: $out"
  say "checker: $out"
  CHECKED=$(sed -n 's/.*checked=\([0-9]*\).*/\1/p' <<<"$out")
}

# fault_line NAME TAIL: the one line a hostile-input test prints, also
# appended to $GP_FAULT_LINES (tests/run-all.sh repeats them at the end):
#   fault: name=NAME checked=.. missing=.. duplicated=.. TAIL kafka=..
# with the counts of the checker's output in $out
fault_line() {
  local c="" k
  for k in checked missing duplicates; do
    c="$c $k=$(sed -n "s/.* $k=\([0-9]*\).*/\1/p; s/^$k=\([0-9]*\).*/\1/p" <<<"$out" | head -n 1)"
  done
  c=${c/duplicates=/duplicated=}
  local line="fault: name=$1$c${2:+ $2} kafka=${KAFKA_VERSION:-$GP_BOOTSTRAP}"
  echo "$line"
  [ -z "${GP_FAULT_LINES:-}" ] || echo "$line" >>"$GP_FAULT_LINES"
}

# scale_line HEAD TAIL: the one line a scale-out test prints, also appended
# to $GP_SCALE_LINES (tests/run-all.sh repeats them at the end):
#   scale: HEAD checked=.. missing=.. duplicated=.. reordered=.. wrong_side=.. TAIL kafka=..
# with the counts of the checker's output in $out
scale_line() {
  local c="" k
  for k in checked missing duplicates reordered misrouted; do
    c="$c $k=$(sed -n "s/.* $k=\([0-9]*\).*/\1/p; s/^$k=\([0-9]*\).*/\1/p" <<<"$out" | head -n 1)"
  done
  c=${c/duplicates=/duplicated=}
  c=${c/misrouted=/wrong_side=}
  local line="scale: $1$c${2:+ $2} kafka=${KAFKA_VERSION:-$GP_BOOTSTRAP}"
  echo "$line"
  [ -z "${GP_SCALE_LINES:-}" ] || echo "$line" >>"$GP_SCALE_LINES"
}

# ---- several instances of one pipeline (the scale-out tests) ---------------
# Instance I runs with $WORK/iI.conf and logs to $WORK/iI.log; the test
# declares `declare -A PID=()`, and PID[I] is its pid ("" once it is reaped).
# STOPPED names an instance held by SIGSTOP, which alive() lets be.
STOPPED=""
start_inst() { # start_inst I [VAR=value...]: the environment of this start
  local i=$1; shift
  env "$@" "$GP_BIN" run -c "$WORK/i$i.conf" >>"$WORK/i$i.log" 2>&1 &
  PID[$i]=$!
}
term_inst() { # term_inst I: a clean leave, exit code 0
  local rc=0
  if ! kill -TERM "${PID[$1]}" 2>/dev/null; then
    wait "${PID[$1]}" || rc=$?
    PID[$1]=""
    fail "instance i$1 had exited (code $rc) before its clean leave: $(grep -m1 ' error ' "$WORK/i$1.log")"
  fi
  wait "${PID[$1]}" || rc=$?
  PID[$1]=""
  [ $rc -eq 0 ] || fail "instance i$1 exited $rc after SIGTERM (expected 0)"
}
kill_inst() { # kill_inst I: SIGKILL, reaped
  kill -9 "${PID[$1]}" 2>/dev/null || true
  wait "${PID[$1]}" 2>/dev/null || true
  PID[$1]=""
}
owns() { # owns I N: instance I's log says it owns N partitions now
  [ "$(grep -oE "partition\(s\); [0-9]+ owned" "$WORK/i$1.log" | tail -n 1 \
       | grep -oE '[0-9]+')" = "$2" ]
}
alive() { # every started instance runs, but one held by SIGSTOP
  local i
  for i in "${!PID[@]}"; do
    [ -z "${PID[$i]}" ] || [ "$i" = "$STOPPED" ] || kill -0 "${PID[$i]}" 2>/dev/null \
      || fail "instance i$i died by itself"
  done
}
show_logs() { # the last lines of every instance's log, on stderr
  local i
  for i in $(printf '%s\n' "${!PID[@]}" | sort -n); do
    echo "--- last lines of instance i$i ($WORK/i$i.log):" >&2
    grep -v CONFWARN "$WORK/i$i.log" 2>/dev/null | tail -n 30 >&2 || true
  done
}
kill_all_inst() { # at exit: every instance still running, stopped ones too
  local i
  for i in "${!PID[@]}"; do
    [ -z "${PID[$i]}" ] || kill -9 "${PID[$i]}" 2>/dev/null || true
    [ -z "${PID[$i]}" ] || kill -CONT "${PID[$i]}" 2>/dev/null || true
  done
}

# The scale-out tests' flow of records, on the source topic $S: `flow
# COUNT START_ID TS_START` produces COUNT records at 1000/s in the
# background, event time 1 ms apart from TS_START (wall speed); flow_done
# waits for it. scale_exit (set by `trap scale_exit EXIT`) stops the flow
# and every instance, and shows their logs on failure.
PRODUCER=""
flow() {
  "$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count "$1" --start-id "$2" \
    --ts-start "$3" --rate 1000 --quiet >/dev/null &
  PRODUCER=$!
}
flow_done() {
  local rc=0
  wait "$PRODUCER" || rc=$?
  PRODUCER=""
  [ $rc -eq 0 ] || fail "gp-produce failed ($rc)"
}
scale_exit() {
  local rc=$?
  [ -z "$PRODUCER" ] || kill "$PRODUCER" 2>/dev/null || true
  kill_all_inst
  [ $rc -eq 0 ] || show_logs
  set +e; (exit $rc)
  finish_test
}
log_has() { grep -qE -- "$2" "$WORK/i$1.log"; } # log_has I PATTERN
# close_and_route START_ID T [SECONDS]: 3000 more records from START_ID with
# event times past T + lateness, so that the old side closes; then waits
# for CLEAR_TO_TEARDOWN (SECONDS, 90 by default) and, up to 60 s, for
# every record of $S to be routed (the test's checker says what is not)
close_and_route() {
  flow 3000 "$1" $(($2 + 10000))
  flow_done
  wait_for "CLEAR_TO_TEARDOWN" "${3:-90}" key_is stage CLEAR_TO_TEARDOWN
  local end=$(($(date +%s) + 60))
  until all_routed || [ "$(date +%s)" -ge $end ]; do sleep 0.5; done
}
# all_routed: the checker finds every record of $S in a colour (or the DLQ)
all_routed() {
  "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts >/dev/null 2>&1
}

# copy_map FROM TO: the control map FROM written over TO as one more writer
# of TO would (under TO's lock, its resourceVersion above both, fsync and
# rename): a member reading TO sees FROM's content, later than the others
copy_map() {
  python3 - "$1" "$2" <<'PY'
import fcntl, json, os, sys
src, dst = sys.argv[1], sys.argv[2]
with open(dst + ".lock", "a+") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    d = json.load(open(src))
    try:
        was = int(json.load(open(dst))["metadata"]["resourceVersion"])
    except Exception:
        was = 0
    d["metadata"]["resourceVersion"] = str(max(was, int(d["metadata"]["resourceVersion"])) + 1)
    tmp = dst + ".tmp.copy"
    with open(tmp, "w") as f:
        json.dump(d, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, dst)
PY
}
