//! Turning what a user typed into players, a config and a results folder:
//! built-in names, names from tournament.toml, or command lines.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::cli::default_config;
use crate::config::{self, Config};
use crate::error::HarnessError;
use crate::player::{Launch, PlayerSpec, Restart, BUILTINS};

/// The config named on the command line (it must load), or
/// ./tournament.toml if it exists, or none.
pub fn optional_config(given: Option<&Path>) -> anyhow::Result<Option<Config>> {
    let path = match given {
        Some(p) => p.to_path_buf(),
        None if default_config().exists() => default_config(),
        None => return Ok(None),
    };
    config::load(&path)
        .map(Some)
        .map_err(|e| HarnessError::ConfigFile(e).into())
}

/// The results folder: `--results`, else the config's, else `./results`.
pub(super) fn results_dir(given: Option<&Path>, config: Option<&Config>) -> PathBuf {
    given
        .map(Path::to_path_buf)
        .or(config.map(|c| c.results.clone()))
        .unwrap_or_else(|| "results".into())
}

/// A name for a command-line player: the script's (or program's) file stem,
/// reduced to letters, digits, `-` and `_`.
pub(crate) fn name_for(argv: &[String]) -> String {
    let pick = argv
        .iter()
        .rev()
        .find(|a| a.contains('.') || a.contains('/'))
        .or(argv.first())
        .map(String::as_str)
        .unwrap_or("bot");
    let stem = Path::new(pick)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("bot");
    let mut name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(crate::mailbox::MAX_NAME_LEN)
        .collect();
    if name.is_empty() {
        name = "bot".into();
    }
    name
}

/// A player from what the user typed: a built-in, a config player, or a
/// command line (split like a shell would, but run without one).
pub fn resolve(text: &str, config: Option<&Config>, seed: u64) -> anyhow::Result<PlayerSpec> {
    if let Some(p) = config.and_then(|c| c.player(text)) {
        return Ok(p.clone());
    }
    if BUILTINS.contains(&text) {
        return Ok(PlayerSpec::builtin(text, seed));
    }
    let argv = shell_words::split(text)
        .with_context(|| format!("cannot split the player command `{text}`"))?;
    if argv.is_empty() {
        return Err(HarnessError::Config("a player cannot be empty".into()).into());
    }
    let base: PathBuf = std::env::current_dir()?;
    let spec = PlayerSpec {
        name: name_for(&argv),
        launch: Launch::Command(argv),
        restart: Restart::Reuse,
        base_dir: base,
        seed,
        board_as: None,
        sandbox: Default::default(),
        protocol: Default::default(),
        engine: Default::default(),
        pipe: true,
        workdir: None,
    };
    if let Err(msg) = spec.resolve() {
        let known = config
            .map(|c| {
                format!(
                    ", nor a player in {} ({})",
                    c.path.display(),
                    c.players
                        .iter()
                        .map(|p| p.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })
            .unwrap_or_default();
        return Err(HarnessError::PlayerUnavailable(format!(
            "{msg}\n`{text}` is not a built-in bot ({}){known}",
            BUILTINS.join(", ")
        ))
        .into());
    }
    Ok(spec)
}
