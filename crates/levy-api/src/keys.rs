//! API keys: accounts, modes, and the keys file.
//!
//! A key that starts with `sk_test_` works in test mode; any other key works in live
//! (production) mode. Keys belong to accounts; each account's test and live data are
//! separate, and accounts are separate from each other.
//!
//! Keys are never stored in plain text: the keys file holds each key's SHA-256 and a short
//! prefix (the first 12 characters, for people to tell keys apart). A presented key is
//! hashed and looked up by its whole hash, so the time a lookup takes depends on the hash
//! only, never on how much of a key was right.
//!
//! [`crate::Service::reload_keys`] reads the source again (`levy serve` does on SIGHUP and
//! when the keys file changes): a key removed from the file stops working at once.
//!
//! ```toml
//! [[account]]
//! name = "shop"
//!
//! [[account.key]]
//! mode = "test"
//! sha256 = "5e0c…"
//! prefix = "sk_test_3f9a"
//! ```
//!
//! [`create_account_keys`] adds an account with one new test key and one new live key
//! (`sk_test_` / `sk_live_` followed by 128 random bits in hex) and returns the plain keys,
//! which are shown once and cannot be recovered from the file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{ApiError, ErrorKind};

/// Where a service's keys come from.
#[derive(Clone, Debug)]
pub enum KeySource {
    /// A keys file (TOML, see the module documentation).
    File(PathBuf),
    /// Keys given directly, in plain text; hashed on load. For tests and embedders.
    Inline(Vec<KeyEntry>),
}

/// One plain key of an account.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyEntry {
    /// The account the key belongs to.
    pub account: String,
    /// The plain key (`sk_test_…` for test mode, anything else for live mode).
    pub key: String,
}

pub use crate::store::Scope;

/// The keys a service accepts, by the SHA-256 of the key.
#[derive(Debug, Default)]
pub(crate) struct Keyring {
    by_hash: HashMap<[u8; 32], Scope>,
    /// Account name to internal id, for a keys file's accounts that have one.
    ids: HashMap<String, Arc<str>>,
}

impl Keyring {
    /// Whether `account` (a name, or an inline key's account) has at least one key.
    pub(crate) fn has_account(&self, account: &str) -> bool {
        self.ids.contains_key(account) || self.by_hash.values().any(|s| &*s.account == account)
    }

    /// The id under which `account`'s data is stored: its internal id when the keys file
    /// gives one, else the name itself.
    pub(crate) fn account_id(&self, account: &str) -> Arc<str> {
        self.ids
            .get(account)
            .cloned()
            .unwrap_or_else(|| Arc::from(account))
    }

    /// How many keys the ring holds.
    pub(crate) fn len(&self) -> usize {
        self.by_hash.len()
    }
}

const PREFIX_LEN: usize = 12;

fn prefix_of(key: &str) -> &str {
    key.get(..PREFIX_LEN).unwrap_or(key)
}

