//! Writes `openings/balanced-8.txt`, the 8×8 openings a tournament plays
//! when its file has no `[openings]` table, on stdout:
//!
//! ```text
//! cargo run --release -p othello --example balanced_openings > openings/balanced-8.txt
//! ```
//!
//! XOT-like: every sequence of 8 plays from the start position, one per
//! position (the eight symmetries of the board and transpositions taken
//! out; the smallest transcript kept, written to start with f5), each rated
//! by a negamax search of `DEPTH` plies with a heuristic evaluation
//! (mobility, potential mobility, the classic square table; disc count at
//! the end of a game), from black's side. The `KEEP` nearest to even are
//! kept, and written in the order of a hash of their transcript, so that a
//! tournament's first openings (those of a short match) are of all kinds
//! rather than the few nearest to 0. Deterministic: the same program writes
//! the same file, byte for byte (the test `shipped_openings_are_...` in
//! src/config/openings.rs checks the file; running this again checks that
//! it is what this search says).
//!
//! Owns the search and the selection; nothing of the tournament reads it.
//! The evaluation is this program's own, far weaker than Edax's (which
//! rated the published XOT list): "near even" means near even for it.

use std::collections::HashMap;
use std::fmt::Write as _;

use othello::{parse_square, squares, transcript, transform_square, Move, Position, Square};

/// Plies of an opening.
const PLIES: usize = 8;
/// Plies searched below each opening's position.
const DEPTH: u32 = 6;
/// Openings written.
const KEEP: usize = 2000;
/// A won game's value per disc: far above any evaluation.
const DISC: i32 = 10_000;

fn main() {
    let positions = unique_positions();
    let sequences: usize = positions.values().map(|(_, n)| n).sum();
    let lines: Vec<String> = positions.into_values().map(|(t, _)| t).collect();
    let mut rated = rate_all(&lines);
    rated.sort_by(|a, b| (a.0.abs(), &a.1).cmp(&(b.0.abs(), &b.1)));
    let total = rated.len();
    let median = rated[total / 2].0.abs();
    rated.truncate(KEEP);
    let spread = rated.last().map_or(0, |r| r.0.abs());
    rated.sort_by_key(|(_, t)| (fnv1a(t), t.clone()));
    print!(
        "{}",
        header(
            (sequences, total, median),
            spread,
            &rated.iter().map(|r| r.0).collect::<Vec<_>>()
        )
    );
    for (_, t) in &rated {
        println!("{t}");
    }
}

/// The file's header: how it was made, and its figures.
/// `all`: sequences, positions, the median |rating| of the positions.
fn header(all: (usize, usize, i32), spread: i32, scores: &[i32]) -> String {
    let (sequences, positions, median) = all;
    let mut h = String::new();
    let _ = writeln!(
        h,
        "# Balanced 8x8 openings: the default of `tournament run` on 8x8 (no `random-plies`"
    );
    let _ = writeln!(h, "# or `file` in [openings]).");
    let _ = writeln!(h, "# Made by crates/othello/examples/balanced_openings.rs:");
    let _ = writeln!(
        h,
        "#   cargo run --release -p othello --example balanced_openings > openings/balanced-8.txt"
    );
    let _ = writeln!(
        h,
        "# All {sequences} sequences of {PLIES} plays from the start give {positions} positions (symmetries"
    );
    let _ = writeln!(
        h,
        "# and transpositions taken out; the smallest transcript kept, starting f5). Each is rated"
    );
    let _ = writeln!(
        h,
        "# by a {DEPTH}-ply negamax with the program's own heuristic evaluation (mobility, potential"
    );
    let _ = writeln!(
        h,
        "# mobility, square table; ~100 points = a corner), black's side; the {} nearest to 0",
        scores.len()
    );
    let _ = writeln!(
        h,
        "# (|rating| <= {spread}; the median |rating| of all {positions} is {median}) are kept, in"
    );
    let _ = writeln!(h, "# the order of a hash of the transcript.");
    let at = |x: i32| scores.iter().filter(|s| s.abs() == x).count();
    let _ = writeln!(
        h,
        "# Ratings kept: {} at 0, {} at +-1, {} at +-2; mean {:+.2} (black's side).",
        at(0),
        at(1),
        at(2),
        scores.iter().map(|&s| f64::from(s)).sum::<f64>() / scores.len().max(1) as f64
    );
    let _ = writeln!(
        h,
        "# Near even for this search, not for Edax (which rated the published XOT list)."
    );
    h
}

/// Canonical position → (smallest normalized transcript reaching it, how
/// many sequences reach it).
fn unique_positions() -> HashMap<(u64, u64), (String, usize)> {
    let start = Position::start(8);
    let keeps_start: Vec<u8> = (0..8).filter(|&s| start.transformed(s) == start).collect();
    let f5 = parse_square("f5").expect("f5");
    let mut out: HashMap<(u64, u64), (String, usize)> = HashMap::new();
    let mut moves = Vec::with_capacity(PLIES);
    walk(
        &start,
        &mut moves,
        &mut |moves: &[Square], pos: &Position| {
            let sym = keeps_start
                .iter()
                .copied()
                .find(|&s| transform_square(moves[0], 8, s) == f5)
                .expect("each first move is f5 under one symmetry of the start");
            let normal: Vec<Move> = moves
                .iter()
                .map(|&sq| Move::Play(transform_square(sq, 8, sym)))
                .collect();
            let t = transcript(&normal);
            let entry = out.entry(canonical(pos)).or_insert_with(|| (t.clone(), 0));
            entry.1 += 1;
            if t < entry.0 {
                entry.0 = t;
            }
        },
    );
    out
}

