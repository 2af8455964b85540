#!/usr/bin/env bash
# An abort after T re-delivers (gate.abort.redeliver=true, the default): the
# survivor (blue) gets every record that had gone to green, once, after the
# records it already had, and then every later record (docs/DESIGN.md,
# Abort re-delivery). Five scenes, each its own pipeline and source topic:
#
#   just-after-T  an abort as soon as the first records reached green, the
#                 proxy running;
#   kills         an abort mid-split with the proxy stopped, then the
#                 re-delivery killed three times (SIGKILL at the test
#                 build's fault points: in a produce, before sending the
#                 offsets, after a commit) and resumed each time;
#   after-close   an abort after the old side closed, late records (ts < T)
#                 among what went to green;
#   retention     the source's first offsets deleted (DeleteRecords, as
#                 retention deletes a segment) between the abort and the
#                 re-delivery: the loss reported with its count, the rest
#                 re-delivered; /metrics and a real Prometheus show the
#                 same figures;
#   group         gate.membership=group: the re-delivery killed once, then
#                 taken on by two members sharing the partitions.
#
# Each ends with the checker in survivor mode (gp-check --survivor blue):
# every source record in blue exactly once, nothing missing, no record of
# green twice in blue, blue's order the source's but for the one re-delivered
# run; and the re-delivered count equals what green got since T.
source "$(dirname "$0")/lib.sh"

BASE=1700000000000
: "${GP_ADMIN:?run through ctest}"

# scene NAME [conf lines...]: a fresh control file, source topic and pipeline
scene() {
  local name=$1; shift
  S=gp-rd-$name-$RUN_ID
  rm -f "$WORK/cm.json"
  "$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
  "$GP_BIN" init --control "$WORK/cm.json" >/dev/null
  write_conf p "$S" "gate.pipeline=it-$RUN_ID-$name" gate.status.interval.ms=1000 "$@"
  say "--- scene $name ($S)"
}

# redelivery FIELD: a field of gate-proxy.redelivery ("to=blue sent=N ...")
redelivery() { sed -n "s/.*$1=\([^ ]*\).*/\1/p" <<<"$(key gate-proxy.redelivery)"; }
redelivered() { [ "$(redelivery open)" = 0 ] && [ -n "$(redelivery sent)" ]; }

# survivor_check [gp-check options...]: the survivor-mode verdict, all zeros
survivor_check() {
  check "$S" --survivor blue "$@"
  RD_LINE=$out_line
}

# The checker's own line, kept for the summary.
check() {
  local topic=$1; shift
  out_line=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$topic" --event-time json:ts "$@") \
    || fail "checker: $out_line"
  say "checker: $out_line"
}

cutover() {
  "$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 0 >/dev/null
  wait_for "T published" 60 key_is watermark-stage WATERMARK_SET
  T=$(key watermark-toggle-value)
}

abort() { "$GP_BIN" abort --control "$WORK/cm.json" >/dev/null || fail "gate-proxy abort"; }

# ends NAME: the re-delivery done, what it sent equal to what green got since
# T (less $1 records lost), the checker's verdict
ends() {
  local lost=${1:-0}
  wait_for "the re-delivery done" 120 redelivered
  local sent ab
  sent=$(redelivery sent)
  ab=$(key gate-proxy.aborted-routed)
  [ "$sent" -gt 0 ] || fail "nothing re-delivered"
  [ $((sent + lost)) = "$ab" ] \
    || fail "re-delivered $sent (+ $lost lost) but $ab records went to green since T"
  say "re-delivered $sent records to blue ($(key gate-proxy.redelivery))"
}

# ---- just after T -----------------------------------------------------------
scene after-t gate.lateness.ms=3600000
start_proxy p
produce "$S" 3000 0 --ts-start $BASE --disorder 100
wait_for "3000 records routed" 60 routed_is 3000
cutover
produce "$S" 20 3000 --ts-start $((T + 1000))
wait_for "20 records in green" 60 key_is gate-proxy.count.green 20
abort
wait_for "phase aborted" 30 key_is gate-proxy.phase aborted
produce "$S" 2000 3020 --ts-start $((T + 2000)) --disorder 100
wait_for "5020 records routed" 60 routed_is 5020
ends
"$GP_BIN" status --control "$WORK/cm.json" >"$WORK/status.txt"
grep -q "^redelivery  to blue: done, 20 records sent$" "$WORK/status.txt" \
  || { cat "$WORK/status.txt"; fail "status does not show the re-delivery done"; }
