#!/usr/bin/env bash
# The drain check (gate.drain.group.blue / .green), on a real broker, while
# records flow:
#   hop 1, blue -> green: long after the watermark has passed T + lateness
#     the proxy must not write CLEAR_TO_TEARDOWN while the old job's group
#     has committed nothing; once a "job" (kcat in that group,
#     read_committed, auto-commit) has consumed S.blue to its end,
#     CLEAR_TO_TEARDOWN appears (targets from the proxy's delivery reports);
#   hop 2, green -> blue, the same with the proxy killed and restarted
#     during the wait, and the old job's group committing as a Flink job
#     does (gp-admin consume: the offset after its last record, short of
#     the commit marker that follows it, FLINK-33484): for partitions it
#     has not written since the restart the proxy reads from the group's
#     offset and finds no committed record left.
# The checker proves the split by T of each hop. Needs kcat (Debian's,
# linked to the system librdkafka; GP_KCAT overrides the path).
source "$(dirname "$0")/lib.sh"
: "${GP_ADMIN:?run through ctest}"

KCAT=${GP_KCAT:-kcat}
command -v "$KCAT" >/dev/null || fail "kcat not found (apt-get install kcat, or set GP_KCAT)"
KCAT_PID=""
stop_kcat() {
  if [ -n "$KCAT_PID" ]; then
    kill -TERM "$KCAT_PID" 2>/dev/null || true
    wait "$KCAT_PID" 2>/dev/null || true
    KCAT_PID=""
  fi
}
# finish_test reads the exit status from $?: keep it across stop_kcat.
trap 'rc=$?; stop_kcat; set +e; (exit $rc); finish_test' EXIT

S=gp-drain-$RUN_ID
GB=gp-drain-blue-$RUN_ID
GG=gp-drain-green-$RUN_ID
BASE=1700000000000
LATENESS=500
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 4 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S" "gate.drain.group.blue=$GB" "gate.drain.group.green=$GG" \
  "gate.lateness.ms=$LATENESS"
start_proxy p

logged() { grep -q "$1" "$WORK/proxy.log"; }
toggle_not() { local t; t=$(key watermark-toggle-value); [ -n "$t" ] && [ "$t" != "$1" ]; }

lag_at_least() { local l; l=$(key gate-proxy.drain-lag); [ -n "$l" ] && [ "$l" -ge "$1" ]; }

# hold SECONDS T: no CLEAR_TO_TEARDOWN, phase split, records flowing and the
# watermark well past T + lateness, for SECONDS
hold() {
  local secs=$1 t=$2 r0 r1 w end
  r0=$(routed)
  end=$(( $(date +%s) + secs ))
  while [ "$(date +%s)" -lt "$end" ]; do
    [ "$(key stage)" != CLEAR_TO_TEARDOWN ] \
      || fail "CLEAR_TO_TEARDOWN written while the old job's group has not consumed"
    kill -0 "$PROXY_PID" 2>/dev/null || fail "the proxy died"
    sleep 0.3
  done
  w=$(key gate-proxy.watermark)
  r1=$(routed)
  [ "$r1" -gt "$r0" ] || fail "no records flowed during the wait ($r0 -> $r1)"
  [ -n "$w" ] && [ "$w" -ge $((t + LATENESS + 3000)) ] \
    || fail "the watermark ($w) is not well past T + lateness ($((t + LATENESS)))"
  [ "$(key gate-proxy.phase)" = split ] || fail "phase is $(key gate-proxy.phase), expected split"
  # the map shows how far the old group is: it has not consumed, so it lags
  wait_for "a gate-proxy.drain-lag above 0" 10 lag_at_least 1
  # and `gate-proxy status` says what CLEAR_TO_TEARDOWN waits for
  "$GP_BIN" status --control "$WORK/cm.json" >"$WORK/status.txt"
  grep -q "^drain       waiting for group gp-drain-[a-z]*-$RUN_ID to consume $S\.[a-z]*: [0-9]* of [0-9]* partitions drained, lag [0-9]*" "$WORK/status.txt" \
    || { cat "$WORK/status.txt"; fail "status does not show the drain group waited for"; }
  say "held ${secs}s: W=$w is $((w - t - LATENESS)) ms past T + lateness, $((r1 - r0)) records routed meanwhile, drain-lag $(key gate-proxy.drain-lag)"
}

