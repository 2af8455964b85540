#!/usr/bin/env bash
# deploy/helm/gate-proxy on a real kube-apiserver (tests/k8s/apiserver.sh,
# RBAC on; no nodes and no controllers, so the objects are checked, not
# pods), with Helm built from its Go module (tests/k8s/helm.sh):
#   1. helm lint --strict with deploy/helm/orders-values.yaml;
#   2. missing or contradictory values are refused by helm install with the
#      chart's message (asserted), and nothing is installed;
#   3. helm template equals the reviewed manifests: deploy/helm/orders-values.yaml
#      renders deploy/kubernetes/*.yaml, with membership=group and 3
#      replicas deploy/kubernetes/scale-out/ (less KEDA's ScaledObject),
#      field by field (tests/integration/helm_compare.py);
#   4. gate-proxy itself reads each rendered configuration file: `run` with
#      a kubeconfig that does not exist must get past the configuration
#      (all keys and the cross-field checks) and stop at the kubeconfig
#      (with control.mode=file: wait for the map file); a rendered file
#      that it refuses fails the test, and one with a bad value given
#      through values.config must be refused;
#   5. helm install of two pipelines, orders and payments, side by side in
#      one namespace: no name is shared, and `kubectl auth can-i` as each
#      ServiceAccount may get, watch and patch its own blue/green map and
#      neither the other's nor list ConfigMaps;
#   6. helm upgrade with a changed value rewrites the configuration and the
#      pod template's checksum/config annotation (new generation), leaves
#      the other release alone, an unchanged upgrade keeps the checksum,
#      and the blue/green map's state (moved to GREEN meanwhile) is kept.
# Prints `helm: install=... upgrade=... refused=... can_i=... ok`, appended
# to $GP_INSTALL_LINES too (tests/run-all.sh repeats it at the end). Needs
# no broker.
: "${GP_BOOTSTRAP:=unused-by-helm}"
export GP_BOOTSTRAP
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/k8s_lib.sh"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
CHART=$REPO/deploy/helm/gate-proxy
ORDERS=$REPO/deploy/helm/orders-values.yaml
MANIFESTS=$REPO/deploy/kubernetes
NS=gp-helm-$RUN_ID

helm_cleanup() {
  local rc=$?
  k8s_fixture_down
  (exit $rc)
  finish_test
}
trap helm_cleanup EXIT

[ -f "$CHART/Chart.yaml" ] || fail "no $CHART/Chart.yaml"

# ---- Helm and the API server ----------------------------------------------
HELM=$(bash "$REPO/tests/k8s/helm.sh" path 2>"$WORK/helm-build.log") \
  || { cat "$WORK/helm-build.log" >&2; fail "tests/k8s/helm.sh could not build helm (above)"; }
# helm's own files (repositories, cache, registry logins) in the work dir
export HELM_CONFIG_HOME=$WORK/helm/config HELM_CACHE_HOME=$WORK/helm/cache HELM_DATA_HOME=$WORK/helm/data
say "$("$HELM" version --short)"
k8s_fixture_up
ADMIN_KC=$("$K8S" kubeconfig admin)
h() { "$HELM" --kubeconfig "$ADMIN_KC" "$@"; }
kc create namespace "$NS" >/dev/null || fail "cannot create namespace $NS"
say "API server $("$K8S" url); namespace $NS"

# ---- 1. lint ---------------------------------------------------------------
say "1. helm lint --strict -f deploy/helm/orders-values.yaml"
h lint --strict "$CHART" -f "$ORDERS" >"$WORK/lint.out" 2>&1 \
  || { cat "$WORK/lint.out" >&2; fail "helm lint failed"; }
grep -q '1 chart(s) linted, 0 chart(s) failed' "$WORK/lint.out" \
  || { cat "$WORK/lint.out" >&2; fail "helm lint did not lint the chart"; }
say "   $(tail -n 1 "$WORK/lint.out")"

