//! Builds on the real published files in `shared/data` (see its README for each file's
//! origin). Each test skips when the data is absent, except under `CI=true`, where absence
//! fails it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use levy_build::{
    build, diff, BuildError, BuildOptions, BuildReport, ConflictKind, Input, InputKind,
};
use levy_core::{
    Address, AutomaticTax, Currency, Customer, Date, Decimal, IpMode, JsetId, Location, Precision,
    ResolveError, Sale, SaleLine, Sourced, Sourcing, Table,
};

/// `../shared/data`, or `None` (the test skips) when absent; absence fails under `CI=true`.
fn data_dir() -> Option<PathBuf> {
    levy_testkit::shared_data("")
}

fn opts(inputs: Vec<Input>) -> BuildOptions {
    BuildOptions {
        inputs,
        curated: None,
        strict: false,
        build_time: Some(0),
        progress: None,
        usps_zips: false,
    }
}

fn built(inputs: Vec<Input>) -> (BuildReport, Table<Vec<u8>>) {
    let report = build(&opts(inputs)).expect("build");
    let table = Table::open(report.bytes.clone()).expect("open");
    (report, table)
}

/// The build's note that mentions `what`.
fn build_note<'a>(report: &'a BuildReport, what: &str) -> &'a str {
    report
        .summary
        .notes
        .iter()
        .find(|n| n.contains(what))
        .unwrap_or_else(|| panic!("no build note mentions {what:?}"))
}

fn day(y: i32, m: u32, d: u32) -> Date {
    Date::from_ymd(y, m, d).unwrap()
}

fn us(postal: &str, region: &str) -> Address {
    Address {
        postal_code: postal.into(),
        region: region.into(),
        country: "US".into(),
        ..Default::default()
    }
}

/// A sale of one line of general merchandise, `cents` excluding tax, on `date`.
fn general_sale<D>(t: &Table<D>, cents: i64, date: Date) -> Sale {
    let line = SaleLine {
        amount: Decimal::from(cents),
        quantity: 1,
        per_unit: false,
        tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
    };
    levy_testkit::sale::sale(vec![line], date)
}

/// Tax in cents on one $100.00 line of general merchandise.
fn tax_on_100<D>(t: &Table<D>, loc: &Location, date: Date) -> (Decimal, Decimal) {
    let calc = t
        .calculate(loc, &general_sale(t, 10_000, date))
        .expect("calculate");
    let rate_sum: Decimal = calc.lines[0].jurisdictions.iter().map(|j| j.rate).sum();
    (calc.total_tax, rate_sum)
}

fn codes<D>(t: &Table<D>, loc: &Location) -> BTreeSet<String> {
    t.jset(loc.jset.unwrap())
        .map(|j| t.jurisdiction(j).unwrap().code().to_string())
        .collect()
}

/// The GENERAL_MERCHANDISE (or other code) rate of one jurisdiction in force on a day.
fn rate_on<D>(t: &Table<D>, code: &str, tax_code: &str, date: Date) -> Option<Decimal> {
    let j = t.jurisdiction_by_code(code)?;
    let tc = t.tax_code(tax_code)?;
    let mut found = t
        .rules_of(j)
        .filter(|(_, r)| r.tax_code() == tc)
        .filter(|(_, r)| {
            let (f, to) = r.interval();
            f <= date && date <= to
        });
    let first = found.next().map(|(_, r)| r.rate());
    assert!(
        found.next().is_none(),
        "two {tax_code} rules for {code} on {date:?}"
    );
    first
}

struct Row {
    state: String,
    zip: String,
    name: String,
    combined: Decimal,
}

fn zip5_rows(dir: &Path) -> Vec<Row> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut rows = Vec::new();
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "csv"))
    {
        let mut r = csv::Reader::from_path(f).unwrap();
        for rec in r.records() {
            let rec = rec.unwrap();
            rows.push(Row {
                state: rec[0].to_string(),
                zip: rec[1].to_string(),
                name: rec[2].to_string(),
                combined: Decimal::from_str(&rec[3]).unwrap(),
            });
        }
    }
    rows
}

