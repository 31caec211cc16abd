//! Liability reports: a month of sales across three states, with refunds booked the next
//! month, reported as worked out by hand. Run on the SQLite ledger, and on PostgreSQL
//! under `LEVY_TEST_LEDGER=postgres`.
//!
//! The records are written here, line by line, the way the calculations of each state
//! write them (their entries' rates are the states' published rates: Tennessee 7% with
//! Davidson County's 2.25% and food at 4%; California 6% state, 1.25% uniform local
//! (Los Angeles County) and a 2.5% district; Kentucky 6% state only, a Streamlined member
//! with no local sales tax), so that every figure below can be worked from them by hand.

mod common;
use common::*;
use levy_api::store::liability::{Amounts, Liability, Period, StateTotal};
use levy_api::store::{
    self, JurisdictionRecord, LineRecord, PartialRefundLine, PlatformTransactionInfo, RefundAsk,
    RefundStamp, Scope, Store, TransactionRecord, Write,
};
use levy_core::Decimal;
use serde_json::Value;

/// 2026-02-20T00:00:00Z.
const FEB_20: i64 = 1_771_545_600;
/// 2026-03-01T00:00:00Z.
const MARCH_1: i64 = 1_772_323_200;
/// 2026-04-01T00:00:00Z.
const APRIL_1: i64 = 1_775_001_600;
const DAY: i64 = 86_400;
/// The table that calculated the March sales of Tennessee (and April's).
const H1: &str = "1111111111111111111111111111111111111111111111111111111111111111";
/// The table that calculated the sales of California and Kentucky.
const H2: &str = "2222222222222222222222222222222222222222222222222222222222222222";

fn d(s: &str) -> Decimal {
    s.parse().unwrap()
}

/// An entry of a line: `(code, name, authority type, rate, tax due, note)`.
fn entry(
    code: &str,
    name: &str,
    kind: &str,
    rate: &str,
    due: &str,
    note: &str,
) -> JurisdictionRecord {
    JurisdictionRecord {
        tax_rate: d(rate),
        tax_due: d(due),
        fee: Decimal::ZERO,
        rate_type: "GENERAL SALES TAX".into(),
        jurisdiction_name: name.into(),
        jurisdiction_code: code.into(),
        authority_name: format!("{name} AUTHORITY"),
        authority_type: kind.into(),
        tax_type: "SALES".into(),
        note: note.into(),
        rule_id: 1,
        exemption_certificate_id: None,
        taxable_base: None,
    }
}

fn line(id: &str, sales: &str, tax: &str, entries: Vec<JurisdictionRecord>) -> LineRecord {
    LineRecord {
        line_item_id: id.into(),
        reference_product_id: None,
        reference_product_name: None,
        reference_line_item_id: None,
        product_tax_code: "GENERAL_MERCHANDISE".into(),
        quantity: 1,
        amount_excluding_tax: d(sales),
        tax_amount: d(tax),
        amount_including_tax: d(sales) + d(tax),
        jurisdictions: entries,
    }
}

fn tx(id: &str, at: i64, region: &str, hash: &str, lines: Vec<LineRecord>) -> TransactionRecord {
    TransactionRecord {
        id: id.into(),
        calculation_id: format!("calc_{id}"),
        reference_order_id: format!("order_{id}"),
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
        table_hash: Some(hash.into()),
        replaced_by: None,
    }
}

/// Tennessee's two entries on a general merchandise line: 7% and 2.25%.
fn tn(state: &str, county: &str, note: &str) -> Vec<JurisdictionRecord> {
    vec![
        entry("47", "TENNESSEE", "STATE", "0.07", state, note),
        entry("47037", "DAVIDSON", "COUNTY", "0.0225", county, note),
    ]
}

/// California's three entries: 6% state, 1.25% uniform local, 2.5% district.
fn ca(rates: [&str; 3], dues: [&str; 3]) -> Vec<JurisdictionRecord> {
    vec![
        entry("06", "CALIFORNIA", "STATE", rates[0], dues[0], "RATE_FRAC"),
        entry(
            "06037",
            "LOS ANGELES",
            "COUNTY",
            rates[1],
            dues[1],
            "RATE_FRAC",
        ),
        entry(
            "06:CDTFA:CITY:LOS ANGELES",
            "LOS ANGELES",
            "DISTRICT",
            rates[2],
            dues[2],
            "RATE_FRAC",
        ),
    ]
}

fn ky(due: &str) -> Vec<JurisdictionRecord> {
    vec![entry("21", "KENTUCKY", "STATE", "0.06", due, "RATE_FRAC")]
}

fn stamp(id: &str, at: i64) -> RefundStamp {
    RefundStamp {
        id: id.into(),
        processed_at: at,
        created_at: at,
    }
}

/// The ledger of the worked month, in live mode of an account of its own.
fn ledger() -> (Box<dyn Store>, Scope) {
    ledger_at(&levy_testkit::postgres::ledger_or(":memory:"))
}

