//! `tournament bench`: the harness measured (see BENCHMARKS.md). Exits 0
//! even when targets are missed: it is a measurement, not a test.

use crate::cli::BenchArgs;
use crate::error::exit;

pub fn run(args: &BenchArgs) -> anyhow::Result<i32> {
    crate::bench::run(args.quick)?;
    Ok(exit::OK)
}
