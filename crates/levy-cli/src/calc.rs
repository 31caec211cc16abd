//! `levy calc`: one calculation from the command line, on the embedded default table or a
//! built one.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use levy_core::quote::{read, InputError, Ip, Order, QuoteErrorKind, Quoter};
use levy_core::{
    Address, AnyTable, Calculation, Coverage, Currency, Customer, CustomerType, Date, Decimal,
    Delivery, JurisdictionTax, LineTax, Location, Note, PlaceNote, Rounding, Sale, SaleLine,
    Sourced, Sourcing, TaxId, Taxability,
};

/// Arguments of `levy calc`.
#[derive(Debug, Args)]
pub struct CalcArgs {
    /// A table built with `levy build`; the embedded default when absent.
    #[arg(long, value_name = "FILE")]
    pub table: Option<PathBuf>,
    /// Street line of the buyer's address (`123 Main St`).
    #[arg(long, default_value = "")]
    pub street: String,
    /// City.
    #[arg(long, default_value = "")]
    pub city: String,
    /// State or province, ISO 3166-2 without the country (`TN`, `ON`).
    #[arg(long, default_value = "")]
    pub province: String,
    /// Postal code (`37203`, `37203-1234`, `K1A 0B1`).
    #[arg(long, default_value = "")]
    pub postal_code: String,
    /// ISO 3166-1 alpha-2 country.
    #[arg(long, default_value = "US")]
    pub country: String,
    /// Buyer's IP address: used when no postal code or province is given, or when the address fails.
    #[arg(long)]
    pub ip: Option<String>,
    /// IP resolution mode: strict, zero, approximate, best_effort.
    #[arg(long, default_value = "strict")]
    pub ip_mode: String,
    /// A line: AMOUNT in major units (`19.99`), optionally `xQTY` and `:CATEGORY`
    /// (`19.99x2:CLOTHING`). AMOUNT is the line total. Repeat for more lines.
    #[arg(
        long = "line",
        value_name = "AMOUNT[xQTY][:CATEGORY]",
        required_unless_present = "jsonl"
    )]
    pub lines: Vec<String>,
    /// ISO 4217 currency.
    #[arg(long, default_value = "USD")]
    pub currency: String,
    /// One unit of the sale's currency in the place's (`0.0067` for yen in Nashville):
    /// needed when the sale is in another currency than its place's and a rule there has
    /// an amount (a band, a threshold, a cap, a fee); the tax is then calculated on the
    /// converted amounts and answered in the sale's currency.
    #[arg(long, value_name = "RATE")]
    pub exchange_rate: Option<String>,
    /// Day of the sale, YYYY-MM-DD (UTC); today when absent.
    #[arg(long)]
    pub date: Option<String>,
    /// Amounts already include tax.
    #[arg(long)]
    pub tax_included: bool,
    /// The buyer is tax exempt.
    #[arg(long)]
    pub exempt: bool,
    /// The buyer is a business with this VAT or GST id (decides reverse charge).
    #[arg(long, value_name = "ID")]
    pub business_vat_id: Option<String>,
    /// Country the goods ship from (ISO 3166-1 alpha-2); US when only an origin postal code
    /// or province is given.
    #[arg(long)]
    pub origin_country: Option<String>,
    /// Postal code the goods ship from: within a state that sources sales at the origin
    /// (Texas, Ohio, California's modified origin, ...) it decides the local taxes.
    #[arg(long)]
    pub origin_postal_code: Option<String>,
    /// State or province the goods ship from.
    #[arg(long)]
    pub origin_province: Option<String>,
    /// City the goods ship from.
    #[arg(long)]
    pub origin_city: Option<String>,
    /// Street line of the address the goods ship from.
    #[arg(long)]
    pub origin_street: Option<String>,
    /// Rounding: `line` (each line's tax half up, the default) or `invoice` (the sale's tax
    /// rounded once and shared out to the lines), where the buyer's state allows it.
    #[arg(long, default_value = "line")]
    pub rounding: String,
    /// The sale is a retail delivery (by motor vehicle to the buyer's address): it owes the
    /// destination state's per-order delivery fee, where there is one (Colorado,
    /// Minnesota), on its first taxable line.
    #[arg(long)]
    pub delivery: bool,
    /// With --delivery: the seller's retail sales in the destination state in the previous
    /// calendar year, in major units (`450000`), which decides the fee's small-seller
    /// exemption; without it no exemption is claimed.
    #[arg(long, value_name = "AMOUNT", requires = "delivery")]
    pub seller_sales: Option<String>,
    /// Print JSON instead of a receipt.
    #[arg(long)]
    pub json: bool,
    /// Calculate many sales: read FILE (`-` for standard input), one JSON object a line
    /// whose keys are this command's long flags with underscores (`postal_code`,
    /// `province`, `lines` as a list of `--line` values, ...; `table` stays a flag), and
    /// print for each line what `--json` prints for that sale on one line, or
    /// `{"error": "..."}`.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["lines", "json"])]
    pub jsonl: Option<PathBuf>,
}

