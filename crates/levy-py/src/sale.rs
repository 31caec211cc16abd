//! One sale, from the fields a caller gives to a calculation: the same reading of an
//! address, an origin, a date, a currency and a line as `levy calc`, shared by
//! `Table.calculate` (one sale, many lines) and `calculate_batch` (a one-line sale a row).

use levy_core::{
    Address, AnyTable, AutomaticTax, Calculation, Currency, Customer, Date, Decimal, Location,
    Rounding, Sale, SaleLine, TaxCodeId,
};

/// The buyer's or the seller's place, as given.
#[derive(Clone, Copy, Debug, Default)]
pub struct Place<'a> {
    /// Street line.
    pub street: &'a str,
    /// City.
    pub city: &'a str,
    /// State or province (`TN`).
    pub province: &'a str,
    /// Postal code.
    pub postal_code: &'a str,
    /// ISO country; empty for the default (`US`).
    pub country: &'a str,
}

impl Place<'_> {
    /// Whether a postal code or a province is given (what `levy calc` resolves an address
    /// from; without either, the country alone decides).
    pub fn has_address(&self) -> bool {
        !self.postal_code.is_empty() || !self.province.is_empty()
    }

    /// Writes the place into `out`, reusing its strings.
    pub fn fill(&self, out: &mut Address) {
        set(&mut out.line1, self.street);
        out.line2.clear();
        set(&mut out.city, self.city);
        set(&mut out.region, self.province);
        set(&mut out.postal_code, self.postal_code);
        set(
            &mut out.country,
            if self.country.is_empty() {
                "US"
            } else {
                self.country
            },
        );
    }
}

fn set(s: &mut String, v: &str) {
    s.clear();
    s.push_str(v);
}

/// What the tax of a product is looked up by.
#[derive(Clone, Copy, Debug)]
pub enum Product<'a> {
    /// A category of the interface (`CLOTHING`), as `levy calc --line 10:CLOTHING`.
    Category(&'a str),
    /// A product tax code by exact name (`CLOTHING_GENERAL`).
    TaxCode(&'a str),
}

impl Product<'_> {
    /// The category levy calc uses when none is given.
    pub const DEFAULT: Product<'static> = Product::Category("GENERAL_MERCHANDISE");

    /// The table's tax code for the product.
    pub fn lookup(&self, table: &AnyTable) -> Result<TaxCodeId, String> {
        match *self {
            Product::Category(name) => table.category(name).ok_or_else(|| {
                format!("unknown product category {name:?} (Table.categories() lists them)")
            }),
            Product::TaxCode(name) => table
                .tax_code(name)
                .ok_or_else(|| format!("unknown tax code {name:?} (Table.tax_codes() lists them)")),
        }
    }

    /// The name as given.
    pub fn name(&self) -> &str {
        match self {
            Product::Category(n) | Product::TaxCode(n) => n,
        }
    }
}

/// The currency named by `code` (any case).
pub fn currency(code: &str) -> Result<Currency, String> {
    let code = code.trim();
    if code.is_empty() {
        return Ok(Currency::USD);
    }
    Currency::from_code(&code.to_ascii_uppercase())
        .ok_or_else(|| format!("unknown currency {code:?} (an ISO 4217 code such as USD)"))
}

/// The rounding named by `s` (`line` or `invoice`, any case; empty for `line`).
pub fn rounding(s: &str) -> Result<Rounding, String> {
    if s.trim().is_empty() {
        return Ok(Rounding::Line);
    }
    Rounding::parse(s).ok_or_else(|| format!("rounding {s:?}: expected line or invoice"))
}

/// A day written `YYYY-MM-DD`.
pub fn parse_date(s: &str) -> Result<Date, String> {
    let bad = || format!("date {s:?}: expected YYYY-MM-DD");
    let mut parts = s.trim().splitn(3, '-');
    let (Some(y), Some(m), Some(d)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(bad());
    };
    let y = y.parse::<i32>().map_err(|_| bad())?;
    let m = m.parse::<u32>().map_err(|_| bad())?;
    let d = d.parse::<u32>().map_err(|_| bad())?;
    Date::from_ymd(y, m, d).ok_or_else(bad)
}

