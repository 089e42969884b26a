//! The tournament's schedule and its execution: pairings and openings
//! (pure), where games are played and kept (`venue`: the board's lock,
//! the instances' numbers, the GGF copies), and the worker pool that
//! plays them. Which games come next in each format, given the records so
//! far, is the `scheduler` module's, above this one and `results`.
//!
//! Owns the order of games and their concurrency; the results store and
//! resume decisions live in `results`, the games themselves in `referee`.

mod matching;
mod pairings;
mod pool;
pub mod swiss;
pub mod venue;

pub use pairings::{
    gauntlet, random_openings, round_robin, schedule, with_added_players, ScheduledGame,
};
pub use pool::{run_games, PoolSetup};

use crate::config::{Config, Format, OpeningSource};

/// The openings a tournament definition plays, as many as its pairings
/// (round robin, gauntlet) or rounds (Swiss) need: random ones, or the
/// first lines of its file or of the shipped list (all of them, repeated
/// in turn by the schedule, when they are fewer).
pub fn openings(config: &Config) -> Vec<String> {
    let needed = match config.format {
        Format::Swiss => config.rounds as usize,
        _ => config.games_per_pairing.div_ceil(2) as usize,
    };
    match &config.openings {
        OpeningSource::Random { plies, seed } => {
            random_openings(config.size, *plies, *seed, needed)
        }
        OpeningSource::File { lines, .. } | OpeningSource::Shipped { lines, .. } => {
            lines.iter().take(needed.max(1)).cloned().collect()
        }
    }
}

/// The full schedule of a tournament definition; for a Swiss event, its
/// first round (the later ones depend on the results).
pub fn build(config: &Config) -> Vec<ScheduledGame> {
    let names: Vec<String> = config.players.iter().map(|p| p.name.clone()).collect();
    let pairs = match config.format {
        Format::RoundRobin => round_robin(names.len()),
        Format::Gauntlet => {
            let champion = config
                .gauntlet_player
                .as_ref()
                .and_then(|g| names.iter().position(|n| n == g))
                .unwrap_or(0);
            gauntlet(names.len(), champion)
        }
        Format::Swiss => {
            let first = swiss::pair_round(&swiss::History::new(names.len()), 1)
                .expect("a first round always pairs");
            let openings = openings(config);
            return swiss::round_games(&names, &first, 1, &openings[0]);
        }
    };
    schedule(&names, &pairs, config.games_per_pairing, &openings(config))
}
