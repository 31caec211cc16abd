//! `data/us-fees.toml`: per-order fees on retail deliveries (Colorado's and Minnesota's
//! retail delivery fees), each with its periods and their components, its conditions and
//! its source. The grammar is in the file's header.
//!
//! [`parse`] reads and checks the file (every error names the file and the key); [`apply`]
//! adds each fee to a builder: its own jurisdiction, which no jurisdiction set holds, a rule
//! with no fee whose rate type is the fee's name over the fee's whole life, one rule per
//! component and period with the component's amount as its fee, and the fee's record (see
//! `levy_core::model::FeeRecord`).

use levy_core::model::SourceEntry;
use levy_core::{
    Date, Decimal, FeeSpec, JurisdictionSpec, Level, RuleSpec, SmallSeller, TableBuilder, TaxType,
};
use serde::Deserialize;

use crate::curated::{amount, date, invalid, nonempty, parse_toml, sha256_hex, CuratedError};

/// The file's name in the curated data folder.
pub const FILE: &str = "us-fees.toml";

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FeesFile {
    #[serde(default)]
    fee: Vec<FeeRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FeeRow {
    code: String,
    state: String,
    name: String,
    authority: String,
    applies_when: String,
    min_taxable: Option<String>,
    exempt_buyers: bool,
    small_seller: Option<SmallSellerRow>,
    #[serde(default)]
    exclude_codes: Vec<String>,
    taxable: bool,
    source: String,
    as_of: toml::value::Datetime,
    note: String,
    amounts: Vec<AmountRow>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SmallSellerRow {
    amount: String,
    rule: String,
    period: String,
    from: toml::value::Datetime,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AmountRow {
    from: toml::value::Datetime,
    to: Option<toml::value::Datetime>,
    amount: Option<String>,
    #[serde(default)]
    components: Vec<ComponentRow>,
    source: Option<String>,
    #[serde(default)]
    unknown: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ComponentRow {
    name: String,
    amount: String,
}

/// A period of a fee: its components (name, dollars), or `None` when its amount is not
/// known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Period {
    /// First day.
    pub from: Date,
    /// Last day (inclusive); [`Date::MAX`] for the open-ended last period.
    pub to: Date,
    /// The components and their amounts in dollars; `None` when not known.
    pub components: Option<Vec<(String, Decimal)>>,
}

/// One fee, read and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fee {
    /// The jurisdiction's code, `<state FIPS>:<NAME>`.
    pub code: String,
    /// USPS abbreviation of the state.
    pub state: String,
    /// The fee's name.
    pub name: String,
    /// The agency that collects it.
    pub authority: String,
    /// The least total of taxable items, in dollars, when the fee needs one.
    pub min_taxable: Option<Decimal>,
    /// Whether a buyer exempt from the state's sales tax owes no fee.
    pub exempt_buyers: bool,
    /// The small-seller exemption.
    pub small_seller: Option<SmallSeller>,
    /// The product codes whose lines the fee does not reach.
    pub exclude_codes: Vec<String>,
    /// Whether the fee is itself taxed (recorded; a separately stated fee is not, in the
    /// states listed).
    pub taxable: bool,
    /// The periods, oldest first, each the day after the one before.
    pub periods: Vec<Period>,
}

/// The checked file: its fees, and its manifest entry.
#[derive(Clone, Debug)]
pub struct Fees {
    /// The fees, in file order.
    pub fees: Vec<Fee>,
    sha256: String,
    /// The file's horizon, from its earliest `as_of` ([`crate::horizon`]).
    horizon: i32,
}

/// Reads and checks the file's text; `codes` says whether a product tax code exists.
pub fn parse(text: &str, codes: &dyn Fn(&str) -> bool) -> Result<Fees, CuratedError> {
    let f = FILE;
    let file: FeesFile = parse_toml(f, text)?;
    let mut fees = Vec::with_capacity(file.fee.len());
    for (i, row) in file.fee.iter().enumerate() {
        let key = format!("fee[{i}]");
        let fee = fee(&key, row, codes)?;
        if fees.iter().any(|other: &Fee| other.code == fee.code) {
            return Err(invalid(f, format!("{key}.code"), "the code is given twice"));
        }
        fees.push(fee);
    }
    Ok(Fees {
        fees,
        sha256: sha256_hex(text),
        horizon: crate::curated::horizon_of_text(text),
    })
}

/// One fee row read and checked (`key` its place in the file, `fee[i]`, for errors).
fn fee(key: &str, row: &FeeRow, codes: &dyn Fn(&str) -> bool) -> Result<Fee, CuratedError> {
    let f = FILE;
    check_state_and_code(key, row)?;
    for (k, v) in [
        ("name", &row.name),
        ("authority", &row.authority),
        ("source", &row.source),
        ("note", &row.note),
    ] {
        nonempty(f, &format!("{key}.{k}"), v)?;
    }
    date(f, &format!("{key}.as_of"), &row.as_of)?;
    let min_taxable = min_taxable(key, row)?;
    let small_seller = match &row.small_seller {
        None => None,
        Some(s) => Some(small_seller(&format!("{key}.small_seller"), s)?),
    };
    check_exclude_codes(key, row, codes)?;
    Ok(Fee {
        code: row.code.clone(),
        state: row.state.clone(),
        name: row.name.clone(),
        authority: row.authority.clone(),
        min_taxable,
        exempt_buyers: row.exempt_buyers,
        small_seller,
        exclude_codes: row.exclude_codes.clone(),
        taxable: row.taxable,
        periods: periods(key, &row.amounts)?,
    })
}

/// Checks that the fee's state is a US state and its code is `<the state's FIPS>:<NAME>`.
fn check_state_and_code(key: &str, row: &FeeRow) -> Result<(), CuratedError> {
    let f = FILE;
    let Some((fips, _)) = crate::states::by_abbr(&row.state) else {
        return Err(invalid(
            f,
            format!("{key}.state"),
            format!("{:?} is not a US state", row.state),
        ));
    };
    match row.code.split_once(':') {
        Some((prefix, rest)) if prefix == fips && !rest.trim().is_empty() => Ok(()),
        _ => Err(invalid(
            f,
            format!("{key}.code"),
            format!("{:?} must be \"{fips}:<NAME>\"", row.code),
        )),
    }
}

/// The least total of taxable items the fee needs, in dollars: given exactly when
/// `applies_when` is `taxable_at_least`, `None` for `any_taxable`.
fn min_taxable(key: &str, row: &FeeRow) -> Result<Option<Decimal>, CuratedError> {
    let f = FILE;
    match (row.applies_when.as_str(), &row.min_taxable) {
        ("any_taxable", None) => Ok(None),
        ("taxable_at_least", Some(m)) => Ok(Some(amount(f, &format!("{key}.min_taxable"), m)?)),
        ("any_taxable", Some(_)) => Err(invalid(
            f,
            format!("{key}.min_taxable"),
            "only with applies_when = \"taxable_at_least\"",
        )),
        ("taxable_at_least", None) => Err(invalid(
            f,
            format!("{key}.min_taxable"),
            "required with applies_when = \"taxable_at_least\"",
        )),
        (other, _) => Err(invalid(
            f,
            format!("{key}.applies_when"),
            format!("{other:?}: any_taxable or taxable_at_least"),
        )),
    }
}

/// The fee's small-seller exemption (`key` its place in the file, `fee[i].small_seller`):
/// measured on the previous calendar year's sales, at most or less than its amount.
fn small_seller(key: &str, s: &SmallSellerRow) -> Result<SmallSeller, CuratedError> {
    let f = FILE;
    if s.period != "previous_calendar_year" {
        return Err(invalid(
            f,
            format!("{key}.period"),
            format!("{:?}: previous_calendar_year", s.period),
        ));
    }
    let less_than = match s.rule.as_str() {
        "at_most" => false,
        "less_than" => true,
        other => {
            return Err(invalid(
                f,
                format!("{key}.rule"),
                format!("{other:?}: at_most or less_than"),
            ))
        }
    };
    Ok(SmallSeller {
        amount: amount(f, &format!("{key}.amount"), &s.amount)?,
        less_than,
        from: date(f, &format!("{key}.from"), &s.from)?,
    })
}

/// Checks that every product code the fee excludes is a tax code of the taxonomy.
fn check_exclude_codes(
    key: &str,
    row: &FeeRow,
    codes: &dyn Fn(&str) -> bool,
) -> Result<(), CuratedError> {
    for (j, code) in row.exclude_codes.iter().enumerate() {
        if !codes(code) {
            return Err(invalid(
                FILE,
                format!("{key}.exclude_codes[{j}]"),
                format!("{code:?} is not a tax code of taxonomy.toml"),
            ));
        }
    }
    Ok(())
}

/// The periods of a fee: oldest first, each from the day after the one before ends, only
/// the last open-ended; a known period's components sum to its amount exactly.
fn periods(key: &str, rows: &[AmountRow]) -> Result<Vec<Period>, CuratedError> {
    let f = FILE;
    if rows.is_empty() {
        return Err(invalid(f, format!("{key}.amounts"), "no periods"));
    }
    let mut out: Vec<Period> = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let k = format!("{key}.amounts[{i}]");
        let from = date(f, &format!("{k}.from"), &r.from)?;
        let to = match &r.to {
            Some(t) => date(f, &format!("{k}.to"), t)?,
            None if i + 1 == rows.len() => Date::MAX,
            None => {
                return Err(invalid(
                    f,
                    format!("{k}.to"),
                    "only the last period may be open-ended",
                ))
            }
        };
        if to < from {
            return Err(invalid(
                f,
                format!("{k}.to"),
                "the period ends before it starts",
            ));
        }
        if let Some(prev) = out.last() {
            if prev.to.0 + 1 != from.0 {
                return Err(invalid(
                    f,
                    format!("{k}.from"),
                    "each period must start the day after the one before ends",
                ));
            }
        }
        let components = if r.unknown {
            if r.amount.is_some() || !r.components.is_empty() || r.source.is_some() {
                return Err(invalid(
                    f,
                    k,
                    "an unknown period has no amount, components or source",
                ));
            }
            None
        } else {
            let total = amount(
                f,
                &format!("{k}.amount"),
                r.amount
                    .as_deref()
                    .ok_or_else(|| invalid(f, format!("{k}.amount"), "missing"))?,
            )?;
            nonempty(f, &format!("{k}.source"), r.source.as_deref().unwrap_or(""))?;
            if r.components.is_empty() {
                return Err(invalid(f, format!("{k}.components"), "no components"));
            }
            let mut parts = Vec::with_capacity(r.components.len());
            for (j, c) in r.components.iter().enumerate() {
                let ck = format!("{k}.components[{j}]");
                nonempty(f, &format!("{ck}.name"), &c.name)?;
                let a = amount(f, &format!("{ck}.amount"), &c.amount)?;
                if a.is_zero() {
                    return Err(invalid(f, format!("{ck}.amount"), "a component of nothing"));
                }
                if parts.iter().any(|(n, _): &(String, Decimal)| *n == c.name) {
                    return Err(invalid(f, format!("{ck}.name"), "given twice"));
                }
                parts.push((c.name.clone(), a));
            }
            let sum: Decimal = parts.iter().map(|(_, a)| *a).sum();
            if sum != total {
                return Err(invalid(
                    f,
                    format!("{k}.components"),
                    format!("the components sum to {sum}, not the amount {total}"),
                ));
            }
            Some(parts)
        };
        out.push(Period {
            from,
            to,
            components,
        });
    }
    Ok(out)
}

/// Adds every fee of `fees` to `b`: its jurisdiction, its rules and its record, with one
/// manifest entry for the file. Returns the number of fees added.
pub fn apply(fees: &Fees, b: &mut TableBuilder) -> Result<usize, CuratedError> {
    if fees.fees.is_empty() {
        return Ok(0);
    }
    let source = b.add_source(SourceEntry {
        kind: "curated".into(),
        name: FILE.into(),
        sha256: fees.sha256.clone(),
        rows_read: fees.fees.len() as u64,
        rows_skipped: 0,
        period: String::new(),
        publication: String::new(),
        horizon: fees.horizon,
    });
    for (i, fee) in fees.fees.iter().enumerate() {
        let key = format!("fee[{i}]");
        let build = |e: levy_core::BuildError| CuratedError::Build {
            file: FILE.into(),
            key: key.clone(),
            source: e,
        };
        let j = b
            .jurisdiction(JurisdictionSpec {
                code: fee.code.clone(),
                name: fee.name.clone(),
                level: Level::State,
                country: "US".into(),
                region: fee.state.clone(),
                authority: fee.authority.clone(),
                tax_type: TaxType::Sales,
            })
            .map_err(build)?;
        let first = fee.periods[0].from;
        let rule = |label: &str, from: Date, to: Date, amount: Decimal| {
            let mut r = RuleSpec::flat(j, crate::curated::GENERAL, Decimal::ZERO, from, to, label);
            r.fee = amount;
            r.source = source;
            r
        };
        b.rule(rule(&fee.name, first, Date::MAX, Decimal::ZERO))
            .map_err(build)?;
        let mut unknown = Vec::new();
        for p in &fee.periods {
            match &p.components {
                None => unknown.push((p.from, p.to)),
                Some(parts) => {
                    for (name, amount) in parts {
                        b.rule(rule(name, p.from, p.to, *amount)).map_err(build)?;
                    }
                }
            }
        }
        b.fee(FeeSpec {
            jurisdiction: j,
            region: fee.state.clone(),
            min_taxable: fee.min_taxable,
            exempt_buyers: fee.exempt_buyers,
            small_seller: fee.small_seller,
            excluded_codes: fee.exclude_codes.clone(),
            unknown,
            from: first,
            source,
        })
        .map_err(build)?;
    }
    Ok(fees.fees.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped() -> String {
        std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../data/us-fees.toml"
        ))
        .unwrap()
    }

    #[test]
    fn the_shipped_file_reads() {
        let fees = parse(&shipped(), &|_| true).unwrap();
        let codes: Vec<&str> = fees.fees.iter().map(|f| f.code.as_str()).collect();
        assert_eq!(codes, ["08:RETAIL DELIVERY FEE", "27:RETAIL DELIVERY FEE"]);
    }

    #[test]
    fn a_broken_file_names_the_key() {
        let text = shipped();
        for (from, to, key) in [
            // Components that do not sum to the amount.
            (
                "amount = \"0.0690\"",
                "amount = \"0.0691\"",
                "fee[0].amounts[0].components",
            ),
            // A gap between periods.
            (
                "from = 2023-07-01",
                "from = 2023-07-02",
                "fee[0].amounts[1].from",
            ),
            (
                "rule = \"at_most\"",
                "rule = \"most\"",
                "fee[0].small_seller.rule",
            ),
            ("code = \"27:RETAIL", "code = \"28:RETAIL", "fee[1].code"),
            (
                "applies_when = \"any_taxable\"",
                "applies_when = \"some\"",
                "fee[0].applies_when",
            ),
        ] {
            let bad = text.replacen(from, to, 1);
            assert_ne!(bad, text, "{from}");
            let e = parse(&bad, &|_| true).unwrap_err().to_string();
            assert!(e.starts_with(FILE) && e.contains(key), "{from}: {e}");
        }
        let e = parse(&text, &|c| c != "DIAPERS").unwrap_err().to_string();
        assert!(e.contains("exclude_codes"), "{e}");
    }
}