/// Checks every ZIP5 row on `date`: resolved through its ZIP, or (a ZIP in two states'
/// files) through its own jurisdiction set. Returns (via ZIP, via another state's row).
fn reproduce_rows<D>(report: &BuildReport, t: &Table<D>, rows: &[Row]) -> (usize, usize) {
    // A day inside the files' month, December 2025.
    let date = day(2025, 12, 15);
    let jset_count = t.data().jset_start.len() - 1;
    let mut via_zip = 0;
    let mut via_other_state = 0;
    for row in rows {
        // Expected tax on $100.00: round(10000 cents x combined), half away from zero.
        let expected_tax = levy_core::round_minor(Decimal::from(10_000) * row.combined);
        match t.resolve(&us(&row.zip, &row.state), date) {
            Ok(loc) => {
                assert_eq!(loc.precision, Precision::Postal);
                let (tax, sum) = tax_on_100(t, &loc, date);
                assert_eq!(sum, row.combined, "{} {}", row.state, row.zip);
                assert_eq!(tax, expected_tax, "{} {}", row.state, row.zip);
                via_zip += 1;
            }
            Err(ResolveError::ZipStateMismatch { .. }) => {
                // A ZIP in two states' tables: the build reports it, keeps the USPS state's
                // row, and the other row's jurisdictions are a set of their own.
                assert!(report
                    .summary
                    .conflicts
                    .iter()
                    .any(|c| c.kind == ConflictKind::ZipInTwoStates
                        && c.detail.contains(&format!("ZIP {}", row.zip))));
                let fips = levy_build::states::by_abbr(&row.state).unwrap().0;
                let found = (0..jset_count as u32).map(JsetId).find_map(|id| {
                    let members: Vec<_> = t.jset(id).map(|j| t.jurisdiction(j).unwrap()).collect();
                    // The row's own set: all in its state, and named after its tax region
                    // unless the state alone taxes it (Connecticut has no local rates).
                    let ours = !members.is_empty()
                        && members
                            .iter()
                            .all(|j| j.code() == fips || j.code().starts_with(&format!("{fips}:")))
                        && (members.len() == 1
                            || members
                                .iter()
                                .any(|j| j.code().contains(&format!(":{}:", row.name))));
                    if !ours {
                        return None;
                    }
                    let mut loc = t.resolve(&us("", &row.state), date).unwrap();
                    loc.jset = Some(id);
                    let (tax, sum) = tax_on_100(t, &loc, date);
                    (sum == row.combined && tax == expected_tax).then_some(())
                });
                assert!(
                    found.is_some(),
                    "no jurisdiction set reproduces {} {}",
                    row.state,
                    row.zip
                );
                via_other_state += 1;
            }
            Err(e) => panic!("{} {}: {e}", row.state, row.zip),
        }
    }
    (via_zip, via_other_state)
}

#[test]
fn every_zip5_row_is_reproduced() {
    let Some(data) = data_dir() else { return };
    let dir = data.join("zip5-rates-2025-12");
    let (report, t) = built(vec![Input::new(InputKind::Zip5, &dir)]);
    let rows = zip5_rows(&dir);
    // The data README: 41,001 rows in 52 files.
    assert_eq!(rows.len(), 41_001);
    assert_eq!(report.summary.sources.len(), 52);
    assert!(
        report.summary.bad_rows.is_empty(),
        "{:?}",
        &report.summary.bad_rows[..3.min(report.summary.bad_rows.len())]
    );
    let read: u64 = report.summary.sources.iter().map(|s| s.rows_read).sum();
    assert_eq!(read, 41_001);
    // 474 rows have a component truncated by 0.000001 (counted by hand with a decimal sum
    // over the files: CO 10, KS 1, LA 2, OH 83, UT 346, WA 32).
    assert_eq!(report.summary.repaired_rows, 474);

    let (via_zip, via_other_state) = reproduce_rows(&report, &t, &rows);
    // 84 ZIPs appear in more than one state's file: 82 in two and 2 in three (counted
    // with `cut -d, -f2 | sort | uniq -c` over the files), so 82 + 2 x 2 = 86 rows are
    // not the kept row of their ZIP.
    assert_eq!(via_other_state, 86);
    assert_eq!(via_zip + via_other_state, 41_001);
    // `levy info`: 41,001 rows less the 86 second rows of shared ZIPs = 40,915 ZIP codes,
    // one source per file.
    let info = levy_build::info(&t);
    assert!(info.contains("ZIP codes       40915\n"), "{info}");
    assert!(info.contains("sources         52\n"), "{info}");
    assert!(
        info.contains("zip5            TAXRATES_ZIP5_TN202512.csv"),
        "{info}"
    );
    batch_matches_one_at_a_time(&t, &rows);
}

/// A batch over every ZIP, in an order that jumps about the table (so that the records the
/// batch fetches ahead are those of other states), in batches of lengths around the
/// batch's look-ahead (none, one, fewer, as many, more, thousands): each calculation is the
/// one `calculate` gives for its sale alone, which `reproduce_rows` checked against the
/// files.
fn batch_matches_one_at_a_time<D>(t: &Table<D>, rows: &[Row]) {
    let date = day(2025, 12, 15);
    let locations: Vec<Location> = rows
        .iter()
        .filter_map(|r| t.resolve(&us(&r.zip, &r.state), date).ok())
        .collect();
    // The rows less the 86 second rows of ZIPs in two states' files (see above).
    assert_eq!(locations.len(), 40_915);
    // A stride coprime with the count visits every location once, far apart each step.
    let n = locations.len();
    let order: Vec<&Location> = (0..n).map(|i| &locations[(i * 7_919) % n]).collect();
    let sale = general_sale(t, 12_345, date);
    let mut out = Vec::new();
    let mut at = 0;
    for len in [0, 1, 5, 8, 9, 17, 1_000, 4_096].into_iter().cycle() {
        let batch = &order[at..(at + len).min(n)];
        let errors = t.calculate_batch(batch.iter().map(|l| (*l, &sale)), &mut out);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(out.len(), batch.len());
        for (loc, calc) in batch.iter().zip(&out) {
            assert_eq!(calc, &t.calculate(loc, &sale).unwrap());
        }
        at += batch.len();
        if at == n {
            break;
        }
    }
}

