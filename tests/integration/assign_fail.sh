#!/usr/bin/env bash
# A failed assignment ends the process: the source grows while records
# flow, and the assignment that would take the new partitions fails (the
# test build's GP_FAULT_FAIL=assign:2; the 1st is the start's). Going on
# would leave the consumer where it was instead of at the last commit, so
# the proxy exits 1 (GP_EXIT_FATAL) with a log line naming the failure.
# Restarted without the fault, it goes on from the last commit and reads
# the new partitions from their beginning: the checker finds every record
# exactly once, in order. Needs -DGP_TEST_HOOKS=ON. (The same failure in the
# rewind after an abort: unit test loop/failed_rewind_is_fatal.)
source "$(dirname "$0")/lib.sh"
: "${GP_ADMIN:?run through ctest (GP_ADMIN: the gp-admin tool)}"

admin() { "$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" "$@"; }
BASE=1700000000000

S=gp-assign-$RUN_ID
admin create "$S" 2 >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S" gate.discovery.interval.ms=1000 gate.commit.interval.ms=100

say "1: the proxy routes with its 2nd assignment set to fail"
GP_FAULT_FAIL=assign:2 "$GP_BIN" run -c "$WORK/p.conf" >>"$WORK/proxy.log" 2>&1 &
PROXY_PID=$!
produce "$S" 4000 0 --ts-start $BASE --disorder 100
wait_for "4000 records routed" 60 routed_is 4000

say "1: the source grows from 2 to 4 partitions; records go on into all four"
admin grow "$S" 4 >/dev/null
# A fresh producer sees the 4 partitions at once.
produce "$S" 4000 4000 --ts-start $((BASE + 4000)) --disorder 100
end=$(( $(date +%s) + 30 ))
while kill -0 "$PROXY_PID" 2>/dev/null; do
  [ "$(date +%s)" -lt "$end" ] \
    || fail "the proxy still runs 30 s after the growth (built without -DGP_TEST_HOOKS=ON?)"
  sleep 0.1
done
rc=0
wait "$PROXY_PID" || rc=$?
PROXY_PID=""
LINE=$(grep -F "assigning 4 partition(s) at their committed offsets: failed by GP_FAULT_FAIL=assign" \
  "$WORK/proxy.log" || true)
[ -n "$LINE" ] || fail "no log line names the failed assignment"
say "exit $rc; log: ${LINE#* error }"
[ "$rc" -eq 1 ] || fail "exit $rc after the failed assignment, expected 1 (GP_EXIT_FATAL)"
grep -qF "$S grew to 4 partitions: " <<<"$LINE" || fail "the log line does not name $S and its growth"
grep -qF "exiting (code 1) for a restart" <<<"$LINE" || fail "the log line does not say it exits"
grep -q "transaction aborted" "$WORK/proxy.log" && fail "an abort happened: not the growth's assignment"
ROUTED=$(routed)
say "routed before the exit: $ROUTED of 8000"

say "2: restarted without the fault, it goes on from the last commit"
start_proxy p
produce "$S" 2000 8000 --ts-start $((BASE + 8000)) --disorder 100
wait_for "10000 records routed" 60 routed_is 10000
stop_proxy
grep -q "restored checkpoint" "$WORK/proxy.log" || fail "the restart did not restore the checkpoint"
check "$S"
[ "$CHECKED" = 10000 ] || fail "checked $CHECKED records, expected 10000"
say "PASS"
