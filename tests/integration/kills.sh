#!/usr/bin/env bash
# kill -9 at random moments across a whole blue -> green cutover, records
# flowing all along: 30 and more kills before T is set, during the split and
# around the close, each followed by a restart. Half of the kills are
# SIGKILLs after a random time (anywhere, start-up included); the others
# are the test build's fault points, which die inside a later transaction:
# before a produce, before send_offsets_to_transaction, before the commit,
# right after it, and before a decision is published to the map.
#
# Proves: the decisions survive (T never changes once published and every
# restored checkpoint holds that T; CLEAR_TO_TEARDOWN is written once, after
# T, and only when W >= T + lateness) and, over the whole run, every record
# exactly once, in order, split by T (gp-check --cutoff T --old blue).
source "$(dirname "$0")/lib.sh"

S=gp-kills-$RUN_ID
BASE=1700000000000
RATE=1500             # records/s; event time runs 1.5 s per second
CHUNK=3000            # records per gp-produce call of the feeder
LATENESS=60000        # the split lasts ~40 s (60 s of event time) after T
KILLS=30
MIN_BEFORE=10         # kills before the cutover is asked
MIN_AFTER=5           # kills after CLEAR_TO_TEARDOWN
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 3 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
# kafka.transaction.timeout.ms=10000 (lib.sh): a killed instance's open
# transaction would block read_committed readers at most that long; the
# next instance's init_transactions aborts it anyway.
write_conf p "$S" gate.lateness.ms=$LATENESS gate.commit.interval.ms=100

# The feeder: chunks of CHUNK records at RATE/s until $WORK/stop-feed
# exists; event time = BASE + id (+- 300 ms of disorder). It writes the
# number of records produced to $WORK/fed.
feeder() {
  trap - EXIT
  local id=0
  while [ ! -e "$WORK/stop-feed" ]; do
    produce "$S" $CHUNK $id --ts-start $((BASE + id)) --disorder 300 --rate $RATE
    id=$((id + CHUNK))
  done
  echo $id > "$WORK/fed"
}
feeder &
FEEDER=$!
kills_exit() {
  local rc=$?
  touch "$WORK/stop-feed"
  kill "$FEEDER" 2>/dev/null || true
  set +e; (exit $rc)  # finish_test reads $?
  finish_test
}
trap kills_exit EXIT

rand() { echo $(( RANDOM % ($2 - $1 + 1) + $1 )); }  # rand LO HI
T0=""          # the first published T
SAW_CLEAR=0    # CLEAR_TO_TEARDOWN seen in the map
CUTOVER=0
K=0
declare -A WHERE=()

# snap: reads the map once (a python start is slow on a busy machine):
# M_STAGE, M_T (watermark-toggle-value), M_WMS (watermark-stage), M_ROUTED
snap() {
  eval "$(python3 - "$WORK/cm.json" <<'PY'
import json, shlex, sys
try:
    d = json.load(open(sys.argv[1])).get("data") or {}
except Exception:
    d = {}
n = lambda k: int(d.get(k) or 0)
for var, val in (("M_STAGE", d.get("stage", "")), ("M_T", d.get("watermark-toggle-value", "")),
                 ("M_WMS", d.get("watermark-stage", "")),
                 ("M_ROUTED", n("gate-proxy.count.blue") + n("gate-proxy.count.green")
                  + n("gate-proxy.count.dlq"))):
    print("%s=%s" % (var, shlex.quote(str(val))))
PY
)"
}

# phase: where the pipeline is, from the last snap
phase() {
  if [ "$M_STAGE" = CLEAR_TO_TEARDOWN ]; then echo after-close
  elif [ -n "$M_T" ]; then echo split
  elif [ $CUTOVER = 1 ]; then echo transition
  else echo before-T
  fi
}

# fed_ts: the event time of the newest source record (about BASE + count)
fed_ts() {
  local offs sum=0 o
  offs=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --end-offsets)
  for o in ${offs//,/ }; do sum=$((sum + ${o#*:})); done
  echo $((BASE + sum))
}

