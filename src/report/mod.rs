//! Reporters: consumers of the referee's events (console, logs, live file,
//! progress) and the output formats of results (crosstable, exports).
//!
//! Owns presentation only; no reporter can change a game.

mod console;
pub mod crosstable;
pub mod ggf;
pub mod html;
pub mod live;
mod log;
mod progress;
pub mod wthor;

pub use console::ConsoleReporter;
pub use live::LiveFiles;
pub use log::LogReporter;
pub use progress::Progress;

use crate::record::{GameRecord, Winner};

/// One line saying how a game ended, e.g. `greedy (black) beat random 40-24 (normal)`.
pub fn result_line(r: &GameRecord) -> String {
    let score = format!("{}-{}", r.discs_wof.black, r.discs_wof.white);
    match r.result {
        Winner::Draw => format!(
            "{} (black) and {} (white) drew {score} ({})",
            r.black, r.white, r.reason
        ),
        Winner::Black => format!(
            "{} (black) beat {} (white) {score} ({})",
            r.black, r.white, r.reason
        ),
        Winner::White => format!(
            "{} (white) beat {} (black) {score} ({})",
            r.white, r.black, r.reason
        ),
    }
}
