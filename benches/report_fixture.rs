//! A generated ledger for the liability report benches: a chain's year of sales in three
//! states (Tennessee 7% + 2.25%, California 6% + 1.25% + a 2.5% district, Kentucky 6%),
//! one to three lines a sale, every hundredth sale refunded in full a week later; and the
//! same lines' jurisdiction entries as a flat table, for the plain SQL `GROUP BY` baseline.

use levy_api::store::{
    JurisdictionRecord, LineRecord, RefundAsk, RefundStamp, Scope, Store, TransactionRecord,
};
use levy_core::Decimal;

use crate::SplitMix;

/// 2026-01-01T00:00:00Z.
pub const YEAR_START: i64 = 1_767_225_600;
/// Seconds in the year 2026.
pub const YEAR: i64 = 365 * 86_400;

/// The scope the ledger's sales are stored under.
pub fn scope() -> Scope {
    Scope {
        account: "acct_chain".into(),
        live: true,
    }
}

/// An entry that taxed the whole line, `base`, as the calculations write it.
fn entry(code: &str, kind: &str, rate: Decimal, due: Decimal, base: Decimal) -> JurisdictionRecord {
    JurisdictionRecord {
        tax_rate: rate,
        tax_due: due,
        fee: Decimal::ZERO,
        rate_type: "GENERAL SALES TAX".into(),
        jurisdiction_name: code.into(),
        jurisdiction_code: code.into(),
        authority_name: String::new(),
        authority_type: kind.into(),
        tax_type: "SALES".into(),
        note: "RATE_FRAC".into(),
        rule_id: 1,
        exemption_certificate_id: None,
        taxable_base: Some(base),
    }
}

/// The jurisdictions of a state: `(code, authority type, rate in ten-thousandths)`.
fn jurisdictions(region: &str) -> &'static [(&'static str, &'static str, i64)] {
    match region {
        "TN" => &[("47", "STATE", 700), ("47037", "COUNTY", 225)],
        "CA" => &[
            ("06", "STATE", 600),
            ("06037", "COUNTY", 125),
            ("06:CDTFA:CITY:LOS ANGELES", "DISTRICT", 250),
        ],
        _ => &[("21", "STATE", 600)],
    }
}

/// Sale `i` of the year: its region, time and lines (amounts in cents).
pub fn transaction(i: u64, n: u64) -> TransactionRecord {
    let mut rng = SplitMix::new(i.wrapping_mul(0x9E37_79B9) ^ 0x5EED);
    let region = ["TN", "CA", "KY"][(rng.next_u64() % 3) as usize];
    let at = YEAR_START + (i as i64 * (YEAR / n.max(1) as i64)).min(YEAR - 1);
    let lines = (0..1 + rng.next_u64() % 3)
        .map(|l| {
            let cents = 100 + (rng.next_u64() % 20_000) as i64;
            let sales = Decimal::from(cents);
            let mut due_sum = Decimal::ZERO;
            let entries: Vec<JurisdictionRecord> = jurisdictions(region)
                .iter()
                .map(|&(code, kind, bp)| {
                    let rate = Decimal::new(bp, 4);
                    let due = sales * rate;
                    due_sum += due;
                    entry(code, kind, rate, due, sales)
                })
                .collect();
            let tax = due_sum.round();
            LineRecord {
                line_item_id: format!("li_{i}_{l}"),
                reference_product_id: None,
                reference_product_name: None,
                reference_line_item_id: None,
                product_tax_code: "GENERAL_MERCHANDISE".into(),
                quantity: 1,
                amount_excluding_tax: sales,
                tax_amount: tax,
                amount_including_tax: sales + tax,
                jurisdictions: entries,
            }
        })
        .collect();
    TransactionRecord {
        id: format!("tr_{i:012}"),
        calculation_id: format!("calc_{i}"),
        reference_order_id: format!("order-{i}"),
        processed_at: at,
        created_at: at,
        currency: "USD".into(),
        tax_included: false,
        country: "US".into(),
        region: region.into(),
        lines,
        metadata: None,
        deleted_at: None,
        platform: None,
        table_hash: Some("5bb6efade0f0336aa03d3529e2c068faceec93897755c24fd4d019d586a9eddf".into()),
        replaced_by: None,
    }
}

