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

use crate::game::{move_name, parse_board_string, Color};
use crate::mailbox::BotMailbox;

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
            continue;
        };
        let mut words = msg.text.split(' ');
        let answer = match words.next().unwrap_or("") {
            "NEW" => {
                rng = game_rng(seed, words.next().unwrap_or(""));
                "READY".to_string()
            }
            "TURN" => {
                let color = match words.next() {
                    Some("white") => Color::White,
                    _ => Color::Black,
                };
                match parse_board_string(words.next().unwrap_or(""), color) {
                    Ok(pos) => move_name(strategy.choose(&pos, &mut rng)),
                    Err(_) => "pass".to_string(),
                }
            }
            "END" => {
                ended += 1;
                "BYE".to_string()
            }
            _ => "OK".to_string(),
        };
        mailbox.answer(&msg, &answer)?;
        if games.is_some_and(|g| ended >= g) {
            return Ok(());
        }
    }
}
