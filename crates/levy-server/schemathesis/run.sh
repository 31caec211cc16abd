#!/usr/bin/env bash
# Schema fuzzing of `levy serve` with schemathesis, every check, against the closed document
# of each API version (GET /openapi/{version}.json), once with a test key and once with a
# live key. Exit status: schemathesis's (0 = no failure).
#
#   run.sh LEVY_BINARY ST_BINARY [MAX_EXAMPLES]
#
# VERSIONS (space-separated) limits the versions; SEED changes the generation seed.
#
# The server runs on a fresh keys file and ledger in a temporary folder and is stopped
# at the end. Configuration (and why each operation expects what it does):
# schemathesis.toml beside this script; hooks.py gives each generated request with a
# well-formed Idempotency-Key a key of its own, as the interface's rule asks of a client.
set -euo pipefail
levy="$(realpath "$1")"
st="$(realpath "$2")"
examples="${3:-25}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
server=""
cleanup() {
    if [[ -n "$server" ]]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

"$levy" keys new --account shop --keys keys.toml > keys.out
test_key="$(awk '/test key:/ {print $3}' keys.out)"
live_key="$(awk '/live key:/ {print $3}' keys.out)"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
"$levy" serve --listen "127.0.0.1:$port" --keys keys.toml --ledger ledger.sqlite \
    --rate-limit 0 --log warn > server.log 2>&1 &
server=$!
for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
done

status=0
for version in ${VERSIONS:-2024-09-01 2025-05-12 2026-01-01 2026-03-01}; do
    for key in "$test_key" "$live_key"; do
        echo "=== API version $version, ${key:0:8} key"
        SCHEMATHESIS_HOOKS="$here/hooks.py" "$st" --config-file "$here/schemathesis.toml" run \
            "http://127.0.0.1:$port/openapi/$version.json" \
            -H "Authorization: Bearer $key" -H "X-API-Version: $version" \
            --max-examples "$examples" --seed ${SEED:-20261123} --no-color \
            || status=1
    done
done
if [[ $status -ne 0 ]]; then
    echo "--- server log (last 50 lines)"
    tail -50 server.log
fi
exit $status
