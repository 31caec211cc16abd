//! The one front door of a calculation: a typed sale ([`Order`]) in, the calculation with
//! its place, notes and errors out ([`Quoter::quote`]). Every front (the service interface
//! and its dialects, the C library, the Python package, `levy calc`) translates its input
//! into an [`Order`], calls the [`Quoter`], and translates the answer and the
//! [`QuoteError`] (by its [`QuoteErrorKind`]) into its own form. The policy lives here
//! only:
//!
//! | question | answer |
//! |---|---|
//! | where is the sale taxed | the buyer's address first; the IP address (in its [`IpMode`]) when no address is given or the address cannot be resolved; neither is [`QuoteError::NoPlace`] |
//! | a place refused | the address's error (the IP being the fallback), with the IP's beside it |
//! | the ship-from address | resolved on the sale's day; one that cannot be is refused ([`UnresolvedOrigin::Refuse`]) or the sale taxed at the destination ([`UnresolvedOrigin::Destination`], the interface's rule), as the order says |
//! | the seller's country (reverse charge) | the one the order names, else the resolved origin's |
//! | the day | the order's; today (UTC) when it names none |
//! | a day before the table | refused ([`QuoteError::BeforeTable`]) when it is before the first day the table holds the place's state or country tax |
//! | a day after the table's horizon | answered, at most `PARTIAL`, with the input past its horizon in [`Calculation::stale`] (the `STALE_TABLE` note) |
//! | another currency than the place's | calculated as given while no rule with an amount touches the sale; else refused ([`QuoteErrorKind::ExchangeRateRequired`]) unless an exchange rate is given, then calculated on converted amounts and answered in the sale's currency (see [`currency`]) |
//! | per-order fees | added for a retail delivery ([`Order::delivery`]) after the lines |
//!
//! A [`Quoter`] keeps its buffers (the place, the origin, the calculation) from sale to
//! sale, so a caller that keeps one quoter and one order calculates without allocating once
//! they have grown, as [`Table::calculate_into`] and [`Table::resolve_into`] do.
//!
//! ```
//! # use levy_core::*;
//! # use levy_core::quote::{Order, Quoter};
//! # use rust_decimal::Decimal;
//! # let mut b = TableBuilder::new();
//! # b.tax_code("GENERAL_MERCHANDISE", None, "Tangible personal property").unwrap();
//! # b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
//! # let tn = b.jurisdiction(JurisdictionSpec {
//! #     code: "47".into(), name: "TENNESSEE".into(), level: Level::State,
//! #     country: "US".into(), region: "TN".into(),
//! #     authority: "TENNESSEE DEPARTMENT OF REVENUE".into(), tax_type: TaxType::Sales,
//! # }).unwrap();
//! # b.rule(RuleSpec::flat(tn, "GENERAL_MERCHANDISE", Decimal::new(7, 2), Date::MIN, Date::MAX,
//! #     "GENERAL STATE SALES TAX")).unwrap();
//! # b.region("US", "TN", "TENNESSEE", &[tn], "").unwrap();
//! # let table = Table::from_bytes(&b.build(0).unwrap()).unwrap();
//! let mut order = Order::new();
//! order.address = Some(Address { region: "TN".into(), country: "US".into(), ..Default::default() });
//! order.date = Date::from_ymd(2026, 3, 1);
//! order.sale.lines.push(SaleLine { amount: Decimal::from(10_000), quantity: 1, per_unit: false,
//!     tax_code: table.category("GENERAL_MERCHANDISE").unwrap() });
//! let mut quoter = Quoter::new();
//! let quoted = quoter.quote(&table, &mut order).unwrap();
//! assert_eq!(quoted.calculation.total_tax, Decimal::from(700)); // 7% of $100.00
//! ```

use rust_decimal::Decimal;

use crate::calc::{CalcError, Calculation, Delivery, FeeOutcome, Sale, Stale};
use crate::date::Date;
use crate::kinds::{Coverage, PlaceNote};
use crate::lookup::JurisdictionId;
use crate::money::Currency;
use crate::resolve::{Address, IpMode, Location, ResolveError};
use crate::table::Table;

