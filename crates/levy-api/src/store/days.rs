//! The ledger's daily liability totals: what each day adds to a liability report
//! ([`super::liability`]), kept per account, mode, UTC day, jurisdiction and seller
//! location in the same write as the record ([`super::recipes`]), so that a report of
//! whole days sums days instead of reading every record. A ledger from before they were
//! kept computes them once from its records ([`DaySums`]).
//!
//! The totals follow the report's rules exactly, through the same tally:
//!
//! - a transaction adds its sale to the day of its `processed_at`;
//! - a refund adds its (negative) amounts to the day of its own `processed_at`;
//! - a reversal adds back what its refund took, on the day of its `reversed_at`, unless
//!   the transaction was deleted (a deleted transaction counts in no period);
//! - a deletion takes back every booking the transaction has: its sale, its refunds and
//!   their reversals, each from its own day.
//!
//! Each row also counts the entries added to it, so that a row a deletion emptied is not
//! reported, where a row of real zero amounts (a free line) is; a state counts its
//! transactions, refunds and reversals the same way.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use rust_decimal::Decimal;

use super::liability::{Amounts, StateTotal, Tally};
use super::liability::{Booking, Liability, LineView, PlatformView, Row, RowKey, SaleView};
use super::records::{RefundRecord, TransactionRecord};

/// Seconds in a day.
pub const DAY: i64 = 86_400;

/// The UTC day (days since 1970-01-01) of Unix seconds.
pub fn day_of(secs: i64) -> i64 {
    secs.div_euclid(DAY)
}

impl<'a> SaleView<'a> {
    /// The view of a stored transaction.
    pub fn of(tx: &'a TransactionRecord) -> SaleView<'a> {
        SaleView {
            id: Cow::Borrowed(&tx.id),
            processed_at: tx.processed_at,
            currency: Cow::Borrowed(&tx.currency),
            country: Cow::Borrowed(&tx.country),
            region: Cow::Borrowed(&tx.region),
            lines: tx.lines.iter().map(LineView::of).collect(),
            deleted_at: tx.deleted_at,
            platform: tx.platform.as_ref().map(|p| PlatformView {
                merchant_id: Cow::Borrowed(&p.merchant_id),
            }),
            table_hash: tx.table_hash.as_deref().map(Cow::Borrowed),
        }
    }
}

/// A state's counts and sums in the daily totals; signed, as a deletion takes back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DayState {
    /// Transactions made.
    pub transactions: i64,
    /// Refunds booked.
    pub refunds: i64,
    /// Reversals booked.
    pub reversals: i64,
    /// Sales excluding tax, net (the lines' amounts).
    pub sales: Decimal,
    /// Tax collected, net: the lines' rounded `tax_amount`.
    pub collected: Decimal,
    /// The entries' tax, unrounded.
    pub tax_due: Decimal,
    /// The entries' fees.
    pub fees: Decimal,
}

impl DayState {
    fn of(s: &StateTotal) -> DayState {
        DayState {
            transactions: s.transactions as i64,
            refunds: s.refunds as i64,
            reversals: s.reversals as i64,
            sales: s.sales,
            collected: s.collected,
            tax_due: s.tax_due,
            fees: s.fees,
        }
    }

    /// Adds `other` to `self`.
    pub fn add(&mut self, other: &DayState) {
        self.transactions += other.transactions;
        self.refunds += other.refunds;
        self.reversals += other.reversals;
        self.sales += other.sales;
        self.collected += other.collected;
        self.tax_due += other.tax_due;
        self.fees += other.fees;
    }

    /// `self` taken back.
    pub fn negated(&self) -> DayState {
        DayState {
            transactions: -self.transactions,
            refunds: -self.refunds,
            reversals: -self.reversals,
            sales: -self.sales,
            collected: -self.collected,
            tax_due: -self.tax_due,
            fees: -self.fees,
        }
    }

    /// Its sums in the order the stores keep them.
    pub fn sums(&self) -> [Decimal; 4] {
        [self.sales, self.collected, self.tax_due, self.fees]
    }

    /// A state from its counts and [`DayState::sums`].
    pub fn from_parts(counts: [i64; 3], sums: [Decimal; 4]) -> DayState {
        let [transactions, refunds, reversals] = counts;
        let [sales, collected, tax_due, fees] = sums;
        DayState {
            transactions,
            refunds,
            reversals,
            sales,
            collected,
            tax_due,
            fees,
        }
    }
}

/// A row's sales and refunds as the stores keep them: 16 amounts in a fixed order.
pub fn row_amounts(row: &Row) -> [Decimal; 16] {
    let a = |x: &Amounts| {
        [
            x.gross,
            x.exempt_customer,
            x.exempt_product,
            x.exempt_holiday,
            x.not_collected,
            x.taxable,
            x.tax,
            x.fees,
        ]
    };
    let mut out = [Decimal::ZERO; 16];
    out[..8].copy_from_slice(&a(&row.sales));
    out[8..].copy_from_slice(&a(&row.refunds));
    out
}

