//! The French federation's WTHOR database files for 8×8 games: `.wtb`
//! (games), `.JOU` (players) and `.TRN` (tournaments), in the published
//! layout (ffothello.org, "Format WThor"): a 16-byte header, then fixed-size
//! little-endian records.
//!
//! Owns the byte layout and the choices below. Pure: every function returns
//! bytes or names; the export command writes them. Must not read results or
//! judge a game.
//!
//! Choices:
//! - Only 8×8 games: WTHOR has no 4×4 or 6×6 (the caller reports the rest
//!   as skipped). One `.wtb` per year of the games' start (`WTH_<year>.wtb`,
//!   header field "year of games"), all sharing `WTHOR.JOU` and `WTHOR.TRN`.
//! - `.wtb` header: creation date, n1 = games, n2 = 0, year of games,
//!   p1 = 8 (board size), p2 = 0, p3 = 0. p3 is the number of empty squares
//!   at which the theoretical score was computed by perfect play; with no
//!   endgame solver here it is 0, and the theoretical score is the final
//!   score itself (the position with no empties, or the adjudicated end).
//! - Game record (68 bytes): tournament index (always 0, the one
//!   tournament), black and white player indices into `.JOU` (players of
//!   8×8 games sorted by name, from 0), black's discs, theoretical score,
//!   then the 60 move bytes `10 * row + column` (a1 = 11, h8 = 88, row 1 at
//!   the top), 0 after the last move. Passes are not stored; the opening's
//!   moves are (WTHOR games always start from the standard position).
//! - Black's discs count the empty squares for the winner (the record's
//!   `discs_wof`), WTHOR's convention. A forfeited game keeps the moves
//!   played until the forfeit, and its score is the adjudicated one: every
//!   square to the winner (64 or 0). WTHOR has no field for a forfeit, so a
//!   database user sees a short game with a decisive score, as for a game
//!   lost on time in an over-the-board tournament.
//! - Names: `.JOU` records are 20 bytes, `.TRN` records 26, ISO-8859-1,
//!   NUL-terminated: at most 19 and 25 characters. Characters outside
//!   ISO-8859-1 become `?`; a name cut short that would equal another one
//!   ends in `~2`, `~3`… so indices stay unambiguous.

use std::collections::{BTreeMap, BTreeSet};

use crate::game::Move;
use crate::record::GameRecord;

/// Size of a header.
pub const HEADER_LEN: usize = 16;
/// Size of an 8×8 game record.
pub const GAME_LEN: usize = 68;
/// Size of a `.JOU` record (a player's name).
pub const PLAYER_LEN: usize = 20;
/// Size of a `.TRN` record (a tournament's name).
pub const TOURNAMENT_LEN: usize = 26;
/// The players file.
pub const PLAYERS_FILE: &str = "WTHOR.JOU";
/// The tournaments file.
pub const TOURNAMENTS_FILE: &str = "WTHOR.TRN";
/// The depth of the theoretical score (see the module comment).
pub const THEORETICAL_DEPTH: u8 = 0;

/// A file creation date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

impl Date {
    /// The date of an RFC 3339 timestamp (`2026-11-22T…`), if it has one.
    pub fn from_rfc3339(text: &str) -> Option<Date> {
        let year = text.get(0..4)?.parse().ok()?;
        let month = text.get(5..7)?.parse().ok()?;
        let day = text.get(8..10)?.parse().ok()?;
        (text.get(4..5) == Some("-") && text.get(7..8) == Some("-")).then_some(Date {
            year,
            month,
            day,
        })
    }
}

/// Everything an export writes: file names with their bytes, and the games
/// left out with why.
#[derive(Debug, Default)]
pub struct Database {
    /// `(file name, bytes)`: one `.wtb` per year, then `.JOU` and `.TRN`.
    pub files: Vec<(String, Vec<u8>)>,
    /// Games written.
    pub games: usize,
    /// `(game id, why)` for the games not written.
    pub skipped: Vec<(String, String)>,
}

