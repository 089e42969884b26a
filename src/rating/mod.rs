//! Crosstable and Elo ratings, computed from finished game records.
//!
//! Owns the standings (points, W-D-L, discs, forfeits, colours), the ranking
//! rule, the score matrix and the joint Elo fit. Pure over `&[GameRecord]`:
//! no I/O, no printing, no formatting (the formats live in
//! `report::crosstable`).

pub mod elo;
pub mod pairstats;
pub mod sprt;
mod standings;
pub mod swiss;

use crate::record::GameRecord;

/// One player's line in the crosstable.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    /// 1-based; players equal in points, Elo and disc difference share a
    /// rank (1, 1, 3).
    pub rank: usize,
    pub player: String,
    pub games: u32,
    /// Win 1, draw ½, loss 0.
    pub points: f64,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    /// Sum over the player's games of own minus opponent's discs, counted
    /// with the empties given to the winner (`discs_wof`).
    pub disc_diff: i64,
    /// Games this player lost other than by a normal end (a forfeit).
    pub forfeits: u32,
    /// Elo from the joint fit, averaging 0 over all players.
    pub elo: f64,
    /// Half-width of the 95 % interval; `f64::INFINITY` when undetermined
    /// (no games).
    pub elo_error: f64,
    /// (points, games) with black.
    pub score_as_black: (f64, u32),
    /// (points, games) with white.
    pub score_as_white: (f64, u32),
    /// Average own discs per game (`discs_wof`); 0 with no games.
    pub avg_discs: f64,
    /// Mean disc margin per game (own minus opponent's, `discs_wof`) with
    /// its 95 % interval; `None` with no games.
    pub disc_margin: Option<pairstats::Interval>,
    /// Swiss score and tie-breaks (Swiss events only).
    pub swiss: Option<swiss::SwissScore>,
}

/// The SPRT of a two-player event, evaluated on its games.
#[derive(Clone, Debug, PartialEq)]
pub struct SprtStatus {
    pub test: sprt::Sprt,
    pub llr: f64,
    pub decision: sprt::Decision,
    /// The games recorded when a run decided the test (its kept
    /// [`sprt::Verdict`]); `None` while it continues.
    pub decided_after: Option<usize>,
}

/// Standings and the score matrix of a set of games.
#[derive(Clone, Debug, PartialEq)]
pub struct Crosstable {
    /// Sorted by rank (ties by name).
    pub standings: Vec<Standing>,
    /// `matrix[i][j]`: (points of `standings[i]` against `standings[j]`,
    /// games); `None` if they never met or `i == j`.
    pub matrix: Vec<Vec<Option<(f64, u32)>>>,
    /// Games counted (records of a player against itself are skipped).
    pub games: usize,
    /// Head-to-head statistics of every pairing that met, the first
    /// player being the one listed first (in `players`, else in the
    /// records).
    pub pairings: Vec<pairstats::PairingStats>,
    /// Pairs in which the first listed player scored 0, ½, 1, 1½, 2; for
    /// a two-player event only.
    pub pentanomial: Option<[u64; 5]>,
    /// Set by [`Crosstable::with_sprt`].
    pub sprt: Option<SprtStatus>,
    /// Players who played as people in some record (marked when shown).
    pub people: std::collections::BTreeSet<String>,
}

impl SprtStatus {
    /// `test` evaluated on the pentanomial count `penta`.
    pub fn new(test: sprt::Sprt, penta: &[u64; 5]) -> SprtStatus {
        let llr = test.llr(penta);
        SprtStatus {
            test,
            llr,
            decision: test.decide(llr),
            decided_after: None,
        }
    }

    /// `test` as a run decided it: over the pairs its verdict counted.
    pub fn decided(test: sprt::Sprt, verdict: &sprt::Verdict) -> SprtStatus {
        SprtStatus {
            decided_after: Some(verdict.games),
            ..SprtStatus::new(test, &verdict.pentanomial)
        }
    }

    /// The test's state in one short line, as a run's progress and the
    /// live page show it: `LLR 1.23 (-2.94, 2.94) [0, 50]`.
    pub fn progress_note(&self) -> String {
        let t = &self.test;
        let mut note = format!(
            "LLR {:.2} ({:.2}, {:.2}) [{}, {}]",
            self.llr,
            t.lower(),
            t.upper(),
            t.elo0,
            t.elo1
        );
        if let Some(r) = &t.repeated_openings {
            note.push_str(&format!(" · {}", r.caveat()));
        }
        note
    }
}

