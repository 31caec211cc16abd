//! The OpenAPI document (`crates/levy-server/openapi.json`) cannot drift from the code:
//!
//! * it is well-formed OpenAPI 3.1 whose every `$ref` resolves;
//! * every operation it lists is answered by the service, and every method on every path
//!   of the interface (the spec's endpoint table, the notes' extra endpoints, the
//!   document's own paths) that the service answers is listed;
//! * its error-type enum is exactly the set of error types the code can answer with:
//!   levy-api's `ErrorKind::ALL` plus the HTTP layer's own.

mod common;

use std::collections::BTreeSet;

use common::{Call, TestServer, SHOP_LIVE};
use serde_json::Value;

fn doc() -> Value {
    serde_json::from_str(levy_server::OPENAPI_JSON).expect("openapi.json is JSON")
}

fn resolve<'a>(doc: &'a Value, reference: &str) -> Option<&'a Value> {
    let path = reference.strip_prefix("#/")?;
    path.split('/').try_fold(doc, |v, seg| v.get(seg))
}

fn collect_refs(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                out.push(r.clone());
            }
            m.values().for_each(|x| collect_refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

/// (METHOD, path template) of every operation in the document.
fn documented() -> BTreeSet<(String, String)> {
    let doc = doc();
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for m in METHODS {
            if item.get(m).is_some() {
                out.insert((m.to_ascii_uppercase(), path.clone()));
            }
        }
    }
    out
}

#[test]
fn document_is_openapi_3_1_and_every_ref_resolves() {
    let doc = doc();
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());
    let mut refs = Vec::new();
    collect_refs(&doc, &mut refs);
    assert!(!refs.is_empty());
    for r in refs {
        assert!(resolve(&doc, &r).is_some(), "unresolved $ref {r}");
    }
    // Operation ids are unique, and every operation answers 200.
    let mut ids = BTreeSet::new();
    for item in doc["paths"].as_object().unwrap().values() {
        for m in METHODS {
            if let Some(op) = item.get(m) {
                let id = op["operationId"]
                    .as_str()
                    .expect("every operation has an operationId");
                assert!(ids.insert(id.to_string()), "duplicate operationId {id}");
                assert!(
                    op["responses"]["200"].is_object(),
                    "{id} has no 200 response"
                );
            }
        }
    }
    // The version parameter lists exactly the versions the service knows.
    let versions: Vec<&str> = doc["components"]["parameters"]["Version"]["schema"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let known: Vec<&str> = levy_api::ApiVersion::ALL
        .iter()
        .map(|v| v.as_str())
        .collect();
    assert_eq!(versions, known);
}

/// True when the answer says "no such endpoint or method" rather than coming from an
/// endpoint (which may still be an error, such as an unknown id or a bad body).
fn is_route_miss(a: &common::Answer) -> bool {
    let body = a.json();
    // Flat format (2026-01-01 on) or the older one (`error.error_code`).
    let kind = body["type"].as_str().map(str::to_string).or_else(|| {
        body["error"]["error_code"]
            .as_str()
            .map(|c| c.to_ascii_uppercase())
    });
    matches!(
        (a.status, kind.as_deref()),
        (404, Some("NOT_FOUND")) | (405, Some("METHOD_NOT_ALLOWED"))
    )
}

fn probe(c: &common::Client, method: &str, template: &str) -> common::Answer {
    probe_in(c, method, template, "2026-03-01")
}

fn probe_in(c: &common::Client, method: &str, template: &str, version: &str) -> common::Answer {
    // Path parameters become an id that exists nowhere.
    let path: String = template
        .split('/')
        .map(|seg| {
            if seg.starts_with('{') {
                "zz_probe"
            } else {
                seg
            }
        })
        .collect::<Vec<_>>()
        .join("/");
    let body = if matches!(method, "POST" | "PUT" | "PATCH") {
        Some(&b"{}"[..])
    } else {
        None
    };
    c.send(Call {
        method,
        path: &path,
        key: Some(SHOP_LIVE),
        version: Some(version),
        body,
        content_type: None,
    })
}

/// The version just before `v`.
fn previous(v: &str) -> &'static str {
    let all = levy_api::ApiVersion::ALL;
    let i = all
        .iter()
        .position(|x| x.as_str() == v)
        .unwrap_or_else(|| panic!("x-levy-since {v} is not a version"));
    assert!(i > 0, "x-levy-since {v} is the first version; leave it out");
    all[i - 1].as_str()
}