pub mod currency;
mod errors;
pub mod read;

pub use errors::{InputError, QuoteError, QuoteErrorKind};

/// The buyer's IP address and how to resolve it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ip {
    /// IPv4 or IPv6 text.
    pub value: String,
    /// The resolution mode.
    pub mode: IpMode,
}

/// What to do with a ship-from address that cannot be resolved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum UnresolvedOrigin {
    /// Refuse the sale ([`QuoteError::Origin`]): the C library, the Python package and
    /// `levy calc`, whose callers give the origin themselves.
    #[default]
    Refuse,
    /// Tax the sale at the destination and say so ([`Quoted::origin_error`]): the service
    /// interface's rule (`Levy-Sourcing: DESTINATION; origin-unresolved`).
    Destination,
}

/// A typed sale: where, when, in what currency, and its lines and buyer ([`Order::sale`]).
#[derive(Clone, Debug)]
pub struct Order {
    /// The buyer's address (a country alone is an address: its country-level tax).
    pub address: Option<Address>,
    /// The buyer's IP address: the place when no address is given or the address fails.
    pub ip: Option<Ip>,
    /// The address the goods ship from, for states that source a sale within the state
    /// at the origin; its country decides reverse charge.
    pub origin: Option<Address>,
    /// What an origin that cannot be resolved does.
    pub unresolved_origin: UnresolvedOrigin,
    /// The seller's country (ISO 3166-1 alpha-2) when the order names it apart from an
    /// origin address; else the origin's, when resolved.
    pub origin_country: Option<String>,
    /// The day of the sale; today (UTC) when `None`.
    pub date: Option<Date>,
    /// One unit of the sale's currency in the place's (`0.0067` for yen in Nashville):
    /// used only where the currencies differ and a rule with an amount touches the sale.
    pub exchange_rate: Option<Decimal>,
    /// A retail delivery, which owes the destination state's per-order fees.
    pub delivery: Option<Delivery>,
    /// The buyer's exemptions from this index on also exempt a per-order fee; those before
    /// it (places where the seller does not collect, which decide the fee by their own
    /// registration) do not. 0: all of them.
    pub fee_exemptions_from: usize,
    /// The lines, the buyer, the currency and the terms. Its `date` and `origin_country`
    /// are written by the quoter (the order's day and the seller's country).
    pub sale: Sale,
}

impl Order {
    /// An order of no line, in USD, today, with no place yet.
    pub fn new() -> Order {
        Order {
            address: None,
            ip: None,
            origin: None,
            unresolved_origin: UnresolvedOrigin::Refuse,
            origin_country: None,
            date: None,
            exchange_rate: None,
            delivery: None,
            fee_exemptions_from: 0,
            sale: Sale::default(),
        }
    }

    /// The buyer's address, kept for refilling (its strings reused): a front that fills an
    /// address sale after sale writes it through this.
    pub fn address_mut(&mut self) -> &mut Address {
        self.address.get_or_insert_with(Address::default)
    }

    /// The ship-from address, kept for refilling as [`Order::address_mut`] keeps the buyer's.
    pub fn origin_mut(&mut self) -> &mut Address {
        self.origin.get_or_insert_with(Address::default)
    }
}

impl Default for Order {
    fn default() -> Order {
        Order::new()
    }
}

/// The answer to an order: the calculation, the place and the origin it was taxed at.
#[derive(Debug, Clone, Copy)]
pub struct Quoted<'q> {
    /// The calculation, in the sale's currency.
    pub calculation: &'q Calculation,
    /// The buyer's place.
    pub location: &'q Location,
    /// The resolved ship-from place, when the order gave one.
    pub origin: Option<&'q Location>,
    /// Why the ship-from address was not used, under [`UnresolvedOrigin::Destination`].
    pub origin_error: Option<&'q ResolveError>,
    /// What each per-order fee did (empty for a sale that is not a retail delivery).
    pub fees: &'q [FeeOutcome],
    /// The day the sale was taxed on.
    pub date: Date,
    /// The exchange rate the amounts were converted at, when they were.
    pub converted_at: Option<Decimal>,
}

