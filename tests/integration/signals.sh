#!/usr/bin/env bash
# Signals: the first SIGTERM lets the open transaction finish (exit 0, as
# every test's stop_proxy checks); a second ends the process at once with
# 143 (128 + SIGTERM), even while the loop is stuck inside a transaction;
# nothing is lost or doubled after a restart. The loop is held inside a
# transaction by a test fault point (GP_FAULT_HOLD, before-produce).
source "$(dirname "$0")/lib.sh"

S=gp-sig-$RUN_ID
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S"
export GP_FAULT_HOLD=$WORK/hold
start_proxy p
unset GP_FAULT_HOLD
produce "$S" 2000 0 --ts-start 1700000000000
wait_for "2000 records routed" 60 routed_is 2000

say "the loop held inside a transaction, then SIGTERM twice"
touch "$WORK/hold.before-produce"
produce "$S" 100 2000 --ts-start 1700000002000
wait_for "the loop to hold before a produce" 30 test -e "$WORK/hold.before-produce.held"
kill -TERM "$PROXY_PID"
sleep 1
kill -0 "$PROXY_PID" 2>/dev/null || fail "one SIGTERM ended a proxy that holds an open transaction"
t0=$(date +%s%N)
signal_proxy TERM 5 "a second SIGTERM"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $EXIT_RC -eq 143 ] || fail "exit $EXIT_RC after a second SIGTERM (expected 143)"
grep -q "second signal: exiting at once" "$WORK/proxy.log" || fail "no line for the second signal"
say "exit 143, $ms ms after the second SIGTERM"
rm -f "$WORK/hold.before-produce"

say "restarted: the held records are routed once"
start_proxy p
wait_for "2100 records routed" 60 routed_is 2100
stop_proxy
check "$S"
[ "$CHECKED" = 2100 ] || fail "checked $CHECKED"
say "PASS"
