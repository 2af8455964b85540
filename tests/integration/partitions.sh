#!/usr/bin/env bash
# New partitions of a source topic, on a real broker.
#
# 1. The source topic gains partitions while records flow, in the middle of
#    a split: the proxy finds them within gate.discovery.interval.ms, grows
#    the colour topics (gate.topics.create=true), reads the new partitions
#    from their beginning, and the checker finds every record exactly once,
#    in order, split by T (the new partitions judged from offset 0).
# 2. With gate.topics.create=false, a source grown past its colour topics is
#    a clear error: logged once per change (not every discovery), shown in
#    gate-proxy.error, and the new partitions are held (not read, nothing
#    misplaced) while the old ones keep flowing. Once the colour topics are
#    grown by hand, the next discovery picks the new partitions up and their
#    records arrive.
# 3. At start, a colour topic with fewer partitions than its source (and
#    gate.topics.create=false) stops the proxy with exit 4, naming the topic.
source "$(dirname "$0")/lib.sh"
: "${GP_ADMIN:?run through ctest (GP_ADMIN: the gp-admin tool)}"

PRODUCER=""
cleanup() {
  local rc=$?
  [ -z "$PRODUCER" ] || kill "$PRODUCER" 2>/dev/null || true
  set +e
  (exit $rc)
  finish_test
}
trap cleanup EXIT

