//! One sale, from the fields a caller gives to a calculation, as the front door takes it: a
//! translation into levy-core's [`Order`] (the reading of a day, a currency, an amount and
//! a line is [`levy_core::quote::read`]'s, the same as `levy calc`'s), shared by
//! `Table.calculate` (one sale, many lines) and `calculate_batch` (a one-line sale a row).

use levy_core::quote::{read, Ip, Order, QuoteError, QuoteErrorKind, Quoter};
use levy_core::{
    Address, AnyTable, Calculation, Currency, Date, Decimal, Delivery, IpMode, Location, Rounding,
    SaleLine, TaxCodeId,
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
    /// Whether a postal code or a province is given (what a ship-from place needs).
    pub fn has_address(&self) -> bool {
        !self.postal_code.is_empty() || !self.province.is_empty()
    }

    /// Whether anything below the country is given.
    fn has_any(&self) -> bool {
        [self.street, self.city, self.province, self.postal_code]
            .iter()
            .any(|s| !s.is_empty())
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
    pub const DEFAULT: Product<'static> = Product::Category(read::DEFAULT_CATEGORY);

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

/// The currency named by `code` (any case; empty for USD).
pub fn currency(code: &str) -> Result<Currency, String> {
    read::currency(code).map_err(|e| e.message)
}

/// The rounding named by `s` (`line` or `invoice`, any case; empty for `line`).
pub fn rounding(s: &str) -> Result<Rounding, String> {
    read::rounding(s).map_err(|e| e.message)
}

/// The IP mode named by `s` (`strict`, `zero`, `approximate`, `best_effort`; empty for
/// `strict`).
pub fn ip_mode(s: &str) -> Result<IpMode, String> {
    read::ip_mode(s).map_err(|e| e.message)
}

/// A day written `YYYY-MM-DD`.
pub fn parse_date(s: &str) -> Result<Date, String> {
    read::date(s).map_err(|e| format!("date {s:?}: expected YYYY-MM-DD ({})", e.message))
}

/// Today in UTC, the day `levy calc` takes when none is given.
pub fn today() -> Date {
    Date::today()
}

/// An amount in major units (`19.99`) as minor units of `currency`, refused when negative
/// or finer than the currency's minor unit.
pub fn major_to_minor(major: Decimal, currency: Currency) -> Result<Decimal, String> {
    read::minor_amount(major, currency).map_err(|e| e.message)
}

/// A line in `levy calc --line` form, `AMOUNT[xQTY][:CATEGORY]`: (major amount, quantity,
/// category).
pub fn parse_line_spec(spec: &str) -> Result<(Decimal, u32, &str), String> {
    read::line_spec(spec).map_err(|e| e.message)
}

/// A quantity as the core takes it: 1 to `MAX_QUANTITY`.
pub fn quantity(q: i64) -> Result<u32, String> {
    read::quantity(q).map_err(|e| e.message)
}

/// What is sold, apart from its lines.
#[derive(Clone, Copy, Debug)]
pub struct Terms<'a> {
    /// The buyer's place.
    pub to: Place<'a>,
    /// The buyer's IP address (empty for none): the place when no address is given below
    /// the country, or when the address cannot be resolved.
    pub ip: &'a str,
    /// How to resolve `ip`.
    pub ip_mode: IpMode,
    /// The seller's place, when a postal code or province of it is given.
    pub from: Option<Place<'a>>,
    /// The seller's country when no place of it is given (reverse charge).
    pub origin_country: &'a str,
    /// The day.
    pub date: Date,
    /// The currency.
    pub currency: Currency,
    /// One unit of the sale's currency in the place's, when given.
    pub exchange_rate: Option<Decimal>,
    /// Amounts include tax.
    pub tax_included: bool,
    /// The buyer is exempt.
    pub exempt: bool,
    /// How to round.
    pub rounding: Rounding,
    /// A retail delivery (owes the destination state's per-order fees).
    pub delivery: bool,
    /// With `delivery`: the seller's retail sales in the state the year before, major units
    /// (claims a fee's small-seller exemption).
    pub seller_sales: Option<Decimal>,
}

/// Why a sale could not be calculated: the front door's kind, the message, and for a place
/// or an origin that resolves nowhere the interface's error type of the resolution.
#[derive(Clone, Debug)]
pub struct SaleError {
    /// The front door's kind (`UNSUPPORTED_LOCATION`, `EXCHANGE_RATE_REQUIRED`, ...).
    pub kind: QuoteErrorKind,
    /// What is wrong.
    pub message: String,
    /// The resolution's error type, when a place or an origin failed.
    pub error_type: Option<&'static str>,
}

impl std::fmt::Display for SaleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl SaleError {
    fn of(e: &QuoteError) -> SaleError {
        SaleError {
            kind: e.kind(),
            message: e.to_string(),
            error_type: e.resolve_error().map(|r| r.error_type()),
        }
    }
}

/// The message of a resolve error, as `levy calc` writes it: `... (ZIP_STATE_MISMATCH)`.
pub fn resolve_message(e: &levy_core::ResolveError) -> String {
    format!("{e} ({})", e.error_type())
}

/// The order `terms` describe, written into `order` (its buffers reused; the lines are the
/// caller's, in `order.sale.lines`).
pub fn fill_order(order: &mut Order, terms: &Terms<'_>) {
    if terms.to.has_any() || terms.ip.is_empty() {
        terms.to.fill(order.address_mut());
    } else {
        order.address = None;
    }
    if terms.ip.is_empty() {
        order.ip = None;
    } else {
        let ip = order.ip.get_or_insert_with(Ip::default);
        set(&mut ip.value, terms.ip);
        ip.mode = terms.ip_mode;
    }
    match &terms.from {
        Some(from) => {
            let mut place = *from;
            if place.country.is_empty() {
                place.country = terms.origin_country;
            }
            place.fill(order.origin_mut());
        }
        None => order.origin = None,
    }
    order.origin_country =
        (!terms.origin_country.is_empty()).then(|| terms.origin_country.to_ascii_uppercase());
    order.date = Some(terms.date);
    order.exchange_rate = terms.exchange_rate;
    order.delivery = terms.delivery.then_some(Delivery {
        retail: true,
        seller_sales_previous_year: terms.seller_sales,
    });
    let sale = &mut order.sale;
    sale.currency = terms.currency;
    sale.tax_included = terms.tax_included;
    sale.customer.exempt = terms.exempt;
    sale.rounding = terms.rounding;
}

/// Buffers reused from sale to sale: a worker calculates without allocating once they have
/// grown.
pub struct Worker<'t> {
    /// The table.
    pub table: &'t AnyTable,
    order: Order,
    quoter: Quoter,
    /// The buyer's place, after [`Worker::calculate`].
    pub location: Location,
    /// The calculation, after a [`Worker::calculate`] that succeeded (kept from sale to
    /// sale so that its vectors are reused).
    calc: Option<Calculation>,
}

