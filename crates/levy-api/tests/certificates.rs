//! Exemption certificates and certificate requests: live only, account scoping, the cancel
//! state table, status from dates, pre-signed document URLs, the import, and exemption in
//! calculations by certificate.

mod common;
use std::sync::Arc;

use common::*;
use levy_api::*;
use levy_core::*;
use serde_json::{json, Value};

const V3: Option<&str> = Some("2026-03-01");
const DAY: i64 = 86_400;

/// Three states: the Tennessee table of `levy_testkit::tennessee` (Tennessee 7% + Davidson
/// County 2.25% at 37203) with Kentucky 6% at 40202 and Georgia 4% + Fulton County 3% at
/// 30303 added.
fn table() -> Arc<AnyTable> {
    let tennessee = levy_testkit::tennessee::Tennessee::default();
    let (mut b, _) = tennessee.builder();
    let mut jur = |code: &str, name: &str, level: Level, region: &str, authority: &str| {
        b.jurisdiction(JurisdictionSpec {
            code: code.into(),
            name: name.into(),
            level,
            country: "US".into(),
            region: region.into(),
            authority: authority.into(),
            tax_type: TaxType::Sales,
        })
        .unwrap()
    };
    let ky = jur(
        "21",
        "KENTUCKY",
        Level::State,
        "KY",
        "KENTUCKY DEPARTMENT OF REVENUE",
    );
    let ga = jur(
        "13",
        "GEORGIA",
        Level::State,
        "GA",
        "GEORGIA DEPARTMENT OF REVENUE",
    );
    let fulton = jur("13121", "FULTON", Level::County, "GA", "FULTON COUNTY");
    for (j, rate) in [(ky, 6), (ga, 4), (fulton, 3)] {
        b.rule(RuleSpec::flat(
            j,
            "GENERAL_MERCHANDISE",
            Decimal::new(rate, 2),
            Date::MIN,
            Date::MAX,
            "SALES TAX",
        ))
        .unwrap();
    }
    b.region("US", "KY", "KENTUCKY", &[ky], "40202").unwrap();
    b.region("US", "GA", "GEORGIA", &[ga], "30303").unwrap();
    b.zip(40202, "KY", "LOUISVILLE", &[ky], 1000).unwrap();
    b.zip(30303, "GA", "ATLANTA", &[ga, fulton], 1000).unwrap();
    levy_testkit::tennessee::open(&b.build(tennessee.build_time).unwrap())
}

fn svc() -> Service {
    service_over(table())
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64
}

fn customer(svc: &Service, key: &str, body: &str) -> String {
    let (s, c) = post(svc, "/tax/customers", key, None, body);
    assert_eq!(s, 200, "{c}");
    c["id"].as_str().unwrap().to_string()
}

fn import(svc: &Service, account: &str, doc: &Value) -> ImportReport {
    svc.import_certificates(
        account,
        doc.to_string().as_bytes(),
        std::path::Path::new("."),
    )
    .unwrap()
}

fn cert(
    reference: &str,
    customer: &str,
    status: &str,
    regions: &[&str],
    valid_from: i64,
    expires_at: Option<i64>,
) -> Value {
    json!({
        "reference": reference,
        "customer": {"reference_customer_id": customer},
        "linked_buyer": {"id": "mb_acme", "legal_name": "Acme Holdings LLC"},
        "type": "RESALE",
        "status": status,
        "jurisdictions": regions.iter().map(|r| json!({"country": "US", "region": r})).collect::<Vec<_>>(),
        "valid_from": valid_from,
        "expires_at": expires_at,
    })
}

/// Sends a request without any key (the document URL).
fn fetch(svc: &Service, url: &str) -> Response {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    svc.handle(&Request {
        method: "GET".into(),
        path: path.into(),
        query: query.into(),
        ..Default::default()
    })
}

fn by_reference(report: &ImportReport, reference: &str) -> String {
    report
        .certificates
        .iter()
        .chain(&report.requests)
        .find(|i| i.reference.as_deref() == Some(reference))
        .unwrap()
        .id
        .clone()
}

