#!/usr/bin/env bash
# Scale-out: one pipeline over 3 instances of gate-proxy in one consumer
# group (gate.membership=group), copying the 12 partitions of a source
# topic while records flow, with clean stops and starts (SIGTERM: the
# member leaves, the others take its partitions, and it joins again) and
# at least 20 hard kills (SIGKILL at a random moment, or a fault point of
# the test build inside a transaction: before send_offsets, before the
# commit, right after it), each killed instance restarted under the same
# instance name (its transactional.id aborts what it left open). No
# hand-over: the pipeline stays steady on blue.
#
# Proves, with gp-check over the colour topics: every source record exactly
# once (nothing missing, nothing duplicated), per-partition order kept, and
# nothing in green (wrong_side). Prints one line:
#   scale: test=core instances=3 kills=N scale_events=M hops=0 checked=X
#          missing=0 duplicated=0 reordered=0 wrong_side=0 kafka=V
# (appended to $GP_SCALE_LINES too, which tests/run-all.sh repeats at the
# end). GP_SCALE_KILLS (20) and GP_SCALE_EVENTS (6) set the counts.
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

S=gp-scale-$RUN_ID
BASE=1700000000000
PARTS=12
N=3
RATE=2000 # records/s
CHUNK=4000
KILLS=${GP_SCALE_KILLS:-20}
SCALES=${GP_SCALE_EVENTS:-6}
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint $PARTS \
  --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
for i in $(seq 0 $((N - 1))); do
  GP_INSTANCE=i$i write_conf i$i "$S" gate.commit.interval.ms=100
done

rand() { echo $(( RANDOM % ($2 - $1 + 1) + $1 )); } # rand LO HI
declare -A PID=() FAULT=()
run_inst() { # run_inst I [GP_FAULT]: start_inst, the fault point remembered
  FAULT[$1]=${2:-}
  start_inst "$1" "GP_FAULT=${2:-}"
}
# a proxy that is gone: its exit code, "" while it runs
gone() {
  local rc=0
  kill -0 "${PID[$1]}" 2>/dev/null && return 1
  wait "${PID[$1]}" 2>/dev/null || rc=$?
  echo $rc
}
feeder() {
  trap - EXIT
  local id=0
  while [ ! -e "$WORK/stop-feed" ]; do
    produce "$S" $CHUNK $id --ts-start $((BASE + id)) --disorder 300 --rate $RATE --key-every 5
    id=$((id + CHUNK))
  done
  echo $id >"$WORK/fed"
}
feeder &
FEEDER=$!
scale_exit() {
  local rc=$?
  touch "$WORK/stop-feed"
  kill "$FEEDER" 2>/dev/null || true
  kill_all_inst
  [ $rc -eq 0 ] || show_logs
  set +e; (exit $rc)
  finish_test
}
trap scale_exit EXIT

K=0      # hard kills (SIGKILL or a fault point)
E=0      # scale events: a clean leave or a join of the group
for i in $(seq 0 $((N - 1))); do run_inst $i; done
say "$N instances started"
sleep 8

# One instance that died by its fault point is a kill; any other death fails.
reap() {
  local i rc
  for i in $(seq 0 $((N - 1))); do
    [ -n "${PID[$i]:-}" ] || continue
    rc=$(gone $i) || continue
    if [ "$rc" = 137 ] && [ -n "${FAULT[$i]}" ]; then
      K=$((K + 1))
      say "kill $K: i$i died at its fault point ${FAULT[$i]}; restarted"
      run_inst $i
    else
      fail "instance i$i exited $rc by itself (GP_FAULT=${FAULT[$i]})"
    fi
  done
}

FAULTS=(before-send-offsets before-commit after-commit)
events=$((KILLS + SCALES))
ev=0
while [ $K -lt $KILLS ] || [ $ev -lt $events ]; do
  ev=$((ev + 1))
  reap
  i=$(rand 0 $((N - 1)))
  if [ $(rand 1 $events) -le $SCALES ] && [ $ev -le $events ]; then
    # a clean stop: the member leaves, the others take its partitions
    sleep "$(rand 1 3)"
    kill -TERM "${PID[$i]}" 2>/dev/null || true
    rc=0
    wait "${PID[$i]}" || rc=$?
    if [ $rc -eq 137 ] && [ -n "${FAULT[$i]}" ]; then
      # it reached its fault point before the SIGTERM: a kill, not a leave
      K=$((K + 1))
      say "kill $K: i$i died at its fault point ${FAULT[$i]}; restarted"
      run_inst $i
      continue
    fi
    [ $rc -eq 0 ] || fail "instance i$i exited $rc after SIGTERM (expected 0)"
    PID[$i]=""
    E=$((E + 1))
    say "i$i stopped cleanly (SIGTERM); $((N - 1)) instances run"
    sleep "$(rand 2 6)"
    reap
    run_inst $i
    E=$((E + 1))
    say "i$i started again"
  else
    # a hard kill after 0.5 to 4 s, or a fault point on the way there
    sleep "$(rand 5 40 | sed 's/.$/.&/')"
    if kill -0 "${PID[$i]}" 2>/dev/null; then
      kill -9 "${PID[$i]}" 2>/dev/null || true
      wait "${PID[$i]}" 2>/dev/null || true
      K=$((K + 1))
      fault=""
      [ $(rand 0 2) -ne 0 ] || fault="${FAULTS[$((RANDOM % 3))]}:$(rand 2 30)"
      say "kill $K: i$i SIGKILL; restarted${fault:+ with GP_FAULT=$fault}"
      run_inst $i "$fault"
    fi # else it died by its fault point meanwhile: reaped next round
  fi
done
reap
touch "$WORK/stop-feed"
wait "$FEEDER"
FED=$(cat "$WORK/fed")
say "$K kills and $E scale events done; $FED records fed; waiting for all of them"
# The instances run on (a fault point may still fire: reaped as a kill)
# until every record is committed in a colour topic.
end=$(($(date +%s) + 180))
while :; do
  reap
  out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts 2>/dev/null) \
    && break
  [ "$(date +%s)" -lt "$end" ] || fail "not all records routed after 180 s: $out"
  sleep 2
done
for i in $(seq 0 $((N - 1))); do
  kill -TERM "${PID[$i]}"
  rc=0
  wait "${PID[$i]}" || rc=$?
  [ $rc -eq 0 ] || fail "instance i$i exited $rc after the last SIGTERM (expected 0)"
done
PID=()
# Steady on blue: T far beyond every record, old=blue, so a record in green
# counts as misrouted (wrong_side).
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts \
  --cutoff $((BASE + 1000000000000)) --old blue) || true
say "checker: $out"
num() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$out"; }
CHECKED=$(num checked)
scale_line "test=core instances=$N kills=$K scale_events=$E hops=0"
[[ "$out" == *" duplicates=0 missing=0 reordered=0 misrouted=0"* ]] || fail "checker: $out"
[ "$CHECKED" = "$FED" ] || fail "checked $CHECKED records, fed $FED"
[ $K -ge 20 ] || [ $KILLS -lt 20 ] || fail "only $K kills"
grep -h "assignment lost\|transaction aborted" "$WORK"/i*.log | sort | uniq -c | sort -rn | head -5 || true
say "PASS"
