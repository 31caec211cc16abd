"""One sale at a time: results, argument forms, and errors that say what to fix."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

import levy_tax as levy

DAY = dt.date(2026, 3, 2)


def test_a_nashville_sale_on_the_default_table(default_table):
    c = default_table.calculate(
        ["100.00", "25.00x2:CLOTHING"], postal_code="37203", province="TN", date=DAY
    )
    assert isinstance(c, levy.Calculation)
    assert c.currency == "USD"
    assert c.total_excluding_tax == Decimal("125.00")
    # Tennessee's 7% state rate, Davidson County's 2.25% and its 0.5% transit surcharge
    # (data/local/us/TN.toml), line by line: 9.75 + 2.4375 -> 2.44 = 12.19. Every city of
    # Davidson levies the county's rate: the answer is complete.
    assert c.total_tax == Decimal("12.19")
    assert c.total_including_tax == Decimal("137.19")
    assert c.coverage == "FULL"
    assert c.table_hash == default_table.hash
    assert [l.product for l in c.lines] == ["GENERAL_MERCHANDISE", "CLOTHING"]
    assert c.lines[1].quantity == 2
    state = c.lines[0].jurisdictions[0]
    assert (state.code, state.level, state.rate, state.note) == ("47", "STATE", Decimal("0.07"), "RATE_FRAC")
    assert state.tax == Decimal("7")
    assert c.location.address_used.province == "TN"
    assert c.location.precision == "POSTAL"
    assert "12.19" in repr(c)


def test_line_forms_agree(default_table):
    kw = dict(postal_code="38103", date=DAY)
    a = default_table.calculate("19.99x2:CLOTHING", **kw)
    b = default_table.calculate([levy.Line(Decimal("19.99"), 2, "CLOTHING")], **kw)
    c = default_table.calculate([levy.Line(1999, 2, "clothing")], **kw)  # int: cents
    d = default_table.calculate(levy.Line("19.99", 2, tax_code=a.lines[0].tax_code), **kw)
    assert a.total_tax == b.total_tax == c.total_tax == d.total_tax == Decimal("1.40")
    assert repr(levy.Line(1999, 2, "CLOTHING")) == "Line(1999, quantity=2, category='CLOTHING')"


def test_amounts_are_exact(default_table):
    c = default_table.calculate("0.01", postal_code="38103", date=DAY)
    assert c.total_tax == Decimal("0.00")
    assert c.lines[0].jurisdictions[0].tax == Decimal("0.0007")
    big = default_table.calculate("123456789012.34", postal_code="38103", date=DAY)
    assert big.total_excluding_tax == Decimal("123456789012.34")
    assert big.lines[0].jurisdictions[0].tax == Decimal("8641975230.8638")


def test_dates_in_every_form(default_table):
    kw = dict(postal_code="38103")
    want = default_table.calculate("10", date="2026-03-02", **kw).total_tax
    assert default_table.calculate("10", date=DAY, **kw).total_tax == want
    assert default_table.calculate("10", date=dt.datetime(2026, 3, 2, 23, 0), **kw).total_tax == want
    east = dt.timezone(dt.timedelta(hours=5))
    # 03:00 on the 3rd at +05:00 is 22:00 on the 2nd in UTC.
    c = default_table.calculate("10", date=dt.datetime(2026, 3, 3, 3, 0, tzinfo=east), **kw)
    assert c.total_tax == want
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        default_table.calculate("10", date="03/02/2026", **kw)
    with pytest.raises(TypeError, match="date"):
        default_table.calculate("10", date=20260302, **kw)


def test_exempt_and_tax_included(default_table):
    kw = dict(postal_code="38103", date=DAY)
    ex = default_table.calculate("100", exempt=True, **kw)
    assert ex.total_tax == 0 and ex.zero_reason == "CUSTOMER_EXEMPT"
    inc = default_table.calculate("107.00", tax_included=True, **kw)
    assert inc.total_including_tax == Decimal("107.00")
    assert inc.total_excluding_tax + inc.total_tax == Decimal("107.00")
    assert inc.tax_included


def test_other_countries_and_currencies(default_table):
    c = default_table.calculate("100", country="DE", currency="EUR", date=DAY)
    assert c.currency == "EUR" and c.total_tax == Decimal("19.00")
    jp = default_table.calculate(levy.Line(1000), country="JP", currency="JPY", date=DAY)
    assert jp.total_tax == Decimal("100")
    with pytest.raises(levy.CalculationError, match="JPY has at most 0 decimal places"):
        default_table.calculate("10.5", country="JP", currency="JPY", date=DAY)


def test_resolve(default_table):
    loc = default_table.resolve("38103", date=DAY)
    assert loc.address_used.province == "TN"
    assert loc.address_used.city  # the ZIP's city, from the table
    assert [j.level for j in loc.jurisdictions][0] == "STATE"
    assert loc.coverage == "STATE_ONLY" and loc.status == "POSTAL_ONLY"
    with pytest.raises(levy.ResolveError) as e:
        default_table.resolve("38103", "GA", date=DAY)
    assert e.value.error_type == "ZIP_STATE_MISMATCH"
    assert str(e.value) == "postal code 38103 is in TN, not in GA (ZIP_STATE_MISMATCH)"
    assert isinstance(e.value, ValueError) and isinstance(e.value, levy.LevyError)
    with pytest.raises(levy.ResolveError) as e:
        default_table.resolve("ABCDE", date=DAY)
    assert e.value.error_type == "MALFORMED_ADDRESS"
    with pytest.raises(levy.ResolveError) as e:
        default_table.resolve(country="USA", date=DAY)
    assert e.value.error_type == "INVALID_COUNTRY_CODE"


def test_bad_arguments_say_what_to_fix(default_table):
    kw = dict(postal_code="38103", date=DAY)
    with pytest.raises(TypeError, match="floats cannot hold cents exactly"):
        default_table.calculate(levy.Line(19.99), **kw)
    with pytest.raises(levy.CalculationError, match="must not be negative"):
        default_table.calculate("-1.00", **kw)
    with pytest.raises(levy.CalculationError, match="must not be negative"):
        default_table.calculate(levy.Line(-100), **kw)
    with pytest.raises(levy.CalculationError, match="unknown product category \"NOPE\""):
        default_table.calculate("1:NOPE", **kw)
    with pytest.raises(levy.CalculationError, match="quantity 0"):
        default_table.calculate(levy.Line(100, 0), **kw)
    with pytest.raises(levy.CalculationError, match="unknown currency"):
        default_table.calculate("1", currency="XYZ", **kw)
    with pytest.raises(ValueError, match="expected line or invoice"):
        default_table.calculate("1", rounding="nearest", **kw)
    with pytest.raises(ValueError, match="at least one line"):
        default_table.calculate([], **kw)
    with pytest.raises(TypeError, match="levy_tax.Line or text"):
        default_table.calculate([19.99], **kw)
    with pytest.raises(ValueError, match="not both"):
        levy.Line(1, category="CLOTHING", tax_code="X")
    with pytest.raises(ValueError, match="is not a decimal amount"):
        default_table.calculate("abc", **kw)


def test_origin_sourcing(zip5_table):
    """Texas sources intrastate sales at the origin: Barry's county, Austin's city use
    tax up to the 2% cap (the README's example)."""
    c = zip5_table.calculate("100.00", postal_code="78701", origin_postal_code="75102", date=DAY)
    assert c.sourcing == "ORIGIN_WITH_USE_TAX"
    assert {j.sourced_from for j in c.lines[0].jurisdictions} == {"ORIGIN", "DESTINATION"}
    plain = zip5_table.calculate("100.00", postal_code="78701", date=DAY)
    assert plain.sourcing == "DESTINATION"
    with pytest.raises(levy.ResolveError, match="origin address"):
        zip5_table.calculate("1", postal_code="78701", origin_postal_code="ABCDE", date=DAY)


def test_invoice_rounding(zip5_table):
    lines = ["0.05", "0.05", "0.05"]
    by_line = zip5_table.calculate(lines, postal_code="30303", date=DAY)
    by_invoice = zip5_table.calculate(lines, postal_code="30303", date=DAY, rounding="invoice")
    assert by_invoice.rounding == "INVOICE" and by_line.rounding == "LINE"
    assert sum(l.tax for l in by_invoice.lines) == by_invoice.total_tax


def test_no_panic_reaches_python():
    """A panic in levy's Rust code comes out as InternalError (an Exception, so that a
    plain `except Exception` catches it), not as pyo3's PanicException (a BaseException)."""
    from levy_tax import _levy

    with pytest.raises(levy.InternalError, match="levy panicked.*a bug.*boom") as e:
        _levy._panic_for_tests("boom")
    assert isinstance(e.value, Exception) and isinstance(e.value, levy.LevyError)


def test_a_table_says_when_it_is_stale_and_refuses_a_day_before_it(default_table):
    # Los Angeles 90012 on CDTFA's list effective 2026-01-01: 9.75% of $100.00 = $9.75.
    # The list holds its quarter (levy_build::horizon: to 2026-03-31).
    kw = dict(postal_code="90012", province="CA")
    fresh = default_table.calculate("100.00", date="2026-03-31", **kw)
    assert fresh.total_tax == Decimal("9.75")
    assert fresh.stale_table is None
    stale = default_table.calculate("100.00", date="2026-04-01", **kw)
    assert stale.total_tax == Decimal("9.75")
    assert stale.coverage == "PARTIAL"
    assert stale.stale_table.startswith("STALE_TABLE: cdtfa ca-cdtfa-1-1-26.csv")
    # California's 7.25% begins in the table on 2017-01-01 (data/us-states.toml).
    with pytest.raises(levy.LevyError) as e:
        default_table.calculate("100.00", date="2016-12-31", **kw)
    assert e.value.kind == "DATE_BEFORE_TABLE"
    assert "2017-01-01" in str(e.value)
    cdtfa = [s for s in default_table.info().sources if s.kind == "cdtfa"]
    assert [s.horizon for s in cdtfa] == [dt.date(2026, 3, 31)]
    assert all(s.horizon is None for s in default_table.info().sources if s.kind.startswith("ip-"))