/// The day `s` names (YYYY-MM-DD), or today (UTC) when absent.
pub fn date_or_today(s: Option<&str>) -> Result<Date, String> {
    s.map_or(Ok(Date::today()), parse_date)
}

/// The table at `--table PATH`, opened and verified; `None` without the flag, for the
/// embedded default.
pub fn open_table(path: Option<&std::path::Path>) -> Result<Option<AnyTable>, String> {
    path.map(|p| AnyTable::open_file(p).map_err(|e| e.to_string()))
        .transpose()
}

/// Runs `levy calc`: prints a receipt, the JSON of `--json`, or with `--jsonl` one line of
/// JSON per sale read.
pub fn run(args: &CalcArgs) -> Result<(), String> {
    let owned = crate::calc::open_table(args.table.as_deref())?;
    let table: &AnyTable = owned.as_ref().unwrap_or_else(|| levy_data::default_table());
    match &args.jsonl {
        Some(path) => run_jsonl(table, path),
        None => {
            let (calc, json) = calculate(table, args).map_err(|r| r.message)?;
            match json {
                Some(value) => {
                    let s = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
                    println!("{s}");
                }
                None => print!("{calc}"),
            }
            Ok(())
        }
    }
}

/// One sale of `levy calc --jsonl`: the command's flags as JSON keys.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields, default)]
struct JsonlSale {
    street: String,
    city: String,
    province: String,
    postal_code: String,
    country: Option<String>,
    ip: Option<String>,
    ip_mode: Option<String>,
    lines: Vec<String>,
    currency: Option<String>,
    exchange_rate: Option<String>,
    date: Option<String>,
    tax_included: bool,
    exempt: bool,
    business_vat_id: Option<String>,
    origin_country: Option<String>,
    origin_postal_code: Option<String>,
    origin_province: Option<String>,
    origin_city: Option<String>,
    origin_street: Option<String>,
    rounding: Option<String>,
    delivery: bool,
    seller_sales: Option<String>,
}

impl JsonlSale {
    /// The flags this sale stands for.
    fn args(self) -> CalcArgs {
        CalcArgs {
            table: None,
            street: self.street,
            city: self.city,
            province: self.province,
            postal_code: self.postal_code,
            country: self.country.unwrap_or_else(|| "US".into()),
            ip: self.ip,
            ip_mode: self.ip_mode.unwrap_or_else(|| "strict".into()),
            lines: self.lines,
            currency: self.currency.unwrap_or_else(|| "USD".into()),
            exchange_rate: self.exchange_rate,
            date: self.date,
            tax_included: self.tax_included,
            exempt: self.exempt,
            business_vat_id: self.business_vat_id,
            origin_country: self.origin_country,
            origin_postal_code: self.origin_postal_code,
            origin_province: self.origin_province,
            origin_city: self.origin_city,
            origin_street: self.origin_street,
            rounding: self.rounding.unwrap_or_else(|| "line".into()),
            delivery: self.delivery,
            seller_sales: self.seller_sales,
            json: true,
            jsonl: None,
        }
    }
}

