//! Swiss pairings: who meets whom in each round, from the results of the
//! rounds before.
//!
//! Owns the pairing rule: the bye (odd field) goes to the lowest-scored
//! player who has not had one; then the highest unpaired player meets,
//! within its score group, the player half a group below it (top half
//! against bottom half), or the nearest in score when its group is used
//! up; no pairing is ever played twice (backtracking finds another). The
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

/// Search steps before a pairing is given up (far above what a field of a
/// few dozen needs).
const MAX_STEPS: usize = 2_000_000;

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
    let mut steps = 0;
    if n.is_multiple_of(2) {
        let pairs = search(history, &order, &mut Vec::new(), &mut steps)?;
        return Some(RoundPairing { pairs, bye: None });
    }
    // The bye: lowest ranked first, among those without one.
    for &b in order.iter().rev().filter(|&&b| !history.had_bye(b)) {
        let rest: Vec<usize> = order.iter().copied().filter(|&x| x != b).collect();
        if let Some(pairs) = search(history, &rest, &mut Vec::new(), &mut steps) {
            return Some(RoundPairing {
                pairs,
                bye: Some(b),
            });
        }
    }
    None
}

/// Depth-first: the highest of `unpaired` (in ranking order) takes the
/// best opponent still possible.
fn search(
    h: &History,
    unpaired: &[usize],
    acc: &mut Vec<(usize, usize)>,
    steps: &mut usize,
) -> Option<Vec<(usize, usize)>> {
    let Some((&p, rest)) = unpaired.split_first() else {
        return Some(acc.clone());
    };
    *steps += 1;
    if *steps > MAX_STEPS {
        return None;
    }
    // P's score group among the unpaired: P is its top; the ideal
    // opponent sits half the group below.
    let group: Vec<usize> = unpaired
        .iter()
        .copied()
        .filter(|&x| h.score[x] == h.score[p])
        .collect();
    let ideal = group.len() / 2;
    let mut candidates: Vec<(usize, f64, usize)> = rest
        .iter()
        .enumerate()
        .filter(|&(_, &q)| !h.met(p, q))
        .map(|(pos, &q)| {
            let in_group = group.iter().position(|&x| x == q);
            let distance = match in_group {
                Some(i) => i.abs_diff(ideal),
                None => pos,
            };
            (q, (h.score[p] - h.score[q]).abs(), distance)
        })
        .collect();
    candidates.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)));
    for (q, ..) in candidates {
        let remaining: Vec<usize> = rest.iter().copied().filter(|&x| x != q).collect();
        acc.push((p, q));
        if let Some(found) = search(h, &remaining, acc, steps) {
            return Some(found);
        }
        acc.pop();
        if *steps > MAX_STEPS {
            return None;
        }
    }
    None
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
