//! The values the curated files write, read and checked alike in every file: dates,
//! percentages, amounts, rate chains, and the parts of a rule line; and the errors that
//! name the file and key of a bad one.

use levy_core::{BuildError, Date, Decimal, TaxType};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use super::{CuratedError, MAX_AMOUNT};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ChainRow {
    pub(crate) rate: String,
    pub(crate) from: Option<toml::value::Datetime>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PartRow {
    rate: String,
    scale: Option<String>,
    /// A delivery charge's part: taxed in proportion to the sale's taxable goods.
    #[serde(default)]
    proportional: bool,
    band: Option<[String; 2]>,
    units: Option<[String; 2]>,
    fee: Option<String>,
}

/// A rate in force over an interval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Period {
    pub(crate) from: Date,
    pub(crate) to: Date,
    pub(crate) rate: Decimal,
}

/// The rate of a part: the jurisdiction's general rate, or a fixed one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PartRate {
    General,
    Fixed(Decimal),
}

/// One rule line of a curated rule.
#[derive(Clone, Debug)]
pub(crate) struct Part {
    pub(crate) rate: PartRate,
    pub(crate) scale: Decimal,
    pub(crate) proportional: bool,
    pub(crate) band: (Decimal, Option<Decimal>),
    pub(crate) units: (Decimal, Option<Decimal>),
    pub(crate) fee: Decimal,
}

pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(
    file: &str,
    text: &str,
) -> Result<T, CuratedError> {
    toml::from_str(text).map_err(|e| CuratedError::Syntax {
        file: file.to_string(),
        message: e.to_string().trim_end().to_string(),
    })
}

pub(crate) fn invalid(
    file: &str,
    key: impl Into<String>,
    message: impl Into<String>,
) -> CuratedError {
    CuratedError::Invalid {
        file: file.to_string(),
        key: key.into(),
        message: message.into(),
    }
}

pub(crate) fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// A TOML date (no time, no offset) as a [`Date`].
pub(crate) fn date(file: &str, key: &str, d: &toml::value::Datetime) -> Result<Date, CuratedError> {
    match (d.date, d.time, d.offset) {
        (Some(day), None, None) => Date::from_ymd(
            i32::from(day.year),
            u32::from(day.month),
            u32::from(day.day),
        )
        .ok_or_else(|| invalid(file, key, format!("{d} is not a calendar date"))),
        _ => Err(invalid(
            file,
            key,
            format!("{d} must be a plain date (YYYY-MM-DD)"),
        )),
    }
}

/// A percentage string ("6.25%") as a fraction (0.0625), 0 to 100 percent.
pub(crate) fn percent(file: &str, key: &str, s: &str) -> Result<Decimal, CuratedError> {
    let t = s.trim();
    let Some(number) = t.strip_suffix('%') else {
        return Err(invalid(
            file,
            key,
            format!("{s:?} is not a percentage (write \"6.25%\")"),
        ));
    };
    let p: Decimal = number.trim().parse().map_err(|_| {
        invalid(
            file,
            key,
            format!("{s:?} is not a percentage (write \"6.25%\")"),
        )
    })?;
    if p.is_sign_negative() || p > Decimal::from(100) {
        return Err(invalid(file, key, format!("{s} is outside 0% to 100%")));
    }
    Ok(p / Decimal::from(100))
}

/// A dollar amount string, non-negative and below [`MAX_AMOUNT`].
pub(crate) fn amount(file: &str, key: &str, s: &str) -> Result<Decimal, CuratedError> {
    let d: Decimal = s
        .trim()
        .parse()
        .map_err(|_| invalid(file, key, format!("{s:?} is not an amount in dollars")))?;
    if d.is_sign_negative() || d > Decimal::from(MAX_AMOUNT) {
        return Err(invalid(
            file,
            key,
            format!("{s} is outside 0 to {MAX_AMOUNT}"),
        ));
    }
    Ok(d)
}

/// `[low, high]` with `""` for an open upper edge.
fn range(
    file: &str,
    key: &str,
    r: &[String; 2],
) -> Result<(Decimal, Option<Decimal>), CuratedError> {
    let lo = amount(file, key, &r[0])?;
    let hi = if r[1].trim().is_empty() {
        None
    } else {
        Some(amount(file, key, &r[1])?)
    };
    if hi.is_some_and(|h| h < lo) {
        return Err(invalid(
            file,
            key,
            format!("[{}, {}] ends before it starts", r[0], r[1]),
        ));
    }
    Ok((lo, hi))
}

