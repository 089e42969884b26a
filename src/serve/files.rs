//! Which file of the results folder a `/results/...` address names, if
//! any: the one place that decides what the live page's server may read.
//!
//! Owns the allow-list: only what the page links, a game's log
//! (`logs/<name>.log`). Nothing else of the results folder (not the lock
//! and its `OWNER` record, not the journal, the schedule or the sandbox
//! statement) and nothing outside it. Each of the two segments is
//! percent-decoded on its own and must be a plain name (not empty, not `.`
//! or `..`, no `/`, `\` or NUL once decoded), so neither `..`, an absolute
//! path, nor an encoded separator (`%2f`, `%2e%2e%2f`, `%5c`) can leave
//! `logs/`; and the file, with every symbolic link resolved, must still lie
//! in the folder's `logs/` and be a regular file. Reads nothing but
//! metadata; never writes.

use std::path::{Path, PathBuf};

/// The only folder of the results folder the page links into.
const LOGS: &str = "logs";
/// What a game's log is called in it: `<game id>.log`.
const LOG_SUFFIX: &str = ".log";

/// The game log under `root` that `rest` (what follows `/results/` in the
/// address, still percent-encoded, without query) names; `None` for
/// anything else.
pub fn resolve(root: &Path, rest: &str) -> Option<PathBuf> {
    let mut segments = rest.split('/').map(percent_decode);
    let (folder, name) = (segments.next()??, segments.next()??);
    if segments.next().is_some() || folder != LOGS || !plain(&name) {
        return None;
    }
    if !name.ends_with(LOG_SUFFIX) || name.len() == LOG_SUFFIX.len() {
        return None;
    }
    let real = std::fs::canonicalize(root.join(LOGS).join(&name)).ok()?;
    let real_logs = std::fs::canonicalize(root.join(LOGS)).ok()?;
    if real.parent() != Some(real_logs.as_path()) || !real.is_file() {
        return None;
    }
    Some(real)
}

/// A single file name: not empty, not `.` or `..`, no separator or NUL.
fn plain(segment: &str) -> bool {
    !segment.is_empty() && segment != "." && segment != ".." && !segment.contains(['/', '\\', '\0'])
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
    fn only_game_logs_inside_the_folder_resolve() {
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
            resolve(&root, "logs/r1%2ea.b.log"),
            Some(real.join("logs/r1.a.b.log")),
            "a segment is decoded on its own"
        );
        let owner = root.join("lock/REFEREE");
        std::fs::create_dir_all(&owner).unwrap();
        std::fs::write(owner.join("OWNER"), "token").unwrap();
        std::fs::write(root.join("logs/notes.txt"), "").unwrap();
        std::fs::write(root.join("logs/.log"), "").unwrap();
        std::fs::create_dir_all(root.join("logs/sub")).unwrap();
        std::fs::write(root.join("logs/sub/x.log"), "").unwrap();
        for bad in [
            "games.jsonl",
            "schedule.json",
            "lock/REFEREE/OWNER",
            "lock%2FREFEREE%2FOWNER",
            "logs/notes.txt",
            "logs/.log",
            "logs/sub/x.log",
            "logs/../lock/REFEREE/OWNER",
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
