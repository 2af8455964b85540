#!/usr/bin/env bash
# deploy/kubernetes/handover/ on a real kube-apiserver with the Flink
# Kubernetes Operator's CRDs installed (tests/k8s/apiserver.sh, RBAC on):
#   1. the ServiceAccount, Role and RoleBinding are accepted;
#   2. `kubectl auth can-i` as that ServiceAccount allows exactly what the
#      Role lists (FlinkDeployments get, list, watch, create, patch, delete;
#      FlinkStateSnapshots get, list, watch, create; the one ConfigMap get, patch)
#      and nothing around it (update, the /status subresources, other
#      ConfigMaps, Secrets, Pods, snapshot patches and deletes);
#   3. the example FlinkDeployments are valid against the real CRD, and the
#      ServiceAccount can create them;
#   4. `gate-proxy handover` as that ServiceAccount refuses, with the field
#      and what it saw, an old deployment the operator never ran, and a
#      missing new one; and leaves the map untouched;
#   5. with --to-file it creates the new one suspended, writes the cutover
#      and its step into the map, and (no proxy runs here) stops when no
#      CLEAR_TO_TEARDOWN comes; `gate-proxy status` shows where it is;
#      another pair is refused meanwhile; --abort is refused once the old
#      job was suspended, is taken after T while it runs (no proxy: said to
#      come once one runs), and before T gives every record back to the old
#      colour and clears its keys; a second --abort has nothing to abort;
#   6. a whole hand-over's time, accounted for (docs/DESIGN.md, A hand-over's
#      time): a real proxy on the broker follows the map while records flow,
#      the old colour's group commits as a Flink job does on its checkpoints
#      (kcat committing every 4 s, the job's checkpoint interval), and this
#      script plays the operator's part on the FlinkDeployments' status and
#      honours a FlinkStateSnapshot of checkpoint type (the group commits at
#      once: kcat's close commits; IN_PROGRESS then COMPLETED); `gate-proxy handover` runs four
#      hops: every partition active, then one partition idle, each without
#      and with its checkpoint request (--no-checkpoint-request), and each
#      prints a `hop:` line with the proxy's phases and the command's steps,
#      whose accounting must hold (phases summing to the proxy's whole, the
#      close rule of the case, every step timed, the request said and
#      honoured, the drain within the checkpoint's reach);
#   7. --abort after T with a real proxy on its own source: the hand-over
#      stopped at step clear (the drain check holds the close), --abort waits
#      while the proxy re-delivers to blue what went to green, showing the
#      progress, and reports the count; gp-check --survivor blue finds every
#      record once in blue and the same count re-delivered;
#   8. --abort after T with three proxies in group mode (gate.membership=group,
#      one pipeline, one consumer group, a source of 6 partitions): one
#      member is held in its re-delivery while the others finish theirs and
#      the shared keys say done; --abort waits, from each member's own key,
#      until that member also finished, showing the progress, and reports
#      the count; gp-check --survivor blue finds every record once in blue
#      and the same count re-delivered.
# Needs GP_BOOTSTRAP (a broker) for part 6; no Flink and no operator run here.
: "${GP_BOOTSTRAP:?part 6 runs a proxy: a broker (tests/kafka/broker.sh)}"
command -v kcat >/dev/null || { echo "k8s_handover.sh: kcat not found (part 6's old job)" >&2; exit 1; }
export GP_BOOTSTRAP
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/k8s_lib.sh"

REPO=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$REPO/deploy/kubernetes/handover
NS=gp-handover-rbac-$RUN_ID
SA=gate-proxy-handover
CM=orders-configmap
BG_PIDS=()
declare -A PID=() # part 8's members (lib.sh: start_inst)
stop_bg() { # the stand-in and the old job's group of part 6, the proxy, part 8's members
  local p
  rm -f "$WORK/h8.redelivering"
  kill_all_inst
  for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  BG_PIDS=()
  rm -f "$WORK"/job-*.run
  for p in "$WORK"/job-*.pid; do [ -f "$p" ] && kill -TERM "$(cat "$p")" 2>/dev/null || true; done
  if [ -n "${PROXY_PID:-}" ]; then kill -TERM "$PROXY_PID" 2>/dev/null || true; wait "$PROXY_PID" 2>/dev/null || true; fi
}
trap 'rc=$?; stop_bg; [ $rc = 0 ] || show_logs; rm -f "$WORK/sa.token" "$WORK/sa.kubeconfig"; k8s_fixture_down; (exit $rc); finish_test' EXIT

k8s_fixture_up
k8s_flink_crds
kc create namespace "$NS" >/dev/null

say "1. the ServiceAccount, Role and RoleBinding of $DIR"
for f in serviceaccount role rolebinding; do
  kc -n "$NS" apply -f "$DIR/$f.yaml" >/dev/null || fail "kubectl apply of $f.yaml refused"
done
kc -n "$NS" create configmap "$CM" --from-literal=active-deployment-type=BLUE \
  --from-literal=stage=RUNNING --from-literal=is-first-deployment=true >/dev/null
kc -n "$NS" create configmap other --from-literal=a=b >/dev/null

