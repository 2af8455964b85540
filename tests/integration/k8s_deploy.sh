#!/usr/bin/env bash
# deploy/kubernetes/ on a real kube-apiserver (tests/k8s/apiserver.sh, RBAC
# on; no nodes and no controllers, so nothing is scheduled):
#   1. kubectl apply of every manifest into a fresh namespace is accepted;
#      the stored Deployment has replicas 1, strategy Recreate, the
#      ServiceAccount, the config volume, the run command, and the probes
#      (/livez, /readyz) on the named metrics port; the PodMonitor
#      (podmonitor.yaml, monitoring.coreos.com/v1) selects the Deployment's
#      pods and scrapes /metrics on a port their container names, the one
#      the prometheus.io annotations give. The fixture has no Prometheus
#      Operator, so the test defines the PodMonitor CRD itself (a permissive
#      schema) and waits for it to be served before the apply; before that,
#      when the fixture does not have the CRD yet, an apply of the directory
#      into another namespace creates everything else and fails only on the
#      PodMonitor (what deploy/README.md says of a cluster without the
#      operator);
#   2. with a token minted for the ServiceAccount (TokenRequest), straight
#      HTTP with curl: get, watch (fieldSelector on the name) and merge
#      patch of orders-configmap answer 200; get and patch of another
#      ConfigMap, list and unfiltered watch of ConfigMaps, get and list of
#      Secrets, create of a ConfigMap answer 403;
#   3. gate-proxy itself with that token (a kubeconfig holding the token and
#      the fixture's CA; in-cluster mode itself is integration.k8s_auth):
#      `status --k8s orders-configmap` reads the map, the namespace coming
#      from the kubeconfig as it comes from the pod in a cluster, and
#      `status --k8s other` fails with a clear 403.
# Needs no broker. The fixture is started here when it is not running (and
# stopped at the end if it was started here); when it cannot start, the test
# fails and says why. GP_K8S_PORT / GP_K8S_DIR choose its port and run dir.

# lib.sh insists on a broker address for the Kafka tests; this one never
# talks to Kafka.
: "${GP_BOOTSTRAP:=unused-by-k8s_deploy}"
export GP_BOOTSTRAP
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/k8s_lib.sh"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
MANIFESTS=$REPO/deploy/kubernetes
NS=gp-deploy-$RUN_ID
CM=orders-configmap
SA=gate-proxy

CRD_CREATED=0

deploy_cleanup() {
  local rc=$?
  # bearer tokens: never kept, even for a post-mortem
  rm -f "$WORK/sa.token" "$WORK/auth.header" "$WORK/sa.kubeconfig"
  # a fixture that goes on running gets back without the CRD made here
  if [ "$CRD_CREATED" = 1 ] && [ "$K8S_STARTED" = 0 ]; then
    kc delete crd "$PM_CRD" --timeout=30s >/dev/null 2>&1 || true
  fi
  kc delete namespace "$NS-nocrd" --wait=false >/dev/null 2>&1 || true
  k8s_fixture_down
  (exit $rc)
  finish_test
}
trap deploy_cleanup EXIT

[ -d "$MANIFESTS" ] || fail "no $MANIFESTS"

# ---- the API server ------------------------------------------------------
k8s_fixture_up
URL=$("$K8S" url)
CA=$("$K8S" ca)
say "API server $URL; namespace $NS"

# ---- 1. the manifests are accepted ---------------------------------------
kc create namespace "$NS" >/dev/null || fail "cannot create namespace $NS"
if ! kc get crd "$PM_CRD" >/dev/null 2>&1; then
  # without the Prometheus Operator's CRD: the rest applies, the PodMonitor not
  say "0. kubectl apply -n $NS-nocrd -f deploy/kubernetes/ without the PodMonitor CRD"
  kc create namespace "$NS-nocrd" >/dev/null || fail "cannot create namespace $NS-nocrd"
  rc=0
  # a discovery cache of its own: another run's may still list the CRD
  kc --cache-dir "$WORK/kube-cache" -n "$NS-nocrd" apply -f "$MANIFESTS" >"$WORK/apply-nocrd.out" 2>&1 || rc=$?
  [ $rc -ne 0 ] || fail "kubectl apply without the PodMonitor CRD succeeded"
  grep -q 'no matches for kind "PodMonitor" in version "monitoring.coreos.com/v1"' "$WORK/apply-nocrd.out" \
    || { cat "$WORK/apply-nocrd.out" >&2; fail "kubectl apply without the CRD: no 'no matches for kind PodMonitor'"; }
  n=$(grep -c ' created$' "$WORK/apply-nocrd.out" || true)
  [ "$n" = "$(( $(ls "$MANIFESTS"/*.yaml | wc -l) - 1 ))" ] \
    || { cat "$WORK/apply-nocrd.out" >&2; fail "kubectl apply without the CRD created $n objects"; }
  say "   exit $rc: $n objects created; $(grep -o 'no matches for kind "PodMonitor"[^;]*' "$WORK/apply-nocrd.out")"