impl<'t> Worker<'t> {
    /// A worker on `table`.
    pub fn new(table: &'t AnyTable) -> Worker<'t> {
        Worker {
            table,
            order: Order::new(),
            quoter: Quoter::new(),
            location: Location::default(),
            calc: None,
        }
    }

    /// The lines of the next sale, to fill before [`Worker::calculate`].
    pub fn lines(&mut self) -> &mut Vec<SaleLine> {
        &mut self.order.sale.lines
    }

    /// Calculates the sale of `terms` with the lines set by [`Worker::lines`] through the
    /// front door, into `self.calc` (and the buyer's place into `self.location`).
    pub fn calculate(&mut self, terms: &Terms<'_>) -> Result<(), SaleError> {
        fill_order(&mut self.order, terms);
        self.quoter
            .quote(self.table, &mut self.order)
            .map_err(|e| SaleError::of(&e))?;
        let calc = self.calc.get_or_insert_with(Calculation::default);
        self.quoter.swap_answer(calc, &mut self.location);
        Ok(())
    }

    /// The calculation of the last [`Worker::calculate`], when it succeeded.
    pub fn calc(&self) -> Option<&Calculation> {
        self.calc.as_ref()
    }
}

/// A window of sales quoted together ([`Quoter::quote_batch`]): their orders, quoter and
/// calculations kept from window to window.
pub struct Batch {
    /// The orders of the window's ready rows, in order.
    pub orders: Vec<Order>,
    quoter: Quoter,
    /// The calculations of the last [`Batch::quote`], order for order.
    pub calcs: Vec<Calculation>,
}

impl Default for Batch {
    fn default() -> Batch {
        Batch::new()
    }
}

impl Batch {
    /// Empty buffers.
    pub fn new() -> Batch {
        Batch {
            orders: Vec::new(),
            quoter: Quoter::new(),
            calcs: Vec::new(),
        }
    }

    /// Quotes the first `n` orders together: the refused ones' indexes and errors.
    pub fn quote(&mut self, table: &AnyTable, n: usize) -> Vec<(usize, SaleError)> {
        let refused =
            self.quoter
                .quote_batch(table, &mut self.orders[..n], |_| false, &mut self.calcs);
        refused
            .into_iter()
            .map(|(i, e)| (i, SaleError::of(&e)))
            .collect()
    }

    /// The place of order `i` of the last [`Batch::quote`].
    pub fn location(&self, i: usize) -> Option<&Location> {
        self.quoter.batch_location(i)
    }
}
