//! Liability: what a period of the ledger owes, per jurisdiction (and per seller location
//! where there is one), built by pure functions over its records ([`Builder`]); the store
//! feeds the builder every refund, then every transaction, of the scope
//! ([`super::Store::liability`]), and it keeps what the period holds.
//!
//! # The rules
//!
//! - A transaction counts in the period of its `processed_at` (the sale), a refund in the
//!   period of its `processed_at`, a reversal in the period of the refund's `reversed_at`
//!   (what the refund took, given back). A deleted transaction is void: neither it nor
//!   its refunds count in any period.
//! - Each jurisdiction entry of a line puts the line's amount excluding tax (its gross) in
//!   that jurisdiction's row, split by the entry's note: `CUSTOMER_EXEMPT` and
//!   `EXEMPTION_CERTIFICATE` are exempt for the customer; `HOLIDAY` exempt by a holiday;
//!   a rate of 0 (`RATE_FRAC`, the product rule's rate) or `BELOW_THRESHOLD` exempt for
//!   the product; `NOT_REGISTERED`, `AUTOMATIC_TAX_DISABLED`, `ZERO_RATE` and
//!   `REVERSE_CHARGE` are sales on which the seller collected nothing; the rest is taxable.
//! - Tax is the entries' `tax_due` less their fixed fee, unrounded (minor units); fees
//!   are their own item: an entry's `fee`, and the whole of a per-order fee's entry
//!   (`PER_ORDER_FEE`), whose line's gross is not a sale of that fee's jurisdiction.
//! - Amounts are kept to [`PLACES`] decimal places of the minor unit (a ten-billionth of
//!   a cent): a refund's share of an entry's tax can have 28 digits, and sums of such
//!   numbers would depend on their order in the last digit; at ten places every sum is
//!   exact, in any order, so that the daily totals ([`super::days`]) and a recount of the
//!   records agree to the last digit.
//! - A line's tax is rounded once, to the line (`tax_amount`); the difference between
//!   that and the sum of its entries' `tax_due` is the line's rounding, which is kept per
//!   state. So per state: collected (the sum of the lines' `tax_amount`, as the ledger
//!   holds it) = the rows' tax + fees + rounding, to the cent.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

use rust_decimal::Decimal;
use serde::Deserialize;

use super::records::{
    JurisdictionRecord, LineRecord, RefundRecord, RegistrationKind, RegistrationRecord,
};

/// What a report reads of a stored transaction, borrowed from its sealed text where it
/// can be: the rest of the record is skipped, not built.
#[derive(Clone, Debug, Deserialize)]
pub struct SaleView<'a> {
    /// `tr_…`.
    #[serde(borrow)]
    pub id: Cow<'a, str>,
    /// Epoch seconds of the sale.
    pub processed_at: i64,
    /// ISO 4217.
    #[serde(borrow)]
    pub currency: Cow<'a, str>,
    /// ISO country of the sale's place.
    #[serde(borrow)]
    pub country: Cow<'a, str>,
    /// Region of the sale's place.
    #[serde(borrow)]
    pub region: Cow<'a, str>,
    /// Lines.
    #[serde(borrow)]
    pub lines: Vec<LineView<'a>>,
    /// When deleted, if it was.
    pub deleted_at: Option<i64>,
    /// The merchant of a platform sale.
    #[serde(default, borrow)]
    pub platform: Option<PlatformView<'a>>,
    /// The hash of the rate table that calculated it.
    #[serde(default, borrow)]
    pub table_hash: Option<Cow<'a, str>>,
}

/// What a report reads of a platform transaction's platform part.
#[derive(Clone, Debug, Deserialize)]
pub struct PlatformView<'a> {
    /// The merchant's `merch_…` id.
    #[serde(borrow)]
    pub merchant_id: Cow<'a, str>,
}

