//! `levy bench`: levy's lookups measured on a user's own table, each beside a baseline
//! measured in the same run on the same keys.
//!
//! Every key is drawn from the table itself (its ZIP codes, ZIP+4 ranges, street ranges and
//! IP ranges, in a random order fixed by the seed), and the baseline is built from the same
//! table: an in-memory SQLite database with one indexed row per key holding the rate that
//! levy would apply there (the sum of the general-merchandise rates of the place's
//! jurisdictions on the day measured), so both sides answer the same question. For IP
//! lookups the baseline is `maxminddb` on the `--mmdb` database when one is given.
//!
//! # How a figure is taken
//!
//! A measure runs `batches` rounds; each round times `batch` consecutive operations of
//! levy, then `batch` of the baseline, on the next keys of the shuffled list (so both see
//! the same keys and the same machine load). A round's time divided by `batch` is one
//! sample; `median_ns` and `p99_ns` are over those samples. Timing a batch rather than one
//! call keeps the clock's own cost (some 20 ns) out of the figure. `ratio` is the
//! baseline's median over levy's: above 1, levy is faster.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;
use std::time::Instant;

use levy_core::{
    Address, AnyTable, AutomaticTax, Calculation, Currency, Customer, Date, Decimal, JsetId,
    Location, Rounding, Sale, SaleLine, Table,
};
use rusqlite::{params, Connection};
use serde::Serialize;

/// How much to measure.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// How many distinct keys to draw per measure (fewer when the table holds fewer).
    pub keys: usize,
    /// Rounds per measure.
    pub batches: usize,
    /// Operations per round.
    pub batch: usize,
    /// Seed of the key order.
    pub seed: u64,
    /// The day the sales are dated (decides the rates in force).
    pub date: Date,
    /// Print progress on stderr.
    pub progress: bool,
}

impl BenchOptions {
    /// The defaults of `levy bench`: 100,000 keys, 200 rounds of 1,000 operations.
    pub fn new(date: Date) -> Self {
        BenchOptions {
            keys: 100_000,
            batches: 200,
            batch: 1_000,
            seed: 0x1e5_0b3e,
            date,
            progress: false,
        }
    }
}

/// One measure: levy and its baseline on the same keys.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Measure {
    /// What was measured, for example `zip5_resolve_calculate`.
    pub name: String,
    /// levy's median time per operation, nanoseconds.
    pub median_ns: f64,
    /// levy's 99th percentile time per operation (over rounds), nanoseconds.
    pub p99_ns: f64,
    /// What levy was measured against, for example `sqlite` or `maxminddb`.
    pub baseline: String,
    /// The baseline's median time per operation, nanoseconds.
    pub baseline_median_ns: f64,
    /// The baseline's median over levy's: how many times faster levy is.
    pub ratio: f64,
    /// How many distinct keys the measure cycled through.
    pub keys: usize,
}

/// What to measure: the table, the file it came from (for the open measure; `None` for
/// the embedded default) and an IP database to compare IP lookups with.
pub struct Subject<'a> {
    /// The table.
    pub table: &'a AnyTable,
    /// The table's file, when it came from one.
    pub path: Option<&'a Path>,
    /// A MaxMind database (`.mmdb`) to measure IP lookups against.
    pub mmdb: Option<&'a Path>,
}

/// A small, fast, deterministic generator (SplitMix64), so that a seed gives the same keys
/// in every run.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
    /// `n` indexes below `len`, in random order, without repeats while `n <= len`.
    fn sample(&mut self, len: usize, n: usize) -> Vec<usize> {
        let mut all: Vec<usize> = (0..len).collect();
        for i in (1..len).rev() {
            let j = self.below(i as u64 + 1) as usize;
            all.swap(i, j);
        }
        all.truncate(n);
        all
    }
}

/// Rates as integers in units of 10^-10, so the baseline's arithmetic is one integer
/// multiply and a rounding: as cheap as a database user could make it.
const RATE_SCALE: i128 = 10_000_000_000;

/// The baseline's tax: `amount × rate` (rate in units of 10^-10, as the SQLite baseline
/// stores it), rounded half up to the minor unit.
#[inline]
pub fn baseline_tax(amount_minor: i64, rate: i64) -> i64 {
    ((amount_minor as i128 * rate as i128 + RATE_SCALE / 2) / RATE_SCALE) as i64
}

/// The amount of every measured sale, in cents: $123.45.
pub const AMOUNT_MINOR: i64 = 12_345;

/// The keys and the baseline database drawn from one table.
pub struct Workload {
    date: Date,
    sale: Sale,
    zip5: Vec<(Address, u32)>,
    zip4: Vec<(Address, u32, u16)>,
    streets: Vec<(Address, u32, String, u32)>,
    ipv4: Vec<Ipv4Addr>,
    ipv6: Vec<Ipv6Addr>,
    db: Connection,
}

