#!/usr/bin/env bash
# The loop never waits for the API server (real kube-apiserver,
# tests/k8s/apiserver.sh; a real broker). A backlog of records is routed
# twice, each time by a fresh pipeline from the beginning: once with the
# API server answering, once with it frozen (SIGSTOP) from the moment the
# proxy starts routing, so every status write and watch read meets a
# server that accepts connections and never answers. The time to route
# the backlog (the proxy's group commits every partition's end) gives a
# rate; the frozen rate must be at least 90 % of the normal one. Noise on
# a busy machine can lose one pair, so up to three pairs are run and one
# must pass; a loop that waits on a status write (10 s each) fails every
# pair. Each pair's figures are printed. After the backlog, still frozen,
# /livez answers 200 for longer than its bound (GP_TEST_LIVEZ_MS=2000 in
# the test build): an API server that does not answer is not a stuck
# loop.
# Needs the fixture: started here when it is not running (and stopped at
# the end if so); GP_K8S_PORT / GP_K8S_DIR choose its port and run dir.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/k8s_lib.sh"

NS=gp-frz-$RUN_ID
CM=frozen-bluegreen-configmap
N=${GP_FROZEN_RECORDS:-500000}
S=gp-frozen-$RUN_ID
APISERVER_PID=""
HP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

frozen_cleanup() {
  local rc=$?
  [ -n "$APISERVER_PID" ] && kill -CONT "$APISERVER_PID" 2>/dev/null
  if [ -n "$PROXY_PID" ] && kill -0 "$PROXY_PID" 2>/dev/null; then
    kill -9 "$PROXY_PID" 2>/dev/null
  fi
  k8s_fixture_down
  (exit $rc)
  finish_test
}
trap frozen_cleanup EXIT

k8s_fixture_up
k8s_first_map "$CM"
PID_FILE=${GP_K8S_DIR:-$(cd "$(dirname "$0")/../.." && pwd)/.cache/k8s-run}/pid
[ -s "$PID_FILE" ] || fail "no pid file of the API server fixture at $PID_FILE"
say "$N records into $S (4 partitions)"
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 4 --quiet >/dev/null
produce "$S" "$N" 0 --ts-start 1700000000000

lag() { "$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" lag "$1" "$S"; }
lag_zero() { [ "$(lag "$1")" = 0 ]; }
now_ms() { date +%s%3N; }

# route ROUND MODE: a fresh pipeline routes the backlog; its ms in ROUTE_MS
route() {
  local round=$1 mode=$2 group=frz-$RUN_ID-$1
  k8s_write_conf "r$round" "$S" "$CM" "gate.pipeline=frz-$RUN_ID-$round" \
    "gate.group.id=$group" "http.listen=127.0.0.1:$HP"
  : >"$WORK/proxy.log"
  GP_TEST_LIVEZ_MS=2000 "$GP_BIN" run -c "$WORK/r$round.conf" >>"$WORK/proxy.log" 2>&1 &
  PROXY_PID=$!
  wait_for "the proxy to route (round $round)" 60 grep -q "info  routing " "$WORK/proxy.log"
  if [ "$mode" = frozen ]; then
    APISERVER_PID=$(cat "$PID_FILE")
    kill -STOP "$APISERVER_PID"
  fi
  local t0 t1
  t0=$(now_ms)
  wait_for "group $group to commit all $N records (round $round, $mode)" 300 lag_zero "$group"
  t1=$(now_ms)
  if [ "$mode" = frozen ]; then
    local i code
    for i in $(seq 1 16); do
      code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$HP/livez")
      [ "$code" = 200 ] || fail "/livez answered $code with the API server frozen (round $round)"
      sleep 0.25
    done
    kill -CONT "$APISERVER_PID"
    APISERVER_PID=""
HP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  fi
  stop_proxy
  cat "$WORK/proxy.log" >>"$WORK/proxy-all.log"
  ROUTE_MS=$((t1 - t0))
}

pass=0
for pair in 1 2 3; do
  route "$pair-normal" normal
  normal_ms=$ROUTE_MS
  route "$pair-frozen" frozen
  frozen_ms=$ROUTE_MS
  normal_rate=$((N * 1000 / normal_ms))
  frozen_rate=$((N * 1000 / frozen_ms))
  pct=$((frozen_rate * 100 / normal_rate))
  say "k8s_frozen: pair $pair: API server answering ${normal_rate} records/s ($normal_ms ms)," \
      "frozen ${frozen_rate} records/s ($frozen_ms ms): ${pct} %"
  if [ "$pct" -ge 90 ]; then
    pass=1
    break
  fi
done
[ $pass = 1 ] || fail "routing with the API server frozen stayed below 90 % of the normal rate in 3 pairs"
say "routing with the API server frozen kept ${pct} % of the normal rate; /livez 200 for 4 s" \
    "more of the freeze (its bound: 2 s here)"
