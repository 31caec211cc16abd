//! Throughput of POST /tax/calculations through `Service::handle`, 8 callers, file ledger.
//! Ignored by default (a measurement, not a check); run with
//! `cargo test -p levy-api --release --test throughput -- --ignored --nocapture`.

mod common;
use common::*;
use levy_api::*;
use std::time::Instant;

fn run(ledger: &str, threads: usize, per_thread: usize) -> f64 {
    let svc = Service::open(ServiceConfig {
        table: TableSource::Table(table()),
        ledger: ledger.into(),
        keys: keys(),
    })
    .unwrap();
    let req = Request {
        method: "POST".into(),
        path: "/tax/calculations".into(),
        query: String::new(),
        headers: vec![("Authorization".into(), format!("Bearer {TEST_KEY}"))],
        body: calc_body("10000", "GENERAL_MERCHANDISE").into_bytes(),
        request_id: None,
    };
    let start = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..per_thread {
                    assert_eq!(svc.handle(&req).status, 200);
                }
            });
        }
    });
    (threads * per_thread) as f64 / start.elapsed().as_secs_f64()
}

#[test]
#[ignore]
fn calculations_per_second() {
    let dir = levy_testkit::TempDir::new("levy-api-bench");
    let file = dir.join("ledger.sqlite");
    for threads in [1, 8, 64] {
        let _ = std::fs::remove_file(&file);
        let rate = run(&file.display().to_string(), threads, 20_000 / threads);
        println!("file ledger, {threads} callers: {rate:.0} calculations/s");
    }
    println!(
        ":memory: ledger, 8 callers: {:.0} calculations/s",
        run(":memory:", 8, 2500)
    );
}
