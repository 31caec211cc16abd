//! Every operation of the ledger, written once for every [`Database`]: a read is one
//! statement (or several in one snapshot), a write is a recipe of statements and the
//! ledger's rules run as one atomic write. The recipes of the writes that move money
//! (a transaction, a refund, a reversal, a deletion) each keep the nexus totals, the
//! monthly sales ([`super::months`]), the daily liability totals ([`super::days`]), the
//! running refund total and the outbox in step with the record, in the same write.

use super::days::{self, DayChange};
use super::error::{RecordKind, Refusal, Result, StoreError};
use super::kept::{Keep, KeptAnswer, KeptCount, KeptStore, Made, Write};
use super::liability::{Booking, Builder, Liability, Period, SaleView};
use super::months;
use super::records::*;
use super::rules::{self, Refunded};
use super::statements::{Database, Health, Key, OutboxRow, Page, Quote, Statements};
use super::{refund, Commit, PlatformStore, Store};

/// `(account, live, id)` owned, for work that outlives the call.
fn owned(scope: &Scope, id: &str) -> (Scope, String) {
    (scope.clone(), id.to_string())
}

fn transaction_missing(id: &str) -> StoreError {
    StoreError::NotFound {
        what: RecordKind::Transaction,
        id: id.to_string(),
    }
}

/// A transaction's running refund total: as kept, or, for a transaction that has none yet
/// (stored before it was kept, or never refunded), computed once from its refunds.
fn running_total(s: &dyn Statements, scope: &Scope, tx: &TransactionRecord) -> Result<Refunded> {
    match s.refunded(scope, &tx.id)? {
        Some(kept) => Ok(kept),
        None => Ok(Refunded::of(
            tx.lines.len(),
            &s.refunds(scope, &tx.id, (-1, i64::MAX))?,
        )),
    }
}

/// Records a new transaction: its row, its sales in the nexus totals (live mode) and in
/// its month, its day's liability, and its place in the outbox.
fn record_transaction(s: &dyn Statements, scope: &Scope, tx: &TransactionRecord) -> Result<()> {
    let day = record_sale(s, scope, tx)?;
    s.add_liability_day(scope, &day)
}

/// Records a batch of new transactions, as [`record_transaction`] does each, their days'
/// liability merged ([`days::merged`]): each day's rows written once.
fn record_transactions(s: &dyn Statements, scope: &Scope, txs: &[TransactionRecord]) -> Result<()> {
    let mut changes = Vec::with_capacity(txs.len());
    for tx in txs {
        changes.push(record_sale(s, scope, tx)?);
    }
    for change in days::merged(changes) {
        s.add_liability_day(scope, &change)?;
    }
    Ok(())
}

/// Records a new transaction but its day's liability, which it returns for the caller
/// to add.
fn record_sale(s: &dyn Statements, scope: &Scope, tx: &TransactionRecord) -> Result<DayChange> {
    s.insert_transaction(scope, tx)?;
    if let Some(change) = rules::transaction_effect(scope.live, tx) {
        s.add_nexus(&scope.account, tx, change)?;
    }
    s.add_nexus_month(scope, tx, &months::transaction_month(tx))?;
    s.outbox_add(scope, "transaction", &tx.id)?;
    Ok(days::sale_day(&SaleView::of(tx)))
}

/// Deletes a transaction: marked deleted, what remains of it (after its refunds) taken off
/// the nexus totals and its month, the deletion in the outbox. With `replaced_by`, it is
/// marked replaced by that transaction and lets go of its order id
/// ([`Statements::retire_order_id`]).
fn delete_transaction(
    s: &dyn Statements,
    scope: &Scope,
    id: &str,
    at: i64,
    replaced_by: Option<&str>,
) -> Result<()> {
    let mut tx = s
        .transaction(scope, id)?
        .ok_or_else(|| transaction_missing(id))?;
    if tx.deleted_at.is_some() {
        return Err(StoreError::AlreadyDeleted { id: id.to_string() });
    }
    tx.deleted_at = Some(at);
    tx.replaced_by = replaced_by.map(str::to_string);
    s.update_transaction(scope, &tx)?;
    if replaced_by.is_some() {
        s.retire_order_id(scope, id)?;
    }
    let left = running_total(s, scope, &tx)?.remaining(&tx);
    if let Some(change) = rules::deletion_effect(scope.live, &left) {
        s.add_nexus(&scope.account, &tx, change)?;
    }
    s.add_nexus_month(scope, &tx, &months::deletion_month(&tx, &left))?;
    let refunds = s.refunds(scope, id, (-1, i64::MAX))?;
    for booking in days::days_of(&SaleView::of(&tx), &refunds) {
        s.add_liability_day(scope, &booking.negated())?;
    }
    s.outbox_add(scope, "deletion", id)
}