say "2. kubectl auth can-i as system:serviceaccount:$NS:$SA"
can() { # VERB RESOURCE[/SUBRESOURCE]: yes or no (can-i reads RESOURCE/NAME)
  local res sub=()
  case $2 in */status) sub=(--subresource=status); res=${2%/status} ;; *) res=$2 ;; esac
  kc -n "$NS" auth can-i "$1" "$res" "${sub[@]}" --as="system:serviceaccount:$NS:$SA" 2>/dev/null || true
}
bad=0
expect() { # yes|no VERB RESOURCE
  local got; got=$(can "$2" "$3")
  if [ "$got" = "$1" ]; then
    printf '  %-3s %-8s %s\n' "$got" "$2" "$3"
  else
    say "  expected $1, got '${got:-no answer}': $2 $3"; bad=$((bad + 1))
  fi
}
for v in get list watch create patch delete; do expect yes "$v" flinkdeployments.flink.apache.org; done
for v in get list watch create; do expect yes "$v" flinkstatesnapshots.flink.apache.org; done
for v in get patch; do expect yes "$v" "configmaps/$CM"; done
for v in update deletecollection; do expect no "$v" flinkdeployments.flink.apache.org; done
for v in get patch update; do expect no "$v" flinkdeployments.flink.apache.org/status; done
for v in patch update delete; do expect no "$v" flinkstatesnapshots.flink.apache.org; done
expect no patch flinkstatesnapshots.flink.apache.org/status
expect no get flinksessionjobs.flink.apache.org
for v in watch update delete; do expect no "$v" "configmaps/$CM"; done
for v in get patch; do expect no "$v" configmaps/other; done
for v in list watch create; do expect no "$v" configmaps; done
for v in get list; do expect no "$v" secrets; done
expect no list pods
expect no create events
[ "$bad" = 0 ] || fail "$bad answers of kubectl auth can-i differ from the Role"

say "3. the example FlinkDeployments against the real CRD, created as $SA"
# The CRD from Maven (operator 1.10, the newest there) lists flinkVersion
# values up to v1_20; the examples name a Flink 2 one.
TOKEN=$("$K8S" sa-token "$NS" "$SA")
printf '%s' "$TOKEN" >"$WORK/sa.token"
cat >"$WORK/sa.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: fixture
  cluster:
    server: $("$K8S" url)
    certificate-authority: $("$K8S" ca)
contexts:
- name: sa
  context:
    cluster: fixture
    namespace: $NS
    user: sa
current-context: sa
users:
- name: sa
  user:
    tokenFile: $WORK/sa.token
KC
# The examples as they are written (flinkVersion v2_0, which 1.15's CRD
# takes).
"$K8S" kubectl --kubeconfig "$WORK/sa.kubeconfig" create -f "$DIR/flinkdeployment-blue.yaml" >"$WORK/create.out" 2>&1 \
  || fail "creating orders-blue as $SA: $(cat "$WORK/create.out")"
"$K8S" kubectl --kubeconfig "$WORK/sa.kubeconfig" create --dry-run=server -f "$DIR/flinkdeployment-green.yaml" \
  >"$WORK/create-green.out" 2>&1 || fail "orders-green (dry run) as $SA: $(cat "$WORK/create-green.out")"
[ "$(kc -n "$NS" get flinkdeployment orders-blue -o jsonpath='{.spec.flinkVersion}')" = v2_0 ] \
  || fail "orders-blue's flinkVersion was not stored as written"
[ "$(kc -n "$NS" get flinkdeployment orders-blue -o jsonpath='{.spec.job.upgradeMode}/{.spec.job.state}')" = savepoint/running ] \
  || fail "orders-blue was not stored as written"

say "4. gate-proxy handover as $SA refuses what it cannot hand over"
before=$(kc -n "$NS" get configmap "$CM" -o jsonpath='{.metadata.resourceVersion}')
set +e
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --from orders-blue \
  --to orders-green --timeout 5 >"$WORK/h1.out" 2>"$WORK/h1.err"; rc=$?
set -e
cat "$WORK/h1.err"
[ "$rc" = 1 ] || fail "handover exited $rc, not 1, with an old job the operator never ran"
grep -q "orders-blue is not running: status.lifecycleState=(none)" "$WORK/h1.err" \
  || fail "the refusal does not name the field and what it saw"
kc -n "$NS" patch flinkdeployment orders-blue --subresource status --type merge \
  -p '{"status":{"lifecycleState":"STABLE","observedGeneration":1,"jobStatus":{"state":"RUNNING"}}}' >/dev/null
set +e
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --from orders-blue \
  --to orders-green --timeout 5 >"$WORK/h2.out" 2>"$WORK/h2.err"; rc=$?
set -e
cat "$WORK/h2.err"
[ "$rc" = 1 ] && grep -q "FlinkDeployment $NS/orders-green does not exist" "$WORK/h2.err" \
  && grep -q "spec.job.state: suspended" "$WORK/h2.err" \
  || fail "handover without the new deployment: exit $rc, not the refusal that says to create it suspended"
[ "$(kc -n "$NS" get configmap "$CM" -o jsonpath='{.metadata.resourceVersion}')" = "$before" ] \
  || fail "a refused hand-over changed the map"
