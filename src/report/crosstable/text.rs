//! The crosstable as aligned text for a terminal: one row per player with
//! rank, name, in a Swiss event its Score, Buchholz and SB (and byes, when
//! there were any) in the order the ranking uses them, then points, games,
//! W-D-L, forfeits (only when a game was forfeited), disc difference and
//! Elo ± error, followed by the score matrix where it fits, whose columns
//! are numbered by row (the same numbers as the ranks unless players tie
//! for a rank: `1, 1, 3`); then the pairings' table (bounded) and the SPRT.
//!
//! Owns layout and (optional) ANSI colour. Must not compute anything about
//! the games and never emits escape codes when colour is off.

use super::Layout;
use crate::rating::Crosstable;

const BOLD: &str = "\x1b[1m";
const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const RESET: &str = "\x1b[0m";

/// The heading of the column of games lost by a forfeit.
pub(super) const FORFEITS: &str = "Forfeits";

/// Columns are separated by this.
const GAP: &str = "  ";

#[derive(Clone, Copy, PartialEq)]
enum Align {
    Left,
    Right,
}

/// Renders the table; with `color`, the header is bold and Elo is green
/// when positive and red when negative. The score matrix only where
/// `layout` shows it; the pairings' table bounded unless `layout.full`.
pub(super) fn render(table: &Crosstable, color: bool, layout: Layout) -> String {
    let n = table.standings.len();
    let matrix = layout.shows_matrix(n);
    let swiss = super::is_swiss(table);
    let byes = super::has_byes(table);
    // Games lost by a forfeit, each player's, when there were any.
    let forfeits = table.standings.iter().any(|s| s.forfeits > 0);
    let mut header: Vec<String> = vec!["#".into(), "Player".into()];
    if swiss {
        header.extend(super::SWISS_HEADINGS.map(String::from));
    }
    if byes {
        header.push("Byes".into());
    }
    header.extend(["Points", "Games", "W-D-L"].map(String::from));
    if forfeits {
        header.push(FORFEITS.into());
    }
    header.extend(["Discs".to_string(), "Elo".to_string()]);
    let elo_column = header.len() - 1;
    if matrix {
        header.extend((1..=n).map(|k| k.to_string()));
    }
    let mut align = vec![Align::Right, Align::Left];
    align.extend(std::iter::repeat_n(Align::Right, header.len() - 2));

    // Elo and its error are aligned separately, so that the `±` line up.
    let elos: Vec<String> = table.standings.iter().map(|s| super::elo(s.elo)).collect();
    let errors: Vec<String> = table
        .standings
        .iter()
        .map(|s| super::elo_error(s.elo_error))
        .collect();
    let we = width_of(&elos);
    let wr = width_of(&errors);

    let rows: Vec<Vec<String>> = table
        .standings
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut row = vec![s.rank.to_string(), super::shown_name(table, &s.player)];
            if swiss {
                row.extend(super::swiss_cells(s));
            }
            if byes {
                row.push(s.swiss.as_ref().map_or(0, |w| w.byes).to_string());
            }
            row.extend([
                super::points(s.points),
                s.games.to_string(),
                format!("{}-{}-{}", s.wins, s.draws, s.losses),
            ]);
            if forfeits {
                row.push(s.forfeits.to_string());
            }
            row.extend([
                super::signed(s.disc_diff),
                format!("{:>we$} ± {:>wr$}", elos[i], errors[i]),
            ]);
            if matrix {
                row.extend((0..n).map(|j| super::cell(table, i, j)));
            }
            row
        })
        .collect();

    let widths = widths(&header, &rows);
    let mut out = String::new();
    let head = line(&header, &widths, &align, |_, s| s);
    if color {
        out.push_str(BOLD);
        out.push_str(&head);
        out.push_str(RESET);
    } else {
        out.push_str(&head);
    }
    out.push('\n');
    for (i, row) in rows.iter().enumerate() {
        let e = table.standings[i].elo.round();
        let elo_color = if !color || e == 0.0 {
            None
        } else if e > 0.0 {
            Some(GREEN)
        } else {
            Some(RED)
        };
        out.push_str(&line(row, &widths, &align, |c, padded| match elo_color {
            Some(code) if c == elo_column => {
                let body = padded.trim_start();
                let pad = &padded[..padded.len() - body.len()];
                format!("{pad}{code}{body}{RESET}")
            }
            _ => padded,
        }));
        out.push('\n');
    }
    out.push_str(&pairings(table, layout));
    let notes = super::notes(table);
    if !notes.is_empty() {
        out.push('\n');
        for d in notes {
            out.push_str(&d);
            out.push('\n');
        }
    }
    out
}

/// The pairings' table after a blank line (nothing without pairings),
/// with the line saying how many were left out.
fn pairings(table: &Crosstable, layout: Layout) -> String {
    let (shown, left) = super::shown_pairings(table, layout);
    if shown.is_empty() {
        return String::new();
    }
    let header: Vec<String> = super::PAIRING_HEADINGS.map(String::from).to_vec();
    let rows: Vec<Vec<String>> = shown
        .iter()
        .map(|p| super::pairing_cells(p).to_vec())
        .collect();
    let mut align = vec![Align::Left, Align::Left];
    align.extend(std::iter::repeat_n(Align::Right, header.len() - 2));
    let widths = widths(&header, &rows);
    let mut out = String::from("\n");
    for row in std::iter::once(&header).chain(&rows) {
        out.push_str(line(row, &widths, &align, |_, s| s).trim_end());
        out.push('\n');
    }
    if left > 0 {
        out.push_str(&super::left_out_line(shown.len(), left));
        out.push('\n');
    }
    out
}

