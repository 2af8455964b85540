#!/usr/bin/env bash
# The FLIP-504 handshake on a real kube-apiserver (tests/k8s/apiserver.sh,
# RBAC on) and a real broker: the proxy watches and patches the ConfigMap
# with a Role that allows get, watch and patch on exactly that ConfigMap,
# while kubectl plays the operator:
#   1. a ConfigMap the Role does not name: the proxy says 403, clearly;
#   2. first deployment (BLUE, RUNNING, first): records go to blue;
#   3. the operator rewrites the map {GREEN, INITIALIZING, first=false,
#      delay}: still all to blue, and no protocol key is written;
#   4. stage=TRANSITIONING: the proxy answers WAITING_FOR_WATERMARK, then T
#      with WATERMARK_SET, splits, and writes CLEAR_TO_TEARDOWN; the time
#      from the kubectl change to the proxy's answer is printed
#      ("k8s: change to effect N ms");
#   5. the operator sets RUNNING;
#   6. the ConfigMap is deleted (the last good state stays, the error is
#      logged) and created again (valid again, status written to it);
#   7. the k8s client alone (k8s_client_check): a rotated token file after
#      a 401, 409 with the API's message, 410 for a version older than the
#      API server's restart and compaction (GP_K8S_EXPIRE_CMD), the
#      watch thread's latency;
# then gp-check --cutoff T --old blue: all zeros.
# Needs the fixture: it is started here (and stopped at the end if it was
# started here); when it cannot start, the test fails and says why.
# GP_K8S_PORT / GP_K8S_DIR choose its port and run dir (see apiserver.sh).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/k8s_lib.sh"

NS=gp-it-$RUN_ID
CM=orders-bluegreen-configmap

k8s_cleanup() {
  local rc=$?
  if [ -n "$PROXY_PID" ] && kill -0 "$PROXY_PID" 2>/dev/null; then
    kill -9 "$PROXY_PID" 2>/dev/null || true
  fi
  if [ $rc -ne 0 ] && "$K8S" status >/dev/null 2>&1; then
    echo "--- ConfigMap $NS/$CM:" >&2
    "$K8S" kubectl -n "$NS" get configmap "$CM" -o yaml >&2 2>/dev/null || true
  fi
  rm -f "$WORK/token" "$WORK/token.next" # bearer tokens: not kept, even for a post-mortem
  k8s_fixture_down
  (exit $rc)
  finish_test
}
trap k8s_cleanup EXIT

# ---- the API server ------------------------------------------------------
k8s_fixture_up
say "API server $("$K8S" url); namespace $NS"

k8s_first_map "$CM"
kc -n "$NS" create configmap other --from-literal=x=1 >/dev/null

# key NAME: a data key of the ConfigMap ("" when absent)
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
# ms since the epoch of a proxy log line's timestamp (the first matching line)
log_ms() {
  local ts
  ts=$(grep -m1 -- "$1" "$WORK/proxy.log" | cut -d' ' -f1)
  [ -n "$ts" ] && date -d "$ts" +%s%3N
}
now_ms() { date +%s%3N; }

S=gp-k8s-$RUN_ID
BASE=1700000000000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 4 --quiet >/dev/null
k8s_write_conf p "$S" "$CM"

# ---- 1. a ConfigMap the Role does not name: 403, said clearly ------------
say "1. a ConfigMap outside the Role: the proxy must report 403"
"$GP_BIN" run -c "$WORK/p.conf" -X control.k8s.configmap=other >"$WORK/forbidden.log" 2>&1 &
PROXY_PID=$!
want="waiting for a valid control map: GET configmap $NS/other: 403 Forbidden: configmaps \"other\" is forbidden: User \"gate-proxy\" cannot get resource \"configmaps\""
wait_for "the 403 in the proxy's log" 30 grep -qF -- "$want" "$WORK/forbidden.log"
kill -TERM "$PROXY_PID"
rc=0
wait "$PROXY_PID" || rc=$?
PROXY_PID=""
[ $rc -eq 0 ] || { cat "$WORK/forbidden.log" >&2; fail "proxy exited $rc after SIGTERM while waiting"; }
[ "$(kc -n "$NS" get configmap other -o jsonpath='{.data.x}')" = 1 ] || fail "other was changed"
say "   $(grep -m1 -oF -- "GET configmap $NS/other: 403 Forbidden" "$WORK/forbidden.log")"

