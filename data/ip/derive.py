#!/usr/bin/env python3
"""Derives data/ip/ipv4.txt and data/ip/ipv6.txt from the npm package
@ip-location-db/geo-whois-asn-country (CSV "start,end,country" with numeric addresses).

Usage: npm pack @ip-location-db/geo-whois-asn-country && tar xzf *.tgz
       python3 data/ip/derive.py package/ data/ip/

The package version (2.3.YYYYMMDDHH) is the time of the data snapshot; it is written into
each file's header as `# snapshot: YYYY-MM-DDTHH:00:00Z`, which levy-data uses as the build
time of the embedded table (so that the build is deterministic).

Steps (deterministic):
  1. read the -num.csv files; IPv6 ranges are rounded inward to /64 boundaries (a /64 is one
     subnet; ranges that hold no whole /64 are dropped);
  2. sort by start; where a range overlaps the one before it (the package has a few such
     rows), the earlier claim wins and the later range is trimmed or dropped;
  3. merge adjacent ranges of the same country;
  4. write one line per range: COUNTRY,GAP,SIZE with GAP (addresses, or /64 blocks for IPv6,
     between the previous range's end and this start) and SIZE (the range's length in the
     same unit) in lower-case hex, GAP empty when zero.
"""
import sys, os

def derive(path, unit):
    rows = []
    for line in open(path):
        a, b, c = line.strip().split(",")
        a, b = int(a), int(b)
        if unit > 1:
            a = -(-a // unit)
            b = (b + 1) // unit - 1
            if a > b:
                continue
        rows.append((a, b, c.upper()))
    rows.sort()
    out, dropped = [], 0
    for a, b, c in rows:
        if out and a <= out[-1][1]:
            a = out[-1][1] + 1
            if a > b:
                dropped += 1
                continue
        if out and out[-1][2] == c and out[-1][1] + 1 == a:
            out[-1][1] = b
        else:
            out.append([a, b, c])
    return out, dropped

def write(ranges, path, header):
    prev_end = -1
    with open(path, "w") as f:
        f.write(header)
        for a, b, c in ranges:
            gap = a - prev_end - 1
            f.write(f"{c},{'' if gap == 0 else format(gap, 'x')},{b - a + 1:x}\n")
            prev_end = b

src, dst = sys.argv[1], sys.argv[2]
import json
version = json.load(open(os.path.join(src, "package.json")))["version"]
stamp = version.split(".")[-1]
snapshot = f"{stamp[0:4]}-{stamp[4:6]}-{stamp[6:8]}T{stamp[8:10]}:00:00Z"
v4, d4 = derive(os.path.join(src, "geo-whois-asn-country-ipv4-num.csv"), 1)
v6, d6 = derive(os.path.join(src, "geo-whois-asn-country-ipv6-num.csv"), 1 << 64)
note = ("# Derived from @ip-location-db/geo-whois-asn-country " + version
        + " (CC BY 4.0, NRO); see data/README.md.\n# snapshot: " + snapshot + "\n")
write(v4, os.path.join(dst, "ipv4.txt"), note + "# unit: 1 address; COUNTRY,GAP,SIZE in hex\n")
write(v6, os.path.join(dst, "ipv6.txt"), note + "# unit: one /64 block; COUNTRY,GAP,SIZE in hex\n")
print(f"ipv4 {len(v4)} ranges ({d4} overlapping dropped); ipv6 {len(v6)} ranges ({d6} dropped)")
