#!/usr/bin/env bash
# The checker's abort mode (gp-check --survivor) on hand-made topics, so that
# its verdicts are proved without the proxy: a hand-over from blue to green
# aborted after T with blue surviving, the records that went to green
# re-delivered to blue in one block. A source topic of 3 partitions (20
# records each) and, per case, a blue and a green topic built from chosen
# source records in a chosen order (gp-produce --pick writes a record
# exactly as the source has it):
#   partition 0  the split began at 4, the abort took effect at 12: 4,5,8,9
#                went to green; blue holds 0-3,6,7,10,11, then 4,5,8,9
#                re-delivered, then 12-19
#   partition 1  10,11,13 went to green (split 6 to 16)
#   partition 2  nothing went to green: blue holds 0-19
# The good case passes (redelivered=7 aborted=7, also with the colours'
# roles swapped, and fails without --survivor); each fault is reported with
# its exact count and exit 1: a re-delivered record missing, a duplicate in
# blue, a duplicate in green, a record in green that is not in the source, a
# third run in blue, the re-delivered block out of order, one swap in a
# partition with nothing re-delivered, and with a dead-letter topic a record
# there and in blue, one of green there but not in blue. --survivor with
# --cutoff is refused.
source "$(dirname "$0")/lib.sh"
: "${GP_ADMIN:?}"

S=gp-checker-$RUN_ID
BASE=1700000000000

# pick TOPIC P LIST: the source records of partition P at the offsets LIST
# (gp-produce --pick: I or A-B, comma-separated, in this order) to TOPIC/P
pick() {
  [ -n "$3" ] || return 0
  "$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$1" --partition "$2" --count 20 \
    --start-id $((100 * $2)) --ts-start $BASE --quiet ${3:+--pick "$3"} >/dev/null
}

# colours NAME B0 B1 B2 G0 G1 G2: $S.NAME.blue and $S.NAME.green, partition
# p of blue holding the source offsets Bp, of green Gp ("" for none)
colours() {
  local name=$1 p
  "$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" create "$S.$name.blue" 3 >/dev/null
  "$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" create "$S.$name.green" 3 >/dev/null
  for p in 0 1 2; do
    local b=$((p + 2)) g=$((p + 5))
    pick "$S.$name.blue" $p "${!b}"
    pick "$S.$name.green" $p "${!g}"
  done
}

# verdict NAME RC LINE [gp-check options...]: the checker on $S exits RC and
# prints exactly LINE; its problem lines are in $WORK/NAME.err
verdict() {
  local name=$1 want_rc=$2 want=$3 rc=0 out
  shift 3
  out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --verbose "$@" \
    2>"$WORK/$name.err") || rc=$?
  say "$name: exit $rc: $out"
  [ "$rc" = "$want_rc" ] || fail "$name: exit $rc, expected $want_rc: $(cat "$WORK/$name.err")"
  [ "$out" = "$want" ] || fail "$name: expected '$want': $(cat "$WORK/$name.err")"
}
# said NAME TEXT: the checker's stderr of case NAME names the problem
said() { grep -qF -- "$2" "$WORK/$1.err" || fail "$1: no '$2' in: $(cat "$WORK/$1.err")"; }

"$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" create "$S" 3 >/dev/null
for p in 0 1 2; do pick "$S" $p 0-19; done

B0=0-3,6,7,10,11,4,5,8,9,12-19 G0=4,5,8,9
B1=0-9,12,14,15,10,11,13,16-19 G1=10,11,13
B2=0-19 G2=""
ZERO="checked=60 duplicates=0 missing=0"

colours good "$B0" "$B1" "$B2" "$G0" "$G1" "$G2"
verdict good 0 "$ZERO reordered=0 misrouted=0 redelivered=7 aborted=7" \
  --blue "$S.good.blue" --green "$S.good.green" --survivor blue
verdict good_swapped 0 "$ZERO reordered=0 misrouted=0 redelivered=7 aborted=7" \
  --blue "$S.good.green" --green "$S.good.blue" --survivor green
# Without --survivor the re-delivered copies are duplicates, the block out of
# order (partition 0: 4 records outside a longest in-order run, 1: 3).
verdict good_plain 1 "checked=60 duplicates=7 missing=0 reordered=7 misrouted=0" \
  --blue "$S.good.blue" --green "$S.good.green"

# 8 went to green and never came back to blue.
colours missing 0-3,6,7,10,11,4,5,9,12-19 "$B1" "$B2" "$G0" "$G1" "$G2"
verdict missing 1 "checked=60 duplicates=0 missing=1 reordered=0 misrouted=0 redelivered=6 aborted=7" \
  --blue "$S.missing.blue" --green "$S.missing.green" --survivor blue
said missing "missing: $S/0@8 is not in $S.missing.blue (it is in the aborted colour)"

