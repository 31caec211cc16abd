#!/usr/bin/env python3
"""How often the embedded default's combined rate agrees with a vendor's ZIP5 rate table.

A measurement, never a source: the default's local rates come from revenue department
publications (data/local/); this compares its answer for $100.00 of general merchandise at
every ZIP code of the given states, on one day, with the ZIP5 table's estimated combined
rate (../shared/data/zip5-rates-2025-12, December 2025), and with the state rate alone (what
a table without local rates answers).

    cargo build -p levy-cli
    python3 benches/zip5_agreement.py FL HI NC OH PA VA NV

Prints per state: ZIP codes, answers within half a cent of the ZIP5 rate, the same for the
state rate alone, and the coverage levy gave.
"""
import collections
import csv
import decimal
import json
import os
import subprocess
import sys
import tempfile

D = decimal.Decimal
here = os.path.dirname(os.path.abspath(__file__))
data = os.environ.get("LEVY_SHARED_DATA", os.path.join(here, "../../shared/data"))
levy = os.environ.get("LEVY_BIN", os.path.join(here, "../target/debug/levy"))
day = os.environ.get("LEVY_DAY", "2025-12-15")

rows = []
for st in sys.argv[1:]:
    with open(os.path.join(data, f"zip5-rates-2025-12/TAXRATES_ZIP5_{st}202512.csv")) as f:
        rows.extend(csv.DictReader(f))
with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    for r in rows:
        sale = {"postal_code": r["ZipCode"], "province": r["State"], "lines": ["100.00"], "date": day}
        f.write(json.dumps(sale) + "\n")
    path = f.name
out = subprocess.run([levy, "calc", "--jsonl", path], capture_output=True, text=True, check=True)
os.unlink(path)
stats = collections.defaultdict(collections.Counter)
for r, line in zip(rows, out.stdout.splitlines()):
    v = json.loads(line)
    s = stats[r["State"]]
    s["zips"] += 1
    if "error" in v:
        s["error"] += 1
        continue
    want = D(r["EstimatedCombinedRate"]) * 10000
    got = D(str(v["total_tax_amount"]))
    s["agree"] += abs(got - want) <= D("0.5")
    s["state_rate_alone_agrees"] += abs(D(r["StateRate"]) * 10000 - want) <= D("0.5")
    s["coverage " + v.get("coverage", "?")] += 1
for st in sys.argv[1:]:
    print(st, dict(stats[st]))
