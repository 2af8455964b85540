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
# The FlinkDeployment CRD is larger than client-side apply's annotation
# limit, hence create.
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
    kc create -f "$WORK/$crd.crd.yml" >/dev/null 2>"$WORK/$crd.crd.err" \
      || grep -q AlreadyExists "$WORK/$crd.crd.err" \
      || fail "kubectl create of the $crd CRD: $(cat "$WORK/$crd.crd.err")"
  done
  kc wait --for=condition=Established --timeout=60s crd/flinkdeployments.flink.apache.org \
    crd/flinkstatesnapshots.flink.apache.org >/dev/null \
    || fail "the Flink operator's CRDs did not become Established within 60 s"
}