/// A chain of rates, oldest first, into periods.
pub(crate) fn chain(file: &str, key: &str, rows: &[ChainRow]) -> Result<Vec<Period>, CuratedError> {
    if rows.is_empty() {
        return Err(invalid(file, key, "no rates"));
    }
    let mut starts = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let k = format!("{key}[{i}].from");
        let from = match &r.from {
            Some(d) => date(file, &k, d)?,
            None if i == 0 => Date::MIN,
            None => {
                return Err(invalid(
                    file,
                    k,
                    "only the first rate of a chain may omit `from`",
                ))
            }
        };
        if let Some(&prev) = starts.last() {
            if from <= prev {
                return Err(invalid(
                    file,
                    k,
                    "rates must be in date order, oldest first",
                ));
            }
        }
        starts.push(from);
    }
    let mut periods = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let to = match starts.get(i + 1) {
            Some(next) => Date(next.0 - 1),
            None => Date::MAX,
        };
        periods.push(Period {
            from: starts[i],
            to,
            rate: percent(file, &format!("{key}[{i}].rate"), &r.rate)?,
        });
    }
    Ok(periods)
}

pub(crate) fn optional_interval(
    file: &str,
    key: &str,
    from: &Option<toml::value::Datetime>,
    to: &Option<toml::value::Datetime>,
) -> Result<(Date, Date), CuratedError> {
    let f = match from {
        Some(d) => date(file, &format!("{key}.from"), d)?,
        None => Date::MIN,
    };
    let t = match to {
        Some(d) => date(file, &format!("{key}.to"), d)?,
        None => Date::MAX,
    };
    if f > t {
        return Err(invalid(file, key, "`to` is before `from`"));
    }
    Ok((f, t))
}

pub(crate) fn part(file: &str, key: &str, p: &PartRow) -> Result<Part, CuratedError> {
    let rate = if p.rate.trim() == "general" {
        PartRate::General
    } else {
        PartRate::Fixed(percent(file, &format!("{key}.rate"), &p.rate)?)
    };
    let scale = match &p.scale {
        Some(s) => percent(file, &format!("{key}.scale"), s)?,
        None => Decimal::ONE,
    };
    let band = match &p.band {
        Some(b) => range(file, &format!("{key}.band"), b)?,
        None => (Decimal::ZERO, None),
    };
    let units = match &p.units {
        Some(u) => range(file, &format!("{key}.units"), u)?,
        None => (Decimal::ZERO, None),
    };
    let fee = match &p.fee {
        Some(f) => amount(file, &format!("{key}.fee"), f)?,
        None => Decimal::ZERO,
    };
    Ok(Part {
        rate,
        scale,
        proportional: p.proportional,
        band,
        units,
        fee,
    })
}

pub(crate) fn tax_type(file: &str, key: &str, s: &str) -> Result<TaxType, CuratedError> {
    TaxType::parse(s).ok_or_else(|| {
        invalid(
            file,
            key,
            format!("{s:?} is not one of SALES, USE, VAT, GST"),
        )
    })
}

pub(crate) fn is_country(s: &str) -> bool {
    s.len() == 2 && s.bytes().all(|b| b.is_ascii_uppercase())
}

pub(crate) fn nonempty(file: &str, key: &str, s: &str) -> Result<(), CuratedError> {
    if s.trim().is_empty() {
        Err(invalid(file, key, "must not be empty"))
    } else {
        Ok(())
    }
}

/// What a builder's refusal of the item at `key` of `file` becomes.
pub(crate) fn build_error(file: &str, key: &str) -> impl FnOnce(BuildError) -> CuratedError {
    let (file, key) = (file.to_string(), key.to_string());
    move |source: BuildError| CuratedError::Build { file, key, source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_is_exact_and_bounded() {
        assert_eq!(percent("f", "k", "9.975%").unwrap(), Decimal::new(9975, 5));
        assert!(percent("f", "k", "0.07").is_err());
        assert!(percent("f", "k", "101%").is_err());
        assert!(percent("f", "k", "-1%").is_err());
    }
}
