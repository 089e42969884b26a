//! Where commands may write what a user asked for (`export --ggf FILE`,
//! `export --wthor DIR`, `report -o FILE`, the results folder of `run`):
//! never over the results' own files, the tournament file or anything
//! inside the board, never onto a folder, pipe or device, and never into
//! a folder that does not exist (no tree of folders made for a typo).
//!
//! Owns the checks only; the writing is the command's. Paths are compared
//! as absolute paths with links resolved, and existing files also by
//! identity (device and inode), so a link or another name for a protected
//! file is refused too.

use std::path::{Component, Path, PathBuf};

use crate::config::Config;
use crate::error::HarnessError;
use crate::results::{CUT_FILE, DONE_DIR, GAMES_FILE, LOCK_DIR, SCHEDULE_FILE};

/// The results folder's own files and folders, which only `run` writes.
const RESULTS_OWN: &[&str] = &[
    GAMES_FILE,
    SCHEDULE_FILE,
    CUT_FILE,
    DONE_DIR,
    LOCK_DIR,
    "live",
    "logs",
    crate::report::ggf::GAMES_DIR,
];

/// `path` made absolute, with `.`/`..` resolved and links resolved in the
/// part that exists.
pub fn absolute(path: &Path) -> PathBuf {
    let base = if path.is_absolute() {
        PathBuf::new()
    } else {
        std::env::current_dir().unwrap_or_default()
    };
    let mut out = PathBuf::new();
    for c in base.join(path).components() {
        match c {
            Component::ParentDir => {
                out = std::fs::canonicalize(&out).unwrap_or(out);
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    // Resolve links in the longest prefix that exists.
    let mut existing = out.clone();
    let mut rest = Vec::new();
    while !existing.as_os_str().is_empty() {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            let mut full = real;
            full.extend(rest.iter().rev());
            return full;
        }
        match existing.file_name() {
            Some(name) => rest.push(name.to_os_string()),
            None => break,
        }
        existing.pop();
    }
    out
}

#[cfg(unix)]
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(_: &Path) -> Option<(u64, u64)> {
    None
}

/// What a command must not write over.
pub struct Protected {
    results: PathBuf,
    config: Option<PathBuf>,
    board: Option<PathBuf>,
}

impl Protected {
    /// The results folder `results`, and the config's file and board (or
    /// `./board` without a config).
    pub fn new(results: &Path, config: Option<&Config>) -> Protected {
        Protected {
            results: absolute(results),
            config: config.map(|c| absolute(&c.path)),
            board: Some(absolute(
                &config.map_or_else(|| PathBuf::from("board"), |c| c.board.clone()),
            )),
        }
    }

    /// Why `target` must not be written, if it must not.
    fn refusal(&self, target: &Path) -> Option<String> {
        let abs = absolute(target);
        if let Some(board) = &self.board {
            if abs.starts_with(board) {
                return Some(format!("it is inside the board {}", board.display()));
            }
        }
        let mut own: Vec<PathBuf> = RESULTS_OWN.iter().map(|n| self.results.join(n)).collect();
        if let Some(c) = &self.config {
            own.push(c.clone());
        }
        let id = identity(target);
        for p in &own {
            if abs.starts_with(p) || (id.is_some() && identity(p) == id) {
                let what = if Some(p) == self.config.as_ref() {
                    "the tournament file".to_string()
                } else {
                    format!(
                        "part of the results ({}), which only `tournament run` writes",
                        p.display()
                    )
                };
                return Some(format!("it is {what}"));
            }
        }
        None
    }

    /// Checks that the file `target` may be written: not protected, not a
    /// folder or special file, and in a folder that exists.
    pub fn check_file(&self, target: &Path, what: &str) -> Result<(), HarnessError> {
        let refuse = |why: String| {
            HarnessError::Config(format!(
                "will not write {what} to {}: {why}",
                target.display()
            ))
        };
        if let Some(why) = self.refusal(target) {
            return Err(refuse(why));
        }
        if let Ok(meta) = std::fs::metadata(target) {
            if !meta.is_file() {
                return Err(refuse(
                    "it is a folder or a special file, not a regular file; give a file name".into(),
                ));
            }
        }
        check_parent(target).map_err(refuse)
    }

    /// Checks that the folder `dir` may receive files (created if missing,
    /// but not its parents).
    pub fn check_folder(&self, dir: &Path, what: &str) -> Result<(), HarnessError> {
        let refuse = |why: String| {
            HarnessError::Config(format!(
                "will not write {what} into {}: {why}",
                dir.display()
            ))
        };
        if let Some(why) = self.refusal(dir) {
            return Err(refuse(why));
        }
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(refuse("it is not a folder".into())),
            Err(_) => check_parent(dir).map_err(refuse),
        }
    }
}

/// The folder a new `target` goes into must exist.
fn check_parent(target: &Path) -> Result<(), String> {
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if parent.is_dir() {
        Ok(())
    } else {
        Err(format!(
            "the folder {} does not exist (create it first)",
            parent.display()
        ))
    }
}

/// A tournament's results folder must not be its board, inside it, or
/// hold it (bots would write into the results, or the referee's clean-ups
/// into the board), nor be its tournament file.
pub fn check_results_folder(config: &Config) -> Result<(), HarnessError> {
    let results = absolute(&config.results);
    let board = absolute(&config.board);
    let why = if results.starts_with(&board) {
        Some(format!("it is inside the board {}", board.display()))
    } else if board.starts_with(&results) {
        Some(format!("it holds the board {}", board.display()))
    } else if results == absolute(&config.path) {
        Some("it is the tournament file".into())
    } else {
        None
    };
    match why {
        Some(why) => Err(HarnessError::Config(format!(
            "{}: `tournament.results` = {}: {why}; give the results and the board folders of \
             their own",
            config.path.display(),
            config.results.display()
        ))),
        None => Ok(()),
    }
}
