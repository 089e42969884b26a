//! `tournament perft`: leaf counts and speed, one line per depth.

use std::io::Write;
use std::time::Instant;

use crate::cli::PerftArgs;
use crate::error::exit;
use crate::game::{perft, Position};

pub fn run(args: &PerftArgs) -> anyhow::Result<i32> {
    let start = Position::start(args.size);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "perft {}x{} from the start position (a pass is one ply)",
        args.size, args.size
    )?;
    writeln!(
        out,
        "{:>5}  {:>16}  {:>10}  {:>14}",
        "depth", "leaves", "seconds", "leaves/s"
    )?;
    for depth in 1..=args.depth {
        let clock = Instant::now();
        let leaves = perft(&start, depth);
        let secs = clock.elapsed().as_secs_f64();
        let rate = if secs > 0.0 {
            leaves as f64 / secs
        } else {
            0.0
        };
        writeln!(out, "{depth:>5}  {leaves:>16}  {secs:>10.3}  {rate:>14.0}")?;
        out.flush()?;
    }
    Ok(exit::OK)
}
