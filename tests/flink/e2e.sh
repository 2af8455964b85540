#!/usr/bin/env bash
# Real Flink jobs (Flink 2.2.1, flink-connector-kafka 5.0.0-2.2, in a
# MiniCluster) through blue -> green -> blue behind gate-proxy, compared with
# the same jobs run once uninterrupted (docs/FLINK.md).
#
#   tests/flink/e2e.sh build      resolve the jars (once, into .cache/m2 and
#                                 .cache/flink/libs) and build the jobs and
#                                 examples/flink
#   tests/flink/e2e.sh exact      the exact path: CLI and a control file
#   tests/flink/e2e.sh exact2     the exact path with the proxy as 2 instances
#                                 in one consumer group (gate.membership=group):
#                                 T agreed from their committed promises, each
#                                 instance SIGKILLed once per hop
#   tests/flink/e2e.sh abort      an abandoned hand-over (Abort.java): the
#                                 running total, `gate-proxy abort` after T,
#                                 once during the split and once after the
#                                 close; the survivor (blue) must write what
#                                 the uninterrupted job writes
#   tests/flink/e2e.sh operator   FLIP-504's sequence on the real
#                                 kube-apiserver fixture (started here when
#                                 it is not running)
#   tests/flink/e2e.sh controls   the five negative controls: each rule of the
#                                 recipe broken once, with the failure it causes
#   tests/flink/e2e.sh handover   the orchestrated exact path: `gate-proxy
#                                 handover` moves three job pairs blue -> green
#                                 -> blue through FlinkDeployments on the
#                                 kube-apiserver fixture (the operator's CRDs
#                                 installed from its operator-api jar), with a
#                                 STAND-IN for the Flink Kubernetes Operator
#                                 (Operator.java: no pod runs here) running the
#                                 jobs in the MiniCluster; each command is
#                                 SIGKILLed at each of its steps and run again
#   tests/flink/e2e.sh handover-faults
#                                 the same scene with one job (the running
#                                 total) over twelve hops, each with one fault
#                                 (Faults.java): a savepoint error, a failed
#                                 start, a stale savepoint path, slow steps,
#                                 409s, the API server away for 40 s (it is
#                                 restarted: tests/k8s/apiserver.sh restart),
#                                 drain-on-savepoint-deletion true, a stop
#                                 that times out, a snapshot not created, the
#                                 old job ended before the suspend, snapshot
#                                 resources off, the new job failed after a
#                                 checkpoint; each stops the command with its
#                                 error (snapshot resources off: none), and a
#                                 rerun once it is cleared completes
#   tests/flink/e2e.sh standin    the operator stand-in alone (StandinCheck.java,
#                                 no gate-proxy): its real-operator behaviours
#                                 (effective configuration, validation, drain,
#                                 legacy savepoint mode, NOOP suspends, a failed
#                                 job's checkpoint), one `standin:` line each
#
# The runs need GP_BOOTSTRAP (a broker: tests/kafka/broker.sh) and GP_BIN,
# GP_CHECK, GP_PRODUCE (set by ctest). Each prints its `e2e:` or `control:`
# lines, and appends them to $GP_E2E_LINES when that is set (make test and
# make e2e print them at the end). GP_FLINK_HEAP sets the JVM heap (default
# 1500m). GP_HANDOVER_FAULTS sets the operator stand-in's faults for the
# handover path (Orchestrated.java, Operator.java), e.g.
# "window-green=slow=1500;running-blue=conflict". GP_ABORT_KILLS=off runs
# the abort path with no proxy SIGKILLed; GP_ABORT_REDELIVER=true|false sets
# its proxies' gate.abort.redeliver. GP_HANDOVER_KILLS=0 runs
# the handover path with no command or proxy SIGKILLed (a hand-over's time
# undisturbed: its e2e-hop: lines); GP_CHECKPOINT_REQUEST=no runs its
# commands with --no-checkpoint-request.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CACHE=$ROOT/.cache
LIBS=$CACHE/flink/libs
OUT=$CACHE/flink/target
JAR=$OUT/gate-proxy-flink-e2e-0.1.0.jar

mvn_build() { # POM OUTDIR [goals...]
  local pom=$1 out=$2; shift 2
  local offline=()
  [ -f "$LIBS/.complete" ] && offline=(-o)
  mvn -q -B "${offline[@]}" -f "$pom" -Dmaven.repo.local="$CACHE/m2" -Dgp.out="$out" \
    -Dstyle.color=never "$@"
}