/// `levy calc --jsonl FILE`: a sale a line in, a result a line out, the table opened once.
fn run_jsonl(table: &AnyTable, path: &std::path::Path) -> Result<(), String> {
    use std::io::{BufRead, Write};
    let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Box::new(std::io::BufReader::new(file))
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| format!("{}: line {}: {e}", path.display(), n + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let result = serde_json::from_str::<JsonlSale>(&line)
            .map_err(|e| (None, format!("line {}: {e}", n + 1)))
            .and_then(|sale| {
                let args = sale.args();
                if args.lines.is_empty() {
                    return Err((None, format!("line {}: `lines` names no line", n + 1)));
                }
                calculate(table, &args).map_err(|r| (Some(r.kind), r.message))
            });
        let value = match result {
            Ok((_, Some(value))) => value,
            Ok((text, None)) => serde_json::Value::String(text),
            Err((None, e)) => serde_json::json!({ "error": e }),
            Err((Some(kind), e)) => serde_json::json!({ "error": e, "kind": kind.name() }),
        };
        let text = serde_json::to_string(&value).map_err(|e| e.to_string())?;
        writeln!(out, "{text}").map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())
}

/// Calculates the sale `args` describe on `table` through the front door: the receipt,
/// and the JSON when `--json` asks for it; a refusal with its kind.
fn calculate(
    table: &AnyTable,
    args: &CalcArgs,
) -> Result<(String, Option<serde_json::Value>), Refusal> {
    let (mut order, categories) = order(table, args)?;
    let mut quoter = Quoter::new();
    let quoted = quoter.quote(table, &mut order).map_err(|e| Refusal {
        kind: e.kind(),
        message: e.to_string(),
    })?;
    let (location, calc, date) = (quoted.location, quoted.calculation, quoted.date);
    Ok(if args.json {
        let json = render_json(table, location, calc, &categories, date);
        (String::new(), Some(json))
    } else {
        let receipt = render_receipt(table, location, calc, &categories, date);
        (receipt, None)
    })
}

/// A sale `levy calc` refuses: the front door's kind and what is wrong.
#[derive(Debug)]
struct Refusal {
    kind: QuoteErrorKind,
    message: String,
}

impl From<InputError> for Refusal {
    fn from(e: InputError) -> Refusal {
        Refusal {
            kind: e.kind,
            message: e.message,
        }
    }
}

/// The flags of one sale as the front door's order: the buyer's address (the country alone
/// when no street, city, province or postal code is given and no IP either), the IP, the
/// ship-from address, the day, the currency and its rate, the delivery, the lines; and the
/// category each line names.
fn order(table: &AnyTable, args: &CalcArgs) -> Result<(Order, Vec<String>), Refusal> {
    let mut order = Order::new();
    let sale = &mut order.sale;
    sale.currency = read::currency(&args.currency)?;
    sale.tax_included = args.tax_included;
    sale.customer = customer(args);
    sale.rounding = read::rounding(&args.rounding)?;
    let categories = sale_lines(table, &args.lines, sale)?;
    let given = [&args.street, &args.city, &args.province, &args.postal_code];
    if given.iter().any(|s| !s.is_empty()) || args.ip.is_none() {
        order.address = Some(Address {
            line1: args.street.clone(),
            line2: String::new(),
            city: args.city.clone(),
            region: args.province.clone(),
            postal_code: args.postal_code.clone(),
            country: args.country.clone(),
        });
    }
    if let Some(ip) = &args.ip {
        let mode = read::ip_mode(&args.ip_mode)?;
        order.ip = Some(Ip {
            value: ip.clone(),
            mode,
        });
    }
    order.origin = ship_from(args);
    order.origin_country = args.origin_country.clone();
    order.date = match args.date.as_deref() {
        None => None,
        Some(d) => Some(read::date(d).map_err(|e| Refusal {
            kind: e.kind,
            message: format!("--date {d:?}: expected YYYY-MM-DD"),
        })?),
    };
    order.exchange_rate = args
        .exchange_rate
        .as_deref()
        .map(read::exchange_rate)
        .transpose()?;
    if args.delivery {
        order.delivery = Some(retail_delivery(args)?);
    }
    Ok((order, categories))
}

/// The sale's lines from the `--line` values `specs` into `sale`, each with its category's
/// tax code; the category each names, in order.
fn sale_lines(table: &AnyTable, specs: &[String], sale: &mut Sale) -> Result<Vec<String>, Refusal> {
    let mut categories = Vec::with_capacity(specs.len());
    for spec in specs {
        let (amount, quantity, category) = parse_line(spec, sale.currency)?;
        let tax_code = table.category(&category).ok_or_else(|| Refusal {
            kind: QuoteErrorKind::UnknownProduct,
            message: format!(
                "unknown product category {category:?}; the table knows: {}",
                known_categories(table)
            ),
        })?;
        sale.lines.push(SaleLine {
            amount,
            quantity,
            per_unit: false,
            tax_code,
        });
        categories.push(category);
    }
    Ok(categories)
}

