#!/usr/bin/env bash
# /metrics with the most source partitions one configuration holds by
# name length: 64 source topics (gate.source.topics takes 64 at most) of
# 200-character names, 4 partitions each, so 256 per-partition lag series
# and a scrape well past 64 KiB. The scrape is whole and passes
# `promtool check metrics`; every source partition has its lag series.
source "$(dirname "$0")/lib.sh"
command -v promtool >/dev/null || fail "promtool is not installed (scripts/install-deps.sh test)"

HP=$(free_port)
H=http://127.0.0.1:$HP
names=()
for n in $(seq -w 0 63); do
  head="gp-mlarge-$RUN_ID-$n-"
  names+=("$head$(printf 'x%.0s' $(seq $((200 - ${#head}))))")
done
[ ${#names[0]} = 200 ] || fail "a topic name of ${#names[0]} characters, not 200"
say "64 source topics of 200 characters, 4 partitions each"
for t in "${names[@]}"; do
  "$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" create "$t" 4 >/dev/null || fail "creating $t"
done
topics=$(IFS=,; echo "${names[*]}")
{
  echo "kafka.bootstrap.servers=$GP_BOOTSTRAP"
  echo "gate.pipeline=it-$RUN_ID"
  echo "gate.source.topics=$topics"
  echo "gate.event-time=json:ts"
  echo "gate.topics.create=true"
  echo "gate.dlq.topic=gp-mlarge-$RUN_ID.dlq"
  echo "control.file=$WORK/cm.json"
  echo "http.listen=127.0.0.1:$HP"
  echo "gate.status.interval.ms=1000"
} >"$WORK/p.conf"
say "the configuration's source line: $(grep -c '' <<<"${topics//,/$'\n'}") topics, ${#topics} bytes"
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
start_proxy p
lags() { [ "$(curl -s "$H/metrics" | grep -c "^gate_proxy_partition_lag_records{")" = 256 ]; }
T0=$(date +%s)
wait_for "256 lag series on /metrics" 120 lags
say "256 lag series after $(( $(date +%s) - T0 )) s"
curl -s -D "$WORK/headers" "$H/metrics" >"$WORK/scrape.txt"
grep -q "^HTTP/1.1 200" "$WORK/headers" || fail "/metrics: $(head -n 1 "$WORK/headers")"
bytes=$(wc -c <"$WORK/scrape.txt")
[ "$bytes" -gt 65536 ] || fail "the scrape is $bytes bytes: not past 64 KiB, so it proves nothing"
[ "$(tail -c 1 "$WORK/scrape.txt" | od -An -c | tr -d ' ')" = '\n' ] || fail "the scrape does not end with a whole line"
promtool check metrics <"$WORK/scrape.txt" >"$WORK/promtool.txt" 2>&1 \
  || { cat "$WORK/promtool.txt"; fail "promtool check metrics failed on $bytes bytes"; }
series=$(grep -c '^gate_proxy_partition_lag_records{' "$WORK/scrape.txt")
for t in "${names[@]}"; do
  for p in 0 1 2 3; do
    grep -q "^gate_proxy_partition_lag_records{topic=\"$t\",partition=\"$p\"} " "$WORK/scrape.txt" \
      || fail "no lag series for $t/$p"
  done
done
grep -q "^process_start_time_seconds " "$WORK/scrape.txt" || fail "the scrape lacks its last families"
stop_proxy
line="fault: name=metrics-large topics=64 name_chars=200 partitions=256 lag_series=$series bytes=$bytes promtool=ok outcome=whole kafka=${KAFKA_VERSION:-$GP_BOOTSTRAP}"
echo "$line"
[ -z "${GP_FAULT_LINES:-}" ] || echo "$line" >>"$GP_FAULT_LINES"
say "PASS"
