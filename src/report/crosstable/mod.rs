//! The crosstable's output formats: aligned text for the terminal, GitHub
//! markdown, CSV and JSON, each in its own file.
//!
//! Owns presentation of a computed [`Crosstable`] only. Must not compute
//! standings or ratings (that is `crate::rating`), read records, or do I/O:
//! every function returns a `String`.

mod csv;
mod json;
mod markdown;
mod text;

use std::fmt;
use std::str::FromStr;

use crate::rating::Crosstable;

/// A crosstable output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TableFormat {
    Text,
    Markdown,
    Csv,
    Json,
}

impl TableFormat {
    pub const ALL: [TableFormat; 4] = [
        TableFormat::Text,
        TableFormat::Markdown,
        TableFormat::Csv,
        TableFormat::Json,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TableFormat::Text => "text",
            TableFormat::Markdown => "markdown",
            TableFormat::Csv => "csv",
            TableFormat::Json => "json",
        }
    }
}

impl fmt::Display for TableFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is not one of `text`, `markdown`, `csv`, `json`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown table format `{0}` (expected text, markdown, csv or json)")]
pub struct UnknownFormat(pub String);

impl FromStr for TableFormat {
    type Err = UnknownFormat;

    /// Case-insensitive; `md` is accepted for markdown.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "text" => Ok(TableFormat::Text),
            "markdown" | "md" => Ok(TableFormat::Markdown),
            "csv" => Ok(TableFormat::Csv),
            "json" => Ok(TableFormat::Json),
            _ => Err(UnknownFormat(s.to_string())),
        }
    }
}

/// What the columns mean, below the text table and the HTML report's table.
pub const LEGEND: [&str; 2] = [
    "Points: win 1, draw ½. Discs: own minus opponent's, empty squares to the winner.",
    "Elo ± 95 % interval (± ∞: not enough games). Column k: the score against the player in row k.",
];

/// Renders `table` in `format`. `color` adds ANSI colours to the text
/// format (the other formats ignore it); the text format ends with the
/// [`LEGEND`]. The result ends with a newline.
pub fn render(table: &Crosstable, format: TableFormat, color: bool) -> String {
    match format {
        TableFormat::Text => format!(
            "{}
{}
",
            text::render(table, color),
            LEGEND.join("\n")
        ),
        TableFormat::Markdown => markdown::render(table),
        TableFormat::Csv => csv::render(table),
        TableFormat::Json => json::render(table),
    }
}

/// A mean with its 95 % interval: `+12.3 ± 4.5`, or `+12.3 (too few
/// games)` when one game or pair cannot give one (never `± 0.0`).
pub(crate) fn interval(i: &crate::rating::pairstats::Interval) -> String {
    // -0.0 reads as a loss of nothing: show it as 0.
    let mean = if i.mean == 0.0 { 0.0 } else { i.mean };
    match i.error {
        Some(e) => format!("{mean:+.1} ± {e:.1}"),
        None => format!("{mean:+.1} (too few games)"),
    }
}

/// The statistics below the tables, one line each (text, markdown and
/// HTML show them): the SPRT, each pairing's pentanomial count, Elo from
/// pairs, LOS, draw ratio and disc margin, each player's disc margin and,
/// in a Swiss event, its score and tie-breaks.
pub fn details(table: &Crosstable) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(s) = &table.sprt {
        let t = &s.test;
        out.push(format!(
            "SPRT {} elo0 {} elo1 {} alpha {} beta {}: LLR {:.2} (lower {:.2}, upper {:.2}) → {}",
            t.model.name(),
            t.elo0,
            t.elo1,
            t.alpha,
            t.beta,
            s.llr,
            t.lower(),
            t.upper(),
            match s.decided_after {
                Some(games) => format!("{} (decided after {games} games)", s.decision.name()),
                None => s.decision.name().to_string(),
            }
        ));
        if let Some(r) = &t.repeated_openings {
            out.push(format!("SPRT caveat: {}", r.caveat()));
        }
    }
    for p in &table.pairings {
        let mut line = format!(
            "{} vs {}: {} games, pairs 0/½/1/1½/2 {:?}, draws {:.1} %",
            p.first,
            p.second,
            p.games,
            p.pentanomial,
            p.draw_ratio * 100.0
        );
        if let Some(e) = &p.elo {
            line.push_str(&format!(", Elo {}", interval(e)));
        }
        if let Some(l) = p.los {
            line.push_str(&format!(", LOS {:.1} %", l * 100.0));
        }
        if let Some(m) = &p.disc_margin {
            line.push_str(&format!(", disc margin {}", interval(m)));
        }
        out.push(line);
    }
    for s in &table.standings {
        let mut line = format!("{}:", s.player);
        if let Some(m) = &s.disc_margin {
            line.push_str(&format!(" disc margin per game {}", interval(m)));
        }
        if let Some(w) = &s.swiss {
            line.push_str(&format!(
                " Swiss score {} (Buchholz {}, Sonneborn-Berger {}, byes {})",
                points(w.score),
                points(w.buchholz),
                points(w.sonneborn_berger),
                w.byes
            ));
        }
        if s.disc_margin.is_some() || s.swiss.is_some() {
            out.push(line);
        }
    }
    out
}

