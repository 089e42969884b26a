//! The rules of Othello: positions, moves, notation and perft.
//!
//! Owns everything about the game itself and nothing about processes, files
//! or time. Every function here is pure, so the referee, the built-in bots,
//! the tests and the benchmarks all share one definition of a legal move.
//! With the feature `serde`, colours and moves (de)serialise as their
//! notation's text (`black`, `d3`, `pass`).

mod board;
mod notation;
mod perft;
#[cfg(feature = "serde")]
mod serde_form;

pub use board::{
    squares, transform_square, Color, Discs, IllegalMove, Move, Position, Square, SIZES,
};
pub use notation::{
    board_string, diagram, diagram_marked, move_name, parse_board_string, parse_move, parse_square,
    replay_transcript, square_name, transcript, NotationError,
};
pub use perft::{perft, PUBLISHED_8X8};