build() {
  command -v mvn >/dev/null || { echo "e2e.sh: mvn not found (scripts/install-deps.sh test)" >&2; exit 1; }
  mkdir -p "$CACHE/flink"
  local first=0
  if [ ! -f "$LIBS/.complete" ]; then
    first=1
    echo "e2e.sh: resolving Flink 2.2.1 and flink-connector-kafka 5.0.0-2.2 from Maven Central (once)..." >&2
    rm -rf "$LIBS"
  fi
  # The first build runs online and resolves everything, plugins included;
  # later ones are offline.
  { mvn_build "$HERE/pom.xml" "$OUT" package \
      $( [ $first = 1 ] && echo dependency:copy-dependencies -DoutputDirectory="$LIBS" ) \
    && mvn_build "$ROOT/examples/flink/pom.xml" "$CACHE/flink/example" package; } \
    >"$CACHE/flink/mvn.log" 2>&1 || { tail -n 30 "$CACHE/flink/mvn.log" >&2; exit 1; }
  [ $first = 0 ] || touch "$LIBS/.complete"
  echo "e2e.sh: built $JAR and examples/flink ($CACHE/flink/example/orders-job-0.1.0.jar)" >&2
}

java_run() { # CLASS ARGS...
  [ -f "$JAR" ] || { echo "e2e.sh: $JAR is missing: run tests/flink/e2e.sh build" >&2; exit 1; }
  local cp="$JAR:$(find "$LIBS" -name '*.jar' | sort | tr '\n' ':')"
  local cls=$1; shift
  local rc=0
  set +e
  java "-Xmx${GP_FLINK_HEAP:-1500m}" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -cp "$cp" "gateproxy.e2e.$cls" "$@" 2>"$WORK/java.err" | tee "$WORK/java.out"
  rc=${PIPESTATUS[0]}
  set -e
  if [ -n "${GP_E2E_LINES:-}" ]; then
    grep -E '^(e2e[a-z-]*|control|standin):' "$WORK/java.out" >>"$GP_E2E_LINES" || true
  fi
  if [ "$rc" -ne 0 ]; then
    echo "--- last lines of the JVM's log ($WORK/java.err):" >&2
    grep -v '^\s' "$WORK/java.err" | tail -n 30 >&2 || true
    local log
    for log in "$WORK"/run/proxy*.log "$WORK"/run/handover-*.err "$WORK"/run/apiserver-restart.log; do
      [ -f "$log" ] || continue
      echo "--- last lines of $log:" >&2
      tail -n 30 "$log" >&2 || true
    done
  fi
  return "$rc"
}

cmd=${1:-}
case "$cmd" in
  build) build; exit 0 ;;
  exact|exact2|abort|operator|controls|handover|handover-faults|standin) ;;
  *) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//' >&2; exit 2 ;;
esac

source "$ROOT/tests/integration/lib.sh"

# handover_rbac NS MAP...: the Role of PROXY_KC's user for `gate-proxy
# handover` and its proxies: FlinkDeployments to read, create, patch and
# delete; FlinkStateSnapshots to read and create (a checkpoint of the old
# job); exactly the maps MAP... to follow and patch. No /status: only the
# operator writes that.
handover_rbac() {
  local ns=$1; shift
  local names
  names=$(printf '"%s", ' "$@")
  kc -n "$ns" create -f - >/dev/null <<EOF
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: gate-proxy}
rules:
- apiGroups: [flink.apache.org]
  resources: [flinkdeployments]
  verbs: [get, list, watch, create, patch, delete]
- apiGroups: [flink.apache.org]
  resources: [flinkstatesnapshots]
  verbs: [get, list, watch, create]
- apiGroups: [""]
  resources: [configmaps]
  resourceNames: [${names%, }]
  verbs: [get, watch, patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: gate-proxy}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: gate-proxy}
subjects:
- {apiGroup: rbac.authorization.k8s.io, kind: User, name: gate-proxy}
EOF
}

