"""calculate_batch: every input type, row for row out, bad rows as errors in their rows,
exact decimals, the long table of jurisdictions, threads, and schema errors."""

from __future__ import annotations

import datetime as dt
import threading
import time
from decimal import Decimal

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import levy_tax as levy

DAY = dt.date(2026, 3, 2)

SALES = {
    "sale_id": [1, 2, 3, 4, 5, 6, 7],
    "amount": [10_000, 1_999, 10_000, 10_000, -500, 10_000, 0],
    "postal_code": ["38103", "90210", "00000", "38103", "38103", "38103", "38103"],
    "province": [None, "CA", None, "GA", None, None, None],
    "category": ["GENERAL_MERCHANDISE", "CLOTHING", None, None, None, "NOT_A_CODE", None],
    "date": [DAY] * 7,
}
GOOD = [0, 1, 4, 6]


def check_sales(out: pa.Table, money=pa.int64()):
    assert out.num_rows == 7
    assert out.column_names[:2] == ["sale_id", "tax"]
    assert out.schema.field("tax").type == money
    rows = out.to_pylist()
    assert [r["sale_id"] for r in rows] == SALES["sale_id"]
    for i in GOOD:
        assert rows[i]["error"] is None, rows[i]
    tn = rows[0]
    scale = Decimal(1) if money == pa.int64() else Decimal("0.01")
    assert tn["tax"] == 700 * scale
    assert tn["amount_including_tax"] == 10_700 * scale
    assert tn["effective_rate"] == Decimal("0.07")
    assert tn["coverage"] == "STATE_ONLY" and tn["precision"] == "POSTAL"
    assert tn["sourcing"] == "DESTINATION" and tn["rounding"] == "LINE"
    assert rows[6]["tax"] == 0 and rows[6]["effective_rate"] == 0
    # -$5.00 in Memphis is a refund: the negation of +$5.00's 7% ($0.35).
    assert rows[4]["tax"] == -35 * scale
    assert rows[4]["amount_including_tax"] == -535 * scale
    errors = {r["sale_id"]: r["error"] for r in rows if r["error"]}
    assert set(errors) == {3, 4, 6}
    assert "(MALFORMED_ADDRESS)" in errors[3] or "(UNSUPPORTED_LOCATION)" in errors[3]
    assert errors[4] == "postal code 38103 is in TN, not in GA (ZIP_STATE_MISMATCH)"
    assert 'unknown product category "NOT_A_CODE"' in errors[6]
    codes = {r["sale_id"]: r["error_code"] for r in rows if r["error"]}
    assert codes[4] == "ZIP_STATE_MISMATCH" and codes[6] == "UNKNOWN_PRODUCT"
    assert codes[3] in ("MALFORMED_ADDRESS", "UNSUPPORTED_LOCATION")
    for r in rows:
        if r["error"]:
            assert r["tax"] is None and r["coverage"] is None


def arrow_sales() -> pa.Table:
    return pa.table(
        {
            **SALES,
            "amount": pa.array(SALES["amount"], pa.int64()),
            "date": pa.array(SALES["date"], pa.date32()),
        }
    )


def test_pyarrow_table(default_table):
    check_sales(default_table.calculate_batch(arrow_sales(), keep="sale_id"))


def test_pyarrow_record_batch_and_reader(default_table):
    t = arrow_sales()
    check_sales(default_table.calculate_batch(t.to_batches()[0], keep=["sale_id"]))
    reader = pa.RecordBatchReader.from_batches(t.schema, t.to_batches(max_chunksize=2))
    out = default_table.calculate_batch(reader, keep=["sale_id"])
    check_sales(out)


def test_polars(default_table):
    df = pl.DataFrame(SALES)  # strings come as string views, ints as int64
    check_sales(default_table.calculate_batch(df, keep=["sale_id"]))
    dec = df.with_columns((pl.col("amount").cast(pl.Decimal(18, 2)) / 100).alias("amount"))
    check_sales(default_table.calculate_batch(dec, keep=["sale_id"]), pa.decimal128(38, 2))


def test_duckdb(default_table):
    con = duckdb.connect()
    sales = arrow_sales()
    con.register("sales", sales)
    with pytest.raises(TypeError, match="Float64.*floats cannot hold cents exactly"):
        default_table.calculate_batch(con.sql("SELECT amount / 100 AS amount, postal_code FROM sales"))
    rel = con.sql(
        "SELECT sale_id, (amount::DECIMAL(18, 2) / 100)::DECIMAL(18, 2) AS amount, postal_code,"
        " province, category, date FROM sales"
    )
    out = default_table.calculate_batch(rel, keep=["sale_id"])
    check_sales(out, out.schema.field("tax").type)
    assert pa.types.is_decimal(out.schema.field("tax").type)
    rel = con.sql("SELECT * FROM sales")
    check_sales(default_table.calculate_batch(rel, keep=["sale_id"]))


def test_pandas(default_table):
    df = pd.DataFrame(SALES)
    check_sales(default_table.calculate_batch(df, keep=["sale_id"]))


