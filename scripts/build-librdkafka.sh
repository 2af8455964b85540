#!/usr/bin/env bash
# Builds a current librdkafka into .cache/librdkafka/<version>/ (git-ignored)
# from the source tree that the npm package node-rdkafka carries
# (deps/librdkafka), for gate.membership=group: Debian 12's 2.0.2 trips on
# cooperative rebalances (docs/DESIGN.md, Scale-out).
#   scripts/build-librdkafka.sh          build once (about 5 minutes on 2 cores)
#   scripts/build-librdkafka.sh prefix   print the install prefix
# Use it by its pkg-config file (cmake -DGP_LIBRDKAFKA_PREFIX=...; make
# LIBRDKAFKA=new), or at run time by LD_LIBRARY_PATH=<prefix>/lib (the C
# ABI is stable, soname librdkafka.so.1).
# Only the features gate-proxy uses: no SASL, no zstd, no curl (OIDC),
# no static archive of dependencies; OpenSSL, zlib and lz4 as installed.
set -euo pipefail
NODE_RDKAFKA=3.6.1 # carries librdkafka 2.12.0
VERSION=2.12.0
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.cache/librdkafka/$VERSION"
[ "${1:-}" != prefix ] || { echo "$PREFIX"; exit 0; }
if [ -e "$PREFIX/lib/pkgconfig/rdkafka.pc" ]; then
  echo "librdkafka $VERSION already in $PREFIX" >&2
  exit 0
fi
command -v npm >/dev/null || { echo "build-librdkafka: npm is needed (apt-get install npm)" >&2; exit 1; }
SRC="$ROOT/.cache/librdkafka/src-$VERSION"
rm -rf "$SRC"
mkdir -p "$SRC"
(cd "$SRC" && npm pack --silent "node-rdkafka@$NODE_RDKAFKA" >/dev/null &&
  tar xzf "node-rdkafka-$NODE_RDKAFKA.tgz" package/deps/librdkafka)
cd "$SRC/package/deps/librdkafka"
hex=$(sed -n 's/^#define RD_KAFKA_VERSION *0x\([0-9a-fA-F]*\).*/\1/p' src/rdkafka.h)
have=$((16#${hex:0:2})).$((16#${hex:2:2})).$((16#${hex:4:2}))
[ "$have" = "$VERSION" ] || { echo "build-librdkafka: the package carries $have, not $VERSION" >&2; exit 1; }
./configure --prefix="$PREFIX" --disable-sasl --disable-zstd --disable-curl \
  --disable-gssapi >"$SRC/configure.log" 2>&1 ||
  { tail -20 "$SRC/configure.log" >&2; exit 1; }
make -j"$(nproc)" libs >"$SRC/make.log" 2>&1 || { tail -20 "$SRC/make.log" >&2; exit 1; }
make install-subdirs >"$SRC/install.log" 2>&1 || make install >>"$SRC/install.log" 2>&1
echo "librdkafka $VERSION installed in $PREFIX" >&2