impl Crosstable {
    /// Adds the result of `test`: the verdict a run kept, if it decided
    /// it, else the test over the first listed pair's pentanomial.
    pub fn with_sprt(mut self, test: sprt::Sprt, kept: Option<&sprt::Verdict>) -> Crosstable {
        let penta = self.pentanomial.unwrap_or([0; 5]);
        self.sprt = Some(match kept {
            Some(v) => SprtStatus::decided(test, v),
            None => SprtStatus::new(test, &penta),
        });
        self
    }
}

/// The crosstable of `records`. `players` are shown even without games
/// (order irrelevant, duplicates ignored); players named in the records are
/// added to them, so `players` may be empty.
pub fn crosstable(records: &[GameRecord], players: &[String]) -> Crosstable {
    let t = standings::tally(records, players);
    let ratings = elo::fit(&t.pairs);
    let n = t.names.len();
    let swiss_scores = swiss::scores(records, &t.names);
    let swiss_of = |i: usize| swiss_scores.as_ref().map(|s| s[&t.names[i]].clone());

    let keys: Vec<standings::RankKey> = (0..n)
        .map(|i| standings::RankKey {
            points: t.tallies[i].points,
            elo: ratings.elo[i],
            disc_diff: t.tallies[i].disc_diff,
            name: &t.names[i],
            swiss: swiss_of(i).map_or([0.0; 3], |s| [s.score, s.buchholz, s.sonneborn_berger]),
        })
        .collect();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| keys[a].cmp(&keys[b]));
    let sorted_keys: Vec<standings::RankKey> = order.iter().map(|&i| keys[i]).collect();
    let ranks = standings::ranks(&sorted_keys);

    let standings = order
        .iter()
        .zip(ranks)
        .map(|(&i, rank)| {
            let s = &t.tallies[i];
            Standing {
                rank,
                player: t.names[i].clone(),
                games: s.games,
                points: s.points,
                wins: s.wins,
                draws: s.draws,
                losses: s.losses,
                disc_diff: s.disc_diff,
                forfeits: s.forfeits,
                elo: ratings.elo[i],
                elo_error: ratings.error[i],
                score_as_black: s.as_black,
                score_as_white: s.as_white,
                avg_discs: if s.games == 0 {
                    0.0
                } else {
                    s.discs as f64 / f64::from(s.games)
                },
                disc_margin: pairstats::mean_interval(
                    &records
                        .iter()
                        .filter(|r| r.black != r.white)
                        .filter_map(|r| pairstats::disc_margin(r, &t.names[i]))
                        .collect::<Vec<f64>>(),
                ),
                swiss: swiss_of(i),
            }
        })
        .collect();
    let matrix = order
        .iter()
        .map(|&i| {
            order
                .iter()
                .map(|&j| {
                    let g = t.pairs.games(i, j);
                    (i != j && g > 0.0).then(|| (t.pairs.points(i, j), g as u32))
                })
                .collect()
        })
        .collect();
    let mut pairings = Vec::new();
    for i in 0..n {
        for j in (i + 1)..n {
            if t.pairs.games(i, j) > 0.0 {
                pairings.push(pairstats::pairing_stats(records, &t.names[i], &t.names[j]));
            }
        }
    }
    let pentanomial = (n == 2).then(|| pairstats::pentanomial(records, &t.names[0], &t.names[1]));
    Crosstable {
        standings,
        matrix,
        games: t.games,
        pairings,
        pentanomial,
        sprt: None,
        people: records.iter().flat_map(|r| r.people.clone()).collect(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::record::{DiscCount, EndReason, Forfeit, Winner};
    use proptest::prelude::*;

    /// A record of `black` against `white`; discs_wof as given.
    pub(crate) fn game(black: &str, white: &str, result: Winner, discs: (u32, u32)) -> GameRecord {
        GameRecord {
            id: format!("{black}-{white}"),
            round: 1,
            black: black.to_string(),
            white: white.to_string(),
            size: 8,
            opening: String::new(),
            moves: Vec::new(),
            result,
            reason: EndReason::Normal,
            forfeit: None,
            discs: DiscCount {
                black: discs.0,
                white: discs.1,
            },
            discs_wof: DiscCount {
                black: discs.0,
                white: discs.1,
            },
            transcript: String::new(),
            started: String::new(),
            finished: String::new(),
            time_ms: DiscCount { black: 0, white: 0 },
            swiss_round: None,
            people: Vec::new(),
        }
    }

    fn forfeit(black: &str, white: &str, loser: &str) -> GameRecord {
        let (result, discs, color) = if loser == black {
            (Winner::White, (0, 64), crate::game::Color::Black)
        } else {
            (Winner::Black, (64, 0), crate::game::Color::White)
        };
        GameRecord {
            reason: EndReason::Timeout,
            forfeit: Some(Forfeit {
                color,
                detail: "ran out of time".to_string(),
                exit: None,
                stderr_tail: Vec::new(),
            }),
            ..game(black, white, result, discs)
        }
    }

    fn find<'a>(t: &'a Crosstable, name: &str) -> (usize, &'a Standing) {
        t.standings
            .iter()
            .enumerate()
            .find(|(_, s)| s.player == name)
            .unwrap_or_else(|| panic!("{name} missing"))
    }

    /// Checks the invariants every crosstable must satisfy.
    pub(crate) fn check_consistent(t: &Crosstable) {
        let n = t.standings.len();
        assert_eq!(t.matrix.len(), n);
        let total_points: f64 = t.standings.iter().map(|s| s.points).sum();
        assert!((total_points - t.games as f64).abs() < 1e-9);
        let player_games: u32 = t.standings.iter().map(|s| s.games).sum();
        assert_eq!(player_games as usize, 2 * t.games);
        let mut matrix_games = 0;
        for (i, row) in t.matrix.iter().enumerate() {
            assert_eq!(row.len(), n);
            assert!(row[i].is_none());
            let s = &t.standings[i];
            let (mut pts, mut games) = (0.0, 0);
            for (j, cell) in row.iter().enumerate() {
                if let Some((p, g)) = *cell {
                    let (q, h) = t.matrix[j][i].expect("symmetric");
                    assert_eq!(g, h);
                    assert!((p + q - f64::from(g)).abs() < 1e-9);
                    pts += p;
                    games += g;
                }
            }
            matrix_games += games;
            assert_eq!(games, s.games);
            assert!((pts - s.points).abs() < 1e-9);
            assert_eq!(s.wins + s.draws + s.losses, s.games);
            assert!((f64::from(s.wins) + 0.5 * f64::from(s.draws) - s.points).abs() < 1e-9);
            assert_eq!(s.score_as_black.1 + s.score_as_white.1, s.games);
            assert!((s.score_as_black.0 + s.score_as_white.0 - s.points).abs() < 1e-9);
            assert!(s.elo.is_finite());
        }
        assert_eq!(matrix_games as usize, 2 * t.games);
        let disc_sum: i64 = t.standings.iter().map(|s| s.disc_diff).sum();
        assert_eq!(disc_sum, 0);
        if n > 0 {
            let mean = t.standings.iter().map(|s| s.elo).sum::<f64>() / n as f64;
            assert!(mean.abs() < 1e-6, "mean Elo {mean}");
        }
        for w in t.standings.windows(2) {
            assert!(w[0].rank <= w[1].rank);
            assert!(w[0].points >= w[1].points);
        }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn small_round_robin() {
        use Winner::*;
        let records = vec![
            game("a", "b", Black, (40, 24)),
            game("b", "a", Draw, (32, 32)),
            game("a", "c", Black, (50, 14)),
            game("c", "a", White, (20, 44)),
            game("b", "c", Black, (33, 31)),
            game("c", "b", Black, (35, 29)),
        ];
        let t = crosstable(&records, &[]);
        check_consistent(&t);
        assert_eq!(t.games, 6);
        let order: Vec<&str> = t.standings.iter().map(|s| s.player.as_str()).collect();
        assert_eq!(order, ["a", "b", "c"]);
        let ranks: Vec<usize> = t.standings.iter().map(|s| s.rank).collect();
        assert_eq!(ranks, [1, 2, 3]);
        let a = &t.standings[0];
        assert_eq!((a.games, a.wins, a.draws, a.losses), (4, 3, 1, 0));
        assert_eq!(a.points, 3.5);
        assert_eq!(a.disc_diff, 76); // +16, 0, +36, +24
        assert_eq!(a.score_as_black, (2.0, 2));
        assert_eq!(a.score_as_white, (1.5, 2));
        assert_eq!(a.avg_discs, (40.0 + 32.0 + 50.0 + 44.0) / 4.0);
        assert_eq!(t.matrix[0][1], Some((1.5, 2)));
        assert_eq!(t.matrix[1][0], Some((0.5, 2)));
        assert_eq!(t.matrix[1][2], Some((1.0, 2)));
        assert_eq!(t.matrix[0][0], None);
        assert!(t.standings[0].elo > t.standings[1].elo);
        assert!(t.standings[1].elo > t.standings[2].elo);
    }

    #[test]
    fn two_players_at_75_percent() {
        let mut records = Vec::new();
        for k in 0..400 {
            let (b, w) = if k % 2 == 0 { ("a", "b") } else { ("b", "a") };
            let a_wins = k % 4 != 3; // 300 wins, 100 losses
            let result = match (a_wins, b == "a") {
                (true, true) | (false, false) => Winner::Black,
                _ => Winner::White,
            };
            records.push(game(b, w, result, (33, 31)));
        }
        let t = crosstable(&records, &[]);
        check_consistent(&t);
        let (_, a) = find(&t, "a");
        let (_, b) = find(&t, "b");
        assert_eq!((a.wins, a.losses), (300, 100));
        let diff = a.elo - b.elo;
        assert!((diff - 190.85).abs() < 2.0, "{diff}");
        assert!((a.elo - 95.4).abs() < 1.0, "{}", a.elo);
        assert!(a.elo_error.is_finite() && a.elo_error > 0.0);
    }

    #[test]
    fn symmetric_results_rate_zero_and_tie() {
        let records = vec![
            game("x", "y", Winner::Black, (40, 24)),
            game("y", "x", Winner::Black, (40, 24)),
        ];
        let t = crosstable(&records, &[]);
        check_consistent(&t);
        for s in &t.standings {
            assert!(s.elo.abs() < 1e-9);
            assert_eq!(s.rank, 1);
        }
        // Ties are listed by name.
        assert_eq!(t.standings[0].player, "x");
    }

    #[test]
    fn perfect_score_stays_finite() {
        let records: Vec<GameRecord> = (0..10)
            .map(|_| game("champ", "chump", Winner::Black, (64, 0)))
            .collect();
        let t = crosstable(&records, &[]);
        check_consistent(&t);
        let (_, c) = find(&t, "champ");
        assert_eq!(c.points, 10.0);
        assert!(c.elo.is_finite() && c.elo > 200.0, "{}", c.elo);
        assert!(c.elo_error.is_finite());
    }

    #[test]
    fn idle_players_and_empty_input() {
        let t = crosstable(&[], &[]);
        assert!(t.standings.is_empty() && t.matrix.is_empty() && t.games == 0);

        let t = crosstable(&[], &names(&["solo"]));
        check_consistent(&t);
        assert_eq!(t.standings[0].elo, 0.0);
        assert!(t.standings[0].elo_error.is_infinite());
        assert_eq!(t.matrix, vec![vec![None]]);

        let records = vec![game("a", "b", Winner::Black, (40, 24))];
        let t = crosstable(&records, &names(&["z", "b", "z", "idle"]));
        check_consistent(&t);
        let order: Vec<&str> = t.standings.iter().map(|s| s.player.as_str()).collect();
        // a: 1 point; idle, z: 0 points, Elo 0, disc 0 → tied, by name; b:
        // 0 points with a negative Elo.
        assert_eq!(order, ["a", "idle", "z", "b"]);
        let ranks: Vec<usize> = t.standings.iter().map(|s| s.rank).collect();
        assert_eq!(ranks, [1, 2, 2, 4]);
        assert!(find(&t, "idle").1.elo_error.is_infinite());
        assert_eq!(find(&t, "idle").1.avg_discs, 0.0);
    }

    #[test]
    fn forfeits_and_self_play() {
        let records = vec![
            forfeit("a", "b", "a"),
            forfeit("a", "b", "b"),
            forfeit("b", "a", "b"),
            game("a", "a", Winner::Black, (40, 24)),
        ];
        let t = crosstable(&records, &[]);
        check_consistent(&t);
        assert_eq!(t.games, 3);
        let (_, a) = find(&t, "a");
        let (_, b) = find(&t, "b");
        assert_eq!((a.forfeits, b.forfeits), (1, 2));
        assert_eq!(a.disc_diff, 64); // -64, +64, +64
        assert_eq!(b.disc_diff, -64);
    }

    #[test]
    fn disconnected_groups() {
        let mut records = Vec::new();
        for _ in 0..5 {
            records.push(game("a", "b", Winner::Black, (40, 24)));
            records.push(game("c", "d", Winner::Black, (40, 24)));
        }
        let t = crosstable(&records, &[]);
        check_consistent(&t);
        assert_eq!(t.matrix[0][1], None); // a and c never met
        assert!(t.standings.iter().all(|s| s.elo_error.is_finite()));
    }

    #[test]
    fn intervals_shrink_as_games_grow() {
        let error = |reps: usize| {
            let mut records = Vec::new();
            for _ in 0..reps {
                records.push(game("a", "b", Winner::Black, (40, 24)));
                records.push(game("b", "a", Winner::Draw, (32, 32)));
                records.push(game("a", "c", Winner::White, (30, 34)));
                records.push(game("c", "b", Winner::Black, (40, 24)));
            }
            let t = crosstable(&records, &[]);
            find(&t, "a").1.elo_error
        };
        let e: Vec<f64> = [1, 10, 100, 1000].into_iter().map(error).collect();
        assert!(e.windows(2).all(|w| w[1] < w[0]), "{e:?}");
    }

    /// Synthetic games among `players` bots of increasing strength.
    pub(crate) fn synthetic(games: usize, players: usize, seed: u64) -> Vec<GameRecord> {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as f64 / (1u64 << 31) as f64
        };
        let names: Vec<String> = (0..players).map(|i| format!("bot{i:02}")).collect();
        (0..games)
            .map(|_| {
                let b = (next() * players as f64) as usize % players;
                let w =
                    (b + 1 + (next() * (players - 1) as f64) as usize % (players - 1)) % players;
                let p = 1.0 / (1.0 + 10f64.powf((w as f64 - b as f64) * 10.0 / 400.0));
                let u = next();
                let result = if u < p - 0.05 {
                    Winner::Black
                } else if u < p + 0.05 {
                    Winner::Draw
                } else {
                    Winner::White
                };
                let discs = match result {
                    Winner::Black => (40, 24),
                    Winner::White => (24, 40),
                    Winner::Draw => (32, 32),
                };
                game(&names[b], &names[w], result, discs)
            })
            .collect()
    }

    #[test]
    fn synthetic_field_is_consistent_and_ordered() {
        let records = synthetic(20_000, 8, 7);
        let t = crosstable(&records, &[]);
        check_consistent(&t);
        // True gaps are 10 Elo; with 20,000 games the order is recovered.
        let order: Vec<&str> = t.standings.iter().map(|s| s.player.as_str()).collect();
        let mut expected: Vec<String> = (0..8).map(|i| format!("bot{i:02}")).collect();
        expected.reverse();
        assert_eq!(order, expected);
        let (_, top) = find(&t, "bot07");
        assert!((top.elo - 35.0).abs() < 15.0, "{}", top.elo);
    }

    proptest! {
        #[test]
        fn points_equal_games_and_elo_averages_zero(
            games in prop::collection::vec((0usize..5, 0usize..5, 0u8..3), 0..60),
            extra in prop::collection::vec(0usize..7, 0..4),
        ) {
            let names = ["p0", "p1", "p2", "p3", "p4", "p5", "p6"];
            let records: Vec<GameRecord> = games
                .iter()
                .map(|&(b, w, r)| {
                    let result = [Winner::Black, Winner::White, Winner::Draw][r as usize];
                    let discs = [(40, 24), (24, 40), (32, 32)][r as usize];
                    game(names[b], names[w], result, discs)
                })
                .collect();
            let players: Vec<String> = extra.iter().map(|&i| names[i].to_string()).collect();
            let t = crosstable(&records, &players);
            let counted = games.iter().filter(|(b, w, _)| b != w).count();
            prop_assert_eq!(t.games, counted);
            let total: f64 = t.standings.iter().map(|s| s.points).sum();
            prop_assert!((total - counted as f64).abs() < 1e-9);
            if !t.standings.is_empty() {
                let mean = t.standings.iter().map(|s| s.elo).sum::<f64>()
                    / t.standings.len() as f64;
                prop_assert!(mean.abs() < 1e-6);
            }
            check_consistent(&t);
        }
    }
}
