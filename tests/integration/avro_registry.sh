#!/usr/bin/env bash
# Avro in the Confluent wire format, schemas from a real schema registry
# (Apicurio Registry, tests/registry/registry.sh, on loopback) and records
# written by avro-c (gp-produce), on a real broker:
#  1. good records through a cutover, split by T (gp-check on the Kafka
#     timestamp, which gp-produce sets to meta.ts);
#  2. every Avro bad-input class to the dead-letter topic with its reason:
#     not framed (bad-frame), truncated (bad-avro), an id the registry does
#     not know (unknown-schema), a schema without the field (field-missing),
#     a schema that is not Avro (bad-schema);
#  3. the registry frozen (SIGSTOP: requests time out): with
#     schema.registry.on-failure=dlq the records of a new id wait for
#     schema.registry.retry.ms, then go to the dead-letter topic
#     (registry-unavailable); meanwhile only their partition is held: the
#     records of a known id on the other partitions are routed, at a rate
#     printed against the same load with the registry up; once it answers
#     again, the next records of that id are routed;
#  4. with on-failure=exit the proxy exits 1 and commits nothing of the
#     batch; restarted with the registry back, it routes those records;
#  5. HTTPS with the registry's CA and basic auth: routed; a wrong password
#     (401) ends as registry-unavailable, with the status in the reason.
# At the end gp-check finds every source record exactly once.
source "$(dirname "$0")/lib.sh"

REG="$(cd "$(dirname "$0")/../registry" && pwd)/registry.sh"
STARTED_REG=""
reg_cleanup() {
  "$REG" thaw >/dev/null 2>&1 || true
  [ -n "$STARTED_REG" ] && "$REG" stop >/dev/null 2>&1 || true
}
ON_EXIT=reg_cleanup

if "$REG" status >/dev/null 2>&1; then "$REG" stop >/dev/null; fi
say "starting the registry"
"$REG" start >&2 || fail "the schema registry did not start"
STARTED_REG=1
URL=$("$REG" url)
say "registry at $URL ($("$REG" version))"

S=gp-avro-$RUN_ID
BASE=1700000000000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 3 --quiet >/dev/null
"$GP_PRODUCE" --print-schema > "$WORK/order.avsc"
# Variants: without meta.ts; the same fields in another namespace (a new id).
python3 - "$WORK" <<'PY'
import json, sys
w = sys.argv[1]
s = json.load(open(w + "/order.avsc"))
nots = json.loads(json.dumps(s))
for f in nots["fields"]:
    if f["name"] == "meta":
        f["type"]["fields"] = [x for x in f["type"]["fields"] if x["name"] != "ts"]
json.dump(nots, open(w + "/order-nots.avsc", "w"))
for i in (2, 3):
    v = json.loads(json.dumps(s)); v["namespace"] = "gp.test.v%d" % i
    json.dump(v, open(w + "/order-v%d.avsc" % i, "w"))
json.dump({"type": "object", "properties": {"ts": {"type": "integer"}}},
          open(w + "/json-schema.json", "w"))
PY
ID=$("$REG" register "$S-value" "$WORK/order.avsc")
ID_NOTS=$("$REG" register "$S-nots" "$WORK/order-nots.avsc")
ID_JSON=$("$REG" register "$S-json" "$WORK/json-schema.json" JSON)
ID2=$("$REG" register "$S-v2" "$WORK/order-v2.avsc")
ID3=$("$REG" register "$S-v3" "$WORK/order-v3.avsc")
say "schema ids: order=$ID without-ts=$ID_NOTS json=$ID_JSON v2=$ID2 v3=$ID3"
[ "$(printf '%s\n' $ID $ID_NOTS $ID_JSON $ID2 $ID3 | sort -u | wc -l)" = 5 ] || fail "ids not distinct"

"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S" gate.event-time=avro:meta.ts "schema.registry.url=$URL" \
  schema.registry.retry.ms=8000 schema.registry.timeout.ms=1000
start_proxy p

say "1-2. 5000 records (100 bad: 34 not framed, 33 truncated, 33 unknown id), 100 of a"
say "     schema without meta.ts, 100 of a JSON schema"
produce "$S" 5000 0 --ts-start $BASE --disorder 100 --headers --format confluent \
  --schema-id "$ID" --bad-every 50
