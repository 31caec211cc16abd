//! Shared helpers for the HTTP tests: a hand-computable rate table, a server on an
//! ephemeral loopback port, and a small blocking HTTP client.

#![allow(dead_code, unused_imports)]

use std::sync::Arc;
use std::time::Duration;

use levy_core::Decimal;
use levy_testkit::TempDir;

/// Test and live keys of the two accounts the suite uses (`levy_testkit::keys`).
pub use levy_testkit::keys::{OTHER_LIVE, OTHER_TEST, SHOP_LIVE, SHOP_TEST};

/// The suite's table, the Tennessee table of `levy_testkit::tennessee`. The rates the tests
/// use, chosen so every expected amount is arithmetic by hand:
///
/// * Tennessee (region US-TN, every TN address): state 7% on general merchandise.
/// * ZIP 37201 (Nashville): the state's 7% plus a city rate of 2.25%, 9.25% in all.
///
/// So $100.00 (10000 cents) in 37201 owes 700 + 225 = 925 cents, and anywhere else in TN
/// outside the table's two ZIP codes (37201, 37203) 700 cents.
pub fn table_bytes() -> Vec<u8> {
    levy_testkit::tennessee::bytes()
}

/// The suite's table with another Nashville city rate (for reload tests).
pub fn table_bytes_with_city_rate(city_rate: Decimal) -> Vec<u8> {
    levy_testkit::tennessee::Tennessee {
        city_rate,
        ..Default::default()
    }
    .bytes()
}

/// The suite's table, opened.
pub fn table() -> Arc<levy_core::AnyTable> {
    levy_testkit::tennessee::table()
}

/// A fresh scratch directory under cargo's per-target temp dir, removed when dropped.
pub fn scratch_dir(name: &str) -> TempDir {
    levy_testkit::target_temp_dir!(&format!("levy-server-{name}"))
}

/// The inline keys of the two accounts.
pub fn keys() -> levy_api::KeySource {
    levy_testkit::keys::inline()
}

/// A server on `127.0.0.1:0` in its own runtime; stopped (gracefully) when dropped.
pub struct TestServer {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// The service behind it.
    pub service: Arc<levy_api::Service>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    runtime: Option<tokio::runtime::Runtime>,
    /// Holds the ledger; removed after the server stops.
    _dir: TempDir,
}

impl TestServer {
    /// Starts a server over the suite's table and a fresh ledger (a file, or a
    /// PostgreSQL database under `LEVY_TEST_LEDGER=postgres`).
    pub fn start(name: &str) -> TestServer {
        TestServer::start_with(name, levy_server::ServeOptions::loopback_ephemeral())
    }

    /// Starts a server with the given options (the listen address is forced to loopback port 0).
    pub fn start_with(name: &str, options: levy_server::ServeOptions) -> TestServer {
        TestServer::start_configured(name, options, |service| service)
    }

    /// Starts a server with the given options over the suite's service as `configure`
    /// leaves it (a body limit, per-account limits).
    pub fn start_configured(
        name: &str,
        mut options: levy_server::ServeOptions,
        configure: impl FnOnce(levy_api::Service) -> levy_api::Service,
    ) -> TestServer {
        options.listen = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
        let dir = scratch_dir(name);
        // An SQLite file, or a PostgreSQL database under LEVY_TEST_LEDGER=postgres.
        let ledger = levy_testkit::postgres::ledger(dir.path());
        let service = Arc::new(configure(levy_testkit::service::with_ledger(
            table(),
            &ledger,
        )));
        let runtime = levy_server::runtime_builder()
            .worker_threads(2)
            .build()
            .unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let running = runtime
            .block_on(levy_server::serve(Arc::clone(&service), options, async {
                let _ = stopped.await;
            }))
            .unwrap();
        let base = format!("http://{}", running.local_addr());
        runtime.spawn(async move {
            let _ = running.wait().await;
        });
        TestServer {
            base,
            service,
            stop: Some(stop),
            runtime: Some(runtime),
            _dir: dir,
        }
    }

    /// A client for this server.
    pub fn client(&self) -> Client {
        Client::new(&self.base)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(Duration::from_secs(5));
        }
    }
}

/// One HTTP answer.
#[derive(Debug)]
pub struct Answer {
    /// Status code.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: String,
    /// `x-request-id`.
    pub request_id: String,
    /// `Levy-Coverage`, when sent.
    pub coverage: Option<String>,
    /// `Retry-After`, when sent.
    pub retry_after: Option<String>,
    /// Body text.
    pub text: String,
}

