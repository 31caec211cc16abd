//! `levy update` as an operator runs it: a signed table taken from a folder and from an
//! HTTP server the test starts on loopback, and the four ways it must refuse (a bad
//! signature, a damaged table, a download cut short, an unsigned one), each leaving the
//! table in use byte for byte as it was, with no file left behind.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn levy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_levy"))
        .args(args)
        .output()
        .expect("run levy")
}

/// A one-row Tennessee ZIP5 file of Nashville 37203 with the county at `county` and the
/// state's 7% (`combined` their sum), under the December 2025 file's name.
fn zip5(dir: &Path, county: &str, combined: &str) -> PathBuf {
    let path = dir.join("TAXRATES_ZIP5_TN202512.csv");
    std::fs::write(
        &path,
        format!(
            "State,ZipCode,TaxRegionName,EstimatedCombinedRate,StateRate,EstimatedCountyRate,EstimatedCityRate,EstimatedSpecialRate,RiskLevel\n\
             TN,37203,NASHVILLE,{combined},0.070000,{county},0.000000,0.000000,0\n"
        ),
    )
    .unwrap();
    path
}

fn build(out: &Path, input: &Path, sign: Option<&Path>) {
    let mut args = vec![
        "build".to_string(),
        "--out".into(),
        out.display().to_string(),
        "--zip5".into(),
        input.display().to_string(),
    ];
    if let Some(k) = sign {
        args.extend(["--sign".into(), k.display().to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = levy(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The tax of $100.00 in 37203 on the table at `path`, on 2025-12-15.
fn tax(path: &Path) -> String {
    let o = levy(&[
        "calc",
        "--table",
        path.to_str().unwrap(),
        "--postal-code",
        "37203",
        "--line",
        "100.00",
        "--date",
        "2025-12-15",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["total_tax_amount"].to_string()
}

/// Serves `root` on loopback: `/MODE/NAME` answers the file `root/MODE/NAME`, except that
/// under `cut/` a file is sent half, with the whole length promised, and the connection
/// closed. Returns the base URL.
fn serve(root: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut line = String::new();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                    break;
                }
            }
            let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
            let file = root.join(path.trim_start_matches('/'));
            match std::fs::read(&file) {
                Ok(body) => {
                    let cut = path.starts_with("/cut/") && !path.ends_with(".sig");
                    let sent = if cut {
                        &body[..body.len() / 2]
                    } else {
                        &body[..]
                    };
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = stream.write_all(sent);
                }
                Err(_) => {
                    let _ = stream.write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    );
                }
            }
        }
    });
    format!("http://{addr}")
}

/// Signs `table` with the secret key file `key` as `levy build --sign` does (the format
/// of crates/levy-cli/src/update.rs), writing `table.sig`.
fn sign_by_hand(table: &Path, key: &Path) {
    use ed25519_dalek::Signer;
    let text = std::fs::read_to_string(key).unwrap();
    let t = text.trim();
    let mut seed = [0u8; 32];
    for (i, b) in seed.iter_mut().enumerate() {
        *b = u8::from_str_radix(&t[2 * i..2 * i + 2], 16).unwrap();
    }
    let mut m = b"levy table signature v1\n".to_vec();
    m.extend_from_slice(blake3::hash(&std::fs::read(table).unwrap()).as_bytes());
    let sig = ed25519_dalek::SigningKey::from_bytes(&seed).sign(&m);
    let hex: String = sig.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
    std::fs::write(format!("{}.sig", table.display()), format!("{hex}\n")).unwrap();
}

#[test]
fn a_signed_table_is_taken_and_every_bad_one_leaves_the_old_in_place() {
    let tmp = levy_testkit::TempDir::new("levy-update-test");
    let root = tmp.path().to_path_buf();
    let live = root.join("live");
    std::fs::create_dir_all(&live).unwrap();
    let table = live.join("us.levy");
    // The table in use: Davidson County at 2.25% (7% + 2.25% of $100.00 = $9.25).
    let inputs = root.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    build(&table, &zip5(&inputs, "0.022500", "0.092500"), None);
    let before = std::fs::read(&table).unwrap();
    assert_eq!(tax(&table), "925");

    // The publisher's key, and the new table at 2.5% ($9.50), signed.
    let key = root.join("publisher.key");
    let o = levy(&["signing-key", "--out", key.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let public = String::from_utf8(o.stdout).unwrap().trim().to_string();
    assert_eq!(public.len(), 64, "{public}");
    // A second key never overwrites the first.
    assert!(!levy(&["signing-key", "--out", key.to_str().unwrap()])
        .status
        .success());
    let good = root.join("good");
    std::fs::create_dir_all(&good).unwrap();
    build(
        &good.join("us.levy"),
        &zip5(&inputs, "0.025000", "0.095000"),
        Some(&key),
    );
    let fresh = std::fs::read(good.join("us.levy")).unwrap();

    // The failures, each from its own folder under the server's root.
    let dir = |name: &str| {
        let d = root.join(name);
        std::fs::create_dir_all(&d).unwrap();
        d
    };
    // A signature by another key.
    let other = root.join("other.key");
    assert!(levy(&["signing-key", "--out", other.to_str().unwrap()])
        .status
        .success());
    let badsig = dir("badsig");
    std::fs::write(badsig.join("us.levy"), &fresh).unwrap();
    sign_by_hand(&badsig.join("us.levy"), &other);
    // A damaged table with the good signature of the undamaged one.
    let flipped = dir("flipped");
    let mut damaged = fresh.clone();
    let mid = damaged.len() / 2;
    damaged[mid] ^= 0x40;
    std::fs::write(flipped.join("us.levy"), &damaged).unwrap();
    std::fs::copy(good.join("us.levy.sig"), flipped.join("us.levy.sig")).unwrap();
    // A damaged table the publisher signed as it was: the signature holds, the table does
    // not open.
    let broken = dir("broken");
    std::fs::write(broken.join("us.levy"), &damaged).unwrap();
    sign_by_hand(&broken.join("us.levy"), &key);
    // A download cut in half.
    let cut = dir("cut");
    std::fs::copy(good.join("us.levy"), cut.join("us.levy")).unwrap();
    std::fs::copy(good.join("us.levy.sig"), cut.join("us.levy.sig")).unwrap();
    // No signature at all.
    let unsigned = dir("unsigned");
    std::fs::copy(good.join("us.levy"), unsigned.join("us.levy")).unwrap();

    let url = serve(root.clone());
    let update = |from: &str| {
        levy(&[
            "update",
            "--from",
            from,
            "--table",
            table.to_str().unwrap(),
            "--public-key",
            &public,
        ])
    };
    for (from, says) in [
        (format!("{url}/badsig"), "does not verify"),
        (format!("{url}/flipped"), "does not verify"),
        (format!("{url}/broken"), "does not open"),
        (format!("{url}/cut"), "interrupted"),
        (format!("{url}/unsigned"), "404"),
        (unsigned.display().to_string(), "us.levy.sig"),
        ("https://tables.example/us".to_string(), "http://"),
    ] {
        let o = update(&from);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{from} was taken");
        assert!(err.contains(says), "{from}: {err}");
        // The old table is in place, byte for byte, and answers as before; nothing is
        // left beside it.
        assert_eq!(std::fs::read(&table).unwrap(), before, "{from}");
        let left: Vec<_> = std::fs::read_dir(&live)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("us.levy")], "{from}");
    }
    assert_eq!(tax(&table), "925");

    // The good one over HTTP: taken, what changed printed, the new rate in force.
    let o = update(&format!("{url}/good"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.starts_with(&format!("updated {}:", table.display())),
        "{out}"
    );
    assert_eq!(std::fs::read(&table).unwrap(), fresh);
    assert_eq!(tax(&table), "950");
    // From a folder, the same (the same table again: nothing changes).
    std::fs::write(&table, &before).unwrap();
    let o = update(good.to_str().unwrap());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read(&table).unwrap(), fresh);
}
