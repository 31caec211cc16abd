//! `levy registrations add|list|expire`: where an account is registered to collect, in the
//! ledger the service uses. Once an account has a `sales_tax` registration,
//! `automatic_tax: auto` collects only where one is active on the sale's date.

use levy_api::{
    ApiError, KeySource, NewRegistration, RegistrationFilter, RegistrationKind, RegistrationRecord,
    Service, ServiceConfig,
};

/// Where the registrations are kept, and whose they are.
#[derive(clap::Args, Clone, Debug)]
pub struct Target {
    /// The account (a name in the keys file).
    #[arg(long)]
    pub account: String,
    /// The account's test-mode registrations instead of its live ones.
    #[arg(long)]
    pub test: bool,
    /// The ledger: an SQLite file (created when absent) or a PostgreSQL database.
    #[arg(
        long,
        value_name = "FILE|CONNECTION",
        default_value = "./levy-ledger.sqlite"
    )]
    pub ledger: String,
    /// The keys file of the service: the account must have a key in it, and its internal
    /// id there is the one the registrations are stored under.
    #[arg(long, value_name = "FILE", default_value = "./levy-keys.toml")]
    pub keys: std::path::PathBuf,
    /// Print JSON (the interface's `tax.registration`) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `levy registrations …`.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Register where the account collects: a country and region (state, province), from a
    /// day (default now) until a day (default open-ended).
    Add(AddArgs),
    /// List the account's registrations, expired ones included.
    List(ListArgs),
    /// Expire a registration (it still answers for earlier sales).
    Expire(ExpireArgs),
}

/// `levy registrations add`.
#[derive(clap::Args, Clone, Debug)]
pub struct AddArgs {
    /// ISO 3166-1 alpha-2 country (US, CA, DE, …).
    #[arg(long)]
    pub country: String,
    /// The state or province without the country (TX, ON); required for the US and
    /// Canada, empty or left out elsewhere for the whole country.
    #[arg(long, default_value = "")]
    pub region: String,
    /// Active from this day (YYYY-MM-DD, from its first second, UTC) or Unix seconds;
    /// default now.
    #[arg(long, value_name = "DATE")]
    pub from: Option<String>,
    /// No longer active from this day (YYYY-MM-DD, UTC) or Unix seconds; default never.
    #[arg(long, value_name = "DATE")]
    pub to: Option<String>,
    /// What it lets the account collect: sales_tax or retail_delivery_fee.
    #[arg(long = "type", value_name = "TYPE", default_value = "sales_tax")]
    pub kind: String,
    /// A local (home-rule) jurisdiction, by the rate table's jurisdiction code, it also
    /// covers; repeat for several. None: every local jurisdiction of the region.
    #[arg(long = "local", value_name = "CODE")]
    pub locals: Vec<String>,
    /// The merchant (merch_… or its reference_merchant_id) whose registration it is.
    #[arg(long, value_name = "ID")]
    pub merchant: Option<String>,
    /// Whose, and where they are kept.
    #[command(flatten)]
    pub target: Target,
}

/// `levy registrations list`.
#[derive(clap::Args, Clone, Debug)]
pub struct ListArgs {
    /// Only this country's.
    #[arg(long)]
    pub country: Option<String>,
    /// Only this region's (with --country).
    #[arg(long, requires = "country")]
    pub region: Option<String>,
    /// Whose, and where they are kept.
    #[command(flatten)]
    pub target: Target,
}

/// `levy registrations expire ID`.
#[derive(clap::Args, Clone, Debug)]
pub struct ExpireArgs {
    /// The registration (`reg_…`).
    pub id: String,
    /// No longer active from this day (YYYY-MM-DD, UTC) or Unix seconds; default now.
    #[arg(long, value_name = "DATE")]
    pub at: Option<String>,
    /// Whose, and where they are kept.
    #[command(flatten)]
    pub target: Target,
}

/// Unix seconds of the first second (UTC) of `YYYY-MM-DD`, or of Unix seconds given as
/// such.
pub fn parse_time(flag: &str, s: &str) -> Result<i64, String> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse()
            .map_err(|_| format!("{flag} {s:?}: too large for Unix seconds"));
    }
    let bad = || format!("{flag} {s:?}: expected YYYY-MM-DD or Unix seconds");
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return Err(bad());
    };
    let (y, m, d) = (
        y.parse::<i64>().map_err(|_| bad())?,
        m.parse::<u32>().map_err(|_| bad())?,
        d.parse::<u32>().map_err(|_| bad())?,
    );
    let year = i32::try_from(y).map_err(|_| bad())?;
    levy_core::Date::from_ymd(year, m, d).ok_or_else(bad)?;
    // Days from the civil date (H. Hinnant's algorithm), checked above to exist.
    let (y, m, d) = (if m <= 2 { y - 1 } else { y }, i64::from(m), i64::from(d));
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Ok((era * 146_097 + doe - 719_468) * 86_400)
}

