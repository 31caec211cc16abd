//! Fuzzes the reader of `data/us-nexus.toml` and the evaluator over what it reads: any text
//! gives checked thresholds or an error naming the file, never a panic; every row read
//! measures any months on any day without a panic, and a crossing is inside a period.
#![no_main]

use levy_api::nexus::{evaluate, Month, MonthTotal, Standing, Thresholds};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match Thresholds::parse("fuzz.toml", text) {
        Ok(t) => {
            // Months from the input's bytes: a sale of each byte's dollars, in months
            // around 2026.
            let months: Vec<MonthTotal> = data
                .iter()
                .enumerate()
                .map(|(i, b)| MonthTotal {
                    month: Month::new(2024, 1).plus((i % 48) as i32),
                    sales: levy_core::Decimal::from(*b) * levy_core::Decimal::from(1000),
                    count: i64::from(*b % 7) - 1,
                })
                .collect();
            for row in t.rows() {
                for day in [row.from, row.to.unwrap_or(row.from)] {
                    let e = evaluate(row, day, &months);
                    if let Standing::Exposed(m) = e.standing {
                        assert!(e.measured.iter().any(|p| p.span.first <= m && m <= p.span.last));
                    }
                }
            }
        }
        Err(e) => {
            let message = e.to_string();
            assert!(message.starts_with("fuzz.toml: "), "{message}");
        }
    }
});
