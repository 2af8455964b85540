#!/usr/bin/env bash
# gate.delivery=at-least-once: the same routing without transactions; after
# a clean stop nothing is lost or doubled, and the restart resumes from the
# committed offsets and checkpoint.
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
say "PASS"
