#!/usr/bin/env bash
# Smoke check of the Kubernetes fixture (tests/k8s/apiserver.sh): the RBAC
# shape gate-proxy runs under (get/watch/patch on exactly one ConfigMap), a
# name-scoped watch with bookmarks, a stale-resourceVersion PATCH, and a
# ServiceAccount token from the TokenRequest API.
# Uses a running fixture if there is one, else starts one and stops it after.
# Needs curl. Prints "N passed, N failed"; exits non-zero on any failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
k8s=$here/apiserver.sh
started=0
tmp=$(mktemp -d)
cleanup() {
    rm -rf "$tmp"
    if (( started )); then "$k8s" stop >/dev/null || true; fi
}
trap cleanup EXIT

if ! "$k8s" status >/dev/null 2>&1; then
    "$k8s" start
    started=1
fi
url=$("$k8s" url)
ca=$("$k8s" ca)
admin=$("$k8s" token admin)
proxy=$("$k8s" token proxy)
kc() { "$k8s" kubectl "$@"; }

pass=0 fail=0
check() { # name want got
    if [[ $2 == "$3" ]]; then echo "ok   $1 ($3)"; pass=$((pass + 1))
    else echo "FAIL $1: want $2, got $3"; fail=$((fail + 1))
    fi
}
# code TOKEN METHOD PATH [curl args...]: prints the HTTP status, body in $tmp/body
code() {
    local tok=$1 method=$2 path=$3
    shift 3
    curl -sS -o "$tmp/body" -w '%{http_code}' --cacert "$ca" -H "Authorization: Bearer $tok" \
        -X "$method" "$@" "$url$path"
}

# The server pretty-prints JSON for curl's User-Agent: match '"key": "v"' loosely.
json_rv() { sed -n 's/.*"resourceVersion": *"\([0-9]*\)".*/\1/p' "$tmp/body" | head -n 1; }

ns=gp-smoke-$$
cm=flink-bluegreen
cmpath=/api/v1/namespaces/$ns/configmaps/$cm

kc create namespace "$ns" >/dev/null
kc -n "$ns" create configmap "$cm" --from-literal=active=blue >/dev/null
kc -n "$ns" create configmap other --from-literal=x=1 >/dev/null
kc -n "$ns" create secret generic s --from-literal=x=1 >/dev/null
kc -n "$ns" create role gate-proxy --verb=get,watch,patch --resource=configmaps --resource-name="$cm" >/dev/null
kc -n "$ns" create rolebinding gate-proxy --role=gate-proxy --user=gate-proxy >/dev/null

check "proxy GET the ConfigMap" 200 "$(code "$proxy" GET "$cmpath")"
rv=$(json_rv)
check "  ...has a resourceVersion" yes "$([[ $rv =~ ^[0-9]+$ ]] && echo yes || echo "no: '$rv'")"
check "proxy GET another ConfigMap" 403 "$(code "$proxy" GET "/api/v1/namespaces/$ns/configmaps/other")"
check "proxy LIST ConfigMaps" 403 "$(code "$proxy" GET "/api/v1/namespaces/$ns/configmaps")"
check "proxy GET secrets" 403 "$(code "$proxy" GET "/api/v1/namespaces/$ns/secrets")"
check "proxy GET the ConfigMap in default" 403 "$(code "$proxy" GET "/api/v1/namespaces/default/configmaps/$cm")"
check "proxy WATCH all ConfigMaps" 403 \
    "$(code "$proxy" GET "/api/v1/namespaces/$ns/configmaps?watch=1&timeoutSeconds=1")"
check "no token GET the ConfigMap" 403 "$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$ca" "$url$cmpath")"
check "bad token GET the ConfigMap" 401 "$(code nope GET "$cmpath")"

