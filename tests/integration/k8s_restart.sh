#!/usr/bin/env bash
# The Kubernetes API server restarted under a running proxy (real
# kube-apiserver, tests/k8s/apiserver.sh, RBAC on; a real broker). The
# proxy watches and patches the map as in k8s_handshake, records flowing:
#   1. first deployment (BLUE, RUNNING, first): records go to blue;
#   2. the API server is stopped (SIGTERM) and stays down 10 s while
#      records flow: the proxy does not exit, S.blue's end offsets keep
#      moving, it logs the watch failure and its status writes fail;
#   3. it starts again on the same data, then etcd is compacted at its
#      current revision: the proxy's watch is open again (the API server's
#      gauge of open configmap watches is back to what it was; the time from
#      ready to then is printed, "k8s: API server ready to ..."), without a
#      GET and a watch after each other without pause (few configmap watches
#      ended since the restart); its status writes resume: the heartbeat
#      advances past the restart and the counts include every record routed
#      while the server was down;
#   4. the operator's handshake after it: {GREEN, INITIALIZING} rewrite,
#      then TRANSITIONING: WATERMARK_SET with T, then CLEAR_TO_TEARDOWN;
# then gp-check --cutoff T --old blue: all zeros.
# Needs the fixture: it is started here (and stopped at the end if it was
# started here); when it cannot start, the test fails and says why.
# GP_K8S_PORT / GP_K8S_DIR choose its port and run dir (see apiserver.sh).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/k8s_lib.sh"
command -v kcat >/dev/null || fail "kcat is not installed (scripts/install-deps.sh test)"

NS=gp-rs-$RUN_ID
CM=orders-bluegreen-configmap
RESTARTER=""
PRODUCER=""

k8s_cleanup() {
  local rc=$?
  [ -n "$PRODUCER" ] && kill "$PRODUCER" 2>/dev/null || true
  # a restart under way is let finish (its own timeouts bound it), so that
  # no half-started server is left behind
  [ -n "$RESTARTER" ] && wait "$RESTARTER" 2>/dev/null || true
  if [ -n "$PROXY_PID" ] && kill -0 "$PROXY_PID" 2>/dev/null; then
    kill -9 "$PROXY_PID" 2>/dev/null || true
  fi
  if [ $rc -ne 0 ]; then
    cat "$WORK/restart.log" >&2 2>/dev/null || true
    if "$K8S" status >/dev/null 2>&1; then
      echo "--- ConfigMap $NS/$CM:" >&2
      "$K8S" kubectl -n "$NS" get configmap "$CM" -o yaml >&2 2>/dev/null || true
    fi
  fi
  k8s_fixture_down
  (exit $rc)
  finish_test
}
trap k8s_cleanup EXIT

# ---- the API server ------------------------------------------------------
k8s_fixture_up
URL=$("$K8S" url)
say "API server $URL; namespace $NS"

k8s_first_map "$CM"

