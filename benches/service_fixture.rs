//! The service that `benches/service.rs` and `examples/service_profile.rs` measure: the
//! embedded default table, one inline test key, and the HTTP load test's calculation.

use levy_api::{KeyEntry, KeySource, Request, Service, ServiceConfig, TableSource};

/// The test key of the one account.
pub const KEY: &str = "sk_test_service_bench";

/// The body of the HTTP load test (`crates/levy-server/loadtest/calculation.json`): one
/// $100.00 line delivered to Nashville, TN 37201.
pub const CALCULATION: &[u8] = include_bytes!("../crates/levy-server/loadtest/calculation.json");

/// The same sale in TaxJar's `POST /v2/taxes` shape, with the shipping amount TaxJar
/// requires ($0, a line of its own in levy's calculation), as `loadtest/dialects.sh` sends it.
pub const TAXJAR_TAXES: &[u8] = br#"{"to_country":"US","to_zip":"37201","to_state":"TN","to_city":"NASHVILLE","shipping":0,"line_items":[{"id":"1","quantity":1,"unit_price":100}]}"#;

/// The same sale as an AvaTax `SalesOrder` (`POST /api/v2/transactions/create`), as
/// `loadtest/dialects.sh` sends it.
pub const AVATAX_CREATE: &[u8] = br#"{"type":"SalesOrder","date":"2026-12-01","customerCode":"C","addresses":{"singleLocation":{"city":"NASHVILLE","region":"TN","country":"US","postalCode":"37201"}},"lines":[{"number":"1","quantity":1,"amount":100}]}"#;

/// The service on the embedded default table, with `ledger` (`:memory:` or a file).
pub fn service(ledger: &str) -> Service {
    Service::open(ServiceConfig {
        table: TableSource::Table(std::sync::Arc::new(levy_data::open_default())),
        ledger: ledger.into(),
        keys: KeySource::Inline(vec![KeyEntry {
            account: "bench".into(),
            key: KEY.into(),
        }]),
    })
    .expect("the service opens on the embedded table")
}

/// A request with [`KEY`] and a JSON body.
pub fn request(method: &str, path: &str, body: &[u8]) -> Request {
    Request {
        method: method.into(),
        path: path.into(),
        query: String::new(),
        headers: vec![
            ("Authorization".into(), format!("Bearer {KEY}")),
            ("Content-Type".into(), "application/json".into()),
        ],
        body: body.to_vec(),
        request_id: None,
    }
}
