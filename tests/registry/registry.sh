#!/usr/bin/env bash
# Real Confluent-compatible schema registry for gate-proxy's Avro tests:
# Apicurio Registry (in-memory H2 storage) on loopback, run from the prebuilt
# Quarkus distribution that Maven Central carries as
# io.apicurio:apicurio-registry-app:<version>:tar.gz:all.
#
#   tests/registry/registry.sh start [--tls] [--auth USER:PASS]
#                                  fetch (once), start, wait until it answers
#   tests/registry/registry.sh tls [--auth USER:PASS]    same as start --tls
#   tests/registry/registry.sh stop      stop it and delete its run dir (all
#                                        schemas are in memory and go with it)
#   tests/registry/registry.sh status    "running ..." (exit 0), "starting or
#                                        unresponsive ..." (1) or "stopped" (3)
#   tests/registry/registry.sh url       Confluent API base URL, e.g.
#                                        http://127.0.0.1:18081/apis/ccompat/v7
#                                        ($url/schemas/ids/ID answers {"schema": ...})
#   tests/registry/registry.sh register SUBJECT FILE [SCHEMA_TYPE]
#                                        POST FILE's text to $url/subjects/SUBJECT/versions
#                                        (AVRO unless SCHEMA_TYPE: JSON, PROTOBUF), print the id
#   tests/registry/registry.sh ca        print the CA file (PEM) that signed the
#                                        TLS server certificate (made once)
#   tests/registry/registry.sh auth      print USER:PASS when started with --auth
#   tests/registry/registry.sh version   print the Apicurio version it runs (or would run)
#   tests/registry/registry.sh log       print the path of the registry's log
#   tests/registry/registry.sh pid       print the registry's pid (also in RUN/pid)
#   tests/registry/registry.sh freeze|thaw  SIGSTOP / SIGCONT it (a hung registry:
#                                        connections are accepted, nothing answers)
#
#   tests/registry/registry.sh start && export GP_REGISTRY_URL="$(tests/registry/registry.sh url)"
#
# --tls     HTTPS only (the plain port is not opened), with a server certificate
#           for IP 127.0.0.1 and DNS localhost signed by a self-signed test CA
#           made with openssl under .cache/registry/tls/ (see `ca`).
# --auth U:P  HTTP basic auth with one user U (password P, role sr-admin): every
#           request, reads included, then needs the Authorization header; a
#           request without it or with a wrong password gets 401 (no
#           WWW-Authenticate challenge is sent, so a client must send it
#           unasked). Needs Apicurio 3.x (Java 21+).
#
# Environment:
#   GP_REGISTRY_PORT      API port on 127.0.0.1 (default 18081; HTTPS with --tls)
#   GP_REGISTRY_MGMT_PORT management (health, metrics) port, 3.x only (default PORT+1)
#   GP_REGISTRY_VERSION   Apicurio version (default 3.3.3, which needs Java 21+;
#                         without such a Java and with GP_REGISTRY_VERSION unset,
#                         2.6.13.Final on Java 17 is used instead, with a warning;
#                         --auth is refused there)
#   GP_REGISTRY_TLS=1     as --tls;  GP_REGISTRY_AUTH=USER:PASS  as --auth
#   GP_REGISTRY_DIR       run dir (default .cache/registry-run): pid, registry.log,
#                         url, version, cafile, auth
#   GP_REGISTRY_HEAP      JVM max heap (default 256m)
#   GP_REGISTRY_JVM_OPTS  extra JVM options (default: serial GC, C1 only: this
#                         runs on 2 shared cores)
#   GP_REGISTRY_START_TIMEOUT seconds to wait for it to answer (default 120)
#   GP_REGISTRY_JAVA / JAVA_HOME  which java (default: the first Java new enough
#                         of JAVA_HOME, java on PATH, /usr/lib/jvm/*)
#
# The distribution goes to .cache/registry/<version>/ (git-ignored), fetched
# with `mvn dependency:copy` (about 160 MB) and unpacked; once there, no Maven
# call is made.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
CACHE="$ROOT/.cache"
REG_CACHE="$CACHE/registry"
TLS_DIR="$REG_CACHE/tls"
RUN="${GP_REGISTRY_DIR:-$CACHE/registry-run}"

