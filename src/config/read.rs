//! The reader of a tournament's files: `tournament.toml` itself and the
//! openings file it names, each bounded in size (`input_file`).
//!
//! Owns reading them and the error for a file that cannot be read; must
//! not judge their content (the validators do).

use std::io;
use std::path::Path;

use super::ConfigError;

/// The text of the tournament file `path`.
pub(super) fn config_text(path: &Path) -> Result<String, ConfigError> {
    crate::input_file::read_text(path, crate::input_file::MAX_TEXT).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        line: 0,
        column: 0,
        key: String::new(),
        message: format!("cannot read it: {e}"),
        source_line: String::new(),
    })
}

/// The text of an openings file (the caller says where it was named).
pub(super) fn openings_text(path: &Path) -> io::Result<String> {
    crate::input_file::read_text(path, crate::input_file::MAX_TEXT)
}
