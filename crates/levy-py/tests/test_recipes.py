"""The recipes: Polars (map_batches), DuckDB (an Arrow UDF) and Spark (mapInArrow on
local[2], a million rows, equal to the single-process answers)."""

from __future__ import annotations

import datetime as dt
import os
import random
import shutil
import sys
from decimal import Decimal

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from conftest import need
from levy_tax import duckdb as levy_duckdb
from levy_tax import polars as levy_polars

DAY = dt.date(2026, 3, 2)


def test_polars_eager_and_lazy(zip5_table):
    df = pl.DataFrame(
        {
            "id": [1, 2, 3],
            "amount": [10_000, 2_000, 500],
            "postal_code": ["90210", "38103", "ABCDE"],
            "date": [DAY] * 3,
        }
    )
    eager = levy_polars.calculate(df, zip5_table)
    assert eager.columns[:4] == ["id", "amount", "postal_code", "date"]
    assert eager["tax"].to_list()[:2] == [1050, 195]  # 10.5% and 9.75% (the Dec 2025 ZIP5 file's rows for 90210 and 38103)
    assert eager["error"].to_list()[2].endswith("(MALFORMED_ADDRESS)")
    lazy = levy_polars.calculate(df.lazy().filter(pl.col("id") > 1), zip5_table)
    assert isinstance(lazy, pl.LazyFrame)
    assert "tax" in lazy.collect_schema()
    got = lazy.collect()
    assert got["id"].to_list() == [2, 3] and got["tax"].to_list() == [195, None]
    # Selecting the tax alone still computes it from the date and the ZIP.
    only = levy_polars.calculate(df.lazy(), zip5_table).select("tax").collect()
    assert only["tax"].to_list() == [1050, 195, None]


def test_duckdb_udf(zip5_table):
    con = duckdb.connect()
    levy_duckdb.register(con, zip5_table)
    # Dated in December 2025, the month of the ZIP5 files the table is built from (a later
    # day is past their horizon: PARTIAL, STALE_TABLE).
    con.execute(
        "CREATE TABLE sales AS SELECT * FROM (VALUES"
        " (1, 100.00, '90210', NULL, DATE '2025-12-15'),"
        " (2, 20.00, '38103', 'CLOTHING', DATE '2025-12-15'),"
        " (3, 5.00, '00000', NULL, DATE '2025-12-15'))"
        " AS t(id, amount, zip, category, day)"
    )
    rows = con.execute(
        "SELECT id, t.tax, t.amount_including_tax, t.effective_rate, t.coverage, t.error"
        " FROM (SELECT id, levy_tax(amount::DECIMAL(18,2), zip, category, day) AS t FROM sales)"
        " ORDER BY id"
    ).fetchall()
    assert rows[0][:2] == (1, Decimal("10.50"))
    assert rows[0][2] == Decimal("110.50") and rows[0][3] == Decimal("0.105")
    assert rows[0][4] == "FULL"
    assert rows[1][1] == Decimal("1.95")  # 9.75% of $20.00 (38103 in the Dec 2025 ZIP5 file)
    assert rows[2][1] is None and rows[2][5].endswith(")")
    # Cents, as BIGINT.
    levy_duckdb.register(con, zip5_table, name="levy_cents", amount_type="BIGINT")
    assert con.execute("SELECT levy_cents(10000, '90210', NULL, DATE '2026-03-02').tax").fetchone() == (1050,)
    # More rows than one DuckDB vector, so the UDF is called more than once.
    n = con.execute(
        "SELECT count(*) FILTER (WHERE t.error IS NULL), sum(t.tax) FROM ("
        " SELECT levy_tax(1.00, '90210', NULL, DATE '2026-03-02') AS t FROM range(5000))"
    ).fetchone()
    assert n == (5000, Decimal("550.00"))  # 10.5% of $1.00 is 10.5 cents: 11
    # A NULL day is an error for its row, with its code; a refund is the negated sale.
    got = con.execute(
        "SELECT t.tax, t.error_code FROM (SELECT k, levy_tax(x, '90210', NULL, d) AS t FROM"
        " (VALUES (100.00, NULL::DATE, 1), (-100.00, DATE '2026-03-02', 2)) AS v(x, d, k)) ORDER BY k"
    ).fetchall()
    assert got == [(None, "DATE_MISSING"), (Decimal("-10.50"), None)]


def million_sales(zip_rows, n=1_000_000, seed=11) -> pa.Table:
    rng = random.Random(seed)
    zips = pa.array([z for _, z in zip_rows])
    idx = pa.array([rng.randrange(len(zips)) for _ in range(n)])
    start = dt.date(2025, 6, 1)
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "amount": pa.array([rng.randrange(1, 5_000_000) for _ in range(n)], pa.decimal128(18, 2)).cast(pa.decimal128(18, 2)),
            "postal_code": zips.take(idx),
            "category": pa.array([rng.choice(["GENERAL_MERCHANDISE", "CLOTHING", "GROCERIES", "NOPE"]) for _ in range(n)]),
            "date": pa.array([start + dt.timedelta(days=rng.randrange(365)) for _ in range(n)], pa.date32()),
        }
    )


@pytest.fixture(scope="module")
def spark():
    need(shutil.which("java") is not None or bool(os.environ.get("JAVA_HOME")), "no Java for Spark")
    from pyspark.sql import SparkSession

    # The executors' Python workers run this interpreter, which has levy_tax and pyarrow
    # (a cluster installs the wheel on every node).
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("levy-tax-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "100000")
        .config("spark.driver.memory", "4g")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    yield session
    session.stop()


def test_spark_map_in_arrow_equals_one_process(spark, zip5_table, zip5_table_path, zip5_rows, tmp_path):
    from levy_tax import spark as levy_spark

    sales = million_sales(zip5_rows)
    # Integer cents arrive as decimals here: Spark's DECIMAL(18,2) is the usual column.
    path = tmp_path / "sales.parquet"
    import pyarrow.parquet as pq

    pq.write_table(sales, path, row_group_size=250_000)
    df = spark.read.parquet(str(path)).repartition(4)
    taxed = levy_spark.calculate(df, str(zip5_table_path), keep=["id"])
    got = taxed.toArrow().sort_by("id")
    want = zip5_table.calculate_batch(sales, keep=["id"])
    assert got.num_rows == want.num_rows == 1_000_000
    for name in want.column_names:
        w = want.column(name)
        if pa.types.is_dictionary(w.type):
            w = w.cast(w.type.value_type)
        g = got.column(name).cast(w.type)
        assert g.equals(w), name
    errors = pc.sum(pc.is_valid(want.column("error"))).as_py()
    assert 200_000 < errors < 300_000  # the NOPE category, a quarter of the rows
    # The long table through Spark, for a slice: the same entries.
    small = df.filter("id < 20000")
    long = levy_spark.jurisdictions(small, str(zip5_table_path), keep=["id"]).toArrow()
    _, want_j = zip5_table.calculate_batch(sales.slice(0, 20_000), jurisdictions=True, keep=["id"])
    fields = ["id", "jurisdiction_code", "rate", "taxable_base", "tax", "note"]
    rows = lambda t: sorted(tuple(r[f] for f in fields) for r in t.select(fields).to_pylist())
    assert len(long) == len(want_j) > 20_000
    assert rows(long) == rows(want_j)
