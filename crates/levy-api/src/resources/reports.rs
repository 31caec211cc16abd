//! Liability reports (a levy extension, in every API version): what a period of the
//! ledger owes, per jurisdiction and seller location, as JSON or CSV
//! (`GET /tax/reports/liability`, [`Service::liability`], `levy report`).
//!
//! The ledger builds the report ([`crate::store::liability`], whose rules say what counts
//! where); this module reads the query and writes the answer: JSON, a CSV of every row, or,
//! for Texas, California and the Streamlined member states, a CSV in the layout of the
//! state's return worksheet ([`Layout`]).

use std::fmt::Write as _;

use rust_decimal::Decimal;
use serde_json::{json, Value};

use crate::error::{ApiError, ErrorKind};
use crate::handler::{Ctx, Reply};
use crate::json::num;
use crate::store::liability::{Amounts, Liability, Period, Row, RowKey, StateTotal};

/// Seconds in a day.
const DAY: i64 = 86_400;

/// The Streamlined Sales and Use Tax Agreement's full member states (as in
/// `data/us-rounding.toml`): their returns are the Simplified Electronic Return.
pub const SST_MEMBERS: [&str; 23] = [
    "AR", "GA", "IN", "IA", "KS", "KY", "MI", "MN", "NE", "NV", "NJ", "NC", "ND", "OH", "OK", "RI",
    "SD", "UT", "VT", "WA", "WV", "WI", "WY",
];

/// The CSV a report is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Every row, every amount ([`csv`]).
    Rows,
    /// Texas Form 01-114's worksheet: per outlet and local code, total sales, taxable
    /// sales, tax.
    Texas,
    /// California's CDTFA-531-A2, Schedule A2 (Computation Schedule for District Tax): per
    /// district tax area, its taxable amount and district tax.
    California,
    /// The Streamlined Simplified Electronic Return: per FIPS jurisdiction code, gross
    /// sales, deductions, taxable sales, tax.
    Streamlined,
}

impl Layout {
    /// The layout of a report of `region` (or of every state, `None`).
    pub fn of(region: Option<&str>) -> Layout {
        match region {
            Some("TX") => Layout::Texas,
            Some("CA") => Layout::California,
            Some(r) if SST_MEMBERS.contains(&r) => Layout::Streamlined,
            _ => Layout::Rows,
        }
    }
}

/// A date `YYYY-MM-DD` as the Unix second of its start (UTC).
fn day_start(field: &str, text: &str) -> Result<i64, ApiError> {
    let parsed = (text.len() == 10 && text.as_bytes()[4] == b'-' && text.as_bytes()[7] == b'-')
        .then(|| {
            let y = text[0..4].parse::<i32>().ok()?;
            let m = text[5..7].parse::<u32>().ok()?;
            let d = text[8..10].parse::<u32>().ok()?;
            levy_core::Date::from_ymd(y, m, d)
        })
        .flatten()
        .filter(|d| d.0 >= 0);
    match parsed {
        Some(d) => Ok(i64::from(d.0) * DAY),
        None => Err(ApiError::field(
            ErrorKind::InvalidQueryParameter,
            field,
            format!("{field} must be a date YYYY-MM-DD from 1970-01-01, such as 2026-03-01"),
            "a date YYYY-MM-DD",
            text,
        )),
    }
}

/// The period of a report from its query: `from` and `to` (`YYYY-MM-DD`, both days
/// included, UTC) and an optional US state (`region`, any case).
pub fn period(from: &str, to: &str, region: Option<&str>) -> Result<Period, ApiError> {
    let start = day_start("from", from)?;
    let last = day_start("to", to)?;
    if last < start {
        return Err(ApiError::field(
            ErrorKind::InvalidQueryParameter,
            "to",
            format!("to {to} is before from {from}"),
            format!("{from} or later"),
            to,
        ));
    }
    let region = match region {
        Some(r) => Some(super::registrations::region("region", "US", r)?),
        None => None,
    };
    Ok(Period {
        from: start,
        to: last + DAY,
        region,
    })
}

/// A day of a period as `YYYY-MM-DD`.
fn date(at: i64) -> String {
    levy_core::Date::from_unix_seconds(at).to_string()
}

/// Amounts in the interface's shape (minor units; tax and fees unrounded).
fn amounts(a: &Amounts) -> Value {
    json!({
        "gross_sales": num(a.gross),
        "exempt_sales": {
            "customer": num(a.exempt_customer),
            "product": num(a.exempt_product),
            "holiday": num(a.exempt_holiday),
        },
        "not_collected_sales": num(a.not_collected),
        "taxable_sales": num(a.taxable),
        "tax": num(a.tax),
        "fees": num(a.fees),
    })
}

/// A row in the interface's shape.
fn row(key: &RowKey, r: &Row) -> Value {
    let net = r.net();
    json!({
        "country": key.country,
        "region": key.region,
        "jurisdiction_code": key.jurisdiction_code,
        "jurisdiction_name": key.jurisdiction_name,
        "authority_type": key.authority_type,
        "outlet": (!key.outlet.is_empty()).then_some(&key.outlet),
        "sales": amounts(&r.sales),
        "refunds": amounts(&r.refunds),
        "net": amounts(&net),
        "net_due": num(net.tax + net.fees),
    })
}

