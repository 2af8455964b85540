#!/usr/bin/env bash
# The operator commands on a control file, no broker: what they refuse,
# what they say, what they keep. GP_BIN is the gate-proxy binary.
set -uo pipefail
W=$(mktemp -d /tmp/gp-cli.XXXXXX)
trap 'rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
say() { echo "ok   $*"; }
M=$W/m.json

# expect CODE PATTERN COMMAND...: exit CODE, PATTERN in stdout+stderr
expect() {
  local code=$1 pat=$2 rc=0; shift 2
  "$@" >"$W/out" 2>&1 || rc=$?
  [ "$rc" -eq "$code" ] || { cat "$W/out"; fail "exit $rc, expected $code: ${*:2}"; }
  grep -q -- "$pat" "$W/out" || { cat "$W/out"; fail "no '$pat' from: ${*:2}"; }
}
# set_key KEY VALUE: edit the file as a proxy (or the operator) would
set_key() {
  python3 - "$M" "$1" "$2" <<'PY'
import json, sys
p, k, v = sys.argv[1:]
d = json.load(open(p))
d["data"][k] = v
json.dump(d, open(p, "w"))
PY
}
stage() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"]["stage"])' "$M"; }

"$GP_BIN" init --control "$M" >/dev/null || fail "init"

# --version names the librdkafka the process has loaded
expect 0 "^gate-proxy [0-9.]* (librdkafka [0-9][0-9.]*)$" "$GP_BIN" --version
grep -q "^librdkafka features: .*ssl.*sasl_scram.*sasl_oauthbearer" "$W/out" \
  || { cat "$W/out"; fail "--version does not list librdkafka's features"; }
say "--version: $(tr '\n' ' ' <"$W/out")"

# abort with nothing to abort
expect 1 "no transition in progress (stage RUNNING, blue active): nothing to abort" \
  "$GP_BIN" abort --control "$M"
[ "$(stage)" = RUNNING ] || fail "a refused abort changed the stage to $(stage)"
say "abort with nothing in progress: refused, the map unchanged"

# status without a proxy; an invalid map exits 1
expect 0 "heartbeat=- (no proxy has reported to this map)" "$GP_BIN" status --control "$M"
set_key gate-proxy.heartbeat "$(date -u -d '-5 min' +%Y-%m-%dT%H:%M:%S.000Z)"
expect 0 "(stale: 3[0-9][0-9] s old)" "$GP_BIN" status --control "$M"
say "status: no proxy, then a stale heartbeat, said so"

# cutover options
expect 2 "--timeout needs --wait" "$GP_BIN" cutover --control "$M" --to green --timeout 5
expect 2 "is too large" "$GP_BIN" cutover --control "$M" --to green --delay-ms 99999999999999999999
expect 2 "is before 1970" "$GP_BIN" cutover --control "$M" --to green --at 1969-12-31T23:59:59Z
set_key gate-proxy.watermark 1700000005000
expect 1 "at or below the proxy's watermark 1700000005000" \
  "$GP_BIN" cutover --control "$M" --to green --at 1700000004000
[ "$(stage)" = RUNNING ] || fail "a refused cutover changed the stage"
expect 0 "warning: --at 1700000006000 is [0-9]* s in the past" \
  "$GP_BIN" cutover --control "$M" --to green --at 1700000006000
grep -q "note: stale: [0-9]* s old; the transition starts once a proxy reads the map" "$W/out" \
  || { cat "$W/out"; fail "cutover did not say that no live proxy reads the map"; }
expect 0 "requested   cutoff T=1700000006000" "$GP_BIN" status --control "$M"
say "cutover: --timeout without --wait, a huge delay, before 1970, below the watermark refused; in the past warned; no live proxy noted; the asked T shown"

