#!/usr/bin/env bash
# The TaxJar and AvaTax request shapes against levy's own calculation, the same sale each
# ($100.00 of general merchandise to Nashville 37201, no shipping): one wrk run each (-t2,
# CONNS connections, SECONDS), each on a `levy serve` of its own over a new ledger. Prints
# each run's rate and p99 and its ratio to levy's own POST /tax/calculations.
#
#   bash crates/levy-server/loadtest/dialects.sh target/release/levy [CONNS] [SECONDS]
#
# A TaxJar order always has a shipping amount, which levy calculates as a line of its own
# (a $0 SHIPPING line here): `own+shipping` is levy's own calculation of those two lines,
# the same work. Needs wrk; run from the repository root.
set -euo pipefail
levy=$(realpath "${1:?usage: dialects.sh LEVY [CONNS] [SECONDS]}")
conns=${2:-64}
seconds=${3:-10}
port=${LEVY_PORT:-8787}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; rm -rf "$work"' EXIT

key=$("$levy" keys new --account loadtest --keys "$work/keys.toml" | awk '/test key:/ {print $3}')
# Each run on a server of its own over a new ledger: a ledger that has stored a run's
# hundreds of thousands of calculations is slower to write, which would favour the runs
# made first. No limits: a run stores more unexpired calculations than an account may hold
# by default (a million), and would end answered 429.
stop() {
    if [ -n "$server" ]; then kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true; fi
    server=
}
serve() {
    stop
    rm -f "$work"/ledger.sqlite*
    "$levy" serve --keys "$work/keys.toml" --ledger "$work/ledger.sqlite" --log warn \
        --rate-limit 0 --max-concurrent-requests 0 --max-stored-calculations 0 \
        --max-stored-calculation-bytes 0 --listen "127.0.0.1:$port" >"$work/server.log" 2>&1 &
    server=$!
    for _ in $(seq 50); do
        curl -fs -o /dev/null -H "Authorization: Bearer $key" "http://127.0.0.1:$port/tax/ping" && break
        sleep 0.1
    done
}

address='"address_line_1":"","address_city":"NASHVILLE","address_province":"TN","address_postal_code":"37201","address_country":"US","address_type":"shipping"'
echo "{\"customer\":{\"address\":{$address}},\"order_details\":{\"customer_currency_code\":\"USD\",\"line_items\":[{\"amount\":10000,\"quantity\":1,\"product_category\":\"GENERAL_MERCHANDISE\"}]}}" >"$work/own.json"
echo "{\"customer\":{\"address\":{$address}},\"order_details\":{\"customer_currency_code\":\"USD\",\"line_items\":[{\"amount\":10000,\"quantity\":1,\"product_category\":\"GENERAL_MERCHANDISE\"},{\"amount\":0,\"quantity\":1,\"product_category\":\"SHIPPING\"}]}}" >"$work/own2.json"
echo '{"to_country":"US","to_zip":"37201","to_state":"TN","to_city":"NASHVILLE","shipping":0,"line_items":[{"id":"1","quantity":1,"unit_price":100}]}' >"$work/taxjar.json"
echo '{"type":"SalesOrder","date":"2026-12-01","customerCode":"C","addresses":{"singleLocation":{"city":"NASHVILLE","region":"TN","country":"US","postalCode":"37201"}},"lines":[{"number":"1","quantity":1,"amount":100}]}' >"$work/avatax.json"
basic=$(printf '1:%s' "$key" | base64 -w0)

run() { # NAME PATH BODY AUTH
    local out
    serve
    out=$(LEVY_BODY="$3" LEVY_AUTH="$4" wrk -t2 -c"$conns" -d"${seconds}s" --latency \
        -s "$here/body.lua" "http://127.0.0.1:$port$2")
    if echo "$out" | grep -qE 'Non-2xx|Socket errors'; then
        echo "$out" | grep -E 'Non-2xx|Socket errors' >&2
    fi
    echo "$out" | awk -v name="$1" '/Requests\/sec/ {r = $2} $1 == "99%" {p = $2} END {printf "%s %.0f %s\n", name, r, p}'
}
{
    run own /tax/calculations "$work/own.json" "Bearer $key"
    run own+shipping /tax/calculations "$work/own2.json" "Bearer $key"
    run taxjar /v2/taxes "$work/taxjar.json" "Bearer $key"
    run avatax /api/v2/transactions/create "$work/avatax.json" "Basic $basic"
    # The runs are a pipeline's subshell: its last server is stopped here, not by the trap.
    stop
} | awk -v c="$conns" '
    NR == 1 {own = $2}
    NR == 2 {own2 = $2}
    {printf "%-13s %8.0f/s  p99 %-8s  %.3f of own", $1, $2, $3, $2 / own}
    $1 == "taxjar" {printf ", %.3f of own+shipping", $2 / own2}
    {print ""}
    END {printf "connections %d\n", c}'