/// What a report reads of a line.
#[derive(Clone, Debug, Deserialize)]
pub struct LineView<'a> {
    /// Minor units.
    pub amount_excluding_tax: Decimal,
    /// Minor units, rounded.
    pub tax_amount: Decimal,
    /// Jurisdiction entries.
    #[serde(borrow)]
    pub jurisdictions: Vec<EntryView<'a>>,
}

/// What a report reads of a jurisdiction entry.
#[derive(Clone, Debug, Deserialize)]
pub struct EntryView<'a> {
    /// Statutory rate, a fraction.
    pub tax_rate: Decimal,
    /// Unrounded tax due, minor units (fee included).
    pub tax_due: Decimal,
    /// Fee, minor units.
    pub fee: Decimal,
    /// Jurisdiction name.
    #[serde(borrow)]
    pub jurisdiction_name: Cow<'a, str>,
    /// Jurisdiction code.
    #[serde(borrow)]
    pub jurisdiction_code: Cow<'a, str>,
    /// `STATE`, `COUNTY`, …
    #[serde(borrow)]
    pub authority_type: Cow<'a, str>,
    /// `RATE_FRAC`, `CUSTOMER_EXEMPT`, …
    #[serde(borrow)]
    pub note: Cow<'a, str>,
    /// The part of the line's amount the entry taxed; `None` on records from before it
    /// was kept.
    #[serde(default)]
    pub taxable_base: Option<Decimal>,
}

impl<'a> EntryView<'a> {
    /// The view of a stored entry.
    pub fn of(e: &'a JurisdictionRecord) -> EntryView<'a> {
        EntryView {
            tax_rate: e.tax_rate,
            tax_due: e.tax_due,
            fee: e.fee,
            jurisdiction_name: Cow::Borrowed(&e.jurisdiction_name),
            jurisdiction_code: Cow::Borrowed(&e.jurisdiction_code),
            authority_type: Cow::Borrowed(&e.authority_type),
            note: Cow::Borrowed(&e.note),
            taxable_base: e.taxable_base,
        }
    }
}

impl<'a> LineView<'a> {
    /// The view of a stored line.
    pub fn of(l: &'a LineRecord) -> LineView<'a> {
        LineView {
            amount_excluding_tax: l.amount_excluding_tax,
            tax_amount: l.tax_amount,
            jurisdictions: l.jurisdictions.iter().map(EntryView::of).collect(),
        }
    }
}

/// The period of a report: epoch seconds `[from, to)`, and a state (region) when only
/// one is asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Period {
    /// First second in the period.
    pub from: i64,
    /// First second after it.
    pub to: i64,
    /// Only this region's (upper case) sales, when given.
    pub region: Option<String>,
}

impl Period {
    /// Whether `at` falls in the period.
    pub fn holds(&self, at: i64) -> bool {
        self.from <= at && at < self.to
    }

    /// The UTC days `[first, end)` of a period that starts and ends at midnight UTC, whose
    /// report sums the ledger's daily totals ([`super::days`]); `None` for any other.
    pub fn days(&self) -> Option<(i64, i64)> {
        let whole = |at: i64| at.rem_euclid(super::days::DAY) == 0;
        (whole(self.from) && whole(self.to))
            .then(|| (super::days::day_of(self.from), super::days::day_of(self.to)))
    }

    /// Whether the region of a transaction is reported.
    pub fn covers(&self, region: &str) -> bool {
        self.region.as_deref().is_none_or(|r| r == region)
    }
}

/// Amounts in minor units, for one row or total, of sales or of refunds (which are
/// negative, reversals positive).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Amounts {
    /// Sales excluding tax.
    pub gross: Decimal,
    /// Exempt for the customer: exempt customers and exemption certificates.
    pub exempt_customer: Decimal,
    /// Exempt for the product: a 0 rate, or under an exemption threshold.
    pub exempt_product: Decimal,
    /// Exempt by a sales tax holiday.
    pub exempt_holiday: Decimal,
    /// Sales on which the seller collected nothing (not registered, tax disabled, zero
    /// rate, reverse charge).
    pub not_collected: Decimal,
    /// Taxable: gross less the exempt and the not collected.
    pub taxable: Decimal,
    /// Tax due, unrounded, fixed fees not included.
    pub tax: Decimal,
    /// Fees: fixed fees and per-order fees.
    pub fees: Decimal,
}

