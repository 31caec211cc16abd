#!/usr/bin/env bash
# Issue 12's load-test target over a series of pairs, since one pair moves by ±0.05 with
# the host's speed: runs `pair.sh` PAIRS times (a fresh server and ledger each), prints each
# pair's lines, then the series: each ratio of calculations to `ping`, their median, the
# pooled ratio (every pair's calculation rate summed over every pair's `ping` rate), how
# many pairs reach 0.5, and how many calculation runs kept p99 under 5 ms.
#
#   bash crates/levy-server/loadtest/series.sh target/release/levy [PAIRS] [CONNS] [SECONDS]
#
# Needs wrk, as pair.sh does. Run from the repository root.
set -euo pipefail
levy=${1:?usage: series.sh LEVY [PAIRS] [CONNS] [SECONDS]}
pairs=${2:-9}
conns=${3:-64}
seconds=${4:-10}
here=$(dirname "$0")
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for i in $(seq "$pairs"); do
    echo "== pair $i of $pairs"
    bash "$here/pair.sh" "$levy" "$conns" "$seconds" | tee -a "$out"
done
# pair.sh prints "calculations RATE/s  p99 P99 ..." and "ping RATE/s  p99 P99 ..."; wrk
# writes p99 in us, ms or s.
awk '
    function ms(t) {
        if (t ~ /us$/) return substr(t, 1, length(t) - 2) / 1000
        if (t ~ /ms$/) return substr(t, 1, length(t) - 2) + 0
        if (t ~ /s$/) return substr(t, 1, length(t) - 1) * 1000
        return t + 0
    }
    $1 == "calculations" { c[++n] = $2 + 0; p99[n] = ms($4) }
    $1 == "ping" { g[n] = $2 + 0 }
    END {
        if (n == 0) { print "no pairs ran"; exit 1 }
        for (i = 1; i <= n; i++) {
            r[i] = c[i] / g[i]; sc += c[i]; sg += g[i]
            if (r[i] >= 0.5) ok++
            if (p99[i] < 5) fast++
            list = list sprintf("%s%.3f", i > 1 ? " " : "", r[i])
        }
        # Insertion sort for the median.
        for (i = 2; i <= n; i++) { v = r[i]; for (j = i - 1; j >= 1 && r[j] > v; j--) r[j + 1] = r[j]; r[j + 1] = v }
        median = n % 2 ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2
        printf "ratios %s\n", list
        printf "median %.3f  pooled %.3f  at 0.5 or more: %d of %d  calculation p99 under 5 ms: %d of %d\n",
            median, sc / sg, ok, n, fast, n
    }' "$out"
