//! The place's currency, whether a sale in another currency meets an amount in it, and
//! a sale's amounts converted at the exchange rate its caller gives.
//!
//! Rules state their amounts (bands, per-item and per-sale thresholds, holiday caps,
//! per-order fees) in major units of the place's currency: Tennessee's single-article band
//! is $1,600. A sale in another currency read against them would compare yen with dollars.
//! So a sale whose currency is not the place's is calculated as given only while no rule
//! with an amount can touch it (a plain rate is the same fraction in any currency); else it
//! is refused unless its caller gives an exchange rate, and with one its amounts are
//! converted to the place's currency (each rounded to the place's minor unit, half away
//! from zero), the tax is calculated there, and the answer is converted back to the sale's
//! currency: each jurisdiction's unrounded tax, base and fee divided by the rate, each
//! line's tax rounded once ([`crate::round_minor`]), rounding per line.

use rust_decimal::Decimal;

use crate::calc::{Calculation, Delivery, Sale};
use crate::date::Date;
use crate::lookup::JurisdictionId;
use crate::model::load_decimal;
use crate::money::{round_minor, Currency};
use crate::resolve::Location;
use crate::table::Table;

/// The currency of a country on `date` (ISO 3166-1 alpha-2, upper case): its legal tender
/// as ISO 4217 lists it (the ISO 4217 maintenance agency's list one, "Current currency &
/// funds code list", as of 2026-01-01), for the countries levy's data covers and the US
/// territories addressed by ZIP. `None` for a country not listed, or a day before its
/// currency was one levy knows. Croatia's euro from 2023-01-01 (Council Decision (EU)
/// 2022/1211) and Bulgaria's from 2026-01-01 (Council Decision (EU) 2025/1407) are dated.
pub fn country_currency(country: &str, date: Date) -> Option<Currency> {
    let euro = |from: (i32, u32, u32)| {
        let since = Date::from_ymd(from.0, from.1, from.2).unwrap_or(Date::MIN);
        (date >= since).then_some("EUR")
    };
    let code = match country {
        "US" | "PR" | "GU" | "VI" | "AS" | "MP" | "UM" => "USD",
        "CA" => "CAD",
        "AT" | "BE" | "CY" | "EE" | "FI" | "FR" | "DE" | "GR" | "IE" | "IT" | "LV" | "LT"
        | "LU" | "MT" | "NL" | "PT" | "SK" | "SI" | "ES" => "EUR",
        "HR" => euro((2023, 1, 1))?,
        "BG" => euro((2026, 1, 1)).unwrap_or("BGN"),
        "CZ" => "CZK",
        "DK" => "DKK",
        "HU" => "HUF",
        "PL" => "PLN",
        "RO" => "RON",
        "SE" => "SEK",
        "GB" => "GBP",
        "NO" => "NOK",
        "CH" | "LI" => "CHF",
        "IS" => "ISK",
        "AU" => "AUD",
        "NZ" => "NZD",
        "JP" => "JPY",
        "SG" => "SGD",
        "ZA" => "ZAR",
        "KR" => "KRW",
        "MX" => "MXN",
        "AE" => "AED",
        "SA" => "SAR",
        "IL" => "ILS",
        "TR" => "TRY",
        _ => return None,
    };
    Currency::from_code(code)
}

/// Whether a rule with an amount in the place's currency can touch `sale` as `calc`
/// answered it: a rule of a jurisdiction of the answer, in force on the sale's day, for a
/// line's code or one it descends from, with a band, a unit range, a fee or a per-sale
/// threshold; a holiday with a price cap in force there that day; or a per-order fee of the
/// place's state for a retail delivery.
pub(crate) fn meets_an_amount<D>(
    table: &Table<D>,
    location: &Location,
    sale: &Sale,
    delivery: Option<&Delivery>,
    calc: &Calculation,
) -> bool {
    let date = sale.date;
    let mut seen: Vec<JurisdictionId> = Vec::new();
    for j in calc.lines.iter().flat_map(|l| &l.jurisdictions) {
        if seen.contains(&j.jurisdiction) {
            continue;
        }
        seen.push(j.jurisdiction);
        let amounts = table.rules_of(j.jurisdiction).any(|(_, rule)| {
            let (from, to) = rule.interval();
            from <= date
                && date <= to
                && !(rule.is_plain() && rule.sale_condition().is_none())
                && sale
                    .lines
                    .iter()
                    .any(|l| table.tax_code_within(l.tax_code, rule.tax_code()))
        });
        if amounts {
            return true;
        }
    }
    let region = table.location_region(location);
    let country = location.country().as_bytes();
    let capped_holiday = table.data().holidays.iter().any(|h| {
        &h.country[..] == country
            && h.region.as_str() == region
            && h.from.to_native() <= date.0
            && date.0 <= h.to.to_native()
            && load_decimal(&h.max_unit) != Decimal::MAX
    });
    let fee = delivery.is_some_and(|d| d.retail)
        && table
            .data()
            .fees
            .iter()
            .any(|f| f.region.as_str() == region && f.from.to_native() <= date.0);
    capped_holiday || fee
}

