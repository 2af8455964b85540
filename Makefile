# gate-proxy: a thin wrapper over CMake. The two commands:
#   make demo   installs what is missing, builds, and runs a blue -> green
#               cutover on an in-process Kafka, with a live tally
#   make test   installs what is missing, starts a real Kafka broker (3.9 and
#               4.x, one after the other), and runs every test
#   make e2e    only the Flink end-to-end tests (tests/flink: real Flink jobs
#               through blue -> green -> blue, both hand-over paths, and the
#               negative controls) on a Kafka 3.9 broker; prints the e2e: lines
#   make bench  (not part of make test; make test only builds it) gate-proxy
#               against the librdkafka limit, a Kafka Streams peer and kcat
#               on a real broker; figures in bench/results (bench/run.sh);
#               make bench-librdkafka: on 2.14.2 and the system's librdkafka
#   make format rewrites the C sources as .clang-format has them (make test
#               fails, before any broker starts, on a file that differs)
#   make image  the container image localhost/gate-proxy:VERSION, from Debian's
#               packages alone (an mmdebstrap root filesystem, cached in
#               .cache/image, and a reproducible release binary) by podman;
#               make test builds it too and runs it (tests/integration/image.sh)
#   make install  the binary into $(PREFIX)/bin (PREFIX=/usr/local by default)
#   make soak   (not part of make test) exactly-once under faults for
#               SOAK_MINUTES (default 30): cutovers back and forth, proxy kills,
#               broker restarts, on its own broker (tests/soak.sh says more)
#   make soak-churn  (make test runs its fixed set of seeds) the schedule
#               explorer over SEEDS (e.g. SEEDS=1-200 or SEEDS="7 12"; default:
#               make test's): instances of one group joining, leaving, killed,
#               stopped past their session, a lagging map, broker restarts,
#               across random hand-overs and aborts, every record checked, on
#               its own broker (tests/integration/churn.sh says more)
#   make dashboard-png  (not part of make test) redraws docs/dashboard/*.png:
#               the Grafana dashboard's panels over a real cutover
#   make librdkafka  (every target above runs it) librdkafka 2.14.2 from
#               Debian's source package, built once into .cache/librdkafka
#               (scripts/build-librdkafka.sh); LIBRDKAFKA=system builds
#               against the system's instead, where group mode needs 2.10.0
BUILD ?= build
LIBRDKAFKA ?= debian-source

.PHONY: all build demo image install test e2e build-test unit soak soak-churn bench bench-librdkafka config-docs dashboard-png format clean librdkafka

all: build

ifeq ($(LIBRDKAFKA),system)
RDKAFKA_FLAG := -DGP_LIBRDKAFKA=
librdkafka:
	@scripts/install-deps.sh system-librdkafka
else
RDKAFKA_FLAG = -DGP_LIBRDKAFKA=$(shell scripts/build-librdkafka.sh prefix)
librdkafka:
	@scripts/install-deps.sh build
	@scripts/build-librdkafka.sh
endif

build: librdkafka
	@cmake -S . -B $(BUILD)/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DBUILD_TESTING=OFF $(RDKAFKA_FLAG) >/dev/null
	@cmake --build $(BUILD)/release

demo: build
	$(BUILD)/release/gate-proxy demo

# deploy/Containerfile on an mmdebstrap root filesystem (scripts/image.sh).
image: librdkafka
	@scripts/install-deps.sh image
	@GP_IMAGE_BUILD=$(abspath $(BUILD))/image scripts/image.sh build

# Installs the binary built by `make build` into $(PREFIX)/bin.
PREFIX ?= /usr/local
install: build
	@cmake --install $(BUILD)/release --prefix $(PREFIX)

build-test: librdkafka
	@scripts/install-deps.sh test
	@cmake -S . -B $(BUILD)/test -G Ninja -DCMAKE_BUILD_TYPE=Debug $(RDKAFKA_FLAG) \
		-DGP_SANITIZE="address,undefined" -DGP_WERROR=ON -DGP_TEST_HOOKS=ON >/dev/null
	@cmake --build $(BUILD)/test

# Unit tests only: no broker needed.
unit: build-test
	cd $(BUILD)/test && ctest -L unit --output-on-failure

test: build-test
	tests/run-all.sh $(BUILD)/test

e2e: build-test
	KAFKA_VERSIONS=3.9 GP_TEST_LABEL=flink tests/run-all.sh $(BUILD)/test

# The soak: SOAK_MINUTES=5 make soak for a short one; KAFKA_VERSION=4 for 4.x.
soak: build-test
	tests/soak.sh $(BUILD)/test

# The schedule explorer on its own broker: make soak-churn SEEDS=1-200;
# KAFKA_VERSION=4 for 4.x. A failing seed prints the command that replays it.
SEEDS ?= $(GP_CHURN_SEEDS)
soak-churn: build-test
	GP_CHURN_SEEDS='$(SEEDS)' bash tests/integration/churn.sh $(BUILD)/test

# The benchmark, on an optimised build with the test tools.
bench: librdkafka
	@scripts/install-deps.sh bench
	@cmake -S . -B $(BUILD)/bench -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(RDKAFKA_FLAG) >/dev/null
	@cmake --build $(BUILD)/bench
	bench/run.sh $(BUILD)/bench
	bench/cost.sh $(BUILD)/bench

# The same, on two librdkafkas in one interleaved run: this build (2.14.2)
# against one linked with the system's (bench/librdkafka-ab.sh; BASE_COMMIT=
# builds the base from that commit).
bench-librdkafka: librdkafka
	@scripts/install-deps.sh bench
	@cmake -S . -B $(BUILD)/bench -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(RDKAFKA_FLAG) >/dev/null
	@cmake --build $(BUILD)/bench
	bench/librdkafka-ab.sh $(BUILD)/bench

# Rewrites the C sources as .clang-format has them (make test checks it).
format:
	@scripts/install-deps.sh test
	tests/format.sh fix

# Regenerates configs/CONFIGURATION.md and the example file from the table.
config-docs: build
	$(BUILD)/release/gate-proxy --list-config > configs/CONFIGURATION.md
	$(BUILD)/release/gate-proxy --example-config > configs/gate-proxy.conf.example

# docs/dashboard/*.png: integration.metrics at its slow pace (a cutover a
# minute into 150 s of records, about three minutes) on its own Kafka 3.9
# broker, its Prometheus drawn by scripts/dashboard-png.py. A build without
# sanitizers, whose memory would be in the plots; KAFKA_VERSION=4 for 4.x.
dashboard-png: export KAFKA_VERSION := $(or $(KAFKA_VERSION),3.9)
dashboard-png: librdkafka
	@scripts/install-deps.sh test
	@cmake -S . -B $(BUILD)/docs -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo $(RDKAFKA_FLAG) >/dev/null
	@cmake --build $(BUILD)/docs
	tests/kafka/broker.sh start
	rm -f docs/dashboard/*.png
	rc=0; (cd $(BUILD)/docs && GP_BOOTSTRAP=$$($(CURDIR)/tests/kafka/broker.sh bootstrap) \
	  GP_METRICS_PACE=slow GP_DASHBOARD_PNG=$(CURDIR)/docs/dashboard \
	  ctest -R '^integration\.metrics$$' --output-on-failure) || rc=$$?; \
	  tests/kafka/broker.sh stop; exit $$rc
	@ls -l docs/dashboard

clean:
	rm -rf $(BUILD)
