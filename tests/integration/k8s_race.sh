#!/usr/bin/env bash
# Races on the operator's ConfigMap, on a real kube-apiserver
# (tests/k8s/apiserver.sh, RBAC on) and a real broker.
#
# A. Other writers while the proxy publishes (its own map, its own topic):
#   A1. BLUE first; the operator rewrites {GREEN, INITIALIZING}; then, for
#       the whole transition, other writers change the map many times a
#       second, each write compare-and-set on the resourceVersion it read:
#       merge patches of their own data keys and an annotation, replaces of
#       the whole object (from Python over HTTPS, and kubectl replace).
#       The operator sets TRANSITIONING, later RUNNING, compare-and-set too.
#       Twice the proxy is held at a fault point (GP_FAULT_HOLD) between
#       its read of the map and its write while another writer changes the
#       map: a status write, and once T is published its CLEAR_TO_TEARDOWN;
#       each write gets 409, is read again and retried, and lands.
#       Asserted: the proxy logged conflicts on status and protocol writes
#       and the protocol completed (WAITING_FOR_WATERMARK, WATERMARK_SET
#       with T, CLEAR_TO_TEARDOWN); every key and annotation of the other
#       writers holds the last value they wrote, and none ever went back
#       to an older value (the watch history); stage never went back once
#       the operator moved it, and T never changed; gp-check --cutoff T
#       --old blue finds all zeros.
#   A2. Green -> blue: the proxy is held between its read of the map and
#       its WAITING_FOR_WATERMARK write; meanwhile the operator aborts
#       ({GREEN, FAILING, first=true}). Released, the write gets 409, the
#       map no longer describes that transition, and the write is dropped:
#       no protocol key ever appears in the aborted map.
# B. An abort after T (integration.abort through the API server): BLUE
#   first; {GREEN, INITIALIZING}; TRANSITIONING; T published and records
#   split; before the close (the watermark is about T + 4.8 s, lateness
#   7 s) the operator rewrites the map {BLUE, FAILING, first=true}; the
#   records after it take the watermark past T + lateness. Asserted: every
#   later record goes to blue and the aborted transition never closes,
#   gate-proxy.aborted-routed equals the records green got (also counted
#   on S.green itself by a read_committed kcat), the proxy writes no
#   protocol key and no CLEAR_TO_TEARDOWN into the aborted map, the
#   re-delivery (gate.abort.redeliver, the default) gives blue exactly the
#   records green got, and gp-check --survivor blue finds every record in
#   blue once, green's among them, and nothing lost.
# Needs the fixture: started here when it is not running (and stopped at
# the end if so); GP_K8S_PORT / GP_K8S_DIR choose its port and run dir.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/k8s_lib.sh"

NS=gp-race-$RUN_ID
CMA=race-bluegreen-configmap
CMB=abort-bluegreen-configmap
HOLD=$WORK/hold # the fault points' arm files: $HOLD.<point>

race_cleanup() {
  local rc=$?
  set +e
  if [ -n "$PROXY_PID" ] && kill -0 "$PROXY_PID" 2>/dev/null; then
    kill -9 "$PROXY_PID" 2>/dev/null
  fi
  # the helpers still running: recorders, other writers, producers
  for pid in $(jobs -pr); do
    kill "$pid" 2>/dev/null
  done
  rm -f "$HOLD".* # disarm the fault points
  if [ $rc -ne 0 ] && "$K8S" status >/dev/null 2>&1; then
    for cm in "$CMA" "$CMB"; do
      echo "--- ConfigMap $NS/$cm:" >&2
      "$K8S" kubectl -n "$NS" get configmap "$cm" -o yaml >&2 2>/dev/null
    done
  fi
  k8s_fixture_down
  (exit $rc)
  finish_test
}
trap race_cleanup EXIT

# ---- the API server ------------------------------------------------------
k8s_fixture_up
# The other writers' credentials (the admin's): in race.py's environment
# only (not the proxy's), never in a file.
PY_ENV=(env "K_URL=$("$K8S" url)" "K_CA=$("$K8S" ca)" "K_TOKEN=$("$K8S" token admin)")
say "API server $("$K8S" url); namespace $NS"

kc create namespace "$NS" >/dev/null
kc -n "$NS" create role gate-proxy --verb=get,watch,patch --resource=configmaps \
  --resource-name="$CMA" --resource-name="$CMB" >/dev/null
kc -n "$NS" create rolebinding gate-proxy --role=gate-proxy --user=gate-proxy >/dev/null

# ---- race.py: the other writers, the operator's compare-and-set writes,
# a recorder of every version of a map (a watch), and checks on what it saw.
cat >"$WORK/race.py" <<'PY'
import http.client, json, os, random, ssl, sys, threading, time, urllib.parse

