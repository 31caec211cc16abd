#!/usr/bin/env bash
# Instructions and simulated cache misses per ZIP5 resolve + calculate, counted by
# cachegrind: deterministic, so two builds compare on a busy machine where times do not.
#
#   bash benches/count-instructions.sh TABLE
#
# Runs `examples/zip5_profile.rs` under `valgrind --tool=cachegrind` for 100,000 and for
# 300,000 sales and divides the difference by 200,000, so that the workload's setup (the
# same in both runs) drops out. The last-level cache is simulated at 4 MiB, about what a
# random walk finds fast on the 2-core machine of the README's figures.
set -euo pipefail
table=${1:?usage: count-instructions.sh TABLE}
cd "$(dirname "$0")/.."
cargo build --release --quiet -p levy-build --example zip5_profile
bin=target/release/examples/zip5_profile
run() {
    valgrind --tool=cachegrind --cache-sim=yes --LL=4194304,16,64 \
        --cachegrind-out-file=/dev/null "$bin" "$table" "$1" 2>&1 |
        awk '/I +refs/ {gsub(/,/, "", $4); i = $4}
             /D1 +misses/ {gsub(/,/, "", $4); d = $4}
             /LLd +misses/ {gsub(/,/, "", $4); l = $4}
             END {print i, d, l}'
}
read -r i1 d1 l1 < <(run 100000)
read -r i3 d3 l3 < <(run 300000)
awk -v i1="$i1" -v i3="$i3" -v d1="$d1" -v d3="$d3" -v l1="$l1" -v l3="$l3" 'BEGIN {
    printf "instructions per sale: %.0f\nL1 data misses per sale: %.2f\nlast-level (4 MiB) misses per sale: %.2f\n",
        (i3 - i1) / 200000, (d3 - d1) / 200000, (l3 - l1) / 200000
}'