impl Workload {
    /// Draws up to `keys` keys of each kind from `table` and builds the SQLite baseline of
    /// the same data.
    pub fn from_table<D>(table: &Table<D>, keys: usize, seed: u64, date: Date) -> Workload {
        let mut rng = SplitMix(seed);
        let general = table
            .category("GENERAL_MERCHANDISE")
            .or_else(|| table.tax_code("GENERAL_MERCHANDISE"));
        let mut rates = SetRates {
            table,
            general,
            date,
            rates: std::collections::HashMap::new(),
        };
        let db = baseline_db();
        let tx = db.unchecked_transaction().expect("a transaction");
        // The keys of each kind in turn, from one generator: the same seed, the same keys.
        let zip5 = zip5_keys(&tx, &mut rates, &mut rng, keys);
        let zip4 = zip4_keys(&tx, &mut rates, &mut rng, keys);
        let streets = street_keys(&tx, &mut rates, &mut rng, keys);
        insert_ip_ranges(&tx, table);
        let (ipv4, ipv6) = ip_keys(table, &mut rng, keys);
        tx.commit().expect("commit the baseline's data");
        let sale = Sale {
            currency: Currency::USD,
            tax_included: false,
            customer: Customer::default(),
            automatic_tax: AutomaticTax::Auto,
            date,
            origin_country: None,
            rounding: Rounding::Line,
            lines: general
                .map(|code| SaleLine {
                    amount: Decimal::from(AMOUNT_MINOR),
                    quantity: 1,
                    per_unit: false,
                    tax_code: code,
                })
                .into_iter()
                .collect(),
        };
        Workload {
            date,
            sale,
            zip5,
            zip4,
            streets,
            ipv4,
            ipv6,
            db,
        }
    }

    /// The ZIP5 keys: an address holding only the ZIP code, and the ZIP as a number.
    pub fn zip5_keys(&self) -> &[(Address, u32)] {
        &self.zip5
    }

    /// The IPv4 keys.
    pub fn ipv4_keys(&self) -> &[Ipv4Addr] {
        &self.ipv4
    }

    /// The one-line sale every measure prices ($123.45 of general merchandise).
    pub fn sale(&self) -> &Sale {
        &self.sale
    }

    /// The SQLite baseline: tables `zip5 (zip, rate)`, `zip4 (zip5, low, high, rate)`,
    /// `streets (zip5, street, low, high, rate)`, `ipv4 (start, end, country, region)` and
    /// `ipv6` likewise, rates in units of 10^-10.
    pub fn sqlite(&self) -> &Connection {
        &self.db
    }

    /// How many keys of each kind: ZIP5, ZIP+4, street, IPv4, IPv6.
    pub fn key_counts(&self) -> [usize; 5] {
        [
            self.zip5.len(),
            self.zip4.len(),
            self.streets.len(),
            self.ipv4.len(),
            self.ipv6.len(),
        ]
    }
}

/// The rate levy applies at each jurisdiction set on the day measured (the sum of its
/// jurisdictions' plain general-merchandise rates), in units of 10^-10, computed once a set.
struct SetRates<'t, D> {
    table: &'t Table<D>,
    general: Option<levy_core::TaxCodeId>,
    date: Date,
    rates: std::collections::HashMap<u32, i64>,
}

impl<D> SetRates<'_, D> {
    fn of(&mut self, jset: JsetId) -> i64 {
        let (table, general, date) = (self.table, self.general, self.date);
        *self.rates.entry(jset.0).or_insert_with(|| {
            let mut sum = Decimal::ZERO;
            if let Some(code) = general {
                for j in table.jset(jset) {
                    for (_, r) in table.rules_of(j) {
                        let (from, to) = r.interval();
                        if r.tax_code() == code && from <= date && date <= to && r.is_plain() {
                            sum += r.rate();
                        }
                    }
                }
            }
            (sum * Decimal::from(RATE_SCALE as i64))
                .round()
                .try_into()
                .unwrap_or(0)
        })
    }
}

/// An in-memory SQLite database with the baseline's tables, empty.
fn baseline_db() -> Connection {
    let db = Connection::open_in_memory().expect("an in-memory SQLite database");
    db.execute_batch(
        "CREATE TABLE zip5 (zip INTEGER PRIMARY KEY, rate INTEGER NOT NULL);
         CREATE TABLE zip4 (zip5 INTEGER, low INTEGER, high INTEGER, rate INTEGER);
         CREATE INDEX zip4_key ON zip4 (zip5, low);
         CREATE TABLE streets (zip5 INTEGER, street TEXT, low INTEGER, high INTEGER,
                               rate INTEGER);
         CREATE INDEX streets_key ON streets (zip5, street, low);
         CREATE TABLE ipv4 (start INTEGER PRIMARY KEY, end INTEGER, country TEXT,
                            region TEXT);
         CREATE TABLE ipv6 (start BLOB PRIMARY KEY, end BLOB, country TEXT, region TEXT)
             WITHOUT ROWID;",
    )
    .expect("create the baseline's tables");
    db
}