/// The ledger of the worked month at `path` (an SQLite file, or a PostgreSQL URL).
fn ledger_at(path: &str) -> (Box<dyn Store>, Scope) {
    let store = store::open(path).unwrap();
    let scope = Scope {
        account: "acct_reports".into(),
        live: true,
    };
    let s = &scope;
    let st = &store;
    let add = |t: TransactionRecord| st.insert_transaction(s, t).unwrap();
    // February: $60.00 in Nashville, 420 + 135 = 555; refunded in full on March 3.
    add(tx(
        "tr_t8",
        FEB_20,
        "TN",
        H1,
        vec![line("li_t8", "6000", "555", tn("420", "135", "RATE_FRAC"))],
    ));
    // T1, March 5: $100.00 in Nashville: 700 + 225 = 925.
    add(tx(
        "tr_t1",
        MARCH_1 + 4 * DAY,
        "TN",
        H1,
        vec![line("li_t1", "10000", "925", tn("700", "225", "RATE_FRAC"))],
    ));
    // T2, March 10: $33.33: 233.31 + 74.9925 = 308.3025, the line rounded to 308; and
    // $50.00 of food at 4% + 2.25%: 200 + 112.5 = 312.5, rounded half up to 313.
    let mut food = tn("200", "112.5", "RATE_FRAC");
    food[0].tax_rate = d("0.04");
    add(tx(
        "tr_t2",
        MARCH_1 + 9 * DAY,
        "TN",
        H1,
        vec![
            line(
                "li_t2a",
                "3333",
                "308",
                tn("233.31", "74.9925", "RATE_FRAC"),
            ),
            line("li_t2b", "5000", "313", food),
        ],
    ));
    // T3, March 12: $200.00 to a buyer with an exemption certificate: nothing due.
    add(tx(
        "tr_t3",
        MARCH_1 + 11 * DAY,
        "TN",
        H1,
        vec![line(
            "li_t3",
            "20000",
            "0",
            tn("0", "0", "EXEMPTION_CERTIFICATE"),
        )],
    ));
    // T7, March 20: $500.00, deleted on March 21: void, in no report.
    add(tx(
        "tr_t7",
        MARCH_1 + 19 * DAY,
        "TN",
        H1,
        vec![line(
            "li_t7",
            "50000",
            "4625",
            tn("3500", "1125", "RATE_FRAC"),
        )],
    ));
    st.delete_transaction(s, "tr_t7", MARCH_1 + 20 * DAY)
        .unwrap();
    // T4, March 15, Los Angeles: $80.00 at 9.75%: 480 + 100 + 200 = 780.
    add(tx(
        "tr_t4",
        MARCH_1 + 14 * DAY,
        "CA",
        H2,
        vec![line(
            "li_t4",
            "8000",
            "780",
            ca(["0.06", "0.0125", "0.025"], ["480", "100", "200"]),
        )],
    ));
    // T5, March 20: $40.00 of groceries (rate 0 everywhere: exempt for the product) and
    // $19.99 at 9.75%: 119.94 + 24.9875 + 49.975 = 194.9025, rounded to 195.
    add(tx(
        "tr_t5",
        MARCH_1 + 19 * DAY,
        "CA",
        H2,
        vec![
            line("li_t5a", "4000", "0", ca(["0", "0", "0"], ["0", "0", "0"])),
            line(
                "li_t5b",
                "1999",
                "195",
                ca(["0.06", "0.0125", "0.025"], ["119.94", "24.9875", "49.975"]),
            ),
        ],
    ));
    // T6, March 8, Kentucky: $25.00 at 6% = 150, and $12.49 at 6% = 74.94, rounded to 75.
    add(tx(
        "tr_t6",
        MARCH_1 + 7 * DAY,
        "KY",
        H2,
        vec![
            line("li_t6a", "2500", "150", ky("150")),
            line("li_t6b", "1249", "75", ky("74.94")),
        ],
    ));
    // T9, April 10: $10.00 in Nashville: 70 + 22.5 = 92.5, rounded to 93.
    add(tx(
        "tr_t9",
        APRIL_1 + 9 * DAY,
        "TN",
        H1,
        vec![line("li_t9", "1000", "93", tn("70", "22.5", "RATE_FRAC"))],
    ));

    // Refunds. March 3: all of T8 (-6000; -420 and -135).
    st.insert_refund(
        s,
        "tr_t8",
        RefundAsk::Full(stamp("ref_tr_r8", MARCH_1 + 2 * DAY)),
    )
    .unwrap();
    // March 28: T6's first line (-2500, -150); reversed on April 2.
    let partial = |line_id: &str, sales: &str, tax: &str| PartialRefundLine {
        product: None,
        line_id: Some(line_id.into()),
        quantity: None,
        sales: d(sales),
        tax: d(tax),
    };
    st.insert_refund(
        s,
        "tr_t6",
        RefundAsk::Partial(
            stamp("ref_tr_r3", MARCH_1 + 27 * DAY),
            vec![partial("li_t6a", "-2500", "-150")],
        ),
    )
    .unwrap();
    st.reverse_refund(s, "ref_tr_r3", APRIL_1 + DAY).unwrap();
    // April 5: $40.00 of T1 with 370 of its tax: each entry's share of the line's tax,
    // 700 x 370/925 = 280 and 225 x 370/925 = 90.
    st.insert_refund(
        s,
        "tr_t1",
        RefundAsk::Partial(
            stamp("ref_tr_r1", APRIL_1 + 4 * DAY),
            vec![partial("li_t1", "-4000", "-370")],
        ),
    )
    .unwrap();
    // April 6: all of T4 (-8000; -480, -100, -200).
    st.insert_refund(
        s,
        "tr_t4",
        RefundAsk::Full(stamp("ref_tr_r2", APRIL_1 + 5 * DAY)),
    )
    .unwrap();
    // Another account's and the test mode's sales are never in the report.
    let other = Scope {
        account: "acct_other".into(),
        live: true,
    };
    st.insert_transaction(
        &other,
        tx(
            "tr_x1",
            MARCH_1 + DAY,
            "TN",
            H1,
            vec![line("li_x1", "10000", "925", tn("700", "225", "RATE_FRAC"))],
        ),
    )
    .unwrap();
    let test_mode = Scope {
        account: "acct_reports".into(),
        live: false,
    };
    st.insert_transaction(
        &test_mode,
        tx(
            "tr_x2",
            MARCH_1 + DAY,
            "TN",
            H1,
            vec![line("li_x2", "10000", "925", tn("700", "225", "RATE_FRAC"))],
        ),
    )
    .unwrap();
    (store, scope)
}

