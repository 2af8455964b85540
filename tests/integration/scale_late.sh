#!/usr/bin/env bash
# A member that has read nothing takes partitions whose owner died before it
# promised, while another member's promises are committed: its promises are
# late (gate/agree.h), so T comes from the committed ones, in the records'
# event time, not from this member's wall clock (gate.membership=group, 4
# source partitions, event time in 2023, records flowing to 2 of them):
#
#  1. i0 alone, then i1 joins and its loop is held in its first commit
#     (GP_FAULT_HOLD at before-commit): its 2 partitions never promise;
#     records flow to i0's 2 partitions only;
#  2. cutover to green: i0 promises for its partitions (committed);
#  3. i1 is killed (SIGKILL) and i2, a new instance, joins: after i1's
#     session it gets i1's partitions, which never had a record;
#  4. T is agreed. i2's promises must wait for the agreement's first read
#     of the transition: answered before it ("no partition has promised"),
#     i2, having read nothing, promised the wall clock + D, and T landed in
#     2026, 3 years above every event time.
# Proves T within a day of the newest event time, and every record exactly
# once, in order, split by T.
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

S=gp-late-$RUN_ID
BASE=1700000000000
DAY=86400000
PRODUCER=""
PRODUCER2=""
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 4 \
  --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
for i in 0 1 2; do
  GP_INSTANCE=i$i write_conf i$i "$S" gate.commit.interval.ms=100 gate.lateness.ms=5000 \
    log.level=debug
done

declare -A PID=()
late_exit() {
  local rc=$?
  [ -z "$PRODUCER" ] || kill "$PRODUCER" "$PRODUCER2" 2>/dev/null || true
  rm -f "$WORK/h1.before-commit"
  kill_all_inst
  [ $rc -eq 0 ] || show_logs
  set +e; (exit $rc)
  finish_test
}
trap late_exit EXIT

# flow COUNT START_ID TS_START: records at 1000/s to each of i0's two
# partitions ($A and $B), in the background
flow() {
  "$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count "$1" --start-id "$2" \
    --ts-start "$3" --rate 1000 --partition "$A" --quiet >/dev/null &
  PRODUCER=$!
  "$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count "$1" \
    --start-id $(($2 + 1000000)) --ts-start "$3" --rate 1000 --partition "$B" --quiet >/dev/null &
  PRODUCER2=$!
}
flow_done() {
  local rc=0 rc2=0
  wait "$PRODUCER" || rc=$?
  wait "$PRODUCER2" || rc2=$?
  PRODUCER=""
  [ $rc -eq 0 ] && [ $rc2 -eq 0 ] || fail "gp-produce failed ($rc, $rc2)"
}
promised() { grep -q "held at offset [0-9]* (event time [0-9]*, promise [0-9]*" "$WORK/i0.log"; }

say "1. i0, then i1 held in its first commit; records to i0's partitions"
start_inst 0
wait_for "i0 to own the 4 partitions" 60 owns 0 4
touch "$WORK/h1.before-commit"
start_inst 1 GP_FAULT_HOLD="$WORK/h1"
wait_for "i1 held in its first commit" 60 test -e "$WORK/h1.before-commit.held"
wait_for "i0 to own 2 partitions" 30 owns 0 2
# i0's partitions: the 4 less those i1 was assigned
MINE=$(grep -oE "assigning $S/[0-9]+ at" "$WORK/i1.log" | grep -oE '/[0-9]+' | tr -d / | sort -u)
read -r A B <<<"$(printf '%s\n' 0 1 2 3 | grep -vxF "$MINE" | tr '\n' ' ')"
[ -n "$A" ] && [ -n "$B" ] || fail "cannot tell i0's partitions (i1 has: $(echo $MINE))"
say "i0 owns $S/$A and /$B, i1 owns the other two"
flow 12000 0 $BASE
wait_for "records routed" 60 routed_is 1000

say "2. cutover to green: i0 promises"
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 1000 >/dev/null 2>&1
wait_for "i0 to hold at a promise" 30 promised

say "3. i1 killed before it promised; i2 joins and gets its partitions"
kill_inst 1
start_inst 2
wait_for "i2 to own 2 partitions" 60 owns 2 2
wait_for "T in the map" 60 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
NEWEST=$((BASE + 12000))
say "T=$T; the newest event time is at most $NEWEST"
[ "$T" -lt $((NEWEST + DAY)) ] \
  || fail "T=$T is $(( (T - NEWEST) / DAY )) days above every event time: a member promised its wall clock"
alive

say "4. past T + lateness: the old side closes"
flow_done
flow 1500 12000 $((T + 10000))
flow_done
wait_for "CLEAR_TO_TEARDOWN" 90 key_is stage CLEAR_TO_TEARDOWN
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts \
  --cutoff "$T" --old blue --timeout-ms 60000 2>&1) || fail "checker: $out"
say "checker: $out"
term_inst 2
term_inst 0
scale_line "test=late instances=3 kills=1" "T=$T"
say "PASS"
