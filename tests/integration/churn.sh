#!/usr/bin/env bash
# The schedule explorer: group mode (gate.membership=group) under seeded
# random schedules of hand-overs and membership changes, each record checked.
#
#   GP_CHURN_SEEDS="1 2 3" or "1-20" (default: DEFAULT_SEEDS below, 20 seeds)
#   tests/integration/churn.sh            under ctest (GP_BIN... and
#                                         GP_BOOTSTRAP set: a running broker)
#   tests/integration/churn.sh BUILD_DIR  make soak-churn: the binaries of
#                                         BUILD_DIR, on a broker of its own
#
# Per seed, on a source topic of 12 partitions, with N = 3 to 5 instance
# names (N - 1 or N of them running at the start), every choice drawn from
# RANDOM=seed so that the seed replays the same schedule:
#   - 2 or 3 hops, each blue -> green or green -> blue from wherever the
#     last left off: a hop that closes (CLEAR_TO_TEARDOWN, then finish), an
#     abort soon after the cutover (with no record produced in the hop), or
#     an abort after T with the hop's records routed (gate.abort.redeliver
#     =false: the records stay in the colour they went to), each followed by
#     finish and the next cutover;
#   - one or two moves a hop, at random times from its cutover on: a
#     member joining; a clean leave (SIGTERM, exit 0); a SIGKILL, the
#     member started again under its name some seconds later or not; a
#     member joining until it owns partitions and leaving again, so that
#     they come back to the members that held them (returns);
#   - in a third of the seeds, in one hop, a SIGSTOP past the session
#     timeout then SIGCONT (the member fenced: it exits 1 or 3 and is
#     started again, or joins again by itself);
#   - in a fifth of the seeds, in one hop, a broker restart (when the
#     broker is tests/kafka/broker.sh's with this environment; a member
#     that exits 1 or 4 around it is started again, as a supervisor would);
#   - one member (half the seeds) reads a copy of the control map that the
#     driver brings up to date only 0.5 to 3 s after each change (its own
#     writes go to the copy, so a move never leaves it the one member
#     running).
# Moves that take a member away leave at least one other running. A seed
# replays the same draws; which members a move finds running follows the
# timing (a move due after its hop ended runs during the next one).
# Records flow at 3000/s during a hop (event time 1 ms apart, out of order
# by up to 150 ms); each hop starts with every earlier record routed, so its
# source offsets then are exact, and an abort after T comes with every
# record of its hop routed (records routed after such an abort would go to
# the old colour at or past T, which no line of the checker allows).
#
# At the end every member leaves (exit 0), and gp-check proves, per source
# partition: every record exactly once across blue, green and the DLQ, in
# source order; for each hop that closed or aborted after T, from its start
# to the next hop's, nothing at or past its T in the old colour and nothing
# before T in the new colour before the partition's last record to the old
# colour (gp-check --hops), so nothing reached the old colour after the
# close. An abort soon after the cutover has no record of its own. No
# sanitizer report in any member's log. Each seed prints one line (also
# appended to $GP_SCALE_LINES):
#   churn: seed=S instances=N hops=H aborts=A kills=K stops=P returns=R
#          checked=C missing=0 duplicated=0 reordered=0 wrong_side=0 kafka=V
# The first seed that fails stops the run: its log and the command that
# replays it are printed.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DEFAULT_SEEDS="1-20"

