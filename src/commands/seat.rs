//! `tournament seat NAME [--board PATH]`: a person takes the waiting
//! mailbox of a player started by hand (`wait = true`) and plays that
//! player's games in this terminal, through the board's files, as a bot
//! started by hand would (the referee may run on another machine).
//!
//! Owns the loop between the mailbox's bot side (`mailbox-protocol`'s
//! [`BotMailbox`]) and the person's dialogue ([`PersonSeat`]): a message
//! in, the person's answer out (`RESIGN` when the person resigns). Must
//! not judge a move (the person's seat
//! asks again until it is legal; the referee adjudicates) nor write
//! anything but the mailbox's `out.txt`.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use mailbox_protocol::bot::BotMailbox;

use crate::cli::SeatArgs;
use crate::error::{exit, HarnessError};
use crate::protocol::Request;
use crate::referee::person::PERSON_MOVE_MS;
use crate::referee::seat::RESIGN;
use crate::referee::{PersonSeat, Seat, SeatError};

use super::players::optional_config;

/// Time kept back from the person's time for the answer to reach the
/// referee through the shared folder.
const SHARE_MARGIN: Duration = Duration::from_millis(300);

pub fn run(args: &SeatArgs) -> anyhow::Result<i32> {
    let config = optional_config(args.config.as_deref())?;
    if let Some(p) = config.as_ref().and_then(|c| c.player(&args.name)) {
        if !p.is_waiting() {
            return Err(HarnessError::Config(format!(
                "player `{}` is not started by hand (`wait = true` in the tournament file): \
                 its referee plays for it, so there is no seat to take",
                args.name
            ))
            .into());
        }
    }
    let board = match (&args.board, &config) {
        (Some(b), _) => b.clone(),
        (None, Some(c)) => c.board.clone(),
        (None, None) => PathBuf::from("board"),
    };
    let dir = board.join(crate::mailbox::PLAYERS_DIR).join(&args.name);
    await_mailbox(&dir);
    let mut mailbox = BotMailbox::new(&dir)
        .map_err(|e| HarnessError::BoardUnwritable(format!("{}: {e}", dir.display())))?;
    let mut person = PersonSeat::at_terminal(&args.name, PERSON_MOVE_MS);
    println!(
        "{}: seated at {}; the referee's messages come here",
        args.name,
        dir.display()
    );
    let mut ended = 0;
    loop {
        let Some(msg) = mailbox.next_message(None) else {
            return Ok(exit::OK);
        };
        let Ok(request) = Request::decode(&msg.text) else {
            tracing::warn!("a message that is no request: {:?}", msg.text);
            continue;
        };
        let time = match &request {
            Request::Turn { ms, .. } => Duration::from_millis(*ms).saturating_sub(SHARE_MARGIN),
            _ => Duration::from_secs(3600),
        };
        let _ = person.send(&request);
        let answer = match person.await_reply(Instant::now() + time) {
            Ok(answer) => Some(answer),
            // The referee ends the game on the word, as the person's loss.
            Err(SeatError::Resigned(_)) => Some(RESIGN.to_string()),
            // Out of time: the referee sees no answer and says so.
            Err(SeatError::Timeout { .. }) => None,
            Err(_) => return Ok(exit::OK),
        };
        if let Some(answer) = answer {
            mailbox
                .answer(&msg, &answer)
                .map_err(|e| HarnessError::BoardUnwritable(format!("{}: {e}", dir.display())))?;
        }
        if matches!(request, Request::End { .. }) {
            ended += 1;
            if args.games.is_some_and(|n| ended >= n) {
                return Ok(exit::OK);
            }
        }
    }
}

/// Waits for the referee to make the mailbox (it does when its run
/// starts), saying so once.
fn await_mailbox(dir: &std::path::Path) {
    let mut said = false;
    while !dir.is_dir() {
        if !said {
            println!(
                "waiting for the referee to open {} (start `tournament run` where the board is)",
                dir.display()
            );
            said = true;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
