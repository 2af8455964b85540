# bench/scaleout.sh: the scale-out step of bench/run.sh (bench/run.sh BUILD
# scale), sourced by it (its broker, data sets, WORK, PIDS and record()).
# gate-proxy with gate.membership=group, exactly-once, steady on blue:
#
# 1. Throughput and CPU by instance count (1 2 3 by default): a 12-partition
#    data set of BENCH_SCALE_RECORDS 100-byte records (2,000,000), read
#    from the start by K instances of one pipeline started together, timed
#    by gp-benchwait on the group's committed offsets from its first commit
#    to the one that covers the last record, CPU summed over the K
#    processes over that span (cpu_s), and over their whole life up to
#    that point, start-up and group joins included (cpu_total_s).
# 2. The pause of a scale event: BENCH_SCALE_RATE records/s (6,000) fed
#    round-robin into a fresh 12-partition topic, 2 instances running; a
#    third starts (join) 10 s into the feed, the first is stopped by SIGTERM
#    (leave) 24 s into it. The blue topic, created with LogAppendTime, gives
#    per partition when the proxy delivered each record; bench/scaleout.py
#    takes the longest gap per partition around each event, for the
#    partitions that moved and the others.
# 3. The agreement's cost: a hand-over blue -> green at BENCH_SCALE_RATE
#    records/s on a fresh 12-partition topic, with one process that assigns
#    every partition (gate.membership=assign, T chosen alone) and with 1,
#    3 and 6 members of a group (T agreed from every partition's committed
#    promise): the time from the cutover written into the control file to
#    T there (agree_ms), and from T to CLEAR_TO_TEARDOWN (close_ms).
#
# Environment: BENCH_SCALE_INSTANCES [1 2 3], BENCH_SCALE_RECORDS [2000000],
# BENCH_SCALE_ROUNDS [3], BENCH_SCALE_RATE [6000], BENCH_SCALE_PAUSE [1]
# (0: throughput only), BENCH_SCALE_AGREE [assign 1 3 6] ("": none).
SC_INSTANCES=${BENCH_SCALE_INSTANCES-1 2 3}
SC_RECORDS=${BENCH_SCALE_RECORDS:-2000000}
SC_ROUNDS=${BENCH_SCALE_ROUNDS:-3}
SC_RATE=${BENCH_SCALE_RATE:-6000}
SC_PAUSE=${BENCH_SCALE_PAUSE:-1}
SC_AGREE=${BENCH_SCALE_AGREE-assign 1 3 6}
SC_PARTS=12

# member_conf PIPELINE INSTANCE SRC [key=value...]: $WORK/PIPELINE-INSTANCE.conf,
# one control map per pipeline (shared by its members)
member_conf() {
  local pipe=$1 inst=$2 src=$3; shift 3
  cat > "$WORK/$pipe-$inst.conf" <<EOF
kafka.bootstrap.servers=$B
gate.pipeline=$pipe
gate.membership=group
gate.instance=$inst
gate.source.topics=$src
gate.event-time=json:ts
gate.topics.create=true
gate.topic.blue={topic}.$pipe.blue
gate.topic.green={topic}.$pipe.green
gate.dlq.topic=$pipe.dlq
gate.delivery=exactly-once
gate.commit.records=1000000
control.file=$WORK/$pipe.json
log.level=warn
EOF
  printf '%s\n' "$@" >> "$WORK/$pipe-$inst.conf"
  [ -e "$WORK/$pipe.json" ] || "$BIN" init --control "$WORK/$pipe.json" >/dev/null
}

# pid_cpu PID: user + system CPU seconds of PID so far
pid_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); split($0, f, " ");
    printf "%.2f\n", (f[12] + f[13]) / hz }' "/proc/$1/stat"
}