def test_decimal_amounts_keep_their_exactness(default_table):
    amounts = [Decimal("0.01"), Decimal("0.07"), Decimal("99999999.99"), Decimal("1234567890123.45")]
    t = pa.table({"amount": pa.array(amounts, pa.decimal128(18, 2)), "postal_code": ["38103"] * 4, "date": pa.array([DAY] * 4, pa.date32())})
    out, jur = default_table.calculate_batch(t, jurisdictions=True)
    rows = out.to_pylist()
    assert [r["amount_excluding_tax"] for r in rows] == amounts
    # Tennessee's 7%, and its single article tax on the part of one item from $1,600.01 to
    # $3,200 (2.75%, so $44 on the two large amounts).
    assert [r["tax"] for r in rows] == [Decimal("0.00"), Decimal("0.00"), Decimal("7000044.00"), Decimal("86419752352.64")]
    state = [r for r in jur.to_pylist() if r["jurisdiction_code"] == "47"]
    assert [r["tax"] for r in state] == [Decimal("0.0007"), Decimal("0.0049"), Decimal("6999999.9993"), Decimal("86419752308.6415")]
    assert all(r["tax"].as_tuple().exponent == -18 for r in state)
    # More places than the currency has: the row says so, the others are answered.
    t = pa.table({"amount": pa.array([Decimal("1.005"), Decimal("1.010")], pa.decimal128(10, 3)), "postal_code": ["38103"] * 2, "date": ["2026-03-02"] * 2})
    rows = default_table.calculate_batch(t).to_pylist()
    assert "USD has at most 2 decimal places" in rows[0]["error"]
    assert rows[1]["error"] is None and rows[1]["tax"] == Decimal("0.070")


def test_floats_are_refused_with_the_fix(default_table):
    t = pa.table({"amount": [19.99], "postal_code": ["38103"]})
    with pytest.raises(TypeError, match="floats cannot hold cents exactly.*decimal128"):
        default_table.calculate_batch(t)


def test_schema_errors(default_table):
    with pytest.raises(ValueError, match='no "amount" column'):
        default_table.calculate_batch(pa.table({"amt": [1], "postal_code": ["38103"]}))
    with pytest.raises(ValueError, match="no place to tax at"):
        default_table.calculate_batch(pa.table({"amount": [1]}))
    with pytest.raises(ValueError, match="both"):
        default_table.calculate_batch(pa.table({"amount": [1], "postal_code": ["38103"], "category": ["X"], "tax_code": ["Y"]}))
    with pytest.raises(TypeError, match='column "postal_code" is Float64'):
        default_table.calculate_batch(pa.table({"amount": [1], "postal_code": [38103.0]}))
    with pytest.raises(ValueError, match='keep: no column "id"'):
        default_table.calculate_batch(pa.table({"amount": [1], "postal_code": ["38103"], "date": ["2026-03-02"]}), keep="id")
    with pytest.raises(ValueError, match="also an output column"):
        default_table.calculate_batch(pa.table({"amount": [1], "postal_code": ["38103"], "date": ["2026-03-02"], "tax": [1]}), keep="tax")
    with pytest.raises(TypeError, match="expected Arrow data"):
        default_table.calculate_batch({"amount": [1]})
    with pytest.raises(ValueError, match="threads=0"):
        default_table.calculate_batch(arrow_sales(), threads=0)


def test_integer_zips_get_their_zeros_back(default_table):
    t = pa.table({"amount": [10_000, 10_000, 10_000], "postal_code": [2134, 381031234, 38103], "date": pa.array([DAY] * 3, pa.date32())})
    rows = default_table.calculate_batch(t).to_pylist()
    assert [r["error"] for r in rows] == [None, None, None]
    assert rows[0]["tax"] == 625  # Boston, MA 6.25%


def test_dates_as_text_timestamps_and_missing(default_table):
    # Tennessee's 2026 holiday on clothing under $100: July 31 to August 2.
    base = {"amount": [5_000] * 4, "postal_code": ["38103"] * 4, "category": ["CLOTHING"] * 4}
    holiday, plain = dt.date(2026, 8, 1), dt.date(2026, 3, 2)
    forms = [
        pa.array([holiday, plain, holiday, plain], pa.date32()),
        pa.array(["2026-08-01", "2026-03-02", "2026-08-01", "2026-03-02"]),
        pa.array([dt.datetime(2026, 8, 1, 12), dt.datetime(2026, 3, 2), dt.datetime(2026, 8, 1, 23, 59), dt.datetime(2026, 3, 2, 1)], pa.timestamp("us", tz="UTC")),
        pa.array([dt.datetime(2026, 8, 1), dt.datetime(2026, 3, 2), dt.datetime(2026, 8, 1), dt.datetime(2026, 3, 2)], pa.date64()),
    ]
    answers = []
    for dates in forms:
        rows = default_table.calculate_batch(pa.table({**base, "date": dates})).to_pylist()
        answers.append([r["tax"] for r in rows])
    assert answers[0] == [0, 350, 0, 350]
    assert all(a == answers[0] for a in answers)
    bad = default_table.calculate_batch(pa.table({**base, "date": ["2026-02-30", None, "", "2026-03-02"]})).to_pylist()
    assert "expected YYYY-MM-DD" in bad[0]["error"]
    # Missing (null or empty): an error for the row, never today's day unasked.
    assert [r["error_code"] for r in bad] == ["INVALID_DATE", "DATE_MISSING", "DATE_MISSING", None]
    filled = default_table.calculate_batch(pa.table({**base, "date": [None, "", "2026-03-02", None]}), default_date=holiday)
    assert filled.column("tax").to_pylist() == [0, 0, 350, 0]