class Api:
    def __init__(self):
        u = urllib.parse.urlparse(os.environ["K_URL"])
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=os.environ["K_CA"])
        self.token = os.environ["K_TOKEN"]
        self.conn = None

    def req(self, method, path, body=None, ctype="application/json", timeout=15):
        for attempt in range(3):
            if self.conn is None:
                self.conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                                        timeout=timeout)
            h = {"Authorization": "Bearer " + self.token, "Accept": "application/json"}
            if body is not None:
                h["Content-Type"] = ctype
            try:
                self.conn.request(method, path, body=None if body is None else json.dumps(body),
                                  headers=h)
                r = self.conn.getresponse()
                data = r.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                # Only a read is repeated: a write that failed in flight
                # may have landed, and the bookkeeping would be wrong.
                if method != "GET" or attempt == 2:
                    raise
                continue
            return r.status, (json.loads(data) if data else None)

def cm_path(ns, name=None):
    return "/api/v1/namespaces/%s/configmaps%s" % (ns, "/" + name if name else "")

def get(api, ns, name):
    st, obj = api.req("GET", cm_path(ns, name))
    if st != 200:
        sys.exit("race.py: GET %s/%s: %s %s" % (ns, name, st, obj))
    return obj

def merge_patch(api, ns, name, rv, data=None, ann=None):
    meta = {"resourceVersion": rv}
    if ann:
        meta["annotations"] = ann
    body = {"metadata": meta}
    if data:
        body["data"] = data
    return api.req("PATCH", cm_path(ns, name), body, "application/merge-patch+json")

CYCLE_MS, QUIET_MS = 1500, 500

def wait_burst():
    """The writers come in bursts: 1 s of writes, then 0.5 s of quiet (the
    same wall-clock schedule as the kubectl writer, which is too slow to
    win a compare-and-set inside a burst)."""
    ph = time.time() * 1000 % CYCLE_MS
    if ph >= CYCLE_MS - QUIET_MS - 50:
        time.sleep((CYCLE_MS - ph) / 1000)

