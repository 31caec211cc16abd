//! Measures what opening the embedded default table costs, with and without validation.
//!
//! `cargo run -p levy-data --release --example open_cost`

use std::time::Instant;

use levy_core::{AnyBytes, Table};

fn main() {
    let bytes = levy_data::default_bytes();
    let runs = 20;
    let start = Instant::now();
    for _ in 0..runs {
        let t = Table::open(AnyBytes::Static(bytes)).expect("valid");
        std::hint::black_box(&t);
    }
    let checked = start.elapsed() / runs;
    let start = Instant::now();
    for _ in 0..runs {
        // SAFETY: the bytes were validated by the loop above.
        let t = unsafe { Table::open_unchecked(AnyBytes::Static(bytes)) }.expect("valid header");
        std::hint::black_box(&t);
    }
    let unchecked = start.elapsed() / runs;
    let start = Instant::now();
    levy_data::default_table().verify().expect("hash matches");
    let verify = start.elapsed();
    let d = levy_data::default_table().data();
    println!("default table: {} bytes", bytes.len());
    println!(
        "  {} jurisdictions, {} rules, {} holidays, {} ZIP codes, {} regions, {} postal prefixes, {} IPv4 and {} IPv6 ranges",
        d.jurisdictions.len(),
        d.rules.len(),
        d.holidays.len(),
        d.zips.len(),
        d.regions.len(),
        d.postal_prefixes.len(),
        d.ipv4.len(),
        d.ipv6.len()
    );
    println!("open with validation:    {checked:?}");
    println!("open without validation: {unchecked:?}");
    println!("verify content hash:     {verify:?}");
}
