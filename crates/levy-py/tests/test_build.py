"""levy_tax.build and levy_tax.diff: rebuilding and comparing tables from a notebook."""

from __future__ import annotations

import shutil
from decimal import Decimal

import pytest

import levy_tax as levy
from conftest import ZIP5


def test_build_is_deterministic(zip5_table_path, tmp_path):
    again = levy.build(tmp_path / "again.levy", zip5=[ZIP5])
    assert again.table_hash == levy.Table.open(zip5_table_path).hash
    assert again.path == tmp_path / "again.levy"
    assert again.build_time == 1764547200  # 2025-12-01, the inputs' period: not the clock
    assert "table " + again.table_hash in str(again)
    assert again.repaired_rows >= 0 and isinstance(again.notes, list)


def test_inputs_layer_in_the_order_given(tmp_path, zip5_table):
    """A month with two states' files changed: the diff names the ZIPs and rules."""
    older = tmp_path / "older"
    older.mkdir()
    for f in sorted(ZIP5.glob("*.csv")):
        if f.name.startswith(("TAXRATES_ZIP5_TN", "TAXRATES_ZIP5_DE")):
            continue
        shutil.copy(f, older / f.name)
    old = levy.build(tmp_path / "old.levy", zip5=older)
    d = levy.diff(tmp_path / "old.levy", zip5_table)
    assert not d.is_empty
    assert any(z.place.startswith("372") for z in d.zips)  # Nashville's ZIPs gained local rates
    assert d.jurisdictions_added and not d.jurisdictions_removed
    assert "jurisdictions added" in str(d) or str(d)
    assert '"zips"' in d.to_json()
    same = levy.diff(zip5_table, zip5_table)
    assert same.is_empty and str(same).strip() == "no changes"
    assert old.table_hash != zip5_table.hash


def test_build_without_curated_rules(tmp_path):
    s = levy.build(tmp_path / "bare.levy", zip5=ZIP5 / "TAXRATES_ZIP5_TN202512.csv", curated=False)
    t = levy.Table.open(s.path)
    c = t.calculate("100", postal_code="37203", date="2026-03-02")
    assert c.total_tax == Decimal("9.25")  # the ZIP5 file's 9.25%, without curated rules
    assert t.info().tax_codes < levy.Table.default().info().tax_codes


def test_build_errors(tmp_path):
    with pytest.raises(levy.BuildError, match="nope"):
        levy.build(tmp_path / "x.levy", zip5=tmp_path / "nope")
    with pytest.raises(TypeError, match="unknown input 'zip4'|unknown input \"zip4\""):
        levy.build(tmp_path / "x.levy", zip4=ZIP5)
    with pytest.raises(ValueError, match="no inputs"):
        levy.build(tmp_path / "x.levy")
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,"
        "EstimatedCityRate,EstimatedSpecialRate,RiskLevel\nTN,37203,X,abc,0.07,0,0,0,0\n"
    )
    s = levy.build(tmp_path / "lenient.levy", zip5=bad)
    assert len(s.bad_rows) == 1 and s.bad_rows[0].line == 2
    with pytest.raises(levy.BuildError, match="strict"):
        levy.build(tmp_path / "strict.levy", zip5=bad, strict=True)
    assert not (tmp_path / "strict.levy").exists()


def test_diff_refuses_what_is_not_a_table(tmp_path, zip5_table):
    p = tmp_path / "x.levy"
    p.write_bytes(b"nope")
    with pytest.raises(levy.TableError):
        levy.diff(p, zip5_table)
    with pytest.raises(TypeError, match="levy_tax.Table or the path"):
        levy.diff(42, zip5_table)
