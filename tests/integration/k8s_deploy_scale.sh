#!/usr/bin/env bash
# deploy/kubernetes/scale-out/ on a real kube-apiserver (tests/k8s/apiserver.sh,
# no nodes, no controllers): KEDA's ScaledObject CRD (config/crd/bases of
# github.com/kedacore/keda/v2, fetched from the Go module proxy into
# .cache/keda/) is installed, every manifest of the folder is created (a real
# create, stored by the server) and read back; the StatefulSet has
# podManagementPolicy Parallel, POD_NAME from metadata.name (gate.instance),
# terminationGracePeriodSeconds above the transaction timeout (60 s), the
# config sets gate.membership=group and leaves gate.instance empty; a
# ScaledObject trigger without its type and a PDB with both minAvailable and
# maxUnavailable are refused by the server.
: "${GP_BOOTSTRAP:=unused-by-k8s_deploy_scale}"
export GP_BOOTSTRAP
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/k8s_lib.sh"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
MANIFESTS=$REPO/deploy/kubernetes/scale-out
NS=gp-scale-$RUN_ID
KEDA_VERSION=${KEDA_VERSION:-v2.16.1}
KEDA_CRD=$REPO/.cache/keda/$KEDA_VERSION/keda.sh_scaledobjects.yaml
TXN_TIMEOUT_S=60 # above the group default (10 s) and librdkafka's own (60 s)

scale_cleanup() {
  local rc=$?
  kc delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  k8s_fixture_down
  (exit $rc)
  finish_test
}
trap scale_cleanup EXIT

[ -d "$MANIFESTS" ] || fail "no $MANIFESTS"

# ---- KEDA's CRD from the Go module proxy, cached -------------------------
if [ ! -s "$KEDA_CRD" ]; then
  command -v go >/dev/null || fail "no go to fetch KEDA's CRD (github.com/kedacore/keda/v2@$KEDA_VERSION)"
  mkdir -p "$WORK/gomod" "$(dirname "$KEDA_CRD")"
  dir=$(cd "$WORK/gomod" && GOFLAGS=-mod=mod go mod download -json "github.com/kedacore/keda/v2@$KEDA_VERSION" \
        | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] && [ -s "$dir/config/crd/bases/keda.sh_scaledobjects.yaml" ] \
    || fail "go mod download of keda $KEDA_VERSION gave no config/crd/bases/keda.sh_scaledobjects.yaml"
  cp "$dir/config/crd/bases/keda.sh_scaledobjects.yaml" "$KEDA_CRD.tmp" && mv "$KEDA_CRD.tmp" "$KEDA_CRD"
fi

k8s_fixture_up
say "API server $("$K8S" url); namespace $NS; KEDA CRD $KEDA_VERSION"

kc apply --server-side -f "$KEDA_CRD" >"$WORK/crd.out" 2>&1 || { cat "$WORK/crd.out" >&2; fail "KEDA's ScaledObject CRD refused"; }
wait_for "KEDA's ScaledObject CRD to be Established" 60 crd_established scaledobjects.keda.sh
# served: poll discovery with a deadline
deadline=$(( $(date +%s) + 60 ))
until kc api-resources --api-group=keda.sh 2>/dev/null | grep -q '^scaledobjects'; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "keda.sh/v1alpha1 scaledobjects not served within 60 s"
  sleep 0.5
done

kc create namespace "$NS" >/dev/null || fail "cannot create namespace $NS"

# ---- 1. every manifest created -------------------------------------------
n=0
for f in "$MANIFESTS"/*.yaml; do
  kc -n "$NS" create -f "$f" -o name >"$WORK/create.out" 2>&1 || { cat "$WORK/create.out" >&2; fail "$(basename "$f") refused"; }
  obj=$(cat "$WORK/create.out")
  kc -n "$NS" get "$obj" >/dev/null || fail "$obj not stored"
  say "   created $(basename "$f"): $obj"
  n=$((n + 1))
done
[ "$n" -ge 5 ] || fail "only $n manifests in $MANIFESTS"

# ---- 2. the StatefulSet's fields ------------------------------------------
j() { kc -n "$NS" get "$1" -o "jsonpath=$2"; }
pmp=$(j statefulset/gate-proxy '{.spec.podManagementPolicy}')
[ "$pmp" = Parallel ] || fail "podManagementPolicy is '$pmp'"
fp=$(j statefulset/gate-proxy '{.spec.template.spec.containers[0].env[?(@.name=="POD_NAME")].valueFrom.fieldRef.fieldPath}')
[ "$fp" = metadata.name ] || fail "POD_NAME comes from '$fp', not metadata.name"
grace=$(j statefulset/gate-proxy '{.spec.template.spec.terminationGracePeriodSeconds}')
[ -n "$grace" ] && [ "$grace" -gt "$TXN_TIMEOUT_S" ] || fail "terminationGracePeriodSeconds '$grace' not above $TXN_TIMEOUT_S"
ro=$(j statefulset/gate-proxy '{.spec.template.spec.containers[0].securityContext.readOnlyRootFilesystem}')
nonroot=$(j statefulset/gate-proxy '{.spec.template.spec.securityContext.runAsNonRoot}')
[ "$ro" = true ] && [ "$nonroot" = true ] || fail "securityContext: readOnlyRootFilesystem=$ro runAsNonRoot=$nonroot"
cmname=$(j statefulset/gate-proxy '{.spec.template.spec.volumes[0].configMap.name}')
conf=$(j "configmap/$cmname" '{.data.gate-proxy\.conf}')
grep -qx 'gate.membership=group' <<<"$conf" || fail "configmap $cmname: no gate.membership=group"
if grep -q '^gate.instance=.' <<<"$conf"; then fail "configmap $cmname sets gate.instance (all pods would share it)"; fi
say "2. StatefulSet: podManagementPolicy=$pmp POD_NAME<-$fp grace=${grace}s > ${TXN_TIMEOUT_S}s; config $cmname group"
kind=$(j scaledobject/gate-proxy '{.spec.scaleTargetRef.kind}')
max=$(j scaledobject/gate-proxy '{.spec.maxReplicaCount}')
[ "$kind" = StatefulSet ] && [ "$max" -ge 1 ] || fail "ScaledObject targets '$kind', max '$max'"
maxu=$(j pdb/gate-proxy '{.spec.maxUnavailable}')
[ "$maxu" = 1 ] || fail "PDB maxUnavailable '$maxu'"

# ---- 3. broken objects are refused ----------------------------------------
kc -n "$NS" create -f - >"$WORK/bad-so.out" 2>&1 <<'BAD' && fail "a ScaledObject trigger without type was accepted"
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: broken
spec:
  scaleTargetRef: {name: gate-proxy}
  triggers:
    - metadata: {lagThreshold: "10"}
BAD
grep -q 'type' "$WORK/bad-so.out" || { cat "$WORK/bad-so.out" >&2; fail "bad ScaledObject refused, but not for its type"; }
say "3. refused: $(head -n 1 "$WORK/bad-so.out")"
kc -n "$NS" create -f - >"$WORK/bad-pdb.out" 2>&1 <<'BAD' && fail "a PDB with minAvailable and maxUnavailable was accepted"
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: broken
spec:
  minAvailable: 1
  maxUnavailable: 1
  selector: {matchLabels: {app: x}}
BAD
grep -q 'minAvailable' "$WORK/bad-pdb.out" || { cat "$WORK/bad-pdb.out" >&2; fail "bad PDB refused, but not for minAvailable"; }
say "   refused: $(head -n 1 "$WORK/bad-pdb.out")"
say "OK"
