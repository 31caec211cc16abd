//! The ledger's money rules, as pure functions over records: what a transaction, a
//! deletion, a refund and a reversal do to the live nexus totals, and what of a
//! transaction may still be refunded, and how a merchant changes. The store's recipes
//! (`store/recipes.rs`) read the records, call these, and write what they return; no
//! database computes any of it itself, so every store applies the same rules. The rules of a
//! new refund are in [`super::refund`].
//!
//! Amounts are in minor units. A transaction's lines are positive; a refund's lines are
//! negative (they take money back).

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::error::Refusal;
use super::records::{
    MerchantChange, MerchantRecord, MerchantStatus, RefundRecord, RegistrationRecord,
    TransactionRecord,
};

/// A change to one place's live nexus total (the place, currency and account are the
/// transaction's): sales excluding tax to add (negative to take off) and transactions to
/// count (`1`, `-1` or `0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NexusChange {
    /// Sales excluding tax, minor units.
    pub sales: Decimal,
    /// Transactions.
    pub count: i64,
}

impl NexusChange {
    /// The total after the change: `(sales, count)` from the stored `(sales, count)`
    /// (`(0, 0)` for a place without a total yet).
    pub fn apply(self, total: (Decimal, i64)) -> (Decimal, i64) {
        (total.0 + self.sales, total.1 + self.count)
    }
}

/// A transaction's running refund total, as the ledger keeps it beside the transaction: how
/// many refunds it has had (reversed ones included: the next refund's place), and per line
/// the sales and tax that its refunds not reversed took back (zero or negative). A refund,
/// reversal or deletion reads this one record instead of every earlier refund, so its cost
/// does not grow with the refunds a sale has had.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refunded {
    /// Refunds recorded so far, reversed ones included.
    pub count: i64,
    /// Per line of the transaction: `(sales, tax)` taken back by refunds not reversed.
    pub lines: Vec<(Decimal, Decimal)>,
}

impl Refunded {
    /// The total of `refunds` (all of one transaction of `lines` lines), as a ledger that
    /// kept no running total yet computes it once.
    pub fn of(lines: usize, refunds: &[RefundRecord]) -> Refunded {
        let mut total = Refunded {
            count: 0,
            lines: vec![(Decimal::ZERO, Decimal::ZERO); lines],
        };
        for r in refunds {
            total.add(r);
            if r.reversed_at.is_some() {
                total.give_back(r);
            }
        }
        total
    }

    /// Counts a new refund and takes its lines.
    pub fn add(&mut self, refund: &RefundRecord) {
        self.count += 1;
        self.apply(refund, Decimal::ONE);
    }

    /// A refund reversed: what it took is given back (its place stays counted).
    pub fn give_back(&mut self, refund: &RefundRecord) {
        self.apply(refund, Decimal::NEGATIVE_ONE);
    }

    fn apply(&mut self, refund: &RefundRecord, sign: Decimal) {
        for rl in &refund.lines {
            if rl.index >= self.lines.len() {
                self.lines
                    .resize(rl.index + 1, (Decimal::ZERO, Decimal::ZERO));
            }
            if let Some(slot) = self.lines.get_mut(rl.index) {
                slot.0 += sign * rl.line.amount_excluding_tax;
                slot.1 += sign * rl.line.tax_amount;
            }
        }
    }

    /// What still may be refunded of each line of `tx` after these refunds: `(sales
    /// excluding tax, tax)`.
    pub fn remaining(&self, tx: &TransactionRecord) -> Vec<(Decimal, Decimal)> {
        tx.lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let (s, t) = self
                    .lines
                    .get(i)
                    .copied()
                    .unwrap_or((Decimal::ZERO, Decimal::ZERO));
                (l.amount_excluding_tax + s, l.tax_amount + t)
            })
            .collect()
    }
}

/// What still may be refunded of each line of `tx`: `(sales excluding tax, tax)`, both
/// zero or more. Refunds that were reversed give back nothing, so what they took may be
/// refunded again.
pub fn remaining(tx: &TransactionRecord, refunds: &[RefundRecord]) -> Vec<(Decimal, Decimal)> {
    Refunded::of(tx.lines.len(), refunds).remaining(tx)
}

