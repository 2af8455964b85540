#!/usr/bin/env bash
# Blue -> green -> blue, driven by the CLI while records flow, on a real
# broker; an independent read_committed checker then proves: every source
# record exactly once across the colour topics, per-partition order, keys,
# values, headers and timestamps intact, and the split by T of each hop.
source "$(dirname "$0")/lib.sh"

S=gp-cycle-$RUN_ID
BASE=1700000000000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 4 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S"
start_proxy p

say "phase A: 20000 records, all to blue"
produce "$S" 20000 0 --ts-start $BASE --disorder 150 --headers --key-every 3
wait_for "20000 records routed" 60 routed_is 20000
[ "$(key gate-proxy.count.green)" = 0 ] || fail "green got records before any cutover"

say "hop 1: cutover to green while 20000 more records flow"
produce "$S" 20000 20000 --ts-start $((BASE + 20000)) --disorder 150 --headers --rate 8000 &
PRODUCER=$!
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 500 >/dev/null
"$GP_BIN" cutover --control "$WORK/cm.json" --to green 2>/dev/null \
  && fail "a second cutover during a transition must be refused"
wait_for "CLEAR_TO_TEARDOWN (hop 1)" 90 key_is stage CLEAR_TO_TEARDOWN
T1=$(key watermark-toggle-value)
[ "$(key watermark-stage)" = WATERMARK_SET ] || fail "watermark-stage is not WATERMARK_SET"
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
wait "$PRODUCER"
wait_for "40000 records routed" 60 routed_is 40000
say "hop 1 done: T=$T1"
check "$S" --cutoff "$T1" --old blue
[ "$CHECKED" = 40000 ] || fail "checked $CHECKED records, expected 40000"

say "hop 2: cutover back to blue while 20000 more records flow"
SINCE=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --end-offsets)
produce "$S" 20000 40000 --ts-start $((BASE + 40000)) --disorder 150 --headers --rate 8000 &
PRODUCER=$!
"$GP_BIN" cutover --control "$WORK/cm.json" --to blue --delay-ms 0 >/dev/null
wait_for "CLEAR_TO_TEARDOWN (hop 2)" 90 key_is stage CLEAR_TO_TEARDOWN
T2=$(key watermark-toggle-value)
[ "$T2" -gt "$T1" ] || fail "T2=$T2 is not after T1=$T1"
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
wait "$PRODUCER"
wait_for "60000 records routed" 60 routed_is 60000
stop_proxy
say "hop 2 done: T=$T2"

check "$S" --cutoff "$T2" --old green --since "$SINCE"
check "$S"
[ "$CHECKED" = 60000 ] || fail "checked $CHECKED records, expected 60000"
[ "$(key gate-proxy.count.dlq)" = 0 ] || fail "records went to the dead-letter topic"
say "PASS"
