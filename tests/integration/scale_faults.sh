#!/usr/bin/env bash
# Scale-out faults during hand-overs: one pipeline over 3 instances of
# gate-proxy in one consumer group (gate.membership=group), 6 partitions,
# two hops driven through the control file while records flow.
#
# Hop 1 (blue -> green):
#   - partition 5 gets no record during the hop: its promise comes from
#     the watermark (idle), and T is agreed all the same;
#   - an instance is SIGSTOPped at the cutover for longer than the session
#     timeout: the group moves its partitions on, and when it continues it
#     finds itself fenced (it exits, or aborts and joins again as a new
#     member), nothing it wrote visible;
#   - a second writer stores another T in the map: the instances keep the
#     agreed T, report the conflict (map and /metrics), and hold
#     CLEAR_TO_TEARDOWN back until the map shows T again.
# Hop 2 (green -> blue):
#   - the source topic grows from 6 to 8 partitions at the cutover;
#   - the instance about to write T into the map is SIGKILLed at that
#     write (fault point before-publish), and the one that wrote it right
#     after its write.
#
# Every hop: one T, nothing >= T in the old colour, nothing < T in the new
# (gp-check --cutoff), CLEAR only once every partition closed; at the end
# every record exactly once in order. Prints one line (appended to
# $GP_SCALE_LINES):
#   scale: test=faults instances=3 kills=K scale_events=E hops=2 checked=X
#          missing=0 duplicated=0 reordered=0 wrong_side=0 T=T1,T2
#          stopped=exitN|rejoined conflict_held_ms=M kafka=V
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

S=gp-faults-$RUN_ID
BASE=1700000000000
PARTS=6
GROWN=8
MAX=3
HOP=12000
RATE=2000
STOP_S=10 # > kafka.session.timeout.ms (6 s, lib.sh) and transaction.timeout.ms (5 s)
"$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" create "$S" $PARTS >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
declare -A PORT=()
for i in $(seq 0 $((MAX - 1))); do
  PORT[$i]=$(free_port)
  GP_INSTANCE=i$i write_conf i$i "$S" gate.commit.interval.ms=100 \
    "http.listen=127.0.0.1:${PORT[$i]}" gate.lateness.ms=15000
done

