//! What `levy update` reads from the network and from a publisher's files, parsed without
//! trusting it: an HTTP/1.1 response head, and the hex of keys and signatures. The
//! fetching, checking and renaming are `levy update`'s (`crates/levy-cli/src/update.rs`);
//! these parsers are apart so that they are fuzzed (`fuzz/fuzz_targets/update_parse.rs`).

use std::io::BufRead;

/// The most lines a response head may have.
const MAX_HEAD_LINES: usize = 200;

/// The longest line of a response head read.
const MAX_HEAD_LINE: u64 = 16 << 10;

/// What a response head says of its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResponseHead {
    /// The status line (`HTTP/1.1 200 OK`).
    pub status_line: String,
    /// The status code, when the line has one.
    pub status: Option<u16>,
    /// `Content-Length`, when given and a number.
    pub content_length: Option<u64>,
    /// Whether a `Transfer-Encoding` was given (a chunked body is not read).
    pub transfer_encoding: bool,
}

/// Reads a response head from `reader`, up to and including its empty line; the body
/// follows in `reader`. Every line is bounded, and so is their number; an error says what
/// was wrong.
pub fn response_head(reader: &mut impl BufRead) -> Result<ResponseHead, String> {
    let mut head = ResponseHead {
        status_line: String::new(),
        status: None,
        content_length: None,
        transfer_encoding: false,
    };
    for n in 0..MAX_HEAD_LINES {
        let mut raw = Vec::new();
        let got = std::io::Read::take(&mut *reader, MAX_HEAD_LINE)
            .read_until(b'\n', &mut raw)
            .map_err(|e| e.to_string())?;
        if got == 0 {
            return Err("the response ended in its head".into());
        }
        if raw.last() != Some(&b'\n') {
            return Err("a line of the response head is too long".into());
        }
        let line = String::from_utf8_lossy(&raw);
        let line = line.trim_end();
        if n == 0 {
            head.status_line = line.to_string();
            head.status = line.split_whitespace().nth(1).and_then(|s| s.parse().ok());
            continue;
        }
        if line.is_empty() {
            return Ok(head);
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                head.content_length = v.trim().parse().ok();
            } else if k.trim().eq_ignore_ascii_case("transfer-encoding") {
                head.transfer_encoding = true;
            }
        }
    }
    Err(format!(
        "the response head has more than {MAX_HEAD_LINES} lines"
    ))
}

/// The `N` bytes that `text` (surrounding white space aside) gives in hex; `what` names
/// it in the error.
pub fn hex_bytes<const N: usize>(text: &str, what: &str) -> Result<[u8; N], String> {
    let t = text.trim();
    let bad = || format!("{what} must be {} hex digits", 2 * N);
    if t.len() != 2 * N || !t.is_ascii() {
        return Err(bad());
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(out)
}

/// `bytes` in lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_and_its_length() {
        let mut r: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\nServer: x\r\n\r\nbody";
        let h = response_head(&mut r).unwrap();
        assert_eq!(h.status, Some(200));
        assert_eq!(h.content_length, Some(12));
        assert!(!h.transfer_encoding);
        assert_eq!(r, b"body");
        let mut r: &[u8] = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert!(response_head(&mut r).unwrap().transfer_encoding);
        let mut r: &[u8] = b"HTTP/1.1 404 Not Found\r\n";
        assert_eq!(
            response_head(&mut r).unwrap_err(),
            "the response ended in its head"
        );
    }

    #[test]
    fn hex_round_trips_and_refuses_what_is_not_hex() {
        let b: [u8; 4] = [0, 1, 0xab, 0xff];
        assert_eq!(hex(&b), "0001abff");
        assert_eq!(hex_bytes::<4>("0001ABff\n", "x").unwrap(), b);
        assert!(hex_bytes::<4>("0001abf", "x").is_err());
        assert!(hex_bytes::<4>("0001abfg", "x").is_err());
        assert!(hex_bytes::<2>("éé", "x").is_err());
    }
}