#[test]
fn versioned_routes_start_where_the_document_says() {
    let server = TestServer::start("openapi-versions");
    let c = server.client();
    let doc = doc();
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for m in METHODS {
            let Some(op) = item.get(m) else { continue };
            let method = m.to_ascii_uppercase();
            match op.get("x-levy-since").and_then(Value::as_str) {
                Some(since) => {
                    let before = probe_in(&c, &method, path, previous(since));
                    assert!(
                        is_route_miss(&before),
                        "{method} {path} answered before {since}: {}",
                        before.text
                    );
                    let at = probe_in(&c, &method, path, since);
                    assert!(
                        !is_route_miss(&at),
                        "{method} {path} not answered in {since}: {}",
                        at.text
                    );
                    checked += 1;
                }
                None if !path.starts_with("/openapi") => {
                    let first = probe_in(&c, &method, path, "2024-09-01");
                    assert!(
                        !is_route_miss(&first),
                        "{method} {path} not answered in 2024-09-01: {}",
                        first.text
                    );
                }
                None => {}
            }
        }
    }
    assert!(checked > 0);
}

#[test]
fn documented_routes_are_exactly_the_answered_routes() {
    let server = TestServer::start("openapi-routes");
    let c = server.client();
    let documented = documented();

    for (method, template) in &documented {
        if template.starts_with("/openapi") {
            continue; // served by the HTTP layer, checked below and in the conformance suite
        }
        let a = probe(&c, method, template);
        assert!(
            !is_route_miss(&a),
            "{method} {template} is documented but not answered: {}",
            a.text
        );
    }

    // Every path of the interface: the spec's endpoint table, the notes' extra endpoints,
    // and the document's own paths. Any method the service answers must be documented.
    let mut paths: BTreeSet<String> = [
        "/tax/ping",
        "/tax/customers",
        "/tax/customers/{id}",
        "/tax/products",
        "/tax/products/{id}",
        "/tax/calculations",
        "/tax/transactions",
        "/tax/transactions/{id}",
        "/tax/transactions/{id}/refunds",
        "/tax/refunds",
        "/tax/refund_reversals",
        "/tax/merchants",
        "/tax/merchants/{id}",
        "/tax/platform/calculations",
        "/tax/platform/transactions",
        "/tax/certificate-requests",
        "/tax/certificate-requests/{id}",
        "/tax/certificates",
        "/tax/certificates/{id}",
        "/tax/certificates/{id}/document",
        // levy extension: a till's offline records.
        "/tax/sync",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    paths.extend(documented.iter().map(|(_, p)| p.clone()));
    // Compare with parameter names erased, so `{id}` and `{transaction_id}` are one path.
    let erase = |p: &str| -> String {
        p.split('/')
            .map(|seg| if seg.starts_with('{') { "{}" } else { seg })
            .collect::<Vec<_>>()
            .join("/")
    };
    let documented_erased: BTreeSet<(String, String)> = documented
        .iter()
        .map(|(m, p)| (m.clone(), erase(p)))
        .collect();
    for path in &paths {
        if path == levy_server::OPENAPI_PATH {
            continue;
        }
        for m in METHODS {
            let method = m.to_ascii_uppercase();
            if documented_erased.contains(&(method.clone(), erase(path))) {
                continue;
            }
            let a = probe(&c, &method, path);
            assert!(
                is_route_miss(&a),
                "{method} {path} is answered but not documented: {} {}",
                a.status,
                a.text
            );
        }
    }
}

/// Error types of `Service::open`, `keys::create_account_keys` and the certificate import
/// command: never an HTTP answer, so the document leaves them out.
const NOT_HTTP: [&str; 4] = [
    "KEYS_FILE_ERROR",
    "TABLE_ERROR",
    "INVALID_ACCOUNT",
    "INVALID_IMPORT",
];

#[test]
fn documented_error_types_are_exactly_those_the_code_emits() {
    // levy-api's kinds (levy-core's resolution errors among them, mapped in), with the
    // status each is answered with.
    let mut statuses: std::collections::BTreeMap<String, BTreeSet<u16>> = Default::default();
    for k in levy_api::ErrorKind::ALL {
        statuses
            .entry(k.name().to_string())
            .or_default()
            .insert(k.status());
    }
    for k in NOT_HTTP {
        assert!(
            statuses.remove(k).is_some(),
            "{k} is no longer an ErrorKind; drop it from NOT_HTTP"
        );
    }
    for t in levy_core::ResolveError::ERROR_TYPES {
        assert!(
            statuses.contains_key(t),
            "ResolveError type {t} is no ErrorKind"
        );
    }
    // The HTTP layer's own; where a name is also levy-api's, the status is the same.
    for k in levy_server::HTTP_ERROR_KINDS {
        let s = statuses.entry(k.flat_type().to_string()).or_default();
        assert!(
            s.is_empty() || s.contains(&k.status()),
            "{} is {} in the HTTP layer but {s:?} in levy-api",
            k.flat_type(),
            k.status()
        );
        s.insert(k.status());
    }
    let emitted: BTreeSet<String> = statuses.keys().cloned().collect();
    let doc = doc();
    let documented: BTreeSet<String> = doc["components"]["schemas"]["ErrorType"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    let missing: Vec<&String> = emitted.difference(&documented).collect();
    let stale: Vec<&String> = documented.difference(&emitted).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "ErrorType enum out of date.\n  emitted but not documented: {missing:?}\n  documented but never emitted: {stale:?}"
    );
}

/// Checks `value` against `schema` (the subset of JSON Schema the document uses: `$ref`,
/// `type` (one or a list), `enum`, `properties`, `required`, `additionalProperties`,
/// `items`, `oneOf`, `allOf`), and adds to `errors` where it fails.
fn check(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        match resolve(doc, r) {
            Some(target) => check(doc, target, value, at, errors),
            None => errors.push(format!("{at}: unresolved {r}")),
        }
        return;
    }
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for s in all {
            check(doc, s, value, at, errors);
        }
    }
    if let Some(one) = schema.get("oneOf").and_then(Value::as_array) {
        let matching = one
            .iter()
            .filter(|s| conforms(doc, s, value, at).is_ok())
            .count();
        if matching != 1 {
            errors.push(format!("{at}: {matching} of oneOf match {value}"));
        }
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "object" => value.is_object(),
            "array" => value.is_array(),
            "null" => value.is_null(),
            _ => false,
        });
        if !ok {
            errors.push(format!("{at}: {value} is not of type {t}"));
            return;
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(value) {
            errors.push(format!("{at}: {value} is not one of {e:?}"));
        }
    }
    if let (Some(props), Some(obj)) = (
        schema.get("properties").and_then(Value::as_object),
        value.as_object(),
    ) {
        for (k, v) in obj {
            match props.get(k) {
                Some(s) => check(doc, s, v, &format!("{at}.{k}"), errors),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => errors.push(format!("{at}.{k}: not in the schema")),
                    Some(s @ Value::Object(_)) => check(doc, s, v, &format!("{at}.{k}"), errors),
                    _ => {}
                },
            }
        }
        for r in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !obj.contains_key(r) {
                errors.push(format!("{at}.{r}: required but absent"));
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), value.as_array()) {
        for (i, v) in arr.iter().enumerate() {
            check(doc, items, v, &format!("{at}[{i}]"), errors);
        }
    }
}

