//! Swiss pairings: who meets whom in each round, from the results of the
//! rounds before.
//!
//! Owns the pairing rule. The bye (odd field) goes first, to the
//! lowest-ranked player who has not had one and without whom the others
//! can all be paired without a rematch. The others are then paired by a
//! minimum-cost perfect matching over the allowed pairs (no rematch),
//! solved exactly for any field size by `schedule::matching` (Edmonds'
//! blossom algorithm, a port of van Rantwijk's `mwmatching`). A pair's
//! cost is two numbers compared in order, packed into one integer weight
//! (`primary × M + secondary`, `M` larger than any pairing's total
//! secondary cost):
//!
//! - primary: the squared difference of the two scores, in half points;
//! - secondary, "top half of a score group against bottom half": with
//!   the players to pair ranked 0, 1, … (score descending, then the order
//!   of the players' list) and a score group of `g` of them, two players of
//!   the same group `d` places apart cost `|d − ⌊g/2⌋|`; two players of
//!   different groups cost `d − 1` (a floater meets the nearest player of
//!   the next group).
//!
//! So the pairing has the least sum of squared score differences, and
//! among those the least secondary sum; pairings equal in both go to the
//! one the matching finds (the same for the same input). To stay fast for
//! thousands of players the matching is solved on a few likely partners
//! per player, then every other allowed pair is priced against the
//! optimal duals; any pair that could improve the pairing is added and
//! the matching solved again, until none can: the result is optimal over
//! all allowed pairs. No perfect matching without a rematch (and no bye
//! candidate that leaves one): the round is not paired
//! (`Unpairable::Rematch`), and the run stops with that error.
//!
//! Each round is paired from the records of the rounds before it (who met
//! whom, the results, the byes: whoever has no game in a round); the same
//! records give the same pairings again, which is how a stopped run
//! resumes mid-round. Pure: no I/O. Scoring is `rating::swiss`.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::rating::swiss::{match_points, Round, BYE_POINTS};

use super::matching::max_weight_matching;
use super::ScheduledGame;

/// One round's pairings (indices into the players, higher-ranked first,
/// pairs in ranking order of their first player) and its bye.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundPairing {
    pub pairs: Vec<(usize, usize)>,
    pub bye: Option<usize>,
}

/// Why a round cannot be paired.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Unpairable {
    #[error("Swiss round {0} cannot be paired without a rematch or a second bye")]
    Rematch(u32),
    #[error(
        "Swiss round {0}: a field of {1} players is too large to weigh its pairings in 64 bits"
    )]
    TooLarge(u32, usize),
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

    /// The history the records of rounds `1..before` leave: each recorded
    /// pairing met and scored; a player with no game in a round that has
    /// games had the bye (as `rating::swiss` scores it). Players not in
    /// `names` are left out.
    pub fn from_rounds(names: &[String], played: &BTreeMap<u32, Round>, before: u32) -> History {
        let index: HashMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.as_str(), i))
            .collect();
        let mut h = History::new(names.len());
        for (_, round) in played.range(1..before) {
            let mut present = vec![false; names.len()];
            for (a, b, pa, pb, _) in &round.pairings {
                let (Some(&a), Some(&b)) = (index.get(a.as_str()), index.get(b.as_str())) else {
                    continue;
                };
                present[a] = true;
                present[b] = true;
                h.add_result(a, b, *pa, *pb);
            }
            for (p, _) in present.iter().enumerate().filter(|(_, &here)| !here) {
                h.add_bye(p);
            }
        }
        h
    }

    /// `a` and `b` met; they scored `pa` and `pb` game points.
    pub fn add_result(&mut self, a: usize, b: usize, pa: f64, pb: f64) {
        self.met.insert((a.min(b), a.max(b)));
        self.score[a] += match_points(pa, pb);
        self.score[b] += match_points(pb, pa);
    }

    /// `a` had a bye.
    pub fn add_bye(&mut self, a: usize) {
        self.had_bye[a] = true;
        self.score[a] += BYE_POINTS;
    }

    pub fn met(&self, a: usize, b: usize) -> bool {
        self.met.contains(&(a.min(b), a.max(b)))
    }

    pub fn had_bye(&self, a: usize) -> bool {
        self.had_bye[a]
    }

    /// The players by rank: score descending, then the players' list.
    pub fn ranking(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.score.len()).collect();
        order.sort_by(|&a, &b| self.score[b].total_cmp(&self.score[a]).then(a.cmp(&b)));
        order
    }
}

/// Pairs round `round` from the records of the rounds before it.
pub fn pair_next(
    names: &[String],
    played: &BTreeMap<u32, Round>,
    round: u32,
) -> Result<RoundPairing, Unpairable> {
    pair_round(&History::from_rounds(names, played, round), round)
}