# What the released operator would do wrong or refuse is refused before
# anything changes: drain on at the suspend (or unset: the operator's own
# default may be on), no checkpoint directory.
spec_patch() { # PATCH: as the operator would, observed at once (no operator runs here)
  kc -n "$NS" patch flinkdeployment orders-blue --type merge -p "$1" >/dev/null
  local g
  g=$(kc -n "$NS" get flinkdeployment orders-blue -o jsonpath='{.metadata.generation}')
  kc -n "$NS" patch flinkdeployment orders-blue --subresource status --type merge \
    -p "{\"status\":{\"observedGeneration\":$g}}" >/dev/null
}
refuse() { # PATCH WHAT-STDERR-SAYS LABEL
  spec_patch "$1"
  set +e
  "$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --from orders-blue \
    --to orders-green --timeout 5 >"$WORK/r.out" 2>"$WORK/r.err"; rc=$?
  set -e
  [ "$rc" = 1 ] && grep -qF -- "$2" "$WORK/r.err" \
    || fail "$3: exit $rc, not the refusal that says '$2': $(cat "$WORK/r.err")"
  [ "$(kc -n "$NS" get configmap "$CM" -o jsonpath='{.metadata.resourceVersion}')" = "$before" ] \
    || fail "$3: the refused hand-over changed the map"
  say "refused ($3): $(head -c 200 "$WORK/r.err")"
}
D=kubernetes.operator.job.drain-on-savepoint-deletion
refuse "{\"spec\":{\"flinkConfiguration\":{\"$D\":\"true\"}}}" \
  "$D is 'true', not \"false\": the suspend would drain the old job" "drain true"
refuse "{\"spec\":{\"flinkConfiguration\":{\"$D\":null}}}" \
  "$D is '(unset: the operator's default, which may be true)'" "drain unset"
# Nested and typed, as YAML for operator 1.13+ writes it (the CRD takes it).
refuse '{"spec":{"flinkConfiguration":{"kubernetes.operator":{"job":{"drain-on-savepoint-deletion":true}}}}}' \
  "$D is 'true', not \"false\": the suspend would drain the old job" "drain true, nested"
refuse "{\"spec\":{\"flinkConfiguration\":{\"$D\":\"false\",\"kubernetes.operator\":null,\"execution.checkpointing.dir\":null}}}" \
  "has no execution.checkpointing.dir (or its old name state.checkpoints.dir)" "no checkpoint dir"
spec_patch '{"spec":{"flinkConfiguration":{"state.checkpoints.dir":"s3://flink-state/orders/checkpoints"}}}'
set +e
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --from orders-blue \
  --to orders-green --timeout 5 >"$WORK/h3.out" 2>"$WORK/h3.err"; rc=$?
set -e
grep -q "FlinkDeployment $NS/orders-green does not exist" "$WORK/h3.err" \
  || fail "the checkpoint dir by its old name was not taken: $(cat "$WORK/h3.err")"

say "5. --to-file, a stop before T, another pair refused, --abort"
sed 's/state: suspended /state: running   /' "$DIR/flinkdeployment-green.yaml" >"$WORK/green.yaml"
set +e
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --from orders-blue \
  --to orders-green --to-file "$WORK/green.yaml" --timeout 3 >"$WORK/h3.out" 2>"$WORK/h3.err"; rc=$?
set -e
cat "$WORK/h3.out" "$WORK/h3.err"
[ "$rc" = 1 ] && grep -q "no CLEAR_TO_TEARDOWN within 3 s" "$WORK/h3.err" \
  && grep -q "stopped at step clear" "$WORK/h3.err" \
  || fail "handover with no proxy: exit $rc, not a stop at step clear"
grep -q "created $NS/orders-green from .*, suspended (the file says running" "$WORK/h3.out" \
  || fail "--to-file did not say it created orders-green suspended"
[ "$(kc -n "$NS" get flinkdeployment orders-green -o jsonpath='{.spec.job.state}')" = suspended ] \
  || fail "--to-file did not create orders-green suspended"
m() { kc -n "$NS" get configmap "$CM" -o jsonpath="{.data.$1}"; }
[ "$(m active-deployment-type)/$(m stage)" = GREEN/TRANSITIONING ] \
  && [ "$(m 'gate-proxy\.handover\.step')" = clear ] \
  && [ "$(m 'gate-proxy\.handover\.from')/$(m 'gate-proxy\.handover\.to')" = orders-blue/orders-green ] \
  || fail "the map does not hold the cutover and the step: $(kc -n "$NS" get configmap "$CM" -o jsonpath='{.data}')"
"$GP_BIN" status --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" >"$WORK/status.out" 2>&1 || true
grep -q "^handover    orders-blue -> orders-green step=clear T=- savepoint=-" "$WORK/status.out" \
  || fail "gate-proxy status does not show the hand-over in progress: $(cat "$WORK/status.out")"
set +e
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --from orders-green \
  --to orders-blue >"$WORK/h4.out" 2>"$WORK/h4.err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q "a hand-over from orders-blue to orders-green is in progress" "$WORK/h4.err" \
  || fail "another pair was not refused while one is in progress: exit $rc: $(cat "$WORK/h4.err")"
# T published (as the proxy does once it chose it) and the step recorded as
# suspend (OLD suspended): --abort is refused, the map left as it was
kc -n "$NS" patch configmap "$CM" --type merge \
  -p '{"data":{"watermark-stage":"WATERMARK_SET","watermark-toggle-value":"1700000000000","gate-proxy.handover.step":"suspend"}}' >/dev/null
set +e
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --abort >"$WORK/h4b.out" 2>&1; rc=$?
set -e
cat "$WORK/h4b.out"
[ "$rc" = 1 ] && grep -q "refused: orders-blue was suspended at T=1700000000000 (step suspend)" "$WORK/h4b.out" \
  && grep -q "run \`gate-proxy handover --from orders-blue --to orders-green\` again" "$WORK/h4b.out" \
  && [ "$(m active-deployment-type)/$(m stage)" = GREEN/TRANSITIONING ] \
  || fail "--abort after the suspend: exit $rc, not a refusal that leaves the map as it was"