impl Amounts {
    /// Adds `other` to `self`.
    pub fn add(&mut self, other: &Amounts) {
        self.gross += other.gross;
        self.exempt_customer += other.exempt_customer;
        self.exempt_product += other.exempt_product;
        self.exempt_holiday += other.exempt_holiday;
        self.not_collected += other.not_collected;
        self.taxable += other.taxable;
        self.tax += other.tax;
        self.fees += other.fees;
    }

    /// The sum of `self` and `other`.
    pub fn plus(&self, other: &Amounts) -> Amounts {
        let mut out = *self;
        out.add(other);
        out
    }
}

/// The decimal places of the minor unit a report keeps (rounded half to even).
pub const PLACES: u32 = 10;

/// What one entry of a line puts in its jurisdiction's row: the line's gross `gross`
/// split by the entry's `note`, `tax_rate`, `tax_due` and `fee` (each to [`PLACES`]); of a
/// taxed entry, its taxed part `base` (the entry's taxable base, times the same sign as
/// `gross`; `None` for a record from before bases were kept, the whole line) is taxable
/// and the rest of the line exempt for the product (over a cap, outside a band).
pub fn entry_amounts(gross: Decimal, base: Option<Decimal>, e: &EntryView<'_>) -> Amounts {
    let note = e.note.split(':').next().unwrap_or("").trim();
    let gross = gross.round_dp(PLACES);
    let mut a = Amounts {
        fees: e.fee.round_dp(PLACES),
        tax: (e.tax_due - e.fee).round_dp(PLACES),
        ..Amounts::default()
    };
    if note == "PER_ORDER_FEE" {
        a.fees = e.tax_due.round_dp(PLACES);
        a.tax = Decimal::ZERO;
        return a;
    }
    if matches!(note, "SMALL_SELLER" | "FEE_UNKNOWN") {
        // A per-order fee not charged: no sale of the fee's jurisdiction either.
        return a;
    }
    a.gross = gross;
    match note {
        "CUSTOMER_EXEMPT" | "EXEMPTION_CERTIFICATE" => a.exempt_customer = gross,
        "HOLIDAY" => a.exempt_holiday = gross,
        "NOT_REGISTERED" | "AUTOMATIC_TAX_DISABLED" | "ZERO_RATE" | "REVERSE_CHARGE" => {
            a.not_collected = gross
        }
        "BELOW_THRESHOLD" => a.exempt_product = gross,
        _ if e.tax_rate.is_zero() && e.tax_due.is_zero() => a.exempt_product = gross,
        _ => {
            let taxed = base.map_or(gross, |b| b.round_dp(PLACES));
            a.taxable = taxed;
            a.exempt_product = gross - taxed;
        }
    }
    a
}

/// What a row is reported by: the place, the jurisdiction and the seller location.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RowKey {
    /// ISO country.
    pub country: String,
    /// Region (state).
    pub region: String,
    /// The jurisdiction's code as the rate table holds it (a FIPS code for the states
    /// and their local jurisdictions; `06:CDTFA:…` for a California district).
    pub jurisdiction_code: String,
    /// The jurisdiction's name.
    pub jurisdiction_name: String,
    /// `STATE`, `COUNTY`, `CITY`, `DISTRICT`, …
    pub authority_type: String,
    /// The seller location (outlet): the merchant of a platform sale; empty for the
    /// account's own sales (the ledger records no outlet of them).
    pub outlet: String,
}

