"""Tax in DuckDB SQL: an Arrow UDF over ``Table.calculate_batch``.

::

    import duckdb
    import levy_tax
    from levy_tax import duckdb as levy_duckdb

    con = duckdb.connect()
    levy_duckdb.register(con, levy_tax.Table.open("us.levy"))
    con.sql('''
        SELECT sale_id, t.tax, t.coverage, t.error
        FROM (SELECT *, levy_tax(amount, postal_code, category, sale_date) AS t FROM sales)
    ''')

DuckDB hands the UDF its vectors as Arrow arrays (a couple of thousand rows at a time) and
gets a struct back per row. A whole relation can also go to ``Table.calculate_batch``
directly (``table.calculate_batch(con.sql("FROM sales"))``), which is faster for large
scans: it takes the whole result at once, over every core.
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

import pyarrow as pa

from ._levy import Table

if TYPE_CHECKING:
    import duckdb

__all__ = ["register"]

#: The fields of the struct the UDF returns.
FIELDS = ("tax", "amount_including_tax", "effective_rate", "coverage", "error", "error_code")


def register(
    con: duckdb.DuckDBPyConnection,
    table: Table,
    *,
    name: str = "levy_tax",
    amount_type: str = "DECIMAL(18,2)",
    strict: bool = False,
    default_date: datetime.date | datetime.datetime | str | None = None,
) -> None:
    """Registers ``name(amount, postal_code, category, date)`` on ``con``: the tax of a
    one-line sale of ``amount`` (``amount_type``: a ``DECIMAL`` of dollars, or ``BIGINT``
    cents; negative for a refund) of ``category`` (NULL for general merchandise) at US
    ``postal_code`` on ``date`` (a NULL date is an error for its row unless
    ``default_date`` is given), as a struct of tax, amount including tax and effective rate
    (exact decimals in the amount's unit), coverage, error and error_code (NULL when the
    row was calculated). ``strict`` as ``Table.calculate_batch`` takes it."""
    import duckdb

    probe = pa.schema(
        [
            pa.field("amount", _arrow_type(amount_type)),
            pa.field("postal_code", pa.string()),
            pa.field("category", pa.string()),
            pa.field("date", pa.date32()),
        ]
    )
    out = table.batch_schema(probe)
    fields = [out.field(f) for f in FIELDS]
    struct = pa.struct(
        [
            pa.field(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type)
            for f in fields
        ]
    )

    def udf(amount, postal_code, category, date):
        sales = pa.table(
            {"amount": amount, "postal_code": postal_code, "category": category, "date": date}
        )
        result = table.calculate_batch(
            sales, threads=1, strict=strict, default_date=default_date
        )
        columns = [result.column(f).cast(struct.field(f).type) for f in FIELDS]
        return pa.StructArray.from_arrays(
            [c.combine_chunks() for c in columns], fields=list(struct)
        )

    return_type = duckdb.struct_type(
        {f.name: _duck_type(f.type) for f in struct}  # type: ignore[arg-type]
    )
    con.create_function(
        name,
        udf,
        [amount_type, "VARCHAR", "VARCHAR", "DATE"],
        return_type,
        type="arrow",
        null_handling="special",
        side_effects=False,
    )


def _arrow_type(sql: str) -> pa.DataType:
    s = sql.replace(" ", "").upper()
    if s.startswith("DECIMAL(") and s.endswith(")"):
        p, sc = s[len("DECIMAL(") : -1].split(",")
        return pa.decimal128(int(p), int(sc))
    if s in ("BIGINT", "INTEGER", "INT", "INT64", "HUGEINT"):
        return pa.int64()
    raise ValueError(
        f"amount_type {sql!r}: a DECIMAL(p,s) of major units or BIGINT minor units"
    )


def _duck_type(t: pa.DataType) -> str:
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    if pa.types.is_int64(t):
        return "BIGINT"
    return "VARCHAR"
