//! The ledger is a layer below the interface: nothing under `src/store/` names a module of
//! the crate outside it but the two leaves it stands on (`clock`, `random`), so the
//! interface's errors, JSON, keys and resources cannot leak into the ledger.

use std::path::Path;

/// The modules of the crate that the store may use.
const ALLOWED: [&str; 3] = ["crate::store", "crate::clock", "crate::random"];

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn the_store_names_nothing_of_the_interface() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store");
    let mut files = Vec::new();
    sources(&root, &mut files);
    assert!(
        files.len() > 10,
        "{} files under {}",
        files.len(),
        root.display()
    );
    let mut found = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            let mut rest = code;
            while let Some(i) = rest.find("crate::") {
                let path: String = rest[i..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                if !ALLOWED.iter().any(|a| path.starts_with(a)) {
                    found.push(format!("{}:{}: {path}", file.display(), n + 1));
                }
                rest = &rest[i + 7..];
            }
        }
    }
    assert!(
        found.is_empty(),
        "the store names the interface:\n{}",
        found.join("\n")
    );
}
