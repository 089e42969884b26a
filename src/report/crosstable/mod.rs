//! The crosstable's output formats: aligned text for the terminal, GitHub
//! markdown, CSV and JSON, each in its own file, and what they share: the
//! legend, the bounded pairings' table and when a big field's score matrix
//! is left out.
//!
//! Owns presentation of a computed [`Crosstable`] only. Must not compute
//! standings or ratings (that is `crate::rating`), read records, or do I/O:
//! every function returns a `String`.

mod csv;
mod json;
mod markdown;
mod text;

use std::collections::HashMap;
use std::fmt;
use std::str::FromStr;

use crate::rating::pairstats::{Interval, PairingStats};
use crate::rating::{Crosstable, Standing};

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

/// A field of more players than this shows its standings without the
/// score matrix (text, markdown, the HTML report and the live page) unless
/// [`Layout::full`] asks for it; CSV and JSON always hold the matrix.
pub const MATRIX_MAX_PLAYERS: usize = 16;

/// Pairings listed in the statistics table unless [`Layout::full`]: those
/// of the players nearest in ranking, from the top.
pub const PAIRINGS_SHOWN: usize = 10;

/// How much of a big field the text, markdown and HTML formats show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// The score matrix and every pairing's statistics, however many
    /// players (`tournament crosstable --full`).
    pub full: bool,
}

impl Layout {
    /// Whether the score matrix of `players` players is shown.
    pub fn shows_matrix(self, players: usize) -> bool {
        self.full || players <= MATRIX_MAX_PLAYERS
    }
}

/// A player's name as the tables show it: `ann (person)` for a person.
pub(crate) fn shown_name(table: &Crosstable, player: &str) -> String {
    if table.people.contains(player) {
        format!("{player} (person)")
    } else {
        player.to_string()
    }
}

/// Whether the table is of a Swiss event (its rows carry Swiss scores).
pub(crate) fn is_swiss(table: &Crosstable) -> bool {
    table.standings.iter().any(|s| s.swiss.is_some())
}

/// Whether any player of a Swiss event had a bye.
pub(crate) fn has_byes(table: &Crosstable) -> bool {
    table
        .standings
        .iter()
        .any(|s| s.swiss.as_ref().is_some_and(|w| w.byes > 0))
}

/// The headings of the Swiss columns, in the order the ranking uses them.
pub(crate) const SWISS_HEADINGS: [&str; 3] = ["Score", "Buchholz", "SB"];

/// A standing's Swiss score, Buchholz and Sonneborn-Berger as shown (empty
/// outside Swiss events).
pub(crate) fn swiss_cells(s: &Standing) -> [String; 3] {
    match &s.swiss {
        Some(w) => [
            points(w.score),
            points(w.buchholz),
            points(w.sonneborn_berger),
        ],
        None => Default::default(),
    }
}

/// What the columns and statistics mean, below the text table, the
/// markdown and the HTML report's tables: the lines that apply to `table`
/// as laid out by `layout`.
pub fn legend(table: &Crosstable, layout: Layout) -> Vec<String> {
    let mut out = vec![
        "Points: win 1, draw ½. Discs: own minus opponent's, empty squares to the winner."
            .to_string(),
    ];
    if is_swiss(table) {
        out.push(
            "Ranked by Score (Swiss match points: a pairing won 1, drawn ½, a bye 1), then \
             Buchholz (the opponents' Scores), SB (Sonneborn-Berger: the Scores of opponents \
             beaten plus half of those drawn), then Points, Elo, Discs."
                .to_string(),
        );
    }
    out.push(
        "Elo: each player's rating against the field's average (0), one fit over all games \
         (Bradley-Terry, one virtual draw each), ± 95 % interval (± ∞: no games)."
            .to_string(),
    );
    let n = table.standings.len();
    if n > 0 && layout.shows_matrix(n) {
        out.push("Column k: the score against the player in row k.".to_string());
    } else if n > 0 {
        out.push(format!(
            "The score matrix of {n} players is left out (more than {MATRIX_MAX_PLAYERS}): \
             `tournament crosstable --full` shows it; --format csv and json hold it."
        ));
    }
    if !table.pairings.is_empty() {
        out.push(
            "Pairs: colour-swapped game pairs by the first player's score 0-½-1-1½-2. \
             Elo (pairs): the first's rating minus the second's from their own pairs alone \
             (compare the gap between their Elo above, from one fit over all games, \
             pulled toward 0). LOS: likelihood that the first is the stronger."
                .to_string(),
        );
    }
    out
}

/// Renders `table` in `format` with the default [`Layout`].
pub fn render(table: &Crosstable, format: TableFormat, color: bool) -> String {
    render_with(table, format, color, Layout::default())
}

/// Renders `table` in `format`. `color` adds ANSI colours to the text
/// format (the other formats ignore it); text and markdown end with the
/// [`legend`]. `layout` bounds what text and markdown show of a big field.
/// The result ends with a newline.
pub fn render_with(table: &Crosstable, format: TableFormat, color: bool, layout: Layout) -> String {
    match format {
        TableFormat::Text => format!(
            "{}\n{}\n",
            text::render(table, color, layout),
            legend(table, layout).join("\n")
        ),
        TableFormat::Markdown => markdown::render(table, layout),
        TableFormat::Csv => csv::render(table),
        TableFormat::Json => json::render(table),
    }
}

