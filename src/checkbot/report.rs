//! check-bot's report: the steps as they are put together and judged
//! (pass, warn, fail, not checked), the report of a whole check with its
//! summary line, and the small wordings every part uses (a sent message, a
//! label, a short list).
//!
//! Owns those types and wordings; must not talk to the bot or judge an
//! answer. Printing a step (`Step::render`) is `hints`'.

/// How a step came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Not compliant, but tolerated (does not fail the bot).
    Warn,
    Fail,
    /// Nothing to check (e.g. no answer came to time or to compare).
    NotRun,
}

/// One thing that was wrong, and what to do about it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Problem {
    /// The message the bot was answering (`seq N: TEXT`), if any.
    pub sent: String,
    pub expected: String,
    pub got: String,
    pub hint: String,
    /// More lines to show (e.g. the bot's last stderr lines).
    pub extra: Vec<String>,
}

/// One named check.
#[derive(Clone, Debug)]
pub struct Step {
    pub name: String,
    pub verdict: Verdict,
    /// What came, in short (shown for every step).
    pub summary: String,
    pub problems: Vec<Problem>,
}

/// Every step that ran, and why checking stopped early (if it did).
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub steps: Vec<Step>,
    pub stopped: Option<String>,
}

impl Report {
    pub fn failed(&self) -> usize {
        self.count(Verdict::Fail)
    }

    pub fn warnings(&self) -> usize {
        self.count(Verdict::Warn)
    }

    pub(super) fn count(&self, v: Verdict) -> usize {
        self.steps.iter().filter(|s| s.verdict == v).count()
    }

    /// True if the bot passed every check (warnings allowed).
    pub fn compliant(&self) -> bool {
        self.failed() == 0 && self.stopped.is_none()
    }

    /// `N checks, M failed` (and the warnings, if any).
    pub fn summary_line(&self) -> String {
        let n = self.steps.len();
        let mut s = format!(
            "{n} check{}, {} failed",
            if n == 1 { "" } else { "s" },
            self.failed()
        );
        match self.warnings() {
            0 => {}
            1 => s.push_str(", 1 warning"),
            n => s.push_str(&format!(", {n} warnings")),
        }
        match self.count(Verdict::NotRun) {
            0 => {}
            n => s.push_str(&format!(", {n} not checked")),
        }
        s
    }
}

/// How a late answer's problem starts.
pub(super) const LATE_EXPECTED: &str = "an answer within";

/// A usable answer.
pub(super) struct Answer {
    pub(super) text: String,
    pub(super) ms: u64,
    pub(super) seq: u64,
    /// Set if it came after the limit.
    pub(super) late: Option<Problem>,
}

/// A step being put together.
pub(super) struct StepBuilder {
    pub(super) name: String,
    pub(super) summary: Vec<String>,
    pub(super) problems: Vec<Problem>,
    pub(super) warn_only: bool,
    /// There was nothing to check (shown as not checked, unless a problem came).
    pub(super) not_run: bool,
}

impl StepBuilder {
    pub(super) fn new(name: impl Into<String>) -> StepBuilder {
        StepBuilder {
            name: name.into(),
            summary: vec![],
            problems: vec![],
            warn_only: false,
            not_run: false,
        }
    }

    pub(super) fn note(&mut self, text: impl Into<String>) {
        self.summary.push(text.into());
    }

    /// Nothing to check: says why.
    pub(super) fn not_run(&mut self, why: impl Into<String>) {
        self.not_run = true;
        self.note(why);
    }

    pub(super) fn fail(&mut self, p: Problem) {
        self.problems.push(p);
    }

    /// Takes the answer's late-problem, if any; returns the answer.
    pub(super) fn took(&mut self, mut a: Answer) -> Answer {
        if let Some(p) = a.late.take() {
            self.problems.push(p);
        }
        a
    }

    pub(super) fn build(self) -> Step {
        let verdict = match (self.problems.is_empty(), self.warn_only) {
            (true, _) if self.not_run => Verdict::NotRun,
            (true, _) => Verdict::Pass,
            (false, true) => Verdict::Warn,
            (false, false) => Verdict::Fail,
        };
        Step {
            name: self.name,
            verdict,
            summary: self.summary.join("; "),
            problems: self.problems,
        }
    }
}

/// A readable form of bytes from a move file.
pub(super) fn shown(bytes: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(bytes))
}

pub(super) fn sent_line(seq: u64, text: &str) -> String {
    format!("seq {seq}: {text}")
}

/// `seq 7 (TURN)`, for lists. `text` may be a `sent_line`.
pub(super) fn label(seq: u64, text: &str) -> String {
    let text = text.strip_prefix(&format!("seq {seq}: ")).unwrap_or(text);
    format!("seq {seq} ({})", text.split(' ').next().unwrap_or(""))
}

/// The first few items, and how many more.
pub(super) fn brief_list(items: &[String]) -> String {
    const SHOWN: usize = 3;
    let mut s = items
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if items.len() > SHOWN {
        s.push_str(&format!("; and {} more", items.len() - SHOWN));
    }
    s
}

/// `a`, `a or b`, `a, b or c`.
pub(super) fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_render_with_marks_and_hints() {
        let step = Step {
            name: "END → BYE".into(),
            verdict: Verdict::Fail,
            summary: String::new(),
            problems: vec![Problem {
                sent: "seq 8: END black 40 24 normal".into(),
                expected: "BYE".into(),
                got: "\"OK\"".into(),
                hint: "answer END with BYE".into(),
                extra: vec![],
            }],
        };
        let text = step.render();
        assert!(text.starts_with("✗ END → BYE"), "{text}");
        assert!(text.contains("hint      answer END with BYE"), "{text}");
        let report = Report {
            steps: vec![step],
            stopped: None,
        };
        assert_eq!(report.summary_line(), "1 check, 1 failed");
        assert!(!report.compliant());
        assert_eq!(or_list(&["a".into(), "b".into(), "c".into()]), "a, b or c");
    }
}
