"""levy_tax answers what `levy calc --json` answers: 10,000 random sales over the table
built from the shared ZIP5 files, compared sale by sale (tax, totals, coverage, and every
jurisdiction's rate, base and tax), through calculate_batch and through calculate."""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import replace
from decimal import ROUND_HALF_UP, Decimal, localcontext

import pyarrow as pa
import pytest

from conftest import random_sales

N = 10_000
FINE = Decimal(1).scaleb(-18)
RESOLVE = re.compile(r"\(([A-Z_]+)\)$")


def fine(d: Decimal) -> Decimal:
    return Decimal(d).quantize(FINE, rounding=ROUND_HALF_UP)


def sales_table(sales, amount: str = "minor") -> pa.Table:
    if amount == "minor":
        amounts = pa.array([s.cents for s in sales], pa.int64())
    else:
        amounts = pa.array([Decimal(s.cents).scaleb(-2) for s in sales], pa.decimal128(18, 2))
    return pa.table(
        {
            "amount": amounts,
            "quantity": pa.array([s.quantity for s in sales], pa.int32()),
            "category": [s.category for s in sales],
            "postal_code": [s.postal_code for s in sales],
            "province": [s.province for s in sales],
            "date": pa.array([s.date for s in sales], pa.date32()),
            "exempt": [s.exempt for s in sales],
            "tax_included": [s.tax_included for s in sales],
            "rounding": [s.rounding for s in sales],
            "origin_postal_code": [s.origin_postal_code for s in sales],
            "origin_province": [s.origin_province for s in sales],
        }
    )


def cli_answers(levy_bin, table_path, sales, jsonl: bool) -> list[dict]:
    """`levy calc --json`'s answer for each sale: all at once with `--jsonl`, else one
    process per sale."""
    if jsonl:
        text = "\n".join(json.dumps(s.cli_object()) for s in sales) + "\n"
        done = subprocess.run(
            [levy_bin, "calc", "--table", table_path, "--jsonl", "-"],
            input=text,
            capture_output=True,
            text=True,
            check=True,
        )
        lines = done.stdout.splitlines()
        assert len(lines) == len(sales), done.stderr
        return [json.loads(line, parse_float=Decimal) for line in lines]
    out = []
    for s in sales:
        done = subprocess.run(
            [levy_bin, "calc", "--table", table_path, "--json", *s.cli_args()],
            capture_output=True,
            text=True,
        )
        if done.returncode == 0:
            out.append(json.loads(done.stdout, parse_float=Decimal))
        else:
            out.append({"error": done.stderr.strip().removeprefix("error: ")})
    return out


@pytest.fixture(scope="module")
def sales(zip5_rows, categories, jsonl_mode):
    # Without --jsonl (a levy older than it), a process per sale: a sample only.
    return random_sales(N if jsonl_mode else 300, zip5_rows, categories, seed=20251201)


@pytest.fixture(scope="module")
def cli(levy_bin, zip5_table_path, sales, jsonl_mode):
    return cli_answers(levy_bin, zip5_table_path, sales, jsonl_mode)


@pytest.fixture(scope="module")
def refunds(levy_bin, zip5_table_path, sales, jsonl_mode):
    """For each sale of a negative amount (a refund, which levy calc refuses), levy calc's
    answer for the sale of its absolute amount: calculate_batch answers its negation."""
    at = [i for i, s in enumerate(sales) if s.cents < 0]
    sold = [replace(sales[i], cents=-sales[i].cents) for i in at]
    return dict(zip(at, cli_answers(levy_bin, zip5_table_path, sold, jsonl_mode) if sold else []))


@pytest.fixture(scope="module")
def batch(zip5_table, sales):
    out, jur = zip5_table.calculate_batch(sales_table(sales), jurisdictions=True)
    by_row: dict[int, list[dict]] = {}
    for r in jur.to_pylist():
        by_row.setdefault(r["row"], []).append(r)
    return out.to_pylist(), by_row


def test_the_sample_has_every_kind_of_sale(sales, cli, jsonl_mode):
    if not jsonl_mode:
        pytest.skip("a small sample without levy calc --jsonl")
    assert len(sales) == N
    errors = sum("error" in c for c in cli)
    assert 100 < errors < 1000, errors
    assert sum(s.origin_postal_code is not None for s in sales) > 500
    assert {c.get("coverage") for c in cli} >= {"FULL"}
    assert any(c.get("sourcing", "DESTINATION") != "DESTINATION" for c in cli)


