#!/usr/bin/env bash
# An abort after the close that one member never read
# (gate.membership=group, 2 instances on 2 source partitions):
#
#  1. hop 1, blue -> green, to CLEAR_TO_TEARDOWN: both members closed;
#  2. i1 is stopped (SIGSTOP, well within its session timeout, so it keeps
#     its partition);
#  3. `gate-proxy abort`, `finish` and `cutover --to green` while it is
#     stopped: i1 never sees the abort's version of the map;
#  4. i1 continues, and finds a later transition into the colour its
#     closed one rolled to: the map went back to blue in between.
#
# i1 must take that abort (its partition stops going to green, which the
# pipeline gave up) before hop 2 begins; without it, i1's closed line holds
# i0's census back for good and i1 goes on sending every record to green.
# Proves: i1 logs the abort, hop 2 agrees T2 above T1, and from T2's
# agreement on every record is routed exactly once, in order, split by T2
# (gp-check --since).
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

S=gp-missed-$RUN_ID
BASE=$(($(date +%s%3N) - 60000))
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 \
  --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
for i in 0 1; do
  GP_INSTANCE=i$i write_conf i$i "$S" gate.commit.interval.ms=100 gate.lateness.ms=1000 \
    kafka.session.timeout.ms=30000 gate.abort.redeliver=false log.level=debug
done

declare -A PID=()
trap scale_exit EXIT

say "1. hop 1 to CLEAR_TO_TEARDOWN"
flow 20000 0 "$BASE"
for i in 0 1; do start_inst $i; done
for i in 0 1; do wait_for "i$i to own 1 partition" 60 owns $i 1; done
wait_for "records routed" 60 routed_is 2000
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 1000 >/dev/null 2>&1
wait_for "T1 in the map" 60 key_is watermark-stage WATERMARK_SET
T1=$(key watermark-toggle-value)
flow_done
flow 3000 20000 $((T1 + 5000))
flow_done
wait_for "CLEAR_TO_TEARDOWN" 90 key_is stage CLEAR_TO_TEARDOWN
say "hop 1 closed at T1=$T1"

say "2-3. i1 stopped; abort, finish and cutover again meanwhile"
aborted_at=$(grep -c "transition blue -> green aborted" "$WORK/i1.log" || true)
kill -STOP "${PID[1]}"
"$GP_BIN" abort --control "$WORK/cm.json" >/dev/null 2>&1
wait_for "i0's abort" 30 log_has 0 "transition blue -> green aborted"
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null 2>&1
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 1000 >/dev/null 2>&1
kill -CONT "${PID[1]}"

say "4. i1 continues into hop 2"
flow 20000 23000 $((T1 + 10000))
i1_aborted() { [ "$(grep -c "transition blue -> green aborted" "$WORK/i1.log")" -gt "$aborted_at" ]; }
wait_for "i1 to take the abort it did not read" 30 i1_aborted
wait_for "T2 in the map" 60 key_is watermark-stage WATERMARK_SET
T2=$(key watermark-toggle-value)
[ "$T2" -gt "$T1" ] || fail "T2=$T2 is not above T1=$T1"
E3=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --end-offsets)
say "T2=$T2"
alive
flow_done

say "5. past T2 + lateness: the old side closes"
close_and_route 43000 "$T2"
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts \
  --cutoff "$T2" --old blue --since "$E3" 2>&1) || fail "checker from T2's agreement: $out"
say "checker (from T2's agreement, split by T2): $out"
term_inst 0
term_inst 1
scale_line "test=missed instances=2 stops=1 aborts=1" "T1=$T1 T2=$T2"
say "PASS"