grep -q "abandoned: the 20 records routed to green by it stay there and are re-delivered to blue" "$WORK/status.txt" \
  || { cat "$WORK/status.txt"; fail "status does not say the records are re-delivered"; }
stop_proxy
survivor_check
grep -qE "(^| )redelivered=20( |$)" <<<"$RD_LINE" || fail "the checker saw $(sed -n 's/.*\(redelivered=[0-9]*\).*/\1/p' <<<"$RD_LINE") in blue, not 20"
LINES="after-t: $RD_LINE"

# ---- mid-split, the re-delivery killed three times -------------------------
scene kills gate.lateness.ms=3600000 gate.commit.records=300
start_proxy p
produce "$S" 3000 0 --ts-start $BASE --disorder 100
wait_for "3000 records routed" 60 routed_is 3000
cutover
produce "$S" 12000 3000 --ts-start $((T + 1000)) --disorder 100
wait_for "15000 records routed" 60 routed_is 15000
stop_proxy
abort
n=0
for fault in before-produce:2500 before-send-offsets:4 after-commit:9; do
  n=$((n + 1))
  rc=0
  GP_FAULT=$fault "$GP_BIN" run -c "$WORK/p.conf" >>"$WORK/proxy.log" 2>&1 || rc=$?
  [ $rc = 137 ] || fail "the proxy exited $rc instead of being killed at $fault"
  said=$(grep -c "goes on from offset\|re-delivering to blue what went to green" "$WORK/proxy.log" || true)
  say "killed at $fault during the re-delivery ($said re-delivery starts and resumptions logged)"
done
resumed=$(grep -c "the re-delivery to blue goes on from offset" "$WORK/proxy.log" || true)
[ "$resumed" -ge 2 ] || fail "only $resumed resumptions logged after 3 kills inside the re-delivery"
start_proxy p
produce "$S" 2000 15000 --ts-start $((T + 20000)) --disorder 100
ends
wait_for "17000 records routed" 60 routed_is 17000
stop_proxy
survivor_check
LINES="$LINES
kills: $RD_LINE resumed=$resumed"

# ---- after the close, late records among green's ------------------------------
scene after-close gate.lateness.ms=0
start_proxy p
produce "$S" 3000 0 --ts-start $BASE --disorder 100
wait_for "3000 records routed" 60 routed_is 3000
cutover
produce "$S" 3000 3000 --ts-start $((T + 1000)) --disorder 100
wait_for "the old side closed" 60 key_is stage CLEAR_TO_TEARDOWN
produce "$S" 300 6000 --ts-start $((T - 5000))
wait_for "300 late records" 60 key_is gate-proxy.count.late 300
abort
wait_for "phase aborted" 30 key_is gate-proxy.phase aborted
produce "$S" 1000 6300 --ts-start $((T + 10000)) --disorder 100
wait_for "7300 records routed" 60 routed_is 7300
ends
stop_proxy
survivor_check
LINES="$LINES
after-close: $RD_LINE"

# ---- retention removed the split's first offsets -----------------------------
# T chosen on an empty source (every partition idle): every record is at or
# above it, so green gets them all and blue nothing before the abort; the
# first 500 offsets of partition 0 are then deleted before the re-delivery.
HP=$(free_port)
scene retention gate.lateness.ms=3600000 gate.watermark.idle.ms=500 "http.listen=127.0.0.1:$HP"
"$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" create "$S.none" 2 >/dev/null
start_proxy p
cutover
produce "$S" 4000 0 --ts-start $((T + 1000)) --disorder 100
wait_for "4000 records routed" 60 routed_is 4000
[ "$(key gate-proxy.count.green)" = 4000 ] || fail "green has $(key gate-proxy.count.green) of 4000"
stop_proxy
abort
"$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" delete-records "$S" 0 500 >/dev/null \
  || fail "deleting the first 500 records of $S/0"
start_proxy p
ends 500
[ "$(redelivery lost)" = 500 ] || fail "lost=$(redelivery lost), expected 500"
grep -q "$S/0: offsets 0 to 499 are no longer in the source (retention): 500 offset(s) the re-delivery to blue cannot read again are lost; the rest is re-delivered" "$WORK/proxy.log" \
  || fail "the loss is not logged with its offsets"
"$GP_BIN" status --control "$WORK/cm.json" >"$WORK/status.txt"
grep -q "^redelivery  to blue: done, 3500 records sent; 500 source offsets LOST" "$WORK/status.txt" \
  || { cat "$WORK/status.txt"; fail "status does not show the loss"; }
