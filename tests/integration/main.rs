//! The one integration-test binary: the rules against published numbers and
//! real games, and the `tournament` command run as a user runs it.

mod bots;
mod browser_seat;
mod by_hand;
mod cheats;
mod class_drive;
mod class_share;
mod crosstable;
mod engines;
mod faults;
mod first_hour;
mod fixed_length;
mod fixture;
mod hostile;
mod hostile_board;
mod live_page;
mod live_page_layout;
mod live_page_siege;
mod mailbox;
mod needs;
mod openings;
mod people;
mod records;
mod referee;
mod rules;
mod shards;
mod swiss;
mod tournament;