fn march(region: Option<&str>) -> Period {
    levy_api::liability_period("2026-03-01", "2026-03-31", region).unwrap()
}

fn april() -> Period {
    levy_api::liability_period("2026-04-01", "2026-04-30", None).unwrap()
}

fn row_of<'a>(r: &'a Liability, region: &str, code: &str) -> &'a levy_api::store::liability::Row {
    let found: Vec<_> = r
        .rows
        .iter()
        .filter(|(k, _)| k.region == region && k.jurisdiction_code == code)
        .collect();
    assert_eq!(
        found.len(),
        1,
        "one row of {region} {code}: {:?}",
        r.rows.keys()
    );
    found[0].1
}

/// Amounts with the given gross, exemptions `(customer, product)`, taxable and tax.
fn amounts(gross: &str, exempt: (&str, &str), taxable: &str, tax: &str) -> Amounts {
    Amounts {
        gross: d(gross),
        exempt_customer: d(exempt.0),
        exempt_product: d(exempt.1),
        exempt_holiday: Decimal::ZERO,
        not_collected: Decimal::ZERO,
        taxable: d(taxable),
        tax: d(tax),
        fees: Decimal::ZERO,
    }
}

fn state_of<'a>(r: &'a Liability, region: &str) -> &'a StateTotal {
    &r.states[&("US".to_string(), region.to_string())]
}

#[test]
fn march_is_reported_as_worked_by_hand() {
    let (store, scope) = ledger();
    let r = store.liability(&scope, &march(None)).unwrap();
    assert_eq!(r.rows.len(), 6, "{:?}", r.rows.keys());

    // Tennessee 47: T1 10000, T2 3333 + 5000, T3 20000 (certificate) = 38333 gross, 18333
    // taxable; tax 700 + 233.31 + 200 = 1133.31. T8's refund on March 3: -6000, -420.
    let tn_state = row_of(&r, "TN", "47");
    assert_eq!(
        tn_state.sales,
        amounts("38333", ("20000", "0"), "18333", "1133.31")
    );
    assert_eq!(
        tn_state.refunds,
        amounts("-6000", ("0", "0"), "-6000", "-420")
    );
    assert_eq!(
        tn_state.net(),
        amounts("32333", ("20000", "0"), "12333", "713.31")
    );
    // Davidson 47037: tax 225 + 74.9925 + 112.5 = 412.4925; refund -135.
    let davidson = row_of(&r, "TN", "47037");
    assert_eq!(
        davidson.sales,
        amounts("38333", ("20000", "0"), "18333", "412.4925")
    );
    assert_eq!(davidson.net().tax, d("277.4925"));
    // Reconciled: lines' tax 925 + 308 + 313 + 0 - 555 = 991; entries 1133.31 + 412.4925
    // - 420 - 135 = 990.8025; the lines' rounding (308 - 308.3025) + (313 - 312.5) = 0.1975.
    let tn_total = state_of(&r, "TN");
    assert_eq!(
        (tn_total.transactions, tn_total.refunds, tn_total.reversals),
        (3, 1, 0)
    );
    assert_eq!(tn_total.sales, d("32333"));
    assert_eq!(tn_total.collected, d("991"));
    assert_eq!(tn_total.tax_due, d("990.8025"));
    assert_eq!(tn_total.rounding, d("0.1975"));

    // California: 8000 + 4000 (groceries, rate 0) + 1999 = 13999 gross, 9999 taxable.
    let ca_state = row_of(&r, "CA", "06");
    assert_eq!(
        ca_state.sales,
        amounts("13999", ("0", "4000"), "9999", "599.94")
    );
    assert_eq!(ca_state.refunds, Amounts::default());
    assert_eq!(row_of(&r, "CA", "06037").sales.tax, d("124.9875"));
    let district = row_of(&r, "CA", "06:CDTFA:CITY:LOS ANGELES");
    assert_eq!(
        district.sales,
        amounts("13999", ("0", "4000"), "9999", "249.975")
    );
    // 780 + 0 + 195 = 975 collected; 974.9025 due; 195 - 194.9025 = 0.0975.
    let ca_total = state_of(&r, "CA");
    assert_eq!(
        (ca_total.collected, ca_total.tax_due, ca_total.rounding),
        (d("975"), d("974.9025"), d("0.0975"))
    );

    // Kentucky: 2500 + 1249 at 6% = 150 + 74.94; refunded March 28: -2500, -150.
    let kentucky = row_of(&r, "KY", "21");
    assert_eq!(
        kentucky.sales,
        amounts("3749", ("0", "0"), "3749", "224.94")
    );
    assert_eq!(
        kentucky.refunds,
        amounts("-2500", ("0", "0"), "-2500", "-150")
    );
    let ky_total = state_of(&r, "KY");
    assert_eq!(
        (ky_total.refunds, ky_total.collected, ky_total.rounding),
        (1, d("75"), d("0.06"))
    );

    // Every state's collected tax is the ledger's: the sum of the lines' tax_amount.
    let collected: Decimal = r.states.values().map(|s| s.collected).sum();
    assert_eq!(collected, d("2041"), "991 + 975 + 75");
    let hashes: Vec<(&str, u64)> = r
        .table_hashes
        .iter()
        .map(|(h, n)| (h.as_str(), *n))
        .collect();
    assert_eq!(hashes, vec![(H1, 3), (H2, 3)]);
}