/// ZIP5 keys: every ZIP with a period in force on the day (else its state's set) into the
/// baseline, and up to `keys` of them drawn, each as an address holding only the ZIP.
fn zip5_keys<D>(
    tx: &rusqlite::Transaction<'_>,
    rates: &mut SetRates<'_, D>,
    rng: &mut SplitMix,
    keys: usize,
) -> Vec<(Address, u32)> {
    let (table, date) = (rates.table, rates.date);
    let mut zip5 = Vec::new();
    let mut ins = tx
        .prepare("INSERT INTO zip5 VALUES (?1, ?2)")
        .expect("prepare");
    for z in table.data().zips.iter() {
        let zip = z.zip.to_native();
        let jset = z
            .periods
            .iter()
            .find(|p| p.from.to_native() <= date.0 && date.0 <= p.to.to_native())
            .map(|p| JsetId(p.jset.to_native()))
            .or_else(|| table.region("US", z.state.as_str()).map(|r| r.0));
        let Some(jset) = jset else { continue };
        ins.execute(params![zip, rates.of(jset)]).expect("insert");
        zip5.push(zip);
    }
    rng.sample(zip5.len(), keys)
        .into_iter()
        .map(|i| (us_address("", &format!("{:05}", zip5[i])), zip5[i]))
        .collect()
}

/// ZIP+4 keys: every range in force on the day into the baseline, and a random plus-4
/// inside each of up to `keys` ranges drawn.
fn zip4_keys<D>(
    tx: &rusqlite::Transaction<'_>,
    rates: &mut SetRates<'_, D>,
    rng: &mut SplitMix,
    keys: usize,
) -> Vec<(Address, u32, u16)> {
    let date = rates.date;
    let mut zip4 = Vec::new();
    let mut ins = tx
        .prepare("INSERT INTO zip4 VALUES (?1, ?2, ?3, ?4)")
        .expect("prepare");
    for r in rates.table.data().zip4.iter() {
        if r.from.to_native() <= date.0 && date.0 <= r.to.to_native() {
            let (z, lo, hi) = (r.zip5.to_native(), r.low.to_native(), r.high.to_native());
            ins.execute(params![z, lo, hi, rates.of(JsetId(r.jset.to_native()))])
                .expect("insert");
            zip4.push((z, lo, hi));
        }
    }
    rng.sample(zip4.len(), keys)
        .into_iter()
        .map(|i| {
            let (z, lo, hi) = zip4[i];
            let plus4 = lo + rng.below(u64::from(hi - lo) + 1) as u16;
            (us_address("", &format!("{z:05}-{plus4:04}")), z, plus4)
        })
        .collect()
}

/// Street keys: every range in force on the day into the baseline, and a house number of
/// the right parity inside each of up to `keys` ranges drawn.
fn street_keys<D>(
    tx: &rusqlite::Transaction<'_>,
    rates: &mut SetRates<'_, D>,
    rng: &mut SplitMix,
    keys: usize,
) -> Vec<(Address, u32, String, u32)> {
    let date = rates.date;
    let mut streets = Vec::new();
    let mut ins = tx
        .prepare("INSERT INTO streets VALUES (?1, ?2, ?3, ?4, ?5)")
        .expect("prepare");
    for r in rates.table.data().streets.iter() {
        if r.from.to_native() <= date.0 && date.0 <= r.to.to_native() {
            let (z, lo, hi) = (r.zip5.to_native(), r.low.to_native(), r.high.to_native());
            let street = r.street.as_str();
            let rate = rates.of(JsetId(r.jset.to_native()));
            ins.execute(params![z, street, lo, hi, rate])
                .expect("insert");
            streets.push((z, street.to_string(), lo, hi, r.parity));
        }
    }
    rng.sample(streets.len(), keys)
        .into_iter()
        .filter_map(|i| {
            let (z, ref street, lo, hi, parity) = streets[i];
            let mut n = lo + rng.below(u64::from(hi - lo) + 1) as u32;
            let want = match parity {
                b'O' => Some(1),
                b'E' => Some(0),
                _ => None,
            };
            if want.is_some_and(|w| n % 2 != w) {
                n = if n < hi { n + 1 } else { n.checked_sub(1)? };
            }
            if n < lo || n == 0 {
                return None;
            }
            let line1 = format!("{n} {street}");
            Some((us_address(&line1, &format!("{z:05}")), z, street.clone(), n))
        })
        .collect()
}

