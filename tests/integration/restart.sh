#!/usr/bin/env bash
# Restarts in the middle of the split repeat the same decisions: the proxy
# is killed (SIGKILL) and stopped (SIGTERM) while T is set and the old side
# is still open; each time it comes back with the same T from its
# checkpoint, and the checker finds every record exactly once, in order,
# split by T.
source "$(dirname "$0")/lib.sh"

S=gp-restart-$RUN_ID
BASE=1700000000000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 3 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
# A long lateness keeps the old side open for a while after T is chosen.
write_conf p "$S" gate.lateness.ms=20000 gate.commit.interval.ms=50

start_proxy p
produce "$S" 10000 0 --ts-start $BASE --disorder 300
wait_for "10000 records routed" 60 routed_is 10000

# 40000 records at 4000/s: event time runs at 4 s per second (ts-step 1).
produce "$S" 40000 10000 --ts-start $((BASE + 10000)) --disorder 300 --rate 4000 &
PRODUCER=$!
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 1000 >/dev/null
wait_for "T published" 60 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
say "T=$T; the split is open"

sleep 1.5
kill_proxy
[ "$(key stage)" = TRANSITIONING ] || fail "closed too early for this test"
start_proxy p
sleep 2
kill_proxy
start_proxy p
sleep 1
stop_proxy
start_proxy p

wait "$PRODUCER"
wait_for "CLEAR_TO_TEARDOWN" 120 key_is stage CLEAR_TO_TEARDOWN
[ "$(key watermark-toggle-value)" = "$T" ] || fail "T changed across restarts: $(key watermark-toggle-value) != $T"
wait_for "50000 records routed" 60 routed_is 50000
stop_proxy
grep -q "restored checkpoint" "$WORK/proxy.log" || fail "no restart restored a checkpoint"
check "$S" --cutoff "$T" --old blue
[ "$CHECKED" = 50000 ] || fail "checked $CHECKED records, expected 50000"
say "PASS"
