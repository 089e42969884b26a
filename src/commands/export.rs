//! `tournament export`: every finished game of a results folder as one GGF
//! file (`--ggf FILE`) and the 8×8 games as WTHOR database files
//! (`--wthor DIR`).
//!
//! Owns finding the results, writing the export files and saying what was
//! left out. Always works from `games.jsonl`, never from the per-game
//! `.ggf` files (it writes the missing ones as it goes, best effort). The
//! formats themselves live in `report::ggf` and `report::wthor`.

use std::path::{Path, PathBuf};

use crate::cli::ExportArgs;
use crate::config::Config;
use crate::error::{exit, HarnessError};
use crate::record::GameRecord;
use crate::report::ggf;
use crate::report::wthor;
use crate::results::{read_results, GAMES_FILE, SCHEDULE_FILE};

use super::output::Protected;

use super::players::{optional_config, results_dir};

/// The `games.jsonl` of `results`; a missing one is the user's mistake
/// (wrong folder, or nothing played yet).
pub(super) fn games_file(results: &Path) -> Result<PathBuf, HarnessError> {
    let file = results.join(GAMES_FILE);
    if !crate::results::has_games(results) {
        return Err(HarnessError::Config(format!(
            "{} does not exist: no games were played into {} yet (or pass --results)",
            file.display(),
            results.display()
        )));
    }
    Ok(file)
}

/// The finished games of `results` (refused if any is not of the
/// folder's schedule).
pub(super) fn load_records(results: &Path) -> anyhow::Result<Vec<GameRecord>> {
    games_file(results)?;
    Ok(read_results(results, true)?)
}

/// The tournament's name: the one stored with the results' schedule, else
/// the config's, else the results folder's own name.
pub(super) fn tournament_name(results: &Path, config: Option<&Config>) -> String {
    #[derive(serde::Deserialize)]
    struct Stored {
        tournament: String,
    }
    if let Some(stored) = std::fs::read_to_string(results.join(SCHEDULE_FILE))
        .ok()
        .and_then(|t| serde_json::from_str::<Stored>(&t).ok())
        .filter(|s| !s.tournament.trim().is_empty())
    {
        return stored.tournament;
    }
    if let Some(c) = config {
        return c.name.clone();
    }
    std::fs::canonicalize(results)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "tournament".into())
}

fn unwritable(path: &Path, error: std::io::Error) -> anyhow::Error {
    HarnessError::results_unwritable(path, error).into()
}

/// Today's date (UTC), for WTHOR headers.
fn today() -> wthor::Date {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    wthor::Date::from_rfc3339(&now).unwrap_or(wthor::Date {
        year: 1970,
        month: 1,
        day: 1,
    })
}

fn export_ggf(file: &Path, results: &Path, records: &[GameRecord]) -> anyhow::Result<()> {
    let mut text = String::new();
    for r in records {
        text.push_str(&ggf::game(r));
        text.push('\n');
    }
    ggf::write_atomically(file, text.as_bytes()).map_err(|e| unwritable(file, e))?;
    eprintln!("{} games written to {}", records.len(), file.display());
    // The per-game files the run did not write (results from before they
    // existed): best effort, a read-only results folder is not an error.
    let mut failed = None;
    let mut added = 0;
    for r in records {
        if ggf::game_file_path(results, &r.id).exists() {
            continue;
        }
        match ggf::write_game_file(results, r) {
            Ok(_) => added += 1,
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    if added > 0 {
        eprintln!(
            "{added} missing game files written to {}",
            results.join(ggf::GAMES_DIR).display()
        );
    }
    if let Some(e) = failed {
        eprintln!(
            "note: cannot write the per-game files into {}: {e}",
            results.join(ggf::GAMES_DIR).display()
        );
    }
    Ok(())
}

fn export_wthor(
    dir: &Path,
    records: &[GameRecord],
    tournament: &str,
    protected: &Protected,
) -> anyhow::Result<()> {
    let db = wthor::database(records, tournament, today());
    if !db.skipped.is_empty() {
        eprintln!(
            "WTHOR: skipped {} of {} games:",
            db.skipped.len(),
            records.len()
        );
        for (id, why) in &db.skipped {
            eprintln!("  {id}: {why}");
        }
    }
    if db.games == 0 {
        eprintln!("WTHOR: no 8x8 games to export; nothing written");
        return Ok(());
    }
    match std::fs::create_dir(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(unwritable(dir, e)),
        _ => {}
    }
    for (name, bytes) in &db.files {
        let path = dir.join(name);
        protected.check_file(&path, "a WTHOR file")?;
        ggf::write_atomically(&path, bytes).map_err(|e| unwritable(&path, e))?;
    }
    let names: Vec<&str> = db.files.iter().map(|(n, _)| n.as_str()).collect();
    eprintln!(
        "{} games written to {} ({})",
        db.games,
        dir.display(),
        names.join(", ")
    );
    Ok(())
}

pub fn run(args: &ExportArgs) -> anyhow::Result<i32> {
    if args.ggf.is_none() && args.wthor.is_none() {
        return Err(HarnessError::Config(
            "nothing to export: give --ggf FILE (all games in one GGF file) and/or --wthor DIR (8x8 games as WTHOR files)"
                .into(),
        )
        .into());
    }
    let config = optional_config(args.config.as_deref())?;
    let results = results_dir(args.results.as_deref(), config.as_ref());
    let protected = Protected::new(&results, config.as_ref());
    // Checked before anything is written: a refused target leaves no half
    // export behind.
    if let Some(file) = &args.ggf {
        protected.check_file(file, "the GGF export")?;
    }
    if let Some(dir) = &args.wthor {
        protected.check_folder(dir, "the WTHOR export")?;
    }
    let records = load_records(&results)?;
    if let Some(file) = &args.ggf {
        export_ggf(file, &results, &records)?;
    }
    if let Some(dir) = &args.wthor {
        let name = tournament_name(&results, config.as_ref());
        export_wthor(dir, &records, &name, &protected)?;
    }
    // A tournament in shares: which of them the games came from.
    if let Some(text) = super::crosstable::share_summary(&results)? {
        eprint!("{text}");
    }
    Ok(exit::OK)
}
