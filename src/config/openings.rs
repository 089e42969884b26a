//! The `[openings]` table: random plies from a seed, or a file of
//! transcripts (each line checked against the board size, errors at the
//! file's own line).
//!
//! Owns those checks and their words, and what makes a transcript an
//! opening ([`check_opening`], also for `play --start`); reads the
//! openings file only through the reader (`read`).

use std::path::Path;

use crate::game::{replay_transcript, Position};

use super::error::Source;
use super::raw::RawOpenings;
use super::{read, ConfigError, OpeningSource};

/// Where the openings come from; `dir` locates the file.
pub(super) fn openings(
    src: &Source<'_>,
    raw: &RawOpenings,
    dir: &Path,
    size: u8,
) -> Result<OpeningSource, ConfigError> {
    Ok(match (&raw.random_plies, &raw.file) {
        (Some(_), Some(f)) => {
            return Err(src.error_at(
                f.span(),
                Some("openings.file"),
                "give either `random-plies` or `file`, not both".into(),
            ));
        }
        (_, Some(f)) => {
            let file = dir.join(f.get_ref());
            let content = read::openings_text(&file).map_err(|e| {
                src.error_at(
                    f.span(),
                    Some("openings.file"),
                    format!("cannot read {}: {e}", file.display()),
                )
            })?;
            let mut lines = Vec::new();
            for (n, line) in content.lines().enumerate() {
                let l = line.trim();
                if l.is_empty() || l.starts_with('#') {
                    continue;
                }
                check_opening(size, l).map_err(|message| ConfigError {
                    file: file.clone(),
                    line: n + 1,
                    column: 1,
                    key: "opening".into(),
                    message,
                    source_line: line.to_string(),
                })?;
                lines.push(l.to_string());
            }
            if lines.is_empty() {
                return Err(src.error_at(
                    f.span(),
                    Some("openings.file"),
                    format!("{} holds no transcript", file.display()),
                ));
            }
            OpeningSource::File { path: file, lines }
        }
        (Some(p), None) => {
            let plies = *p.get_ref();
            let max = u32::from(size) * u32::from(size) - 4;
            if plies >= max {
                return Err(src.error_at(
                    p.span(),
                    Some("openings.random-plies"),
                    format!("{plies} plies fill the board; expected fewer than {max}"),
                ));
            }
            OpeningSource::Random {
                plies,
                seed: raw.seed,
            }
        }
        (None, None) => OpeningSource::Random {
            plies: 0,
            seed: raw.seed,
        },
    })
}

/// Checks an opening: it replays legally on `size` and leaves a game to
/// play (a transcript of a finished game would be recorded as a game
/// without a single move of the bots).
pub fn check_opening(size: u8, transcript: &str) -> Result<(), String> {
    let (moves, pos) =
        replay_transcript(Position::start(size), transcript).map_err(|e| e.to_string())?;
    if pos.is_over() {
        return Err(format!(
            "after its {} moves the game is over: an opening must leave a move to play",
            moves.len()
        ));
    }
    Ok(())
}

/// Checks every opening (see [`check_opening`]).
pub fn check_openings(size: u8, openings: &[String]) -> Result<(), String> {
    for o in openings {
        check_opening(size, o).map_err(|e| format!("opening `{o}`: {e}"))?;
    }
    Ok(())
}
