//! What Ctrl-C (SIGINT) and SIGTERM do.
//!
//! Owns the signal policy only: one-game commands stop at once; a
//! tournament lets running games finish on the first signal and stops at
//! once (killing every bot) on the second.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use crate::error::exit;
use crate::player::process::kill_all;

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicU32 = AtomicU32::new(0);

/// Set once a stop was requested: start no further game.
pub fn stop_requested() -> &'static AtomicBool {
    &STOP
}

/// For one-game commands: the first signal kills every bot and exits 130.
pub fn stop_at_once() {
    let _ = ctrlc::set_handler(|| {
        eprintln!("interrupted: stopping the bots");
        kill_all();
        std::process::exit(exit::INTERRUPTED);
    });
}

/// For tournaments: the first signal finishes the running games and stops
/// (the run can be resumed); the second kills every bot and exits 130.
pub fn finish_then_stop() {
    let _ = ctrlc::set_handler(|| {
        if SIGNALS.fetch_add(1, Ordering::SeqCst) == 0 {
            STOP.store(true, Ordering::SeqCst);
            crate::logging::print_line(
                "stopping: the running games finish, no new game starts (Ctrl-C again to stop at once)",
            );
        } else {
            eprintln!("stopping at once: killing the bots; unfinished games are played again on the next run");
            kill_all();
            std::process::exit(exit::INTERRUPTED);
        }
    });
}
