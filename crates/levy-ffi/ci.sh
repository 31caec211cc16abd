#!/usr/bin/env bash
# Checks levy's C ABI end to end:
#   1. the committed include/levy.h equals what the pinned cbindgen generates;
#   2. the C tests in tests/c pass plain, under AddressSanitizer (+UBSan), and under
#      valgrind memcheck (no errors, nothing definitely lost);
#   3. examples/c/pos.c builds against an installed liblevy found with pkg-config, and runs.
# Installs what it needs (cbindgen, gcc, valgrind, pkg-config) when missing.
set -euo pipefail

CBINDGEN_VERSION=0.29.4

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

say() { printf '\n== levy-ffi: %s\n' "$*"; }

apt_install() {
    local sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"
}

say "tools"
if [ "$(cbindgen --version 2>/dev/null || true)" != "cbindgen $CBINDGEN_VERSION" ]; then
    cargo install cbindgen --version "$CBINDGEN_VERSION" --locked --force
fi
missing=()
command -v gcc >/dev/null || missing+=(gcc)
command -v valgrind >/dev/null || missing+=(valgrind)
command -v pkg-config >/dev/null || missing+=(pkg-config)
if [ ${#missing[@]} -gt 0 ]; then apt_install "${missing[@]}"; fi
cbindgen --version
valgrind --version

say "header is up to date"
fresh="$(mktemp)"
trap 'rm -f "$fresh"' EXIT
cbindgen --quiet --config crates/levy-ffi/cbindgen.toml --crate levy-ffi --output "$fresh" crates/levy-ffi
if ! diff -u include/levy.h "$fresh"; then
    echo "include/levy.h is stale: regenerate it with" >&2
    echo "  cbindgen --config crates/levy-ffi/cbindgen.toml --crate levy-ffi --output include/levy.h crates/levy-ffi" >&2
    exit 1
fi

say "Rust and C tests (plain)"
cargo test -p levy-ffi

say "C tests under AddressSanitizer"
LEVY_C_CHECK=asan cargo test -p levy-ffi --test c_tests -- --nocapture

say "C tests under valgrind memcheck"
LEVY_C_CHECK=valgrind cargo test -p levy-ffi --test c_tests -- --nocapture

say "examples/c/pos.c against an installed liblevy (pkg-config)"
cargo build -p levy-ffi
target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
version="$(sed -n 's/^#define LEVY_VERSION_MAJOR \([0-9]*\)/\1/p' include/levy.h).$(sed -n 's/^#define LEVY_VERSION_MINOR \([0-9]*\)/\1/p' include/levy.h).$(sed -n 's/^#define LEVY_VERSION_PATCH \([0-9]*\)/\1/p' include/levy.h)"
work="$(mktemp -d)"
trap 'rm -f "$fresh"; rm -rf "$work"' EXIT
prefix="$work/prefix"
# The install steps of crates/levy-ffi/README.md.
install -d "$prefix/lib/pkgconfig" "$prefix/include"
install -m 0755 "$target_dir/debug/liblevy.so" "$prefix/lib/"
install -m 0644 "$target_dir/debug/liblevy.a" "$prefix/lib/"
install -m 0644 include/levy.h "$prefix/include/"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" crates/levy-ffi/levy.pc.in >"$prefix/lib/pkgconfig/levy.pc"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
test "$(pkg-config --modversion levy)" = "$version"
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Werror -o "$work/pos" examples/c/pos.c $(pkg-config --cflags --libs levy) \
    -Wl,-rpath,"$prefix/lib"
"$work/pos" "$work/ledger.sqlite"
echo "levy-ffi: all checks passed"
