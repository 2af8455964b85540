#!/usr/bin/env bash
# Bad input stops startup with a clear error and a documented exit code.
source "$(dirname "$0")/lib.sh"

S=gp-errors-$RUN_ID
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 10 --partitions-hint 2 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null

expect() { # expect CODE PATTERN COMMAND...
  local code=$1 pat=$2 rc=0; shift 2
  "$@" >"$WORK/out.txt" 2>&1 || rc=$?
  [ "$rc" -eq "$code" ] || { cat "$WORK/out.txt"; fail "exit $rc, expected $code: $*"; }
  grep -q -- "$pat" "$WORK/out.txt" || { cat "$WORK/out.txt"; fail "no '$pat' in the output"; }
  say "exit $code as expected: $(grep -m1 -- "$pat" "$WORK/out.txt")"
}

# A bad line: file:line: key: reason, exit 2.
write_conf bad "$S" gate.delivery=twice
expect 2 "bad.conf:11: gate.delivery: " "$GP_BIN" run -c "$WORK/bad.conf"
# Colour topics missing and not to be created: exit 4, naming the topic.
write_conf nocreate "$S" gate.topics.create=false
expect 4 "colour topic $S.blue does not exist" "$GP_BIN" run -c "$WORK/nocreate.conf"
# The source topic missing: exit 4.
write_conf nosource "gp-absent-$RUN_ID"
expect 4 "source topic gp-absent-$RUN_ID does not exist; create it (kafka-topics.sh --bootstrap-server BROKER --create --topic gp-absent-$RUN_ID" "$GP_BIN" run -c "$WORK/nosource.conf"
# No -c: say that a configuration file is needed; an empty one: every
# missing key at once.
expect 2 "run: needs -c FILE" "$GP_BIN" run
: >"$WORK/empty.conf"
expect 2 "required keys are not set" "$GP_BIN" run -c "$WORK/empty.conf"
grep -q "gate.source.topics=" "$WORK/out.txt" && grep -q "kafka.bootstrap.servers=" "$WORK/out.txt" \
  || { cat "$WORK/out.txt"; fail "the empty file's error does not list every missing key"; }
# A kafka.* value librdkafka refuses, and a reserved key for one client:
# file:line: key: reason.
write_conf acks "$S" kafka.acks=maybe
expect 2 "acks.conf:11: kafka.acks: Invalid value" "$GP_BIN" run -c "$WORK/acks.conf"
write_conf iso "$S" kafka.consumer.isolation.level=read_uncommitted
expect 2 "iso.conf:11: kafka.consumer.isolation.level: set by gate-proxy" \
  "$GP_BIN" run -c "$WORK/iso.conf"
expect 2 "^gate-proxy: -X: kafka.producer.transactional.id: set by gate-proxy" \
  "$GP_BIN" run -c "$WORK/nocreate.conf" -X kafka.producer.transactional.id=x
# Both control backends: both lines named.
write_conf both "$S" control.k8s.configmap=m
expect 2 "both.conf:11: control.k8s.configmap: control.file is set too (.*both.conf:10)" \
  "$GP_BIN" run -c "$WORK/both.conf"

# Brokers out of reach: no exit 4 (that is a missing topic), one clear line
# naming them, and SIGTERM during the wait ends it with 0.
write_conf unreachable "$S" kafka.bootstrap.servers=127.0.0.1:1
"$GP_BIN" run -c "$WORK/unreachable.conf" >"$WORK/unreachable.log" 2>&1 &
PROXY_PID=$!
wait_for "the unreachable brokers named" 30 \
  grep -q "cannot reach the Kafka brokers at 127.0.0.1:1 (kafka.bootstrap.servers)" \
  "$WORK/unreachable.log"
sleep 2
kill -0 "$PROXY_PID" || fail "the proxy exited while the brokers were out of reach"
[ "$(grep -c "cannot reach the Kafka brokers" "$WORK/unreachable.log")" = 1 ] \
  || fail "the unreachable brokers were reported more than once for the same reason"
t0=$(date +%s%3N)
signal_proxy TERM 10 "the proxy waiting for its brokers"
[ "$EXIT_RC" = 0 ] || fail "SIGTERM while waiting for the brokers: exit $EXIT_RC, expected 0"
say "brokers out of reach: one line, still running; SIGTERM: exit 0 after $(( $(date +%s%3N) - t0 )) ms"
grep -q "info  gate-proxy $("$GP_BIN" --version | head -1 | cut -d' ' -f2) (librdkafka " "$WORK/unreachable.log" \
  || fail "no start-up line (version, librdkafka, pipeline, brokers, control, delivery, event time)"
say "PASS"
