//! Records as stored, in every ledger: JSON sealed with its digest, so that a damaged byte
//! anywhere in a stored record is an error when it is read, never a changed amount.

use serde::{Deserialize, Serialize};

use super::StoreError;

/// The first 128 bits of the BLAKE3 hash of `bytes`, as 32 hex digits.
pub(super) fn digest(bytes: impl AsRef<[u8]>) -> String {
    hex::encode(&blake3::hash(bytes.as_ref()).as_bytes()[..16])
}

pub(super) const SEAL_HEAD: &str = r#"{"blake3":""#;
pub(super) const SEAL_MID: &str = r#"","record":"#;

/// A record as stored: its JSON sealed with its digest, itself valid JSON
/// (`{"blake3":"<32 hex>","record":<record>}`), so that a damaged byte anywhere in it is an
/// error when it is read, never a changed amount.
pub(super) fn seal(json: &str) -> Result<String, StoreError> {
    sealed(|out| {
        out.extend_from_slice(json.as_bytes());
        Ok(())
    })
}

/// The sealed form of the JSON `write` appends to a buffer: written once, after the seal's
/// head, the digest filled in once the record is written.
fn sealed(
    write: impl FnOnce(&mut Vec<u8>) -> Result<(), StoreError>,
) -> Result<String, StoreError> {
    let mut out = Vec::with_capacity(2048);
    out.extend_from_slice(SEAL_HEAD.as_bytes());
    let sum = out.len()..out.len() + 32;
    out.extend_from_slice(&[b'0'; 32]);
    out.extend_from_slice(SEAL_MID.as_bytes());
    let record = out.len();
    write(&mut out)?;
    let digest = digest(&out[record..]);
    out[sum].copy_from_slice(digest.as_bytes());
    out.push(b'}');
    // The record is UTF-8 (JSON text), and the seal is ASCII.
    String::from_utf8(out).map_err(StoreError::ledger)
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

/// `v` as stored: its JSON sealed ([`seal`]), written straight into the sealed buffer.
pub(crate) fn to_json<T: Serialize>(v: &T) -> Result<String, StoreError> {
    sealed(|out| serde_json::to_writer(out, v).map_err(StoreError::ledger))
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
        assert_eq!(stored, seal(&json).unwrap());
        // `{"blake3":"<first 128 bits of BLAKE3(json), hex>","record":<json>}`
        let sum = hex::encode(&blake3::hash(json.as_bytes()).as_bytes()[..16]);
        assert_eq!(stored, format!(r#"{{"blake3":"{sum}","record":{json}}}"#));
        assert_eq!(unseal(&stored).unwrap(), json);
        let back: serde_json::Value = from_json(&stored).unwrap();
        assert_eq!(back, v);
    }
}
