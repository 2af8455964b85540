#!/usr/bin/env bash
# Runs every test: the unit tests, then the integration tests once on a
# Kafka 3.9 broker and once on a Kafka 4.x broker (tests/kafka/broker.sh).
#   tests/run-all.sh BUILD_DIR
# KAFKA_VERSIONS="3.9 4" selects the brokers (default: both).
# GP_TEST_LABEL=flink runs only the tests with that label (make e2e), and no
# unit tests. The Kubernetes, registry, Flink and image tests run on the
# first broker only; the Flink tests' e2e:/control: lines, the scale-out
# tests' scale: lines and the deploy/ tests' image:/helm: lines are printed
# at the end.
set -euo pipefail
build=$(cd "${1:?usage: tests/run-all.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
broker=$top/tests/kafka/broker.sh
versions=${KAFKA_VERSIONS:-3.9 4}
label=${GP_TEST_LABEL:-integration}
failed=0
export GP_E2E_LINES=$build/e2e-lines.txt
: >"$GP_E2E_LINES"
# integration.scale's summary lines (one per broker), repeated at the end
export GP_SCALE_LINES=$build/scale-lines.txt
: >"$GP_SCALE_LINES"
# the deploy/ tests' summary lines (image:, helm:), repeated at the end
export GP_INSTALL_LINES=$build/install-lines.txt
: >"$GP_INSTALL_LINES"

if [ "$label" = integration ]; then
  # Fast checks first, and a stop on their failure before any broker,
  # API server or Flink build starts: the layering, the format, then
  # the unit and fuzz tests (about a minute in all).
  echo "== lint and format"
  bash "$top/tests/lint.sh" "$top" || failed=1
  bash "$top/tests/format.sh" check || failed=1
  echo "== unit tests"
  (cd "$build" && ctest -L unit --output-on-failure -j2) || failed=1
  if [ $failed -ne 0 ]; then
    echo "make test: FAILED in lint, format or the unit tests; no broker was started" >&2
    exit 1
  fi
fi

# The real kube-apiserver fixture (built once into .cache/k8s; the first
# build compiles Kubernetes with Go and takes minutes).
echo "== building the kube-apiserver test fixture (once)"
"$top/tests/k8s/apiserver.sh" build || failed=1
# Helm for the chart's test (built once into .cache/helm from its Go
# module), beside the Flink jobs' build (Maven; the first build resolves
# the jars into .cache/), which mostly waits on downloads.
echo "== building helm (once) and the Flink jobs (tests/flink, examples/flink)"
"$top/tests/k8s/helm.sh" build >"$build/helm-build.log" 2>&1 &
helm_build=$!
bash "$top/tests/flink/e2e.sh" build || failed=1
if ! wait $helm_build; then
  cat "$build/helm-build.log" >&2
  failed=1
fi

first=1
for v in $versions; do
  echo "== integration tests on Kafka $v"
  export KAFKA_VERSION=$v
  if ! "$broker" start; then
    echo "broker $v did not start" >&2
    failed=1
    continue
  fi
  GP_BOOTSTRAP=$("$broker" bootstrap) || failed=1
  export GP_BOOTSTRAP
  # The Kubernetes, schema registry, Flink and image tests run once, on the
  # first broker.
  skip=()
  [ $first -eq 1 ] || skip=(-LE 'k8s|registry|flink|image')
  first=0
  (cd "$build" && ctest -L "$label" "${skip[@]}" --output-on-failure) || failed=1
  "$broker" stop || true
done

if [ -s "$GP_SCALE_LINES" ]; then
  echo "== scale-out (tests/integration/scale*.sh, group_refuse.sh)"
  cat "$GP_SCALE_LINES"
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