/// The front door: calculates orders on a table, keeping its buffers from one to the next.
/// One per thread (it is `Send`); the table is an argument of each call.
#[derive(Debug)]
pub struct Quoter {
    location: Location,
    origin: Location,
    origin_state: Origin,
    calc: Calculation,
    priced: Priced,
    date: Date,
    batch: BatchBuffers,
}

/// What pricing keeps between sales: the converted sale, the fees' outcomes, the rate.
#[derive(Debug, Default)]
struct Priced {
    converted: Option<Sale>,
    fees: Vec<FeeOutcome>,
    converted_at: Option<Decimal>,
}

/// The buffers of [`Quoter::quote_batch`].
#[derive(Debug, Default)]
struct BatchBuffers {
    /// The places of a batch's orders; an order at the previous order's place shares it.
    locations: Vec<Location>,
    /// Each order's place (an index into `locations`), `usize::MAX` when refused.
    place_of: Vec<usize>,
    /// The orders calculated together, by index.
    queued: Vec<usize>,
    calcs: Vec<Calculation>,
}

/// Batches larger than this let go of their buffers afterwards.
const BATCH_KEPT: usize = 65_536;

#[derive(Debug)]
enum Origin {
    None,
    Resolved,
    Unresolved(ResolveError),
}

impl Default for Quoter {
    fn default() -> Quoter {
        Quoter::new()
    }
}

impl Quoter {
    /// A quoter with empty buffers.
    pub fn new() -> Quoter {
        Quoter {
            location: Location::default(),
            origin: Location::default(),
            origin_state: Origin::None,
            calc: Calculation::empty([0; 32], &Order::new().sale),
            priced: Priced::default(),
            date: Date(0),
            batch: BatchBuffers::default(),
        }
    }

