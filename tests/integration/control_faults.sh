#!/usr/bin/env bash
# Control map faults while records flow and a cutover is in progress
# ("Exactly-once under faults", fault 5). During the split of a blue ->
# green cutover the control file is, in turn:
#   deleted; truncated to 0 bytes; overwritten with garbage; rewritten in
#   place half-way (the first half of a valid document, the rest later);
#   given an invalid value (stage=WARMING), while the old side closes.
# Each time the proxy keeps the last good state and routes on (its counts
# grow on the same colours), logs a warning with the reason, and leaves the
# file as the other writer left it: no status write into a missing,
# unreadable or half-written file, no decision into an invalid one. A map
# that parses but holds a bad value takes the status keys, so
# gate-proxy.error says why there. When a valid map returns, the proxy
# recovers: the status is written again, and the close decided meanwhile is
# published (CLEAR_TO_TEARDOWN). The checker then finds every record exactly
# once, in order, split by T.
#
# The faults are written under the map's lock (<file>.lock, as gate-proxy's
# own writers and the CLI take it), each step in one go: a writer that
# ignores the lock can still race a status write that read the file just
# before (the proxy renames its copy over the file).
source "$(dirname "$0")/lib.sh"

S=gp-ctlfault-$RUN_ID
BASE=1700000000000
LATENESS=60000 # event ms; the records' event time runs at wall speed
CM=$WORK/cm.json
PRODUCER=""

ctl_exit() {
  local rc=$?
  set +e # finish_test reads $? below
  if [ -n "$PRODUCER" ]; then kill "$PRODUCER" 2>/dev/null || true; fi
  (exit $rc)
  finish_test
}
trap ctl_exit EXIT

# ctl OP [ARGS]: a change of the control map by another writer, under its lock.
cat >"$WORK/ctl.py" <<'PY'
import fcntl, json, os, sys

path, op, args = sys.argv[1], sys.argv[2], sys.argv[3:]
lock = open(path + ".lock", "a")
fcntl.flock(lock, fcntl.LOCK_EX)
good, rest = path + ".good", path + ".rest"

def in_place(text, mode="r+"):
    # The same inode, no rename: what an editor or `echo >` does.
    with open(path, mode) as f:
        if mode == "r+":
            f.truncate(0)
        f.write(text)

def atomic(text):
    with open(path + ".w", "w") as f:
        f.write(text)
    os.rename(path + ".w", path)

def save():
    with open(path) as f:
        text = f.read()
    json.loads(text)  # only a valid document is saved
    with open(good, "w") as f:
        f.write(text)

def bumped(text):
    d = json.loads(text)
    d["metadata"]["resourceVersion"] = str(int(d["metadata"]["resourceVersion"]) + 1)
    return json.dumps(d, indent=2) + "\n"

if op == "delete":
    save(); os.unlink(path)
elif op == "empty":
    save(); in_place("")
elif op == "garbage":
    save(); in_place("garbage {{ this is not a ConfigMap\n")
elif op == "half":
    save()
    text = bumped(open(good).read())
    n = len(text) // 2
    with open(rest, "w") as f:
        f.write(text[n:])
    in_place(text[:n])
elif op == "rest":
    in_place(open(rest).read(), "a")
elif op == "restore":
    atomic(bumped(open(good).read()))
elif op == "set":
    d = json.loads(open(path).read())
    d["data"][args[0]] = args[1]
    atomic(bumped(json.dumps(d)))
else:
    sys.exit("ctl.py: unknown op " + op)
PY
ctl() { python3 "$WORK/ctl.py" "$CM" "$@"; }

green() { key gate-proxy.count.green; }
warned() { # warned N PATTERN: more than N warn lines "control map invalid ...PATTERN"
  [ "$(grep -c "warn  control map invalid, keeping the last good state: .*$2" "$WORK/proxy.log")" -gt "$1" ]
}
warn_count() { grep -c "warn  control map invalid, keeping the last good state: .*$1" "$WORK/proxy.log" || true; }
valid_again_count() { grep -c "control map valid again" "$WORK/proxy.log" || true; }
status_back() { # status_back HEARTBEAT: written again since, with no error
  [ "$(key gate-proxy.heartbeat)" != "$1" ] && [ -n "$(key gate-proxy.heartbeat)" ] \
    && [ -z "$(key gate-proxy.error)" ]
}
same_bytes() { cmp -s "$CM" "$WORK/fault.bytes"; }

