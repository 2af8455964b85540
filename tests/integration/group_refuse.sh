#!/usr/bin/env bash
# Refusals of gate.membership=group (docs/DESIGN.md, Scale-out: refusals),
# and the members view, on a real broker. Pipeline A runs in consumer group
# G while its records flow:
#   1. an instance of pipeline B (another source topic) configured with the
#      same group G refuses before it joins: exit 6, the message naming G,
#      A's member (client id, host) and its topics, and what to do; A goes
#      on; nothing of B is routed anywhere;
#   2. a second instance of A joins: gate_proxy_group_members is 2 on both
#      (1 before), each member's partitions on /metrics, `gate-proxy status`
#      (text and --json) shows the members;
#   3. a foreign consumer joins G subscribed to B's topic (gp-admin member):
#      both instances of A, routing, see it, abort their open transaction,
#      leave and exit 6;
#   4. A again, then an instance of A with another gate.lateness.ms: the
#      settings fingerprints differ, and it refuses (exit 6, "instances of
#      pipeline ... disagree on gate settings"); the one with the first
#      settings goes on;
#   5. an upgrade in place: A stopped, started alone with the changed
#      setting, routes on;
# then gp-check: every record of A exactly once, in order, in A's colour
# topics (nothing of B among them: it would count as a duplicate), and
# every record of B in none. /metrics is polled with a deadline. Prints
#   scale: test=refuse instances=2 foreign=exit6 after_routing=exit6
#          settings=exit6 upgrade_in_place=ok members=ok checked=N missing=0
#          duplicated=0 reordered=0 b_routed=0 ok
# (appended to $GP_SCALE_LINES too).
source "$(dirname "$0")/lib.sh"
export GP_MEMBERSHIP=group

A=gp-refuse-a-$RUN_ID
B=gp-refuse-b-$RUN_ID
G=gp-refuse-group-$RUN_ID
BASE=1700000000000
command -v curl >/dev/null || fail "curl is not installed"
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$A" --count 0 --partitions-hint 6 \
  --quiet >/dev/null
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$B" --count 0 --partitions-hint 3 \
  --quiet >/dev/null
produce "$B" 500 0 --ts-start $BASE
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
"$GP_BIN" init --control "$WORK/cm-b.json" >/dev/null
declare -A PID=() HP=()
for i in a0 a1 a1x a0x b0; do HP[$i]=$(free_port); done
common=(gate.commit.interval.ms=100 "gate.group.id=$G")
# a0 and a1 commit once a second: a refusal mostly finds a transaction open
# (the commit interval is not a setting the fingerprint covers)
GP_INSTANCE=a0 write_conf a0 "$A" "${common[@]}" "http.listen=127.0.0.1:${HP[a0]}" \
  gate.commit.interval.ms=1000
GP_INSTANCE=a1 write_conf a1 "$A" "${common[@]}" "http.listen=127.0.0.1:${HP[a1]}" \
  gate.commit.interval.ms=1000
# a1x: instance a1 of A with another allowed lateness; a0x: a0 with it
GP_INSTANCE=a1 write_conf a1x "$A" "${common[@]}" "http.listen=127.0.0.1:${HP[a1x]}" \
  gate.lateness.ms=5000
GP_INSTANCE=a0 write_conf a0x "$A" "${common[@]}" "http.listen=127.0.0.1:${HP[a0x]}" \
  gate.lateness.ms=5000
GP_INSTANCE=b0 write_conf b0 "$B" "${common[@]}" "http.listen=127.0.0.1:${HP[b0]}" \
  "gate.pipeline=it-b-$RUN_ID" "control.file=$WORK/cm-b.json"

