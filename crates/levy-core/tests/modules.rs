//! levy-core's modules form layers: no module imports another that imports it back,
//! directly or round a loop. A module's imports are the `crate::` and `super::` paths its
//! code names, each taken to the longest module it begins with, and the children it names
//! by path. What a module takes from its own parent or any module around it (`super::Note`,
//! the vocabulary a parent holds or re-exports for its parts) is not an import: a module
//! is inside those. A loop is where a layer has started to lean on the one above it: the
//! archive on the table, the table on what is derived from it, a line on the sale's
//! totals.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`calc::line`, `` for the crate root) → its source, code only.
fn modules() -> BTreeMap<String, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                parts.pop();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // Code only: a doc comment may name any module. Tests are not layers.
            let code: String = text
                .split("#[cfg(test)]")
                .next()
                .unwrap_or("")
                .lines()
                .map(|l| l.split("//").next().unwrap_or(""))
                .collect::<Vec<_>>()
                .join("\n");
            out.insert(parts.join("::"), code);
        }
    }
    out
}

/// The identifiers of a path that starts at `at` in `code`: `a::b::{c, d::e}` gives
/// `[a::b::c, a::b::d]` (an item below a module is as good as the module).
fn paths_at(code: &str, at: usize) -> Vec<String> {
    let rest = &code[at..];
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(rest.len());
    let base = rest[..end].trim_end_matches(':').to_string();
    let mut out = vec![base.clone()];
    if rest[end..].starts_with('{') && rest[..end].ends_with("::") {
        let inner = &rest[end + 1..rest[end..].find('}').map_or(rest.len(), |i| end + i)];
        for item in inner.split(',') {
            let first = item.trim().split("::").next().unwrap_or("").trim();
            if !first.is_empty() {
                out.push(format!("{base}::{first}"));
            }
        }
    }
    out
}

/// Each module's imports among `modules`.
fn imports(modules: &BTreeMap<String, String>) -> BTreeMap<String, BTreeSet<String>> {
    let longest = |path: &str| -> Option<String> {
        let segs: Vec<&str> = path.split("::").collect();
        (1..=segs.len())
            .rev()
            .map(|n| segs[..n].join("::"))
            .find(|m| modules.contains_key(m))
    };
    let mut graph = BTreeMap::new();
    for (name, code) in modules {
        let mut to = BTreeSet::new();
        let parent = name.rsplit_once("::").map_or("", |(p, _)| p);
        for (prefix, base) in [("crate::", String::new()), ("super::", parent.to_string())] {
            for (at, _) in code.match_indices(prefix) {
                for path in paths_at(code, at + prefix.len()) {
                    let full = if base.is_empty() {
                        path
                    } else {
                        format!("{base}::{path}")
                    };
                    if let Some(m) = longest(&full) {
                        to.insert(m);
                    }
                }
            }
        }
        // A child named by path (`holidays::place_key`) is imported, as any module is.
        for child in modules.keys() {
            let Some(last) = child.strip_prefix(&format!("{name}::")) else {
                continue;
            };
            if last.contains("::") {
                continue;
            }
            let named = code.match_indices(&format!("{last}::")).any(|(i, _)| {
                i == 0 || {
                    let before = code.as_bytes()[i - 1];
                    !(before.is_ascii_alphanumeric() || before == b'_' || before == b':')
                }
            });
            if named {
                to.insert(child.clone());
            }
        }
        // The modules around this one: it is inside them.
        to.retain(|m| m != name && !m.is_empty() && !name.starts_with(&format!("{m}::")));
        graph.insert(name.clone(), to);
    }
    graph
}

/// A loop through `from` back to itself, if there is one.
fn loop_through(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut stack = vec![(from.to_string(), vec![from.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((at, path)) = stack.pop() {
        for next in graph.get(&at).into_iter().flatten() {
            if next == from {
                let mut path = path.clone();
                path.push(from.to_string());
                return Some(path);
            }
            if seen.insert(next.clone()) {
                let mut path = path.clone();
                path.push(next.clone());
                stack.push((next.clone(), path));
            }
        }
    }
    None
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let modules = modules();
    let graph = imports(&modules);
    let loops: Vec<String> = graph
        .keys()
        .filter_map(|m| loop_through(&graph, m))
        .map(|path| path.join(" → "))
        .collect();
    assert!(loops.is_empty(), "import loops:\n{}", loops.join("\n"));
}

#[test]
fn the_reading_of_imports_sees_the_layers_it_checks() {
    // The test above finds nothing only if it reads imports at all: the table holds the
    // derived indexes, which read the archive's lookups, and the calculation reads all three.
    let graph = imports(&modules());
    let of = |m: &str| graph.get(m).cloned().unwrap_or_default();
    assert!(of("table").contains("derived"), "{:?}", of("table"));
    assert!(of("derived::spans").contains("lookup"));
    assert!(of("indexes").contains("table"));
    assert!(of("calc::line").contains("calc::groups"));
    assert!(of("calc").contains("calc::line"), "{:?}", of("calc"));
    // What a part takes from the module around it is not an import.
    assert!(!of("calc::line").contains("calc"));
    // And it would see a loop: `table → derived` with `derived → table` added is one.
    let mut looped = graph.clone();
    looped
        .get_mut("derived")
        .unwrap()
        .insert("table".to_string());
    assert!(loop_through(&looped, "table").is_some());
}