# A name-scoped watch, as the proxy does it; the admin patches meanwhile.
wpath="/api/v1/namespaces/$ns/configmaps?watch=1&fieldSelector=metadata.name%3D$cm&allowWatchBookmarks=true&resourceVersion=$rv&timeoutSeconds=4"
curl -sSN -o "$tmp/watch" -w '%{http_code}' --cacert "$ca" -H "Authorization: Bearer $proxy" \
    "$url$wpath" >"$tmp/watch.code" &
wpid=$!
sleep 1
kc -n "$ns" patch configmap "$cm" --type=merge -p '{"data":{"active":"green"}}' >/dev/null
wait "$wpid" || true
check "proxy WATCH fieldSelector=metadata.name (status)" 200 "$(cat "$tmp/watch.code")"
check "  ...streams MODIFIED active=green" 1 \
    "$(grep -c '"type":"MODIFIED".*"active":"green"' "$tmp/watch" || true)"

# Initial events + the initial-events-end BOOKMARK (watch-list semantics).
code "$proxy" GET "/api/v1/namespaces/$ns/configmaps?watch=1&fieldSelector=metadata.name%3D$cm&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=2" >"$tmp/c2" || true
check "proxy WATCH sendInitialEvents (status)" 200 "$(cat "$tmp/c2")"
check "  ...ADDED then BOOKMARK initial-events-end" "ADDED BOOKMARK" \
    "$(sed -n 's/^{"type":"\([A-Z]*\)".*/\1/p' "$tmp/body" | tr '\n' ' ' | sed 's/ $//')"
check "  ...bookmark carries k8s.io/initial-events-end" 1 \
    "$(grep -c '"type":"BOOKMARK".*k8s.io/initial-events-end' "$tmp/body" || true)"

# PATCH with a stale resourceVersion: 409 Conflict. With the current one: 200.
check "proxy PATCH stale resourceVersion" 409 "$(code "$proxy" PATCH "$cmpath" \
    -H 'Content-Type: application/merge-patch+json' \
    --data "{\"metadata\":{\"resourceVersion\":\"$rv\"},\"data\":{\"active\":\"blue\"}}")"
code "$proxy" GET "$cmpath" >/dev/null
rv2=$(json_rv)
check "proxy PATCH current resourceVersion" 200 "$(code "$proxy" PATCH "$cmpath" \
    -H 'Content-Type: application/merge-patch+json' \
    --data "{\"metadata\":{\"resourceVersion\":\"$rv2\"},\"data\":{\"active\":\"blue\"}}")"
check "proxy PATCH another ConfigMap" 403 "$(code "$proxy" PATCH "/api/v1/namespaces/$ns/configmaps/other" \
    -H 'Content-Type: application/merge-patch+json' --data '{"data":{"x":"2"}}')"
check "proxy UPDATE (PUT) the ConfigMap" 403 "$(code "$proxy" PUT "$cmpath" \
    -H 'Content-Type: application/json' --data "{\"metadata\":{\"name\":\"$cm\"},\"data\":{}}")"

# A ServiceAccount token from the TokenRequest API, bound like the proxy user.
sat=$("$k8s" sa-token "$ns" gate-proxy-sa 10m)
check "SA token whoami" 201 "$(code "$sat" POST /apis/authentication.k8s.io/v1/selfsubjectreviews \
    -H 'Content-Type: application/json' \
    --data '{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}')"
check "  ...username" "system:serviceaccount:$ns:gate-proxy-sa" \
    "$(sed -n 's/.*"username": *"\([^"]*\)".*/\1/p' "$tmp/body" | head -n 1)"
check "SA token GET the ConfigMap before binding" 403 "$(code "$sat" GET "$cmpath")"
kc -n "$ns" create rolebinding gate-proxy-sa --role=gate-proxy --serviceaccount="$ns:gate-proxy-sa" >/dev/null
check "SA token GET the ConfigMap after binding" 200 "$(code "$sat" GET "$cmpath")"

kc delete namespace "$ns" --wait=false >/dev/null || true
echo "$pass passed, $fail failed"
(( fail == 0 ))