start() { # start NAME: the configuration NAME, log in $WORK/NAME.log
  "$GP_BIN" run -c "$WORK/$1.conf" >>"$WORK/$1.log" 2>&1 &
  PID[$1]=$!
  say "$1 started (pid ${PID[$1]})"
}
running() { kill -0 "${PID[$1]}" 2>/dev/null; }
# ended NAME SECONDS: waits for NAME to exit; its code in RC
ended() {
  local end=$(( $(date +%s) + $2 ))
  while running "$1"; do
    [ "$(date +%s)" -lt "$end" ] || fail "$1 still runs after $2 s"
    sleep 0.2
  done
  RC=0
  wait "${PID[$1]}" || RC=$?
  PID[$1]=""
}
stop() { # stop NAME: SIGTERM, exit 0
  kill -TERM "${PID[$1]}"
  ended "$1" 60
  [ "$RC" = 0 ] || fail "$1 exited $RC after SIGTERM (expected 0)"
}
metric() { # metric NAME SERIES: its value on NAME's /metrics ("" when absent)
  curl -s --max-time 2 "http://127.0.0.1:${HP[$1]}/metrics" 2>/dev/null |
    awk -v s="$2" 'index($0, s " ") == 1 { print $2 }'
}
members_is() { [ "$(metric "$1" gate_proxy_group_members)" = "$2" ]; }
# poll DESCRIPTION SECONDS COMMAND...: as wait_for, failing when an
# instance of A that should run has died
poll() {
  local what=$1 secs=$2; shift 2
  local end=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || fail "timed out after ${secs}s waiting for $what"
    for i in "${WATCH[@]}"; do
      running "$i" || fail "$i died while waiting for $what: $(tail -n 3 "$WORK/$i.log")"
    done
    sleep 0.2
  done
}
routed_a() { # records of A committed by the running instances (their /metrics)
  local sum=0 v
  for i in "${WATCH[@]}"; do
    v=$(metric "$i" gate_proxy_records_consumed_total)
    sum=$((sum + ${v:-0}))
  done
  echo $sum
}
routed_a_at_least() { [ "$(routed_a)" -ge "$1" ]; }
show_logs() {
  for f in "$WORK"/*.log; do
    echo "--- last lines of $f:" >&2
    grep -v CONFWARN "$f" | tail -n 20 >&2 || true
  done
}

feeder() {
  trap - EXIT
  local id=0
  while [ ! -e "$WORK/stop-feed" ]; do
    produce "$A" 1000 $id --ts-start $((BASE + id)) --rate 1000
    id=$((id + 1000))
  done
  echo $id >"$WORK/fed"
}
feeder &
FEEDER=$!
MEMBER=""
refuse_exit() {
  local rc=$?
  touch "$WORK/stop-feed"
  kill "$FEEDER" 2>/dev/null || true
  [ -z "$MEMBER" ] || kill "$MEMBER" 2>/dev/null || true
  for i in "${!PID[@]}"; do [ -z "${PID[$i]}" ] || kill -9 "${PID[$i]}" 2>/dev/null || true; done
  [ $rc -eq 0 ] || show_logs
  set +e; (exit $rc)
  finish_test
}
trap refuse_exit EXIT

say "1. pipeline A (a0) in group $G; pipeline B (b0) with the same group"
WATCH=(a0)
start a0
poll "a0 to route" 60 routed_a_at_least 500
poll "gate_proxy_group_members 1 on a0" 30 members_is a0 1
start b0
ended b0 60
[ "$RC" = 6 ] || fail "b0 exited $RC, expected 6: $(tail -n 5 "$WORK/b0.log")"
MSG=$(grep -m1 "has a member that is not an instance of pipeline" "$WORK/b0.log") \
  || fail "b0 gave no refusal"
say "b0 refused (exit 6): ${MSG#* error }"
for want in "group $G " "pipeline it-b-$RUN_ID" "client id gate-proxy-it-$RUN_ID-a0 on host 127.0.0.1" \
  "subscribes to topic(s) $A," "source topics are $B;" "give each pipeline its own gate.group.id"; do
  [[ "$MSG" == *"$want"* ]] || fail "the refusal lacks '$want': $MSG"
done
grep -q "joining group" "$WORK/b0.log" && fail "b0 joined the group before refusing"
running a0 || fail "a0 ended when b0 refused"
"$GP_BIN" status --control "$WORK/cm-b.json" | grep -q "^error *group $G has a member that" ||
  fail "B's map does not show the refusal: $("$GP_BIN" status --control "$WORK/cm-b.json")"

say "2. a second instance of A (a1): two members"
start a1
WATCH=(a0 a1)
poll "gate_proxy_group_members 2 on a0 and a1" 60 bash -c "
  [ \"\$(curl -s http://127.0.0.1:${HP[a0]}/metrics | grep '^gate_proxy_group_members ')\" = 'gate_proxy_group_members 2' ] &&
  [ \"\$(curl -s http://127.0.0.1:${HP[a1]}/metrics | grep '^gate_proxy_group_members ')\" = 'gate_proxy_group_members 2' ]"
both_own() {
  local p0 p1
  p0=$(metric a0 "gate_proxy_group_member_partitions{member=\"gate-proxy-it-$RUN_ID-a0/127.0.0.1\"}")
  p1=$(metric a0 "gate_proxy_group_member_partitions{member=\"gate-proxy-it-$RUN_ID-a1/127.0.0.1\"}")
  [ -n "$p0" ] && [ -n "$p1" ] && [ $((p0 + p1)) = 6 ] && [ "$p0" -gt 0 ] && [ "$p1" -gt 0 ]
}
poll "a0's /metrics to show both members' partitions (6 in all)" 60 both_own
members_line() { "$GP_BIN" status --control "$WORK/cm.json" | grep -q "^members *2: .*-a0/127.0.0.1=[1-5].*-a1/127.0.0.1=[1-5]\|^members *2: .*-a1/127.0.0.1=[1-5].*-a0/127.0.0.1=[1-5]"; }
poll "gate-proxy status to show 2 members" 30 members_line
say "status: $("$GP_BIN" status --control "$WORK/cm.json" | grep '^members')"
"$GP_BIN" status --control "$WORK/cm.json" --json | grep -q '"gate-proxy.members": "2: ' ||
  fail "status --json lacks gate-proxy.members"
grep -h "gate_proxy_group_member" <(curl -s "http://127.0.0.1:${HP[a0]}/metrics") | sed 's/^/  /'

say "3. a foreign consumer joins $G subscribed to $B while a0 and a1 route"
r0=$(routed_a)
poll "a0 and a1 to route on" 60 routed_a_at_least $((r0 + 500))
"$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" --timeout-ms 120000 -X session.timeout.ms=6000 \
  member "$G" "$B" \
  >"$WORK/member.out" 2>&1 &
MEMBER=$!
WATCH=()
ended a0 90
RC0=$RC
ended a1 90
RC1=$RC
[ "$RC0" = 6 ] && [ "$RC1" = 6 ] || fail "a0 exited $RC0, a1 $RC1; expected 6 and 6"
for i in a0 a1; do
  M=$(grep -m1 "has a member that is not an instance of pipeline it-$RUN_ID" "$WORK/$i.log") ||
    fail "$i gave no refusal"
  [[ "$M" == *"client id gp-admin on host 127.0.0.1 subscribes to topic(s) $B,"* ]] ||
    fail "$i: the refusal does not name the member: $M"
done
say "a0 and a1 refused (exit 6) while routing; $(grep -c 'the open transaction is aborted' "$WORK"/a0.log "$WORK"/a1.log | paste -sd' ') open transaction(s) aborted"
kill -TERM $MEMBER
wait $MEMBER || fail "gp-admin member: $(cat "$WORK/member.out")"
MEMBER=""

say "4. A again (a0), then a1 with gate.lateness.ms=5000"
start a0
WATCH=(a0)
r0=$(routed_a)
poll "a0 to route again" 90 routed_a_at_least $((r0 + 500))
poll "gate_proxy_group_members 1 on a0" 60 members_is a0 1
start a1x
ended a1x 120
[ "$RC" = 6 ] || fail "a1x exited $RC, expected 6: $(tail -n 5 "$WORK/a1x.log")"
M=$(grep -m1 "disagree on gate settings" "$WORK/a1x.log") || fail "a1x gave no settings refusal"
say "a1x refused (exit 6): ${M#* error }"
FP0=$(grep -m1 -o "settings fp [0-9a-f]*" "$WORK/a0.log" | cut -d' ' -f3)
FP1=$(grep -o "this instance: [0-9a-f]*" <<<"$M" | cut -d' ' -f3)
[ -n "$FP0" ] && [ -n "$FP1" ] && [ "$FP0" != "$FP1" ] || fail "fingerprints: a0 $FP0, a1x $FP1"
for want in "instances of pipeline it-$RUN_ID disagree on gate settings: partitions $A/" \
  "under fp $FP0 (written by the member with client id gate-proxy-it-$RUN_ID-a0 on host 127.0.0.1)" \
  "(this instance: $FP1); run every instance with the same gate.* settings"; do
  [[ "$M" == *"$want"* ]] || fail "the settings refusal lacks '$want': $M"
done
grep -q "joining group" "$WORK/a1x.log" && say "a1x refused after joining (the group was rebalancing)" \
  || say "a1x refused before joining"
running a0 || fail "a0 ended when a1x refused"
poll "gate_proxy_group_members 1 on a0 after a1x" 60 members_is a0 1

say "5. an upgrade in place: a0 stopped, started alone with gate.lateness.ms=5000"
stop a0
start a0x
WATCH=(a0x)
r0=0
poll "a0x to route" 90 routed_a_at_least 500
poll "gate_proxy_group_members 1 on a0x" 60 members_is a0x 1
grep -q "disagree on gate settings" "$WORK/a0x.log" && fail "a0x refused its own earlier lines"
touch "$WORK/stop-feed"
wait "$FEEDER"
FED=$(cat "$WORK/fed")
all_routed() {
  "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$A" --event-time json:ts >/dev/null 2>&1
}
poll "every record of A routed" 120 all_routed
stop a0x

out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$A" --event-time json:ts) || fail "checker: $out"
say "checker A: $out"
num() { sed -n "s/.*$1=\([0-9]*\).*/\1/p" <<<"$2"; }
[ "$(num checked "$out")" = "$FED" ] || fail "checked $(num checked "$out") records of A, fed $FED"
outb=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$B" --event-time json:ts 2>/dev/null) || true
say "checker B: $outb"
[ "$(num checked "$outb")" = 500 ] && [ "$(num missing "$outb")" = 500 ] ||
  fail "B's records were routed: $outb"
LINE="scale: test=refuse instances=2 foreign=exit6 after_routing=exit6 settings=exit6"
LINE="$LINE upgrade_in_place=ok members=ok checked=$(num checked "$out")"
LINE="$LINE missing=$(num missing "$out") duplicated=$(num duplicates "$out")"
LINE="$LINE reordered=$(num reordered "$out") b_routed=$((500 - $(num missing "$outb"))) ok"
echo "$LINE"
[ -z "${GP_SCALE_LINES:-}" ] || echo "$LINE" >>"$GP_SCALE_LINES"
say "PASS"