    /// Calculates `order` on `table`: [`Quoter::place`], then [`Quoter::price`].
    pub fn quote<D>(
        &mut self,
        table: &Table<D>,
        order: &mut Order,
    ) -> Result<Quoted<'_>, QuoteError> {
        self.place(table, order)?;
        self.price(table, order)
    }

    /// The first half of [`Quoter::quote`], for a front that decides something by the
    /// place before the tax (the interface's registrations): the day, the buyer's place and
    /// the origin resolved, the order's sale given its day and seller's country.
    pub fn place<D>(
        &mut self,
        table: &Table<D>,
        order: &mut Order,
    ) -> Result<(&Location, Option<&Location>), QuoteError> {
        self.date = order.date.unwrap_or_else(Date::today);
        locate(table, order, self.date, &mut self.location)?;
        within_table(table, &self.location, self.date)?;
        self.origin_state = resolve_origin(table, order, self.date, &mut self.origin)?;
        date_the_sale(order, self.date, self.origin());
        Ok((&self.location, self.origin()))
    }

    fn origin(&self) -> Option<&Location> {
        matches!(self.origin_state, Origin::Resolved).then_some(&self.origin)
    }

    /// The second half of [`Quoter::quote`], after [`Quoter::place`] on the same order:
    /// the tax of the order's sale at its place, with its per-order fees, in its currency.
    pub fn price<D>(&mut self, table: &Table<D>, order: &Order) -> Result<Quoted<'_>, QuoteError> {
        let origin = matches!(self.origin_state, Origin::Resolved).then_some(&self.origin);
        let at = (&self.location, origin);
        price_into(table, order, at, &mut self.calc, &mut self.priced)?;
        Ok(Quoted {
            calculation: &self.calc,
            location: &self.location,
            origin: self.origin(),
            origin_error: match &self.origin_state {
                Origin::Unresolved(e) => Some(e),
                _ => None,
            },
            fees: &self.priced.fees,
            date: self.date,
            converted_at: self.priced.converted_at,
        })
    }

    /// What the last place resolved says of the places its ZIP code holds
    /// ([`Table::place_note`]), on the day it was taxed on.
    pub fn place_note<D>(&self, table: &Table<D>) -> PlaceNote {
        table.place_note(&self.location, self.date)
    }

    /// Swaps the last calculation and place with `calc` and `location`, so that a front
    /// that keeps its answers (the C library's results) takes them without copying, and
    /// hands back buffers to reuse.
    pub fn swap_answer(&mut self, calc: &mut Calculation, location: &mut Location) {
        std::mem::swap(&mut self.calc, calc);
        std::mem::swap(&mut self.location, location);
    }

    /// The place of order `i` of the last [`Quoter::quote_batch`], unless it was refused.
    pub fn batch_location(&self, i: usize) -> Option<&Location> {
        let place = *self.batch.place_of.get(i)?;
        self.batch.locations.get(place)
    }

    /// Calculates many orders, each as [`Quoter::quote`] would, into `out`: after the call
    /// `out[i]` is the calculation of `orders[i]` (no lines and zero totals when it was
    /// refused), and the returned list holds each refused order's index and error, in
    /// order (empty when none was, which allocates nothing). The calculations already in
    /// `out` are reused, vectors and all. Orders without an origin are calculated together
    /// ([`Table::calculate_batch`], which fetches the next sales' records ahead); an order
    /// for which `same_place(i)` says its address is the previous order's, on the same
    /// given day, shares that order's place instead of resolving it again. Such an order
    /// need not carry the address itself: one whose `address` is `None` is at the address
    /// of the order before it (a till's batch at its own address copies it into no order
    /// but the first).
    pub fn quote_batch<D>(
        &mut self,
        table: &Table<D>,
        orders: &mut [Order],
        same_place: impl Fn(usize) -> bool,
        out: &mut Vec<Calculation>,
    ) -> Vec<(usize, QuoteError)> {
        let mut errors = Vec::new();
        out.truncate(orders.len());
        while out.len() < orders.len() {
            out.push(Calculation::empty(
                table.header().content_hash,
                &orders[out.len()].sale,
            ));
        }
        let mut b = std::mem::take(&mut self.batch);
        self.place_batch(table, orders, &same_place, &mut b, out, &mut errors);
        if b.queued.len() == orders.len() {
            // Every order queued, in order (the usual batch: no origin, none refused): the
            // calculations go straight into `out`, not through `b.calcs` and a swap each.
            self.price_all(table, orders, &b, out, &mut errors);
        } else {
            self.price_queued(table, orders, &mut b, out, &mut errors);
        }
        if b.locations.len().max(b.calcs.len()) <= BATCH_KEPT {
            self.batch = b;
        }
        errors.sort_by_key(|(i, _)| *i);
        errors
    }

    /// Each order of a batch placed (sharing the previous order's place when it may), an
    /// order with an origin priced at once into `out`, the others queued.
    fn place_batch<D>(
        &mut self,
        table: &Table<D>,
        orders: &mut [Order],
        same_place: &dyn Fn(usize) -> bool,
        b: &mut BatchBuffers,
        out: &mut [Calculation],
        errors: &mut Vec<(usize, QuoteError)>,
    ) {
        b.place_of.clear();
        b.queued.clear();
        let mut used = 0;
        // The order whose address order `i` is at: its own, or, for an order that
        // `same_place` marks and that carries none, the one before it is at.
        let mut holder = usize::MAX;
        for i in 0..orders.len() {
            let date = orders[i].date.unwrap_or_else(Date::today);
            let same = i > 0 && same_place(i);
            if orders[i].address.is_some() {
                holder = i;
            } else if !same {
                holder = usize::MAX;
            }
            let shares = same && holder != usize::MAX && {
                let prev = b.place_of[i - 1];
                prev != usize::MAX
                    && orders[i].date.is_some()
                    && orders[i - 1].date == orders[i].date
                    && b.locations[prev].source == crate::resolve::LocationSource::Address
            };
            let place = if shares { b.place_of[i - 1] } else { used };
            if !shares {
                if b.locations.len() == used {
                    b.locations.push(Location::default());
                }
                let address = orders.get(holder).and_then(|o| o.address.as_ref());
                let at = &mut b.locations[place];
                let located = locate_at(table, (address, orders[i].ip.as_ref()), date, at)
                    .and_then(|()| within_table(table, &b.locations[place], date));
                if let Err(e) = located {
                    b.place_of.push(usize::MAX);
                    out[i].clear();
                    errors.push((i, e));
                    continue;
                }
                used += 1;
            }
            b.place_of.push(place);
            let order = &mut orders[i];
            match resolve_origin(table, order, date, &mut self.origin) {
                Err(e) => {
                    out[i].clear();
                    errors.push((i, e));
                }
                Ok(Origin::Resolved) => {
                    date_the_sale(order, date, Some(&self.origin));
                    let at = (&b.locations[place], Some(&self.origin));
                    if let Err(e) = price_into(table, order, at, &mut out[i], &mut self.priced) {
                        out[i].clear();
                        errors.push((i, e));
                    }
                }
                Ok(_) => {
                    date_the_sale(order, date, None);
                    b.queued.push(i);
                }
            }
        }
    }

    /// Every order of a batch, all queued in order, calculated together straight into
    /// `out`, each then given its fees and its currency's answer.
    fn price_all<D>(
        &mut self,
        table: &Table<D>,
        orders: &[Order],
        b: &BatchBuffers,
        out: &mut Vec<Calculation>,
        errors: &mut Vec<(usize, QuoteError)>,
    ) {
        let (locations, place_of) = (&b.locations, &b.place_of);
        let items = orders
            .iter()
            .zip(place_of)
            .map(|(order, &place)| (&locations[place], &order.sale));
        let mut failed = table.calculate_batch(items, out).into_iter().peekable();
        for (i, calc) in out.iter_mut().enumerate() {
            let e = failed.next_if(|(at, _)| *at == i).map(|(_, e)| e);
            let at = &locations[place_of[i]];
            self.settle(table, (i, &orders[i]), at, calc, e, errors);
        }
    }

    /// The queued orders of a batch calculated together, each then given its fees and its
    /// currency's answer, into `out`.
    fn price_queued<D>(
        &mut self,
        table: &Table<D>,
        orders: &[Order],
        b: &mut BatchBuffers,
        out: &mut [Calculation],
        errors: &mut Vec<(usize, QuoteError)>,
    ) {
        let BatchBuffers {
            locations,
            place_of,
            queued,
            calcs,
        } = b;
        let items = queued
            .iter()
            .map(|&i| (&locations[place_of[i]], &orders[i].sale));
        let mut failed = table.calculate_batch(items, calcs).into_iter().peekable();
        for (k, calc) in calcs.iter_mut().enumerate() {
            let i = queued[k];
            std::mem::swap(&mut out[i], calc);
            let e = failed.next_if(|(at, _)| *at == k).map(|(_, e)| e);
            let at = &locations[place_of[i]];
            self.settle(table, (i, &orders[i]), at, &mut out[i], e, errors);
        }
    }

    /// Order `i`'s calculation of a batch at `location`, once its lines are calculated: a
    /// refusal of its sale (`failed`) noted, else its fees and currency's answer given.
    fn settle<D>(
        &mut self,
        table: &Table<D>,
        (i, order): (usize, &Order),
        location: &Location,
        calc: &mut Calculation,
        failed: Option<CalcError>,
        errors: &mut Vec<(usize, QuoteError)>,
    ) {
        let settled = match failed {
            Some(e) => Err(QuoteError::Sale(e)),
            None => finish(table, order, (location, None), calc, &mut self.priced),
        };
        if let Err(e) = settled {
            calc.clear();
            errors.push((i, e));
        }
    }
}

