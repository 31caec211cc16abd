//! A plain loop of `POST /tax/calculations` (or `GET /tax/ping`) through `Service::handle`,
//! for profilers, instruction counts and allocation counts.
//!
//! `cargo run --release -p levy-benches --example service_profile -- [calc|ping] [N]`
//! opens the service on the embedded default table with an in-memory ledger and answers
//! the HTTP load test's request (`crates/levy-server/loadtest/calculation.json`: one $100.00
//! line to Nashville, TN 37201) N times (default 100,000), as `benches/service.rs` does. It
//! prints the mean time and the heap allocations per request (counted by a wrapper around
//! the system allocator), so that a change to the request's path can be judged by what it
//! allocates, which the load test's timings are too noisy to show.
//!
//! Under `valgrind --tool=cachegrind`, run for two values of N, the difference divided by
//! the difference of N is the instructions of one request (the setup drops out).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use levy_benches::service::{request, service, CALCULATION};

/// The system allocator, counting allocations (reallocations included).
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "calc".to_string());
    let n: u64 = match args.next().map(|s| s.parse()) {
        None => 100_000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("service_profile: N: {e}");
            std::process::exit(2);
        }
    };
    let (method, path, body) = match what.as_str() {
        "calc" => ("POST", "/tax/calculations", CALCULATION),
        "ping" => ("GET", "/tax/ping", &b""[..]),
        other => {
            eprintln!("service_profile: {other}: expected calc or ping");
            std::process::exit(2);
        }
    };
    let service = service(":memory:");
    // As the HTTP layer hands it over: with the client's other headers and an id.
    let mut request = request(method, path, body);
    request.headers.extend([
        ("Host".into(), "127.0.0.1:8787".into()),
        ("Content-Length".into(), body.len().to_string()),
    ]);
    request.request_id = Some("req_profile".into());
    // The first answer checks the request and warms the caches.
    let first = service.handle(&request);
    assert_eq!(
        first.status,
        200,
        "{}",
        String::from_utf8_lossy(&first.body)
    );
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);
    let start = std::time::Instant::now();
    let mut bytes = 0;
    for _ in 0..n {
        bytes += std::hint::black_box(service.handle(std::hint::black_box(&request)))
            .body
            .len();
    }
    let elapsed = start.elapsed();
    let allocated = ALLOCATIONS.load(Ordering::Relaxed) - allocations;
    println!(
        "{what}: {n} requests, {:.0} ns and {:.1} allocations a request, {bytes} bytes answered",
        elapsed.as_nanos() as f64 / n.max(1) as f64,
        allocated as f64 / n.max(1) as f64
    );
}