/// One row of a report: a jurisdiction's sales and refunds in the period.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Row {
    /// Of transactions made in the period.
    pub sales: Amounts,
    /// Of refunds (negative) and reversals (positive) booked in the period.
    pub refunds: Amounts,
}

impl Row {
    /// Adds `other`'s sales and refunds to `self`'s.
    pub fn add(&mut self, other: &Row) {
        self.sales.add(&other.sales);
        self.refunds.add(&other.refunds);
    }

    /// Sales and refunds together.
    pub fn net(&self) -> Amounts {
        self.sales.plus(&self.refunds)
    }
}

/// Per state (country and region): what reconciles the rows with the ledger.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StateTotal {
    /// Transactions made in the period.
    pub transactions: u64,
    /// Refunds booked in the period.
    pub refunds: u64,
    /// Reversals booked in the period.
    pub reversals: u64,
    /// Sales excluding tax, net of refunds and reversals (the lines' amounts).
    pub sales: Decimal,
    /// Tax collected, net: the sum of the lines' rounded `tax_amount` (fees included), as
    /// the ledger holds them.
    pub collected: Decimal,
    /// The entries' tax, unrounded, net (the rows' tax summed).
    pub tax_due: Decimal,
    /// The entries' fees, net (the rows' fees summed).
    pub fees: Decimal,
    /// `collected − tax_due − fees`: what rounding each line's tax once added.
    pub rounding: Decimal,
    /// Whether the account (itself, not a platform's merchant) holds a `sales_tax`
    /// registration there active on some day of the period: a state it must file for, with
    /// sales or without (a zero return). Set by [`Liability::mark_registered`].
    pub registered: bool,
}

/// A liability report being built, or built.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Liability {
    /// The rows, ordered by key.
    pub rows: BTreeMap<RowKey, Row>,
    /// Per `(country, region)`.
    pub states: BTreeMap<(String, String), StateTotal>,
    /// The rate tables that calculated the transactions made in the period, by hash
    /// (`unknown` for records stored before it was kept), with how many each.
    pub table_hashes: BTreeMap<String, u64>,
    /// The currencies of the transactions it covers.
    pub currencies: BTreeSet<String>,
}

impl Liability {
    /// Marks the states of `registrations` (the account's own `sales_tax` registrations)
    /// active on some day of `period`, and in its region when it has one: each is
    /// `registered`, and one without sales in the period gets a row of zeros, so that a
    /// registered state with nothing to report still has its (zero) return.
    pub fn mark_registered(&mut self, period: &Period, registrations: &[RegistrationRecord]) {
        for r in registrations {
            let overlaps =
                r.active_from < period.to && r.expires_at.is_none_or(|e| e > period.from);
            let own = r.merchant_id.is_none() && r.kind == RegistrationKind::SalesTax;
            let place = period.region.is_none() || r.country == "US";
            if !(own && overlaps && place && period.covers(&r.region)) {
                continue;
            }
            self.states
                .entry((r.country.clone(), r.region.clone()))
                .or_default()
                .registered = true;
        }
    }
}

/// Which way a refund's booking counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Booking {
    /// The refund, booked at its `processed_at`: its (negative) amounts.
    Refund,
    /// Its reversal, booked at `reversed_at`: the amounts given back.
    Reversal,
}

/// Slots found by a key: each slot's index by its key, so that a key written into a reused
/// buffer finds a slot made before without allocating.
#[derive(Debug)]
struct Slots<K, V> {
    index: HashMap<String, usize>,
    slots: Vec<(K, V)>,
}

impl<K, V: Default> Slots<K, V> {
    fn new() -> Self {
        Slots {
            index: HashMap::new(),
            slots: Vec::new(),
        }
    }

    /// The value of `key`, made (with `make`'s key) when it is the first.
    fn get(&mut self, key: &str, make: impl FnOnce() -> K) -> &mut V {
        let i = match self.index.get(key) {
            Some(&i) => i,
            None => {
                self.index.insert(key.to_string(), self.slots.len());
                self.slots.push((make(), V::default()));
                self.slots.len() - 1
            }
        };
        &mut self.slots[i].1
    }
}

