//! `tournament crosstable`: the standings computed from a results folder.

use std::io::IsTerminal;
use std::path::Path;

use crate::cli::CrosstableArgs;
use crate::error::{exit, HarnessError};
use crate::rating::crosstable;
use crate::report::crosstable::{render, TableFormat};
use crate::results::read_results;

use super::export::games_file;
use super::players::{optional_config, results_dir};

/// Whether stdout wants colour: a terminal, and NO_COLOR unset.
pub fn stdout_color() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
}

pub fn parse_format(text: &str) -> Result<TableFormat, HarnessError> {
    text.parse::<TableFormat>()
        .map_err(|e| HarnessError::Config(format!("--format: {e}")))
}

/// The crosstable of `results` as text in `format`.
pub fn render_results(
    results: &Path,
    players: &[String],
    format: TableFormat,
) -> anyhow::Result<String> {
    let records = read_results(results, false)?;
    let table = crosstable(&records, players);
    Ok(render(&table, format, stdout_color()))
}

pub fn run(args: &CrosstableArgs) -> anyhow::Result<i32> {
    let format = parse_format(&args.format)?;
    let config = optional_config(args.config.as_deref())?;
    let results = results_dir(args.results.as_deref(), config.as_ref());
    games_file(&results)?;
    let players: Vec<String> = config
        .map(|c| c.players.iter().map(|p| p.name.clone()).collect())
        .unwrap_or_default();
    print!("{}", render_results(&results, &players, format)?);
    Ok(exit::OK)
}