/// Every IP range of the table into the baseline, with its place's country and region.
fn insert_ip_ranges<D>(tx: &rusqlite::Transaction<'_>, table: &Table<D>) {
    let d = table.data();
    let mut ins4 = tx
        .prepare("INSERT INTO ipv4 VALUES (?1, ?2, ?3, ?4)")
        .expect("prepare");
    let mut ins6 = tx
        .prepare("INSERT INTO ipv6 VALUES (?1, ?2, ?3, ?4)")
        .expect("prepare");
    let place = |loc: u32| {
        d.ip_locations
            .get(loc as usize)
            .map(|p| {
                (
                    String::from_utf8_lossy(&p.country).into_owned(),
                    p.region.as_str().to_string(),
                )
            })
            .unwrap_or_default()
    };
    for r in d.ipv4.iter() {
        let (c, reg) = place(r.location.to_native());
        ins4.execute(params![r.start.to_native(), r.end.to_native(), c, reg])
            .expect("insert");
    }
    for r in d.ipv6.iter() {
        let (c, reg) = place(r.location.to_native());
        ins6.execute(params![&r.start[..], &r.end[..], c, reg])
            .expect("insert");
    }
}

/// IP keys: a random address inside each of up to `keys` IPv4 ranges drawn, then likewise
/// IPv6.
fn ip_keys<D>(table: &Table<D>, rng: &mut SplitMix, keys: usize) -> (Vec<Ipv4Addr>, Vec<Ipv6Addr>) {
    let d = table.data();
    let ipv4 = rng
        .sample(d.ipv4.len(), keys)
        .into_iter()
        .map(|i| {
            let r = &d.ipv4[i];
            let (s, e) = (r.start.to_native(), r.end.to_native());
            Ipv4Addr::from(s + rng.below(u64::from(e - s) + 1) as u32)
        })
        .collect();
    let ipv6 = rng
        .sample(d.ipv6.len(), keys)
        .into_iter()
        .map(|i| {
            let r = &d.ipv6[i];
            let (s, e) = (u128::from_be_bytes(r.start), u128::from_be_bytes(r.end));
            let span = e - s;
            let off = if span >= u128::from(u64::MAX) {
                u128::from(rng.next())
            } else {
                u128::from(rng.below(span as u64 + 1))
            };
            Ipv6Addr::from(s + off)
        })
        .collect();
    (ipv4, ipv6)
}

fn us_address(line1: &str, postal: &str) -> Address {
    Address {
        line1: line1.to_string(),
        postal_code: postal.to_string(),
        country: "US".to_string(),
        ..Default::default()
    }
}

/// What a caller keeps from one sale to the next: the location it resolves into and the
/// calculation it calculates into ([`Table::resolve_into`], [`Table::calculate_into`]), so
/// that a stream of sales allocates nothing once their strings and vectors have grown.
#[derive(Debug, Default)]
pub struct Buffers {
    location: Location,
    calc: Option<Calculation>,
}

/// levy's answer for one address: resolve, then calculate the one-line sale, in `buffers`
/// (the path without allocation that a high-volume caller takes).
#[inline]
pub fn levy_tax<D>(
    table: &Table<D>,
    address: &Address,
    sale: &Sale,
    date: Date,
    buffers: &mut Buffers,
) -> Decimal {
    if table
        .resolve_into(address, date, &mut buffers.location)
        .is_err()
    {
        return Decimal::ZERO;
    }
    match &mut buffers.calc {
        Some(calc) => match table.calculate_into(None, &buffers.location, sale, calc) {
            Ok(()) => calc.total_tax,
            Err(_) => Decimal::ZERO,
        },
        None => match table.calculate(&buffers.location, sale) {
            Ok(calc) => buffers.calc.insert(calc).total_tax,
            Err(_) => Decimal::ZERO,
        },
    }
}

/// levy's answer for one address as a caller keeping nothing gets it: a new location and a
/// new calculation each time ([`Table::resolve`], [`Table::calculate`]).
#[inline]
pub fn levy_tax_fresh<D>(table: &Table<D>, address: &Address, sale: &Sale, date: Date) -> Decimal {
    match table.resolve(address, date) {
        Ok(loc) => table
            .calculate(&loc, sale)
            .map(|c| c.total_tax)
            .unwrap_or_default(),
        Err(_) => Decimal::ZERO,
    }
}

/// The arguments of the profiling loops (`examples/zip5_profile.rs`,
/// `examples/batch_profile.rs`): `TABLE [N [KEYS]]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileArgs {
    /// The table file.
    pub table: String,
    /// How many sales to run (default 3,000,000).
    pub sales: usize,
    /// How many random keys to draw from the table (default 100,000; a few hundred keep
    /// the sales' records in cache).
    pub keys: usize,
}