/// Today in UTC, the day `levy calc` takes when none is given.
pub fn today() -> Date {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    Date::from_unix_seconds(secs)
}

/// An amount in major units (`19.99`) as minor units of `currency`, refused when negative
/// or finer than the currency's minor unit.
pub fn major_to_minor(major: Decimal, currency: Currency) -> Result<Decimal, String> {
    if major.is_sign_negative() && !major.is_zero() {
        return Err(format!(
            "amount {major} is negative: amounts must not be negative"
        ));
    }
    let minor = currency.to_minor(major);
    if !minor.fract().is_zero() {
        return Err(format!(
            "amount {major}: {} has at most {} decimal places",
            currency.code(),
            currency.minor_units()
        ));
    }
    Ok(minor.normalize())
}

/// A line in `levy calc --line` form, `AMOUNT[xQTY][:CATEGORY]`: (major amount, quantity,
/// category).
pub fn parse_line_spec(spec: &str) -> Result<(Decimal, u32, &str), String> {
    let (head, category) = match spec.split_once(':') {
        Some((h, c)) => (h, c.trim()),
        None => (spec, "GENERAL_MERCHANDISE"),
    };
    let (amount, quantity) = match head.split_once(['x', 'X']) {
        Some((a, q)) => (
            a,
            q.trim()
                .parse::<u32>()
                .map_err(|_| format!("line {spec:?}: bad quantity {q:?}"))?,
        ),
        None => (head, 1),
    };
    let major: Decimal = amount
        .trim()
        .parse()
        .map_err(|_| format!("line {spec:?}: {amount:?} is not a decimal amount"))?;
    Ok((major, quantity, category))
}

/// A quantity as the core takes it: 1 to `MAX_QUANTITY`.
pub fn quantity(q: i64) -> Result<u32, String> {
    match u32::try_from(q) {
        Ok(q) if (1..=levy_core::MAX_QUANTITY).contains(&q) => Ok(q),
        _ => Err(format!(
            "quantity {q}: must be between 1 and {}",
            levy_core::MAX_QUANTITY
        )),
    }
}

/// What is sold, apart from its lines.
#[derive(Clone, Copy, Debug)]
pub struct Terms<'a> {
    /// The buyer's place.
    pub to: Place<'a>,
    /// The seller's place, when a postal code or province of it is given.
    pub from: Option<Place<'a>>,
    /// The seller's country when no place of it is given (reverse charge).
    pub origin_country: &'a str,
    /// The day.
    pub date: Date,
    /// The currency.
    pub currency: Currency,
    /// Amounts include tax.
    pub tax_included: bool,
    /// The buyer is exempt.
    pub exempt: bool,
    /// How to round.
    pub rounding: Rounding,
}

/// Why a sale could not be calculated.
#[derive(Clone, Debug)]
pub enum SaleError {
    /// The buyer's address (`origin: false`) or the seller's resolves nowhere; with the
    /// interface's error type (`ZIP_STATE_MISMATCH`, ...).
    Resolve {
        /// Whether it is the seller's address.
        origin: bool,
        /// What is wrong.
        message: String,
        /// The interface's error type.
        error_type: &'static str,
    },
    /// The sale itself (an amount, a quantity, a tax code).
    Sale(String),
}

impl std::fmt::Display for SaleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SaleError::Resolve {
                origin,
                message,
                error_type,
            } => {
                let whose = if *origin { "origin address: " } else { "" };
                write!(f, "{whose}{message} ({error_type})")
            }
            SaleError::Sale(m) => f.write_str(m),
        }
    }
}

fn resolve_error(origin: bool, e: levy_core::ResolveError) -> SaleError {
    SaleError::Resolve {
        origin,
        message: e.to_string(),
        error_type: e.error_type(),
    }
}

