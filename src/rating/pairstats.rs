//! Statistics of one pairing that chess tools report (or throw away):
//! the pentanomial count of colour-swapped game pairs, Elo from pairs with
//! its 95 % interval, the likelihood of superiority (LOS), the draw ratio,
//! and the mean disc margin (WOF) with its 95 % interval.
//!
//! Owns how games are grouped into pairs and these formulas. Pure over
//! `&[GameRecord]`: no I/O, no formatting, no SPRT decisions (that is
//! `sprt`).

use std::collections::BTreeMap;

use crate::game::Color;
use crate::record::GameRecord;

/// z of the two-sided 95 % normal interval.
const Z95: f64 = 1.959963984540054;

/// A mean with the half-width of its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Interval {
    pub mean: f64,
    /// `None` with fewer than two samples.
    pub error: Option<f64>,
}

/// The mean of `samples` and the normal 95 % interval of the mean
/// (sample standard deviation, n − 1); `None` without samples. No interval
/// (`error: None`) from one sample, nor from samples that are all equal:
/// they show no spread to estimate one from, and `± 0` would claim
/// certainty (two games of one opening pair, both won by 64).
pub fn mean_interval(samples: &[f64]) -> Option<Interval> {
    if samples.is_empty() {
        return None;
    }
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    let error = (samples.len() > 1 && var > 0.0).then(|| Z95 * (var / n).sqrt());
    Some(Interval { mean, error })
}

/// `name`'s disc margin in `r` (own minus opponent's discs, empties to the
/// winner), if it played it.
pub fn disc_margin(r: &GameRecord, name: &str) -> Option<f64> {
    let color = r.color_of(name)?;
    let (own, opp) = match color {
        Color::Black => (r.discs_wof.black, r.discs_wof.white),
        Color::White => (r.discs_wof.white, r.discs_wof.black),
    };
    Some(f64::from(own) - f64::from(opp))
}

/// Which colour-swapped pair of its pairing a game belongs to: games
/// 2k−1 and 2k of a pairing (`round`) share an opening, within one Swiss
/// round.
fn pair_key(r: &GameRecord) -> (u32, u32) {
    (r.swiss_round.unwrap_or(0), r.round.div_ceil(2))
}

/// Pairs of games between `first` and `second` in which `first` scored 0,
/// ½, 1, 1½, 2. A pair counts once both its games are finished.
pub fn pentanomial<'a>(
    records: impl IntoIterator<Item = &'a GameRecord>,
    first: &str,
    second: &str,
) -> [u64; 5] {
    let mut pairs: BTreeMap<(u32, u32), (u32, f64)> = BTreeMap::new();
    for r in records {
        let Some(color) = r.color_of(first) else {
            continue;
        };
        if r.player(color.opponent()) != second || first == second {
            continue;
        }
        let e = pairs.entry(pair_key(r)).or_default();
        e.0 += 1;
        e.1 += r.result.points_for(color);
    }
    let mut penta = [0; 5];
    for (games, points) in pairs.values() {
        if *games == 2 {
            penta[(points * 2.0).round() as usize] += 1;
        }
    }
    penta
}

/// The head-to-head statistics of `first` against `second`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct PairingStats {
    pub first: String,
    pub second: String,
    pub games: u32,
    /// See [`pentanomial`].
    pub pentanomial: [u64; 5],
    /// Draws over games.
    pub draw_ratio: f64,
    /// Logistic Elo of `first` from the pairs' mean score; `None` without
    /// pairs or at a 0 % or 100 % score.
    pub elo: Option<Interval>,
    /// Probability that `first` is the stronger, from the pairs; `None`
    /// without pairs.
    pub los: Option<f64>,
    /// `first`'s mean disc margin per game.
    pub disc_margin: Option<Interval>,
}