impl ProfileArgs {
    /// Reads `args` (the program's name left out) for the loop called `name`; the error is
    /// the line to print before exiting with status 2.
    pub fn parse(name: &str, mut args: impl Iterator<Item = String>) -> Result<Self, String> {
        let table = args
            .next()
            .ok_or_else(|| format!("usage: {name} TABLE [N [KEYS]]"))?;
        let sales = match args.next().map(|s| s.parse()) {
            None => 3_000_000,
            Some(Ok(n)) => n,
            Some(Err(e)) => return Err(format!("{name}: N: {e}")),
        };
        let keys = match args.next().map(|s| s.parse()) {
            None => 100_000,
            Some(Ok(k)) if k > 0 => k,
            Some(_) => return Err(format!("{name}: KEYS: a positive number")),
        };
        Ok(ProfileArgs { table, sales, keys })
    }
}

/// Median and 99th percentile of a set of samples.
fn stats(samples: &mut [f64]) -> (f64, f64) {
    if samples.is_empty() {
        return (0.0, 0.0);
    }
    samples.sort_by(f64::total_cmp);
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.99))
}

/// Times `rounds` rounds of `batch` calls of `levy` and of `base`, interleaved, and makes
/// the measure. Each closure is given the round's first operation index.
fn measure(
    name: &str,
    baseline: &str,
    keys: usize,
    rounds: usize,
    batch: usize,
    mut levy: impl FnMut(usize),
    mut base: impl FnMut(usize),
) -> Measure {
    let (mut a, mut b) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    // One warm-up round each, not counted.
    levy(0);
    base(0);
    for round in 0..rounds {
        let first = round * batch;
        let t = Instant::now();
        levy(first);
        a.push(t.elapsed().as_nanos() as f64 / batch as f64);
        let t = Instant::now();
        base(first);
        b.push(t.elapsed().as_nanos() as f64 / batch as f64);
    }
    let (median_ns, p99_ns) = stats(&mut a);
    let (baseline_median_ns, _) = stats(&mut b);
    Measure {
        name: name.to_string(),
        median_ns,
        p99_ns,
        baseline: baseline.to_string(),
        baseline_median_ns,
        ratio: if median_ns > 0.0 {
            baseline_median_ns / median_ns
        } else {
            0.0
        },
        keys,
    }
}

/// Runs every measure the table allows and returns them in order: `open_verify`,
/// `zip5_resolve_calculate`, `zip4_resolve_calculate`, `street_resolve_calculate`,
/// `ipv4_lookup`, `ipv6_lookup`, `batch_calculate`. A measure whose keys the table lacks
/// (a table without street ranges, say) is left out.
pub fn run(subject: &Subject<'_>, opts: &BenchOptions) -> Result<Vec<Measure>, String> {
    let table = subject.table;
    let say = |s: &str| {
        if opts.progress {
            eprintln!("levy bench: {s}");
        }
    };
    let mut out = Vec::new();
    let (rounds, batch) = (opts.batches.max(1), opts.batch.max(1));

    say("open and verify");
    out.push(measure_open(subject, rounds.clamp(1, 20)));

    say("drawing keys and building the SQLite baseline");
    let w = Workload::from_table(table, opts.keys, opts.seed, opts.date);
    if w.sale.lines.is_empty() {
        return Err("the table has no GENERAL_MERCHANDISE category to price a sale".into());
    }
    let date = w.date;
    // A measure the table has no keys for is left out of the output; progress says which
    // and why, so that a missing line is not mistaken for a failure.
    let left_out = |what: &str, keys: &str| {
        say(&format!(
            "{what}: left out, the table holds no {keys} in force on {date}"
        ))
    };
    let runs = Runs {
        table,
        w: &w,
        rounds,
        batch,
    };
    if w.zip5.is_empty() {
        left_out("ZIP5 resolve + calculate and batch of sales", "ZIP5");
    } else {
        say("ZIP5 resolve + calculate");
        out.push(runs.zip5()?);
    }
    if w.zip4.is_empty() {
        left_out("ZIP+4 resolve + calculate", "ZIP+4 range");
    } else {
        say("ZIP+4 resolve + calculate");
        out.push(runs.zip4()?);
    }
    if w.streets.is_empty() {
        left_out("street resolve + calculate", "street range");
    } else {
        say("street resolve + calculate");
        out.push(runs.streets()?);
    }
    let mmdb = match subject.mmdb {
        Some(p) => {
            Some(maxminddb::Reader::open_readfile(p).map_err(|e| format!("{}: {e}", p.display()))?)
        }
        None => None,
    };
    for (v6, name) in [(false, "ipv4_lookup"), (true, "ipv6_lookup")] {
        let keys: Vec<IpAddr> = if v6 {
            w.ipv6.iter().map(|&a| IpAddr::V6(a)).collect()
        } else {
            w.ipv4.iter().map(|&a| IpAddr::V4(a)).collect()
        };
        if keys.is_empty() {
            say(&format!(
                "{name}: left out, the table holds no {} range",
                if v6 { "IPv6" } else { "IPv4" }
            ));
            continue;
        }
        say(name);
        out.push(runs.ip(name, &keys, v6, mmdb.as_ref())?);
    }
    if !w.zip5.is_empty() {
        say("batch of sales");
        out.push(runs.batch()?);
    }
    Ok(out)
}