/// The sales (excluding tax) of some lines, for nexus totals.
pub fn nexus_sales(lines: impl IntoIterator<Item = Decimal>) -> Decimal {
    lines.into_iter().sum()
}

/// A new transaction: in live mode, its sales and one more transaction; test-mode sales
/// never count.
pub fn transaction_effect(live: bool, tx: &TransactionRecord) -> Option<NexusChange> {
    live.then(|| NexusChange {
        sales: nexus_sales(tx.lines.iter().map(|l| l.amount_excluding_tax)),
        count: 1,
    })
}

/// Deleting a transaction: in live mode, what remains of it after its refunds (`left`, as
/// [`Refunded::remaining`] gives it: so what was already refunded is not taken off twice)
/// and one transaction fewer.
pub fn deletion_effect(live: bool, left: &[(Decimal, Decimal)]) -> Option<NexusChange> {
    live.then(|| NexusChange {
        sales: -nexus_sales(left.iter().map(|(s, _)| *s)),
        count: -1,
    })
}

/// A new refund: in live mode, its (negative) sales; the transaction still counts.
pub fn refund_effect(live: bool, refund: &RefundRecord) -> Option<NexusChange> {
    live.then(|| NexusChange {
        sales: refund_sales(refund),
        count: 0,
    })
}

/// Reversing a refund of `tx`: in live mode, its sales given back (taken off again), unless
/// the transaction was deleted since: its deletion already took off only what remained, so
/// there is nothing to give back.
pub fn reversal_effect(
    live: bool,
    tx: &TransactionRecord,
    refund: &RefundRecord,
) -> Option<NexusChange> {
    (live && tx.deleted_at.is_none()).then(|| NexusChange {
        sales: -refund_sales(refund),
        count: 0,
    })
}

fn refund_sales(refund: &RefundRecord) -> Decimal {
    nexus_sales(refund.lines.iter().map(|l| l.line.amount_excluding_tax))
}

/// Which amount of a refund line is more than what remains of its transaction line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Excess {
    /// The sales excluding tax.
    Sales,
    /// The tax.
    Tax,
}

impl Excess {
    /// The refund line's field of that amount (`sales_amount_refunded`).
    pub fn field(self) -> &'static str {
        match self {
            Excess::Sales => "sales_amount_refunded",
            Excess::Tax => "tax_amount_refunded",
        }
    }
}

/// Takes a partial refund line (`sales` and `tax`, zero or negative) from what remains of
/// its transaction line (`left`, as [`remaining`] gives it): what remains afterwards, or
/// which amount is too large (the sales checked first).
pub fn take_refund(
    left: (Decimal, Decimal),
    sales: Decimal,
    tax: Decimal,
) -> Result<(Decimal, Decimal), Excess> {
    if -sales > left.0 {
        return Err(Excess::Sales);
    }
    if -tax > left.1 {
        return Err(Excess::Tax);
    }
    Ok((left.0 + sales, left.1 + tax))
}

/// A full refund: for each line with something left, its index and the amounts to refund
/// (`(sales, tax)`, zero or negative). Empty when the transaction was already refunded in
/// full. An amount refunded beyond the line (a ledger written before refund limits held
/// for synced refunds) counts as nothing left, never as something to give back: a refund
/// is never positive.
pub fn full_refund(left: &[(Decimal, Decimal)]) -> Vec<(usize, Decimal, Decimal)> {
    left.iter()
        .enumerate()
        .map(|(i, (s, t))| (i, (*s).max(Decimal::ZERO), (*t).max(Decimal::ZERO)))
        .filter(|(_, s, t)| !s.is_zero() || !t.is_zero())
        .map(|(i, s, t)| (i, -s, -t))
        .collect()
}

