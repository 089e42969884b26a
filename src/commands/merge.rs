//! `tournament merge`: the games of every share of a results folder as one
//! results folder (`games.jsonl` in the schedule's order, with the
//! tournament's `schedule.json` and its SPRT verdict), for whoever wants
//! a single file.
//!
//! Owns choosing and checking the output folder and writing it whole
//! (each file replaced at once); reading the shares is `results`'. Never
//! writes into the shares.

use std::path::Path;

use crate::cli::MergeArgs;
use crate::error::{exit, HarnessError};
use crate::results::{read_results, share_states, GAMES_FILE, SCHEDULE_FILE};

use super::output::Protected;
use super::players::{optional_config, results_dir};

pub fn run(args: &MergeArgs) -> anyhow::Result<i32> {
    let config = optional_config(args.config.as_deref())?;
    let results = results_dir(args.results.as_deref(), config.as_ref());
    let Some(states) = share_states(&results)? else {
        return Err(HarnessError::Config(format!(
            "{} has no shares ({} is missing): nothing to merge; its games.jsonl is already one file",
            results.display(),
            results.join(crate::shard::SHARDS_DIR).display()
        ))
        .into());
    };
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| results.join("merged"));
    Protected::new(&results, config.as_ref()).check_folder(&output, "the merged results")?;
    let records = read_results(&results, true)?;
    write_folder(&output, &results, &records)?;
    let done = states.iter().filter(|s| s.is_done()).count();
    println!(
        "merged {} games of {} shares ({done} done) into {}",
        records.len(),
        states.len(),
        output.join(GAMES_FILE).display()
    );
    for s in states.iter().filter(|s| !s.is_done()) {
        println!("  share {s}");
    }
    Ok(exit::OK)
}

/// Writes `records` and the schedule of `results` into `output`.
fn write_folder(
    output: &Path,
    results: &Path,
    records: &[crate::record::GameRecord],
) -> Result<(), HarnessError> {
    let unwritable = |e| HarnessError::results_unwritable(output, e);
    match std::fs::create_dir(output) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(unwritable(e)),
    }
    let mut text = String::new();
    for r in records {
        text.push_str(&serde_json::to_string(r).expect("records serialize"));
        text.push('\n');
    }
    crate::mailbox::replace(output, GAMES_FILE, text.as_bytes()).map_err(unwritable)?;
    if let Ok(schedule) = std::fs::read(results.join(SCHEDULE_FILE)) {
        crate::mailbox::replace(output, SCHEDULE_FILE, &schedule).map_err(unwritable)?;
    }
    // The SPRT's verdict as the shares decided it, not as the merged
    // games (with the games finished after it) would.
    let verdict = crate::results::SPRT_VERDICT_FILE;
    if let Ok(kept) = std::fs::read(results.join(verdict)) {
        crate::mailbox::replace(output, verdict, &kept).map_err(unwritable)?;
    }
    Ok(())
}