/// The statistics of `first` against `second` in `records`.
pub fn pairing_stats(records: &[GameRecord], first: &str, second: &str) -> PairingStats {
    let games: Vec<&GameRecord> = records
        .iter()
        .filter(|r| {
            (r.black == first && r.white == second) || (r.black == second && r.white == first)
        })
        .collect();
    let draws = games
        .iter()
        .filter(|r| r.result == crate::record::Winner::Draw)
        .count();
    let margins: Vec<f64> = games.iter().filter_map(|r| disc_margin(r, first)).collect();
    let penta = pentanomial(records, first, second);
    PairingStats {
        first: first.to_string(),
        second: second.to_string(),
        games: games.len() as u32,
        pentanomial: penta,
        draw_ratio: if games.is_empty() {
            0.0
        } else {
            draws as f64 / games.len() as f64
        },
        elo: elo_of_pairs(&penta),
        los: los_of_pairs(&penta),
        disc_margin: mean_interval(&margins),
    }
}

/// Number of pairs, mean score per game and the variance of a pair's
/// score per game (0, ¼, …, 1).
fn pair_moments(penta: &[u64; 5]) -> Option<(f64, f64, f64)> {
    let n = penta.iter().sum::<u64>() as f64;
    if n == 0.0 {
        return None;
    }
    let mean = penta
        .iter()
        .enumerate()
        .map(|(i, &c)| i as f64 / 4.0 * c as f64)
        .sum::<f64>()
        / n;
    let var = penta
        .iter()
        .enumerate()
        .map(|(i, &c)| (i as f64 / 4.0 - mean).powi(2) * c as f64)
        .sum::<f64>()
        / n;
    Some((n, mean, var))
}

fn elo_of_score(s: f64) -> f64 {
    -400.0 * (1.0 / s - 1.0).log10()
}

/// The logistic Elo of the pairs' mean score, with the 95 % interval
/// mapped from the score's (half the distance between the mapped ends).
pub fn elo_of_pairs(penta: &[u64; 5]) -> Option<Interval> {
    let (n, mean, var) = pair_moments(penta)?;
    if mean <= 0.0 || mean >= 1.0 {
        return None;
    }
    let half = Z95 * (var / n).sqrt();
    let (lo, hi) = (mean - half, mean + half);
    // One pair says nothing of the spread: no interval, not ± 0.
    let error =
        (n >= 2.0 && lo > 0.0 && hi < 1.0).then(|| (elo_of_score(hi) - elo_of_score(lo)) / 2.0);
    Some(Interval {
        mean: elo_of_score(mean),
        error,
    })
}

