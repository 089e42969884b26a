//! What Ctrl-C (SIGINT), SIGTERM and a closed stdout (EPIPE) do.
//!
//! Owns the signal policy only: one-game commands stop at once; a
//! tournament lets running games finish on the first signal, for at most
//! [`STOP_GRACE`] (a process manager's TERM — `timeout`, systemd,
//! `docker stop` — must end the run even when a game waits for a bot that
//! is gone), and stops at once (killing every bot) on the second signal or
//! when the grace is over. A result being written is finished first.
//! When the reader of stdout goes away (`| head`), every command stops
//! quietly, killing its bots.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::error::exit;
use crate::player::process::kill_all;

static STOP: AtomicBool = AtomicBool::new(false);
static SIGNALS: AtomicU32 = AtomicU32::new(0);
/// Held while a finished game's result is written, so a stop never cuts it.
static RECORDING: Mutex<()> = Mutex::new(());

/// How long the running games may go on after the first signal.
pub const STOP_GRACE: Duration = Duration::from_secs(8);

/// Set once a stop was requested: start no further game.
pub fn stop_requested() -> &'static AtomicBool {
    &STOP
}

/// Held while a result is written: a stop at once waits for it.
pub fn recording() -> std::sync::MutexGuard<'static, ()> {
    RECORDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// For one-game commands: the first signal kills every bot and exits 130.
pub fn stop_at_once() {
    let _ = ctrlc::set_handler(|| {
        eprintln!("interrupted: stopping the bots");
        kill_all();
        crate::sandbox::finish();
        std::process::exit(exit::INTERRUPTED);
    });
}

fn stop_now(why: &str) -> ! {
    eprintln!("{why}: killing the bots; unfinished games are played again on the next run");
    let _writing = recording();
    kill_all();
    crate::sandbox::finish();
    std::process::exit(exit::INTERRUPTED);
}

/// For tournaments: the first signal finishes the running games (for at
/// most [`STOP_GRACE`]) and stops (the run can be resumed); the second, or
/// the end of the grace, kills every bot and exits 130.
pub fn finish_then_stop() {
    let _ = ctrlc::set_handler(|| {
        if SIGNALS.fetch_add(1, Ordering::SeqCst) == 0 {
            STOP.store(true, Ordering::SeqCst);
            crate::logging::print_line(&format!(
                "stopping: the running games finish (for at most {} s), no new game starts \
                 (Ctrl-C again to stop at once)",
                STOP_GRACE.as_secs()
            ));
            let _ = std::thread::Builder::new()
                .name("stop-grace".into())
                .spawn(|| {
                    std::thread::sleep(STOP_GRACE);
                    stop_now(&format!(
                        "the running games did not finish within {} s of the stop",
                        STOP_GRACE.as_secs()
                    ));
                });
        } else {
            stop_now("stopping at once");
        }
    });
}

/// True if `err` (or what caused it) is a write to a closed pipe.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Makes `print!`'s panic on a closed stdout ("failed printing to stdout:
/// Broken pipe") a quiet stop: the bots are killed and the process exits
/// with [`exit::STDOUT_CLOSED`]; other panics are reported as before.
pub fn quiet_on_closed_stdout() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let msg = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if msg.starts_with("failed printing to stdout") && msg.contains("os error 32") {
            kill_all();
            std::process::exit(exit::STDOUT_CLOSED);
        }
        default(info)
    }));
}