/// Replaces the transaction `old` by `tx`, a new version of the sale under its order id
/// ([`Write::Replacement`]): `old` deleted and marked replaced, then `tx` recorded.
fn replace_transaction(
    s: &dyn Statements,
    scope: &Scope,
    old: &str,
    tx: &TransactionRecord,
    at: i64,
) -> Result<()> {
    let before = s
        .transaction(scope, old)?
        .filter(|t| t.deleted_at.is_none() && t.reference_order_id == tx.reference_order_id)
        .ok_or_else(|| transaction_missing(old))?;
    let standing = s
        .refunds(scope, &before.id, (-1, i64::MAX))?
        .iter()
        .filter(|r| r.reversed_at.is_none())
        .count();
    if standing > 0 {
        return Err(Refusal::Refunded {
            transaction: before.id,
            refunds: standing,
        }
        .into());
    }
    delete_transaction(s, scope, old, at, Some(&tx.id))?;
    record_transaction(s, scope, tx)
}

/// Records a refund of a transaction not deleted, as the rules build it from what remains
/// (the running refund total, kept up to date), with its nexus effect and outbox event.
fn record_refund(
    s: &dyn Statements,
    scope: &Scope,
    tx_id: &str,
    ask: RefundAsk,
) -> Result<RefundRecord> {
    let tx = s
        .transaction(scope, tx_id)?
        .filter(|t| t.deleted_at.is_none())
        .ok_or_else(|| transaction_missing(tx_id))?;
    let mut refunded = running_total(s, scope, &tx)?;
    let refund = refund::build(&tx, &refunded.remaining(&tx), ask)?;
    s.insert_refund(scope, &refund, refunded.count)?;
    refunded.add(&refund);
    s.set_refunded(scope, tx_id, &refunded)?;
    if let Some(change) = rules::refund_effect(scope.live, &refund) {
        s.add_nexus(&scope.account, &tx, change)?;
    }
    let left = refunded.remaining(&tx);
    s.add_nexus_month(scope, &tx, &months::refund_month(&tx, &refund, &left))?;
    let booked = days::refund_day(&SaleView::of(&tx), &refund, Booking::Refund);
    s.add_liability_day(scope, &booked)?;
    s.outbox_add(scope, "refund", &refund.id)?;
    Ok(refund)
}

/// Reverses a refund: what it took is given back to the running total and (unless its
/// transaction was deleted since) to the nexus totals; the reversal goes in the outbox.
fn reverse_refund(s: &dyn Statements, scope: &Scope, id: &str, at: i64) -> Result<RefundRecord> {
    let mut refund = s.refund(scope, id)?.ok_or_else(|| StoreError::NotFound {
        what: RecordKind::Refund,
        id: id.to_string(),
    })?;
    if refund.reversed_at.is_some() {
        return Err(StoreError::AlreadyReversed { id: id.to_string() });
    }
    let tx = s
        .transaction(scope, &refund.transaction_id)?
        .ok_or_else(|| StoreError::ledger(format!("refund {id} names a missing transaction")))?;
    // Read before the refund is marked: computed from the refunds, it must still count
    // this one.
    let mut refunded = running_total(s, scope, &tx)?;
    let left = refunded.remaining(&tx);
    refunded.give_back(&refund);
    s.set_refunded(scope, &tx.id, &refunded)?;
    refund.reversed_at = Some(at);
    s.update_refund(scope, &refund)?;
    if let Some(change) = rules::reversal_effect(scope.live, &tx, &refund) {
        s.add_nexus(&scope.account, &tx, change)?;
    }
    let deleted = tx.deleted_at.is_some();
    if let Some(change) = months::reversal_month(deleted, &tx, &refund, &left) {
        s.add_nexus_month(scope, &tx, &change)?;
    }
    if !deleted {
        let given_back: DayChange =
            days::refund_day(&SaleView::of(&tx), &refund, Booking::Reversal);
        s.add_liability_day(scope, &given_back)?;
    }
    s.outbox_add(scope, "reversal", id)?;
    Ok(refund)
}