# The map's decisions may only move forward, and T never changes.
check_decisions() {
  local t=$M_T stage=$M_STAGE
  if [ -n "$T0" ]; then
    [ "$t" = "$T0" ] || fail "T changed: watermark-toggle-value=$t, first published $T0"
  elif [ -n "$t" ]; then
    T0=$t
    [ $CUTOVER = 1 ] || fail "T=$t published before any cutover was asked"
    [ "$M_WMS" = WATERMARK_SET ] || fail "T published without WATERMARK_SET"
    say "T=$T0 published"
  fi
  if [ "$stage" = CLEAR_TO_TEARDOWN ]; then
    [ -n "$T0" ] || fail "CLEAR_TO_TEARDOWN before T was published"
    [ $SAW_CLEAR = 1 ] || say "CLEAR_TO_TEARDOWN published"
    SAW_CLEAR=1
  elif [ $SAW_CLEAR = 1 ]; then
    fail "stage went back from CLEAR_TO_TEARDOWN to '$stage'"
  fi
}

# one_kill MODE[:N]: starts the proxy, lets it die at a fault point or
# kills it after a random time, then checks the map. FIRED is 1 when the
# fault point killed it.
one_kill() {
  local mode=${1%%:*} fault="" life where rc=0 t0 how
  case $mode in
    sigkill)             life=$(rand 2 30) ;;  # tenths of a second
    before-produce)      fault="$mode:$(rand 1 4000)" ;;
    before-send-offsets|before-commit|after-commit) fault="$mode:$(rand 1 25)" ;;
    before-publish)      fault=$1; [ "$fault" != "$mode" ] || fault="$mode:1" ;;
  esac
  # a fault point not reached in time: SIGKILL (before-publish waits longer:
  # it is used where a publication is due)
  [ -n "$fault" ] && life=60
  [ "$mode" = before-publish ] && life=200
  FIRED=0
  # (stderr of the shell: no job notices for the killed proxies)
  {
    GP_FAULT=$fault "$GP_BIN" run -c "$WORK/p.conf" >>"$WORK/proxy.log" 2>&1 &
    PROXY_PID=$!
    t0=$(date +%s%N)
    local i=0
    while [ $i -lt "$life" ] && kill -0 "$PROXY_PID" 2>/dev/null; do
      sleep 0.1
      i=$((i + 1))
      # the cutover is asked 0.5 s into the first instance after the
      # before-T kills
      if [ $CUTOVER = 0 ] && [ $K -ge $MIN_BEFORE ] && [ $i -eq 5 ]; then
        "$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 1000 \
          >/dev/null 2>"$WORK/cutover.err" || CUTOVER=failed
        [ $CUTOVER = failed ] || CUTOVER=1
      fi
    done
    if kill -0 "$PROXY_PID" 2>/dev/null; then
      kill -9 "$PROXY_PID"
      how="SIGKILL after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
      [ -z "$fault" ] || how="$how (fault point $fault not reached)"
    else
      how="fault point $fault"
      FIRED=1
    fi
    wait "$PROXY_PID" || rc=$?
  } 2>/dev/null
  PROXY_PID=""
  [ "$CUTOVER" != failed ] || fail "cutover: $(cat "$WORK/cutover.err")"
  [ $rc -eq 137 ] || fail "the proxy exited $rc instead of being killed (GP_FAULT=$fault)"
  [ $FIRED = 0 ] || [ -n "$fault" ] || fail "the proxy died by itself (SIGKILL from nowhere?)"
  K=$((K + 1))
  snap
  where=$(phase)
  if [ $FIRED = 1 ] && [ "$mode" = before-publish ]; then
    case $where in
      split) where=at-close; how="$how: the close committed, not yet published" ;;
      transition) how="$how: the transition committed, not yet published" ;;
    esac
  fi
  WHERE[$where]=$(( ${WHERE[$where]:-0} + 1 ))
  local of=$KILLS
  [ $K -le $KILLS ] || of="$KILLS+"
  say "kill $K/$of ($where): $how; routed $M_ROUTED"
  check_decisions
}

MODES=(sigkill sigkill sigkill sigkill before-produce before-send-offsets before-commit after-commit)
# 1. before T: no transition asked yet
while [ $K -lt $MIN_BEFORE ]; do
  one_kill "${MODES[$((RANDOM % ${#MODES[@]}))]}"