/// A state's totals in the interface's shape.
fn state(key: &(String, String), s: &StateTotal) -> Value {
    json!({
        "country": key.0,
        "region": key.1,
        "transactions": s.transactions,
        "refunds": s.refunds,
        "reversals": s.reversals,
        "sales": num(s.sales),
        "tax_due": num(s.tax_due),
        "fees": num(s.fees),
        "rounding": num(s.rounding),
        "collected": num(s.collected),
        "registered": s.registered,
    })
}

/// A report in the interface's shape (`tax.liability_report`).
pub fn render(report: &Liability, period: &Period) -> Value {
    json!({
        "object": "tax.liability_report",
        "from": date(period.from),
        "to": date(period.to - DAY),
        "region": period.region,
        "currencies": report.currencies,
        "table_hashes": report.table_hashes.iter()
            .map(|(hash, n)| json!({"hash": hash, "transactions": n}))
            .collect::<Vec<_>>(),
        "states": report.states.iter().map(|(k, s)| state(k, s)).collect::<Vec<_>>(),
        "jurisdictions": report.rows.iter().map(|(k, r)| row(k, r)).collect::<Vec<_>>(),
    })
}

/// Whether `text` is a plain decimal number (`-12`, `0.5`, `-3.25`): the one kind of cell
/// that may begin with `-` unchanged.
fn is_number(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// A CSV cell as it is safe to open in a spreadsheet (OWASP, "CSV Injection"): a cell
/// beginning with `=`, `+`, `@`, a tab, a carriage return, or `-` when it is not a number,
/// is written with a single quote before it (`'=HYPERLINK(...)`), so that a spreadsheet
/// shows it as text and never evaluates it as a formula. Every other cell is unchanged.
fn neutralise(text: &str) -> std::borrow::Cow<'_, str> {
    let risky = match text.chars().next() {
        Some('=' | '+' | '@' | '\t' | '\r') => true,
        Some('-') => !is_number(text),
        _ => false,
    };
    if risky {
        format!("'{text}").into()
    } else {
        text.into()
    }
}

/// A CSV field: neutralised ([`neutralise`]), then quoted when it holds a comma, a quote or
/// a line break.
fn field(text: &str) -> String {
    let text = neutralise(text);
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.into_owned()
    }
}

/// Minor units as a CSV amount: exact, trailing zeros dropped.
fn money(d: Decimal) -> String {
    if d.is_zero() {
        "0".into()
    } else {
        d.normalize().to_string()
    }
}

/// A CSV line of fields.
fn line(out: &mut String, fields: &[String]) {
    let joined: Vec<String> = fields.iter().map(|f| field(f)).collect();
    let _ = writeln!(out, "{}", joined.join(","));
}

/// The report as CSV in `layout`: amounts in minor units, exact (tax unrounded, as the
/// rows hold it), net of the refunds booked in the period.
pub fn csv(report: &Liability, layout: Layout) -> String {
    let mut out = String::new();
    match layout {
        Layout::Rows => rows_csv(&mut out, report),
        Layout::Texas => texas_csv(&mut out, report),
        Layout::California => california_csv(&mut out, report),
        Layout::Streamlined => streamlined_csv(&mut out, report),
    }
    out
}

/// Every row: its key, and its sales, refunds and net.
fn rows_csv(out: &mut String, report: &Liability) {
    let mut head: Vec<String> = [
        "country",
        "region",
        "jurisdiction_code",
        "jurisdiction_name",
        "authority_type",
        "outlet",
    ]
    .map(String::from)
    .to_vec();
    for part in ["sales", "refunds", "net"] {
        for name in [
            "gross",
            "exempt_customer",
            "exempt_product",
            "exempt_holiday",
            "not_collected",
            "taxable",
            "tax",
            "fees",
        ] {
            head.push(format!("{part}_{name}"));
        }
    }
    line(out, &head);
    for (k, r) in &report.rows {
        let mut f = vec![
            k.country.clone(),
            k.region.clone(),
            k.jurisdiction_code.clone(),
            k.jurisdiction_name.clone(),
            k.authority_type.clone(),
            k.outlet.clone(),
        ];
        for a in [r.sales, r.refunds, r.net()] {
            f.extend(
                [
                    a.gross,
                    a.exempt_customer,
                    a.exempt_product,
                    a.exempt_holiday,
                    a.not_collected,
                    a.taxable,
                    a.tax,
                    a.fees,
                ]
                .map(money),
            );
        }
        line(out, &f);
    }
}

