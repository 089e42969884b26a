//! Swiss pairings: who meets whom in each round, from the results of the
//! rounds before.
//!
//! Owns the pairing rule: the bye (odd field) goes to the lowest-scored
//! player who has not had one; then, among all pairings without a
//! rematch, the one with the least sum of squared score differences, and
//! among those the one closest to "the highest unpaired player meets the
//! player half its score group below" (top half against bottom half). The
//! rule is deterministic, so replaying it over the recorded rounds gives
//! the same pairings again (resume). Pure: no I/O. Scoring is
//! `rating::swiss`.

use std::collections::{BTreeMap, HashSet};

use crate::rating::swiss::{match_points, Round, BYE_POINTS};

use super::ScheduledGame;

/// One round's pairings (indices into the players, higher-ranked first)
/// and its bye.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundPairing {
    pub pairs: Vec<(usize, usize)>,
    pub bye: Option<usize>,
}

/// What the rounds so far left: scores, who met whom, who had a bye.
#[derive(Clone, Debug)]
pub struct History {
    pub score: Vec<f64>,
    met: HashSet<(usize, usize)>,
    had_bye: Vec<bool>,
}

impl History {
    pub fn new(n: usize) -> History {
        History {
            score: vec![0.0; n],
            met: HashSet::new(),
            had_bye: vec![false; n],
        }
    }

    pub fn met(&self, a: usize, b: usize) -> bool {
        self.met.contains(&(a.min(b), a.max(b)))
    }

    pub fn had_bye(&self, a: usize) -> bool {
        self.had_bye[a]
    }

    /// Adds a round as paired and played: `played` is that round's record
    /// (missing pairings score nothing: the round is not finished).
    pub fn add(&mut self, names: &[String], pairing: &RoundPairing, played: Option<&Round>) {
        if let Some(b) = pairing.bye {
            self.had_bye[b] = true;
            self.score[b] += BYE_POINTS;
        }
        for &(a, b) in &pairing.pairs {
            self.met.insert((a.min(b), a.max(b)));
            let Some(round) = played else { continue };
            let (na, nb) = (&names[a], &names[b]);
            if let Some(p) = round
                .pairings
                .iter()
                .find(|p| (&p.0 == na && &p.1 == nb) || (&p.0 == nb && &p.1 == na))
            {
                let (pa, pb) = if &p.0 == na { (p.2, p.3) } else { (p.3, p.2) };
                self.score[a] += match_points(pa, pb);
                self.score[b] += match_points(pb, pa);
            }
        }
    }
}

/// Search steps before the best pairing found so far is taken (far above
/// what a field of a few dozen needs to find a good one).
const MAX_STEPS: usize = 200_000;

/// Pairs the next round, or `None` when no pairing without a rematch (and
/// without a second bye) exists.
pub fn pair_round(history: &History) -> Option<RoundPairing> {
    let n = history.score.len();
    // Ranking: score descending, then the order of the players' list.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| {
        history.score[b]
            .total_cmp(&history.score[a])
            .then(a.cmp(&b))
    });
    if n.is_multiple_of(2) {
        let pairs = best_pairing(history, &order)?;
        return Some(RoundPairing { pairs, bye: None });
    }
    // The bye: lowest ranked first, among those without one.
    for &b in order.iter().rev().filter(|&&b| !history.had_bye(b)) {
        let rest: Vec<usize> = order.iter().copied().filter(|&x| x != b).collect();
        if let Some(pairs) = best_pairing(history, &rest) {
            return Some(RoundPairing {
                pairs,
                bye: Some(b),
            });
        }
    }
    None
}

/// The cost of a pairing: squared score differences (in half points)
/// dominate; then how far each opponent sits from the ideal one (half a
/// score group below).
struct Search<'a> {
    h: &'a History,
    steps: usize,
    best: Option<(u64, Vec<(usize, usize)>)>,
}

/// The pairing of `ranked` (in ranking order) of least cost, found by
/// depth-first branch and bound, the most natural choices first.
fn best_pairing(h: &History, ranked: &[usize]) -> Option<Vec<(usize, usize)>> {
    let mut search = Search {
        h,
        steps: 0,
        best: None,
    };
    search.run(ranked, &mut Vec::new(), 0);
    search.best.map(|(_, pairs)| pairs)
}

impl Search<'_> {
    fn run(&mut self, unpaired: &[usize], acc: &mut Vec<(usize, usize)>, cost: u64) {
        if self.best.as_ref().is_some_and(|(b, _)| cost >= *b) {
            return;
        }
        let Some((&p, rest)) = unpaired.split_first() else {
            self.best = Some((cost, acc.clone()));
            return;
        };
        self.steps += 1;
        if self.steps > MAX_STEPS && self.best.is_some() {
            return;
        }
        let h = self.h;
        // P's score group among the unpaired: P is its top; the ideal
        // opponent sits half the group below.
        let group: Vec<usize> = unpaired
            .iter()
            .copied()
            .filter(|&x| h.score[x] == h.score[p])
            .collect();
        let ideal = group.len() / 2;
        let mut candidates: Vec<(usize, u64)> = rest
            .iter()
            .enumerate()
            .filter(|&(_, &q)| !h.met(p, q))
            .map(|(pos, &q)| {
                let halves = ((h.score[p] - h.score[q]).abs() * 2.0).round() as u64;
                let distance = match group.iter().position(|&x| x == q) {
                    Some(i) => i.abs_diff(ideal),
                    None => pos,
                } as u64;
                (q, halves * halves * 1000 + distance)
            })
            .collect();
        candidates.sort_by_key(|c| c.1);
        for (q, c) in candidates {
            let remaining: Vec<usize> = rest.iter().copied().filter(|&x| x != q).collect();
            acc.push((p, q));
            self.run(&remaining, acc, cost + c);
            acc.pop();
            if self.steps > MAX_STEPS && self.best.is_some() {
                return;
            }
        }
    }
}

