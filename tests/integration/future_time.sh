#!/usr/bin/env bash
# Records dated far in the future among real ones: a JSON field of
# 2100-01-01 and the largest 64-bit integer, on both partitions, then a
# cutover; once with one proxy, once with two members of one group
# (gate.membership=group, where each partition's promise would carry the
# date to every member). Each goes to the dead-letter topic with the reason future-time
# (past gate.event-time.max-future.ms, a day by default) and raises no
# watermark and no highest event time, so T is chosen near the real
# records' event time and green gets what comes after it. Proves T within
# the records' hour, the four records in the dead-letter topic with their
# reason and source, green's records, and every source record exactly
# once in blue, green or the dead-letter topic, split by T. Last, a
# checkpoint written without the bound (gate.event-time.max-future.ms=0,
# as before it existed) and read with it: gate-proxy.warning names the
# partition and its time.
source "$(dirname "$0")/lib.sh"

S=gp-future-$RUN_ID
BASE=$(($(date +%s%3N) - 60000))
FAR=4102444800000     # 2100-01-01T00:00:00Z
TOP=9223372036854775807
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S" gate.lateness.ms=1000
start_proxy p

say "2000 records, one dated 2100 and one at the largest integer on each partition, 2000 more"
produce "$S" 2000 0 --ts-start "$BASE" --headers
for part in 0 1; do
  printf '{"ts":%s}\n{"ts":%s}\n' "$FAR" "$TOP" | kcat -P -b "$GP_BOOTSTRAP" -t "$S" -p $part
done
produce "$S" 2000 2000 --ts-start $((BASE + 2000)) --headers
TOTAL=4004
wait_for "$TOTAL records routed" 60 routed_is $TOTAL
[ "$(key gate-proxy.count.dlq)" = 4 ] || fail "dlq count $(key gate-proxy.count.dlq), expected 4"

say "cutover to green: T from the real records"
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 300 >/dev/null
wait_for "T in the map" 30 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
[ "$T" -gt $((BASE + 3999)) ] && [ "$T" -lt $((BASE + 3600000)) ] \
  || fail "T=$T is not within the hour of the records (BASE=$BASE): a far-future record held it"
say "T=$T, $((T - BASE - 3999)) ms past the highest real event time"
produce "$S" 3000 4000 --ts-start "$T" --headers
TOTAL=$((TOTAL + 3000))
wait_for "CLEAR_TO_TEARDOWN" 60 key_is stage CLEAR_TO_TEARDOWN
wait_for "$TOTAL records routed" 60 routed_is $TOTAL
green=$(key gate-proxy.count.green)
[ "$green" = 3000 ] || fail "green has $green records, expected the 3000 at or after T"
stop_proxy

out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts --dlq "$S.dlq" \
  --cutoff "$T" --old blue 2>&1) || fail "checker: $out"
say "checker: $out"
grep -q "checked=$TOTAL " <<<"$out" || fail "checked is not $TOTAL: $out"
kcat -C -b "$GP_BOOTSTRAP" -t "$S.dlq" -e -q -X isolation.level=read_committed \
  -f '%h\n' >"$WORK/dlq-headers.txt"
got=$(grep -c "gate-proxy.error=future-time: event time \($FAR\|$TOP\) is more than gate.event-time.max-future.ms=86400000" "$WORK/dlq-headers.txt" || true)
[ "$got" = 4 ] || fail "$got dead-letter records with reason future-time, expected 4: $(head -n 4 "$WORK/dlq-headers.txt")"
for part in 0 1; do
  n=$(grep -c "gate-proxy.source=$S/$part/[0-9]" "$WORK/dlq-headers.txt" || true)
  [ "$n" = 2 ] || fail "$n dead-letter records name $S/$part as their source, expected 2"
done
fault_line future-time "lost_counted=0 dlq=$got outcome=dlq T=$T green=$green"

say "group mode: two members, the same records on a source of their own"
export GP_MEMBERSHIP=group
S=gp-future-group-$RUN_ID
BASE=$(($(date +%s%3N) - 60000))
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
rm -f "$WORK/cm.json"
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
for i in 0 1; do
  GP_INSTANCE=i$i write_conf i$i "$S" gate.lateness.ms=1000 gate.commit.interval.ms=100
done
declare -A PID=()
trap scale_exit EXIT
for i in 0 1; do start_inst $i; done
for i in 0 1; do wait_for "i$i to own 1 partition" 60 owns $i 1; done
produce "$S" 2000 0 --ts-start "$BASE" --headers
for part in 0 1; do
  printf '{"ts":%s}\n{"ts":%s}\n' "$FAR" "$TOP" | kcat -P -b "$GP_BOOTSTRAP" -t "$S" -p $part
done
produce "$S" 2000 2000 --ts-start $((BASE + 2000)) --headers
every_routed() { "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts --dlq "$S.dlq" >/dev/null 2>&1; }
wait_for "every record routed" 60 every_routed
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 300 >/dev/null
wait_for "T in the map" 30 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
[ "$T" -gt $((BASE + 3999)) ] && [ "$T" -lt $((BASE + 3600000)) ] \
  || fail "group: T=$T is not within the hour of the records (BASE=$BASE): a far-future record held it"
say "group: T=$T agreed, $((T - BASE - 3999)) ms past the highest real event time"
produce "$S" 3000 4000 --ts-start "$T" --headers
wait_for "CLEAR_TO_TEARDOWN" 60 key_is stage CLEAR_TO_TEARDOWN
wait_for "every record routed" 60 every_routed
for i in 0 1; do term_inst $i; done
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts --dlq "$S.dlq" \
  --cutoff "$T" --old blue 2>&1) || fail "checker: $out"
say "checker: $out"
grep -q "checked=7004 " <<<"$out" || fail "checked is not 7004: $out"
got=$(kcat -C -b "$GP_BOOTSTRAP" -t "$S.dlq" -e -q -X isolation.level=read_committed -f '%h\n' \
  | grep -c "gate-proxy.error=future-time: " || true)
[ "$got" = 4 ] || fail "group: $got dead-letter records with reason future-time, expected 4"
fault_line future-time-group "lost_counted=0 dlq=$got outcome=dlq T=$T instances=2"

say "a checkpoint written without the bound, read with it: gate-proxy.warning says so"
unset GP_MEMBERSHIP
S=gp-future-old-$RUN_ID
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 1 --quiet >/dev/null
rm -f "$WORK/cm.json"
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf old "$S" gate.event-time.max-future.ms=0
start_proxy old
produce "$S" 100 0 --ts-start "$(($(date +%s%3N) - 60000))" --headers
printf '{"ts":%s}\n' "$FAR" | kcat -P -b "$GP_BOOTSTRAP" -t "$S" -p 0
wait_for "101 records routed" 60 routed_is 101
[ "$(key gate-proxy.count.blue)" = 101 ] || fail "without the bound the 2100 record is not routed: blue=$(key gate-proxy.count.blue)"
stop_proxy
write_conf new "$S"
start_proxy new
warned() { key gate-proxy.warning | grep -q "1 partition(s) carry in their checkpoint a highest event time past gate.event-time.max-future.ms ($S/0: $FAR)"; }
wait_for "the warning of the checkpoint's far-future time" 30 warned
say "warning: $(key gate-proxy.warning)"
stop_proxy
say "PASS"
