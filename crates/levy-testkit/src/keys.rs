//! The API keys of the two test accounts, `shop` and `other`, each with a test and a live
//! key.

use levy_api::{KeyEntry, KeySource};

/// Test-mode key of account `shop`.
pub const SHOP_TEST: &str = "sk_test_shop_key_0001";
/// Live-mode key of account `shop`.
pub const SHOP_LIVE: &str = "sk_live_shop_key_0001";
/// Test-mode key of account `other`.
pub const OTHER_TEST: &str = "sk_test_other_key_001";
/// Live-mode key of account `other`.
pub const OTHER_LIVE: &str = "sk_live_other_key_001";

/// The four keys, inline (no keys file).
pub fn inline() -> KeySource {
    let entry = |account: &str, key: &str| KeyEntry {
        account: account.into(),
        key: key.into(),
    };
    KeySource::Inline(vec![
        entry("shop", SHOP_TEST),
        entry("shop", SHOP_LIVE),
        entry("other", OTHER_TEST),
        entry("other", OTHER_LIVE),
    ])
}