# stop_member PID NAME: SIGTERM, exit code 0 expected
stop_member() {
  kill -TERM "$1" 2>/dev/null || true
  local rc=0
  wait "$1" || rc=$?
  [ $rc -eq 0 ] || {
    say "scale-out: $2 exited $rc after SIGTERM (expected 0); the logs: $OUT/logs-$RUN"
    mkdir -p "$OUT/logs-$RUN"; cp "$WORK"/*.log "$OUT/logs-$RUN/"
    return 1
  }
}

# scale_run K ROUND: figures of K members reading the data set
scale_run() {
  local k=$1 pipe="g$RUN-k$1-r$2" src=$SC_SRC pids=() i
  for i in $(seq 1 "$k"); do member_conf "$pipe" "i$i" "$src"; done
  for i in $(seq 1 "$k"); do
    "$BIN" run -c "$WORK/$pipe-i$i.conf" 2>>"$WORK/$pipe-i$i.log" &
    pids+=($!)
    PIDS+=($!)
  done
  local res args=()
  for i in "${pids[@]}"; do args+=(--pid "$i"); done
  res=$("$WAIT" --bootstrap "$B" --group "gate-proxy-$pipe" --topic "$src" "${args[@]}" \
        --timeout-s 900 2>>"$WORK/wait.log") \
    || { say "scale-out: $k instances did not finish"; tail -3 "$WORK/wait.log" >&2; return 1; }
  local total=0 c
  for i in "${pids[@]}"; do
    c=$(pid_cpu "$i")
    total=$(echo "$total + $c" | bc | xargs printf '%.2f')
  done
  for i in $(seq 1 "$k"); do stop_member "${pids[$((i - 1))]}" "$pipe-i$i" || return 1; done
  local n
  n=$(sed -n 's/.*records=\([0-9]*\).*/\1/p' <<<"$res")
  echo "instances=$k $res cpu_total_s=$total cpu_total_s_per_m=$(echo "scale=4; $total * 1000000 / $SC_RECORDS" | bc | xargs printf '%.2f')"
}

# assigned_after LOG OFFSET: the partitions the member's log says it was
# assigned after byte OFFSET (log.level=debug: "assigning S/P at offset")
assigned_after() {
  tail -c +"$(( $2 + 1 ))" "$1" | sed -n 's/.*assigning [^ ]*\/\([0-9]*\) at offset.*/\1/p' \
    | sort -n | uniq | paste -sd, -
}
logsize() { stat -c %s "$1" 2>/dev/null || echo 0; }
now_ms() { date +%s%3N; }

# scale_pause ROUND: join and leave while records flow
scale_pause() {
  local pipe="p$RUN-r$1" src="scalep-$RUN-r$1" c
  "$ADMIN" --bootstrap "$B" create "$src" $SC_PARTS >/dev/null
  for c in blue green; do
    "$ADMIN" --bootstrap "$B" --config message.timestamp.type=LogAppendTime \
      create "$src.$pipe.$c" $SC_PARTS >/dev/null
  done
  local i pid=()
  # log.level=debug for the partitions each member is assigned; session and
  # transaction timeouts as in the integration tests (a SIGTERM leaves the
  # group at once either way). The members' logs are kept in $OUT/logs-RUN.
  for i in 1 2 3; do
    member_conf "$pipe" "i$i" "$src" log.level=debug kafka.session.timeout.ms=6000 \
      kafka.transaction.timeout.ms=5000
  done
  for i in 1 2; do
    "$BIN" run -c "$WORK/$pipe-i$i.conf" 2>>"$WORK/$pipe-i$i.log" &
    pid[$i]=$!
    PIDS+=($!)
  done
  sleep 8 # both members in the group, 6 partitions each
  for i in 1 2; do
    kill -0 "${pid[$i]}" 2>/dev/null || { stop_member "${pid[$i]}" "$pipe-i$i"; return 1; }
  done
  local secs=36 feed0 join leave off1 off2 off3
  "$PRODUCE" --bootstrap "$B" --topic "$src" --count $(( SC_RATE * secs )) --rate "$SC_RATE" \
    --pad-bytes 55 --partition-rr --quiet >/dev/null &
  local feeder=$!
  PIDS+=($feeder)
  feed0=$(now_ms)
  sleep 10
  off1=$(logsize "$WORK/$pipe-i1.log") off2=$(logsize "$WORK/$pipe-i2.log")
  join=$(now_ms)
  "$BIN" run -c "$WORK/$pipe-i3.conf" 2>>"$WORK/$pipe-i3.log" &
  pid[3]=$!
  PIDS+=($!)
  sleep 14
  local moved_join
  moved_join=$(assigned_after "$WORK/$pipe-i3.log" 0)
  off2=$(logsize "$WORK/$pipe-i2.log") off3=$(logsize "$WORK/$pipe-i3.log")
  leave=$(now_ms)
  stop_member "${pid[1]}" "$pipe-i1" || return 1
  wait "$feeder"
  local end=$(( $(date +%s) + 120 ))
  until [ "$("$ADMIN" --bootstrap "$B" lag "gate-proxy-$pipe" "$src" 2>/dev/null)" = 0 ]; do
    [ "$(date +%s)" -lt "$end" ] || { say "scale-out: the pause run did not catch up in 120 s"; return 1; }
    sleep 0.5
  done
  local moved_leave
  moved_leave=$( { assigned_after "$WORK/$pipe-i2.log" "$off2"; echo ,;
                   assigned_after "$WORK/$pipe-i3.log" "$off3"; } | paste -sd, - )
  stop_member "${pid[2]}" "$pipe-i2" || return 1
  stop_member "${pid[3]}" "$pipe-i3" || return 1
  mkdir -p "$OUT/logs-$RUN"; cp "$WORK/$pipe"-i*.log "$OUT/logs-$RUN/"
  python3 "$top/bench/scaleout.py" gaps "$B" "$src" "$src.$pipe.blue" "$feed0" "$join" \
    "$leave" "$moved_join" "$moved_leave"
}

# map_has FILE KEY VALUE-PATTERN: the control file's KEY matches
map_has() { grep -Eq "\"$2\":[[:space:]]*\"$3\"" "$1"; }

# scale_agree K ROUND: the cost of agreeing on T with K members (assign: one
# process without a group)
scale_agree() {
  local k=$1 pipe="a$RUN-$1-r$2" src="scalea-$RUN-$1-r$2" n=$1 extra=() i
  "$ADMIN" --bootstrap "$B" create "$src" $SC_PARTS >/dev/null
  if [ "$k" = assign ]; then
    n=1
    extra=(gate.membership=assign)
  fi
  for i in $(seq 1 "$n"); do
    member_conf "$pipe" "i$i" "$src" kafka.session.timeout.ms=6000 \
      kafka.transaction.timeout.ms=5000 gate.commit.interval.ms=100 "${extra[@]}"
  done
  local pid=()
  for i in $(seq 1 "$n"); do
    "$BIN" run -c "$WORK/$pipe-i$i.conf" 2>>"$WORK/$pipe-i$i.log" &
    pid[$i]=$!
    PIDS+=($!)
  done
  local secs=30 map="$WORK/$pipe.json"
  "$PRODUCE" --bootstrap "$B" --topic "$src" --count $(( SC_RATE * secs )) --rate "$SC_RATE" \
    --pad-bytes 55 --partition-rr --quiet >/dev/null &
  local feeder=$!
  PIDS+=($feeder)
  sleep 12 # every member in the group with its partitions, records flowing
  local t0 t1 t2 end
  t0=$(now_ms)
  "$BIN" cutover --control "$map" --to green >/dev/null 2>&1
  end=$(( $(date +%s) + 60 ))
  until map_has "$map" watermark-toggle-value "[0-9]+"; do
    [ "$(date +%s)" -lt "$end" ] || { say "scale-out: no T within 60 s ($k)"; return 1; }
    sleep 0.01
  done
  t1=$(now_ms)
  end=$(( $(date +%s) + 120 ))
  until map_has "$map" stage CLEAR_TO_TEARDOWN; do
    [ "$(date +%s)" -lt "$end" ] || { say "scale-out: no CLEAR_TO_TEARDOWN within 120 s ($k)"; return 1; }
    sleep 0.01
  done
  t2=$(now_ms)
  wait "$feeder"
  for i in $(seq 1 "$n"); do stop_member "${pid[$i]}" "$pipe-i$i" || return 1; done
  echo "instances=$k agree_ms=$(( t1 - t0 )) close_ms=$(( t2 - t1 ))"
}

say "scale-out: librdkafka $(pkg-config --modversion rdkafka 2>/dev/null || echo '?'), broker $B"
SC_SRC=$(dataset 100 $SC_PARTS "$SC_RECORDS")
for round in $(seq 1 "$SC_ROUNDS"); do
  for k in $SC_INSTANCES; do
    say "scale-out round $round: $k instance(s) on $SC_SRC"
    res=$(scale_run "$k" "$round")
    record scaleout "round=$round" "$res"
  done
done
if [ "$SC_PAUSE" = 1 ]; then
  for round in $(seq 1 "$SC_ROUNDS"); do
    say "scale-out pause round $round: $SC_RATE records/s, 2 instances, a join, a leave"
    res=$(scale_pause "$round")
    record scalepause "round=$round" "$res"
  done
fi
for round in $(seq 1 "$SC_ROUNDS"); do
  for k in $SC_AGREE; do
    say "scale-out agreement round $round: $k ($SC_RATE records/s, a cutover)"
    res=$(scale_agree "$k" "$round")
    record scaleagree "round=$round" "$res"
  done
done
python3 "$top/bench/scaleout.py" summary "$RESULTS" | tee "$OUT/summary-$RUN.txt"
ln -sf "results-$RUN.txt" "$OUT/results-latest.txt"
ln -sf "summary-$RUN.txt" "$OUT/summary-latest.txt"
