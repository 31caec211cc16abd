//! levy's hot paths beside baselines measured in the same run.
//!
//! - `zip4_resolve_calculate`: resolve a ZIP+4 and calculate one line in five
//!   jurisdictions. levy vs a `HashMap<String, Vec<Rate>>` (exact key, no range logic) vs an
//!   indexed in-memory SQLite query. `warm` cycles 8 keys; `cold` cycles 1,000,000 random
//!   keys over all the ranges, so caches miss.
//! - `ipv4_lookup`: levy's range search vs `BTreeMap::range`, warm and cold likewise.
//!
//! `cargo bench -p levy-benches --bench core -- --test` runs each once on a small table.

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use levy_benches::*;
use levy_build::bench::{levy_tax as levy_tax_kept, Buffers};
use levy_core::Decimal;

fn benches(c: &mut Criterion) {
    let size = Size::from_args();
    let data = Synthetic::generate(size);
    let table = data.levy_table();
    let map = data.hash_map();
    let db = data.sqlite();
    let sale = bench_sale(&table);
    let amount = Decimal::from(12_345);
    let cold_n = if size == Size::FULL { 1_000_000 } else { 1_000 };

    let warm_keys = data.zip4_keys(8, 1);
    let cold_keys = data.zip4_keys(cold_n, 2);
    let warm_addresses: Vec<_> = warm_keys.iter().map(|k| zip4_address(k)).collect();
    let cold_addresses: Vec<_> = cold_keys.iter().map(|k| zip4_address(k)).collect();

    let mut g = c.benchmark_group("zip4_resolve_calculate");
    for (temp, keys, addresses) in [
        ("warm", &warm_keys, &warm_addresses),
        ("cold", &cold_keys, &cold_addresses),
    ] {
        let mut i = 0;
        g.bench_function(format!("levy/{temp}"), |b| {
            b.iter(|| {
                i = (i + 1) % addresses.len();
                black_box(levy_tax(&table, black_box(&addresses[i]), &sale))
            })
        });
        let mut i = 0;
        let mut buffers = Buffers::default();
        g.bench_function(format!("levy_reused/{temp}"), |b| {
            b.iter(|| {
                i = (i + 1) % addresses.len();
                black_box(levy_tax_kept(
                    &table,
                    black_box(&addresses[i]),
                    &sale,
                    sale.date,
                    &mut buffers,
                ))
            })
        });
        let mut i = 0;
        g.bench_function(format!("hashmap/{temp}"), |b| {
            b.iter(|| {
                i = (i + 1) % keys.len();
                black_box(hash_map_tax(&map, black_box(&keys[i]), amount))
            })
        });
        let mut stmt = db.prepare_cached(SQLITE_QUERY).expect("prepare");
        let mut i = 0;
        g.bench_function(format!("sqlite/{temp}"), |b| {
            b.iter(|| {
                i = (i + 1) % keys.len();
                black_box(sqlite_tax(&mut stmt, black_box(&keys[i]), amount))
            })
        });
    }
    g.finish();

    let btree = data.ipv4_btree();
    let warm_ips: Vec<u32> = data.ipv4_keys(8, 3);
    let cold_ips: Vec<u32> = data.ipv4_keys(cold_n, 4);
    let mut g = c.benchmark_group("ipv4_lookup");
    for (temp, ips) in [("warm", &warm_ips), ("cold", &cold_ips)] {
        let mut i = 0;
        g.bench_function(format!("levy/{temp}"), |b| {
            b.iter(|| {
                i = (i + 1) % ips.len();
                let ip = IpAddr::V4(Ipv4Addr::from(black_box(ips[i])));
                black_box(table.lookup_ip(ip).map(|p| p.postal().len()))
            })
        });
        let mut i = 0;
        g.bench_function(format!("btreemap/{temp}"), |b| {
            b.iter(|| {
                i = (i + 1) % ips.len();
                black_box(btree_ipv4(&btree, black_box(ips[i])))
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = core;
    config = Criterion::default().sample_size(30).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    targets = benches
}
criterion_main!(core);
