//! `tournament`: Othello tournaments between bots written in any language,
//! refereed through move files in a shared message-board folder.

pub mod cli;
pub mod commands;
pub mod error;
pub mod game;
pub mod logging;
pub mod mailbox;
