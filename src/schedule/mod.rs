//! The tournament's schedule and its execution: pairings and openings
//! (pure), and the worker pool that plays them.
//!
//! Owns the order of games and their concurrency; the results store and
//! resume decisions live in `results`, the games themselves in `referee`.

mod pairings;
mod pool;

pub use pairings::{
    check_opening, check_openings, gauntlet, random_openings, round_robin, schedule, ScheduledGame,
};
pub use pool::{last_instance_on, run_games, PoolSetup};

use crate::config::{Config, Format, OpeningSource};

/// The full schedule of a tournament definition.
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
    };
    let needed = config.games_per_pairing.div_ceil(2) as usize;
    let openings = match &config.openings {
        OpeningSource::Random { plies, seed } => {
            random_openings(config.size, *plies, *seed, needed)
        }
        OpeningSource::File { lines, .. } => lines.clone(),
    };
    schedule(&names, &pairs, config.games_per_pairing, &openings)
}