# ... at step clear (OLD runs): taken; no proxy reports on this map, so the
# command says the re-delivery comes once one runs
kc -n "$NS" patch configmap "$CM" --type merge -p '{"data":{"gate-proxy.handover.step":"clear"}}' >/dev/null
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --abort >"$WORK/h4c.out" 2>&1 \
  || fail "--abort after T at step clear failed: $(cat "$WORK/h4c.out")"
cat "$WORK/h4c.out"
grep -q "^handover: from=orders-blue to=orders-green aborted after T=1700000000000: no proxy reports on .*; once one runs it re-delivers to blue what went to orders-green" "$WORK/h4c.out" \
  || fail "--abort after T with no proxy does not say when the re-delivery comes"
[ "$(m active-deployment-type)/$(m stage)/$(m is-first-deployment)" = BLUE/RUNNING/true ] \
  && [ -z "$(m 'gate-proxy\.handover\.step')" ] && [ -z "$(m watermark-toggle-value)" ] \
  || fail "after --abort past T the map is not back to blue with the hand-over gone: $(kc -n "$NS" get configmap "$CM" -o jsonpath='{.data}')"
# A hand-over in progress again (stopped at clear), no T: --abort before T
set +e
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --from orders-blue \
  --to orders-green --timeout 3 >"$WORK/h3b.out" 2>"$WORK/h3b.err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q "stopped at step clear" "$WORK/h3b.err" \
  || fail "a second hand-over with no proxy: exit $rc, not a stop at step clear: $(cat "$WORK/h3b.err")"
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --abort >"$WORK/h5.out" 2>&1 \
  || fail "--abort before T failed: $(cat "$WORK/h5.out")"
cat "$WORK/h5.out"
[ "$(m active-deployment-type)/$(m stage)/$(m is-first-deployment)" = BLUE/RUNNING/true ] \
  && [ -z "$(m 'gate-proxy\.handover\.step')" ] \
  || fail "after --abort the map is not back to blue with the hand-over gone: $(kc -n "$NS" get configmap "$CM" -o jsonpath='{.data}')"
set +e
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --abort >"$WORK/h6.out" 2>&1; rc=$?
set -e
[ "$rc" = 1 ] && grep -q "no hand-over in progress" "$WORK/h6.out" || fail "a second --abort: exit $rc"

say "6. a whole hand-over's time: a proxy, the old job's group, a stand-in for the operator"
S=gp-hop-$RUN_ID
LATENESS_MS=300
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
kc -n "$NS" create role gate-proxy-run --verb=get,watch,patch --resource=configmaps \
  --resource-name="$CM" >/dev/null
kc -n "$NS" create rolebinding gate-proxy-run --role=gate-proxy-run --user=gate-proxy >/dev/null
k8s_write_conf p "$S" "$CM" "gate.drain.group.blue=$S-job-blue" "gate.drain.group.green=$S-job-green" \
  "gate.lateness.ms=$LATENESS_MS"
start_proxy p
beat() { [ -n "$(kc -n "$NS" get configmap "$CM" -o jsonpath='{.data.gate-proxy\.heartbeat}')" ]; }
wait_for "the proxy's first status" 60 beat

