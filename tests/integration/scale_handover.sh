#!/usr/bin/env bash
# Scale-out with hand-overs: one pipeline over several instances of
# gate-proxy in one consumer group (gate.membership=group), 12 partitions,
# hops blue -> green -> blue -> green driven through the control file while
# records flow. During each hop: an instance SIGKILLed between the promises
# and T, a clean leave (3 -> 2 instances), two joins (-> 4), and an
# instance SIGKILLed right after T is in the map. The old side closes
# with the partitions still spread over 4 instances (each closes its own;
# CLEAR_TO_TEARDOWN once every partition's committed checkpoint is
# closed), and one instance leaves (4 -> 3) before the next hop.
#
# Proves, for every hop: one T (every "cutoff agreed" line of every
# instance equals the T in the map, and no instance chose T alone), the
# split by it (gp-check --cutoff T --old C over the hop's records:
# nothing >= T in the old colour, nothing < T in the new), and at the end
# every record exactly once in order. Prints one line (appended to
# $GP_SCALE_LINES):
#   scale: test=handover instances=4 kills=K scale_events=E hops=H checked=X
#          missing=0 duplicated=0 reordered=0 wrong_side=0 T=T1,T2,..
#          agree_ms=A1,A2,.. close_ms=C1,C2,.. kills_before_T=B kafka=V
# (agree_ms: from the cutover to T written in the map, per hop; close_ms:
# from T in the map to CLEAR_TO_TEARDOWN;
# kills_before_T: of the kills, those that came before T was in the map).
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

S=gp-handover-$RUN_ID
BASE=1700000000000
PARTS=12
MAX=4
HOP_RECORDS=24000
RATE=3000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint $PARTS \
  --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
for i in $(seq 0 $((MAX - 1))); do
  GP_INSTANCE=i$i write_conf i$i "$S" gate.commit.interval.ms=100
done

declare -A PID=()
handover_exit() {
  local rc=$?
  kill_all_inst
  [ $rc -eq 0 ] || show_logs
  set +e; (exit $rc)
  finish_test
}
trap handover_exit EXIT
ms() { date +%s%3N; }
# all_routed: every source record committed in a colour topic exactly once
all_routed() {
  "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts >/dev/null 2>&1
}

# waiting_or_t: polls the map every 10 ms (30 s at most) until it shows the
# instances waiting for T (watermark-stage=WAITING_FOR_WATERMARK) or T;
# prints "waiting" while T is not there, else "T"
waiting_or_t() {
  python3 - "$WORK/cm.json" <<'PY'
import json, sys, time
end = time.time() + 30
while time.time() < end:
    try:
        d = json.load(open(sys.argv[1])).get("data") or {}
    except Exception:
        d = {}
    if d.get("watermark-toggle-value"):
        print("T"); break
    if d.get("watermark-stage") == "WAITING_FOR_WATERMARK":
        print("waiting"); break
    time.sleep(0.01)
else:
    print("none")
PY
}

K=0
KB=0 # kills before T was in the map
E=0
for i in 0 1 2; do start_inst $i; done
say "3 instances started"
produce "$S" 6000 0 --ts-start $BASE --disorder 300 --key-every 5
FED=6000
wait_for "the first records routed (steady on blue)" 120 all_routed
[ "$(key gate-proxy.count.green)" = 0 ] || fail "green got records before any cutover"