# /metrics says the same, in a scrape promtool accepts
curl -sf "http://127.0.0.1:$HP/metrics" >"$WORK/scrape.txt" || fail "no /metrics on port $HP"
promtool check metrics <"$WORK/scrape.txt" >"$WORK/promtool.txt" 2>&1 \
  || { cat "$WORK/promtool.txt"; fail "promtool check metrics failed"; }
metric() { sed -n "s/^$1 //p" "$WORK/scrape.txt"; }
for m in "gate_proxy_redelivered_records 3500" "gate_proxy_redelivery_lost_offsets 500" \
  "gate_proxy_redelivery_remaining_offsets 0"; do
  set -- $m
  [ "$(metric "$1")" = "$2" ] || fail "/metrics: $1 is '$(metric "$1")', expected $2"
done
say "/metrics: $(grep '^gate_proxy_redeliver' "$WORK/scrape.txt" | tr '\n' ' ')"
# and a real Prometheus, scraping the proxy, reads the same from its queries
# (the dashboard's abort panel, deploy/grafana/gate-proxy.json)
prometheus_start "$HP"
prom_agrees() {
  [ "$(prom_q 'sum(gate_proxy_redelivered_records)')" = 3500 ] &&
    [ "$(prom_q 'sum(gate_proxy_redelivery_lost_offsets)')" = 500 ] &&
    [ "$(prom_q 'sum(gate_proxy_redelivery_remaining_offsets)')" = 0 ]
}
wait_for "Prometheus to read sent=3500 lost=500 remaining=0" 60 prom_agrees
say "Prometheus: sent $(prom_q 'sum(gate_proxy_redelivered_records)') lost $(prom_q 'sum(gate_proxy_redelivery_lost_offsets)') remaining $(prom_q 'sum(gate_proxy_redelivery_remaining_offsets)')"
prometheus_stop
stop_proxy
# Green's records of the deleted offsets match no source record any more:
# the survivor is judged against an empty aborted colour.
survivor_check --green "$S.none"
LINES="$LINES
retention: $RD_LINE lost=500"

# ---- scale-out: the re-delivery moves with its partitions ---------------------
# gate.membership=group: the split routed by one member; the abort with it
# stopped; the re-delivery killed once (all four partitions its own), then
# taken on by two members, which share the partitions mid-re-delivery.
declare -A PID=()
ON_EXIT="kill_all_inst; $ON_EXIT"
S=gp-rd-group-$RUN_ID
say "--- scene group ($S)"
rm -f "$WORK/cm.json"
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 4 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
for i in 1 2; do
  GP_MEMBERSHIP=group GP_INSTANCE=rd$i write_conf i$i "$S" "gate.pipeline=it-$RUN_ID-group" \
    gate.lateness.ms=3600000 gate.commit.records=200
done
start_inst 1
produce "$S" 4000 0 --ts-start $BASE --disorder 100
wait_for "4000 records routed" 60 routed_is 4000
cutover
produce "$S" 16000 4000 --ts-start $((T + 1000)) --disorder 100
wait_for "20000 records routed" 90 routed_is 20000
term_inst 1
abort
rc=0
GP_FAULT=before-produce:3000 "$GP_BIN" run -c "$WORK/i1.conf" >>"$WORK/i1.log" 2>&1 || rc=$?
[ $rc = 137 ] || fail "the member exited $rc instead of being killed inside the re-delivery"
grep -q "re-delivering to blue what went to green" "$WORK/i1.log" || fail "no re-delivery began"
start_inst 1
start_inst 2
produce "$S" 2000 20000 --ts-start $((T + 30000)) --disorder 100
survivor_done() {
  out_line=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts --survivor blue 2>&1)
}
wait_for "blue holding every record once" 120 survivor_done
say "checker: $out_line"
grep -q "^checked=22000 " <<<"$out_line" || fail "the checker did not see the 22000 records: $out_line"
resumed=$(cat "$WORK/i1.log" "$WORK/i2.log" | grep -c "the re-delivery to blue goes on from offset" || true)
[ "$resumed" -ge 1 ] || fail "no member went on with the re-delivery the killed one left"
alive
term_inst 1
term_inst 2
LINES="$LINES
group: $out_line resumed=$resumed"

say "abort re-delivery:"
echo "$LINES" | sed 's/^/  /'
say "PASS"