# CLEAR_TO_TEARDOWN: no new cutover before finish
set_key stage CLEAR_TO_TEARDOWN
expect 1 "is not finished (stage CLEAR_TO_TEARDOWN)" "$GP_BIN" cutover --control "$M" --to blue
expect 0 "stage=RUNNING" "$GP_BIN" finish --control "$M"
say "cutover during CLEAR_TO_TEARDOWN refused until finish"

# abort, then finish leaves FAILING
"$GP_BIN" cutover --control "$M" --to blue >/dev/null 2>&1 || fail "cutover to blue"
expect 0 "transition abandoned, every record goes to green" "$GP_BIN" abort --control "$M"
[ "$(stage)" = FAILING ] || fail "abort left stage $(stage)"
expect 1 "already abandoned (stage FAILING" "$GP_BIN" abort --control "$M"
expect 0 "stage=RUNNING, green is the active colour" "$GP_BIN" finish --control "$M"
[ "$(stage)" = RUNNING ] || fail "finish after abort left stage $(stage)"
say "abort, then finish: FAILING -> RUNNING, the survivor active"

# the map is named after its file; no transition reads "-", not BLUE->BLUE
grep -q '"name":[[:space:]]*"m"' "$M" || { cat "$M"; fail "init did not name the map after m.json"; }
set_key gate-proxy.transition GREEN-\>GREEN
set_key gate-proxy.heartbeat "$(date -u +%Y-%m-%dT%H:%M:%S.000Z)"
expect 0 "phase=.* transition=- " "$GP_BIN" status --control "$M"
say "init names the map after its file; status: transition=- with one owner"

# a clean stop is said, not a live proxy until the heartbeat is 30 s old
set_key gate-proxy.stopped 2026-01-02T03:04:05.678Z
expect 0 "(the proxy stopped at 2026-01-02T03:04:05.678Z)" "$GP_BIN" status --control "$M"
expect 0 "note: the proxy stopped at 2026-01-02T03:04:05.678Z; the transition starts once" \
  "$GP_BIN" cutover --control "$M" --to blue
expect 1 "no CLEAR_TO_TEARDOWN within 1 s: the proxy stopped at 2026-01-02T03:04:05.678Z; start the proxy" \
  "$GP_BIN" cutover --control "$M" --to blue --force --wait --timeout 1
set_key gate-proxy.stopped ""
say "status and cutover: a stopped proxy said so"

# what an aborted transition left: its T, and the records it routed
set_key gate-proxy.phase aborted
set_key gate-proxy.cutoff 1700000000000
set_key gate-proxy.aborted-routed 210
expect 0 "transition abandoned, every record goes to green" "$GP_BIN" abort --control "$M"
expect 0 "aborted     T=1700000000000 (2023-11-14T22:13:20.000Z) abandoned: the 210 records routed to blue by it stay there; every record now goes to green" \
  "$GP_BIN" status --control "$M"
# ... and its re-delivery to the survivor: going on, done, with a loss
set_key gate-proxy.redelivery "to=green sent=120 left=310 lost=0 open=1"
expect 0 "abandoned: the 210 records routed to blue by it stay there and are re-delivered to green; every record now goes to green" \
  "$GP_BIN" status --control "$M"
grep -q "^redelivery  to green: 120 records sent, 310 source offsets left to read again on 1 partition(s)$" "$W/out" \
  || { cat "$W/out"; fail "status does not show the re-delivery going on"; }
set_key gate-proxy.redelivery "to=green sent=160 left=0 lost=50 open=0"
expect 0 "^redelivery  to green: done, 160 records sent; 50 source offsets LOST: retention removed them before they were read again$" \
  "$GP_BIN" status --control "$M"
set_key gate-proxy.redelivery "half a value"
expect 0 "^redelivery  half a value$" "$GP_BIN" status --control "$M"
set_key gate-proxy.redelivery ""
expect 0 "stage=RUNNING" "$GP_BIN" finish --control "$M"
set_key gate-proxy.phase steady
say "status after abort: the abandoned T, its aborted-routed records, the re-delivery"

