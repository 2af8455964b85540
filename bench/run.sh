#!/usr/bin/env bash
# make bench: gate-proxy side by side with the librdkafka limit, the Kafka
# Streams peer and a kcat pipe, on one real broker (tests/kafka/broker.sh),
# on the same data, in one run, alternating.
#
#   bench/run.sh BUILD_DIR           (make bench builds BUILD_DIR=build/bench)
#   bench/run.sh BUILD_DIR scale     only the scale-out step: gate-proxy with
#                                    gate.membership=group, 1 to 3 instances,
#                                    and the pause of a join and a leave
#                                    (bench/scaleout.sh says how)
#   bench/run.sh BUILD_DIR long      only the long run (BENCH_LONG_MINUTES,
#                                    10 when unset or 0)
#
# Environment (defaults in brackets):
#   BENCH_RECORDS     records of the 100-byte data set [2000000]; the 1 KB set
#                     has a fifth as many, the 10 KB set a fiftieth
#   BENCH_SIZES       value sizes in bytes [100 1000]
#   BENCH_PARTITIONS  partitions of the data sets [12]
#   BENCH_REPEATS     repeats of the contenders per size, interleaved: every
#                     contender once in the order of BENCH_CONTENDERS, then
#                     again, on the same data; the summary gives the median
#                     of the repeats and their spread [5] (BENCH_ROUNDS, the
#                     older name, is read when BENCH_REPEATS is unset)
#   BENCH_CONTENDERS  which, in this order, of proxy_eos limit streams_eos
#                     proxy_eos_metrics proxy_alo kcat [all]; proxy_eos_metrics
#                     is proxy_eos with http.listen and a Prometheus (Debian's)
#                     scraping /metrics every second
#   BENCH_SCALING     1: also throughput by partitions (1 4 12 48) and by
#                     size (100, 1000, 10000), and memory by record count [1]
#   BENCH_LATENCY_RATE  records/s of the latency runs and the long run [20000]
#   BENCH_LONG_MINUTES  minutes of the long run [0: no long run]: gate-proxy,
#                     exactly-once, fed at BENCH_LATENCY_RATE for that long,
#                     its RSS sampled every second (min/max, first and last
#                     minute) and the latency of every record, each beside
#                     its goal (RSS <= 30 MB; p99 <= the commit interval
#                     + 5 ms); a `bench-long:` line in the summary
#   BENCH_BASE_BIN    another gate-proxy binary (a build of an earlier commit):
#                     the contenders proxy_eos_base and proxy_alo_base run it,
#                     each round beside this build's, and the summary prints
#                     this build's rate over the base's per round, with the
#                     spread of each build's own rounds (an A/B check:
#                     BENCH_CONTENDERS="proxy_eos proxy_eos_base proxy_alo
#                     proxy_alo_base" BENCH_SCALING=0)
#   BENCH_BASE_PASS   the passthrough of that base build: the contender
#                     limit_base runs it (for example both built against
#                     another librdkafka: bench/librdkafka-ab.sh)
#   BENCH_OUT         where the figures go [bench/results]
#   GP_KAFKA_PORT, KAFKA_VERSION  as for tests/kafka/broker.sh
#
# The data sets are generated once (topics bench-<size>b-<parts>p-<records>)
# and reused by later runs on the same broker. Every contender reads a whole
# data set from the start into topics of its own, and is timed by
# gp-benchwait from its first commit to the commit that covers the last
# record (start-up left out), with its CPU time and peak RSS over that span.
# Every contender commits every 100 ms (COMMIT_MS) and only then (gate-proxy with
# gate.commit.records=1000000 and the passthrough alike, so no record count
# ends a transaction early), as Kafka Streams does with
# commit.interval.ms=100.
# Latency runs feed a fresh topic at BENCH_LATENCY_RATE while the contender
# runs, the topics stamped by the broker (LogAppendTime), and take the time
# from a record's append to the source to its append to a colour topic.
set -euo pipefail
build=$(cd "${1:?usage: bench/run.sh BUILD_DIR [scale|long]}" && pwd)
MODE=${2:-all}
case $MODE in all|scale|long) ;; *) echo "usage: bench/run.sh BUILD_DIR [scale|long]" >&2; exit 2 ;; esac
top=$(cd "$(dirname "$0")/.." && pwd)
broker=$top/tests/kafka/broker.sh
RECORDS=${BENCH_RECORDS:-2000000}
SIZES=${BENCH_SIZES:-100 1000}
PARTS=${BENCH_PARTITIONS:-12}
ROUNDS=${BENCH_REPEATS:-${BENCH_ROUNDS:-5}}
LONG=${BENCH_LONG_MINUTES:-0}
[ "$MODE" != long ] || [ "$LONG" != 0 ] || LONG=10
case $ROUNDS$LONG in *[!0-9]*) echo "bench: BENCH_REPEATS and BENCH_LONG_MINUTES are whole numbers" >&2; exit 2 ;; esac
[ "$ROUNDS" -ge 1 ] || { echo "bench: BENCH_REPEATS must be at least 1" >&2; exit 2; }
# the commit interval of every exactly-once contender (gate.commit.interval.ms,
# the passthrough's and Kafka Streams' --commit-interval-ms)
COMMIT_MS=100
SCALING=${BENCH_SCALING:-1}
LRATE=${BENCH_LATENCY_RATE:-20000}
CONTENDERS=${BENCH_CONTENDERS:-proxy_eos limit streams_eos proxy_eos_metrics proxy_alo kcat}
OUT=${BENCH_OUT:-$top/bench/results}
BASE=1700000000000
BIN=$build/gate-proxy PRODUCE=$build/tests/tools/gp-produce ADMIN=$build/tests/tools/gp-admin
PASS=$build/bench/gp-passthrough WAIT=$build/bench/gp-benchwait
for b in "$BIN" "$PRODUCE" "$ADMIN" "$PASS" "$WAIT"; do
  [ -x "$b" ] || { echo "bench: $b is missing: build $build first (make bench)" >&2; exit 2; }