fn conforms(doc: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let mut errors = Vec::new();
    check(doc, schema, value, at, &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("\n  "))
    }
}

#[test]
fn answers_conform_to_their_documented_schemas() {
    // Each answer below is checked against the schema its version's document gives for
    // its operation and status; those documents close every object, so a field the
    // document does not name fails. The first finding: `GET /tax/ping` answered
    // `timestamp` as a string where the document said integer.
    let server = TestServer::start("openapi-schemas");
    let c = server.client();
    for version in ["2024-09-01", "2025-05-12", "2026-01-01", "2026-03-01"] {
        let served = c.bare("GET", &format!("/openapi/{version}.json"), SHOP_LIVE, None);
        assert_eq!(served.status, 200, "{}", served.text);
        let doc = served.json();
        // The served document is the one `for_version` derives for the server's table.
        let table = common::table();
        let categories: Vec<&str> = table.category_names().collect();
        let api_version = levy_api::ApiVersion::parse(version).unwrap();
        assert_eq!(
            doc,
            levy_server::openapi::for_version(api_version, &categories)
        );
        let schema_of = |path: &str, method: &str, status: &str| -> Value {
            let r = &doc["paths"][path][method]["responses"][status];
            let r = match r.get("$ref").and_then(Value::as_str) {
                Some(reference) => resolve(&doc, reference).unwrap().clone(),
                None => r.clone(),
            };
            r["content"]["application/json"]["schema"].clone()
        };
        let ping = c.bare("GET", "/tax/ping", SHOP_LIVE, Some(version));
        assert_eq!(ping.status, 200);
        conforms(
            &doc,
            &schema_of("/tax/ping", "get", "200"),
            &ping.json(),
            version,
        )
        .unwrap_or_else(|e| panic!("ping, {e}"));

        let body = common::calc_body(&[10_000]).to_string();
        let calc = c.send(Call {
            method: "POST",
            path: "/tax/calculations",
            key: Some(SHOP_LIVE),
            version: Some(version),
            body: Some(body.as_bytes()),
            content_type: None,
        });
        assert_eq!(calc.status, 200, "{}", calc.text);
        conforms(
            &doc,
            &schema_of("/tax/calculations", "post", "200"),
            &calc.json(),
            version,
        )
        .unwrap_or_else(|e| panic!("calculation, {e}"));

        let missing = c.bare("GET", "/tax/transactions/tr_nope", SHOP_LIVE, Some(version));
        assert_eq!(missing.status, 404);
        conforms(
            &doc,
            &schema_of("/tax/transactions/{transaction_id}", "get", "404"),
            &missing.json(),
            version,
        )
        .unwrap_or_else(|e| panic!("404, {e}"));
    }
}

