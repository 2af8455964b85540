#!/usr/bin/env bash
# Records whose event time cannot be read go to the dead-letter topic with
# the reason and the source position in their headers: none is dropped,
# none reaches a colour topic, and they are committed exactly once too.
source "$(dirname "$0")/lib.sh"

S=gp-dlq-$RUN_ID
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S"
start_proxy p
# Every 10th record is bad: alternately not JSON and JSON without "ts".
produce "$S" 5000 0 --ts-start 1700000000000 --bad-every 10 --headers
wait_for "5000 records routed" 60 routed_is 5000
stop_proxy
[ "$(key gate-proxy.count.dlq)" = 500 ] || fail "dlq count $(key gate-proxy.count.dlq), expected 500"
check "$S" --dlq "$S.dlq"
[ "$CHECKED" = 5000 ] || fail "checked $CHECKED"

# The reasons, from the headers of the dead-letter records.
kcat -C -b "$GP_BOOTSTRAP" -t "$S.dlq" -e -q -X isolation.level=read_committed \
  -f '%h\n' > "$WORK/dlq-headers.txt"
n=$(wc -l < "$WORK/dlq-headers.txt")
[ "$n" -eq 500 ] || fail "$n dead-letter records, expected 500"
grep -c 'gate-proxy.error=not-json' "$WORK/dlq-headers.txt" | grep -qx 250 \
  || fail "expected 250 not-json reasons"
grep -c 'gate-proxy.error=field-missing' "$WORK/dlq-headers.txt" | grep -qx 250 \
  || fail "expected 250 field-missing reasons"
grep -q "gate-proxy.source=$S/[01]/[0-9]" "$WORK/dlq-headers.txt" || fail "no source header"
say "PASS"