done
command -v kcat >/dev/null || { echo "bench: kcat is missing (apt-get install kcat)" >&2; exit 2; }
mkdir -p "$OUT"
RUN=$(date +%s)
WORK=$(mktemp -d /tmp/gp-bench.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  [ -n "${STARTED_BROKER:-}" ] && "$broker" stop >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
say() { printf '[%s] bench: %s\n' "$(date +%T)" "$*" >&2; }

if ! "$broker" status >/dev/null 2>&1; then
  "$broker" start >&2
  STARTED_BROKER=1
fi
B=$("$broker" bootstrap)
if [ "$MODE" = all ]; then
  say "broker $B; building the Kafka Streams peer"
  "$top/bench/streams.sh" build >&2
fi
CPUS=$(nproc)
say "machine: $(lscpu | sed -n 's/^Model name: *//p'), $CPUS cores, $(free -g | awk '/Mem:/{print $2}') GiB"

# dataset SIZE PARTS COUNT: the topic, generated once
dataset() {
  local size=$1 parts=$2 n=$3 t="bench-${1}b-${2}p-${3}"
  local have
  have=$(total "$t")
  if [ "$have" != "$n" ]; then
    [ "$have" = 0 ] || { say "topic $t holds $have records, expected $n: delete it"; exit 1; }
    say "generating $t: $n records of ${size} bytes over $parts partitions (once)"
    "$ADMIN" --bootstrap "$B" create "$t" "$parts" >/dev/null
    # pad: the JSON around it is about 45 bytes
    local pad=$(( size > 60 ? size - 45 : 16 ))
    "$PRODUCE" --bootstrap "$B" --topic "$t" --count "$n" --ts-start $BASE --ts-step 1 \
      --pad-bytes $pad --partition-rr --quiet -X linger.ms=20 -X batch.size=1000000 >/dev/null
  fi
  echo "$t"
}

# timed NAME GROUP SRC PID: waits for PID's commits to cover SRC; prints the figures
timed() {
  local res
  res=$("$WAIT" --bootstrap "$B" --group "$2" --topic "$3" --pid "$4" --timeout-s 900 \
        2>>"$WORK/wait.log") || { say "$1: did not finish"; tail -3 "$WORK/wait.log" >&2; return 1; }
  echo "$res"
}

proxy_conf() { # NAME SRC DELIVERY [HTTP_PORT]
  cat > "$WORK/$1.conf" <<EOF
kafka.bootstrap.servers=$B
gate.pipeline=$1
gate.source.topics=$2
gate.event-time=json:ts
gate.topics.create=true
gate.topic.blue={topic}.$1.blue
gate.topic.green={topic}.$1.green
gate.dlq.topic=$1.dlq
gate.delivery=$3
gate.commit.records=1000000
gate.commit.interval.ms=$COMMIT_MS
control.file=$WORK/$1.json
log.level=warn
EOF
  [ -z "${4:-}" ] || echo "http.listen=127.0.0.1:$4" >> "$WORK/$1.conf"
  "$BIN" init --control "$WORK/$1.json" >/dev/null
}

# scraper PORT NAME: a Prometheus scraping 127.0.0.1:PORT/metrics every
# second, in the background (its pid in PIDS and SCRAPER)
scraper() {
  command -v prometheus >/dev/null \
    || { say "prometheus is missing (apt-get install prometheus)"; return 1; }
  local pp
  pp=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  printf 'global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: bench\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' \
    "$1" > "$WORK/$2.prom.yml"
  prometheus --config.file="$WORK/$2.prom.yml" --storage.tsdb.path="$WORK/$2.tsdb" \
    --web.listen-address="127.0.0.1:$pp" >"$WORK/$2.prom.log" 2>&1 &
  SCRAPER=$!
  SCRAPER_URL=http://127.0.0.1:$pp
  PIDS+=($SCRAPER)
  # ready before the proxy starts, so it scrapes from the proxy's first second
  local i
  for i in $(seq 1 100); do
    curl -sf "$SCRAPER_URL/-/ready" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  say "prometheus did not become ready (see $WORK/$2.prom.log)"
  return 1
}

# run_proxy NAME SRC DELIVERY CUTOVER(0|1) [METRICS(0|1)]: figures on stdout
run_proxy() {
  local name=$1 src=$2 port=""
  SCRAPER=""
  if [ "${5:-0}" = 1 ]; then
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    scraper "$port" "$name" || return 1
  fi
  proxy_conf "$name" "$src" "$3" $port
  if [ "$4" = 1 ]; then
    # A cutover half-way: T at the middle of the data's event times (record
    # i has event time BASE + i), asked for before the start, so the proxy
    # routes the first half to blue, splits, closes, and routes the rest to
    # green (the Kafka Streams peer splits at the same T).
    "$BIN" cutover --control "$WORK/$name.json" --to green \
      --at $(( BASE + $(total "$src") / 2 )) >/dev/null
  fi
  "${PROXY_BIN:-$BIN}" run -c "$WORK/$name.conf" 2>>"$WORK/$name.log" &
  local pid=$!
  PIDS+=($pid)
  local res
  res=$(timed "$name" "gate-proxy-$name" "$src" $pid) || return 1
  if [ -n "$SCRAPER" ]; then
    # the successful scrapes of this run, as Prometheus counts them
    local scrapes
    scrapes=$(curl -s --get "$SCRAPER_URL/api/v1/query" \
      --data-urlencode 'query=sum_over_time(up{job="bench"}[15m])' \
      | python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)')
    res="$res scrapes=$scrapes"
    kill "$SCRAPER" 2>/dev/null; wait "$SCRAPER" 2>/dev/null || true
  fi
  kill -TERM $pid; wait $pid || true
  if [ "$4" = 1 ]; then
    local g st
    g=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"].get("gate-proxy.count.green","0"))' "$WORK/$name.json")
    st=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"].get("stage",""))' "$WORK/$name.json")
    [ "$g" -gt 0 ] || { say "$name: the cutover did not happen"; return 1; }
    res="$res green=$g stage=$st"
  fi
  echo "$res"
}

run_passthrough() { # NAME SRC [PASSTHROUGH]
  local parts pass=${3:-$PASS}
  parts=$("$ADMIN" --bootstrap "$B" partitions "$2")
  "$ADMIN" --bootstrap "$B" create "$2.$1.out" "$parts" >/dev/null
  "$pass" --bootstrap "$B" --source "$2" --dest "$2.$1.out" --group "$1" \
    --commit-records 1000000 --commit-interval-ms $COMMIT_MS 2>>"$WORK/$1.log" &
  local pid=$!
  PIDS+=($pid)
  local res
  res=$(timed "$1" "$1" "$2" $pid) || return 1
  kill -TERM $pid; wait $pid || true
  echo "$res"
}

run_streams() { # NAME SRC
  local parts
  parts=$("$ADMIN" --bootstrap "$B" partitions "$2")
  for c in blue green; do "$ADMIN" --bootstrap "$B" create "$2.$1.$c" "$parts" >/dev/null; done
  "$top/bench/streams.sh" run --bootstrap "$B" --source "$2" --blue "$2.$1.blue" \
    --green "$2.$1.green" --dlq "$1.dlq" --cutoff $(( BASE + $(total "$2") / 2 )) \
    --application-id "$1" --commit-interval-ms $COMMIT_MS --quiet >>"$WORK/$1.out" 2>>"$WORK/$1.log" &
  local pid=$!
  PIDS+=($pid)
  local res
  res=$(timed "$1" "$1" "$2" $pid) || return 1
  kill -TERM $pid; wait $pid || true
  echo "$res"
}

# kcat: consume to the end and pipe into a producer, at-least-once; timed
# as a whole (start-up included), CPU and RSS of both ends.
run_kcat() { # NAME SRC
  local parts n
  parts=$("$ADMIN" --bootstrap "$B" partitions "$2")
  n=$(total "$2")
  "$ADMIN" --bootstrap "$B" create "$2.$1.out" "$parts" >/dev/null
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f '%U %S %M' -o "$WORK/kc.c" kcat -C -b "$B" -t "$2" -o beginning -e -q \
      -f '%s\n' -X fetch.wait.max.ms=10 \
    | /usr/bin/time -f '%U %S %M' -o "$WORK/kc.p" kcat -P -b "$B" -t "$2.$1.out" \
      -X linger.ms=5 -X enable.idempotence=true
  t1=$(date +%s.%N)
  python3 - "$n" "$t0" "$t1" "$WORK/kc.c" "$WORK/kc.p" <<'PY'
import sys
n, t0, t1 = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
cpu, rss = 0.0, 0
for f in sys.argv[4:6]:
    u, s, m = open(f).read().split()[-3:]
    cpu += float(u) + float(s); rss = max(rss, int(m))
secs = t1 - t0
print("records=%d seconds=%.3f rate=%.0f cpu_s=%.2f cpu_s_per_m=%.2f rss_mb=%.1f"
      % (n, secs, n / secs, cpu, cpu * 1e6 / n, rss / 1024))
PY
}

total() { "$WAIT" --bootstrap "$B" --topic "$1" --end 2>/dev/null || echo 0; }

RESULTS=$OUT/results-$RUN.txt
: > "$RESULTS"
record() { # TABLE LABEL FIGURES
  echo "$1 $2 $3" >> "$RESULTS"
  say "$1 $2: $3"
}

# ---- scale-out (bench/run.sh BUILD_DIR scale) ------------------------------
if [ "$MODE" = scale ]; then
  source "$top/bench/scaleout.sh"
  exit 0
fi

# ---- the long run ----------------------------------------------------------
# long_run MINUTES: gate-proxy, exactly-once, on a fresh topic stamped by the
# broker, fed at LRATE for MINUTES; its RSS (VmRSS) sampled every second of
# the feed, then the latency of every record as in the latency step below.
long_run() {
  local mins=$1 name="g$RUN-long" src="long-$RUN" parts=$PARTS outs=() col
  "$ADMIN" --bootstrap "$B" --config message.timestamp.type=LogAppendTime create "$src" $parts >/dev/null
  for col in blue green; do
    "$ADMIN" --bootstrap "$B" --config message.timestamp.type=LogAppendTime \
      create "$src.$name.$col" $parts >/dev/null
    outs+=("$src.$name.$col")
  done
  proxy_conf "$name" "$src" exactly-once
  "$BIN" run -c "$WORK/$name.conf" 2>>"$WORK/$name.log" &
  local pid=$!
  PIDS+=($pid)
  sleep 3 # start-up: the group join and the first assignment
  kill -0 $pid 2>/dev/null || { say "long run: gate-proxy exited (see $WORK/$name.log)"; return 1; }
  ( while [ -r "/proc/$pid/status" ]; do
      awk -v t="$(date +%s)" '/^VmRSS:/ { print t, $2 }' "/proc/$pid/status"
      sleep 1
    done ) > "$WORK/$name.rss" 2>/dev/null &
  local sampler=$!
  PIDS+=($sampler)
  "$PRODUCE" --bootstrap "$B" --topic "$src" --count $(( LRATE * 60 * mins )) --rate "$LRATE" \
    --pad-bytes 55 --partition-rr --quiet >/dev/null
  sleep 3
  kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
  kill -0 $pid 2>/dev/null || { say "long run: gate-proxy exited during the feed (see $WORK/$name.log)"; return 1; }
  kill -TERM $pid; wait $pid || true
  local lat
  lat=$(python3 "$top/bench/latency.py" "$B" "$src" "${outs[@]}")
  python3 - "$WORK/$name.rss" "$mins" "$LRATE" "$COMMIT_MS" "$lat" <<'PY'
import sys
samples = [(int(t), int(kb) / 1024) for t, kb in (l.split() for l in open(sys.argv[1]) if l.strip())]
mins, rate, commit_ms, lat = sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
if not samples:
    print("minutes=%s rate=%s commit_ms=%s rss_samples=0 %s" % (mins, rate, commit_ms, lat))
    sys.exit(0)
t0, t1 = samples[0][0], samples[-1][0]
mb = [m for _, m in samples]
first = [m for t, m in samples if t - t0 < 60] or mb
last = [m for t, m in samples if t1 - t < 60] or mb
print("minutes=%s rate=%s commit_ms=%s rss_samples=%d rss_min_mb=%.1f rss_max_mb=%.1f "
      "rss_first_minute_max_mb=%.1f rss_last_minute_max_mb=%.1f %s"
      % (mins, rate, commit_ms, len(mb), min(mb), max(mb), max(first), max(last), lat))
PY
}
if [ "$MODE" = long ]; then
  say "long run: gate-proxy at $LRATE records/s for $LONG min"
  res=$(long_run "$LONG")
  record long proxy_eos "$res"
  python3 "$top/bench/summary.py" "$RESULTS" | tee "$OUT/summary-$RUN.txt"
  ln -sf "results-$RUN.txt" "$OUT/results-latest.txt"
  ln -sf "summary-$RUN.txt" "$OUT/summary-latest.txt"
  exit 0
fi

# ---- the main comparison -------------------------------------------------
for size in $SIZES; do
  n=$RECORDS
  [ "$size" -ge 1000 ] && n=$(( RECORDS / 5 ))
  [ "$size" -ge 10000 ] && n=$(( RECORDS / 50 ))
  src=$(dataset "$size" "$PARTS" "$n")
  for round in $(seq 1 "$ROUNDS"); do
    for c in $CONTENDERS; do
      name="b$RUN-$size-$round-$c"
      say "size $size round $round: $c on $src"
      case $c in
        proxy_eos)   res=$(run_proxy "$name" "$src" exactly-once 1) ;;
        proxy_eos_metrics) res=$(run_proxy "$name" "$src" exactly-once 1 1) ;;
        proxy_alo)   res=$(run_proxy "$name" "$src" at-least-once 0) ;;
        proxy_eos_base) res=$(PROXY_BIN=${BENCH_BASE_BIN:?proxy_eos_base needs BENCH_BASE_BIN} \
                               run_proxy "$name" "$src" exactly-once 1) ;;
        proxy_alo_base) res=$(PROXY_BIN=${BENCH_BASE_BIN:?proxy_alo_base needs BENCH_BASE_BIN} \
                               run_proxy "$name" "$src" at-least-once 0) ;;
        limit)       res=$(run_passthrough "$name" "$src") ;;
        limit_base)  res=$(run_passthrough "$name" "$src" \
                             "${BENCH_BASE_PASS:?limit_base needs BENCH_BASE_PASS}") ;;
        streams_eos) res=$(run_streams "$name" "$src") ;;
        kcat)        res=$(run_kcat "$name" "$src") ;;
      esac
      record main "$c size=$size round=$round" "$res"
    done
  done
