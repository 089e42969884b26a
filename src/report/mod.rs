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

/// One line saying how a game ended, the winner first with the winner's
/// score first, e.g. `greedy (white) beat random (black) 40-24 (normal)`.
/// Scores are the discs after win-or-forfeit scoring.
pub fn result_line(r: &GameRecord) -> String {
    let (b, w) = (r.discs_wof.black, r.discs_wof.white);
    match r.result {
        Winner::Draw => format!(
            "{} (black) and {} (white) drew {b}-{w} ({})",
            r.black, r.white, r.reason
        ),
        Winner::Black => format!(
            "{} (black) beat {} (white) {b}-{w} ({})",
            r.black, r.white, r.reason
        ),
        Winner::White => format!(
            "{} (white) beat {} (black) {w}-{b} ({})",
            r.white, r.black, r.reason
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::tests::game;

    #[test]
    fn the_winners_score_comes_first_beside_the_winners_name() {
        let r = game("random", "python-weighted", Winner::White, (22, 42));
        assert_eq!(
            result_line(&r),
            "python-weighted (white) beat random (black) 42-22 (normal)"
        );
        let r = game("random", "python-weighted", Winner::Black, (42, 22));
        assert_eq!(
            result_line(&r),
            "random (black) beat python-weighted (white) 42-22 (normal)"
        );
    }
}
