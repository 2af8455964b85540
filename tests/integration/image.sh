#!/usr/bin/env bash
# The image, not only the binary: make image's build (scripts/image.sh,
# cached) run against the broker on the host network as a Deployment runs
# it: uid 10001, a read-only root filesystem, the configuration mounted
# read-only at /etc/gate-proxy and the control file in a writable
# /var/lib/gate-proxy. /readyz turns 200, a cutover with the CLI routes
# records (the checker finds all zeros), SIGTERM ends it with exit 0 within
# the Deployment's grace period, and `gate-proxy --version` in it names the
# librdkafka of the image's own packages. The release binary is built a
# second time in another directory and must have the same sha256.
#
# It runs the image with podman where this machine lets it, else says why
# (podman's error) and runs the image's entrypoint chrooted into its
# mounted root filesystem (podman image mount), read-only, as uid 10001: the
# image's own libraries are what run. GP_IMAGE_RUN=chroot takes that path
# on purpose. Prints one image: line, also appended to $GP_INSTALL_LINES.
source "$(dirname "$0")/lib.sh"

TOP=$(cd "$(dirname "$0")/../.." && pwd)
GRACE=75 # terminationGracePeriodSeconds in deploy/kubernetes/deployment.yaml
CTR=gp-image-$RUN_ID

say "building the image (scripts/image.sh; cached after the first build)"
bash "$TOP/scripts/image.sh" build >"$WORK/image.out" 2>"$WORK/image.log" \
  || { cat "$WORK/image.log" >&2; fail "scripts/image.sh build failed"; }
cat "$WORK/image.log"
IMG=$(tail -n 1 "$WORK/image.out")
SIZE_MB=$(($(podman image inspect --format '{{.Size}}' "$IMG") / 1000000))

say "the release binary built again elsewhere: the same bytes"
bash "$TOP/scripts/image.sh" binary "$WORK/repro" >"$WORK/repro.out"
A=$(sha256sum "${GP_IMAGE_BUILD:-$TOP/build/image}/gate-proxy" | cut -d' ' -f1)
B=$(sha256sum "$(cat "$WORK/repro.out")" | cut -d' ' -f1)
[ "$A" = "$B" ] || fail "two builds of the same sources differ: $A and $B"
rm -rf "$WORK/repro"
say "sha256 $A twice"

# The image's files, for its package versions and the chroot run
MNT=$(podman image mount "$IMG")
ON_EXIT="podman image unmount $IMG >/dev/null 2>&1;"
# The librdkafka linked into the binary: the one scripts/build-librdkafka.sh
# builds (none comes from the image's packages).
RDK=$(sed -n 's/^VERSION=//p' "$TOP/scripts/build-librdkafka.sh")
! dpkg-query --admindir="$MNT/var/lib/dpkg" -W librdkafka1 >/dev/null 2>&1 \
  || fail "the image carries Debian's librdkafka1 package; the binary links its own"

# Writable by uid 10001: the control file's directory (the proxy replaces
# the file by a new one there); the configuration stays root's, read-only.
mkdir -p "$WORK/etc"
chmod 755 "$WORK" "$WORK/etc"
HP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')

# podman's options for the Deployment's pod. The limits are this process's
# own: podman would otherwise raise them, which needs CAP_SYS_RESOURCE.
# runc, not crun: crun refuses a host whose cgroups are in hybrid mode
# (GP_IMAGE_OCI_RUNTIME=crun shows that refusal, and the chroot run after it).
PODMAN_RUN=(podman run --rm --network host --read-only --read-only-tmpfs=false
  --user 10001:10001 --ulimit "nofile=$(ulimit -Sn):$(ulimit -Hn)" --ulimit nproc=4096:4096
  -v "$WORK/etc:/etc/gate-proxy:ro" -v "$WORK:/var/lib/gate-proxy")
OCI=${GP_IMAGE_OCI_RUNTIME:-$(command -v runc >/dev/null && echo runc || true)}
[ -z "$OCI" ] || PODMAN_RUN+=(--runtime "$OCI")

