#!/usr/bin/env bash
# Builds the gate-proxy container image from Debian's packages alone, with no
# registry and no Docker engine (make image; deploy/README.md, The image):
#   1. the root filesystem: mmdebstrap (variant apt, merged /usr) from the
#      Debian archive this machine's apt uses, with the libraries the binary
#      links, ca-certificates and the user gate-proxy (uid and gid 10001);
#      kept in .cache/image/ under a key of its inputs, so it is made once;
#   2. the binary: a RelWithDebInfo build of this tree on this Debian 12 (the
#      ABI of the root filesystem's libraries), with the librdkafka that
#      scripts/build-librdkafka.sh builds linked in, reproducible: SOURCE_DATE_EPOCH
#      is the commit's time and the source and build paths are mapped away,
#      so the same sources give the same bytes wherever they are built;
#   3. the image: podman builds deploy/Containerfile on the two, with the
#      commit's time as every timestamp, so its digest is reproducible too.
#
#   scripts/image.sh build          builds what is missing; prints the image name last
#   scripts/image.sh binary DIR     only the binary, built in DIR (a reproducibility check)
#   scripts/image.sh name           the image name (localhost/gate-proxy:VERSION)
#   scripts/image.sh packages       dpkg -l of the image's root filesystem
# GP_IMAGE_BUILD is where step 2 builds (default build/image);
# GP_IMAGE_SOURCES the apt sources file for step 1 (default the machine's
# Debian entries: /etc/apt/sources.list.d/debian.sources, else
# /etc/apt/sources.list).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=$top/.cache/image
bdir=${GP_IMAGE_BUILD:-$top/build/image}
version=$(sed -n 's/^project(gate-proxy VERSION \([0-9.]*\).*/\1/p' "$top/CMakeLists.txt")
name=localhost/gate-proxy:$version
# What the binary links (CMakeLists.txt: libcjson, libcurl, yaml-0.1,
# libmicrohttpd, and what its librdkafka was built with: OpenSSL, Cyrus
# SASL with its Kerberos plugin for GSSAPI, zstd, lz4, zlib), and the CA
# roots for TLS to the brokers and the API server.
runtime=(libcjson1 libcurl4 libyaml-0-2 libmicrohttpd12 libssl3 libsasl2-2
         libsasl2-modules-gssapi-mit libzstd1 liblz4-1 zlib1g ca-certificates)

say() { printf '[%s] image: %s\n' "$(date +%T)" "$*" >&2; }

sources_file() {
  if [ -n "${GP_IMAGE_SOURCES:-}" ]; then
    echo "$GP_IMAGE_SOURCES"
  elif [ -f /etc/apt/sources.list.d/debian.sources ]; then
    echo /etc/apt/sources.list.d/debian.sources
  else
    echo /etc/apt/sources.list
  fi
}

# The seconds of the last commit of the paths given (the root filesystem's
# recipe), else of the tree (the binary); 0 outside a git checkout.
commit_time() {
  local t
  t=$(git -C "$top" log -1 --format=%ct -- "$@" 2>/dev/null || true)
  [ -n "$t" ] || t=$(git -C "$top" log -1 --format=%ct 2>/dev/null || true)
  echo "${t:-0}"
}

# base_key: a hash of everything the root filesystem is made from: this
# recipe and its commit time, the sources, mmdebstrap's version and the versions apt here would
# install of the runtime packages (an archive update moves the key).
base_key() {
  {
    declare -f make_base
    commit_time scripts/image.sh
    printf '%s\n' "${runtime[@]}"
    cat "$(sources_file)"
    mmdebstrap --version
    apt-cache policy "${runtime[@]}" | grep -E '^[a-z0-9]|Candidate'
  } | sha256sum | cut -c1-16
}

# make_base OUT.tar: the root filesystem, reproducible for one state of the
# archive (SOURCE_DATE_EPOCH: the recipe's commit). The user and the two
# directories the Deployment mounts are made by hooks, with no package for
# useradd: the image needs neither passwd nor adduser.
make_base() {
  local out=$1
  SOURCE_DATE_EPOCH=$(commit_time scripts/image.sh) \
    mmdebstrap --quiet --mode=root --variant=apt \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --include="$(
      IFS=,
      echo "${runtime[*]}"
    )" \
    --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    --dpkgopt='path-exclude=/usr/share/locale/*' \
    --customize-hook='echo "gate-proxy:x:10001:" >>"$1/etc/group"' \
    --customize-hook='echo "gate-proxy:x:10001:10001:gate-proxy:/nonexistent:/usr/sbin/nologin" >>"$1/etc/passwd"' \
    --customize-hook='[ ! -f "$1/etc/shadow" ] || echo "gate-proxy:!:1::::::" >>"$1/etc/shadow"' \
    --customize-hook='printf "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" >"$1/etc/hosts"' \
    --customize-hook='mkdir -p "$1/etc/gate-proxy" "$1/var/lib/gate-proxy"' \
    --customize-hook='chown 10001:10001 "$1/var/lib/gate-proxy"' \
    --customize-hook='rm -f "$1"/var/log/apt/* "$1"/var/cache/ldconfig/aux-cache' \
    bookworm "$out" "$(sources_file)"
}

