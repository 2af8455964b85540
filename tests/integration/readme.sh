#!/usr/bin/env bash
# The README's "A cutover by hand", run as written: every `$ ` command of
# its code blocks (with their continuation lines and here-documents), in
# order, in one shell, on a broker with automatic topic creation off. Only
# the broker's address and the names change (127.0.0.1:9092 -> the test
# broker, `orders` -> a name of this run's), `gate-proxy` is the binary
# under test and `kafka-topics.sh` a stand-in that accepts the flags the
# README gives it and creates the topic with gp-admin. Then the tally: the
# README's own count loop prints both colours filled, adding up to every
# record produced, and the checker finds every record once, on its side of
# T; the proxy stopped by the README's kill exits 0, and the status after it
# says so. Then the same configuration started twice: the second start says
# that the first runs.
source "$(dirname "$0")/lib.sh"
: "${GP_ADMIN:?run through ctest}"
command -v kcat >/dev/null || fail "kcat not found (apt-get install kcat)"
README=$(cd "$(dirname "$0")/../.." && pwd)/README.md
N=orders$RUN_ID

# The broker must refuse records for a topic nobody created, as most do.
if echo '{}' | timeout 30 kcat -P -b "$GP_BOOTSTRAP" -t "absent$RUN_ID" >"$WORK/auto.log" 2>&1; then
  fail "$GP_BOOTSTRAP creates topics automatically (auto.create.topics.enable=true); this test needs it off"
fi
say "the broker creates no topic by itself"

# The commands, as a script.
python3 - "$README" "$GP_BOOTSTRAP" "$N" >"$WORK/walk.sh" <<'PY'
import re, sys
readme, bootstrap, name = sys.argv[1:]
text = open(readme).read()
start = text.index("\n## A cutover by hand\n")
end = text.index("\n## ", start + 1)
cmds, block, cont, heredoc, in_cmd = [], False, False, None, False
for line in text[start:end].split("\n"):
    if line.startswith("```"):
        block, cont, in_cmd = not block, False, False
        continue
    if not block:
        continue
    if heredoc is not None:
        cmds[-1] += "\n" + line
        heredoc = None if line == heredoc else heredoc
        continue
    if line.startswith("$ "):
        cmds.append(line[2:])
    elif in_cmd and (cont or line.startswith("  ")):
        cmds[-1] += "\n" + line
    else:
        in_cmd = False  # output
        continue
    in_cmd, cont = True, line.endswith("\\")
    m = re.search(r"<<'?(\w+)'?", line)
    if m:
        heredoc = m.group(1)
if not cmds:
    sys.exit("no commands found in the README's 'A cutover by hand'")
print("set -eu")
for c in cmds:
    c = c.replace("127.0.0.1:9092", bootstrap)
    print(re.sub(r"\borders\b", name, c))
PY
[ -s "$WORK/walk.sh" ] || fail "no commands extracted from $README"
grep -q "gate-proxy run" "$WORK/walk.sh" || fail "the README's steps start no proxy"
grep -q "gate-proxy cutover" "$WORK/walk.sh" || fail "the README's steps make no cutover"
say "$(grep -c '' "$WORK/walk.sh") lines of commands from the README"

# gate-proxy and kafka-topics.sh on the PATH
mkdir -p "$WORK/bin" "$WORK/walk"
ln -s "$GP_BIN" "$WORK/bin/gate-proxy"
cat >"$WORK/bin/kafka-topics.sh" <<EOF
#!/usr/bin/env bash
# kafka-topics.sh --bootstrap-server B --create --topic T --partitions N
b= t= n= create=
while [ \$# -gt 0 ]; do
  case \$1 in
    --bootstrap-server) b=\$2; shift 2 ;;
    --topic) t=\$2; shift 2 ;;
    --partitions) n=\$2; shift 2 ;;
    --replication-factor) shift 2 ;;
    --create) create=1; shift ;;
    *) echo "kafka-topics.sh stand-in: unknown option \$1" >&2; exit 1 ;;
  esac
