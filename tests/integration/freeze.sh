#!/usr/bin/env bash
# The proxy frozen (SIGSTOP) with a transaction open for longer than its
# transaction.timeout.ms while records flow: the broker aborts the open
# transaction (and bumps the producer epoch). After SIGCONT the proxy must
# notice: it either aborts, rewinds and goes on, or (what librdkafka 2.0.2
# makes it do: the old epoch is reported as a fatal _FENCED) exits 1 with
# "the transaction outlived transaction.timeout.ms", not 3 as if another
# instance had taken over. A supervisor's restart then goes on from the
# last commit, and the checker finds every record exactly once.
source "$(dirname "$0")/lib.sh"

S=gp-freeze-$RUN_ID
BASE=1700000000000
TOTAL=40000
TXN_TIMEOUT=5000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 3 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
# Transactions of up to 1 s, so the freeze lands in an open one.
write_conf p "$S" kafka.producer.transaction.timeout.ms=$TXN_TIMEOUT gate.commit.interval.ms=1000
start_proxy p

# 40000 records at 1500/s: they flow before, during and after the freeze.
produce "$S" $TOTAL 0 --ts-start $BASE --disorder 200 --rate 1500 &
PRODUCER=$!
wait_for "3000 records routed" 60 routed_is 3000

# end_offsets TOPIC [-X ...]: P:OFF,... as a read_committed reader sees them
# (the last stable offset), or with -X isolation.level=read_uncommitted the
# high watermark. They differ while a transaction is open on the topic.
end_offsets() {
  "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$1" --blue "$S" --green "$S.dlq" \
    --end-offsets "${@:2}"
}
txn_open() {
  [ "$(end_offsets "$S.blue")" != "$(end_offsets "$S.blue" -X isolation.level=read_uncommitted)" ]
}
txn_closed() { ! txn_open; }

# Freeze at a moment when the proxy's transaction holds records on the
# broker (between two transactions there is nothing to time out).
frozen=0
for attempt in $(seq 1 20); do
  kill -STOP "$PROXY_PID"
  FROZEN_AT=$(date +%s.%N)
  # open, and still open a second later: not a commit that was completing
  if txn_open && sleep 1 && txn_open; then frozen=1; break; fi
  kill -CONT "$PROXY_PID"
  sleep 0.$((RANDOM % 5 + 1))
done
[ $frozen = 1 ] || fail "could not freeze the proxy inside an open transaction in 20 tries"
say "proxy frozen (SIGSTOP) with a transaction open (try $attempt)"

# Frozen at least 8 s (> 5 s timeout) and until the broker has aborted the
# transaction: it checks for timed-out transactions every
# transaction.abort.timed.out.transaction.cleanup.interval.ms (10 s by
# default), so the abort comes 5 to 15 s after the transaction began.
frozen_for() { python3 -c "import time,sys; print(time.time() - float(sys.argv[1]))" "$FROZEN_AT"; }
wait_for "the broker to abort the frozen transaction" 60 txn_closed
until python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 8 else 1)" "$(frozen_for)"; do
  sleep 0.2
done
say "the broker aborted the open transaction; resuming the proxy after $(frozen_for | cut -c1-4) s"
kill -CONT "$PROXY_PID"

# Either it rewinds and goes on, or it exits 1 for a restart.
rewound() { grep -q "transaction aborted; rewound to the last commit" "$WORK/proxy.log"; }
exited() { ! kill -0 "$PROXY_PID" 2>/dev/null; }
noticed() { rewound || exited; }
END=$(( $(date +%s) + 60 ))
until noticed; do
  [ "$(date +%s)" -lt "$END" ] || fail "the proxy did not notice the aborted transaction in 60 s"
  sleep 0.2
done
if exited; then
  rc=0
  wait "$PROXY_PID" || rc=$?
  PROXY_PID=""
  say "the proxy exited $rc after the thaw"
  [ $rc -ne 3 ] || fail "exit 3 (fenced) for a transaction the broker timed out: no other instance ran"
  [ $rc -eq 1 ] || fail "exit $rc after the thaw (expected 1: restart it)"
  grep -q "the transaction outlived transaction.timeout.ms (was the process paused?); exiting for a restart" \
    "$WORK/proxy.log" || fail "exit 1 without the 'outlived transaction.timeout.ms' log line"
  grep -q "transaction.timeout.ms=$TXN_TIMEOUT " "$WORK/proxy.log" \
    || fail "the proxy did not use transaction.timeout.ms=$TXN_TIMEOUT"
  grep "outlived" "$WORK/proxy.log" | tail -n 1
  say "restarting it, as a supervisor would"
  start_proxy p
else
  say "the proxy aborted, rewound and goes on"
fi

wait "$PRODUCER"
wait_for "$TOTAL records routed" 90 routed_is $TOTAL
stop_proxy
check "$S"
[ "$CHECKED" = $TOTAL ] || fail "checked $CHECKED records, expected $TOTAL"
say "PASS"
