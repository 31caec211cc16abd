"""Recalculating a Spark DataFrame of sales with ``mapInArrow``.

The table file is shipped to the executors with ``SparkContext.addFile`` and opened on each
executor the first time a task needs it; every later task of the same Python worker
process reuses the open, memory-mapped table (the operating system shares its pages between
the processes of a machine)::

    from levy_tax import spark as levy_spark

    sales = spark.read.parquet("sales/")             # amount, postal_code, date, ...
    taxed = levy_spark.calculate(sales, "us.levy", keep=["sale_id"])
    lines = levy_spark.jurisdictions(sales, "us.levy", keep=["sale_id"])

Each partition's Arrow batches go to ``Table.calculate_batch`` as they are, one thread per
task (Spark already runs a task per core). The executors' Python (``PYSPARK_PYTHON``) needs
levy-tax and pyarrow installed, as for any ``mapInArrow`` function. The results equal the single-process answers row
for row: the same engine, the same table bytes.
"""

from __future__ import annotations

import datetime
import os
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from ._levy import Table

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["calculate", "jurisdictions", "open_shared", "spark_schema"]

_lock = threading.Lock()
_tables: dict[tuple[str, int, int, int], Table] = {}


def open_shared(path: str) -> Table:
    """The table at ``path``, opened once per process: later calls return the same mapped
    table for as long as the file is the same one (a file replaced by a rename, as
    ``levy build`` writes them, is opened anew)."""
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_ino, st.st_size, st.st_mtime_ns)
    with _lock:
        table = _tables.get(key)
        if table is None:
            table = Table.open(path)
            _tables[key] = table
        return table


def _plain(schema: pa.Schema) -> pa.Schema:
    """``schema`` with dictionary-encoded columns as plain strings (Spark reads no
    dictionaries)."""
    return pa.schema(
        [
            pa.field(f.name, f.type.value_type, f.nullable)
            if pa.types.is_dictionary(f.type)
            else f
            for f in schema
        ]
    )


def spark_schema(arrow_schema: pa.Schema):
    """A pyarrow schema as a Spark ``StructType``."""
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(_plain(arrow_schema))


def _input_schema(df: DataFrame) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema)


_shipped: set[tuple[str, str]] = set()


def _ship(df: DataFrame, table_path: str) -> str:
    """Ships the table file to the executors (once per application); the name they find
    it under."""
    sc = df.sparkSession.sparkContext
    path = os.path.abspath(table_path)
    key = (sc.applicationId, path)
    if key not in _shipped:
        sc.addFile(path)
        _shipped.add(key)
    return os.path.basename(path)


def _run(
    df: DataFrame,
    table_path: str,
    keep: Sequence[str],
    threads: int,
    long: bool,
    strict: bool,
    default_date: datetime.date | datetime.datetime | str | None,
) -> DataFrame:
    if isinstance(default_date, str) and default_date.strip().lower() == "today":
        # Today's UTC day once, on the driver: every partition takes the same day.
        default_date = datetime.datetime.now(datetime.timezone.utc).date()
    local = Table.open(table_path)
    out_schema = local.batch_schema(
        _input_schema(df), keep=keep, jurisdictions=True, default_date=default_date
    )[
        1 if long else 0
    ]
    plain = _plain(out_schema)
    name = _ship(df, table_path)
    keep = list(keep)

    def per_partition(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from pyspark import SparkFiles

        table = open_shared(SparkFiles.get(name))
        for batch in batches:
            if batch.num_rows == 0:
                continue
            result = table.calculate_batch(
                batch,
                keep=keep,
                threads=threads,
                jurisdictions=long,
                strict=strict,
                default_date=default_date,
            )
            result = result[1] if long else result
            yield from result.cast(plain).to_batches()

    return df.mapInArrow(per_partition, spark_schema(out_schema))


def calculate(
    df: DataFrame,
    table_path: str,
    *,
    keep: Sequence[str] = (),
    threads: int = 1,
    strict: bool = False,
    default_date: datetime.date | datetime.datetime | str | None = None,
) -> DataFrame:
    """``df`` recalculated on the table at ``table_path``, row for row: the columns of
    ``Table.calculate_batch``, after the ``keep`` columns of ``df``. Rows keep their
    partitions (and their order within them); keep an id to join on. ``strict`` and
    ``default_date`` as ``Table.calculate_batch`` takes them."""
    return _run(df, table_path, keep, threads, False, strict, default_date)


def jurisdictions(
    df: DataFrame,
    table_path: str,
    *,
    keep: Sequence[str] = (),
    threads: int = 1,
    strict: bool = False,
    default_date: datetime.date | datetime.datetime | str | None = None,
) -> DataFrame:
    """The long table of ``df``'s jurisdictions on the table at ``table_path``: a row per
    jurisdiction of each sale, with the ``keep`` columns of its sale. (``row`` numbers the
    sale within its Arrow batch; join on a kept id.)"""
    return _run(df, table_path, keep, threads, True, strict, default_date)