#[test]
fn the_refunds_booked_in_april_are_aprils() {
    let (store, scope) = ledger();
    let r = store.liability(&scope, &april()).unwrap();
    // Tennessee: T9 1000 (70 + 22.5); T1's refund -4000 (-280, -90).
    let tn_state = row_of(&r, "TN", "47");
    assert_eq!(tn_state.sales, amounts("1000", ("0", "0"), "1000", "70"));
    assert_eq!(
        tn_state.refunds,
        amounts("-4000", ("0", "0"), "-4000", "-280")
    );
    assert_eq!(row_of(&r, "TN", "47037").net().tax, d("-67.5"));
    let tn_total = state_of(&r, "TN");
    // 93 - 370 = -277 collected; 92.5 - 370 = -277.5 due; 0.5 of rounding.
    assert_eq!(
        (tn_total.collected, tn_total.tax_due, tn_total.rounding),
        (d("-277"), d("-277.5"), d("0.5"))
    );
    // California: all of T4 back.
    let district = row_of(&r, "CA", "06:CDTFA:CITY:LOS ANGELES");
    assert_eq!(
        district.refunds,
        amounts("-8000", ("0", "0"), "-8000", "-200")
    );
    assert_eq!(state_of(&r, "CA").collected, d("-780"));
    // Kentucky: the March 28 refund reversed on April 2 gives back 2500 and 150.
    let kentucky = row_of(&r, "KY", "21");
    assert_eq!(kentucky.refunds, amounts("2500", ("0", "0"), "2500", "150"));
    let ky_total = state_of(&r, "KY");
    assert_eq!(
        (
            ky_total.reversals,
            ky_total.transactions,
            ky_total.collected
        ),
        (1, 0, d("150"))
    );
    let hashes: Vec<(&str, u64)> = r
        .table_hashes
        .iter()
        .map(|(h, n)| (h.as_str(), *n))
        .collect();
    assert_eq!(hashes, vec![(H1, 1)]);
}

#[test]
fn a_state_asked_for_is_reported_alone() {
    let (store, scope) = ledger();
    let r = store.liability(&scope, &march(Some("tn"))).unwrap();
    assert!(r.rows.keys().all(|k| k.region == "TN"));
    assert_eq!(r.rows.len(), 2);
    assert_eq!(r.states.len(), 1);
    assert_eq!(state_of(&r, "TN").collected, d("991"));
    // A month without sales is empty, not an error.
    let empty = store
        .liability(
            &scope,
            &levy_api::liability_period("2025-01-01", "2025-01-31", None).unwrap(),
        )
        .unwrap();
    assert_eq!(empty, Liability::default());
}

