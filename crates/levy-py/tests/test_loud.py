"""Never silently wrong: a misspelt column, a missing day, a coverage short of FULL and a
refund are each loud in calculate_batch (and in Table.calculate where it applies).

The expected taxes are worked by hand from the default table's data (as in
test_calculate.py): Memphis 38103 carries Tennessee's 7% state rate alone (coverage
STATE_ONLY); Nashville 37203 carries 7% + Davidson County's 2.25% + its 0.5% transit
surcharge = 9.75% (data/local/us/TN.toml, coverage FULL), so $100.00 of general
merchandise owes $9.75 there and $7.00 in Memphis.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

import levy_tax as levy

DAY = dt.date(2026, 3, 2)
CODE = pa.dictionary(pa.int8(), pa.string())


def days(n: int) -> pa.Array:
    return pa.array([DAY] * n, pa.date32())


# -- 1. a column that looks like a misspelling of one calculate_batch reads ---------------


@pytest.mark.parametrize(
    "column, known",
    [
        ("postal_cod", "postal_code"),  # one letter dropped
        ("Postal_Code", "postal_code"),  # case
        ("postalcode", "postal_code"),  # underscore dropped
        ("amout", "amount"),  # one letter dropped (amount is given too)
        ("product_categroy", "product_category"),  # the interface's name, two letters swapped
        ("Date", "date"),  # a short name: case only
        ("tax-code", "tax_code"),  # a hyphen for the underscore
    ],
)
def test_a_misspelt_column_is_an_error_naming_the_known_one(default_table, column, known):
    t = pa.table({"amount": [10_000], "postal_code": ["37203"], "date": days(1), column: ["x"]})
    want = f'column "{column}" is not one calculate_batch reads: did you mean "{known}"?'
    with pytest.raises(ValueError) as e:
        default_table.calculate_batch(t)
    assert want in str(e.value)
    # batch_schema (which the Spark recipe calls first) refuses it the same way.
    with pytest.raises(ValueError, match="did you mean"):
        default_table.batch_schema(t.schema)


def test_a_misspelt_column_in_keep_is_passed_through(default_table):
    t = pa.table(
        {"amount": [10_000], "postal_code": ["37203"], "date": days(1), "postal_cod": ["x"]}
    )
    out = default_table.calculate_batch(t, keep=["postal_cod"]).to_pylist()
    assert out[0]["postal_cod"] == "x"
    assert out[0]["tax"] == 975  # 9.75% of $100.00 in Nashville
    assert out[0]["error"] is None


def test_other_unread_columns_stay_ignored(default_table):
    # id is one letter from ip, rate one from date, zip and county near nothing levy reads
    # but by a short name: none of them is taken for a misspelling.
    t = pa.table(
        {
            "id": [1],
            "rate": ["x"],
            "zip": ["38103"],
            "sku": ["A-1"],
            "amount": [10_000],
            "postal_code": ["37203"],
            "date": days(1),
        }
    )
    out = default_table.calculate_batch(t).to_pylist()
    assert out[0]["tax"] == 975 and out[0]["error"] is None
    assert "id" not in out[0]


# -- 2. a day is never assumed ------------------------------------------------------------


def test_a_null_date_is_an_error_for_its_row(default_table):
    t = pa.table(
        {
            "amount": [10_000, 10_000, 10_000],
            "postal_code": ["37203"] * 3,
            "date": pa.array([DAY, None, DAY], pa.date32()),
        }
    )
    rows = default_table.calculate_batch(t).to_pylist()
    assert [r["tax"] for r in rows] == [975, None, 975]
    assert rows[1]["error"].startswith("date is missing")
    assert [r["error_code"] for r in rows] == [None, "DATE_MISSING", None]
    # An explicit default_date fills it, and only it.
    rows = default_table.calculate_batch(t, default_date=DAY).to_pylist()
    assert [r["tax"] for r in rows] == [975, 975, 975]
    assert [r["error"] for r in rows] == [None, None, None]


def test_text_dates_empty_or_null_are_missing_too(default_table):
    t = pa.table({"amount": [10_000] * 3, "postal_code": ["37203"] * 3, "date": ["2026-03-02", "", None]})
    codes = default_table.calculate_batch(t).column("error_code").to_pylist()
    assert codes == [None, "DATE_MISSING", "DATE_MISSING"]
    rows = default_table.calculate_batch(t, default_date="2026-03-02").to_pylist()
    assert [r["tax"] for r in rows] == [975, 975, 975]


def test_no_date_column_needs_default_date(default_table):
    t = pa.table({"amount": [10_000], "postal_code": ["37203"]})
    with pytest.raises(ValueError, match='no "date" column: .*default_date="today"'):
        default_table.calculate_batch(t)
    with pytest.raises(ValueError, match='no "date" column'):
        default_table.batch_schema(t.schema)
    assert default_table.calculate_batch(t, default_date="2026-03-02").column("tax").to_pylist() == [975]
    assert default_table.calculate_batch(t, default_date=dt.datetime(2026, 3, 2, 23, 0)).column("tax").to_pylist() == [975]
    # "today" keeps today's UTC day, explicitly (Nashville's 9.75% holds on any day of the
    # default table).
    today = default_table.calculate_batch(t, default_date="today").to_pylist()
    assert today[0]["tax"] == 975 and today[0]["error"] is None
    assert default_table.batch_schema(t.schema, default_date="today").names[0] == "tax"
    with pytest.raises(ValueError, match='^default_date: date "yesterday": expected YYYY-MM-DD'):
        default_table.calculate_batch(t, default_date="yesterday")
    with pytest.raises(TypeError, match="^default_date: date: expected a datetime.date"):
        default_table.calculate_batch(t, default_date=20260302)


# -- 3. error_code beside error -----------------------------------------------------------


def test_error_code_names_each_kind(default_table):
    t = pa.table(
        {
            "amount": pa.array([10_000, 10_000, 10_000, 10_000, None], pa.int64()),
            "postal_code": ["37203", "38103", "37203", "37203", "37203"],
            "province": [None, "GA", None, None, None],
            "category": [None, None, "NOT_A_CODE", None, None],
            "currency": [None, None, None, "XYZ", None],
            "date": days(5),
        }
    )
    out = default_table.calculate_batch(t)
    assert out.schema.field("error_code").type == CODE
    assert out.column_names[-2:] == ["error", "error_code"]
    rows = out.to_pylist()
    assert [r["error_code"] for r in rows] == [
        None,
        "ZIP_STATE_MISMATCH",
        "UNKNOWN_PRODUCT",
        "UNKNOWN_CURRENCY",
        "INVALID_AMOUNT",
    ]
    assert rows[1]["error"] == "postal code 38103 is in TN, not in GA (ZIP_STATE_MISMATCH)"
    for r in rows:
        assert (r["error"] is None) == (r["error_code"] is None)


# -- 4. strict ----------------------------------------------------------------------------


def test_strict_refuses_every_coverage_short_of_full(default_table):
    t = pa.table({"amount": [10_000, 10_000], "postal_code": ["37203", "38103"], "date": days(2)})
    lax = default_table.calculate_batch(t).to_pylist()
    assert [(r["tax"], r["coverage"]) for r in lax] == [(975, "FULL"), (700, "STATE_ONLY")]
    out, jur = default_table.calculate_batch(t, strict=True, jurisdictions=True)
    rows = out.to_pylist()
    assert rows[0]["tax"] == 975 and rows[0]["error"] is None
    assert rows[1]["tax"] is None and rows[1]["coverage"] is None
    assert rows[1]["error"].startswith("coverage STATE_ONLY: ")
    assert rows[1]["error_code"] == "COVERAGE_NOT_FULL"
    assert set(jur.column("row").to_pylist()) == {0}  # no jurisdictions for the refused row


def test_strict_in_calculate(default_table):
    assert default_table.calculate("100.00", postal_code="37203", date=DAY, strict=True).total_tax == Decimal("9.75")
    assert default_table.calculate("100.00", postal_code="38103", date=DAY).total_tax == Decimal("7.00")
    with pytest.raises(levy.CalculationError, match="^coverage STATE_ONLY: ") as e:
        default_table.calculate("100.00", postal_code="38103", date=DAY, strict=True)
    assert e.value.kind == "COVERAGE_NOT_FULL"


# -- 5. refunds ---------------------------------------------------------------------------


def test_a_refund_is_the_negated_sale(default_table):
    # -$100.00 in Nashville: exactly the negation of +$100.00's $9.75.
    t = pa.table(
        {
            "amount": pa.array([Decimal("100.00"), Decimal("-100.00")], pa.decimal128(18, 2)),
            "postal_code": ["37203", "37203"],
            "date": days(2),
        }
    )
    out, jur = default_table.calculate_batch(t, jurisdictions=True)
    sale, refund = out.to_pylist()
    assert sale["tax"] == Decimal("9.75") and refund["tax"] == Decimal("-9.75")
    assert refund["amount_excluding_tax"] == Decimal("-100.00")
    assert refund["amount_including_tax"] == Decimal("-109.75")
    assert refund["effective_rate"] == sale["effective_rate"] == Decimal("0.0975")
    assert refund["coverage"] == "FULL" and refund["error"] is None
    by_row = {0: [], 1: []}
    for j in jur.to_pylist():
        by_row[j["row"]].append(j)
    # State, state single-article (nothing on a first $1,600), county, transit.
    assert len(by_row[0]) == len(by_row[1]) == 4
    for s, r in zip(by_row[0], by_row[1]):
        assert r["jurisdiction_code"] == s["jurisdiction_code"] and r["rate"] == s["rate"]
        assert (r["taxable_base"], r["tax"]) == (-s["taxable_base"], -s["tax"])
    assert sum(j["tax"] for j in by_row[1]) == Decimal("-9.75")


def test_a_refund_in_cents_and_tax_included(default_table):
    t = pa.table(
        {
            "amount": pa.array([-10_000, -10_975], pa.int64()),
            "postal_code": ["37203", "37203"],
            "tax_included": [False, True],
            "date": days(2),
        }
    )
    rows = default_table.calculate_batch(t).to_pylist()
    assert [r["tax"] for r in rows] == [-975, -975]  # $109.75 including 9.75% is $100 + $9.75
    assert [r["amount_excluding_tax"] for r in rows] == [-10_000, -10_000]
    # Finer than a cent is still an error, refund or not.
    bad = pa.table({"amount": pa.array([Decimal("-1.005")], pa.decimal128(18, 3)), "postal_code": ["37203"], "date": days(1)})
    row = default_table.calculate_batch(bad).to_pylist()[0]
    assert row["error_code"] == "INVALID_AMOUNT" and "at most 2 decimal places" in row["error"]


def test_names_of_other_fields_are_not_misspellings(default_table):
    # zip_code is two edits from ip_mode (a name of seven letters: one edit at most), count
    # two from amount; county, street2 and address_line_2 name other fields.
    for column in ["zip_code", "count", "county", "street2", "address_line_2", "exempted"]:
        t = pa.table({"amount": [10_000], "postal_code": ["37203"], "date": days(1), column: ["x"]})
        assert default_table.calculate_batch(t).column("tax").to_pylist() == [975], column
    # One edit from a name of five to seven letters, two from a longer one, are refused.
    for column, known in [("amounts", "amount"), ("exemptt", "exempt"), ("tax_codes", "tax_code"), ("origin_provnce", "origin_province")]:
        t = pa.table({"amount": [10_000], "postal_code": ["37203"], "date": days(1), column: ["x"]})
        with pytest.raises(ValueError, match=f'did you mean "{known}"'):
            default_table.calculate_batch(t)