# ---- 2. first deployment: all to blue ------------------------------------
start_proxy p
say "2. first deployment: 5000 records, all to blue"
produce "$S" 5000 0 --ts-start $BASE --disorder 100 --headers --key-every 3
wait_for "5000 records routed" 60 routed_is 5000
[ "$(key gate-proxy.count.green)" = 0 ] || fail "green got records in the first deployment"

# ---- 3. the operator starts green: all still to blue, no protocol key ----
say "3. operator: rewrite {GREEN, INITIALIZING, first=false, delay=500} while records flow"
produce "$S" 20000 5000 --ts-start $((BASE + 5000)) --disorder 100 --headers --rate 2000 &
PRODUCER=$!
kc -n "$NS" create configmap "$CM" --from-literal=active-deployment-type=GREEN \
  --from-literal=stage=INITIALIZING --from-literal=is-first-deployment=false \
  --from-literal=deployment-deletion-delay-ms=500 --dry-run=client -o yaml \
  | kc replace -f - >/dev/null
wait_for "the proxy to see the transition" 30 \
  grep -q "transition blue -> green requested" "$WORK/proxy.log"
wait_for "the proxy's status after the rewrite" 30 key_is gate-proxy.phase waiting
sleep 2
[ "$(key stage)" = INITIALIZING ] || fail "stage is $(key stage), not INITIALIZING"
[ -z "$(key watermark-stage)" ] || fail "watermark-stage written during INITIALIZING"
[ -z "$(key watermark-toggle-value)" ] || fail "watermark-toggle-value written during INITIALIZING"
[ "$(key gate-proxy.count.green)" = 0 ] || fail "green got records before TRANSITIONING"
say "   still all to blue ($(key gate-proxy.count.blue) records), no protocol key"

# ---- 4. TRANSITIONING: WAITING_FOR_WATERMARK, T, split, close ------------
say "4. operator: stage=TRANSITIONING"
t0=$(now_ms)
kc -n "$NS" patch configmap "$CM" --type=merge -p '{"data":{"stage":"TRANSITIONING"}}' >/dev/null
t1=$(now_ms)
wait_for "WAITING_FOR_WATERMARK in the log" 30 \
  grep -q "published watermark-stage=WAITING_FOR_WATERMARK" "$WORK/proxy.log"
t_answer=$(log_ms "published watermark-stage=WAITING_FOR_WATERMARK")
wait_for "WATERMARK_SET" 60 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
[ -n "$T" ] || fail "WATERMARK_SET without watermark-toggle-value"
t_cut=$(log_ms "published watermark-toggle-value=")
grep -q "published watermark-toggle-value=$T" "$WORK/proxy.log" \
  || fail "the map's T=$T is not the one the proxy published"
wait_for "CLEAR_TO_TEARDOWN" 90 key_is stage CLEAR_TO_TEARDOWN
say "   T=$T; the proxy wrote CLEAR_TO_TEARDOWN"
echo "k8s: change to effect $((t_answer - t0)) ms (kubectl patch to the proxy's" \
     "WAITING_FOR_WATERMARK; the kubectl call itself took $((t1 - t0)) ms;" \
     "T published after $((t_cut - t0)) ms)"