# The operator's part, on status only (no operator runs here): a suspended
# spec with upgradeMode savepoint becomes SUSPENDED with a new savepoint
# (the legacy record: no FlinkStateSnapshot), a spec running from a
# savepoint becomes STABLE and RUNNING from it. Every 0.2 s.
# A FlinkStateSnapshot of checkpoint type: the job's checkpoint, on which
# its Kafka source commits what it read (the group of the FlinkDeployment's
# colour commits at once), IN_PROGRESS, then COMPLETED with its path.
checkpoints() {
  local snap fd
  kc -n "$NS" get flinkstatesnapshots -o json 2>/dev/null | python3 -c '
import json, sys
for i in json.load(sys.stdin)["items"]:
    if "checkpoint" in i["spec"] and not (i.get("status") or {}).get("state"):
        print(i["metadata"]["name"], i["spec"]["jobReference"]["name"])' |
  while read -r snap fd; do
    kc -n "$NS" patch flinkstatesnapshot "$snap" --subresource status --type merge \
      -p '{"status":{"state":"IN_PROGRESS","triggerId":"standin"}}' >/dev/null
    case $fd in *green*) c=green ;; *) c=blue ;; esac
    pid=$(cat "$WORK/job-$c.pid" 2>/dev/null) || pid=""
    if [ -n "$pid" ]; then
      kill -TERM "$pid" 2>/dev/null || true
      while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    fi
    kc -n "$NS" patch flinkstatesnapshot "$snap" --subresource status --type merge \
      -p "{\"status\":{\"state\":\"COMPLETED\",\"path\":\"file:/tmp/gp-cp/$fd/$snap\"}}" >/dev/null
    echo "checkpoint $snap of $fd: COMPLETED"
  done
}
standin() {
  local n=0 fd spec gen path
  while :; do
    checkpoints
    for fd in $(kc -n "$NS" get flinkdeployments -o jsonpath='{.items[*].metadata.name}'); do
      spec=$(kc -n "$NS" get flinkdeployment "$fd" -o jsonpath='{.spec.job.state}/{.spec.job.upgradeMode}/{.status.lifecycleState}/{.metadata.generation}/{.status.observedGeneration}' 2>/dev/null) || continue
      IFS=/ read -r state mode life gen obs <<<"$spec"
      [ "$obs" = "$gen" ] && [ -n "$life" ] && continue
      if [ "$state" = suspended ] && [ "$mode" = savepoint ] && [ "$life" = STABLE ]; then
        n=$((n + 1)); path="file:/tmp/gp-sp/$fd/savepoint-$RUN_ID-$n"
        kc -n "$NS" patch flinkdeployment "$fd" --subresource status --type merge -p "{\"status\":{
          \"lifecycleState\":\"SUSPENDED\",\"observedGeneration\":$gen,
          \"reconciliationStatus\":{\"state\":\"DEPLOYED\",\"lastReconciledSpec\":\"{\\\"spec\\\":{\\\"job\\\":{\\\"upgradeMode\\\":\\\"savepoint\\\",\\\"state\\\":\\\"suspended\\\"}}}\"},
          \"jobStatus\":{\"state\":\"FINISHED\",\"upgradeSavepointPath\":\"$path\",
            \"savepointInfo\":{\"lastSavepoint\":{\"location\":\"$path\"}}}}}" >/dev/null
      elif [ "$state" = running ]; then
        path=$(kc -n "$NS" get flinkdeployment "$fd" -o jsonpath='{.spec.job.initialSavepointPath}')
        kc -n "$NS" patch flinkdeployment "$fd" --subresource status --type merge -p "{\"status\":{
          \"lifecycleState\":\"STABLE\",\"observedGeneration\":$gen,
          \"reconciliationStatus\":{\"state\":\"DEPLOYED\",\"lastReconciledSpec\":\"{}\"},
          \"jobStatus\":{\"state\":\"RUNNING\",\"upgradeSavepointPath\":\"$path\"}}}" >/dev/null
      fi
    done
    sleep 0.2
  done
}
standin >"$WORK/standin.log" 2>&1 &
BG_PIDS+=($!)
# The old job: kcat in the old colour's group, read_committed, committing
# its position every 4 s, as a Flink job's KafkaSource commits on each
# completed checkpoint (interval 4 s). A checkpoint asked of the stand-in
# is a commit now: kcat is stopped (its close commits) and starts again.
JOB_CHECKPOINT_S=4
job_group() { # COLOUR
  touch "$WORK/job-$1.run"
  while [ -f "$WORK/job-$1.run" ]; do
    kcat -C -b "$GP_BOOTSTRAP" -G "$S-job-$1" "$S.$1" -q -f '%o\n' \
      -X isolation.level=read_committed -X auto.offset.reset=earliest \
      -X enable.auto.commit=true -X auto.commit.interval.ms=$((JOB_CHECKPOINT_S * 1000)) \
      >/dev/null 2>>"$WORK/kcat-$1.err" &
    echo $! >"$WORK/job-$1.pid"
    wait $! || true
  done
}
job_stop() { # COLOUR
  rm -f "$WORK/job-$1.run"
  kill -TERM "$(cat "$WORK/job-$1.pid")" 2>/dev/null || true
}

# hop CASE ASK FROM TO OLD_COLOUR [gp-produce options]: records flow (event
# time as wall time), the command hands over (ASK: yes, or no with
# --no-checkpoint-request), its handover-time: line becomes the hop: line,
# and the accounting is checked
hop() {
  local case=$1 ask=$2 from=$3 to=$4 old=$5; shift 5
  local opt=()
  [ "$ask" = yes ] || opt=(--no-checkpoint-request)
  # NEW: created suspended, never deployed, from the example of its colour
  if ! kc -n "$NS" get flinkdeployment "$to" >/dev/null 2>&1; then
    sed -e "s/name: orders-$( [ "$old" = blue ] && echo green || echo blue)\$/name: $to/" \
      -e 's/^    state: running$/    state: suspended/' \
      "$DIR/flinkdeployment-$( [ "$old" = blue ] && echo green || echo blue).yaml" >"$WORK/$to.yaml"
    kc -n "$NS" create -f "$WORK/$to.yaml" >/dev/null
  fi
  [ "$(kc -n "$NS" get flinkdeployment "$to" -o jsonpath='{.spec.job.state}')" = suspended ] \
    || fail "$to is not suspended"
  "$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 100000 --rate 200 --ts-step 5 \
    --quiet "$@" >/dev/null 2>&1 &
  local prod=$!
  BG_PIDS+=("$prod")
  job_group "$old" &
  local job=$!
  BG_PIDS+=("$job")
  sleep 5 # every partition has records (or, the idle case, is idle past 2 s)
  set +e
  "$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --from "$from" --to "$to" \
    --timeout 60 "${opt[@]}" >"$WORK/hop-$case.out" 2>"$WORK/hop-$case.err"; local rc=$?
  set -e
  job_stop "$old"
  kill "$prod" 2>/dev/null || true
  wait "$prod" "$job" 2>/dev/null || true
  cat "$WORK/hop-$case.out" "$WORK/hop-$case.err"
  [ "$rc" = 0 ] || fail "the $case hand-over failed (exit $rc)"
  if [ "$ask" = yes ]; then
    grep -q "clear: the proxy closed $from's side; asked the operator for a checkpoint of $from" "$WORK/hop-$case.out" \
      || fail "$case: the command did not ask for a checkpoint of $from"
    grep -q "checkpoint $from-checkpoint-handover-[0-9]* of $from: COMPLETED" "$WORK/standin.log" \
      || fail "$case: the stand-in completed no checkpoint of $from"
  else
    ! grep -q "asked the operator for a checkpoint" "$WORK/hop-$case.out" || fail "$case: a checkpoint was asked with --no-checkpoint-request"
  fi
  grep -q "clear: the proxy's time: T written .* s after TRANSITIONING; old side closed" "$WORK/hop-$case.out" \
    || fail "$case: the clear step did not say the proxy's time"
  local line
  line=$(grep '^handover-time:' "$WORK/hop-$case.out") || fail "$case: no handover-time: line"
  python3 - "$case" "$line" "$ask" "$JOB_CHECKPOINT_S" <<'PY' || fail "$case: the accounting does not hold: $line"
import sys
case, line, ask, interval = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]) * 1000
f = dict(w.split("=", 1) for w in line.split()[1:])
ms = lambda k: int(f[k])  # a "-" fails here: every phase and step must be timed
phases = [ms(k) for k in ("T_ms", "close_ms", "drain_ms", "clear_ms")]
ok = True
def need(c, what):
    global ok
    if not c:
        print("hop: %s: %s" % (case, what)); ok = False
