#!/usr/bin/env bash
# Builds ferry's Debian package from a built binary with dpkg-deb alone (what `cargo deb` would
# build, without compiling cargo-deb): the binary as /usr/bin/ferry, the systemd unit, the
# example configuration in /etc/ferry and /etc/default/ferry (conffiles), the copyright file,
# and the install and removal scripts (postinst, prerm, postrm). The sources are in
# packaging/debian/ and packaging/example/.
#
#   scripts/package-deb.sh [--binary PATH] [--build] [--out DIR] [--fast]
#
#   --binary PATH  the ferry binary to package (default: target/release/ferry, built with
#                  `cargo build --release --locked` when it is absent)
#   --build        build target/release/ferry first, even when it exists
#   --out DIR      where to write ferry_VERSION_ARCH.deb (default: target/debian)
#   --fast         gzip at level 1 instead of xz: seconds instead of a minute for a debug
#                  binary (the tests use it)
#
# The version is Cargo.toml's (a pre-release `-` becomes `~`, then Debian revision 1); the
# architecture is dpkg's. Depends comes from dpkg-shlibdeps when it is installed (package
# dpkg-dev), otherwise it names the libraries without versions. The binary is stripped when
# `strip` is there. The package's path is the one line written to stdout.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sources="$root/packaging"

fail() { printf 'package-deb: %s\n' "$*" >&2; exit 1; }
note() { printf 'package-deb: %s\n' "$*" >&2; }

binary=""
build=0
out="$root/target/debian"
compression=(-Zxz)
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) [ $# -ge 2 ] || fail "--binary needs a path"; binary="$2"; shift 2 ;;
        --build) build=1; shift ;;
        --out) [ $# -ge 2 ] || fail "--out needs a folder"; out="$2"; shift 2 ;;
        --fast) compression=(-Zgzip -z1); shift ;;
        -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2; exit 0 ;;
        *) fail "unknown argument $1 (see --help)" ;;
    esac
done

command -v dpkg-deb >/dev/null || fail "dpkg-deb is missing: install the Debian package dpkg"
command -v dpkg >/dev/null || fail "dpkg is missing: install the Debian package dpkg"

if [ -z "$binary" ]; then
    binary="$root/target/release/ferry"
    if [ "$build" = 1 ] || [ ! -x "$binary" ]; then
        note "building $binary"
        (cd "$root" && cargo build --release --locked >&2) || fail "cargo build --release failed"
    fi
elif [ "$build" = 1 ]; then
    fail "--build builds target/release/ferry; it cannot be combined with --binary"
fi
[ -f "$binary" ] && [ -x "$binary" ] || fail "$binary is not an executable file"

# The [package] table's version, as Cargo.toml writes it.
cargo_version="$(awk '
    /^\[/ { in_package = ($0 == "[package]") }
    in_package && /^version *=/ { gsub(/^version *= *"|".*$/, ""); print; exit }
' "$root/Cargo.toml")"
[ -n "$cargo_version" ] || fail "no version in the [package] table of Cargo.toml"
version="${cargo_version//-/\~}-1"
arch="$(dpkg --print-architecture)" || fail "dpkg --print-architecture failed"

stage="$(mktemp -d "${TMPDIR:-/tmp}/ferry-deb.XXXXXX")"
trap 'rm -rf "$stage"' EXIT
tree="$stage/tree"

install -d -m 0755 "$tree/DEBIAN" "$tree/usr/bin" "$tree/lib/systemd/system" \
    "$tree/etc/ferry" "$tree/etc/default" "$tree/usr/share/doc/ferry"
if command -v strip >/dev/null; then
    strip --strip-unneeded -o "$tree/usr/bin/ferry" "$binary" || fail "strip $binary failed"
    chmod 0755 "$tree/usr/bin/ferry"
else
    note "strip is missing (Debian package binutils): packaging the binary unstripped"
    install -m 0755 "$binary" "$tree/usr/bin/ferry"
fi
install -m 0644 "$sources/debian/ferry.service" "$tree/lib/systemd/system/ferry.service"
install -m 0644 "$sources/example/ferry.yaml" "$sources/example/openapi.yaml" "$tree/etc/ferry/"
# Secrets go in here: root's alone (systemd reads it before ferry starts).
install -m 0600 "$sources/debian/default" "$tree/etc/default/ferry"
install -m 0644 "$sources/debian/copyright" "$tree/usr/share/doc/ferry/copyright"
for script in postinst prerm postrm; do
    install -m 0755 "$sources/debian/$script" "$tree/DEBIAN/$script"
done
(cd "$tree" && find etc -type f | sort | sed 's|^|/|') >"$tree/DEBIAN/conffiles"
chmod 0644 "$tree/DEBIAN/conffiles"

# Depends: what the binary links against, as dpkg-shlibdeps words it. It reads the package
# list from debian/control, so it runs in a folder with a minimal one.
if command -v dpkg-shlibdeps >/dev/null; then
    mkdir -p "$stage/shlibs/debian"
    printf 'Source: ferry\n\nPackage: ferry\nArchitecture: any\n' >"$stage/shlibs/debian/control"
    depends="$(cd "$stage/shlibs" && dpkg-shlibdeps -O "$tree/usr/bin/ferry" 2>/dev/null)" \
        || fail "dpkg-shlibdeps failed on $binary"
    depends="${depends#shlibs:Depends=}"
else
    note "dpkg-shlibdeps is missing (Debian package dpkg-dev): Depends names libc6 and libgcc-s1 without versions"
    depends="libc6, libgcc-s1"
fi

installed_size="$(du -sk --exclude=DEBIAN "$tree" | cut -f1)"
sed -e "s|@VERSION@|$version|" -e "s|@ARCH@|$arch|" -e "s|@DEPENDS@|$depends|" \
    -e "s|@INSTALLED_SIZE@|$installed_size|" "$sources/debian/control" >"$tree/DEBIAN/control"
if grep -q '@[A-Z_]*@' "$tree/DEBIAN/control"; then
    fail "packaging/debian/control has a placeholder this script does not fill"
fi
(cd "$tree" && find usr lib -type f -print0 | sort -z | xargs -0 md5sum) >"$tree/DEBIAN/md5sums"
chmod 0644 "$tree/DEBIAN/md5sums"

mkdir -p "$out"
deb="$(cd "$out" && pwd)/ferry_${version}_${arch}.deb"
dpkg-deb --root-owner-group "${compression[@]}" --build "$tree" "$deb" >/dev/null \
    || fail "dpkg-deb --build failed"
note "built $deb"
printf '%s\n' "$deb"