#[test]
fn a_platform_sale_is_reported_per_merchant_as_its_outlet() {
    let (store, scope) = ledger();
    let mut sale = tx(
        "tr_p1",
        MARCH_1 + DAY,
        "TX",
        H1,
        vec![line(
            "li_p1",
            "10000",
            "825",
            vec![
                entry("48", "TEXAS", "STATE", "0.0625", "625", "RATE_FRAC"),
                entry("48453", "TRAVIS", "COUNTY", "0.02", "200", "RATE_FRAC"),
            ],
        )],
    );
    sale.platform = Some(PlatformTransactionInfo {
        kind: "order".into(),
        reference_payment_id: None,
        merchant_id: "merch_austin".into(),
    });
    store.insert_transaction(&scope, sale).unwrap();
    let r = store.liability(&scope, &march(Some("TX"))).unwrap();
    let keys: Vec<(&str, &str)> = r
        .rows
        .keys()
        .map(|k| (k.jurisdiction_code.as_str(), k.outlet.as_str()))
        .collect();
    assert_eq!(
        keys,
        vec![("48", "merch_austin"), ("48453", "merch_austin")]
    );
    // Texas's worksheet: the state line first, then the local one; total sales, taxable
    // sales and tax per outlet.
    let csv = levy_api::liability_csv(&r, levy_api::Layout::Texas);
    assert_eq!(
        csv,
        "outlet,local_code,jurisdiction_name,total_sales,taxable_sales,tax\n\
         merch_austin,48,TEXAS,10000,10000,625\n\
         merch_austin,48453,TRAVIS,10000,10000,200\n"
    );
}

#[test]
fn the_state_layouts_hold_the_worked_figures() {
    let (store, scope) = ledger();
    let ca = store.liability(&scope, &march(Some("CA"))).unwrap();
    assert_eq!(
        levy_api::liability_csv(&ca, levy_api::Layout::of(Some("CA"))),
        "authority_type,district_code,district_name,total_sales,taxable_sales,tax\n\
         STATE,06,CALIFORNIA,13999,9999,599.94\n\
         COUNTY,06037,LOS ANGELES,13999,9999,124.9875\n\
         DISTRICT,06:CDTFA:CITY:LOS ANGELES,LOS ANGELES,13999,9999,249.975\n"
    );
    let ky = store.liability(&scope, &march(Some("KY"))).unwrap();
    // Kentucky, a Streamlined member: 3749 - 2500 = 1249 gross, no deductions.
    assert_eq!(
        levy_api::liability_csv(&ky, levy_api::Layout::of(Some("KY"))),
        "state,jurisdiction_type,jurisdiction_fips_code,gross_sales,deductions,taxable_sales,tax\n\
         KY,STATE,21,1249,0,1249,74.94\n"
    );
}

/// Text that reaches the CSV from a record (a synced till's record carries any
/// jurisdiction name, code, authority type or outlet its sender wrote) is written so that
/// a spreadsheet never evaluates it (OWASP, "CSV Injection": a cell beginning with `=`,
/// `+`, `-`, `@`, a tab or a carriage return gets a single quote before it), while the
/// amounts, negative ones included, stay numbers.
#[test]
fn a_csv_cell_that_a_spreadsheet_would_evaluate_is_written_as_text() {
    let (store, scope) = ledger();
    let mut sale = tx(
        "tr_formula",
        MARCH_1 + DAY,
        "TX",
        H1,
        vec![line(
            "li_f1",
            "10000",
            "825",
            vec![
                entry(
                    "48",
                    "=HYPERLINK(\"http://x.example/\",\"click\")",
                    "STATE",
                    "0.0625",
                    "625",
                    "RATE_FRAC",
                ),
                entry("+48453", "-2+3", "@SUM(A1)", "0.01", "100", "RATE_FRAC"),
                entry("48201", "\tTAB", "\rCR", "0.01", "100", "RATE_FRAC"),
            ],
        )],
    );
    sale.platform = Some(PlatformTransactionInfo {
        kind: "order".into(),
        reference_payment_id: None,
        merchant_id: "=cmd|' /C calc'!A0".into(),
    });
    store.insert_transaction(&scope, sale).unwrap();
    let r = store.liability(&scope, &march(Some("TX"))).unwrap();
    // Texas's worksheet: outlet, local code, name, total, taxable, tax; the state's line
    // first, then by code (`+48453` sorts before `48201`).
    assert_eq!(
        levy_api::liability_csv(&r, levy_api::Layout::Texas),
        "outlet,local_code,jurisdiction_name,total_sales,taxable_sales,tax\n\
         '=cmd|' /C calc'!A0,48,\"'=HYPERLINK(\"\"http://x.example/\"\",\"\"click\"\")\",10000,10000,625\n\
         '=cmd|' /C calc'!A0,'+48453,'-2+3,10000,10000,100\n\
         '=cmd|' /C calc'!A0,48201,'\tTAB,10000,10000,100\n"
    );
    // Every row: the authority types are cells too; a carriage return is quoted as well.
    let rows = levy_api::liability_csv(&r, levy_api::Layout::Rows);
    assert!(rows.contains(",'@SUM(A1),"), "{rows}");
    assert!(rows.contains(",\"'\rCR\","), "{rows}");
    // The worked month's refunds are negative amounts, written as numbers: Tennessee's
    // state line holds T8's refund of February's $60.00 on March 3 (-6000 sales, -420 tax).
    let all = store.liability(&scope, &march(None)).unwrap();
    let text = levy_api::liability_csv(&all, levy_api::Layout::Rows);
    let tn = text
        .lines()
        .find(|l| l.starts_with("US,TN,47,"))
        .expect("Tennessee's state line");
    assert!(tn.contains(",-6000,") && tn.contains(",-420,"), "{tn}");
    assert!(!tn.contains('\''), "{tn}");
}