cm_json() { kc -n "$NS" get configmap "$CM" -o json; }
key() {
  cm_json | python3 -c 'import json,sys; print((json.load(sys.stdin).get("data") or {}).get(sys.argv[1], ""))' "$1"
}
routed() {
  cm_json | python3 -c '
import json, sys
d = json.load(sys.stdin).get("data") or {}
print(sum(int(d.get("gate-proxy.count." + c) or 0) for c in ("blue", "green", "dlq")))'
}
routed_exactly() { [ "$(routed)" = "$1" ]; }
now_ms() { date +%s%3N; }
# ms since the epoch of the last proxy log line matching $1
log_ms_last() {
  local ts
  ts=$(grep -- "$1" "$WORK/proxy.log" | tail -n 1 | cut -d' ' -f1)
  [ -n "$ts" ] && date -d "$ts" +%s%3N
}
# the heartbeat in the map, as ms since the epoch (0 when absent)
heartbeat_ms() {
  local hb
  hb=$(key gate-proxy.heartbeat)
  if [ -n "$hb" ]; then date -d "$hb" +%s%3N; else echo 0; fi
}
heartbeat_after() { [ "$(heartbeat_ms)" -gt "$1" ]; }
# the API server's metric $1 (a counter or gauge) for configmaps, verb $2,
# scope $3, summed
api_metric() {
  curl -s --cacert "$("$K8S" ca)" -H "Authorization: Bearer $("$K8S" token admin)" \
    "$URL/metrics" | python3 -c '
import sys
name, verb, scope = sys.argv[1:4]
n = 0
for line in sys.stdin:
    if line.startswith(name + "{") and "resource=\"configmaps\"" in line \
            and "verb=\"%s\"" % verb in line and "scope=\"%s\"" % scope in line:
        n += int(float(line.rsplit(" ", 1)[1]))
print(n)' "$1" "$2" "$3"
}
# watches of one configmap by name open now (the API server's own informers
# have some; the proxy's is one more)
open_watches() { api_metric apiserver_longrunning_requests WATCH resource; }
open_watches_is() { [ "$(open_watches)" = "$1" ]; }
# the end offsets of S.blue, summed (what the proxy has produced there;
# that it was committed, exactly once, is the checker's to say)
blue_end() {
  local args=() p
  for p in 0 1 2 3; do args+=(-t "$S.blue:$p:-1"); done
  kcat -b "$GP_BOOTSTRAP" -Q "${args[@]}" \
    | awk '{ s += $NF } END { print s + 0 }'
}

S=gp-rs-$RUN_ID
BASE=1700000000000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 4 --quiet >/dev/null
k8s_write_conf p "$S" "$CM"

# ---- 1. first deployment: all to blue ------------------------------------
start_proxy p
say "1. first deployment: 3000 records, all to blue"
produce "$S" 3000 0 --ts-start $BASE --disorder 100 --headers --key-every 3
wait_for "3000 records routed" 60 routed_exactly 3000
watches_before=$(open_watches)
[ "$watches_before" -ge 1 ] || fail "the API server shows no open watch of a configmap"

# ---- 2. the API server down for 10 s while records flow ------------------
say "2. the API server stopped for 10 s while 40000 records flow (1000/s)"
produce "$S" 40000 3000 --ts-start $((BASE + 3000)) --disorder 100 --headers --rate 1000 &
PRODUCER=$!
sleep 2
{ "$K8S" restart 10 && date +%s%3N >"$WORK/ready.ms"; } >"$WORK/restart.log" 2>&1 &
RESTARTER=$!
wait_for "the API server to stop" 60 grep -q "down for 10s" "$WORK/restart.log"
t_down=$(now_ms)
e0=$(blue_end)
sleep 4
e1=$(blue_end)
[ "$e1" -gt "$e0" ] \
  || fail "S.blue's end offsets did not move in 4 s while the API server was down ($e0)"
say "   while it was down: S.blue's end offsets moved by $((e1 - e0)) in 4 s"
kill -0 "$PROXY_PID" 2>/dev/null || fail "the proxy exited while the API server was down"
wait_for "the watch failure in the proxy's log" 10 \
  grep -q "configmap $NS/$CM: .*(retrying with backoff" "$WORK/proxy.log"