/// Converts an amount in minor units of one currency to another at `rate` (one unit of
/// `from` in `to`), unrounded.
fn convert(minor: Decimal, from: Currency, to: Currency, rate: Decimal) -> Decimal {
    to.to_minor(from.to_major(minor) * rate)
}

/// `sale`'s lines and delivery in `place`'s currency at `rate` (one unit of the sale's
/// currency in the place's), written into `out` (its vectors reused): each amount rounded
/// to a whole minor unit of `place`.
pub(crate) fn converted_sale(
    sale: &Sale,
    place: Currency,
    rate: Decimal,
    delivery: Option<&Delivery>,
    out: &mut Sale,
) -> Option<Delivery> {
    out.clone_from(sale);
    out.currency = place;
    for line in &mut out.lines {
        line.amount = round_minor(convert(line.amount, sale.currency, place, rate));
    }
    delivery.map(|d| Delivery {
        retail: d.retail,
        seller_sales_previous_year: d.seller_sales_previous_year.map(|s| s * rate),
    })
}

/// `calc`, calculated on the converted `sale`'s lines in the place's currency, answered
/// in `sale`'s currency at `rate`: each entry's base, tax and fee divided by the rate
/// (kept to 10 decimal places of the minor unit), each line's tax the sum of its entries'
/// rounded once (amounts excluding tax), or its given amount less its amount excluding
/// tax converted back and rounded (amounts including tax); totals the sums of the lines;
/// rounding per line.
pub(crate) fn answer_in_sale_currency(calc: &mut Calculation, sale: &Sale, rate: Decimal) {
    let place = calc.currency;
    let back = |minor: Decimal| {
        sale.currency
            .to_minor(place.to_major(minor) / rate)
            .round_dp(10)
            .normalize()
    };
    let (mut tax, mut excl, mut incl) = (Decimal::ZERO, Decimal::ZERO, Decimal::ZERO);
    for (line, given) in calc.lines.iter_mut().zip(&sale.lines) {
        let mut due = Decimal::ZERO;
        for j in &mut line.jurisdictions {
            j.taxable_base = back(j.taxable_base);
            j.tax_due = back(j.tax_due);
            j.fee = back(j.fee);
            due += j.tax_due;
        }
        let amount = if given.per_unit {
            given.amount * Decimal::from(given.quantity)
        } else {
            given.amount
        };
        if sale.tax_included {
            line.amount_including_tax = amount;
            line.amount_excluding_tax = round_minor(back(line.amount_excluding_tax)).min(amount);
            line.tax = amount - line.amount_excluding_tax;
        } else {
            line.amount_excluding_tax = amount;
            line.tax = round_minor(due);
            line.amount_including_tax = amount + line.tax;
        }
        tax += line.tax;
        excl += line.amount_excluding_tax;
        incl += line.amount_including_tax;
    }
    calc.currency = sale.currency;
    calc.total_tax = tax;
    calc.total_excluding_tax = excl;
    calc.total_including_tax = incl;
    calc.rounding = crate::kinds::Rounding::Line;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countries_have_their_iso_4217_currency_on_the_day() {
        let day = |y, m, d| Date::from_ymd(y, m, d).unwrap();
        assert_eq!(country_currency("US", day(2026, 3, 1)), Some(Currency::USD));
        assert_eq!(
            country_currency("JP", day(2026, 3, 1)).map(|c| c.code()),
            Some("JPY")
        );
        assert_eq!(
            country_currency("BG", day(2025, 12, 31)).map(|c| c.code()),
            Some("BGN")
        );
        assert_eq!(
            country_currency("BG", day(2026, 1, 1)).map(|c| c.code()),
            Some("EUR")
        );
        // The kuna is no longer an ISO 4217 code levy knows.
        assert_eq!(country_currency("HR", day(2022, 12, 31)), None);
        assert_eq!(
            country_currency("HR", day(2023, 1, 1)).map(|c| c.code()),
            Some("EUR")
        );
        assert_eq!(country_currency("ZZ", day(2026, 1, 1)), None);
    }

    #[test]
    fn amounts_convert_through_major_units() {
        let jpy = Currency::from_code("JPY").unwrap();
        // 10,000 yen at 0.0067 dollars a yen is $67.00, 6,700 cents.
        let rate = Decimal::new(67, 4);
        assert_eq!(
            convert(Decimal::from(10_000), jpy, Currency::USD, rate),
            Decimal::from(6_700)
        );
        // And back: 469 cents ($4.69) are 700 yen.
        let back = jpy.to_minor(Currency::USD.to_major(Decimal::from(469)) / rate);
        assert_eq!(back.round_dp(10).normalize(), Decimal::from(700));
    }
}
