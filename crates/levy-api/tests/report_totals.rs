//! The daily liability totals against the records, as a property: whatever sales,
//! refunds, reversals and deletions a ledger is given, on whatever days and in whatever
//! order, a report of whole days summed from the totals is the report recounted from the
//! records ([`Store::liability_recount`]), for every period and state. On SQLite, and on
//! PostgreSQL (a database a case) under `LEVY_TEST_LEDGER=postgres`.

use levy_api::store::liability::Period;
use levy_api::store::{
    self, JurisdictionRecord, LineRecord, PartialRefundLine, PlatformTransactionInfo, RefundAsk,
    RefundStamp, Scope, Store, TransactionRecord,
};
use levy_core::Decimal;
use proptest::prelude::*;

/// 2026-03-01T00:00:00Z.
const MARCH_1: i64 = 1_772_323_200;
const DAY: i64 = 86_400;

/// What happens to the ledger, in order.
#[derive(Clone, Debug)]
enum Op {
    /// A sale at second `at` (from March 1) in state `state` (0: TN, 1: KY) of `cents`,
    /// exempt by certificate or not, through merchant `merchant` of the platform or not.
    Sale {
        at: i64,
        state: usize,
        cents: i64,
        exempt: bool,
        merchant: Option<u8>,
    },
    /// Sales of Tennessee and Kentucky stored in one batch (as a till's sync stores them),
    /// `gap` seconds apart from second `at`.
    Batch { at: i64, gap: i64, cents: Vec<i64> },
    /// A refund of the `tx`-th sale (mod their number), `after` seconds after it: all of
    /// it, or half of what the line had.
    Refund { tx: usize, after: i64, full: bool },
    /// A reversal of the `refund`-th refund, `after` seconds after it.
    Reverse { refund: usize, after: i64 },
    /// The deletion of the `tx`-th sale, `after` seconds after it.
    Delete { tx: usize, after: i64 },
}

fn op() -> impl Strategy<Value = Op> {
    let span = 40 * DAY;
    prop_oneof![
        3 => (0..span, 0..2usize, 0..200_000i64, any::<bool>(), proptest::option::of(0..3u8))
            .prop_map(|(at, state, cents, exempt, merchant)| Op::Sale { at, state, cents, exempt, merchant }),
        1 => (0..span, 0..DAY, proptest::collection::vec(0..50_000i64, 1..6))
            .prop_map(|(at, gap, cents)| Op::Batch { at, gap, cents }),
        2 => (any::<usize>(), 0..10 * DAY, any::<bool>())
            .prop_map(|(tx, after, full)| Op::Refund { tx, after, full }),
        1 => (any::<usize>(), 0..10 * DAY).prop_map(|(refund, after)| Op::Reverse { refund, after }),
        1 => (any::<usize>(), 0..10 * DAY).prop_map(|(tx, after)| Op::Delete { tx, after }),
    ]
}

fn entry(code: &str, rate: Decimal, due: Decimal, note: &str) -> JurisdictionRecord {
    JurisdictionRecord {
        tax_rate: rate,
        tax_due: due,
        fee: Decimal::ZERO,
        rate_type: "GENERAL SALES TAX".into(),
        jurisdiction_name: code.into(),
        jurisdiction_code: code.into(),
        authority_name: code.into(),
        authority_type: if code.len() == 2 { "STATE" } else { "COUNTY" }.into(),
        tax_type: "SALES".into(),
        note: note.into(),
        rule_id: 1,
        exemption_certificate_id: None,
        taxable_base: None,
    }
}

/// A one-line sale: Tennessee 7% + Davidson 2.25%, or Kentucky 6%, each entry's tax
/// unrounded and the line's rounded half up.
fn sale(
    id: &str,
    at: i64,
    state: usize,
    cents: i64,
    exempt: bool,
    merchant: Option<u8>,
) -> TransactionRecord {
    let amount = Decimal::from(cents);
    let rates: &[(&str, Decimal)] = if state == 0 {
        &[("47", Decimal::new(7, 2)), ("47037", Decimal::new(225, 4))]
    } else {
        &[("21", Decimal::new(6, 2))]
    };
    let note = if exempt {
        "EXEMPTION_CERTIFICATE"
    } else {
        "RATE_FRAC"
    };
    let entries: Vec<JurisdictionRecord> = rates
        .iter()
        .map(|(code, rate)| {
            let due = if exempt { Decimal::ZERO } else { amount * rate };
            entry(code, *rate, due, note)
        })
        .collect();
    let tax: Decimal = entries.iter().map(|e| e.tax_due).sum::<Decimal>().round();
    TransactionRecord {
        id: id.into(),
        calculation_id: format!("calc_{id}"),
        reference_order_id: format!("order_{id}"),
        processed_at: MARCH_1 + at,
        created_at: MARCH_1 + at,
        currency: "USD".into(),
        tax_included: false,
        country: "US".into(),
        region: if state == 0 { "TN" } else { "KY" }.into(),
        lines: vec![LineRecord {
            line_item_id: format!("li_{id}"),
            reference_product_id: None,
            reference_product_name: None,
            reference_line_item_id: None,
            product_tax_code: "GENERAL_MERCHANDISE".into(),
            quantity: 1,
            amount_excluding_tax: amount,
            tax_amount: tax,
            amount_including_tax: amount + tax,
            jurisdictions: entries,
        }],
        metadata: None,
        deleted_at: None,
        platform: merchant.map(|m| PlatformTransactionInfo {
            kind: "order".into(),
            reference_payment_id: None,
            merchant_id: format!("merch_{m}"),
        }),
        table_hash: Some(format!("{:064}", state + 1)),
        replaced_by: None,
    }
}