fn sha256(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

fn mode_of(key_or_prefix: &str) -> &'static str {
    if key_or_prefix.starts_with("sk_test_") {
        "test"
    } else {
        "live"
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct KeysFile {
    #[serde(default)]
    account: Vec<AccountEntry>,
}

#[derive(Debug, Serialize, Deserialize)]
struct AccountEntry {
    name: String,
    /// The account's internal id (`acct_` + 128 random bits), under which its data is
    /// stored: an account removed from the file and made again under the same name gets
    /// a new id, so it starts empty. Files written before ids existed have none; their
    /// accounts are stored under their names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(default)]
    key: Vec<FileKey>,
}

#[derive(Debug, Serialize, Deserialize)]
struct FileKey {
    mode: String,
    sha256: String,
    prefix: String,
}

fn keys_error(path: &Path, message: impl std::fmt::Display) -> ApiError {
    ApiError::of(
        ErrorKind::KeysFileError,
        format!("keys file {}: {message}", path.display()),
    )
}

fn read_keys_file(path: &Path) -> Result<KeysFile, ApiError> {
    let text = std::fs::read_to_string(path).map_err(|e| keys_error(path, e))?;
    toml::from_str(&text).map_err(|e| keys_error(path, e))
}

impl Keyring {
    /// Loads the keys of a source.
    pub(crate) fn load(source: &KeySource) -> Result<Keyring, ApiError> {
        let mut ring = Keyring::default();
        match source {
            KeySource::Inline(entries) => {
                for e in entries {
                    if e.key.is_empty() || e.account.is_empty() {
                        return Err(ApiError::of(
                            ErrorKind::KeysFileError,
                            "an inline key or its account is empty",
                        ));
                    }
                    ring.add(prefix_of(&e.key), sha256(&e.key), &e.account);
                }
            }
            KeySource::File(path) => {
                let file = read_keys_file(path)?;
                for account in &file.account {
                    for k in &account.key {
                        let hash: [u8; 32] = hex::decode(&k.sha256)
                            .ok()
                            .and_then(|v| v.try_into().ok())
                            .ok_or_else(|| {
                                keys_error(
                                    path,
                                    format!(
                                        "account {:?}: sha256 is not 64 hex digits",
                                        account.name
                                    ),
                                )
                            })?;
                        if k.mode != mode_of(&k.prefix) {
                            return Err(keys_error(
                                path,
                                format!(
                                    "account {:?}: key {} is a {} key but is listed as mode {:?}",
                                    account.name,
                                    k.prefix,
                                    mode_of(&k.prefix),
                                    k.mode
                                ),
                            ));
                        }
                        let id = account.id.as_deref().unwrap_or(&account.name);
                        ring.add(&k.prefix, hash, id);
                        if account.id.is_some() {
                            ring.ids.insert(account.name.clone(), Arc::from(id));
                        }
                    }
                }
            }
        }
        Ok(ring)
    }

    fn add(&mut self, prefix: &str, hash: [u8; 32], account: &str) {
        let scope = Scope {
            account: Arc::from(account),
            live: mode_of(prefix) == "live",
        };
        self.by_hash.insert(hash, scope);
    }

    /// The scope of a presented key, if it is known.
    pub(crate) fn check(&self, key: &str) -> Option<Scope> {
        self.by_hash.get(&sha256(key)).cloned()
    }
}

/// Adds `account` to the keys file at `path` (creating the file when absent) with one new
/// test key and one new live key, and returns them in plain text: `(test, live)`.
///
/// The file is replaced atomically (written beside it, then renamed). An account that is
/// already in the file gets two more keys; its existing keys keep working. A new account
/// gets a new internal id: one made again under the name of an account removed from the
/// file does not see the removed account's data.
pub fn create_account_keys(path: &Path, account: &str) -> Result<(String, String), ApiError> {
    if account.trim().is_empty() {
        return Err(ApiError::of(
            ErrorKind::InvalidAccount,
            "the account name must not be empty",
        ));
    }
    let mut file = if path.exists() {
        read_keys_file(path)?
    } else {
        KeysFile::default()
    };
    // API keys are secrets: made from the operating system's generator only, never from
    // the clock (`new_keys` fails when the generator does).
    let secret = || {
        crate::random::bytes32()
            .map(|b| hex::encode(&b[..16]))
            .map_err(|e| {
                ApiError::of(
                    ErrorKind::InternalError,
                    format!("the operating system's random number generator failed: {e}"),
                )
            })
    };
    let test = format!("sk_test_{}", secret()?);
    let live = format!("sk_live_{}", secret()?);
    let entry = |key: &str| FileKey {
        mode: mode_of(key).to_string(),
        sha256: hex::encode(sha256(key)),
        prefix: prefix_of(key).to_string(),
    };
    let keys = vec![entry(&test), entry(&live)];
    match file.account.iter_mut().find(|a| a.name == account) {
        Some(a) => a.key.extend(keys),
        None => file.account.push(AccountEntry {
            name: account.to_string(),
            id: Some(format!("acct_{}", crate::random::hex128())),
            key: keys,
        }),
    }
    let text = toml::to_string(&file).map_err(|e| keys_error(path, e))?;
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).map_err(|e| keys_error(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| keys_error(path, e))?;
    Ok((test, live))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_file_round_trip() {
        let dir = std::env::temp_dir().join(format!("levy-keys-{}", crate::random::hex128()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keys.toml");
        let (test, live) = create_account_keys(&path, "shop").unwrap();
        assert!(test.starts_with("sk_test_") && test.len() == 8 + 32);
        assert!(live.starts_with("sk_live_") && live.len() == 8 + 32);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains(&test) && !text.contains(&live),
            "plain keys must not be stored"
        );
        let ring = Keyring::load(&KeySource::File(path.clone())).unwrap();
        assert!(!ring.check(&test).unwrap().live);
        assert!(ring.check(&live).unwrap().live);
        assert!(ring.has_account("shop"));
        // The account has an internal id, its data's namespace; more keys for the same
        // account keep it.
        let id = ring.check(&test).unwrap().account;
        assert!(id.starts_with("acct_") && id.len() == 5 + 32, "{id}");
        assert_eq!(ring.account_id("shop"), id);
        let (again, _) = create_account_keys(&path, "shop").unwrap();
        let ring = Keyring::load(&KeySource::File(path.clone())).unwrap();
        assert_eq!(ring.check(&again).unwrap().account, id);
        assert_eq!(ring.check(&test).unwrap().account, id);
        // Same prefix, different key: rejected.
        let mut wrong = test.clone();
        wrong.replace_range(30.., "0000000000");
        assert_eq!(ring.check(&wrong), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
