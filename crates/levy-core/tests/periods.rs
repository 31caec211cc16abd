//! Dated ZIP assignments, coverage, and the one loader for table files.

mod common;

use common::{d, line, sale, us_zip};
use levy_core::*;

fn day(y: i32, m: u32, dd: u32) -> Date {
    Date::from_ymd(y, m, dd).unwrap()
}

fn jur(b: &mut TableBuilder, code: &str, level: Level) -> JurisdictionId {
    b.jurisdiction(common::tennessee(code, level)).unwrap()
}

/// Tennessee: state 7% for all dates; Davidson County 2.25% written by a "source" in force
/// from 2026-01-01; ZIP 37203 first state-only for all dates (as the embedded default
/// assigns it), then refined from 2026-01-01 with the county, with full coverage.
fn layered() -> Table<AlignedBytes> {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    b.category("GENERAL_MERCHANDISE", "GENERAL_MERCHANDISE");
    let tn = jur(&mut b, "47", Level::State);
    let davidson = jur(&mut b, "47037", Level::County);
    b.rule(RuleSpec::flat(
        tn,
        "GENERAL_MERCHANDISE",
        d("0.07"),
        Date::MIN,
        Date::MAX,
        "STATE",
    ))
    .unwrap();
    b.rule(RuleSpec::flat(
        davidson,
        "GENERAL_MERCHANDISE",
        d("0.0225"),
        day(2026, 1, 1),
        Date::MAX,
        "COUNTY",
    ))
    .unwrap();
    b.region("US", "TN", "TENNESSEE", &[tn], "").unwrap();
    b.region_coverage("US", "TN", Coverage::StateOnly).unwrap();
    b.zip_period(
        37203,
        "TN",
        "NASHVILLE",
        &[tn],
        Date::MIN,
        Date::MAX,
        Coverage::StateOnly,
        0,
    )
    .unwrap();
    let replaced = b
        .zip_period(
            37203,
            "TN",
            "",
            &[tn, davidson],
            day(2026, 1, 1),
            Date::MAX,
            Coverage::Full,
            1,
        )
        .unwrap();
    // The refinement replaced the state-only period from its own first day on, nothing
    // before it.
    assert_eq!(replaced.len(), 1);
    assert_eq!(
        (replaced[0].from, replaced[0].to),
        (day(2026, 1, 1).0, Date::MAX.0)
    );
    // A ZIP assigned only from a source's month on: 37010, from 2025-12-01.
    b.zip_period(
        37010,
        "TN",
        "ADAMS",
        &[tn, davidson],
        day(2025, 12, 1),
        Date::MAX,
        Coverage::Full,
        1,
    )
    .unwrap();
    Table::from_bytes(&b.build(0).unwrap()).unwrap()
}

fn tax_on_100(t: &Table<AlignedBytes>, loc: &Location, date: Date) -> Calculation {
    let s = sale(vec![line(t, "GENERAL_MERCHANDISE", d("10000"))], date);
    t.calculate(loc, &s).unwrap()
}

#[test]
fn an_earlier_assignment_answers_outside_a_later_ones_dates() {
    let t = layered();
    // 2025-12-31: only the state-only period is in force: 7% of $100.00 = 700 cents, and
    // the answer says local taxes are not in it.
    let dec = day(2025, 12, 31);
    let loc = t.resolve(&us_zip("37203"), dec).unwrap();
    assert_eq!(loc.coverage, Coverage::StateOnly);
    assert_eq!(loc.precision, Precision::Postal);
    let c = tax_on_100(&t, &loc, dec);
    assert_eq!(c.total_tax, d("700"));
    assert_eq!(c.coverage, Coverage::StateOnly);
    // 2026-01-01: the refinement: 7% + 2.25% = 925 cents, full coverage; the city given
    // first (NASHVILLE) is kept since the refinement gave none.
    let jan = day(2026, 1, 1);
    let loc = t.resolve(&us_zip("37203"), jan).unwrap();
    assert_eq!(loc.coverage, Coverage::Full);
    assert_eq!(t.address_used(&loc).city, "NASHVILLE");
    let c = tax_on_100(&t, &loc, jan);
    assert_eq!(c.total_tax, d("925"));
    assert_eq!(c.coverage, Coverage::Full);
}

