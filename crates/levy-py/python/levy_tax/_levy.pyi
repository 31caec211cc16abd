"""Type stubs for levy_tax's native module (written in Rust with PyO3)."""

import datetime
import os
import pathlib
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any, Literal, Protocol, final, overload

import pyarrow

__all__ = [
    "LevyError",
    "TableError",
    "ResolveError",
    "CalculationError",
    "BuildError",
    "InternalError",
    "Table",
    "Line",
    "Address",
    "Jurisdiction",
    "Location",
    "JurisdictionTax",
    "LineTax",
    "Calculation",
    "Source",
    "TableInfo",
    "RegionCoverage",
    "BadRow",
    "Conflict",
    "BuildSummary",
    "JurisdictionChange",
    "RuleChange",
    "ZoneChange",
    "Diff",
    "ArrowBatches",
    "build",
    "diff",
    "_panic_for_tests",
    "__version__",
    "TABLE_FORMAT_VERSION",
]
__version__: str
TABLE_FORMAT_VERSION: int

class _ArrowStream(Protocol):
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...

class _ArrowArray(Protocol):
    def __arrow_c_array__(self, requested_schema: object | None = None) -> tuple[object, object]: ...

class _ArrowSchema(Protocol):
    def __arrow_c_schema__(self) -> object: ...

_ArrowData = _ArrowStream | _ArrowArray
"""Anything with the Arrow PyCapsule interface: a pyarrow Table, RecordBatch or
RecordBatchReader, a Polars DataFrame, a DuckDB relation, a pandas DataFrame."""

_DateLike = datetime.date | datetime.datetime | str
"""A day: a date, a datetime (its UTC day; naive ones are UTC) or text YYYY-MM-DD."""

_Amount = Decimal | str | int
"""A Decimal or text is major units (dollars); an int is minor units (cents)."""

_StrPath = str | os.PathLike[str]

class LevyError(Exception):
    """Every error levy raises derives from this (bad argument types and values raise
    TypeError and ValueError)."""

class TableError(LevyError):
    """A table file could not be opened: missing, foreign, outdated or damaged."""

class ResolveError(LevyError, ValueError):
    """An address resolves to no place the table taxes."""

    error_type: str
    """ZIP_STATE_MISMATCH, MALFORMED_ADDRESS, UNSUPPORTED_LOCATION, INVALID_COUNTRY_CODE, ..."""

class CalculationError(LevyError, ValueError):
    """A sale cannot be calculated (unknown category, negative amount, ...)."""

class BuildError(LevyError):
    """A table build failed."""

class InternalError(LevyError):
    """A bug in levy: a Rust panic, stopped before it reached Python."""

@final
class Line:
    """One line of a sale: its total amount, a quantity, and a category or a tax code."""

    def __new__(
        cls,
        amount: _Amount,
        quantity: int = 1,
        category: str | None = None,
        *,
        tax_code: str | None = None,
    ) -> Line: ...
    @property
    def amount(self) -> _Amount: ...
    @property
    def quantity(self) -> int: ...
    @property
    def category(self) -> str | None: ...
    @property
    def tax_code(self) -> str | None: ...

@final
class Address:
    """An address as the table used it (normalized)."""

    street: str
    city: str
    province: str
    postal_code: str
    country: str

@final
class Jurisdiction:
    """A taxing jurisdiction."""

    code: str
    name: str
    level: Literal["COUNTRY", "STATE", "PROVINCE", "COUNTY", "CITY", "DISTRICT"]
    tax_type: Literal["SALES", "USE", "VAT", "GST"]
    authority: str

@final
class Location:
    """A resolved place."""

    status: Literal["EXACT", "POSTAL_FALLBACK_1", "POSTAL_ONLY"]
    precision: Literal["STREET", "POSTAL_PLUS", "POSTAL", "PROVINCE", "COUNTRY", "APPROXIMATED"]
    source: Literal["address", "ip"]
    coverage: Literal["FULL", "PARTIAL", "STATE_ONLY"]
    address_used: Address
    jurisdictions: list[Jurisdiction]

@final
class JurisdictionTax:
    """One line's tax in one jurisdiction, unrounded; amounts in major units."""

    code: str
    name: str
    level: str
    tax_type: str
    authority: str
    rate_type: str
    rule_id: int
    rate: Decimal
    taxable_base: Decimal
    tax: Decimal
    fee: Decimal
    note: str
    sourced_from: Literal["DESTINATION", "ORIGIN"]