/// Opening and verifying the table's file against reading it (`fs_read`), or, for the
/// embedded table, verifying it against copying its bytes (`memcpy`).
fn measure_open(subject: &Subject<'_>, rounds: usize) -> Measure {
    let table = subject.table;
    match subject.path {
        Some(path) => {
            let m = measure(
                "open_verify",
                "fs_read",
                1,
                rounds,
                1,
                |_| {
                    let t = AnyTable::open_file(path).expect("the table opened once already");
                    std::hint::black_box(t.header().archive_len);
                },
                |_| {
                    let b = std::fs::read(path).expect("readable");
                    std::hint::black_box(b.len());
                },
            );
            std::hint::black_box(());
            m
        }
        None => measure(
            "open_verify",
            "memcpy",
            1,
            rounds,
            1,
            |_| table.verify().expect("the embedded table verifies"),
            |_| {
                let b = table.bytes().to_vec();
                std::hint::black_box(b.len());
            },
        ),
    }
}

/// The measures on one workload: its table, keys and baseline, and the rounds and batch.
struct Runs<'a> {
    table: &'a AnyTable,
    w: &'a Workload,
    rounds: usize,
    batch: usize,
}

impl Runs<'_> {
    /// `zip5_resolve_calculate`: levy on the ZIP5 keys against the SQLite lookup by ZIP.
    fn zip5(&self) -> Result<Measure, String> {
        let (table, w, batch) = (self.table, self.w, self.batch);
        let (sale, date) = (&w.sale, w.date);
        let mut buffers = Buffers::default();
        let keys = &w.zip5;
        let mut stmt =
            w.db.prepare_cached("SELECT rate FROM zip5 WHERE zip = ?1")
                .map_err(|e| e.to_string())?;
        Ok(measure(
            "zip5_resolve_calculate",
            "sqlite",
            keys.len(),
            self.rounds,
            batch,
            |first| {
                for i in first..first + batch {
                    let (a, _) = &keys[i % keys.len()];
                    std::hint::black_box(levy_tax(table, a, sale, date, &mut buffers));
                }
            },
            |first| {
                for i in first..first + batch {
                    let (a, _) = &keys[i % keys.len()];
                    let zip: u32 = a.postal_code.parse().unwrap_or(0);
                    let rate: i64 = stmt.query_row([zip], |r| r.get(0)).unwrap_or(0);
                    std::hint::black_box(baseline_tax(AMOUNT_MINOR, rate));
                }
            },
        ))
    }

    /// `zip4_resolve_calculate`: levy on the ZIP+4 keys against the SQLite range lookup.
    fn zip4(&self) -> Result<Measure, String> {
        let (table, w, batch) = (self.table, self.w, self.batch);
        let (sale, date) = (&w.sale, w.date);
        let mut buffers = Buffers::default();
        let keys = &w.zip4;
        let mut stmt =
            w.db.prepare_cached(
                "SELECT rate, high FROM zip4 WHERE zip5 = ?1 AND low <= ?2
                 ORDER BY low DESC LIMIT 1",
            )
            .map_err(|e| e.to_string())?;
        Ok(measure(
            "zip4_resolve_calculate",
            "sqlite",
            keys.len(),
            self.rounds,
            batch,
            |first| {
                for i in first..first + batch {
                    let (a, _, _) = &keys[i % keys.len()];
                    std::hint::black_box(levy_tax(table, a, sale, date, &mut buffers));
                }
            },
            |first| {
                for i in first..first + batch {
                    let (a, _, _) = &keys[i % keys.len()];
                    let (z, p) = a.postal_code.split_once('-').unwrap_or(("", ""));
                    let (z, p): (u32, u16) = (z.parse().unwrap_or(0), p.parse().unwrap_or(0));
                    let row: Option<(i64, u16)> = stmt
                        .query_row(params![z, p], |r| Ok((r.get(0)?, r.get(1)?)))
                        .ok();
                    let rate = row.filter(|&(_, high)| p <= high).map_or(0, |r| r.0);
                    std::hint::black_box(baseline_tax(AMOUNT_MINOR, rate));
                }
            },
        ))
    }

    /// `street_resolve_calculate`: levy on the street keys against the SQLite range lookup.
    fn streets(&self) -> Result<Measure, String> {
        let (table, w, batch) = (self.table, self.w, self.batch);
        let (sale, date) = (&w.sale, w.date);
        let mut buffers = Buffers::default();
        let keys = &w.streets;
        let mut stmt =
            w.db.prepare_cached(
                "SELECT rate, high FROM streets WHERE zip5 = ?1 AND street = ?2 AND low <= ?3
                 ORDER BY low DESC LIMIT 1",
            )
            .map_err(|e| e.to_string())?;
        Ok(measure(
            "street_resolve_calculate",
            "sqlite",
            keys.len(),
            self.rounds,
            batch,
            |first| {
                for i in first..first + batch {
                    let (a, _, _, _) = &keys[i % keys.len()];
                    std::hint::black_box(levy_tax(table, a, sale, date, &mut buffers));
                }
            },
            |first| {
                for i in first..first + batch {
                    let (_, z, street, n) = &keys[i % keys.len()];
                    let row: Option<(i64, u32)> = stmt
                        .query_row(params![z, street, n], |r| Ok((r.get(0)?, r.get(1)?)))
                        .ok();
                    let rate = row.filter(|&(_, high)| *n <= high).map_or(0, |r| r.0);
                    std::hint::black_box(baseline_tax(AMOUNT_MINOR, rate));
                }
            },
        ))
    }

    /// `ipv4_lookup` or `ipv6_lookup` (`v6`): levy's lookup of `keys` against `mmdb` when
    /// it can answer them (an IPv4-only database cannot answer IPv6 keys), else against
    /// the SQLite range lookup.
    fn ip<S: AsRef<[u8]>>(
        &self,
        name: &str,
        keys: &[IpAddr],
        v6: bool,
        mmdb: Option<&maxminddb::Reader<S>>,
    ) -> Result<Measure, String> {
        let (table, batch) = (self.table, self.batch);
        let use_mmdb = match mmdb.map(|r| r.metadata.ip_version) {
            Some(6) => true,
            Some(_) => !v6,
            None => false,
        };
        let levy = |first: usize| {
            for i in first..first + batch {
                let ip = keys[i % keys.len()];
                std::hint::black_box(table.lookup_ip(ip).map(|p| p.region().len()));
            }
        };
        if let (true, Some(reader)) = (use_mmdb, mmdb) {
            return Ok(measure(
                name,
                "maxminddb",
                keys.len(),
                self.rounds,
                batch,
                levy,
                |first| {
                    for i in first..first + batch {
                        let ip = keys[i % keys.len()];
                        let place = reader.lookup::<MmdbPlace<'_>>(ip).ok().flatten();
                        std::hint::black_box(place.map(|p| p.region().len()));
                    }
                },
            ));
        }
        let sql = if v6 {
            "SELECT end, country, region FROM ipv6 WHERE start <= ?1
             ORDER BY start DESC LIMIT 1"
        } else {
            "SELECT end, country, region FROM ipv4 WHERE start <= ?1
             ORDER BY start DESC LIMIT 1"
        };
        let mut stmt = self.w.db.prepare_cached(sql).map_err(|e| e.to_string())?;
        Ok(measure(
            name,
            "sqlite",
            keys.len(),
            self.rounds,
            batch,
            levy,
            |first| {
                for i in first..first + batch {
                    let found = sqlite_ip_region(&mut stmt, keys[i % keys.len()]);
                    std::hint::black_box(found.is_ok());
                }
            },
        ))
    }

    /// `batch_calculate`: `Table::calculate_batch` of a sale at each ZIP5 key's location
    /// (resolved once) against an integer multiply per sale.
    fn batch(&self) -> Result<Measure, String> {
        let (table, w, batch) = (self.table, self.w, self.batch);
        let (sale, date) = (&w.sale, w.date);
        let keys = &w.zip5;
        // The locations are resolved once; the batch calculates a sale at each, into
        // calculations reused from round to round.
        let locations: Vec<_> = keys
            .iter()
            .filter_map(|(a, _)| table.resolve(a, date).ok())
            .collect();
        let rates: Vec<i64> = {
            let mut stmt =
                w.db.prepare_cached("SELECT rate FROM zip5 WHERE zip = ?1")
                    .map_err(|e| e.to_string())?;
            keys.iter()
                .map(|(_, z)| stmt.query_row([z], |r| r.get(0)).unwrap_or(0))
                .collect()
        };
        let mut results: Vec<Calculation> = Vec::new();
        Ok(measure(
            "batch_calculate",
            "integer_multiply",
            locations.len(),
            self.rounds,
            batch,
            |first| {
                let n = locations.len();
                let items = (first..first + batch).map(|i| (&locations[i % n], sale));
                table.calculate_batch(items, &mut results);
                std::hint::black_box(results.len());
            },
            |first| {
                let mut sum = 0i64;
                for i in first..first + batch {
                    sum += baseline_tax(AMOUNT_MINOR, rates[i % rates.len()]);
                }
                std::hint::black_box(sum);
            },
        ))
    }
}

