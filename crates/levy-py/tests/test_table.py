"""Opening tables: the embedded default, files, and files that must be refused."""

from __future__ import annotations

import pickle
import shutil

import pytest

import levy_tax as levy


def test_default_table_describes_itself(default_table):
    t = default_table
    assert len(t.hash) == 64 and int(t.hash, 16) >= 0
    assert t.path is None
    info = t.info()
    assert info.hash == t.hash
    assert info.format_version == levy.TABLE_FORMAT_VERSION
    assert info.size > 1_000_000
    assert info.zip_codes > 40_000 and info.jurisdictions > 50
    assert any(s.kind == "curated" for s in info.sources)
    assert "content hash" in str(info) and t.hash in str(info)
    assert "GENERAL_MERCHANDISE" in t.categories()
    assert "CLOTHING" in t.categories()
    assert t.tax_codes() == sorted(t.tax_codes())


def test_coverage_names_every_state(default_table):
    cov = {(c.country, c.region): c for c in default_table.coverage()}
    assert len([k for k in cov if k[0] == "US"]) >= 51
    tn = cov[("US", "TN")]
    assert tn.coverage == "STATE_ONLY" and "STATE" in tn.levels
    assert cov[("US", "CA")].levels.count("COUNTY") == 1
    assert cov[("US", "DE")].coverage == "FULL"  # no local taxes


def test_open_maps_and_verifies(zip5_table_path, zip5_table):
    t = levy.Table.open(zip5_table_path)
    assert t.hash == zip5_table.hash
    assert t.path == zip5_table_path
    assert str(zip5_table_path) in repr(t)
    assert any(s.kind == "zip5" and s.period == "2025-12" for s in t.info().sources)
    # str paths and PathLike both work
    assert levy.Table.open(str(zip5_table_path)).hash == t.hash


def test_tables_pickle_as_their_path(zip5_table, default_table):
    again = pickle.loads(pickle.dumps(zip5_table))
    assert again.hash == zip5_table.hash and again.path == zip5_table.path
    assert pickle.loads(pickle.dumps(default_table)).hash == default_table.hash


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(levy.TableError, match="cannot read table"):
        levy.Table.open(tmp_path / "nope.levy")


def test_a_file_that_is_not_a_table_is_refused(tmp_path):
    p = tmp_path / "x.levy"
    p.write_bytes(b"PK\x03\x04 this is a zip file, not a table" * 10)
    with pytest.raises(levy.TableError, match="not a levy table"):
        levy.Table.open(p)
    p.write_bytes(b"")
    with pytest.raises(levy.TableError, match="truncated"):
        levy.Table.open(p)


@pytest.mark.parametrize("where", ["header hash", "middle", "last byte"])
def test_a_damaged_table_is_refused(zip5_table_path, tmp_path, where):
    p = tmp_path / "damaged.levy"
    shutil.copy(zip5_table_path, p)
    data = bytearray(p.read_bytes())
    at = {"header hash": 40, "middle": len(data) // 2, "last byte": len(data) - 1}[where]
    data[at] ^= 0x01
    p.write_bytes(bytes(data))
    with pytest.raises(levy.TableError, match="hash mismatch|corrupt") as e:
        levy.Table.open(p)
    assert "rebuild" in str(e.value) or "re-copy" in str(e.value)
    assert isinstance(e.value, levy.LevyError)


def test_a_truncated_table_is_refused(zip5_table_path, tmp_path):
    p = tmp_path / "short.levy"
    p.write_bytes(zip5_table_path.read_bytes()[:100_000])
    with pytest.raises(levy.TableError, match="truncated"):
        levy.Table.open(p)


def test_batch_columns_are_the_cli_flags():
    cols = levy.Table.batch_columns()
    assert cols[0] == "amount"
    for flag in ["postal_code", "province", "country", "city", "street", "date", "currency",
                 "tax_included", "exempt", "origin_postal_code", "origin_province", "rounding"]:
        assert flag in cols
