//! Tallies of game records per player and per pair, and the ranking rule.
//!
//! Owns counting (points, W-D-L, discs, forfeits, colours) and ordering.
//! Must not fit ratings (that is `elo`), format anything, or do I/O.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::game::Color;
use crate::record::{EndReason, GameRecord, Winner};

use super::elo::Pairs;

/// One player's totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Tally {
    pub games: u32,
    pub points: f64,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub disc_diff: i64,
    pub forfeits: u32,
    pub as_black: (f64, u32),
    pub as_white: (f64, u32),
    pub discs: u64,
}

/// Everything counted from the records, indexed by player.
pub(super) struct Tallies {
    pub names: Vec<String>,
    pub tallies: Vec<Tally>,
    pub pairs: Pairs,
    /// Games counted (self-play records are skipped).
    pub games: usize,
}

/// Counts `records`; the players are `players` (deduplicated) followed by
/// everyone else named in the records, in order of appearance.
///
/// A record whose black and white players are the same name is skipped: it
/// says nothing about strength and has no cell in the matrix.
pub(super) fn tally(records: &[GameRecord], players: &[String]) -> Tallies {
    // Looked up by &str: no allocation per record.
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut order: Vec<&str> = Vec::new();
    let all = players.iter().map(String::as_str).chain(
        records
            .iter()
            .flat_map(|r| [r.black.as_str(), r.white.as_str()]),
    );
    for name in all {
        index.entry(name).or_insert_with(|| {
            order.push(name);
            order.len() - 1
        });
    }
    let names: Vec<String> = order.iter().map(|s| s.to_string()).collect();

    let n = names.len();
    let mut tallies = vec![Tally::default(); n];
    let mut pairs = Pairs::new(n);
    let mut games = 0;
    for r in records {
        if r.black == r.white {
            continue;
        }
        let b = index[r.black.as_str()];
        let w = index[r.white.as_str()];
        games += 1;
        pairs.add_game(b, w, r.result.points_for(Color::Black));
        let discs = [r.discs_wof.black, r.discs_wof.white];
        for (i, color, own, opp) in [
            (b, Color::Black, discs[0], discs[1]),
            (w, Color::White, discs[1], discs[0]),
        ] {
            let t = &mut tallies[i];
            let pts = r.result.points_for(color);
            t.games += 1;
            t.points += pts;
            let lost = match r.result {
                Winner::Draw => {
                    t.draws += 1;
                    false
                }
                _ if pts == 1.0 => {
                    t.wins += 1;
                    false
                }
                _ => {
                    t.losses += 1;
                    true
                }
            };
            if lost && r.reason != EndReason::Normal {
                t.forfeits += 1;
            }
            t.disc_diff += i64::from(own) - i64::from(opp);
            t.discs += u64::from(own);
            let side = match color {
                Color::Black => &mut t.as_black,
                Color::White => &mut t.as_white,
            };
            side.0 += pts;
            side.1 += 1;
        }
    }
    Tallies {
        names,
        tallies,
        pairs,
        games,
    }
}

/// The sort key of a player: in a Swiss event its score, Buchholz and
/// Sonneborn-Berger first; then points, then Elo, then disc difference (all
/// descending), then name. Elo is compared to a millionth of a point so
/// that rounding noise between players with identical results cannot
/// separate them.
#[derive(Clone, Copy, Debug)]
pub(super) struct RankKey<'a> {
    pub points: f64,
    pub elo: f64,
    pub disc_diff: i64,
    pub name: &'a str,
    /// Swiss score, Buchholz, Sonneborn-Berger (zeros outside Swiss
    /// events); compared before everything else.
    pub swiss: [f64; 3],
}

impl RankKey<'_> {
    fn elo_key(&self) -> i64 {
        (self.elo * 1e6).round() as i64
    }

    /// Equal in everything that decides a rank (the name does not).
    pub fn ties(&self, other: &RankKey) -> bool {
        self.swiss == other.swiss
            && self.points == other.points
            && self.elo_key() == other.elo_key()
            && self.disc_diff == other.disc_diff
    }

    pub fn cmp(&self, other: &RankKey) -> Ordering {
        let swiss = (0..3).fold(Ordering::Equal, |o, k| {
            o.then_with(|| other.swiss[k].total_cmp(&self.swiss[k]))
        });
        swiss
            .then_with(|| other.points.total_cmp(&self.points))
            .then_with(|| other.elo_key().cmp(&self.elo_key()))
            .then_with(|| other.disc_diff.cmp(&self.disc_diff))
            .then_with(|| self.name.cmp(other.name))
    }
}

/// The ranks (1-based, shared by ties, then skipping: 1, 1, 3) of keys that
/// are already sorted with [`RankKey::cmp`].
pub(super) fn ranks(sorted: &[RankKey]) -> Vec<usize> {
    let mut out = Vec::with_capacity(sorted.len());
    for (pos, key) in sorted.iter().enumerate() {
        if pos > 0 && key.ties(&sorted[pos - 1]) {
            out.push(out[pos - 1]);
        } else {
            out.push(pos + 1);
        }
    }
    out
}
