"""levy, the offline sales-tax engine, for Python.

Open a rate table, then calculate one sale or a whole Arrow table of them::

    import levy_tax as levy

    table = levy.Table.default()                       # or levy.Table.open("us.levy")
    calc = table.calculate(["19.99x2:CLOTHING"], postal_code="37203", date="2026-03-01")
    calc.total_tax                                     # Decimal('3.90')

    out = table.calculate_batch(sales)                 # pyarrow / Polars / DuckDB in,
                                                       # a pyarrow.Table out, row for row

Integers are minor units (cents) and decimals major units (dollars) everywhere; money is
never a float. The recipes for Spark, DuckDB and Polars are in ``levy_tax.spark``,
``levy_tax.duckdb`` and ``levy_tax.polars``.
"""

from ._levy import (
    TABLE_FORMAT_VERSION,
    Address,
    BadRow,
    BuildError,
    BuildSummary,
    Calculation,
    CalculationError,
    Conflict,
    Diff,
    InternalError,
    Jurisdiction,
    JurisdictionChange,
    JurisdictionTax,
    LevyError,
    Line,
    LineTax,
    Location,
    RegionCoverage,
    ResolveError,
    RuleChange,
    Source,
    Table,
    TableError,
    TableInfo,
    ZoneChange,
    __version__,
    build,
    diff,
)

__all__ = [
    "TABLE_FORMAT_VERSION",
    "Address",
    "BadRow",
    "BuildError",
    "BuildSummary",
    "Calculation",
    "CalculationError",
    "Conflict",
    "Diff",
    "InternalError",
    "Jurisdiction",
    "JurisdictionChange",
    "JurisdictionTax",
    "LevyError",
    "Line",
    "LineTax",
    "Location",
    "RegionCoverage",
    "ResolveError",
    "RuleChange",
    "Source",
    "Table",
    "TableError",
    "TableInfo",
    "ZoneChange",
    "__version__",
    "build",
    "diff",
]
