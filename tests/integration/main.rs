//! The one integration-test binary: the rules against published numbers and
//! real games, and the `tournament` command run as a user runs it.

mod bots;
mod faults;
mod fixture;
mod live_page;
mod mailbox;
mod records;
mod referee;
mod rules;
mod tournament;