/// The likelihood of superiority: `Φ((μ − ½) / (σ / √N))` over pairs.
pub fn los_of_pairs(penta: &[u64; 5]) -> Option<f64> {
    let (n, mean, var) = pair_moments(penta)?;
    // One pair is no evidence of superiority either way.
    if n < 2.0 {
        return None;
    }
    let d = mean - 0.5;
    if var == 0.0 {
        return Some(if d > 0.0 {
            1.0
        } else if d < 0.0 {
            0.0
        } else {
            0.5
        });
    }
    let z = d / (var / n).sqrt();
    Some(0.5 * libm::erfc(-z / std::f64::consts::SQRT_2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::tests::game;
    use crate::record::Winner;

    /// Game `round` of a pairing, `a` black in odd rounds.
    fn g(round: u32, a: &str, b: &str, a_points: f64, discs: (u32, u32)) -> GameRecord {
        let black_is_a = round % 2 == 1;
        let (black, white) = if black_is_a { (a, b) } else { (b, a) };
        let result = if a_points == 0.5 {
            Winner::Draw
        } else if (a_points == 1.0) == black_is_a {
            Winner::Black
        } else {
            Winner::White
        };
        let discs = if black_is_a {
            discs
        } else {
            (discs.1, discs.0)
        };
        let mut r = game(black, white, result, discs);
        r.round = round;
        r
    }

    #[test]
    fn pentanomial_counts_complete_pairs_from_the_first_players_view() {
        let records = vec![
            // pair 1: a wins both → 2
            g(1, "a", "b", 1.0, (40, 24)),
            g(2, "a", "b", 1.0, (36, 28)),
            // pair 2: a wins one, draws one → 1½
            g(3, "a", "b", 1.0, (33, 31)),
            g(4, "a", "b", 0.5, (32, 32)),
            // pair 3: a loses one, wins one → 1
            g(5, "a", "b", 0.0, (20, 44)),
            g(6, "a", "b", 1.0, (40, 24)),
            // pair 4: a draws and loses → ½
            g(7, "a", "b", 0.5, (32, 32)),
            g(8, "a", "b", 0.0, (30, 34)),
            // pair 5: only one game so far → not counted
            g(9, "a", "b", 0.0, (0, 64)),
            // another pairing → ignored
            g(1, "a", "c", 1.0, (64, 0)),
            g(2, "a", "c", 1.0, (64, 0)),
        ];
        assert_eq!(pentanomial(&records, "a", "b"), [0, 1, 1, 1, 1]);
        assert_eq!(pentanomial(&records, "b", "a"), [1, 1, 1, 1, 0]);
        assert_eq!(pentanomial(&records, "a", "c"), [0, 0, 0, 0, 1]);
        assert_eq!(pentanomial(&records, "b", "c"), [0; 5]);

        let s = pairing_stats(&records, "a", "b");
        assert_eq!(s.games, 9);
        assert!((s.draw_ratio - 2.0 / 9.0).abs() < 1e-12);
        // Margins of a: 16, 8, 2, 0, −24, 16, 0, −4, −64.
        let m = s.disc_margin.unwrap();
        assert!((m.mean - (-50.0 / 9.0)).abs() < 1e-9, "{m:?}");
        assert!(m.error.unwrap() > 0.0);
        // Mean pair score per game: (2 + 1.5 + 1 + .5) / 4 / 2 = 0.625.
        let elo = s.elo.unwrap();
        assert!((elo.mean - elo_of_score(0.625)).abs() < 1e-9);
        assert!(s.los.unwrap() > 0.5 && s.los.unwrap() < 1.0);
    }

    #[test]
    fn swiss_rounds_keep_their_pairs_apart() {
        let mut one = g(1, "a", "b", 1.0, (40, 24));
        one.swiss_round = Some(1);
        let mut two = g(2, "a", "b", 0.0, (20, 44));
        two.swiss_round = Some(3);
        assert_eq!(pentanomial(&[one, two], "a", "b"), [0; 5]);
    }

    #[test]
    fn interval_of_known_samples() {
        let i = mean_interval(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(i.mean, 5.0);
        // Sample sd √(32/7); error 1.96·sd/√8.
        let expected = Z95 * (32.0f64 / 7.0).sqrt() / 8f64.sqrt();
        assert!((i.error.unwrap() - expected).abs() < 1e-12);
        assert_eq!(mean_interval(&[3.0]).unwrap().error, None);
        assert_eq!(mean_interval(&[64.0, 64.0]).unwrap().error, None);
        assert_eq!(mean_interval(&[]), None);
    }

    #[test]
    fn los_and_elo_edges() {
        assert_eq!(los_of_pairs(&[0; 5]), None);
        assert_eq!(los_of_pairs(&[0, 0, 0, 0, 3]), Some(1.0));
        assert_eq!(los_of_pairs(&[0, 0, 7, 0, 0]), Some(0.5));
        assert!((los_of_pairs(&[5, 0, 0, 0, 5]).unwrap() - 0.5).abs() < 1e-12);
        assert!(los_of_pairs(&[1, 2, 3, 10, 4]).unwrap() > 0.99);
        assert_eq!(elo_of_pairs(&[0, 0, 0, 0, 3]), None);
        let even = elo_of_pairs(&[1, 2, 3, 2, 1]).unwrap();
        assert!(even.mean.abs() < 1e-9 && even.error.unwrap() > 0.0);
    }

    /// Issue 30: one pair gives no interval and no LOS ("too few games"
    /// where the crosstable said `± 0.0` and `LOS 50.0 %`).
    #[test]
    fn one_pair_gives_no_interval_and_no_los() {
        let one = elo_of_pairs(&[0, 0, 1, 0, 0]).unwrap();
        assert_eq!((one.mean, one.error), (0.0, None));
        assert_eq!(los_of_pairs(&[0, 0, 1, 0, 0]), None);
        assert_eq!(los_of_pairs(&[0, 0, 0, 1, 0]), None);
        assert_eq!(
            crate::report::crosstable::interval(&Interval {
                mean: -0.0,
                error: None
            }),
            "+0.0 (too few games)"
        );
    }
}