def test_batch_equals_levy_calc(sales, cli, refunds, batch):
    rows, jur = batch
    assert len(rows) == len(cli)
    if len(sales) == N:
        assert len(refunds) > 10
    for i, (s, c, b) in enumerate(zip(sales, cli, rows)):
        where = f"sale {i}: {s.cli_object()}"
        # A refund: every amount the negation of the sale's, the rates as they are.
        sign = -1 if i in refunds else 1
        if i in refunds:
            assert "must not be negative" in c["error"], where
            c = refunds[i]
        if "error" in c:
            assert b["error"] is not None, f"{where}: levy calc says {c['error']!r}"
            m = RESOLVE.search(c["error"])
            if m and not c["error"].startswith("line"):
                assert b["error"] == c["error"], where
            assert b["tax"] is None and i not in jur, where
            continue
        assert b["error"] is None, f"{where}: {b['error']}"
        assert b["tax"] == sign * int(c["total_tax_amount"]), where
        assert b["amount_excluding_tax"] == sign * int(c["total_amount_excluding_tax"]), where
        assert b["amount_including_tax"] == sign * int(c["total_amount_including_tax"]), where
        assert b["coverage"] == c["coverage"], where
        assert b["sourcing"] == c["sourcing"], where
        assert b["rounding"] == c["rounding"], where
        assert b["table_hash"] == c["table_hash"], where
        assert b["zero_reason"] == c["zero_reason"], where
        excl = Decimal(c["total_amount_excluding_tax"])
        if excl:
            with localcontext() as ctx:
                ctx.prec = 60
                want = fine(Decimal(c["total_tax_amount"]) / excl)
            assert b["effective_rate"] == want, where
        want_j = [
            (
                j["jurisdiction_code"],
                j["tax_authority_type"],
                fine(j["tax_rate"]),
                sign * fine(j["taxable_base"]),
                sign * fine(j["tax_due_decimal"]),
                j["note"],
                j["sourced_from"],
            )
            for line in c["line_items"]
            for j in line["tax_jurisdictions"]
        ]
        got_j = [
            (
                j["jurisdiction_code"],
                j["level"],
                j["rate"],
                j["taxable_base"],
                j["tax"],
                j["note"],
                j["sourced_from"],
            )
            for j in jur.get(i, [])
        ]
        assert got_j == want_j, where


def test_decimal_amounts_give_the_same_answers(zip5_table, sales, batch):
    """The same sales with dollars as decimal128(18, 2): every answer in dollars, exactly
    the cents of the integer run divided by 100."""
    rows, _ = batch
    dec = zip5_table.calculate_batch(sales_table(sales, amount="major")).to_pylist()
    assert pa.decimal128(38, 2) == zip5_table.calculate_batch(
        sales_table(sales[:1], amount="major")
    ).schema.field("tax").type
    for i, (a, b) in enumerate(zip(rows, dec)):
        assert (a["error"] is None) == (b["error"] is None), i
        if a["error"] is None:
            for k in ("tax", "amount_excluding_tax", "amount_including_tax"):
                assert b[k] == Decimal(a[k]).scaleb(-2), (i, k)
                assert b[k].as_tuple().exponent == -2
            assert b["effective_rate"] == a["effective_rate"]


def test_calculate_equals_levy_calc(zip5_table, sales, cli):
    """The one-sale API, sale by sale, with the `--line` text levy calc takes."""
    for i, (s, c) in enumerate(zip(sales, cli)):
        where = f"sale {i}: {s.cli_object()}"
        kwargs = dict(
            postal_code=s.postal_code,
            province=s.province,
            date=s.date,
            exempt=s.exempt,
            tax_included=s.tax_included,
            rounding=s.rounding,
            origin_postal_code=s.origin_postal_code,
            origin_province=s.origin_province,
        )
        if "error" in c:
            with pytest.raises((ValueError, Exception)) as e:
                zip5_table.calculate(s.line, **kwargs)
            m = RESOLVE.search(c["error"])
            if m and not c["error"].startswith("line"):
                assert str(e.value) == c["error"], where
                assert e.value.error_type == m.group(1), where
            continue
        got = zip5_table.calculate(s.line, **kwargs)
        assert got.total_tax == Decimal(c["total_tax_amount"]).scaleb(-2), where
        assert got.total_including_tax == Decimal(c["total_amount_including_tax"]).scaleb(-2)
        assert got.coverage == c["coverage"], where
        assert got.sourcing == c["sourcing"], where
        assert got.table_hash == c["table_hash"]
        line = c["line_items"][0]
        assert got.lines[0].tax == Decimal(line["tax_amount"]).scaleb(-2), where
        assert [
            (j.code, j.rate, j.taxable_base, j.tax, j.note, j.sourced_from, j.rule_id)
            for j in got.lines[0].jurisdictions
        ] == [
            (
                j["jurisdiction_code"],
                Decimal(j["tax_rate"]),
                Decimal(j["taxable_base"]).scaleb(-2),
                Decimal(j["tax_due_decimal"]).scaleb(-2),
                j["note"],
                j["sourced_from"],
                j["rule_id"],
            )
            for j in line["tax_jurisdictions"]
        ], where
        used = c["address_used"]
        a = got.location.address_used
        assert (a.postal_code, a.province, a.city) == (
            used["address_postal_code"],
            used["address_province"],
            used["address_city"],
        ), where