say "   proxy log: $(grep -o "[A-Z]* configmap $NS/$CM: .*(retrying" "$WORK/proxy.log" \
  | head -n 1 | sed 's|https://[^ ]*: ||' | cut -c1-160)"
grep -q "status write: PATCH configmap $NS/$CM: " "$WORK/proxy.log" \
  || fail "no failed status write logged while the API server was down"
rc=0
wait "$RESTARTER" || rc=$?
RESTARTER=""
[ $rc -eq 0 ] || fail "tests/k8s/apiserver.sh restart exited $rc"
t_ready=$(cat "$WORK/ready.ms")
kill -0 "$PROXY_PID" 2>/dev/null || fail "the proxy exited while the API server restarted"
say "   $(grep -o 'ready at .*' "$WORK/restart.log"); down $(( (t_ready - t_down) / 1000 )) s"
say "   $("$K8S" compact)"

# ---- 3. the proxy comes back ---------------------------------------------
say "3. the watch and the status writes come back"
wait_for "a heartbeat written after the restart" 30 heartbeat_after "$t_ready"
t_hb=$(now_ms)
wait_for "the proxy's watch open again ($watches_before watches of a configmap)" 60 \
  open_watches_is "$watches_before"
t_back=$(now_ms)
wait_for "'watching again' in the proxy's log" 30 \
  grep -q "configmap $NS/$CM: watching again" "$WORK/proxy.log"
sleep 3
ended=$(api_metric apiserver_request_total WATCH resource)
echo "k8s: API server ready to the proxy's heartbeat in the map: $((t_hb - t_ready)) ms;" \
     "to its watch open again: $((t_back - t_ready)) ms; configmap watches ended since" \
     "the restart: $ended"
[ "$ended" -le 10 ] \
  || fail "$ended configmap watches ended in the seconds after the restart (a GET and a" \
          "watch after each other without pause?)"
[ "$(open_watches)" = "$watches_before" ] || fail "the proxy's watch did not stay open"
wait "$PRODUCER"
PRODUCER=""
wait_for "43000 records in the map's counts" 60 routed_exactly 43000
[ "$(key gate-proxy.count.green)" = 0 ] || fail "green got records in the first deployment"
[ -z "$(key gate-proxy.error)" ] || fail "gate-proxy.error: $(key gate-proxy.error)"

# ---- 4. the operator's handshake after the restart ----------------------
say "4. operator: rewrite {GREEN, INITIALIZING, first=false, delay=500}, then TRANSITIONING"
produce "$S" 10000 43000 --ts-start $((BASE + 43000)) --disorder 100 --headers --rate 2000 &
PRODUCER=$!
kc -n "$NS" create configmap "$CM" --from-literal=active-deployment-type=GREEN \
  --from-literal=stage=INITIALIZING --from-literal=is-first-deployment=false \
  --from-literal=deployment-deletion-delay-ms=500 --dry-run=client -o yaml \
  | kc replace -f - >/dev/null
wait_for "the proxy to see the transition" 30 \
  grep -q "transition blue -> green requested" "$WORK/proxy.log"
wait_for "the proxy's status after the rewrite" 30 key_is gate-proxy.phase waiting
[ -z "$(key watermark-stage)" ] || fail "watermark-stage written during INITIALIZING"
t0=$(now_ms)
kc -n "$NS" patch configmap "$CM" --type=merge -p '{"data":{"stage":"TRANSITIONING"}}' >/dev/null
wait_for "WAITING_FOR_WATERMARK in the log" 30 \
  grep -q "published watermark-stage=WAITING_FOR_WATERMARK" "$WORK/proxy.log"
t_answer=$(log_ms_last "published watermark-stage=WAITING_FOR_WATERMARK")
wait_for "WATERMARK_SET" 60 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
[ -n "$T" ] || fail "WATERMARK_SET without watermark-toggle-value"
grep -q "published watermark-toggle-value=$T" "$WORK/proxy.log" \
  || fail "the map's T=$T is not the one the proxy published"
wait_for "CLEAR_TO_TEARDOWN" 90 key_is stage CLEAR_TO_TEARDOWN
say "   T=$T; CLEAR_TO_TEARDOWN; change to effect $((t_answer - t0)) ms"
kc -n "$NS" patch configmap "$CM" --type=merge -p '{"data":{"stage":"RUNNING"}}' >/dev/null
wait "$PRODUCER"
PRODUCER=""
wait_for "53000 records routed" 90 routed_exactly 53000
[ "$(key watermark-toggle-value)" = "$T" ] || fail "T changed after the close"
stop_proxy

check "$S" --cutoff "$T" --old blue
[ "$CHECKED" = 53000 ] || fail "checked $CHECKED records, expected 53000"
[ "$(key gate-proxy.count.dlq)" = 0 ] || fail "records went to the dead-letter topic"
say "proxy log: $(grep -c ' warn ' "$WORK/proxy.log" || true) warnings, $(grep -c ' error ' "$WORK/proxy.log" || true) errors"
grep ' warn \| error ' "$WORK/proxy.log" | cut -c1-200 | sort -k3 | uniq -c -f2 | head -20 || true
say "PASS"