pub(crate) fn open(target: &Target) -> Result<Service, ApiError> {
    Service::open(ServiceConfig {
        table: crate::default_table(),
        ledger: target.ledger.clone(),
        keys: KeySource::File(target.keys.clone()),
    })
}

/// A day of Unix seconds, `YYYY-MM-DD` (UTC).
fn day(t: i64) -> String {
    levy_core::Date::from_unix_seconds(t).to_string()
}

/// One registration as a line of text: `reg_… US-TX sales_tax 2026-03-15 .. (open) active`.
pub fn line(r: &RegistrationRecord, now: i64) -> String {
    let place = if r.region.is_empty() {
        r.country.clone()
    } else {
        format!("{}-{}", r.country, r.region)
    };
    let until = r.expires_at.map_or("(open)".to_string(), day);
    let mut out = format!(
        "{} {place} {} {} .. {until} {}",
        r.id,
        r.kind,
        day(r.active_from),
        levy_api::registration_status(r, now)
    );
    if !r.locals.is_empty() {
        out.push_str(&format!(" locals {}", r.locals.join(",")));
    }
    if let Some(m) = &r.merchant_id {
        out.push_str(&format!(" merchant {m}"));
    }
    out
}

fn now_seconds() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

fn print(records: &[RegistrationRecord], target: &Target, list: bool) {
    let now = now_seconds();
    if target.json {
        let value = if list {
            levy_api::registration_list_json(records, false, target.test, now)
        } else {
            records
                .first()
                .map(|r| levy_api::registration_json(r, target.test, now))
                .unwrap_or_default()
        };
        println!("{value:#}");
    } else {
        for r in records {
            println!("{}", line(r, now));
        }
    }
}

/// Runs a `levy registrations` command and prints what it answers.
pub fn run(command: &Command) -> Result<(), String> {
    let fail = |e: ApiError| e.to_string();
    match command {
        Command::Add(a) => {
            let kind = RegistrationKind::parse(&a.kind).ok_or_else(|| {
                format!(
                    "--type {:?}: expected sales_tax or retail_delivery_fee",
                    a.kind
                )
            })?;
            let new = NewRegistration {
                merchant_id: a.merchant.clone(),
                country: a.country.clone(),
                region: a.region.clone(),
                local_jurisdictions: a.locals.clone(),
                kind,
                active_from: a
                    .from
                    .as_deref()
                    .map(|s| parse_time("--from", s))
                    .transpose()?,
                expires_at: a.to.as_deref().map(|s| parse_time("--to", s)).transpose()?,
            };
            let service = open(&a.target).map_err(fail)?;
            let r = service
                .add_registration(&a.target.account, !a.target.test, &new)
                .map_err(fail)?;
            print(&[r], &a.target, false);
        }
        Command::List(l) => {
            let filter = RegistrationFilter {
                country: l.country.as_ref().map(|c| c.to_ascii_uppercase()),
                region: l.region.as_ref().map(|r| r.to_ascii_uppercase()),
            };
            let service = open(&l.target).map_err(fail)?;
            let all = service
                .registrations(&l.target.account, !l.target.test, &filter)
                .map_err(fail)?;
            print(&all, &l.target, true);
        }
        Command::Expire(x) => {
            let at = x.at.as_deref().map(|s| parse_time("--at", s)).transpose()?;
            let service = open(&x.target).map_err(fail)?;
            let r = service
                .expire_registration(&x.target.account, !x.target.test, &x.id, at)
                .map_err(fail)?;
            print(&[r], &x.target, false);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_seconds_are_read() {
        // 2026-03-15T00:00:00Z is 1773532800 (20527 days after 1970-01-01).
        assert_eq!(parse_time("--from", "2026-03-15").unwrap(), 1_773_532_800);
        assert_eq!(parse_time("--from", "1970-01-01").unwrap(), 0);
        assert_eq!(parse_time("--from", "2024-02-29").unwrap(), 1_709_164_800);
        assert_eq!(parse_time("--from", "1773532800").unwrap(), 1_773_532_800);
        assert!(parse_time("--from", "2026-02-30").is_err());
        assert!(parse_time("--from", "15/03/2026").is_err());
        assert!(parse_time("--from", "").is_err());
    }
}
