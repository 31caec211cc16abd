//! Arbitrary bytes as what `levy update` reads from a server or a publisher: an HTTP
//! response head (then whatever follows it), and the hex of a signature or a public key. A
//! head, a key or an error, never a panic; a head read leaves the reader at its body.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut reader: &[u8] = data;
    if let Ok(head) = levy_build::update::response_head(&mut reader) {
        assert!(reader.len() <= data.len());
        if let Some(s) = head.status {
            assert!(head.status_line.contains(&s.to_string()));
        }
    }
    let text = String::from_utf8_lossy(data);
    if let Ok(b) = levy_build::update::hex_bytes::<64>(&text, "signature") {
        assert_eq!(levy_build::update::hex(&b), text.trim().to_ascii_lowercase());
    }
    let _ = levy_build::update::hex_bytes::<32>(&text, "key");
});
