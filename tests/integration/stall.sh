#!/usr/bin/env bash
# A loop stuck inside a call that never returns (librdkafka #5456:
# send_offsets_to_transaction waiting for ever on a group coordinator that
# went away; seen here once in 13 runs of integration.broker_outage on
# Kafka 4). GP_FAULT_STALL=before-commit:N stands in for it: the loop's
# thread sleeps for good before the N-th commit. The watchdog ends the
# process with exit 1 once the loop has not moved for its bound
# (GP_TEST_WATCHDOG_MS=3000 here, 60 s in production), saying why; a
# restart goes on from the last commit and every record is routed exactly
# once. A loop held on purpose (GP_FAULT_HOLD) for longer than the bound,
# and a process stopped (SIGSTOP) for longer, are not ended.
source "$(dirname "$0")/lib.sh"

S=gp-stall-$RUN_ID
BASE=1700000000000
produce "$S" 3000 0 --ts-start $BASE --headers --partitions-hint 2
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S" gate.commit.records=500
exited() { ! kill -0 "$PROXY_PID" 2>/dev/null; }

say "1. the loop stalls before its 3rd commit"
GP_FAULT_STALL=before-commit:3 GP_TEST_WATCHDOG_MS=3000 start_proxy p
wait_for "the watchdog to end the stalled proxy" 60 exited
EXIT_RC=0
wait "$PROXY_PID" || EXIT_RC=$?
PROXY_PID=""
[ "$EXIT_RC" = 1 ] || fail "the stalled proxy exited $EXIT_RC (expected 1)"
grep -q "the loop has not moved for [0-9]* ms, longer than any Kafka call may wait (3000 ms)" \
  "$WORK/proxy.log" || fail "the proxy's log does not say why it ended"
grep -m1 "the loop has not moved" "$WORK/proxy.log" | cut -c1-200
ROUTED=$(routed)
[ "$ROUTED" -lt 3000 ] || fail "all 3000 records routed before the stall"
say "ended with exit 1 after $ROUTED records committed"

say "2. held on purpose (5 s) and stopped (SIGSTOP 5 s): not ended"
touch "$WORK/h.before-commit"
GP_FAULT_HOLD="$WORK/h" GP_TEST_WATCHDOG_MS=3000 start_proxy p
wait_for "the proxy held before a commit" 60 test -e "$WORK/h.before-commit.held"
sleep 5 # longer than the bound: what is tested is that nothing happens
kill -0 "$PROXY_PID" || fail "the watchdog ended a proxy held on purpose"
rm -f "$WORK/h.before-commit"
wait_for "every record routed" 60 routed_is 3000
kill -STOP "$PROXY_PID"
sleep 5 # longer than the bound, while stopped
kill -CONT "$PROXY_PID"
produce "$S" 1000 3000 --ts-start $((BASE + 3000)) --headers
wait_for "the records after SIGCONT routed" 60 routed_is 4000
kill -0 "$PROXY_PID" || fail "the watchdog ended a proxy after SIGSTOP and SIGCONT"
stop_proxy
check "$S"
[ "$CHECKED" = 4000 ] || fail "checked $CHECKED records, expected 4000"
say "PASS"
