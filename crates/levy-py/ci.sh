#!/usr/bin/env bash
# Checks levy's Python package (levy-tax, import levy_tax) end to end:
#   1. the crate is formatted and clippy-clean (it builds apart from the workspace);
#   2. maturin builds the abi3 wheel from the source tree (release, without whole-program
#      optimization, to keep CI within minutes; the wheel that ships keeps it);
#   3. the wheel and the test requirements go into a fresh venv, and pytest runs the suite:
#      levy calc --jsonl against 10,000 random sales on the shared ZIP5 table, pyarrow,
#      Polars, DuckDB and pandas inputs, the DuckDB and Polars recipes, and the Spark recipe
#      on local[2] over a million rows.
# Installs what it needs when missing: Java for Spark (Debian's openjdk-17-jre-headless).
# Needs ../shared/data (the shared ZIP5 files); with CI=true a missing one fails the run.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
export CARGO_TERM_COLOR=never
# The release profile without whole-program optimization, for clippy and the wheel alike, so
# that they share their build scripts (levy-data's compiles the embedded table) and
# proc-macros: a cold run takes minutes, not ten.
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 CARGO_PROFILE_RELEASE_DEBUG=0
features="pyo3/extension-module"
start=$(date +%s)
say() { printf '\n== levy-py: %s (%ss)\n' "$*" "$(( $(date +%s) - start ))"; }

apt_install() {
    local sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

say "tools"
python3 -c 'import sys; assert sys.version_info >= (3, 11), "levy-tax needs Python 3.11 or later"'
if ! command -v java >/dev/null; then apt_install openjdk-17-jre-headless; fi
python3 --version
java -version 2>&1 | head -1

venv="$CARGO_TARGET_DIR/levy-py-ci-venv"
rm -rf "$venv"
python3 -m venv "$venv"
py="$venv/bin/python"
"$py" -m pip install --quiet --disable-pip-version-check "maturin>=1.7,<2"

say "format and clippy (the crate has its own lock file: --locked)"
cd "$here"
if ! cargo metadata --locked --format-version 1 >/dev/null 2>&1; then
    echo "crates/levy-py/Cargo.lock is stale (levy-core, levy-build or levy-data changed their" >&2
    echo "dependencies): run  (cd crates/levy-py && cargo update --workspace)  and commit it" >&2
    exit 1
fi
cargo fmt -- --check
PYO3_PYTHON="$py" cargo clippy --release --locked --features "$features" -- -D warnings

say "wheel (maturin, abi3)"
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
"$venv/bin/maturin" build --release --locked --interpreter "$py" --out "$wheels"
ls -l "$wheels"

say "fresh venv: the wheel and the test requirements"
"$py" -m pip install --quiet --disable-pip-version-check "$wheels"/levy_tax-*.whl -r "$here/tests/requirements.txt"
"$py" -c 'import levy_tax; print("levy_tax", levy_tax.__version__, levy_tax.Table.default().hash)'

say "type stubs match the module (mypy stubtest)"
(cd "$here" && "$py" -m mypy.stubtest levy_tax._levy --mypy-config-file mypy.ini)

say "the levy binary the tests compare with"
levy_bin="${LEVY_BIN:-$CARGO_TARGET_DIR/debug/levy}"
if [ -z "${LEVY_BIN:-}" ]; then
    # .ci/run has built it already (then this is a no-op); on its own, this builds it.
    (cd "$root" && cargo build -p levy-cli --locked)
fi
calc_help="$("$levy_bin" calc --help)"
if ! grep -q -- --jsonl <<<"$calc_help"; then
    echo "$levy_bin: levy calc has no --jsonl, which the comparison of 10,000 sales needs" >&2
    exit 1
fi

say "pytest"
cd "$here"
LEVY_BIN="$levy_bin" "$py" -m pytest tests -p no:cacheprovider -ra

say "done"
