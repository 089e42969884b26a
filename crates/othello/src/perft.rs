//! Perft: counts the leaves of the game tree from a position.
//!
//! Owns: the counting convention (Aart Bik's): a pass uses one ply, and a
//! finished game counts as one leaf at any remaining depth. Pure: no I/O,
//! no clocks (the CLI times it).

use super::board::{flips_of, moves_of, squares, Geometry, Position};

/// Number of leaves `depth` plies below `pos`.
pub fn perft(pos: &Position, depth: u32) -> u64 {
    if depth == 0 {
        return 1;
    }
    let (me, opp) = pos.mine_theirs();
    count(me, opp, depth, Position::geometry_for(pos.size()))
}

/// Leaves below the side owning `me` to move, `depth >= 1`.
fn count(me: u64, opp: u64, depth: u32, geo: &Geometry) -> u64 {
    let moves = moves_of(me, opp, geo);
    if depth == 1 {
        // Either the moves, or one pass, or one finished game.
        return u64::from(moves.count_ones().max(1));
    }
    if moves == 0 {
        if moves_of(opp, me, geo) == 0 {
            return 1;
        }
        return count(opp, me, depth - 1, geo);
    }
    let mut total = 0;
    if depth == 2 {
        // Bulk-count the grandchildren without recursing.
        for sq in squares(moves) {
            let flips = flips_of(me, opp, sq.index(), geo);
            let (next_me, next_opp) = (opp & !flips, me | flips | sq.bit());
            total += u64::from(moves_of(next_me, next_opp, geo).count_ones().max(1));
        }
        return total;
    }
    for sq in squares(moves) {
        let flips = flips_of(me, opp, sq.index(), geo);
        total += count(opp & !flips, me | flips | sq.bit(), depth - 1, geo);
    }
    total
}

/// The published 8×8 values from the start position, depths 1 to 14.
pub const PUBLISHED_8X8: [u64; 14] = [
    4,
    12,
    56,
    244,
    1_396,
    8_200,
    55_092,
    390_216,
    3_005_288,
    24_571_284,
    212_258_800,
    1_939_886_636,
    18_429_641_748,
    184_042_084_512,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_zero_is_one() {
        assert_eq!(perft(&Position::start(8), 0), 1);
    }
}
