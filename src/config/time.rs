//! The `[time]` table (move, start-up, bank and wait times) and the
//! `[rules]` table (retries, ask-pass).
//!
//! Owns those checks (a time is at least 1 ms) and their words; must not
//! read files or look at other tables.

use toml::Spanned;

use crate::referee::{Rules, TimeControl};

use super::error::Source;
use super::raw::{RawRules, RawTime};
use super::ConfigError;

/// A time in milliseconds written at `key`: at least 1, or `default` if
/// not written.
pub(super) fn positive_ms(
    src: &Source<'_>,
    v: &Option<Spanned<u64>>,
    key: &str,
    default: u64,
) -> Result<u64, ConfigError> {
    match v {
        None => Ok(default),
        Some(s) if *s.get_ref() == 0 => Err(src.error_at(
            s.span(),
            Some(key),
            "expected a time in milliseconds of at least 1".into(),
        )),
        Some(s) => Ok(*s.get_ref()),
    }
}

/// The clock of every game.
pub(super) fn time(src: &Source<'_>, raw: &RawTime) -> Result<TimeControl, ConfigError> {
    let defaults = TimeControl::default();
    Ok(TimeControl {
        move_ms: positive_ms(src, &raw.move_ms, "time.move-ms", defaults.move_ms)?,
        startup_ms: positive_ms(src, &raw.startup_ms, "time.startup-ms", defaults.startup_ms)?,
        bank_ms: raw.bank_ms,
        wait_ms: raw.wait_ms,
    })
}

/// The referee's rules (nothing to refuse: serde checked the types).
pub(super) fn rules(raw: &RawRules) -> Rules {
    Rules {
        max_retries: raw.max_retries,
        ask_pass: raw.ask_pass,
    }
}
