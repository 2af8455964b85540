#!/usr/bin/env bash
# Helm, built from its Go module at a pinned version, for the chart's tests
# (tests/integration/helm.sh) and for anyone who wants to render or install
# deploy/helm/gate-proxy with the same Helm the tests use.
#
#   tests/k8s/helm.sh build        build helm into the cache if missing
#   tests/k8s/helm.sh path         build if needed, print the binary's path
#   tests/k8s/helm.sh version      build if needed, print `helm version`
#   tests/k8s/helm.sh ARGS...      anything else: build if needed, run helm ARGS
#
# Environment:
#   GP_HELM_VERSION  module version of helm.sh/helm/v4 (default below)
#   GP_HELM_CACHE    build cache (default <repo>/.cache/helm/<version>)
#   GO               go binary (default: go on PATH, else /usr/local/go/bin/go)
#
# The module's go.sum entries are checked against the Go checksum database by
# `go install`, so the pinned version names one exact source tree. Helm 4.3
# builds on the same k8s.io modules (v0.37) as the API server fixture
# (tests/k8s/apiserver), so once that is built most of Helm's packages come
# from Go's build cache.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
version=${GP_HELM_VERSION:-v4.3.2}
cache=${GP_HELM_CACHE:-$repo/.cache/helm/$version}
bin=$cache/helm

die() { echo "helm.sh: $*" >&2; exit 1; }

find_go() {
    if [[ -n ${GO:-} ]]; then echo "$GO"
    elif command -v go >/dev/null 2>&1; then command -v go
    elif [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go
    else die "no Go toolchain (set GO=/path/to/go)"
    fi
}

build() {
    local go t0 ld major
    [[ -x $bin ]] && return 0
    [[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "GP_HELM_VERSION must be vX.Y.Z, not '$version'"
    major=${version%%.*}
    go=$(find_go)
    ld="-s -w -X helm.sh/helm/$major/internal/version.version=$version"
    ld+=" -X helm.sh/helm/$major/internal/version.gitTreeState=clean"
    mkdir -p "$cache"
    rm -rf "$cache/bin.tmp"
    echo "helm.sh: building helm $version into $cache..." >&2
    t0=$SECONDS
    # GOBIN to a scratch dir, then one rename: a build stopped half-way never
    # leaves a binary that looks finished. Lowest priority and one compile at a
    # time, like the API server's build, so running tests keep the CPU.
    GOBIN=$cache/bin.tmp GOFLAGS=-mod=mod nice -n 19 "$go" install -p 1 -trimpath -ldflags "$ld" \
        "helm.sh/helm/$major/cmd/helm@$version" \
        || die "go install of helm.sh/helm/$major/cmd/helm@$version failed (see the errors above)"
    mv "$cache/bin.tmp/helm" "$bin"
    rmdir "$cache/bin.tmp"
    echo "helm.sh: built helm $version in $((SECONDS - t0))s" >&2
}

cmd=${1:-}
case $cmd in
    build) build ;;
    path) build; echo "$bin" ;;
    version) build; "$bin" version ;;
    "" | -h | --help)
        sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
        exit 2 ;;
    *) build; exec "$bin" "$@" ;;
esac