OLD=blue
TS=""
COSTS=""
HOPS=3
declare -A LOGAT=()
for h in $(seq 1 $HOPS); do
  [ $OLD = blue ] && NEW=green || NEW=blue
  for i in $(seq 0 $((MAX - 1))); do
    touch "$WORK/i$i.log"
    LOGAT[$i]=$(wc -l <"$WORK/i$i.log")
  done
  SINCE=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --end-offsets)
  produce "$S" $HOP_RECORDS $FED --ts-start $((BASE + FED)) --disorder 300 --rate $RATE \
    --key-every 5 &
  PRODUCER=$!
  FED=$((FED + HOP_RECORDS))
  sleep 2
  say "hop $h: cutover $OLD -> $NEW"
  t0=$(ms)
  "$GP_BIN" cutover --control "$WORK/cm.json" --to $NEW --delay-ms 500 >/dev/null
  # an instance killed between its promises and T: as soon as the map
  # shows the instances waiting for T (they promise from then on), if T
  # is not there yet
  if [ "$(waiting_or_t)" = waiting ]; then
    KB=$((KB + 1))
    when="between the promises and T"
  else
    when="after T was written (T came first)"
  fi
  kill_inst 1
  K=$((K + 1))
  say "kill $K: i1 SIGKILL $when"
  start_inst 1
  # 3 -> 2: a clean leave
  term_inst 2
  E=$((E + 1))
  say "i2 left cleanly; 2 instances run"
  end=$(($(date +%s) + 120))
  until [ -n "$(key watermark-toggle-value)" ]; do
    alive
    [ "$(date +%s)" -lt "$end" ] || fail "hop $h: no T in the map after 120 s"
    sleep 0.05
  done
  t1=$(ms)
  T=$(key watermark-toggle-value)
  say "hop $h: T=$T written $((t1 - t0)) ms after the cutover"
  # an instance killed right after T is in the map, then 2 -> 4
  kill_inst 0
  K=$((K + 1))
  say "kill $K: i0 SIGKILL right after T"
  start_inst 0
  start_inst 2
  start_inst 3
  E=$((E + 2))
  say "i2 and i3 joined; 4 instances run"
  wait "$PRODUCER"
  wait_for "hop $h: every record routed" 180 all_routed
  # The old side closes with the partitions still spread over 4
  # instances: each closes its own, the close is found in the committed
  # checkpoints of all 12.
  wait_for "CLEAR_TO_TEARDOWN (hop $h) with 4 instances" 120 key_is stage CLEAR_TO_TEARDOWN
  t2=$(ms)
  alive
  [ "$(key watermark-toggle-value)" = "$T" ] || fail "hop $h: the map's T moved"
  hoplog() {
    for i in $(seq 0 $((MAX - 1))); do
      tail -n +$((LOGAT[$i] + 1)) "$WORK/i$i.log" 2>/dev/null
    done
  }
  hoplog >"$WORK/hop$h.log"
  grep -q "every one of the $PARTS source partitions closed it in its committed checkpoint under T=$T" \
    "$WORK/hop$h.log" \
    || fail "hop $h: CLEAR_TO_TEARDOWN, but no instance found all $PARTS partitions closed under T=$T"
  if grep -q "before the proxy closed the old side" "$WORK/hop$h.log"; then
    fail "hop $h: an instance closed by the map alone, not by every partition's checkpoint"
  fi
  say "hop $h: CLEAR_TO_TEARDOWN $((t2 - t1)) ms after T, every partition closed"
  "$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
  # one T: every instance that computed T found the map's
  agreed=$(sed -n 's/.*cutoff agreed: T=\([0-9-]*\) .*/\1/p' "$WORK/hop$h.log" | sort -u)
  [ -n "$agreed" ] || fail "hop $h: no instance logged an agreed T"
  [ "$agreed" = "$T" ] || fail "hop $h: agreed T values '$agreed', map T=$T"
  chosen=$(grep -c "cutoff chosen" "$WORK/hop$h.log" || true)
  [ "$chosen" = 0 ] || fail "hop $h: an instance chose T alone ($chosen lines)"
  check "$S" --cutoff "$T" --old $OLD --since "$SINCE"
  say "hop $h done: T=$T (agreed by $(echo "$agreed" | wc -l) value), checked $CHECKED"
  TS="${TS:+$TS,}$T"
  COSTS="${COSTS:+$COSTS,}$((t1 - t0))"
  CLOSES="${CLOSES:+$CLOSES,}$((t2 - t1))"
  # 4 -> 3 for the next hop
  term_inst 3
  E=$((E + 1))
  OLD=$NEW
done
wait_for "every record routed" 120 all_routed
for i in "${!PID[@]}"; do [ -z "${PID[$i]}" ] || term_inst $i; done
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts) || true
say "checker: $out"
num() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$out"; }
CHECKED=$(num checked)
scale_line "test=handover instances=$MAX kills=$K scale_events=$E hops=$HOPS" \
  "T=$TS agree_ms=$COSTS close_ms=$CLOSES kills_before_T=$KB"
[[ "$out" == *" duplicates=0 missing=0 reordered=0 misrouted=0"* ]] || fail "checker: $out"
[ "$CHECKED" = "$FED" ] || fail "checked $CHECKED records, fed $FED"
[ $KB -ge 1 ] || fail "no instance was killed between the promises and T"
say "PASS"
