//! Small constructors for the values every calculation test spells out.

use levy_core::{
    Address, AutomaticTax, Currency, Customer, Date, Decimal, Rounding, Sale, SaleLine,
};

/// A decimal from its text (`d("0.0925")`); panics on anything else.
pub fn d(s: &str) -> Decimal {
    s.parse()
        .unwrap_or_else(|e| panic!("not a decimal: {s:?}: {e}"))
}

/// The day `y-m-d`; panics when it does not exist.
pub fn ymd(y: i32, m: u32, d: u32) -> Date {
    Date::from_ymd(y, m, d).unwrap_or_else(|| panic!("not a day: {y}-{m}-{d}"))
}

/// 2026-03-01, the day of most sales in the tests.
pub fn march_2026() -> Date {
    ymd(2026, 3, 1)
}

/// 2026-03-01T00:00:00Z in Unix seconds (the tables' build time where one is set, and the
/// `transacted_at` of the C tests).
pub const MARCH_2026_UNIX: i64 = 1_772_323_200;

/// A US address with only a ZIP code.
pub fn us_zip(zip: &str) -> Address {
    Address {
        postal_code: zip.into(),
        country: "US".into(),
        ..Default::default()
    }
}

/// A sale of `lines` in USD on `date`: amounts exclude tax, the buyer is a consumer, taxes
/// are rounded line by line.
pub fn sale(lines: Vec<SaleLine>, date: Date) -> Sale {
    Sale {
        currency: Currency::USD,
        tax_included: false,
        customer: Customer::default(),
        automatic_tax: AutomaticTax::Auto,
        date,
        origin_country: None,
        rounding: Rounding::Line,
        lines,
    }
}
