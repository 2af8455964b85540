#!/usr/bin/env bash
# The other ways gate-proxy proves who it is, on a real kube-apiserver
# (tests/k8s/apiserver.sh, RBAC on, --client-ca-file) and a real broker,
# with a Role that allows get, watch and patch on exactly the ConfigMap:
#   1. a client certificate (CN=gate-proxy, a kubeconfig with
#      client-certificate-data and client-key-data, no token): `status`
#      reads the map, `cutover` writes it, and another ConfigMap gives a
#      403 naming User "gate-proxy";
#   2. in-cluster, as in a pod: KUBERNETES_SERVICE_HOST/PORT and a service
#      account directory (token, ca.crt, namespace; the test build reads its
#      path from GP_TEST_SA_DIR), no kubeconfig, no KUBECONFIG, an empty
#      HOME: `status --k8s NAME` without --namespace takes the namespace from
#      the file and reads the map with the ServiceAccount's RoleBinding;
#      another ConfigMap gives a 403 naming the ServiceAccount; without
#      GP_TEST_SA_DIR it looks in the pod's own directory;
#   3. the proxy in-cluster, routing, while its token file is rotated: the
#      file gets the token of another ServiceAccount bound to the Role, the
#      first ServiceAccount is deleted (its token now gets 401): the proxy's
#      status writes go on without a failure, the heartbeat advances, every
#      record is routed; then gp-check: all zeros.
# Needs the fixture: it is started here (and stopped at the end if it was
# started here); when it cannot start, the test fails and says why.
# GP_K8S_PORT / GP_K8S_DIR choose its port and run dir (see apiserver.sh).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/k8s_lib.sh"

NS=gp-auth-$RUN_ID
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
  # bearer tokens: not kept, even for a post-mortem
  rm -f "$WORK/sa/token" "$WORK/sa/token.new" "$WORK/token.first"
  k8s_fixture_down
  (exit $rc)
  finish_test
}
trap k8s_cleanup EXIT

