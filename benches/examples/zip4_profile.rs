//! A plain loop of warm ZIP+4 resolve + calculate, for profilers and instruction counts.
//!
//! `cargo run --release -p levy-benches --example zip4_profile -- [N]` builds the small
//! synthetic table of `core.rs`'s smoke run (400 ZIP codes, 25 ZIP+4 ranges each, five
//! jurisdictions a range), draws eight ZIP+4 keys from it as `core.rs` draws its `warm`
//! keys, and resolves and calculates a $123.45 line N times (default 3,000,000) into one
//! location and one calculation kept across sales: the shape of the
//! `zip4_resolve_calculate/levy_reused/warm` row (every record in cache) without criterion
//! around it. It prints the mean time per sale and the sum of the
//! tax, so that the work cannot be optimised away.
//!
//! Under `valgrind --tool=cachegrind`, run for two values of N, the difference divided by
//! the difference of N is the instructions of one sale (the setup drops out).

use levy_benches::{bench_sale, zip4_address, Size, Synthetic};
use levy_build::bench::{levy_tax, Buffers};
use levy_core::Decimal;

fn main() {
    let n: usize = match std::env::args().nth(1).map(|s| s.parse()) {
        None => 3_000_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("zip4_profile: N: {e}");
            std::process::exit(2);
        }
    };
    let data = Synthetic::generate(Size::SMOKE);
    let table = data.levy_table();
    let sale = bench_sale(&table);
    let addresses: Vec<_> = data
        .zip4_keys(8, 1)
        .iter()
        .map(|k| zip4_address(k))
        .collect();
    let mut buffers = Buffers::default();
    let mut sum = Decimal::ZERO;
    let start = std::time::Instant::now();
    for i in 0..n {
        let address = std::hint::black_box(&addresses[i % addresses.len()]);
        sum += levy_tax(&table, address, &sale, sale.date, &mut buffers);
    }
    let ns = start.elapsed().as_nanos() as f64 / n.max(1) as f64;
    println!("{ns:.1} ns per sale over {n} sales (tax summed: {sum})");
}
