#!/usr/bin/env bash
# A pipeline run with gate.membership=assign upgrades in place to group:
# the assign process routes, a cutover to green chooses T, and it is killed
# (SIGKILL) in the split with records flowing; then one instance with
# gate.membership=group starts on the same group (its own transactional.id:
# it reads the committed offsets once the killed transaction has timed
# out), takes the split with the same T from the checkpoints, a second
# instance joins and takes some partitions with that T, leaves again
# (SIGTERM), and the first, owning every partition again, closes the old
# side.
#
# Proves: nothing lost, duplicated or reordered across the change of mode,
# and every record split by the one T (gp-check --cutoff T --old blue);
# every restored checkpoint holds that T.
source "$(dirname "$0")/lib.sh"

S=gp-upgrade-$RUN_ID
BASE=1700000000000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 6 --quiet \
  >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
GP_MEMBERSHIP=assign write_conf a "$S" gate.lateness.ms=15000
GP_MEMBERSHIP=group GP_INSTANCE=u0 write_conf g0 "$S" gate.lateness.ms=15000
GP_MEMBERSHIP=group GP_INSTANCE=u1 write_conf g1 "$S" gate.lateness.ms=15000

# all: every record fed is in a colour topic (gp-check finds nothing amiss)
all_routed() {
  "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts >/dev/null 2>&1
}

say "assign mode: 10000 records, then a cutover to green with records flowing"
produce "$S" 10000 0 --ts-start $BASE --disorder 150 --headers --key-every 3
start_proxy a
wait_for "10000 records routed" 60 routed_is 10000
produce "$S" 30000 10000 --ts-start $((BASE + 10000)) --disorder 150 --headers --rate 3000 &
PRODUCER=$!
sleep 1
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 500 >/dev/null
wait_for "T published" 60 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
say "T=$T; killing the assign process in the split"
sleep 1
kill_proxy

say "group mode: instance u0 on the same group"
start_proxy g0
G0=$PROXY_PID
wait_for "u0 to restore the checkpoint" 60 grep -q "restored checkpoint" "$WORK/proxy.log"
grep "restored checkpoint" "$WORK/proxy.log" | tail -n 1
grep "restored checkpoint" "$WORK/proxy.log" | tail -n 1 | grep -q "phase split, blue -> green, T=$T\$" \
  || fail "u0 did not restore the split with T=$T"
sleep 2

say "instance u1 joins: the partitions are shared, T adopted"
"$GP_BIN" run -c "$WORK/g1.conf" >>"$WORK/u1.log" 2>&1 &
G1=$!
wait_for "u1 to be assigned partitions" 60 grep -q "assigned [1-9]" "$WORK/u1.log"
grep -q "restored checkpoint.*T=$T\$" "$WORK/u1.log" || fail "u1 did not take T=$T: $(grep restored "$WORK/u1.log")"
wait "$PRODUCER"
sleep 3
kill -TERM $G1
rc=0
wait $G1 || rc=$?
[ $rc -eq 0 ] || fail "u1 exited $rc after SIGTERM"
say "u1 left; u0 owns every partition again and may close"
wait_for "CLEAR_TO_TEARDOWN" 90 key_is stage CLEAR_TO_TEARDOWN
[ "$(key watermark-toggle-value)" = "$T" ] || fail "T changed to $(key watermark-toggle-value)"
wait_for "every record routed" 60 all_routed
stop_proxy

if grep -h "restored checkpoint" "$WORK/proxy.log" "$WORK/u1.log" | grep -v "T=$T\$" | grep -v "T=-1\$"; then
  fail "a checkpoint was restored with a T other than $T"
fi
check "$S" --cutoff "$T" --old blue
[ "$CHECKED" = 40000 ] || fail "checked $CHECKED records, expected 40000"
say "PASS"
