#!/usr/bin/env bash
# Builds the librdkafka that gate-proxy links everywhere (make, make demo,
# make test, make bench, make image): 2.14.2 from Debian's own source package
# (librdkafka 2.14.2-1, in unstable and forky), on this Debian 12 machine.
#   scripts/build-librdkafka.sh          build once into .cache/librdkafka/VERSION
#   scripts/build-librdkafka.sh prefix   print the install prefix
#
# 1. The source package: apt-get source from a deb-src list of its own
#    (.cache/librdkafka/apt; the machine's apt sources are not touched),
#    checked against the SHA-256 sums below.
# 2. dpkg-source -x unpacks it and applies Debian's patches. One is taken
#    back out: it points the telemetry code at headers that Debian generates
#    from opentelemetry-proto, a package Debian 12 lacks; upstream's own
#    generated copies in the tarball are used instead (--disable-nanopb-ext).
#    Everything else is Debian's configure line (--enable-c11threads
#    --enable-cjson-ext) with Debian's compiler flags (dpkg-buildflags).
# 3. Features: SSL, SASL through Cyrus libsasl2 (PLAIN, SCRAM, GSSAPI),
#    OAUTHBEARER with OIDC (libcurl), zstd and lz4; each is required, so a
#    missing -dev package stops the build instead of leaving it out.
# 4. Installed into the prefix: the headers, the static library and its
#    pkg-config file (rdkafka-static.pc). gate-proxy links it statically,
#    so every binary carries this librdkafka and needs only Debian's shared
#    libraries beside it (libssl3, libsasl2-2, libcurl4, libzstd1, liblz4-1).
# About a minute on 2 cores; the result is kept until VERSION changes.
set -euo pipefail
VERSION=2.14.2
DEBIAN_REVISION=1
ORIG_SHA256=4d53568c13717b167d12c7b2a0fe12aeb5d6bfe02de53df5b68f86d870a81b33
DEBIAN_SHA256=35fbeb684225057fb27f81919b64d5b9dcb1c34d4b003a8e35e6142fcd757672

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/.cache/librdkafka"
PREFIX="$CACHE/$VERSION-$DEBIAN_REVISION"
[ "${1:-}" != prefix ] || { echo "$PREFIX"; exit 0; }
[ -z "${1:-}" ] || { echo "usage: scripts/build-librdkafka.sh [prefix]" >&2; exit 2; }
if [ -e "$PREFIX/lib/pkgconfig/rdkafka-static.pc" ]; then
  exit 0
fi
say() { printf 'librdkafka: %s\n' "$*" >&2; }
die() { say "$*"; exit 1; }
for tool in apt-get dpkg-source dpkg-buildflags patch make cc; do
  command -v "$tool" >/dev/null || die "$tool is needed (scripts/install-deps.sh build installs it)"
done

# 1. The source package, from Debian's archive, by apt alone.
apt=(-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$CACHE/apt/sources.list.d"
     -o Dir::State::Lists="$CACHE/apt/lists" -o APT::Sandbox::User=root)
mkdir -p "$CACHE/apt/sources.list.d" "$CACHE/apt/lists/partial"
cat >"$CACHE/apt/sources.list.d/librdkafka-src.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: sid forky
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
work="$CACHE/src-$VERSION-$DEBIAN_REVISION"
rm -rf "$work"
mkdir -p "$work"
t0=$(date +%s)
say "fetching the source package librdkafka $VERSION-$DEBIAN_REVISION from Debian"
apt-get "${apt[@]}" -qq update >"$work/apt.log" 2>&1 ||
  { tail -5 "$work/apt.log" >&2; die "apt-get update of the deb-src list failed"; }
(cd "$work" && apt-get "${apt[@]}" -qq source --download-only \
  "librdkafka=$VERSION-$DEBIAN_REVISION") >>"$work/apt.log" 2>&1 ||
  { tail -5 "$work/apt.log" >&2
    die "Debian's archive no longer serves librdkafka $VERSION-$DEBIAN_REVISION; set VERSION and the sums in $0 to the one it serves (apt-cache showsrc librdkafka with this list)"; }
(cd "$work" && sha256sum -c --quiet) <<EOF || die "the source package's checksums differ from the ones this script pins"
$ORIG_SHA256  librdkafka_$VERSION.orig.tar.gz
$DEBIAN_SHA256  librdkafka_$VERSION-$DEBIAN_REVISION.debian.tar.xz
EOF

# 2. Unpacked with Debian's patches, less the one Debian 12 cannot build.
(cd "$work" && dpkg-source -q -x "librdkafka_$VERSION-$DEBIAN_REVISION.dsc" src) >>"$work/apt.log" 2>&1 ||
  { tail -5 "$work/apt.log" >&2; die "dpkg-source -x failed"; }
cd "$work/src"
patch -s -R -p1 <debian/patches/Use-nanopb-generated-header-paths-for-opentelemetry.patch
eval "$(dpkg-buildflags --export=sh)"
./configure --prefix="$PREFIX" --enable-c11threads --enable-cjson-ext --disable-nanopb-ext \
  --enable-ssl --enable-gssapi --enable-curl --enable-zstd --enable-lz4-ext \
  >"$work/configure.log" 2>&1 || { tail -20 "$work/configure.log" >&2; die "configure failed"; }
say "building (about a minute on 2 cores; log in $work/make.log)"
make -C src -j"$(nproc)" >"$work/make.log" 2>&1 || { tail -20 "$work/make.log" >&2; die "make failed"; }

# 3. Every feature gate-proxy promises, or no build.
built=$(sed -n 's/^#define BUILT_WITH "\(.*\)"/\1/p' config.h)
for f in SSL SASL_CYRUS SASL_SCRAM SASL_OAUTHBEARER OAUTHBEARER_OIDC ZSTD LZ4_EXT CURL; do
  case " $built " in *" $f "*) ;; *) die "built without $f (BUILT_WITH: $built); see $work/configure.log" ;; esac
done

# 4. Installed: headers, the static library, its pkg-config file.
make -C src install DESTDIR="$work/stage" >"$work/install.log" 2>&1 ||
  { tail -20 "$work/install.log" >&2; die "make install failed"; }
rm -f "$work/stage$PREFIX"/lib/*.so*
rm -rf "$PREFIX"
mv "$work/stage$PREFIX" "$PREFIX"
rm -rf "$work/src" "$work/stage"
# Older builds: only the current one is kept.
find "$CACHE" -mindepth 1 -maxdepth 1 ! -name apt ! -name "$(basename "$PREFIX")" \
  ! -name "$(basename "$work")" -exec rm -rf {} +
say "$VERSION-$DEBIAN_REVISION built in $(($(date +%s) - t0)) s into $PREFIX ($built)"