#[test]
fn every_zip5_row_is_reproduced_on_its_date_in_the_fully_layered_build() {
    // Every shared source layered in one table: the ZIP5 files (December 2025 on), the SST
    // rate files of Georgia, Minnesota and Wisconsin, Minnesota's boundary sample and the
    // CDTFA list (2026-01-01 on). Later sources refine only inside their own dates, so on a
    // day of December 2025 every ZIP5 row still gives its own combined rate.
    let Some(data) = data_dir() else { return };
    let dir = data.join("zip5-rates-2025-12");
    let (report, t) = built(vec![
        Input::new(InputKind::Zip5, &dir),
        sst(&data, "GAR2026Q2FEB19.csv"),
        sst(&data, "MNR2026Q2FEB18.csv"),
        sst(&data, "WIR2026Q2FEB18.csv"),
        Input::new(
            InputKind::SstBoundaries,
            data.join("sst/MNB2026Q2FEB18-sample.csv"),
        ),
        Input::new(InputKind::Cdtfa, data.join("ca-cdtfa-2026-01")),
    ]);
    let rows = zip5_rows(&dir);
    let (via_zip, via_other_state) = reproduce_rows(&report, &t, &rows);
    // As in the ZIP5-only build: 86 second rows of ZIPs in two states' files.
    assert_eq!((via_zip + via_other_state, via_other_state), (41_001, 86));
}

fn sst(data: &Path, name: &str) -> Input {
    Input::new(InputKind::SstRates, data.join("sst").join(name))
}

#[test]
fn sst_rates_in_and_out_of_their_intervals() {
    let Some(data) = data_dir() else { return };
    let (report, t) = built(vec![
        sst(&data, "GAR2026Q2FEB19.csv"),
        sst(&data, "MNR2026Q2FEB18.csv"),
        sst(&data, "WIR2026Q2FEB18.csv"),
    ]);
    assert!(
        report.summary.bad_rows.is_empty(),
        "{:?}",
        report.summary.bad_rows
    );
    let d = Decimal::from_str;
    // GAR line 1: `13,45,13,0.04,0.04,0,0,20110101,29991231`: state 4%, food 0%.
    assert_eq!(
        rate_on(&t, "13", "GENERAL_MERCHANDISE", day(2026, 5, 1)),
        Some(d("0.04").unwrap())
    );
    assert_eq!(
        rate_on(&t, "13", "GROCERIES", day(2026, 5, 1)),
        Some(Decimal::ZERO)
    );
    assert_eq!(
        rate_on(&t, "13", "GENERAL_MERCHANDISE", day(2010, 12, 31)),
        None
    );
    // GAR lines 2-4: city 04000 at 1% 2011-01-01..2017-02-28, 1.5% in March 2017, 1.9%
    // 2017-04-01..2022-03-31; food equals general, so no GROCERIES rule (inherits).
    assert_eq!(
        rate_on(&t, "1304000", "GENERAL_MERCHANDISE", day(2017, 2, 28)),
        Some(d("0.01").unwrap())
    );
    assert_eq!(
        rate_on(&t, "1304000", "GENERAL_MERCHANDISE", day(2017, 3, 1)),
        Some(d("0.015").unwrap())
    );
    assert_eq!(
        rate_on(&t, "1304000", "GENERAL_MERCHANDISE", day(2017, 4, 1)),
        Some(d("0.019").unwrap())
    );
    assert_eq!(
        rate_on(&t, "1304000", "GENERAL_MERCHANDISE", day(2010, 6, 1)),
        None
    );
    assert_eq!(rate_on(&t, "1304000", "GROCERIES", day(2017, 3, 1)), None);
    // MNR: `27,01,58000,0.0050,...,20051001,20240331` and `27,01,58000,0.0150,...,20240401,29991231`.
    assert_eq!(
        rate_on(&t, "2758000", "GENERAL_MERCHANDISE", day(2024, 3, 31)),
        Some(d("0.005").unwrap())
    );
    assert_eq!(
        rate_on(&t, "2758000", "GENERAL_MERCHANDISE", day(2024, 4, 1)),
        Some(d("0.015").unwrap())
    );
    assert_eq!(
        rate_on(&t, "2758000", "GENERAL_MERCHANDISE", day(2005, 9, 30)),
        None
    );
    // MNR: `27,63,80004,0.0050,...,20171001,29991231`, a special district.
    assert_eq!(
        rate_on(&t, "27:63:80004", "GENERAL_MERCHANDISE", day(2020, 1, 1)),
        Some(d("0.005").unwrap())
    );
    assert_eq!(
        rate_on(&t, "27:63:80004", "GENERAL_MERCHANDISE", day(2017, 9, 30)),
        None
    );
    // MNR: `27,45,27,0.06875,...,20090701,29991231`.
    assert_eq!(
        rate_on(&t, "27", "GENERAL_MERCHANDISE", day(2026, 4, 1)),
        Some(d("0.06875").unwrap())
    );
    // WIR lines 5-6: county 009 at 0% 1980-01-01..2017-12-31, 0.5% from 2018-01-01 (9999-12-31 end).
    assert_eq!(
        rate_on(&t, "55009", "GENERAL_MERCHANDISE", day(2017, 12, 31)),
        Some(Decimal::ZERO)
    );
    assert_eq!(
        rate_on(&t, "55009", "GENERAL_MERCHANDISE", day(2018, 1, 1)),
        Some(d("0.005").unwrap())
    );
    assert_eq!(
        rate_on(&t, "55009", "GENERAL_MERCHANDISE", day(1979, 12, 31)),
        None
    );
    // WIR line 1: `55,00,001,0.005,...,19940101,99991231`.
    assert_eq!(
        rate_on(&t, "55001", "GENERAL_MERCHANDISE", day(2030, 1, 1)),
        Some(d("0.005").unwrap())
    );
    // Manifest: kind, name, period, rows. The data README says 449 / 147 / 1,941 rows; the
    // Minnesota file has 148 (its last line has no line break, so `wc -l` counts 147).
    let s = &report.summary.sources;
    assert_eq!(
        s.iter()
            .map(|e| (
                e.kind.as_str(),
                e.name.as_str(),
                e.rows_read,
                e.period.as_str()
            ))
            .collect::<Vec<_>>(),
        vec![
            ("sst-rates", "GAR2026Q2FEB19.csv", 449, "2026Q2"),
            ("sst-rates", "MNR2026Q2FEB18.csv", 148, "2026Q2"),
            ("sst-rates", "WIR2026Q2FEB18.csv", 1941, "2026Q2"),
        ]
    );
    assert!(s.iter().all(|e| e.sha256.len() == 64));
}