/// Points as `3`, `3.5`.
pub(crate) fn points(p: f64) -> String {
    format!("{}", p + 0.0)
}

/// A signed integer: `+40`, `-3`, `0`.
pub(crate) fn signed(v: i64) -> String {
    if v > 0 {
        format!("+{v}")
    } else {
        v.to_string()
    }
}

/// Elo rounded to an integer, signed: `+95`, `-12`, `0`.
fn elo(e: f64) -> String {
    signed(e.round() as i64)
}

/// The error bar rounded to an integer, `∞` when undetermined.
fn elo_error(e: f64) -> String {
    if e.is_finite() {
        format!("{}", e.round() as i64)
    } else {
        "∞".to_string()
    }
}

/// A matrix cell: `1.5/2`, `·` on the diagonal, `-` if they never met.
fn cell(table: &Crosstable, i: usize, j: usize) -> String {
    if i == j {
        return "·".to_string();
    }
    match table.matrix[i][j] {
        Some((p, g)) => format!("{}/{g}", points(p)),
        None => "-".to_string(),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rating::tests::game;
    use crate::rating::{crosstable, Crosstable};
    use crate::record::Winner;

    /// Three players, one with a comma and a quote in its name, plus an idle
    /// player: `alpha` 3.5/4, `Smith, "Bo"` 1.5/4, `c` 1/4, `idle` 0/0.
    pub(crate) fn sample() -> Crosstable {
        use Winner::*;
        let bo = "Smith, \"Bo\"";
        let records = vec![
            game("alpha", bo, Black, (40, 24)),
            game(bo, "alpha", Draw, (32, 32)),
            game("alpha", "c", Black, (50, 14)),
            game("c", "alpha", White, (20, 44)),
            game(bo, "c", Black, (33, 31)),
            game("c", bo, Black, (35, 29)),
        ];
        crosstable(&records, &["idle".to_string()])
    }

    #[test]
    fn format_names_round_trip() {
        for f in TableFormat::ALL {
            assert_eq!(f.name().parse::<TableFormat>(), Ok(f));
            assert_eq!(f.to_string(), f.name());
        }
        assert_eq!("MD".parse::<TableFormat>(), Ok(TableFormat::Markdown));
        let err = "html".parse::<TableFormat>().unwrap_err();
        assert!(err.to_string().contains("`html`"));
    }

    #[test]
    fn cell_helpers() {
        assert_eq!(points(3.0), "3");
        assert_eq!(points(1.5), "1.5");
        assert_eq!(points(-0.0), "0");
        assert_eq!(signed(40), "+40");
        assert_eq!(signed(-3), "-3");
        assert_eq!(signed(0), "0");
        assert_eq!(elo(-0.4), "0");
        assert_eq!(elo(95.5), "+96");
        assert_eq!(elo_error(39.6), "40");
        assert_eq!(elo_error(f64::INFINITY), "∞");
        let t = sample();
        assert_eq!(cell(&t, 0, 0), "·");
        assert_eq!(cell(&t, 0, 1), "1.5/2");
        assert_eq!(cell(&t, 0, 3), "-");
    }

    #[test]
    fn every_format_ends_with_a_newline() {
        let t = sample();
        let empty = crosstable(&[], &[]);
        for f in TableFormat::ALL {
            for color in [false, true] {
                assert!(render(&t, f, color).ends_with('\n'), "{f}");
                assert!(render(&empty, f, color).ends_with('\n'), "{f}");
            }
        }
    }
}

#[cfg(test)]
mod legend_tests {
    use super::*;

    #[test]
    fn the_text_table_ends_with_its_legend_and_the_others_do_not() {
        let table = tests::sample();
        let text = render(&table, TableFormat::Text, false);
        assert!(
            text.ends_with(
                "\nPoints: win 1, draw ½. Discs: own minus opponent's, empty squares to the winner.\n\
                 Elo ± 95 % interval (± ∞: not enough games). Column k: the score against the \
                 player in row k.\n"
            ),
            "{text}"
        );
        for f in [TableFormat::Markdown, TableFormat::Csv, TableFormat::Json] {
            assert!(!render(&table, f, false).contains("Points: win 1"));
        }
    }
}
