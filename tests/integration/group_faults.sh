#!/usr/bin/env bash
# Group mode (gate.membership=group) against faults of the consumer's side,
# each made to happen at a known place, on a real broker:
#
#  a. seeks that time out (GP_FAULT_FAIL=seek, the test build's stand-in
#     for a consumer whose threads answer late; librdkafka before 2.1.0 did
#     it on every loaded host, #4230): a seek after a rebalance that times
#     out 3 times is asked again and the member goes on, every record
#     exactly once; one that times out every time ends the member with
#     exit 1 and says why;
#  b. group metadata without a member (GP_FAULT_FAIL=metadata: a snapshot
#     as librdkafka gives it while it has reset the member id and the
#     generation): the broker would take such a member's offsets unfenced,
#     so the member commits nothing until the next rebalance, then
#     everything once;
#  c. static membership, two instances given one kafka.group.instance.id:
#     the broker fences the first (FENCED_INSTANCE_ID, fatal to its
#     consumer); it exits 3 (fenced) naming the setting, within 30 s,
#     and the second routes every record exactly once.
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

BASE=1700000000000
declare -A PID=()
faults_exit() {
  local rc=$?
  kill_all_inst
  [ $rc -eq 0 ] || show_logs
  set +e; (exit $rc)
  finish_test
}
trap faults_exit EXIT

log_has() { grep -qF -- "$2" "$WORK/i$1.log"; }
exited() { ! kill -0 "${PID[$1]}" 2>/dev/null; }
# reap I: the exit code of instance I, which has ended, in RC
reap() {
  RC=0
  wait "${PID[$1]}" || RC=$?
  PID[$1]=""
}
# checked TOPIC: every record of TOPIC exactly once, in order
checked() {
  "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$1" --event-time json:ts >/dev/null 2>&1
}
# section_conf I TOPIC CM [key=value...]: instance I's configuration, in a
# pipeline (and group) of its section's own, with the control map CM
section_conf() {
  local i=$1 topic=$2 cm=$3; shift 3
  GP_INSTANCE=i$i write_conf i$i "$topic" gate.pipeline="it-$RUN_ID-$topic" \
    control.file="$WORK/$cm" gate.commit.interval.ms=100 "$@"
}

# ---- a. seeks that time out -------------------------------------------------
SA=gp-gfa-$RUN_ID
say "a. the first seek after the first rebalance times out 3 times"
produce "$SA" 3000 0 --ts-start $BASE --headers --partitions-hint 4
section_conf 0 "$SA" cm-a.json
section_conf 1 "$SA" cm-a.json
"$GP_BIN" init --control "$WORK/cm-a.json" >/dev/null
start_inst 0 GP_FAULT_FAIL=seek:1x3
wait_for "every record of $SA routed once" 60 checked "$SA"
for k in 2 3 4; do
  log_has 0 "asking again ($k of 5)" || fail "i0 did not ask for the seek again ($k of 5)"
done
alive
say "the seek was asked 4 times; 3000 records routed"
say "a. then a member whose seeks time out every time"
start_inst 1 GP_FAULT_FAIL=seek:1x100
wait_for "i1 to end" 60 exited 1
reap 1
[ "$RC" = 1 ] || fail "i1 exited $RC after its seeks timed out 5 times (expected 1)"
log_has 1 "seeking" || fail "i1's log does not say the seek failed"
grep -m1 "seeking" "$WORK/i1.log" | cut -c1-200
produce "$SA" 1000 3000 --ts-start $((BASE + 3000)) --headers
wait_for "i0 to route the rest" 60 checked "$SA"
term_inst 0
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$SA" --event-time json:ts) \
  || fail "checker: $out"
say "checker: $out"

# ---- b. group metadata that names no member --------------------------------
SB=gp-gfb-$RUN_ID
say "b. i0's first rebalance gives it group metadata without a member"
produce "$SB" 2000 0 --ts-start $BASE --headers --partitions-hint 4
section_conf 0 "$SB" cm.json
section_conf 1 "$SB" cm.json
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
start_inst 0 GP_FAULT_FAIL=metadata:1
refused_or_routed() { log_has 0 "not committing: the group metadata" || [ "$(routed)" -gt 0 ]; }
wait_for "i0 to commit or refuse to" 60 refused_or_routed
# Every commit of i0 carries that snapshot until the next rebalance.
[ "$(routed)" = 0 ] || fail "i0 committed $(routed) records with group metadata that names no member (unfenced)"
alive
say "i0 refuses to commit; i1 joins (a rebalance)"
start_inst 1
wait_for "every record of $SB routed once" 60 checked "$SB"
term_inst 1
term_inst 0
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$SB" --event-time json:ts) \
  || fail "checker: $out"
say "checker: $out"

# ---- c. two instances with one group.instance.id ---------------------------
SC=gp-gfc-$RUN_ID
say "c. i1 joins with i0's kafka.group.instance.id"
produce "$SC" 2000 0 --ts-start $BASE --headers --partitions-hint 4
section_conf 0 "$SC" cm-c.json kafka.group.instance.id="gp-static-$RUN_ID"
section_conf 1 "$SC" cm-c.json kafka.group.instance.id="gp-static-$RUN_ID"
"$GP_BIN" init --control "$WORK/cm-c.json" >/dev/null
start_inst 0
wait_for "i0 to route the first records" 60 checked "$SC"
start_inst 1
wait_for "i0 to end, fenced" 30 exited 0
reap 0
[ "$RC" = 3 ] || fail "i0 exited $RC after another instance took its group.instance.id (expected 3)"
log_has 0 "group.instance.id gp-static-$RUN_ID" || fail "i0's log does not name the group.instance.id"
grep -m1 "fenced in group" "$WORK/i0.log" | cut -c1-220
produce "$SC" 1000 2000 --ts-start $((BASE + 2000)) --headers
wait_for "i1 to route every record" 60 checked "$SC"
term_inst 1
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$SC" --event-time json:ts) \
  || fail "checker: $out"
say "checker: $out"
say "PASS"