need(all(p >= 0 for p in phases), "a negative phase")
need(abs(sum(phases) - ms("proxy_ms")) <= 2, "the phases sum to %d, not the proxy's %d ms" % (sum(phases), ms("proxy_ms")))
need(ms("proxy_ms") <= ms("clear_step_ms") + ms("cutover_ms") + 250,
     "the proxy's %d ms do not fit in the command's cutover and clear steps" % ms("proxy_ms"))
want = {"active": ("watermark", "0/2"), "idle": ("idle", "1/2")}[case]
need((f["rule"], f["idle"]) == want, "rule=%s idle=%s, not %s idle=%s" % (f["rule"], f["idle"], *want))
for k in ("suspend_ms", "start_ms", "finish_ms"):
    ms(k)
# The drain waits for a commit: the job's next checkpoint, or the one asked.
need(ms("drain_ms") <= (interval + 2500 if ask == "no" else 3000),
     "drained %s ms after the close (checkpoint asked: %s)" % (f["drain_ms"], ask))
sys.exit(0 if ok else 1)
PY
  # The clear step's bound (docs/DESIGN.md, A hand-over's time): D (the
  # map's deployment-deletion-delay-ms) + gate.lateness.ms + the old job's
  # checkpoint interval + 1 s; printed as a figure beside the step.
  local delay
  delay=$(kc -n "$NS" get configmap "$CM" -o jsonpath='{.data.deployment-deletion-delay-ms}')
  HOP_LINE=$(python3 - "$case" "$line" "$ask" "${delay:-0}" "$LATENESS_MS" "$JOB_CHECKPOINT_S" <<'PY'
import sys
f = dict(w.split("=", 1) for w in sys.argv[2].split()[1:])
bound = int(sys.argv[4]) + int(sys.argv[5]) + int(sys.argv[6]) * 1000 + 1000
print("hop: case=%s checkpoint_request=%s T_ms=%s close_ms=%s rule=%s idle=%s drain_ms=%s clear_ms=%s proxy_ms=%s clear_step_ms=%s clear_bound_ms=%d within=%s suspend_ms=%s start_ms=%s finish_ms=%s"
      % (sys.argv[1], sys.argv[3], f["T_ms"], f["close_ms"], f["rule"], f["idle"], f["drain_ms"], f["clear_ms"], f["proxy_ms"],
         f["clear_step_ms"], bound, "yes" if int(f["clear_step_ms"]) <= bound else "no",
         f["suspend_ms"], f["start_ms"], f["finish_ms"]))
PY
)
  echo "$HOP_LINE"
  [ -z "${GP_E2E_LINES:-}" ] || echo "$HOP_LINE" >>"$GP_E2E_LINES"
}

# Every partition written (round robin), without then with the request;
# then partition 1 idle (every record to 0), the same.
hop active no orders-blue orders-green blue --partition-rr
"$GP_BIN" status --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" >"$WORK/status6.out" 2>&1 || true
grep -q "^hand-over   T written .* clear written .* s in all$" "$WORK/status6.out" \
  || fail "gate-proxy status has no hand-over line with the whole: $(cat "$WORK/status6.out")"
"$GP_BIN" status --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --json >"$WORK/status6.json" 2>&1 || true
python3 - "$WORK/status6.json" <<'PY' || fail "gate-proxy status --json lacks the hand-over"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["gate-proxy.hop"].startswith("hop1 seen="), d
assert "in all" in d["hand-over"], d
PY
hop active yes orders-green orders-blue-2 green --partition-rr
hop idle no orders-blue-2 orders-green-2 blue --partition 0
hop idle yes orders-green-2 orders-blue-3 green --partition 0
stop_bg
PROXY_PID=""

say "7. --abort after T with the proxy running: the re-delivery to the old job waited for"
# A pipeline of its own on the same map; the old job's group never commits,
# so the drain check holds the close and the command stops at step clear
# with T chosen and records in green's topic.
S7=gp-hop7-$RUN_ID
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S7" --count 0 --partitions-hint 2 --quiet >/dev/null
k8s_write_conf p7 "$S7" "$CM" "gate.pipeline=it-$RUN_ID-7" "gate.drain.group.blue=$S7-job-blue" \
  "gate.lateness.ms=$LATENESS_MS"
