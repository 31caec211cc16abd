"""levy_tax.pandas.calculate: an ordinary pandas frame in (NumPy or Arrow-backed dtypes),
its columns mapped to levy's names, an Arrow-backed frame out on the frame's index.

Expected taxes by hand, as in test_loud.py: $100.00 of general merchandise owes 9.75% in
Nashville 37203 ($9.75) and Tennessee's 7% alone in Memphis 38103 ($7.00)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import pyarrow as pa
import pytest

from levy_tax import pandas as levy_pandas

DAY = dt.date(2026, 3, 2)
MAP = {"zip": "postal_code", "cents": "amount", "day": "date"}


def frame(arrow: bool) -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "order": ["A-1", "A-2", "A-3"],
            "zip": ["37203", "38103", "37203"],
            "cents": [10_000, 10_000, -10_000],
            "day": [DAY, DAY, DAY],
        },
        index=[10, 20, 30],
    )
    if arrow:
        df = df.astype(
            {
                "order": pd.ArrowDtype(pa.string()),
                "zip": pd.ArrowDtype(pa.string()),
                "cents": pd.ArrowDtype(pa.int64()),
                "day": pd.ArrowDtype(pa.date32()),
            }
        )
    return df


@pytest.mark.parametrize("arrow", [True, False])
def test_mapped_columns_in_arrow_dtypes_out(default_table, arrow):
    df = frame(arrow)
    out = levy_pandas.calculate(df, default_table, columns=MAP, keep="order")
    assert list(out.index) == [10, 20, 30]
    assert list(out.columns[:2]) == ["order", "tax"]
    assert isinstance(out["tax"].dtype, pd.ArrowDtype)
    assert out["tax"].dtype.pyarrow_dtype == pa.int64()
    assert list(out["tax"]) == [975, 700, -975]  # the third is a refund
    assert list(out["coverage"]) == ["FULL", "STATE_ONLY", "FULL"]
    assert out["error"].isna().all()
    joined = df.join(out.drop(columns="order"))
    assert joined.loc[20, "tax"] == 700


def test_decimal_dollars_and_strict(default_table):
    df = pd.DataFrame(
        {
            "postal": ["37203", "38103"],
            "price": pd.Series([Decimal("100.00"), Decimal("100.00")], dtype=pd.ArrowDtype(pa.decimal128(18, 2))),
        }
    )
    out = levy_pandas.calculate(
        df, default_table, columns={"postal": "postal_code", "price": "amount"}, default_date=DAY, strict=True
    )
    assert out["tax"].iloc[0] == Decimal("9.75")
    assert pd.isna(out["tax"].iloc[1]) and out["error_code"].iloc[1] == "COVERAGE_NOT_FULL"


def test_jurisdictions_and_bad_mappings(default_table):
    sales, long = levy_pandas.calculate(frame(True), default_table, columns=MAP, jurisdictions=True)
    # State 7%, the state's single-article tax (nothing on a first $1,600), Davidson 2.25%,
    # its transit 0.5%, in cents.
    assert sorted(long[long["row"] == 0]["tax"]) == [Decimal(x) for x in ("0", "50", "225", "700")]
    assert sum(long[long["row"] == 2]["tax"]) == Decimal("-975")
    with pytest.raises(ValueError, match="no column 'postcode'"):
        levy_pandas.calculate(frame(True), default_table, columns={"postcode": "postal_code"})
    with pytest.raises(ValueError, match="two columns would be named 'postal_code'"):
        levy_pandas.calculate(frame(True).assign(postal_code="1"), default_table, columns=MAP)
    with pytest.raises(TypeError, match="floats cannot hold cents exactly"):
        levy_pandas.calculate(frame(False).assign(cents=[100.0, 1.0, 2.0]), default_table, columns=MAP)