# ---- 2. refused values -----------------------------------------------------
say "2. values that are missing or contradict each other are refused by helm install"
BASE=(--set pipeline=p --set kafka.bootstrapServers=k:9092 --set 'source.topics={t}')
REFUSED=0
# refuse WANT ARGS...: helm install must fail and say WANT, and leave no release
refuse() {
  local want=$1 rc=0; shift
  h install refused "$CHART" -n "$NS" "$@" >"$WORK/refused.out" 2>&1 || rc=$?
  [ $rc -ne 0 ] || { h uninstall refused -n "$NS" >/dev/null 2>&1 || true; fail "helm install $* was accepted"; }
  grep -qF -- "$want" "$WORK/refused.out" \
    || { cat "$WORK/refused.out" >&2; fail "helm install $*: refused without saying: $want"; }
  h status refused -n "$NS" >/dev/null 2>&1 && fail "helm install $* failed but left a release"
  say "   $(grep -m1 -oF -- "$want" "$WORK/refused.out")"
  REFUSED=$((REFUSED + 1))
}
refuse "values.pipeline is required: the pipeline's name, gate.pipeline (--set pipeline=orders)" \
  --set kafka.bootstrapServers=k:9092 --set 'source.topics={t}'
refuse "values.kafka.bootstrapServers is required" --set pipeline=p --set 'source.topics={t}'
refuse "values.source.topics is required" --set pipeline=p --set kafka.bootstrapServers=k:9092
refuse 'values.pipeline "orders/eu": 1 to 100 characters' "${BASE[@]}" --set pipeline=orders/eu
refuse "values.replicas is 3 with membership=assign" "${BASE[@]}" --set replicas=3
refuse "values.config.gate.pipeline: the chart sets gate.pipeline" "${BASE[@]}" \
  --set-json 'config={"gate.pipeline":"x"}'
refuse "values.control.mode=file with membership=group" "${BASE[@]}" --set control.mode=file \
  --set membership=group --set replicas=2
refuse 'values.membership "members": assign (one instance, a Deployment) or group' "${BASE[@]}" --set membership=members
# values.schema.json: a misspelt value and one out of gate-proxy's range
refuse "additional properties 'pipelin' not allowed" "${BASE[@]}" --set pipelin=orders
refuse "at '/alignMs': minimum: got 0, want 1" "${BASE[@]}" --set alignMs=0
[ "$(kc -n "$NS" get all,configmaps,roles,secrets -l app.kubernetes.io/instance=refused -o name | wc -l)" = 0 ] \
  || fail "a refused install left objects behind"

# ---- 3. the rendered objects are the reviewed manifests --------------------
say "3. helm template equals the reviewed manifests"
h template orders "$CHART" -n "$NS" -f "$ORDERS" --set control.create=true \
  --set metrics.podMonitor.enabled=true >"$WORK/orders.yaml" 2>&1 \
  || { cat "$WORK/orders.yaml" >&2; fail "helm template orders failed"; }
