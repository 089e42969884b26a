//! `tournament export`: GGF and WTHOR files of a results folder.

use crate::cli::ExportArgs;

pub fn run(_args: &ExportArgs) -> anyhow::Result<i32> {
    anyhow::bail!("this command is being built")
}
