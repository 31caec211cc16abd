//! A plain loop of batch calculation on a table file, for profilers.
//!
//! `cargo run --release -p levy-build --example batch_profile -- TABLE [N [KEYS]]` opens
//! TABLE (a table file holding US ZIP codes), resolves KEYS random ZIP codes from it
//! (default 100,000) with the same workload as `levy bench` (fixed seed), and calculates a $123.45 line at each location,
//! N sales in all (default 3,000,000), through `Table::calculate_batch` in batches of 1,000
//! into one output vector kept across batches: the `batch_calculate` measure of
//! `levy bench`, without the timing around it. It prints the mean time per sale. A few
//! KEYS (say 100) keep the table's records in cache; the difference from many is the time
//! the sales wait for memory.

use levy_build::bench::{ProfileArgs, Workload};
use levy_core::{AnyTable, Calculation, Date};

fn main() {
    let args = ProfileArgs::parse("batch_profile", std::env::args().skip(1)).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let (path, n, keys) = (args.table, args.sales, args.keys);
    let table = match AnyTable::open_file(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("batch_profile: {path}: {e}");
            std::process::exit(1);
        }
    };
    let day = Date::from_ymd(2026, 3, 1).expect("a valid date");
    let workload = Workload::from_table(&table, keys, 11, day);
    let locations: Vec<_> = workload
        .zip5_keys()
        .iter()
        .filter_map(|(a, _)| table.resolve(a, day).ok())
        .collect();
    if locations.is_empty() {
        eprintln!("batch_profile: {path} holds no US ZIP codes");
        std::process::exit(1);
    }
    const BATCH: usize = 1_000;
    let sale = workload.sale();
    let mut out: Vec<Calculation> = Vec::new();
    let mut lines = 0usize;
    let start = std::time::Instant::now();
    let mut done = 0;
    while done < n {
        let items = (done..done + BATCH).map(|i| (&locations[i % locations.len()], sale));
        let errors = table.calculate_batch(items, &mut out);
        lines += out.iter().map(|c| c.lines.len()).sum::<usize>() + errors.len();
        done += BATCH;
    }
    let ns = start.elapsed().as_nanos() as f64 / done.max(1) as f64;
    println!("{ns:.1} ns per sale over {done} sales ({lines} lines)");
}
