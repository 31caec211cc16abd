#!/usr/bin/env bash
# The request shapes `levy serve` accepts besides its own, driven by the vendors' own Python
# SDKs (PyPI `taxjar` and `avalara`), unchanged but for the base URL: sdk_test.py beside this
# script, against a real `levy serve` on a fresh keys file and ledger. Exit status: the
# test's (0 = every check passed).
#
#   ci.sh [LEVY_BINARY] [VENV] [ST_BINARY [MAX_EXAMPLES]]
#
# LEVY_BINARY defaults to target/debug/levy (build it first: cargo build -p levy-cli); VENV
# (default target/dialects-venv) is made when absent and given the pinned SDKs. With
# ST_BINARY (schemathesis), the shapes' document (GET /openapi/dialects.json) is fuzzed
# too, every check, with a test and a live key (schemathesis.toml beside this script).
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