impl Answer {
    /// The body as JSON (panics with the body when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.text).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text))
    }
}

/// A blocking HTTP client bound to one server.
#[derive(Clone)]
pub struct Client {
    base: String,
    agent: ureq::Agent,
}

/// One request to send.
pub struct Call<'a> {
    /// Method.
    pub method: &'a str,
    /// Path and query.
    pub path: &'a str,
    /// Bearer key, if any.
    pub key: Option<&'a str>,
    /// `X-API-Version`, if any.
    pub version: Option<&'a str>,
    /// Body bytes, if any (sent as `application/json` unless `content_type` says otherwise).
    pub body: Option<&'a [u8]>,
    /// Content-Type to send with the body.
    pub content_type: Option<&'a str>,
}

impl Client {
    /// A client for `base` (`http://127.0.0.1:PORT`).
    pub fn new(base: &str) -> Client {
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(30))
            .build();
        Client {
            base: base.to_string(),
            agent,
        }
    }

    /// Sends a request; any HTTP status is an answer, only transport failures panic.
    pub fn send(&self, call: Call<'_>) -> Answer {
        self.try_send(call)
            .unwrap_or_else(|e| panic!("transport error: {e}"))
    }

    /// Sends a request; transport failures are errors.
    pub fn try_send(&self, call: Call<'_>) -> Result<Answer, String> {
        let mut req = self
            .agent
            .request(call.method, &format!("{}{}", self.base, call.path));
        if let Some(key) = call.key {
            req = req.set("Authorization", &format!("Bearer {key}"));
        }
        if let Some(v) = call.version {
            req = req.set("X-API-Version", v);
        }
        let result = match call.body {
            Some(body) => {
                req = req.set(
                    "Content-Type",
                    call.content_type.unwrap_or("application/json"),
                );
                req.send_bytes(body)
            }
            None => req.call(),
        };
        let resp = match result {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => return Err(e.to_string()),
        };
        let status = resp.status();
        let content_type = resp.header("content-type").unwrap_or("").to_string();
        let request_id = resp.header("x-request-id").unwrap_or("").to_string();
        let coverage = resp.header("levy-coverage").map(str::to_string);
        let retry_after = resp.header("retry-after").map(str::to_string);
        let text = resp.into_string().map_err(|e| e.to_string())?;
        Ok(Answer {
            status,
            content_type,
            request_id,
            coverage,
            retry_after,
            text,
        })
    }

    /// `method path` with a key, a version and a JSON body.
    pub fn json(
        &self,
        method: &str,
        path: &str,
        key: &str,
        version: Option<&str>,
        body: &serde_json::Value,
    ) -> Answer {
        let text = body.to_string();
        self.send(Call {
            method,
            path,
            key: Some(key),
            version,
            body: Some(text.as_bytes()),
            content_type: None,
        })
    }

    /// `method path` with a key and a version, no body.
    pub fn bare(&self, method: &str, path: &str, key: &str, version: Option<&str>) -> Answer {
        self.send(Call {
            method,
            path,
            key: Some(key),
            version,
            body: None,
            content_type: None,
        })
    }
}

/// A calculation body for ZIP 37201 (9.25%) with the given line amounts in cents,
/// each quantity 1, category GENERAL_MERCHANDISE, with reference_line_item_ids `l0`, `l1`, ….
pub fn calc_body(amounts: &[i64]) -> serde_json::Value {
    let lines: Vec<serde_json::Value> = amounts
        .iter()
        .enumerate()
        .map(|(i, a)| {
            serde_json::json!({
                "amount": a, "quantity": 1, "product_category": "GENERAL_MERCHANDISE",
                "reference_line_item_id": format!("l{i}")
            })
        })
        .collect();
    serde_json::json!({
        "customer": {"address": {"address_line_1": "", "address_city": "NASHVILLE",
            "address_province": "TN", "address_postal_code": "37201", "address_country": "US",
            "address_type": "shipping"}},
        "origin_address": {"address_line_1": "", "address_city": "NASHVILLE",
            "address_province": "TN", "address_postal_code": "37201", "address_country": "US"},
        "order_details": {"customer_currency_code": "USD", "tax_included_in_amount": false,
            "line_items": lines}
    })
}

/// JSON number or string holding a decimal, as a Decimal.
pub fn dec(v: &serde_json::Value) -> Decimal {
    let s = match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    s.parse::<Decimal>()
        .unwrap_or_else(|_| panic!("not a decimal: {v}"))
}
