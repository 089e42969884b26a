//! Which `tournament` binary runs the referee's helper processes: the
//! built-in bots (`tournament bot NAME`) and the sandbox's wardens.
//!
//! Owns that one path: this binary, unless a program that plays games
//! in-process but is not that binary (the integration tests, the bench)
//! names one first. Must not start anything itself.

use std::io;
use std::path::PathBuf;
use std::sync::OnceLock;

static NAMED: OnceLock<PathBuf> = OnceLock::new();

/// Names the `tournament` binary for a program that is not it. The first
/// name given stays.
pub fn set(path: PathBuf) {
    let _ = NAMED.set(path);
}

/// The `tournament` binary: the one named, else this one (its path, as
/// shown in commands and logs).
pub fn path() -> io::Result<PathBuf> {
    match NAMED.get() {
        Some(p) => Ok(p.clone()),
        None => std::env::current_exe(),
    }
}

/// The `tournament` binary to start: the one named, else this one, on
/// Linux through `/proc/self/exe`, which still starts it after the file
/// was replaced on disk (a `cargo install` during a long run).
pub fn to_start() -> io::Result<PathBuf> {
    match NAMED.get() {
        Some(p) => Ok(p.clone()),
        None if cfg!(target_os = "linux") => Ok(PathBuf::from("/proc/self/exe")),
        None => std::env::current_exe(),
    }
}
