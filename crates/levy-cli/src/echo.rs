//! What an error may echo of its user's input: at most [`MAX_ECHO`] characters of any one
//! argument, then `…`, so that a 5,000-character `--state` gives a one-line error, however
//! deep in levy the message was written.

use std::ffi::OsString;

/// The most characters of one argument an error echoes.
pub const MAX_ECHO: usize = 64;

/// `text` cut to [`MAX_ECHO`] characters and `…` when longer; itself otherwise.
pub fn cut(text: &str) -> String {
    if text.chars().count() <= MAX_ECHO {
        return text.to_string();
    }
    let mut out: String = text.chars().take(MAX_ECHO).collect();
    out.push('…');
    out
}

/// Whether `text` names a path: one that exists, or one in a folder that exists (a file
/// to be written), within the system's longest path (4,096 bytes). An error names such a
/// path whole, so that the user can find it.
fn is_path(text: &str) -> bool {
    let path = std::path::Path::new(text);
    text.len() <= 4096
        && (path.exists()
            || path
                .parent()
                .is_some_and(|p| !p.as_os_str().is_empty() && p.is_dir()))
}

/// `message` with every echo of a long argument of `args` (as given, after a flag's `=`,
/// as Rust's `{:?}` quotes it, or in either case), and every quoted part of one, cut to
/// [`MAX_ECHO`] characters. An argument that names a path is echoed whole.
pub fn bound(message: &str, args: &[OsString]) -> String {
    let mut forms: Vec<String> = Vec::new();
    for arg in args {
        let arg = arg.to_string_lossy();
        let value = arg.split_once('=').map_or(&*arg, |(_, v)| v);
        for text in [&*arg, value] {
            if text.chars().count() <= MAX_ECHO || is_path(text) {
                continue;
            }
            let quoted = format!("{text:?}");
            let inner = &quoted[1..quoted.len() - 1];
            for form in [
                text.to_string(),
                inner.to_string(),
                text.to_uppercase(),
                text.to_lowercase(),
            ] {
                if !forms.contains(&form) {
                    forms.push(form);
                }
            }
        }
    }
    // The longest first, so that a value's flag form (`--state=XXX…`) is cut before the
    // value alone would leave its tail.
    forms.sort_by_key(|f| std::cmp::Reverse(f.len()));
    let mut out = message.to_string();
    for form in &forms {
        if out.contains(form.as_str()) {
            out = out.replace(form.as_str(), &cut(form));
        }
    }
    quoted_parts(&out, &forms)
}

/// `message` with each `"…"`-quoted text longer than [`MAX_ECHO`] characters that is part
/// of one of `forms` (a quantity read out of a `--line`) cut.
fn quoted_parts(message: &str, forms: &[String]) -> String {
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        // The closing quote: the next one not escaped by a backslash.
        let mut close = None;
        let mut escaped = false;
        for (i, c) in rest.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    close = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let Some(close) = close else {
            break;
        };
        let inner = &rest[..close];
        if inner.chars().count() > MAX_ECHO && forms.iter().any(|f| f.contains(inner)) {
            out.push_str(&cut(inner));
        } else {
            out.push_str(inner);
        }
        out.push('"');
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_argument_is_cut_wherever_it_is_echoed() {
        let long = "x".repeat(5000);
        let args: Vec<OsString> = vec!["levy".into(), "--state".into(), long.clone().into()];
        let message = format!(
            "region {:?} is not a region; also {}",
            long,
            long.to_uppercase()
        );
        let cut64 = format!("{}…", "x".repeat(64));
        assert_eq!(
            bound(&message, &args),
            format!(
                "region \"{cut64}\" is not a region; also {}…",
                "X".repeat(64)
            )
        );
        // Short arguments, and text that is not an argument, are left alone.
        let short: Vec<OsString> = vec!["levy".into(), "TN".into()];
        assert_eq!(bound("region \"TN\"", &short), "region \"TN\"");
        // A quoted part of an argument is cut too; a path is echoed whole.
        let line: Vec<OsString> = vec!["--line".into(), format!("1x{long}").into()];
        assert_eq!(
            bound(&format!("bad quantity {long:?}"), &line),
            format!("bad quantity \"{cut64}\"")
        );
        let dir = std::env::temp_dir().join("y".repeat(80));
        let path: Vec<OsString> = vec![dir.clone().into()];
        let said = format!("cannot open {}", dir.display());
        assert_eq!(bound(&said, &path), said);
        // 64 characters are echoed whole; 65 are cut.
        assert_eq!(cut(&"y".repeat(64)), "y".repeat(64));
        assert_eq!(cut(&"y".repeat(65)), format!("{}…", "y".repeat(64)));
    }
}