/// Each column's width: its widest cell or heading.
fn widths(header: &[String], rows: &[Vec<String>]) -> Vec<usize> {
    (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|r| &r[c])
                .chain([&header[c]])
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect()
}

fn width_of(cells: &[String]) -> usize {
    cells.iter().map(|s| s.chars().count()).max().unwrap_or(0)
}

/// One line: every cell padded to its column's width, then passed through
/// `style(column, padded)`.
fn line(
    cells: &[String],
    widths: &[usize],
    align: &[Align],
    style: impl Fn(usize, String) -> String,
) -> String {
    let parts: Vec<String> = cells
        .iter()
        .enumerate()
        .map(|(c, s)| {
            let w = widths[c];
            let padded = match align[c] {
                Align::Left => format!("{s:<w$}"),
                Align::Right => format!("{s:>w$}"),
            };
            style(c, padded)
        })
        .collect();
    parts.join(GAP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rating::crosstable;
    use crate::report::crosstable::tests::sample;

    /// Removes ANSI escape sequences.
    fn strip(s: &str) -> String {
        let mut out = String::new();
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                for d in chars.by_ref() {
                    if d == 'm' {
                        break;
                    }
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn columns_are_aligned() {
        let t = sample();
        let text = render(&t, false, Layout::default());
        let lines: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
        assert_eq!(lines.len(), 1 + t.standings.len());
        let width = lines[0].chars().count();
        for l in &lines {
            assert_eq!(l.chars().count(), width, "{text}");
            assert_eq!(l.trim_end(), *l, "trailing space: {l:?}");
        }
        // Right-aligned columns end at the same character position as their
        // header, and the ± signs line up.
        let col = |l: &str, pat: &str| l.find(pat).map(|b| l[..b].chars().count());
        let plus = col(lines[1], "±").unwrap();
        for l in &lines[1..] {
            assert_eq!(col(l, "±"), Some(plus), "{text}");
        }
        let points_end = col(lines[0], "Points").unwrap() + "Points".len();
        for l in &lines[1..] {
            let chars: Vec<char> = l.chars().collect();
            assert_ne!(chars[points_end - 1], ' ', "{text}");
            assert_eq!(chars[points_end], ' ', "{text}");
        }
    }

    #[test]
    fn exact_text_of_a_small_table() {
        use crate::record::{DiscCount, EndReason, GameRecord, Winner};
        let mk = |black: &str, white: &str, result, (b, w)| GameRecord {
            id: String::new(),
            round: 1,
            black: black.to_string(),
            white: white.to_string(),
            size: 8,
            opening: String::new(),
            moves: Vec::new(),
            result,
            reason: EndReason::Normal,
            forfeit: None,
            discs: DiscCount { black: b, white: w },
            discs_wof: DiscCount { black: b, white: w },
            transcript: String::new(),
            started: String::new(),
            finished: String::new(),
            time_ms: DiscCount { black: 0, white: 0 },
            swiss_round: None,
            people: Vec::new(),
        };
        // One draw: both 0.5/1, Elo 0, tied rank 1, by name.
        let t = crosstable(&[mk("bb", "a", Winner::Draw, (32, 32))], &[]);
        let e = crate::report::crosstable::elo_error(t.standings[0].elo_error);
        let w = 4 + e.chars().count();
        let expected = format!(
            "#  Player  Points  Games  W-D-L  Discs  {:>w$}      1      2\n\
             1  a          0.5      1  0-1-0      0  0 ± {e}      ·  0.5/1\n\
             1  bb         0.5      1  0-1-0      0  0 ± {e}  0.5/1      ·\n\n\
             First  Second  Games  Pairs 0-½-1-1½-2  Draws    Elo (pairs)  LOS           Disc margin\n\
             bb     a           1         0-0-0-0-0  100 %  too few games    –  +0.0 (too few games)\n",
            "Elo",
        );
        assert_eq!(render(&t, false, Layout::default()), expected);
    }

    #[test]
    fn colour_only_when_asked() {
        let t = sample();
        let plain = render(&t, false, Layout::default());
        assert!(!plain.contains('\x1b'));
        let coloured = render(&t, true, Layout::default());
        assert!(coloured.starts_with(BOLD));
        assert!(coloured.contains(GREEN) && coloured.contains(RED));
        assert_eq!(strip(&coloured), plain);
    }

    #[test]
    fn a_forfeits_column_only_when_a_game_was_forfeited() {
        let t = sample();
        assert!(t.standings.iter().all(|s| s.forfeits == 0));
        assert!(!render(&t, false, Layout::default()).contains(FORFEITS));
        let mut t = sample();
        t.standings[1].forfeits = 2;
        let text = render(&t, true, Layout::default());
        let plain = strip(&text);
        let lines: Vec<&str> = plain.lines().collect();
        assert!(lines[0].contains("W-D-L  Forfeits  Discs"), "{plain}");
        let at = lines[0].find("Forfeits").unwrap() + FORFEITS.len() - 1;
        assert_eq!(&lines[2][at..at + 1], "2", "{plain}");
        assert_eq!(&lines[1][at..at + 1], "0", "{plain}");
        // Elo is still the coloured column.
        assert!(text.contains(GREEN) || text.contains(RED), "{text}");
    }

    #[test]
    fn empty_table_is_a_header() {
        let t = crosstable(&[], &[]);
        assert_eq!(
            render(&t, false, Layout::default()),
            "#  Player  Points  Games  W-D-L  Discs  Elo\n"
        );
    }
}
