#!/usr/bin/env bash
# Signals: the first SIGTERM lets the open transaction finish (exit 0, as
# every test's stop_proxy checks); a second ends the process at once with
# 143 (128 + SIGTERM), even while the loop is stuck inside a transaction;
# nothing is lost or doubled after a restart. The loop is held inside a
# transaction by a test fault point (GP_FAULT_HOLD, before-produce). While
# it is held, /livez fails (the test build's bound GP_TEST_LIVEZ_MS=2000),
# and from the first SIGTERM on /readyz is 503.
source "$(dirname "$0")/lib.sh"

S=gp-sig-$RUN_ID
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
HP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
get() { curl -s -o "$WORK/body" -w '%{http_code}' "http://127.0.0.1:$HP$1"; }
write_conf p "$S" "http.listen=127.0.0.1:$HP"
export GP_FAULT_HOLD=$WORK/hold GP_TEST_LIVEZ_MS=2000
start_proxy p
unset GP_FAULT_HOLD GP_TEST_LIVEZ_MS
produce "$S" 2000 0 --ts-start 1700000000000
wait_for "2000 records routed" 60 routed_is 2000

say "the loop held inside a transaction, then SIGTERM twice"
touch "$WORK/hold.before-produce"
produce "$S" 100 2000 --ts-start 1700000002000
[ "$(get /livez)" = 200 ] || fail "/livez before the hold: $(cat "$WORK/body")"
wait_for "the loop to hold before a produce" 30 test -e "$WORK/hold.before-produce.held"
stuck() { [ "$(get /livez)" = 503 ]; }
wait_for "/livez to fail while the loop is held" 30 stuck
say "/livez 503 while the loop is held: $(cat "$WORK/body")"
kill -TERM "$PROXY_PID"
sleep 1
kill -0 "$PROXY_PID" 2>/dev/null || fail "one SIGTERM ended a proxy that holds an open transaction"
[ "$(get '/readyz?verbose')" = 503 ] && grep -q '^\[-\] not-stopping' "$WORK/body" \
  || fail "/readyz after SIGTERM: $(cat "$WORK/body")"
say "/readyz 503 after SIGTERM ([-] not-stopping)"
t0=$(date +%s%N)
signal_proxy TERM 5 "a second SIGTERM"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $EXIT_RC -eq 143 ] || fail "exit $EXIT_RC after a second SIGTERM (expected 143)"
grep -q "second signal: exiting at once" "$WORK/proxy.log" || fail "no line for the second signal"
say "exit 143, $ms ms after the second SIGTERM"
rm -f "$WORK/hold.before-produce"

say "restarted: the held records are routed once"
start_proxy p
wait_for "2100 records routed" 60 routed_is 2100
stop_proxy
check "$S"
[ "$CHECKED" = 2100 ] || fail "checked $CHECKED"
say "PASS"