python3 "$REPO/tests/integration/helm_compare.py" "$WORK/orders.yaml" orders-gate-proxy \
  "$MANIFESTS"/*.yaml >"$WORK/compare.out" 2>&1 \
  || { cat "$WORK/compare.out" >&2; fail "the chart (orders-values.yaml) differs from deploy/kubernetes/ (above)"; }
sed '$d' "$WORK/compare.out"
COMPARED=$(sed -n 's/^compared=//p' "$WORK/compare.out")
h template orders "$CHART" -n "$NS" -f "$ORDERS" --set membership=group --set replicas=3 \
  --set resources.requests.cpu=500m --set resources.requests.memory=256Mi \
  --set-string resources.limits.cpu=2 --set resources.limits.memory=1Gi >"$WORK/scale.yaml" 2>&1 \
  || { cat "$WORK/scale.yaml" >&2; fail "helm template (membership=group) failed"; }
python3 "$REPO/tests/integration/helm_compare.py" "$WORK/scale.yaml" orders-gate-proxy \
  "$MANIFESTS"/scale-out/{configmap-config,statefulset,service,pdb}.yaml \
  "$MANIFESTS"/{serviceaccount,role,rolebinding}.yaml >"$WORK/compare-scale.out" 2>&1 \
  || { cat "$WORK/compare-scale.out" >&2; fail "the chart (membership=group) differs from deploy/kubernetes/scale-out/ (above)"; }
sed '$d' "$WORK/compare-scale.out"
COMPARED=$((COMPARED + $(sed -n 's/^compared=//p' "$WORK/compare-scale.out")))

# ---- 4. gate-proxy reads the rendered configuration ------------------------
say "4. gate-proxy run on each rendered configuration file gets past the configuration"
# conf_of RENDERED OUT: the gate-proxy.conf of the rendered config map
conf_of() {
  python3 - "$1" >"$2" <<'PY' || fail "no gate-proxy.conf in $1"
import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "ConfigMap" and "gate-proxy.conf" in d.get("data", {}):
        sys.stdout.write(d["data"]["gate-proxy.conf"])
        break
else:
    sys.exit(1)
PY
}
# proxy_reads CONF: 0 when gate-proxy accepts every key of CONF and stops at
# the control plane's kubeconfig (which does not exist), 1 when it refuses
# the configuration; the output is left in CONF.out
proxy_reads() {
  local rc=0
  timeout 30 "$GP_BIN" run -c "$1" -X "control.k8s.kubeconfig=$WORK/no.kubeconfig" \
    >"$1.out" 2>&1 || rc=$?
  if grep -qE 'Sanitizer|runtime error:' "$1.out"; then
    cat "$1.out" >&2
    fail "gate-proxy run -c $1: sanitizer report (above)"
  fi
  if [ $rc = 2 ] && grep -qF "kubernetes: $WORK/no.kubeconfig: No such file or directory" "$1.out" &&
     ! grep -qF "gate-proxy: $1:" "$1.out"; then
    return 0
  fi
  return 1
}
CONF_OK=0
for r in orders scale; do
  conf_of "$WORK/$r.yaml" "$WORK/$r.conf"
  proxy_reads "$WORK/$r.conf" \
    || { cat "$WORK/$r.conf" "$WORK/$r.conf.out" >&2; fail "gate-proxy refused the configuration rendered for $r (above)"; }
  say "   $r: $(wc -l <"$WORK/$r.conf") keys accepted"
  CONF_OK=$((CONF_OK + 1))
done
# control.mode=file: past the configuration, the proxy waits for its map
h template file "$CHART" --set pipeline=p --set kafka.bootstrapServers=127.0.0.1:1 --set 'source.topics={t}' \
  --set control.mode=file >"$WORK/file.yaml" 2>&1 || { cat "$WORK/file.yaml" >&2; fail "helm template (control.mode=file) failed"; }
conf_of "$WORK/file.yaml" "$WORK/file.conf"
rc=0
timeout 5 "$GP_BIN" run -c "$WORK/file.conf" -X "control.file=$WORK/none/bluegreen.json" \
  -X "http.listen=127.0.0.1:$((20000 + RANDOM % 20000))" >"$WORK/file.conf.out" 2>&1 || rc=$?
grep -qF "waiting for a valid control map: $WORK/none/bluegreen.json: not found" "$WORK/file.conf.out" &&
  [ $rc = 124 ] && ! grep -qE 'Sanitizer|runtime error:' "$WORK/file.conf.out" \
  || { cat "$WORK/file.conf" "$WORK/file.conf.out" >&2; fail "gate-proxy refused the configuration rendered for control.mode=file (exit $rc, above)"; }
say "   control.mode=file: $(wc -l <"$WORK/file.conf") keys accepted, waiting for its map"
CONF_OK=$((CONF_OK + 1))
h template bad "$CHART" "${BASE[@]}" --set-json 'config={"gate.delivery":"sometimes"}' \
  --set alignMs=86400000 >"$WORK/bad.yaml" 2>&1 || { cat "$WORK/bad.yaml" >&2; fail "helm template bad failed"; }
conf_of "$WORK/bad.yaml" "$WORK/bad.conf"
# a large number is written as gate-proxy reads it, not as 8.64e+07
grep -qx 'gate.cutoff.align.ms=86400000' "$WORK/bad.conf" || fail "alignMs=86400000 rendered as $(grep align "$WORK/bad.conf")"
proxy_reads "$WORK/bad.conf" && fail "gate-proxy accepted gate.delivery=sometimes: the check cannot fail"
grep -qF "gate.delivery: expected one of exactly-once, at-least-once" "$WORK/bad.conf.out" \
  || { cat "$WORK/bad.conf.out" >&2; fail "gate-proxy refused bad.conf without naming gate.delivery"; }
say "   a bad value through values.config: $(grep -m1 -o 'gate.delivery: .*' "$WORK/bad.conf.out")"

# ---- 5. two pipelines side by side -----------------------------------------
say "5. helm install orders and payments into $NS"
# The PodMonitor CRD, permissive (the fixture runs no Prometheus Operator),
# so that orders can install its PodMonitor; kept, like k8s_deploy.sh's.
if ! kc get crd "$PM_CRD" >/dev/null 2>&1; then
  apply_podmonitor_crd
fi
crd_served() { kc -n "$NS" get podmonitors.monitoring.coreos.com >/dev/null 2>&1; }
wait_for "the PodMonitor CRD to be served" 30 crd_served
ORDERS_ARGS=(-f "$ORDERS" --set control.create=true --set metrics.podMonitor.enabled=true)
PAY_ARGS=(--set pipeline=payments --set kafka.bootstrapServers=my-cluster-kafka-bootstrap.kafka:9092
  --set 'source.topics={payments,refunds}' --set control.create=true --set alignMs=60000)
h install orders "$CHART" -n "$NS" "${ORDERS_ARGS[@]}" >"$WORK/install-orders.out" 2>&1 \
  || { cat "$WORK/install-orders.out" >&2; fail "helm install orders failed"; }
h install payments "$CHART" -n "$NS" "${PAY_ARGS[@]}" >"$WORK/install-payments.out" 2>&1 \
  || { cat "$WORK/install-payments.out" >&2; fail "helm install payments failed"; }
INSTALLED=0
for r in orders payments; do
  grep -q '^STATUS: deployed' "$WORK/install-$r.out" \
    || { cat "$WORK/install-$r.out" >&2; fail "helm install $r: not deployed"; }
  kc -n "$NS" get serviceaccounts,roles,rolebindings,configmaps,deployments,statefulsets,podmonitors \
    -l "app.kubernetes.io/instance=$r" -o name | sort >"$WORK/objects-$r.txt"
  say "   $r: $(tr '\n' ' ' <"$WORK/objects-$r.txt")"
  INSTALLED=$((INSTALLED + 1))
done
[ "$(wc -l <"$WORK/objects-orders.txt")" = 7 ] || fail "orders: $(wc -l <"$WORK/objects-orders.txt") objects, not 7"
[ "$(wc -l <"$WORK/objects-payments.txt")" = 6 ] || fail "payments: $(wc -l <"$WORK/objects-payments.txt") objects, not 6"
comm -12 "$WORK/objects-orders.txt" "$WORK/objects-payments.txt" >"$WORK/shared.txt"
[ ! -s "$WORK/shared.txt" ] || fail "both releases own: $(cat "$WORK/shared.txt")"
grep -qx 'configmap/orders-configmap' "$WORK/objects-orders.txt" \
  && grep -qx 'configmap/payments-configmap' "$WORK/objects-payments.txt" \
  || fail "the blue/green maps are not orders-configmap and payments-configmap"
[ "$(kc -n "$NS" get configmap payments-gate-proxy-config -o jsonpath='{.data.gate-proxy\.conf}' \
     | grep -c '^gate.source.topics=payments,refunds$')" = 1 ] || fail "payments: source topics not in its config"

# ---- can-i as each ServiceAccount ------------------------------------------
# can_i WANT VERB RESOURCE AS: kubectl auth can-i as system:serviceaccount:NS:AS
CAN_I=0
CAN_I_ALL=0
can_i() {
  local got
  CAN_I_ALL=$((CAN_I_ALL + 1))
  got=$(kc -n "$NS" auth can-i "$2" "$3" --as="system:serviceaccount:$NS:$4" 2>&1 || true)
  [ "$got" = "$1" ] || fail "can-i $2 $3 as $4: '$got', expected $1"
  CAN_I=$((CAN_I + 1))
}
for pair in orders:payments payments:orders; do
  own=${pair%%:*} other=${pair##*:}
  sa=$own-gate-proxy
  for verb in get watch patch; do can_i yes "$verb" "configmap/$own-configmap" "$sa"; done
  can_i no get "configmap/$other-configmap" "$sa"
  can_i no patch "configmap/$other-configmap" "$sa"
  can_i no list configmaps "$sa"
  can_i no create configmaps "$sa"
  can_i no get "configmap/$own-gate-proxy-config" "$sa"
  say "   $sa: get/watch/patch configmap/$own-configmap yes; get/patch configmap/$other-configmap, list, create, its config no"
done

# ---- 6. helm upgrade -------------------------------------------------------
say "6. helm upgrade orders with latenessMs=30000"
dep() { kc -n "$NS" get deployment "$1-gate-proxy" -o jsonpath="$2"; }
SUM='{.spec.template.metadata.annotations.checksum/config}'
sum0=$(dep orders "$SUM")
gen0=$(dep orders '{.metadata.generation}')
psum0=$(dep payments "$SUM")
[ -n "$sum0" ] || fail "no checksum/config annotation on the orders pod template"
# the map moves on meanwhile, as a hand-over moves it
kc -n "$NS" patch configmap orders-configmap --type merge \
  -p '{"data":{"active-deployment-type":"GREEN","gate-proxy.status":"x"}}' >/dev/null
h upgrade orders "$CHART" -n "$NS" "${ORDERS_ARGS[@]}" >"$WORK/upgrade0.out" 2>&1 \
  || { cat "$WORK/upgrade0.out" >&2; fail "helm upgrade orders (no change) failed"; }
[ "$(dep orders "$SUM")" = "$sum0" ] || fail "an upgrade without a change moved the checksum"
h upgrade orders "$CHART" -n "$NS" "${ORDERS_ARGS[@]}" --set latenessMs=30000 >"$WORK/upgrade.out" 2>&1 \
  || { cat "$WORK/upgrade.out" >&2; fail "helm upgrade orders failed"; }
sum1=$(dep orders "$SUM")
gen1=$(dep orders '{.metadata.generation}')
[ "$sum1" != "$sum0" ] || fail "helm upgrade with a changed value kept checksum/config $sum0"
[ "$gen1" -gt "$gen0" ] || fail "the Deployment's generation stayed $gen0: its pods would not roll"
kc -n "$NS" get configmap orders-gate-proxy-config -o jsonpath='{.data.gate-proxy\.conf}' >"$WORK/upgraded.conf"
grep -qx 'gate.lateness.ms=30000' "$WORK/upgraded.conf" || fail "the upgraded config has no gate.lateness.ms=30000"
[ "$(dep payments "$SUM")" = "$psum0" ] || fail "upgrading orders changed payments"
[ "$(kc -n "$NS" get configmap orders-configmap -o jsonpath='{.data.active-deployment-type}/{.data.gate-proxy\.status}')" = GREEN/x ] \
  || fail "helm upgrade rewrote the blue/green map orders-configmap"
proxy_reads "$WORK/upgraded.conf" \
  || { cat "$WORK/upgraded.conf.out" >&2; fail "gate-proxy refused the upgraded configuration"; }
say "   checksum/config ${sum0:0:12} -> ${sum1:0:12}, generation $gen0 -> $gen1, gate.lateness.ms=30000; payments unchanged; orders-configmap still GREEN"

h uninstall orders payments -n "$NS" >"$WORK/uninstall.out" 2>&1 \
  || { cat "$WORK/uninstall.out" >&2; fail "helm uninstall failed"; }
[ "$(kc -n "$NS" get configmap orders-configmap -o jsonpath='{.data.active-deployment-type}')" = GREEN ] \
  || fail "helm uninstall deleted the blue/green map orders-configmap"
say "   uninstalled; the blue/green maps are kept"

LINE="helm: install=$INSTALLED upgrade=rolled refused=$REFUSED can_i=$CAN_I/$CAN_I_ALL"
LINE+=" compared=$COMPARED config_ok=$CONF_OK lint=ok helm=$("$HELM" version --template '{{.Version}}') ok"
echo "$LINE"
[ -z "${GP_INSTALL_LINES:-}" ] || echo "$LINE" >>"$GP_INSTALL_LINES"
say "PASS"