/// Expires registration `r` at `at`, the time it is no longer active, asked for at `now`:
/// refused when it has already expired (its `expires_at` is at or before `now`), when `at`
/// is not after its `active_from`, or when it already expires before `at` (an expiry only
/// brings the end forward).
pub fn expire_registration(r: &mut RegistrationRecord, at: i64, now: i64) -> Result<(), Refusal> {
    if let Some(e) = r.expires_at.filter(|e| *e <= now) {
        return Err(Refusal::RegistrationExpired {
            id: r.id.clone(),
            expired_at: e,
        });
    }
    let why = if at <= r.active_from {
        format!("expires_at must be after active_from {}", r.active_from)
    } else if let Some(e) = r.expires_at.filter(|e| at > *e) {
        format!("it already expires at {e}; an expiry can only come earlier")
    } else {
        r.expires_at = Some(at);
        r.updated_at = now;
        return Ok(());
    };
    Err(Refusal::RegistrationExpiry {
        id: r.id.clone(),
        asked: at,
        why,
    })
}

/// Applies `change` to merchant `m` (asked for as `asked`) at `at`: an update replaces the
/// fields given (`updated_at` moves only when something changed), and is refused for a
/// deleted merchant; a deletion marks it deleted, once.
pub fn change_merchant(
    m: &mut MerchantRecord,
    asked: &str,
    change: MerchantChange,
    at: i64,
) -> Result<(), Refusal> {
    match change {
        MerchantChange::Delete => {
            if m.status != MerchantStatus::Deleted {
                m.status = MerchantStatus::Deleted;
                m.deleted_at = Some(at);
                m.updated_at = at;
            }
        }
        MerchantChange::Update(f) => {
            let f = *f;
            if m.status == MerchantStatus::Deleted {
                return Err(Refusal::MerchantDeleted {
                    id: asked.to_string(),
                });
            }
            let before = m.clone();
            if let Some(r) = f.reference {
                m.reference_merchant_id = r;
            }
            if let Some(n) = f.name {
                m.name = n;
            }
            if let Some(e) = f.email {
                m.email = Some(e);
            }
            if let Some(a) = f.default_address {
                m.default_address = a;
            }
            if let Some(t) = f.tax_ids {
                m.tax_ids = t;
            }
            if let Some(md) = f.metadata {
                m.metadata = md;
            }
            if *m != before {
                m.updated_at = at;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{LineRecord, RefundLineRecord};

    #[test]
    fn a_registration_expires_once_after_it_starts_and_only_earlier() {
        let reg = |expires_at| RegistrationRecord {
            id: "reg_1".into(),
            merchant_id: None,
            country: "US".into(),
            region: "TX".into(),
            locals: Vec::new(),
            kind: crate::store::RegistrationKind::SalesTax,
            active_from: 100,
            expires_at,
            created_at: 50,
            updated_at: 50,
        };
        // Open-ended, expired at 200 asked at 150: from 200 on it is no longer active.
        let mut r = reg(None);
        expire_registration(&mut r, 200, 150).unwrap();
        assert_eq!((r.expires_at, r.updated_at), (Some(200), 150));
        assert!(r.active_at(199) && !r.active_at(200) && !r.active_at(99));
        // Not at or before its start.
        let e = expire_registration(&mut reg(None), 100, 150).unwrap_err();
        assert!(
            matches!(e, Refusal::RegistrationExpiry { asked: 100, .. }),
            "{e}"
        );
        // An expiry to come may come earlier, not later.
        expire_registration(&mut reg(Some(300)), 250, 150).unwrap();
        let e = expire_registration(&mut reg(Some(300)), 301, 150).unwrap_err();
        assert!(matches!(e, Refusal::RegistrationExpiry { .. }), "{e}");
        // One that has expired (at or before now) cannot expire again.
        let e = expire_registration(&mut reg(Some(150)), 140, 150).unwrap_err();
        assert_eq!(
            e,
            Refusal::RegistrationExpired {
                id: "reg_1".into(),
                expired_at: 150
            }
        );
    }

    fn d(minor: i64) -> Decimal {
        Decimal::from(minor)
    }

    fn line(sales: i64, tax: i64) -> LineRecord {
        LineRecord {
            line_item_id: "li_1".into(),
            reference_product_id: None,
            reference_product_name: None,
            reference_line_item_id: None,
            product_tax_code: "GENERAL_MERCHANDISE".into(),
            quantity: 1,
            amount_excluding_tax: d(sales),
            tax_amount: d(tax),
            amount_including_tax: d(sales + tax),
            jurisdictions: vec![],
        }
    }

    /// Two lines: $100.00 with $7.00 tax, and $50.00 with $3.50 tax.
    fn tx() -> TransactionRecord {
        TransactionRecord {
            id: "tr_1".into(),
            calculation_id: "calc_1".into(),
            reference_order_id: "o-1".into(),
            processed_at: 0,
            created_at: 0,
            currency: "USD".into(),
            tax_included: false,
            country: "US".into(),
            region: "TN".into(),
            lines: vec![line(10_000, 700), line(5_000, 350)],
            metadata: None,
            deleted_at: None,
            table_hash: None,
            replaced_by: None,
            platform: None,
        }
    }

    /// A refund of `(line index, sales, tax)` lines, negative amounts.
    fn refund(lines: &[(usize, i64, i64)], reversed: bool) -> RefundRecord {
        RefundRecord {
            id: "ref_tr_1".into(),
            transaction_id: "tr_1".into(),
            refund_type: "partial".into(),
            processed_at: 0,
            created_at: 0,
            lines: lines
                .iter()
                .map(|&(index, s, t)| RefundLineRecord {
                    index,
                    line: line(s, t),
                })
                .collect(),
            reversed_at: reversed.then_some(1),
        }
    }

    #[test]
    fn remaining_takes_off_live_refunds_only() {
        // Line 0: 10000 - 2500 = 7500 sales, 700 - 175 = 525 tax. The reversed refund of
        // 1000/70 gives nothing back. Line 1: 5000 - 5000 = 0, 350 - 350 = 0.
        let refunds = [
            refund(&[(0, -2_500, -175), (1, -5_000, -350)], false),
            refund(&[(0, -1_000, -70)], true),
        ];
        assert_eq!(
            remaining(&tx(), &refunds),
            [(d(7_500), d(525)), (d(0), d(0))]
        );
        // No refunds: the lines as they are.
        assert_eq!(
            remaining(&tx(), &[]),
            [(d(10_000), d(700)), (d(5_000), d(350))]
        );
    }

    #[test]
    fn a_transaction_adds_its_sales_and_one_in_live_mode_only() {
        // 10000 + 5000 = 15000 cents, one transaction.
        assert_eq!(
            transaction_effect(true, &tx()),
            Some(NexusChange {
                sales: d(15_000),
                count: 1
            })
        );
        assert_eq!(transaction_effect(false, &tx()), None);
    }

    #[test]
    fn a_deletion_takes_off_what_remains_and_one() {
        // Refunded 2500 of line 0: 15000 - 2500 = 12500 remain, so -12500 and -1; with
        // the 2500 the refund took off already, the place is back to 0.
        let refunds = [refund(&[(0, -2_500, -175)], false)];
        let left = remaining(&tx(), &refunds);
        assert_eq!(
            deletion_effect(true, &left),
            Some(NexusChange {
                sales: d(-12_500),
                count: -1
            })
        );
        assert_eq!(deletion_effect(false, &left), None);
    }

    #[test]
    fn a_refund_takes_off_its_sales_and_a_reversal_gives_them_back() {
        // Refund of 2500 + 1000 = 3500 sales: -3500, count unchanged.
        let r = refund(&[(0, -2_500, -175), (1, -1_000, -70)], false);
        let taken = refund_effect(true, &r);
        assert_eq!(
            taken,
            Some(NexusChange {
                sales: d(-3_500),
                count: 0
            })
        );
        assert_eq!(refund_effect(false, &r), None);
        // The reversal gives the 3500 back: +3500.
        assert_eq!(
            reversal_effect(true, &tx(), &r),
            Some(NexusChange {
                sales: d(3_500),
                count: 0
            })
        );
        // A transaction deleted since: its deletion took off only what remained, so the
        // reversal changes nothing.
        let mut deleted = tx();
        deleted.deleted_at = Some(2);
        assert_eq!(reversal_effect(true, &deleted, &r), None);
        assert_eq!(reversal_effect(false, &tx(), &r), None);
    }

    #[test]
    fn a_whole_life_nets_to_zero() {
        // Sale 15000 (+1), refund 3500, reversal, refund 3500 again, deletion of the
        // 11500 that remain (-1): 15000 - 3500 + 3500 - 3500 - 11500 = 0, count 0.
        let tx = tx();
        let first = refund(&[(0, -2_500, -175), (1, -1_000, -70)], true);
        let second = refund(&[(0, -2_500, -175), (1, -1_000, -70)], false);
        let changes = [
            transaction_effect(true, &tx),
            refund_effect(true, &first),
            reversal_effect(true, &tx, &first),
            refund_effect(true, &second),
            deletion_effect(true, &remaining(&tx, &[first.clone(), second.clone()])),
        ];
        let total = changes.iter().flatten().fold((d(0), 0), |t, c| c.apply(t));
        assert_eq!(total, (d(0), 0));
    }

    #[test]
    fn apply_adds_to_the_stored_total() {
        // 1000 cents over 2 transactions, plus 250 and one more: 1250 over 3.
        let c = NexusChange {
            sales: d(250),
            count: 1,
        };
        assert_eq!(c.apply((d(1_000), 2)), (d(1_250), 3));
    }

    #[test]
    fn take_refund_checks_sales_then_tax() {
        // 7500/525 left. Refunding 7500/525 leaves 0/0; 7501 sales is too much whatever
        // the tax; 7500 with 526 tax is too much tax.
        let left = (d(7_500), d(525));
        assert_eq!(take_refund(left, d(-7_500), d(-525)), Ok((d(0), d(0))));
        assert_eq!(take_refund(left, d(-2_000), d(0)), Ok((d(5_500), d(525))));
        assert_eq!(take_refund(left, d(-7_501), d(-999)), Err(Excess::Sales));
        assert_eq!(take_refund(left, d(-7_500), d(-526)), Err(Excess::Tax));
    }

    #[test]
    fn full_refund_takes_every_line_with_something_left() {
        // Line 0 has 7500/525 left; line 1 nothing; line 2 only 10 of tax.
        let left = [(d(7_500), d(525)), (d(0), d(0)), (d(0), d(10))];
        assert_eq!(
            full_refund(&left),
            [(0, d(-7_500), d(-525)), (2, d(0), d(-10))]
        );
        assert!(full_refund(&[(d(0), d(0))]).is_empty());
        // Refunded beyond the line (-5000 left): nothing to refund, never +5000.
        assert!(full_refund(&[(d(-5_000), d(-350))]).is_empty());
        assert_eq!(full_refund(&[(d(-5_000), d(10))]), [(0, d(0), d(-10))]);
    }

    #[test]
    fn the_running_total_is_what_the_refunds_add_up_to() {
        // Refund 2500/175 and 5000/350, the second reversed, then 1000/70: the running
        // total kept refund by refund is the one computed from all three at once, and
        // leaves 6500/455 and 5000/350.
        let a = refund(&[(0, -2_500, -175)], false);
        let mut b = refund(&[(0, -5_000, -350)], false);
        let c = refund(&[(0, -1_000, -70)], false);
        let mut kept = Refunded::of(2, &[]);
        kept.add(&a);
        kept.add(&b);
        kept.give_back(&b);
        b.reversed_at = Some(1);
        kept.add(&c);
        assert_eq!(kept, Refunded::of(2, &[a.clone(), b.clone(), c.clone()]));
        assert_eq!(kept.count, 3);
        assert_eq!(
            kept.remaining(&tx()),
            [(d(6_500), d(455)), (d(5_000), d(350))]
        );
        assert_eq!(kept.remaining(&tx()), remaining(&tx(), &[a, b, c]));
    }
}