# ---- the run: one process per seed ------------------------------------------
if [ -z "${GP_CHURN_ONE:-}" ]; then
  if [ $# -ge 1 ]; then # make soak-churn: the binaries of BUILD_DIR
    B=$(cd "$1" && pwd)
    export GP_BIN=${GP_BIN:-$B/gate-proxy} GP_CHECK=${GP_CHECK:-$B/tests/tools/gp-check}
    export GP_PRODUCE=${GP_PRODUCE:-$B/tests/tools/gp-produce}
    export GP_ADMIN=${GP_ADMIN:-$B/tests/tools/gp-admin}
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
    # A broker of its own (its port and data dir apart from make test's),
    # stopped at the end; the explorer restarts it.
    export KAFKA_VERSION=${KAFKA_VERSION:-3.9}
    export GP_KAFKA_PORT=${GP_KAFKA_PORT:-19292}
    export GP_KAFKA_DIR=${GP_KAFKA_DIR:-$ROOT/.cache/kafka-run/churn-$KAFKA_VERSION}
    if "$ROOT/tests/kafka/broker.sh" status >/dev/null 2>&1; then
      echo "churn: a broker already runs in $GP_KAFKA_DIR (port $GP_KAFKA_PORT); the explorer" >&2
      echo "churn: restarts its broker, so it starts its own: stop that one, or set GP_KAFKA_PORT" >&2
      echo "churn: and GP_KAFKA_DIR" >&2
      exit 2
    fi
    "$ROOT/tests/kafka/broker.sh" start >&2
    trap '"$ROOT/tests/kafka/broker.sh" stop >/dev/null 2>&1 || true' EXIT
    GP_BOOTSTRAP=$("$ROOT/tests/kafka/broker.sh" bootstrap)
    export GP_BOOTSTRAP
  fi
  : "${GP_BIN:?run through ctest or make soak-churn}" "${GP_CHECK:?}" "${GP_PRODUCE:?}" "${GP_ADMIN:?}"
  : "${GP_BOOTSTRAP:?a broker: tests/kafka/broker.sh}"
  spec=${GP_CHURN_SEEDS:-$DEFAULT_SEEDS}
  seeds=()
  for w in ${spec//,/ }; do
    case "$w" in
      *[!0-9-]* | -* | *- | *-*-*) echo "churn: GP_CHURN_SEEDS: '$w' is not N or N-M" >&2; exit 2 ;;
      *-*) for ((s = ${w%-*}; s <= ${w#*-}; s++)); do seeds+=("$s"); done ;;
      *) seeds+=("$w") ;;
    esac
  done
  [ ${#seeds[@]} -gt 0 ] || { echo "churn: GP_CHURN_SEEDS='$spec' names no seed" >&2; exit 2; }
  LOGS=$(mktemp -d /tmp/gp-churn.XXXXXX)
  t0=$SECONDS
  n=0
  for s in "${seeds[@]}"; do
    rc=0
    GP_CHURN_ONE=$s bash "$0" >"$LOGS/seed-$s.log" 2>&1 || rc=$?
    grep '^churn: seed=' "$LOGS/seed-$s.log" || true
    if [ $rc -ne 0 ]; then
      echo "--- seed $s failed (exit $rc) after $((SECONDS - t0)) s; its log ($LOGS/seed-$s.log):"
      cat "$LOGS/seed-$s.log"
      echo "churn: FAILED at seed $s ($n seed(s) passed before it)"
      echo "replay: make soak-churn SEEDS=$s"
      echo "replay: (in the build directory, GP_BOOTSTRAP set)" \
        "GP_CHURN_SEEDS=$s ctest -R integration.churn --output-on-failure"
      echo "replay: GP_CHURN_SEEDS=$s KAFKA_VERSION=${KAFKA_VERSION:-} GP_BOOTSTRAP=$GP_BOOTSTRAP" \
        "GP_BIN=$GP_BIN GP_CHECK=$GP_CHECK GP_PRODUCE=$GP_PRODUCE GP_ADMIN=$GP_ADMIN" \
        "bash $HERE/churn.sh"
      exit 1
    fi
    n=$((n + 1))
  done
  # the seeds' figures added up
  sums=$(cat "$LOGS"/seed-*.log | grep '^churn: seed=' | tr ' ' '\n' | awk -F= '
    $1 ~ /^(hops|aborts|kills|stops|returns|checked)$/ { t[$1] += $2 }
    END { printf "hops=%d aborts=%d kills=%d stops=%d returns=%d checked=%d",
          t["hops"], t["aborts"], t["kills"], t["stops"], t["returns"], t["checked"] }')
  rm -rf "$LOGS"
  echo "churn: $n seed(s) passed (GP_CHURN_SEEDS=$spec) $sums in $((SECONDS - t0)) s"
  exit 0
fi

# ---- one seed ------------------------------------------------------------------
source "$HERE/lib.sh"
export GP_MEMBERSHIP=group
SEED=$GP_CHURN_ONE
RANDOM=$SEED
S=gp-churn-$SEED-$RUN_ID
PARTS=12
RATE=3000
STOP_S=7 # > kafka.session.timeout.ms (6 s, lib.sh) and transaction.timeout.ms (5 s)
BROKER=$ROOT/tests/kafka/broker.sh
# The broker restarts only when it is the one broker.sh manages here.
CAN_RESTART=0
if "$BROKER" status >/dev/null 2>&1 && [ "$("$BROKER" bootstrap)" = "$GP_BOOTSTRAP" ]; then
  CAN_RESTART=1
fi

# The schedule's parameters, in this order (a seed replays them).
N=$((3 + RANDOM % 3))
INIT=$((N - 1 + (RANDOM % 3 == 0 ? 1 : 0)))
LATENESS=$((500 + RANDOM % 4 * 250))
LAG=-1
LAG_MS=0
if [ $((RANDOM % 2)) = 0 ]; then
  LAG=$((RANDOM % N))
  LAG_MS=$((500 + RANDOM % 2500))
fi
HOPS=$((2 + RANDOM % 2))
RESTART_HOP=-1 # the hop in which the broker restarts
[ $((RANDOM % 5)) != 0 ] || RESTART_HOP=$((RANDOM % HOPS))
STOP_HOP=-1 # the hop in which a member is stopped past its session
[ $((RANDOM % 3)) != 0 ] || STOP_HOP=$((RANDOM % HOPS))

say "seed $SEED: instances=$N (start $INIT) lateness=$LATENESS ms lagging=i$LAG (${LAG_MS} ms)" \
  "hops=$HOPS broker_restart_hop=$RESTART_HOP stop_hop=$STOP_HOP"
"$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" create "$S" $PARTS >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
for i in $(seq 0 $((N - 1))); do
  GP_INSTANCE=i$i write_conf i$i "$S" gate.commit.interval.ms=100 gate.lateness.ms=$LATENESS \
    gate.watermark.idle.ms=1000 gate.abort.redeliver=false
done
if [ $LAG -ge 0 ]; then
  cp "$WORK/cm.json" "$WORK/cm-lag.json"
  echo "control.file=$WORK/cm-lag.json" >>"$WORK/i$LAG.conf"
fi

declare -A PID=()
declare -A FENCED=() # members continued after a stop: exit 1 or 3 is theirs
COPIERS=()
churn_exit() {
  local rc=$? p
  set +e # (exit $rc) must not end the trap
  for p in "${COPIERS[@]}"; do kill "$p" 2>/dev/null; done
  [ -z "$BROKER_PID" ] || wait "$BROKER_PID" # the broker up again for the next test
  (exit $rc)
  scale_exit
}
trap churn_exit EXIT

ms() { date +%s%3N; }
# ---- the driver's clock: actions due at a time, run by tick ------------------
ACT_DUE=()
ACT_CMD=()
at() { ACT_DUE+=("$1"); ACT_CMD+=("$2"); } # at MS "COMMAND ARGS"
tick() {
  local i now
  broker_back || true
  reap
  now=$(ms)
  for i in "${!ACT_DUE[@]}"; do
    [ "${ACT_DUE[$i]}" -le "$now" ] || continue
    local cmd=${ACT_CMD[$i]}
    unset "ACT_DUE[$i]" "ACT_CMD[$i]"
    $cmd
  done
}
# until_ok WHAT SECONDS COMMAND...: COMMAND polled, the schedule running
until_ok() {
  local what=$1 secs=$2; shift 2
  local end=$(($(date +%s) + secs))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || fail "timed out after ${secs}s waiting for $what"
    tick
    sleep 0.1
  done
}
# sleep_ms MS: MS ms, the schedule running
sleep_ms() {
  local end=$(($(ms) + $1))
  while [ "$(ms)" -lt $end ]; do tick; sleep 0.05; done
}

# ---- members -------------------------------------------------------------------
RESTART_UNTIL=0 # exits 1 or 4 before this time (s) follow a broker restart
reap() { # a member that exited by itself: fenced after a stop, or the broker restarted
  local i rc
  for i in "${!PID[@]}"; do
    [ -n "${PID[$i]}" ] && [ "$i" != "$STOPPED" ] || continue
    ! kill -0 "${PID[$i]}" 2>/dev/null || continue
    rc=0
    wait "${PID[$i]}" || rc=$?
    PID[$i]=""
    if [ -n "${FENCED[$i]:-}" ] && { [ $rc = 1 ] || [ $rc = 3 ]; }; then
      say "i$i exited $rc after its stop (fenced): started again"
    elif { [ $rc = 1 ] || [ $rc = 4 ]; } && [ "$(date +%s)" -le $RESTART_UNTIL ]; then
      # a fatal Kafka error, or the topics unreadable at its start
      say "i$i exited $rc around the broker restart: started again"
    else
      fail "instance i$i exited $rc by itself: $(grep -m1 ' error ' "$WORK/i$i.log" || true)"
    fi
    unset "FENCED[$i]"
    start_inst "$i"
  done
}
running() { # the running members, not stopped
  local i
  for i in $(seq 0 $((N - 1))); do
    [ -z "${PID[$i]:-}" ] || [ "$i" = "$STOPPED" ] || echo "$i"
  done
}
# takeable: the running members one may take away (leave, kill, stop),
# leaving at least one other, and one that reads the map itself: the
# lagging member writes its status (T, CLEAR_TO_TEARDOWN) into its copy
takeable() {
  local r=($(running)) i
  [ ${#r[@]} -ge 2 ] || return 0
  if [ $LAG -ge 0 ] && [ -n "${PID[$LAG]:-}" ] && [ "$STOPPED" != "$LAG" ] \
    && [ ${#r[@]} -eq 2 ]; then
    for i in "${r[@]}"; do [ "$i" = "$LAG" ] || continue; echo "$i"; done
    return 0
  fi
  printf '%s\n' "${r[@]}"
}
free_slot() { # the first instance name not running (stopped counts as running)
  local i
  for i in $(seq 0 $((N - 1))); do
    [ -n "${PID[$i]:-}" ] || { echo "$i"; return 0; }
  done
  return 1
}
# pick R WORDS...: word R mod their number in PICKED. The random numbers
# are drawn from RANDOM when a hop's moves are drawn, in the driver's shell:
# not in a $(...) (a subshell's RANDOM is seeded afresh), and not when a
# move runs (its time varies), or the seed would not replay.
pick() {
  local r=$1; shift
  local a=("$@")
  PICKED=${a[$((r % $#))]}
}

JOINS=0 LEAVES=0 KILLS=0 STOPS=0 RETURNS=0 RESTARTS=0 BROKER_RESTARTS=0
mv_join() {
  local i
  i=$(free_slot) || { say "move join: every name runs"; return 0; }
  start_inst "$i"
  JOINS=$((JOINS + 1))
  say "move join: i$i"
}
mv_leave() {
  local r i
  r=($(takeable))
  [ ${#r[@]} -ge 1 ] || { say "move leave: fewer than 2 members run"; return 0; }
  pick "$1" "${r[@]}"
  i=$PICKED
  term_inst "$i"
  LEAVES=$((LEAVES + 1))
  say "move leave: i$i (SIGTERM, exit 0)"
}
mv_kill() {
  local r i back
  r=($(takeable))
  [ ${#r[@]} -ge 1 ] || { say "move kill: fewer than 2 members run"; return 0; }
  pick "$1" "${r[@]}"
  i=$PICKED
  back=$(($2 % 3))
  kill_inst "$i"
  KILLS=$((KILLS + 1))
  if [ $back != 0 ]; then # started again under its name 0.5 to 5 s later
    local d=$((500 + $3 % 4500))
    at $(($(ms) + d)) "restart $i"
    say "move kill: i$i (SIGKILL), started again in $d ms"
  else
    say "move kill: i$i (SIGKILL), not started again"
  fi
}
restart() {
  [ -z "${PID[$1]:-}" ] || return 0
  start_inst "$1"
  RESTARTS=$((RESTARTS + 1))
  say "i$1 started again"
}
mv_stop() {
  local r i
  [ -z "$STOPPED" ] || { say "move stop: i$STOPPED is stopped already"; return 0; }
  r=($(takeable))
  [ ${#r[@]} -ge 1 ] || { say "move stop: fewer than 2 members run"; return 0; }
  pick "$1" "${r[@]}"
  i=$PICKED
  kill -STOP "${PID[$i]}"
  STOPPED=$i
  STOPS=$((STOPS + 1))
  at $(($(ms) + STOP_S * 1000)) "cont $i"
  say "move stop: i$i (SIGSTOP for $STOP_S s)"
}
cont() {
  FENCED[$1]=$(($(wc -l <"$WORK/i$1.log") + 1)) # its log from here on
  kill -CONT "${PID[$1]}"
  STOPPED=""
  say "i$1 continued (SIGCONT)"
}
# A member joins and, once it owns partitions, leaves again: they go back
# to the members that held them.
mv_return() {
  local i
  i=$(free_slot) || { say "move return: every name runs"; return 0; }
  touch "$WORK/i$i.log"
  local from=$(($(wc -l <"$WORK/i$i.log") + 1))
  start_inst "$i"
  say "move return: i$i joins and leaves once it owns partitions"
  at $(($(ms) + 200)) "return_leave $i $(($(date +%s) + 60)) $from"
}
# return_leave I DEADLINE FROM: I leaves once its log from line FROM on (this
# start's) says it owns partitions
return_leave() {
  [ -n "${PID[$1]:-}" ] || return 0
  local n
  n=$(tail -n +"$3" "$WORK/i$1.log" | grep -oE "partition\(s\); [0-9]+ owned" | tail -n 1 \
    | grep -oE '[0-9]+' || true)
  if [ "${n:-0}" -gt 0 ]; then
    term_inst "$1"
    RETURNS=$((RETURNS + 1))
    say "i$1 left, owning partitions: they return"
  else
    [ "$(date +%s)" -lt "$2" ] || fail "i$1 owned no partition within 60 s of its join"
    at $(($(ms) + 200)) "return_leave $1 $2 $3"
  fi
}
# The restart runs beside the driver (a broker with many topics takes up
# to a minute to start on a loaded machine); the moves and waits go on.
BROKER_PID=""
mv_broker() {
  [ $CAN_RESTART = 1 ] || { say "move broker: not this test's broker to restart"; return 0; }
  say "move broker: restart"
  RESTART_UNTIL=$(($(date +%s) + 300))
  "$BROKER" restart >>"$WORK/broker.log" 2>&1 &
  BROKER_PID=$!
  BROKER_RESTARTS=$((BROKER_RESTARTS + 1))
}
broker_up() { [ -z "$BROKER_PID" ]; }
broker_back() { # the restart over (exits 1 or 4 are a restart's for a minute more)
  [ -n "$BROKER_PID" ] || return 0
  ! kill -0 "$BROKER_PID" 2>/dev/null || return 1
  local rc=0
  wait "$BROKER_PID" || rc=$?
  BROKER_PID=""
  [ $rc -eq 0 ] || fail "the broker did not restart: $(tail -n 3 "$WORK/broker.log")"
  RESTART_UNTIL=$(($(date +%s) + 60))
  say "the broker is back"
}

# ---- the control map, and the lagging member's copy ----------------------------------
cli() { # cli VERB ARGS...: the CLI on the map; then the lagging copy, later
  "$GP_BIN" "$@" --control "$WORK/cm.json" >>"$WORK/cli.log" 2>&1
  local rc=$?
  if [ $LAG -ge 0 ]; then
    (sleep "$(printf '%d.%03d' $((LAG_MS / 1000)) $((LAG_MS % 1000)))"
     copy_map "$WORK/cm.json" "$WORK/cm-lag.json") &
    COPIERS+=($!)
  fi
  return $rc
}

# abort_seen: after an abort, the lagging member (when it runs) has its
# copy and has applied the abort, so that no record of the next hop is
# routed by the abandoned split (with gate.abort.redeliver=false it would
# stay in the abandoned colour; records routed before a member sees an
# abort are the abort's, whatever their offsets)
copies_done() {
  local p
  for p in "${COPIERS[@]}"; do ! kill -0 "$p" 2>/dev/null || return 1; done
}
lag_aborted() {
  tail -n +"$HOPLOG" "$WORK/i$LAG.log" >"$WORK/lag.since"
  ! grep -q "transition .* requested" "$WORK/lag.since" || grep -q "transition .* aborted" "$WORK/lag.since"
}
abort_seen() {
  [ $LAG -ge 0 ] || return 0
  until_ok "the lagging copy written" 30 copies_done
  [ -n "${PID[$LAG]:-}" ] && [ "$STOPPED" != "$LAG" ] || return 0
  until_ok "i$LAG (lagging) to apply the abort" 30 lag_aborted
}

# ---- records ---------------------------------------------------------------------
FED=0
EV=$(($(ms) - 120000)) # the next record's event time, two minutes behind the wall clock
# produce_hop COUNT: COUNT records at RATE in the background (flow_done waits),
# event time 1 ms apart from where the last flow ended, each off by up to
# 150 ms (within gate.watermark.out-of-orderness.ms: none is late)
produce_hop() {
  "$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count "$1" --start-id $FED \
    --ts-start $EV --rate $RATE --disorder 150 --quiet >/dev/null 2>>"$WORK/produce.log" &
  PRODUCER=$!
  FED=$((FED + $1))
  EV=$((EV + $1))
}
produced() { ! kill -0 "$PRODUCER" 2>/dev/null; }
ends() { "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --end-offsets; }

# ---- start -------------------------------------------------------------------------
for i in $(seq 0 $((INIT - 1))); do start_inst "$i"; done
produce_hop 1000
until_ok "the first records produced" 30 produced
flow_done
until_ok "the first records routed" 60 all_routed
say "$INIT members run, the first $FED records routed"

# ---- hops ----------------------------------------------------------------------------
OLD=blue
ABORTS=0
: >"$WORK/hops"
for h in $(seq 0 $((HOPS - 1))); do
  NEW=green
  [ $OLD = blue ] || NEW=blue
  D=$((200 + RANDOM % 1300))
  k=$((RANDOM % 5))
  KIND=close
  [ $k != 3 ] || KIND=abort-early
  [ $k != 4 ] || KIND=abort-after-t
  # the moves of this hop, from its cutover on
  MOVES=()
  nm=$((1 + (RANDOM % 3 == 0 ? 1 : 0)))
  for _ in $(seq 1 $nm); do
    pick $RANDOM join leave kill kill return
    MOVES+=("$((RANDOM % 3000)) mv_$PICKED $RANDOM $RANDOM $RANDOM")
  done
  [ $h != $STOP_HOP ] || MOVES+=("$((RANDOM % 2000)) mv_stop $RANDOM")
  [ $h != $RESTART_HOP ] || MOVES+=("$((RANDOM % 2000)) mv_broker")
  until_ok "the broker back" 300 broker_up
  SINCE=$(ends)
  say "hop $h: $OLD -> $NEW ($KIND, delay $D ms), moves: ${MOVES[*]}"
  HOPLOG=1
  [ $LAG -lt 0 ] || HOPLOG=$(($(cat "$WORK/i$LAG.log" 2>/dev/null | wc -l) + 1))
  cli cutover --to $NEW --delay-ms $D || fail "hop $h: cutover refused: $(tail -n 3 "$WORK/cli.log")"
  t0=$(ms)
  for m in "${MOVES[@]}"; do at $((t0 + ${m%% *})) "${m#* }"; done
  case $KIND in
    close)
      produce_hop $((D + LATENESS + 1000))
      until_ok "hop $h: its records produced" 180 produced
      flow_done
      until_ok "hop $h: CLEAR_TO_TEARDOWN" 180 key_is stage CLEAR_TO_TEARDOWN
      T=$(key watermark-toggle-value)
      cli finish || fail "hop $h: finish refused: $(tail -n 3 "$WORK/cli.log")"
      echo "$T $OLD $SINCE" >>"$WORK/hops"
      OLD=$NEW
      ;;
    abort-early)
      sleep_ms $((RANDOM % 1500))
      cli abort || fail "hop $h: abort refused: $(tail -n 3 "$WORK/cli.log")"
      T=$(key watermark-toggle-value)
      say "hop $h: aborted${T:+ after T=$T}, no record produced in it"
      abort_seen
      cli finish || fail "hop $h: finish after the abort refused: $(tail -n 3 "$WORK/cli.log")"
      ABORTS=$((ABORTS + 1))
      ;;
    abort-after-t)
      # past T, short of T + lateness: some records in the new colour
      produce_hop $((D + LATENESS / 2))
      until_ok "hop $h: its records produced" 180 produced
      flow_done
      until_ok "hop $h: T in the map" 180 key_is watermark-stage WATERMARK_SET
      until_ok "hop $h: its records routed" 180 all_routed
      T=$(key watermark-toggle-value)
      # either way the hop's line names the colour before it
      echo "$T $OLD $SINCE" >>"$WORK/hops"
      if cli abort; then
        ABORTS=$((ABORTS + 1))
        say "hop $h: aborted after T=$T, every record of the hop routed"
        abort_seen
        cli finish || fail "hop $h: finish after the abort refused: $(tail -n 3 "$WORK/cli.log")"
      else
        # closed meanwhile (every partition idle): a hop that closed
        say "hop $h: abort refused ($(tail -n 1 "$WORK/cli.log")): finished instead"
        key_is stage CLEAR_TO_TEARDOWN || fail "hop $h: abort refused at stage $(key stage)"
        cli finish || fail "hop $h: finish refused: $(tail -n 3 "$WORK/cli.log")"
        OLD=$NEW
      fi
      ;;
  esac
  until_ok "hop $h: every record routed" 180 all_routed
  say "hop $h done: T=${T:-none}, $FED records fed"
  T=""
done

# ---- the end ---------------------------------------------------------------------------
# The rest of the schedule plays out: a member started again, continued,
# or leaving once it owns partitions.
schedule_done() { [ ${#ACT_DUE[@]} = 0 ] && broker_up; }
until_ok "the rest of the schedule" 300 schedule_done
until_ok "every record routed at the end" 120 all_routed
# A member continued after its stop has exited (and was started again) or
# owns partitions before it is asked to leave: it was fenced and joined
# again as a new member, or the group had not expelled it yet (a stop just
# past the session timeout may end before the coordinator's check), and it
# kept its place.
settled() {
  local i n
  for i in "${!FENCED[@]}"; do
    [ -n "${PID[$i]:-}" ] || continue
    n=$(grep -oE "partition\(s\); [0-9]+ owned" "$WORK/i$i.log" | tail -n 1 | grep -oE '[0-9]+')
    [ "${n:-0}" -gt 0 ] || return 1
  done
}
until_ok "the stopped member back in the group" 60 settled
# All at once (each leave a rebalance less long): exit 0 from each
for i in $(running); do kill -TERM "${PID[$i]}"; done
for i in $(running); do
  rc=0
  wait "${PID[$i]}" || rc=$?
  PID[$i]=""
  [ $rc -eq 0 ] || fail "instance i$i exited $rc after SIGTERM (expected 0)"
done
for i in "${!PID[@]}"; do
  [ -z "${PID[$i]}" ] || fail "i$i still runs at the end"
done
if grep -lE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$WORK"/i*.log; then
  fail "a sanitizer report in a member's log"
fi
hops=(--hops "$WORK/hops")
[ -s "$WORK/hops" ] || hops=() # every hop aborted soon after its cutover
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --dlq "$S.dlq" --event-time json:ts \
  "${hops[@]}" --verbose 2>"$WORK/check.err") || {
  cat "$WORK/hops" "$WORK/check.err"
  fail "checker: $out"
}
say "checker: $out"
CHECKED=$(sed -n 's/.*checked=\([0-9]*\).*/\1/p' <<<"$out")
[ "$CHECKED" = "$FED" ] || fail "checked $CHECKED records, fed $FED"
num() { sed -n "s/.* $1=\([0-9]*\).*/\1/p; s/^$1=\([0-9]*\).*/\1/p" <<<"$out" | head -n 1; }
line="churn: seed=$SEED instances=$N hops=$HOPS aborts=$ABORTS kills=$KILLS stops=$STOPS"
line+=" returns=$RETURNS checked=$CHECKED missing=$(num missing) duplicated=$(num duplicates)"
line+=" reordered=$(num reordered) wrong_side=$(num misrouted) kafka=${KAFKA_VERSION:-$GP_BOOTSTRAP}"
say "joins=$JOINS leaves=$LEAVES restarts=$RESTARTS broker_restarts=$BROKER_RESTARTS lagging=i$LAG"
echo "$line"
[ -z "${GP_SCALE_LINES:-}" ] || echo "$line" >>"$GP_SCALE_LINES"