/// The ship-from place into `out`, when the order gives one; one that cannot be resolved is
/// refused or set aside, as the order says.
fn resolve_origin<D>(
    table: &Table<D>,
    order: &Order,
    date: Date,
    out: &mut Location,
) -> Result<Origin, QuoteError> {
    Ok(match &order.origin {
        None => Origin::None,
        Some(a) => match table.resolve_into(a, date, out) {
            Ok(()) => Origin::Resolved,
            Err(e) => match order.unresolved_origin {
                UnresolvedOrigin::Refuse => return Err(QuoteError::Origin(e)),
                UnresolvedOrigin::Destination => Origin::Unresolved(e),
            },
        },
    })
}

/// The order's sale given its day and the seller's country: the order's, else the
/// resolved origin's.
fn date_the_sale(order: &mut Order, date: Date, origin: Option<&Location>) {
    order.sale.date = date;
    let country = match &order.origin_country {
        Some(c) => Some(c.as_str()),
        None => origin.map(Location::country),
    };
    match country {
        Some(c) => {
            let s = order.sale.origin_country.get_or_insert_with(String::new);
            s.clear();
            s.extend(c.trim().chars().map(|c| c.to_ascii_uppercase()));
        }
        None => order.sale.origin_country = None,
    }
}

/// The tax of the order's sale at its place (`at`: the buyer's, the origin's) into `calc`,
/// with its fees and its currency's answer.
fn price_into<D>(
    table: &Table<D>,
    order: &Order,
    at: (&Location, Option<&Location>),
    calc: &mut Calculation,
    priced: &mut Priced,
) -> Result<(), QuoteError> {
    if let Some(rate) = order.exchange_rate {
        if rate <= Decimal::ZERO {
            return Err(QuoteError::InvalidExchangeRate(rate));
        }
    }
    let (location, origin) = at;
    table
        .calculate_into(origin, location, &order.sale, calc)
        .map_err(QuoteError::Sale)?;
    finish(table, order, at, calc, priced)
}

