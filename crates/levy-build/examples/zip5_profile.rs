//! A plain loop of ZIP5 resolve + calculate on a table file, for profilers.
//!
//! `cargo run --release -p levy-build --example zip5_profile -- TABLE [N [KEYS]]` opens
//! TABLE (a table file holding US ZIP codes), draws KEYS (default 100,000) random ZIP codes
//! from it with the same workload as `levy bench` and `benches/real.rs` (fixed seed; a
//! few hundred keys keep every record the sales read in cache, which separates the
//! instructions' time from the memory's), and resolves an address holding only the ZIP
//! and calculates a $123.45 line N times (default 3,000,000), into one location and one
//! calculation kept across sales. It prints the mean time per sale and the sum of the tax,
//! so that the work cannot be optimised away.
//!
//! Under a profiler (`perf record`) or an instruction counter (`valgrind --tool=cachegrind`;
//! `benches/count-instructions.sh` runs it twice and subtracts), the loop is what the
//! profile shows beyond the workload's setup.

use levy_build::bench::{levy_tax, Buffers, ProfileArgs, Workload};
use levy_core::{AnyTable, Date, Decimal};

fn main() {
    let args = ProfileArgs::parse("zip5_profile", std::env::args().skip(1)).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    let (path, n, keys) = (args.table, args.sales, args.keys);
    let table = match AnyTable::open_file(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("zip5_profile: {path}: {e}");
            std::process::exit(1);
        }
    };
    let day = Date::from_ymd(2026, 3, 1).expect("a valid date");
    let workload = Workload::from_table(&table, keys, 11, day);
    let zips = workload.zip5_keys();
    if zips.is_empty() {
        eprintln!("zip5_profile: {path} holds no US ZIP codes");
        std::process::exit(1);
    }
    let mut buffers = Buffers::default();
    let mut sum = Decimal::ZERO;
    let start = std::time::Instant::now();
    for i in 0..n {
        let (address, _) = &zips[i % zips.len()];
        sum += levy_tax(&table, address, workload.sale(), day, &mut buffers);
    }
    let ns = start.elapsed().as_nanos() as f64 / n.max(1) as f64;
    println!("{ns:.1} ns per sale over {n} sales (tax summed: {sum})");
}