case "$cmd" in
  exact)
    java_run Handover --path exact --bootstrap "$GP_BOOTSTRAP" --bin "$GP_BIN" --work "$WORK/run" ;;
  exact2)
    java_run Handover --path exact --instances 2 --bootstrap "$GP_BOOTSTRAP" --bin "$GP_BIN" \
      --work "$WORK/run" ;;
  abort)
    java_run Abort --bootstrap "$GP_BOOTSTRAP" --bin "$GP_BIN" --work "$WORK/run" \
      ${GP_ABORT_KILLS:+--kills "$GP_ABORT_KILLS"} ${GP_ABORT_REDELIVER:+--redeliver "$GP_ABORT_REDELIVER"} ;;
  controls)
    java_run Controls --bootstrap "$GP_BOOTSTRAP" --work "$WORK/run" ;;
  operator)
    source "$ROOT/tests/integration/k8s_lib.sh"
    NS=gp-flink-$RUN_ID
    CM=orders-configmap
    trap 'rc=$?; k8s_fixture_down; (exit $rc); finish_test' EXIT
    k8s_fixture_up
    k8s_first_map "$CM"
    java_run Handover --path operator --bootstrap "$GP_BOOTSTRAP" --bin "$GP_BIN" \
      --work "$WORK/run" --k8s "$CM" --namespace "$NS" --kubeconfig "$PROXY_KC" \
      --kubectl "$K8S kubectl" ;;
  handover)
    source "$ROOT/tests/integration/k8s_lib.sh"
    NS=gp-flink-$RUN_ID
    RUN=e2e-ho-$RUN_ID # FlinkDeployments $RUN-<job>-<colour>: at most 45 characters
    trap 'rc=$?; k8s_fixture_down; (exit $rc); finish_test' EXIT
    k8s_fixture_up
    k8s_flink_crds # from the operator-api jar in $LIBS, unless installed
    kc create namespace "$NS" >/dev/null
    maps=()
    for job in stateless window running; do
      # As the operator leaves a first deployment: blue runs.
      kc -n "$NS" create configmap "$RUN-$job" --from-literal=active-deployment-type=BLUE \
        --from-literal=stage=RUNNING --from-literal=is-first-deployment=true >/dev/null
      maps+=("$RUN-$job")
    done
    handover_rbac "$NS" "${maps[@]}"
    java_run Orchestrated --bootstrap "$GP_BOOTSTRAP" --bin "$GP_BIN" --work "$WORK/run" \
      --run "$RUN" --namespace "$NS" --kubeconfig "$PROXY_KC" \
      --api "$("$K8S" url)" --token "$("$K8S" token admin)" --ca "$("$K8S" ca)" \
      ${GP_HANDOVER_FAULTS:+--faults "$GP_HANDOVER_FAULTS"} \
      ${GP_HANDOVER_KILLS:+--command-kills "$GP_HANDOVER_KILLS" --proxy-kills "$GP_HANDOVER_KILLS"} \
      ${GP_CHECKPOINT_REQUEST:+--checkpoint-request "$GP_CHECKPOINT_REQUEST"} ;;
  handover-faults)
    source "$ROOT/tests/integration/k8s_lib.sh"
    NS=gp-flink-$RUN_ID
    RUN=e2e-hf-$RUN_ID # FlinkDeployments $RUN-running-<colour>: at most 45 characters
    trap 'rc=$?; k8s_fixture_down; (exit $rc); finish_test' EXIT
    k8s_fixture_up
    k8s_flink_crds
    kc create namespace "$NS" >/dev/null
    kc -n "$NS" create configmap "$RUN-running" --from-literal=active-deployment-type=BLUE \
      --from-literal=stage=RUNNING --from-literal=is-first-deployment=true >/dev/null
    handover_rbac "$NS" "$RUN-running"
    # The API server is restarted in the run (its data, CA and tokens
    # persist): the URL, token and CA stay valid.
    java_run Faults --bootstrap "$GP_BOOTSTRAP" --bin "$GP_BIN" --work "$WORK/run" \
      --run "$RUN" --namespace "$NS" --kubeconfig "$PROXY_KC" \
      --api "$("$K8S" url)" --token "$("$K8S" token admin)" --ca "$("$K8S" ca)" \
      --apiserver "$K8S" --job running ;;
  standin)
    source "$ROOT/tests/integration/k8s_lib.sh"
    NS=gp-flink-$RUN_ID
    RUN=e2e-si-$RUN_ID # FlinkDeployments $RUN-<case>
    trap 'rc=$?; k8s_fixture_down; (exit $rc); finish_test' EXIT
    k8s_fixture_up
    k8s_flink_crds
    kc create namespace "$NS" >/dev/null
    java_run StandinCheck --bootstrap "$GP_BOOTSTRAP" --work "$WORK/run" --run "$RUN" --namespace "$NS" \
      --api "$("$K8S" url)" --token "$("$K8S" token admin)" --ca "$("$K8S" ca)" ;;
esac
