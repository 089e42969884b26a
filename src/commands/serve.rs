//! `tournament serve`: the live web page of a results folder (see
//! `crate::serve`), until stopped. Only reads the folder, so it can run on
//! any machine that sees it.

use crate::cli::ServeArgs;
use crate::error::exit;
use crate::serve::{check_results_folder, LiveServer};

use super::players::{optional_config, results_dir};

pub fn run(args: &ServeArgs) -> anyhow::Result<i32> {
    let config = optional_config(args.config.as_deref())?;
    let results = results_dir(args.results.as_deref(), config.as_ref());
    if let Some(note) = check_results_folder(&results)? {
        eprintln!("{note}");
    }
    let server = LiveServer::start(&results, args.addr)?;
    eprintln!("{}", server.announce());
    super::pasteable::network_hint(server.addr(), "--addr");
    eprintln!("serving {} read-only (Ctrl-C stops)", results.display());
    server.wait();
    Ok(exit::OK)
}