# unreadable NAME OP REASON [RESTORE_OP]: the map becomes unreadable (OP) for
# 4 s, then valid again (RESTORE_OP, default restore).
unreadable() {
  local name=$1 op=$2 reason=$3 back=${4:-restore}
  local g0 hb0 w0 v0
  g0=$(green); hb0=$(key gate-proxy.heartbeat)
  w0=$(warn_count "$reason"); v0=$(valid_again_count)
  ctl "$op"
  if [ -e "$CM" ]; then cp "$CM" "$WORK/fault.bytes"; else rm -f "$WORK/fault.bytes"; fi
  wait_for "a warning with the reason ($name)" 10 warned "$w0" "$reason"
  sleep 4 # 4 status intervals: none may touch the file
  if [ -e "$WORK/fault.bytes" ]; then
    same_bytes || fail "$name: the proxy changed the file: $(head -c 200 "$CM")"
  else
    [ ! -e "$CM" ] || fail "$name: the proxy created the deleted map again"
  fi
  [ "$(valid_again_count)" = "$v0" ] || fail "$name: 'valid again' while the map was not"
  ctl "$back"
  wait_for "the status written again after the $name" 20 status_back "$hb0"
  [ "$(valid_again_count)" -gt "$v0" ] || fail "$name: no 'control map valid again' in the log"
  [ "$(key gate-proxy.phase)" = split ] || fail "$name: phase $(key gate-proxy.phase), expected split"
  [ "$(key gate-proxy.transition)" = "BLUE->GREEN" ] || fail "$name: transition $(key gate-proxy.transition)"
  [ "$(key gate-proxy.cutoff)" = "$T" ] || fail "$name: cutoff $(key gate-proxy.cutoff) != $T"
  [ "$(key stage)" = TRANSITIONING ] || fail "$name: stage $(key stage)"
  [ "$(green)" -ge $((g0 + 1000)) ] || fail "$name: green grew from $g0 to $(green) only: routing stalled?"
  [ "$(key gate-proxy.count.blue)" = "$BLUE0" ] || fail "$name: blue moved from $BLUE0 to $(key gate-proxy.count.blue)"
  say "$name: warned ($(grep "keeping the last good state: .*$reason" "$WORK/proxy.log" | tail -n 1 | cut -c 31-160)), file untouched, green $g0 -> $(green), blue $BLUE0"
}

"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 3 --quiet >/dev/null
"$GP_BIN" init --control "$CM" >/dev/null
write_conf p "$S" gate.lateness.ms=$LATENESS gate.commit.interval.ms=200
start_proxy p
produce "$S" 5000 0 --ts-start $BASE --disorder 200 --headers
wait_for "5000 records routed" 60 routed_is 5000

say "cutover to green while 50000 records flow (1000/s)"
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 50000 --start-id 5000 \
  --ts-start $((BASE + 5000)) --disorder 200 --headers --rate 1000 --quiet >/dev/null &
PRODUCER=$!
sleep 2
"$GP_BIN" cutover --control "$CM" --to green --delay-ms 1000 >/dev/null
wait_for "T published" 60 key_is watermark-stage WATERMARK_SET
T=$(key watermark-toggle-value)
on_green() { [ "$(green)" -gt 0 ]; }
wait_for "records on green" 30 on_green
say "T=$T, the split is open"
sleep 2 # the last records with ts < T (disorder 200 ms) reach blue
BLUE0=$(key gate-proxy.count.blue)

unreadable "deleted map" delete "not found"
unreadable "empty map" empty "empty document"
unreadable "garbage map" garbage "not JSON"
unreadable "half-written map" half "not JSON" rest

wait "$PRODUCER"
PRODUCER=""

say "stage=WARMING (invalid) while the records that close the old side arrive"
w0=$(warn_count "stage: 'WARMING'")
hb0=$(key gate-proxy.heartbeat)
ctl set stage WARMING
wait_for "a warning with the reason (stage=WARMING)" 10 warned "$w0" "stage: 'WARMING'"
error_says_warming() { [[ "$(key gate-proxy.error)" == *"stage: 'WARMING' is not one of"* ]]; }
wait_for "gate-proxy.error naming the bad stage" 10 error_says_warming
say "gate-proxy.error: $(key gate-proxy.error)"
g0=$(green)
produce "$S" 2000 55000 --ts-start $((T + LATENESS + 1000)) --disorder 200 --headers --rate 1000
closed() { [ "$(key gate-proxy.phase)" = closed ]; }
wait_for "the old side closed (status in the invalid map)" 60 closed
grep -q "old side blue closed" "$WORK/proxy.log" || fail "no close in the log"
sleep 2 # a publication would come within 1 s
[ "$(key stage)" = WARMING ] || fail "the proxy wrote stage=$(key stage) into the invalid map"
[ "$(green)" -gt "$g0" ] || fail "green did not grow in the status while stage=WARMING"
[ "$(key gate-proxy.transition)" = "BLUE->GREEN" ] || fail "transition $(key gate-proxy.transition)"
error_says_warming || fail "gate-proxy.error lost the reason: $(key gate-proxy.error)"
say "closed while the map is invalid: stage still WARMING, green $g0 -> $(green)"

ctl set stage TRANSITIONING
wait_for "CLEAR_TO_TEARDOWN once the map is valid" 30 key_is stage CLEAR_TO_TEARDOWN
wait_for "gate-proxy.error cleared" 10 key_is gate-proxy.error ""
[ "$(key watermark-toggle-value)" = "$T" ] || fail "T changed: $(key watermark-toggle-value) != $T"
"$GP_BIN" finish --control "$CM" >/dev/null
wait_for "57000 records routed" 60 routed_is 57000
stop_proxy
[ "$(key gate-proxy.count.blue)" = "$BLUE0" ] \
  || fail "blue grew from $BLUE0 to $(key gate-proxy.count.blue) during the split: records >= T?"
check "$S" --cutoff "$T" --old blue
[ "$CHECKED" = 57000 ] || fail "checked $CHECKED records, expected 57000"
say "PASS"
