#!/usr/bin/env bash
# One pair of the README's load test: `POST /tax/calculations`, then `GET /tax/ping`, each
# for SECONDS with CONNS connections (wrk -t2), against a `levy serve` started here on a
# fresh ledger and keys file, and stopped after. Prints each run's rate and p99, their
# ratio, the server's CPU per request (from /proc/PID/stat) and the machine's idle share
# during each run (from /proc/stat).
#
#   bash crates/levy-server/loadtest/pair.sh target/release/levy [CONNS] [SECONDS]
#
# Needs wrk. Run from the repository root (calc.lua reads the body from there). The
# server listens on 127.0.0.1:${LEVY_PORT:-8787}.
set -euo pipefail
levy=${1:?usage: pair.sh LEVY [CONNS] [SECONDS]}
conns=${2:-64}
seconds=${3:-10}
port=${LEVY_PORT:-8787}
levy=$(realpath "$levy")
work=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null; rm -rf "$work"' EXIT

key=$("$levy" keys new --account loadtest --keys "$work/keys.toml" |
    awk '/test key:/ {print $3}')
export LEVY_KEY=$key
"$levy" serve --keys "$work/keys.toml" --ledger "$work/ledger.sqlite" --log warn \
    --rate-limit 0 --max-concurrent-requests 0 --listen "127.0.0.1:$port" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 50); do
    curl -fs -o /dev/null -H "Authorization: Bearer $key" "http://127.0.0.1:$port/tax/ping" && break
    sleep 0.1
done

ticks=$(getconf CLK_TCK)
server_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
# Idle and total jiffies of the machine.
machine() { awk '/^cpu / {print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9}' /proc/stat; }

# run NAME WRK-ARGS...: one wrk run, its figures as "NAME rate p99 requests cpu-us idle%".
run() {
    local name=$1
    shift
    local m0 s0 out s1 m1
    m0=$(machine)
    s0=$(server_ticks)
    out=$(wrk -t2 -c"$conns" -d"${seconds}s" --latency "$@")
    s1=$(server_ticks)
    m1=$(machine)
    if echo "$out" | grep -qE 'Non-2xx|Socket errors'; then
        echo "$out" | grep -E 'Non-2xx|Socket errors' >&2
    fi
    echo "$out" | awk -v name="$name" -v s0="$s0" -v s1="$s1" -v t="$ticks" \
        -v m="$m0 $m1" '
        /requests in/ {n = $1}
        /Requests\/sec/ {r = $2}
        $1 == "99%" {p = $2}
        END {
            split(m, j, " ")
            printf "%s %.0f %s %d %.1f %.1f\n", name, r, p, n, (s1 - s0) / t / n * 1e6,
                100 * (j[3] - j[1]) / (j[4] - j[2])
        }'
}

calc=$(run calculations -s crates/levy-server/loadtest/calc.lua \
    "http://127.0.0.1:$port/tax/calculations")
ping=$(run ping -H "Authorization: Bearer $key" "http://127.0.0.1:$port/tax/ping")
printf '%s\n%s\n' "$calc" "$ping" | awk -v c="$conns" '
    {rate[NR] = $2; line[NR] = sprintf("%-12s %8.0f/s  p99 %-8s  server CPU %5.1f us a request  machine idle %4.1f%%", $1, $2, $3, $5, $6)}
    END {
        print line[1]; print line[2]
        printf "connections %d  ratio %.3f\n", c, rate[1] / rate[2]
    }'