/// `GET /tax/reports/liability` over a service: a sale made and refunded through the
/// interface (the fixture's Nashville, 7% + 2.25%), as JSON and as CSV.
#[test]
fn the_interface_answers_the_report() {
    let svc = service();
    let (s, c) = post(
        &svc,
        "/tax/calculations",
        LIVE_KEY,
        None,
        &calc_body("10000", "GENERAL_MERCHANDISE"),
    );
    assert_eq!(s, 200, "{c}");
    let t = serde_json::json!({"calculation_id": c["id"], "reference_order_id": "o-1",
                               "transaction_processed_at": MARCH_1 + DAY});
    let (s, t) = post(&svc, "/tax/transactions", LIVE_KEY, None, &t.to_string());
    assert_eq!(s, 200, "{t}");
    let path = "/tax/reports/liability?from=2026-03-01&to=2026-03-31";
    let (s, r) = get(&svc, path, LIVE_KEY, None);
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["object"], "tax.liability_report");
    assert_eq!(
        (r["from"].as_str(), r["to"].as_str()),
        (Some("2026-03-01"), Some("2026-03-31"))
    );
    let rows = r["jurisdictions"].as_array().unwrap();
    let taxes: Vec<(String, Value)> = rows
        .iter()
        .map(|j| {
            (
                j["jurisdiction_code"].as_str().unwrap().to_string(),
                j["net"]["tax"].clone(),
            )
        })
        .collect();
    // 10000 at 7% and 2.25%.
    assert_eq!(
        taxes,
        vec![
            ("47".into(), serde_json::json!(700)),
            ("47037".into(), serde_json::json!(225))
        ]
    );
    assert_eq!(r["states"][0]["collected"], 925);
    // The test mode's report is its own, and empty.
    let (s, r) = get(&svc, path, TEST_KEY, None);
    assert_eq!(
        (s, r["jurisdictions"].as_array().map(Vec::len)),
        (200, Some(0))
    );
    // Bad queries answer the interface's errors.
    for (bad, kind) in [
        ("from=2026-03-01", "INVALID_QUERY_PARAMETER"),
        ("from=2026-3-1&to=2026-03-31", "INVALID_QUERY_PARAMETER"),
        ("from=2026-02-30&to=2026-03-31", "INVALID_QUERY_PARAMETER"),
        ("from=2026-03-31&to=2026-03-01", "INVALID_QUERY_PARAMETER"),
        (
            "from=2026-03-01&to=2026-03-31&format=pdf",
            "INVALID_QUERY_PARAMETER",
        ),
        ("from=2026-03-01&to=2026-03-31&region=ZZ", "INVALID_REGION"),
        (
            "from=2026-03-01&to=2026-03-31&colour=red",
            "UNRECOGNIZED_FIELD",
        ),
    ] {
        let path = format!("/tax/reports/liability?{bad}");
        let (s, e) = get(&svc, &path, LIVE_KEY, Some("2026-03-01"));
        assert_eq!(s, 400, "{bad}: {e}");
        assert_eq!(flat_type(&e, 400), kind, "{bad}: {e}");
    }
    // CSV: Tennessee, not a Streamlined full member, is written as rows.
    let resp = svc.handle(&levy_api::Request {
        method: "GET".into(),
        path: "/tax/reports/liability".into(),
        query: "from=2026-03-01&to=2026-03-31&format=csv".into(),
        headers: vec![("Authorization".into(), format!("Bearer {LIVE_KEY}"))],
        body: Vec::new(),
        request_id: None,
    });
    assert_eq!(resp.status, 200);
    assert!(resp
        .headers
        .iter()
        .any(|(k, v)| k == "Content-Type" && v.starts_with("text/csv")));
    let text = String::from_utf8(resp.body).unwrap();
    let mut lines = text.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("country,region,jurisdiction_code,"));
    assert!(lines
        .next()
        .unwrap()
        .starts_with("US,TN,47,TENNESSEE,STATE,,10000,0,0,0,0,10000,700,0,"));
}

/// A period of whole days `[from, from + days)`, as `levy report` makes them.
fn days(from: i64, days: i64, region: Option<&str>) -> Period {
    Period {
        from,
        to: from + days * DAY,
        region: region.map(String::from),
    }
}

/// Every period the checks below report: each day from February 15 to April 15, every
/// week of them, the two months, the quarter and the year, each of all states and of
/// Tennessee alone.
fn periods() -> Vec<Period> {
    let feb_15 = MARCH_1 - 14 * DAY;
    let mut out = Vec::new();
    for region in [None, Some("TN")] {
        for i in 0..60 {
            out.push(days(feb_15 + i * DAY, 1, region));
            out.push(days(feb_15 + i * DAY, 7, region));
        }
        out.push(march(region));
        out.push(days(APRIL_1, 30, region));
        out.push(days(MARCH_1 - 59 * DAY, 90, region));
        out.push(days(MARCH_1 - 59 * DAY, 365, region));
    }
    out
}