/// Rows a report reads at a time.
const REPORT_PAGE: i64 = 2000;

/// The liability report of `period`: of whole days, their daily totals summed; otherwise
/// [`recount`].
fn liability(s: &dyn Statements, scope: &Scope, period: Period) -> Result<Liability> {
    match period.days() {
        Some(range) => {
            let (rows, totals) = s.liability_days(scope, range, period.region.as_deref())?;
            Ok(days::from_days(rows, totals))
        }
        None => recount(s, scope, period),
    }
}

/// The liability report of `period` from the records: every refund of the scope read
/// first (keeping those booked in the period), then every transaction, a page at a time.
fn recount(s: &dyn Statements, scope: &Scope, period: Period) -> Result<Liability> {
    let mut builder = Builder::new(period);
    let mut after = String::new();
    loop {
        let page = s.refunds_by_id(
            scope,
            Page {
                after: &after,
                limit: REPORT_PAGE,
            },
        )?;
        let Some(last) = page.last() else { break };
        after = last.id.clone();
        let full = page.len() as i64 == REPORT_PAGE;
        page.into_iter().for_each(|r| builder.refund(r));
        if !full {
            break;
        }
    }
    after.clear();
    loop {
        let page = s.transactions_sealed(
            scope,
            Page {
                after: &after,
                limit: REPORT_PAGE,
            },
        )?;
        let Some((last, _)) = page.last() else { break };
        after = last.clone();
        for (_, sealed) in &page {
            let view: SaleView<'_> = serde_json::from_str(super::seal::unseal(sealed)?)
                .map_err(|e| StoreError::ledger(format!("stored record unreadable: {e}")))?;
            builder.transaction(&view);
        }
        if (page.len() as i64) < REPORT_PAGE {
            break;
        }
    }
    Ok(builder.finish())
}

/// A merchant by `merch_…` id first, then by `reference_merchant_id`.
fn merchant(s: &dyn Statements, scope: &Scope, id: &str) -> Result<Option<MerchantRecord>> {
    match s.merchant(scope, Key::Id(id))? {
        Some(m) => Ok(Some(m)),
        None => s.merchant(scope, Key::Reference(id)),
    }
}

/// Changes a merchant by the ledger's rules; `None` when there is no such merchant.
fn change_merchant(
    s: &dyn Statements,
    scope: &Scope,
    id: &str,
    change: MerchantChange,
    at: i64,
) -> Result<Option<MerchantRecord>> {
    let Some(mut m) = merchant(s, scope, id)? else {
        return Ok(None);
    };
    rules::change_merchant(&mut m, id, change, at)?;
    s.update_merchant(scope, &m)?;
    Ok(Some(m))
}

/// Expires a registration at `at`, asked for at `now`, by the ledger's rules.
fn expire_registration(
    s: &dyn Statements,
    scope: &Scope,
    id: &str,
    at: i64,
    now: i64,
) -> Result<RegistrationRecord> {
    let mut r = s
        .registration(scope, id)?
        .ok_or_else(|| StoreError::NotFound {
            what: RecordKind::Registration,
            id: id.to_string(),
        })?;
    rules::expire_registration(&mut r, at, now)?;
    s.update_registration(scope, &r)?;
    Ok(r)
}

/// Makes one of a request's writes ([`Write`]) by the recipe of the [`Store`] method of
/// the same name.
fn make(s: &dyn Statements, scope: &Scope, write: Write) -> Result<Made> {
    let stored = |r: Result<()>| r.map(|()| Made::Stored);
    match write {
        Write::Customer(c) => stored(s.insert_customer(scope, &c)),
        Write::Product(p) => stored(s.insert_product(scope, &p)),
        Write::Transaction(tx) => stored(record_transaction(s, scope, &tx)),
        Write::Transactions(txs) => stored(record_transactions(s, scope, &txs)),
        Write::Replacement { replaced, tx, at } => {
            stored(replace_transaction(s, scope, &replaced, &tx, at))
        }
        Write::Refund {
            transaction_id,
            ask,
        } => record_refund(s, scope, &transaction_id, ask).map(Made::Refund),
        Write::Reversal { refund_id, at } => {
            reverse_refund(s, scope, &refund_id, at).map(Made::Refund)
        }
        Write::Merchant(m) => stored(s.insert_merchant(scope, &m)),
        Write::MerchantChange { id, change, at } => {
            match change_merchant(s, scope, &id, change, at)? {
                Some(m) => Ok(Made::Merchant(m)),
                None => Err(StoreError::NotFound {
                    what: RecordKind::Merchant,
                    id,
                }),
            }
        }
        Write::Registration(r) => stored(s.insert_registration(scope, &r)),
        Write::Expiry { id, at, now } => {
            expire_registration(s, scope, &id, at, now).map(Made::Registration)
        }
        Write::Answer => Ok(Made::Stored),
    }
}

