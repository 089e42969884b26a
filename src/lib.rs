//! `tournament`: Othello tournaments between bots written in any language,
//! refereed through move files in a shared message-board folder.

pub mod bench;
pub mod builtin;
pub mod checkbot;
pub mod cli;
pub mod commands;
pub mod config;
pub mod engine;
pub mod error;
pub mod event;
pub mod game;
pub mod input_file;
pub mod interrupt;
pub mod logging;
pub mod mailbox;
pub mod pid;
pub mod player;
pub mod protocol;
pub mod rating;
pub mod record;
pub mod referee;
pub mod report;
pub mod results;
pub mod sandbox;
pub mod schedule;
pub mod serve;