#[test]
fn minnesota_boundaries_resolve_zip4_ranges() {
    let Some(data) = data_dir() else { return };
    let (report, t) = built(vec![
        Input::new(
            InputKind::Zip5,
            data.join("zip5-rates-2025-12/TAXRATES_ZIP5_MN202512.csv"),
        ),
        sst(&data, "MNR2026Q2FEB18.csv"),
        Input::new(
            InputKind::SstBoundaries,
            data.join("sst/MNB2026Q2FEB18-sample.csv"),
        ),
    ]);
    assert!(
        report.summary.bad_rows.is_empty(),
        "{:?}",
        report.summary.bad_rows
    );
    // The sample has 100 records (data README); every one is read.
    assert_eq!(report.summary.sources[2].rows_read, 100);
    let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    let inside = day(2019, 2, 1);
    // `4,20190101,20190331,...,55025,0001,55025,0099,,27,27,003`: Anoka County (003).
    let loc = t.resolve(&us("55025-0050", "MN"), inside).unwrap();
    assert_eq!(loc.precision, Precision::PostalPlus);
    assert_eq!(codes(&t, &loc), set(&["27", "27003"]));
    // `4,20190101,20190331,...,55025,0100,55025,2127,,27,27,163`: Washington County (163).
    let loc = t.resolve(&us("55025-2127", "MN"), inside).unwrap();
    assert_eq!(codes(&t, &loc), set(&["27", "27163"]));
    // `4,20161001,20190331,...,55012,0011,55013,9999,,27,27,025` spans two ZIP5s: 55013-0000
    // lies inside it (Chisago County, 025).
    let loc = t.resolve(&us("55013-0000", "MN"), inside).unwrap();
    assert_eq!(codes(&t, &loc), set(&["27", "27025"]));
    // `Z,20171001,20190331,...,55401,,55405,,,27,27,053,43000,...,ST,80004,63`: Hennepin
    // County, Minneapolis (43000) and district 80004 of type 63.
    let loc = t.resolve(&us("55401-1234", "MN"), day(2018, 6, 1)).unwrap();
    assert_eq!(
        codes(&t, &loc),
        set(&["27", "27053", "2743000", "27:63:80004"])
    );
    // After 2019-03-31 the sample's ranges are out of force: the ZIP5 table decides.
    let loc = t.resolve(&us("55025-0050", "MN"), day(2026, 1, 5)).unwrap();
    assert_eq!(loc.precision, Precision::Postal);
    // ZIP5 row `MN,55025,SCANDIA,0.083750,...`: 8.375% of $100.00 = 837.5 -> 838 cents.
    assert_eq!(tax_on_100(&t, &loc, day(2026, 1, 5)).0, Decimal::from(838));
}