/// Makes `write` and, with `keep`, keeps its answer under its key: one write.
fn make_kept(
    s: &dyn Statements,
    scope: &Scope,
    write: Write,
    keep: Option<Keep>,
) -> Result<(Made, Option<KeptAnswer>)> {
    let made = make(s, scope, write)?;
    let kept = match keep {
        None => None,
        Some(keep) => {
            let answer = keep.answer(&made)?;
            s.keep(scope, &answer)?;
            Some(answer)
        }
    };
    Ok((made, kept))
}

/// Cancels a certificate request, following its state table.
fn cancel_request(
    s: &dyn Statements,
    account: &str,
    id: &str,
    at: i64,
) -> Result<CertificateRequestRecord> {
    let mut r = s
        .request(account, id)?
        .ok_or_else(|| StoreError::NotFound {
            what: RecordKind::CertificateRequest,
            id: id.to_string(),
        })?;
    match r.status {
        RequestStatus::Canceled => Ok(r),
        RequestStatus::Fulfilled => Err(StoreError::RequestFulfilled { id: id.to_string() }),
        RequestStatus::Invalid => Err(StoreError::RequestInvalid { id: id.to_string() }),
        RequestStatus::Pending => {
            r.status = RequestStatus::Canceled;
            r.canceled_at = Some(at);
            r.updated_at = at;
            s.update_request(account, &r)?;
            Ok(r)
        }
    }
}

/// The record an outbox event sends: a transaction or refund as it was when the event
/// was written (a transaction before its deletion, a refund before its reversal), or as
/// it is now for a deletion or a reversal (which carry its time), with its mode
/// (`livemode`) inside the seal, so that the central ledger checks it against the key's.
fn outbox_record(s: &dyn Statements, scope: &Scope, kind: &str, id: &str) -> Result<String> {
    let missing = || StoreError::ledger(format!("the outbox names a missing record {id}"));
    let mut value = match kind {
        "transaction" | "deletion" => {
            let mut tx = s.transaction(scope, id)?.ok_or_else(missing)?;
            if kind == "transaction" {
                // The sale as it was recorded: its deletion (and replacement) is an event
                // of its own.
                (tx.deleted_at, tx.replaced_by) = (None, None);
            }
            serde_json::to_value(&tx)
        }
        "refund" | "reversal" => {
            let mut refund = s.refund(scope, id)?.ok_or_else(missing)?;
            if kind == "refund" {
                refund.reversed_at = None;
            }
            serde_json::to_value(&refund)
        }
        other => {
            return Err(StoreError::ledger(format!(
                "the outbox holds an event of unknown kind {other:?}"
            )))
        }
    }
    .map_err(StoreError::ledger)?;
    if let Some(object) = value.as_object_mut() {
        object.insert("livemode".to_string(), serde_json::Value::Bool(scope.live));
    }
    super::seal::to_json(&value)
}

/// Outbox rows of one mode, each with its record.
fn outbox_events(s: &dyn Statements, live: bool, rows: Vec<OutboxRow>) -> Result<Vec<OutboxEvent>> {
    rows.into_iter()
        .map(|(seq, account, kind, id)| {
            let scope = Scope {
                account: account.as_str().into(),
                live,
            };
            let record = outbox_record(s, &scope, &kind, &id)?;
            Ok(OutboxEvent {
                seq,
                account,
                kind,
                id,
                record,
            })
        })
        .collect()
}

