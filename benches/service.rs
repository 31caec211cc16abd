//! The cost of one request inside the service, without the network: `Service::handle` for
//! `POST /tax/calculations` (parse, resolve, calculate, store the 24-hour quote, render)
//! against `GET /tax/ping` (authenticate, render) in the same run, on the embedded default
//! table, with an in-memory ledger and with a file ledger; and the same sale through the
//! TaxJar (`POST /v2/taxes`) and AvaTax (`POST /api/v2/transactions/create`) request
//! shapes, the translation's cost beside levy's own. The HTTP figures in the README add
//! hyper, the sockets and the client on top of these.
//!
//! Run with `cargo bench -p levy-benches --bench service`; `-- --test` runs each once.

use std::sync::Arc;

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use levy_benches::service::{request, service, AVATAX_CREATE, CALCULATION, TAXJAR_TAXES};

fn bench_service(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("levy-bench-service-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file_ledger = dir.join("ledger.sqlite");
    let ping = request("GET", "/tax/ping", b"");
    let calc = request("POST", "/tax/calculations", CALCULATION);
    let taxjar = request("POST", "/v2/taxes", TAXJAR_TAXES);
    let avatax = request("POST", "/api/v2/transactions/create", AVATAX_CREATE);

    for (name, ledger) in [
        ("memory", ":memory:".to_string()),
        ("file", file_ledger.display().to_string()),
    ] {
        let service = Arc::new(service(&ledger));
        assert_eq!(service.handle(&ping).status, 200);
        for r in [&calc, &taxjar, &avatax] {
            let first = service.handle(r);
            assert_eq!(
                first.status,
                200,
                "{}: {}",
                r.path,
                String::from_utf8_lossy(&first.body)
            );
        }
        let mut g = c.benchmark_group(format!("service/{name}_ledger"));
        g.bench_function("baseline: GET /tax/ping", |b| {
            b.iter(|| black_box(service.handle(black_box(&ping))))
        });
        g.bench_function("POST /tax/calculations", |b| {
            b.iter(|| black_box(service.handle(black_box(&calc))))
        });
        g.bench_function("TaxJar POST /v2/taxes", |b| {
            b.iter(|| black_box(service.handle(black_box(&taxjar))))
        });
        g.bench_function("AvaTax POST /api/v2/transactions/create", |b| {
            b.iter(|| black_box(service.handle(black_box(&avatax))))
        });
        g.finish();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench_service);
criterion_main!(benches);
