//! The `[tournament]` table: the board size, the counts (games per
//! pairing, concurrency), the stale-lock period, the gauntlet's player, the
//! Swiss rounds; and `[sprt]`, which only a two-player round robin may have.
//!
//! Owns those checks and their words (each error at its key's line); must
//! not read files or look at other tables beyond what a check needs (the
//! players' names and count).

use toml::Spanned;

use crate::mailbox::DEFAULT_STALE;
use crate::player::PlayerSpec;
use crate::rating::sprt::Sprt;

use super::error::Source;
use super::raw::{RawSprt, RawTournament};
use super::time::positive_ms;
use super::{ConfigError, Format};

/// The most games played at once: each costs two bot processes and a
/// handful of the referee's threads.
pub const MAX_CONCURRENCY: u32 = 256;

/// Checks the board size and the counts; returns the size.
pub(super) fn size_and_counts(src: &Source<'_>, t: &RawTournament) -> Result<u8, ConfigError> {
    let size = *t.size.get_ref();
    if !crate::game::SIZES.contains(&size) {
        return Err(src.error_at(
            t.size.span(),
            Some("tournament.size"),
            format!("board size {size} is not allowed; expected 4, 6 or 8"),
        ));
    }
    for (key, v) in [
        ("tournament.concurrency", &t.concurrency),
        ("tournament.games-per-pairing", &t.games_per_pairing),
    ] {
        if *v.get_ref() == 0 {
            return Err(src.error_at(
                v.span(),
                Some(key),
                "expected a number of at least 1".into(),
            ));
        }
    }
    if *t.concurrency.get_ref() > MAX_CONCURRENCY {
        return Err(src.error_at(
            t.concurrency.span(),
            Some("tournament.concurrency"),
            format!(
                "at most {MAX_CONCURRENCY} games at once (each needs two bots and the referee's threads); to play more, share the tournament over machines"
            ),
        ));
    }
    Ok(size)
}

/// `stale-lock-ms`, at least 1 (the lock's default if not written).
pub(super) fn stale_lock_ms(src: &Source<'_>, t: &RawTournament) -> Result<u64, ConfigError> {
    positive_ms(
        src,
        &t.stale_lock_ms,
        "tournament.stale-lock-ms",
        DEFAULT_STALE.as_millis() as u64,
    )
}

/// The gauntlet's player: `gauntlet-player` (one of the players, and only
/// with `format = "gauntlet"`), else the first player of a gauntlet.
pub(super) fn gauntlet_player(
    src: &Source<'_>,
    t: &RawTournament,
    players: &[PlayerSpec],
) -> Result<Option<String>, ConfigError> {
    Ok(match (&t.format, &t.gauntlet_player) {
        (_, Some(g)) => {
            if !players.iter().any(|p| &p.name == g.get_ref()) {
                return Err(src.error_at(
                    g.span(),
                    Some("tournament.gauntlet-player"),
                    format!(
                        "unknown player `{}`; expected one of the [[player]] names: {}",
                        g.get_ref(),
                        players
                            .iter()
                            .map(|p| p.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ));
            }
            if t.format != Format::Gauntlet {
                return Err(src.error_at(
                    g.span(),
                    Some("tournament.gauntlet-player"),
                    "only used with format = \"gauntlet\"".into(),
                ));
            }
            Some(g.get_ref().clone())
        }
        (Format::Gauntlet, None) => Some(players[0].name.clone()),
        _ => None,
    })
}

/// Checks `rounds` (Swiss only) and `[sprt]` (two players, sensible
/// bounds); returns the Swiss rounds (0 for other formats).
pub(super) fn event_shape(
    src: &Source<'_>,
    t: &RawTournament,
    sprt: &Option<Spanned<RawSprt>>,
    players: usize,
) -> Result<u32, ConfigError> {
    let rounds = match (t.format, &t.rounds) {
        (Format::Swiss, None) => {
            return Err(src.missing(
                "tournament.rounds",
                "format = \"swiss\" needs `rounds = N` (the number of rounds)".into(),
            ))
        }
        (Format::Swiss, Some(r)) => {
            let n = *r.get_ref();
            // Without rematches a player meets at most players − 1
            // others, plus one bye in an odd field.
            let max = if players.is_multiple_of(2) {
                players - 1
            } else {
                players
            };
            if n == 0 || n as usize > max {
                return Err(src.error_at(
                    r.span(),
                    Some("tournament.rounds"),
                    format!("expected 1 to {max} rounds for {players} players (no pairing is played twice)"),
                ));
            }
            let g = &t.games_per_pairing;
            if g.span().end != 0 && *g.get_ref() != 2 {
                return Err(src.error_at(
                    g.span(),
                    Some("tournament.games-per-pairing"),
                    "a Swiss pairing is always one game pair (2 games, colours swapped); remove this key or set it to 2".into(),
                ));
            }
            n
        }
        (_, Some(r)) => {
            return Err(src.error_at(
                r.span(),
                Some("tournament.rounds"),
                "only used with format = \"swiss\"".into(),
            ))
        }
        (_, None) => 0,
    };
    if let Some(s) = sprt {
        let r = s.get_ref();
        if players != 2 || t.format == Format::Swiss {
            return Err(src.error_at(
                s.span(),
                Some("sprt"),
                format!("an SPRT compares two players in a round robin; found {players} players"),
            ));
        }
        if r.elo1.get_ref().partial_cmp(&r.elo0) != Some(std::cmp::Ordering::Greater) {
            return Err(src.error_at(
                r.elo1.span(),
                Some("sprt.elo1"),
                format!("expected elo1 greater than elo0 ({})", r.elo0),
            ));
        }
        for (key, v) in [("sprt.alpha", &r.alpha), ("sprt.beta", &r.beta)] {
            let x = *v.get_ref();
            if !(x > 0.0 && x < 0.5) {
                return Err(src.error_at(
                    v.span(),
                    Some(key),
                    format!("expected a probability between 0 and 0.5, found {x}"),
                ));
            }
        }
    }
    Ok(rounds)
}

/// `[sprt]` as the test to run (checked by [`event_shape`]).
pub(super) fn sprt(raw: &Option<Spanned<RawSprt>>) -> Option<Sprt> {
    raw.as_ref().map(|s| {
        let r = s.get_ref();
        Sprt {
            elo0: r.elo0,
            elo1: *r.elo1.get_ref(),
            alpha: *r.alpha.get_ref(),
            beta: *r.beta.get_ref(),
            model: r.model,
            repeated_openings: None,
        }
    })
}