#[test]
fn a_date_no_period_covers_is_answered_for_the_state_and_says_so() {
    let t = layered();
    // 37010 is assigned from 2025-12-01 only. On 2025-11-30 nothing says what taxes it
    // beyond its state: 7% = 700 cents, precision PROVINCE, coverage from the region.
    let nov = day(2025, 11, 30);
    let loc = t.resolve(&us_zip("37010"), nov).unwrap();
    assert_eq!(loc.precision, Precision::Province);
    assert_eq!(loc.coverage, Coverage::StateOnly);
    assert_eq!(t.address_used(&loc).postal_code, "37010");
    assert_eq!(tax_on_100(&t, &loc, nov).total_tax, d("700"));
    // From 2025-12-01: state and county. The county's rule starts 2026-01-01, so in
    // December only the state's 7% is due, but the answer is complete (FULL).
    let dec = day(2025, 12, 1);
    let loc = t.resolve(&us_zip("37010"), dec).unwrap();
    assert_eq!(loc.precision, Precision::Postal);
    assert_eq!(loc.coverage, Coverage::Full);
    assert_eq!(tax_on_100(&t, &loc, dec).total_tax, d("700"));
}

#[test]
fn region_coverage_and_levels_are_recorded() {
    let t = layered();
    let region = t
        .data()
        .regions
        .iter()
        .find(|r| r.region.as_str() == "TN")
        .unwrap();
    assert_eq!(region.coverage, Coverage::StateOnly as u8);
    // The places of Tennessee name the state (bit 1) and a county (bit 3).
    assert_eq!(
        region.levels,
        (1 << Level::State as u8) | (1 << Level::County as u8)
    );
    let loc = t
        .resolve(
            &Address {
                region: "TN".into(),
                country: "US".into(),
                ..Default::default()
            },
            day(2026, 3, 1),
        )
        .unwrap();
    assert_eq!(loc.coverage, Coverage::StateOnly);
    // A country added with `region` is complete at its own level by default (VAT).
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    let de = b
        .jurisdiction(JurisdictionSpec {
            code: "DE".into(),
            name: "GERMANY".into(),
            level: Level::Country,
            country: "DE".into(),
            region: String::new(),
            authority: String::new(),
            tax_type: TaxType::Vat,
        })
        .unwrap();
    b.region("DE", "", "GERMANY", &[de], "").unwrap();
    let t = Table::from_bytes(&b.build(0).unwrap()).unwrap();
    let loc = t
        .resolve(
            &Address {
                country: "DE".into(),
                ..Default::default()
            },
            day(2026, 3, 1),
        )
        .unwrap();
    assert_eq!(loc.coverage, Coverage::Full);
}

#[test]
fn overlapping_periods_cut_each_other_exactly() {
    let mut b = TableBuilder::new();
    b.tax_code("GENERAL_MERCHANDISE", None, "goods").unwrap();
    let tn = jur(&mut b, "47", Level::State);
    let a = jur(&mut b, "A", Level::County);
    let c = jur(&mut b, "C", Level::County);
    b.region("US", "TN", "TENNESSEE", &[tn], "").unwrap();
    let z = |b: &mut TableBuilder, js: &[JurisdictionId], from, to| {
        b.zip_period(37203, "TN", "X", js, from, to, Coverage::Full, 0)
            .unwrap()
    };
    z(&mut b, &[tn, a], day(2026, 1, 1), day(2026, 12, 31));
    // A middle slice: the earlier period is split in two around it.
    let replaced = z(&mut b, &[tn, c], day(2026, 4, 1), day(2026, 6, 30));
    assert_eq!(
        (replaced[0].from, replaced[0].to),
        (day(2026, 4, 1).0, day(2026, 6, 30).0)
    );
    let rec = b.zip_record(37203).unwrap();
    let spans: Vec<(i32, i32)> = rec.periods.iter().map(|p| (p.from, p.to)).collect();
    assert_eq!(
        spans,
        vec![
            (day(2026, 1, 1).0, day(2026, 3, 31).0),
            (day(2026, 4, 1).0, day(2026, 6, 30).0),
            (day(2026, 7, 1).0, day(2026, 12, 31).0),
        ]
    );
    // A reversed interval is refused, not stored.
    assert!(b
        .zip_period(
            37203,
            "TN",
            "X",
            &[tn],
            day(2026, 2, 1),
            day(2026, 1, 1),
            Coverage::Full,
            0
        )
        .is_err());
    let t = Table::from_bytes(&b.build(0).unwrap()).unwrap();
    let has = |date: Date, code: &str| {
        let loc = t.resolve(&us_zip("37203"), date).unwrap();
        t.jset(loc.jset.unwrap())
            .any(|j| t.jurisdiction(j).unwrap().code() == code)
    };
    assert!(has(day(2026, 3, 31), "A"));
    assert!(has(day(2026, 4, 1), "C"));
    assert!(has(day(2026, 6, 30), "C"));
    assert!(has(day(2026, 7, 1), "A"));
}