/// A mean with its 95 % interval: `+12.3 ± 4.5`, or `+12.3 (too few
/// games)` when one game or pair cannot give one (never `± 0.0`).
pub(crate) fn interval(i: &Interval) -> String {
    // -0.0 reads as a loss of nothing: show it as 0.
    let mean = if i.mean == 0.0 { 0.0 } else { i.mean };
    match i.error {
        Some(e) => format!("{mean:+.1} ± {e:.1}"),
        None => format!("{mean:+.1} (too few games)"),
    }
}

/// The lines of the statistics that are not the pairings' table: the
/// SPRT and its caveat.
pub fn notes(table: &Crosstable) -> Vec<String> {
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
    out
}

/// The headings of the pairings' table.
pub const PAIRING_HEADINGS: [&str; 8] = [
    "First",
    "Second",
    "Games",
    "Pairs 0-½-1-1½-2",
    "Draws",
    "Elo (pairs)",
    "LOS",
    "Disc margin",
];

/// The pairings shown and how many are left out: all with
/// [`Layout::full`], else the [`PAIRINGS_SHOWN`] whose players are nearest
/// in ranking (adjacent rows first, from the top), in that order.
pub fn shown_pairings(table: &Crosstable, layout: Layout) -> (Vec<&PairingStats>, usize) {
    let row: HashMap<&str, usize> = table
        .standings
        .iter()
        .enumerate()
        .map(|(i, s)| (s.player.as_str(), i))
        .collect();
    let at = |name: &str| row.get(name).copied().unwrap_or(usize::MAX / 2);
    let mut all: Vec<&PairingStats> = table.pairings.iter().collect();
    all.sort_by_key(|p| {
        let (a, b) = (at(&p.first), at(&p.second));
        (a.abs_diff(b), a.min(b), a.max(b))
    });
    if layout.full || all.len() <= PAIRINGS_SHOWN {
        return (all, 0);
    }
    let left = all.len() - PAIRINGS_SHOWN;
    all.truncate(PAIRINGS_SHOWN);
    (all, left)
}

/// The line under a bounded pairings' table saying what was left out.
pub fn left_out_line(shown: usize, left: usize) -> String {
    format!(
        "{left} more pairings not shown (these {shown} are of players nearest in ranking): \
         `tournament crosstable --full` lists all, as does --format json."
    )
}

/// One pairing's cells under [`PAIRING_HEADINGS`]; "too few games" rather
/// than an interval of `± 0.0`.
pub fn pairing_cells(p: &PairingStats) -> [String; 8] {
    let pairs: u64 = p.pentanomial.iter().sum();
    let elo = match &p.elo {
        _ if pairs < 2 => "too few games".to_string(),
        Some(e) => interval(e),
        None if p.pentanomial[4] == pairs => "+∞ (won every pair)".to_string(),
        None => "-∞ (lost every pair)".to_string(),
    };
    [
        p.first.clone(),
        p.second.clone(),
        p.games.to_string(),
        p.pentanomial
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join("-"),
        format!("{:.0} %", p.draw_ratio * 100.0),
        elo,
        p.los
            .map_or("–".to_string(), |l| format!("{:.1} %", l * 100.0)),
        match &p.disc_margin {
            None => "–".to_string(),
            // Two games of one opening pair are no sample of the spread.
            Some(m) if pairs < 2 => interval(&Interval {
                mean: m.mean,
                error: None,
            }),
            Some(m) => interval(m),
        },
    ]
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
    fn text_and_markdown_end_with_the_legend_and_csv_and_json_do_not() {
        let table = tests::sample();
        let text = render(&table, TableFormat::Text, false);
        assert!(
            text.ends_with(
                "\nPoints: win 1, draw ½. Discs: own minus opponent's, empty squares to the winner.\n\
                 Elo: each player's rating against the field's average (0), one fit over all games \
                 (Bradley-Terry, one virtual draw each), ± 95 % interval (± ∞: no games).\n\
                 Column k: the score against the player in row k.\n\
                 Pairs: colour-swapped game pairs by the first player's score 0-½-1-1½-2. \
                 Elo (pairs): the first's rating minus the second's from their own pairs alone \
                 (compare the gap between their Elo above, from one fit over all games, \
                 pulled toward 0). LOS: likelihood that the first is the stronger.\n"
            ),
            "{text}"
        );
        for f in [TableFormat::Csv, TableFormat::Json] {
            assert!(!render(&table, f, false).contains("Points: win 1"));
        }
        assert!(render(&table, TableFormat::Markdown, false).contains("Points: win 1"));
    }
}

#[cfg(test)]
mod layout_tests {
    use super::*;
    use crate::rating::crosstable;
    use crate::rating::tests::game;
    use crate::record::{GameRecord, Winner};