/// After the lines of `calc`: the per-order fees, then, for a sale in another currency than
/// its place's that meets an amount, the calculation again on converted amounts.
fn finish<D>(
    table: &Table<D>,
    order: &Order,
    at: (&Location, Option<&Location>),
    calc: &mut Calculation,
    priced: &mut Priced,
) -> Result<(), QuoteError> {
    let location = at.0;
    priced.converted_at = None;
    priced.fees.clear();
    if let Some(d) = &order.delivery {
        priced.fees = fees(table, location, &order.sale, order, d, calc);
    }
    if let Some(place) = other_currency(table, order, location, calc) {
        convert(table, order, at, place, calc, priced)?;
    }
    mark_stale(table, order.sale.date, calc);
    Ok(())
}

/// Refuses a day before the first day the table holds the place's state or country tax
/// (the earliest of its state-level jurisdictions' first days): the table cannot say what
/// was due then, and an answer without the state's tax would look complete.
fn within_table<D>(table: &Table<D>, location: &Location, date: Date) -> Result<(), QuoteError> {
    let Some(jset) = location.jset else {
        return Ok(());
    };
    // The usual sale is after every state's first day: one load.
    if date >= table.bounds().latest_first {
        return Ok(());
    }
    let mut first: Option<(Date, JurisdictionId)> = None;
    for j in table.jset(jset) {
        if let Some(day) = table.top_first_day(j) {
            if first.is_none_or(|(f, _)| day < f) {
                first = Some((day, j));
            }
        }
    }
    match first {
        Some((first, j)) if date < first => Err(QuoteError::BeforeTable {
            jurisdiction: table
                .jurisdiction(j)
                .map(|x| x.name().to_string())
                .unwrap_or_default(),
            first,
            date,
        }),
        _ => Ok(()),
    }
}

/// Notes in `calc` the input past its horizon on `date` (the earliest such) among those
/// that wrote the rules of its jurisdictions, and caps its coverage at `PARTIAL`.
fn mark_stale<D>(table: &Table<D>, date: Date, calc: &mut Calculation) {
    // The usual sale is within every input's horizon: one load.
    if table
        .bounds()
        .earliest_horizon
        .is_none_or(|(h, _)| date <= h)
    {
        calc.stale = None;
        return;
    }
    let mut stale: Option<Stale> = None;
    for line in &calc.lines {
        for entry in &line.jurisdictions {
            if let Some((horizon, source)) = table.horizon(entry.jurisdiction) {
                if date > horizon && stale.is_none_or(|s| horizon < s.horizon) {
                    stale = Some(Stale { source, horizon });
                }
            }
        }
    }
    calc.stale = stale;
    if stale.is_some() {
        calc.coverage = calc.coverage.min(Coverage::Partial);
    }
}

