"""Tax in pandas: an ordinary DataFrame in, an ordinary DataFrame out.

    import pandas as pd
    import levy_tax
    from levy_tax import pandas as levy_pandas

    table = levy_tax.Table.open("us.levy")
    sales = pd.read_parquet("sales.parquet", dtype_backend="pyarrow")   # zip, cents, day, ...
    out = levy_pandas.calculate(
        sales, table, columns={"zip": "postal_code", "cents": "amount", "day": "date"}
    )
    sales.join(out)                     # on the frame's own index

``columns`` maps the frame's names to the ones ``Table.calculate_batch`` reads; the
frame's other columns go in under their own names (a misspelling of a known name is still
refused, and ``keep`` passes any through). The answer has the frame's index, and its
columns are Arrow-backed (``pd.ArrowDtype``): exact decimals and integers, nullable, and
dictionary-encoded text, without the copy and the objects of NumPy dtypes. The frame itself
is read fastest with Arrow-backed dtypes too (``dtype_backend="pyarrow"``): NumPy's object
strings are converted first, which costs more than the calculation.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._levy import Table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["calculate"]


def _arrow(df: pd.DataFrame, columns: Mapping[str, str]) -> Any:
    import pyarrow as pa

    names = [str(c) for c in df.columns]
    for src in columns:
        if src not in names:
            raise ValueError(f"columns: no column {src!r} in the frame (it has: {', '.join(names)})")
    renamed = [columns.get(n, n) for n in names]
    seen: set[str] = set()
    for n in renamed:
        if n in seen:
            raise ValueError(f"columns: two columns would be named {n!r}; map one of them only")
        seen.add(n)
    t = pa.Table.from_pandas(df, preserve_index=False)
    return t.rename_columns(renamed)


def calculate(
    df: pd.DataFrame,
    table: Table,
    *,
    columns: Mapping[str, str] | None = None,
    keep: str | Sequence[str] | None = None,
    jurisdictions: bool = False,
    threads: int | None = None,
    strict: bool = False,
    default_date: datetime.date | datetime.datetime | str | None = None,
) -> Any:
    """The columns of ``Table.calculate_batch`` for each row of ``df``, as a DataFrame on
    ``df``'s index with Arrow-backed dtypes; with ``jurisdictions=True`` a pair (sales,
    jurisdictions), the long table's ``row`` being the sale's position in ``df``.

    ``columns`` renames the frame's columns for the calculation (``{"zip":
    "postal_code"}``); ``keep`` names columns of ``df`` (as ``df`` names them) to copy into
    the answer; the other keywords are ``Table.calculate_batch``'s."""
    import pandas as pd

    columns = dict(columns or {})
    kept = [keep] if isinstance(keep, str) else list(keep or [])
    data = _arrow(df, columns)
    result = table.calculate_batch(
        data,
        keep=[columns.get(k, k) for k in kept],
        jurisdictions=jurisdictions,
        threads=threads,
        strict=strict,
        default_date=default_date,
    )
    back = {columns.get(k, k): k for k in kept}

    def frame(t: Any, index: Any) -> pd.DataFrame:
        out = t.rename_columns([back.get(n, n) for n in t.column_names]).to_pandas(
            types_mapper=pd.ArrowDtype
        )
        if index is not None:
            out.index = index
        return out

    if not jurisdictions:
        return frame(result, df.index)
    sales, long = result
    return frame(sales, df.index), frame(long, None)
