//! A configuration error and where it is: the file, line, column and key,
//! with the offending line for display; and the positions of a TOML text
//! (line and column of an offset, the dotted key there) that every
//! validator uses to say where.
//!
//! Owns the error's shape and words; must not validate anything itself.

use std::path::{Path, PathBuf};

/// A config error: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub key: String,
    pub message: String,
    /// The offending line of the file, for display.
    pub source_line: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if self.line > 0 {
            write!(f, ":{}:{}", self.line, self.column)?;
        }
        if !self.key.is_empty() {
            write!(f, ": `{}`", self.key)?;
        }
        write!(f, ": {}", self.message)?;
        if self.line > 0 && !self.source_line.is_empty() {
            write!(
                f,
                "\n{:>5} | {}\n      | {}^",
                self.line,
                self.source_line,
                " ".repeat(self.column.saturating_sub(1))
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

/// Line and column (from 1) of byte `offset` in `src`.
pub(super) fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = &src[..offset];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(offset, |i| offset - i - 1) + 1;
    (line, col)
}

/// The dotted key whose value (or name) is at byte `offset`: the last
/// `[table]` / `[[array]]` header before it plus the key on its line.
pub(super) fn key_at(src: &str, offset: usize) -> String {
    let mut table = String::new();
    let mut counts: std::collections::HashMap<String, usize> = Default::default();
    let mut pos = 0;
    let mut key = String::new();
    for line in src.split_inclusive('\n') {
        let end = pos + line.len();
        let t = line.trim();
        if let Some(inner) = t.strip_prefix("[[").and_then(|r| r.split("]]").next()) {
            let name = inner.trim().to_string();
            let n = counts.entry(name.clone()).or_insert(0);
            *n += 1;
            table = format!("{name}[{}]", *n);
            key.clear();
        } else if let Some(inner) = t.strip_prefix('[').and_then(|r| r.split(']').next()) {
            table = inner.trim().to_string();
            key.clear();
        } else if let Some((k, _)) = t.split_once('=') {
            if !t.starts_with('#') {
                key = k.trim().trim_matches('"').to_string();
            }
        }
        if offset < end {
            break;
        }
        pos = end;
    }
    match (table.is_empty(), key.is_empty()) {
        (true, _) => key,
        (false, true) => table,
        (false, false) => format!("{table}.{key}"),
    }
}

/// A TOML text and the file it came from, to point at.
pub(super) struct Source<'a> {
    pub(super) path: &'a Path,
    pub(super) text: &'a str,
}

impl Source<'_> {
    pub(super) fn error_at(
        &self,
        span: std::ops::Range<usize>,
        key: Option<&str>,
        message: String,
    ) -> ConfigError {
        let (line, column) = if span.end == 0 {
            (0, 0)
        } else {
            line_col(self.text, span.start)
        };
        let key = key.map_or_else(|| key_at(self.text, span.start), str::to_string);
        ConfigError {
            file: self.path.to_path_buf(),
            line,
            column,
            key,
            message,
            source_line: self
                .text
                .lines()
                .nth(line.saturating_sub(1))
                .unwrap_or("")
                .to_string(),
        }
    }

    /// An error about a key that was not written at all.
    pub(super) fn missing(&self, key: &str, message: String) -> ConfigError {
        ConfigError {
            file: self.path.to_path_buf(),
            line: 0,
            column: 0,
            key: key.to_string(),
            message,
            source_line: String::new(),
        }
    }
}