# 6 went to blue before the abort and was re-delivered as well.
colours dup 0-3,6,7,10,11,4,5,6,8,9,12-19 "$B1" "$B2" "$G0" "$G1" "$G2"
verdict dup 1 "checked=60 duplicates=1 missing=0 reordered=0 misrouted=0 redelivered=7 aborted=7" \
  --blue "$S.dup.blue" --green "$S.dup.green" --survivor blue
said dup "duplicate: $S.dup.blue/0@10 is source $S/0@6, already found in $S.dup.blue/0@4"

# green holds 11 twice.
colours dup_aborted "$B0" "$B1" "$B2" "$G0" 10,11,11,13 "$G2"
verdict dup_aborted 1 "checked=60 duplicates=1 missing=0 reordered=0 misrouted=0 redelivered=7 aborted=8" \
  --blue "$S.dup_aborted.blue" --green "$S.dup_aborted.green" --survivor blue
said dup_aborted "duplicate: $S.dup_aborted.green/1@2 is source $S/1@11"

# green holds a record that is in no source partition (id 999 in partition 2).
colours extra "$B0" "$B1" "$B2" "$G0" "$G1" "$G2"
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S.extra.green" --partition 2 --count 1 \
  --start-id 999 --ts-start $BASE --quiet >/dev/null
verdict extra 1 "checked=60 duplicates=1 missing=0 reordered=0 misrouted=0 redelivered=7 aborted=8" \
  --blue "$S.extra.blue" --green "$S.extra.green" --survivor blue
said extra "duplicate: $S.extra.green/2@0 matches no record of $S/2 (extra)"

# After the re-delivered block, 15 before 14: a third run.
colours third_run 0-3,6,7,10,11,4,5,8,9,12,13,15,14,16-19 "$B1" "$B2" "$G0" "$G1" "$G2"
verdict third_run 1 "$ZERO reordered=1 misrouted=0 redelivered=7 aborted=7" \
  --blue "$S.third_run.blue" --green "$S.third_run.green" --survivor blue
said third_run "is out of source order in or after the re-delivered block that begins at $S.third_run.blue/0@8"

# The re-delivered block itself out of order: 13 before 10, 11.
colours block_order "$B0" 0-9,12,14,15,13,10,11,16-19 "$B2" "$G0" "$G1" "$G2"
verdict block_order 1 "$ZERO reordered=1 misrouted=0 redelivered=7 aborted=7" \
  --blue "$S.block_order.blue" --green "$S.block_order.green" --survivor blue

# With a dead-letter topic (records as the proxy writes them there: the
# source record and a gate-proxy.source header naming it): 2@7 only there
# (not missing), 2@5 there and in blue (a duplicate), 0@8 there and in
# green but not re-delivered to blue (missing).
colours dead 0-3,6,7,10,11,4,5,9,12-19 "$B1" 0-6,8-19 "$G0" "$G1" "$G2"
"$GP_ADMIN" --bootstrap "$GP_BOOTSTRAP" create "$S.dead.dlq" 1 >/dev/null
for po in 2:7 2:5 0:8; do
  "$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S.dead.dlq" --partition 0 --count 20 \
    --start-id $((100 * ${po%:*})) --ts-start $BASE --pick "${po#*:}" \
    --header "gate-proxy.source=$S/${po%:*}/${po#*:}" --quiet >/dev/null
done
verdict dead 1 "checked=60 duplicates=1 missing=1 reordered=0 misrouted=0 redelivered=6 aborted=7" \
  --blue "$S.dead.blue" --green "$S.dead.green" --dlq "$S.dead.dlq" --survivor blue
said dead "duplicate: $S.dead.dlq/0@1 is source $S/2@5, already found in $S.dead.blue/2@5"
said dead "missing: $S/0@8 is in $S.dead.green (the aborted colour) but was not re-delivered to $S.dead.blue"

# One swap where nothing was re-delivered: one run, so not allowed (two runs
# split anywhere would pass it).
colours swap "$B0" "$B1" 0-9,11,10,12-19 "$G0" "$G1" "$G2"
verdict swap 1 "$ZERO reordered=1 misrouted=0 redelivered=7 aborted=7" \
  --blue "$S.swap.blue" --green "$S.swap.green" --survivor blue
said swap "reordered: $S.swap.blue/2@"

# Refused: a colour that is none, and --survivor with the split by T.
for args in "--survivor red" "--survivor blue --cutoff $BASE --old blue" \
            "--survivor blue --since 0:0"; do
  rc=0
  # shellcheck disable=SC2086 # the words of $args are options
  "$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" $args 2>"$WORK/refused.err" || rc=$?
  [ $rc = 2 ] || fail "gp-check $args: exit $rc, expected 2 (usage error)"
  grep -q -- "--survivor" "$WORK/refused.err" || fail "gp-check $args: $(cat "$WORK/refused.err")"
done
say "refused: --survivor red, --survivor with --cutoff/--old, --survivor with --since"
say "PASS"