fi

# The Prometheus Operator's PodMonitor CRD, permissive: the fixture runs no
# operator, and what the stored object holds is checked below.
say "1. the PodMonitor CRD, then kubectl apply -n $NS -f deploy/kubernetes/"
kc get crd "$PM_CRD" >/dev/null 2>&1 || CRD_CREATED=1
apply_podmonitor_crd
crd_served() {
  [ "$(kc get crd "$PM_CRD" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" = True ] &&
    kc -n "$NS" get podmonitors.monitoring.coreos.com >/dev/null 2>&1
}
wait_for "the PodMonitor CRD to be Established and served" 30 crd_served
say "   $PM_CRD Established"
rc=0
kc -n "$NS" apply -f "$MANIFESTS" >"$WORK/apply.out" 2>&1 || rc=$?
sed 's/^/   /' "$WORK/apply.out"
[ $rc -eq 0 ] || fail "kubectl apply exited $rc"
for obj in serviceaccount/$SA role.rbac.authorization.k8s.io/gate-proxy \
           rolebinding.rbac.authorization.k8s.io/gate-proxy configmap/$CM \
           configmap/gate-proxy-config deployment.apps/gate-proxy \
           podmonitor.monitoring.coreos.com/gate-proxy; do
  grep -q "^$obj created\$" "$WORK/apply.out" || fail "kubectl apply did not create $obj"
done

dep() { kc -n "$NS" get deployment gate-proxy -o jsonpath="$1"; }
got=$(dep '{.spec.replicas} {.spec.strategy.type}')
[ "$got" = "1 Recreate" ] || fail "deployment: replicas/strategy are '$got', not '1 Recreate'"
say "   deployment stored: replicas=1 strategy=Recreate"
got=$(dep '{.spec.template.spec.serviceAccountName}')
[ "$got" = "$SA" ] || fail "deployment: serviceAccountName is '$got'"
got=$(dep '{.spec.template.spec.containers[0].args}')
[ "$got" = '["run","-c","/etc/gate-proxy/gate-proxy.conf"]' ] || fail "deployment: args are $got"
got=$(dep '{.spec.template.spec.volumes[?(@.name=="config")].configMap.name}')
[ "$got" = gate-proxy-config ] || fail "deployment: config volume is from '$got'"
got=$(dep '{.spec.template.spec.containers[0].volumeMounts[?(@.name=="config")].mountPath}')
[ "$got" = /etc/gate-proxy ] || fail "deployment: config mounted at '$got'"
got=$(dep '{.spec.template.spec.containers[0].livenessProbe.httpGet.path} {.spec.template.spec.containers[0].readinessProbe.httpGet.path} {.spec.template.spec.containers[0].startupProbe.httpGet.path} {.spec.template.spec.containers[0].ports[0].name}')
[ "$got" = "/livez /readyz /livez http-metrics" ] || fail "deployment: probes and port are '$got'"
say "   probes: liveness and startup /livez, readiness /readyz, on port http-metrics"
say "   serviceAccountName=$SA, args run -c /etc/gate-proxy/gate-proxy.conf, config volume at /etc/gate-proxy"

# The PodMonitor as stored: its selector matches the Deployment's pod
# labels, each endpoint names a port of the Deployment's container, with the
# port and path of the prometheus.io annotations, and it uses only fields of
# the Prometheus Operator's PodMonitor (the permissive CRD would keep a
# misspelt one).
kc -n "$NS" get deployment gate-proxy -o json >"$WORK/deployment.json"
kc -n "$NS" get podmonitor.monitoring.coreos.com gate-proxy -o json >"$WORK/podmonitor.json" \
  || fail "no PodMonitor gate-proxy stored in $NS"
python3 - "$WORK/podmonitor.json" "$WORK/deployment.json" >"$WORK/podmonitor.txt" 2>&1 <<'PY' \
  || { cat "$WORK/podmonitor.txt" >&2; fail "the PodMonitor does not fit the Deployment (above)"; }
import json, sys
pm, dep = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
spec, tmpl = pm["spec"], dep["spec"]["template"]
labels = tmpl["metadata"]["labels"]
assert set(spec) <= {"selector", "podMetricsEndpoints", "namespaceSelector", "jobLabel",
                     "podTargetLabels", "sampleLimit", "targetLimit"}, sorted(spec)
