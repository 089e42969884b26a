//! The `[openings]` table: random plies from a seed, or a file of
//! transcripts (each line checked against the board size, errors at the
//! file's own line), or, when it names neither, the default: on 8×8 the
//! balanced openings shipped in the program (`openings/balanced-8.txt`,
//! made by `crates/othello/examples/balanced_openings.rs`), on smaller
//! boards random plies ([`DEFAULT_RANDOM_PLIES`]).
//!
//! Owns those checks and their words, the default, and what makes a
//! transcript an opening ([`check_opening`], also for `play --start`);
//! reads the openings file only through the reader (`read`).

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
        (None, None) => default_openings(size, raw.seed),
    })
}

/// The shipped list's file, as the messages name it.
pub const BALANCED_8_NAME: &str = "openings/balanced-8.txt";

/// The shipped list: 8-ply openings near even for the project's own
/// search (its header says how they were made).
const BALANCED_8: &str = include_str!("../../openings/balanced-8.txt");

/// Random plies played from a seed when a smaller board has no
/// `[openings]` (no list is shipped for 6×6 or 4×4).
pub const DEFAULT_RANDOM_PLIES: [(u8, u32); 2] = [(6, 4), (4, 2)];

/// The openings of a file without `random-plies` or `file`: on 8×8 the
/// shipped balanced list, on 6×6 and 4×4 [`DEFAULT_RANDOM_PLIES`].
fn default_openings(size: u8, seed: u64) -> OpeningSource {
    match DEFAULT_RANDOM_PLIES.iter().find(|(s, _)| *s == size) {
        Some(&(_, plies)) => OpeningSource::Random { plies, seed },
        None => OpeningSource::Shipped {
            name: BALANCED_8_NAME,
            lines: transcripts(BALANCED_8),
        },
    }
}

/// The transcripts of an openings text: its lines without blanks and
/// `#` comments, trimmed.
fn transcripts(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
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
            OpeningSource::Shipped { name, .. } => {
                format!("the shipped {name} holds only {distinct} distinct openings")
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
        OpeningSource::File { lines, .. } | OpeningSource::Shipped { lines, .. } => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Color;
    use std::collections::HashSet;

    /// The least of a position's eight symmetric images.
    fn canonical(pos: &Position) -> (u64, u64, Color) {
        (0..8)
            .map(|s| {
                let t = pos.transformed(s);
                (
                    t.discs_of(Color::Black),
                    t.discs_of(Color::White),
                    t.to_move(),
                )
            })
            .min_by_key(|&(b, w, _)| (b, w))
            .expect("eight images")
    }

    #[test]
    fn shipped_openings_are_2000_legal_8_ply_lines_from_f5_to_2000_positions() {
        let lines = transcripts(BALANCED_8);
        assert_eq!(lines.len(), 2000);
        let mut positions = HashSet::new();
        for l in &lines {
            check_opening(8, l).unwrap_or_else(|e| panic!("{l}: {e}"));
            let (moves, pos) = replay_transcript(Position::start(8), l).unwrap();
            assert_eq!(moves.len(), 8, "{l}: 8 plays, no pass");
            assert!(l.starts_with("f5"), "{l}");
            assert!(positions.insert(canonical(&pos)), "{l}: a position twice");
        }
        // The header says how the file was made and how to make it again.
        assert!(BALANCED_8.starts_with("# Balanced 8x8 openings"));
        assert!(BALANCED_8.contains(
            "cargo run --release -p othello --example balanced_openings > openings/balanced-8.txt"
        ));
    }

    #[test]
    fn the_shipped_list_starts_from_varied_first_replies() {
        // Written in the order of a hash, not of the rating: a match of a
        // few pairs already meets several of white's first replies.
        let lines = transcripts(BALANCED_8);
        let replies: HashSet<&str> = lines[..20].iter().map(|l| &l[2..4]).collect();
        assert!(replies.len() >= 3, "{replies:?}");
    }
}
