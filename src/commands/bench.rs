//! `tournament bench`: the harness measured.

use crate::cli::BenchArgs;

pub fn run(_args: &BenchArgs) -> anyhow::Result<i32> {
    anyhow::bail!("this command is being built")
}
