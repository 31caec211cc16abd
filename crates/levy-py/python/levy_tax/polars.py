"""Tax in Polars: eager frames straight through ``Table.calculate_batch``, lazy ones with
``LazyFrame.map_batches``.

::

    import polars as pl
    import levy_tax
    from levy_tax import polars as levy_polars

    table = levy_tax.Table.open("us.levy")
    taxed = levy_polars.calculate(pl.scan_parquet("sales/*.parquet"), table).collect()

Why ``map_batches`` and not a plugin expression: a sale reads many columns (amount, postal
code, date, category, ...) and answers many (tax, coverage, error, ...), so it is a frame
operation, not a column expression; ``calculate_batch`` already runs over every core with
the GIL released and takes Polars' Arrow buffers without a copy. A plugin would tie the wheel
to Polars' Rust ABI and add Polars' crates to the build, for no speed it could gain.
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ._levy import Table

if TYPE_CHECKING:
    import polars as pl

    Frame = TypeVar("Frame", pl.DataFrame, pl.LazyFrame)

__all__ = ["calculate"]


def _taxed(df: pl.DataFrame, table: Table, threads: int | None, kw: dict[str, Any]) -> pl.DataFrame:
    import polars as pl

    out = pl.from_arrow(table.calculate_batch(df, threads=threads, **kw))
    assert isinstance(out, pl.DataFrame)
    return df.hstack(out)


def calculate(
    frame: Frame,
    table: Table,
    *,
    threads: int | None = None,
    strict: bool = False,
    default_date: datetime.date | datetime.datetime | str | None = None,
) -> Frame:
    """``frame`` with the columns of ``Table.calculate_batch`` added, row for row (for a
    LazyFrame, when it is collected). Its column names must not clash with them.
    ``strict`` and ``default_date`` as ``Table.calculate_batch`` takes them."""
    import polars as pl

    kw: dict[str, Any] = {"strict": strict, "default_date": default_date}
    if isinstance(frame, pl.LazyFrame):
        # The output's schema, from the input's, so that the lazy plan knows it.
        schema = frame.collect_schema()
        empty = pl.DataFrame(schema=schema).to_arrow()
        out = pl.from_arrow(table.batch_schema(empty.schema, default_date=default_date).empty_table())
        assert isinstance(out, pl.DataFrame)
        full = dict(schema) | dict(out.schema)
        # Row by row, so filters and slices may pass the node; projections may not (a
        # select of "tax" alone must not drop the date and category it is computed from).
        return frame.map_batches(
            lambda df: _taxed(df, table, threads, kw),
            schema=full,
            projection_pushdown=False,
            streamable=True,
        )
    return _taxed(frame, table, threads, kw)