# ---- 5. the operator finishes; the checker ------------------------------
say "5. operator: stage=RUNNING"
kc -n "$NS" patch configmap "$CM" --type=merge -p '{"data":{"stage":"RUNNING"}}' >/dev/null
wait "$PRODUCER"
wait_for "25000 records routed" 90 routed_is 25000
[ "$(key stage)" = RUNNING ] || fail "stage is $(key stage) after RUNNING was set"
[ "$(key watermark-toggle-value)" = "$T" ] || fail "T changed after the close"

# ---- 6. the ConfigMap deleted and created again -------------------------
say "6. ConfigMap deleted: the last good state stays; created again: valid again"
cm_json | python3 -c '
import json, sys
d = json.load(sys.stdin)
d["metadata"] = {"name": d["metadata"]["name"], "namespace": d["metadata"]["namespace"]}
json.dump(d, sys.stdout)' >"$WORK/cm-saved.json"
kc -n "$NS" delete configmap "$CM" >/dev/null
wait_for "the deletion in the log" 30 \
  grep -q "control map invalid, keeping the last good state: configmap $NS/$CM: deleted" \
  "$WORK/proxy.log"
kc create -f "$WORK/cm-saved.json" >/dev/null
wait_for "the map valid again" 30 grep -q "control map valid again" "$WORK/proxy.log"
wait_for "status written to the new ConfigMap" 30 key_is gate-proxy.error ""
[ -n "$(key gate-proxy.heartbeat)" ] || fail "no heartbeat in the re-created ConfigMap"
"$GP_BIN" status --k8s "$CM" --namespace "$NS" --kubeconfig "$PROXY_KC" >"$WORK/status.txt" \
  || fail "gate-proxy status --k8s failed"
grep -q "^control     configmap $NS/$CM (resourceVersion [0-9]*)" "$WORK/status.txt" \
  && grep -q "^cutoff      T=$T " "$WORK/status.txt" \
  && grep -q "^requested   active=GREEN stage=RUNNING" "$WORK/status.txt" \
  || { cat "$WORK/status.txt"; fail "gate-proxy status --k8s shows something else"; }

stop_proxy

# ---- 7. the client alone: token rotation, 409, 410, watch latency -------
say "7. the k8s client: a rotated token, 409, 410, the watch's latency"
[ -n "${GP_K8S_CLIENT_CHECK:-}" ] || fail "GP_K8S_CLIENT_CHECK is not set (run through ctest)"
"$K8S" sa-token "$NS" gp-rotate 10m >"$WORK/token"
kc -n "$NS" create rolebinding gp-rotate --role=gate-proxy --serviceaccount="$NS:gp-rotate" >/dev/null
"$K8S" token proxy >"$WORK/token.next"
sed "s|^\( *\)token: .*|\1tokenFile: $WORK/token|" "$PROXY_KC" >"$WORK/rotating.kubeconfig"
grep -q "tokenFile: $WORK/token" "$WORK/rotating.kubeconfig" || fail "no tokenFile kubeconfig"
"$GP_K8S_CLIENT_CHECK" "$WORK/rotating.kubeconfig" "$WORK/token" "$WORK/token.next" "$NS" "$CM" \
  "$K8S kubectl -n $NS delete serviceaccount gp-rotate >/dev/null" \
  || fail "k8s_client_check failed"

check "$S" --cutoff "$T" --old blue
[ "$CHECKED" = 25000 ] || fail "checked $CHECKED records, expected 25000"
[ "$(key gate-proxy.count.dlq)" = 0 ] || fail "records went to the dead-letter topic"
grep -q "status write\|publishing to .* failed" "$WORK/proxy.log" \
  && { grep "status write\|publishing to" "$WORK/proxy.log" | head -5; fail "a write to the ConfigMap failed"; }
say "proxy log: $(grep -c ' warn ' "$WORK/proxy.log" || true) warnings, $(grep -c ' error ' "$WORK/proxy.log" || true) errors"
grep ' warn \| error ' "$WORK/proxy.log" | cut -c1-200 || true
say "PASS"