/// A 16-byte header.
fn header(created: Date, n1: u32, n2: u16, year_of_games: u16, p1: u8, p3: u8) -> [u8; 16] {
    let mut h = [0u8; HEADER_LEN];
    h[0] = (created.year / 100) as u8;
    h[1] = (created.year % 100) as u8;
    h[2] = created.month;
    h[3] = created.day;
    h[4..8].copy_from_slice(&n1.to_le_bytes());
    h[8..10].copy_from_slice(&n2.to_le_bytes());
    h[10..12].copy_from_slice(&year_of_games.to_le_bytes());
    h[12] = p1;
    h[13] = 0; // p2
    h[14] = p3;
    h[15] = 0; // reserved
    h
}

/// The move bytes of a record (passes dropped), or why it cannot be stored.
fn move_bytes(record: &GameRecord) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(60);
    for m in &record.moves {
        if let Move::Play(sq) = m.mv {
            out.push(10 * (sq.row() + 1) + sq.col() + 1);
        }
    }
    if out.len() > 60 {
        return Err(format!("{} moves, more than 60", out.len()));
    }
    Ok(out)
}

/// A name as ISO-8859-1 bytes, at most `max` of them.
fn latin1(name: &str, max: usize) -> Vec<u8> {
    name.chars()
        .map(|c| match c as u32 {
            0 => b'?',
            v @ 1..=0xff => v as u8,
            _ => b'?',
        })
        .take(max)
        .collect()
}

/// Names cut to `max` ISO-8859-1 bytes, made distinct with `~2`, `~3`…
fn fit_names(names: &[String], max: usize) -> Vec<Vec<u8>> {
    let mut taken = BTreeSet::new();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let mut bytes = latin1(name, max);
        let mut k = 2;
        while taken.contains(&bytes) {
            let suffix = format!("~{k}").into_bytes();
            bytes = latin1(name, max - suffix.len());
            bytes.extend_from_slice(&suffix);
            k += 1;
        }
        taken.insert(bytes.clone());
        out.push(bytes);
    }
    out
}

/// A `.JOU` or `.TRN` file: header with n2 = the count, then NUL-padded
/// fixed-size names.
fn names_file(created: Date, names: &[String], record_len: usize) -> Vec<u8> {
    let fitted = fit_names(names, record_len - 1);
    let mut out = header(created, 0, names.len() as u16, 0, 0, 0).to_vec();
    for name in fitted {
        let mut rec = vec![0u8; record_len];
        rec[..name.len()].copy_from_slice(&name);
        out.extend_from_slice(&rec);
    }
    out
}

