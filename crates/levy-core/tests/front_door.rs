//! No front holds resolution or calculation policy: the files that translate a sale for
//! the service interface, the C library, the Python package and `levy calc` call the front
//! door (`levy_core::quote`), never the table's resolution or calculation, nor the clock
//! (the day's default is the front door's). A front that resolves or calculates by itself
//! is a rule waiting to differ from the others.

use std::path::Path;

/// Each front's calculation code, from this crate's directory. (levy-py's `Table.resolve`
/// in table.rs answers a resolution on its own, as `levy calc` has none: not a
/// calculation, so not here.)
const FRONTS: [&str; 6] = [
    "../levy-cli/src/calc.rs",
    "../levy-api/src/calculate.rs",
    "../levy-ffi/src/engine.rs",
    "../levy-py/src/sale.rs",
    "../levy-py/src/batch/mod.rs",
    "../levy-py/src/batch/input.rs",
];

/// What only the front door may call.
const POLICY: [&str; 10] = [
    ".resolve(",
    ".resolve_into(",
    ".resolve_ip(",
    "table.calculate(",
    ".calculate_from(",
    ".calculate_into(",
    ".calculate_batch(",
    ".apply_order_fees(",
    "SystemTime::now",
    "IpMode::parse(",
];

#[test]
fn no_front_resolves_calculates_or_reads_the_clock_itself() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    for front in FRONTS {
        let path = root.join(front);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Code only: a doc comment may name what the front door does.
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for call in POLICY {
                if code.contains(call) {
                    found.push(format!("{front}:{}: {call}", n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "policy outside the front door:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_check_finds_what_it_looks_for() {
    // The list is not vacuous: the front door itself calls what the fronts may not.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let quote = std::fs::read_to_string(root.join("src/quote/mod.rs")).unwrap();
    for call in [
        ".resolve_into(",
        ".resolve_ip(",
        ".calculate_into(",
        ".calculate_batch(",
    ] {
        assert!(quote.contains(call), "{call}");
    }
}
