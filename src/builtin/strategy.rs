//! How the built-in bots choose a move. Pure: a position and a random
//! generator in, a move out.

use rand::Rng;

use crate::game::{squares, Move, Position, Square};

/// The built-in strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Any legal move, uniformly (seeded).
    Random,
    /// The move that flips the most discs (ties broken at random).
    Greedy,
    /// The best square by a positional table (ties broken at random).
    Weighted,
}

impl Strategy {
    pub fn from_name(name: &str) -> Option<Strategy> {
        match name {
            "random" => Some(Strategy::Random),
            "greedy" => Some(Strategy::Greedy),
            "weighted" => Some(Strategy::Weighted),
            _ => None,
        }
    }

    /// The move for the side to move in `pos` (`Pass` when it has none).
    pub fn choose(self, pos: &Position, rng: &mut impl Rng) -> Move {
        let moves: Vec<Square> = squares(pos.legal_moves()).collect();
        if moves.is_empty() {
            return Move::Pass;
        }
        let score = |sq: Square| -> i32 {
            match self {
                Strategy::Random => 0,
                Strategy::Greedy => pos.flips(sq).count_ones() as i32,
                Strategy::Weighted => weight(sq, pos.size()),
            }
        };
        let best = moves.iter().map(|&s| score(s)).max().unwrap_or(0);
        let top: Vec<Square> = moves.into_iter().filter(|&s| score(s) == best).collect();
        Move::Play(top[rng.gen_range(0..top.len())])
    }
}

/// The classic 8×8 table: corners good, X-squares (diagonal to a corner)
/// and C-squares (beside a corner) bad, edges fair.
const TABLE_8: [[i32; 8]; 8] = [
    [100, -20, 10, 5, 5, 10, -20, 100],
    [-20, -50, -2, -2, -2, -2, -50, -20],
    [10, -2, -1, -1, -1, -1, -2, 10],
    [5, -2, -1, -1, -1, -1, -2, 5],
    [5, -2, -1, -1, -1, -1, -2, 5],
    [10, -2, -1, -1, -1, -1, -2, 10],
    [-20, -50, -2, -2, -2, -2, -50, -20],
    [100, -20, 10, 5, 5, 10, -20, 100],
];

/// The positional weight of `sq` on a board of `size`: the 8×8 table's
/// value for the square at the same distance from the nearest corner.
pub fn weight(sq: Square, size: u8) -> i32 {
    let fold = |v: u8| -> usize {
        let from_far = size - 1 - v;
        v.min(from_far) as usize
    };
    let (c, r) = (fold(sq.col()), fold(sq.row()));
    TABLE_8[r][c]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{parse_board_string, parse_square, Color};
    use rand::SeedableRng;

    #[test]
    fn weights_are_symmetric_and_favour_corners() {
        for size in [4u8, 6, 8] {
            let corner = weight(Square::new(0, 0), size);
            for c in 0..size {
                for r in 0..size {
                    let w = weight(Square::new(c, r), size);
                    assert!(w <= corner);
                    assert_eq!(w, weight(Square::new(size - 1 - c, r), size));
                    assert_eq!(w, weight(Square::new(r, c), size));
                }
            }
            assert!(weight(Square::new(1, 1), size) < 0, "X-square on {size}");
        }
    }

    #[test]
    fn each_strategy_picks_what_it_should() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        // White to move: a1 flips b1 only (1 disc); e1 flips b1..d1? No:
        // build a row X X X between O at a1... see the board below.
        // Row 1: - X X X O - - -   white at e1 may play a1 (flips 3).
        // Row 2: - - - - - - - -
        let mut b = String::new();
        b.push_str("-XXXO---");
        b.push_str("-X------");
        b.push_str("--O-----");
        b.push_str(&"-".repeat(40));
        let pos = parse_board_string(&b, Color::White).unwrap();
        let a1 = parse_square("a1").unwrap();
        assert_eq!(Strategy::Greedy.choose(&pos, &mut rng), Move::Play(a1));
        assert_eq!(Strategy::Weighted.choose(&pos, &mut rng), Move::Play(a1));
        let legal = pos.legal_moves();
        for _ in 0..20 {
            match Strategy::Random.choose(&pos, &mut rng) {
                Move::Play(sq) => assert!(legal & sq.bit() != 0),
                Move::Pass => panic!("had moves"),
            }
        }
    }
}
