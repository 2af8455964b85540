#!/usr/bin/env bash
# A real Kubernetes API server (kube-apiserver + embedded etcd, in-process, on
# loopback, RBAC on) for gate-proxy's tests. See tests/k8s/apiserver/main.go.
#
#   tests/k8s/apiserver.sh build              build gp-apiserver and kubectl if missing
#   tests/k8s/apiserver.sh start              build if needed, start, wait for /readyz
#   tests/k8s/apiserver.sh stop               stop it and delete the run dir (etcd data)
#   tests/k8s/apiserver.sh restart [SECONDS]  stop it (SIGTERM), stay down SECONDS (default
#                                             0), start it again on the same run dir: data,
#                                             CA and tokens persist
#   tests/k8s/apiserver.sh compact            compact etcd at its current revision; see below
#   tests/k8s/apiserver.sh status             running? (exit 0) or not (exit 1)
#   tests/k8s/apiserver.sh kubeconfig [admin|proxy|proxy-cert]   print the kubeconfig's
#                                             path (proxy-cert: user gate-proxy by client
#                                             certificate, no token)
#   tests/k8s/apiserver.sh token [admin|proxy]        print the static bearer token
#   tests/k8s/apiserver.sh sa-token NS NAME [DURATION] ServiceAccount token (TokenRequest;
#                                                     creates NS and the SA if missing)
#   tests/k8s/apiserver.sh url                print https://127.0.0.1:PORT
#   tests/k8s/apiserver.sh ca                 print the path of the cluster CA (ca.crt)
#   tests/k8s/apiserver.sh kubectl ARGS...    kubectl as the admin
#
# Old resourceVersions: a watch is served from kube-apiserver's watch cache,
# which keeps its own history of events from the revision at which it listed
# the store (at its start) and drops events only when its buffer is full and
# the oldest is more than 75 s old; etcd's compaction does not touch it. So
# after `compact` alone a watch from any version since the server's start is
# still served; after `restart` a watch from a version older than the
# restart answers 410 Gone ("too old resource version"). `restart` then
# `compact` leaves no old version anywhere (a LIST at an exact old version
# is 410 too).
#
# Environment:
#   GP_K8S_PORT      secure port on 127.0.0.1 (default 16443)
#   GP_K8S_DIR       run dir (default <repo>/.cache/k8s-run): pid, log, etcd data,
#                    ca.crt, admin|proxy|proxy-cert.kubeconfig, admin|proxy.token,
#                    client-ca.crt|key, url, etcd-url
#   GP_K8S_CACHE     build cache (default <repo>/.cache/k8s/<kubernetes version>-<hash
#                    of main.go, go.mod and go.sum>: a changed fixture is rebuilt)
#   GP_K8S_TIMEOUT   seconds to wait for ready (default 120)
#   GO               go binary (default: go on PATH, else /usr/local/go/bin/go)
#
# Users: "gp-admin" (system:masters) and "gate-proxy" (no permissions until a
# RoleBinding grants some). No controller manager runs: ServiceAccounts are
# not created for you, and a deleted namespace stays Terminating.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
src=$here/apiserver
port=${GP_K8S_PORT:-16443}
run=${GP_K8S_DIR:-$repo/.cache/k8s-run}
timeout=${GP_K8S_TIMEOUT:-120}

die() { echo "apiserver.sh: $*" >&2; exit 1; }