#[test]
fn version_documents_are_closed_and_answer_get_only() {
    let server = TestServer::start("openapi-closed");
    let c = server.client();
    let doc = c
        .bare("GET", "/openapi/2026-03-01.json", SHOP_LIVE, None)
        .json();
    // Every object schema with properties is closed, but for metadata maps.
    fn closed(v: &Value, at: &str, open: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                // Fragments under anyOf/oneOf/not/if (no `type`) constrain an object
                // that is itself closed.
                let object = match m.get("type") {
                    Some(Value::String(t)) => t == "object",
                    Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
                    _ => false,
                };
                if object
                    && m.contains_key("properties")
                    && m.get("additionalProperties") != Some(&Value::Bool(false))
                {
                    open.push(at.to_string());
                }
                for (k, x) in m {
                    if k != "metadata" {
                        closed(x, &format!("{at}/{k}"), open);
                    }
                }
            }
            Value::Array(a) => a
                .iter()
                .enumerate()
                .for_each(|(i, x)| closed(x, &format!("{at}/{i}"), open)),
            _ => {}
        }
    }
    let mut open = Vec::new();
    for name in [
        "CalculationRequest",
        "CustomerCreate",
        "ProductCreate",
        "TransactionCreate",
        "RefundCreate",
        "RefundReversal",
        "MerchantCreate",
        "MerchantUpdate",
        "PlatformCalculationRequest",
        "PlatformTransactionCreate",
    ] {
        let schema = &doc["components"]["schemas"][name];
        assert!(schema.is_object(), "{name} missing");
        closed(schema, name, &mut open);
    }
    for name in ["CustomerInput", "LineItemInput", "Address", "OriginAddress"] {
        closed(&doc["components"]["schemas"][name], name, &mut open);
    }
    assert!(open.is_empty(), "open object schemas: {open:?}");
    // product_category lists the table's categories: the suite's table
    // (`levy_testkit::tennessee`) has three, CLOTHING, FOOD and GENERAL_MERCHANDISE.
    let categories =
        &doc["components"]["schemas"]["ProductCreate"]["properties"]["product_category"]["enum"];
    assert_eq!(
        categories,
        &serde_json::json!(["CLOTHING", "FOOD", "GENERAL_MERCHANDISE"])
    );
    // A version that does not exist has no document.
    let none = c.bare("GET", "/openapi/2025-01-01.json", SHOP_LIVE, None);
    assert_eq!(none.status, 404);
    // The documents answer GET only: 405 with Allow.
    let post = c.send(Call {
        method: "POST",
        path: "/openapi/2026-03-01.json",
        key: None,
        version: Some("2026-03-01"),
        body: Some(b"{}"),
        content_type: None,
    });
    assert_eq!(post.status, 405, "{}", post.text);
    assert_eq!(post.json()["type"], "METHOD_NOT_ALLOWED");
}

#[test]
fn registration_answers_conform_to_their_documented_schemas() {
    // Registrations (a levy extension, every version): create, get, list, expire and an
    // error, each checked against its version's document.
    let server = TestServer::start("openapi-registrations");
    let c = server.client();
    for version in ["2024-09-01", "2026-03-01"] {
        let doc = c
            .bare("GET", &format!("/openapi/{version}.json"), SHOP_LIVE, None)
            .json();
        let schema_of = |path: &str, method: &str, status: &str| -> Value {
            let r = &doc["paths"][path][method]["responses"][status];
            let r = match r.get("$ref").and_then(Value::as_str) {
                Some(reference) => resolve(&doc, reference).unwrap().clone(),
                None => r.clone(),
            };
            r["content"]["application/json"]["schema"].clone()
        };
        let body = serde_json::json!({"country": "US", "region": "TX", "active_from": 1_000,
                                      "local_jurisdictions": ["48201"]});
        let made = c.json(
            "POST",
            "/tax/registrations",
            SHOP_LIVE,
            Some(version),
            &body,
        );
        assert_eq!(made.status, 200, "{}", made.text);
        let made = made.json();
        let schema = schema_of("/tax/registrations", "post", "200");
        conforms(&doc, &schema, &made, version).unwrap_or_else(|e| panic!("create, {e}"));
        let id = made["id"].as_str().unwrap();
        let path = format!("/tax/registrations/{id}");
        let got = c.bare("GET", &path, SHOP_LIVE, Some(version));
        let schema = schema_of("/tax/registrations/{id}", "get", "200");
        conforms(&doc, &schema, &got.json(), version).unwrap_or_else(|e| panic!("get, {e}"));
        let list = c.bare(
            "GET",
            "/tax/registrations?country=us",
            SHOP_LIVE,
            Some(version),
        );
        let schema = schema_of("/tax/registrations", "get", "200");
        conforms(&doc, &schema, &list.json(), version).unwrap_or_else(|e| panic!("list, {e}"));
        // An expiry without a body: now.
        let expire = format!("{path}/expire");
        let expired = c.bare("POST", &expire, SHOP_LIVE, Some(version));
        assert_eq!(expired.status, 200, "{}", expired.text);
        assert_eq!(expired.json()["status"], "expired");
        let schema = schema_of("/tax/registrations/{id}/expire", "post", "200");
        conforms(&doc, &schema, &expired.json(), version).unwrap_or_else(|e| panic!("expire, {e}"));
        let again = c.bare("POST", &expire, SHOP_LIVE, Some(version));
        assert_eq!(again.status, 409, "{}", again.text);
        let schema = schema_of("/tax/registrations/{id}/expire", "post", "409");
        conforms(&doc, &schema, &again.json(), version).unwrap_or_else(|e| panic!("409, {e}"));
    }
}

