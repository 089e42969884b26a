//! Which file of the results folder a `/results/...` address names, if
//! any: the one place that decides what the live page's server may read.
//!
//! Owns the rule: every segment is percent-decoded on its own and must be a
//! plain name (not empty, not `.` or `..`, no `/`, `\` or NUL once
//! decoded), so neither `..`, an absolute path, nor an encoded separator
//! (`%2f`, `%2e%2e%2f`, `%5c`) can leave the folder; and the file, with
//! every symbolic link resolved, must still lie inside the folder and be a
//! regular file. Reads nothing but metadata; never writes.

use std::path::{Path, PathBuf};

/// The file under `root` that `rest` (what follows `/results/` in the
/// address, still percent-encoded, without query) names; `None` for
/// anything else.
pub fn resolve(root: &Path, rest: &str) -> Option<PathBuf> {
    let mut path = root.to_path_buf();
    for raw in rest.split('/') {
        let segment = percent_decode(raw)?;
        if segment.is_empty()
            || segment == "."
            || segment == ".."
            || segment.contains(['/', '\\', '\0'])
        {
            return None;
        }
        path.push(segment);
    }
    let real = std::fs::canonicalize(&path).ok()?;
    let real_root = std::fs::canonicalize(root).ok()?;
    if !real.starts_with(&real_root) || !real.is_file() {
        return None;
    }
    Some(real)
}

/// `%XX` decoded; `None` for a bad escape or bytes that are not UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_inside_the_folder_resolve() {
        let top = tempfile::tempdir().unwrap();
        let root = top.path().join("results");
        std::fs::create_dir_all(root.join("logs")).unwrap();
        std::fs::write(root.join("logs/r1.a.b.log"), "log").unwrap();
        std::fs::write(root.join("games.jsonl"), "").unwrap();
        std::fs::write(top.path().join("secret.txt"), "secret").unwrap();
        std::os::unix::fs::symlink(top.path().join("secret.txt"), root.join("link.txt")).unwrap();
        let real = std::fs::canonicalize(&root).unwrap();
        assert_eq!(
            resolve(&root, "logs/r1.a.b.log"),
            Some(real.join("logs/r1.a.b.log"))
        );
        assert_eq!(
            resolve(&root, "logs%2Fr1.a.b.log"),
            None,
            "an encoded separator"
        );
        assert_eq!(
            resolve(&root, "games.jsonl"),
            Some(real.join("games.jsonl"))
        );
        for bad in [
            "../secret.txt",
            "logs/../../secret.txt",
            "%2e%2e/secret.txt",
            "%2e%2e%2fsecret.txt",
            "..%2fsecret.txt",
            "..%5csecret.txt",
            "/etc/passwd",
            "%2fetc%2fpasswd",
            "logs",
            "logs/",
            "",
            "link.txt",
            "bad%zz",
            "nul%00",
            "%ff",
        ] {
            assert_eq!(resolve(&root, bad), None, "{bad}");
        }
    }
}