/// Texas (Form 01-114, its local sales tax worksheet): a line per outlet and local
/// jurisdiction with its code as the rate table holds it (the Comptroller's 7-digit local
/// code where the table holds one; levy's tables hold FIPS codes), total sales, taxable
/// sales and tax; the state's own line (`STATE`) first.
fn texas_csv(out: &mut String, report: &Liability) {
    line(
        out,
        &[
            "outlet",
            "local_code",
            "jurisdiction_name",
            "total_sales",
            "taxable_sales",
            "tax",
        ]
        .map(String::from),
    );
    for (k, r) in ordered(report, "TX") {
        let n = r.net();
        line(
            out,
            &[
                k.outlet.clone(),
                k.jurisdiction_code.clone(),
                k.jurisdiction_name.clone(),
                money(n.gross),
                money(n.taxable),
                money(n.tax),
            ],
        );
    }
}

/// California (CDTFA-531-A2, Schedule A2, Computation Schedule for District Tax, filed with
/// the CDTFA-401): a line per district tax area (the table's `06:CDTFA:…` codes; CDTFA's
/// own three-digit district codes are not in the tables) with its taxable amount (A8) and
/// district tax (A10); the state and uniform local lines, which Schedule A2 does not hold,
/// are written first with their authority type so that the return's lines reconcile too.
fn california_csv(out: &mut String, report: &Liability) {
    line(
        out,
        &[
            "authority_type",
            "district_code",
            "district_name",
            "total_sales",
            "taxable_sales",
            "tax",
        ]
        .map(String::from),
    );
    for (k, r) in ordered(report, "CA") {
        let n = r.net();
        line(
            out,
            &[
                k.authority_type.clone(),
                k.jurisdiction_code.clone(),
                k.jurisdiction_name.clone(),
                money(n.gross),
                money(n.taxable),
                money(n.tax),
            ],
        );
    }
}

/// The Streamlined Simplified Electronic Return: a line per jurisdiction by its FIPS code,
/// gross sales, deductions (exempt and not collected), taxable sales and tax.
fn streamlined_csv(out: &mut String, report: &Liability) {
    line(
        out,
        &[
            "state",
            "jurisdiction_type",
            "jurisdiction_fips_code",
            "gross_sales",
            "deductions",
            "taxable_sales",
            "tax",
        ]
        .map(String::from),
    );
    let regions: std::collections::BTreeSet<&str> =
        report.rows.keys().map(|k| k.region.as_str()).collect();
    for region in regions {
        for (k, r) in ordered(report, region) {
            let n = r.net();
            line(
                out,
                &[
                    k.region.clone(),
                    k.authority_type.clone(),
                    k.jurisdiction_code.clone(),
                    money(n.gross),
                    money(n.gross - n.taxable),
                    money(n.taxable),
                    money(n.tax),
                ],
            );
        }
    }
}

/// The rows of one US region: the state's first, then the others by code.
fn ordered<'a>(report: &'a Liability, region: &'a str) -> Vec<(&'a RowKey, &'a Row)> {
    let mut rows: Vec<(&RowKey, &Row)> = report
        .rows
        .iter()
        .filter(|(k, _)| k.region == region)
        .collect();
    rows.sort_by_key(|(k, _)| (k.authority_type != "STATE", *k));
    rows
}

/// Marks in `report` the states where the account of `scope` is registered in `period`
/// ([`Liability::mark_registered`]), from every registration of the scope.
pub(crate) fn mark_registered(
    store: &dyn crate::store::Store,
    scope: &crate::store::Scope,
    period: &Period,
    report: &mut Liability,
) -> Result<(), crate::store::StoreError> {
    let filter = crate::store::RegistrationFilter::default();
    let all = super::registrations::all(store, scope, &filter)?;
    report.mark_registered(period, &all);
    Ok(())
}

/// `GET /tax/reports/liability?from=YYYY-MM-DD&to=YYYY-MM-DD[&region=XX][&format=json|csv]`.
pub(crate) fn liability(ctx: &Ctx<'_>) -> Result<Reply, ApiError> {
    let (mut from, mut to, mut region, mut format) = (None, None, None, "json");
    for (k, v) in ctx.query_params(&["from", "to", "region", "format"])? {
        match k {
            "from" => from = Some(v),
            "to" => to = Some(v),
            "region" => region = Some(v),
            _ => format = v,
        }
    }
    let missing = |name: &str| {
        ApiError::field(
            ErrorKind::InvalidQueryParameter,
            name,
            format!("{name} is required: a date YYYY-MM-DD"),
            "a date YYYY-MM-DD",
            "",
        )
    };
    let from = from.ok_or_else(|| missing("from"))?;
    let to = to.ok_or_else(|| missing("to"))?;
    let csv_asked = match format {
        "json" => false,
        "csv" => true,
        other => {
            return Err(ApiError::field(
                ErrorKind::InvalidQueryParameter,
                "format",
                "format must be json or csv",
                "json | csv",
                other,
            ))
        }
    };
    let period = period(from, to, region)?;
    let mut report = ctx.service.store.liability(ctx.scope, &period)?;
    mark_registered(&*ctx.service.store, ctx.scope, &period, &mut report)?;
    if csv_asked {
        let layout = Layout::of(period.region.as_deref());
        return Ok(Reply::csv(csv(&report, layout).into_bytes()));
    }
    Ok(Reply::tree(render(&report, &period)))
}
