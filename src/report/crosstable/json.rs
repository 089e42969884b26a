//! The crosstable as JSON:
//! `{ "games": N, "standings": [...], "matrix": { name: { opponent:
//! { "points", "games" } } } }`, players in rank order.
//!
//! Owns the JSON shape. Must not compute anything about the games.

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::rating::{Crosstable, Standing};

#[derive(serde::Serialize)]
struct Table<'a> {
    games: usize,
    standings: Vec<Row<'a>>,
    /// Keyed by player, then by opponent; pairs that never met are absent.
    matrix: Matrix<'a>,
}

#[derive(serde::Serialize)]
struct Row<'a> {
    rank: usize,
    player: &'a str,
    games: u32,
    points: f64,
    wins: u32,
    draws: u32,
    losses: u32,
    disc_diff: i64,
    forfeits: u32,
    /// Rounded to a hundredth.
    elo: f64,
    /// `null` when undetermined.
    elo_error: Option<f64>,
    score_as_black: Score,
    score_as_white: Score,
    avg_discs: f64,
}

#[derive(serde::Serialize)]
struct Score {
    points: f64,
    games: u32,
}

struct Matrix<'a>(&'a Crosstable);

/// The rest of one player's matrix row, in rank order.
struct MatrixRow<'a>(&'a Crosstable, usize);

impl Serialize for Matrix<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = self.0;
        let mut map = s.serialize_map(Some(t.standings.len()))?;
        for (i, st) in t.standings.iter().enumerate() {
            map.serialize_entry(&st.player, &MatrixRow(t, i))?;
        }
        map.end()
    }
}

impl Serialize for MatrixRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (t, i) = (self.0, self.1);
        let mut map = s.serialize_map(None)?;
        for (j, cell) in t.matrix[i].iter().enumerate() {
            if let Some((points, games)) = *cell {
                map.serialize_entry(&t.standings[j].player, &Score { points, games })?;
            }
        }
        map.end()
    }
}

fn hundredths(x: f64) -> f64 {
    (x * 100.0).round() / 100.0 + 0.0
}

fn row(s: &Standing) -> Row<'_> {
    Row {
        rank: s.rank,
        player: &s.player,
        games: s.games,
        points: s.points,
        wins: s.wins,
        draws: s.draws,
        losses: s.losses,
        disc_diff: s.disc_diff,
        forfeits: s.forfeits,
        elo: hundredths(s.elo),
        elo_error: s.elo_error.is_finite().then(|| hundredths(s.elo_error)),
        score_as_black: Score {
            points: s.score_as_black.0,
            games: s.score_as_black.1,
        },
        score_as_white: Score {
            points: s.score_as_white.0,
            games: s.score_as_white.1,
        },
        avg_discs: hundredths(s.avg_discs),
    }
}

/// Pretty-printed, with a final newline.
pub(super) fn render(table: &Crosstable) -> String {
    let t = Table {
        games: table.games,
        standings: table.standings.iter().map(row).collect(),
        matrix: Matrix(table),
    };
    let mut out = serde_json::to_string_pretty(&t).expect("a crosstable always serializes");
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::crosstable;
    use crate::report::crosstable::tests::sample;
    use serde_json::Value;

    #[test]
    fn parses_and_totals_match() {
        let t = sample();
        let v: Value = serde_json::from_str(&render(&t)).unwrap();
        assert_eq!(v["games"], 6);
        let standings = v["standings"].as_array().unwrap();
        assert_eq!(standings.len(), 4);
        let points: f64 = standings
            .iter()
            .map(|s| s["points"].as_f64().unwrap())
            .sum();
        assert_eq!(points, 6.0);
        let games: u64 = standings.iter().map(|s| s["games"].as_u64().unwrap()).sum();
        assert_eq!(games, 12);
        assert_eq!(standings[0]["player"], "alpha");
        assert_eq!(standings[0]["score_as_black"]["points"], 2.0);
        assert_eq!(standings[0]["score_as_white"]["games"], 2);
        assert!(standings[0]["elo"].as_f64().unwrap() > 0.0);
        assert_eq!(standings[3]["player"], "idle");
        assert_eq!(standings[3]["elo_error"], Value::Null);

        let m = v["matrix"].as_object().unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m["alpha"]["Smith, \"Bo\""]["points"], 1.5);
        assert_eq!(m["alpha"]["Smith, \"Bo\""]["games"], 2);
        assert!(m["alpha"].get("alpha").is_none());
        assert!(m["idle"].as_object().unwrap().is_empty());
        let total: f64 = m
            .values()
            .flat_map(|row| row.as_object().unwrap().values())
            .map(|c| c["points"].as_f64().unwrap())
            .sum();
        assert_eq!(total, 6.0);
    }

    #[test]
    fn matrix_keys_follow_rank_order() {
        let text = render(&sample());
        let alpha = text.find("\"alpha\": {").unwrap();
        let idle = text.find("\"idle\": {").unwrap();
        assert!(alpha < idle);
    }

    #[test]
    fn empty() {
        let v: Value = serde_json::from_str(&render(&crosstable(&[], &[]))).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"games": 0, "standings": [], "matrix": {}})
        );
    }
}