produce "$S" 100 5000 --ts-start $((BASE + 5000)) --format confluent --schema-id "$ID_NOTS"
produce "$S" 100 5100 --ts-start $((BASE + 5100)) --format confluent --schema-id "$ID_JSON"
wait_for "5200 records routed" 60 routed_is 5200
[ "$(key gate-proxy.count.dlq)" = 300 ] || fail "dlq count $(key gate-proxy.count.dlq), expected 300"

say "cutover to green while 5000 more flow"
produce "$S" 5000 5200 --ts-start $((BASE + 5200)) --disorder 100 --headers --format confluent \
  --schema-id "$ID" --rate 4000 &
PRODUCER=$!
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 300 >/dev/null
wait "$PRODUCER"
wait_for "CLEAR_TO_TEARDOWN" 60 key_is stage CLEAR_TO_TEARDOWN
T=$(key watermark-toggle-value)
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
wait_for "10200 records routed" 60 routed_is 10200
SINCE=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --end-offsets)
check "$S" --dlq "$S.dlq" --cutoff "$T" --old blue --event-time kafka-timestamp
[ "$CHECKED" = 10200 ] || fail "checked $CHECKED, expected 10200"

# known START TS: 10000 records of the known id on each of partitions 1
# and 2, routed; KNOWN_MS: the milliseconds it took
known() {
  local t0 n=$(( $(routed) + 20000 ))
  t0=$(date +%s%N)
  produce "$S" 10000 "$1" --ts-start "$2" --format confluent --schema-id "$ID" --partition 1 &
  local pp=$!
  produce "$S" 10000 $(($1 + 10000)) --ts-start "$2" --format confluent --schema-id "$ID" \
    --partition 2
  wait $pp || fail "the producer failed"
  wait_for "$n records routed" 60 routed_is $n
  KNOWN_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
}
say "3. 20000 records of a known id on partitions 1 and 2, the registry up"
known 100000 $((BASE + 30000))
NORMAL_MS=$KNOWN_MS
say "   routed in $NORMAL_MS ms"
say "   registry frozen; 200 records of a new id (v2) on partition 0, then the same 20000"
"$REG" freeze >/dev/null
t0=$(date +%s%N)
produce "$S" 200 10200 --ts-start $((BASE + 20000)) --format confluent --schema-id "$ID2" \
  --partition 0
wait_for "the v2 partition to be held" 30 grep -q "their partitions are held" "$WORK/proxy.log"
known 120000 $((BASE + 40000))
FROZEN_MS=$KNOWN_MS
[ "$(key gate-proxy.count.dlq)" = 300 ] && ! grep -q "gave up on schema id $ID2" "$WORK/proxy.log" \
  || fail "the known-id records were not routed before the v2 records gave up (in $FROZEN_MS ms)"
say "   routed in $FROZEN_MS ms while partition 0 waits for the registry ($(python3 -c \
  "print('%.0f%%' % (100.0 * $NORMAL_MS / max($FROZEN_MS, 1)))") of the rate with it up)"
wait_for "50400 records routed" 60 routed_is 50400
waited=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$(key gate-proxy.count.dlq)" = 500 ] || fail "dlq count $(key gate-proxy.count.dlq), expected 500"
grep -q "gave up on schema id $ID2" "$WORK/proxy.log" || fail "no give-up logged"
say "   v2 dead-lettered after ${waited} ms (schema.registry.retry.ms=8000)"
"$REG" thaw >/dev/null
sleep 8.5 # the registry-unavailable answer is kept for schema.registry.retry.ms
produce "$S" 200 10400 --ts-start $((BASE + 21000)) --format confluent --schema-id "$ID2"
wait_for "50600 records routed" 60 routed_is 50600
[ "$(key gate-proxy.count.dlq)" = 500 ] || fail "v2 records went to the dead-letter topic once the registry was back"
stop_proxy

say "4. on-failure=exit: the registry frozen, 300 records of id v3"
write_conf p "$S" gate.event-time=avro:meta.ts "schema.registry.url=$URL" \
  schema.registry.retry.ms=2000 schema.registry.timeout.ms=1000 schema.registry.on-failure=exit
