#!/usr/bin/env bash
# A second proxy of the same pipeline (same transactional.id) started while
# the first runs and records flow: the first is fenced, logs it and exits 3
# (GP_EXIT_FENCED) without committing again; the second goes on from the
# last commit, and the checker finds every record exactly once.
source "$(dirname "$0")/lib.sh"

S=gp-zombie-$RUN_ID
BASE=1700000000000
TOTAL=30000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 3 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S" gate.commit.interval.ms=200
start_proxy p
OLD_PID=$PROXY_PID

produce "$S" $TOTAL 0 --ts-start $BASE --disorder 200 --rate 2000 &
PRODUCER=$!
wait_for "3000 records routed" 60 routed_is 3000

# The new instance: same configuration, its own log.
"$GP_BIN" run -c "$WORK/p.conf" >>"$WORK/proxy-new.log" 2>&1 &
NEW_PID=$!
say "second instance started (pid $NEW_PID) while the first (pid $OLD_PID) runs"
zombie_exit() {
  local rc=$?
  kill -9 "$NEW_PID" 2>/dev/null || true
  if [ $rc -ne 0 ]; then
    echo "--- last lines of the second instance's log ($WORK/proxy-new.log):" >&2
    tail -n 20 "$WORK/proxy-new.log" >&2 || true
  fi
  set +e; (exit $rc)  # finish_test reads $?
  finish_test
}
trap zombie_exit EXIT

END=$(( $(date +%s) + 60 ))
while kill -0 "$OLD_PID" 2>/dev/null; do
  [ "$(date +%s)" -lt "$END" ] || fail "the first instance still runs 60 s after the second started"
  kill -0 "$NEW_PID" 2>/dev/null || fail "the second instance died: $(tail -n 5 "$WORK/proxy-new.log")"
  sleep 0.2
done
rc=0
wait "$OLD_PID" || rc=$?
say "the first instance exited $rc"
[ $rc -eq 3 ] || fail "the fenced instance exited $rc (expected 3, GP_EXIT_FENCED)"
grep -q "fenced" "$WORK/proxy.log" || fail "the fenced instance did not log 'fenced'"
grep "fenced: another gate-proxy" "$WORK/proxy.log" | tail -n 1
grep -q "outlived transaction.timeout.ms" "$WORK/proxy.log" \
  && fail "a real fencing was taken for a timed-out transaction"

# The second instance carries on; it is the one lib.sh stops now.
PROXY_PID=$NEW_PID
wait "$PRODUCER"
wait_for "$TOTAL records routed" 90 routed_is $TOTAL
stop_proxy
grep -q "restored checkpoint" "$WORK/proxy-new.log" \
  || fail "the second instance did not start from the first one's checkpoint"
check "$S"
[ "$CHECKED" = $TOTAL ] || fail "checked $CHECKED records, expected $TOTAL"
say "PASS"