#[test]
fn the_daily_totals_report_what_the_records_hold() {
    let (st, s) = ledger();
    // On top of the worked month, the bookings a deletion must take back from other days:
    // T10, March 25, $20.00 in Nashville (140 + 45 = 185), refunded in part on March 26
    // ($5.00 and 46 of tax: 140 x 46/185 = 34.8108…, 45 x 46/185 = 11.1891…), the refund
    // reversed on April 3, and T10 deleted on April 4: void in every period. T11, March
    // 26, $30.00 (210 + 67.5 = 277.5, rounded to 278), refunded in full on March 27 and
    // deleted on March 28; the refund reversed on April 8, after the deletion.
    let add = |t: TransactionRecord| st.insert_transaction(&s, t).unwrap();
    add(tx(
        "tr_t10",
        MARCH_1 + 24 * DAY,
        "TN",
        H1,
        vec![line("li_t10", "2000", "185", tn("140", "45", "RATE_FRAC"))],
    ));
    add(tx(
        "tr_t11",
        MARCH_1 + 25 * DAY,
        "TN",
        H1,
        vec![line(
            "li_t11",
            "3000",
            "278",
            tn("210", "67.5", "RATE_FRAC"),
        )],
    ));
    let part = PartialRefundLine {
        product: None,
        line_id: Some("li_t10".into()),
        quantity: None,
        sales: d("-500"),
        tax: d("-46"),
    };
    let r10 = stamp("ref_tr_r10", MARCH_1 + 25 * DAY);
    st.insert_refund(&s, "tr_t10", RefundAsk::Partial(r10, vec![part]))
        .unwrap();
    st.reverse_refund(&s, "ref_tr_r10", APRIL_1 + 2 * DAY)
        .unwrap();
    st.delete_transaction(&s, "tr_t10", APRIL_1 + 3 * DAY)
        .unwrap();
    let r11 = stamp("ref_tr_r11", MARCH_1 + 26 * DAY);
    st.insert_refund(&s, "tr_t11", RefundAsk::Full(r11))
        .unwrap();
    st.delete_transaction(&s, "tr_t11", MARCH_1 + 27 * DAY)
        .unwrap();
    st.reverse_refund(&s, "ref_tr_r11", APRIL_1 + 7 * DAY)
        .unwrap();
    for p in periods() {
        let recount = st.liability_recount(&s, &p).unwrap();
        assert_eq!(st.liability(&s, &p).unwrap(), recount, "{p:?}");
    }
    // March's figures are the worked ones: Tennessee's 5 transactions (T1, T2, T3 and none
    // of T7, T10, T11), T8's refund; the state's tax 700 + 233.31 + 200 = 1,133.31 less
    // T8's 420.
    let r = st.liability(&s, &march(None)).unwrap();
    let tn_total = state_of(&r, "TN");
    assert_eq!((tn_total.transactions, tn_total.refunds), (3, 1));
    assert_eq!(row_of(&r, "TN", "47").net().tax, d("713.31"));
    // A period that is not whole days is recounted from the records: March 5 from noon
    // holds T1 (made at midnight) in neither.
    let noon = Period {
        from: MARCH_1 + 4 * DAY + DAY / 2,
        to: MARCH_1 + 5 * DAY,
        region: None,
    };
    assert!(st.liability(&s, &noon).unwrap().rows.is_empty());
}

#[test]
fn a_ledger_from_before_the_daily_totals_computes_them_from_its_records() {
    let dir = levy_testkit::TempDir::new("levy-report-days");
    let path = levy_testkit::postgres::ledger(dir.path());
    let (st, s) = ledger_at(&path);
    let before: Vec<Liability> = periods()
        .iter()
        .map(|p| st.liability_recount(&s, p).unwrap())
        .collect();
    drop(st);
    // The ledger set back to the schema before the daily totals were kept.
    if let Some(db) = path.strip_prefix("postgres://") {
        let server = levy_testkit::postgres::server().unwrap();
        let name = db.rsplit('/').next().unwrap();
        server
            .psql(
                name,
                "DROP TABLE liability_rows; DROP TABLE liability_totals;
                 UPDATE levy_ledger SET schema_version = 5",
            )
            .unwrap();
    } else {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP TABLE liability_rows; DROP TABLE liability_totals; PRAGMA user_version = 8",
        )
        .unwrap();
    }
    // Opened again, it computes them once: every report as the records give it.
    let st = store::open(&path).unwrap();
    for (p, want) in periods().iter().zip(&before) {
        assert_eq!(&st.liability(&s, p).unwrap(), want, "{p:?}");
    }
    let march = st.liability(&s, &march(None)).unwrap();
    assert_eq!(state_of(&march, "CA").transactions, 2);
}

