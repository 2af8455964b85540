#!/usr/bin/env bash
# Bad input stops startup with a clear error and a documented exit code.
source "$(dirname "$0")/lib.sh"

S=gp-errors-$RUN_ID
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 10 --partitions-hint 2 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null

expect() { # expect CODE PATTERN COMMAND...
  local code=$1 pat=$2 rc=0; shift 2
  "$@" >"$WORK/out.txt" 2>&1 || rc=$?
  [ "$rc" -eq "$code" ] || { cat "$WORK/out.txt"; fail "exit $rc, expected $code: $*"; }
  grep -q -- "$pat" "$WORK/out.txt" || { cat "$WORK/out.txt"; fail "no '$pat' in the output"; }
  say "exit $code as expected: $(grep -m1 -- "$pat" "$WORK/out.txt")"
}

# A bad line: file:line: key: reason, exit 2.
write_conf bad "$S" gate.delivery=twice
expect 2 "bad.conf:11: gate.delivery: " "$GP_BIN" run -c "$WORK/bad.conf"
# Colour topics missing and not to be created: exit 4, naming the topic.
write_conf nocreate "$S" gate.topics.create=false
expect 4 "colour topic $S.blue does not exist" "$GP_BIN" run -c "$WORK/nocreate.conf"
# The source topic missing: exit 4.
write_conf nosource "gp-absent-$RUN_ID"
expect 4 "source topic gp-absent-$RUN_ID does not exist" "$GP_BIN" run -c "$WORK/nosource.conf"
say "PASS"
