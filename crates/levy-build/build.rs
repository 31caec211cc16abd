//! Lists the files of the taxability matrix (`data/taxability/<folder>/<place>.toml`) for
//! `include_str!`, so that a build of levy carries the matrix it was built with
//! (`curated::CuratedSource::Embedded`), whatever files the folder holds.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let dir = manifest.join("../../data/taxability");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut list = String::from(
        "/// The taxability matrix's files as this build ships them: `(path in data/, text)`.\n\
         pub(crate) const TAXABILITY: &[(&str, &str)] = &[\n",
    );
    for folder in ["ca", "intl", "us"] {
        let sub = dir.join(folder);
        println!("cargo:rerun-if-changed={}", sub.display());
        for name in toml_files(&sub) {
            let path = sub.join(&name);
            println!("cargo:rerun-if-changed={}", path.display());
            let abs = path.canonicalize().expect("a listed file exists");
            writeln!(
                list,
                "    (\"taxability/{folder}/{name}\", include_str!({:?})),",
                abs.display().to_string()
            )
            .expect("writing to a String");
        }
    }
    list.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("taxability.rs");
    std::fs::write(&out, list).expect("OUT_DIR is writable");
}

/// The `.toml` files of `dir`, sorted; none when it does not exist.
fn toml_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".toml"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}