/// The games of Swiss round `round`: one colour-swapped pair per pairing,
/// ids `s<round>.<black>.<white>`, `round` 1 and 2 within the pair.
pub fn round_games(
    names: &[String],
    pairing: &RoundPairing,
    round: u32,
    opening: &str,
) -> Vec<ScheduledGame> {
    let mut out = Vec::new();
    for g in 0..2u32 {
        for (p, &(a, b)) in pairing.pairs.iter().enumerate() {
            let flip = (g % 2 == 1) ^ (p % 2 == 1);
            let (black, white) = if flip { (b, a) } else { (a, b) };
            out.push(ScheduledGame {
                id: format!("s{round:02}.{}.{}", names[black], names[white]),
                round: g + 1,
                black: names[black].clone(),
                white: names[white].clone(),
                opening: opening.to_string(),
            });
        }
    }
    out
}

/// Replays the pairing rule over the recorded rounds: the pairings of
/// rounds 1..=`upto` (each from the results before it), or an error
/// naming the round that cannot be paired.
pub fn replay(
    names: &[String],
    played: &BTreeMap<u32, Round>,
    upto: u32,
) -> Result<Vec<RoundPairing>, String> {
    let mut h = History::new(names.len());
    let mut out = Vec::new();
    for r in 1..=upto {
        let pairing = pair_round(&h).ok_or_else(|| {
            format!("Swiss round {r} cannot be paired without a rematch or a second bye")
        })?;
        h.add(names, &pairing, played.get(&r));
        out.push(pairing);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plays `rounds` rounds where the lower index always wins.
    fn simulate(n: usize, rounds: u32) -> Vec<RoundPairing> {
        let mut h = History::new(n);
        let mut out = Vec::new();
        let names: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
        for _ in 0..rounds {
            let p = pair_round(&h).expect("pairable");
            let mut round = Round::default();
            for &(a, b) in &p.pairs {
                let (x, y) = (a.min(b), a.max(b));
                round
                    .pairings
                    .push((names[x].clone(), names[y].clone(), 2.0, 0.0, 2));
            }
            h.add(&names, &p, Some(&round));
            out.push(p);
        }
        out
    }

    #[test]
    fn nine_players_five_rounds() {
        let rounds = simulate(9, 5);
        let mut met = HashSet::new();
        let mut byes = HashSet::new();
        for r in &rounds {
            assert_eq!(r.pairs.len(), 4);
            let bye = r.bye.expect("odd field");
            assert!(byes.insert(bye), "second bye for {bye}");
            let mut seen = HashSet::from([bye]);
            for &(a, b) in &r.pairs {
                assert!(met.insert((a.min(b), a.max(b))), "rematch {a}-{b}");
                assert!(seen.insert(a) && seen.insert(b));
            }
            assert_eq!(seen.len(), 9);
        }
        // Round 1, everyone on 0, list order: bye to the last, then top
        // half against bottom half.
        assert_eq!(rounds[0].bye, Some(8));
        assert_eq!(rounds[0].pairs, vec![(0, 4), (1, 5), (2, 6), (3, 7)]);
        // Round 2: winners (0..3) among themselves, top half vs bottom.
        assert!(rounds[1].pairs.contains(&(0, 2)));
        assert!(rounds[1].pairs.contains(&(1, 3)));
    }

    #[test]
    fn even_field_has_no_bye_and_all_rounds_pair() {
        let rounds = simulate(6, 5);
        let mut met = HashSet::new();
        for r in &rounds {
            assert_eq!(r.bye, None);
            for &(a, b) in &r.pairs {
                assert!(met.insert((a.min(b), a.max(b))));
            }
        }
        assert_eq!(met.len(), 15, "5 rounds of 6 players: everyone met");
    }

    #[test]
    fn games_swap_colours_and_replay_is_deterministic() {
        let names: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        let p = RoundPairing {
            pairs: vec![(0, 2), (1, 3)],
            bye: None,
        };
        let games = round_games(&names, &p, 3, "f5");
        let ids: Vec<&str> = games.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["s03.a.c", "s03.d.b", "s03.c.a", "s03.b.d"]);
        assert!(games.iter().all(|g| g.opening == "f5"));
        let a = replay(&names, &BTreeMap::new(), 3).unwrap();
        assert_eq!(a, replay(&names, &BTreeMap::new(), 3).unwrap());
        assert!(replay(&names, &BTreeMap::new(), 4).is_err());
    }
}
