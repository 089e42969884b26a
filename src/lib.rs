//! `tournament`: Othello tournaments between bots written in any language,
//! refereed through move files in a shared message-board folder.

pub mod builtin;
pub mod cli;
pub mod commands;
pub mod config;
pub mod error;
pub mod event;
pub mod game;
pub mod logging;
pub mod mailbox;
pub mod player;
pub mod record;
pub mod referee;
pub mod report;
