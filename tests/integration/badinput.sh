#!/usr/bin/env bash
# Every class of bad JSON input on a real broker, among good records: each
# goes to the dead-letter topic with its reason code and source position,
# is counted, never stops the proxy, and is committed exactly once (gp-check
# finds every source record once in blue, green or the dead-letter topic).
# Then a cutover, and records older than T after the close: with
# gate.late=dlq they go to the dead-letter topic as late.
source "$(dirname "$0")/lib.sh"

S=gp-bad-$RUN_ID
BASE=1700000000000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S" gate.record.max.bytes=2048 gate.late=dlq gate.lateness.ms=1000
start_proxy p

# The bad values, one per line: CODE<TAB>VALUE.
python3 - "$WORK/bad.tsv" <<'PY'
import sys
big = '{"ts":1700000000100,"pad":"' + "x" * 3000 + '"}'
rows = [
    ("not-json", "hello"),
    ("not-json", '{"ts"}'),
    ("not-json", '{ts:1700000000100}'),
    ("not-json", "[" * 100 + "]" * 100),      # nested too deeply
    ("field-missing", '{"id":1}'),
    ("field-missing", '{"TS":1700000000100}'),
    ("wrong-type", '{"ts":true}'),
    ("wrong-type", '{"ts":null}'),
    ("wrong-type", '{"ts":[1700000000100]}'),
    ("wrong-type", '{"ts":{"ms":1700000000100}}'),
    ("bad-time", '{"ts":"yesterday"}'),
    ("bad-time", '{"ts":"2026-02-30T00:00:00Z"}'),   # no such day
    ("bad-time", '{"ts":"2026-01-01T24:00:00Z"}'),   # hour 24
    ("bad-time", '{"ts":"1700000000100x"}'),         # trailing garbage
    ("bad-time", '{"ts":99999999999999999999}'),     # overflows int64
    ("bad-time", '{"ts":1.5e12}'),                   # not an integer of ms
    ("too-large", big),
]
with open(sys.argv[1], "w") as f:
    for code, v in rows:
        f.write(code + "\t" + v + "\n")
PY
NBAD=$(wc -l < "$WORK/bad.tsv")

say "2000 good records, then the $NBAD bad ones twice (both partitions), then 2000 good"
produce "$S" 2000 0 --ts-start $BASE --headers
for part in 0 1; do
  cut -f2 "$WORK/bad.tsv" | kcat -P -b "$GP_BOOTSTRAP" -t "$S" -p $part
done
produce "$S" 2000 2000 --ts-start $((BASE + 2000)) --headers
TOTAL=$((4000 + 2 * NBAD))
wait_for "$TOTAL records routed" 60 routed_is $TOTAL
kill -0 "$PROXY_PID" || fail "the proxy stopped"
[ "$(key gate-proxy.count.dlq)" = $((2 * NBAD)) ] \
  || fail "dlq count $(key gate-proxy.count.dlq), expected $((2 * NBAD))"
[ "$(key gate-proxy.count.blue)" = 4000 ] || fail "blue count $(key gate-proxy.count.blue)"

say "cutover to green; after the close, 50 records older than T"
produce "$S" 3000 4000 --ts-start $((BASE + 4000)) --headers --rate 3000 &
PRODUCER=$!
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 300 >/dev/null
wait "$PRODUCER"
produce "$S" 1000 7000 --ts-start $((BASE + 20000)) --headers
wait_for "CLEAR_TO_TEARDOWN" 60 key_is stage CLEAR_TO_TEARDOWN
T=$(key watermark-toggle-value)
produce "$S" 50 8000 --ts-start $BASE --headers
TOTAL=$((TOTAL + 4050))
wait_for "$TOTAL records routed" 60 routed_is $TOTAL
stop_proxy
[ "$(key gate-proxy.count.late)" = 50 ] || fail "late count $(key gate-proxy.count.late), expected 50"
[ "$(key gate-proxy.count.dlq)" = $((2 * NBAD + 50)) ] || fail "dlq count $(key gate-proxy.count.dlq)"

check "$S" --dlq "$S.dlq" --cutoff "$T" --old blue
[ "$CHECKED" = $TOTAL ] || fail "checked $CHECKED, expected $TOTAL"

# The reasons, from the dead-letter records' headers, class by class.
kcat -C -b "$GP_BOOTSTRAP" -t "$S.dlq" -e -q -X isolation.level=read_committed \
  -f '%h\n' > "$WORK/dlq-headers.txt"
for code in $(cut -f1 "$WORK/bad.tsv" | sort -u) late; do
  if [ "$code" = late ]; then want=50; else want=$(( 2 * $(grep -c "^$code	" "$WORK/bad.tsv") )); fi
  got=$(grep -c "gate-proxy.error=$code: " "$WORK/dlq-headers.txt" || true)
  [ "$got" = "$want" ] || fail "$got dead-letter records with reason $code, expected $want"
  say "$code: $got, e.g. $(grep -m1 -o "gate-proxy.error=$code: [^,]*" "$WORK/dlq-headers.txt")"
done
grep -q "gate-proxy.source=$S/1/[0-9]" "$WORK/dlq-headers.txt" || fail "no source header"
say "PASS"