/// The length of a range's region as the SQLite baseline reads it.
type SqliteRegion = rusqlite::Result<Result<usize, rusqlite::types::FromSqlError>>;

/// The SQLite baseline's IP lookup: the range at or before `ip`, and its region's length
/// when the range holds `ip`.
fn sqlite_ip_region(
    stmt: &mut rusqlite::CachedStatement<'_>,
    ip: IpAddr,
) -> rusqlite::Result<Option<SqliteRegion>> {
    match ip {
        IpAddr::V4(a) => {
            let ip = u32::from(a);
            stmt.query_row([ip], |r| {
                let end: u32 = r.get(0)?;
                Ok((ip <= end).then(|| r.get_ref(2).map(|v| v.as_bytes().map(|b| b.len()))))
            })
        }
        IpAddr::V6(a) => {
            let ip = a.octets();
            stmt.query_row([&ip[..]], |r| {
                let end: Vec<u8> = r.get(0)?;
                Ok(
                    (ip[..] <= end[..])
                        .then(|| r.get_ref(2).map(|v| v.as_bytes().map(|b| b.len()))),
                )
            })
        }
    }
}

/// The fields `levy bench` reads from an IP database record: country and state, in either
/// the GeoIP2 layout or the flat one DB-IP City Lite uses. Borrowed, so a lookup allocates
/// only for a GeoIP2 subdivision list.
#[derive(serde::Deserialize, Default)]
struct MmdbPlace<'a> {
    #[serde(default, borrow)]
    country_code: Option<&'a str>,
    #[serde(default, borrow)]
    state1: Option<&'a str>,
    #[serde(default, borrow)]
    country: Option<MmdbIso<'a>>,
    #[serde(default, borrow)]
    subdivisions: Option<Vec<MmdbIso<'a>>>,
}