#[test]
fn liability_report_answers_conform_to_their_documented_schemas() {
    // Liability reports (a levy extension, every version): a month with one sale in
    // Nashville, as JSON and as CSV, and an error, checked against each version's document.
    let server = TestServer::start("openapi-reports");
    let c = server.client();
    let calc = serde_json::json!({
        "customer": {"address": {"address_province": "TN", "address_postal_code": "37203",
                                 "address_country": "US"}},
        "order_details": {"customer_currency_code": "USD",
                          "line_items": [{"amount": 10000, "quantity": 1,
                                          "product_category": "GENERAL_MERCHANDISE"}]},
    });
    let made = c.json("POST", "/tax/calculations", SHOP_LIVE, None, &calc);
    assert_eq!(made.status, 200, "{}", made.text);
    let tx = serde_json::json!({"calculation_id": made.json()["id"], "reference_order_id": "r-1",
                                "transaction_processed_at": 1_772_409_600});
    let t = c.json("POST", "/tax/transactions", SHOP_LIVE, None, &tx);
    assert_eq!(t.status, 200, "{}", t.text);
    for version in ["2024-09-01", "2026-03-01"] {
        let doc = c
            .bare("GET", &format!("/openapi/{version}.json"), SHOP_LIVE, None)
            .json();
        let schema_of = |status: &str, media: &str| -> Value {
            let r = &doc["paths"]["/tax/reports/liability"]["get"]["responses"][status];
            let r = match r.get("$ref").and_then(Value::as_str) {
                Some(reference) => resolve(&doc, reference).unwrap().clone(),
                None => r.clone(),
            };
            r["content"][media]["schema"].clone()
        };
        let path = "/tax/reports/liability?from=2026-03-01&to=2026-03-31";
        let report = c.bare("GET", path, SHOP_LIVE, Some(version));
        assert_eq!(report.status, 200, "{}", report.text);
        let report = report.json();
        assert_eq!(report["jurisdictions"].as_array().map(Vec::len), Some(2));
        conforms(
            &doc,
            &schema_of("200", "application/json"),
            &report,
            version,
        )
        .unwrap_or_else(|e| panic!("report, {e}"));
        let csv = c.bare(
            "GET",
            &format!("{path}&format=csv"),
            SHOP_LIVE,
            Some(version),
        );
        assert_eq!(csv.status, 200, "{}", csv.text);
        assert!(csv.text.starts_with("country,region,"), "{}", csv.text);
        assert!(schema_of("200", "text/csv").is_object());
        let bad = c.bare(
            "GET",
            "/tax/reports/liability?from=2026-03-31&to=2026-03-01",
            SHOP_LIVE,
            Some(version),
        );
        assert_eq!(bad.status, 400, "{}", bad.text);
        conforms(
            &doc,
            &schema_of("400", "application/json"),
            &bad.json(),
            version,
        )
        .unwrap_or_else(|e| panic!("400, {e}"));
    }
}

