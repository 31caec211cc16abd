#!/usr/bin/env python3
"""Derives data/local/ from the public government files in shared/data (see data/README.md).

    python3 data/local/derive.py ../shared/data data/local

Writes, in formats `levy build` reads:
  ca-cdtfa-1-1-26.csv       the CDTFA city and county list effective 2026-01-01, each rate
                            written as the exact decimal CDTFA means (the published file
                            writes binary-float text such as 7.7499999999999999E-2, which
                            levy rounds to five places: 0.0775); notes kept only on the
                            county header rows that have no rate
  GAR2026Q2FEB19-local.csv, MNR2026Q2FEB18-local.csv, WIR2026Q2FEB18-local.csv
                            the rows of the SST rate files in force on or after 2025-01-01
                            that the default uses: every county row (jurisdiction type 00),
                            and the district and city rows a local rates file of us/ places
                            (PLACED below: Minnesota's special districts 80004, 80008 and
                            80009 and cities 43000, 58000, 17000 and 54880, us/MN.toml; Wisconsin's city 53000, Milwaukee, us/WI.toml)
  zip-county.csv            the census ZCTA-to-county rows of the states whose county rates
                            the default holds (STATES below)

The local rates files of us/ (<ST>.toml) are written by hand from each state's publication
and are not derived here.
"""
import csv
import decimal
import pathlib
import sys

src = pathlib.Path(sys.argv[1])
out = pathlib.Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)

# CDTFA: two title lines, then Location,Rate,County,Type,Notes.
rows = list(csv.reader(open(src / "ca-cdtfa-2026-01/SalesTaxRates1-1-26.csv", encoding="utf-8")))
with open(out / "ca-cdtfa-1-1-26.csv", "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["Derived from CDTFA, California City & County Sales & Use Tax Rates, effective 2026-01-01"])
    w.writerow(["Rates as exact decimals; see data/README.md"])
    w.writerow(["Location", "Rate", "County", "Type", "Notes"])
    for r in rows[3:]:
        if len(r) < 4 or not r[0]:
            continue
        if len(r) >= 4 and r[2] == "County" and not r[1].replace(".", "").replace("E-", "").isdigit():
            # A county header row: Location,County,Type,Notes (no rate).
            w.writerow([r[0], "", r[1], r[2], r[3] if len(r) > 3 else ""])
            continue
        rate = decimal.Decimal(r[1]).quantize(decimal.Decimal("0.00001"))
        w.writerow([r[0], format(rate.normalize(), "f"), r[2], r[3], ""])

# SST rate files: county rows in force on or after 2025-01-01, and the district and city
# rows that data/local/us places (the rate files do not say where those lie).
PLACED = {
    "GAR2026Q2FEB19.csv": set(),
    "MNR2026Q2FEB18.csv": {
        ("63", "80004"), ("63", "80008"), ("63", "80009"),
        ("01", "43000"), ("01", "58000"), ("01", "17000"), ("01", "54880"),
    },
    "WIR2026Q2FEB18.csv": {("01", "53000")},
}
for name, placed in PLACED.items():
    kept = [
        r for r in csv.reader(open(src / "sst" / name))
        if len(r) >= 9 and (r[1] == "00" or (r[1], r[2]) in placed) and r[8] >= "20250101"
    ]
    with open(out / name.replace(".csv", "-local.csv"), "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(kept)

# Census ZCTA-to-county rows of the states whose county rates the default holds: the SST
# states and those of us/*.toml.
STATES = ("GA", "MN", "WI", "FL", "HI", "NC", "OH", "PA", "VA", "NV", "TN", "NY")
with open(src / "census-zcta-county-2020/zip_county.csv") as f, open(out / "zip-county.csv", "w", newline="") as g:
    r = csv.reader(f)
    w = csv.writer(g, lineterminator="\n")
    w.writerow(next(r))
    for row in r:
        if row[1] in STATES:
            w.writerow(row)
