//! Mailbox protocol v1 of `tournament` (PROTOCOL.md), as a library a Rust
//! bot or another referee can use on its own (`examples/first_legal.rs` is
//! a whole bot).
//!
//! Owns the wire and both ends' file work: [`message`], the four-line
//! frame of a move file (from, to, seq, text), with its completeness rule
//! and size limit; [`text`], the words on line 4 (the referee's requests
//! and a bot's replies), with the one encoder and the one decoder of each;
//! [`files`], reading and replacing move files safely in a folder that may
//! be hostile; [`drive`], what the drive under a folder allows of those
//! operations (a Windows share refuses to replace a file someone holds
//! open); [`doorbell`], waking a waiter when a move file may have
//! changed; [`pipe`], the optional pipe a bot the referee starts may take
//! instead of the files; [`bot`], the bot's side of a mailbox. Must not take or know the
//! board's lock, lay out a board, start processes or judge a move: those
//! are the tournament's (`mailbox`, `player`, `referee`), the rules are the
//! `othello` crate's.

pub mod bot;
pub mod doorbell;
pub mod drive;
pub mod files;
pub mod message;
pub mod pipe;
pub mod text;

/// The file only the referee writes, in a bot's mailbox folder.
pub const IN_FILE: &str = "in.txt";
/// The file only the bot writes.
pub const OUT_FILE: &str = "out.txt";

pub use message::{
    Decoded, FrameError, Message, IN_RECORD, MAX_MESSAGE_BYTES, OUT_RECORD, PAD, REFEREE,
};