/// Pairs round `round` (for its error) after `history`.
pub fn pair_round(history: &History, round: u32) -> Result<RoundPairing, Unpairable> {
    let order = history.ranking();
    let n = order.len();
    if n.is_multiple_of(2) {
        return match best_pairing(history, &order, round)? {
            Some(pairs) => Ok(RoundPairing { pairs, bye: None }),
            None => Err(Unpairable::Rematch(round)),
        };
    }
    // The bye: lowest ranked first, among those without one.
    for &b in order.iter().rev().filter(|&&b| !history.had_bye(b)) {
        let rest: Vec<usize> = order.iter().copied().filter(|&x| x != b).collect();
        if let Some(pairs) = best_pairing(history, &rest, round)? {
            return Ok(RoundPairing {
                pairs,
                bye: Some(b),
            });
        }
    }
    Err(Unpairable::Rematch(round))
}

/// Likely partners per player and direction in the first matching.
const CANDIDATES: usize = 5;

/// The players to pair, in ranking order, with what their costs need.
struct Field<'a> {
    h: &'a History,
    ranked: &'a [usize],
    /// Score in half points, by rank.
    halves: Vec<i64>,
    /// First rank and size of each rank's score group.
    group: Vec<(usize, usize)>,
    /// Weight of the primary cost over the secondary.
    primary_unit: i64,
    /// Added to every weight so that a larger matching always weighs more.
    lift: i64,
}