/// The buyer: exempt with `--exempt`, a business holding its VAT id with
/// `--business-vat-id`, else a consumer.
fn customer(args: &CalcArgs) -> Customer {
    Customer {
        exempt: args.exempt,
        kind: if args.business_vat_id.is_some() {
            CustomerType::Business
        } else {
            CustomerType::Consumer
        },
        tax_ids: args
            .business_vat_id
            .iter()
            .map(|v| TaxId {
                kind: "VAT".into(),
                value: v.clone(),
            })
            .collect(),
        exemptions: Vec::new(),
    }
}

/// The ship-from address, when given beyond its country (an origin postal code or
/// province); `None` otherwise.
fn ship_from(args: &CalcArgs) -> Option<Address> {
    if args.origin_postal_code.is_none() && args.origin_province.is_none() {
        return None;
    }
    Some(Address {
        line1: args.origin_street.clone().unwrap_or_default(),
        line2: String::new(),
        city: args.origin_city.clone().unwrap_or_default(),
        region: args.origin_province.clone().unwrap_or_default(),
        postal_code: args.origin_postal_code.clone().unwrap_or_default(),
        country: args
            .origin_country
            .clone()
            .unwrap_or_else(|| "US".into())
            .to_ascii_uppercase(),
    })
}

/// The retail delivery `--delivery` declares, with the seller's previous-year sales in the
/// state when `--seller-sales` claims the small-seller exemption.
fn retail_delivery(args: &CalcArgs) -> Result<Delivery, Refusal> {
    let seller_sales_previous_year = match &args.seller_sales {
        None => None,
        Some(s) => Some(
            s.trim()
                .parse::<Decimal>()
                .ok()
                .filter(|d| !d.is_sign_negative())
                .ok_or_else(|| Refusal {
                    kind: QuoteErrorKind::InvalidAmount,
                    message: format!("--seller-sales {s:?}: expected an amount such as 450000"),
                })?,
        ),
    };
    Ok(Delivery {
        retail: true,
        seller_sales_previous_year,
    })
}

fn known_categories(table: &AnyTable) -> String {
    let names: Vec<&str> = table.category_names().collect();
    if names.len() > 12 {
        format!("{}, ... ({} in all)", names[..12].join(", "), names.len())
    } else {
        names.join(", ")
    }
}

fn parse_date(s: &str) -> Result<Date, String> {
    read::date(s).map_err(|_| format!("--date {s:?}: expected YYYY-MM-DD"))
}

/// Parses `AMOUNT[xQTY][:CATEGORY]` into (amount in minor units, quantity, category).
fn parse_line(spec: &str, currency: Currency) -> Result<(Decimal, u32, String), Refusal> {
    let in_line = |e: InputError| Refusal {
        kind: e.kind,
        message: format!("--line {spec:?}: {}", e.message),
    };
    let (major, quantity, category) = read::line_spec(spec).map_err(in_line)?;
    let minor = read::minor_amount(major, currency).map_err(in_line)?;
    Ok((minor, quantity, category.to_ascii_uppercase()))
}

fn major(currency: Currency, minor: Decimal) -> String {
    let mut m = currency.to_major(minor);
    m.rescale(currency.minor_units());
    m.to_string()
}

/// An unrounded amount in major units, with at least the currency's decimal places and at
/// most four more (`24.75`, `0.0825`).
fn precise(currency: Currency, minor: Decimal) -> String {
    let mut m = currency
        .to_major(minor)
        .round_dp(currency.minor_units() + 4)
        .normalize();
    if m.scale() < currency.minor_units() {
        m.rescale(currency.minor_units());
    }
    m.to_string()
}

fn percent(rate: Decimal) -> String {
    format!("{}%", (rate * Decimal::ONE_HUNDRED).normalize())
}

/// The receipt `levy calc` prints: where the sale was placed, each line with its
/// jurisdictions' taxes and fees, the totals, and what the answer may lack.
fn render_receipt(
    table: &AnyTable,
    location: &Location,
    calc: &Calculation,
    categories: &[String],
    date: Date,
) -> String {
    let receipt = Receipt {
        table,
        location,
        calc,
        categories,
        date,
        used: table.address_used(location),
    };
    let mut out = String::new();
    receipt.write_place(&mut out);
    for (i, line) in calc.lines.iter().enumerate() {
        receipt.write_line(&mut out, i, line);
    }
    receipt.write_totals(&mut out);
    receipt.write_warnings(&mut out);
    let _ = writeln!(out, "Table      {}", calc.table_hash_hex());
    out
}

