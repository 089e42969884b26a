//! Mailbox protocol v1 of `tournament` (PROTOCOL.md), as a library a Rust
//! bot or another referee can use on its own.
//!
//! Owns the wire: [`message`], the four-line frame of a move file (from,
//! to, seq, text), with its completeness rule and size limit; [`text`], the
//! words on line 4 (the referee's requests and a bot's replies), with the
//! one encoder and the one decoder of each. Must not read or write files,
//! wait, or judge a move: the move files, the lock and the waiting are the
//! tournament's `mailbox` module, the rules are the `othello` crate's.

pub mod message;
pub mod text;

pub use message::{
    Decoded, FrameError, Message, IN_RECORD, MAX_MESSAGE_BYTES, OUT_RECORD, PAD, REFEREE,
};
