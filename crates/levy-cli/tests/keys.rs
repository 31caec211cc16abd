//! `levy keys new` as a user runs it, and the keys it makes working over HTTP.

#[path = "../../levy-server/tests/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

/// Runs `levy keys new --account ACCOUNT --keys PATH`: its stdout when it succeeds, its
/// stderr when it fails.
fn keys_new(account: &str, path: &Path) -> Result<String, String> {
    let o = Command::new(env!("CARGO_BIN_EXE_levy"))
        .args(["keys", "new", "--account", account, "--keys"])
        .arg(path)
        .output()
        .expect("run levy");
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).into_owned())
    }
}

#[test]
fn keys_new_prints_keys_that_work_and_stores_only_hashes() {
    let dir = common::scratch_dir("keys-new");
    let path = dir.join("keys.toml");
    let text = keys_new("shop", &path).unwrap();
    let find = |label: &str| -> String {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap();
        line.split_whitespace().last().unwrap().to_string()
    };
    let (test, live) = (find("test key:"), find("live key:"));
    assert!(test.starts_with("sk_test_"), "{text}");
    assert!(live.starts_with("sk_live_"), "{text}");
    let stored = std::fs::read_to_string(&path).unwrap();
    assert!(
        !stored.contains(&test) && !stored.contains(&live),
        "plain keys in the keys file"
    );

    // A second account in the same file.
    let other = keys_new("other", &path).unwrap();
    assert!(other.contains("account other"));
    // An empty account name is refused with a message.
    let e = keys_new(" ", &path).unwrap_err();
    assert!(e.contains("account"), "{e}");

    // The keys open a server: test key in test mode, live key in live mode.
    let service = Arc::new(
        levy_api::Service::open(levy_api::ServiceConfig {
            table: levy_api::TableSource::Table(common::table()),
            ledger: dir.join("ledger.sqlite").to_string_lossy().into_owned(),
            keys: levy_api::KeySource::File(path),
        })
        .unwrap(),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = rt
        .block_on(levy_server::serve(
            service,
            levy_server::ServeOptions::loopback_ephemeral(),
            async {
                let _ = stopped.await;
            },
        ))
        .unwrap();
    let base = format!("http://{}", running.local_addr());
    let client = std::thread::spawn(move || {
        let c = common::Client::new(&base);
        let t = c.bare("GET", "/tax/ping", &test, None).json();
        let l = c.bare("GET", "/tax/ping", &live, None).json();
        let _ = stop.send(());
        (t, l)
    });
    rt.block_on(running.wait()).unwrap();
    let (t, l) = client.join().unwrap();
    assert_eq!(t["env"], "test");
    assert_eq!(l["env"], "prod");
}