done

# ---- latency -------------------------------------------------------------
latency() { # CONTENDER: p50 p99 in ms of source append -> colour append
  local c=$1 name="l$RUN-$1" src="lat-$RUN-$1" parts=$PARTS
  "$ADMIN" --bootstrap "$B" --config message.timestamp.type=LogAppendTime create "$src" $parts >/dev/null
  local outs=()
  case $c in
    proxy_eos)
      for col in blue green; do
        "$ADMIN" --bootstrap "$B" --config message.timestamp.type=LogAppendTime \
          create "$src.$name.$col" $parts >/dev/null
        outs+=("$src.$name.$col")
      done
      proxy_conf "$name" "$src" exactly-once
      "$BIN" run -c "$WORK/$name.conf" 2>>"$WORK/$name.log" & ;;
    limit)
      "$ADMIN" --bootstrap "$B" --config message.timestamp.type=LogAppendTime \
        create "$src.$name.out" $parts >/dev/null
      outs+=("$src.$name.out")
      "$PASS" --bootstrap "$B" --source "$src" --dest "$src.$name.out" --group "$name" \
        --commit-records 1000000 --commit-interval-ms $COMMIT_MS 2>>"$WORK/$name.log" & ;;
    streams_eos)
      for col in blue green; do
        "$ADMIN" --bootstrap "$B" --config message.timestamp.type=LogAppendTime \
          create "$src.$name.$col" $parts >/dev/null
        outs+=("$src.$name.$col")
      done
      "$top/bench/streams.sh" run --bootstrap "$B" --source "$src" --blue "$src.$name.blue" \
        --green "$src.$name.green" --dlq "$name.dlq" --cutoff 0 --application-id "$name" \
        --commit-interval-ms $COMMIT_MS --quiet >>"$WORK/$name.out" 2>>"$WORK/$name.log" & ;;
  esac
  local pid=$!
  PIDS+=($pid)
  sleep 8 # start-up (the JVM's included) before the feed
  "$PRODUCE" --bootstrap "$B" --topic "$src" --count $(( LRATE * 15 )) --rate "$LRATE" \
    --pad-bytes 55 --partition-rr --quiet >/dev/null
  sleep 3
  kill -TERM $pid; wait $pid || true
  python3 "$top/bench/latency.py" "$B" "$src" "${outs[@]}"
}
for c in proxy_eos limit streams_eos; do
  case " $CONTENDERS " in *" $c "*) ;; *) continue ;; esac
  say "latency: $c at $LRATE records/s"
  res=$(latency $c)
  record latency "$c" "$res"