/// The report as it is built: a row per jurisdiction and a total per state, found by a
/// key written into one buffer.
#[derive(Debug)]
pub(super) struct Tally {
    key: String,
    /// Each row with how many entries were added to it (a row's presence in a report).
    rows: Slots<RowKey, (Row, i64)>,
    states: Slots<(String, String), StateTotal>,
    table_hashes: Slots<String, u64>,
    currencies: BTreeSet<String>,
}

impl Tally {
    pub(super) fn new() -> Tally {
        Tally {
            key: String::new(),
            rows: Slots::new(),
            states: Slots::new(),
            table_hashes: Slots::new(),
            currencies: BTreeSet::new(),
        }
    }

    /// The total of the state of `tx`.
    fn state<'t>(
        key: &mut String,
        states: &'t mut Slots<(String, String), StateTotal>,
        tx: &SaleView<'_>,
    ) -> &'t mut StateTotal {
        key.clear();
        key.push_str(&tx.country);
        key.push('\u{1f}');
        key.push_str(&tx.region);
        states.get(key, || (tx.country.to_string(), tx.region.to_string()))
    }

    /// Adds `lines` of `tx` to the rows of its place, times `sign` (1 as stored; -1 for
    /// what a reversal gives back of a refund, whose lines are negative).
    fn add_lines(
        &mut self,
        tx: &SaleView<'_>,
        lines: &[LineView<'_>],
        sign: Decimal,
        refund: bool,
    ) {
        let outlet = tx.platform.as_ref().map_or("", |p| &p.merchant_id);
        let Tally {
            key, rows, states, ..
        } = self;
        let mut total = StateTotal::default();
        for line in lines {
            total.sales += (sign * line.amount_excluding_tax).round_dp(PLACES);
            total.collected += (sign * line.tax_amount).round_dp(PLACES);
            for e in &line.jurisdictions {
                let base = e.taxable_base.map(|b| sign * b);
                let mut a = entry_amounts(sign * line.amount_excluding_tax, base, e);
                a.tax *= sign;
                a.fees *= sign;
                total.tax_due += a.tax;
                total.fees += a.fees;
                key.clear();
                for part in [
                    &*tx.country,
                    &*tx.region,
                    &*e.jurisdiction_code,
                    &*e.jurisdiction_name,
                    &*e.authority_type,
                    outlet,
                ] {
                    key.push_str(part);
                    key.push('\u{1f}');
                }
                let (row, entries) = rows.get(key, || RowKey {
                    country: tx.country.to_string(),
                    region: tx.region.to_string(),
                    jurisdiction_code: e.jurisdiction_code.to_string(),
                    jurisdiction_name: e.jurisdiction_name.to_string(),
                    authority_type: e.authority_type.to_string(),
                    outlet: outlet.to_string(),
                });
                *entries += 1;
                if refund {
                    row.refunds.add(&a);
                } else {
                    row.sales.add(&a);
                }
            }
        }
        let state = Tally::state(key, states, tx);
        state.sales += total.sales;
        state.collected += total.collected;
        state.tax_due += total.tax_due;
        state.fees += total.fees;
        state.rounding = state.collected - state.tax_due - state.fees;
    }

    /// Adds a transaction made in the period.
    pub(super) fn add_sale(&mut self, tx: &SaleView<'_>) {
        self.add_lines(tx, &tx.lines, Decimal::ONE, false);
        let hash = tx.table_hash.as_deref().unwrap_or("unknown");
        *self.table_hashes.get(hash, || hash.to_string()) += 1;
        self.currency(&tx.currency);
        Tally::state(&mut self.key, &mut self.states, tx).transactions += 1;
    }

    /// Adds a refund of `tx` booked in the period, or its reversal.
    pub(super) fn add_refund(&mut self, tx: &SaleView<'_>, refund: &RefundRecord, how: Booking) {
        let sign = match how {
            Booking::Refund => Decimal::ONE,
            Booking::Reversal => Decimal::NEGATIVE_ONE,
        };
        let lines: Vec<LineView<'_>> = refund.lines.iter().map(|l| LineView::of(&l.line)).collect();
        self.add_lines(tx, &lines, sign, true);
        self.currency(&tx.currency);
        let state = Tally::state(&mut self.key, &mut self.states, tx);
        match how {
            Booking::Refund => state.refunds += 1,
            Booking::Reversal => state.reversals += 1,
        }
    }

    fn currency(&mut self, currency: &str) {
        if !self.currencies.contains(currency) {
            self.currencies.insert(currency.to_string());
        }
    }

    /// The rows with how many entries each holds, and the state totals: what one booking
    /// adds to the ledger's daily totals ([`super::days`]).
    pub(super) fn into_counted(self) -> (Vec<(RowKey, Row, i64)>, Vec<StateTotal>) {
        let rows = self.rows.slots.into_iter();
        (
            rows.map(|(k, (r, n))| (k, r, n)).collect(),
            self.states.slots.into_iter().map(|(_, s)| s).collect(),
        )
    }

    /// The report, its rows and states in order.
    fn finish(self) -> Liability {
        Liability {
            rows: self
                .rows
                .slots
                .into_iter()
                .map(|(k, (r, _))| (k, r))
                .collect(),
            states: self.states.slots.into_iter().collect(),
            table_hashes: self.table_hashes.slots.into_iter().collect(),
            currencies: self.currencies,
        }
    }
}

