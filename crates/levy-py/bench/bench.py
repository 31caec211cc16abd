"""Rows per second for N sales from Python: levy_tax's calculate_batch beside what a data
team would write instead, in the same run on the same sales.

* levy: ``Table.calculate_batch`` on a table built from the ZIP5 files (exact decimals,
  coverage, errors per row), and again with the long table of jurisdictions;
* pandas: a merge of the ZIP5 rate file on the ZIP code, and amount times the combined
  rate (float64, rounded to cents);
* DuckDB: a join of the sales with the ZIP5 rate file on the ZIP code, amount times rate as
  DECIMAL, rounded to cents, fetched as Arrow.

The baselines answer with one combined rate per ZIP: no jurisdictions, no dates, no product
rules, no coverage, no per-row errors. Each figure is the median of ``--rounds`` rounds;
CPU time is the process's (all threads). Usage::

    python bench/bench.py [--rows 10000000] [--rounds 3] [--zip5 DIR] [--table FILE] [--json]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa

import levy_tax as levy

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_ZIP5 = ROOT.parent / "shared" / "data" / "zip5-rates-2025-12"


def read_rates(zip5: Path) -> pa.Table:
    zips, rates = [], []
    for f in sorted(zip5.glob("*.csv")):
        with f.open(newline="") as fh:
            for r in csv.DictReader(fh):
                zips.append(r["ZipCode"].zfill(5))
                rates.append(Decimal(r["EstimatedCombinedRate"]))
    return pa.table({"zip": zips, "rate": pa.array(rates, pa.decimal128(9, 6))})


def make_sales(rates: pa.Table, n: int, seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    zips = rates.column("zip").combine_chunks()
    idx = pa.array(rng.integers(0, len(zips), n))
    cents = rng.integers(1, 50_000_00, n)
    start = (dt.date(2026, 1, 1) - dt.date(1970, 1, 1)).days
    days = rng.integers(start, start + 365, n).astype(np.int32)
    return pa.table(
        {
            "amount_cents": pa.array(cents, pa.int64()),
            "postal_code": zips.take(idx),
            "date": pa.array(days, pa.int32()).cast(pa.date32()),
        }
    )


def cents_as_dollars(cents: np.ndarray) -> pa.Array:
    """Integer cents as decimal128(18, 2) dollars, exactly: the decimal's 128-bit integer
    is the cents (non-negative here, so its high word is zero)."""
    words = np.zeros((len(cents), 2), dtype=np.int64)
    words[:, 0] = cents
    return pa.Array.from_buffers(pa.decimal128(18, 2), len(cents), [None, pa.py_buffer(words.tobytes())])


def timed(fn, rounds: int):
    walls, cpus, out = [], [], None
    for _ in range(rounds):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--zip5", type=Path, default=DEFAULT_ZIP5)
    ap.add_argument("--table", type=Path, help="a table built from --zip5 (built when absent)")
    ap.add_argument("--threads", type=int, default=None, help="levy's threads (one per core)")
    ap.add_argument("--skip", action="append", default=[], help="pandas, duckdb or jurisdictions")
    ap.add_argument("--json", action="store_true", help="one JSON object per measure")
    args = ap.parse_args()

    if not args.zip5.is_dir():
        print(f"no ZIP5 files at {args.zip5} (--zip5 DIR)", file=sys.stderr)
        return 2
    tmp = tempfile.TemporaryDirectory()
    table_path = args.table
    if table_path is None or not table_path.exists():
        table_path = table_path or Path(tmp.name) / "zip5.levy"
        print(f"building {table_path} from {args.zip5} ...", file=sys.stderr)
        levy.build(table_path, zip5=args.zip5)
    table = levy.Table.open(table_path)

    rates = read_rates(args.zip5)
    base = make_sales(rates, args.rows, args.seed)
    # levy and DuckDB take dollars as exact decimals; pandas users have floats.
    dollars = cents_as_dollars(base.column("amount_cents").to_numpy())
    sales = pa.table({"amount": dollars, "postal_code": base["postal_code"], "date": base["date"]})
    n = sales.num_rows
    results = []

    def report(name, wall, cpu, note=""):
        row = {
            "name": name,
            "rows": n,
            "seconds": round(wall, 3),
            "rows_per_second": round(n / wall),
            "cpu_seconds": round(cpu, 3),
            "rows_per_cpu_second": round(n / cpu) if cpu else None,
            "note": note,
        }
        results.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(
                f"{name:<34} {wall:7.3f} s  {n / wall / 1e6:6.2f} M rows/s"
                f"  (cpu {cpu:6.3f} s, {n / cpu / 1e6:5.2f} M rows per cpu-second)  {note}",
                flush=True,
            )

    cores = os.cpu_count()
    if not args.json:
        print(f"{n:,} sales, {len(rates):,} ZIP codes, {cores} cores, table {table.hash[:12]}", flush=True)

    # warm: the table's pages and its per-ZIP answers, as a long-running process has them
    table.calculate_batch(sales.slice(0, 200_000), threads=args.threads)

    wall, cpu, out = timed(lambda: table.calculate_batch(sales, threads=args.threads), args.rounds)
    errors = n - out.column("error").null_count
    report("levy calculate_batch", wall, cpu, f"{n - errors:,} answered, {errors:,} errors")
    levy_out = out

    if "jurisdictions" not in args.skip:
        wall, cpu, (_, jur) = timed(
            lambda: table.calculate_batch(sales, jurisdictions=True, threads=args.threads), args.rounds
        )
        report("levy + jurisdictions (long table)", wall, cpu, f"{jur.num_rows:,} jurisdiction rows")

    if "duckdb" not in args.skip:
        import duckdb

        con = duckdb.connect()
        con.register("sales", sales)
        con.register("rates", rates)
        sql = (
            "SELECT s.amount, s.postal_code, r.rate,"
            " round(s.amount * r.rate, 2) AS tax FROM sales s LEFT JOIN rates r ON s.postal_code = r.zip"
        )
        wall, cpu, duck = timed(lambda: con.sql(sql).to_arrow_table(), args.rounds)
        report("DuckDB join + multiply", wall, cpu, f"{duckdb.__version__}, {con.execute('SELECT current_setting(' + repr('threads') + ')').fetchone()[0]} threads")

    if "pandas" not in args.skip:
        import pandas as pd

        pdf = pd.DataFrame(
            {
                "amount": base.column("amount_cents").to_numpy() / 100.0,
                "postal_code": base.column("postal_code").to_numpy(zero_copy_only=False),
            }
        )
        rdf = pd.DataFrame(
            {
                "zip": rates.column("zip").to_numpy(zero_copy_only=False),
                "rate": rates.column("rate").cast(pa.float64()).to_numpy(),
            }
        )

        def pandas_way():
            m = pdf.merge(rdf, left_on="postal_code", right_on="zip", how="left")
            m["tax"] = (m["amount"] * m["rate"]).round(2)
            return m

        wall, cpu, pm = timed(pandas_way, args.rounds)
        report("pandas merge + multiply", wall, cpu, f"pandas {pd.__version__}, float64")

    if not args.json:
        lt = levy_out.column("tax")
        print(f"levy: tax {lt.type}, every row answered or an error; baselines: one combined rate", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