# ---- the API server ------------------------------------------------------
k8s_fixture_up
URL=$("$K8S" url)
PORT=${URL##*:}
CA=$("$K8S" ca)
say "API server $URL; namespace $NS"

kc create namespace "$NS" >/dev/null
kc -n "$NS" create configmap "$CM" --from-literal=active-deployment-type=BLUE \
  --from-literal=stage=RUNNING --from-literal=is-first-deployment=true >/dev/null
kc -n "$NS" create configmap other --from-literal=x=1 >/dev/null
kc -n "$NS" create role gate-proxy --verb=get,watch,patch --resource=configmaps \
  --resource-name="$CM" >/dev/null
kc -n "$NS" create rolebinding gate-proxy --role=gate-proxy --user=gate-proxy >/dev/null

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
heartbeat_ms() {
  local hb
  hb=$(key gate-proxy.heartbeat)
  if [ -n "$hb" ]; then date -d "$hb" +%s%3N; else echo 0; fi
}
heartbeat_after() { [ "$(heartbeat_ms)" -gt "$1" ]; }
# RUN: how gate-proxy is run (empty: as it is; "${POD[@]}": as in a pod)
RUN=()
# status_ok OUT ARGS...: gate-proxy status must succeed and show the map
status_ok() {
  local out=$1; shift
  "${RUN[@]}" "$GP_BIN" status --k8s "$CM" "$@" >"$WORK/$out" 2>&1 \
    || { cat "$WORK/$out"; fail "gate-proxy status --k8s $CM $* failed"; }
  grep -q "^control     configmap $NS/$CM (resourceVersion [0-9]*)" "$WORK/$out" \
    || { cat "$WORK/$out"; fail "gate-proxy status $* shows another map"; }
}
# status_403 OUT USER ARGS...: status of the ConfigMap outside the Role
status_403() {
  local out=$1 user=$2; shift 2
  local rc=0
  "${RUN[@]}" "$GP_BIN" status --k8s other "$@" >"$WORK/$out" 2>&1 || rc=$?
  [ $rc -ne 0 ] || { cat "$WORK/$out"; fail "status of 'other' succeeded with $*"; }
  local want="GET configmap $NS/other: 403 Forbidden: configmaps \"other\" is forbidden:"
  want+=" User \"$user\" cannot get resource \"configmaps\""
  grep -qF "$want" "$WORK/$out" \
    || { cat "$WORK/$out"; fail "status of 'other' did not give a 403 naming User \"$user\""; }
}

# ---- 1. a client certificate ---------------------------------------------
say "1. a client certificate (CN=gate-proxy), no token"
CERT_KC=$("$K8S" kubeconfig proxy-cert)
grep -q "client-certificate-data: " "$CERT_KC" && grep -q "client-key-data: " "$CERT_KC" \
  || fail "$CERT_KC has no client-certificate-data and client-key-data"
grep -qi "token" "$CERT_KC" && fail "$CERT_KC holds a token"
status_ok cert-status.txt --namespace "$NS" --kubeconfig "$CERT_KC"
grep -q "^requested   active=BLUE stage=RUNNING first-deployment=true" "$WORK/cert-status.txt" \
  || { cat "$WORK/cert-status.txt"; fail "status with the certificate shows something else"; }
"$GP_BIN" cutover --k8s "$CM" --namespace "$NS" --kubeconfig "$CERT_KC" --to green \
  --delay-ms 500 >"$WORK/cutover.txt" 2>&1 \
  || { cat "$WORK/cutover.txt"; fail "cutover with the certificate failed"; }
[ "$(key stage)" = TRANSITIONING ] && [ "$(key active-deployment-type)" = GREEN ] \
  || fail "cutover with the certificate did not write the map (stage=$(key stage))"
status_403 cert-other.txt gate-proxy --namespace "$NS" --kubeconfig "$CERT_KC"
say "   status and cutover work; 'other': $(grep -o '403 Forbidden: .* User "gate-proxy"' \
  "$WORK/cert-other.txt")"
# Back to the first deployment for what follows.
kc -n "$NS" create configmap "$CM" --from-literal=active-deployment-type=BLUE \
  --from-literal=stage=RUNNING --from-literal=is-first-deployment=true --dry-run=client -o yaml \
  | kc replace -f - >/dev/null

# ---- 2. in-cluster, as in a pod ------------------------------------------
say "2. in-cluster: KUBERNETES_SERVICE_HOST/PORT and a service account directory"
mkdir -p "$WORK/sa" "$WORK/home"
"$K8S" sa-token "$NS" gp-first 1h >"$WORK/sa/token"
cp "$WORK/sa/token" "$WORK/token.first"
cp "$CA" "$WORK/sa/ca.crt"
printf '%s' "$NS" >"$WORK/sa/namespace"
kc -n "$NS" create rolebinding gp-first --role=gate-proxy --serviceaccount="$NS:gp-first" >/dev/null
# the environment of a pod, and no other way in
POD=(env -u KUBECONFIG HOME="$WORK/home" KUBERNETES_SERVICE_HOST=127.0.0.1
     KUBERNETES_SERVICE_PORT="$PORT" GP_TEST_SA_DIR="$WORK/sa")
RUN=("${POD[@]}")
status_ok pod-status.txt
status_403 pod-other.txt "system:serviceaccount:$NS:gp-first"
rc=0
env -u KUBECONFIG HOME="$WORK/home" KUBERNETES_SERVICE_HOST=127.0.0.1 \
  KUBERNETES_SERVICE_PORT="$PORT" GP_TEST_SA_DIR= "$GP_BIN" status --k8s "$CM" \
  >"$WORK/nodir.txt" 2>&1 || rc=$?
[ $rc -ne 0 ] && grep -q "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt" "$WORK/nodir.txt" \
  || { cat "$WORK/nodir.txt"; fail "without GP_TEST_SA_DIR the pod's own directory was not used"; }
say "   status without --namespace and --kubeconfig reads $NS/$CM (the namespace file);" \
    "'other' is 403 for system:serviceaccount:$NS:gp-first"

# ---- 3. the proxy in-cluster, its token rotated --------------------------
say "3. the proxy in-cluster; its token file rotated, the old token refused"
S=gp-auth-$RUN_ID
BASE=1700000000000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
{
  echo "kafka.bootstrap.servers=$GP_BOOTSTRAP"
  echo "gate.pipeline=it-$RUN_ID"
  echo "gate.source.topics=$S"
  echo "gate.event-time=json:ts"
  echo "gate.topics.create=true"
  echo "gate.dlq.topic=$S.dlq"
  echo "kafka.transaction.timeout.ms=10000"
  echo "control.k8s.configmap=$CM"
} >"$WORK/p.conf"
"${POD[@]}" "$GP_BIN" run -c "$WORK/p.conf" >>"$WORK/proxy.log" 2>&1 &
PROXY_PID=$!
wait_for "the proxy's first line" 30 grep -q "configmap $NS/$CM via" "$WORK/proxy.log"
grep -qF "configmap $NS/$CM via in-cluster (service account $WORK/sa) at https://127.0.0.1:$PORT" \
  "$WORK/proxy.log" || fail "the proxy does not say it runs in-cluster from $WORK/sa"
produce "$S" 2000 0 --ts-start $BASE --headers
wait_for "2000 records routed" 60 routed_exactly 2000

# authentication_attempts: the API server's count of requests whose
# credentials were refused
auth_errors() {
  curl -s --cacert "$CA" -H "Authorization: Bearer $("$K8S" token admin)" "$URL/metrics" \
    | sed -n 's/^authentication_attempts{result="error"} \([0-9]*\)$/\1/p' | awk '{ print $1 + 0 }'
}
errors0=$(auth_errors)
lines_before=$(wc -l <"$WORK/proxy.log")
"$K8S" sa-token "$NS" gp-next 1h >"$WORK/sa/token.new"
kc -n "$NS" create rolebinding gp-next --role=gate-proxy --serviceaccount="$NS:gp-next" >/dev/null
mv "$WORK/sa/token.new" "$WORK/sa/token"
kc -n "$NS" delete serviceaccount gp-first >/dev/null
# old_token_refused: the deleted ServiceAccount's token now gets 401
REFUSED=0
old_token_refused() {
  [ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$CA" \
       -H "Authorization: Bearer $(cat "$WORK/token.first")" \
       "$URL/api/v1/namespaces/$NS/configmaps/$CM")" = 401 ] && REFUSED=$((REFUSED + 1))
}
wait_for "the first ServiceAccount's token refused (401)" 30 old_token_refused
t_refused=$(now_ms)
produce "$S" 2000 2000 --ts-start $((BASE + 2000)) --headers
wait_for "4000 records routed" 60 routed_exactly 4000
wait_for "a heartbeat written after the old token was refused" 30 heartbeat_after "$((t_refused + 2000))"
after=$(tail -n +"$((lines_before + 1))" "$WORK/proxy.log")
if grep -q "status write\|: 401 \|WATCH configmap\|GET configmap\|watching again" <<<"$after"; then
  echo "$after"
  fail "the proxy logged a failure after the rotation"
fi
errors1=$(auth_errors)
[ $((errors1 - errors0)) -gt "$REFUSED" ] \
  || fail "the API server refused no credentials of the proxy ($((errors1 - errors0)) refusals," \
          "$REFUSED of them this test's own checks): it did not hold the old token?"
status_ok pod-status2.txt
say "   the proxy's cached token was refused $((errors1 - errors0 - REFUSED)) time(s); it" \
    "re-read the file and went on: 4000 routed, heartbeat $(key gate-proxy.heartbeat)"
stop_proxy
check "$S"
[ "$CHECKED" = 4000 ] || fail "checked $CHECKED records, expected 4000"
say "PASS"
