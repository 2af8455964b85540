#!/usr/bin/env bash
# An abort after T with gate.abort.redeliver=false: every later record goes
# to the survivor (blue), the records already sent to green are only counted
# in gate-proxy.aborted-routed (no re-delivery: integration.abort_redeliver),
# and still nothing is lost or doubled; `gate-proxy status` shows that count
# with the abandoned T, after the abort and after finish.
source "$(dirname "$0")/lib.sh"

S=gp-abort-$RUN_ID
BASE=1700000000000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S" gate.lateness.ms=3600000 gate.abort.redeliver=false
start_proxy p
produce "$S" 5000 0 --ts-start $BASE --disorder 100
wait_for "5000 records routed" 60 routed_is 5000

"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 0 >/dev/null
wait_for "T published" 60 key_is watermark-stage WATERMARK_SET
produce "$S" 5000 5000 --ts-start $((BASE + 5000)) --disorder 100
wait_for "10000 records routed" 60 routed_is 10000
GREEN=$(key gate-proxy.count.green)
[ "$GREEN" -gt 0 ] || fail "no record reached green during the split"

T=$(key watermark-toggle-value)
"$GP_BIN" abort --control "$WORK/cm.json" >/dev/null
wait_for "phase aborted" 30 key_is gate-proxy.phase aborted
produce "$S" 5000 10000 --ts-start $((BASE + 10000)) --disorder 100
wait_for "15000 records routed" 60 routed_is 15000
stop_proxy
[ "$(key gate-proxy.count.green)" = "$GREEN" ] || fail "green got records after the abort"
[ -z "$(key gate-proxy.redelivery)" ] || fail "a re-delivery with gate.abort.redeliver=false: $(key gate-proxy.redelivery)"
[ "$(key gate-proxy.aborted-routed)" = "$GREEN" ] \
  || fail "aborted-routed=$(key gate-proxy.aborted-routed), expected $GREEN"
[ "$(key active-deployment-type)" = BLUE ] || fail "the survivor is not BLUE"
# status relates the count to the abandoned T, before and after finish
for step in abort finish; do
  "$GP_BIN" status --control "$WORK/cm.json" >"$WORK/status.txt"
  grep -q "^aborted     T=$T (.*) abandoned: the $GREEN records routed to green by it stay there; every record now goes to blue" "$WORK/status.txt" \
    || { cat "$WORK/status.txt"; fail "status after $step does not show the abandoned T=$T and its $GREEN records"; }
  [ $step = finish ] || "$GP_BIN" finish --control "$WORK/cm.json" >/dev/null || fail "finish after abort"
done
say "status: $(grep '^aborted' "$WORK/status.txt")"
check "$S"
[ "$CHECKED" = 15000 ] || fail "checked $CHECKED"
say "PASS"