/// Stores `n` sales of the year in `store` (a thousand a write) and refunds every
/// hundredth in full a week after it.
pub fn fill(store: &dyn Store, n: u64) {
    let scope = scope();
    let mut batch = Vec::with_capacity(1000);
    for i in 0..n {
        batch.push(transaction(i, n));
        if batch.len() == 1000 || i + 1 == n {
            store
                .insert_transactions(&scope, std::mem::take(&mut batch))
                .expect("the sales are stored");
        }
    }
    for i in (0..n).step_by(100) {
        let t = transaction(i, n);
        let at = t.processed_at + 7 * 86_400;
        let stamp = RefundStamp {
            id: format!("ref_tr_{i:012}"),
            processed_at: at,
            created_at: at,
        };
        store
            .insert_refund(&scope, &t.id, RefundAsk::Full(stamp))
            .expect("the refund is stored");
    }
}

/// The flat table of the baseline: one row per jurisdiction entry of a line (and of a
/// refund's line), its time, region, code, gross in cents and tax due in ten-thousandths
/// of a cent (exact integers).
pub const FLAT_TABLE: &str = "CREATE TABLE entries (
    processed_at BIGINT NOT NULL, region TEXT NOT NULL, code TEXT NOT NULL,
    gross BIGINT NOT NULL, tax BIGINT NOT NULL)";

/// The baseline's query: the year's gross and tax per region and jurisdiction.
pub const GROUP_BY: &str = "SELECT region, code, sum(gross), sum(tax) FROM entries
    WHERE processed_at >= $1 AND processed_at < $2 GROUP BY region, code";

/// The flat rows of the ledger [`fill`] makes: `(processed_at, region, code, gross,
/// tax)`.
pub fn flat_rows(n: u64) -> impl Iterator<Item = (i64, &'static str, &'static str, i64, i64)> {
    (0..n).flat_map(move |i| {
        let t = transaction(i, n);
        let refunded = i % 100 == 0;
        let region: &'static str = match t.region.as_str() {
            "TN" => "TN",
            "CA" => "CA",
            _ => "KY",
        };
        let mut rows = Vec::new();
        for line in &t.lines {
            let gross = i64::try_from(line.amount_excluding_tax.mantissa()).unwrap_or(0);
            for (e, &(code, _, _)) in line.jurisdictions.iter().zip(jurisdictions(region)) {
                let tax = i64::try_from((e.tax_due * Decimal::from(10_000)).trunc().mantissa())
                    .unwrap_or(0);
                rows.push((t.processed_at, region, code, gross, tax));
                if refunded {
                    rows.push((t.processed_at + 7 * 86_400, region, code, -gross, -tax));
                }
            }
        }
        rows
    })
}

/// An SQLite database holding the flat rows of a ledger of `n` sales.
pub fn flat_sqlite(n: u64) -> rusqlite::Connection {
    let mut db = rusqlite::Connection::open_in_memory().expect("an in-memory database");
    db.execute_batch(FLAT_TABLE).expect("the flat table");
    let tx = db.transaction().expect("a transaction");
    {
        let mut insert = tx
            .prepare("INSERT INTO entries VALUES (?1, ?2, ?3, ?4, ?5)")
            .expect("the insert");
        for (at, region, code, gross, tax) in flat_rows(n) {
            insert
                .execute(rusqlite::params![at, region, code, gross, tax])
                .expect("a flat row");
        }
    }
    tx.commit().expect("the rows are stored");
    db
}

/// The baseline on SQLite: the year's `GROUP BY`, as `(region, code, gross, tax)`.
pub fn group_by_sqlite(db: &rusqlite::Connection) -> Vec<(String, String, i64, i64)> {
    let sql = GROUP_BY.replace('$', "?");
    let mut stmt = db.prepare_cached(&sql).expect("the query");
    stmt.query_map(rusqlite::params![YEAR_START, YEAR_START + YEAR], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })
    .expect("the rows")
    .map(|r| r.expect("a row"))
    .collect()
}
