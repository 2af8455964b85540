#!/usr/bin/env bash
# /metrics and the probes, scraped by a real Prometheus (Debian's
# prometheus, on loopback, every second) through a blue -> green cutover on
# the real broker.
#   - before the control map exists: /livez 200, /readyz 503 (verbose says
#     which check fails); once it exists: /readyz 200;
#   - a scrape passes `promtool check metrics`; other methods get 405;
#   - Prometheus's own answers, through its HTTP API: the routed counters
#     per colour equal what gp-check found in S.blue and S.green, the
#     dead-letter counter what it found in the DLQ, and the phase series
#     went steady -> split -> closed, and every query of the Grafana
#     dashboard (deploy/grafana/gate-proxy.json) returns data;
#   - scripts/dashboard-png.py draws the dashboard's panels from that
#     Prometheus over the run (an overview and one PNG per panel), into
#     $GP_DASHBOARD_PNG when set (`make dashboard-png`: docs/dashboard/),
#     else into the work directory; every panel has data, every file is a
#     PNG of at least the expected size and not blank, and the overview
#     shows blue and green, steady and closed (the cutover);
#   - 200 abusive connections leave it answering and routing;
#   - after SIGTERM the proxy exits 0; with log.format=json every line of
#     its log is one JSON object.
# GP_METRICS_PACE=slow (`make dashboard-png`): 200 records a second with
# event time at the clock's pace, the cutover a minute in and 150 s of
# records in all, so the dashboard's one-minute rates settle in the plots;
# the default is 20,000 records at 4,000 a second, the cutover after 3,000.
source "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || fail "prometheus is not installed (scripts/install-deps.sh test)"
command -v promtool >/dev/null || fail "promtool is not installed (scripts/install-deps.sh test)"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
PLOT_PY=""
for py in python3 /usr/bin/python3; do
  "$py" -c 'import matplotlib' 2>/dev/null && { PLOT_PY=$py; break; }
done
[ -n "$PLOT_PY" ] || fail "matplotlib is not installed (python3-matplotlib: scripts/install-deps.sh test)"
case "${GP_METRICS_PACE:-fast}" in
  fast) N=20000 RATE=4000 TS_STEP=1 CUT=3000 ;;
  slow) N=30000 RATE=200 TS_STEP=5 CUT=12000 ;;
  *) fail "GP_METRICS_PACE is fast or slow, not '$GP_METRICS_PACE'" ;;
esac

S=gp-metrics-$RUN_ID
BASE=1700000000000
HP=$(free_port)
H=http://127.0.0.1:$HP
code() { curl -s -o "$WORK/body" -w '%{http_code}' -X "${2:-GET}" "$H$1"; }

"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 2 --quiet >/dev/null
write_conf p "$S" "http.listen=127.0.0.1:$HP" gate.watermark.idle.ms=1000 gate.lateness.ms=10000 \
  log.format=json
start_proxy p
wait_for "the HTTP server" 30 grep -q "serving /metrics, /livez, /healthz and /readyz" "$WORK/proxy.log"

# No map yet: alive, not ready.
[ "$(code /livez)" = 200 ] || fail "/livez before the map: $(code /livez)"
[ "$(code '/readyz?verbose')" = 503 ] || fail "/readyz before the map: $(code /readyz)"
grep -q "^\[-\] control-map" "$WORK/body" || fail "/readyz?verbose does not name the map: $(cat "$WORK/body")"
READY_BODY=$(tr '\n' ' ' <"$WORK/body")
[ "$(code /metrics POST)" = 405 ] || fail "POST /metrics was not refused with 405"
say "no map: /livez 200, /readyz 503 ($READY_BODY), POST 405"
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
ready() { [ "$(code /readyz)" = 200 ]; }
wait_for "/readyz 200 once the map exists" 30 ready

curl -s "$H/metrics" >"$WORK/scrape.txt"
promtool check metrics <"$WORK/scrape.txt" >"$WORK/promtool.txt" 2>&1 \
  || { cat "$WORK/promtool.txt"; fail "promtool check metrics failed"; }
