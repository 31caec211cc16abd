//! Records as stored, in every ledger: JSON sealed with its digest, so that a damaged byte
//! anywhere in a stored record is an error when it is read, never a changed amount.

use serde::{Deserialize, Serialize};

use super::StoreError;

/// The first 128 bits of the BLAKE3 hash of `text`, as 32 hex digits.
pub(super) fn digest(text: &str) -> String {
    hex::encode(&blake3::hash(text.as_bytes()).as_bytes()[..16])
}

pub(super) const SEAL_HEAD: &str = r#"{"blake3":""#;
pub(super) const SEAL_MID: &str = r#"","record":"#;

/// A record as stored: its JSON sealed with its digest, itself valid JSON
/// (`{"blake3":"<32 hex>","record":<record>}`), so that a damaged byte anywhere in it is an
/// error when it is read, never a changed amount.
pub(super) fn seal(json: &str) -> String {
    let mut out = String::with_capacity(SEAL_HEAD.len() + 32 + SEAL_MID.len() + json.len() + 1);
    out.push_str(SEAL_HEAD);
    out.push_str(&digest(json));
    out.push_str(SEAL_MID);
    out.push_str(json);
    out.push('}');
    out
}

pub(super) fn damaged(what: &str) -> StoreError {
    StoreError::Damaged {
        what: what.to_string(),
    }
}

/// The record inside a sealed text, once its digest matches.
pub(super) fn unseal(text: &str) -> Result<&str, StoreError> {
    let rest = text
        .strip_prefix(SEAL_HEAD)
        .ok_or_else(|| damaged("no seal"))?;
    let (sum, rest) = (rest.get(..32), rest.get(32..));
    let json = rest
        .and_then(|r| r.strip_prefix(SEAL_MID))
        .and_then(|r| r.strip_suffix('}'))
        .ok_or_else(|| damaged("broken seal"))?;
    if sum != Some(digest(json).as_str()) {
        return Err(damaged("digest mismatch"));
    }
    Ok(json)
}

pub(crate) fn to_json<T: Serialize>(v: &T) -> Result<String, StoreError> {
    serde_json::to_string(v)
        .map(|json| seal(&json))
        .map_err(StoreError::ledger)
}

pub(crate) fn from_json<T: for<'de> Deserialize<'de>>(s: &str) -> Result<T, StoreError> {
    serde_json::from_str(unseal(s)?)
        .map_err(|e| StoreError::ledger(format!("stored record unreadable: {e}")))
}