/// The refunds and reversals booked in a period, waiting for their transactions: the
/// store reads the refunds first, then every transaction once.
#[derive(Debug, Default)]
pub struct Bookings {
    by_transaction: HashMap<String, Vec<(RefundRecord, Booking)>>,
}

impl Bookings {
    /// Keeps what of `refund` is booked in `period`: the refund, its reversal, or both.
    pub fn add(&mut self, period: &Period, refund: RefundRecord) {
        let booked = period.holds(refund.processed_at);
        let reversed = refund.reversed_at.is_some_and(|at| period.holds(at));
        if !booked && !reversed {
            return;
        }
        let list = self
            .by_transaction
            .entry(refund.transaction_id.clone())
            .or_default();
        if booked && reversed {
            list.push((refund.clone(), Booking::Refund));
            list.push((refund, Booking::Reversal));
        } else if booked {
            list.push((refund, Booking::Refund));
        } else {
            list.push((refund, Booking::Reversal));
        }
    }

    /// Whether none is waiting.
    pub fn is_empty(&self) -> bool {
        self.by_transaction.is_empty()
    }
}

/// Builds a report: feed it every refund, then every transaction, of the scope.
#[derive(Debug)]
pub struct Builder {
    period: Period,
    bookings: Bookings,
    tally: Tally,
}

impl Builder {
    /// A report of `period`, empty.
    pub fn new(period: Period) -> Builder {
        Builder {
            period,
            bookings: Bookings::default(),
            tally: Tally::new(),
        }
    }

    /// Reads a refund (before any transaction).
    pub fn refund(&mut self, refund: RefundRecord) {
        self.bookings.add(&self.period, refund);
    }

    /// Reads a transaction: its sale when made in the period, the bookings of its
    /// refunds in the period; nothing of a deleted one, or one of another region.
    pub fn transaction(&mut self, tx: &SaleView<'_>) {
        let bookings = self.bookings.by_transaction.remove(tx.id.as_ref());
        if tx.deleted_at.is_some() || !self.period.covers(&tx.region) {
            return;
        }
        if self.period.holds(tx.processed_at) {
            self.tally.add_sale(tx);
        }
        for (refund, how) in bookings.into_iter().flatten() {
            self.tally.add_refund(tx, &refund, how);
        }
    }

