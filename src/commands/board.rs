//! `tournament board status`: the board's owner and its waiting mailboxes.

use std::io::Write;
use std::time::{Duration, SystemTime};

use crate::cli::BoardStatusArgs;
use crate::error::exit;
use crate::mailbox::{board_status, OwnerLiveness, DEFAULT_STALE};

use super::players::optional_config;

pub fn status(args: &BoardStatusArgs) -> anyhow::Result<i32> {
    let config = optional_config(args.config.as_deref())?;
    let board = args
        .board
        .clone()
        .or(config.as_ref().map(|c| c.board.clone()))
        .unwrap_or_else(|| "board".into());
    if !board.exists() {
        println!(
            "board {}: does not exist (no referee has used it yet)",
            board.display()
        );
        return Ok(exit::OK);
    }
    let ours = config.map_or(DEFAULT_STALE, |c| Duration::from_millis(c.stale_lock_ms));
    let status = board_status(&board, Duration::from_millis(args.watch_ms))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "board {}", status.board.display())?;
    match (&status.owner, &status.liveness) {
        (None, _) => writeln!(out, "owner: none (the board is free)")?,
        (Some(o), live) => {
            writeln!(
                out,
                "owner: {} on host {} (pid {}), since {} (its clock), heartbeat #{}",
                o.command, o.host, o.pid, o.started, o.heartbeat
            )?;
            let verdict = match live {
                Some(OwnerLiveness::Alive) => {
                    "alive (its heartbeat moved while we watched)".to_string()
                }
                Some(OwnerLiveness::Dead) => {
                    "dead (same machine, its process is gone); the next referee takes over at once"
                        .to_string()
                }
                Some(OwnerLiveness::Silent(d)) => {
                    let stale = o.stale_period(ours);
                    format!(
                        "no heartbeat seen in {:.1} s: stopped, hung, or unreachable; a referee \
                         started now takes it over at {} if the heartbeat stays still (after \
                         {:.1} s: {})",
                        d.as_secs_f64(),
                        humantime::format_rfc3339_seconds(SystemTime::now() + stale),
                        stale.as_secs_f64(),
                        if o.stale_ms > 0 {
                            "the holder's stale-lock-ms"
                        } else {
                            "the holder recorded no stale-lock-ms; the taker's own"
                        }
                    )
                }
                None => "unknown".to_string(),
            };
            writeln!(out, "       {verdict}")?;
        }
    }
    if status.mailboxes.is_empty() {
        writeln!(out, "mailboxes: none")?;
    } else {
        writeln!(out, "mailboxes:")?;
        writeln!(
            out,
            "  {:<24} {:<16} {:<10} {:>8}  last message",
            "instance", "player", "state", "age"
        )?;
        for m in &status.mailboxes {
            let state = if m.waiting() {
                "WAITING"
            } else if m.sent.is_some() {
                "answered"
            } else {
                "empty"
            };
            let age = m
                .sent_age
                .map(|d| format!("{:.1} s", d.as_secs_f64()))
                .unwrap_or_else(|| "-".into());
            let last = m
                .sent
                .as_ref()
                .map(|(seq, text)| format!("#{seq} {text}"))
                .unwrap_or_default();
            let last: String = last.chars().take(60).collect();
            writeln!(
                out,
                "  {:<24} {:<16} {:<10} {:>8}  {}",
                m.instance, m.player, state, age, last
            )?;
        }
        let waiting = status.mailboxes.iter().filter(|m| m.waiting()).count();
        writeln!(out, "{waiting} mailbox(es) wait for an answer; ages are from in.txt's mtime (the writer's clock)")?;
    }
    Ok(exit::OK)
}