#[test]
fn live_only_and_2026_03_01_only() {
    let svc = svc();
    let paths = [
        ("GET", "/tax/certificate-requests"),
        ("GET", "/tax/certificate-requests/certreq_x"),
        ("DELETE", "/tax/certificate-requests/certreq_x"),
        ("GET", "/tax/certificates"),
        ("GET", "/tax/certificates/cert_x"),
    ];
    for (method, path) in paths {
        for key in [TEST_KEY, OTHER_TEST_KEY] {
            let (s, v) = call(&svc, method, path, Some(key), V3, "");
            assert_eq!(
                (s, flat_type(&v, 403).as_str()),
                (403, "TESTMODE_NOT_SUPPORTED"),
                "{method} {path}"
            );
        }
        for version in [None, Some("2025-05-12")] {
            let (s, v) = call(&svc, method, path, Some(LIVE_KEY), version, "");
            assert_eq!((s, old_code(&v).as_str()), (404, "not_found"));
        }
        let (s, v) = call(&svc, method, path, Some(LIVE_KEY), Some("2026-01-01"), "");
        assert_eq!((s, flat_type(&v, 404).as_str()), (404, "NOT_FOUND"));
        assert!(v["message"].as_str().unwrap().contains("2026-03-01"));
    }
}

#[test]
fn cancel_state_table() {
    let svc = svc();
    customer(
        &svc,
        LIVE_KEY,
        r#"{"email": "a@acme.example", "reference_customer_id": "crm-1"}"#,
    );
    let req = |reference: &str, status: &str| {
        json!({"reference": reference, "customer": {"reference_customer_id": "crm-1"},
        "status": status, "type": "RESALE", "jurisdictions": [{"country": "US", "region": "KY"}]})
    };
    let report = import(
        &svc,
        "shop",
        &json!({"certificate_requests": [
        req("p", "pending"), req("c", "canceled"), req("f", "fulfilled"), req("i", "invalid")]}),
    );
    let id = |r: &str| by_reference(&report, r);
    let del = |id: &str| {
        call(
            &svc,
            "DELETE",
            &format!("/tax/certificate-requests/{id}"),
            Some(LIVE_KEY),
            V3,
            "",
        )
    };
    let read = |id: &str| {
        get(
            &svc,
            &format!("/tax/certificate-requests/{id}"),
            LIVE_KEY,
            V3,
        )
    };

    // pending -> canceled (terminal).
    let (s, before) = read(&id("p"));
    assert_eq!((s, before["status"].as_str()), (200, Some("pending")));
    assert_eq!(before["object"], "tax.certificate_request");
    let (s, first) = del(&id("p"));
    assert_eq!((s, first["status"].as_str()), (200, Some("canceled")));
    assert!(first["canceled_at"].is_i64());
    // canceled -> canceled: 200 with the same body.
    let (s, second) = del(&id("p"));
    assert_eq!((s, &second), (200, &first));
    assert_eq!(read(&id("p")).1, first);
    // Imported as canceled: canceling answers it as it is.
    let (s, c) = del(&id("c"));
    assert_eq!((s, c["status"].as_str()), (200, Some("canceled")));
    assert_eq!(del(&id("c")).1, c);
    // fulfilled: 409 REQUEST_ALREADY_FULFILLED, unchanged.
    let (s, v) = del(&id("f"));
    assert_eq!(
        (s, flat_type(&v, 409).as_str()),
        (409, "REQUEST_ALREADY_FULFILLED")
    );
    assert_eq!(read(&id("f")).1["status"], "fulfilled");
    // invalid: 409 REQUEST_INVALID, unchanged.
    let (s, v) = del(&id("i"));
    assert_eq!((s, flat_type(&v, 409).as_str()), (409, "REQUEST_INVALID"));
    assert_eq!(read(&id("i")).1["status"], "invalid");
    // unknown: 404.
    let (s, v) = del("certreq_unknown");
    assert_eq!(
        (s, flat_type(&v, 404).as_str()),
        (404, "CERTIFICATE_REQUEST_NOT_FOUND")
    );
    let (s, v) = read("certreq_unknown");
    assert_eq!(
        (s, flat_type(&v, 404).as_str()),
        (404, "CERTIFICATE_REQUEST_NOT_FOUND")
    );
    // The list, and its status filter.
    let (s, l) = get(&svc, "/tax/certificate-requests", LIVE_KEY, V3);
    assert_eq!(
        (s, l["certificate_requests"].as_array().unwrap().len()),
        (200, 4)
    );
    let (_, l) = get(
        &svc,
        "/tax/certificate-requests?status=canceled",
        LIVE_KEY,
        V3,
    );
    let mut got: Vec<&str> = l["certificate_requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    got.sort();
    let mut want = vec![id("p"), id("c")];
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn status_follows_dates_and_filters() {
    let svc = svc();
    let cus = customer(
        &svc,
        LIVE_KEY,
        r#"{"email": "a@acme.example", "reference_customer_id": "crm-1"}"#,
    );
    let t = now();
    let start = t - 400 * DAY;
    // Two minutes either side of the 30-day window's edge, and of expiry.
    let report = import(
        &svc,
        "shop",
        &json!({"certificates": [
            cert("far", "crm-1", "active", &["TN"], start, Some(t + 30 * DAY + 120)),
            cert("window", "crm-1", "active", &["TN"], start, Some(t + 30 * DAY - 120)),
            cert("soon", "crm-1", "active", &["KY"], start, Some(t + 120)),
            cert("lapsed", "crm-1", "active", &["KY"], start, Some(t - 120)),
            cert("forever", "crm-1", "active", &["GA"], start, None),
            cert("rejected", "crm-1", "invalid", &["GA"], start, Some(t + 400 * DAY)),
            cert("review", "crm-1", "processing", &["GA"], start, None),
            cert("asked", "crm-1", "needs_info", &["GA"], start, None),
        ]}),
    );
    let status = |r: &str| {
        let (s, c) = get(
            &svc,
            &format!("/tax/certificates/{}", by_reference(&report, r)),
            LIVE_KEY,
            V3,
        );
        assert_eq!(s, 200, "{c}");
        c["status"].as_str().unwrap().to_string()
    };
    for (r, want) in [
        ("far", "active"),
        ("window", "expiring"),
        ("soon", "expiring"),
        ("lapsed", "expired"),
        ("forever", "active"),
        ("rejected", "invalid"),
        ("review", "processing"),
        ("asked", "needs_info"),
    ] {
        assert_eq!(status(r), want, "{r}");
    }
    let list = |q: &str| -> Vec<String> {
        let (s, l) = get(&svc, &format!("/tax/certificates{q}"), LIVE_KEY, V3);
        assert_eq!(s, 200, "{l}");
        let mut refs: Vec<String> = l["certificates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["reference"].as_str().unwrap().to_string())
            .collect();
        refs.sort();
        refs
    };
    assert_eq!(list("?status=expiring"), vec!["soon", "window"]);
    assert_eq!(list("?status=expired"), vec!["lapsed"]);
    assert_eq!(list("?jurisdiction=US-KY"), vec!["lapsed", "soon"]);
    assert_eq!(list("?jurisdiction=TN&status=active"), vec!["far"]);
    assert_eq!(list(&format!("?customer_id={cus}&type=RESALE")).len(), 8);
    assert_eq!(list("?reference_customer_id=crm-1").len(), 8);
    assert_eq!(list("?reference_customer_id=nobody"), Vec::<String>::new());
    assert_eq!(list("?type=GOVERNMENT"), Vec::<String>::new());
    // expires in [t, t + 30 days): "window" (t + 30d - 120) and "soon" (t + 120).
    assert_eq!(
        list(&format!(
            "?expires_after={t}&expires_before={}",
            t + 30 * DAY
        )),
        vec!["soon", "window"]
    );
    assert_eq!(
        list(&format!("?created_before={}", t - DAY)),
        Vec::<String>::new()
    );
    // Pages: 8 certificates, 3 at a time.
    let (_, p1) = get(&svc, "/tax/certificates?limit=3", LIVE_KEY, V3);
    assert_eq!(
        (
            p1["certificates"].as_array().unwrap().len(),
            &p1["has_more"]
        ),
        (3, &json!(true))
    );
    let (_, p3) = get(
        &svc,
        &format!("/tax/certificates?limit=3&cursor={}", {
            let (_, p2) = get(
                &svc,
                &format!(
                    "/tax/certificates?limit=3&cursor={}",
                    p1["last_certificate_id"].as_str().unwrap()
                ),
                LIVE_KEY,
                V3,
            );
            p2["last_certificate_id"].as_str().unwrap().to_string()
        }),
        LIVE_KEY,
        V3,
    );
    assert_eq!(
        (
            p3["certificates"].as_array().unwrap().len(),
            &p3["has_more"]
        ),
        (2, &json!(false))
    );
    for bad in [
        "?status=lapsed",
        "?limit=0",
        "?limit=101",
        "?expires_after=soon",
        "?colour=red",
    ] {
        let (s, v) = get(&svc, &format!("/tax/certificates{bad}"), LIVE_KEY, V3);
        assert_eq!(s, 400, "{bad}: {v}");
    }
    let (s, v) = get(&svc, "/tax/certificates/cert_unknown", LIVE_KEY, V3);
    assert_eq!(
        (s, flat_type(&v, 404).as_str()),
        (404, "CERTIFICATE_NOT_FOUND")
    );
}

#[test]
fn customer_name_falls_back_to_the_linked_buyer() {
    let svc = svc();
    let named = customer(
        &svc,
        LIVE_KEY,
        r#"{"email": "a@acme.example", "name": "Acme Store 12", "reference_customer_id": "crm-named"}"#,
    );
    let nameless = customer(
        &svc,
        LIVE_KEY,
        r#"{"email": "b@acme.example", "reference_customer_id": "crm-nameless"}"#,
    );
    let t = now();
    let report = import(
        &svc,
        "shop",
        &json!({"certificates": [
            cert("a", "crm-named", "active", &["TN"], t - DAY, None),
            cert("b", "crm-nameless", "active", &["TN"], t - DAY, None),
        ]}),
    );
    let (_, a) = get(
        &svc,
        &format!("/tax/certificates/{}", by_reference(&report, "a")),
        LIVE_KEY,
        V3,
    );
    assert_eq!(
        a["customer"],
        json!({"id": named, "reference_customer_id": "crm-named", "name": "Acme Store 12"})
    );
    assert_eq!(
        a["linked_buyer"],
        json!({"id": "mb_acme", "legal_name": "Acme Holdings LLC"})
    );
    let (_, b) = get(
        &svc,
        &format!("/tax/certificates/{}", by_reference(&report, "b")),
        LIVE_KEY,
        V3,
    );
    assert_eq!(
        b["customer"],
        json!({"id": nameless, "reference_customer_id": "crm-nameless", "name": "Acme Holdings LLC"})
    );
    assert_eq!(b["object"], "tax.exemption_certificate");
    assert_eq!(
        b["download_url"],
        Value::Null,
        "no document: null, and still 200"
    );
}

#[test]
fn download_urls_are_minted_signed_and_expire() {
    let svc = svc();
    customer(
        &svc,
        LIVE_KEY,
        r#"{"email": "a@acme.example", "reference_customer_id": "crm-1"}"#,
    );
    let pdf = b"%PDF-1.4 certificate of resale\n";
    let mut c = cert("doc", "crm-1", "active", &["TN"], now() - DAY, None);
    // base64 of the bytes above, by hand: the RFC 4648 alphabet over 3-byte groups.
    c["document"] = json!({"content_type": "application/pdf", "base64": "JVBERi0xLjQgY2VydGlmaWNhdGUgb2YgcmVzYWxlCg=="});
    let report = import(&svc, "shop", &json!({"certificates": [c]}));
    let id = by_reference(&report, "doc");
    let read = || {
        let (s, c) = get(&svc, &format!("/tax/certificates/{id}"), LIVE_KEY, V3);
        assert_eq!(s, 200, "{c}");
        c["download_url"].as_str().unwrap().to_string()
    };
    let t = now();
    let url = read();
    assert!(
        url.starts_with(&format!("/tax/certificates/{id}/document?expires=")),
        "{url}"
    );
    let expires: i64 = url
        .split("expires=")
        .nth(1)
        .unwrap()
        .split('&')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // About one hour ahead (3600 s, with a second of slack for the clock).
    assert!((t + 3600..=t + 3601).contains(&expires), "{expires} vs {t}");
    // Every read mints a new URL.
    let url2 = read();
    assert_ne!(url, url2);
    // The URL needs no key.
    for u in [&url, &url2] {
        let r = fetch(&svc, u);
        assert_eq!(r.status, 200);
        assert_eq!(r.body, pdf);
        assert!(r
            .headers
            .contains(&("Content-Type".to_string(), "application/pdf".to_string())));
    }
    // Tampering: another signature, another expiry, another certificate id.
    let sig_at = url.find("signature=").unwrap() + "signature=".len();
    let mut bad_sig = url.clone();
    let flipped = if &url[sig_at..sig_at + 1] == "0" {
        "1"
    } else {
        "0"
    };
    bad_sig.replace_range(sig_at..sig_at + 1, flipped);
    let later = url.replace(
        &format!("expires={expires}"),
        &format!("expires={}", expires + 3600),
    );
    let other = url.replace(&id, "cert_00000000000000000000000000000000");
    for u in [
        bad_sig,
        later,
        other,
        url.split('&').next().unwrap().to_string(),
    ] {
        let r = fetch(&svc, &u);
        assert_eq!(r.status, 403, "{u}");
        let v: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(flat_type(&v, 403), "INVALID_SIGNATURE");
    }
    // Expired: a correctly signed URL whose time has passed.
    let old = svc.certificate_download_url(&id, now() - 1).unwrap();
    let r = fetch(&svc, &old);
    let v: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(
        (r.status, flat_type(&v, 403).as_str()),
        (403, "DOWNLOAD_URL_EXPIRED")
    );
    // Only GET.
    let r = svc.handle(&Request {
        method: "DELETE".into(),
        path: format!("/tax/certificates/{id}/document"),
        ..Default::default()
    });
    assert_eq!(r.status, 405);
    // The list mints URLs too.
    let (_, l) = get(&svc, "/tax/certificates", LIVE_KEY, V3);
    assert_eq!(
        fetch(&svc, l["certificates"][0]["download_url"].as_str().unwrap()).status,
        200
    );
}

#[test]
fn accounts_are_scoped_both_ways() {
    let svc = svc();
    customer(
        &svc,
        LIVE_KEY,
        r#"{"email": "a@shop.example", "reference_customer_id": "crm-1"}"#,
    );
    customer(
        &svc,
        OTHER_LIVE_KEY,
        r#"{"email": "a@other.example", "reference_customer_id": "crm-1"}"#,
    );
    let t = now();
    let req = json!({"reference": "r", "customer": {"reference_customer_id": "crm-1"}, "status": "pending", "jurisdictions": [{"country": "US", "region": "TN"}]});
    let shop = import(
        &svc,
        "shop",
        &json!({"certificates": [cert("s", "crm-1", "active", &["TN"], t - DAY, None)], "certificate_requests": [req.clone()]}),
    );
    let other = import(
        &svc,
        "other",
        &json!({"certificates": [cert("o", "crm-1", "active", &["TN"], t - DAY, None)], "certificate_requests": [req]}),
    );
    for (mine, theirs, key) in [(&shop, &other, LIVE_KEY), (&other, &shop, OTHER_LIVE_KEY)] {
        let (s, _) = get(
            &svc,
            &format!("/tax/certificates/{}", mine.certificates[0].id),
            key,
            V3,
        );
        assert_eq!(s, 200);
        let (s, v) = get(
            &svc,
            &format!("/tax/certificates/{}", theirs.certificates[0].id),
            key,
            V3,
        );
        assert_eq!(
            (s, flat_type(&v, 404).as_str()),
            (404, "CERTIFICATE_NOT_FOUND")
        );
        let (s, v) = get(
            &svc,
            &format!("/tax/certificate-requests/{}", theirs.requests[0].id),
            key,
            V3,
        );
        assert_eq!(
            (s, flat_type(&v, 404).as_str()),
            (404, "CERTIFICATE_REQUEST_NOT_FOUND")
        );
        let (s, v) = call(
            &svc,
            "DELETE",
            &format!("/tax/certificate-requests/{}", theirs.requests[0].id),
            Some(key),
            V3,
            "",
        );
        assert_eq!(
            (s, flat_type(&v, 404).as_str()),
            (404, "CERTIFICATE_REQUEST_NOT_FOUND")
        );
        let (_, l) = get(&svc, "/tax/certificates", key, V3);
        let ids: Vec<&str> = l["certificates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, vec![mine.certificates[0].id.as_str()]);
        let (_, l) = get(&svc, "/tax/certificate-requests", key, V3);
        assert_eq!(l["certificate_requests"].as_array().unwrap().len(), 1);
    }
    // The other account's request is still pending after the refused cancel.
    let (_, r) = get(
        &svc,
        &format!("/tax/certificate-requests/{}", other.requests[0].id),
        OTHER_LIVE_KEY,
        V3,
    );
    assert_eq!(r["status"], "pending");
}

#[test]
fn import_is_validated_and_all_or_nothing() {
    let svc = svc();
    customer(
        &svc,
        LIVE_KEY,
        r#"{"email": "a@acme.example", "reference_customer_id": "crm-1"}"#,
    );
    // A test-mode customer is not a live customer.
    customer(
        &svc,
        TEST_KEY,
        r#"{"email": "t@acme.example", "reference_customer_id": "crm-test"}"#,
    );
    let t = now();
    let good = cert("ok", "crm-1", "active", &["TN"], t - DAY, None);
    let cases = [
        (
            cert("x", "crm-test", "active", &["TN"], t, None),
            "certificates[1].customer.reference_customer_id",
        ),
        (
            cert("x", "crm-1", "expiring", &["TN"], t, None),
            "certificates[1].status",
        ),
        (
            cert("x", "crm-1", "active", &[], t, None),
            "certificates[1].jurisdictions[0]",
        ),
        (
            cert("x", "crm-1", "active", &["T-N"], t, None),
            "certificates[1].jurisdictions[0].region",
        ),
        (
            cert("x", "crm-1", "active", &["TN"], t, Some(t - 1)),
            "certificates[1].expires_at",
        ),
        (
            {
                let mut c = cert("x", "crm-1", "active", &["TN"], t, None);
                c["document"] = json!({"content_type": "application/pdf", "base64": "@@"});
                c
            },
            "certificates[1].document.base64",
        ),
        (
            {
                let mut c = cert("x", "crm-1", "active", &["TN"], t, None);
                c["document"] = json!({"content_type": "pdf\r\nX-Evil: 1", "base64": ""});
                c
            },
            "certificates[1].document.content_type",
        ),
        (
            {
                let mut c = cert("x", "crm-1", "active", &["TN"], t, None);
                c["colour"] = json!("red");
                c
            },
            "certificates[1].colour",
        ),
    ];
    for (bad, field) in cases {
        let doc = json!({"certificates": [good.clone(), bad]});
        let e = svc
            .import_certificates(
                "shop",
                doc.to_string().as_bytes(),
                std::path::Path::new("."),
            )
            .unwrap_err();
        assert_eq!(e.field.as_deref(), Some(field), "{e}");
    }
    // Nothing was stored by the failed imports.
    let (_, l) = get(&svc, "/tax/certificates", LIVE_KEY, V3);
    assert_eq!(l["certificates"], json!([]));
    // A document by path, relative to the import file's folder.
    let dir = levy_testkit::TempDir::new("levy-import");
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::write(dir.join("docs/a.png"), [0x89, b'P', b'N', b'G']).unwrap();
    // The fresh ledger has no customers: this certificate names its linked buyer only.
    let mut c = good.clone();
    c.as_object_mut().unwrap().remove("customer");
    c["document"] = json!({"content_type": "image/png", "path": "docs/a.png"});
    std::fs::write(
        dir.join("import.json"),
        json!({"certificates": [c]}).to_string(),
    )
    .unwrap();
    // The service's keys file: the import is stored under the account's internal id.
    let (_, file_live_key) =
        levy_api::keys::create_account_keys(&dir.join("service-keys.toml"), "shop").unwrap();
    let report = levy_api::import_file(&levy_api::ImportFile {
        file: dir.join("import.json"),
        account: "shop".into(),
        ledger: dir.join("ledger.sqlite"),
        keys: dir.join("service-keys.toml"),
    })
    .unwrap();
    assert_eq!(report.certificates.len(), 1);
    // `levy certificates import` prints this as `certificate cert_… (ok)` (levy-cli).
    assert_eq!(
        report,
        levy_api::ImportReport {
            certificates: vec![levy_api::ImportedItem {
                reference: Some("ok".into()),
                id: report.certificates[0].id.clone(),
            }],
            requests: vec![],
        }
    );
    assert!(report.certificates[0].id.starts_with("cert_"));
    // The ledger file now serves the certificate and its document.
    let file_svc = Service::open(ServiceConfig {
        table: TableSource::Table(table()),
        ledger: dir.join("ledger.sqlite").to_string_lossy().into_owned(),
        keys: KeySource::File(dir.join("service-keys.toml")),
    })
    .unwrap();
    let (s, got) = get(
        &file_svc,
        &format!("/tax/certificates/{}", report.certificates[0].id),
        &file_live_key,
        V3,
    );
    assert_eq!(s, 200, "{got}");
    assert_eq!(got["customer"], Value::Null);
    let r = fetch(&file_svc, got["download_url"].as_str().unwrap());
    assert_eq!(
        (r.status, r.body.as_slice()),
        (200, &[0x89, b'P', b'N', b'G'][..])
    );
    // The keys file check catches an unknown account.
    std::fs::write(dir.join("keys.toml"), "").unwrap();
    let e = levy_api::import_file(&levy_api::ImportFile {
        file: dir.join("import.json"),
        account: "shop".into(),
        ledger: dir.join("ledger.sqlite"),
        keys: dir.join("keys.toml"),
    })
    .unwrap_err();
    assert_eq!(e.kind, "INVALID_ACCOUNT");
    drop(file_svc);
}

fn calc(
    svc: &Service,
    key: &str,
    customer: &str,
    postal: &str,
    region: &str,
    extra: &str,
) -> Value {
    let (s, c) = post(
        svc,
        "/tax/calculations",
        key,
        V3,
        &format!(
            r#"{{"customer": {{"id": "{customer}", "address": {{"address_province": "{region}",
             "address_postal_code": "{postal}", "address_country": "US"}}}},
           "order_details": {{"customer_currency_code": "USD",
             "line_items": [{{"amount": 10000, "quantity": 1, "product_category": "GENERAL_MERCHANDISE"}}]}},
           {ORIGIN}{extra}}}"#
        ),
    );
    assert_eq!(s, 200, "{c}");
    c
}

