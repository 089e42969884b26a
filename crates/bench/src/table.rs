//! The bench's table: one row per measured quantity, its value in each
//! repetition, a target where the issue sets one, and plain-text output.

use super::stats::{spread, Spread};

/// How a row's numbers are shown (they are stored in this unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Micros,
    Millis,
    Seconds,
    /// Per second, with what is counted (`games/s`).
    Rate(&'static str),
    /// Millions per second, with what is counted (`M nodes/s`).
    MegaRate(&'static str),
    /// A quotient of two measurements (`×`).
    Ratio,
    Percent,
    MiB,
    /// A plain count, with thousands separators.
    Count,
    /// A plain number without unit.
    Plain,
}

/// What a row's median must meet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    AtMost(f64),
    AtLeast(f64),
    Exactly(f64),
}

impl Target {
    pub fn met_by(self, v: f64) -> bool {
        match self {
            Target::AtMost(t) => v <= t,
            Target::AtLeast(t) => v >= t,
            Target::Exactly(t) => v == t,
        }
    }
}

/// One line of the table.
#[derive(Clone, Debug)]
pub struct Row {
    pub name: String,
    pub unit: Unit,
    /// One value per repetition.
    pub values: Vec<f64>,
    pub target: Option<Target>,
    /// Why there are no values, if there are none.
    pub missing: Option<String>,
}

impl Row {
    pub fn new(name: impl Into<String>, unit: Unit) -> Row {
        Row {
            name: name.into(),
            unit,
            values: Vec::new(),
            target: None,
            missing: None,
        }
    }

    pub fn target(mut self, t: Target) -> Row {
        self.target = Some(t);
        self
    }

    pub fn spread(&self) -> Option<Spread> {
        spread(&self.values)
    }

    /// `Some(true)` if the median meets the target, `None` without a target
    /// or values.
    pub fn ok(&self) -> Option<bool> {
        Some(self.target?.met_by(self.spread()?.median))
    }
}

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A number with about three significant digits (no more decimals than
/// that, none for big numbers).
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || v == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// `v` with its unit.
pub fn show(v: f64, unit: Unit) -> String {
    match unit {
        Unit::Micros => format!("{} µs", short(v)),
        Unit::Millis => format!("{} ms", short(v)),
        Unit::Seconds => format!("{} s", short(v)),
        Unit::Rate(what) => format!("{} {what}", short(v)),
        Unit::MegaRate(what) => format!("{} M {what}", short(v)),
        Unit::Ratio => format!("{}×", short(v)),
        Unit::Percent => format!("{} %", short(v)),
        Unit::MiB => format!("{} MiB", short(v)),
        Unit::Count => thousands(v.round().max(0.0) as u64),
        Unit::Plain => short(v),
    }
}

fn show_target(t: Target, unit: Unit) -> String {
    match t {
        Target::AtMost(v) => format!("≤ {}", show(v, unit)),
        Target::AtLeast(v) => format!("≥ {}", show(v, unit)),
        Target::Exactly(v) => format!("= {}", show(v, unit)),
    }
}

/// Pads `s` with spaces to `width` characters (not bytes: `µ`, `×`, `≤`).
fn pad(s: &str, width: usize) -> String {
    let n = s.chars().count();
    format!("{s}{}", " ".repeat(width.saturating_sub(n)))
}

pub const HEADER: [&str; 5] = ["row", "median", "spread (min–max)", "target", "ok?"];

/// The table as text lines, header first; columns as wide as their
/// widest cell.
pub fn render(rows: &[Row]) -> Vec<String> {
    let mut lines: Vec<[String; 5]> = vec![HEADER.map(String::from)];
    for r in rows {
        let target = r.target.map(|t| show_target(t, r.unit)).unwrap_or_default();
        lines.push(match (r.spread(), &r.missing) {
            (Some(s), _) => {
                let range = if r.values.len() > 1 {
                    format!("{} – {}", show(s.min, r.unit), show(s.max, r.unit))
                } else {
                    "(one run)".to_string()
                };
                let ok = match r.ok() {
                    Some(true) => "ok",
                    Some(false) => "MISSED",
                    None => "",
                };
                [
                    r.name.clone(),
                    show(s.median, r.unit),
                    range,
                    target,
                    ok.to_string(),
                ]
            }
            (None, why) => [
                r.name.clone(),
                format!(
                    "not measured: {}",
                    why.as_deref().unwrap_or("no value came back")
                ),
                String::new(),
                String::new(),
                String::new(),
            ],
        });
    }
    let mut widths = [0usize; 4];
    for cells in &lines {
        // A "not measured" line's reason runs on; it sets no width.
        let measured = !cells[1].starts_with("not measured");
        for (k, w) in widths.iter_mut().enumerate() {
            if k == 0 || measured {
                *w = (*w).max(cells[k].chars().count() + 2);
            }
        }
    }
    lines
        .iter()
        .map(|cells| {
            let mut s = String::new();
            for (cell, w) in cells.iter().zip(widths) {
                s.push_str(&pad(cell, w));
            }
            s.push_str(&cells[4]);
            s.trim_end().to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_shown_with_their_units() {
        assert_eq!(thousands(1_939_886_636), "1,939,886,636");
        assert_eq!(thousands(12), "12");
        assert_eq!(show(312.4, Unit::Micros), "312 µs");
        assert_eq!(show(2.345, Unit::Ratio), "2.35×");
        assert_eq!(show(0.0421, Unit::Percent), "0.042 %");
    }

    #[test]
    fn rows_are_judged_by_their_median() {
        let mut r = Row::new("x", Unit::Micros).target(Target::AtMost(150.0));
        r.values = vec![100.0, 400.0, 140.0];
        assert_eq!(r.ok(), Some(true));
        r.values = vec![160.0, 100.0, 170.0];
        assert_eq!(r.ok(), Some(false));
        let lines = render(&[r]);
        assert!(lines[1].ends_with("MISSED"), "{}", lines[1]);
        assert!(lines[1].contains("100 µs – 170 µs"), "{}", lines[1]);
        let mut m = Row::new("y", Unit::Micros);
        m.missing = Some("no python3".into());
        assert!(render(&[m])[1].contains("not measured: no python3"));
    }
}