done

if [ "$LONG" != 0 ]; then
  say "long run: gate-proxy at $LRATE records/s for $LONG min"
  res=$(long_run "$LONG")
  record long proxy_eos "$res"
fi

# ---- scaling -------------------------------------------------------------
if [ "$SCALING" = 1 ]; then
  for p in 1 4 12 48; do
    n=$(( RECORDS / 2 ))
    src=$(dataset 100 $p $n)
    for c in proxy_eos limit; do
      name="s$RUN-p$p-$c"
      say "scaling: $p partitions, $c"
      case $c in
        proxy_eos) res=$(run_proxy "$name" "$src" exactly-once 1) ;;
        limit) res=$(run_passthrough "$name" "$src") ;;
      esac
      record partitions "$c partitions=$p" "$res"
    done
  done
  for size in 100 1000 10000; do
    n=$RECORDS
    [ "$size" -ge 1000 ] && n=$(( RECORDS / 5 ))
    [ "$size" -ge 10000 ] && n=$(( RECORDS / 50 ))
    src=$(dataset "$size" "$PARTS" "$n")
    for c in proxy_eos limit; do
      name="z$RUN-$size-$c"
      say "scaling: ${size}-byte records, $c"
      case $c in
        proxy_eos) res=$(run_proxy "$name" "$src" exactly-once 1) ;;
        limit) res=$(run_passthrough "$name" "$src") ;;
      esac
      record sizes "$c size=$size" "$res"
    done
  done
  for n in $(( RECORDS / 10 )) $RECORDS; do
    src=$(dataset 100 "$PARTS" "$n")
    name="m$RUN-$n"
    say "memory: $n records"
    res=$(run_proxy "$name" "$src" exactly-once 1)
    record memory "proxy_eos dataset=$n" "$res"
  done
fi

# ---- summary -------------------------------------------------------------
python3 "$top/bench/summary.py" "$RESULTS" | tee "$OUT/summary-$RUN.txt"
ln -sf "results-$RUN.txt" "$OUT/results-latest.txt"
ln -sf "summary-$RUN.txt" "$OUT/summary-latest.txt"
