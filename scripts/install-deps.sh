#!/usr/bin/env bash
# Installs the Debian packages gate-proxy needs, if any are missing.
#   scripts/install-deps.sh build   libraries and tools to build and demo
#   scripts/install-deps.sh test    also what the tests need (Criterion,
#                                   clang for the fuzz targets, clang-format, a JDK, Maven, kcat,
#                                   Prometheus and promtool for the metrics test,
#                                   matplotlib for its dashboard PNGs,
#                                   mmdebstrap, podman and runc for the image)
#   scripts/install-deps.sh image   the build set and what make image needs
#   scripts/install-deps.sh bench   the test set and valgrind (bench/cost.sh)
#   scripts/install-deps.sh system-librdkafka   the build set and Debian's
#                                   librdkafka-dev (make LIBRDKAFKA=system)
# Idempotent: with everything present it only checks, and needs no network.
set -euo pipefail

what=${1:-build}
# librdkafka is built from Debian's source package (scripts/build-librdkafka.sh):
# apt-get source and dpkg-source, and the libraries its features need.
pkgs=(build-essential cmake ninja-build pkg-config dpkg-dev patch
      libcjson-dev libcurl4-openssl-dev libyaml-dev libavro-dev libmicrohttpd-dev
      libssl-dev libsasl2-dev libzstd-dev liblz4-dev zlib1g-dev)
# make LIBRDKAFKA=system, and the test that builds against Debian 12's own
# librdkafka (integration.old_librdkafka).
if [ "$what" = system-librdkafka ] || [ "$what" = test ] || [ "$what" = bench ]; then
  pkgs+=(librdkafka-dev)
fi
if [ "$what" = test ] || [ "$what" = bench ]; then
  pkgs+=(libcriterion-dev clang libclang-rt-14-dev clang-format-14 kcat default-jdk-headless maven prometheus
        python3-matplotlib)
fi
[ "$what" = bench ] && pkgs+=(valgrind time)
# The image (scripts/image.sh, tests/integration/image.sh): its root
# filesystem by mmdebstrap, built and run by podman, with runc as the
# runtime (crun refuses a host whose cgroups are in hybrid mode).
if [ "$what" = test ] || [ "$what" = image ]; then
  pkgs+=(mmdebstrap podman runc curl)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# A JDK from elsewhere (for example a Temurin build) will do for the tests.
if [ "$what" != build ] && command -v java >/dev/null && command -v mvn >/dev/null; then
  kept=()
  for p in "${missing[@]}"; do
    case "$p" in default-jdk-headless|maven) ;; *) kept+=("$p") ;; esac
  done
  missing=("${kept[@]+"${kept[@]}"}")
fi
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
