//! Arbitrary JSON bodies (and non-JSON bytes) through the service interface: every POST
//! route in every version. A malformed request must get an error object, never a 500 and
//! never a panic.
#![no_main]

use std::sync::OnceLock;

use levy_api::{KeyEntry, KeySource, Request, Service, ServiceConfig, TableSource};
use libfuzzer_sys::fuzz_target;

const ROUTES: [&str; 9] = [
    "/tax/calculations",
    "/tax/customers",
    "/tax/products",
    "/tax/transactions",
    "/tax/refunds",
    "/tax/refund_reversals",
    "/tax/merchants",
    "/tax/platform/calculations",
    "/tax/platform/transactions",
];
const VERSIONS: [&str; 4] = ["2024-09-01", "2025-05-12", "2026-01-01", "2026-03-01"];

fn service() -> &'static Service {
    static SERVICE: OnceLock<Service> = OnceLock::new();
    SERVICE.get_or_init(|| {
        Service::open(ServiceConfig {
            table: TableSource::Default,
            ledger: ":memory:".into(),
            keys: KeySource::Inline(vec![KeyEntry { account: "fuzz".into(), key: "sk_live_fuzz".into() }]),
        })
        .expect("service opens")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else { return };
    let path = ROUTES[selector as usize % ROUTES.len()];
    let version = VERSIONS[(selector as usize / ROUTES.len()) % VERSIONS.len()];
    let response = service().handle(&Request {
        method: "POST".into(),
        path: path.into(),
        query: String::new(),
        headers: vec![
            ("Authorization".into(), "Bearer sk_live_fuzz".into()),
            ("X-API-Version".into(), version.into()),
            ("Content-Type".into(), "application/json".into()),
        ],
        body: body.to_vec(),
        request_id: None,
    });
    assert!(response.status != 500, "{path} {version}: 500 {}", String::from_utf8_lossy(&response.body));
});