/// A table file's path in a fresh directory under `target/tmp`; the directory is removed
/// when the returned guard is dropped.
fn temp_path(tag: &str) -> (levy_testkit::TempDir, std::path::PathBuf) {
    let dir = levy_testkit::target_temp_dir!(&format!("levy-core-{tag}"));
    let path = dir.join("table.levy");
    (dir, path)
}

#[test]
fn open_file_holds_its_own_copy_that_no_change_to_the_file_reaches() {
    let bytes = common::scenario_bytes();
    let (_dir, path) = temp_path("owned");
    std::fs::write(&path, &bytes).unwrap();
    let t = AnyTable::open_file(&path).unwrap();
    let before = t.resolve(&us_zip("37203"), common::day()).unwrap().jset;
    // The file copied over in place (truncated, then written: what `cp` does) and then cut
    // short: the open table reads its own bytes, unchanged, and keeps answering.
    std::fs::write(&path, b"not a table any more").unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(4)
        .unwrap();
    t.verify().unwrap();
    assert_eq!(
        t.resolve(&us_zip("37203"), common::day()).unwrap().jset,
        before
    );
    // And the file is in no mapping of this process.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let canonical = std::fs::canonicalize(&path).unwrap();
    assert!(!maps
        .lines()
        .any(|l| l.ends_with(canonical.to_str().unwrap())));
}

#[test]
fn open_file_refuses_what_is_not_a_regular_file_without_reading_it() {
    // /dev/zero would read forever, a FIFO would block the opener until a writer came, a
    // directory is no table: each is refused at once, saying why.
    let (dir, _) = temp_path("special");
    let fifo = dir.join("fifo.levy");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let mut paths = vec![std::path::PathBuf::from("/dev/zero"), dir.to_path_buf()];
    if made.is_ok_and(|s| s.success()) {
        paths.push(fifo);
    }
    for p in paths {
        for e in [
            AnyTable::open_file(&p).unwrap_err(),
            // SAFETY: nothing rewrites these paths (and none is opened).
            unsafe { AnyTable::open_file_mapped(&p) }.unwrap_err(),
        ] {
            assert!(
                e.to_string().contains("not a regular file"),
                "{}: {e}",
                p.display()
            );
        }
    }
}