done
# 2. the transition: the cutover is asked 0.5 s into the next instance; it
#    and the next two die just before publishing WAITING_FOR_WATERMARK, then
#    T, so a later one must publish the T its checkpoint holds.
one_kill before-publish:1
say "cutover to green asked"
one_kill before-publish:1
one_kill before-publish:2
# 3. the split, at random; then, from 15 s of event time before the close
#    can come (so no instance outlives that margin), only instances that
#    die at the publication of the close: CLEAR_TO_TEARDOWN committed in
#    the checkpoint, not yet in the map; and once more at its
#    re-publication by the next instance.
NEAR=0
while [ $SAW_CLEAR = 0 ]; do
  [ $K -lt 80 ] || fail "no CLEAR_TO_TEARDOWN after $K kills"
  if [ $NEAR = 0 ] && [ -n "$T0" ] && [ "$(fed_ts)" -ge $((T0 + LATENESS - 15000)) ]; then
    NEAR=1
    say "the close is near: every instance now dies at its publication"
  fi
  if [ -z "$T0" ] || [ "${WHERE[at-close]:-0}" -ge 2 ]; then
    one_kill sigkill  # left to publish T, or the close
  elif [ $NEAR = 1 ]; then
    one_kill before-publish:1
  else
    one_kill "${MODES[$((RANDOM % ${#MODES[@]}))]}"
  fi
done
# 4. after the close
AFTER=0
while [ $K -lt $KILLS ] || [ $AFTER -lt $MIN_AFTER ]; do
  one_kill "${MODES[$((RANDOM % ${#MODES[@]}))]}"
  AFTER=$((AFTER + 1))
done

touch "$WORK/stop-feed"
wait "$FEEDER" || fail "the feeder failed"
FED=$(cat "$WORK/fed")
say "$K kills survived ($(for w in "${!WHERE[@]}"; do printf '%s=%s ' "$w" "${WHERE[$w]}"; done)); $FED records fed"
[ "${WHERE[before-T]:-0}" -ge $MIN_BEFORE ] || fail "too few kills before T"
[ "${WHERE[split]:-0}" -ge 5 ] || fail "too few kills during the split"
[ "${WHERE[at-close]:-0}" -ge 1 ] || fail "no kill at the close"

# A last instance, left to finish.
start_proxy p
wait_for "$FED records routed" 120 routed_is "$FED"
snap
check_decisions
stop_proxy

# The proxy's own account, across every instance.
LOG=$WORK/proxy.log
if grep "published watermark-toggle-value=" "$LOG" | grep -v "=$T0\$" >&2; then
  fail "a T other than $T0 was published"
fi
if grep "restored checkpoint" "$LOG" | grep -v "T=-1\$" | grep -v "T=$T0\$" >&2; then
  fail "a checkpoint was restored with a T other than $T0"
fi
n=$(grep -c "published stage=CLEAR_TO_TEARDOWN" "$LOG" || true)
[ "$n" -le 1 ] || fail "CLEAR_TO_TEARDOWN published $n times"
first_t=$(grep -n "published watermark-toggle-value=" "$LOG" | head -n 1 | cut -d: -f1)
first_c=$(grep -n "published stage=CLEAR_TO_TEARDOWN" "$LOG" | head -n 1 | cut -d: -f1)
if [ -n "$first_c" ] && [ -n "$first_t" ]; then
  [ "$first_c" -gt "$first_t" ] || fail "CLEAR_TO_TEARDOWN published before T"
fi
python3 - "$LOG" "$T0" "$LATENESS" <<'PY' || fail "the old side was closed before W >= T + lateness"
import re, sys
log, t, late = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for line in open(log, errors="replace"):
    m = re.search(r"old side \w+ closed: W=(-?\d+)", line)
    if m and int(m.group(1)) < t + late:
        print(line.strip(), file=sys.stderr)
        sys.exit(1)
PY
restored=$(grep -c "restored checkpoint" "$LOG" || true)
say "$restored restarts restored a checkpoint; T=$T0 throughout"

check "$S" --cutoff "$T0" --old blue
[ "$CHECKED" = "$FED" ] || fail "checked $CHECKED records, expected $FED"
say "PASS ($K kills)"
