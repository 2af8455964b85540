#!/usr/bin/env bash
# A member whose copy of the map lags behind the checkpoints
# (gate.membership=group, 6 source partitions, records flowing at 1000/s,
# event time at wall speed):
#
#  1. i0, i1 and i2 hop blue -> green on the shared map: T agreed, every
#     member splits by it;
#  2. i3 joins with a copy of the map taken before the cutover (its own
#     control file, never updated: a watch that stopped seeing changes)
#     and takes partitions whose committed lines split by T.
#
# The lines name the transition (tx=, the map's gate-proxy.transition-id);
# i3's copy names an earlier one, so i3 routes by the lines and does not
# step its gate from the copy. A member that did would read "the map rolled
# back" and abort the hop on its partitions: records at or past T to blue,
# re-delivered copies of green's. Proves every record routed exactly once,
# in order, split by T, with i3 having routed some of them.
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

S=gp-lag-$RUN_ID
BASE=$(($(date +%s%3N) - 60000))
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 6 \
  --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
cp "$WORK/cm.json" "$WORK/cm-lagging.json"
for i in 0 1 2 3; do
  GP_INSTANCE=i$i write_conf i$i "$S" gate.commit.interval.ms=100 gate.lateness.ms=3000 \
    log.level=debug
done
echo "control.file=$WORK/cm-lagging.json" >>"$WORK/i3.conf"

declare -A PID=()
trap scale_exit EXIT
# green3: what i3's status, in the only map it writes, counts as sent to
# green (its partitions' counts, carried in their lines)
green3() {
  WORK_MAP="$WORK/cm-lagging.json" python3 -c 'import json,os
print(json.load(open(os.environ["WORK_MAP"]))["data"].get("gate-proxy.count.green") or 0)'
}
owns_some() { ! owns "$1" 0 && grep -qE "partition\(s\); [0-9]+ owned" "$WORK/i$1.log"; }

say "1. i0, i1, i2 hop blue -> green on the shared map"
flow 30000 0 "$BASE"
for i in 0 1 2; do start_inst $i; done
for i in 0 1 2; do wait_for "i$i to own 2 partitions" 60 owns $i 2; done
wait_for "records routed" 60 routed_is 2000
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 1000 >/dev/null 2>&1
wait_for "T in the map" 60 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
for i in 0 1 2; do wait_for "i$i to split by T" 30 log_has $i "cutoff agreed: T=$T"; done
say "T=$T, i0..i2 split by it"

say "2. i3 joins with the map as it was before the cutover"
start_inst 3
wait_for "i3 to own a partition" 60 owns_some 3
sleep 1
g3_join=$(green3)
alive
flow_done
flow 3000 30000 $((T + 10000))
flow_done
# CLEAR_TO_TEARDOWN, and i3 not aborting the hop meanwhile
end=$(($(date +%s) + 90))
until key_is stage CLEAR_TO_TEARDOWN; do
  ! log_has 3 "transition blue -> green aborted" \
    || fail "i3 aborted the hop from its lagging map: $(grep -m1 're-delivering' "$WORK/i3.log")"
  [ "$(date +%s)" -lt "$end" ] || fail "timed out after 90s waiting for CLEAR_TO_TEARDOWN"
  sleep 0.2
done
end=$(($(date +%s) + 60))
until all_routed || [ "$(date +%s)" -ge $end ]; do sleep 0.5; done
! log_has 3 "transition blue -> green aborted" \
  || fail "i3 aborted the hop from its lagging map: $(grep -m1 're-delivering' "$WORK/i3.log")"
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts \
  --cutoff "$T" --old blue 2>&1) || fail "checker: $out"
say "checker: $out"
g3=$(green3)
[ "$g3" -gt "$g3_join" ] || fail "i3 routed nothing to green after it joined ($g3_join, then $g3): the test proves nothing"
say "i3 routed $((g3 - g3_join)) record(s) to green after it joined"
for i in 0 1 2 3; do term_inst $i; done
scale_line "test=lag instances=4 lagging=1" "T=$T"
say "PASS"
