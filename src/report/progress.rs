//! The progress of a tournament on the console: a bar (games done/total,
//! running games, ETA once a game has finished, current leader, the SPRT's LLR) on a terminal; nothing extra
//! otherwise (the runner's log lines say the same in plain text).

use std::collections::HashMap;
use std::sync::Mutex;

use indicatif::{HumanDuration, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};

use crate::event::{Event, EventSink};
use crate::game::Color;
use crate::record::GameRecord;

pub struct Progress {
    bar: ProgressBar,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    running: u32,
    points: HashMap<String, f64>,
    /// Said after the leader (the SPRT's LLR and bounds).
    note: Option<String>,
}

impl State {
    fn add(&mut self, r: &GameRecord) {
        for c in [Color::Black, Color::White] {
            *self.points.entry(r.player(c).to_string()).or_default() += r.result.points_for(c);
        }
    }

    fn message(&self) -> String {
        match &self.note {
            Some(note) => format!("{} · {note}", self.standing()),
            None => self.standing(),
        }
    }

    fn standing(&self) -> String {
        let leader = self
            .points
            .iter()
            .max_by(|a, b| a.1.total_cmp(b.1).then_with(|| b.0.cmp(a.0)));
        match leader {
            Some((name, pts)) => format!("{} running · leader {name} ({pts} pts)", self.running),
            None => format!("{} running", self.running),
        }
    }
}

impl Progress {
    /// A bar for `total` games of which `done` (with `records`) are already
    /// finished; drawn only when stderr is a terminal.
    pub fn new(total: u64, records: &[GameRecord]) -> Progress {
        use std::io::IsTerminal;
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        // Games finished before this run say nothing about its pace.
        let before = records.len() as u64;
        bar.set_style(
            ProgressStyle::with_template("{bar:30.cyan/blue} {pos}/{len} games{eta} · {msg}")
                .expect("valid template")
                .progress_chars("=> ")
                .with_key(
                    "eta",
                    move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = w.write_str(&eta_text(s.pos().saturating_sub(before), s.eta()));
                    },
                ),
        );
        bar.set_position(records.len() as u64);
        let mut state = State::default();
        for r in records {
            state.add(r);
        }
        bar.set_message(state.message());
        Progress {
            bar,
            state: Mutex::new(state),
        }
    }

    pub fn bar(&self) -> &ProgressBar {
        &self.bar
    }

    /// Shows `note` after the leader from now on.
    pub fn set_note(&self, note: String) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.note = Some(note);
        self.bar.set_message(s.message());
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// The bar's ETA part: nothing until a game of this run has finished (an
/// estimate from no game at all would say `0s`).
fn eta_text(finished_this_run: u64, eta: std::time::Duration) -> String {
    if finished_this_run == 0 {
        String::new()
    } else {
        format!(" · ETA {}", HumanDuration(eta))
    }
}

impl EventSink for Progress {
    fn emit(&self, event: &Event<'_>) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match event {
            Event::GameStarted { .. } => s.running += 1,
            Event::GameOver { record } => {
                s.running = s.running.saturating_sub(1);
                s.add(record);
                self.bar.inc(1);
            }
            _ => return,
        }
        self.bar.set_message(s.message());
    }
}
