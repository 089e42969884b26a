//! Swiss scoring from game records: each round's pairings and byes, the
//! match score (a won pairing 1, a drawn one ½, a lost one 0, a bye 1),
//! and the tie-breaks Buchholz and Sonneborn-Berger.
//!
//! Owns what a Swiss result is worth. Pure over `&[GameRecord]`: pairs no
//! one (that is `schedule::swiss`), formats nothing, does no I/O.

use std::collections::BTreeMap;

use crate::record::GameRecord;

/// Match points of a bye (as a won pairing).
pub const BYE_POINTS: f64 = 1.0;

/// One Swiss round as played.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Round {
    /// (a, b, game points of a, game points of b, games), a < b by name.
    pub pairings: Vec<(String, String, f64, f64, u32)>,
}

/// Per round, per pairing (a, b): a's points, b's points, games.
type Tally = BTreeMap<u32, BTreeMap<(String, String), (f64, f64, u32)>>;

/// The rounds of `records` that carry a `swiss_round`, by number.
pub fn rounds(records: &[GameRecord]) -> BTreeMap<u32, Round> {
    let mut by_round: Tally = BTreeMap::new();
    for r in records {
        let Some(n) = r.swiss_round else { continue };
        if r.black == r.white {
            continue;
        }
        let (a, b) = if r.black < r.white {
            (&r.black, &r.white)
        } else {
            (&r.white, &r.black)
        };
        let e = by_round
            .entry(n)
            .or_default()
            .entry((a.clone(), b.clone()))
            .or_default();
        let color_a = r.color_of(a).expect("plays");
        e.0 += r.result.points_for(color_a);
        e.1 += r.result.points_for(color_a.opponent());
        e.2 += 1;
    }
    by_round
        .into_iter()
        .map(|(n, m)| {
            let pairings = m
                .into_iter()
                .map(|((a, b), (pa, pb, g))| (a, b, pa, pb, g))
                .collect();
            (n, Round { pairings })
        })
        .collect()
}

/// Match points of a pairing for the side that scored `own` of `own +
/// other` game points.
pub fn match_points(own: f64, other: f64) -> f64 {
    if own > other {
        1.0
    } else if own < other {
        0.0
    } else {
        0.5
    }
}

/// A player's Swiss totals.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SwissScore {
    /// Match points, byes included.
    pub score: f64,
    /// Sum of the opponents' scores (byes add nothing).
    pub buchholz: f64,
    /// Sum of the scores of opponents beaten, plus half of those drawn.
    pub sonneborn_berger: f64,
    pub byes: u32,
}

/// The Swiss totals of `players` (and everyone in the records); `None`
/// when no record carries a `swiss_round`. A player of the event with no
/// game in a round that has games had the bye.
pub fn scores(records: &[GameRecord], players: &[String]) -> Option<BTreeMap<String, SwissScore>> {
    let rounds = rounds(records);
    if rounds.is_empty() {
        return None;
    }
    let mut out: BTreeMap<String, SwissScore> = players
        .iter()
        .map(|p| (p.clone(), SwissScore::default()))
        .collect();
    for round in rounds.values() {
        for (a, b, ..) in &round.pairings {
            out.entry(a.clone()).or_default();
            out.entry(b.clone()).or_default();
        }
    }
    let names: Vec<String> = out.keys().cloned().collect();
    for round in rounds.values() {
        for name in &names {
            if !round.pairings.iter().any(|p| &p.0 == name || &p.1 == name) {
                let s = out.get_mut(name).expect("known");
                s.score += BYE_POINTS;
                s.byes += 1;
            }
        }
        for (a, b, pa, pb, _) in &round.pairings {
            out.get_mut(a).expect("known").score += match_points(*pa, *pb);
            out.get_mut(b).expect("known").score += match_points(*pb, *pa);
        }
    }
    let final_score: BTreeMap<String, f64> =
        out.iter().map(|(k, v)| (k.clone(), v.score)).collect();
    for round in rounds.values() {
        for (a, b, pa, pb, _) in &round.pairings {
            for (me, opp, mine, theirs) in [(a, b, pa, pb), (b, a, pb, pa)] {
                let s = out.get_mut(me).expect("known");
                s.buchholz += final_score[opp];
                s.sonneborn_berger += match_points(*mine, *theirs) * final_score[opp];
            }
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::tests::game;
    use crate::record::Winner;

    fn sw(round: u32, black: &str, white: &str, result: Winner) -> GameRecord {
        let mut r = game(black, white, result, (33, 31));
        r.swiss_round = Some(round);
        r
    }

    #[test]
    fn scores_byes_and_tie_breaks() {
        use Winner::*;
        // Round 1: a beats b 2-0, c has the bye. Round 2: a–c drawn 1-1,
        // b has the bye.
        let records = vec![
            sw(1, "a", "b", Black),
            sw(1, "b", "a", White),
            sw(2, "a", "c", Black),
            sw(2, "c", "a", Black),
        ];
        let s = scores(&records, &["a".into(), "b".into(), "c".into()]).unwrap();
        assert_eq!(s["a"].score, 1.5);
        assert_eq!(s["b"].score, 1.0);
        assert_eq!(s["c"].score, 1.5);
        assert_eq!((s["b"].byes, s["c"].byes, s["a"].byes), (1, 1, 0));
        // a met b (1) and c (1.5); c met a (1.5).
        assert_eq!(s["a"].buchholz, 2.5);
        assert_eq!(s["c"].buchholz, 1.5);
        // a beat b (1) and drew c (½ · 1.5).
        assert_eq!(s["a"].sonneborn_berger, 1.75);
        assert_eq!(s["b"].sonneborn_berger, 0.0);
        assert!(scores(&[game("a", "b", Black, (33, 31))], &[]).is_none());
    }
}