    /// The report.
    pub fn finish(self) -> Liability {
        self.tally.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A decimal from its text.
    fn dec(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    fn entry(rate: Decimal, due: Decimal, note: &str) -> JurisdictionRecord {
        JurisdictionRecord {
            tax_rate: rate,
            tax_due: due,
            fee: Decimal::ZERO,
            rate_type: String::new(),
            jurisdiction_name: "X".into(),
            jurisdiction_code: "01".into(),
            authority_name: String::new(),
            authority_type: "STATE".into(),
            tax_type: "SALES".into(),
            note: note.into(),
            rule_id: 0,
            exemption_certificate_id: None,
            taxable_base: None,
        }
    }

    #[test]
    fn an_entry_puts_its_gross_under_the_reason_its_note_gives() {
        let g = dec("10000");
        let taxed = entry_amounts(
            g,
            None,
            &EntryView::of(&entry(dec("0.07"), dec("700"), "RATE_FRAC")),
        );
        assert_eq!((taxed.taxable, taxed.tax), (g, dec("700")));
        let cert = entry_amounts(
            g,
            None,
            &EntryView::of(&entry(dec("0.07"), dec("0"), "EXEMPTION_CERTIFICATE")),
        );
        assert_eq!((cert.exempt_customer, cert.taxable), (g, dec("0")));
        let holiday = entry_amounts(
            g,
            None,
            &EntryView::of(&entry(dec("0"), dec("0"), "HOLIDAY")),
        );
        assert_eq!(holiday.exempt_holiday, g);
        let food = entry_amounts(
            g,
            None,
            &EntryView::of(&entry(dec("0"), dec("0"), "RATE_FRAC")),
        );
        assert_eq!(food.exempt_product, g);
        let unreg = entry_amounts(
            g,
            None,
            &EntryView::of(&entry(dec("0.07"), dec("0"), "NOT_REGISTERED: in TN")),
        );
        assert_eq!(unreg.not_collected, g);
        // A band not reached: on a record from before bases were kept, taxable at nothing;
        // with its base (nothing taxed), the line is outside the band, exempt for it.
        let sat = entry(dec("0.0275"), dec("0"), "PROGRESSIVE_RATE");
        let band = entry_amounts(g, None, &EntryView::of(&sat));
        assert_eq!((band.taxable, band.exempt_product), (g, dec("0")));
        let band = entry_amounts(g, Some(dec("0")), &EntryView::of(&sat));
        assert_eq!((band.taxable, band.exempt_product), (dec("0"), g));
        // Tennessee's single article tax on a $2,000.00 item: 2.75% of the $400.00 between
        // $1,600.00 and $3,200.00 (Tenn. Code Ann. 67-6-202(a)), $11.00; the rest of the
        // line is outside the band.
        let sat = entry(dec("0.0275"), dec("1100"), "PROGRESSIVE_RATE");
        let band = entry_amounts(dec("200000"), Some(dec("40000")), &EntryView::of(&sat));
        assert_eq!(
            (band.gross, band.taxable, band.exempt_product, band.tax),
            (dec("200000"), dec("40000"), dec("160000"), dec("1100"))
        );
        // Colorado's retail delivery fee: 29 cents, a fee, no sales.
        let mut fee = entry(dec("0"), dec("29"), "PER_ORDER_FEE");
        fee.fee = dec("29");
        let f = entry_amounts(g, None, &EntryView::of(&fee));
        assert_eq!((f.fees, f.tax, f.gross), (dec("29"), dec("0"), dec("0")));
    }

    #[test]
    fn a_period_is_half_open() {
        let p = Period {
            from: 100,
            to: 200,
            region: Some("TN".into()),
        };
        assert!(p.holds(100) && p.holds(199) && !p.holds(200) && !p.holds(99));
        assert!(p.covers("TN") && !p.covers("CA"));
    }
}