/// What a receipt is written from: the calculation, where and when it was placed, and the
/// category each line named.
struct Receipt<'a> {
    table: &'a AnyTable,
    location: &'a Location,
    calc: &'a Calculation,
    categories: &'a [String],
    date: Date,
    /// The address the table placed the sale at.
    used: Address,
}

impl Receipt<'_> {
    /// The address placed and how, and the rounding and sourcing when not the usual ones.
    fn write_place(&self, out: &mut String) {
        let (location, calc, used) = (self.location, self.calc, &self.used);
        let place: Vec<&str> = [
            used.line1.as_str(),
            used.city.as_str(),
            used.region.as_str(),
            used.postal_code.as_str(),
            used.country.as_str(),
        ]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect();
        let _ = writeln!(out, "Location   {}", place.join(", "));
        let _ = writeln!(
            out,
            "           {} / {} from {}, on {}",
            location.status.as_str(),
            location.precision.as_str(),
            location.source.as_str(),
            self.date
        );
        if calc.rounding == Rounding::Invoice {
            let _ = writeln!(
                out,
                "Rounding   INVOICE: the sale's tax is rounded once and shared out to the lines"
            );
        }
        if calc.sourcing != Sourcing::Destination {
            // A sale within one state that sources it otherwise: say which address decided.
            let _ = writeln!(
                out,
                "Sourcing   {}: entries marked ORIGIN are the ship-from address's",
                calc.sourcing.as_str()
            );
        }
    }

    /// Line `i` (from 0): its category, quantity and amount, an entry per jurisdiction, its
    /// tax and total, and the places whose treatment of its code is unknown.
    fn write_line(&self, out: &mut String, i: usize, line: &LineTax) {
        let c = self.calc.currency;
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Line {}     {} x{}  {} {}",
            i + 1,
            self.categories.get(i).map(String::as_str).unwrap_or(""),
            line.quantity,
            major(c, line.amount_excluding_tax),
            c.code()
        );
        for j in &line.jurisdictions {
            self.write_entry(out, j);
        }
        let _ = writeln!(
            out,
            "  line tax {}   line total {}",
            major(c, line.tax),
            major(c, line.amount_including_tax)
        );
        if line.taxability == Taxability::Unknown {
            let _ = writeln!(
                out,
                "  treatment UNKNOWN in {}: taxed at the rule the code inherits",
                gaps(self.table, line, self.date).join(", ")
            );
        }
    }

    /// One jurisdiction's entry on a line: a fee's part and amount, or a tax's rate, base
    /// and amount (marked ORIGIN when the ship-from address decided it).
    fn write_entry(&self, out: &mut String, j: &JurisdictionTax) {
        let c = self.calc.currency;
        let jur = self.table.jurisdiction(j.jurisdiction);
        let name = jur.map(|j| j.name()).unwrap_or("?");
        let level = jur.map(|j| j.level().as_str()).unwrap_or("");
        if matches!(
            j.note,
            Note::PerOrderFee | Note::SmallSeller | Note::FeeUnknown
        ) || (j.rate.is_zero() && !j.fee.is_zero())
        {
            // A fee: its part's name (its rule's rate type) and its amount.
            let part = self.table.rule(j.rule).map_or(name, |r| r.rate_type());
            let _ = writeln!(
                out,
                "  {:<45} fee {:>21}  {}",
                part,
                precise(c, j.fee),
                j.note.as_str()
            );
            return;
        }
        let _ = writeln!(
            out,
            "  {:<34} {:<9} {:>8}  on {:>12}  tax {:>10}  {}{}",
            name,
            level,
            percent(j.rate),
            major(c, j.taxable_base),
            precise(c, j.tax_due),
            j.note.as_str(),
            if j.sourced == Sourced::Origin {
                "  ORIGIN"
            } else {
                ""
            }
        );
    }

    /// The sale's totals and effective rate, and why no tax is due when none is.
    fn write_totals(&self, out: &mut String) {
        let (c, calc) = (self.calc.currency, self.calc);
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "Total      {} + tax {} = {} {}   (effective rate {})",
            major(c, calc.total_excluding_tax),
            major(c, calc.total_tax),
            major(c, calc.total_including_tax),
            c.code(),
            percent(calc.effective_rate().round_dp(6))
        );
        if let Some(z) = calc.zero_reason {
            let _ = writeln!(out, "No tax due: {}", z.note().as_str());
        }
    }

    /// What the answer may lack: codes whose treatment the matrix does not know, the
    /// place's note, and local taxes the table may not hold.
    fn write_warnings(&self, out: &mut String) {
        let (table, location, calc, date) = (self.table, self.location, self.calc, self.date);
        let used = &self.used;
        if calc.taxability == Taxability::Unknown {
            let codes: Vec<&str> = calc
                .lines
                .iter()
                .filter(|l| l.taxability == Taxability::Unknown)
                .filter_map(|l| table.tax_code_name(l.tax_code))
                .collect();
            let _ = writeln!(
                out,
                "Warning    PARTIAL coverage: this table's taxability matrix does not say how {} \
                 treats {}; see `levy taxability`",
                place_name(used),
                codes.join(", ")
            );
        }
        let note = table.place_note(location, date);
        if note != PlaceNote::None {
            // What decided among the places of the ZIP, or why the answer holds less.
            let _ = writeln!(
                out,
                "Place      {}: {}",
                note.as_str(),
                place_note(table, location, note, date)
            );
        }
        if let Some(stale) = &calc.stale {
            let _ = writeln!(
                out,
                "Warning    PARTIAL coverage: {} (build a table from newer sources with \
                 `levy build`)",
                stale.describe(table)
            );
        }
        self.write_coverage_warning(out);
    }

    /// The warning of an answer whose coverage is less than `FULL` for want of local taxes
    /// (an unknown treatment at a fully covered place, or a table past its horizon, is
    /// warned of already).
    fn write_coverage_warning(&self, out: &mut String) {
        let (location, calc) = (self.location, self.calc);
        match location.coverage.min(calc.coverage) {
            _ if calc.taxability == Taxability::Unknown && location.coverage == Coverage::Full => {}
            Coverage::Partial if calc.stale.is_some() && location.coverage == Coverage::Full => {}
            Coverage::Full => {}
            Coverage::Partial => {
                let _ = writeln!(
                    out,
                    "Warning    PARTIAL coverage: some local taxes of {} are in this table, \
                     others may be due that it does not hold (build a fuller table with \
                     `levy build`)",
                    place_name(&self.used)
                );
            }
            Coverage::StateOnly => {
                let _ = writeln!(
                    out,
                    "Warning    STATE_ONLY coverage: local taxes of {} may be due that this \
                     table does not hold (build a table with local rates with `levy build`)",
                    place_name(&self.used)
                );
            }
        }
    }
}