/// The bytes this thread has read so far (`rchar` of `/proc/thread-self/io`: every read
/// call's bytes, from files and the page cache alike).
fn thread_bytes_read() -> u64 {
    let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
    io.lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn a_table_file_of_another_length_than_its_header_says_is_refused_before_it_is_read() {
    // A table followed by 60 GB of holes (a sparse file, as the issue made it: `levy info`
    // read 5.8 GB of it in 30 s), and a file whose header says it is 2 GiB long and is:
    // both are refused from their header and length, having read next to nothing.
    let bytes = common::scenario_bytes();
    let (dir, sparse) = temp_path("sparse");
    std::fs::write(&sparse, &bytes).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&sparse)
        .unwrap()
        .set_len(60 << 30)
        .unwrap();
    let mut long_header = bytes[..levy_core::table::HEADER_LEN].to_vec();
    let two_gib: u64 = 2 << 30;
    let archive = two_gib - levy_core::table::HEADER_LEN as u64;
    long_header[16..24].copy_from_slice(&archive.to_le_bytes());
    let long = dir.join("long.levy");
    std::fs::write(&long, &long_header).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&long)
        .unwrap()
        .set_len(two_gib)
        .unwrap();
    let after = (60u64 << 30) - bytes.len() as u64;
    for (path, want) in [
        (&sparse, format!("{after} bytes after the archive")),
        (
            &long,
            format!("table file is {two_gib} bytes, larger than the 1073741824 bytes"),
        ),
    ] {
        let read = thread_bytes_read();
        for e in [
            AnyTable::open_file(path).unwrap_err(),
            // SAFETY: the test's own files, which nothing rewrites.
            unsafe { AnyTable::open_file_mapped(path) }.unwrap_err(),
        ] {
            assert!(e.to_string().contains(&want), "{}: {e}", path.display());
        }
        // Two opens read two headers (and this thread's reads of /proc): far below a MiB.
        let spent = thread_bytes_read() - read;
        assert!(spent < 1 << 20, "{}: {spent} bytes read", path.display());
    }
    // The table itself, at its own length, still opens both ways.
    std::fs::write(&sparse, &bytes).unwrap();
    AnyTable::open_file(&sparse).unwrap();
    // SAFETY: as above.
    unsafe { AnyTable::open_file_mapped(&sparse) }.unwrap();
}

#[test]
fn open_file_mapped_maps_the_table_and_holds_no_copy() {
    let bytes = common::scenario_bytes();
    let (_dir, path) = temp_path("mapped");
    std::fs::write(&path, &bytes).unwrap();
    // SAFETY: the test's own file, which nothing rewrites while the table lives.
    let t = unsafe { AnyTable::open_file_mapped(&path) }.unwrap();
    assert_eq!(t.bytes().len(), bytes.len());
    // The file is in this process's memory map, and the table reads from that mapping.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let canonical = std::fs::canonicalize(&path).unwrap();
    let line = maps
        .lines()
        .find(|l| l.ends_with(canonical.to_str().unwrap()))
        .expect("the table file is mapped");
    let range = line.split_whitespace().next().unwrap();
    let (lo, hi) = range.split_once('-').unwrap();
    let (lo, hi) = (
        usize::from_str_radix(lo, 16).unwrap(),
        usize::from_str_radix(hi, 16).unwrap(),
    );
    let at = t.bytes().as_ptr() as usize;
    assert!(
        lo <= at && at < hi,
        "table bytes at {at:#x} are not in the mapping {range}"
    );
    let loc = t.resolve(&us_zip("37203"), common::day()).unwrap();
    assert!(loc.jset.is_some());
    drop(t);
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn open_file_refuses_damaged_short_empty_and_missing_files() {
    let bytes = common::scenario_bytes();
    // Any single byte of the content changed: the hash fails; the error says what to do.
    let (_dir, path) = temp_path("damaged");
    for at in [64, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x20;
        std::fs::write(&path, &damaged).unwrap();
        let e = AnyTable::open_file(&path).unwrap_err();
        assert!(
            matches!(e, TableError::HashMismatch { .. }),
            "byte {at}: {e:?}"
        );
        assert!(e.to_string().contains("re-copy or rebuild"), "{e}");
    }
    // An empty file (which cannot be mapped) and a cut header are truncated tables.
    std::fs::write(&path, b"").unwrap();
    assert_eq!(
        AnyTable::open_file(&path).unwrap_err(),
        TableError::Truncated {
            len: 0,
            expected: table::HEADER_LEN
        }
    );
    std::fs::write(&path, &bytes[..40]).unwrap();
    assert_eq!(
        AnyTable::open_file(&path).unwrap_err(),
        TableError::Truncated {
            len: 40,
            expected: table::HEADER_LEN
        }
    );
    std::fs::write(
        &path,
        b"PK\x03\x04 this is a zip archive, not a table, but it is long enough",
    )
    .unwrap();
    assert_eq!(
        AnyTable::open_file(&path).unwrap_err(),
        TableError::NotATable
    );
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(
        AnyTable::open_file(&path).unwrap_err(),
        TableError::Io { .. }
    ));
}
