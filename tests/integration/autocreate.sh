#!/usr/bin/env bash
# On a broker with auto.create.topics.enable=true (Kafka's default; the
# shared test broker has it off), looking a topic up must not create it:
#   1. gate.topics.create=false and no colour or dead-letter topics: the
#      proxy exits 4, and afterwards none of those topics exists;
#   2. gate.topics.create=true: the proxy creates them itself, with the
#      source's partition count (not the broker's num.partitions=1), and
#      routes.
# Starts its own broker (tests/kafka/broker.sh) on GP_KAFKA_PORT + 30.
source "$(dirname "$0")/lib.sh"
: "${GP_ADMIN:?run through ctest}"
KCAT=${GP_KCAT:-kcat}
command -v "$KCAT" >/dev/null || fail "kcat not found (apt-get install kcat, or set GP_KCAT)"
BROKER=$(cd "$(dirname "$0")/../kafka" && pwd)/broker.sh
export GP_KAFKA_PORT=$(( ${GP_KAFKA_PORT:-19092} + 30 )) GP_KAFKA_DIR=$WORK/kafka GP_KAFKA_AUTO_CREATE=true
ON_EXIT='"$BROKER" stop >/dev/null 2>&1'
"$BROKER" start >"$WORK/broker.log" 2>&1 || { cat "$WORK/broker.log" >&2; fail "the auto-create broker did not start"; }
B=127.0.0.1:$GP_KAFKA_PORT
say "broker with auto.create.topics.enable=true on $B"

S=gp-auto-$RUN_ID
"$GP_ADMIN" --bootstrap "$B" create "$S" 4 >/dev/null
"$GP_PRODUCE" --bootstrap "$B" --topic "$S" --count 100 --ts-start 1700000000000 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
write_conf p "$S" "kafka.bootstrap.servers=$B"
# listed: every topic the broker has (a metadata request for all topics,
# which creates none)
listed() { "$KCAT" -L -b "$B" -J 2>/dev/null | python3 -c 'import json,sys; print("\n".join(t["topic"] for t in json.load(sys.stdin)["topics"]))'; }

say "1. gate.topics.create=false: exit 4, and no topic created"
rc=0
timeout 60 "$GP_BIN" run -c "$WORK/p.conf" -X gate.topics.create=false >"$WORK/proxy.log" 2>&1 || rc=$?
[ $rc -eq 4 ] || fail "exit $rc with the colour topics missing (expected 4)"
grep -q "colour topic $S.blue does not exist" "$WORK/proxy.log" || fail "no 'does not exist' line"
sleep 1
for t in "$S.blue" "$S.green" "$S.dlq"; do
  ! listed | grep -qx "$t" || fail "$t exists after a start with gate.topics.create=false"
done
say "   exit 4, and none of $S.blue, $S.green, $S.dlq exists"

say "2. gate.topics.create=true: created with the source's 4 partitions"
start_proxy p
wait_for "100 records routed" 60 routed_is 100
for t in "$S.blue" "$S.green"; do
  n=$("$KCAT" -L -b "$B" -t "$t" -J | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["topics"][0]["partitions"]))')
  [ "$n" = 4 ] || fail "$t has $n partitions, not the source's 4"
done
stop_proxy
say "PASS"