/// A row from [`row_amounts`].
pub fn row_of_amounts(v: &[Decimal; 16]) -> Row {
    let a = |x: &[Decimal]| Amounts {
        gross: x[0],
        exempt_customer: x[1],
        exempt_product: x[2],
        exempt_holiday: x[3],
        not_collected: x[4],
        taxable: x[5],
        tax: x[6],
        fees: x[7],
    };
    Row {
        sales: a(&v[..8]),
        refunds: a(&v[8..]),
    }
}

fn negated_row(row: &Row) -> Row {
    let mut v = row_amounts(row);
    v.iter_mut().for_each(|d| *d = -*d);
    row_of_amounts(&v)
}

/// A jurisdiction's row of one day, with how many entries it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DayRow {
    /// The UTC day ([`day_of`]).
    pub day: i64,
    /// The jurisdiction and seller location.
    pub key: RowKey,
    /// Its sales and refunds.
    pub row: Row,
    /// The entries added to it, less those taken back.
    pub entries: i64,
}

/// A state's total of one day, per currency and rate table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DayTotal {
    /// The UTC day ([`day_of`]).
    pub day: i64,
    /// ISO country.
    pub country: String,
    /// Region (state).
    pub region: String,
    /// ISO 4217.
    pub currency: String,
    /// The hash of the rate table that calculated the transactions (`unknown` for records
    /// stored before it was kept).
    pub table_hash: String,
    /// Counts and sums.
    pub state: DayState,
}

/// What one booking (a sale, a refund, a reversal) adds to the daily totals, or, negated,
/// takes back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DayChange {
    /// The rows of its jurisdictions.
    pub rows: Vec<DayRow>,
    /// Its state's total.
    pub total: DayTotal,
}

impl DayChange {
    /// The change that takes this one back.
    pub fn negated(&self) -> DayChange {
        DayChange {
            rows: self
                .rows
                .iter()
                .map(|r| DayRow {
                    day: r.day,
                    key: r.key.clone(),
                    row: negated_row(&r.row),
                    entries: -r.entries,
                })
                .collect(),
            total: DayTotal {
                state: self.total.state.negated(),
                ..self.total.clone()
            },
        }
    }
}

/// The rows of `day`, from each jurisdiction's row and entries.
fn day_rows(day: i64, rows: impl IntoIterator<Item = (RowKey, Row, i64)>) -> Vec<DayRow> {
    rows.into_iter()
        .map(|(key, row, entries)| DayRow {
            day,
            key,
            row,
            entries,
        })
        .collect()
}

/// The change of one booking of `tx` on `day`, tallied as the report tallies it.
fn change(tx: &SaleView<'_>, day: i64, tally: Tally) -> DayChange {
    let (rows, states) = tally.into_counted();
    let state = states.first().map(DayState::of).unwrap_or_default();
    DayChange {
        rows: day_rows(day, rows),
        total: DayTotal {
            day,
            country: tx.country.to_string(),
            region: tx.region.to_string(),
            currency: tx.currency.to_string(),
            table_hash: tx.table_hash.as_deref().unwrap_or("unknown").to_string(),
            state,
        },
    }
}

/// A transaction's sale, on the day it was made.
pub fn sale_day(tx: &SaleView<'_>) -> DayChange {
    let mut tally = Tally::new();
    tally.add_sale(tx);
    change(tx, day_of(tx.processed_at), tally)
}

/// A refund of `tx` on its day, or its reversal on the day of its `reversed_at`.
pub fn refund_day(tx: &SaleView<'_>, refund: &RefundRecord, how: Booking) -> DayChange {
    let at = match how {
        Booking::Refund => refund.processed_at,
        Booking::Reversal => refund.reversed_at.unwrap_or(refund.processed_at),
    };
    let mut tally = Tally::new();
    tally.add_refund(tx, refund, how);
    change(tx, day_of(at), tally)
}

/// Every booking `tx` has in the totals, whether or not it is deleted: its sale, each of
/// `refunds` (its own), and each reversal of them.
pub fn days_of(tx: &SaleView<'_>, refunds: &[RefundRecord]) -> Vec<DayChange> {
    let mut out = vec![sale_day(tx)];
    for r in refunds {
        out.push(refund_day(tx, r, Booking::Refund));
        if r.reversed_at.is_some() {
            out.push(refund_day(tx, r, Booking::Reversal));
        }
    }
    out
}

/// Changes merged: one per day, state, currency and rate table, its rows summed per
/// jurisdiction, so that a batch of records (a till's sync, a platform's order) writes each
/// of its days' rows once, not once a record.
pub fn merged(changes: Vec<DayChange>) -> Vec<DayChange> {
    type Group = (BTreeMap<RowKey, (Row, i64)>, DayState);
    let mut groups: BTreeMap<(i64, String, String, String, String), Group> = BTreeMap::new();
    for c in changes {
        let t = c.total;
        let key = (t.day, t.country, t.region, t.currency, t.table_hash);
        let (rows, state) = groups.entry(key).or_default();
        state.add(&t.state);
        for r in c.rows {
            let (row, n) = rows.entry(r.key).or_default();
            row.add(&r.row);
            *n += r.entries;
        }
    }
    groups
        .into_iter()
        .map(
            |((day, country, region, currency, table_hash), (rows, state))| DayChange {
                rows: day_rows(day, rows.into_iter().map(|(k, (row, n))| (k, row, n))),
                total: DayTotal {
                    day,
                    country,
                    region,
                    currency,
                    table_hash,
                    state,
                },
            },
        )
        .collect()
}