def test_options_columns(zip5_table):
    t = pa.table({
        "amount": [10_000] * 5,
        "postal_code": ["78701"] * 5,
        "date": pa.array([DAY] * 5, pa.date32()),
        "exempt": [False, True, False, False, None],
        "tax_included": [False, False, True, False, None],
        "origin_postal_code": [None, None, None, "75102", None],
        "rounding": [None, "line", "LINE", "invoice", None],
        "currency": ["USD", "usd", None, "USD", "XYZ"],
    })
    rows = zip5_table.calculate_batch(t).to_pylist()
    plain, exempt, included, origin, bad = rows
    assert plain["tax"] == 825
    assert exempt["tax"] == 0 and exempt["zero_reason"] == "CUSTOMER_EXEMPT"
    assert included["amount_including_tax"] == 10_000
    assert origin["sourcing"] == "ORIGIN_WITH_USE_TAX"
    assert "unknown currency" in bad["error"]


def test_jurisdictions_long_table(zip5_table):
    t = pa.table({"id": ["a", "b", "c"], "amount": [10_000, 1, 500], "postal_code": ["90210", "00000", "38103"], "date": pa.array([DAY] * 3, pa.date32())})
    out, jur = zip5_table.calculate_batch(t, jurisdictions=True, keep="id")
    assert jur.column_names[:3] == ["row", "id", "jurisdiction_code"]
    rows = jur.to_pylist()
    assert {r["row"] for r in rows} == {0, 2}  # the bad row has none
    for i, sale in enumerate(out.to_pylist()):
        mine = [r for r in rows if r["row"] == i]
        assert all(r["id"] == sale["id"] for r in mine)
        if sale["error"] is None:
            # The line's tax is its jurisdictions' unrounded tax, rounded once.
            total = sum(r["tax"] for r in mine)
            assert int(total.quantize(Decimal(1), rounding="ROUND_HALF_UP")) == sale["tax"]
    levels = {r["level"] for r in rows}
    assert "STATE" in levels and "CITY" in levels
    assert all(r["rate"] > 0 for r in rows if r["note"] == "RATE_FRAC")


def test_schema_of_the_output(default_table):
    sales = arrow_sales()
    out, jur = default_table.calculate_batch(sales, jurisdictions=True, keep=["sale_id"])
    s, j = default_table.batch_schema(sales.schema, jurisdictions=True, keep=["sale_id"])
    assert out.schema == s and jur.schema == j
    assert default_table.batch_schema(sales.schema) == default_table.calculate_batch(sales).schema
    for name in ["coverage", "precision", "sourcing", "rounding", "table_hash"]:
        assert pa.types.is_dictionary(s.field(name).type)
    assert s.field("effective_rate").type == pa.decimal128(38, 18)
    assert j.field("rate").type == pa.decimal128(38, 18)


def test_empty_input(default_table):
    empty = arrow_sales().slice(0, 0)
    out, jur = default_table.calculate_batch(empty, jurisdictions=True)
    assert out.num_rows == 0 and jur.num_rows == 0
    assert out.schema == default_table.batch_schema(empty.schema)


def test_threads_give_the_same_answers(zip5_table, zip5_rows):
    import random

    rng = random.Random(7)
    n = 300_000  # several chunks
    picks = [rng.choice(zip5_rows)[1] for _ in range(n)]
    t = pa.table({"amount": pa.array([rng.randrange(1, 100_000) for _ in range(n)], pa.int64()), "postal_code": picks, "date": pa.array([DAY] * n, pa.date32())})
    one = zip5_table.calculate_batch(t, threads=1)
    two = zip5_table.calculate_batch(t, threads=2)
    many = zip5_table.calculate_batch(t, threads=7)
    assert one.equals(two) and one.equals(many)
    assert one.num_rows == n


def test_the_gil_is_released(zip5_table, zip5_rows):
    """Another Python thread keeps running while a batch is calculated."""
    n = 2_000_000
    zips = pa.array([z for _, z in zip5_rows])
    t = pa.table({"amount": pa.array(range(n), pa.int64()), "postal_code": zips.take(pa.array([i % len(zips) for i in range(n)]))})
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    th = threading.Thread(target=tick)
    start = time.perf_counter()
    th.start()
    zip5_table.calculate_batch(t, threads=1, default_date=DAY)
    end = time.perf_counter()
    stop.set()
    th.join()
    during = [x for x in ticks if start < x < end]
    # A thread blocked on the GIL would not tick at all while the call runs (a C call that
    # holds the GIL is never switched out); a free one ticks about every millisecond, and
    # still often on a machine busy with other work.
    assert end - start > 0.2
    assert len(during) >= 20, (len(during), end - start)
