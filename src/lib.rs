//! `tournament`: Othello tournaments between bots written in any language,
//! refereed through move files in a shared message-board folder.

pub mod builtin;
pub mod checkbot;
pub mod cli;
pub mod commands;
pub mod config;
pub mod engine;
pub mod error;
pub mod event;
/// The rules of Othello: the `othello` crate.
pub use othello as game;
pub mod input_file;
pub mod interrupt;
pub mod logging;
pub mod mailbox;
pub mod pid;
pub mod player;
pub mod program;
/// The texts of mailbox protocol v1: the `mailbox-protocol` crate's `text`.
pub use mailbox_protocol::text as protocol;
pub mod rating;
pub mod record;
pub mod referee;
pub mod report;
pub mod results;
pub mod sandbox;
pub mod schedule;
pub mod scheduler;
pub mod serve;
pub mod shard;
pub mod time_control;