/// What a calculation reads: the customer, each line's product, in live mode the
/// certificates of a customer not exempt everywhere, and the seller's registrations
/// (`registrations`: the seller, `None` for the account's own, and the sale's time).
fn calculation_reads(
    s: &dyn Statements,
    scope: &Scope,
    customer_id: Option<&str>,
    product_ids: &[Option<String>],
    registrations: Option<(Option<String>, i64)>,
) -> Result<CalculationReads> {
    let customer = match customer_id {
        Some(id) => s.customer(scope, Key::Id(id))?,
        None => None,
    };
    let mut products = Vec::with_capacity(product_ids.len());
    for id in product_ids {
        products.push(match id {
            Some(id) => s.product(scope, id)?,
            None => None,
        });
    }
    let certificates = match &customer {
        Some(c) if scope.live && !c.is_tax_exempt => s.certificates(&scope.account, Some(&c.id))?,
        _ => Vec::new(),
    };
    let (registrations, registered) = match registrations {
        Some((seller, at)) => seller_registrations(s, scope, seller.as_deref().unwrap_or(""), at)?,
        None => (Vec::new(), Vec::new()),
    };
    Ok(CalculationReads {
        customer,
        products,
        certificates,
        registrations,
        registered,
    })
}

/// A seller's registrations active at `at`, of every kind, by id, and the kinds it has
/// any of.
fn seller_registrations(
    s: &dyn Statements,
    scope: &Scope,
    seller: &str,
    at: i64,
) -> Result<(Vec<RegistrationRecord>, Vec<RegistrationKind>)> {
    let (mut active, mut kinds) = (Vec::new(), Vec::new());
    for &kind in RegistrationKind::ALL {
        let (of_kind, any) = s.seller_registrations(scope, seller, kind, at)?;
        active.extend(of_kind);
        if any {
            kinds.push(kind);
        }
    }
    active.sort_by(|a, b| a.id.cmp(&b.id));
    Ok((active, kinds))
}

impl<D: Database> Store for D {
    fn reads_cross_a_network(&self) -> bool {
        Database::reads_cross_a_network(self)
    }

    fn health(&self) -> Health {
        Database::health(self)
    }

    fn insert_customer(&self, scope: &Scope, c: CustomerRecord) -> Result<()> {
        let scope = scope.clone();
        self.write(move |s| s.insert_customer(&scope, &c))
    }

    fn customer(
        &self,
        scope: &Scope,
        id: &str,
        by_reference: bool,
    ) -> Result<Option<CustomerRecord>> {
        let (scope, id) = owned(scope, id);
        self.read(move |s| {
            let key = if by_reference {
                Key::Reference(&id)
            } else {
                Key::Id(&id)
            };
            s.customer(&scope, key)
        })
    }

    fn delete_customer(&self, scope: &Scope, id: &str, at: i64) -> Result<bool> {
        let (scope, id) = owned(scope, id);
        self.write(move |s| s.delete_customer(&scope, &id, at))
    }

    fn insert_product(&self, scope: &Scope, p: ProductRecord) -> Result<()> {
        let scope = scope.clone();
        self.write(move |s| s.insert_product(&scope, &p))
    }

    fn product(&self, scope: &Scope, id: &str) -> Result<Option<ProductRecord>> {
        let (scope, id) = owned(scope, id);
        self.read(move |s| s.product(&scope, &id))
    }

    fn calculation_reads(
        &self,
        scope: &Scope,
        customer_id: Option<&str>,
        product_ids: &[Option<&str>],
        registrations: Option<SellerAt<'_>>,
    ) -> Result<CalculationReads> {
        let scope = scope.clone();
        let registrations = registrations.map(|r| (r.seller.map(str::to_string), r.at));
        let customer_id = customer_id.map(str::to_string);
        let product_ids: Vec<Option<String>> =
            product_ids.iter().map(|p| p.map(str::to_string)).collect();
        self.snapshot(move |s| {
            let customer_id = customer_id.as_deref();
            calculation_reads(s, &scope, customer_id, &product_ids, registrations)
        })
    }

    fn delete_product(&self, scope: &Scope, id: &str) -> Result<bool> {
        let (scope, id) = owned(scope, id);
        self.write(move |s| s.delete_product(&scope, &id))
    }