say "promtool check metrics: passed ($(grep -c '^# TYPE' "$WORK/scrape.txt") families)"

# Prometheus, scraping every second.
PROM_START=$(date +%s)
prometheus_start "$HP"
scraped() { [ "$(prom_q 'up{job="gate-proxy"}')" = 1 ]; }
wait_for "Prometheus to scrape the proxy" 60 scraped
say "Prometheus $(prometheus --version 2>&1 | head -1 | cut -d' ' -f3) scrapes the proxy every second"

"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count $N --start-id 0 --ts-start $BASE \
  --ts-step $TS_STEP --disorder 100 --rate $RATE --bad-every 500 >/dev/null 2>"$WORK/produce.log" &
PRODUCER=$!
# The first CUT records routed, watched from three sides so that a
# time-out says which stopped: the map's count, /metrics' count, the producer.
scraped_routed() {
  curl -s "$H/metrics" | awk '/^gate_proxy_records_(routed|dead_lettered)_total/ {n += $NF} END {print n + 0}'
}
PRODUCER_RC=""
producer_state() {
  if [ -z "$PRODUCER_RC" ] && ! kill -0 "$PRODUCER" 2>/dev/null; then
    PRODUCER_RC=0
    wait "$PRODUCER" || PRODUCER_RC=$?
  fi
  [ "${PRODUCER_RC:-0}" = 0 ] ||
    fail "the producer exited $PRODUCER_RC: $(tail -n 5 "$WORK/produce.log")"
}
end=$(( $(date +%s) + CUT / RATE + 60 ))
until routed_is $CUT; do
  producer_state
  kill -0 "$PROXY_PID" 2>/dev/null || fail "the proxy died before $CUT records were routed"
  [ "$(date +%s)" -lt "$end" ] || fail "timed out after $((CUT / RATE + 60))s waiting for" \
    "$CUT records routed: $(routed) in the map, $(scraped_routed) on /metrics; the producer" \
    "$([ -n "$PRODUCER_RC" ] && echo "exited $PRODUCER_RC" || echo running): $(tail -n 2 "$WORK/produce.log")"
  sleep 0.2
done
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 500 >/dev/null 2>&1
wait_for "CLEAR_TO_TEARDOWN" 60 key_is stage CLEAR_TO_TEARDOWN
CLOSED_AT=$(date +%s)
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
producer_state
[ -n "$PRODUCER_RC" ] || { PRODUCER_RC=0; wait "$PRODUCER" || PRODUCER_RC=$?; }
[ "$PRODUCER_RC" = 0 ] || fail "the producer failed ($PRODUCER_RC): $(tail -n 5 "$WORK/produce.log")"
wait_for "$N records routed" 60 routed_is $N
T=$(key watermark-toggle-value)

check "$S" --dlq "$S.dlq" --cutoff "$T" --old blue --verbose 2>"$WORK/check.err"
FOUND=$(grep -o "found [0-9]* in $S.blue, [0-9]* in $S.green, [0-9]* in the DLQ" "$WORK/check.err")
read -r CB CG CD < <(sed -E 's/found ([0-9]+) in [^,]*, ([0-9]+) in [^,]*, ([0-9]+) in the DLQ/\1 \2 \3/' <<<"$FOUND")
[ -n "$CB" ] || fail "no per-topic counts from gp-check: $(cat "$WORK/check.err")"
counted() {
  [ "$(prom_q 'gate_proxy_records_routed_total{colour="blue"}')" = "$CB" ] &&
    [ "$(prom_q 'gate_proxy_records_routed_total{colour="green"}')" = "$CG" ] &&
    [ "$(prom_q 'sum(gate_proxy_records_dead_lettered_total)')" = "$CD" ]
}
wait_for "Prometheus's counters to equal gp-check's (blue $CB, green $CG, dlq $CD)" 30 counted
say "Prometheus: routed blue=$CB green=$CG dead-lettered=$CD, as gp-check found"
[ "$CD" -gt 0 ] || fail "no record went to the dead-letter topic (--bad-every 500)"
BY=$(curl -s --get "$PROM/api/v1/query" --data-urlencode 'query=gate_proxy_records_dead_lettered_total > 0' \
  | python3 -c 'import json,sys; print(" ".join(sorted("%s=%s" % (r["metric"]["reason"], r["value"][1]) for r in json.load(sys.stdin)["data"]["result"])))')