declare -A PID=()
faults_exit() {
  local rc=$?
  kill_all_inst
  [ $rc -eq 0 ] || show_logs
  set +e; (exit $rc)
  finish_test
}
trap faults_exit EXIT
ms() { date +%s%3N; }
all_routed() {
  "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts >/dev/null 2>&1
}
# metric I NAME: the value of an unlabelled series on instance i's /metrics
metric() {
  curl -s -m 2 "http://127.0.0.1:${PORT[$1]}/metrics" | awk -v n="$2" '$1 == n {print $2}'
}
spread() { # every instance owns a partition
  local i
  for i in 0 1 2; do
    [ "$(metric "$i" gate_proxy_partitions_assigned)" -ge 1 ] 2>/dev/null || return 1
  done
}
conflict_seen() { # some live instance reports the map's other T
  local i
  for i in "${!PID[@]}"; do
    [ -n "${PID[$i]}" ] && [ "$i" != "$STOPPED" ] || continue
    [ "$(metric "$i" gate_proxy_map_cutoff_conflict)" = 1 ] && return 0
  done
  return 1
}
# set_toggle VALUE: a second writer stores VALUE as the map's T, under the
# control file's lock and with its resourceVersion bumped, as any writer must
set_toggle() {
  python3 - "$WORK/cm.json" "$1" <<'PY'
import fcntl, json, os, sys
path, value = sys.argv[1], sys.argv[2]
with open(path + ".lock", "a+") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    d = json.load(open(path))
    d["data"]["watermark-toggle-value"] = value
    d["metadata"]["resourceVersion"] = str(int(d["metadata"]["resourceVersion"]) + 1)
    tmp = path + ".tmp.writer"
    with open(tmp, "w") as f:
        json.dump(d, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)
PY
}
# produce_on PARTITIONS N FIRST_ID TS0: N records over the listed
# partitions, one producer each, their event times interleaved on one
# clock (record j of partition list index k: TS0 + k + j * count), at RATE
# in all; runs in the background, PIDs in PRODUCERS
produce_on() {
  local parts=($1) n=$2 first=$3 ts0=$4 k
  local per=$((n / ${#parts[@]})) c=${#parts[@]}
  PRODUCERS=()
  for k in "${!parts[@]}"; do
    produce "$S" $per $((first + k * per)) --partition "${parts[$k]}" \
      --ts-start $((ts0 + k)) --ts-step $c --disorder 300 --rate $((RATE / c)) &
    PRODUCERS+=($!)
  done
}
wait_producers() { local p; for p in "${PRODUCERS[@]}"; do wait "$p"; done; }
ends() { "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --end-offsets; }
end_of() { tr ',' '\n' <<<"$2" | sed -n "s/^$1:\([0-9]*\)$/\1/p"; } # end_of P OFFSETS
mark_logs() {
  for i in $(seq 0 $((MAX - 1))); do
    touch "$WORK/i$i.log"
    LOGAT[$i]=$(wc -l <"$WORK/i$i.log")
  done
}
hoplog() {
  for i in $(seq 0 $((MAX - 1))); do tail -n +$((LOGAT[$i] + 1)) "$WORK/i$i.log"; done
}
# one_t H T PARTS OLD SINCE: the hop's checks (see the top)
one_t() {
  local h=$1 t=$2 n=$3 old=$4 since=$5
  # T comes from the event times read (promises of watermark + D), never
  # from the wall clock: the records' times end near BASE + FED.
  [ "$t" -lt $((BASE + FED + 60000)) ] \
    || fail "hop $h: T=$t lies past every event time read (up to about $((BASE + FED)))"
  hoplog >"$WORK/hop$h.log"
  grep -q "every one of the $n source partitions closed it in its committed checkpoint under T=$t" \
    "$WORK/hop$h.log" || fail "hop $h: CLEAR_TO_TEARDOWN without all $n partitions closed under T=$t"
  local agreed
  agreed=$(sed -n 's/.*cutoff agreed: T=\([0-9-]*\) .*/\1/p' "$WORK/hop$h.log" | sort -u)
  [ "$agreed" = "$t" ] || fail "hop $h: agreed T values '$agreed', map T=$t"
  ! grep -q "cutoff chosen" "$WORK/hop$h.log" || fail "hop $h: an instance chose T alone"
  check "$S" --cutoff "$t" --old "$old" --since "$since"
}

K=0
E=0
FED=0
declare -A LOGAT=()
for i in 0 1 2; do start_inst $i; done
say "3 instances started"
produce "$S" 3000 0 --ts-start $BASE --partition-rr
FED=3000
wait_for "the first records routed" 120 all_routed
wait_for "every instance owning partitions" 120 spread

# ---- hop 1: blue -> green; partition 5 idle, i2 stopped, a second T
mark_logs
SINCE=$(ends)
before5=$(end_of 5 "$SINCE")
produce_on "0 1 2 3 4" $HOP $FED $((BASE + FED))
FED=$((FED + HOP))
sleep 2
say "hop 1: cutover blue -> green; partition 5 idle; i2 SIGSTOPped for $STOP_S s"
t0=$(ms)
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 500 >/dev/null
kill -STOP "${PID[2]}"
STOPPED=2
stopped_at=$(date +%s)
end=$(($(date +%s) + 120))
until [ -n "$(key watermark-toggle-value)" ]; do
  alive
  [ "$(date +%s)" -lt "$end" ] || fail "hop 1: no T in the map after 120 s"
  sleep 0.05
done
T1=$(key watermark-toggle-value)
say "hop 1: T=$T1 written $(($(ms) - t0)) ms after the cutover, i2 still stopped"
# A second writer stores another T while the hop is open (gate.lateness.ms
# keeps the old side open while records flow).
OTHER=$((T1 + 777))
set_toggle $OTHER
t_conf=$(ms)
say "a second writer stored T=$OTHER in the map"
wait_for "the conflict on /metrics" 60 conflict_seen
wait_for "the conflict in the map's gate-proxy.error" 60 \
  grep -q "the map stores the cutoff $OTHER, not the T=$T1" "$WORK/cm.json"
while [ "$(date +%s)" -lt $((stopped_at + STOP_S)) ]; do alive; sleep 0.2; done
kill -CONT "${PID[2]}"
say "i2 continued after $(($(date +%s) - stopped_at)) s"
# Fenced either way: the broker refuses its offsets (a stale generation,
# KIP-447) or its producer epoch; it aborts and exits, or it aborts,
# loses its assignment and goes on as a new member of the group.
gone() { ! kill -0 "${PID[2]}" 2>/dev/null; }
# Lost: said by the rebalance callback, with a transaction open or not
# (the loop may have aborted it first, its offsets refused).
rejoined() {
  sed -nE '/assignment lost \(the group moved on without this member\)|lost [0-9]+ partition\(s\)/,$p' \
    "$WORK/i2.log" >"$WORK/i2.after"
  grep -q "assigned [0-9]* partition" "$WORK/i2.after"
}
end=$(($(date +%s) + 60))
until gone || rejoined; do
  [ "$(date +%s)" -lt "$end" ] || fail "i2 neither exited nor joined again 60 s after it continued"
  sleep 0.2
done
STOPPED=""
K=$((K + 1))
if gone; then
  rc=0
  wait "${PID[2]}" || rc=$?
  PID[2]=""
  [ $rc -ne 0 ] || fail "i2, stopped past its session, exited 0"
  STOPPED_AS=exit$rc
  start_inst 2
else
  STOPPED_AS=rejoined
fi
say "i2 after it continued: $STOPPED_AS: $(grep -E 'fenced|outlived|assignment lost' "$WORK/i2.log" | tail -n 1 | cut -c1-200)"
E=$((E + 1))

wait_producers
wait_for "hop 1: every record routed" 180 all_routed
wait_for "hop 1: every partition closed, CLEAR waiting for the map" 120 \
  grep -q "every partition closed; waiting for the map to show T" "$WORK/i0.log" "$WORK/i1.log" "$WORK/i2.log"
[ "$(key stage)" = TRANSITIONING ] || fail "hop 1: stage $(key stage) while the map's T conflicts"
set_toggle "$T1"
held=$(($(ms) - t_conf))
say "the map shows T=$T1 again after $held ms"
wait_for "CLEAR_TO_TEARDOWN (hop 1)" 120 key_is stage CLEAR_TO_TEARDOWN
after5=$(end_of 5 "$(ends)")
[ "$before5" = "$after5" ] || fail "partition 5 was not idle in hop 1 ($before5 -> $after5)"
one_t 1 "$T1" $PARTS blue "$SINCE"
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
say "hop 1 done: T=$T1, checked $CHECKED"

# ---- hop 2: green -> blue; the topic grows; the T writer killed twice
mark_logs
for i in 0 1 2; do rm -f "$WORK/hold.i$i.before-publish"; done
for i in 0 1 2; do
  kill_inst $i
  start_inst $i "GP_FAULT_HOLD=$WORK/hold.i$i"
done
K=$((K + 3))
SINCE=$(ends)
produce_on "0 1 2 3 4 5" $HOP $FED $((BASE + FED))
FED=$((FED + HOP))
sleep 2
for i in 0 1 2; do touch "$WORK/hold.i$i.before-publish"; done
say "hop 2: cutover green -> blue, the topic grows to $GROWN partitions"
t0=$(ms)
"$GP_BIN" cutover --control "$WORK/cm.json" --to blue --delay-ms 500 >/dev/null
"$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" grow "$S" $GROWN >/dev/null
# records on the new partitions, event times above the hop's
NEWP=$((HOP / 6))
produce "$S" $NEWP $FED --partition 6 --ts-start $((BASE + FED + 1000)) --rate 300 &
P6=$!
produce "$S" $NEWP $((FED + NEWP)) --partition 7 --ts-start $((BASE + FED + 1000)) --rate 300 &
P7=$!
FED=$((FED + 2 * NEWP))
# Every instance holds at each write into the map (fault point
# before-publish) while it is armed. A hold by an instance that has not
# agreed T yet (the WAITING_FOR_WATERMARK write) is let through and armed
# again; the first instance held with T agreed is the T writer, killed
# before its write.
agreed_t() {
  tail -n +$((LOGAT[$1] + 1)) "$WORK/i$1.log" >"$WORK/since.log"
  grep -q "cutoff agreed: T=" "$WORK/since.log"
}
held_by=""
end=$(($(date +%s) + 120))
while [ -z "$held_by" ]; do
  for i in 0 1 2; do
    [ -e "$WORK/hold.i$i.before-publish.held" ] || continue
    if agreed_t $i; then
      held_by=$i
      break
    fi
    # let it through and arm it again at once (the hold looks every 10 ms):
    # an instance that agrees T meanwhile writes WAITING_FOR_WATERMARK and
    # comes straight to T's write
    rm -f "$WORK/hold.i$i.before-publish"
    n=0
    while [ -e "$WORK/hold.i$i.before-publish.held" ]; do
      n=$((n + 1))
      [ $n -lt 6000 ] || fail "i$i did not pass its hold in 30 s"
      sleep 0.005
    done
    touch "$WORK/hold.i$i.before-publish"
  done
  [ -n "$held_by" ] || [ -z "$(key watermark-toggle-value)" ] \
    || fail "hop 2: T written with every instance held at its writes"
  [ "$(date +%s)" -lt "$end" ] || fail "hop 2: no instance came to write T in 120 s"
  sleep 0.05
done
[ -z "$(key watermark-toggle-value)" ] || fail "hop 2: T in the map while its writer is held"
kill_inst $held_by
K=$((K + 1))
say "kill $K: i$held_by SIGKILL at its write of T (held before it)"
for i in 0 1 2; do rm -f "$WORK/hold.i$i.before-publish"; done
start_inst $held_by
end=$(($(date +%s) + 120))
until [ -n "$(key watermark-toggle-value)" ]; do
  [ "$(date +%s)" -lt "$end" ] || fail "hop 2: no T in the map after 120 s"
  sleep 0.05
done
T2=$(key watermark-toggle-value)
say "hop 2: T=$T2 written $(($(ms) - t0)) ms after the cutover"
hoplog >"$WORK/since.log"
GROW_AT=$(sed -n "s/.*cutoff agreed: T=$T2 from the committed promises of \([0-9]*\) .*/\1/p" \
  "$WORK/since.log" | sort -u | xargs)
say "hop 2: T agreed over $GROW_AT partition(s) (the added ones count when they came first)"
writer=""
for i in 0 1 2; do
  tail -n +$((LOGAT[$i] + 1)) "$WORK/i$i.log" >"$WORK/since.log"
  ! grep -q "published watermark-toggle-value=$T2" "$WORK/since.log" || writer=$i
done
[ -n "$writer" ] || fail "hop 2: no instance logged its write of T=$T2"
kill_inst "$writer"
K=$((K + 1))
say "kill $K: i$writer, which wrote T, SIGKILL right after its write"
start_inst "$writer"
wait_producers
wait "$P6" "$P7"
wait_for "hop 2: every record routed" 180 all_routed
wait_for "CLEAR_TO_TEARDOWN (hop 2)" 120 key_is stage CLEAR_TO_TEARDOWN
[ "$(key watermark-toggle-value)" = "$T2" ] || fail "hop 2: the map's T moved"
one_t 2 "$T2" $GROWN green "$SINCE"
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
say "hop 2 done: T=$T2, checked $CHECKED"

for i in "${!PID[@]}"; do [ -z "${PID[$i]}" ] || term_inst $i; done
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts) || true
say "checker: $out"
num() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$out"; }
CHECKED=$(num checked)
scale_line "test=faults instances=$MAX kills=$K scale_events=$E hops=2" \
  "T=$T1,$T2 stopped=$STOPPED_AS conflict_held_ms=$held"
[[ "$out" == *" duplicates=0 missing=0 reordered=0 misrouted=0"* ]] || fail "checker: $out"
[ "$CHECKED" = "$FED" ] || fail "checked $CHECKED records, fed $FED"
say "PASS"
