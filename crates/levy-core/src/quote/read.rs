//! A sale's values written as text, read one way for every front that reads text (`levy
//! calc` and its JSON lines, the Python package and its batch columns): a day, a currency,
//! an amount in major units, a line in `AMOUNT[xQTY][:CATEGORY]` form, an IP mode, a
//! rounding. Each refusal carries its [`QuoteErrorKind`].

use rust_decimal::Decimal;

use super::errors::{InputError, QuoteErrorKind};
use crate::calc::MAX_QUANTITY;
use crate::date::Date;
use crate::kinds::Rounding;
use crate::money::Currency;
use crate::resolve::IpMode;

/// The category a line names when it names none.
pub const DEFAULT_CATEGORY: &str = "GENERAL_MERCHANDISE";

/// A day written `YYYY-MM-DD` ([`Date`]'s `FromStr`).
pub fn date(text: &str) -> Result<Date, InputError> {
    text.parse().map_err(|e: crate::date::DateError| {
        InputError::new(QuoteErrorKind::InvalidDate, e.to_string())
    })
}

/// The currency of an ISO 4217 code, in any case; empty text is the default, USD.
pub fn currency(code: &str) -> Result<Currency, InputError> {
    let code = code.trim();
    if code.is_empty() {
        return Ok(Currency::USD);
    }
    Currency::from_code(&code.to_ascii_uppercase()).ok_or_else(|| {
        InputError::new(
            QuoteErrorKind::UnknownCurrency,
            format!("unknown currency {code:?} (an ISO 4217 code such as USD)"),
        )
    })
}

/// An amount in major units (`19.99`) as minor units of `currency`: refused when negative
/// or finer than the currency's minor unit.
pub fn minor_amount(major: Decimal, currency: Currency) -> Result<Decimal, InputError> {
    let bad = |why: String| InputError::new(QuoteErrorKind::InvalidAmount, why);
    if major.is_sign_negative() && !major.is_zero() {
        return Err(bad(format!(
            "amount {major} is negative: amounts must not be negative"
        )));
    }
    let minor = currency.to_minor(major);
    if !minor.fract().is_zero() {
        return Err(bad(format!(
            "amount {major}: {} has at most {} decimal places",
            currency.code(),
            currency.minor_units()
        )));
    }
    Ok(minor.normalize())
}

/// A quantity as a sale takes it: 1 to [`MAX_QUANTITY`].
pub fn quantity(q: i64) -> Result<u32, InputError> {
    match u32::try_from(q) {
        Ok(q) if (1..=MAX_QUANTITY).contains(&q) => Ok(q),
        _ => Err(InputError::new(
            QuoteErrorKind::InvalidQuantity,
            format!("quantity {q}: must be between 1 and {MAX_QUANTITY}"),
        )),
    }
}

/// A line written `AMOUNT[xQTY][:CATEGORY]` (`19.99x2:CLOTHING`): its amount in major
/// units, its quantity and its category ([`DEFAULT_CATEGORY`] when none is named).
pub fn line_spec(spec: &str) -> Result<(Decimal, u32, &str), InputError> {
    let (head, category) = match spec.split_once(':') {
        Some((h, c)) => (h, c.trim()),
        None => (spec, DEFAULT_CATEGORY),
    };
    let (amount, quantity) = match head.split_once(['x', 'X']) {
        Some((a, q)) => (
            a,
            q.trim().parse::<u32>().map_err(|_| {
                InputError::new(
                    QuoteErrorKind::InvalidQuantity,
                    format!("line {spec:?}: bad quantity {q:?}"),
                )
            })?,
        ),
        None => (head, 1),
    };
    let major: Decimal = amount.trim().parse().map_err(|_| {
        InputError::new(
            QuoteErrorKind::InvalidAmount,
            format!("line {spec:?}: {amount:?} is not a decimal amount"),
        )
    })?;
    Ok((major, quantity, category))
}

/// An IP resolution mode by the interface's name (`strict`, `zero`, `approximate`,
/// `best_effort`); empty text is `strict`.
pub fn ip_mode(text: &str) -> Result<IpMode, InputError> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(IpMode::Strict);
    }
    IpMode::parse(t).ok_or_else(|| {
        InputError::new(
            QuoteErrorKind::InvalidOption,
            format!("unknown IP mode {t:?}: strict, zero, approximate or best_effort"),
        )
    })
}

/// A rounding by name (`line` or `invoice`, any case); empty text is `line`.
pub fn rounding(text: &str) -> Result<Rounding, InputError> {
    if text.trim().is_empty() {
        return Ok(Rounding::Line);
    }
    Rounding::parse(text).ok_or_else(|| {
        InputError::new(
            QuoteErrorKind::InvalidOption,
            format!("rounding {text:?}: expected line or invoice"),
        )
    })
}

/// An exchange rate written as a decimal (`0.0067`: one unit of the sale's currency in the
/// place's), refused unless positive.
pub fn exchange_rate(text: &str) -> Result<Decimal, InputError> {
    let bad = || {
        InputError::new(
            QuoteErrorKind::InvalidExchangeRate,
            format!("exchange rate {text:?}: expected a positive decimal (0.0067)"),
        )
    };
    let rate: Decimal = text.trim().parse().map_err(|_| bad())?;
    if rate <= Decimal::ZERO {
        return Err(bad());
    }
    Ok(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_days_and_amounts_read_as_levy_calc_reads_them() {
        assert_eq!(
            line_spec("19.99x2:CLOTHING").unwrap(),
            (Decimal::new(1999, 2), 2, "CLOTHING")
        );
        assert_eq!(
            line_spec("100").unwrap(),
            (Decimal::from(100), 1, DEFAULT_CATEGORY)
        );
        assert_eq!(
            line_spec("1x0.5").unwrap_err().kind,
            QuoteErrorKind::InvalidQuantity
        );
        assert_eq!(
            line_spec("ten").unwrap_err().kind,
            QuoteErrorKind::InvalidAmount
        );
        let jpy = Currency::from_code("JPY").unwrap();
        assert_eq!(
            minor_amount(Decimal::from(500), jpy),
            Ok(Decimal::from(500))
        );
        assert!(
            minor_amount(Decimal::new(5005, 1), jpy).is_err(),
            "JPY has no minor unit"
        );
        assert!(minor_amount(Decimal::from(-1), Currency::USD).is_err());
        assert_eq!(
            date("2026-02-30").unwrap_err().kind,
            QuoteErrorKind::InvalidDate
        );
        assert_eq!(currency("jpy"), Ok(jpy));
        assert_eq!(
            currency("XXX").unwrap_err().kind,
            QuoteErrorKind::UnknownCurrency
        );
        assert_eq!(
            exchange_rate("0").unwrap_err().kind,
            QuoteErrorKind::InvalidExchangeRate
        );
        assert_eq!(
            quantity(0).unwrap_err().kind,
            QuoteErrorKind::InvalidQuantity
        );
    }
}
