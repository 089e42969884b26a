//! The `[openings]` table: random plies from a seed, or a file of
//! transcripts (each line checked against the board size, errors at the
//! file's own line).
//!
//! Owns those checks and their words, and what makes a transcript an
//! opening ([`check_opening`], also for `play --start`); reads the
//! openings file only through the reader (`read`).

use std::path::Path;

use toml::Spanned;

use crate::game::{replay_transcript, squares, Move, Position};
use crate::rating::sprt::{RepeatedOpenings, Sprt};

use super::error::Source;
use super::raw::{RawOpenings, RawSprt};
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

/// An SPRT's pairs must each start from an opening of their own (a pair
/// that repeats another's is not a new sample): the test is refused, at
/// its `[sprt]` table, when the openings cannot give one per pair, unless
/// `repeat-openings = true`, and then every verdict says so.
pub(super) fn sprt_openings(
    src: &Source<'_>,
    raw: &Option<Spanned<RawSprt>>,
    test: Option<Sprt>,
    openings: &OpeningSource,
    size: u8,
    games_per_pairing: u32,
) -> Result<Option<Sprt>, ConfigError> {
    let (Some(raw), Some(mut test)) = (raw, test) else {
        return Ok(None);
    };
    let pairs = u64::from(games_per_pairing.div_ceil(2));
    let distinct = distinct_openings(openings, size, pairs);
    if distinct >= pairs {
        return Ok(Some(test));
    }
    if !raw.get_ref().repeat_openings {
        let source = match openings {
            OpeningSource::Random { plies: 0, .. } => {
                "no openings: every pair starts from the initial position".to_string()
            }
            OpeningSource::Random { plies, .. } => {
                format!("`random-plies = {plies}` gives only {distinct} distinct openings")
            }
            OpeningSource::File { path, .. } => {
                format!("{} holds only {distinct} distinct openings", path.display())
            }
        };
        return Err(src.error_at(
            raw.span(),
            Some("sprt"),
            format!(
                "an SPRT of up to {pairs} pairs (games-per-pairing = {games_per_pairing}) needs an \
                 opening per pair, and {source}; give more `random-plies` in [openings] or an \
                 openings file of at least {pairs} lines, lower games-per-pairing, or set \
                 `repeat-openings = true` in [sprt] to accept repeats (every verdict then says so)"
            ),
        ));
    }
    test.repeated_openings = Some(RepeatedOpenings { distinct, pairs });
    Ok(Some(test))
}

/// How many distinct openings `openings` can give, counted up to `enough`:
/// a file's distinct lines, or the move sequences of `plies` plays that
/// leave a game to play (what [`crate::schedule::random_openings`] draws
/// from; passes are not written).
pub fn distinct_openings(openings: &OpeningSource, size: u8, enough: u64) -> u64 {
    match openings {
        OpeningSource::File { lines, .. } => {
            let set: std::collections::HashSet<&str> = lines.iter().map(|l| l.as_str()).collect();
            set.len() as u64
        }
        OpeningSource::Random { plies: 0, .. } => 1,
        OpeningSource::Random { plies, .. } => {
            sequences(&Position::start(size), *plies, enough.max(1))
        }
    }
}

/// Sequences of `plies` plays from `pos` ending in a game not over,
/// counted up to `enough` (the search stops there).
fn sequences(pos: &Position, plies: u32, enough: u64) -> u64 {
    if pos.is_over() {
        return 0;
    }
    if plies == 0 {
        return 1;
    }
    if pos.must_pass() {
        return sequences(&pos.pass_unchecked(), plies, enough);
    }
    let mut count = 0;
    for sq in squares(pos.legal_moves()) {
        let next = pos.play(Move::Play(sq)).expect("legal").0;
        count += sequences(&next, plies - 1, enough - count);
        if count >= enough {
            break;
        }
    }
    count
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