/// The places and levels whose treatment of a line's code the matrix lacks: `US-DC state`.
fn gaps(table: &AnyTable, line: &LineTax, date: Date) -> Vec<String> {
    table
        .taxability_gaps(line.tax_code, &line.jurisdictions, date)
        .into_iter()
        .map(|(place, level)| {
            let country = place.split('-').next().unwrap_or("");
            format!("{place} {}", level.name(country))
        })
        .collect()
}

/// The sentence of a location's note, with the places a buyer may name in its ZIP.
fn place_note(table: &AnyTable, location: &Location, note: PlaceNote, date: Date) -> String {
    let cities = table.zip_cities(location, date);
    match note {
        PlaceNote::SharedPlaces | PlaceNote::CityNotNamed if !cities.is_empty() => format!(
            "{} (places named in this ZIP code: {})",
            note.describe(),
            cities.join(", ")
        ),
        note => note.describe().to_string(),
    }
}

/// The place a coverage warning speaks of: the postal code and region, or what is known.
fn place_name(used: &Address) -> String {
    let parts: Vec<&str> = [
        used.postal_code.as_str(),
        used.region.as_str(),
        used.country.as_str(),
    ]
    .into_iter()
    .filter(|s| !s.is_empty())
    .collect();
    if parts.is_empty() {
        "this place".to_string()
    } else {
        parts.join(" ")
    }
}