# waiting on a drain group: said by status and by cutover --wait
"$GP_BIN" cutover --control "$M" --to blue >/dev/null 2>&1 || fail "cutover to blue"
set_key gate-proxy.drain "waiting for group j-green to consume s.green: 1 of 3 partitions drained, lag 40"
expect 0 "^drain       waiting for group j-green to consume s.green: 1 of 3 partitions drained, lag 40" \
  "$GP_BIN" status --control "$M"
expect 1 "^  waiting for group j-green to consume s.green: 1 of 3 partitions drained, lag 40" \
  "$GP_BIN" cutover --control "$M" --to blue --force --wait --timeout 1
grep -q "no CLEAR_TO_TEARDOWN within 1 s; the last drain check: waiting for group j-green" "$W/out" \
  || { cat "$W/out"; fail "the --wait timeout does not say that it waited for the drain group"; }
set_key gate-proxy.drain ""
"$GP_BIN" abort --control "$M" >/dev/null && "$GP_BIN" finish --control "$M" >/dev/null || fail "abort, finish"
say "a drain group waited for: status and cutover --wait say so"

# an invalid map: status exits 1
set_key stage SOMETIMES
expect 1 "INVALID" "$GP_BIN" status --control "$M"
say "status on an invalid map exits 1"

# the file keeps its mode; errors name the user's file
"$GP_BIN" init --control "$M" --force >/dev/null
chmod 600 "$M"
"$GP_BIN" cutover --control "$M" --to green >/dev/null 2>&1
[ "$(stat -c %a "$M")" = 600 ] || fail "mode 600 became $(stat -c %a "$M")"
chmod 444 "$M"
"$GP_BIN" abort --control "$M" >/dev/null 2>&1
[ "$(stat -c %a "$M")" = 444 ] || fail "mode 444 became $(stat -c %a "$M")"
say "the control file keeps its mode (600, 444)"
if [ "$(id -u)" = 0 ] && getent passwd nobody >/dev/null; then
  chmod 644 "$M"
  chown nobody "$M"
  "$GP_BIN" init --control "$M" --force >/dev/null || fail "init --force as root"
  [ "$(stat -c %U "$M")" = nobody ] || fail "owner nobody became $(stat -c %U "$M")"
  say "the control file keeps its owner (nobody, rewritten by root)"
fi
expect 1 "$W/nodir/x.json: its directory $W/nodir does not exist" \
  "$GP_BIN" init --control "$W/nodir/x.json"
mkdir "$W/d"
expect 1 "$W/d is a directory; give the path of a file in it" "$GP_BIN" init --control "$W/d"
grep -q -- "--force" "$W/out" && fail "init on a directory suggests --force"
expect 1 "$W/d is a directory" "$GP_BIN" init --control "$W/d" --force
[ ! -e "$W/d.lock" ] || fail "init on a directory left $W/d.lock"
say "errors name the user's file and its directory; a directory is refused without a lock left"

# every command's help gives its exit codes; status's no 409s
for c in run init cutover finish abort status handover; do
  "$GP_BIN" "$c" --help | grep -q "^Exit codes" || fail "$c --help has no exit codes"
done
"$GP_BIN" status --help | grep -q "409" && fail "status --help talks about 409s"
say "every --help lists its exit codes"

# handover: a bad command line is refused with what to give, exit 2
expect 2 "--k8s MAP is required" "$GP_BIN" handover --from a --to b
expect 2 "--from OLD and --to NEW are required" "$GP_BIN" handover --k8s m --from a
expect 2 "--from and --to name the same FlinkDeployment" "$GP_BIN" handover --k8s m --from a --to a
expect 2 "must be FlinkDeployment names" "$GP_BIN" handover --k8s m --from A_B --to b
expect 2 "--timeout: '0' is not a number of seconds" "$GP_BIN" handover --k8s m --from a --to b --timeout 0
say "handover: a bad command line is refused, exit 2"
echo PASS
