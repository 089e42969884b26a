//! `tournament report`: one self-contained HTML file of a results folder
//! (crosstable, player statistics, every game in a board viewer), by
//! default `<results>/report.html`.
//!
//! Owns finding the inputs and writing the file; the page itself is
//! `report::html`, the standings `rating::crosstable`.

use crate::cli::ReportArgs;
use crate::error::{exit, HarnessError};
use crate::rating::crosstable;
use crate::report::{ggf, html};

use super::export::{load_records, tournament_name};
use super::output::Protected;
use super::players::{optional_config, results_dir};

pub fn run(args: &ReportArgs) -> anyhow::Result<i32> {
    let config = optional_config(args.config.as_deref())?;
    let results = results_dir(args.results.as_deref(), config.as_ref());
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| results.join("report.html"));
    Protected::new(&results, config.as_ref()).check_file(&output, "the report")?;
    let records = load_records(&results)?;
    let players: Vec<String> = config
        .as_ref()
        .map(|c| c.players.iter().map(|p| p.name.clone()).collect())
        .unwrap_or_default();
    let mut table = crosstable(&records, &players);
    if let Some(test) = crate::results::read_schedule(&results)?.and_then(|s| s.sprt) {
        let kept = crate::results::read_sprt_verdict(&results)?;
        table = table.with_sprt(test, kept.as_ref());
    }
    let title = tournament_name(&results, config.as_ref());
    let mut generated = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    if let Some(st) = crate::sandbox::Statement::read(&results) {
        generated.push_str(&format!(" · {}", st.line()));
    }
    if let Some(text) = super::crosstable::share_summary(&results)? {
        generated.push_str(&format!(" · {}", text.lines().next().unwrap_or_default()));
    }
    let logs = logs_href(&output, &results);
    let page = html::render_with_logs(&title, &generated, &records, &table, &logs);
    ggf::write_atomically(&output, page.as_bytes())
        .map_err(|e| HarnessError::results_unwritable(&output, e))?;
    println!("{}", output.display());
    // A tournament in shares: which of them the games came from.
    if let Some(text) = super::crosstable::share_summary(&results)? {
        eprint!("{text}");
    }
    Ok(exit::OK)
}

/// Where a report written to `report` finds the games' logs of `results`:
/// `logs/` beside it when it is in the results folder (the default), else
/// the logs folder's absolute `file://` address.
fn logs_href(report: &std::path::Path, results: &std::path::Path) -> String {
    use super::output::absolute;
    if report.parent().map(absolute) == Some(absolute(results)) {
        return "logs/".into();
    }
    let mut href = String::from("file://");
    for part in absolute(&results.join("logs")).iter().skip(1) {
        href.push('/');
        href.push_str(&html::encode_fragment(&part.to_string_lossy()));
    }
    href.push('/');
    href
}