#[derive(serde::Deserialize, Default)]
struct MmdbIso<'a> {
    #[serde(default, borrow)]
    iso_code: Option<&'a str>,
}

impl MmdbPlace<'_> {
    fn region(&self) -> &str {
        self.state1
            .or_else(|| {
                self.subdivisions
                    .as_ref()
                    .and_then(|s| s.first())
                    .and_then(|s| s.iso_code)
            })
            .or(self.country_code)
            .or_else(|| self.country.as_ref().and_then(|c| c.iso_code))
            .unwrap_or("")
    }
}

/// The measures as a table for people, one line each.
pub fn render(measures: &[Measure]) -> String {
    let mut s = format!(
        "{:<26} {:>12} {:>12} {:>10} {:>14} {:>9}\n",
        "measure", "median", "p99", "baseline", "its median", "ratio"
    );
    for m in measures {
        s.push_str(&format!(
            "{:<26} {:>12} {:>12} {:>10} {:>14} {:>8.1}×\n",
            m.name,
            ns(m.median_ns),
            ns(m.p99_ns),
            m.baseline,
            ns(m.baseline_median_ns),
            m.ratio
        ));
    }
    s
}

fn ns(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2} ms", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1} µs", v / 1e3)
    } else {
        format!("{v:.1} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::ProfileArgs;

    fn parse(args: &[&str]) -> Result<ProfileArgs, String> {
        ProfileArgs::parse("zip5_profile", args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn profile_args_take_the_defaults_and_refuse_what_cannot_run() {
        // The defaults the examples' docs give: 3,000,000 sales over 100,000 keys.
        assert_eq!(
            parse(&["t.levy"]),
            Ok(ProfileArgs {
                table: "t.levy".into(),
                sales: 3_000_000,
                keys: 100_000
            })
        );
        assert_eq!(
            parse(&["t.levy", "10", "300"]).map(|a| (a.sales, a.keys)),
            Ok((10, 300))
        );
        assert_eq!(
            parse(&[]),
            Err("usage: zip5_profile TABLE [N [KEYS]]".into())
        );
        assert!(parse(&["t.levy", "many"])
            .unwrap_err()
            .starts_with("zip5_profile: N: "));
        // No keys to draw from: refused rather than a division by zero in the loop.
        assert_eq!(
            parse(&["t.levy", "10", "0"]),
            Err("zip5_profile: KEYS: a positive number".into())
        );
    }
}