/// Calls `found` with every sequence of `PLIES` plays from `pos` (no pass
/// happens that early) that leaves a game to play.
fn walk(pos: &Position, moves: &mut Vec<Square>, found: &mut impl FnMut(&[Square], &Position)) {
    if moves.len() == PLIES {
        if !pos.is_over() {
            found(moves, pos);
        }
        return;
    }
    for sq in squares(pos.legal_moves()) {
        moves.push(sq);
        walk(&pos.play_unchecked(sq, pos.flips(sq)), moves, found);
        moves.pop();
    }
}

/// The least of the eight symmetric images (the side to move is the same
/// in all: after 8 plays, black).
fn canonical(pos: &Position) -> (u64, u64) {
    (0..8)
        .map(|s| {
            let t = pos.transformed(s);
            (
                t.discs_of(othello::Color::Black),
                t.discs_of(othello::Color::White),
            )
        })
        .min()
        .expect("eight images")
}

/// Each transcript's rating from black's side, on all cores.
fn rate_all(lines: &[String]) -> Vec<(i32, String)> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = lines.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = lines
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|t| (rate(t), t.clone()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a rating thread"))
            .collect()
    })
}

/// The search's value of the position after `line`, for black.
fn rate(line: &str) -> i32 {
    let (_, pos) = othello::replay_transcript(Position::start(8), line).expect("a legal line");
    let v = negamax(&pos, DEPTH, -i32::MAX, i32::MAX);
    match pos.to_move() {
        othello::Color::Black => v,
        othello::Color::White => -v,
    }
}

/// Alpha-beta negamax from the side to move; a pass costs no depth.
fn negamax(pos: &Position, depth: u32, mut alpha: i32, beta: i32) -> i32 {
    let moves = pos.legal_moves();
    if moves == 0 {
        let other = pos.pass_unchecked();
        if other.legal_moves() == 0 {
            return final_value(pos);
        }
        return -negamax(&other, depth, -beta, -alpha);
    }
    if depth == 0 {
        return evaluate(pos);
    }
    let mut order: Vec<Square> = squares(moves).collect();
    order.sort_by_key(|&sq| -TABLE[sq.index() as usize]);
    for sq in order {
        let next = pos.play_unchecked(sq, pos.flips(sq));
        let v = -negamax(&next, depth - 1, -beta, -alpha);
        if v > alpha {
            alpha = v;
            if alpha >= beta {
                break;
            }
        }
    }
    alpha
}

/// A finished game: the disc difference, for the side to move.
fn final_value(pos: &Position) -> i32 {
    let (me, opp) = sides(pos);
    (me.count_ones() as i32 - opp.count_ones() as i32) * DISC
}

/// The discs of the side to move and of the other.
fn sides(pos: &Position) -> (u64, u64) {
    let c = pos.to_move();
    (pos.discs_of(c), pos.discs_of(c.opponent()))
}

/// The classic square table (corners 100, X-squares −50), by bit index.
const TABLE: [i32; 64] = {
    let rows: [[i32; 8]; 8] = [
        [100, -20, 10, 5, 5, 10, -20, 100],
        [-20, -50, -2, -2, -2, -2, -50, -20],
        [10, -2, -1, -1, -1, -1, -2, 10],
        [5, -2, -1, -1, -1, -1, -2, 5],
        [5, -2, -1, -1, -1, -1, -2, 5],
        [10, -2, -1, -1, -1, -1, -2, 10],
        [-20, -50, -2, -2, -2, -2, -50, -20],
        [100, -20, 10, 5, 5, 10, -20, 100],
    ];
    let mut t = [0; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = rows[i / 8][i % 8];
        i += 1;
    }
    t
};

/// The heuristic value for the side to move: mobility (10 a move),
/// potential mobility (4 an empty square beside the other's discs) and
/// the square table.
fn evaluate(pos: &Position) -> i32 {
    let (me, opp) = sides(pos);
    let empty = !(me | opp);
    let my_moves = pos.legal_moves().count_ones() as i32;
    let their_moves = pos.pass_unchecked().legal_moves().count_ones() as i32;
    let potential =
        (around(opp) & empty).count_ones() as i32 - (around(me) & empty).count_ones() as i32;
    let table: i32 = squares(me).map(|s| TABLE[s.index() as usize]).sum::<i32>()
        - squares(opp).map(|s| TABLE[s.index() as usize]).sum::<i32>();
    10 * (my_moves - their_moves) + 4 * potential + table
}

/// The squares next to `bits` (8×8, bit = row·8 + column).
fn around(bits: u64) -> u64 {
    const NOT_A: u64 = !0x0101_0101_0101_0101;
    const NOT_H: u64 = !0x8080_8080_8080_8080;
    let e = (bits << 1) & NOT_A;
    let w = (bits >> 1) & NOT_H;
    let row = bits | e | w;
    e | w | (row << 8) | (row >> 8)
}

/// FNV-1a: a fixed hash (std's is seeded per process).
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
