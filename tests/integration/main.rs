//! The one integration-test binary: the rules against published numbers and
//! real games, and the `tournament` command run as a user runs it.

mod bots;
mod cheats;
mod engines;
mod faults;
mod first_hour;
mod fixture;
mod hostile;
mod hostile_board;
mod live_page;
mod mailbox;
mod records;
mod referee;
mod rules;
mod tournament;