#[test]
fn certificates_exempt_exactly_the_states_they_cover() {
    let svc = svc();
    let cus = customer(
        &svc,
        LIVE_KEY,
        r#"{"email": "a@acme.example", "reference_customer_id": "crm-1"}"#,
    );
    let plain = customer(&svc, LIVE_KEY, r#"{"email": "b@acme.example"}"#);
    let t = now();
    let report = import(
        &svc,
        "shop",
        &json!({"certificates": [
            cert("tn-ky", "crm-1", "active", &["TN", "KY"], t - 10 * DAY, Some(t + 10 * DAY)),
            cert("ga-lapsed", "crm-1", "active", &["GA"], t - 400 * DAY, Some(t - DAY)),
            cert("ga-rejected", "crm-1", "invalid", &["GA"], t - 10 * DAY, None),
        ]}),
    );
    let tn_ky = by_reference(&report, "tn-ky");
    // Tennessee: the state and Davidson County are both covered: no tax.
    let c = calc(&svc, LIVE_KEY, &cus, "37203", "TN", "");
    assert_eq!(n(&c["total_tax_amount"]), "0");
    let j = c["line_items"][0]["tax_jurisdictions"].as_array().unwrap();
    assert_eq!(j.len(), 2);
    for e in j {
        assert_eq!(e["note"], "EXEMPTION_CERTIFICATE");
        assert_eq!(e["exemption_certificate_id"].as_str(), Some(tn_ky.as_str()));
        assert_eq!(n(&e["tax_due_decimal"]), "0");
    }
    // Kentucky: covered by the same (expiring) certificate.
    let c = calc(&svc, LIVE_KEY, &cus, "40202", "KY", "");
    assert_eq!(n(&c["total_tax_amount"]), "0");
    assert_eq!(
        c["line_items"][0]["tax_jurisdictions"][0]["note"],
        "EXEMPTION_CERTIFICATE"
    );
    // Georgia: only an expired and a rejected certificate: taxed, 4% + 3% of 10000 = 700.
    let c = calc(&svc, LIVE_KEY, &cus, "30303", "GA", "");
    assert_eq!(n(&c["total_tax_amount"]), "700");
    assert_eq!(
        c["line_items"][0]["tax_jurisdictions"][0]["note"],
        "RATE_FRAC"
    );
    assert!(c["line_items"][0]["tax_jurisdictions"][0]
        .get("exemption_certificate_id")
        .is_none());
    // A customer without certificates pays Tennessee tax: 7% + 2.25% of 10000 = 925.
    assert_eq!(
        n(&calc(&svc, LIVE_KEY, &plain, "37203", "TN", "")["total_tax_amount"]),
        "925"
    );
    // A sale dated before the certificate was valid is taxed: 925.
    let before = format!(r#", "transacted_at": {}"#, t - 20 * DAY);
    assert_eq!(
        n(&calc(&svc, LIVE_KEY, &cus, "37203", "TN", &before)["total_tax_amount"]),
        "925"
    );
    // Platform calculations honour certificates too (line 10000 x 1 in Tennessee).
    let (s, _) = post(
        &svc,
        "/tax/merchants",
        LIVE_KEY,
        V3,
        r#"{"reference_merchant_id": "m-1", "name": "M",
        "default_address": {"address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}"#,
    );
    assert_eq!(s, 200);
    let (s, p) = post(
        &svc,
        "/tax/platform/calculations",
        LIVE_KEY,
        V3,
        &format!(
            r#"{{"customer": {{"id": "{cus}", "address": {{"address_province": "TN", "address_postal_code": "37203", "address_country": "US"}}}},
           "merchant": {{"merchant_id": "m-1"}}, "roles": ["payment_processor"],
           "order_details": {{"customer_currency_code": "USD", "line_items": [{{"amount": 10000, "quantity": 1, "product_category": "GENERAL_MERCHANDISE"}}]}},
           "fee_details": {{"line_items": [{{"amount": 200}}]}}}}"#
        ),
    );
    assert_eq!(s, 200, "{p}");
    assert_eq!(n(&p["totals"]["order"]["tax_amount"]), "0");
    assert_eq!(n(&p["totals"]["fees"]["tax_amount"]), "0");
    assert_eq!(
        p["line_items"][0]["tax_jurisdictions"][0]["exemption_certificate_id"].as_str(),
        Some(tn_ky.as_str())
    );
    // The exemption is stored with the transaction.
    let (s, tx) = post(&svc, "/tax/transactions", LIVE_KEY, V3, &json!({"calculation_id": calc(&svc, LIVE_KEY, &cus, "37203", "TN", "")["id"], "reference_order_id": "o-1"}).to_string());
    assert_eq!(s, 200, "{tx}");
    assert_eq!(
        tx["line_items"][0]["tax_jurisdictions"][1]["exemption_certificate_id"].as_str(),
        Some(tn_ky.as_str())
    );
}