@final
class LineTax:
    """One line of a calculation; amounts in major units, the tax rounded."""

    product: str
    tax_code: str
    quantity: int
    amount_excluding_tax: Decimal
    tax: Decimal
    amount_including_tax: Decimal
    jurisdictions: list[JurisdictionTax]

@final
class Calculation:
    """The answer for one sale; amounts in major units."""

    currency: str
    tax_included: bool
    lines: list[LineTax]
    total_tax: Decimal
    total_excluding_tax: Decimal
    total_including_tax: Decimal
    effective_rate: Decimal
    zero_reason: str | None
    coverage: Literal["FULL", "PARTIAL", "STATE_ONLY"]
    # None while every input of the table the answer used is within its horizon; else the
    # STALE_TABLE note naming the input past it (coverage is then at most PARTIAL).
    stale_table: str | None
    sourcing: Literal["DESTINATION", "ORIGIN", "MODIFIED_ORIGIN", "ORIGIN_WITH_USE_TAX"]
    rounding: Literal["LINE", "INVOICE"]
    table_hash: str
    location: Location

@final
class Source:
    """One input of a table's build."""

    kind: str
    name: str
    sha256: str
    rows_read: int
    rows_skipped: int
    period: str
    # The last day the input is known to hold what is in force; None when it makes no
    # claim that ages (IP ranges).
    horizon: datetime.date | None

@final
class TableInfo:
    """A table's header, sources and counts; str() is `levy info`'s text."""

    hash: str
    format_version: int
    build_time: int
    size: int
    sources: list[Source]
    jurisdictions: int
    rules: int
    tax_codes: int
    categories: int
    holidays: int
    zip_codes: int
    zip4_ranges: int
    street_ranges: int
    regions: int
    ipv4_ranges: int
    ipv6_ranges: int

@final
class RegionCoverage:
    """What a table knows of a US state or Canadian province."""

    country: str
    region: str
    name: str
    levels: list[str]
    coverage: Literal["FULL", "PARTIAL", "STATE_ONLY"]

@final
class Table:
    """A levy rate table: memory-mapped, verified, immutable, shareable between threads."""

    @staticmethod
    def open(path: _StrPath) -> Table:
        """Open a table file (mapped; hash and archive verified). Raises TableError."""
    @staticmethod
    def default() -> Table:
        """The table embedded in levy (state-level US rates, some local rates, Canada,
        VAT countries)."""
    @property
    def hash(self) -> str:
        """Content hash (BLAKE3), hex."""
    @property
    def path(self) -> pathlib.Path | None:
        """The file opened, or None for the embedded default."""
    def info(self) -> TableInfo:
        """Header, sources and counts."""
    def coverage(self) -> list[RegionCoverage]:
        """Per US state and Canadian province: levels named, region-level coverage."""
    def categories(self) -> list[str]:
        """The product categories the table knows."""
    def tax_codes(self) -> list[str]:
        """The product tax codes the table knows."""
    def resolve(
        self,
        postal_code: str | None = None,
        province: str | None = None,
        country: str = "US",
        *,
        city: str | None = None,
        street: str | None = None,
        date: _DateLike | None = None,
    ) -> Location:
        """Resolve an address on a day (today by default). Raises ResolveError."""
    def calculate(
        self,
        lines: Line | str | Iterable[Line | str],
        *,
        postal_code: str | None = None,
        province: str | None = None,
        country: str = "US",
        city: str | None = None,
        street: str | None = None,
        date: _DateLike | None = None,
        currency: str = "USD",
        tax_included: bool = False,
        exempt: bool = False,
        rounding: Literal["line", "invoice"] = "line",
        origin_postal_code: str | None = None,
        origin_province: str | None = None,
        origin_country: str | None = None,
        origin_city: str | None = None,
        origin_street: str | None = None,
        ip: str | None = None,
        ip_mode: Literal["strict", "zero", "approximate", "best_effort"] = "strict",
        delivery: bool = False,
        seller_sales: Decimal | str | int | None = None,
        exchange_rate: Decimal | str | int | None = None,
        strict: bool = False,
    ) -> Calculation:
        """Calculate one sale through levy's front door, as `levy calc` does: the
        address first, the IP address when no address below the country is given or the
        address fails. Raises ResolveError or CalculationError, each with `kind`; with
        `strict=True` a coverage short of FULL raises CalculationError of kind
        COVERAGE_NOT_FULL."""
    @overload
    def calculate_batch(
        self,
        data: _ArrowData,
        *,
        jurisdictions: Literal[False] = False,
        keep: str | Sequence[str] | None = None,
        threads: int | None = None,
        strict: bool = False,
        default_date: _DateLike | Literal["today"] | None = None,
    ) -> pyarrow.Table: ...
    @overload
    def calculate_batch(
        self,
        data: _ArrowData,
        *,
        jurisdictions: Literal[True],
        keep: str | Sequence[str] | None = None,
        threads: int | None = None,
        strict: bool = False,
        default_date: _DateLike | Literal["today"] | None = None,
    ) -> tuple[pyarrow.Table, pyarrow.Table]: ...
    @overload
    def calculate_batch(
        self,
        data: _ArrowData,
        *,
        jurisdictions: bool,
        keep: str | Sequence[str] | None = None,
        threads: int | None = None,
        strict: bool = False,
        default_date: _DateLike | Literal["today"] | None = None,
    ) -> pyarrow.Table | tuple[pyarrow.Table, pyarrow.Table]: ...
    @overload
    def batch_schema(
        self,
        schema: _ArrowSchema,
        *,
        jurisdictions: Literal[False] = False,
        keep: str | Sequence[str] | None = None,
        default_date: _DateLike | Literal["today"] | None = None,
    ) -> pyarrow.Schema: ...
    @overload
    def batch_schema(
        self,
        schema: _ArrowSchema,
        *,
        jurisdictions: Literal[True],
        keep: str | Sequence[str] | None = None,
        default_date: _DateLike | Literal["today"] | None = None,
    ) -> tuple[pyarrow.Schema, pyarrow.Schema]: ...
    @staticmethod
    def batch_columns() -> list[str]:
        """The input columns calculate_batch reads."""

