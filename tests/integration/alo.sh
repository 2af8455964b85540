#!/usr/bin/env bash
# gate.delivery=at-least-once: the same routing without transactions; after
# a clean stop nothing is lost or doubled, and the restart resumes from the
# committed offsets and checkpoint. Then a cutover while the source is idle:
# the decisions are committed without records (T published, the old side
# closed), and SIGTERM ends the proxy promptly with exit 0.
source "$(dirname "$0")/lib.sh"

S=gp-alo-$RUN_ID
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S" gate.delivery=at-least-once
start_proxy p
produce "$S" 5000 0 --ts-start 1700000000000
wait_for "5000 records routed" 60 routed_is 5000
stop_proxy
start_proxy p
produce "$S" 5000 5000 --ts-start 1700000005000
wait_for "10000 records routed" 60 routed_is 10000
stop_proxy
grep -q "restored checkpoint" "$WORK/proxy.log" || fail "the restart did not restore the checkpoint"
check "$S"
[ "$CHECKED" = 10000 ] || fail "checked $CHECKED"

say "a cutover with the source idle"
start_proxy p
wait_for "the restarted proxy's status" 30 key_is gate-proxy.phase steady
"$GP_BIN" cutover --control "$WORK/cm.json" --to green >/dev/null
wait_for "T published with no record flowing" 30 key_is watermark-stage WATERMARK_SET
wait_for "CLEAR_TO_TEARDOWN with every partition idle" 30 key_is stage CLEAR_TO_TEARDOWN
say "T=$(key watermark-toggle-value) published and the old side closed, no record routed"
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
signal_proxy TERM 10 "SIGTERM"
[ $EXIT_RC -eq 0 ] || fail "proxy exited $EXIT_RC after SIGTERM (expected 0)"
say "PASS"