impl<'a> Field<'a> {
    fn new(h: &'a History, ranked: &'a [usize]) -> Option<Field<'a>> {
        let m = ranked.len();
        let halves: Vec<i64> = ranked
            .iter()
            .map(|&p| (h.score[p] * 2.0).round() as i64)
            .collect();
        let mut group = Vec::with_capacity(m);
        let mut start = 0;
        while start < m {
            let end = (start..m)
                .find(|&r| halves[r] != halves[start])
                .unwrap_or(m);
            group.extend(std::iter::repeat_n((start, end - start), end - start));
            start = end;
        }
        let m64 = m as i64;
        // A pair's secondary cost is below m: a pairing's, below m²/2.
        let primary_unit = (m64 / 2 + 1).checked_mul(m64)?;
        let spread = halves.first().copied().unwrap_or(0) - halves.last().copied().unwrap_or(0);
        let most = primary_unit
            .checked_mul(spread.checked_mul(spread)?)?
            .checked_add(m64)?;
        // k + 1 pairs outweigh k: (k + 1)(lift − most) > k·lift.
        let lift = (m64 / 2 + 1).checked_mul(most)?.checked_add(1)?;
        // The matching's duals reach a few times the largest weight.
        lift.checked_mul(64)?;
        Some(Field {
            h,
            ranked,
            halves,
            group,
            primary_unit,
            lift,
        })
    }

    fn allowed(&self, i: usize, j: usize) -> bool {
        !self.h.met(self.ranked[i], self.ranked[j])
    }

    /// The cost of pairing ranks `i < j`: (primary, secondary).
    fn cost(&self, i: usize, j: usize) -> (i64, i64) {
        let diff = self.halves[i] - self.halves[j];
        let d = (j - i) as i64;
        let secondary = if diff == 0 {
            (d - (self.group[i].1 / 2) as i64).abs()
        } else {
            d - 1
        };
        (diff * diff, secondary)
    }

    fn weight(&self, i: usize, j: usize) -> i64 {
        let (p, s) = self.cost(i, j);
        self.lift - (p * self.primary_unit + s)
    }

    /// The first matching's edges: for each rank, the best-placed allowed
    /// partners in its own score group and the nearest ones in the groups
    /// above and below.
    fn candidates(&self) -> Vec<(usize, usize)> {
        let m = self.ranked.len();
        let mut out = Vec::new();
        for r in 0..m {
            let (start, len) = self.group[r];
            let half = len / 2;
            let mut found = 0;
            for delta in 0..len {
                let tries = [
                    r.checked_add(half + delta),
                    (r + half).checked_sub(delta),
                    (r + delta).checked_sub(half),
                    r.checked_sub(half + delta),
                ];
                for q in tries.into_iter().flatten() {
                    if q != r && q >= start && q < start + len && self.allowed(r, q) {
                        out.push((r.min(q), r.max(q)));
                        found += 1;
                    }
                }
                if found >= 2 * CANDIDATES {
                    break;
                }
            }
            let below = (start + len..m).filter(|&q| self.allowed(r, q));
            out.extend(below.take(CANDIDATES).map(|q| (r, q)));
            let above = (0..start).rev().filter(|&q| self.allowed(r, q));
            out.extend(above.take(CANDIDATES).map(|q| (q, r)));
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Allowed pairs outside `edges` that could improve `solved`, the
    /// most promising first, at most a few per player.
    fn improving(&self, solved: &super::matching::Solved) -> Vec<(usize, usize)> {
        let m = self.ranked.len();
        let mut found = Vec::new();
        for i in 0..m {
            for j in i + 1..m {
                if let Some(r) = solved.violation(i, j, self.weight(i, j)) {
                    if self.allowed(i, j) {
                        found.push((r, i, j));
                    }
                }
            }
        }
        found.sort_unstable();
        found.truncate(4 * m.max(1));
        found.into_iter().map(|(_, i, j)| (i, j)).collect()
    }
}

/// The least-cost pairing of `ranked` (in ranking order) without a
/// rematch, or `None` when there is none.
fn best_pairing(
    h: &History,
    ranked: &[usize],
    round: u32,
) -> Result<Option<Vec<(usize, usize)>>, Unpairable> {
    let field = Field::new(h, ranked).ok_or(Unpairable::TooLarge(round, ranked.len()))?;
    let m = ranked.len();
    let mut edges = field.candidates();
    let solved = loop {
        let weighted: Vec<(usize, usize, i64)> = edges
            .iter()
            .map(|&(i, j)| (i, j, field.weight(i, j)))
            .collect();
        let solved = max_weight_matching(m, &weighted);
        let more = field.improving(&solved);
        if more.is_empty() {
            break solved;
        }
        edges.extend(more);
        edges.sort_unstable();
        edges.dedup();
    };
    let mut pairs = Vec::with_capacity(m / 2);
    for (i, mate) in solved.mate.iter().enumerate() {
        match mate {
            None => return Ok(None),
            Some(j) if i < *j => pairs.push((ranked[i], ranked[*j])),
            Some(_) => {}
        }
    }
    Ok(Some(pairs))
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{rngs::StdRng, Rng, SeedableRng};

    /// Plays `rounds` rounds where the lower index always wins.
    fn simulate(n: usize, rounds: u32) -> Vec<RoundPairing> {
        let mut h = History::new(n);
        let mut out = Vec::new();
        for r in 1..=rounds {
            let p = pair_round(&h, r).expect("pairable");
            for &(a, b) in &p.pairs {
                let (pa, pb) = if a < b { (2.0, 0.0) } else { (0.0, 2.0) };
                h.add_result(a, b, pa, pb);
            }
            if let Some(b) = p.bye {
                h.add_bye(b);
            }
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
    fn games_swap_colours_and_pairing_from_records_is_deterministic() {
        let names: Vec<String> = ["a", "b", "c", "d", "e"].map(String::from).to_vec();
        let p = RoundPairing {
            pairs: vec![(0, 2), (1, 3)],
            bye: None,
        };
        let games = round_games(&names, &p, 3, "f5");
        let ids: Vec<&str> = games.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(ids, ["s03.a.c", "s03.d.b", "s03.c.a", "s03.b.d"]);
        assert!(games.iter().all(|g| g.opening == "f5"));
        // Round 1 as recorded: a beat c, d and b drew (e had the bye);
        // round 2 half played (only a–b so far): its pairing is the same.
        let mut played = BTreeMap::new();
        let pairing = |v: &[(&str, &str, f64, f64)]| Round {
            pairings: v
                .iter()
                .map(|&(a, b, pa, pb)| (a.to_string(), b.to_string(), pa, pb, 2))
                .collect(),
        };
        played.insert(1, pairing(&[("a", "c", 2.0, 0.0), ("b", "d", 1.0, 1.0)]));
        let h = History::from_rounds(&names, &played, 2);
        assert_eq!(h.score, [1.0, 0.5, 0.0, 0.5, 1.0]);
        assert!(h.met(2, 0) && h.met(1, 3) && !h.met(0, 1));
        assert!(h.had_bye(4) && !h.had_bye(0));
        let second = pair_next(&names, &played, 2).unwrap();
        played.insert(2, pairing(&[("a", "e", 1.0, 0.0)]));
        assert_eq!(pair_next(&names, &played, 2).unwrap(), second);
        assert_eq!(second.bye, Some(2), "c: the lowest without a bye");
        assert_eq!(second.pairs.len(), 2);
        assert!(second.pairs.iter().all(|&(x, y)| !h.met(x, y)));
    }

    // ---- An exhaustive search, written from the documented rule. ----

    /// (primary, secondary) of pairing ranks i < j of `scores` (halves,
    /// descending).
    fn rule_cost(halves: &[i64], i: usize, j: usize) -> (i64, i64) {
        let diff = halves[i] - halves[j];
        let d = (j - i) as i64;
        if diff != 0 {
            return (diff * diff, d - 1);
        }
        let g = halves.iter().filter(|&&x| x == halves[i]).count() as i64;
        (0, (d - g / 2).abs())
    }

    /// The least (Σ primary, Σ secondary) over every perfect matching of
    /// `free` (a bit set of ranks) without a rematch.
    fn exhaustive(
        halves: &[i64],
        allowed: &dyn Fn(usize, usize) -> bool,
        free: u32,
    ) -> Option<(i64, i64)> {
        let Some(i) = (0..halves.len()).find(|&i| free & (1 << i) != 0) else {
            return Some((0, 0));
        };
        let rest = free & !(1 << i);
        let mut best: Option<(i64, i64)> = None;
        for j in (i + 1..halves.len()).filter(|&j| rest & (1 << j) != 0) {
            if !allowed(i, j) {
                continue;
            }
            if let Some((p, s)) = exhaustive(halves, allowed, rest & !(1 << j)) {
                let (cp, cs) = rule_cost(halves, i, j);
                let total = (p + cp, s + cs);
                if best.is_none_or(|b| total < b) {
                    best = Some(total);
                }
            }
        }
        best
    }

    /// For fields of 4 to 14 over 5 rounds with random results (wins,
    /// draws and losses of game pairs; byes), each round's pairing costs
    /// what the best pairing found by trying them all costs, its bye is
    /// the documented one, and a field that cannot be paired is one the
    /// exhaustive search cannot pair either.
    #[test]
    fn every_round_is_as_cheap_as_an_exhaustive_search() {
        let mut rng = StdRng::seed_from_u64(32);
        for trial in 0..6 {
            for n in 4..=14 {
                let mut h = History::new(n);
                for round in 1..=5 {
                    let order: Vec<usize> = {
                        let mut o: Vec<usize> = (0..n).collect();
                        o.sort_by(|&a, &b| h.score[b].total_cmp(&h.score[a]).then(a.cmp(&b)));
                        o
                    };
                    // The documented bye, and the best pairing without it.
                    let mut expected = None;
                    let byes: Vec<Option<usize>> = if n % 2 == 0 {
                        vec![None]
                    } else {
                        order
                            .iter()
                            .rev()
                            .filter(|&&p| !h.had_bye(p))
                            .map(|&p| Some(p))
                            .collect()
                    };
                    for bye in byes {
                        let ranked: Vec<usize> =
                            order.iter().copied().filter(|&p| Some(p) != bye).collect();
                        let halves: Vec<i64> =
                            ranked.iter().map(|&p| (h.score[p] * 2.0) as i64).collect();
                        let allowed = |i: usize, j: usize| !h.met(ranked[i], ranked[j]);
                        let all = (1u32 << ranked.len()) - 1;
                        if let Some(best) = exhaustive(&halves, &allowed, all) {
                            expected = Some((bye, best, ranked));
                            break;
                        }
                    }
                    let got = pair_round(&h, round);
                    let Some((bye, best, ranked)) = expected else {
                        assert_eq!(got, Err(Unpairable::Rematch(round)), "n {n} round {round}");
                        break;
                    };
                    let got = got.unwrap_or_else(|e| panic!("n {n} round {round}: {e}"));
                    assert_eq!(got.bye, bye, "trial {trial} n {n} round {round}");
                    let rank = |p: usize| ranked.iter().position(|&x| x == p).unwrap();
                    let halves: Vec<i64> =
                        ranked.iter().map(|&p| (h.score[p] * 2.0) as i64).collect();
                    let mut cost = (0, 0);
                    let mut seen = HashSet::new();
                    for &(a, b) in &got.pairs {
                        assert!(!h.met(a, b), "rematch {a}-{b}");
                        assert!(seen.insert(a) && seen.insert(b));
                        let (i, j) = (rank(a).min(rank(b)), rank(a).max(rank(b)));
                        let (p, s) = rule_cost(&halves, i, j);
                        cost = (cost.0 + p, cost.1 + s);
                    }
                    assert_eq!(seen.len(), ranked.len());
                    assert_eq!(cost, best, "trial {trial} n {n} round {round}: {got:?}");
                    for &(a, b) in &got.pairs {
                        let (pa, pb) =
                            [(2.0, 0.0), (1.0, 1.0), (0.0, 2.0), (1.5, 0.5)][rng.gen_range(0..4)];
                        h.add_result(a, b, pa, pb);
                    }
                    if let Some(b) = got.bye {
                        h.add_bye(b);
                    }
                }
            }
        }
    }
}