DEFAULT_VERSION=3.3.3
FALLBACK_VERSION=2.6.13.Final
API_PATH=/apis/ccompat/v7

PORT="${GP_REGISTRY_PORT:-18081}"
case "$PORT" in ''|*[!0-9]*) printf 'registry.sh: error: GP_REGISTRY_PORT=%s is not a port number\n' "$PORT" >&2; exit 1 ;; esac
MGMT_PORT="${GP_REGISTRY_MGMT_PORT:-$((PORT + 1))}"
HEAP="${GP_REGISTRY_HEAP:-256m}"
START_TIMEOUT="${GP_REGISTRY_START_TIMEOUT:-120}"
DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.8.1

log() { printf 'registry.sh: %s\n' "$*" >&2; }
die() { printf 'registry.sh: error: %s\n' "$*" >&2; exit 1; }

usage() {
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
  exit 2
}

need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found: $2"; }

# ---- java -------------------------------------------------------------------

# java_spec JAVA: its java.specification.version as a whole number (8 for 1.8).
java_spec() {
  local s
  s="$("$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')"
  case "$s" in 1.*) s="${s#1.}" ;; esac
  case "$s" in ''|*[!0-9]*) echo 0 ;; *) echo "$s" ;; esac
}

# find_java MIN: the first java of at least version MIN, or nothing (exit 1).
find_java() {
  local min="$1" j cands=()
  if [ -n "${GP_REGISTRY_JAVA:-}" ]; then
    j="$(command -v "$GP_REGISTRY_JAVA" 2>/dev/null || echo "$GP_REGISTRY_JAVA")"
    [ -x "$j" ] || die "GP_REGISTRY_JAVA=$GP_REGISTRY_JAVA is not an executable"
    [ "$(java_spec "$j")" -ge "$min" ] || return 1
    echo "$j"; return 0
  fi
  [ -n "${JAVA_HOME:-}" ] && [ -x "$JAVA_HOME/bin/java" ] && cands+=("$JAVA_HOME/bin/java")
  command -v java >/dev/null 2>&1 && cands+=("$(command -v java)")
  # Newest first: temurin-25 before java-17.
  local d
  while IFS= read -r d; do
    [ -x "$d/bin/java" ] && cands+=("$d/bin/java")
  done < <(find /usr/lib/jvm -mindepth 1 -maxdepth 1 2>/dev/null | sort -t- -k2,2nr)
  for j in "${cands[@]}"; do
    if [ "$(java_spec "$j")" -ge "$min" ]; then echo "$j"; return 0; fi
  done
  return 1
}

major_of() { echo "${1%%.*}"; }
min_java_of() { if [ "$(major_of "$1")" -ge 3 ]; then echo 21; else echo 17; fi; }

# resolve_version_and_java: sets VERSION and JAVA_BIN.
resolve_version_and_java() {
  if [ -n "${GP_REGISTRY_VERSION:-}" ]; then
    VERSION="$GP_REGISTRY_VERSION"
    local min; min="$(min_java_of "$VERSION")"
    JAVA_BIN="$(find_java "$min")" \
      || die "Apicurio Registry $VERSION needs Java $min or newer and none was found (set JAVA_HOME or GP_REGISTRY_JAVA)"
    return 0
  fi
  VERSION="$DEFAULT_VERSION"
  if JAVA_BIN="$(find_java 21)"; then return 0; fi
  if JAVA_BIN="$(find_java 17)"; then
    log "warning: no Java 21+ found for Apicurio Registry $DEFAULT_VERSION (set JAVA_HOME or GP_REGISTRY_JAVA);"
    log "warning: falling back to Apicurio Registry $FALLBACK_VERSION on $JAVA_BIN (no --auth there)"
    VERSION="$FALLBACK_VERSION"
    return 0
  fi
  die "no Java 17+ found: install a JDK (apt-get install openjdk-17-jre-headless; Apicurio $DEFAULT_VERSION needs 21+) or set JAVA_HOME"
}

# ---- distribution ------------------------------------------------------------