/// The place's currency (or, when levy does not know it, the place's country), when the
/// sale is in another and a rule with an amount in the place's currency touches it.
fn other_currency<D>(
    table: &Table<D>,
    order: &Order,
    location: &Location,
    calc: &Calculation,
) -> Option<Result<Currency, String>> {
    let sale = &order.sale;
    let country = location.country();
    // The usual sale, in dollars in the US, is settled without a look-up.
    if location.jset.is_none() || (sale.currency == Currency::USD && country == "US") {
        return None;
    }
    let place = currency::country_currency(country, sale.date);
    if place == Some(sale.currency) {
        return None;
    }
    currency::meets_an_amount(table, location, sale, order.delivery.as_ref(), calc)
        .then(|| place.ok_or_else(|| country.to_string()))
}

/// `calc` again, on the order's amounts converted to `place`'s currency at the order's
/// exchange rate, answered in the sale's currency; refused without a rate.
fn convert<D>(
    table: &Table<D>,
    order: &Order,
    (location, origin): (&Location, Option<&Location>),
    place: Result<Currency, String>,
    calc: &mut Calculation,
    priced: &mut Priced,
) -> Result<(), QuoteError> {
    let sale = &order.sale;
    let place = place.map_err(|country| QuoteError::PlaceCurrencyUnknown { country })?;
    let Some(rate) = order.exchange_rate else {
        return Err(QuoteError::ExchangeRateRequired {
            sale: sale.currency,
            place,
        });
    };
    let converted = priced.converted.get_or_insert_with(|| sale.clone());
    let delivery = currency::converted_sale(sale, place, rate, order.delivery.as_ref(), converted);
    table
        .calculate_into(origin, location, converted, calc)
        .map_err(QuoteError::Sale)?;
    priced.fees.clear();
    if let Some(d) = &delivery {
        priced.fees = fees(table, location, converted, order, d, calc);
    }
    currency::answer_in_sale_currency(calc, sale, rate);
    priced.converted_at = Some(rate);
    Ok(())
}

/// The buyer's place into `out`: the address first, the IP address when no address is
/// given or it fails; neither is refused.
pub fn locate<D>(
    table: &Table<D>,
    order: &Order,
    date: Date,
    out: &mut Location,
) -> Result<(), QuoteError> {
    locate_at(
        table,
        (order.address.as_ref(), order.ip.as_ref()),
        date,
        out,
    )
}

/// [`locate`] of an address and an IP address, either or both given.
fn locate_at<D>(
    table: &Table<D>,
    (address, ip): (Option<&Address>, Option<&Ip>),
    date: Date,
    out: &mut Location,
) -> Result<(), QuoteError> {
    let by_ip = |ip: &Ip| table.resolve_ip(&ip.value, ip.mode, date);
    match (address, ip) {
        (Some(a), ip) => match table.resolve_into(a, date, out) {
            Ok(()) => Ok(()),
            Err(address) => match ip.map(by_ip) {
                Some(Ok(loc)) => {
                    *out = loc;
                    Ok(())
                }
                Some(Err(ip)) => Err(QuoteError::Place {
                    address: Some(Box::new(address)),
                    ip: Some(Box::new(ip)),
                }),
                None => Err(QuoteError::Place {
                    address: Some(Box::new(address)),
                    ip: None,
                }),
            },
        },
        (None, Some(ip)) => {
            *out = by_ip(ip).map_err(|e| QuoteError::Place {
                address: None,
                ip: Some(Box::new(e)),
            })?;
            Ok(())
        }
        (None, None) => Err(QuoteError::NoPlace),
    }
}

/// The per-order fees of a retail delivery of `sale` (the order's, or its converted
/// copy), added to `calc`; the buyer's exemptions from [`Order::fee_exemptions_from`] on
/// exempt them.
fn fees<D>(
    table: &Table<D>,
    location: &Location,
    sale: &Sale,
    order: &Order,
    delivery: &Delivery,
    calc: &mut Calculation,
) -> Vec<FeeOutcome> {
    if order.fee_exemptions_from == 0 {
        return table.apply_order_fees(location, sale, delivery, calc);
    }
    let mut sale = sale.clone();
    let all = &order.sale.customer.exemptions;
    sale.customer.exemptions = all[order.fee_exemptions_from.min(all.len())..].to_vec();
    table.apply_order_fees(location, &sale, delivery, calc)
}