/// The WTHOR files for `records` (8×8 games only) of one tournament named
/// `tournament`, created on `created`. Games without a readable start date
/// count as games of `created.year`.
pub fn database(records: &[GameRecord], tournament: &str, created: Date) -> Database {
    let mut db = Database::default();
    let mut kept: Vec<(&GameRecord, Vec<u8>)> = Vec::new();
    for r in records {
        if r.size != 8 {
            db.skipped.push((
                r.id.clone(),
                format!("{0}x{0} board (WTHOR holds 8x8 games only)", r.size),
            ));
            continue;
        }
        match move_bytes(r) {
            Ok(moves) => kept.push((r, moves)),
            Err(why) => db.skipped.push((r.id.clone(), why)),
        }
    }
    let players: Vec<String> = kept
        .iter()
        .flat_map(|(r, _)| [r.black.clone(), r.white.clone()])
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    if players.len() > u16::MAX as usize {
        for (r, _) in kept.drain(..) {
            db.skipped
                .push((r.id.clone(), "more than 65535 players".into()));
        }
        return db;
    }
    let index = |name: &str| players.binary_search_by(|p| p.as_str().cmp(name)).unwrap() as u16;

    let mut by_year: BTreeMap<u16, Vec<u8>> = BTreeMap::new();
    let mut counts: BTreeMap<u16, u32> = BTreeMap::new();
    for (r, moves) in &kept {
        let year = Date::from_rfc3339(&r.started).map_or(created.year, |d| d.year);
        let score = r.discs_wof.black.min(64) as u8;
        let buf = by_year.entry(year).or_default();
        buf.extend_from_slice(&0u16.to_le_bytes());
        buf.extend_from_slice(&index(&r.black).to_le_bytes());
        buf.extend_from_slice(&index(&r.white).to_le_bytes());
        buf.push(score);
        buf.push(score);
        let mut slots = [0u8; 60];
        slots[..moves.len()].copy_from_slice(moves);
        buf.extend_from_slice(&slots);
        *counts.entry(year).or_default() += 1;
    }
    for (year, body) in by_year {
        let n = counts[&year];
        let mut bytes = header(created, n, 0, year, 8, THEORETICAL_DEPTH).to_vec();
        bytes.extend_from_slice(&body);
        db.files.push((format!("WTH_{year}.wtb"), bytes));
        db.games += n as usize;
    }
    if db.games > 0 {
        db.files.push((
            PLAYERS_FILE.to_string(),
            names_file(created, &players, PLAYER_LEN),
        ));
        db.files.push((
            TOURNAMENTS_FILE.to_string(),
            names_file(created, &[tournament.to_string()], TOURNAMENT_LEN),
        ));
    }
    db
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::{DiscCount, EndReason, MoveRecord, Winner};

    fn rec(id: &str, size: u8, moves: &[&str]) -> GameRecord {
        GameRecord {
            id: id.into(),
            round: 1,
            black: "b".into(),
            white: "a".into(),
            size,
            opening: String::new(),
            moves: moves
                .iter()
                .map(|m| MoveRecord {
                    color: crate::game::Color::Black,
                    mv: crate::game::parse_move(m, 8).unwrap(),
                    ms: 0,
                    opening: false,
                    auto: false,
                })
                .collect(),
            result: Winner::Black,
            reason: EndReason::Normal,
            forfeit: None,
            discs: DiscCount {
                black: 40,
                white: 20,
            },
            discs_wof: DiscCount {
                black: 44,
                white: 20,
            },
            transcript: String::new(),
            started: "2025-03-04T05:06:07Z".into(),
            finished: String::new(),
            time_ms: DiscCount { black: 0, white: 0 },
            swiss_round: None,
            people: Vec::new(),
        }
    }

    const DAY: Date = Date {
        year: 2026,
        month: 11,
        day: 22,
    };

    #[test]
    fn layout_of_a_game_and_the_name_files() {
        let db = database(
            &[
                rec("g1", 8, &["d3", "pass", "c5", "h8"]),
                rec("g2", 6, &["c2"]),
            ],
            "T",
            DAY,
        );
        assert_eq!(db.games, 1);
        assert_eq!(db.skipped.len(), 1);
        let names: Vec<&str> = db.files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["WTH_2025.wtb", "WTHOR.JOU", "WTHOR.TRN"]);
        let wtb = &db.files[0].1;
        assert_eq!(wtb.len(), HEADER_LEN + GAME_LEN);
        assert_eq!(
            &wtb[..16],
            &[20, 26, 11, 22, 1, 0, 0, 0, 0, 0, 0xe9, 0x07, 8, 0, 0, 0]
        );
        // tournament 0, black "b" = 1, white "a" = 0, score 44 twice, moves.
        assert_eq!(&wtb[16..27], &[0, 0, 1, 0, 0, 0, 44, 44, 34, 53, 88]);
        assert!(wtb[27..].iter().all(|&b| b == 0));
        let jou = &db.files[1].1;
        assert_eq!(jou.len(), HEADER_LEN + 2 * PLAYER_LEN);
        assert_eq!(&jou[8..10], &[2, 0]);
        assert_eq!(jou[16], b'a');
        assert_eq!(db.files[2].1.len(), HEADER_LEN + TOURNAMENT_LEN);
    }

    #[test]
    fn long_names_stay_distinct() {
        let names = vec![
            "a-very-long-player-name-1".to_string(),
            "a-very-long-player-name-2".to_string(),
            "Zoë→".to_string(),
        ];
        let fitted = fit_names(&names, 19);
        assert_eq!(fitted[0], b"a-very-long-player-");
        assert_eq!(fitted[1], b"a-very-long-playe~2");
        assert_eq!(fitted[2], [b'Z', b'o', 0xeb, b'?']);
    }
}