@final
class BadRow:
    file: str
    line: int
    message: str

@final
class Conflict:
    kind: str
    file: str
    detail: str

@final
class BuildSummary:
    """What a build did; str() is `levy build`'s summary."""

    path: pathlib.Path
    size: int
    table_hash: str
    build_time: int
    bad_rows: list[BadRow]
    conflicts: list[Conflict]
    repaired_rows: int
    notes: list[str]

@final
class JurisdictionChange:
    code: str
    name: str
    level: str

@final
class RuleChange:
    jurisdiction: str
    tax_code: str
    interval: str
    old: str | None
    new: str | None

@final
class ZoneChange:
    place: str
    old: list[str]
    new: list[str]

@final
class Diff:
    """What changed between two tables; str() is `levy diff`'s text."""

    jurisdictions_added: list[JurisdictionChange]
    jurisdictions_removed: list[JurisdictionChange]
    rules: list[RuleChange]
    zips: list[ZoneChange]
    streets: list[ZoneChange]
    ip_ranges: list[ZoneChange]
    @property
    def is_empty(self) -> bool: ...
    def to_json(self) -> str:
        """`levy diff --json`'s text."""

_Paths = _StrPath | Sequence[_StrPath]

def build(
    out: _StrPath,
    *,
    usps_zips: bool = False,
    curated: bool | _StrPath | None = None,
    strict: bool = False,
    build_time: int | None = None,
    zip5: _Paths = ...,
    sst_rates: _Paths = ...,
    sst_boundaries: _Paths = ...,
    cdtfa: _Paths = ...,
    zip_county: _Paths = ...,
    ip_mmdb: _Paths = ...,
    ip_csv: _Paths = ...,
) -> BuildSummary:
    """Build a table from published files into `out`, the inputs layered in the order the
    keywords are written. Raises BuildError."""

def diff(old: Table | _StrPath, new: Table | _StrPath) -> Diff:
    """What changed from one table to another."""

@final
class ArrowBatches:
    """Arrow record batches with __arrow_c_stream__ (what pyarrow.table() reads)."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> Any: ...
    def __arrow_c_schema__(self) -> Any: ...
    def __len__(self) -> int: ...

def _panic_for_tests(message: str) -> None:
    """Panics inside levy's panic boundary (raises InternalError); for the tests only."""