# base: prints the path of the cached root filesystem, made when missing
base() {
  local key out t0
  key=$(base_key)
  out=$cache/rootfs-$key.tar
  if [ ! -s "$out" ]; then
    mkdir -p "$cache"
    say "root filesystem $key: mmdebstrap from $(sources_file) (once; about a minute)"
    t0=$(date +%s)
    # mmdebstrap tells the output's format by its name: a .tar
    make_base "$cache/partial.tar" >"$cache/mmdebstrap.log" 2>&1 || {
      tail -n 30 "$cache/mmdebstrap.log" >&2
      exit 1
    }
    mv "$cache/partial.tar" "$out"
    # older root filesystems: only the current one is kept
    find "$cache" -maxdepth 1 -name 'rootfs-*' ! -name "rootfs-$key.tar*" -delete
    say "root filesystem $key: $(($(du -k "$out" | cut -f1) / 1024)) MB in $(($(date +%s) - t0)) s"
  fi
  echo "$out"
}

# binary DIR: the release binary in DIR, the same bytes for the same sources
binary() {
  local dir=$1
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  # The last matching map wins, so the build directory (which may lie in
  # the tree) is mapped before the tree's own prefix is.
  local flags="-ffile-prefix-map=$top=/src -ffile-prefix-map=$dir=/build"
  "$top/scripts/build-librdkafka.sh"
  SOURCE_DATE_EPOCH=$(commit_time) cmake -S "$top" -B "$dir" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
    "-DGP_LIBRDKAFKA=$("$top/scripts/build-librdkafka.sh" prefix)" \
    "-DCMAKE_C_FLAGS=$flags" >/dev/null
  SOURCE_DATE_EPOCH=$(commit_time) cmake --build "$dir" --target gate-proxy >/dev/null
  echo "$dir/gate-proxy"
}

build() {
  local rootfs bin key ctx t0
  t0=$(date +%s)
  rootfs=$(base)
  bin=$(binary "$bdir")
  key=$(cat "$rootfs.sha256" 2>/dev/null || true)
  if [ -z "$key" ]; then
    key=$(sha256sum "$rootfs" | cut -d' ' -f1)
    echo "$key" >"$rootfs.sha256"
  fi
  key=$({
    echo "$key"
    sha256sum "$bin" | cut -d' ' -f1
    cat "$top/deploy/Containerfile"
  } | sha256sum | cut -c1-16)
  if [ "$(podman image inspect --format '{{index .Labels "io.gate-proxy.inputs"}}' "$name" 2>/dev/null)" = "$key" ]; then
    say "$name is up to date (inputs $key)"
  else
    # A context of the two files only (hard links, no copy of the tree)
    ctx=$cache/context
    rm -rf "$ctx"
    mkdir -p "$ctx"
    ln "$rootfs" "$ctx/rootfs.tar"
    cp "$bin" "$ctx/gate-proxy"
    podman build --quiet --timestamp "$(commit_time)" --label "io.gate-proxy.inputs=$key" \
      -f "$top/deploy/Containerfile" -t "$name" "$ctx" >/dev/null
    rm -rf "$ctx"
    podman image prune -f >/dev/null 2>&1 || true
  fi
  say "$name: id $(podman image inspect --format '{{.Id}}' "$name" | cut -c1-12)," \
    "$(($(podman image inspect --format '{{.Size}}' "$name") / 1000000)) MB," \
    "binary sha256 $(sha256sum "$bin" | cut -c1-16), $(($(date +%s) - t0)) s"
  echo "$name"
}

case "${1:-build}" in
build) build ;;
binary) binary "${2:?usage: scripts/image.sh binary DIR}" ;;
name) echo "$name" ;;
packages)
  mnt=$(podman image mount "$name")
  dpkg --admindir="$mnt/var/lib/dpkg" -l
  podman image unmount "$name" >/dev/null
  ;;
*)
  echo "usage: scripts/image.sh build|binary DIR|name|packages" >&2
  exit 2
  ;;
esac
