//! `tournament-bench`: the harness measured (see BENCHMARKS.md), as one
//! table on stdout. Exits 0 even when targets are missed: it is a
//! measurement, not a test; 1 when it could not measure at all.
//!
//! Owns only the command line; the measurements are the library's.

use clap::Parser;

/// Measure `tournament`: hand-off latency, throughput, the shipped bot
/// libraries, idle cost, sandbox cost, the live page, rules engine, scale.
/// `TOURNAMENT_BENCH_ONLY=handoff,idle,…` runs some sections only.
#[derive(Debug, Parser)]
#[command(name = "tournament-bench", version)]
struct Args {
    /// A first look in under 30 seconds (fewer repetitions, smaller sizes).
    #[arg(long)]
    quick: bool,
}

fn main() {
    let args = Args::parse();
    if let Err(e) = tournament_bench::run(args.quick) {
        eprintln!("tournament-bench: {e:#}");
        std::process::exit(1);
    }
}
