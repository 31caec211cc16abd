//! Eight clients race to record transactions with the same `reference_order_id`s:
//! for every order id exactly one creation succeeds, and the others are refused as
//! duplicates.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Barrier};

use common::{calc_body, TestServer, SHOP_TEST};

const CLIENTS: usize = 8;
const ORDERS: usize = 40;

#[test]
fn colliding_order_ids_have_exactly_one_winner() {
    let server = TestServer::start("concurrency");
    let barrier = Arc::new(Barrier::new(CLIENTS));
    let mut threads = Vec::new();
    for c in 0..CLIENTS {
        let client = server.client();
        let barrier = Arc::clone(&barrier);
        threads.push(std::thread::spawn(move || {
            // Each client makes its own calculations first, so the race is on the
            // transaction alone.
            let calcs: Vec<String> = (0..ORDERS)
                .map(|_| {
                    let a = client.json(
                        "POST",
                        "/tax/calculations",
                        SHOP_TEST,
                        None,
                        &calc_body(&[10_000]),
                    );
                    assert_eq!(a.status, 200, "{}", a.text);
                    a.json()["id"].as_str().unwrap().to_string()
                })
                .collect();
            barrier.wait();
            let mut outcomes = Vec::new();
            for (i, calc) in calcs.iter().enumerate() {
                // Clients go through the ids in different orders to vary who meets whom.
                let order = format!("race-{}", (i + c * 7) % ORDERS);
                let body = serde_json::json!({"calculation_id": calc, "reference_order_id": order});
                let a = client.json("POST", "/tax/transactions", SHOP_TEST, None, &body);
                outcomes.push((order, a.status, a.json()));
            }
            outcomes
        }));
    }
    let mut winners: HashMap<String, Vec<String>> = HashMap::new();
    let mut losers = 0;
    for t in threads {
        for (order, status, body) in t.join().unwrap() {
            match status {
                200 => winners
                    .entry(order)
                    .or_default()
                    .push(body["id"].as_str().unwrap().to_string()),
                409 => {
                    losers += 1;
                    // Older error format (no version header): lower snake case code.
                    assert_eq!(
                        body["error"]["error_code"], "duplicate_reference_order_id",
                        "{body}"
                    );
                }
                other => panic!("unexpected {other}: {body}"),
            }
        }
    }
    assert_eq!(winners.len(), ORDERS, "every order id has a winner");
    for (order, ids) in &winners {
        assert_eq!(
            ids.len(),
            1,
            "order {order} was recorded {} times: {ids:?}",
            ids.len()
        );
    }
    // 8 clients x 40 attempts = 320; 40 win, 280 are refused.
    assert_eq!(losers, CLIENTS * ORDERS - ORDERS);
    // The winner is what the service stores under that id.
    let client = server.client();
    for (order, ids) in &winners {
        let a = client.bare(
            "GET",
            &format!("/tax/transactions/{}", ids[0]),
            SHOP_TEST,
            None,
        );
        assert_eq!(a.status, 200);
        assert_eq!(a.json()["reference_order_id"], serde_json::json!(order));
    }
}