/// The report of whole days from their totals: rows that hold entries, states that hold
/// transactions, refunds or reversals, the table hashes of the transactions, and the
/// currencies of what it covers. The same report [`super::liability::Builder`] makes
/// from the records of those days.
pub fn from_days(rows: Vec<DayRow>, totals: Vec<DayTotal>) -> Liability {
    let mut summed: BTreeMap<RowKey, (Row, i64)> = BTreeMap::new();
    for r in rows {
        let (row, entries) = summed.entry(r.key).or_default();
        row.add(&r.row);
        *entries += r.entries;
    }
    let mut states: BTreeMap<(String, String), DayState> = BTreeMap::new();
    let mut hashes: BTreeMap<String, i64> = BTreeMap::new();
    let mut currencies: BTreeMap<String, i64> = BTreeMap::new();
    for t in totals {
        let s = &t.state;
        *hashes.entry(t.table_hash).or_default() += s.transactions;
        *currencies.entry(t.currency).or_default() += s.transactions + s.refunds + s.reversals;
        states.entry((t.country, t.region)).or_default().add(s);
    }
    Liability {
        rows: summed
            .into_iter()
            .filter(|(_, (_, n))| *n > 0)
            .map(|(k, (r, _))| (k, r))
            .collect(),
        states: states
            .into_iter()
            .filter(|(_, s)| s.transactions + s.refunds + s.reversals > 0)
            .map(|(k, s)| {
                let total = StateTotal {
                    transactions: s.transactions.max(0) as u64,
                    refunds: s.refunds.max(0) as u64,
                    reversals: s.reversals.max(0) as u64,
                    sales: s.sales,
                    collected: s.collected,
                    tax_due: s.tax_due,
                    fees: s.fees,
                    rounding: s.collected - s.tax_due - s.fees,
                    registered: false,
                };
                (k, total)
            })
            .collect(),
        table_hashes: hashes
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(h, n)| (h, n as u64))
            .collect(),
        currencies: currencies
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(c, _)| c)
            .collect::<BTreeSet<_>>(),
    }
}

/// The key of a row of the totals: account, mode, day and jurisdiction.
type RowAt = (String, bool, i64, RowKey);
/// The key of a state's total: account, mode, day, country, region, currency, table.
type TotalAt = (String, bool, i64, String, String, String, String);

/// Daily totals summed in memory, for a ledger that computes them once from its records
/// (a migration, a copy): each key written once.
#[derive(Debug, Default)]
pub struct DaySums {
    /// Rows, with their entries.
    pub rows: BTreeMap<RowAt, (Row, i64)>,
    /// State totals.
    pub totals: BTreeMap<TotalAt, DayState>,
}

impl DaySums {
    /// Adds the bookings of `tx` (of `account` in a mode) with its `refunds`; nothing of a
    /// deleted transaction.
    pub fn add(
        &mut self,
        account: &str,
        live: bool,
        tx: &TransactionRecord,
        refunds: &[RefundRecord],
    ) {
        if tx.deleted_at.is_some() {
            return;
        }
        for c in days_of(&SaleView::of(tx), refunds) {
            for r in c.rows {
                let (row, n) = self
                    .rows
                    .entry((account.to_string(), live, r.day, r.key))
                    .or_default();
                row.add(&r.row);
                *n += r.entries;
            }
            let t = c.total;
            let key = (
                account.to_string(),
                live,
                t.day,
                t.country,
                t.region,
                t.currency,
                t.table_hash,
            );
            self.totals.entry(key).or_default().add(&t.state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_is_the_utc_calendar_day() {
        // 2026-03-01T00:00:00Z is 1772323200 (20513 days × 86400).
        assert_eq!(day_of(1_772_323_200), 20_513);
        assert_eq!(day_of(1_772_323_199), 20_512);
        assert_eq!(day_of(-1), -1);
    }

    #[test]
    fn sixteen_amounts_make_the_row_they_came_from() {
        let mut row = Row::default();
        row.sales.gross = Decimal::from(10_000);
        row.sales.taxable = Decimal::from(10_000);
        row.sales.tax = Decimal::new(7_250, 1);
        row.refunds.gross = Decimal::from(-2_500);
        row.refunds.fees = Decimal::from(-27);
        assert_eq!(row_of_amounts(&row_amounts(&row)), row);
        let back = negated_row(&row);
        assert_eq!(back.sales.tax, Decimal::new(-7_250, 1));
        assert_eq!(back.refunds.fees, Decimal::from(27));
    }
}
