//! The plies between two positions of one game. A TURN tells a player the
//! position and the last move only; an engine must be told every ply (GTP
//! `play`, NBoard `move`), so the plies since the position it last knew
//! are found here: each adds one disc on a square the new position
//! occupies, passes are inserted where forced (the only passes a game can
//! hold), and the last ply is TURN's last move.
//!
//! Owns that search. Must not apply rules of its own: moves are `game`'s.

use std::collections::HashSet;

use crate::game::{squares, Color, Move, Position};

use super::Ply;

/// Positions looked at before giving up (a search from the start to a
/// late position could otherwise run for ever; the referee's TURNs follow
/// each other a few plies apart, and openings are short).
const MAX_VISITED: usize = 200_000;

/// Plies leading from `from` to `to`, the last one being `last` when it
/// is given; `None` if `to` cannot follow `from` (or no way was found
/// within [`MAX_VISITED`] positions). Where several orders
/// reach `to` (an opening's transpositions), one of them is given: the
/// position, which is all an engine plays from, is the same.
pub fn plies_between(from: &Position, to: &Position, last: Option<Move>) -> Option<Vec<Ply>> {
    if from == to {
        // Asked again (a retry after ILLEGAL): nothing happened since.
        return Some(Vec::new());
    }
    if from.size() != to.size() {
        return None;
    }
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    search(*from, to, last, &mut path, &mut seen).then_some(path)
}

fn search(
    pos: Position,
    to: &Position,
    last: Option<Move>,
    path: &mut Vec<Ply>,
    seen: &mut HashSet<Position>,
) -> bool {
    if pos == *to {
        let ends_right = match (last, path.last()) {
            (None, None) => true,
            (Some(m), Some(p)) => p.mv == m,
            // TURN says `none` only before the first move; a path that
            // ends otherwise is still the position (a later opening).
            (None, Some(_)) => true,
            (Some(_), None) => false,
        };
        if ends_right {
            return true;
        }
    }
    // Discs are never removed: a position with a disc `to` lacks is lost.
    if occupied(&pos) & !occupied(to) != 0
        || pos.is_over()
        || seen.len() >= MAX_VISITED
        || !seen.insert(pos)
    {
        return false;
    }
    let color: Color = pos.to_move();
    if pos.must_pass() {
        path.push(Ply {
            color,
            mv: Move::Pass,
        });
        if search(pos.pass_unchecked(), to, last, path, seen) {
            return true;
        }
        path.pop();
        return false;
    }
    for sq in squares(pos.legal_moves() & occupied(to)) {
        let mv = Move::Play(sq);
        let Ok((next, _)) = pos.play(mv) else {
            continue;
        };
        path.push(Ply { color, mv });
        if search(next, to, last, path, seen) {
            return true;
        }
        path.pop();
    }
    false
}

fn occupied(pos: &Position) -> u64 {
    pos.discs_of(Color::Black) | pos.discs_of(Color::White)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{parse_move, replay_transcript};

    fn after(t: &str) -> (Vec<Move>, Position) {
        replay_transcript(Position::start(8), t).unwrap()
    }

    #[test]
    fn an_opening_is_found_from_the_start() {
        let (moves, pos) = after("f5d6c3d3c4f4");
        let last = moves.last().copied();
        let found = plies_between(&Position::start(8), &pos, last).unwrap();
        assert_eq!(found.len(), moves.len());
        let mut p = Position::start(8);
        for ply in &found {
            assert_eq!(ply.color, p.to_move());
            p = p.play(ply.mv).unwrap().0;
        }
        assert_eq!(p, pos);
        assert_eq!(found.last().unwrap().mv, last.unwrap());
    }

    #[test]
    fn the_opponents_move_and_nothing_is_found() {
        let (_, a) = after("f5");
        let (_, b) = after("f5d6");
        let d6 = parse_move("d6", 8).unwrap();
        let found = plies_between(&a, &b, Some(d6)).unwrap();
        assert_eq!(
            found,
            vec![Ply {
                color: Color::White,
                mv: d6
            }]
        );
        assert_eq!(plies_between(&b, &b, Some(d6)), Some(vec![]));
        assert_eq!(plies_between(&b, &a, None), None, "discs never go");
    }

    /// A game (moves chosen by `seed`) up to one move after its first
    /// forced pass, if it has one.
    fn game_with_a_pass(seed: usize) -> Option<(Vec<Move>, Position)> {
        let mut p = Position::start(8);
        let mut seq = Vec::new();
        for k in 0.. {
            if p.is_over() {
                return None;
            }
            if p.must_pass() {
                seq.push(Move::Pass);
                p = p.pass_unchecked();
                let mv = Move::Play(p.legal_squares()[0]);
                seq.push(mv);
                return Some((seq, p.play(mv).unwrap().0));
            }
            let ls = p.legal_squares();
            let mv = Move::Play(ls[(k * seed + 3) % ls.len()]);
            seq.push(mv);
            p = p.play(mv).unwrap().0;
        }
        None
    }

    #[test]
    fn forced_passes_are_inserted() {
        // A game with a pass: play random-ish first moves until one side
        // must pass, then check the pass is part of the found plies.
        let (seq, with_pass) = (1..500)
            .find_map(game_with_a_pass)
            .expect("some game has a pass");
        // From four plies before the end.
        let mut q = Position::start(8);
        for mv in &seq[..seq.len() - 4] {
            q = q.play(*mv).unwrap().0;
        }
        let found = plies_between(&q, &with_pass, seq.last().copied()).unwrap();
        assert!(found.iter().any(|p| p.mv == Move::Pass), "{found:?}");
        let mut r = q;
        for ply in &found {
            r = r.play(ply.mv).unwrap().0;
        }
        assert_eq!(r, with_pass);
    }
}
