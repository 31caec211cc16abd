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

/// `v` as stored: its JSON sealed ([`seal`]), written once into a buffer that holds the
/// seal's head, the digest filled in once the record is written.
pub(crate) fn to_json<T: Serialize>(v: &T) -> Result<String, StoreError> {
    let mut out = Vec::with_capacity(2048);
    out.extend_from_slice(SEAL_HEAD.as_bytes());
    let sum = out.len()..out.len() + 32;
    out.extend_from_slice(&[b'0'; 32]);
    out.extend_from_slice(SEAL_MID.as_bytes());
    let record = out.len();
    serde_json::to_writer(&mut out, v).map_err(StoreError::ledger)?;
    let digest = hex::encode(&blake3::hash(&out[record..]).as_bytes()[..16]);
    out[sum].copy_from_slice(digest.as_bytes());
    out.push(b'}');
    // serde_json writes UTF-8, and the seal is ASCII.
    String::from_utf8(out).map_err(StoreError::ledger)
}

pub(crate) fn from_json<T: for<'de> Deserialize<'de>>(s: &str) -> Result<T, StoreError> {
    serde_json::from_str(unseal(s)?)
        .map_err(|e| StoreError::ledger(format!("stored record unreadable: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_stored_as_its_json_sealed_with_its_digest() {
        let v = serde_json::json!({"amount": "10.70", "name": "caf\u{e9} \"x\"", "n": [1, 2]});
        let json = serde_json::to_string(&v).unwrap();
        let stored = to_json(&v).unwrap();
        assert_eq!(stored, seal(&json));
        // `{"blake3":"<first 128 bits of BLAKE3(json), hex>","record":<json>}`
        let sum = hex::encode(&blake3::hash(json.as_bytes()).as_bytes()[..16]);
        assert_eq!(stored, format!(r#"{{"blake3":"{sum}","record":{json}}}"#));
        assert_eq!(unseal(&stored).unwrap(), json);
        let back: serde_json::Value = from_json(&stored).unwrap();
        assert_eq!(back, v);
    }
}