sed -e 's/name: orders-green$/name: orders-green-3/' -e 's/^    state: running$/    state: suspended/' \
  "$DIR/flinkdeployment-green.yaml" >"$WORK/orders-green-3.yaml"
kc -n "$NS" create -f "$WORK/orders-green-3.yaml" >/dev/null
start_proxy p7
beat7() { [ "$(kc -n "$NS" get configmap "$CM" -o jsonpath='{.data.gate-proxy\.stopped}')" = "" ]; }
wait_for "the new proxy's status" 60 beat7
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S7" --count 3000 --rate 300 --ts-step 5 \
  --partition-rr --quiet >/dev/null 2>&1 &
PROD7=$!
BG_PIDS+=("$PROD7")
sleep 3 # both partitions have records
set +e
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --from orders-blue-3 \
  --to orders-green-3 --timeout 4 >"$WORK/h7.out" 2>"$WORK/h7.err"; rc=$?
set -e
cat "$WORK/h7.out" "$WORK/h7.err"
[ "$rc" = 1 ] && grep -q "stopped at step clear" "$WORK/h7.err" \
  || fail "the hand-over held by the drain check: exit $rc, not a stop at step clear"
T7=$(m watermark-toggle-value)
[ -n "$T7" ] || fail "no T chosen before the stop"
green7() { [ "$(m 'gate-proxy\.count\.green')" -gt 0 ]; }
wait_for "records in green" 30 green7
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --abort >"$WORK/h7b.out" 2>&1 \
  || fail "--abort after T with the proxy running: $(cat "$WORK/h7b.out")"
cat "$WORK/h7b.out"
SENT7=$(sed -n "s/^handover: from=orders-blue-3 to=orders-green-3 aborted after T=$T7: \([0-9]*\) records re-delivered to blue (every record orders-green-3 got from T on)$/\1/p" "$WORK/h7b.out")
[ -n "$SENT7" ] && [ "$SENT7" -gt 0 ] || fail "--abort did not wait for the re-delivery and say what it sent"
grep -q "abort: re-delivering to blue\|abort: waiting for the proxy to take it" "$WORK/h7b.out" \
  || fail "--abort showed no progress while it waited"
[ "$(m active-deployment-type)/$(m stage)/$(m is-first-deployment)" = BLUE/RUNNING/true ] \
  && [ -z "$(m 'gate-proxy\.handover\.step')" ] \
  || fail "after --abort the map is not back to blue with the hand-over gone"
wait "$PROD7" || fail "the producer of part 7 failed"
survivor7() {
  out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S7" --event-time json:ts --survivor blue 2>&1)
}
wait_for "blue holding every record once" 60 survivor7
say "checker: $out"
grep -q "^checked=3000 .* redelivered=$SENT7 aborted=$SENT7$" <<<"$out" \
  || fail "the checker's re-delivery is not the $SENT7 records the command reported: $out"
stop_proxy

say "8. --abort after T with three members (gate.membership=group): each member's own re-delivery waited for"
# A pipeline of its own on the same map: three members in one consumer
# group on a source of 6 partitions, 2 each. The old job's group never
# commits, so the hand-over stops at step clear with T agreed. i2 writes
# 10 records a transaction (its re-delivery takes seconds) and is held once
# its re-delivery is open, committed and posted (GP_FAULT_HOLD at
# "redelivering"): i0 and i1 finish theirs and go on writing the shared
# keys, which then say the re-delivery is done. --abort must wait for i2's
# own key, gate-proxy.member.i2. The hold stays well under the 15 s after
# which a silent member counts as gone.
S8=gp-hop8-$RUN_ID
# The colour topics made before the members start: none waits on
# another's creation.
for t in "$S8" "$S8.blue" "$S8.green"; do
  "$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$t" --count 0 --partitions-hint 6 --quiet >/dev/null
done
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S8.dlq" --count 0 --partitions-hint 1 --quiet >/dev/null
# A heartbeat each second: the group's rebalances as the three join take
# a second each, not three.
for i in 0 1 2; do
  GP_MEMBERSHIP=group GP_INSTANCE=i$i k8s_write_conf "i$i" "$S8" "$CM" "gate.pipeline=it-$RUN_ID-8" \
    "gate.drain.group.blue=$S8-job-blue" "gate.lateness.ms=$LATENESS_MS" kafka.heartbeat.interval.ms=1000
