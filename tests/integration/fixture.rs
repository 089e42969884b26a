//! A temp dir and a command builder for running `tournament` as a user would.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// A scratch folder that disappears with the test.
pub struct Scratch {
    pub dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        Scratch {
            dir: tempfile::Builder::new()
                .prefix("tournament-test-")
                .tempdir()
                .expect("temp dir"),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn join(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&p, content).unwrap();
        p
    }

    /// `tournament ARGS…` run in this folder.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = tournament();
        c.current_dir(self.path()).args(args);
        c
    }
}

/// The binary under test.
pub fn tournament() -> Command {
    let mut c = Command::cargo_bin("tournament").expect("binary");
    c.env_remove("TOURNAMENT_LOG").env("NO_COLOR", "1");
    c
}

/// The project's own folder (where the shipped bots and tournament.toml live).
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}
