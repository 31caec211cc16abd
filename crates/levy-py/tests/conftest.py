"""Shared fixtures: the shared ZIP5 data, a table built from it once per session, the
`levy` binary to compare with, and random sales drawn from the data."""

from __future__ import annotations

import csv
import datetime as dt
import os
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

import levy_tax as levy

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]  # the repository: crates/levy-py/tests -> .
SHARED = Path(os.environ.get("LEVY_SHARED_DATA", ROOT.parent / "shared" / "data"))
ZIP5 = SHARED / "zip5-rates-2025-12"
IN_CI = os.environ.get("CI") == "true"


def need(condition: bool, why: str) -> None:
    """Skips the test without `condition`; in CI, fails instead: CI has everything."""
    if condition:
        return
    if IN_CI:
        pytest.fail(f"{why} (CI=true: CI must have it)")
    pytest.skip(why)


@pytest.fixture(scope="session")
def default_table() -> levy.Table:
    return levy.Table.default()


@pytest.fixture(scope="session")
def zip5_rows() -> list[tuple[str, str]]:
    """(state, ZIP) of every row of the shared ZIP5 files."""
    need(ZIP5.is_dir(), f"the shared ZIP5 files are not at {ZIP5}")
    rows = []
    for f in sorted(ZIP5.glob("*.csv")):
        with f.open(newline="") as fh:
            for r in csv.DictReader(fh):
                rows.append((r["State"], r["ZipCode"].zfill(5)))
    return rows


@pytest.fixture(scope="session")
def zip5_table_path(tmp_path_factory, zip5_rows) -> Path:
    """A table built once per session from the shared ZIP5 files with levy_tax.build."""
    out = tmp_path_factory.mktemp("tables") / "zip5.levy"
    summary = levy.build(out, zip5=ZIP5)
    assert summary.bad_rows == []
    assert out.exists() and out.stat().st_size == summary.size
    return out


@pytest.fixture(scope="session")
def zip5_table(zip5_table_path) -> levy.Table:
    return levy.Table.open(zip5_table_path)


@pytest.fixture(scope="session")
def levy_bin() -> Path:
    """The `levy` binary (LEVY_BIN, or the workspace's debug build)."""
    path = Path(os.environ.get("LEVY_BIN", ROOT / "target" / "debug" / "levy"))
    need(path.is_file(), f"no levy binary at {path}: cargo build -p levy-cli (or set LEVY_BIN)")
    return path


@pytest.fixture(scope="session")
def jsonl_mode(levy_bin) -> bool:
    """Whether this `levy calc` reads JSON Lines (`--jsonl`)."""
    help_text = subprocess.run(
        [levy_bin, "calc", "--help"], capture_output=True, text=True, check=True
    ).stdout
    return "--jsonl" in help_text


@dataclass
class Sale:
    """One random one-line sale, in the fields both `levy calc` and levy_tax take."""

    postal_code: str
    province: str | None
    date: dt.date
    cents: int
    quantity: int
    category: str
    exempt: bool = False
    tax_included: bool = False
    rounding: str = "line"
    origin_postal_code: str | None = None
    origin_province: str | None = None

    @property
    def line(self) -> str:
        sign = "-" if self.cents < 0 else ""
        c = abs(self.cents)
        return f"{sign}{c // 100}.{c % 100:02d}x{self.quantity}:{self.category}"

    def cli_object(self) -> dict:
        """The sale as a `levy calc --jsonl` object (the flags' long names)."""
        o: dict = {
            "postal_code": self.postal_code,
            "date": self.date.isoformat(),
            "lines": [self.line],
        }
        if self.province:
            o["province"] = self.province
        if self.exempt:
            o["exempt"] = True
        if self.tax_included:
            o["tax_included"] = True
        if self.rounding != "line":
            o["rounding"] = self.rounding
        if self.origin_postal_code:
            o["origin_postal_code"] = self.origin_postal_code
        if self.origin_province:
            o["origin_province"] = self.origin_province
        return o

    def cli_args(self) -> list[str]:
        args = ["--postal-code", self.postal_code, "--date", self.date.isoformat()]
        args += ["--line", self.line]
        if self.province:
            args += ["--province", self.province]
        if self.exempt:
            args.append("--exempt")
        if self.tax_included:
            args.append("--tax-included")
        if self.rounding != "line":
            args += ["--rounding", self.rounding]
        if self.origin_postal_code:
            args += ["--origin-postal-code", self.origin_postal_code]
        if self.origin_province:
            args += ["--origin-province", self.origin_province]
        return args


def random_sales(
    n: int, zip_rows: list[tuple[str, str]], categories: list[str], seed: int = 42
) -> list[Sale]:
    """`n` sales over the ZIPs of `zip_rows`: most plain, some exempt, tax-included,
    invoice-rounded or shipped from a place in the same state, and a few bad ones (a ZIP
    that is not one, a ZIP in another state, a negative amount, an unknown category)."""
    rng = random.Random(seed)
    by_state: dict[str, list[str]] = {}
    for st, z in zip_rows:
        by_state.setdefault(st, []).append(z)
    states = sorted(by_state)
    start = dt.date(2025, 1, 1)
    out = []
    for _ in range(n):
        st, z = rng.choice(zip_rows)
        s = Sale(
            postal_code=z,
            province=st if rng.random() < 0.3 else None,
            date=start + dt.timedelta(days=rng.randrange(0, 3 * 365)),
            cents=rng.choice([rng.randrange(1, 10_000), rng.randrange(1, 10_000_000)]),
            quantity=rng.choice([1, 1, 1, 2, 3, 12]),
            category=rng.choice(categories),
        )
        r = rng.random()
        if r < 0.04:
            s.exempt = True
        elif r < 0.08:
            s.tax_included = True
        elif r < 0.12:
            s.rounding = "invoice"
        elif r < 0.20:
            s.origin_postal_code = rng.choice(by_state[st])
            s.origin_province = st if rng.random() < 0.5 else None
        bad = rng.random()
        if bad < 0.01:
            s.postal_code = rng.choice(["00000", "99999", "ABCDE", "1234"])
        elif bad < 0.02:
            s.province = rng.choice([x for x in states if x != st])
        elif bad < 0.025:
            s.cents = -s.cents
        elif bad < 0.03:
            s.category = "NOT_A_CATEGORY"
        out.append(s)
    return out


@pytest.fixture(scope="session")
def categories(zip5_table) -> list[str]:
    return zip5_table.categories()