[ -n "$BY" ] || fail "no dead-letter reason counted"
say "Prometheus: dead-lettered by reason: $BY"
for ph in steady split closed; do
  [ "$(prom_q "max_over_time(gate_proxy_phase{phase=\"$ph\"}[10m])")" = 1 ] \
    || fail "the phase series never showed $ph"
done
[ "$(prom_q 'gate_proxy_phase{phase="closed"}')" = 1 ] || fail "the phase is not closed at the end"
[ "$(prom_q 'gate_proxy_active_colour{colour="green"}')" = 1 ] || fail "green is not the active colour"
say "Prometheus: the phase went steady -> split -> closed; green active; T=$T"
# Every query of the dashboard (deploy/grafana/gate-proxy.json) returns data.
dashboard_ok() {
  python3 - "$(dirname "$0")/../../deploy/grafana/gate-proxy.json" "$PROM" >"$WORK/dash.txt" <<'PY'
import json, sys, urllib.parse, urllib.request
d, base = json.load(open(sys.argv[1])), sys.argv[2]
empty, n = [], 0
for panel in d["panels"]:
    for t in panel["targets"]:
        n += 1
        url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": t["expr"]})
        r = json.load(urllib.request.urlopen(url))
        if r["status"] != "success" or not r["data"]["result"]:
            empty.append("%s: %s" % (panel["title"], t["expr"]))
print("%d queries" % n)
print("\n".join(empty))
sys.exit(1 if empty else 0)
PY
}
end=$(( $(date +%s) + 60 ))
until dashboard_ok; do
  [ "$(date +%s)" -lt "$end" ] || fail "dashboard queries without data: $(tail -n +2 "$WORK/dash.txt")"
  sleep 1
done
say "dashboard: all $(head -1 "$WORK/dash.txt") return data"

# Abuse: 200 connections at once (some held open without a byte, some
# sending a 1 MB request line, the rest scraping): no crash, memory bounded,
# and the proxy answers and routes afterwards.
rss() { curl -s "$H/metrics" | sed -n 's/^process_resident_memory_bytes //p'; }
RSS0=$(rss)
python3 - 127.0.0.1 "$HP" <<'PY' || fail "the abuse client failed"
import socket, sys, threading
host, port = sys.argv[1], int(sys.argv[2])
def one(i):
    try:
        s = socket.create_connection((host, port), timeout=15)
        if i % 3 == 0:
            s.settimeout(3)
            try: s.recv(1)            # a slow client: sends nothing
            except OSError: pass
        elif i % 3 == 1:
            s.sendall(b"GET /" + b"a" * (1 << 20) + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            s.recv(100)
        else:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            while s.recv(65536): pass
        s.close()
    except OSError:
        pass                      # refused past the connection limit: fine
ts = [threading.Thread(target=one, args=(i,)) for i in range(200)]
for t in ts: t.start()
for t in ts: t.join()
PY
kill -0 "$PROXY_PID" || fail "the proxy died under 200 abusive connections"
healthy() { [ "$(code /livez)" = 200 ]; }
wait_for "/livez to answer after the abuse" 30 healthy
RSS1=$(rss)
[ "$RSS1" -lt $(( RSS0 * 2 + 8000000 )) ] || fail "memory grew from $RSS0 to $RSS1 bytes under abuse"
produce "$S" 1000 $N --ts-start $((BASE + N * TS_STEP + 40000))
wait_for "$((N + 1000)) records routed after the abuse" 60 routed_is $((N + 1000))
say "200 abusive connections: the proxy answers, RSS $RSS0 -> $RSS1 bytes, routing goes on"

# A bad value in the map: kept out, counted once as an invalid refusal;
# the value put back, the map is valid again.
metric() { curl -s "$H/metrics" | sed -n "s/^$1 //p"; }
# As one more writer of the map: under its lock, its resourceVersion bumped,
# so a status write the proxy planned on the map before cannot put the old
# value back.
setdelay() {
  python3 - "$WORK/cm.json" "$1" <<'PY'
import fcntl, json, os, sys
path = sys.argv[1]
with open(path + ".lock", "a+") as lock:
    fcntl.flock(lock, fcntl.LOCK_EX)
    d = json.load(open(path))
    d["data"]["deployment-deletion-delay-ms"] = sys.argv[2]
    d["metadata"]["resourceVersion"] = str(int(d["metadata"]["resourceVersion"]) + 1)
    with open(path + ".tmp.edit", "w") as f:
        json.dump(d, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.rename(path + ".tmp.edit", path)
PY
}
R='gate_proxy_control_refusals_total{reason="invalid"}'
[ "$(metric "$R")" = 0 ] || fail "refusals before any bad map: $(metric "$R")"
setdelay soon
refused_once() { [ "$(metric "$R")" = 1 ]; }
wait_for "one invalid-map refusal counted" 30 refused_once
setdelay 0
valid_again() { grep -q '"control map valid again"' "$WORK/proxy.log"; }
wait_for "the map to be valid again" 30 valid_again
refused_once || fail "the refusal was counted again: $(metric "$R")"
say "a bad map value: $R 1, valid again once put back"
# The brokers, from librdkafka's statistics (every 5 s).
broker_up() {
  curl -s "$H/metrics" >"$WORK/brokers.txt"
  grep -q '^gate_proxy_broker_up{client="producer",.*} 1$' "$WORK/brokers.txt" &&
    grep -q '^gate_proxy_broker_rtt_p99_seconds{client="consumer",' "$WORK/brokers.txt"
}
wait_for "the producer's and the consumer's broker statistics" 30 broker_up
curl -s "$H/metrics" >"$WORK/scrape2.txt"
DUP=$(grep -v '^#' "$WORK/scrape2.txt" | awk '{print $1}' | sort | uniq -d)
[ -z "$DUP" ] || fail "series exposed twice in one scrape: $DUP"
promtool check metrics <"$WORK/scrape2.txt" >"$WORK/promtool2.txt" 2>&1 \
  || { cat "$WORK/promtool2.txt"; fail "promtool check metrics failed on a scrape while routing"; }
RTT=$(grep -m1 '^gate_proxy_broker_rtt_p99_seconds{client="consumer"' "$WORK/scrape2.txt" || true)
[ -n "$RTT" ] || fail "no consumer broker round-trip time"
say "brokers: $(grep -c '^gate_proxy_broker_up{.*} 1$' "$WORK/scrape2.txt") connections up; $RTT"

# The dashboard drawn from Prometheus over the run so far: the overview and
# one PNG per panel, each panel with data (--require-data).
# The closed phase must span enough of the picture to be seen: a fifth of
# the time drawn.
PNG_DIR=${GP_DASHBOARD_PNG:-$WORK/dashboard}
closed_enough() { [ $(( ($(date +%s) - CLOSED_AT) * 5 )) -ge $(( $(date +%s) - PROM_START )) ]; }
wait_for "the closed phase to span a fifth of the run" 120 closed_enough
png_t0=$(date +%s%N)
"$PLOT_PY" "$REPO/scripts/dashboard-png.py" --prometheus "$PROM" --start "$PROM_START" \
  --end "$(date +%s)" --out "$PNG_DIR" --require-data >"$WORK/png.txt" 2>&1 \
  || { cat "$WORK/png.txt"; fail "scripts/dashboard-png.py failed"; }
png_ms=$(( ($(date +%s%N) - png_t0) / 1000000 ))
"$PLOT_PY" - "$REPO" "$PNG_DIR" <<'PY' >"$WORK/png-check.txt" 2>&1 \
  || { cat "$WORK/png.txt" "$WORK/png-check.txt"; fail "the dashboard's PNG files are missing or wrong"; }
import importlib.util, json, os, sys
from PIL import Image
repo, out = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("dashboard_png", repo + "/scripts/dashboard-png.py")
dp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dp)
panels = json.load(open(repo + "/deploy/grafana/gate-proxy.json"))["panels"]
def near(img, hexcolour, tol=40):
    """pixels within tol (per channel) of the colour"""
    c = tuple(int(hexcolour[i:i + 2], 16) for i in (1, 3, 5))
    return sum(n for n, px in img.getcolors(1 << 20)
               if all(abs(px[i] - c[i]) <= tol for i in range(3)))
total = 0
for name, min_w, min_h in [("overview.png", 1400, 1200)] + \
        [(dp.slug(p["title"]) + ".png", 800, 160) for p in panels]:
    path = os.path.join(out, name)
    img = Image.open(path)
    assert img.format == "PNG", (name, img.format)
    img = img.convert("RGB")
    w, h = img.size
    assert w >= min_w and h >= min_h, (name, "too small", w, h)
    inked = w * h - near(img, "#ffffff", 8)
    assert inked > 0.03 * w * h, (name, "almost blank", inked, w * h)
    total += os.path.getsize(path)
# The Active colour and Phase strips show blue and green, steady and closed,
# so the cutover is in the picture
ov = Image.open(os.path.join(out, "overview.png")).convert("RGB")
for what in ("blue", "green", "steady", "closed"):
    n = near(ov, dp.COLOURS[what], 12)
    assert n > 1500, ("overview.png", "hardly any " + what, n)
print("%d files, %d KB" % (len(panels) + 1, total // 1024))
PY
say "dashboard PNGs: $(cat "$WORK/png-check.txt") in $PNG_DIR, drawn in $png_ms ms; $(tail -1 "$WORK/png.txt")"

stop_proxy
# log.format=json: every line one object with ts, level, pipeline, msg; the
# phase and the active colour once routing; topic (and partition) on lines
# about one.
python3 - "$WORK/proxy.log" "it-$RUN_ID" <<'PY' || fail "the JSON log has a bad line (see above)"
import json, sys
n, staged, about = 0, 0, 0
allowed = {"ts", "level", "pipeline", "msg", "phase", "colour", "topic", "partition"}
for i, line in enumerate(open(sys.argv[1]), 1):
    o = json.loads(line)
    assert {"ts", "level", "pipeline", "msg"} <= set(o) <= allowed, (i, line)
    assert o["pipeline"] == sys.argv[2] and o["level"] in ("error", "warn", "info", "debug"), (i, line)
    assert ("phase" in o) == ("colour" in o), (i, line)
    staged += "phase" in o
    if o["msg"].startswith("created topic "):
        assert o.get("topic") == o["msg"].split()[2], (i, line)
        about += 1
    n += 1
assert n > 5 and staged > 0 and about > 0, (n, staged, about)
print(n)
PY
grep -q '"phase":"closed","colour":"green"' "$WORK/proxy.log" \
  || fail "no log line carries phase closed and colour green"
say "log.format=json: every line one JSON object; phase and colour once routing, topic on topic lines"
# Restarted from its checkpoint: the map's counts go on from the pipeline's
# totals, /metrics counts this process's records (from 0).
BLUE_MAP=$(key gate-proxy.count.blue)
start_proxy p
wait_for "/readyz 200 after the restart" 30 ready
[ "$(metric 'gate_proxy_records_routed_total{colour="blue"}')" = 0 ] \
  || fail "after a restart /metrics starts at $(metric 'gate_proxy_records_routed_total{colour="blue"}'), not 0"
[ "$(key gate-proxy.count.blue)" = "$BLUE_MAP" ] || fail "the map's blue count moved across the restart"
stop_proxy
say "restarted: /metrics counts from 0, the map keeps count.blue=$BLUE_MAP"
prometheus_stop
say "PASS"