# drain GROUP TOPIC: the old job consumes TOPIC in GROUP until the proxy
# writes CLEAR_TO_TEARDOWN
drain() {
  local g=$1 topic=$2
  say "the old job (kcat, group $g) consumes $topic and commits"
  "$KCAT" -C -b "$GP_BOOTSTRAP" -G "$g" "$topic" -q -f '%p %o\n' \
    -X isolation.level=read_committed -X auto.offset.reset=earliest \
    -X enable.auto.commit=true -X auto.commit.interval.ms=200 \
    >"$WORK/kcat-$g.out" 2>"$WORK/kcat-$g.err" &
  KCAT_PID=$!
  wait_for "CLEAR_TO_TEARDOWN after the drain of $topic" 90 key_is stage CLEAR_TO_TEARDOWN
  logged "group $g has consumed all the proxy wrote to $topic" \
    || fail "CLEAR_TO_TEARDOWN without the drain check of $topic passing"
  say "closed: $(grep "group $g has consumed all" "$WORK/proxy.log" | tail -n 1 | sed 's/.*info  //')"
  say "$(grep -c "waiting for group $g" "$WORK/proxy.log") progress lines; first: $(grep "waiting for group $g" "$WORK/proxy.log" | head -n 1 | sed 's/.*info  //')"
  stop_kcat
}

# drain_flink GROUP TOPIC: the old job consumes TOPIC in GROUP, committing
# the offset after its last record (gp-admin consume, every 0.5 s), until
# the proxy writes CLEAR_TO_TEARDOWN; at least one partition must have been
# left short of its end offset by that commit
drain_flink() {
  local g=$1 topic=$2 end=$(( $(date +%s) + 90 )) out n short=0
  say "the old job (group $g) consumes $topic and commits as a Flink job does"
  while [ "$(key stage)" != CLEAR_TO_TEARDOWN ]; do
    [ "$(date +%s)" -lt "$end" ] \
      || fail "no CLEAR_TO_TEARDOWN 90 s after group $g began to consume $topic"
    out=$("$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" consume "$g" "$topic") \
      || fail "gp-admin consume $g $topic failed"
    n=$(echo "$out" | sed -n 's/.*, \([0-9]*\) short of the end offset$/\1/p')
    [ -n "$n" ] || fail "unexpected gp-admin output: $out"
    [ "$n" -gt 0 ] && short=1
    sleep 0.5
  done
  [ "$short" = 1 ] || fail "the Flink-style commits were never short of an end offset"
  logged "group $g has consumed all the proxy wrote to $topic" \
    || fail "CLEAR_TO_TEARDOWN without the drain check of $topic passing"
  say "closed: $(grep "group $g has consumed all" "$WORK/proxy.log" | tail -n 1 | sed 's/.*info  //')"
}

say "phase A: 5000 records, all to blue"
produce "$S" 5000 0 --ts-start $BASE --disorder 150
wait_for "5000 records routed" 60 routed_is 5000

say "hop 1: cutover to green while 40000 records flow (2000/s, event time 2 s per second)"
produce "$S" 40000 5000 --ts-start $((BASE + 5000)) --disorder 150 --rate 2000 &
PRODUCER=$!
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 500 >/dev/null
wait_for "the cutoff" 30 key_is watermark-stage WATERMARK_SET
T1=$(key watermark-toggle-value)
say "T1=$T1"
wait_for "the drain check of $S.blue (W >= T + lateness)" 30 \
  logged "waiting for group $GB to consume $S.blue"
hold 6 "$T1"
drain "$GB" "$S.blue"
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
wait "$PRODUCER"
wait_for "45000 records routed" 60 routed_is 45000
check "$S" --cutoff "$T1" --old blue
[ "$CHECKED" = 45000 ] || fail "checked $CHECKED records, expected 45000"

say "hop 2: cutover back to blue while 30000 records flow, the proxy restarted during the wait"
SINCE=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --end-offsets)
produce "$S" 30000 45000 --ts-start $((BASE + 45000)) --disorder 150 --rate 2000 &
PRODUCER=$!
"$GP_BIN" cutover --control "$WORK/cm.json" --to blue --delay-ms 500 >/dev/null
wait_for "the drain check of $S.green" 30 logged "waiting for group $GG to consume $S.green"
wait_for "the cutoff T2" 30 toggle_not "$T1"
T2=$(key watermark-toggle-value)
say "T2=$T2"
hold 3 "$T2"
kill_proxy
start_proxy p
wait_for "the restored checkpoint" 30 logged "restored checkpoint.*phase split, green -> blue"
hold 4 "$T2"
drain_flink "$GG" "$S.green"
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
wait "$PRODUCER"
wait_for "75000 records routed" 60 routed_is 75000
stop_proxy

check "$S" --cutoff "$T2" --old green --since "$SINCE"
check "$S"
[ "$CHECKED" = 75000 ] || fail "checked $CHECKED records, expected 75000"
[ "$(key gate-proxy.count.dlq)" = 0 ] || fail "records went to the dead-letter topic"
say "PASS"