# ensure_dist VERSION: the unpacked Quarkus app in $REG_CACHE/VERSION/app.
ensure_dist() {
  local v="$1" dir="$REG_CACHE/$1"
  if [ -f "$dir/app/.complete" ]; then return 0; fi
  need mvn "apt-get install maven (needed once to fetch Apicurio Registry $v)"
  need tar "apt-get install tar"
  mkdir -p "$dir"
  local tmp="$dir/download.tmp.$$" mlog="$dir/mvn.log" t0=$SECONDS
  rm -rf "$tmp" "$dir/app.tmp"
  log "fetching io.apicurio:apicurio-registry-app:$v:tar.gz:all from Maven Central (once, ~160 MB)..."
  if ! nice -n 10 mvn -B -Dstyle.color=never "$DEPENDENCY_PLUGIN:copy" \
        -Dartifact="io.apicurio:apicurio-registry-app:$v:tar.gz:all" \
        -DoutputDirectory="$tmp" >"$mlog" 2>&1; then
    rm -rf "$tmp"
    tail -n 30 "$mlog" >&2 || true
    die "Maven could not fetch Apicurio Registry $v (full log: $mlog)"
  fi
  local tgz="$tmp/apicurio-registry-app-$v-all.tar.gz"
  [ -f "$tgz" ] || { rm -rf "$tmp"; die "Maven ran but $tgz is missing"; }
  log "unpacking into $dir/app..."
  mkdir -p "$dir/app.tmp"
  tar -xzf "$tgz" -C "$dir/app.tmp" || { rm -rf "$tmp" "$dir/app.tmp"; die "could not unpack $tgz"; }
  rm -rf "$tmp" "$dir/app"
  mv "$dir/app.tmp" "$dir/app"
  launcher_jar "$dir/app" >/dev/null || die "no quarkus-run.jar or *-runner.jar in $dir/app"
  touch "$dir/app/.complete"
  log "Apicurio Registry $v ready in $dir/app ($((SECONDS - t0)) s)"
}

