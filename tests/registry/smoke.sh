#!/usr/bin/env bash
# Smoke check of the schema registry fixture (tests/registry/registry.sh):
# the Confluent calls gate-proxy's Avro path makes (GET $url/schemas/ids/ID),
# over plain HTTP, then over HTTPS with the test CA and basic auth.
# Starts and stops the registry itself; refuses to run if one is running.
# Needs curl. Prints "N passed, N failed"; exits non-zero on any failure.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
reg=$here/registry.sh
tmp=$(mktemp -d)
started=0
cleanup() {
    rm -rf "$tmp"
    if (( started )); then "$reg" stop >/dev/null 2>&1 || true; fi
}
trap cleanup EXIT

if "$reg" status >/dev/null 2>&1; then
    echo "smoke.sh: a registry is already running; stop it first (tests/registry/registry.sh stop)" >&2
    exit 1
fi

pass=0 fail=0
check() { # check NAME COMMAND...
    local name=$1; shift
    if "$@"; then pass=$((pass + 1)); echo "ok - $name"
    else fail=$((fail + 1)); echo "not ok - $name"; fi
}

schema='{"type":"record","name":"E","fields":[{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}}]}'
printf '%s\n' "$schema" >"$tmp/e.avsc"
# The same schema pretty-printed: the registry answers compact JSON.
printf '{\n  "type": "record",\n  "name": "F",\n  "fields": [ {"name": "s", "type": "string", "doc": "a \\"q\\""} ]\n}\n' >"$tmp/f.avsc"
f_compact='{"type":"record","name":"F","fields":[{"name":"s","type":"string","doc":"a \"q\""}]}'

# json_string TEXT: TEXT as a JSON string literal (as the registry escapes it).
json_string() {
    local s=$1
    s=${s//\\/\\\\}; s=${s//\"/\\\"}
    printf '"%s"' "$s"
}

# get PATH: body and status of GET $url/PATH into $tmp/body, $tmp/code.
get() {
    curl -s "${copts[@]}" -o "$tmp/body" -w '%{http_code}' "$url$1" >"$tmp/code" || echo 000 >"$tmp/code"
}
code_is() { [[ $(cat "$tmp/code") == "$1" ]]; }
body_is() { [[ $(cat "$tmp/body") == "$1" ]]; }
body_has() { grep -qF -- "$1" "$tmp/body"; }

round() { # round LABEL: the checks, on the running registry
    local label=$1 id id2
    id=$("$reg" register "gp-smoke-$label-value" "$tmp/e.avsc") || id=""
    check "$label: register prints a numeric id ($id)" test -n "$id"
    [[ $id =~ ^[0-9]+$ ]] || id=0
    get "/schemas/ids/$id"
    check "$label: GET schemas/ids/$id is 200" code_is 200
    check "$label: ... and answers {\"schema\": <the avsc>}" body_is "{\"schema\":$(json_string "$schema")}"
    id2=$("$reg" register "gp-smoke-$label-other" "$tmp/e.avsc") || id2=""
    check "$label: the same schema under another subject has the same id" test "$id2" = "$id"
    id2=$("$reg" register "gp-smoke-$label-f" "$tmp/f.avsc") || id2=0
    get "/schemas/ids/$id2"
    check "$label: a pretty-printed schema comes back as compact JSON" body_is "{\"schema\":$(json_string "$f_compact")}"
    get /schemas/ids/987654
    check "$label: an unknown id is 404" code_is 404
    check "$label: ... with error_code 40403" body_has '"error_code":40403'
}

"$reg" start
started=1
url=$("$reg" url)
copts=()
round http
"$reg" stop

"$reg" start --tls --auth gp-smoke:pw-smoke
url=$("$reg" url)
ca=$("$reg" ca)
check "tls: the url is https" test "${url#https://}" != "$url"
copts=(--cacert "$ca" -u gp-smoke:pw-smoke)
round tls
copts=(--cacert "$ca")
get /schemas/ids/1
check "tls: no credentials is 401" code_is 401
copts=(--cacert "$ca" -u gp-smoke:wrong)
get /schemas/ids/1
check "tls: a wrong password is 401" code_is 401
copts=(-u gp-smoke:pw-smoke)
get /schemas/ids/1
check "tls: without the test CA the certificate is refused" code_is 000
"$reg" stop
started=0

echo "$pass passed, $fail failed"
(( fail == 0 ))