    /// A round robin of `n` players, two games a pairing (one pair), the
    /// lower-numbered player winning both.
    fn round_robin(n: usize) -> Vec<GameRecord> {
        let mut out = Vec::new();
        for i in 0..n {
            for j in (i + 1)..n {
                let (a, b) = (format!("p{i:02}"), format!("p{j:02}"));
                let mut first = game(&a, &b, Winner::Black, (40, 24));
                first.round = 1;
                let mut second = game(&b, &a, Winner::White, (24, 40));
                second.round = 2;
                out.extend([first, second]);
            }
        }
        out
    }

    #[test]
    fn twelve_players_list_ten_pairings_and_say_how_to_see_the_rest() {
        let t = crosstable(&round_robin(12), &[]);
        assert_eq!(t.pairings.len(), 66);
        let (shown, left) = shown_pairings(&t, Layout::default());
        assert_eq!((shown.len(), left), (PAIRINGS_SHOWN, 56));
        // Adjacent rows first, from the top: p00-p01, p01-p02, …
        assert_eq!((&*shown[0].first, &*shown[0].second), ("p00", "p01"));
        assert_eq!((&*shown[9].first, &*shown[9].second), ("p09", "p10"));
        let text = render(&t, TableFormat::Text, false);
        // 13 table lines, blank, 11 pairing lines, the left-out line,
        // blank, the legend (4 lines).
        assert!(text.lines().count() <= 32, "{text}");
        assert!(text.contains("56 more pairings not shown"), "{text}");
        let full = render_with(&t, TableFormat::Text, false, Layout { full: true });
        assert!(full.lines().count() > 66, "{full}");
        assert!(!full.contains("more pairings not shown"), "{full}");
    }

    #[test]
    fn a_field_beyond_the_limit_shows_no_matrix_unless_asked() {
        let n = MATRIX_MAX_PLAYERS + 1;
        let t = crosstable(&round_robin(n), &[]);
        for format in [TableFormat::Text, TableFormat::Markdown] {
            let out = render(&t, format, false);
            let header = out.lines().next().unwrap();
            assert!(
                header.ends_with("Elo") || header.ends_with("± |"),
                "{header}"
            );
            assert!(
                out.contains("score matrix of 17 players is left out"),
                "{out}"
            );
            let full = render_with(&t, format, false, Layout { full: true });
            assert!(full.contains(" 17"), "{full}");
        }
        // CSV and JSON keep the matrix.
        let csv = render(&t, TableFormat::Csv, false);
        assert_eq!(csv.lines().next().unwrap().split(',').count(), 10 + n);
        let small = crosstable(&round_robin(MATRIX_MAX_PLAYERS), &[]);
        let text = render(&small, TableFormat::Text, false);
        assert!(text.lines().next().unwrap().ends_with(" 16"), "{text}");
    }

    /// Issue 30's Swiss: `dave` has fewer points than `bob` but the higher
    /// Swiss score, and the columns say so.
    #[test]
    fn a_swiss_shows_its_score_and_tie_breaks_before_the_points() {
        use Winner::*;
        let sw = |round: u32, game_round: u32, b: &str, w: &str, result| {
            let mut r = game(b, w, result, (33, 31));
            r.swiss_round = Some(round);
            r.round = game_round;
            r
        };
        let records = vec![
            // Round 1: dave beats carl 2-0; bob and ann draw 1-1.
            sw(1, 1, "dave", "carl", Black),
            sw(1, 2, "carl", "dave", White),
            sw(1, 1, "bob", "ann", Black),
            sw(1, 2, "ann", "bob", Black),
            // Round 2: bob beats carl 2-0; dave and ann draw 1-1.
            sw(2, 1, "bob", "carl", Black),
            sw(2, 2, "carl", "bob", White),
            sw(2, 1, "dave", "ann", Black),
            sw(2, 2, "ann", "dave", Black),
        ];
        let t = crosstable(&records, &[]);
        let text = render(&t, TableFormat::Text, false);
        let lines: Vec<&str> = text.lines().collect();
        let head: Vec<&str> = lines[0].split_whitespace().collect();
        let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
        assert!(col("Score") < col("Buchholz"), "{text}");
        assert!(
            col("Buchholz") < col("SB") && col("SB") < col("Points"),
            "{text}"
        );
        let rows: Vec<Vec<f64>> = lines[1..=4]
            .iter()
            .map(|l| {
                let cells: Vec<&str> = l.split_whitespace().collect();
                ["Score", "Buchholz", "SB", "Points"]
                    .iter()
                    .map(|c| cells[col(c)].parse().unwrap())
                    .collect()
            })
            .collect();
        for w in rows.windows(2) {
            assert!(w[0] >= w[1], "rows out of their columns' order: {text}");
        }
        assert!(text.contains("Ranked by Score"), "{text}");
        let md = render(&t, TableFormat::Markdown, false);
        assert!(
            md.starts_with("| # | Player | Score | Buchholz | SB | Points |"),
            "{md}"
        );
        let csv = render(&t, TableFormat::Csv, false);
        assert!(csv.starts_with(
            "rank,player,points,games,wins,draws,losses,disc_diff,elo,elo_error,\
             swiss_score,buchholz,sonneborn_berger,byes,"
        ));
    }
}