def writers(ns, name, stop, out):
    """Other writers until the file stop exists: a patcher (merge patch of
    its own data keys and an annotation, on the version it read) and a
    replacer (the whole object as read a moment earlier, one key changed).
    Values are increasing counters, so the history shows any regression."""
    stats = {"patch_ok": 0, "patch_409": 0, "replace_ok": 0, "replace_409": 0}
    expect_data, expect_ann, errors = {}, {}, []
    lock = threading.Lock()

    def patcher():
        api, i = Api(), 0
        while not os.path.exists(stop):
            wait_burst()
            i += 1
            rv = get(api, ns, name)["metadata"]["resourceVersion"]
            time.sleep(random.uniform(0, 0.015))
            key = "racer.patch.%d" % (i % 3)
            st, obj = merge_patch(api, ns, name, rv, {key: str(i)}, {"racer/patch": str(i)})
            with lock:
                if st == 200:
                    stats["patch_ok"] += 1
                    expect_data[key] = str(i)
                    expect_ann["racer/patch"] = str(i)
                elif st == 409:
                    stats["patch_409"] += 1
                else:
                    errors.append("PATCH: %s %s" % (st, obj))
                    return
            time.sleep(random.uniform(0.005, 0.03))

    def replacer():
        api, i = Api(), 0
        while not os.path.exists(stop):
            wait_burst()
            i += 1
            obj = get(api, ns, name)
            time.sleep(random.uniform(0, 0.02))
            obj.setdefault("data", {})["racer.replace"] = str(i)
            st, res = api.req("PUT", cm_path(ns, name), obj)
            with lock:
                if st == 200:
                    stats["replace_ok"] += 1
                    expect_data["racer.replace"] = str(i)
                elif st == 409:
                    stats["replace_409"] += 1
                else:
                    errors.append("PUT: %s %s" % (st, res))
                    return
            time.sleep(random.uniform(0.005, 0.03))

    def guarded(f):
        def run():
            try:
                f()
            except BaseException as e:  # SystemExit too: a thread would swallow it
                with lock:
                    errors.append("%s: %r" % (f.__name__, e))
        return run

    ts = [threading.Thread(target=guarded(f)) for f in (patcher, replacer)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    json.dump({"stats": stats, "data": expect_data, "annotations": expect_ann,
               "errors": errors}, open(out, "w"))
    if errors:
        sys.exit("race.py: writers: " + "; ".join(errors))

def cas(ns, name, kvs):
    """The operator's compare-and-set write: read, patch on that version,
    on 409 read again. Prints the attempts it took."""
    api = Api()
    data = dict(kv.split("=", 1) for kv in kvs)
    for attempt in range(1, 201):
        rv = get(api, ns, name)["metadata"]["resourceVersion"]
        st, obj = merge_patch(api, ns, name, rv, data)
        if st == 200:
            print(attempt)
            return
        if st != 409:
            sys.exit("race.py: cas: %s %s" % (st, obj))
    sys.exit("race.py: cas: still 409 after 200 attempts")

def record(ns, name, out):
    """Every version of the map, in order (a watch from the version read),
    one JSON line each, until killed."""
    api = Api()
    obj = get(api, ns, name)
    f = open(out, "a", buffering=1)
    def emit(kind, o):
        f.write(json.dumps({"type": kind, "rv": o["metadata"]["resourceVersion"],
                            "data": o.get("data") or {},
                            "annotations": o["metadata"].get("annotations") or {}}) + "\n")
    emit("INITIAL", obj)
    rv = obj["metadata"]["resourceVersion"]
    while True:
        q = urllib.parse.urlencode({"watch": "1", "resourceVersion": rv,
                                    "fieldSelector": "metadata.name=" + name,
                                    "timeoutSeconds": "600"})
        conn = http.client.HTTPSConnection(api.host, api.port, context=api.ctx, timeout=700)
        conn.request("GET", cm_path(ns) + "?" + q,
                     headers={"Authorization": "Bearer " + api.token})
        r = conn.getresponse()
        if r.status != 200:
            sys.exit("race.py: watch: %s" % r.status)
        while True:
            line = r.readline()
            if not line:
                break
            ev = json.loads(line)
            if ev["type"] == "ERROR":
                sys.exit("race.py: watch error (a version was missed): %s" % ev["object"])
            rv = ev["object"]["metadata"]["resourceVersion"]
            emit(ev["type"], ev["object"])
        conn.close()

def history(path):
    return [json.loads(l) for l in open(path) if l.strip()]

STAGES = ["INITIALIZING", "TRANSITIONING", "CLEAR_TO_TEARDOWN", "RUNNING"]
WMS = ["", "WAITING_FOR_WATERMARK", "WATERMARK_SET"]

def check_hop(path, active, t):
    """From the operator's TRANSITIONING to `active` until the map is
    rewritten for something else: stage and watermark-stage only move
    forward, through WAITING_FOR_WATERMARK to WATERMARK_SET and through
    CLEAR_TO_TEARDOWN to RUNNING; T is one value; the other writers'
    counters never go back or vanish."""
    evs, bad, seg = history(path), [], []
    started = False
    for e in evs:
        d = e["data"]
        if not started:
            started = d.get("active-deployment-type") == active and d.get("stage") == "TRANSITIONING"
            if not started:
                continue
        if d.get("active-deployment-type") != active or d.get("is-first-deployment") != "false":
            break
        seg.append(e)
    if not seg:
        sys.exit("check: no TRANSITIONING to %s in the history" % active)
    st = wm = 0
    seen = {}
    for e in seg:
        d, a = e["data"], e["annotations"]
        s = d.get("stage", "")
        if s not in STAGES or STAGES.index(s) < st:
            bad.append("rv %s: stage %r after %s" % (e["rv"], s, STAGES[st]))
        else:
            st = STAGES.index(s)
        w = d.get("watermark-stage", "")
        if w not in WMS or WMS.index(w) < wm:
            bad.append("rv %s: watermark-stage %r after %r" % (e["rv"], w, WMS[wm]))
        else:
            wm = WMS.index(w)
        tv = d.get("watermark-toggle-value")
        if (tv is not None or w == "WATERMARK_SET") and tv != t:
            bad.append("rv %s: watermark-toggle-value %r, not T=%s" % (e["rv"], tv, t))
        if s == "CLEAR_TO_TEARDOWN" and w != "WATERMARK_SET":
            bad.append("rv %s: CLEAR_TO_TEARDOWN without WATERMARK_SET" % e["rv"])
        for k, v in list(d.items()) + [("annotation " + k, v) for k, v in a.items()]:
            if "racer" in k:
                if k in seen and int(v) < seen[k]:
                    bad.append("rv %s: %s went back from %d to %s" % (e["rv"], k, seen[k], v))
                seen[k] = max(seen.get(k, 0), int(v))
        for k in seen:
            present = (k[len("annotation "):] in a) if k.startswith("annotation ") else k in d
            if not present:
                bad.append("rv %s: %s vanished" % (e["rv"], k))
    if STAGES[st] != "RUNNING" or WMS[wm] != "WATERMARK_SET":
        bad.append("the hop ended at stage %s, watermark-stage %s" % (STAGES[st], WMS[wm]))
    if not any(e["data"].get("watermark-stage") == "WAITING_FOR_WATERMARK" for e in seg):
        bad.append("no version with watermark-stage=WAITING_FOR_WATERMARK")
    if not any(e["data"].get("stage") == "CLEAR_TO_TEARDOWN" for e in seg):
        bad.append("no version with stage=CLEAR_TO_TEARDOWN")
    if bad:
        sys.exit("check: %d problems in %d versions, the first: %s"
                 % (len(bad), len(seg), "; ".join(bad[:5])))
    print("%d versions" % len(seg))

def check_aborted(path, survivor):
    """From the operator's abort on: the map keeps the abort (survivor,
    FAILING, first) and never gets a protocol key again."""
    evs, bad, n = history(path), [], 0
    started = False
    for e in evs:
        d = e["data"]
        if not started:
            started = (d.get("stage") == "FAILING" and d.get("is-first-deployment") == "true"
                       and d.get("active-deployment-type") == survivor)
            if not started:
                continue
        n += 1
        if (d.get("stage"), d.get("is-first-deployment"), d.get("active-deployment-type")) != \
                ("FAILING", "true", survivor):
            bad.append("rv %s: stage=%s first=%s active=%s" % (
                e["rv"], d.get("stage"), d.get("is-first-deployment"),
                d.get("active-deployment-type")))
        for k in ("watermark-stage", "watermark-toggle-value"):
            if k in d:
                bad.append("rv %s: %s=%s written into the aborted map" % (e["rv"], k, d[k]))
    if not n:
        sys.exit("check: the abort is not in the history")
    if bad:
        sys.exit("check: %s" % "; ".join(bad[:5]))
    print("%d versions" % n)

def count(path, pred):
    print(sum(1 for e in history(path) if pred(e["data"])))

if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "writers":
        writers(*args)
    elif cmd == "cas":
        cas(args[0], args[1], args[2:])
    elif cmd == "record":
        record(*args)
    elif cmd == "check-hop":
        check_hop(*args)
    elif cmd == "check-aborted":
        check_aborted(*args)
    elif cmd == "status-landed":  # a version with a heartbeat in (HB0, MS]
        import datetime
        def ms(hb):
            return datetime.datetime.strptime(hb, "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                tzinfo=datetime.timezone.utc).timestamp() * 1000
        lo, hi = ms(args[1]), int(args[2])
        sys.exit(0 if any(lo < ms(e["data"]["gate-proxy.heartbeat"]) <= hi
                          for e in history(args[0]) if e["data"].get("gate-proxy.heartbeat"))
                 else 1)
    elif cmd == "heartbeats":  # status writes that landed while the other writers ran
        print(len({e["data"].get("gate-proxy.heartbeat") for e in history(args[0])
                   if any(k.startswith("racer.") for k in e["data"])} - {None}))
    elif cmd == "clear-count":
        count(args[0], lambda d: d.get("stage") == "CLEAR_TO_TEARDOWN")
    else:
        sys.exit("race.py: unknown command " + cmd)
PY
race() { "${PY_ENV[@]}" python3 "$WORK/race.py" "$@"; }
# (Background helpers are started directly, not through a function, so
# that $! is the process to stop.)

# ---- helpers ---------------------------------------------------------------
cm_json() { kc -n "$NS" get configmap "$1" -o json; }
# kkey CM NAME: a data key of that ConfigMap ("" when absent)
kkey() {
  cm_json "$1" | python3 -c 'import json,sys; print((json.load(sys.stdin).get("data") or {}).get(sys.argv[1], ""))' "$2"
}
kkey_is() { [ "$(kkey "$1" "$2")" = "$3" ]; }
krouted() {
  cm_json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin).get("data") or {}
print(sum(int(d.get("gate-proxy.count." + c) or 0) for c in ("blue", "green", "dlq")))'
}
krouted_is() { [ "$(krouted "$1")" -ge "$2" ]; }
# rewrite CM KEY=VALUE...: the operator replaces the whole map. kubectl
# replace sends the resourceVersion it reads first, so a proxy write in
# between gives a 409; the operator then reads and writes again, as here.
rewrite() {
  local cm=$1; shift
  local args=() attempt err
  for kv in "$@"; do args+=(--from-literal="$kv"); done
  for attempt in $(seq 1 20); do
    if err=$(kc -n "$NS" create configmap "$cm" "${args[@]}" --dry-run=client -o yaml \
               | kc replace -f - 2>&1 >/dev/null); then
      return 0
    fi
    grep -q Conflict <<<"$err" || { echo "$err" >&2; return 1; }
    sleep 0.1
  done
  echo "$err" >&2
  return 1
}
# k8s_conf NAME TOPIC CM [key=value...]
k8s_conf() {
  local name=$1 topic=$2 cm=$3; shift 3
  k8s_write_conf "$name" "$topic" "$cm" "gate.pipeline=it-$name-$RUN_ID" log.level=debug "$@"
}
# The proxy runs with GP_FAULT_HOLD=$HOLD: `arm POINT` makes it stop the
# next time it passes that fault point (before-decision-write: it has read
# the map and is about to write a protocol key on that version;
# before-status-write: the same for its status keys); `held POINT` is true
# while it waits there; `release POINT` lets it go on.
arm() { touch "$HOLD.$1"; }
held() { [ -e "$HOLD.$1.held" ]; }
released() { [ ! -e "$HOLD.$1.held" ]; }
release() {
  rm -f "$HOLD.$1"
  wait_for "the proxy to go on past $1" 10 released "$1"
}
ms_sleep() { sleep "$(awk -v ms="$1" 'BEGIN { printf "%.3f", ms / 1000 }')"; }
lines() { grep -c -- "$1" "$WORK/proxy.log" || true; }
more_lines() { [ "$(lines "$1")" -gt "$2" ]; }
# recording PID NAME: the watch recorder of that map is still complete
recording() {
  kill -0 "$1" 2>/dev/null && [ ! -s "$WORK/record-$2.err" ] \
    || fail "the watch recorder of map $2 stopped: $(cat "$WORK/record-$2.err")"
}
# log_after PATTERN_A PATTERN_B: a line with B comes after the first with A
log_after() {
  awk -v a="$1" -v b="$2" 'index($0, a) { s = 1 } s && index($0, b) { f = 1 } END { exit !f }' \
    "$WORK/proxy.log"
}
BASE=1700000000000

###########################################################################
# A1. Other writers for a whole transition
###########################################################################
SA=gp-race-$RUN_ID
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$SA" --count 0 --partitions-hint 4 --quiet >/dev/null
kc -n "$NS" create configmap "$CMA" --from-literal=active-deployment-type=BLUE \
  --from-literal=stage=RUNNING --from-literal=is-first-deployment=true >/dev/null
"${PY_ENV[@]}" python3 "$WORK/race.py" record "$NS" "$CMA" "$WORK/hist-a.jsonl" >/dev/null 2>"$WORK/record-a.err" &
REC_A=$!
# Event time 1 ms a record at 2500 records/s runs 2.5 times wall speed: the
# close comes (0.5 s + 10 s of event time) / 2.5 = about 4 s after T.
k8s_conf a "$SA" "$CMA" gate.lateness.ms=10000
GP_FAULT_HOLD=$HOLD "$GP_BIN" run -c "$WORK/a.conf" >>"$WORK/proxy.log" 2>&1 &
PROXY_PID=$!
say "A1. proxy started (pid $PROXY_PID); 50000 records at 2500/s, first deployment BLUE"
NA=50000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$SA" --count $NA --start-id 0 --quiet \
  --ts-start $BASE --disorder 100 --rate 2500 >/dev/null &
PRODUCER_A=$!
wait_for "records routed to blue" 60 krouted_is "$CMA" 2000
[ "$(kkey "$CMA" gate-proxy.count.green)" = 0 ] || fail "green got records in the first deployment"

say "    operator: rewrite {GREEN, INITIALIZING, first=false, delay=500}"
rewrite "$CMA" active-deployment-type=GREEN stage=INITIALIZING is-first-deployment=false \
  deployment-deletion-delay-ms=500
wait_for "the proxy to see the transition" 30 grep -q "transition blue -> green requested" "$WORK/proxy.log"

say "    other writers start: merge patches, whole-object replaces, kubectl replace"
STOP=$WORK/writers.stop
"${PY_ENV[@]}" python3 "$WORK/race.py" writers "$NS" "$CMA" "$STOP" "$WORK/writers.json" >/dev/null 2>"$WORK/writers.err" &
WRITERS=$!
# kubectl replace of the object as read a moment earlier (its
# resourceVersion is the precondition): twice per 1.5 s cycle of the other
# writers, once at the start of their quiet 0.5 s, once inside a burst.
(
  i=0
  while [ ! -e "$STOP" ]; do
    if [ $((i % 2)) = 0 ]; then # to the start of the next quiet 0.5 s
      ph=$(( $(date +%s%3N) % 1500 ))
      ms_sleep $(( ph >= 1000 && ph < 1050 ? 0 : (2500 - ph) % 1500 ))
    else
      ms_sleep 400
    fi
    i=$((i + 1))
    kc -n "$NS" get configmap "$CMA" -o json >"$WORK/kc.json" 2>/dev/null || continue
    python3 -c '
import json, sys
o = json.load(open(sys.argv[1])); o["data"]["racer.kubectl"] = sys.argv[2]
json.dump(o, open(sys.argv[1], "w"))' "$WORK/kc.json" "$i"
    if kc replace -f "$WORK/kc.json" >/dev/null 2>"$WORK/kc.err"; then
      echo "$i" >>"$WORK/kc.ok"
    elif grep -q "the object has been modified" "$WORK/kc.err"; then
      echo "$i" >>"$WORK/kc.409"
    else
      cat "$WORK/kc.err" >>"$WORK/kc.errors"
    fi
  done
) </dev/null >/dev/null 2>"$WORK/kc-loop.err" &
KC_LOOP=$!
sleep 1
# One status write held between its read and its write while the map moves:
# it gets 409, reads again and lands.
arm before-status-write
wait_for "the proxy held before a status write (only a -DGP_TEST_HOOKS=ON build holds)" 30 \
  held before-status-write
held_ms=$(date +%s%3N)
hb0=$(kkey "$CMA" gate-proxy.heartbeat)
c0=$(lines "conflict writing gate-proxy.phase and others at resourceVersion")
kc -n "$NS" annotate configmap "$CMA" racer/status-held=1 >/dev/null
release before-status-write
wait_for "a conflict logged for the status write made on a stale resourceVersion" 10 \
  more_lines "conflict writing gate-proxy.phase and others at resourceVersion" "$c0"
# The held write carries a heartbeat from before the hold; the next one
# comes a status interval after the release.
wait_for "the held status write (heartbeat after $hb0, not after the hold) in the map" 10 \
  race status-landed "$WORK/hist-a.jsonl" "$hb0" "$held_ms"
say "    a status write held on a stale resourceVersion: 409, read again, written"
sleep 2

say "    operator: stage=TRANSITIONING (compare-and-set)"
att=$(race cas "$NS" "$CMA" stage=TRANSITIONING) || fail "the operator's TRANSITIONING write failed"
say "    (the operator's write took $att attempts)"
wait_for "WATERMARK_SET in the proxy's log" 60 grep -q "published watermark-toggle-value=" "$WORK/proxy.log"
arm before-decision-write # the next decision it writes is CLEAR_TO_TEARDOWN
TA=$(grep -m1 -o "published watermark-toggle-value=[0-9]*" "$WORK/proxy.log" | cut -d= -f2)
grep -q "published watermark-stage=WAITING_FOR_WATERMARK" "$WORK/proxy.log" \
  || fail "WATERMARK_SET published without WAITING_FOR_WATERMARK first"
say "    T=$TA published; waiting for the proxy at its CLEAR_TO_TEARDOWN write"
wait_for "the proxy held before writing CLEAR_TO_TEARDOWN" 60 held before-decision-write
[ "$(kkey "$CMA" stage)" = TRANSITIONING ] || fail "stage is $(kkey "$CMA" stage) while the proxy is held"
c0=$(lines "conflict writing stage ")
kc -n "$NS" annotate configmap "$CMA" racer/held=1 >/dev/null # the map moves on for sure
release before-decision-write
wait_for "CLEAR_TO_TEARDOWN" 60 kkey_is "$CMA" stage CLEAR_TO_TEARDOWN
[ "$(lines "conflict writing stage ")" -gt "$c0" ] \
  || fail "no conflict logged for the CLEAR_TO_TEARDOWN write made on a stale resourceVersion"
log_after "conflict writing stage " "published stage=CLEAR_TO_TEARDOWN" \
  || fail "CLEAR_TO_TEARDOWN not published after its conflict"
[ "$(kkey "$CMA" watermark-toggle-value)" = "$TA" ] || fail "T in the map is not $TA"
say "    CLEAR_TO_TEARDOWN written after a 409 and a retry"

att=$(race cas "$NS" "$CMA" stage=RUNNING) || fail "the operator's RUNNING write failed"
say "    operator: stage=RUNNING ($att attempts); the writers go on for 2 s"
sleep 2
# (and until the slow kubectl writer has won at least once)
wait_for "a kubectl replace to succeed among the other writers" 120 test -s "$WORK/kc.ok"
touch "$STOP"
wait "$WRITERS" || fail "the other writers failed: $(cat "$WORK/writers.err")"
wait "$KC_LOOP" || true
[ ! -s "$WORK/writers.err" ] || fail "the other writers: $(cat "$WORK/writers.err")"
[ ! -s "$WORK/kc.errors" ] || fail "kubectl replace failed otherwise than by 409: $(head -3 "$WORK/kc.errors")"

# What the other writers wrote last is what the map holds.
cm_json "$CMA" >"$WORK/cm-a.json"
python3 - "$WORK/writers.json" "$WORK/cm-a.json" "$(tail -n1 "$WORK/kc.ok" 2>/dev/null)" <<'PY' \
  || fail "the other writers' keys or annotations were lost (see above)"
import json, sys
w, cm, kc_last = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
d, a = cm.get("data") or {}, cm["metadata"].get("annotations") or {}
bad = ["data %s=%r, expected %r" % (k, d.get(k), v) for k, v in w["data"].items() if d.get(k) != v]
bad += ["annotation %s=%r, expected %r" % (k, a.get(k), v)
        for k, v in w["annotations"].items() if a.get(k) != v]
if kc_last and d.get("racer.kubectl") != kc_last:
    bad.append("data racer.kubectl=%r, expected %r" % (d.get("racer.kubectl"), kc_last))
if a.get("racer/held") != "1":
    bad.append("annotation racer/held=%r, expected '1'" % a.get("racer/held"))
s = w["stats"]
for kind in ("patch", "replace"):
    if not s[kind + "_ok"] or not s[kind + "_409"]:
        bad.append("%s: %d written, %d conflicts (both must be > 0)" % (kind, s[kind + "_ok"],
                                                                      s[kind + "_409"]))
if bad:
    print("\n".join(bad), file=sys.stderr)
    sys.exit(1)
PY
KC_OK=$(wc -l <"$WORK/kc.ok" 2>/dev/null || echo 0)
KC_409=$(wc -l <"$WORK/kc.409" 2>/dev/null || echo 0)
[ "$KC_OK" -gt 0 ] || fail "no kubectl replace succeeded"
STATS=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["stats"]; print(" ".join("%s=%d" % kv for kv in s.items()))' "$WORK/writers.json")
say "    other writers: $STATS kubectl_replace_ok=$KC_OK kubectl_replace_409=$KC_409; their last values are in the map"

# The proxy met 409s on its status writes too, retried them, and its status
# kept coming.
CONF_STATUS=$(lines "conflict writing gate-proxy.phase and others")
CONF_ALL=$(lines ": conflict writing ")
GAVE_UP=$(lines "still conflicting after 8 attempts")
[ "$CONF_STATUS" -gt 0 ] || fail "the proxy logged no conflict on its status writes"
wait "$PRODUCER_A" || fail "the producer failed"
wait_for "$NA records routed" 90 krouted_is "$CMA" $NA
grep -q "publishing to .* failed\|warn  status write" "$WORK/proxy.log" \
  && fail "a write to the ConfigMap failed: $(grep -m1 "publishing to .* failed\|warn  status write" "$WORK/proxy.log")"
HB=$(race heartbeats "$WORK/hist-a.jsonl")
[ "$HB" -ge 3 ] || fail "only $HB status writes landed while the other writers ran (about 10 s)"
say "    proxy: $CONF_ALL conflicts retried ($CONF_STATUS on status writes), gave up $GAVE_UP times; $HB heartbeats written meanwhile"

recording "$REC_A" a
race check-hop "$WORK/hist-a.jsonl" GREEN "$TA" >"$WORK/check.out" \
  || fail "the watch history of the transition: $(cat "$WORK/check.out")"
say "    history: $(cat "$WORK/check.out") from TRANSITIONING to RUNNING, stage and protocol keys only forward, T=$TA throughout, the other writers' values never went back"
[ "$(kkey "$CMA" stage)" = RUNNING ] || fail "stage is $(kkey "$CMA" stage), not the operator's RUNNING"

###########################################################################
# A2. The operator aborts between the proxy's read and its write
###########################################################################
say "A2. operator: rewrite {BLUE, INITIALIZING}; the proxy held at its first protocol write"
rewrite "$CMA" active-deployment-type=BLUE stage=INITIALIZING is-first-deployment=false \
  deployment-deletion-delay-ms=500
wait_for "the proxy to see the transition" 30 grep -q "transition green -> blue requested" "$WORK/proxy.log"
arm before-decision-write
kc -n "$NS" patch configmap "$CMA" --type=merge -p '{"data":{"stage":"TRANSITIONING"}}' >/dev/null
wait_for "the proxy held before writing WAITING_FOR_WATERMARK" 30 held before-decision-write
c0=$(lines "conflict writing watermark-stage at resourceVersion")
d0=$(lines "not published: the map moved on to another transition")
p0=$(lines "info  published ")
say "    held; operator: abort {GREEN, FAILING, first=true}"
rewrite "$CMA" active-deployment-type=GREEN stage=FAILING is-first-deployment=true
release before-decision-write
answered() {
  more_lines "not published: the map moved on to another transition" "$d0" \
    || more_lines "info  published " "$p0"
}
wait_for "the proxy's write to end (dropped or written)" 30 answered
more_lines "info  published " "$p0" \
  && fail "the proxy wrote its stale decision into the aborted map:" \
          "$(grep "info  published " "$WORK/proxy.log" | tail -n 1 | cut -d' ' -f4-)"
more_lines "not published: the map moved on to another transition" "$d0" \
  || fail "no 'not published: the map moved on to another transition' in the log"
[ "$(lines "conflict writing watermark-stage at resourceVersion")" -gt "$c0" ] \
  || fail "no conflict logged for the WAITING_FOR_WATERMARK write made on a stale resourceVersion"
wait_for "the proxy's abort" 30 grep -q "transition green -> blue aborted: all records go to green" "$WORK/proxy.log"
sleep 2.5 # two status writes: none may bring a protocol key back
stop_proxy
recording "$REC_A" a
race check-aborted "$WORK/hist-a.jsonl" GREEN >"$WORK/check.out" \
  || fail "the aborted map: $(cat "$WORK/check.out")"
[ -z "$(kkey "$CMA" watermark-stage)" ] || fail "watermark-stage=$(kkey "$CMA" watermark-stage) in the aborted map"
[ "$(kkey "$CMA" gate-proxy.phase)" = aborted ] || fail "gate-proxy.phase=$(kkey "$CMA" gate-proxy.phase), expected aborted"
log_after "transition green -> blue requested" "info  published " \
  && fail "the proxy published something after the second transition was requested"
say "    the stale WAITING_FOR_WATERMARK was dropped; the aborted map ($(cat "$WORK/check.out")) has no protocol key"

say "    gp-check --cutoff $TA --old blue:"
check "$SA" --cutoff "$TA" --old blue
[ "$CHECKED" = $NA ] || fail "checked $CHECKED records, expected $NA"

###########################################################################
# B. An abort after T
###########################################################################
mv "$WORK/proxy.log" "$WORK/proxy-a.log" # B's log checks read B's proxy only
SB=gp-race-abort-$RUN_ID
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$SB" --count 0 --partitions-hint 2 --quiet >/dev/null
kc -n "$NS" create configmap "$CMB" --from-literal=active-deployment-type=BLUE \
  --from-literal=stage=RUNNING --from-literal=is-first-deployment=true >/dev/null
"${PY_ENV[@]}" python3 "$WORK/race.py" record "$NS" "$CMB" "$WORK/hist-b.jsonl" >/dev/null 2>"$WORK/record-b.err" &
REC_B=$!
# Closing by idleness would take 17 s of quiet after T: out of reach here.
LB=7000
k8s_conf b "$SB" "$CMB" gate.lateness.ms=$LB gate.watermark.idle.ms=10000
start_proxy b
say "B. first deployment BLUE: 5000 records"
produce "$SB" 5000 0 --ts-start $BASE --disorder 100
wait_for "5000 records routed" 60 krouted_is "$CMB" 5000
[ "$(kkey "$CMB" gate-proxy.count.green)" = 0 ] || fail "green got records in the first deployment"

say "   operator: rewrite {GREEN, INITIALIZING, first=false, delay=0}, then TRANSITIONING"
rewrite "$CMB" active-deployment-type=GREEN stage=INITIALIZING is-first-deployment=false \
  deployment-deletion-delay-ms=0
wait_for "phase waiting" 30 kkey_is "$CMB" gate-proxy.phase waiting
kc -n "$NS" patch configmap "$CMB" --type=merge -p '{"data":{"stage":"TRANSITIONING"}}' >/dev/null
wait_for "WATERMARK_SET" 60 kkey_is "$CMB" watermark-stage WATERMARK_SET
TB=$(kkey "$CMB" watermark-toggle-value)
[ -n "$TB" ] || fail "WATERMARK_SET without watermark-toggle-value"
say "   T=$TB; 5000 more records, split"
produce "$SB" 5000 5000 --ts-start $((BASE + 5000)) --disorder 100
wait_for "10000 records routed" 60 krouted_is "$CMB" 10000
wait_for "phase split" 30 kkey_is "$CMB" gate-proxy.phase split
GREEN=$(kkey "$CMB" gate-proxy.count.green)
[ "$GREEN" -gt 0 ] || fail "no record reached green during the split"
[ "$(kkey "$CMB" stage)" = TRANSITIONING ] || fail "stage is $(kkey "$CMB" stage) before the abort (W < T + lateness)"

say "   operator: abort, rewrite {BLUE, FAILING, first=true} ($GREEN records are in green)"
rewrite "$CMB" active-deployment-type=BLUE stage=FAILING is-first-deployment=true
wait_for "phase aborted" 30 kkey_is "$CMB" gate-proxy.phase aborted
produce "$SB" 5000 10000 --ts-start $((BASE + 10000)) --disorder 100
wait_for "15000 records routed" 60 krouted_is "$CMB" 15000
wm_past() { [ "$(kkey "$CMB" gate-proxy.watermark)" -ge $((TB + LB)) ]; }
wait_for "the watermark past T + lateness" 30 wm_past
sleep 2.5 # two more status writes
stop_proxy
grep -q "old side blue closed" "$WORK/proxy.log" && fail "the aborted transition closed"
[ "$(kkey "$CMB" gate-proxy.phase)" = aborted ] \
  || fail "gate-proxy.phase=$(kkey "$CMB" gate-proxy.phase) with W past T + lateness, expected aborted"
[ "$(kkey "$CMB" gate-proxy.count.green)" = "$GREEN" ] \
  || fail "green has $(kkey "$CMB" gate-proxy.count.green) records, $GREEN before the abort: it got records after it"
[ "$(kkey "$CMB" gate-proxy.aborted-routed)" = "$GREEN" ] \
  || fail "gate-proxy.aborted-routed=$(kkey "$CMB" gate-proxy.aborted-routed), expected $GREEN (the records green got since T)"
[ "$(kkey "$CMB" gate-proxy.count.blue)" = $((15000 - GREEN)) ] \
  || fail "gate-proxy.count.blue=$(kkey "$CMB" gate-proxy.count.blue), expected $((15000 - GREEN))"
[ "$(kkey "$CMB" gate-proxy.cutoff)" = "$TB" ] || fail "gate-proxy.cutoff=$(kkey "$CMB" gate-proxy.cutoff), expected T=$TB"
# Counted on the topic itself, as a read_committed consumer sees it.
ON_GREEN=$(kcat -C -b "$GP_BOOTSTRAP" -t "$SB.green" -o beginning -X isolation.level=read_committed -e -q -f 'x\n' | wc -l)
[ "$ON_GREEN" = "$GREEN" ] || fail "$SB.green holds $ON_GREEN committed records, the proxy reports $GREEN"
recording "$REC_B" b
race check-aborted "$WORK/hist-b.jsonl" BLUE >"$WORK/check.out" \
  || fail "the aborted map: $(cat "$WORK/check.out")"
[ "$(race clear-count "$WORK/hist-b.jsonl")" = 0 ] || fail "CLEAR_TO_TEARDOWN was written"
grep -q "published stage=CLEAR_TO_TEARDOWN" "$WORK/proxy.log" && fail "the proxy published CLEAR_TO_TEARDOWN"
log_after "transition blue -> green aborted" "info  published " \
  && fail "the proxy published a protocol key after the abort"
[ "$(kkey "$CMB" stage)" = FAILING ] || fail "stage is $(kkey "$CMB" stage), not the operator's FAILING"
say "   after the abort: all to blue, W=$(kkey "$CMB" gate-proxy.watermark) past T + lateness and still aborted, aborted-routed=$GREEN (= records on $SB.green), no protocol key or CLEAR_TO_TEARDOWN written ($(cat "$WORK/check.out"))"

# The re-delivery: blue gets what green got, once, after what it had; a
# record sent to green after the abort would be missing from blue.
rdone() { [[ "$(kkey "$CMB" gate-proxy.redelivery)" == *" open=0" ]]; }
wait_for "the re-delivery done" 60 rdone
RD=$(kkey "$CMB" gate-proxy.redelivery)
[[ "$RD" == "to=blue sent=$GREEN left=0 lost=0 open=0" ]] \
  || fail "gate-proxy.redelivery is '$RD', expected the $GREEN records green got"
say "   re-delivery: $RD"
say "   gp-check --survivor blue:"
out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$SB" --event-time json:ts --survivor blue) \
  || fail "checker: $out"
say "   checker: $out"
grep -q "^checked=15000 " <<<"$out" || fail "not the 15000 records checked"
grep -q " redelivered=$GREEN aborted=$GREEN$" <<<"$out" \
  || fail "the checker found another re-delivery than the $GREEN records green got"
say "PASS"