find_go() {
    if [[ -n ${GO:-} ]]; then echo "$GO"
    elif command -v go >/dev/null 2>&1; then command -v go
    elif [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go
    else die "no Go toolchain (set GO=/path/to/go)"
    fi
}

# The kubernetes version pinned in go.mod names the cache dir.
k8s_version() {
    local v
    v=$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v/ { print $2; exit }' "$src/go.mod")
    [[ -n $v ]] || die "cannot read the k8s.io/kubernetes version from $src/go.mod"
    echo "$v"
}

# A short hash of the fixture's sources, so that a changed fixture is rebuilt.
src_hash() {
    (cd "$src" && cat main.go go.mod go.sum) | sha256sum | cut -c1-12
}

cache=${GP_K8S_CACHE:-$repo/.cache/k8s/$(k8s_version)-$(src_hash)}
bin=$cache/gp-apiserver
kubectl_bin=$cache/kubectl

build() {
    local go ver major minor ld t0
    [[ -x $bin && -x $kubectl_bin ]] && return 0
    go=$(find_go)
    ver=$(k8s_version)
    major=${ver#v}; major=${major%%.*}
    minor=${ver#v*.}; minor=${minor%%.*}
    ld="-s -w -X k8s.io/component-base/version.gitVersion=$ver"
    ld+=" -X k8s.io/component-base/version.gitMajor=$major"
    ld+=" -X k8s.io/component-base/version.gitMinor=$minor"
    ld+=" -X k8s.io/component-base/version.gitTreeState=clean"
    mkdir -p "$cache"
    # Both builds are large (kube-apiserver is ~2,000 packages): one compile at
    # a time and at the lowest priority, so that running tests keep the CPU.
    # A cold build takes a long while; later ones reuse Go's build cache.
    if [[ ! -x $bin ]]; then
        echo "apiserver.sh: building gp-apiserver (kube-apiserver $ver + etcd) into $cache (slow the first time)..." >&2
        t0=$SECONDS
        (cd "$src" && nice -n 19 "$go" build -p 1 -trimpath -ldflags "$ld" -o "$bin.tmp" .) \
            || die "go build of gp-apiserver failed (see the errors above)"
        mv "$bin.tmp" "$bin"
        echo "apiserver.sh: built gp-apiserver in $((SECONDS - t0))s" >&2
    fi
    if [[ ! -x $kubectl_bin ]]; then
        echo "apiserver.sh: building kubectl $ver into $cache..." >&2
        t0=$SECONDS
        (cd "$src" && nice -n 19 "$go" build -p 1 -trimpath -ldflags "$ld" -o "$kubectl_bin.tmp" k8s.io/kubernetes/cmd/kubectl) \
            || die "go build of kubectl failed (see the errors above)"
        mv "$kubectl_bin.tmp" "$kubectl_bin"
        echo "apiserver.sh: built kubectl in $((SECONDS - t0))s" >&2
    fi
}

pid_alive() {
    local pid
    [[ -f $run/pid ]] || return 1
    pid=$(cat "$run/pid")
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null
}

is_ready() { pid_alive && [[ -f $run/ready ]]; }

start() {
    local pid waited=0
    if pid_alive; then
        is_ready || die "already starting (pid $(cat "$run/pid")), not ready yet; see $run/log"
        echo "apiserver.sh: already running (pid $(cat "$run/pid")) at $(cat "$run/url")"
        return 0
    fi
    build
    mkdir -p "$run"
    rm -f "$run/ready" "$run/pid"
    echo "apiserver.sh: starting gp-apiserver on 127.0.0.1:$port (run dir $run)"
    # setsid: its own session, so a Ctrl-C meant for a test run does not hit it.
    setsid "$bin" serve --dir "$run" --port "$port" >"$run/log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$run/pid"
    while ! [[ -f $run/ready ]]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            wait "$pid" 2>/dev/null || true
            echo "apiserver.sh: gp-apiserver exited before it was ready; last lines of $run/log:" >&2
            tail -n 40 "$run/log" >&2 || true
            rm -f "$run/pid"
            exit 1
        fi
        if (( waited >= timeout * 2 )); then
            echo "apiserver.sh: not ready after ${timeout}s; last lines of $run/log:" >&2
            tail -n 40 "$run/log" >&2 || true
            stop_pid
            exit 1
        fi
        if (( waited > 0 && waited % 10 == 0 )); then
            echo "apiserver.sh: waiting for /readyz ($((waited / 2))s)..."
        fi
        sleep 0.5
        waited=$((waited + 1))
    done
    echo "apiserver.sh: ready at $(cat "$run/url") (pid $pid, $(grep -o 'ready .* in .*' "$run/log" | tail -n 1 | sed 's/.* in //'))"
}

# Graceful stop: SIGTERM, then SIGKILL after 30s.
stop_pid() {
    local pid i
    [[ -f $run/pid ]] || return 0
    pid=$(cat "$run/pid")
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 300; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "apiserver.sh: pid $pid still running after 30s, killing it" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$run/pid" "$run/ready"
}

stop() {
    stop_pid
    # Only ever delete a dir that looks like ours.
    if [[ -d $run ]]; then
        if [[ -f $run/tokens.csv || -d $run/etcd || -f $run/log ]]; then
            rm -rf "$run"
        else
            die "$run does not look like a gp-apiserver run dir; not deleting it"
        fi
    fi
    echo "apiserver.sh: stopped"
}

need_ready() { is_ready || die "not running (tests/k8s/apiserver.sh start)"; }

# Stop the process, keep the run dir, stay down $1 seconds, start again on it.
restart() {
    local t0=$SECONDS down=${1:-0}
    [[ $down =~ ^[0-9]+$ ]] || die "restart: SECONDS must be a whole number, not '$down'"
    [[ -f $run/tokens.csv ]] || die "no run dir at $run to restart on (tests/k8s/apiserver.sh start)"
    stop_pid
    echo "apiserver.sh: stopped after $((SECONDS - t0))s; down for ${down}s"
    sleep "$down"
    start
}

cmd=${1:-}
[[ $# -gt 0 ]] && shift
case $cmd in
    build) build ;;
    start) start ;;
    stop) stop ;;
    restart) restart "$@" ;;
    compact)
        need_ready
        [[ -x $bin ]] || build
        "$bin" compact --dir "$run" ;;
    status)
        if is_ready; then echo "running (pid $(cat "$run/pid")) at $(cat "$run/url")"
        elif pid_alive; then echo "starting (pid $(cat "$run/pid"))"; exit 1
        else echo "not running"; exit 1
        fi ;;
    kubeconfig)
        who=${1:-admin}
        [[ $who == admin || $who == proxy || $who == proxy-cert ]] \
            || die "kubeconfig: admin, proxy or proxy-cert, not '$who'"
        need_ready
        echo "$run/$who.kubeconfig" ;;
    token)
        who=${1:-proxy}
        [[ $who == admin || $who == proxy ]] || die "token: admin or proxy, not '$who'"
        need_ready
        cat "$run/$who.token" ;;
    sa-token)
        [[ $# -ge 2 ]] || die "usage: sa-token NAMESPACE NAME [DURATION]"
        need_ready
        "$bin" token --dir "$run" --namespace "$1" --sa "$2" --duration "${3:-1h}" ;;
    url) need_ready; cat "$run/url" ;;
    ca) need_ready; echo "$run/ca.crt" ;;
    kubectl)
        need_ready
        [[ -x $kubectl_bin ]] || build
        exec "$kubectl_bin" --kubeconfig "$run/admin.kubeconfig" "$@" ;;
    *)
        sed -n '2,45p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
        exit 2 ;;
esac