#[test]
fn a_replaced_sale_is_reported_as_its_new_version_alone() {
    // A sale recorded, then replaced under its order id by a new version (an adjusted
    // document, an updated order): the reports, the nexus totals and the order id's reads
    // hold the new version alone; the old is kept, deleted and marked replaced; the outbox
    // says the deletion before the new sale.
    let st = store::open(&levy_testkit::postgres::ledger_or(":memory:")).unwrap();
    let s = Scope {
        account: "acct_replace".into(),
        live: true,
    };
    let order = "order_tr_v1";
    // March 5: $100.00 in Nashville, 700 + 225 = 925.
    st.insert_transaction(
        &s,
        tx(
            "tr_v1",
            MARCH_1 + 4 * DAY,
            "TN",
            H1,
            vec![line("li_v1", "10000", "925", tn("700", "225", "RATE_FRAC"))],
        ),
    )
    .unwrap();
    // Replaced on March 6 by $60.00: 420 + 135 = 555.
    let version = |id: &str, sales: &str, dues: (&str, &str), tax: &str| {
        let mut t = tx(
            id,
            MARCH_1 + 4 * DAY,
            "TN",
            H1,
            vec![line("li_v", sales, tax, tn(dues.0, dues.1, "RATE_FRAC"))],
        );
        t.reference_order_id = order.into();
        t
    };
    let replace = |old: &str, new: &TransactionRecord, at: i64| {
        st.make(
            &s,
            Write::Replacement {
                replaced: old.into(),
                tx: new.clone(),
                at,
            },
            None,
        )
        .map(drop)
    };
    let v2 = version("tr_v2", "6000", ("420", "135"), "555");
    replace("tr_v1", &v2, MARCH_1 + 5 * DAY).unwrap();
    let now = st
        .transaction_of_order(&s, order, "order")
        .unwrap()
        .unwrap();
    assert_eq!(now.id, "tr_v2");
    let old = st.transaction(&s, "tr_v1").unwrap().unwrap();
    assert_eq!(
        (old.deleted_at, old.replaced_by.as_deref()),
        (Some(MARCH_1 + 5 * DAY), Some("tr_v2"))
    );
    let march_tn = |st: &dyn Store| {
        let r = st.liability(&s, &march(None)).unwrap();
        let t = state_of(&r, "TN");
        (t.transactions, row_of(&r, "TN", "47").net().tax)
    };
    assert_eq!(march_tn(&*st), (1, d("420")));
    let nexus = st.nexus("acct_replace").unwrap();
    let tn_sales: Vec<(Decimal, i64)> = nexus
        .iter()
        .filter(|n| n.region == "TN")
        .map(|n| (n.sales, n.count))
        .collect();
    assert_eq!(tn_sales, [(d("6000"), 1)]);
    let events: Vec<(String, String)> = st
        .outbox(true, Some("acct_replace"), 10)
        .unwrap()
        .into_iter()
        .map(|e| (e.kind, e.id))
        .collect();
    assert_eq!(
        events,
        [
            ("transaction".to_string(), "tr_v1".to_string()),
            ("deletion".to_string(), "tr_v1".to_string()),
            ("transaction".to_string(), "tr_v2".to_string()),
        ]
    );

    // The old version is replaced once: again, it is not found, and nothing changes.
    let v3 = version("tr_v3", "2000", ("140", "45"), "185");
    let again = replace("tr_v1", &v3, MARCH_1 + 6 * DAY).unwrap_err();
    assert!(
        matches!(again, store::StoreError::NotFound { .. }),
        "{again:?}"
    );
    // A refunded version is not replaced: the refund is of the sale as it was.
    st.insert_refund(
        &s,
        "tr_v2",
        RefundAsk::Full(stamp("ref_tr_v2", MARCH_1 + 6 * DAY)),
    )
    .unwrap();
    let refused = replace("tr_v2", &v3, MARCH_1 + 6 * DAY).unwrap_err();
    assert!(
        matches!(
            &refused,
            store::StoreError::Rejected(store::Refusal::Refunded { refunds: 1, .. })
        ),
        "{refused:?}"
    );
    assert_eq!(
        st.transaction_of_order(&s, order, "order")
            .unwrap()
            .unwrap()
            .id,
        "tr_v2"
    );
    // Its refund reversed, it is: $20.00, 140 + 45 = 185, the month's one sale.
    st.reverse_refund(&s, "ref_tr_v2", MARCH_1 + 7 * DAY)
        .unwrap();
    replace("tr_v2", &v3, MARCH_1 + 7 * DAY).unwrap();
    assert_eq!(march_tn(&*st), (1, d("140")));
    for p in periods() {
        assert_eq!(
            st.liability(&s, &p).unwrap(),
            st.liability_recount(&s, &p).unwrap(),
            "{p:?}"
        );
    }
    let tn_sales: Vec<Decimal> = st
        .nexus("acct_replace")
        .unwrap()
        .iter()
        .filter(|n| n.region == "TN")
        .map(|n| n.sales)
        .collect();
    assert_eq!(tn_sales, [d("2000")]);
}
