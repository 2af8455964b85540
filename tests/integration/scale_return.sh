#!/usr/bin/env bash
# A partition held by the agreement moves away and comes back to the member
# that held it (gate.membership=group, 3 source partitions, records flowing
# at 1000/s, event time at wall speed):
#
#  1. i0 alone owns the 3 partitions; i1 joins and takes one, and its loop
#     is held in its first commit (GP_FAULT_HOLD at before-commit): its
#     partition has no promise, so T cannot be agreed;
#  2. cutover to green: i0 promises for its 2 partitions and holds both
#     (paused in librdkafka) at their first record at or above the promise;
#  3. i2 joins: cooperative-sticky takes one of i0's held partitions from
#     it (the rebalance completes, and i2 gets it, once i1 runs again);
#  4. i1 is let go: it promises, T is agreed, the holds end;
#  5. i2 and i1 leave cleanly: every partition comes back to i0, among them
#     the one it paused and lost in 3.
#
# librdkafka keeps an application's pause across unassign and assign
# (librdkafka #1849): unless i0 resumes what it gets, the returned
# partition is never read again, closes as idle, and its records stay
# unrouted. Proves every record routed exactly once, in order, split by T,
# and i0 reading the returned partition (its last records routed).
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

S=gp-return-$RUN_ID
BASE=$(($(date +%s%3N) - 60000))
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 3 \
  --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
for i in 0 1 2; do
  GP_INSTANCE=i$i write_conf i$i "$S" gate.commit.interval.ms=100 gate.lateness.ms=5000 \
    log.level=debug
done

declare -A PID=()
return_exit() {
  local rc=$?
  set +e
  rm -f "$WORK/h1.before-commit"
  (exit $rc)
  scale_exit
}
trap return_exit EXIT

# held_parts I: the partitions instance I has logged as held for T
held_parts() {
  grep -oE "$S/[0-9]+ held at offset [0-9]+ \(event time [0-9]+, promise [0-9]+\) until T" \
    "$WORK/i$1.log" | cut -d' ' -f1 | sort -u
}
two_held() { [ "$(held_parts 0 | wc -l)" -ge 2 ]; }

say "1. i0 alone, then i1 joins with its first commit held"
flow 20000 0 "$BASE"
start_inst 0
wait_for "i0 to own the 3 partitions" 60 owns 0 3
wait_for "records routed" 60 routed_is 1000
touch "$WORK/h1.before-commit"
start_inst 1 GP_FAULT_HOLD="$WORK/h1"
wait_for "i1 held in its first commit" 60 test -e "$WORK/h1.before-commit.held"
wait_for "i0 to own 2 partitions" 30 owns 0 2
say "i0 owns 2 partitions, i1 owns 1 and is held before its commit"

say "2. cutover to green: i0 holds its partitions at their promises"
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 1000 >/dev/null 2>&1
wait_for "i0 to hold both its partitions" 30 two_held
say "i0 holds $(held_parts 0 | tr '\n' ' ')"
[ -z "$(key watermark-toggle-value)" ] || fail "T in the map while i1 has not promised"

say "3. i2 joins: i0 lets one of its held partitions go"
start_inst 2
wait_for "i0 to own 1 partition" 45 owns 0 1
alive

# The rebalance ends once i1 takes part again (its loop runs the callback).
say "4. i1 is let go: i2 gets the partition, T is agreed"
rm -f "$WORK/h1.before-commit"
wait_for "i2 to own a partition" 45 owns 2 1
wait_for "T in the map" 60 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
say "T=$T"

say "5. i2 and i1 leave: every partition comes back to i0"
term_inst 2
term_inst 1
wait_for "i0 to own the 3 partitions again" 60 owns 0 3
flow_done
# The old side closes; the last records come from every partition, among
# them the one i0 paused and got back.
close_and_route 20000 "$T" 60
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts \
  --cutoff "$T" --old blue 2>&1) || fail "checker: $out (a partition i0 held and got back is not read: librdkafka kept its pause)"
say "checker: $out"
term_inst 0
scale_line "test=return instances=3 returns=1" "T=$T"
say "PASS"
