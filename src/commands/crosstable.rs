//! `tournament crosstable`: the standings computed from a results folder.

use std::io::IsTerminal;
use std::path::Path;

use crate::cli::CrosstableArgs;
use crate::error::{exit, HarnessError};
use crate::rating::crosstable;
use crate::report::crosstable::{render_with, Layout, TableFormat};
use crate::results::{read_results, read_schedule};

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

/// The crosstable of `results` as text in `format`, a big field bounded.
pub fn render_results(
    results: &Path,
    players: &[String],
    format: TableFormat,
) -> anyhow::Result<String> {
    render_results_with(results, players, format, Layout::default())
}

/// [`render_results`] laid out by `layout`.
pub fn render_results_with(
    results: &Path,
    players: &[String],
    format: TableFormat,
    layout: Layout,
) -> anyhow::Result<String> {
    let records = read_results(results, false)?;
    let mut table = crosstable(&records, players);
    if let Some(test) = read_schedule(results)?.and_then(|s| s.sprt) {
        let kept = crate::results::read_sprt_verdict(results)?;
        table = table.with_sprt(test, kept.as_ref());
    }
    let text = render_with(&table, format, stdout_color(), layout);
    Ok(with_sandbox(text, format, results))
}

/// Adds how the bots were sandboxed (when the run said so) as a footer
/// line, or a `"sandbox"` key in JSON.
fn with_sandbox(text: String, format: TableFormat, results: &Path) -> String {
    let Some(st) = crate::sandbox::Statement::read(results) else {
        return text;
    };
    match format {
        TableFormat::Json => match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(serde_json::Value::Object(mut map)) => {
                map.insert(
                    "sandbox".into(),
                    serde_json::json!({"level": st.level, "why": st.why}),
                );
                serde_json::to_string_pretty(&serde_json::Value::Object(map)).unwrap_or(text) + "\n"
            }
            _ => text,
        },
        TableFormat::Csv => text,
        _ => format!("{text}{}\n", st.line()),
    }
}

pub fn run(args: &CrosstableArgs) -> anyhow::Result<i32> {
    let format = parse_format(&args.format)?;
    let config = optional_config(args.config.as_deref())?;
    let results = results_dir(args.results.as_deref(), config.as_ref());
    games_file(&results)?;
    let players: Vec<String> = config
        .map(|c| c.players.iter().map(|p| p.name.clone()).collect())
        .unwrap_or_default();
    let layout = Layout { full: args.full };
    print!(
        "{}",
        render_results_with(&results, &players, format, layout)?
    );
    print_share_states(&results, format)?;
    Ok(exit::OK)
}

/// For a results folder played in shares: one line per share (done,
/// running, stopped, missing), on stdout after a text or markdown table,
/// on stderr after CSV or JSON (which stay machine-readable).
pub fn print_share_states(results: &Path, format: TableFormat) -> anyhow::Result<()> {
    let Some(text) = share_summary(results)? else {
        return Ok(());
    };
    match format {
        TableFormat::Json | TableFormat::Csv => eprint!("{text}"),
        _ => print!("{text}"),
    }
    Ok(())
}

/// `shares: 3 of 4 done` and a line per share, for a results folder
/// played in shares.
pub fn share_summary(results: &Path) -> anyhow::Result<Option<String>> {
    let Some(states) = crate::results::share_states(results)? else {
        return Ok(None);
    };
    let done = states.iter().filter(|s| s.is_done()).count();
    let mut text = format!("shares: {done} of {} done\n", states.len());
    for s in &states {
        text.push_str(&format!("  share {s}\n"));
    }
    Ok(Some(text))
}
