//! A complete Othello bot for `tournament` in Rust, on this crate alone:
//! it plays the first legal move. Build it with
//! `cargo build --release -p mailbox-protocol --example first_legal` and
//! list it in tournament.toml:
//!
//! ```toml
//! [[player]]
//! name = "rust-first"
//! command = ["target/release/examples/first_legal"]
//! ```
//!
//! The referee starts it in its mailbox folder (also named in
//! `TOURNAMENT_MAILBOX`); [`BotMailbox`] waits for each message in
//! `in.txt` and writes each answer to `out.txt`, the way PROTOCOL.md says,
//! or takes the pipe the referee offers and goes on through it.

use mailbox_protocol::bot::BotMailbox;
use mailbox_protocol::text::{Reply, Request};
use othello::{squares, Move, Square};

fn main() -> std::io::Result<()> {
    let dir = std::env::var_os("TOURNAMENT_MAILBOX").unwrap_or_else(|| ".".into());
    let mut mailbox = BotMailbox::new(std::path::Path::new(&dir))?;
    loop {
        let Some(msg) = mailbox.next_message(None) else {
            // Without a deadline only a closed pipe ends the wait: the
            // referee is gone.
            return Ok(());
        };
        let reply = match Request::decode(&msg.text) {
            Ok(Request::New { .. }) => Reply::Ready,
            Ok(Request::Turn { pos, .. }) => {
                let first: Option<Square> = squares(pos.legal_moves()).next();
                Reply::Move(first.map_or(Move::Pass, Move::Play))
            }
            Ok(Request::End { .. }) => Reply::Bye,
            // ILLEGAL, a word of a later referee, or a text it cannot read.
            Ok(_) | Err(_) => Reply::Ok,
        };
        // After BYE the next game may come to the same process: wait on.
        mailbox.answer(&msg, &reply.encode())?;
    }
}