#[test]
fn nexus_answers_conform_to_their_documented_schema() {
    // Economic nexus (a levy extension, every version): every state, one state registered,
    // and an error, each checked against its version's document.
    let server = TestServer::start("openapi-nexus");
    let c = server.client();
    let made = c.json(
        "POST",
        "/tax/registrations",
        SHOP_LIVE,
        Some("2026-03-01"),
        &serde_json::json!({"country": "US", "region": "TN", "active_from": 1_000}),
    );
    assert_eq!(made.status, 200, "{}", made.text);
    for version in ["2024-09-01", "2026-03-01"] {
        let doc = c
            .bare("GET", &format!("/openapi/{version}.json"), SHOP_LIVE, None)
            .json();
        let schema_of = |status: &str| -> Value {
            let r = &doc["paths"]["/tax/nexus"]["get"]["responses"][status];
            let r = match r.get("$ref").and_then(Value::as_str) {
                Some(reference) => resolve(&doc, reference).unwrap().clone(),
                None => r.clone(),
            };
            r["content"]["application/json"]["schema"].clone()
        };
        for query in ["", "?date=2026-11-26", "?region=tn&date=2026-01-15"] {
            let got = c.bare(
                "GET",
                &format!("/tax/nexus{query}"),
                SHOP_LIVE,
                Some(version),
            );
            assert_eq!(got.status, 200, "{}", got.text);
            conforms(&doc, &schema_of("200"), &got.json(), version)
                .unwrap_or_else(|e| panic!("{query}: {e}"));
        }
        let tn = c
            .bare("GET", "/tax/nexus?region=TN", SHOP_LIVE, Some(version))
            .json();
        assert_eq!(tn["states"][0]["status"], "registered", "{tn}");
        let bad = c.bare(
            "GET",
            "/tax/nexus?date=2026-02-30",
            SHOP_LIVE,
            Some(version),
        );
        assert_eq!(bad.status, 400, "{}", bad.text);
        conforms(&doc, &schema_of("400"), &bad.json(), version)
            .unwrap_or_else(|e| panic!("400: {e}"));
    }
}

/// Every POST of every version's document takes `Idempotency-Key` (issue 47), says that
/// a replayed answer carries `Idempotent-Replayed`, and may answer 409.
#[test]
fn every_version_documents_the_key_on_every_post() {
    let server = TestServer::start("idempotency-docs");
    let c = server.client();
    for version in levy_api::ApiVersion::ALL {
        let v = version.as_str();
        let doc = c
            .bare("GET", &format!("/openapi/{v}.json"), SHOP_LIVE, None)
            .json();
        let key = &doc["components"]["parameters"]["IdempotencyKey"];
        assert_eq!(key["name"], "Idempotency-Key", "{v}");
        assert_eq!(key["schema"]["maxLength"], 255, "{v}");
        let mut posts = 0;
        for (path, item) in doc["paths"].as_object().unwrap() {
            let Some(op) = item.get("post") else { continue };
            posts += 1;
            let params = op["parameters"].as_array().unwrap();
            assert!(
                params.contains(
                    &serde_json::json!({"$ref": "#/components/parameters/IdempotencyKey"})
                ),
                "{v} POST {path}"
            );
            let replayed = &op["responses"]["200"]["headers"]["Idempotent-Replayed"];
            assert!(replayed.is_object(), "{v} POST {path}");
            assert!(op["responses"]["409"].is_object(), "{v} POST {path}");
        }
        assert!(posts >= 9, "{v}: {posts} POST operations");
    }
}

