//! The `[sandbox]` table and what every player's sandbox shares: the user
//! ids set aside for bots (`ids`), and the run's own folders no bot may
//! read (the board, the results, the configuration file; a player's
//! `read` may not hold them either, which `players` checks).
//!
//! Owns those checks and their words; must not start anything.

use std::path::Path;

use crate::player::PlayerSpec;
use crate::sandbox::IdRange;

use super::error::Source;
use super::raw::RawSandbox;
use super::ConfigError;

/// `players` with the shared sandbox settings filled in; `run` are the
/// run's own folders and files.
pub(super) fn shared_settings(
    src: &Source<'_>,
    raw: &RawSandbox,
    mut players: Vec<PlayerSpec>,
    run: &[&Path],
) -> Result<Vec<PlayerSpec>, ConfigError> {
    let ids = match &raw.ids {
        None => crate::sandbox::ids::DEFAULT_IDS,
        Some(text) => IdRange::parse(text.get_ref())
            .map_err(|m| src.error_at(text.span(), Some("sandbox.ids"), m))?,
    };
    let keep_out: Vec<_> = run.iter().map(|p| p.to_path_buf()).collect();
    for p in &mut players {
        p.sandbox.ids = ids;
        p.sandbox.keep_out = keep_out.clone();
    }
    Ok(players)
}
