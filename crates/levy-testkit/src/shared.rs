//! The published data files that live beside the project (`../shared/data`).

use std::path::PathBuf;

/// `../shared/data/<sub>` beside the project's root (the folder that holds the checkout),
/// when that directory exists; `sub` empty names `../shared/data` itself.
///
/// When it is absent (a bare checkout) the answer is `None` and a line saying the test is
/// skipped is printed, except under `CI=true`, where the data is part of the contract and
/// its absence panics.
pub fn shared_data(sub: &str) -> Option<PathBuf> {
    let root = shared_root();
    let dir = if sub.is_empty() { root } else { root.join(sub) };
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "shared data missing at {} (required under CI=true)",
        dir.display()
    );
    println!("skipped: no shared data at {}", dir.display());
    None
}

/// Where the shared data would be: `<checkout>/../shared/data`, whether or not it exists.
pub fn shared_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"))
}