/// `GET /openapi/dialects.json` (`openapi-dialects.json`): every `$ref` resolves, and the
/// answers of every operation of the TaxJar and AvaTax request shapes, errors included,
/// conform to the schemas it gives them.
#[test]
fn dialect_answers_conform_to_their_documented_schemas() {
    let doc: Value = serde_json::from_str(levy_server::openapi::DIALECTS_JSON).unwrap();
    let mut refs = Vec::new();
    collect_refs(&doc, &mut refs);
    for r in &refs {
        assert!(resolve(&doc, r).is_some(), "unresolved {r}");
    }
    let server = TestServer::start("openapi-dialects");
    let c = server.client();
    let taxes = r#"{"to_country": "US", "to_zip": "37203", "to_state": "TN", "shipping": 0,
        "line_items": [{"id": "1", "quantity": 1, "unit_price": 100, "product_tax_code": "99999"},
                       {"id": 2, "quantity": 2, "unit_price": "10.50", "discount": 1}]}"#;
    let create = r#"{"date": "2026-03-15", "customerCode": "C", "code": "SO-9",
        "addresses": {"shipFrom": {"region": "TN", "country": "US", "postalCode": "37203"},
                      "shipTo": {"line1": "1 Main", "city": "Nashville", "region": "TN",
                                 "country": "US", "postalCode": "37201"}},
        "lines": [{"number": 1, "amount": 100, "taxCode": "PC040100"}, {"amount": 5, "taxCode": "NOPE"}]}"#;
    let schema_of = |path: &str, method: &str, status: &str| -> Value {
        let r = &doc["paths"][path][method]["responses"][status];
        let r = match r.get("$ref").and_then(Value::as_str) {
            Some(reference) => resolve(&doc, reference).unwrap().clone(),
            None => r.clone(),
        };
        r["content"]["application/json"]["schema"].clone()
    };
    // (method, documented path, path asked, key, body, status)
    type Case<'a> = (
        &'a str,
        &'a str,
        &'a str,
        Option<&'a str>,
        Option<&'a str>,
        &'a str,
    );
    let cases: [Case<'_>; 11] = [
        (
            "post",
            "/v2/taxes",
            "/v2/taxes",
            Some(SHOP_LIVE),
            Some(taxes),
            "200",
        ),
        (
            "get",
            "/v2/rates/{zip}",
            "/v2/rates/37203?state=TN",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "get",
            "/v2/categories",
            "/v2/categories",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "get",
            "/v2/nexus/regions",
            "/v2/nexus/regions",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "get",
            "/api/v2/utilities/ping",
            "/api/v2/utilities/ping",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "get",
            "/api/v2/utilities/ping",
            "/api/v2/utilities/ping",
            None,
            None,
            "200",
        ),
        (
            "post",
            "/api/v2/transactions/create",
            "/api/v2/transactions/create",
            Some(SHOP_LIVE),
            Some(create),
            "200",
        ),
        (
            "get",
            "/api/v2/taxrates/bypostalcode",
            "/api/v2/taxrates/bypostalcode?country=US&postalCode=37203",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "get",
            "/api/v2/taxrates/byaddress",
            "/api/v2/taxrates/byaddress?line1=600%20Broadway&city=Nashville&region=TN&postalCode=37203&country=US",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "get",
            "/api/v2/definitions/taxcodes",
            "/api/v2/definitions/taxcodes",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "post",
            "/v2/taxes",
            "/v2/taxes",
            Some(SHOP_LIVE),
            Some(r#"{"to_country": "FR"}"#),
            "400",
        ),
    ];
    for (method, template, path, key, body, status) in cases {
        let a = c.send(Call {
            method: &method.to_ascii_uppercase(),
            path,
            key,
            version: None,
            body: body.map(str::as_bytes),
            content_type: None,
        });
        assert_eq!(a.status.to_string(), status, "{method} {path}: {}", a.text);
        let schema = schema_of(template, method, status);
        if let Err(e) = conforms(&doc, &schema, &a.json(), path) {
            panic!("{method} {path}:\n  {e}\n{}", a.text);
        }
    }
    // The recording operations, in order: each answer against its schema.
    let order = r#"{"transaction_id": "o-1", "transaction_date": "2026/03/15", "to_country": "US",
        "to_zip": "37203", "to_state": "TN", "amount": 100, "shipping": 0, "sales_tax": 9.75,
        "line_items": [{"id": "1", "quantity": 1, "unit_price": 100}]}"#;
    let refund = r#"{"transaction_id": "r-1", "transaction_reference_id": "o-1",
        "transaction_date": "2026-03-16", "amount": -40, "shipping": 0, "sales_tax": -3.9,
        "line_items": [{"id": "1", "quantity": 1, "unit_price": 40}]}"#;
    let invoice = r#"{"type": "SalesInvoice", "commit": true, "code": "INV-9", "date": "2026-03-15",
        "customerCode": "C", "addresses": {"singleLocation": {"region": "TN", "country": "US",
        "postalCode": "37203"}}, "lines": [{"number": "1", "amount": 100}, {"number": "2", "amount": 10}]}"#;
    let ret = r#"{"type": "ReturnInvoice", "commit": true, "code": "RET-8", "referenceCode": "INV-9",
        "date": "2026-03-16", "lines": [{"number": "2", "amount": -10}]}"#;
    let av_refund = r#"{"refundTransactionCode": "RET-9", "refundDate": "2026-03-17",
        "refundType": "Partial", "refundLines": ["1"]}"#;
    let updated = order.replace("\"unit_price\": 100", "\"unit_price\": 50");
    let inv10 = invoice.replace("INV-9", "INV-10");
    let coa = format!(r#"{{"createTransactionModel": {inv10}}}"#);
    let adjust = format!(
        r#"{{"adjustmentReason": "PriceAdjusted", "newTransaction": {}}}"#,
        inv10.replace("\"amount\": 100", "\"amount\": 50")
    );
    let company = "/api/v2/companies/{companyCode}/transactions/{transactionCode}";
    let (refund_t, void_t) = (format!("{company}/refund"), format!("{company}/void"));
    let (adjust_t, commit_t, uncommit_t) = (
        format!("{company}/adjust"),
        format!("{company}/commit"),
        format!("{company}/uncommit"),
    );
    let recording: [Case<'_>; 21] = [
        (
            "post",
            "/v2/transactions/orders",
            "/v2/transactions/orders",
            Some(SHOP_LIVE),
            Some(order),
            "200",
        ),
        (
            "get",
            "/v2/transactions/orders/{transaction_id}",
            "/v2/transactions/orders/o-1",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "post",
            "/v2/transactions/refunds",
            "/v2/transactions/refunds",
            Some(SHOP_LIVE),
            Some(refund),
            "200",
        ),
        (
            "get",
            "/v2/transactions/refunds/{transaction_id}",
            "/v2/transactions/refunds/r-1",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "delete",
            "/v2/transactions/refunds/{transaction_id}",
            "/v2/transactions/refunds/r-1",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "get",
            "/v2/transactions/refunds/{transaction_id}",
            "/v2/transactions/refunds/nope",
            Some(SHOP_LIVE),
            None,
            "404",
        ),
        (
            "put",
            "/v2/transactions/orders/{transaction_id}",
            "/v2/transactions/orders/o-1",
            Some(SHOP_LIVE),
            Some(&updated),
            "200",
        ),
        (
            "put",
            "/v2/transactions/orders/{transaction_id}",
            "/v2/transactions/orders/nope",
            Some(SHOP_LIVE),
            Some(&updated),
            "400",
        ),
        (
            "post",
            "/v2/transactions/orders",
            "/v2/transactions/orders",
            Some(SHOP_LIVE),
            Some(r#"{"transaction_id": "o-2"}"#),
            "400",
        ),
        (
            "post",
            "/api/v2/transactions/create",
            "/api/v2/transactions/create",
            Some(SHOP_LIVE),
            Some(invoice),
            "200",
        ),
        (
            "post",
            "/api/v2/transactions/create",
            "/api/v2/transactions/create",
            Some(SHOP_LIVE),
            Some(ret),
            "200",
        ),
        (
            "get",
            company,
            "/api/v2/companies/DEFAULT/transactions/INV-9",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "post",
            &refund_t,
            "/api/v2/companies/DEFAULT/transactions/INV-9/refund",
            Some(SHOP_LIVE),
            Some(av_refund),
            "200",
        ),
        (
            "get",
            company,
            "/api/v2/companies/DEFAULT/transactions/RET-9",
            Some(SHOP_LIVE),
            None,
            "200",
        ),
        (
            "post",
            &adjust_t,
            "/api/v2/companies/DEFAULT/transactions/INV-9/adjust",
            Some(SHOP_LIVE),
            Some(&adjust.replace("INV-10", "INV-9")),
            "409",
        ),
        (
            "post",
            "/api/v2/transactions/createoradjust",
            "/api/v2/transactions/createoradjust",
            Some(SHOP_LIVE),
            Some(&coa),
            "200",
        ),
        (
            "post",
            &adjust_t,
            "/api/v2/companies/DEFAULT/transactions/INV-10/adjust",
            Some(SHOP_LIVE),
            Some(&adjust),
            "200",
        ),
        (
            "post",
            &commit_t,
            "/api/v2/companies/DEFAULT/transactions/INV-10/commit",
            Some(SHOP_LIVE),
            Some(r#"{"commit": true}"#),
            "200",
        ),
        (
            "post",
            &uncommit_t,
            "/api/v2/companies/DEFAULT/transactions/INV-10/uncommit",
            Some(SHOP_LIVE),
            None,
            "400",
        ),
        (
            "post",
            &void_t,
            "/api/v2/companies/DEFAULT/transactions/INV-9/void",
            Some(SHOP_LIVE),
            Some(r#"{"code": "DocVoided"}"#),
            "200",
        ),
        (
            "get",
            company,
            "/api/v2/companies/DEFAULT/transactions/NOPE",
            Some(SHOP_LIVE),
            None,
            "404",
        ),
    ];
    for (method, template, path, key, body, status) in recording {
        let a = c.send(Call {
            method: &method.to_ascii_uppercase(),
            path,
            key,
            version: None,
            body: body.map(str::as_bytes),
            content_type: None,
        });
        assert_eq!(a.status.to_string(), status, "{method} {path}: {}", a.text);
        let schema = schema_of(template, method, status);
        assert!(
            schema.is_object(),
            "{method} {template} {status} is documented"
        );
        if let Err(e) = conforms(&doc, &schema, &a.json(), path) {
            panic!("{method} {path}:\n  {e}\n{}", a.text);
        }
    }
    // Errors of each shape: a bad key.
    for (method, template) in [
        ("post", "/v2/taxes"),
        ("post", "/api/v2/transactions/create"),
    ] {
        let a = c.send(Call {
            method: "POST",
            path: template,
            key: Some("sk_test_nope"),
            version: None,
            body: Some(b"{}"),
            content_type: None,
        });
        assert_eq!(a.status, 401);
        let schema = schema_of(template, method, "401");
        if let Err(e) = conforms(&doc, &schema, &a.json(), template) {
            panic!("{template}:\n  {e}\n{}", a.text);
        }
    }
}