# launcher_jar APPDIR: the jar to run with -jar (3.x: fast-jar quarkus-run.jar,
# 2.x: legacy-jar *-runner.jar).
launcher_jar() {
  local f
  if [ -f "$1/quarkus-run.jar" ]; then echo "$1/quarkus-run.jar"; return 0; fi
  for f in "$1"/*-runner.jar; do [ -f "$f" ] && { echo "$f"; return 0; }; done
  return 1
}

# ---- TLS ---------------------------------------------------------------------

ensure_tls() {
  if [ -s "$TLS_DIR/server.crt" ] && [ -s "$TLS_DIR/server.key" ] && [ -s "$TLS_DIR/ca.crt" ]; then return 0; fi
  need openssl "apt-get install openssl"
  local tmp="$TLS_DIR.tmp.$$"
  rm -rf "$tmp"; mkdir -p "$tmp"
  (
    cd "$tmp"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -sha256 \
      -subj "/CN=gate-proxy test schema registry CA" -keyout ca.key -out ca.crt \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=127.0.0.1" -keyout server.key -out server.csr
    printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" "basicConstraints=CA:FALSE" \
      "keyUsage=critical,digitalSignature,keyEncipherment" "extendedKeyUsage=serverAuth" >server.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 -sha256 \
      -extfile server.ext -out server.crt
  ) >"$tmp/openssl.log" 2>&1 || { cat "$tmp/openssl.log" >&2; rm -rf "$tmp"; die "openssl could not make the test CA and server certificate"; }
  mkdir -p "$REG_CACHE"
  rm -rf "$TLS_DIR"
  mv "$tmp" "$TLS_DIR"
  log "made test CA $TLS_DIR/ca.crt and server certificate for 127.0.0.1/localhost"
}

# ---- process -----------------------------------------------------------------

# pid of the registry owning $RUN, or nothing (exit 1).
running_pid() {
  local pid cmdline
  [ -f "$RUN/pid" ] || return 1
  pid="$(cat "$RUN/pid" 2>/dev/null || true)"
  case "$pid" in ''|*[!0-9]*) return 1 ;; esac
  kill -0 "$pid" 2>/dev/null || return 1
  # Guard against pid reuse: it must be our java on $RUN.
  cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null || true)"
  case "$cmdline" in *"-Dgp.registry.dir=$RUN "*) echo "$pid" ;; *) return 1 ;; esac
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# curl options for the running registry (CA file, credentials), one a line.
curl_opts() {
  [ -f "$RUN/cafile" ] && printf '%s\n' --cacert "$(cat "$RUN/cafile")"
  [ -f "$RUN/auth" ] && printf '%s\n' -u "$(cat "$RUN/auth")"
  return 0
}

# http_code PATH: the status of GET $url/PATH (000 when nothing answers).
http_code() {
  local opts=()
  mapfile -t opts < <(curl_opts)
  curl -s -o /dev/null -w '%{http_code}' --max-time 5 "${opts[@]}" "$(cat "$RUN/url")$1" 2>/dev/null || true
}

log_tail() {
  if [ -s "$RUN/registry.log" ]; then
    printf -- '---- last lines of %s ----\n' "$RUN/registry.log" >&2
    tail -n 40 "$RUN/registry.log" >&2
  fi
}

cmd_start() {
  local tls="${GP_REGISTRY_TLS:-}" auth="${GP_REGISTRY_AUTH:-}"
  case "$tls" in 0|no|false) tls="" ;; esac
  while [ $# -gt 0 ]; do
    case "$1" in
      --tls) tls=1 ;;
      --auth) [ $# -ge 2 ] || die "--auth needs USER:PASS"; auth="$2"; shift ;;
      --auth=*) auth="${1#--auth=}" ;;
      *) die "start: unknown option '$1' (--tls, --auth USER:PASS)" ;;
    esac
    shift
  done
  if [ -n "$auth" ]; then
    case "$auth" in
      *:*) ;; *) die "--auth wants USER:PASS, not '$auth'" ;;
    esac
    case "${auth%%:*}" in ''|*[!A-Za-z0-9_.-]*) die "--auth user must be [A-Za-z0-9_.-]+" ;; esac
    case "${auth#*:}" in ''|*\\*) die "--auth password must be non-empty, without a backslash" ;; esac
  fi

  local pid
  if pid="$(running_pid)"; then
    log "already running (pid $pid) at $(cat "$RUN/url"); to change --tls/--auth, stop it first"
    return 0
  fi
  need curl "apt-get install curl"
  local VERSION JAVA_BIN
  resolve_version_and_java
  local major; major="$(major_of "$VERSION")"
  if [ -n "$auth" ] && [ "$major" -lt 3 ]; then
    die "--auth needs Apicurio Registry 3.x (its Quarkus embedded users); $VERSION has no local basic-auth users"
  fi
  if port_in_use "$PORT"; then
    die "port $PORT on 127.0.0.1 is already in use (another registry? try: tests/registry/registry.sh stop, or set GP_REGISTRY_PORT)"
  fi
  if [ "$major" -ge 3 ] && port_in_use "$MGMT_PORT"; then
    die "management port $MGMT_PORT on 127.0.0.1 is already in use (set GP_REGISTRY_MGMT_PORT)"
  fi
  ensure_dist "$VERSION"
  local appdir="$REG_CACHE/$VERSION/app" jar
  jar="$(launcher_jar "$appdir")"

  rm -rf "$RUN"
  mkdir -p "$RUN/tmp"
  local scheme=http
  local props=(
    -Dquarkus.http.host=127.0.0.1
    # Small pool: in-memory H2, a handful of test clients.
    -Dapicurio.datasource.jdbc.initial-size=2
    -Dapicurio.datasource.jdbc.min-size=2
    -Dapicurio.datasource.jdbc.max-size=10
    -Dapicurio.storage.snapshot.location="$RUN/tmp"
    -Dapicurio.import.work-dir="$RUN/tmp"
  )
  if [ "$major" -ge 3 ]; then
    props+=(-Dquarkus.management.host=127.0.0.1 -Dquarkus.management.port="$MGMT_PORT")
  fi
  if [ -n "$tls" ]; then
    ensure_tls
    scheme=https
    # insecure-requests=disabled: the plain port (PORT+2, set only because
    # Quarkus wants one) is never opened.
    props+=(-Dquarkus.http.ssl-port="$PORT" -Dquarkus.http.port=$((PORT + 2))
            -Dquarkus.http.insecure-requests=disabled
            -Dquarkus.http.ssl.certificate.files="$TLS_DIR/server.crt"
            -Dquarkus.http.ssl.certificate.key-files="$TLS_DIR/server.key")
    echo "$TLS_DIR/ca.crt" >"$RUN/cafile"
  else
    props+=(-Dquarkus.http.port="$PORT")
  fi
  if [ -n "$auth" ]; then
    # quarkus.http.auth.basic is build-time in Quarkus (the log warns that it
    # is "build time fixed to null"), but Apicurio reads it at run time to put
    # "basic" in its authentication chain; the embedded (properties-file)
    # users are built in (quarkus.security.users.embedded.enabled=true).
    # The user goes in config/application.properties of the working dir (the
    # run dir), which Quarkus reads at start, not on the command line.
    local user="${auth%%:*}" pass="${auth#*:}"
    (umask 077
     mkdir -p "$RUN/config"
     printf 'quarkus.security.users.embedded.users.%s=%s\nquarkus.security.users.embedded.roles.%s=sr-admin\n' \
       "$user" "$pass" "$user" >"$RUN/config/application.properties"
     printf '%s\n' "$auth" >"$RUN/auth")
    props+=(-Dquarkus.http.auth.basic=true -Dapicurio.authn.mechanism.priority=basic
            -Dquarkus.security.users.embedded.plain-text=true)
  fi
  local url="$scheme://127.0.0.1:$PORT$API_PATH"
  echo "$url" >"$RUN/url"
  echo "$VERSION" >"$RUN/version"

  # shellcheck disable=SC2206
  local jvm=(-Xms32m "-Xmx$HEAP" ${GP_REGISTRY_JVM_OPTS:--XX:+UseSerialGC -XX:TieredStopAtLevel=1}
             -Djava.awt.headless=true -Djava.io.tmpdir="$RUN/tmp" "-Dgp.registry.dir=$RUN")
  local t0=$SECONDS
  log "starting Apicurio Registry $VERSION ($JAVA_BIN) at $url${auth:+ (basic auth, user ${auth%%:*})} (run dir $RUN)..."
  # setsid: it outlives this shell and its process group. The working dir is
  # the run dir: Quarkus also reads config/application.properties from there.
  (cd "$RUN" && exec setsid "$JAVA_BIN" "${jvm[@]}" "${props[@]}" -jar "$jar" \
     >"$RUN/registry.log" 2>&1 </dev/null) &
  pid=$!
  echo "$pid" >"$RUN/pid"

  local deadline=$((SECONDS + START_TIMEOUT)) n=0 code
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log_tail
      rm -f "$RUN/pid"
      die "Apicurio Registry $VERSION exited during start-up (log: $RUN/registry.log)"
    fi
    code="$(http_code /subjects)"
    [ "$code" = 200 ] && break
    if [ "$SECONDS" -ge "$deadline" ]; then
      log_tail
      kill -KILL "$pid" 2>/dev/null || true
      rm -f "$RUN/pid"
      die "Apicurio Registry $VERSION did not answer 200 on $url/subjects within ${START_TIMEOUT}s (last status: $code; log: $RUN/registry.log)"
    fi
    n=$((n + 1))
    [ $((n % 10)) -eq 0 ] && log "  waiting for the registry... $((SECONDS - t0)) s"
    sleep 0.5
  done
  log "Apicurio Registry $VERSION up at $url (pid $pid, $((SECONDS - t0)) s)"
}

cmd_stop() {
  local pid
  if pid="$(running_pid)"; then
    log "stopping Apicurio Registry (pid $pid)..."
    kill -TERM "$pid" 2>/dev/null || true
    kill -CONT "$pid" 2>/dev/null || true # if frozen
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      log "  still alive after 30 s, killing"
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
    log "stopped"
  else
    log "not running"
  fi
  # Only ever delete a dir that looks like ours.
  if [ -d "$RUN" ]; then
    if [ -f "$RUN/url" ] || [ -f "$RUN/registry.log" ] || [ -d "$RUN/tmp" ]; then
      rm -rf "$RUN"
    else
      die "$RUN does not look like a registry run dir; not deleting it"
    fi
  fi
}

cmd_status() {
  local pid
  if pid="$(running_pid)"; then
    if [ "$(http_code /subjects)" = 200 ]; then
      echo "running: Apicurio Registry $(cat "$RUN/version") pid $pid url $(cat "$RUN/url") dir $RUN"
      return 0
    fi
    echo "starting or unresponsive: pid $pid url $(cat "$RUN/url") dir $RUN"
    return 1
  fi
  echo "stopped (dir $RUN)"
  return 3
}

need_running() { running_pid >/dev/null || die "not running (tests/registry/registry.sh start)"; }

# json_string TEXT: TEXT as a JSON string literal.
json_string() {
  local s="$1"
  s="${s//\\/\\\\}"; s="${s//\"/\\\"}"
  s="${s//$'\n'/\\n}"; s="${s//$'\r'/\\r}"; s="${s//$'\t'/\\t}"
  printf '"%s"' "$s"
}

cmd_register() {
  [ $# -ge 2 ] || die "usage: register SUBJECT FILE [SCHEMA_TYPE]"
  local subject="$1" file="$2" type="${3:-}"
  [ -r "$file" ] || die "cannot read $file"
  case "$subject" in ''|*[!A-Za-z0-9._-]*) die "subject must be [A-Za-z0-9._-]+ (no URL encoding is done), not '$subject'" ;; esac
  need_running
  local body resp opts=()
  body="{\"schema\":$(json_string "$(cat "$file")")"
  [ -n "$type" ] && body+=",\"schemaType\":$(json_string "$type")"
  body+="}"
  mapfile -t opts < <(curl_opts)
  resp="$(curl -sS --max-time 30 "${opts[@]}" -X POST \
            -H 'Content-Type: application/vnd.schemaregistry.v1+json' \
            --data-binary "$body" -w '\n%{http_code}' \
            "$(cat "$RUN/url")/subjects/$subject/versions")" || die "POST to the registry failed"
  local code="${resp##*$'\n'}" json="${resp%$'\n'*}"
  [ "$code" = 200 ] || die "register $subject: HTTP $code: $json"
  local id
  id="$(printf '%s' "$json" | sed -n 's/.*"id"[[:space:]]*:[[:space:]]*\([0-9][0-9]*\).*/\1/p')"
  [ -n "$id" ] || die "register $subject: no id in the answer: $json"
  echo "$id"
}