# IN_CHROOT COMMAND...: COMMAND in the image's root filesystem, mounted
# read-only in a mount namespace of its own with the same two mounts, as
# uid 10001. Each step execs the next, so the pid of the command started
# in the background is the proxy's own.
IN_CHROOT=(unshare --mount --propagation private sh -c '
    set -e
    r=$1 w=$2; shift 2
    mount --bind "$r" "$r"
    mount -o remount,bind,ro "$r"
    mount -t proc proc "$r/proc"
    mount --bind /dev "$r/dev"
    mount --bind /etc/hosts "$r/etc/hosts"
    mount --bind -o ro "$w/etc" "$r/etc/gate-proxy"
    mount --bind "$w" "$r/var/lib/gate-proxy"
    cd /
    exec chroot --userspec=10001:10001 "$r" "$@"' sh "$MNT" "$WORK")

RUN=${GP_IMAGE_RUN:-podman}
if [ "$RUN" = podman ]; then
  if "${PODMAN_RUN[@]}" "$IMG" --version >"$WORK/version" 2>"$WORK/podman.err"; then
    say "podman runs containers here"
  else
    say "podman cannot run the image here: $(tr '\n' ' ' <"$WORK/podman.err")"
    say "so the image's entrypoint runs chrooted into its root filesystem instead"
    RUN=chroot
  fi
fi
if [ "$RUN" = chroot ]; then
  "${IN_CHROOT[@]}" /usr/local/bin/gate-proxy --version >"$WORK/version" \
    || fail "gate-proxy --version in the image's root filesystem"
fi
grep -qx "gate-proxy [0-9.]* (librdkafka $RDK)" "$WORK/version" &&
  grep -q "^librdkafka features: .*sasl_scram.*zstd.*sasl_oauthbearer.*oidc" "$WORK/version" \
  || fail "--version does not name the image's librdkafka $RDK: $(cat "$WORK/version")"
say "--version ($RUN): $(tr '\n' ' ' <"$WORK/version")"

S=gp-image-$RUN_ID
BASE=1700000000000
"$GP_PRODUCE" --bootstrap "$GP_BOOTSTRAP" --topic "$S" --count 0 --partitions-hint 4 --quiet >/dev/null
"$GP_BIN" init --control "$WORK/cm.json" >/dev/null
{ conf_lines "$S"; echo "control.file=/var/lib/gate-proxy/cm.json"
  echo "http.listen=127.0.0.1:$HP"; } >"$WORK/etc/gate-proxy.conf"
chmod 644 "$WORK/etc/gate-proxy.conf"
# The map and its lock belong to the proxy's user; the CLI, run as root
# here, keeps their owner when it replaces the map.
chown 10001:10001 "$WORK" "$WORK"/cm.json*

if [ "$RUN" = podman ]; then
  ON_EXIT="$ON_EXIT podman rm -f $CTR >/dev/null 2>&1;"
  "${PODMAN_RUN[@]}" --name "$CTR" "$IMG" run -c /etc/gate-proxy/gate-proxy.conf \
    >>"$WORK/proxy.log" 2>&1 &
else
  "${IN_CHROOT[@]}" /usr/local/bin/gate-proxy run -c /etc/gate-proxy/gate-proxy.conf \
    >>"$WORK/proxy.log" 2>&1 &
fi
PROXY_PID=$!
readyz() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HP/readyz")" = 200 ]; }
wait_for "/readyz 200 from the image" 60 readyz
READYZ=200

# The proxy's own process, as the host sees it: its user and its root mount
if [ "$RUN" = podman ]; then
  PID=$(podman inspect --format '{{.State.Pid}}' "$CTR")
else
  PID=$PROXY_PID
fi
read -r _ RUID EUID_ _ <<<"$(grep '^Uid:' "/proc/$PID/status")"
[ "$RUID" = 10001 ] && [ "$EUID_" = 10001 ] || fail "the proxy runs as uid $RUID/$EUID_, not 10001"
awk '$5 == "/" { print $6 }' "/proc/$PID/mountinfo" >"$WORK/rootopts"
grep -q '^ro' "$WORK/rootopts" || fail "the root filesystem is mounted $(cat "$WORK/rootopts")"
say "/readyz 200; the proxy (pid $PID) runs as uid 10001 on a read-only root"

say "phase A: 20000 records, all to blue"
produce "$S" 20000 0 --ts-start $BASE --disorder 150 --headers --key-every 3
wait_for "20000 records routed" 60 routed_is 20000
say "cutover to green with the CLI while 20000 more records flow"
produce "$S" 20000 20000 --ts-start $((BASE + 20000)) --disorder 150 --headers --rate 8000 &
PRODUCER=$!
"$GP_BIN" cutover --control "$WORK/cm.json" --to green --delay-ms 500 >/dev/null
wait_for "CLEAR_TO_TEARDOWN" 90 key_is stage CLEAR_TO_TEARDOWN
T1=$(key watermark-toggle-value)
"$GP_BIN" finish --control "$WORK/cm.json" >/dev/null
wait "$PRODUCER"
wait_for "40000 records routed" 60 routed_is 40000
[ "$(stat -c %u "$WORK/cm.json")" = 10001 ] || fail "the map is no longer the proxy's user's"

say "SIGTERM: exit 0 within the grace period ($GRACE s)"
t0=$(date +%s%N)
if [ "$RUN" = podman ]; then
  podman kill --signal TERM "$CTR" >/dev/null
else
  kill -TERM "$PROXY_PID"
fi
await_proxy "$GRACE" SIGTERM
SIGTERM_EXIT=$EXIT_RC
ms=$((($(date +%s%N) - t0) / 1000000))
[ "$SIGTERM_EXIT" = 0 ] || fail "exit $SIGTERM_EXIT after SIGTERM (expected 0)"
say "exit 0, $ms ms after SIGTERM"

out=$("$GP_CHECK" --bootstrap "$GP_BOOTSTRAP" --source "$S" --event-time json:ts \
  --cutoff "$T1" --old blue) || fail "checker: $out"
say "checker: $out"
c() { sed -n "s/.* $1=\([0-9]*\).*/\1/p; s/^$1=\([0-9]*\).*/\1/p" <<<"$out" | head -n 1; }
CHECKED=$(c checked)
MISSING=$(c missing)
DUPLICATED=$(c duplicates)
[ "$CHECKED" = 40000 ] || fail "checked $CHECKED records, expected 40000"
LINE="image: name=$IMG size_mb=$SIZE_MB run=$RUN readyz=$READYZ checked=$CHECKED"
LINE="$LINE missing=$MISSING duplicated=$DUPLICATED sigterm_exit=$SIGTERM_EXIT"
LINE="$LINE sigterm_ms=$ms uid=10001 rootfs=ro librdkafka=$RDK binary_sha256=${A:0:16}x2 ok"
echo "$LINE"
[ -z "${GP_INSTALL_LINES:-}" ] || echo "$LINE" >>"$GP_INSTALL_LINES"
say "PASS"
