# tests/integration/k8s_lib.sh: the kube-apiserver fixture for the k8s
# tests, sourced after lib.sh. Sets K8S (tests/k8s/apiserver.sh); the test
# sets NS, its namespace.
K8S=$(cd "$(dirname "${BASH_SOURCE[0]}")/../k8s" && pwd)/apiserver.sh
K8S_STARTED=0

# k8s_fixture_up: starts the fixture unless it is running (its first build
# needs Go); fails, saying why, when it cannot. Defines kc (kubectl as the
# admin) and PROXY_KC (the proxy's kubeconfig: the Role of the test).
k8s_fixture_up() {
  if ! "$K8S" status >/dev/null 2>&1; then
    say "starting the Kubernetes API server fixture"
    K8S_STARTED=1
    "$K8S" start >"$WORK/apiserver-start.log" 2>&1 || {
      cat "$WORK/apiserver-start.log" >&2
      fail "the Kubernetes API server fixture did not start (tests/k8s/apiserver.sh start," \
           "which needs a Go toolchain for its first build, see above): this test needs it"
    }
  fi
  "$K8S" status >/dev/null 2>&1 || fail "the Kubernetes API server fixture is not running"
  kc() { "$K8S" kubectl "$@"; }
  PROXY_KC=$("$K8S" kubeconfig proxy)
}

# k8s_fixture_down: at exit, stops the fixture if this test started it,
# else deletes the test's namespace.
k8s_fixture_down() {
  if [ "$K8S_STARTED" = 1 ]; then
    "$K8S" stop >/dev/null 2>&1 || true
  elif "$K8S" status >/dev/null 2>&1; then
    "$K8S" kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  fi
}

# k8s_first_map CONFIGMAP: creates the test's namespace $NS, CONFIGMAP as the
# operator writes it for a first deployment (BLUE, RUNNING, first), and the
# proxy's Role: get, watch and patch on exactly that map, bound to the user
# of PROXY_KC
k8s_first_map() {
  kc create namespace "$NS" >/dev/null
  kc -n "$NS" create configmap "$1" --from-literal=active-deployment-type=BLUE \
    --from-literal=stage=RUNNING --from-literal=is-first-deployment=true >/dev/null
  kc -n "$NS" create role gate-proxy --verb=get,watch,patch --resource=configmaps \
    --resource-name="$1" >/dev/null
  kc -n "$NS" create rolebinding gate-proxy --role=gate-proxy --user=gate-proxy >/dev/null
}

# k8s_write_conf NAME TOPIC CONFIGMAP [key=value...]: a proxy configuration
# in $WORK/NAME.conf steered by CONFIGMAP in $NS, as the Role's user
k8s_write_conf() {
  local name=$1 topic=$2 cm=$3; shift 3
  {
    conf_lines "$topic"
    echo "control.k8s.configmap=$cm"
    echo "control.k8s.namespace=$NS"
    echo "control.k8s.kubeconfig=$PROXY_KC"
    printf '%s\n' "$@"
  } >"$WORK/$name.conf"
}

# k8s_flink_crds: installs the Flink Kubernetes Operator's CRDs
# (FlinkDeployment, FlinkStateSnapshot) unless the fixture has them, and
# waits until both are Established. They come from the operator's API jar
# (META-INF/fabric8/, the files its Helm chart ships as crds/), which
# `tests/flink/e2e.sh build` resolves from Maven into .cache/flink/libs.
# Maven Central carries that jar only up to 1.10.0, so the FlinkDeployment
# schema is brought to the shape of release 1.15.0 by crd_as_1_15 (below)
# before it is installed. The FlinkDeployment CRD is larger than
# client-side apply's annotation limit, hence create.
# crd_as_1_15 FILE: the changes between the 1.10.0 and 1.15.0
# FlinkDeployment CRDs (helm/flink-kubernetes-operator/crds/ at the two
# release tags) that gate-proxy and its tests meet, made in place:
# spec.flinkConfiguration takes any YAML (nested, typed values; 1.13+),
# flinkVersion gains v2_0..v2_2, status gains conditions (the Running
# condition, 1.15) and lifecycleState gains DELETING and DELETED. The other
# changes of those releases are in the pod template and the autoscaler.
crd_as_1_15() {
  python3 - "$1" <<'PY' || fail "could not bring the FlinkDeployment CRD to 1.15's shape"
import sys, yaml
path = sys.argv[1]
crd = yaml.safe_load(open(path))
for v in crd["spec"]["versions"]:
    props = v["schema"]["openAPIV3Schema"]["properties"]
    spec, status = props["spec"]["properties"], props["status"]["properties"]
    spec["flinkConfiguration"] = {"x-kubernetes-preserve-unknown-fields": True}
    for fv in ("v2_0", "v2_1", "v2_2"):
        if fv not in spec["flinkVersion"]["enum"]:
            spec["flinkVersion"]["enum"].append(fv)
    text = {"type": "string"}
    status["conditions"] = {"type": "array", "items": {"type": "object", "properties": {
        "lastTransitionTime": text, "message": text, "observedGeneration": {"type": "integer"},
        "reason": text, "status": text, "type": text}}}
    states = status["lifecycleState"]["enum"]
    states.extend(s for s in ("DELETED", "DELETING") if s not in states)
    states.sort()
yaml.safe_dump(crd, open(path, "w"), sort_keys=False)
PY
}

k8s_flink_crds() {
  local root jar crd
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  jar=$(ls "$root"/.cache/flink/libs/flink-kubernetes-operator-api-*.jar 2>/dev/null | head -n 1)
  [ -n "$jar" ] || fail "no flink-kubernetes-operator-api jar in $root/.cache/flink/libs:" \
    "run tests/flink/e2e.sh build (make test does)"
  for crd in flinkdeployments flinkstatesnapshots; do
    kc get crd "$crd.flink.apache.org" >/dev/null 2>&1 && continue
    python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' \
      "$jar" "META-INF/fabric8/$crd.flink.apache.org-v1.yml" >"$WORK/$crd.crd.yml" \
      || fail "$jar has no META-INF/fabric8/$crd.flink.apache.org-v1.yml"
    [ "$crd" = flinkdeployments ] && crd_as_1_15 "$WORK/$crd.crd.yml"
    kc create -f "$WORK/$crd.crd.yml" >/dev/null 2>"$WORK/$crd.crd.err" \
      || grep -q AlreadyExists "$WORK/$crd.crd.err" \
      || fail "kubectl create of the $crd CRD: $(cat "$WORK/$crd.crd.err")"
  done
  wait_for "the Flink operator's CRDs to be Established" 60 crd_established \
    flinkdeployments.flink.apache.org flinkstatesnapshots.flink.apache.org
}

# crd_established NAME...: each CRD's Established condition is True. (`kubectl
# wait` fails at once on a CRD whose status has no conditions yet.)
crd_established() {
  local c
  for c in "$@"; do
    [ "$(kc get crd "$c" -o jsonpath='{.status.conditions[?(@.type=="Established")].status}' \
      2>/dev/null)" = True ] || return 1
  done
}

# The Prometheus Operator's PodMonitor CRD, permissive (the fixture runs no
# operator), so that a PodMonitor can be stored and read back.
PM_CRD=podmonitors.monitoring.coreos.com
apply_podmonitor_crd() {
  kc apply -f - >"$WORK/crd.out" 2>&1 <<CRD || { cat "$WORK/crd.out" >&2; fail "the PodMonitor CRD was refused"; }
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: $PM_CRD
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names:
    kind: PodMonitor
    listKind: PodMonitorList
    plural: podmonitors
    singular: podmonitor
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
CRD
}