admin() { "$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" "$@"; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
log_has() { grep -qF -- "$1" "$WORK/proxy.log"; }
log_count() { grep -cF -- "$1" "$WORK/proxy.log" || true; }
# sum of the end offsets of partitions FROM..TO of topic S
end_sum() {
  local s=$1 from=$2 to=$3 p off total=0
  for kv in $("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$s" --end-offsets | tr ',' ' '); do
    p=${kv%%:*}; off=${kv#*:}
    if [ "$p" -ge "$from" ] && [ "$p" -le "$to" ]; then total=$((total + off)); fi
  done
  echo "$total"
}
routed_exactly() { [ "$(routed)" -eq "$1" ]; }
error_has() { key gate-proxy.error | grep -qF -- "$1"; }
error_empty() { [ -z "$(key gate-proxy.error)" ]; }

BASE=1700000000000
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null

# ---- 1. growth during a split, colour topics grown by the proxy -----------
S=gp-parts-$RUN_ID
admin create "$S" 4 >/dev/null
# A long lateness keeps the split open while the topic grows.
write_conf grow "$S" gate.discovery.interval.ms=1000 gate.lateness.ms=15000
start_proxy grow
produce "$S" 8000 0 --ts-start $BASE --disorder 150 --headers --key-every 3
wait_for "8000 records routed" 60 routed_is 8000
SINCE=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --end-offsets)

say "1: cutover to green; the source grows from 4 to 6 partitions during the split"
# The key-hash partitioner spreads records over the new partitions once the
# producer's metadata (refreshed every second) shows them.
produce "$S" 24000 8000 --ts-start $((BASE + 8000)) --disorder 150 --headers --rate 3000 \
  -X topic.metadata.refresh.interval.ms=1000 &
PRODUCER=$!
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 500 >/dev/null
wait_for "T published" 60 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
admin grow "$S" 6 >/dev/null
GREW_AT=$(ms)
wait_for "the proxy to find the new partitions" 30 \
  log_has "$S grew from 4 to 6 partitions; reading the new ones from the beginning"
FOUND_MS=$(( $(ms) - GREW_AT ))
say "new partitions found ${FOUND_MS} ms after the growth (discovery every 1000 ms)"
# Within the discovery interval, plus one transaction, the metadata round
# trips and growing both colour topics, with room for 2 shared cores and
# sanitizers (measured: 0.4-0.7 s).
[ "$FOUND_MS" -le 3000 ] || fail "found the new partitions only after ${FOUND_MS} ms"
[ "$(key stage)" = TRANSITIONING ] || fail "the split closed before the growth was seen"
for c in blue green; do
  n=$(admin partitions "$S.$c")
  [ "$n" = 6 ] || fail "$S.$c has $n partitions, expected 6 (gate.topics.create=true)"
  log_has "grew topic $S.$c with 6 partitions" || fail "no log line for growing $S.$c"
done
wait "$PRODUCER"
PRODUCER=""
# A fresh producer sees 6 partitions at once: the new ones surely get records.
produce "$S" 6000 32000 --ts-start $((BASE + 32000)) --disorder 150 --headers
NEW=$(end_sum "$S" 4 5)
[ "$NEW" -gt 0 ] || fail "no record reached the new partitions 4 and 5"
say "$NEW records in the new partitions"
wait_for "CLEAR_TO_TEARDOWN" 90 key_is stage CLEAR_TO_TEARDOWN
[ "$(key watermark-toggle-value)" = "$T" ] || fail "T changed"
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
wait_for "38000 records routed" 90 routed_is 38000
stop_proxy
# --since names the 4 old partitions; the new ones are judged from offset 0.
check "$S" --cutoff "$T" --old blue --since "$SINCE"
check "$S"
[ "$CHECKED" = 38000 ] || fail "checked $CHECKED records, expected 38000"

# ---- 2. colour topics too small: a clear error, the new partitions held ---
S2=gp-parts-held-$RUN_ID
admin create "$S2" 3 >/dev/null
admin create "$S2.blue" 3 >/dev/null
admin create "$S2.green" 3 >/dev/null
admin create "$S2.dlq" 1 >/dev/null
: > "$WORK/proxy.log"
# A fresh map: its status counts start again from this topic's.
"$GP_BIN" init --control "$WORK/cm.json" --force >/dev/null
HP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
readyz() { curl -s -o "$WORK/readyz" -w '%{http_code}' "http://127.0.0.1:$HP/readyz?verbose"; }
write_conf held "$S2" gate.topics.create=false gate.discovery.interval.ms=1000 \
  "http.listen=127.0.0.1:$HP"
start_proxy held
produce "$S2" 3000 0 --ts-start $BASE --headers
wait_for "3000 records routed" 60 routed_is 3000
ready_is() { [ "$(readyz)" = "$1" ]; }
wait_for "/readyz 200 while routing" 30 ready_is 200

say "2: the source grows from 3 to 5 partitions, its colour topics stay at 3"
admin grow "$S2" 5 >/dev/null
MSG="$S2 grew to 5 partitions but its records cannot be placed"
wait_for "the error about the colour topics" 30 log_has "$MSG"
grep -F -- "$MSG" "$WORK/proxy.log" | grep -qF "colour topic $S2.blue has 3 partitions but needs 5" \
  || fail "the error does not name $S2.blue and its partition counts: $(grep -F -- "$MSG" "$WORK/proxy.log")"
wait_for "gate-proxy.error naming $S2.blue" 30 error_has "$S2.blue has 3 partitions but needs 5"
# A fresh producer writes to all 5 partitions; 0-2 must flow, 3-4 wait.
produce "$S2" 10000 3000 --ts-start $((BASE + 3000)) --headers
OLD_TOTAL=$(end_sum "$S2" 0 2)
HELD=$(end_sum "$S2" 3 4)
[ "$HELD" -gt 0 ] || fail "no record in the new partitions 3 and 4"
wait_for "$OLD_TOTAL records of partitions 0-2 routed" 60 routed_is "$OLD_TOTAL"
sleep 4   # four discovery intervals
routed_exactly "$OLD_TOTAL" || fail "routed $(routed), expected $OLD_TOTAL: held records were read"
n=$(log_count "$MSG")
[ "$n" -eq 1 ] || fail "the unchanged error was logged $n times in 4+ discovery intervals (once expected)"
error_has "$S2.blue has 3 partitions but needs 5" || fail "gate-proxy.error lost: '$(key gate-proxy.error)'"
[ "$(readyz)" = 503 ] && grep -q '^\[-\] partitions' "$WORK/readyz" \
  || fail "/readyz while partitions are held: $(cat "$WORK/readyz")"
say "/readyz 503 while partitions are held ([-] partitions)"
# Nothing misplaced: the checker finds exactly the held records missing,
# no duplicate (e.g. a record of partition 3 written to a colour partition 0).
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S2" --event-time json:ts 2>/dev/null) && \
  fail "the checker found nothing missing while partitions are held: $out"
[[ "$out" == *" duplicates=0 missing=$HELD reordered=0 "* ]] \
  || fail "while held, expected missing=$HELD and nothing else: $out"
say "held: $out"

say "2: blue grown by hand; green still too small"
admin grow "$S2.blue" 5 >/dev/null
wait_for "the error naming $S2.green" 30 error_has "colour topic $S2.green has 3 partitions but needs 5"
n=$(log_count "$MSG")
[ "$n" -eq 2 ] || fail "a changed error must be logged once more: logged $n times"
routed_exactly "$OLD_TOTAL" || fail "routed $(routed) while green is too small, expected $OLD_TOTAL"

say "2: green grown by hand: the held partitions are picked up"
admin grow "$S2.green" 5 >/dev/null
GREW_AT=$(ms)
wait_for "the proxy to take the new partitions" 30 \
  log_has "$S2 grew from 3 to 5 partitions; reading the new ones from the beginning"
TAKEN_MS=$(( $(ms) - GREW_AT ))
say "held partitions taken ${TAKEN_MS} ms after the colour topics grew"
[ "$TAKEN_MS" -le 3000 ] || fail "took the held partitions only after ${TAKEN_MS} ms"
wait_for "13000 records routed" 60 routed_is 13000
wait_for "gate-proxy.error cleared" 30 error_empty
wait_for "/readyz 200 once the held partitions are read" 30 ready_is 200
sleep 2
n=$(log_count "$MSG")
[ "$n" -eq 2 ] || fail "the error was logged again after it was resolved ($n times)"
stop_proxy
check "$S2" --dlq "$S2.dlq"
[ "$CHECKED" = 13000 ] || fail "checked $CHECKED records, expected 13000"

# ---- 3. at start: a colour topic with fewer partitions than the source ----
S3=gp-parts-start-$RUN_ID
admin create "$S3" 2 >/dev/null
admin create "$S3.blue" 1 >/dev/null
admin create "$S3.green" 2 >/dev/null
admin create "$S3.dlq" 1 >/dev/null
write_conf small "$S3" gate.topics.create=false
rc=0
"$GP_BIN" run -c "$WORK/small.conf" >"$WORK/small.out" 2>&1 || rc=$?
[ "$rc" -eq 4 ] || { cat "$WORK/small.out"; fail "exit $rc, expected 4"; }
grep -qF "colour topic $S3.blue has 1 partitions but needs 2" "$WORK/small.out" \
  || { cat "$WORK/small.out"; fail "the start error does not name $S3.blue and its counts"; }
say "exit 4 as expected: $(grep -m1 -F "$S3.blue" "$WORK/small.out")"
say "PASS"