    fn list_products(
        &self,
        scope: &Scope,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<Vec<ProductRecord>> {
        let (scope, after) = owned(scope, cursor.unwrap_or(""));
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(move |s| {
            let page = Page {
                after: &after,
                limit,
            };
            s.products(&scope, page)
        })
    }

    fn insert_calculation(&self, scope: &Scope, calc: &CalculationRecord) -> Result<()> {
        self.submit(scope, Quote::Calculation(calc), None)?.wait()
    }

    fn submit_calculation(&self, scope: &Scope, calc: &CalculationRecord) -> Result<Commit> {
        self.submit(scope, Quote::Calculation(calc), None)
    }

    fn stored_calculations(&self, scope: &Scope) -> Result<StoredCalculations> {
        Database::stored_calculations(self, scope)
    }

    fn calculation(&self, scope: &Scope, id: &str, now: i64) -> Result<Option<CalculationRecord>> {
        let (scope, id) = owned(scope, id);
        self.read(move |s| s.calculation(&scope, &id, now))
    }

    fn insert_transaction(&self, scope: &Scope, tx: TransactionRecord) -> Result<()> {
        let scope = scope.clone();
        self.write(move |s| record_transaction(s, &scope, &tx))
    }

    fn transaction(&self, scope: &Scope, id: &str) -> Result<Option<TransactionRecord>> {
        let (scope, id) = owned(scope, id);
        self.read(move |s| s.transaction(&scope, &id))
    }

    fn transaction_of_order(
        &self,
        scope: &Scope,
        order_id: &str,
        kind: &str,
    ) -> Result<Option<TransactionRecord>> {
        let (scope, order_id) = owned(scope, order_id);
        let kind = kind.to_string();
        self.read(move |s| s.transaction_of_order(&scope, &order_id, &kind))
    }

    fn delete_transaction(&self, scope: &Scope, id: &str, at: i64) -> Result<()> {
        let (scope, id) = owned(scope, id);
        self.write(move |s| delete_transaction(s, &scope, &id, at, None))
    }

    fn delete_replaced_transaction(
        &self,
        scope: &Scope,
        id: &str,
        at: i64,
        replaced_by: &str,
    ) -> Result<()> {
        let (scope, id) = owned(scope, id);
        let by = replaced_by.to_string();
        self.write(move |s| delete_transaction(s, &scope, &id, at, Some(&by)))
    }

    fn insert_refund(
        &self,
        scope: &Scope,
        transaction_id: &str,
        ask: RefundAsk,
    ) -> Result<RefundRecord> {
        let (scope, id) = owned(scope, transaction_id);
        self.write(move |s| record_refund(s, &scope, &id, ask))
    }

    fn refunds(&self, scope: &Scope, transaction_id: &str) -> Result<Vec<RefundRecord>> {
        let (scope, id) = owned(scope, transaction_id);
        self.read(move |s| s.refunds(&scope, &id, (-1, i64::MAX)))
    }

    fn refunds_page(
        &self,
        scope: &Scope,
        transaction_id: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<RefundRecord>> {
        let (scope, id) = owned(scope, transaction_id);
        let after = after.map(str::to_string);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.snapshot(move |s| {
            let from = match &after {
                None => -1,
                Some(cursor) => {
                    s.refund_seq(&scope, &id, cursor)?
                        .ok_or_else(|| StoreError::NotFound {
                            what: RecordKind::Refund,
                            id: cursor.clone(),
                        })?
                }
            };
            s.refunds(&scope, &id, (from, limit))
        })
    }

    fn refund(&self, scope: &Scope, id: &str) -> Result<Option<RefundRecord>> {
        let (scope, id) = owned(scope, id);
        self.read(move |s| s.refund(&scope, &id))
    }

    fn reverse_refund(&self, scope: &Scope, refund_id: &str, at: i64) -> Result<RefundRecord> {
        let (scope, id) = owned(scope, refund_id);
        self.write(move |s| reverse_refund(s, &scope, &id, at))
    }

    fn liability(&self, scope: &Scope, period: &Period) -> Result<Liability> {
        let scope = scope.clone();
        let period = period.clone();
        self.snapshot(move |s| liability(s, &scope, period))
    }

    fn liability_recount(&self, scope: &Scope, period: &Period) -> Result<Liability> {
        let (scope, period) = (scope.clone(), period.clone());
        self.snapshot(move |s| recount(s, &scope, period))
    }

    fn nexus(&self, account: &str) -> Result<Vec<NexusTotal>> {
        let account = account.to_string();
        self.read(move |s| s.nexus(&account))
    }

    fn nexus_reads(&self, scope: &Scope, country: &str) -> Result<NexusReads> {
        let (scope, country) = owned(scope, country);
        self.snapshot(move |s| {
            Ok(NexusReads {
                months: s.nexus_months(&scope, &country)?,
                registrations: s.registrations_of_kind(&scope, RegistrationKind::SalesTax)?,
            })
        })
    }

    fn outbox(&self, live: bool, account: Option<&str>, limit: usize) -> Result<Vec<OutboxEvent>> {
        let account = account.map(str::to_string);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.snapshot(move |s| {
            let rows = s.unsent(live, account.as_deref(), limit)?;
            outbox_events(s, live, rows)
        })
    }

    fn outbox_conflict_events(
        &self,
        live: bool,
        account: Option<&str>,
        after: i64,
        limit: usize,
    ) -> Result<Vec<OutboxEvent>> {
        let account = account.map(str::to_string);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.snapshot(move |s| {
            let rows = s.conflicted(live, account.as_deref(), after, limit)?;
            outbox_events(s, live, rows)
        })
    }

    fn outbox_accounts(&self, live: bool) -> Result<Vec<String>> {
        self.read(move |s| s.outbox_accounts(live))
    }

    fn retry_conflicts(&self, live: bool) -> Result<usize> {
        self.write(move |s| s.outbox_retry(live))
    }

    fn mark_outbox(&self, marks: Vec<OutboxMark>) -> Result<()> {
        self.write(move |s| {
            for m in &marks {
                match &m.conflict {
                    None => s.outbox_mark(m.seq, "sent", None)?,
                    Some(why) => s.outbox_mark(m.seq, "conflict", Some(why))?,
                }
            }
            Ok(())
        })
    }

    fn outbox_conflicts(&self, live: bool) -> Result<Vec<OutboxRow>> {
        self.read(move |s| s.outbox_conflicts(live))
    }
}

impl<D: Database> PlatformStore for D {
    fn insert_merchant(&self, scope: &Scope, m: MerchantRecord) -> Result<()> {
        let scope = scope.clone();
        self.write(move |s| s.insert_merchant(&scope, &m))
    }

    fn merchant(&self, scope: &Scope, id: &str) -> Result<Option<MerchantRecord>> {
        let (scope, id) = owned(scope, id);
        self.read(move |s| merchant(s, &scope, &id))
    }

    fn change_merchant(
        &self,
        scope: &Scope,
        id: &str,
        change: MerchantChange,
        at: i64,
    ) -> Result<Option<MerchantRecord>> {
        let (scope, id) = owned(scope, id);
        self.write(move |s| change_merchant(s, &scope, &id, change, at))
    }

    fn list_merchants(
        &self,
        scope: &Scope,
        cursor: Option<&str>,
        filter: MerchantFilter,
        limit: usize,
    ) -> Result<Vec<MerchantRecord>> {
        let (scope, after) = owned(scope, cursor.unwrap_or(""));
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(move |s| {
            let page = Page {
                after: &after,
                limit,
            };
            s.merchants(&scope, filter.pattern(), page)
        })
    }

    fn insert_registration(&self, scope: &Scope, r: RegistrationRecord) -> Result<()> {
        let scope = scope.clone();
        self.write(move |s| s.insert_registration(&scope, &r))
    }

    fn registration(&self, scope: &Scope, id: &str) -> Result<Option<RegistrationRecord>> {
        let (scope, id) = owned(scope, id);
        self.read(move |s| s.registration(&scope, &id))
    }

    fn expire_registration(
        &self,
        scope: &Scope,
        id: &str,
        at: i64,
        now: i64,
    ) -> Result<RegistrationRecord> {
        let (scope, id) = owned(scope, id);
        self.write(move |s| expire_registration(s, &scope, &id, at, now))
    }

    fn list_registrations(
        &self,
        scope: &Scope,
        cursor: Option<&str>,
        filter: &RegistrationFilter,
        limit: usize,
    ) -> Result<Vec<RegistrationRecord>> {
        let (scope, after) = owned(scope, cursor.unwrap_or(""));
        let filter = filter.clone();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(move |s| {
            let page = Page {
                after: &after,
                limit,
            };
            s.registrations(&scope, &filter, page)
        })
    }

    fn insert_platform_calculation(
        &self,
        scope: &Scope,
        calc: &PlatformCalculationRecord,
    ) -> Result<()> {
        self.submit(scope, Quote::Platform(calc), None)?.wait()
    }

    fn submit_platform_calculation(
        &self,
        scope: &Scope,
        calc: &PlatformCalculationRecord,
    ) -> Result<Commit> {
        self.submit(scope, Quote::Platform(calc), None)
    }

    fn platform_calculation(
        &self,
        scope: &Scope,
        id: &str,
        now: i64,
    ) -> Result<Option<PlatformCalculationRecord>> {
        let (scope, id) = owned(scope, id);
        self.read(move |s| {
            let found = s.platform_calc(&scope, &id)?;
            Ok(found.filter(|p| p.order.expires_at > now))
        })
    }

    fn insert_transactions(&self, scope: &Scope, txs: Vec<TransactionRecord>) -> Result<()> {
        let scope = scope.clone();
        self.write(move |s| record_transactions(s, &scope, &txs))
    }

    fn import_certificates(&self, account: &str, batch: CertificateBatch) -> Result<()> {
        let account = account.to_string();
        self.write(move |s| {
            for (c, document) in &batch.certificates {
                s.insert_certificate(&account, c)?;
                if let (Some(info), Some(bytes)) = (&c.document, document) {
                    s.insert_document(&c.id, &info.content_type, bytes)?;
                }
            }
            for r in &batch.requests {
                s.insert_request(&account, r)?;
            }
            Ok(())
        })
    }

    fn certificates(
        &self,
        account: &str,
        customer_id: Option<&str>,
    ) -> Result<Vec<CertificateRecord>> {
        let (account, customer) = (account.to_string(), customer_id.map(str::to_string));
        self.read(move |s| s.certificates(&account, customer.as_deref()))
    }

    fn certificate(&self, account: &str, id: &str) -> Result<Option<CertificateRecord>> {
        let (account, id) = (account.to_string(), id.to_string());
        self.read(move |s| s.certificate(&account, &id))
    }

    fn certificate_document(&self, id: &str) -> Result<Option<(String, Vec<u8>)>> {
        let id = id.to_string();
        self.read(move |s| s.certificate_document(&id))
    }

    fn certificate_requests(&self, account: &str) -> Result<Vec<CertificateRequestRecord>> {
        let account = account.to_string();
        self.read(move |s| s.requests(&account))
    }

    fn certificate_request(
        &self,
        account: &str,
        id: &str,
    ) -> Result<Option<CertificateRequestRecord>> {
        let (account, id) = (account.to_string(), id.to_string());
        self.read(move |s| s.request(&account, &id))
    }

    fn cancel_certificate_request(
        &self,
        account: &str,
        id: &str,
        at: i64,
    ) -> Result<CertificateRequestRecord> {
        let (account, id) = (account.to_string(), id.to_string());
        self.write(move |s| cancel_request(s, &account, &id, at))
    }

    fn secret(&self, name: &str) -> Result<[u8; 32]> {
        let name = name.to_string();
        let fresh = crate::random::bytes32().map_err(|e| {
            StoreError::Internal(format!(
                "the operating system's random number generator failed: {e}"
            ))
        })?;
        self.write(move |s| {
            s.secret(&name, &fresh)?
                .try_into()
                .map_err(|_| StoreError::ledger(format!("secret {name} is not 32 bytes")))
        })
    }
}

impl<D: Database> KeptStore for D {
    fn kept(&self, scope: &Scope, key: &str, now: i64) -> Result<Option<KeptAnswer>> {
        let (scope, key) = owned(scope, key);
        self.read(move |s| s.kept(&scope, &key, now))
    }

    fn make(
        &self,
        scope: &Scope,
        write: Write,
        keep: Option<Keep>,
    ) -> Result<(Made, Option<KeptAnswer>)> {
        let scope = scope.clone();
        self.write(move |s| make_kept(s, &scope, write, keep))
    }

    fn submit_kept(&self, scope: &Scope, quote: Quote<'_>, kept: &KeptAnswer) -> Result<Commit> {
        self.submit(scope, quote, Some(kept))
    }

    fn kept_count(&self, scope: &Scope, now: i64) -> Result<KeptCount> {
        let scope = scope.clone();
        self.read(move |s| s.count_kept(&scope, now))
    }
}
