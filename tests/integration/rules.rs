//! The rules engine: perft against published numbers and an independent
//! slow engine, complete 4×4 game trees, 3,306 real games from WTHOR, and
//! properties over random legal games.

use proptest::prelude::*;
use tournament::game::{
    board_string, parse_board_string, perft, squares, transform_square, Color, Move, Position,
    Square, PUBLISHED_8X8,
};

use crate::fixture::tournament;

#[test]
fn perft_matches_the_published_values_to_depth_9() {
    let start = Position::start(8);
    for depth in 1..=9u32 {
        assert_eq!(
            perft(&start, depth),
            PUBLISHED_8X8[depth as usize - 1],
            "depth {depth}"
        );
    }
    // The published table itself, as Aart Bik gives it.
    assert_eq!(
        &PUBLISHED_8X8[..9],
        &[4, 12, 56, 244, 1396, 8200, 55092, 390216, 3005288]
    );
}

#[test]
fn perft_command_prints_every_depth() {
    let out = tournament().args(["perft", "9"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let counts: Vec<(u32, u64)> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
        })
        .collect();
    let expected: Vec<(u32, u64)> = (1..=9).zip(PUBLISHED_8X8.iter().copied()).collect();
    assert_eq!(counts, expected, "{text}");
}

#[test]
fn perft_command_rejects_a_bad_size() {
    let out = tournament()
        .args(["perft", "3", "--size", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("4, 6 or 8"));
}

/// A deliberately naive engine (arrays, direction walks), written apart from
/// the bitboards, to cross-check perft on every board size.
mod naive {
    pub type Board = Vec<Vec<i8>>; // 1 black, -1 white, 0 empty; [row][col]

    pub fn start(n: usize) -> Board {
        let mut b = vec![vec![0; n]; n];
        let h = n / 2;
        b[h - 1][h - 1] = -1;
        b[h][h] = -1;
        b[h - 1][h] = 1;
        b[h][h - 1] = 1;
        b
    }

    pub fn flips(b: &Board, me: i8, r: usize, c: usize) -> Vec<(usize, usize)> {
        let n = b.len() as i32;
        let mut out = vec![];
        if b[r][c] != 0 {
            return out;
        }
        for dr in -1..=1 {
            for dc in -1..=1 {
                if dr == 0 && dc == 0 {
                    continue;
                }
                let mut run = vec![];
                let (mut rr, mut cc) = (r as i32 + dr, c as i32 + dc);
                while rr >= 0 && rr < n && cc >= 0 && cc < n && b[rr as usize][cc as usize] == -me {
                    run.push((rr as usize, cc as usize));
                    rr += dr;
                    cc += dc;
                }
                if !run.is_empty()
                    && rr >= 0
                    && rr < n
                    && cc >= 0
                    && cc < n
                    && b[rr as usize][cc as usize] == me
                {
                    out.extend(run);
                }
            }
        }
        out
    }

    pub fn moves(b: &Board, me: i8) -> Vec<(usize, usize)> {
        let n = b.len();
        let mut out = vec![];
        for r in 0..n {
            for c in 0..n {
                if !flips(b, me, r, c).is_empty() {
                    out.push((r, c));
                }
            }
        }
        out
    }

    pub fn perft(b: &Board, me: i8, depth: u32) -> u64 {
        if depth == 0 {
            return 1;
        }
        let ms = moves(b, me);
        if ms.is_empty() {
            if moves(b, -me).is_empty() {
                return 1;
            }
            return perft(b, -me, depth - 1);
        }
        let mut total = 0;
        for (r, c) in ms {
            let mut next = b.clone();
            for (fr, fc) in flips(b, me, r, c) {
                next[fr][fc] = me;
            }
            next[r][c] = me;
            total += perft(&next, -me, depth - 1);
        }
        total
    }
}

#[test]
fn perft_agrees_with_a_naive_engine_on_every_size() {
    for (size, max_depth) in [(4u8, 14u32), (6, 7), (8, 6)] {
        let fast = Position::start(size);
        let slow = naive::start(size as usize);
        for depth in 1..=max_depth {
            assert_eq!(
                perft(&fast, depth),
                naive::perft(&slow, 1, depth),
                "size {size} depth {depth}"
            );
        }
    }
}

/// Walks the whole tree to `depth`, checking every node, and returns
/// (leaves, finished games among them).
fn walk(pos: &Position, depth: u32, played: u32) -> (u64, u64) {
    let d = pos.discs();
    assert_eq!(d.black + d.white, 4 + played, "one disc per move");
    assert_eq!(pos.discs_of(Color::Black) & pos.discs_of(Color::White), 0);
    assert_eq!(
        (pos.discs_of(Color::Black) | pos.discs_of(Color::White)) & !pos.on_board(),
        0
    );
    if pos.is_over() {
        assert_eq!(pos.legal_moves(), 0);
        return (1, 1);
    }
    if depth == 0 {
        return (1, 0);
    }
    if pos.must_pass() {
        return walk(&pos.pass_unchecked(), depth - 1, played);
    }
    let mut total = (0, 0);
    for sq in squares(pos.legal_moves()) {
        let (next, _) = pos.play(Move::Play(sq)).expect("generated move is legal");
        let (l, f) = walk(&next, depth - 1, played + 1);
        total.0 += l;
        total.1 += f;
    }
    total
}

#[test]
fn the_4x4_game_tree_ends_and_every_leaf_is_finished() {
    let start = Position::start(4);
    // 12 empty squares: at most 12 moves plus passes, so 30 plies is beyond
    // the end of every game.
    let (leaves, finished) = walk(&start, 30, 0);
    assert_eq!(
        leaves, finished,
        "every leaf at depth 30 is a finished game"
    );
    assert_eq!(perft(&start, 30), leaves);
    assert_eq!(perft(&start, 40), leaves, "the tree does not grow further");
    // Depth-limited leaves are counted too, and agree with perft.
    for depth in 1..12 {
        assert_eq!(
            walk(&start, depth, 0).0,
            perft(&start, depth),
            "depth {depth}"
        );
    }
}

#[test]
fn wthor_games_replay_legally_with_their_recorded_scores() {
    let dir = crate::fixture::project_root().join("../shared/data/wthor");
    let files = ["WTH_1990.wtb", "WTH_2021.wtb"];
    if !dir.join(files[0]).exists() {
        eprintln!("skipped: {} not found", dir.display());
        return;
    }
    let (mut games, mut ended_on_board) = (0, 0);
    for file in files {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        let archive = wthor::parse::<wthor::game_archive::GameArchive>(&bytes).unwrap();
        for (i, game) in archive.games.iter().enumerate() {
            let mut pos = Position::start(8);
            for (ply, m) in game.moves.iter().enumerate() {
                if pos.must_pass() {
                    pos = pos.pass_unchecked();
                }
                let sq = Square::new(m.file, m.rank);
                pos = match pos.play(Move::Play(sq)) {
                    Ok((next, _)) => next,
                    Err(why) => panic!("{file} game {i} move {}: {why}", ply + 1),
                };
            }
            if pos.is_over() {
                ended_on_board += 1;
                assert_eq!(
                    pos.discs_wof().black,
                    u32::from(game.real_score),
                    "{file} game {i}: recorded score"
                );
            }
            games += 1;
        }
    }
    assert_eq!(games, 3306);
    assert!(
        ended_on_board > 3000,
        "{ended_on_board} games ended on the board"
    );
}

/// A position reached by playing `choices` (each picks among the legal
/// moves) from the start of a `size` board.
fn play_out(size: u8, choices: &[u8]) -> Vec<Position> {
    let mut pos = Position::start(size);
    let mut seen = vec![pos];
    for &c in choices {
        if pos.is_over() {
            break;
        }
        if pos.must_pass() {
            pos = pos.pass_unchecked();
        }
        let moves: Vec<Square> = squares(pos.legal_moves()).collect();
        let sq = moves[c as usize % moves.len()];
        pos = pos.play(Move::Play(sq)).unwrap().0;
        seen.push(pos);
    }
    seen
}

fn size_strategy() -> impl Strategy<Value = u8> {
    prop_oneof![Just(4u8), Just(6u8), Just(8u8)]
}

proptest! {
    #[test]
    fn a_move_adds_one_disc_plus_its_flips(
        size in size_strategy(),
        choices in proptest::collection::vec(any::<u8>(), 0..60),
    ) {
        for pos in play_out(size, &choices) {
            for sq in squares(pos.legal_moves()) {
                let me = pos.to_move();
                let before = (pos.discs_of(me), pos.discs_of(me.opponent()));
                let (next, flips) = pos.play(Move::Play(sq)).unwrap();
                prop_assert!(flips != 0);
                prop_assert_eq!(next.discs_of(me), before.0 | flips | sq.bit());
                prop_assert_eq!(next.discs_of(me.opponent()), before.1 & !flips);
                prop_assert_eq!(
                    next.discs_of(me).count_ones(),
                    before.0.count_ones() + 1 + flips.count_ones()
                );
                prop_assert_eq!(next.to_move(), me.opponent());
            }
        }
    }

    #[test]
    fn the_board_string_round_trips(
        size in size_strategy(),
        choices in proptest::collection::vec(any::<u8>(), 0..60),
    ) {
        for pos in play_out(size, &choices) {
            let s = board_string(&pos);
            prop_assert_eq!(s.len(), size as usize * size as usize);
            prop_assert_eq!(parse_board_string(&s, pos.to_move()).unwrap(), pos);
        }
    }

    #[test]
    fn moves_are_invariant_under_the_eight_symmetries(
        size in size_strategy(),
        choices in proptest::collection::vec(any::<u8>(), 0..60),
    ) {
        for pos in play_out(size, &choices) {
            for sym in 0..8u8 {
                let t = pos.transformed(sym);
                let expected = squares(pos.legal_moves())
                    .fold(0u64, |acc, sq| acc | transform_square(sq, size, sym).bit());
                prop_assert_eq!(t.legal_moves(), expected, "symmetry {}", sym);
            }
        }
    }
}