done
[ -n "\$create" ] && [ -n "\$b" ] && [ -n "\$t" ] && [ -n "\$n" ] || { echo "kafka-topics.sh stand-in: incomplete" >&2; exit 1; }
exec "$GP_ADMIN" --bootstrap "\$b" create "\$t" "\$n"
EOF
chmod +x "$WORK/bin/kafka-topics.sh"

rc=0
(cd "$WORK/walk" && PATH="$WORK/bin:$PATH" timeout 300 bash "$WORK/walk.sh") >"$WORK/walk.out" 2>&1 || rc=$?
cp "$WORK/walk/$N.log" "$WORK/proxy.log" 2>/dev/null || true
cp "$WORK/walk/$N-configmap.json" "$WORK/cm.json" 2>/dev/null || true
sed 's/^/  | /' "$WORK/walk.out"
[ $rc -eq 0 ] || fail "the README's steps failed (exit $rc)"
! grep -q "Sanitizer\|runtime error" "$WORK/proxy.log" || fail "a sanitizer report in the proxy's log"
grep -q "^CLEAR_TO_TEARDOWN: " "$WORK/walk.out" || fail "cutover --wait did not reach CLEAR_TO_TEARDOWN"
grep -qx "gate-proxy exited 0" "$WORK/walk.out" || fail "the proxy stopped by the README's kill did not exit 0"

# the README's count loop: both colours filled, every record produced
blue=$(sed -n 's/^blue \([0-9]*\)$/\1/p' "$WORK/walk.out")
green=$(sed -n 's/^green \([0-9]*\)$/\1/p' "$WORK/walk.out")
total=$(grep -o 'seq 1 [0-9]*' "$WORK/walk.sh" | head -n 1 | cut -d' ' -f3)
[ -n "$blue" ] && [ -n "$green" ] || fail "no 'blue N' and 'green N' lines from the README's count"
[ "$blue" -gt 0 ] && [ "$green" -gt 0 ] || fail "a colour stayed empty: blue=$blue green=$green"
[ $((blue + green)) -eq "$total" ] || fail "blue=$blue + green=$green is not the $total produced"
say "the README's count: blue=$blue green=$green of $total"

grep -q "heartbeat=.* (the proxy stopped at " "$WORK/walk.out" \
  || fail "the README's status after the stop does not say the proxy stopped"
say "status after the README's kill: the proxy stopped"

# Started again on the same configuration: nothing said of another proxy
# (the map says the last one stopped); a second one started by mistake is
# told that the first runs and will be fenced.
cd "$WORK/walk"
"$GP_BIN" run -c "$N.conf" >"$WORK/again1.log" 2>&1 &
A1=$!
ON_EXIT="kill -9 $A1 2>/dev/null; $ON_EXIT"
for _ in $(seq 1 300); do
  grep -q "routing 1 topic" "$WORK/again1.log" && [ -z "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"].get("gate-proxy.stopped",""))' "$N-configmap.json")" ] && break
  sleep 0.1
done
grep -q "routing 1 topic" "$WORK/again1.log" || { cat "$WORK/again1.log"; fail "the proxy did not start again"; }
! grep -q "seems to run" "$WORK/again1.log" || fail "a start after a clean stop warned of another proxy"
"$GP_BIN" run -c "$N.conf" >"$WORK/again2.log" 2>&1 &
A2=$!
ON_EXIT="kill -9 $A2 2>/dev/null; $ON_EXIT"
for _ in $(seq 1 300); do grep -q "seems to run" "$WORK/again2.log" && break; sleep 0.1; done
grep -q "another gate-proxy of pipeline $N seems to run (or was killed seconds ago): $N-configmap.json has its heartbeat [0-9.]* s old and no clean stop since. This one takes its place" "$WORK/again2.log" \
  || { cat "$WORK/again2.log"; fail "a second proxy of the pipeline said nothing of the first"; }
kill $A2 $A1
wait $A2 || fail "the second proxy did not stop with 0"
wait $A1 || true # fenced (3) or stopped (0), whichever came first
cd - >/dev/null
say "started again: no warning after the clean stop; a second instance warned of the first"

T=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["data"]["watermark-toggle-value"])' "$WORK/cm.json")
check "$N" --cutoff "$T" --old blue --dlq "$N.dlq"
say "PASS"
