//! The crosstable as CSV (RFC 4180: CRLF line ends, fields quoted when they
//! hold a comma, quote or line break, quotes doubled): a header, then one
//! row per player in rank order with, in a Swiss event, its score and
//! tie-breaks, then one column per opponent.
//!
//! Owns the CSV layout and quoting. Must not compute anything about the
//! games.

use crate::rating::Crosstable;

const FIXED: [&str; 10] = [
    "rank",
    "player",
    "points",
    "games",
    "wins",
    "draws",
    "losses",
    "disc_diff",
    "elo",
    "elo_error",
];

/// After [`FIXED`] in a Swiss event: what its ranking uses first.
const SWISS: [&str; 4] = ["swiss_score", "buchholz", "sonneborn_berger", "byes"];

/// Columns: `rank,player,points,games,wins,draws,losses,disc_diff,elo,
/// elo_error`, in a Swiss event `swiss_score,buchholz,sonneborn_berger,
/// byes`, then one per player by name (in rank order) holding the
/// points scored against that player, empty when they never met (and on
/// the diagonal). Elo and its error have one decimal; an undetermined
/// error is empty.
pub(super) fn render(table: &Crosstable) -> String {
    let mut out = String::new();
    let swiss = super::is_swiss(table);
    let swiss_header: &[&str] = if swiss { &SWISS } else { &[] };
    let header = FIXED
        .iter()
        .chain(swiss_header)
        .map(|s| s.to_string())
        .chain(table.standings.iter().map(|s| s.player.clone()));
    record(&mut out, header);
    for (i, s) in table.standings.iter().enumerate() {
        let fixed = [
            s.rank.to_string(),
            s.player.clone(),
            super::points(s.points),
            s.games.to_string(),
            s.wins.to_string(),
            s.draws.to_string(),
            s.losses.to_string(),
            s.disc_diff.to_string(),
            one_decimal(s.elo),
            if s.elo_error.is_finite() {
                one_decimal(s.elo_error)
            } else {
                String::new()
            },
        ];
        let tie_breaks = swiss.then(|| {
            let byes = s.swiss.as_ref().map_or(0, |w| w.byes);
            let [score, buchholz, sb] = super::swiss_cells(s);
            [score, buchholz, sb, byes.to_string()]
        });
        let opponents = table.matrix[i]
            .iter()
            .map(|c| c.map(|(p, _)| super::points(p)).unwrap_or_default());
        record(
            &mut out,
            fixed
                .into_iter()
                .chain(tie_breaks.into_iter().flatten())
                .chain(opponents),
        );
    }
    out
}

/// `x` with one decimal, never `-0.0`.
fn one_decimal(x: f64) -> String {
    format!("{:.1}", (x * 10.0).round() / 10.0 + 0.0)
}

fn record(out: &mut String, fields: impl IntoIterator<Item = String>) {
    for (k, f) in fields.into_iter().enumerate() {
        if k > 0 {
            out.push(',');
        }
        out.push_str(&quote(&f));
    }
    out.push_str("\r\n");
}

/// Quotes a field if RFC 4180 requires it.
fn quote(field: &str) -> String {
    if field.contains([',', '"', '\r', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::crosstable::tests::sample;

    /// A minimal RFC 4180 reader: records of fields.
    fn parse(text: &str) -> Vec<Vec<String>> {
        let mut records = Vec::new();
        let mut record = Vec::new();
        let mut field = String::new();
        let mut chars = text.chars().peekable();
        let mut quoted = false;
        while let Some(c) = chars.next() {
            if quoted {
                match c {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    '"' => quoted = false,
                    _ => field.push(c),
                }
                continue;
            }
            match c {
                '"' => quoted = true,
                ',' => record.push(std::mem::take(&mut field)),
                '\r' => {
                    assert_eq!(chars.next(), Some('\n'), "CR without LF");
                    record.push(std::mem::take(&mut field));
                    records.push(std::mem::take(&mut record));
                }
                '\n' => panic!("bare LF"),
                _ => field.push(c),
            }
        }
        assert!(!quoted && field.is_empty() && record.is_empty());
        records
    }

    #[test]
    fn parses_back() {
        let t = sample();
        let text = render(&t);
        let rows = parse(&text);
        let n = t.standings.len();
        assert_eq!(rows.len(), 1 + n);
        for r in &rows {
            assert_eq!(r.len(), 10 + n, "{r:?}");
        }
        assert_eq!(rows[0][..10], FIXED);
        assert_eq!(rows[0][11], "Smith, \"Bo\"");
        assert!(text.contains("\"Smith, \"\"Bo\"\"\""));
        // alpha: 3.5 points from 4 games; 1.5 against Bo, 2 against c,
        // never met idle, nothing against itself.
        assert_eq!(
            rows[1][..8],
            ["1", "alpha", "3.5", "4", "3", "1", "0", "76"]
        );
        assert_eq!(rows[1][10..], ["", "1.5", "2", ""]);
        assert_eq!(rows[2][1], "Smith, \"Bo\"");
        // The idle player has no interval.
        assert_eq!(rows[4][1], "idle");
        assert_eq!(rows[4][9], "");
        assert_eq!(rows[4][8], "0.0");
        // Total points in the matrix equal the games.
        let total: f64 = rows[1..]
            .iter()
            .flat_map(|r| r[10..].iter())
            .filter(|f| !f.is_empty())
            .map(|f| f.parse::<f64>().unwrap())
            .sum();
        assert_eq!(total, t.games as f64);
        // Elo values parse and average to 0.
        let elo: f64 = rows[1..].iter().map(|r| r[8].parse::<f64>().unwrap()).sum();
        assert!(elo.abs() < 0.3);
    }

    #[test]
    fn quoting() {
        assert_eq!(quote("plain"), "plain");
        assert_eq!(quote("a,b"), "\"a,b\"");
        assert_eq!(quote("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(quote("two\nlines"), "\"two\nlines\"");
        assert_eq!(one_decimal(-0.04), "0.0");
        assert_eq!(one_decimal(95.36), "95.4");
    }
}