#[test]
fn cdtfa_cities_resolve_at_their_zips() {
    let Some(data) = data_dir() else { return };
    let (report, t) = built(vec![
        Input::new(
            InputKind::Zip5,
            data.join("zip5-rates-2025-12/TAXRATES_ZIP5_CA202512.csv"),
        ),
        Input::new(InputKind::Cdtfa, data.join("ca-cdtfa-2026-01")),
    ]);
    assert!(
        report.summary.bad_rows.is_empty(),
        "{:?}",
        report.summary.bad_rows
    );
    let cdtfa = &report.summary.sources[1];
    assert_eq!(cdtfa.period, "2026-01-01");
    // Five rows (Del Norte, Kern, Monterey, Santa Cruz, Yuba counties) carry only a note.
    assert_eq!(cdtfa.rows_skipped, 5);
    // 549 lines: 2 title lines, the header, 546 rows (data README); 541 have a rate.
    assert_eq!(cdtfa.rows_read, 541);
    let date = day(2026, 2, 1);
    // CDTFA: `Alameda,0.1075,Alameda,City`; 94501 is Alameda's ZIP: $10.75 on $100.00.
    let loc = t.resolve(&us("94501", "CA"), date).unwrap();
    assert_eq!(
        tax_on_100(&t, &loc, date),
        (Decimal::from(1075), Decimal::from_str("0.1075").unwrap())
    );
    assert_eq!(
        codes(&t, &loc),
        ["06", "06:BRADLEY-BURNS", "06:CDTFA:CITY:ALAMEDA"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    // CDTFA: `Agoura Hills,9.7500000000000003E-2,...` -> 9.75%: 91301 is Agoura Hills.
    let loc = t.resolve(&us("91301", "CA"), date).unwrap();
    assert_eq!(tax_on_100(&t, &loc, date).0, Decimal::from(975));
    // CDTFA: `Alameda County,0.10249999999999999,Alameda,County` -> 10.25% for the
    // unincorporated county: Castro Valley (94546) is not a city.
    let loc = t.resolve(&us("94546", "CA"), date).unwrap();
    assert_eq!(tax_on_100(&t, &loc, date).0, Decimal::from(1025));
    // All 546 locations are placed: the 541 with a rate (the 28 whose names are no USPS
    // primary city are found through the names USPS accepts, or a spelling: `McFarland` is
    // USPS's `MC FARLAND`) and the 5 county header rows, whose counties' cities and
    // unincorporated areas have rows of their own.
    let note = build_note(&report, "locations placed");
    assert!(
        note.contains("546 of 546 locations placed: 541 with a rate"),
        "{note}"
    );
    assert!(note.contains("and 5 county header rows"), "{note}");
    assert!(!report
        .summary
        .notes
        .iter()
        .any(|n| n.contains("match no USPS")));
    // CDTFA: `McFarland,8.2500000000000004E-2,Kern,City` -> 8.25%; 93250 is USPS's
    // `MC FARLAND`: $8.25 on $100.00, the whole answer.
    let loc = t.resolve(&us("93250", "CA"), date).unwrap();
    assert_eq!(tax_on_100(&t, &loc, date).0, Decimal::from(825));
    assert_eq!(loc.coverage, levy_core::Coverage::Full);
    // 94061 is Redwood City's (`Redwood City,9.8750000000000004E-2`: 9.875% of $100.00 =
    // 987.5 cents -> 988), and USPS accepts `Woodside` there too (`Woodside,9.375E-2`): the
    // ZIP is split between places of different rates, so the answer says PARTIAL.
    let loc = t.resolve(&us("94061", "CA"), date).unwrap();
    assert_eq!(tax_on_100(&t, &loc, date).0, Decimal::from(988));
    assert_eq!(loc.coverage, levy_core::Coverage::Partial);
    // Castro Valley (94546) is unincorporated Alameda County (10.25%, 1025 cents), and USPS
    // accepts `Hayward` there (10.75%): PARTIAL too.
    let loc = t.resolve(&us("94546", "CA"), date).unwrap();
    assert_eq!(loc.coverage, levy_core::Coverage::Partial);

    // Before the CDTFA period the ZIP5 table's December rates still hold for 94501
    // (`CA,94501,ALAMEDA,0.107500,0.060000,0.002500,0.005000,0.040000`): the same 10.75%,
    // through the ZIP5 file's own jurisdictions.
    let december = day(2025, 12, 10);
    let loc = t.resolve(&us("94501", "CA"), december).unwrap();
    assert_eq!(loc.coverage, levy_core::Coverage::Full);
    assert_eq!(
        tax_on_100(&t, &loc, december),
        (Decimal::from(1075), Decimal::from_str("0.1075").unwrap())
    );
    assert!(codes(&t, &loc).contains("06:COUNTY:ALAMEDA:0.0025"));
    assert!(report
        .summary
        .conflicts
        .iter()
        .any(|c| c.kind == ConflictKind::ZipReassigned
            && c.detail.contains("ZIP 94501 CA 2026-01-01..+inf")));
}

#[test]
fn a_later_source_refines_only_inside_its_own_dates() {
    // San Jose 95132 in one table layered from the ZIP5 file (December 2025 on) and the
    // CDTFA list (2026-01-01 on).
    let Some(data) = data_dir() else { return };
    let (_, t) = built(vec![
        Input::new(
            InputKind::Zip5,
            data.join("zip5-rates-2025-12/TAXRATES_ZIP5_CA202512.csv"),
        ),
        Input::new(InputKind::Cdtfa, data.join("ca-cdtfa-2026-01")),
    ]);
    // 2025-12-06, before the CDTFA list is in force: the ZIP5 row
    // `CA,95132,SAN JOSE CONVENTION CENTER FACILITY DISTRICT ZONE 2,0.093750,0.060000,
    // 0.002500,0.002500,0.028750`: 9.375% of $100.00 = 937.5 cents, rounded half away from
    // zero = 938.
    let before = day(2025, 12, 6);
    let loc = t.resolve(&us("95132", "CA"), before).unwrap();
    assert_eq!(
        tax_on_100(&t, &loc, before),
        (Decimal::from(938), Decimal::from_str("0.09375").unwrap())
    );
    assert!(codes(&t, &loc)
        .iter()
        .any(|c| c.starts_with("06:SPECIAL:SAN JOSE CONVENTION")));
    // 2026-02-01: the CDTFA row `San Jose,9.375E-2,Santa Clara,City`: 6% state, 1.25%
    // uniform local, 2.125% district = 9.375%, through CDTFA's jurisdictions.
    let after = day(2026, 2, 1);
    let loc = t.resolve(&us("95132", "CA"), after).unwrap();
    assert_eq!(
        tax_on_100(&t, &loc, after),
        (Decimal::from(938), Decimal::from_str("0.09375").unwrap())
    );
    assert_eq!(
        codes(&t, &loc),
        ["06", "06:BRADLEY-BURNS", "06:CDTFA:CITY:SAN JOSE"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    // 2025-11-30, before either source: no source says what local taxes apply, so the
    // answer is California's statewide set (the state and the uniform local tax CDTFA's
    // split adds to it) and says it is state-level only.
    let earlier = day(2025, 11, 30);
    let loc = t.resolve(&us("95132", "CA"), earlier).unwrap();
    assert_eq!(loc.coverage, levy_core::Coverage::StateOnly);
    assert_eq!(loc.precision, Precision::Province);
    assert_eq!(
        codes(&t, &loc),
        ["06", "06:BRADLEY-BURNS"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
}

#[test]
fn ip_csv_ranges_resolve() {
    let Some(data) = data_dir() else { return };
    let tmp = tempdir("ipcsv");
    let csv = tmp.join("ranges.csv");
    std::fs::write(
        &csv,
        "start,end,country,region,postal\n192.0.2.0,192.0.2.255,US,TN,37203\n2001:db8::,2001:db8::ffff,CA,ON,\n3221226240,3221226495,US,US-TN,37010\n",
    )
    .unwrap();
    let (report, t) = built(vec![
        Input::new(
            InputKind::Zip5,
            data.join("zip5-rates-2025-12/TAXRATES_ZIP5_TN202512.csv"),
        ),
        Input::new(InputKind::IpCsv, &csv),
    ]);
    assert_eq!(report.summary.sources[1].rows_read, 3);
    let date = day(2026, 1, 2);
    let loc = t.resolve_ip("192.0.2.10", IpMode::Strict, date).unwrap();
    // `TN,37203,NASHVILLE,0.092500,...`: 9.25% of $100.00.
    assert_eq!(tax_on_100(&t, &loc, date).0, Decimal::from(925));
    // 3221226240 is 192.0.3.0: `TN,37010,ADAMS,0.097500,...`.
    let loc = t.resolve_ip("192.0.3.7", IpMode::Strict, date).unwrap();
    assert_eq!(tax_on_100(&t, &loc, date).0, Decimal::from(975));
    let place = t.lookup_ip("2001:db8::42".parse().unwrap()).unwrap();
    assert_eq!((place.country(), place.region()), ("CA", "ON"));
    assert!(t.lookup_ip("192.0.4.1".parse().unwrap()).is_none());
}

/// A fresh directory under `target/tmp`, removed when the test ends.
fn tempdir(tag: &str) -> levy_testkit::TempDir {
    levy_testkit::target_temp_dir!(&format!("levy-build-{tag}"))
}

#[test]
fn builds_are_byte_identical_and_dated_by_their_inputs() {
    let Some(data) = data_dir() else { return };
    let inputs = || {
        vec![
            Input::new(InputKind::Zip5, data.join("zip5-rates-2025-12")),
            sst(&data, "MNR2026Q2FEB18.csv"),
            Input::new(
                InputKind::SstBoundaries,
                data.join("sst/MNB2026Q2FEB18-sample.csv"),
            ),
            Input::new(InputKind::Cdtfa, data.join("ca-cdtfa-2026-01")),
        ]
    };
    let mut o = opts(inputs());
    o.build_time = None;
    let a = build(&o).unwrap();
    let b = build(&o).unwrap();
    assert!(a.bytes == b.bytes, "two builds of the same inputs differ");
    if std::env::var("SOURCE_DATE_EPOCH").is_err() {
        // The latest period start among the inputs is 2026Q2: 2026-04-01 = day 20544 of
        // the Unix epoch, 20544 x 86400 seconds.
        assert_eq!(a.summary.build_time, 20_544 * 86_400);
        assert_eq!(
            Table::open(a.bytes).unwrap().header().build_time,
            1_775_001_600
        );
    }
}

#[test]
fn diff_lists_exactly_the_change_made() {
    let Some(data) = data_dir() else { return };
    let original = data.join("zip5-rates-2025-12/TAXRATES_ZIP5_TN202512.csv");
    let text = std::fs::read_to_string(&original).unwrap();
    let row = "TN,37010,ADAMS,0.097500,0.070000,0.027500,0.000000,0.000000,0";
    assert_eq!(text.matches(row).count(), 1);
    let tmp = tempdir("diff");
    let altered = tmp.join("TAXRATES_ZIP5_TN202512.csv");
    // Adams (37010) county rate 2.75% -> 3%, combined 9.75% -> 10%.
    std::fs::write(
        &altered,
        text.replace(
            row,
            "TN,37010,ADAMS,0.100000,0.070000,0.030000,0.000000,0.000000,0",
        ),
    )
    .unwrap();
    let (_, old) = built(vec![Input::new(InputKind::Zip5, &original)]);
    let (_, new) = built(vec![Input::new(InputKind::Zip5, &altered)]);
    let d = diff(&old, &new);
    // 37032 still uses ADAMS at 2.75%, so that jurisdiction stays; a new one appears.
    assert_eq!(d.jurisdictions_added.len(), 1);
    assert_eq!(d.jurisdictions_added[0].code, "47:COUNTY:ADAMS:0.03");
    assert!(d.jurisdictions_removed.is_empty());
    assert_eq!(d.rules.len(), 1);
    assert_eq!(d.rules[0].jurisdiction, "47:COUNTY:ADAMS:0.03");
    assert_eq!(
        (d.rules[0].old.as_deref(), d.rules[0].new.as_deref()),
        (None, Some("0.03"))
    );
    assert_eq!(d.rules[0].interval, "2025-12-01..-");
    assert_eq!(d.zips.len(), 1);
    // ZIP assignments are dated: the file's month on, open-ended.
    assert_eq!(d.zips[0].place, "37010 TN 2025-12-01..-");
    assert_eq!(
        d.zips[0].old,
        vec!["47".to_string(), "47:COUNTY:ADAMS:0.0275".to_string()]
    );
    assert_eq!(
        d.zips[0].new,
        vec!["47".to_string(), "47:COUNTY:ADAMS:0.03".to_string()]
    );
    assert!(d.zip4.is_empty() && d.streets.is_empty() && d.ip_ranges.is_empty());
    let text = d.to_text();
    assert_eq!(text.lines().count(), 3, "{text}");
    assert!(
        text.contains("~ ZIP 37010 TN 2025-12-01..-: [47 47:COUNTY:ADAMS:0.0275] -> [47 47:COUNTY:ADAMS:0.03]"),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_str(&d.to_json()).unwrap();
    assert_eq!(json["zips"][0]["place"], "37010 TN 2025-12-01..-");
    // A table against itself: nothing.
    assert!(diff(&old, &old).is_empty());
}

#[test]
fn bad_rows_are_counted_and_strict_fails() {
    let Some(data) = data_dir() else { return };
    let text = std::fs::read_to_string(data.join("zip5-rates-2025-12/TAXRATES_ZIP5_DE202512.csv"))
        .unwrap();
    let tmp = tempdir("bad");
    let file = tmp.join("TAXRATES_ZIP5_DE202512.csv");
    let lines = text.lines().count();
    std::fs::write(
        &file,
        format!("{text}DE,1997X,WILMINGTON,0.000000,0.000000,0.000000,0.000000,0.000000,0\n"),
    )
    .unwrap();
    let (report, _) = built(vec![Input::new(InputKind::Zip5, &file)]);
    let bad = &report.summary.bad_rows;
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0].line, lines as u64 + 1);
    assert!(bad[0].file.ends_with("TAXRATES_ZIP5_DE202512.csv"));
    assert!(bad[0].message.contains("1997X"), "{}", bad[0].message);
    assert_eq!(report.summary.sources[0].rows_skipped, 1);
    assert_eq!(report.summary.sources[0].rows_read, lines as u64 - 1);
    let mut strict = opts(vec![Input::new(InputKind::Zip5, &file)]);
    strict.strict = true;
    match build(&strict) {
        Err(BuildError::BadRow { line, .. }) => assert_eq!(line, lines as u64 + 1),
        other => panic!(
            "strict build did not fail on the bad row: {:?}",
            other.map(|r| r.summary)
        ),
    }
}

#[test]
fn the_census_zip_county_file_places_georgia_zips_in_their_counties() {
    // The whole GA SST rate file (state, county, city and district rows), then the census
    // ZIP-to-county file: ZIPs go to their county, city taxes stay unplaced (PARTIAL).
    let Some(data) = data_dir() else { return };
    let (report, t) = built(vec![
        sst(&data, "GAR2026Q2FEB19.csv"),
        Input::new(
            InputKind::ZipCounty,
            data.join("census-zcta-county-2020/zip_county.csv"),
        ),
    ]);
    let date = day(2026, 3, 1);
    // `13,45,13,0.04` + Fulton `13,00,121,0.03`; 30303 lies in Fulton alone: 700 cents.
    let loc = t.resolve(&us("30303", "GA"), date).unwrap();
    assert_eq!(tax_on_100(&t, &loc, date).0, Decimal::from(700));
    assert_eq!(loc.coverage, levy_core::Coverage::Partial);
    assert_eq!(
        codes(&t, &loc),
        ["13", "13121"].iter().map(|s| s.to_string()).collect()
    );
    // 30004 lies in Cherokee (057: 2% until 2026-03-31, 3% from 2026-04-01), Forsyth (117)
    // and Fulton (121, both 3%): counties of different rates, with nothing local in common,
    // so the ZIP gets the state alone (STATE_ONLY), says why, and the build names it.
    let loc = t.resolve(&us("30004", "GA"), date).unwrap();
    assert_eq!(tax_on_100(&t, &loc, date).0, Decimal::from(400));
    assert_eq!(
        (loc.coverage, t.place_note(&loc, date)),
        (
            levy_core::Coverage::StateOnly,
            levy_core::PlaceNote::SplitCounties
        )
    );
    let note = build_note(&report, "ZIPs placed in their county");
    assert!(
        note.contains("GA ZIPs lie in counties of different rates"),
        "{note}"
    );
    assert!(note.contains("30004"), "{note}");
    // Rows of states with no SST county rates in the build are skipped, not errors.
    let census = &report.summary.sources[1];
    assert!(census.rows_skipped > 40_000, "{census:?}");
    assert!(report.summary.bad_rows.is_empty());
}

#[test]
fn the_zip_county_file_keeps_a_zip5_files_placements_in_either_order() {
    // The census file has no dates and places a ZIP in its county alone (PARTIAL); the ZIP5
    // file places it with every level (FULL) from December 2025 on. Whichever comes first,
    // the ZIP5 file's days keep its placement and the county fills the days before them.
    let Some(data) = data_dir() else { return };
    let zip5_ga = data.join("zip5-rates-2025-12/TAXRATES_ZIP5_GA202512.csv");
    let zip5 = || Input::new(InputKind::Zip5, &zip5_ga);
    let county = || {
        Input::new(
            InputKind::ZipCounty,
            data.join("census-zcta-county-2020/zip_county.csv"),
        )
    };
    let (report, county_last) = built(vec![sst(&data, "GAR2026Q2FEB19.csv"), zip5(), county()]);
    let (_, county_first) = built(vec![sst(&data, "GAR2026Q2FEB19.csv"), county(), zip5()]);
    let (during, before) = (day(2026, 3, 1), day(2025, 11, 30));
    for t in [&county_last, &county_first] {
        // The ZIP5 row `GA,30303,ATLANTA,0.089000,0.040000,0.030000,0.015000,0.004000,0`:
        // 8.9% of $100.00 = 890 cents, every level known.
        let loc = t.resolve(&us("30303", "GA"), during).unwrap();
        assert_eq!(tax_on_100(t, &loc, during).0, Decimal::from(890));
        assert_eq!(loc.coverage, levy_core::Coverage::Full);
        // Before the ZIP5 file's month: the census places 30303 in Fulton alone, the SST
        // rows `13,45,13,0.04` and Fulton `13,00,121,0.03`: 4% + 3% = 700 cents, PARTIAL.
        let loc = t.resolve(&us("30303", "GA"), before).unwrap();
        assert_eq!(tax_on_100(t, &loc, before).0, Decimal::from(700));
        assert_eq!(loc.coverage, levy_core::Coverage::Partial);
        assert_eq!(
            codes(t, &loc),
            ["13", "13121"].iter().map(|s| s.to_string()).collect()
        );
    }
    // Every Georgia ZIP of the ZIP5 file answers alike in both tables, on both days.
    let mut compared = 0;
    for rec in csv::Reader::from_path(&zip5_ga).unwrap().records() {
        let rec = rec.unwrap();
        for date in [during, before] {
            let answer = |t: &Table<Vec<u8>>| {
                let loc = t.resolve(&us(&rec[1], "GA"), date).unwrap();
                (codes(t, &loc), loc.coverage, tax_on_100(t, &loc, date))
            };
            assert_eq!(answer(&county_last), answer(&county_first), "{}", &rec[1]);
            compared += 1;
        }
    }
    // The file's 942 rows (`wc -l` gives 943 lines with the header), on two days.
    assert_eq!(compared, 2 * 942);
    let note = build_note(&report, "ZIPs placed in their county");
    assert!(
        note.contains("ZIPs keep, on the days an earlier source placed them with every tax"),
        "{note}"
    );
}

#[test]
fn intrastate_sales_follow_the_states_sourcing_rule_on_the_zip5_tables() {
    let Some(data) = data_dir() else { return };
    let dir = tempdir("sourcing");
    for st in ["TX", "OH", "OK"] {
        let name = format!("TAXRATES_ZIP5_{st}202512.csv");
        std::fs::copy(data.join("zip5-rates-2025-12").join(&name), dir.join(&name)).unwrap();
    }
    let mut o = opts(vec![Input::new(InputKind::Zip5, &dir)]);
    o.curated = Some(levy_build::CuratedSource::Embedded);
    let report = build(&o).expect("build");
    let t = Table::open(report.bytes).expect("open");
    let d = day(2026, 3, 1);
    let at = |zip: &str, st: &str| t.resolve(&us(zip, st), d).unwrap();
    let on_100 = |from: Option<&Location>, to: &Location| {
        let sale = Sale {
            currency: Currency::USD,
            tax_included: false,
            customer: Customer::default(),
            automatic_tax: AutomaticTax::Auto,
            date: d,
            origin_country: None,
            rounding: levy_core::Rounding::Line,
            lines: vec![SaleLine {
                amount: Decimal::from(10_000),
                quantity: 1,
                per_unit: false,
                tax_code: t.category("GENERAL_MERCHANDISE").unwrap(),
            }],
        };
        t.calculate_from(from, to, &sale).expect("calculate")
    };
    // The December 2025 ZIP5 rows: Barry 75102 has Texas's 6.25% and a 0.5% county tax;
    // Austin 78701 a 1% city tax and a 1% district (transit) tax, 8.25% in all.
    let (barry, austin) = (at("75102", "TX"), at("78701", "TX"));
    // 34 TAC 3.334: shipped from Barry to Austin, Barry's county sales tax (0.5%), then
    // Austin's city use tax (1.5% local in all), not its transit tax (2.5% would pass the
    // 2% cap): 6.25 + 0.5 + 1 = 7.75% of $100.00.
    let c = on_100(Some(&barry), &austin);
    assert_eq!(c.sourcing, Sourcing::OriginWithUseTax);
    assert_eq!(c.total_tax, Decimal::from(775));
    // From Austin to Barry: Austin's 2% local already fills the cap: 8.25.
    assert_eq!(on_100(Some(&austin), &barry).total_tax, Decimal::from(825));
    // The same goods shipped from Oklahoma City: a sale between states, taxed at Austin.
    let okc = at("73102", "OK");
    let c = on_100(Some(&okc), &austin);
    assert_eq!(
        (c.sourcing, c.total_tax),
        (Sourcing::Destination, Decimal::from(825))
    );
    // Ohio (R.C. 5739.033): from Grandview Heights 43215 (county 1.25% and a 1% special
    // rate, 8% in all) to Cleveland 44113 (county 2.25%, 8%): the origin's jurisdictions.
    let c = on_100(Some(&at("43215", "OH")), &at("44113", "OH"));
    assert_eq!(c.sourcing, Sourcing::Origin);
    assert!(c.lines[0]
        .jurisdictions
        .iter()
        .all(|j| j.sourced == Sourced::Origin));
    let origin_codes: BTreeSet<String> = c.lines[0]
        .jurisdictions
        .iter()
        .map(|j| t.jurisdiction(j.jurisdiction).unwrap().code().to_string())
        .collect();
    assert_eq!(origin_codes, codes(&t, &at("43215", "OH")));
    assert_eq!(c.total_tax, Decimal::from(800));
}
