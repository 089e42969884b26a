//! The built-in bots (`tournament bot NAME`): separate processes that speak
//! mailbox protocol v1 through files like any other bot.
//!
//! Owns the bot side of the conversation for the built-ins. The referee
//! never calls into this module: it spawns the binary.

mod strategy;

use std::hash::{Hash, Hasher};
use std::path::Path;

use rand::SeedableRng;

pub use strategy::{weight, Strategy};

use crate::game::Move;
use crate::mailbox::BotMailbox;
use crate::protocol::{Reply, Request, Verb};

/// A generator seeded by the bot's seed and the game id only, so a game
/// replayed (after a resume) sees the same choices.
fn game_rng(seed: u64, game_id: &str) -> rand::rngs::StdRng {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    seed.hash(&mut h);
    game_id.hash(&mut h);
    rand::rngs::StdRng::seed_from_u64(h.finish())
}

/// Runs a built-in bot in `dir` until killed (or, with `games`, after that
/// many END messages).
pub fn run(strategy: Strategy, seed: u64, dir: &Path, games: Option<u32>) -> std::io::Result<()> {
    let mut mailbox = BotMailbox::new(dir)?;
    let mut rng = game_rng(seed, "");
    let mut ended = 0;
    loop {
        let Some(msg) = mailbox.next_message(None) else {
            // Without a deadline only a closed pipe ends the wait: the
            // referee is gone.
            return Ok(());
        };
        let reply = match Request::decode(&msg.text) {
            Ok(Request::New { game, .. }) => {
                rng = game_rng(seed, &game);
                Reply::Ready
            }
            Ok(Request::Turn { pos, .. }) => Reply::Move(strategy.choose(&pos, &mut rng)),
            // A TURN whose board cannot be read: nothing to choose from.
            Err(e) if e.verb() == Some(Verb::Turn) => Reply::Move(Move::Pass),
            Ok(Request::End { .. }) => {
                ended += 1;
                Reply::Bye
            }
            Err(e) if e.verb() == Some(Verb::End) => {
                ended += 1;
                Reply::Bye
            }
            Err(e) if e.verb() == Some(Verb::New) => Reply::Ready,
            Ok(Request::Illegal { .. } | Request::Other(_)) | Err(_) => Reply::Ok,
        };
        let answer = reply.encode();
        mailbox.answer(&msg, &answer)?;
        if games.is_some_and(|g| ended >= g) {
            return Ok(());
        }
    }
}