/// Buffers reused from sale to sale: a worker calculates without allocating once they have
/// grown.
pub struct Worker<'t> {
    /// The table.
    pub table: &'t AnyTable,
    address: Address,
    origin_address: Address,
    /// The buyer's place, after [`Worker::calculate`].
    pub location: Location,
    origin: Location,
    sale: Sale,
    /// The calculation, after a [`Worker::calculate`] that succeeded (kept from sale to
    /// sale so that its vectors are reused).
    calc: Option<Calculation>,
}

/// A sale of no line yet, to fill with [`set_terms`] and lines.
pub fn new_sale() -> Sale {
    Sale {
        currency: Currency::USD,
        tax_included: false,
        customer: Customer::default(),
        automatic_tax: AutomaticTax::Auto,
        date: Date(0),
        origin_country: None,
        rounding: Rounding::Line,
        lines: Vec::with_capacity(1),
    }
}

/// Writes `terms` into `sale` (all but the places), with the seller's country
/// `origin_country` when known.
pub fn set_terms(sale: &mut Sale, terms: &Terms<'_>, origin_country: Option<&str>) {
    sale.currency = terms.currency;
    sale.tax_included = terms.tax_included;
    sale.customer.exempt = terms.exempt;
    sale.date = terms.date;
    sale.rounding = terms.rounding;
    sale.origin_country = if !terms.origin_country.is_empty() {
        Some(terms.origin_country.to_ascii_uppercase())
    } else {
        origin_country.map(str::to_ascii_uppercase)
    };
}

/// The message of a resolve error, as `levy calc` writes it: `... (ZIP_STATE_MISMATCH)`.
pub fn resolve_message(e: &levy_core::ResolveError) -> String {
    format!("{e} ({})", e.error_type())
}

impl<'t> Worker<'t> {
    /// A worker on `table`.
    pub fn new(table: &'t AnyTable) -> Worker<'t> {
        let sale = new_sale();
        Worker {
            table,
            address: Address::default(),
            origin_address: Address::default(),
            location: Location::default(),
            origin: Location::default(),
            sale,
            calc: None,
        }
    }

    /// Resolves `place` on `date` into `self.location`, as `levy calc` does (an address
    /// when a postal code or province is given, else the country alone).
    fn locate(&mut self, place: &Place<'_>, date: Date) -> Result<(), SaleError> {
        place.fill(&mut self.address);
        self.table
            .resolve_into(&self.address, date, &mut self.location)
            .map_err(|e| resolve_error(false, e))
    }

    /// The lines of the next sale, to fill before [`Worker::calculate`].
    pub fn lines(&mut self) -> &mut Vec<SaleLine> {
        &mut self.sale.lines
    }

    /// Calculates the sale of `terms` with the lines set by [`Worker::lines`], into
    /// `self.calc` (and the buyer's place into `self.location`).
    pub fn calculate(&mut self, terms: &Terms<'_>) -> Result<(), SaleError> {
        self.locate(&terms.to, terms.date)?;
        let origin = match &terms.from {
            Some(from) => {
                let mut place = *from;
                if place.country.is_empty() {
                    place.country = terms.origin_country;
                }
                place.fill(&mut self.origin_address);
                self.table
                    .resolve_into(&self.origin_address, terms.date, &mut self.origin)
                    .map_err(|e| resolve_error(true, e))?;
                Some(&self.origin)
            }
            None => None,
        };
        let sale = &mut self.sale;
        set_terms(sale, terms, origin.map(|o| o.country()));
        match &mut self.calc {
            Some(calc) => self
                .table
                .calculate_into(origin, &self.location, sale, calc)
                .map_err(|e| SaleError::Sale(e.to_string())),
            None => {
                let calc = self
                    .table
                    .calculate_from(origin, &self.location, sale)
                    .map_err(|e| SaleError::Sale(e.to_string()))?;
                self.calc = Some(calc);
                Ok(())
            }
        }
    }

    /// The calculation of the last [`Worker::calculate`], when it succeeded.
    pub fn calc(&self) -> Option<&Calculation> {
        self.calc.as_ref()
    }
}