/// Runs `ops` on `st`; refusals (a refund of more than remains, a second reversal, a
/// deleted sale refunded) are the ledger's answers, and are skipped.
fn run(st: &dyn Store, s: &Scope, ops: &[Op]) {
    let mut sales: Vec<TransactionRecord> = Vec::new();
    let mut refunds: Vec<(String, i64)> = Vec::new();
    for (n, op) in ops.iter().enumerate() {
        match op {
            Op::Sale {
                at,
                state,
                cents,
                exempt,
                merchant,
            } => {
                let t = sale(&format!("tr_{n}"), *at, *state, *cents, *exempt, *merchant);
                st.insert_transaction(s, t.clone()).unwrap();
                sales.push(t);
            }
            Op::Batch { at, gap, cents } => {
                let batch: Vec<TransactionRecord> = cents
                    .iter()
                    .enumerate()
                    .map(|(i, c)| {
                        let when = at + gap * i as i64;
                        sale(&format!("tr_{n}_{i}"), when, i % 2, *c, false, None)
                    })
                    .collect();
                st.insert_transactions(s, batch.clone()).unwrap();
                sales.extend(batch);
            }
            Op::Refund { tx, after, full } if !sales.is_empty() => {
                let t = &sales[tx % sales.len()];
                let at = t.processed_at + after;
                let stamp = RefundStamp {
                    id: format!("ref_{n}"),
                    processed_at: at,
                    created_at: at,
                };
                let line = &t.lines[0];
                let ask = if *full {
                    RefundAsk::Full(stamp)
                } else {
                    let half = |d: Decimal| -(d / Decimal::TWO).round();
                    RefundAsk::Partial(
                        stamp,
                        vec![PartialRefundLine {
                            product: None,
                            line_id: Some(line.line_item_id.clone()),
                            quantity: None,
                            sales: half(line.amount_excluding_tax),
                            tax: half(line.tax_amount),
                        }],
                    )
                };
                if st.insert_refund(s, &t.id, ask).is_ok() {
                    refunds.push((format!("ref_{n}"), at));
                }
            }
            Op::Reverse { refund, after } if !refunds.is_empty() => {
                let (id, at) = &refunds[refund % refunds.len()];
                let _ = st.reverse_refund(s, id, at + after);
            }
            Op::Delete { tx, after } if !sales.is_empty() => {
                let t = &sales[tx % sales.len()];
                let _ = st.delete_transaction(s, &t.id, t.processed_at + after);
            }
            _ => {}
        }
    }
}

/// Cases: fewer on PostgreSQL, where each makes a database.
fn cases() -> u32 {
    if levy_testkit::postgres::wanted() {
        24
    } else {
        96
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn a_report_of_the_daily_totals_is_the_recount_of_the_records(
        ops in proptest::collection::vec(op(), 1..40),
        windows in proptest::collection::vec((0..52i64, 1..30i64, 0..3usize), 1..8),
    ) {
        let st = store::open(&levy_testkit::postgres::ledger_or(":memory:")).unwrap();
        let s = Scope { account: "acct_prop".into(), live: true };
        run(st.as_ref(), &s, &ops);
        for (first, days, region) in windows {
            let period = Period {
                from: MARCH_1 + first * DAY,
                to: MARCH_1 + (first + days) * DAY,
                region: [None, Some("TN".to_string()), Some("KY".to_string())][region].clone(),
            };
            let recount = st.liability_recount(&s, &period).unwrap();
            prop_assert_eq!(st.liability(&s, &period).unwrap(), recount, "{:?}", period);
        }
    }
}