cmd_url() {
  if running_pid >/dev/null; then cat "$RUN/url"; return 0; fi
  local scheme=http
  case "${GP_REGISTRY_TLS:-}" in ''|0|no|false) ;; *) scheme=https ;; esac
  echo "$scheme://127.0.0.1:$PORT$API_PATH"
}

cmd_version() {
  if running_pid >/dev/null; then cat "$RUN/version"; return 0; fi
  local VERSION JAVA_BIN
  resolve_version_and_java
  echo "$VERSION"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  start)    cmd_start "$@" ;;
  tls)      cmd_start --tls "$@" ;;
  stop)     cmd_stop ;;
  status)   cmd_status ;;
  url)      cmd_url ;;
  register) cmd_register "$@" ;;
  ca)       ensure_tls; echo "$TLS_DIR/ca.crt" ;;
  auth)     need_running; [ -f "$RUN/auth" ] || die "started without --auth"; cat "$RUN/auth" ;;
  version)  cmd_version ;;
  log)      echo "$RUN/registry.log" ;;
  pid)      running_pid || die "not running" ;;
  freeze)   pid="$(running_pid)" || die "not running"; kill -STOP "$pid"; log "sent SIGSTOP to the registry (pid $pid)" ;;
  thaw)     pid="$(running_pid)" || die "not running"; kill -CONT "$pid"; log "sent SIGCONT to the registry (pid $pid)" ;;
  -h|--help|help) usage ;;
  *) usage ;;
esac
