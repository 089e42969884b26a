//! The crosstable as JSON:
//! `{ "games": N, "ranked_by": [...], "standings": [...], "matrix": { name: { opponent:
//! { "points", "games" } } }, "pairings": [...], "pentanomial": [...],
//! "sprt": {...} }`, players in rank order; the last three only where
//! they apply (pairings that met; two-player events; an SPRT).
//!
//! Owns the JSON shape. Must not compute anything about the games.

use serde::ser::{Serialize, SerializeMap, Serializer};

use crate::rating::pairstats::{Interval, PairingStats};
use crate::rating::swiss::SwissScore;
use crate::rating::{Crosstable, SprtStatus, Standing};

#[derive(serde::Serialize)]
struct Table<'a> {
    games: usize,
    /// The keys of a standing that decide its rank, compared in this
    /// order (descending; ties by name).
    ranked_by: Vec<&'static str>,
    standings: Vec<Row<'a>>,
    /// Keyed by player, then by opponent; pairs that never met are absent.
    matrix: Matrix<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pairings: Vec<Pairing<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pentanomial: Option<[u64; 5]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sprt: Option<SprtJson>,
}

/// A mean and its 95 % interval, to a hundredth.
#[derive(serde::Serialize)]
struct Mean {
    mean: f64,
    /// Half-width of the 95 % interval; `null` when undetermined.
    error: Option<f64>,
}

fn mean(i: &Option<Interval>) -> Option<Mean> {
    i.map(|i| Mean {
        mean: hundredths(i.mean),
        error: i.error.map(hundredths),
    })
}

#[derive(serde::Serialize)]
struct Pairing<'a> {
    first: &'a str,
    second: &'a str,
    games: u32,
    pentanomial: [u64; 5],
    draw_ratio: f64,
    /// Of `first`, from the pairs.
    elo: Option<Mean>,
    los: Option<f64>,
    /// Of `first`, per game.
    disc_margin: Option<Mean>,
}

fn pairing(p: &PairingStats) -> Pairing<'_> {
    Pairing {
        first: &p.first,
        second: &p.second,
        games: p.games,
        pentanomial: p.pentanomial,
        draw_ratio: hundredths(p.draw_ratio * 100.0) / 100.0,
        elo: mean(&p.elo),
        los: p.los.map(|l| hundredths(l * 100.0) / 100.0),
        disc_margin: mean(&p.disc_margin),
    }
}

#[derive(serde::Serialize)]
struct SprtJson {
    elo0: f64,
    elo1: f64,
    alpha: f64,
    beta: f64,
    model: &'static str,
    llr: f64,
    lower: f64,
    upper: f64,
    /// `H0`, `H1` or `continue`.
    result: &'static str,
    /// Set when the pairs repeat openings (`repeat-openings = true`).
    #[serde(skip_serializing_if = "Option::is_none")]
    caveat: Option<String>,
    /// The games recorded when the run decided the test.
    #[serde(skip_serializing_if = "Option::is_none")]
    decided_after: Option<usize>,
}

fn sprt(s: &SprtStatus) -> SprtJson {
    SprtJson {
        elo0: s.test.elo0,
        elo1: s.test.elo1,
        alpha: s.test.alpha,
        beta: s.test.beta,
        model: s.test.model.name(),
        llr: hundredths(s.llr),
        lower: hundredths(s.test.lower()),
        upper: hundredths(s.test.upper()),
        result: s.decision.name(),
        caveat: s.test.repeated_openings.map(|r| r.caveat()),
        decided_after: s.decided_after,
    }
}

#[derive(serde::Serialize)]
struct Swiss {
    score: f64,
    buchholz: f64,
    sonneborn_berger: f64,
    byes: u32,
}

fn swiss(s: &SwissScore) -> Swiss {
    Swiss {
        score: s.score,
        buchholz: s.buchholz,
        sonneborn_berger: s.sonneborn_berger,
        byes: s.byes,
    }
}

#[derive(serde::Serialize)]
struct Row<'a> {
    rank: usize,
    player: &'a str,
    /// Present (true) for a player who played as a person.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    person: bool,
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
    /// Mean disc margin per game with its 95 % interval.
    disc_margin: Option<Mean>,
    #[serde(skip_serializing_if = "Option::is_none")]
    swiss: Option<Swiss>,
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

fn row<'a>(t: &Crosstable, s: &'a Standing) -> Row<'a> {
    Row {
        rank: s.rank,
        player: &s.player,
        person: t.people.contains(&s.player),
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
        disc_margin: mean(&s.disc_margin),
        swiss: s.swiss.as_ref().map(swiss),
    }
}

/// Pretty-printed, with a final newline.
pub(super) fn render(table: &Crosstable) -> String {
    let mut ranked_by = Vec::new();
    if super::is_swiss(table) {
        ranked_by.extend(["swiss.score", "swiss.buchholz", "swiss.sonneborn_berger"]);
    }
    ranked_by.extend(["points", "elo", "disc_diff"]);
    let t = Table {
        games: table.games,
        ranked_by,
        standings: table.standings.iter().map(|s| row(table, s)).collect(),
        matrix: Matrix(table),
        pairings: table.pairings.iter().map(pairing).collect(),
        pentanomial: table.pentanomial,
        sprt: table.sprt.as_ref().map(sprt),
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
            serde_json::json!({
                "games": 0,
                "ranked_by": ["points", "elo", "disc_diff"],
                "standings": [],
                "matrix": {}
            })
        );
    }
}