done
echo "gate.commit.records=10" >>"$WORK/i2.conf"
start_inst 0
start_inst 1
start_inst 2 GP_FAULT_HOLD="$WORK/h8"
for i in 0 1 2; do wait_for "i$i to own 2 partitions" 60 owns "$i" 2; done
# mf I FIELD: a field of member iI's own key (gate-proxy.member.iI)
mf() { m "gate-proxy\.member\.i$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
routed8() { # COLOUR-INDEX MIN MEMBER...: each member routed at least MIN records to that colour
  local c=$1 min=$2 i n; shift 2
  for i in "$@"; do n=$(mf "$i" n | cut -d, -f"$c"); [ "${n:-0}" -ge "$min" ] || return 1; done
}
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S8" --count 4800 --rate 300 --ts-step 5 \
  --partition-rr --quiet >/dev/null 2>&1 &
PROD8=$!
BG_PIDS+=("$PROD8")
wait_for "records routed by every member" 30 routed8 1 1 0 1 2
set +e
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --from orders-blue-3 \
  --to orders-green-3 --timeout 1 >"$WORK/h8.out" 2>"$WORK/h8.err"; rc=$?
set -e
[ "$rc" = 1 ] && grep -q "stopped at step clear" "$WORK/h8.err" \
  || fail "the hand-over held by the drain check: exit $rc, not a stop at step clear: $(cat "$WORK/h8.err")"
t8() { [ -n "$(m watermark-toggle-value)" ]; }
wait_for "T agreed" 30 t8
T8=$(m watermark-toggle-value)
# i2's share of green makes its re-delivery outlast a status interval
wait_for "records in green from every member, 600 from i2" 30 routed8 2 600 2 0 1
touch "$WORK/h8.redelivering"
"$GP_BIN" handover --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" --abort --timeout 60 \
  >"$WORK/h8b.out" 2>&1 &
ABORT8=$!
BG_PIDS+=("$ABORT8")
held8() { [ -e "$WORK/h8.redelivering.held" ] || log_has 2 "re-delivery done"; }
wait_for "i2 held with its re-delivery open" 30 held8
[ -e "$WORK/h8.redelivering.held" ] \
  || fail "i2's re-delivery ended before a status showed it open: too little went to green for the hold"
rd_done() { [[ "$(mf "$1" rd)" =~ ^blue,[1-9][0-9]*,0,0,0$ ]]; }
for i in 0 1; do wait_for "i$i's re-delivery done" 10 rd_done "$i"; done
[[ "$(mf 2 rd)" =~ ^blue,[0-9]+,[0-9]+,0,[1-9]$ ]] || fail "i2's own key shows no open re-delivery: $(mf 2 rd)"
shared_done() { [[ "$(m 'gate-proxy\.redelivery')" =~ ^to=blue\ sent=[0-9]+\ left=0\ lost=0\ open=0$ ]]; }
wait_for "the shared key to say the re-delivery is done (i0 or i1 wrote it last)" 10 shared_done
"$GP_BIN" status --k8s "$CM" --kubeconfig "$WORK/sa.kubeconfig" >"$WORK/status8.out" 2>&1 || true
grep -qE "^pipeline    3 member\(s\) reporting: phase=aborted .* open=[1-9]$" "$WORK/status8.out" \
  || fail "gate-proxy status does not show i2's re-delivery open: $(cat "$WORK/status8.out")"
say "i2 held: its own key says rd=$(mf 2 rd); the shared key says: $(m 'gate-proxy\.redelivery')"
still8() { # SECONDS: --abort still waits after SECONDS (it reads the map every 0.2 s)
  local end=$(($(date +%s%3N) + $1 * 1000))
  while [ "$(date +%s%3N)" -lt "$end" ]; do kill -0 "$ABORT8" 2>/dev/null || return 1; sleep 0.2; done
}
still8 2 || fail "--abort ended while i2's re-delivery was open: $(cat "$WORK/h8b.out")"
rm -f "$WORK/h8.redelivering"
ended8() { ! kill -0 "$ABORT8" 2>/dev/null; }
wait_for "--abort to end" 60 ended8
rc=0
wait "$ABORT8" || rc=$?
cat "$WORK/h8b.out"
[ "$rc" = 0 ] || fail "--abort after T with three members: exit $rc"
log_has 2 "re-delivery done" || fail "--abort ended before i2's re-delivery was done"
SENT8=$(sed -n "s/^handover: from=orders-blue-3 to=orders-green-3 aborted after T=$T8: \([0-9]*\) records re-delivered to blue (every record orders-green-3 got from T on)$/\1/p" "$WORK/h8b.out")
[ -n "$SENT8" ] && [ "$SENT8" -gt 0 ] || fail "--abort did not wait for the re-delivery and say what it sent"
grep -q "abort: re-delivering to blue\|abort: waiting for the proxy to take it" "$WORK/h8b.out" \
  || fail "--abort showed no progress while it waited"
[ "$(m active-deployment-type)/$(m stage)/$(m is-first-deployment)" = BLUE/RUNNING/true ] \
  && [ -z "$(m 'gate-proxy\.handover\.step')" ] \
  || fail "after --abort the map is not back to blue with the hand-over gone"
wait "$PROD8" || fail "the producer of part 8 failed"
survivor8() {
  out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S8" --event-time json:ts --survivor blue 2>&1)
}
wait_for "blue holding every record once" 60 survivor8
say "checker: $out"
grep -q "^checked=4800 .* redelivered=$SENT8 aborted=$SENT8$" <<<"$out" \
  || fail "the checker's re-delivery is not the $SENT8 records the command reported: $out"
for i in 0 1 2; do kill -TERM "${PID[$i]}" || fail "member i$i had exited before its stop"; done
for i in 0 1 2; do
  rc=0
  wait "${PID[$i]}" || rc=$?
  PID[$i]=""
  [ "$rc" = 0 ] || fail "member i$i exited $rc after SIGTERM (expected 0)"
done
say "PASS: the Role allows exactly its list; the examples fit the CRD; refusals name the field; --to-file and --abort (before T, after T with and without a proxy, refused after the suspend); a hand-over's time accounted for, every partition active and one idle, without and with a checkpoint asked; --abort after T waited for the re-delivery of $SENT7 records with one proxy, and of $SENT8 with three members until the last one finished"