fn render_json(
    table: &AnyTable,
    location: &Location,
    calc: &Calculation,
    categories: &[String],
    date: Date,
) -> serde_json::Value {
    use serde_json::{json, Value};
    let num = |d: Decimal| -> Value {
        // Decimal text straight into a JSON number (arbitrary precision): never through f64.
        serde_json::from_str(&d.normalize().to_string()).unwrap_or(Value::Null)
    };
    let lines: Vec<Value> = calc
        .lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let jurisdictions: Vec<Value> = line
                .jurisdictions
                .iter()
                .map(|j| {
                    let jur = table.jurisdiction(j.jurisdiction);
                    json!({
                        "jurisdiction_code": jur.map(|x| x.code()).unwrap_or(""),
                        "jurisdiction_name": jur.map(|x| x.name()).unwrap_or(""),
                        "tax_authority_type": jur.map(|x| x.level().as_str()).unwrap_or(""),
                        "tax_authority_name": jur.map(|x| x.authority()).unwrap_or(""),
                        "tax_type": jur.map(|x| x.tax_type().as_str()).unwrap_or(""),
                        "rate_type": table.rule(j.rule).map(|r| r.rate_type()).unwrap_or(""),
                        "rule_id": j.rule.0,
                        "tax_rate": num(j.rate),
                        "taxable_base": num(j.taxable_base),
                        "tax_due_decimal": num(j.tax_due),
                        "fee_amount": num(j.fee),
                        "note": j.note.as_str(),
                        "sourced_from": j.sourced.as_str(),
                    })
                })
                .collect();
            json!({
                "product_category": categories.get(i),
                "product_tax_code": table.tax_code_name(line.tax_code),
                "taxability": line.taxability.as_str(),
                "taxability_unknown_in": gaps(table, line, date),
                "quantity": line.quantity,
                "amount_excluding_tax": num(line.amount_excluding_tax),
                "tax_amount": num(line.tax),
                "amount_including_tax": num(line.amount_including_tax),
                "tax_jurisdictions": jurisdictions,
            })
        })
        .collect();
    let used = &table.address_used(location);
    let value = json!({
        "currency": calc.currency.code(),
        "tax_included_in_amount": calc.tax_included,
        "address_resolution_status": location.status.as_str(),
        "resolution_precision": location.precision.as_str(),
        "location_source": location.source.as_str(),
        "address_used": {
            "address_line_1": used.line1, "address_line_2": used.line2, "address_city": used.city,
            "address_province": used.region, "address_postal_code": used.postal_code, "address_country": used.country,
        },
        "line_items": lines,
        "total_tax_amount": num(calc.total_tax),
        "total_amount_excluding_tax": num(calc.total_excluding_tax),
        "total_amount_including_tax": num(calc.total_including_tax),
        "zero_reason": calc.zero_reason.map(|z| z.note().as_str()),
        "coverage": calc.coverage.as_str(),
        "place_note": table.place_note(location, date).as_str(),
        "stale_table": calc.stale.map(|s| s.describe(table)),
        "taxability": calc.taxability.as_str(),
        "sourcing": calc.sourcing.as_str(),
        "rounding": calc.rounding.as_str(),
        "table_hash": calc.table_hash_hex(),
    });
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_specs_parse_to_minor_units() {
        let usd = Currency::USD;
        assert_eq!(
            parse_line("19.99x2:clothing", usd).unwrap(),
            (Decimal::from(1999), 2, "CLOTHING".into())
        );
        assert_eq!(
            parse_line("100", usd).unwrap(),
            (Decimal::from(10_000), 1, "GENERAL_MERCHANDISE".into())
        );
        assert!(
            parse_line("1.001", usd).is_err(),
            "USD has two decimal places"
        );
        assert!(parse_line("-1", usd).is_err());
        assert!(parse_line("1x0.5", usd).is_err());
        let jpy = Currency::from_code("JPY").unwrap();
        assert_eq!(parse_line("500", jpy).unwrap().0, Decimal::from(500));
        assert!(parse_line("500.5", jpy).is_err(), "JPY has no minor unit");
    }

    #[test]
    fn dates_parse_strictly() {
        assert_eq!(
            parse_date("2026-03-01").unwrap(),
            Date::from_ymd(2026, 3, 1).unwrap()
        );
        assert!(parse_date("2026-02-30").is_err());
        assert!(parse_date("20260301").is_err());
    }
}