assert "namespaceSelector" not in spec, "a namespaceSelector: the pods are in the PodMonitor's namespace"
sel = spec["selector"]
assert sel.get("matchLabels") or sel.get("matchExpressions"), ("an empty selector picks every pod", sel)
for k, v in (sel.get("matchLabels") or {}).items():
    assert labels.get(k) == v, ("selector label not on the pods", k, v, labels)
for e in sel.get("matchExpressions") or []:
    op, have = e["operator"], labels.get(e["key"])
    ok = {"In": lambda: have in e["values"], "NotIn": lambda: have not in e["values"],
          "Exists": lambda: have is not None, "DoesNotExist": lambda: have is None}[op]()
    assert ok, ("selector expression does not match the pods", e, labels)
# the Deployment's own selector picks the same pods
for k, v in dep["spec"]["selector"]["matchLabels"].items():
    assert labels.get(k) == v, (k, v)
ports = {p["name"]: p["containerPort"] for c in tmpl["spec"]["containers"] for p in c.get("ports", [])
         if "name" in p}
ann = tmpl["metadata"].get("annotations", {})
eps = spec.get("podMetricsEndpoints")
assert eps, "no podMetricsEndpoints"
for ep in eps:
    assert set(ep) <= {"port", "path", "interval", "scrapeTimeout", "scheme", "honorLabels",
                       "honorTimestamps", "relabelings", "metricRelabelings"}, sorted(ep)
    assert ep.get("port") in ports, ("endpoint port is not a container port", ep.get("port"), ports)
    assert str(ports[ep["port"]]) == ann.get("prometheus.io/port"), (ports[ep["port"]], ann)
    assert ep.get("path", "/metrics") == ann.get("prometheus.io/path") == "/metrics", (ep, ann)
print("selector %s; endpoint port %s (containerPort %d), path %s" % (
    ",".join("%s=%s" % kv for kv in sorted((sel.get("matchLabels") or {}).items())), eps[0]["port"],
    ports[eps[0]["port"]], eps[0].get("path", "/metrics")))
PY
say "   podmonitor: $(cat "$WORK/podmonitor.txt")"

kc -n "$NS" get configmap gate-proxy-config -o jsonpath='{.data.gate-proxy\.conf}' >"$WORK/gate-proxy.conf"
grep -qx "control.k8s.configmap=$CM" "$WORK/gate-proxy.conf" \
  || fail "gate-proxy-config does not set control.k8s.configmap=$CM"
got=$(kc -n "$NS" get role gate-proxy -o jsonpath='{.rules}')
want='[{"apiGroups":[""],"resourceNames":["'$CM'"],"resources":["configmaps"],"verbs":["get","watch","patch"]}]'
[ "$got" = "$want" ] || fail "role rules are $got, expected $want"
say "   role: get, watch, patch on configmaps/$CM only"

kc -n "$NS" create configmap other --from-literal=x=1 >/dev/null
kc -n "$NS" create secret generic s --from-literal=x=1 >/dev/null

# ---- 2. the ServiceAccount's token, over plain HTTP ----------------------
say "2. a TokenRequest token for $NS/$SA, checked with curl"
"$K8S" sa-token "$NS" "$SA" 10m >"$WORK/sa.token" || fail "sa-token $NS $SA failed"
[ -s "$WORK/sa.token" ] || fail "sa-token printed no token"
printf 'Authorization: Bearer %s\n' "$(cat "$WORK/sa.token")" >"$WORK/auth.header"

# api WANT METHOD PATH [curl args...]: the status code must be WANT; the body
# is left in $WORK/body
api() {
  local want=$1 method=$2 path=$3; shift 3
  local code
  code=$(curl -sS --cacert "$CA" -H @"$WORK/auth.header" -X "$method" --max-time 15 \
    -o "$WORK/body" -w '%{http_code}' "$@" "$URL$path") || true
  if [ "$code" != "$want" ]; then
    head -c 600 "$WORK/body" >&2 2>/dev/null; echo >&2
    fail "$method $path: HTTP $code, expected $want"
  fi
  say "   $method $path -> $code"
}
# forbidden_body WHAT: the 403 body is the API's Status, reason Forbidden,
# naming the ServiceAccount and what it may not do
forbidden_body() {
  python3 - "$WORK/body" "User \"system:serviceaccount:$NS:$SA\" cannot $1" <<'PY' \
    || { cat "$WORK/body" >&2; fail "the 403 body does not say: User system:serviceaccount:$NS:$SA cannot $1"; }
import json, sys
st = json.load(open(sys.argv[1]))
assert st.get("kind") == "Status" and st.get("reason") == "Forbidden" and st.get("code") == 403, st
assert sys.argv[2] in st.get("message", ""), (sys.argv[2], st.get("message"))
PY
}
P=/api/v1/namespaces/$NS

