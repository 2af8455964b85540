#!/usr/bin/env bash
# A line of an earlier transition between the same colours is not the
# current one (gate.membership=group, 3 instances on 3 source partitions,
# records flowing at 1000/s, event time at wall speed):
#
#  1. hop 1, blue -> green: T1 agreed, every member splits by it;
#  2. i2 is killed (SIGKILL) and not restarted: its partition keeps its
#     last line (SPLIT blue -> green, T1) for the session timeout (20 s
#     here), with no owner;
#  3. `gate-proxy abort` (gate.abort.redeliver=false: what went to green
#     stays there, so each record is in one colour): blue takes all;
#  4. `gate-proxy finish` and `gate-proxy cutover --to green` at once:
#     hop 2, blue -> green again, under a new transition id.
#
# Hop 2's T must be its own: above every event time blue already has (the
# abort sent every record to blue). A member that took i2's stale line for
# hop 2 would agree T2 = T1 at once, though blue has records past T1. Later
# i2's partition goes to a survivor, which must not take the stale line's
# T1 or its phase either. Proves T2 above T1 and above every event time
# produced before hop 2, and every record routed exactly once, in order,
# and from hop 2's start split by T2 (gp-check --since); at the end i2's
# status key, silent since its kill, is gone from the map.
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

S=gp-stale-$RUN_ID
BASE=$(($(date +%s%3N) - 60000))
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 3 \
  --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
for i in 0 1 2; do
  GP_INSTANCE=i$i write_conf i$i "$S" gate.commit.interval.ms=100 gate.lateness.ms=3000 \
    kafka.session.timeout.ms=20000 gate.abort.redeliver=false log.level=debug \
    gate.member.forget.ms=15000
done

declare -A PID=()
trap scale_exit EXIT
splits() { log_has "$1" "cutoff agreed: T=$2"; }

say "1. hop 1: three members split by T1"
flow 40000 0 "$BASE"
for i in 0 1 2; do start_inst $i; done
for i in 0 1 2; do wait_for "i$i to own 1 partition" 60 owns $i 1; done
wait_for "records routed" 60 routed_is 2000
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 1000 >/dev/null 2>&1
wait_for "T1 in the map" 60 key_is watermark-stage WATERMARK_SET
T1=$(key watermark-toggle-value)
for i in 0 1 2; do wait_for "i$i to split by T1" 30 splits $i "$T1"; done
say "T1=$T1, every member splits by it"

say "2. i2 killed; its partition keeps its last line"
# past T1, so that i2's line is SPLIT with records on both sides
sleep 2
kill_inst 2

say "3. abort: blue takes all"
"$GP_BIN" abort --control "$WORK/cm.json" >/dev/null 2>&1
for i in 0 1; do wait_for "i$i's abort" 60 log_has $i "transition blue -> green aborted"; done

say "4. finish, and cut over again to green at once"
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null 2>&1
E2=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --end-offsets)
# event time is BASE + id: the highest produced before hop 2, all in blue
# once routed
HI2=$((BASE + $(tr ',' '\n' <<<"$E2" | cut -d: -f2 | paste -sd+) - 1))
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 1000 >/dev/null 2>&1
TID2=$(key gate-proxy.transition-id)
wait_for "T2 in the map" 90 key_is watermark-stage WATERMARK_SET
T2=$(key watermark-toggle-value)
say "T2=$T2 (transition $TID2)"
[ "$T2" -gt "$T1" ] || fail "T2=$T2 is not above T1=$T1: hop 2 took the stale line of hop 1 (i2's) for its own"
[ "$T2" -gt "$HI2" ] || fail "T2=$T2 is not above event time $HI2, produced before hop 2 and routed to blue"
alive
flow_done

say "5. past T2 + lateness: the old side closes"
close_and_route 40000 "$T2"
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts \
  --cutoff "$T2" --old blue --since "$E2" 2>&1) || fail "checker from hop 2's start: $out"
say "checker (from hop 2's start, split by T2): $out"
# i2's own status key, silent since its kill, is removed by a member still
# running once gate.member.forget.ms (15 s here) has passed; the others stay.
forgot_i2() { [ -z "$(key gate-proxy.member.i2)" ]; }
wait_for "i2's member key removed" 30 forgot_i2
[ -n "$(key gate-proxy.member.i0)" ] && [ -n "$(key gate-proxy.member.i1)" ] \
  || fail "a running member's key was removed"
term_inst 0
term_inst 1
scale_line "test=stale instances=3 kills=1 aborts=1" "T1=$T1 T2=$T2"
say "PASS"