"$REG" freeze >/dev/null
produce "$S" 300 10600 --ts-start $((BASE + 22000)) --format confluent --schema-id "$ID3"
"$GP_BIN" run -c "$WORK/p.conf" >>"$WORK/proxy.log" 2>&1 && rc=0 || rc=$?
[ "$rc" = 1 ] || fail "the proxy exited $rc, expected 1 (schema.registry.on-failure=exit)"
"$REG" thaw >/dev/null
start_proxy p
wait_for "50900 records routed" 60 routed_is 50900
stop_proxy
[ "$(key gate-proxy.count.dlq)" = 500 ] || fail "dlq count $(key gate-proxy.count.dlq) after the exit policy"

check "$S" --dlq "$S.dlq" --event-time kafka-timestamp
[ "$CHECKED" = 50900 ] || fail "checked $CHECKED, expected 50900"
kcat -C -b "$GP_BOOTSTRAP" -t "$S.dlq" -e -q -X isolation.level=read_committed \
  -f '%h\n' > "$WORK/dlq-headers.txt"
for want in bad-frame:34 bad-avro:33 unknown-schema:33 field-missing:100 bad-schema:100 \
            registry-unavailable:200; do
  code=${want%%:*} n=${want##*:}
  got=$(grep -c "gate-proxy.error=$code: " "$WORK/dlq-headers.txt" || true)
  [ "$got" = "$n" ] || fail "$got dead-letter records with reason $code, expected $n"
  say "$code: $got, e.g. $(grep -m1 -o "gate-proxy.error=$code: [^,]*" "$WORK/dlq-headers.txt")"
done

say "5. HTTPS with the registry's CA and basic auth"
"$REG" stop >/dev/null
"$REG" start --tls --auth gp:s3cret >&2 || fail "the registry did not start with TLS and auth"
URL=$("$REG" url)
CA=$("$REG" ca)
ID=$("$REG" register "$S-value" "$WORK/order.avsc")
for who in good bad; do
  S5=gp-avro-$who-$RUN_ID
  "$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S5" --count 0 --partitions-hint 1 --quiet >/dev/null
  pw=s3cret; [ $who = bad ] && pw=wrong
  "$GP_BIN" init --control "$WORK/cm-$who.json" >/dev/null
  write_conf $who "$S5" gate.pipeline=avro-$who-$RUN_ID gate.event-time=avro:meta.ts \
    "schema.registry.url=$URL" "schema.registry.ssl.ca.location=$CA" \
    "schema.registry.basic.auth.user.info=gp:$pw" schema.registry.retry.ms=1000 \
    "control.file=$WORK/cm-$who.json"
  produce "$S5" 500 0 --ts-start $BASE --format confluent --schema-id "$ID"
  "$GP_BIN" run -c "$WORK/$who.conf" >>"$WORK/proxy-$who.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 150); do
    n=$(WORK_CM="$WORK/cm-$who.json" python3 -c '
import json, os
d = json.load(open(os.environ["WORK_CM"])).get("data") or {}
print(sum(int(d.get("gate-proxy.count." + k, 0)) for k in ("blue", "green", "dlq")))' 2>/dev/null || echo 0)
    [ "$n" -ge 500 ] && break
    sleep 0.2
  done
  kill -TERM $pid; wait $pid || fail "$who: the proxy exited $?"
  dlq=$(WORK_CM="$WORK/cm-$who.json" python3 -c '
import json, os
print(json.load(open(os.environ["WORK_CM"]))["data"].get("gate-proxy.count.dlq"))')
  if [ $who = good ]; then
    [ "$dlq" = 0 ] || fail "https + basic auth: $dlq records in the dead-letter topic"
  else
    [ "$dlq" = 500 ] || fail "wrong password: $dlq records in the dead-letter topic, expected 500"
    grep -q "HTTP 401" "$WORK/proxy-$who.log" || fail "no 401 in the log"
    grep -q "s3cret\|gp:wrong" "$WORK/proxy-$who.log" && fail "a password was logged"
  fi
  "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S5" --dlq "$S5.dlq" \
    --event-time kafka-timestamp | grep -q '^checked=500 ' || fail "$who: checker"
  say "$who credentials: dead-lettered $dlq of 500"
done
say "PASS"
