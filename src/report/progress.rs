//! The progress of a tournament on the console: a bar (games done/total,
//! running games, ETA, current leader, the SPRT's LLR) on a terminal; nothing extra
//! otherwise (the runner's log lines say the same in plain text).

use std::collections::HashMap;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

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
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:30.cyan/blue} {pos}/{len} games · ETA {eta} · {msg}",
            )
            .expect("valid template")
            .progress_chars("=> "),
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
