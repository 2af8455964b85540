#!/usr/bin/env bash
# A re-delivery that moves to another member is finished there, before the
# pipeline begins its next transition (gate.membership=group, 3 instances
# on 3 source partitions, records flowing at 1000/s, event time at wall
# speed, gate.abort.redeliver=true):
#
#  1. hop 1, blue -> green: T1 agreed, every member splits by it for a few
#     seconds, so that each partition sent records at or past T1 to green;
#  2. `gate-proxy abort`: blue survives, and each member reads its
#     partition again from where its split began, giving blue what went to
#     green; i2 commits its re-delivery's state and is held there
#     (GP_FAULT_HOLD at "redelivering", once its status says so), half
#     way (10 records a transaction: its re-delivery takes seconds);
#     `gate-proxy status` shows the pipeline re-delivering, from i2's own
#     key, whatever the members' shared keys say last;
#  3. `gate-proxy finish` and `gate-proxy cutover --to green --at FAR` at
#     once: hop 2, asking for a T far above every event time, so that blue,
#     the survivor of hop 1, gets every record of the run;
#  4. i2 is killed (SIGKILL) and not restarted: after the session timeout
#     its partition goes to i0 or i1 with the re-delivery half done.
#
# i0 and i1 have finished their own re-deliveries, but hop 2 must not begin
# while i2's partition still owes blue records: its next owner would route
# them by hop 2's gate, not by hop 1's T, and send blue again what it has.
# Proves blue holding every record exactly once, in the survivor's order
# (the re-delivered block after what blue had), with gp-check --survivor
# blue over the whole run, and i0 and i1 saying why hop 2 waited.
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

S=gp-redeliver-$RUN_ID
BASE=$(($(date +%s%3N) - 60000))
FAR=$((BASE + 86400000))
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 3 \
  --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
for i in 0 1 2; do
  GP_INSTANCE=i$i write_conf i$i "$S" gate.commit.interval.ms=100 gate.commit.records=100 \
    gate.lateness.ms=600000 gate.abort.redeliver=true log.level=debug
done
# i2's re-delivery takes seconds: a status of it open is posted
echo "gate.commit.records=10" >>"$WORK/i2.conf"

declare -A PID=()
redeliver_exit() {
  local rc=$?
  set +e
  rm -f "$WORK/h2.redelivering"
  (exit $rc)
  scale_exit
}
trap redeliver_exit EXIT
splits() { log_has "$1" "cutoff agreed: T=$2"; }
waited() { log_has "$1" "waits: [0-9]+ partition\(s\) of the pipeline are still in an earlier"; }
moved() { owns 0 2 || owns 1 2; }

say "1. hop 1: three members split by T1"
flow 28000 0 "$BASE"
start_inst 0
start_inst 1
start_inst 2 GP_FAULT_HOLD="$WORK/h2"
for i in 0 1 2; do wait_for "i$i to own 1 partition" 60 owns $i 1; done
wait_for "records routed" 60 routed_is 2000
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 1000 >/dev/null 2>&1
wait_for "T1 in the map" 60 key_is watermark-stage WATERMARK_SET
T1=$(key watermark-toggle-value)
for i in 0 1 2; do wait_for "i$i to split by T1" 30 splits $i "$T1"; done
say "T1=$T1; splitting for 8 s"
sleep 8

say "2. abort: each member re-delivers; i2 is held half way"
touch "$WORK/h2.redelivering"
"$GP_BIN" abort --control "$WORK/cm.json" >/dev/null 2>&1
wait_for "i2 held with its re-delivery committed open" 60 test -e "$WORK/h2.redelivering.held"
for i in 0 1; do wait_for "i$i's re-delivery" 60 log_has $i "re-delivery done"; done
pipeline_redelivers() {
  "$GP_BIN" status --control "$WORK/cm.json" >"$WORK/status.out" 2>&1 || true
  grep -qE "^pipeline .* open=[1-9]" "$WORK/status.out"
}
wait_for "gate-proxy status to show the pipeline re-delivering" 10 pipeline_redelivers
say "status: $(grep '^pipeline' "$WORK/status.out"); the shared key says: $(key gate-proxy.redelivery)"

say "3. finish, and cut over to green again at once, asking for T=$FAR"
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null 2>&1
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --at "$FAR" >/dev/null 2>&1
for i in 0 1; do wait_for "i$i to see hop 2" 30 waited $i; done
alive

say "4. i2 killed in its re-delivery; its partition moves"
kill_inst 2
rm -f "$WORK/h2.redelivering"
wait_for "i2's partition to move to i0 or i1" 60 moved
wait_for "T2 in the map" 90 key_is watermark-stage WATERMARK_SET
T2=$(key watermark-toggle-value)
[ "$T2" = "$FAR" ] || fail "T2=$T2, not the T asked for ($FAR)"
flow_done
end=$(($(date +%s) + 60))
until all_routed || [ "$(date +%s)" -ge $end ]; do sleep 0.5; done
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts \
  --survivor blue 2>&1) || fail "checker (blue survives hop 1): $out"
say "checker (blue survives hop 1, hop 2 sends it everything): $out"
grep -q "redelivered=[1-9]" <<<"$out" || fail "nothing was re-delivered: $out"
term_inst 0
term_inst 1
scale_line "test=redeliver instances=3 kills=1 aborts=1" "T1=$T1 T2=$T2"
say "PASS"
