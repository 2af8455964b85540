#!/usr/bin/env bash
# Runs every test: the unit tests, then the integration tests once on a
# Kafka 3.9 broker and once on a Kafka 4.x broker (tests/kafka/broker.sh).
#   tests/run-all.sh BUILD_DIR
# KAFKA_VERSIONS="3.9 4" selects the brokers (default: both).
# GP_TEST_LABEL=flink runs only the tests with that label (make e2e), and no
# unit tests. The Kubernetes, registry, Flink and image tests and the
# schedule explorer run on the first broker only; the Flink tests'
# e2e:/control: lines, the scale-out tests' scale: lines, the explorer's
# churn: lines and the deploy/ tests' image:/helm: lines are printed at the
# end.
set -euo pipefail
build=$(cd "${1:?usage: tests/run-all.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
broker=$top/tests/kafka/broker.sh
versions=${KAFKA_VERSIONS:-3.9 4}
label=${GP_TEST_LABEL:-integration}
failed=0
export GP_E2E_LINES=$build/e2e-lines.txt
: >"$GP_E2E_LINES"
# the scale-out tests' summary lines (scale:, and churn: one per seed),
# repeated at the end
export GP_SCALE_LINES=$build/scale-lines.txt
: >"$GP_SCALE_LINES"
# the deploy/ tests' summary lines (image:, helm:), repeated at the end
export GP_INSTALL_LINES=$build/install-lines.txt
: >"$GP_INSTALL_LINES"
# the hostile-input tests' lines (fault:), repeated at the end
export GP_FAULT_LINES=$build/fault-lines.txt
: >"$GP_FAULT_LINES"

# Elapsed time at each step, so a slow step shows in the log.
T0=$SECONDS
step() { printf '== [%dm%02ds] %s\n' $(((SECONDS - T0) / 60)) $(((SECONDS - T0) % 60)) "$*"; }

# The fixtures only the Kubernetes, Helm and Flink tests need, built in the
# background at the lowest priority (once; cached in .cache): the real
# kube-apiserver (a cold build compiles Kubernetes with Go, about 8
# minutes), Helm from its Go module, and the Flink jobs (Maven; the first
# build resolves the jars). The unit tests and every integration test that
# needs none of them run meanwhile; the others run once they are built.
step "building the kube-apiserver fixture, helm and the Flink jobs (in the background)"
nice -n 19 "$top/tests/k8s/apiserver.sh" build >"$build/apiserver-build.log" 2>&1 &
k8s_build=$!
nice -n 19 "$top/tests/k8s/helm.sh" build >"$build/helm-build.log" 2>&1 &
helm_build=$!
nice -n 19 bash "$top/tests/flink/e2e.sh" build >"$build/flink-build.log" 2>&1 &
flink_build=$!
builds_waited=0
wait_builds() { # the three builds done; a failure shows its log
  [ $builds_waited = 0 ] || return 0
  builds_waited=1
  step "waiting for the fixture builds"
  local what pid
  for what in apiserver:$k8s_build helm:$helm_build flink:$flink_build; do
    pid=${what#*:}
    if ! wait "$pid"; then
      echo "the ${what%%:*} build failed:" >&2
      tail -n 30 "$build/${what%%:*}-build.log" >&2
      failed=1
    fi
  done
}
trap 'kill $k8s_build $helm_build $flink_build 2>/dev/null || true' EXIT

if [ "$label" = integration ]; then
  # Fast checks first, and a stop on their failure before any broker
  # starts: the layering, the format, then the unit and fuzz tests (about
  # two minutes in all).
  step "lint and format"
  bash "$top/tests/lint.sh" "$top" || failed=1
  bash "$top/tests/format.sh" check || failed=1
  step "unit tests"
  (cd "$build" && ctest -L unit --output-on-failure -j2) || failed=1
  if [ $failed -ne 0 ]; then
    echo "make test: FAILED in lint, format or the unit tests; no broker was started" >&2
    exit 1
  fi
fi

# Tests that need a fixture (the Kubernetes, schema registry, Flink and
# image tests) run on the first broker only, after the others, one at a
# time (the Kubernetes tests share one API server, which one restarts).
needs_fixture='k8s|registry|flink|image'
first=1
for v in $versions; do
  step "integration tests on Kafka $v"
  export KAFKA_VERSION=$v
  if ! "$broker" start; then
    echo "broker $v did not start" >&2
    failed=1
    continue
  fi
  GP_BOOTSTRAP=$("$broker" bootstrap) || failed=1
  export GP_BOOTSTRAP
  # Two at a time: each test has topics and a group of its own; those
  # that restart the broker run alone, and the scale-out tests take
  # turns on the two cores (tests/integration/CMakeLists.txt).
  # The schedule explorer (label churn) and the tests labelled once run on
  # the first broker only.
  skip=$needs_fixture
  [ $first -eq 1 ] || skip="$needs_fixture|churn|once"
  (cd "$build" && ctest -L "$label" -LE "$skip" --output-on-failure -j2) || failed=1
  if [ $first -eq 1 ]; then
    wait_builds
    step "integration tests that need a fixture, on Kafka $v"
    (cd "$build" && ctest -L "$label" -L "$needs_fixture" --output-on-failure) || failed=1
  fi
  first=0
  "$broker" stop || true
done
wait_builds
step "done"

if [ -s "$GP_SCALE_LINES" ]; then
  echo "== scale-out (tests/integration/scale*.sh, group_refuse.sh, churn.sh)"
  cat "$GP_SCALE_LINES"
fi
if [ -s "$GP_FAULT_LINES" ]; then
  echo "== hostile input (fault: lines)"
  cat "$GP_FAULT_LINES"
fi
if [ -s "$GP_INSTALL_LINES" ]; then
  echo "== installable (deploy/: the image, the Helm chart)"
  cat "$GP_INSTALL_LINES"
fi
if [ -s "$GP_E2E_LINES" ]; then
  echo "== Flink end to end (tests/flink)"
  cat "$GP_E2E_LINES"
fi
what="make test"
[ "$label" = integration ] || what="tests labelled $label"
if [ $failed -ne 0 ]; then
  echo "$what: FAILED" >&2
  exit 1
fi
echo "$what: all passed"
