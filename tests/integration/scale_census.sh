#!/usr/bin/env bash
# The agreement reads the committed checkpoints while another member's
# commit is pending (gate.membership=group, 2 instances on 2 source
# partitions, records flowing at 1000/s, event time at wall speed):
#
#  1. i0 is held before the offsets of its next commit
#     (GP_FAULT_HOLD at before-send-offsets): it has not seen the hop yet;
#  2. hop blue -> green: i1 promises, and is held right after the commit of
#     its promise (at "promised");
#  3. i1 is let go into its next commit and held inside it (at
#     before-commit), after its offsets went into the transaction: its
#     partition has a commit pending at the broker for as long as i1
#     holds;
#  4. i0 is let go: it promises and commits; both promises are committed,
#     i1's next commit still pending: i0 must read T from them.
# Both have a transaction timeout of 20 s, longer than they are held.
#
# A read of the committed offsets that asks for stable offsets
# (read_committed's RequireStable) is refused while any partition read has
# a commit pending, and librdkafka asks again until its timeout: with many
# members committing every 100 ms there may be no moment without one.
# The last committed line is what the agreement needs (a pending one only
# makes it wait longer). Proves T agreed while i1's commit is pending, no
# failed read of the checkpoints, and every record routed exactly once, in
# order, split by T, after i1 goes on.
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

S=gp-census-$RUN_ID
BASE=$(($(date +%s%3N) - 60000))
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 \
  --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
for i in 0 1; do
  GP_INSTANCE=i$i write_conf i$i "$S" gate.commit.interval.ms=100 gate.lateness.ms=3000 \
    log.level=debug kafka.transaction.timeout.ms=20000 kafka.session.timeout.ms=30000
done

declare -A PID=()
census_exit() {
  local rc=$?
  set +e
  rm -f "$WORK"/h[01].*
  (exit $rc)
  scale_exit
}
trap census_exit EXIT

say "1. i0 held before the offsets of its next commit"
flow 20000 0 "$BASE"
start_inst 0 GP_FAULT_HOLD="$WORK/h0"
start_inst 1 GP_FAULT_HOLD="$WORK/h1"
for i in 0 1; do wait_for "i$i to own 1 partition" 60 owns $i 1; done
wait_for "records routed" 60 routed_is 2000
touch "$WORK/h0.before-send-offsets"
wait_for "i0 held" 30 test -e "$WORK/h0.before-send-offsets.held"

say "2. hop blue -> green: i1 held after its promise is committed"
touch "$WORK/h1.promised"
# records below the promises for 5 s: i1 has more to commit after its promise
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 5000 >/dev/null 2>&1
wait_for "i1 held after its promise's commit" 30 test -e "$WORK/h1.promised.held"

say "3. i1 held in its next commit, with offsets in it"
touch "$WORK/h1.before-commit"
rm -f "$WORK/h1.promised"
wait_for "i1 held before its commit" 30 test -e "$WORK/h1.before-commit.held"
held_at=$(date +%s)

say "4. i0 let go: it promises"
rm -f "$WORK/h0.before-send-offsets"
say "5. T agreed while i1's commit is pending"
wait_for "T in the map with i1's commit pending" 15 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
[ -e "$WORK/h1.before-commit.held" ] || fail "i1 was let go before T was agreed"
say "T=$T agreed $(($(date +%s) - held_at)) s into i1's hold"
! log_has 0 "cannot read the committed checkpoints" \
  || fail "the agreement could not read the checkpoints while a commit was pending: $(grep -m1 'cannot read the committed' "$WORK/i0.log")"
rm -f "$WORK/h1.before-commit"
alive
flow_done
close_and_route 20000 "$T"
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts \
  --cutoff "$T" --old blue 2>&1) || fail "checker: $out"
say "checker: $out"
term_inst 0
term_inst 1
scale_line "test=census instances=2 holds=1" "T=$T"
say "PASS"
