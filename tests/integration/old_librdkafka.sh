#!/usr/bin/env bash
# gate-proxy built the way a user with only Debian 12's librdkafka (2.0.2,
# librdkafka-dev) would build it: plain CMake, no GP_LIBRDKAFKA.
#   1. CMake says at configure time that group mode will refuse to start,
#      naming the version found, the one needed and `make librdkafka`.
#   2. gate.membership=group refuses to start on it (exit 2), from the file
#      and from -X alike, with the same three facts.
#   3. gate.membership=assign starts on it, warns that its prefetch is left
#      unbounded (no fetch.queue.backoff.ms before 2.2.0), and routes every
#      record exactly once on the real broker.
#   4. The test build (the librdkafka scripts/build-librdkafka.sh makes)
#      starts in group mode on the same topic and routes what follows.
source "$(dirname "$0")/lib.sh"
TOP=$(cd "$(dirname "$0")/../.." && pwd)
OLD_DIR=${GP_OLD_BUILD:?run through ctest}

want=$(pkg-config --modversion rdkafka 2>/dev/null) ||
  fail "no system librdkafka to build against (scripts/install-deps.sh test installs librdkafka-dev)"
say "system librdkafka $want; building gate-proxy against it in $OLD_DIR"
cmake -S "$TOP" -B "$OLD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
  -DGP_LIBRDKAFKA= >"$WORK/configure.log" 2>&1 || { cat "$WORK/configure.log"; fail "cmake configure"; }
cmake --build "$OLD_DIR" --target gate-proxy >"$WORK/build.log" 2>&1 ||
  { tail -30 "$WORK/build.log"; fail "the build against librdkafka $want"; }
OLD=$OLD_DIR/gate-proxy
warning=$(tr -s ' \n' ' ' <"$WORK/configure.log")
for s in "librdkafka $want found: gate.membership=group will refuse" "needs 2.10.0" "make librdkafka"; do
  grep -qF "$s" <<<"$warning" || { cat "$WORK/configure.log"; fail "configure did not warn: no '$s'"; }
done
say "1. configure: $(grep -o "librdkafka $want found[^)]*)" <<<"$warning" | head -1)"
"$OLD" --version | grep -qx "gate-proxy [0-9.]* (librdkafka $want)" ||
  fail "the old build does not run on librdkafka $want: $("$OLD" --version)"

S=gp-oldrdk-$RUN_ID
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 4 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null

# 2. Group mode refused, from the file and from the command line.
refused() { # refused HOW ARGS...: exit 2 and the three facts on stderr
  local how=$1 rc=0; shift
  timeout 30 "$OLD" run "$@" >"$WORK/refused.out" 2>&1 || rc=$?
  [ $rc -eq 2 ] || { cat "$WORK/refused.out"; fail "group mode ($how) on librdkafka $want: exit $rc, expected 2"; }
  for s in "gate.membership=group needs librdkafka 2.10.0 or later" \
           "runs on librdkafka $want," "make librdkafka"; do
    grep -qF "$s" "$WORK/refused.out" || { cat "$WORK/refused.out"; fail "$how: the refusal does not say '$s'"; }
  done
  say "2. refused ($how): $(head -c 200 "$WORK/refused.out")"
}
GP_MEMBERSHIP=group write_conf group "$S"
write_conf assign "$S"
refused "the file" -c "$WORK/group.conf"
refused "-X" -c "$WORK/assign.conf" -X gate.membership=group -X gate.instance=x

# 3. Assign mode starts on 2.0.2 and routes exactly once.
GP_BIN=$OLD start_proxy assign
produce "$S" 3000 0 --ts-start 1700000000000
wait_for "3000 records routed on librdkafka $want" 90 routed_is 3000
stop_proxy
grep -q "(librdkafka $want)" "$WORK/proxy.log" || fail "the start-up line does not name librdkafka $want"
grep -q "librdkafka $want has no fetch.queue.backoff.ms: the consumer's prefetch is left at librdkafka's defaults" \
  "$WORK/proxy.log" || fail "no warning that the prefetch is unbounded on librdkafka $want"
check "$S"
[ "$CHECKED" = 3000 ] || fail "checked $CHECKED, expected 3000"
say "3. assign mode on librdkafka $want: $CHECKED records, exactly once"

# 4. The same pipeline in group mode on the library make builds.
start_proxy group
produce "$S" 3000 3000 --ts-start 1700000003000
wait_for "6000 records routed in group mode" 90 routed_is 6000
stop_proxy
grep -q "(librdkafka $("$GP_BIN" --version | head -1 | sed 's/.*librdkafka \([^)]*\)).*/\1/'))" \
  "$WORK/proxy.log" || fail "the group member's start-up line does not name its librdkafka"
check "$S"
[ "$CHECKED" = 6000 ] || fail "checked $CHECKED, expected 6000"
say "4. group mode on $("$GP_BIN" --version | head -1): $CHECKED records, exactly once"
say "PASS"
