//! Console logging through tracing: the level from `-v`/`-q` or the
//! `TOURNAMENT_LOG` environment variable (an `EnvFilter` string).
//!
//! Owns only the subscriber set-up; what is logged is decided where it happens.

use tracing_subscriber::{fmt, prelude::*, EnvFilter};

/// The environment variable that overrides `-v`/`-q`, e.g. `TOURNAMENT_LOG=debug`.
pub const ENV_FILTER: &str = "TOURNAMENT_LOG";

/// Installs the global subscriber. Safe to call once per process.
pub fn init(verbose: u8, quiet: bool) {
    let default = if quiet {
        "warn"
    } else {
        match verbose {
            0 => "info",
            1 => "debug",
            _ => "trace",
        }
    };
    let filter = EnvFilter::try_from_env(ENV_FILTER).unwrap_or_else(|_| EnvFilter::new(default));
    let console = fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_filter(filter);
    let _ = tracing_subscriber::registry().with(console).try_init();
}
