#!/usr/bin/env bash
# Every event-time extractor through a cutover on a real broker: four
# pipelines side by side, each with its own colour topics and control file,
# one per gate.event-time:
#   kt    kafka-timestamp            on the JSON topic
#   json  json:ts                    on the JSON topic
#   hdr   header:ets (epoch ms)      on the JSON topic
#   avro  avro:meta.ts, plain Avro   on an Avro topic, schema from a local
#         (gate.avro.schema)         .avsc, values written by avro-c
# gp-produce sets the Kafka timestamp, "ts", the ets header and meta.ts to
# the same event time, so gp-check (reading the Kafka timestamp, an
# independent reader) judges each pipeline's split by its own T. Ten JSON
# records without the header, added after the cutover, go to green in kt
# and json, and to hdr's dead-letter topic as header-missing.
source "$(dirname "$0")/lib.sh"

S=gp-ext-$RUN_ID
SA=gp-ext-avro-$RUN_ID
BASE=1700000000000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 3 --quiet >/dev/null
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$SA" --count 0 --partitions-hint 3 --quiet >/dev/null
"$GP_PRODUCE" --print-schema > "$WORK/order.avsc"

declare -A PID SRC ET
SRC=([kt]=$S [json]=$S [hdr]=$S [avro]=$SA)
ET=([kt]=kafka-timestamp [json]=json:ts [hdr]=header:ets [avro]=avro:meta.ts)
for p in kt json hdr avro; do
  "$GP_BIN" init --control "$WORK/cm-$p.json" >/dev/null
  extra=()
  [ $p = avro ] && extra=("gate.avro.schema=$WORK/order.avsc")
  write_conf $p "${SRC[$p]}" "gate.pipeline=ext-$p-$RUN_ID" "gate.event-time=${ET[$p]}" \
    "gate.topic.blue={topic}.$p.blue" "gate.topic.green={topic}.$p.green" \
    "gate.dlq.topic=${SRC[$p]}.$p.dlq" "control.file=$WORK/cm-$p.json" "${extra[@]}"
  "$GP_BIN" run -c "$WORK/$p.conf" >>"$WORK/proxy-$p.log" 2>&1 &
  PID[$p]=$!
done
ON_EXIT='for p in "${!PID[@]}"; do kill -9 "${PID[$p]}" 2>/dev/null || true; done'

# ckey PIPELINE KEY: a data key of that pipeline's control map
ckey() { WORK_CM="$WORK/cm-$1.json" python3 -c '
import json, os, sys
try: d = json.load(open(os.environ["WORK_CM"])).get("data") or {}
except Exception: d = {}
print(d.get(sys.argv[1], ""))' "$2"; }
routed_p() {
  local n=0 k
  for k in blue green dlq; do v=$(ckey "$1" gate-proxy.count.$k); n=$(( n + ${v:-0} )); done
  [ "$n" -ge "$2" ]
}
alive() {
  local p
  for p in kt json hdr avro; do
    kill -0 "${PID[$p]}" 2>/dev/null || fail "$p: the proxy died: $(tail -n 3 "$WORK/proxy-$p.log")"
  done
}
all_routed() { alive; for p in kt json hdr avro; do routed_p $p "$1" || return 1; done; }
stage_all() { for p in kt json hdr avro; do [ "$(ckey $p stage)" = "$1" ] || return 1; done; }

say "10000 records on each source, all to blue"
produce "$S" 10000 0 --ts-start $BASE --disorder 100 --ts-header ets --headers
produce "$SA" 10000 0 --ts-start $BASE --disorder 100 --format avro
wait_for "10000 records routed by each pipeline" 90 all_routed 10000
for p in kt json hdr avro; do
  [ "$(ckey $p gate-proxy.count.blue)" = 10000 ] || fail "$p: blue=$(ckey $p gate-proxy.count.blue)"
done

say "cutover to green in every pipeline while 10000 more records flow"
produce "$S" 10000 10000 --ts-start $((BASE + 10000)) --disorder 100 --ts-header ets --headers \
  --rate 4000 &
P1=$!
produce "$SA" 10000 10000 --ts-start $((BASE + 10000)) --disorder 100 --format avro --rate 4000 &
P2=$!
for p in kt json hdr avro; do
  "$GP_BIN" cutover --control "$WORK/cm-$p.json" --to green --delay-ms 300 >/dev/null
done
wait "$P1" "$P2"
# 10 JSON records without the ets header: header-missing for hdr alone.
for i in $(seq 0 9); do echo "{\"id\":$((20000 + i)),\"ts\":$((BASE + 20000 + i))}"; done \
  | kcat -P -b "$GP_BOOTSTRAP" -t "$S"
wait_for "CLEAR_TO_TEARDOWN in every pipeline" 90 stage_all CLEAR_TO_TEARDOWN
wait_for "20000 records routed by each pipeline" 60 all_routed 20000
for p in kt json hdr; do wait_for "20010 records routed by $p" 60 routed_p $p 20010; done
for p in kt json hdr avro; do
  kill -TERM "${PID[$p]}"
  wait "${PID[$p]}" || fail "$p: the proxy exited $? after SIGTERM"
done

for p in kt json hdr avro; do
  T=$(ckey $p watermark-toggle-value)
  g=$(ckey $p gate-proxy.count.green) d=$(ckey $p gate-proxy.count.dlq)
  want_d=0 n=20010
  [ $p = hdr ] && want_d=10
  [ $p = avro ] && n=20000
  [ "$d" = $want_d ] || fail "$p: $d records went to the dead-letter topic, expected $want_d"
  [ "$g" -gt 0 ] || fail "$p: nothing went to green"
  src=${SRC[$p]}
  out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$src" --blue "$src.$p.blue" \
        --green "$src.$p.green" --dlq "$src.$p.dlq" --cutoff "$T" --old blue \
        --event-time kafka-timestamp) || fail "$p (${ET[$p]}): checker: $out"
  [[ "$out" == checked=$n\ * ]] || fail "$p: checker: $out"
  if [ $p = hdr ]; then
    kcat -C -b "$GP_BOOTSTRAP" -t "$src.$p.dlq" -e -q -X isolation.level=read_committed \
      -f '%h\n' | grep -c "gate-proxy.error=header-missing: " | grep -qx 10 \
      || fail "hdr: expected 10 header-missing reasons"
  fi
  say "$p (${ET[$p]}): T=$T green=$g; checker: $out"
done
say "PASS"
