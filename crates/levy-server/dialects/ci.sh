#!/usr/bin/env bash
# The request shapes `levy serve` accepts besides its own, driven by the vendors' own SDKs
# unchanged but for the base URL, against a real `levy serve` on a fresh keys file and ledger:
# the Python ones (PyPI `taxjar` and `avalara`) by sdk_test.py beside this script, the call
# sequences of two commerce plugins (Kill Bill's AvaTax plugin, solidus_taxjar) by
# replay_test.py, then the npm ones (`taxjar` and `avatax`, pinned by npm/package.json and
# npm/package-lock.json) by npm/sdk_test.mjs under Node. Exit status: 0 when every check of
# every test passed.
#
#   ci.sh [LEVY_BINARY] [VENV] [ST_BINARY [MAX_EXAMPLES]]
#
# LEVY_BINARY defaults to target/debug/levy (build it first: cargo build -p levy-cli); VENV
# (default target/dialects-venv) is made when absent and given the pinned SDKs. The npm
# packages are installed (npm ci, from the lock) into the run's scratch directory, never into
# the repository; without node and npm the Node test is skipped, and under CI=true that is a
# failure. With ST_BINARY (schemathesis), the shapes' document (GET /openapi/dialects.json) is
# fuzzed too, every check, with a test and a live key (schemathesis.toml beside this script).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
levy="$(realpath "${1:-$root/target/debug/levy}")"
venv="$(realpath -m "${2:-$root/target/dialects-venv}")"
st="${3:+$(realpath "$3")}"
if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi
# The SDKs' versions the test was written against.
"$venv/bin/pip" install --quiet --disable-pip-version-check "taxjar==2.0.1" "avalara==26.10.0"

work="$(mktemp -d)"
server=""
cleanup() {
    if [[ -n "$server" ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
"$levy" keys new --account shop --keys keys.toml > keys.out
export LEVY_TEST_KEY="$(awk '/test key:/ {print $3}' keys.out)"
export LEVY_LIVE_KEY="$(awk '/live key:/ {print $3}' keys.out)"
# The Node test's own account: each test registers the test mode in Tennessee and records
# orders, and expects to find neither before.
"$levy" keys new --account shop-npm --keys keys.toml > keys-npm.out
npm_test_key="$(awk '/test key:/ {print $3}' keys-npm.out)"
npm_live_key="$(awk '/live key:/ {print $3}' keys-npm.out)"
# The plugins' replays' own account: they register its test mode in Tennessee and California.
"$levy" keys new --account shop-replay --keys keys.toml > keys-replay.out
replay_test_key="$(awk '/test key:/ {print $3}' keys-replay.out)"
port="$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$levy" serve --listen "127.0.0.1:$port" --keys keys.toml --ledger ledger.sqlite --rate-limit 0 \
    --log warn > server.log 2>&1 &
server=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done
export LEVY_URL="http://127.0.0.1:$port"
status=0
"$venv/bin/python" "$here/sdk_test.py" || status=$?
# Kill Bill's AvaTax plugin and solidus_taxjar, their call sequences replayed as they send
# them (replay_test.py says from which source).
echo "=== the call sequences of Kill Bill's AvaTax plugin and solidus_taxjar"
LEVY_TEST_KEY="$replay_test_key" "$venv/bin/python" "$here/replay_test.py" || status=1
# The npm packages, with Node: the lock's exact versions, installed into the scratch directory
# beside a copy of the test (Node resolves its imports from the script's own directory).
if command -v node > /dev/null && command -v npm > /dev/null; then
    echo "=== the npm packages avatax and taxjar, node $(node --version)"
    mkdir "$work/npm"
    cp "$here/npm/package.json" "$here/npm/package-lock.json" "$here/npm/sdk_test.mjs" "$work/npm/"
    if npm ci --prefix "$work/npm" --no-audit --no-fund --loglevel=error; then
        LEVY_TEST_KEY="$npm_test_key" LEVY_LIVE_KEY="$npm_live_key" node "$work/npm/sdk_test.mjs" || status=1
    else
        echo "FAILED: npm ci of $here/npm/package-lock.json"
        status=1
    fi
elif [[ "${CI:-}" == "true" ]]; then
    echo "FAILED: node and npm are needed for npm/sdk_test.mjs (CI installs Debian's nodejs and npm: .ci/run)"
    status=1
else
    echo "skipped: npm/sdk_test.mjs (node or npm not found)"
fi
if [[ -n "$st" ]]; then
    for key in "$LEVY_TEST_KEY" "$LEVY_LIVE_KEY"; do
        echo "=== schemathesis: the TaxJar and AvaTax shapes, ${key:0:8} key"
        "$st" --config-file "$here/schemathesis.toml" run "$LEVY_URL/openapi/dialects.json" \
            -H "Authorization: Bearer $key" --max-examples "${4:-25}" --seed ${SEED:-20261202} \
            --no-color || status=1
    done
fi
if [[ $status -ne 0 ]]; then
    echo "--- server log (last 50 lines)"
    tail -50 server.log
fi
exit $status