api 200 GET "$P/configmaps/$CM"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["data"]["stage"]=="RUNNING", d' \
  "$WORK/body" || fail "GET $CM: not the map that was applied"

api 200 GET "$P/configmaps?watch=true&fieldSelector=metadata.name%3D$CM&timeoutSeconds=1"
python3 - "$WORK/body" "$CM" <<'PY' || fail "the watch did not stream an ADDED event for $CM"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert any(e["type"] == "ADDED" and e["object"]["metadata"]["name"] == sys.argv[2] for e in ev), ev
PY
say "   (the watch streamed ADDED $CM)"

api 200 PATCH "$P/configmaps/$CM" -H 'Content-Type: application/merge-patch+json' \
  --data '{"data":{"gate-proxy.deploy-check":"1"}}'
[ "$(kc -n "$NS" get configmap "$CM" -o jsonpath='{.data.gate-proxy\.deploy-check}')" = 1 ] \
  || fail "the PATCH answered 200 but the key is not in the map"
api 200 PATCH "$P/configmaps/$CM" -H 'Content-Type: application/merge-patch+json' \
  --data '{"data":{"gate-proxy.deploy-check":null}}'

api 403 GET "$P/configmaps/other";       forbidden_body 'get resource "configmaps"'
api 403 PATCH "$P/configmaps/other" -H 'Content-Type: application/merge-patch+json' \
  --data '{"data":{"x":"2"}}';           forbidden_body 'patch resource "configmaps"'
[ "$(kc -n "$NS" get configmap other -o jsonpath='{.data.x}')" = 1 ] || fail "other was changed"
api 403 GET "$P/configmaps";             forbidden_body 'list resource "configmaps"'
api 403 GET "$P/configmaps?watch=true";  forbidden_body 'watch resource "configmaps"'
api 403 POST "$P/configmaps" -H 'Content-Type: application/json' \
  --data '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"new"}}'
forbidden_body 'create resource "configmaps"'
api 403 GET "$P/secrets/s";              forbidden_body 'get resource "secrets"'
api 403 GET "$P/secrets";                forbidden_body 'list resource "secrets"'
api 403 DELETE "$P/configmaps/$CM";      forbidden_body 'delete resource "configmaps"'

# ---- 3. gate-proxy with the ServiceAccount's token -----------------------
say "3. gate-proxy status with the ServiceAccount's token (kubeconfig; namespace from its context)"
{
  echo "apiVersion: v1"
  echo "kind: Config"
  echo "clusters:"
  echo "- name: fixture"
  echo "  cluster:"
  echo "    server: $URL"
  echo "    certificate-authority: $CA"
  echo "contexts:"
  echo "- name: sa"
  echo "  context:"
  echo "    cluster: fixture"
  echo "    namespace: $NS"
  echo "    user: sa"
  echo "current-context: sa"
  echo "users:"
  echo "- name: sa"
  echo "  user:"
  echo "    tokenFile: $WORK/sa.token"
} >"$WORK/sa.kubeconfig"

rc=0
"$GP_BIN" status --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" >"$WORK/status.txt" 2>&1 || rc=$?
[ $rc -eq 0 ] || { cat "$WORK/status.txt" >&2; fail "gate-proxy status --k8s $CM exited $rc"; }
grep -q "^control     configmap $NS/$CM (resourceVersion [0-9]*)" "$WORK/status.txt" \
  && grep -q "^requested   active=BLUE stage=RUNNING" "$WORK/status.txt" \
  || { cat "$WORK/status.txt" >&2; fail "gate-proxy status --k8s $CM shows something else"; }
say "   status --k8s $CM: exit 0; $(grep -m1 '^requested' "$WORK/status.txt")"

rc=0
"$GP_BIN" status --k8s other --kubeconfig "$WORK/sa.kubeconfig" >"$WORK/status-other.txt" 2>&1 || rc=$?
[ $rc -ne 0 ] || { cat "$WORK/status-other.txt" >&2; fail "gate-proxy status --k8s other succeeded"; }
want="GET configmap $NS/other: 403 Forbidden: configmaps \"other\" is forbidden: User \"system:serviceaccount:$NS:$SA\" cannot get resource \"configmaps\""
grep -qF -- "$want" "$WORK/status-other.txt" \
  || { cat "$WORK/status-other.txt" >&2; fail "gate-proxy status --k8s other: no clear 403 (wanted: $want)"; }
say "   status --k8s other: exit $rc; $(grep -m1 -oF -- "GET configmap $NS/other: 403 Forbidden" "$WORK/status-other.txt")"

say "PASS"
