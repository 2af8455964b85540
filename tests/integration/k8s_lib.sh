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
