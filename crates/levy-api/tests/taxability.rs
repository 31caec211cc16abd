//! The `Levy-Taxability` response header: whether the table's taxability matrix knows how
//! every jurisdiction of the answer treats every line's product, and `Levy-Coverage` at
//! most `PARTIAL` when it does not.

mod common;

use common::*;

fn headers(svc: &levy_api::Service, body: &str) -> (u16, Option<String>, Option<String>) {
    let r = svc.handle(&levy_api::Request {
        method: "POST".into(),
        path: "/tax/calculations".into(),
        query: String::new(),
        headers: vec![("Authorization".into(), format!("Bearer {TEST_KEY}"))],
        body: body.as_bytes().to_vec(),
        request_id: None,
    });
    let get = |name: &str| {
        r.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    (
        r.status,
        get(levy_api::TAXABILITY_HEADER),
        get(levy_api::COVERAGE_HEADER),
    )
}

#[test]
fn an_answer_says_which_products_treatment_the_matrix_does_not_know() {
    // The fixture table (Nashville 37203: Tennessee and Davidson County) without its
    // matrix: general merchandise, a root, is known everywhere; clothing is known nowhere,
    // at the state's level or the county's. The body is taxed as before (7% + 2.25% of
    // $100.00: 925 cents) and stays as the interface specifies.
    let svc = service_over(
        levy_testkit::tennessee::Tennessee {
            matrix: false,
            ..Default::default()
        }
        .table(),
    );
    let (status, taxability, coverage) = headers(&svc, &calc_body("10000", "GENERAL_MERCHANDISE"));
    assert_eq!(status, 200);
    assert_eq!(taxability.as_deref(), Some("KNOWN"));
    assert_eq!(coverage.as_deref(), Some("FULL"));
    let (status, taxability, coverage) = headers(&svc, &calc_body("10000", "CLOTHING"));
    assert_eq!(status, 200);
    assert_eq!(
        taxability.as_deref(),
        Some("UNKNOWN; CLOTHING in US-TN state, CLOTHING in US-TN local")
    );
    assert_eq!(coverage.as_deref(), Some("PARTIAL"));
    let (_, v) = post(
        &svc,
        "/tax/calculations",
        TEST_KEY,
        None,
        &calc_body("10000", "CLOTHING"),
    );
    assert_eq!(n(&v["total_tax_amount"]), "925", "{v}");
    // With the matrix (clothing taxed at the general rate, Tenn. Code Ann. 67-6-202, known
    // at both levels), the same sale is known and complete.
    let (_, taxability, coverage) = headers(&service(), &calc_body("10000", "CLOTHING"));
    assert_eq!(
        (taxability.as_deref(), coverage.as_deref()),
        (Some("KNOWN"), Some("FULL"))
    );
}
